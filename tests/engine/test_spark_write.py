"""Spark write and read end to end: random upsert/delete workloads on COW and MOR equal an
in-memory model, our pure-Python reader and hudi-rs (snapshot, read-optimized, incremental,
time travel)."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services.metadata import validate_metadata_table
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark
COLS = ["id", "p", "ts", "v"]


def _opts(table_type: str, op: str, ordering: bool) -> dict[str, str]:
    o = {
        "hoodie.table.name": "st", "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.operation": op, "hoodie.payload.event.time.field": "ts",
        # Small files so several file groups per partition get exercised.
        "hoodie.parquet.max.file.size": "4096", "hoodie.copyonwrite.record.size.estimate": "256",
        "hoodie.parquet.small.file.limit": "2048",
    }
    if ordering:
        o["hoodie.datasource.write.precombine.field"] = "ts"
    return o


def _df(spark, rows: list[tuple]):
    return spark.createDataFrame(rows, "id long, p string, ts long, v string")


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(rows_of(t, COLS)) if t.num_rows else []


def _model_rows(model: dict) -> list[tuple]:
    t = pa.table({"id": pa.array(list(model), pa.int64()), "p": [model[k][0] for k in model],
                  "ts": pa.array([model[k][1] for k in model], pa.int64()), "v": [model[k][2] for k in model]})
    return _rows(t)


@pytest.mark.parametrize("table_type,ordering,seed,version", [
    ("MERGE_ON_READ", True, 1, 6), ("MERGE_ON_READ", False, 2, 6), ("COPY_ON_WRITE", True, 3, 6),
    ("COPY_ON_WRITE", False, 4, 6), ("MERGE_ON_READ", True, 5, 9),
])
def test_random_workload_matches_model_and_hudi_rs(spark, tmp_path: Path, table_type: str, ordering: bool,
                                                   seed: int, version: int) -> None:
    """Random upserts and deletes through hoodie.spark.write; version 9 (Hudi 1.1's layout) too, whose
    time travel goes by completion time."""
    import hoodie.spark as hs

    rnd = random.Random(seed)
    path = str(tmp_path / "t")
    model: dict[int, tuple[str, int, str]] = {}
    history = []
    for step in range(4):
        op = "upsert" if step == 0 or rnd.random() < 0.7 else "delete"
        keys = rnd.sample(range(60), rnd.randint(5, 25))
        rows = []
        for k in keys:
            rows.append((k, f"p{k % 3}", rnd.randint(0, 4), f"s{step}-{k}"))
            if rnd.random() < 0.2:  # duplicates inside one batch: the greatest ts (or last) wins
                rows.append((k, f"p{k % 3}", rnd.randint(0, 4), f"dup{step}-{k}"))
        opts = _opts(table_type, op, ordering)
        opts["hoodie.write.table.version"] = str(version)
        if seed in (1, 3, 5):  # with a metadata table, updated by the driver's commit
            opts.update({"hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "2"})
        instant = hs.write(_df(spark, rows), path, opts)
        if version >= 8:
            instant = HoodieTable(path).timeline.get(instant).completion
        batch: dict[int, tuple] = {}
        for k, p, ts, v in rows:
            if op == "delete" or not ordering or k not in batch or ts >= batch[k][1]:
                batch[k] = (p, ts, v)
        for k, val in batch.items():
            if op == "delete":
                model.pop(k, None)
            elif k not in model or not ordering or val[1] >= model[k][1]:
                model[k] = val
        history.append((instant, _model_rows(model)))
        expected = _model_rows(model)
        assert _rows(hoodie.read_table(path)) == expected
        assert _rows(read_hudi_rs(path)) == expected
        if seed in (1, 3, 5):
            assert validate_metadata_table(HoodieTable(path)).equal
            assert _rows(hoodie.read_table(path, options={"hoodie.metadata.enable": "true"})) == expected
        sdf = spark.read.format("hoodie").load(path)
        assert _rows(pa.Table.from_pylist([r.asDict() for r in sdf.select(*COLS).collect()])) == expected
    for instant, expected in history:
        assert _rows(hoodie.read_table(path, as_of=instant)) == expected
        assert _rows(read_hudi_rs(path, as_of=instant)) == expected
        sdf = spark.read.format("hoodie").option("as.of.instant", instant).load(path)
        assert sdf.count() == len(expected)
    ro_ours = hoodie.read_table(path, query_type="read_optimized")
    assert _rows(ro_ours) == _rows(read_hudi_rs(path, query_type="read_optimized"))
    ro_spark = spark.read.format("hoodie").option("hoodie.datasource.query.type", "read_optimized").load(path)
    assert ro_spark.count() == ro_ours.num_rows
    first = history[0][0]
    inc = spark.read.format("hoodie").option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.read.begin.instanttime", first).load(path)
    assert inc.count() == hoodie.read_table(path, query_type="incremental", begin=first).num_rows
    t = HoodieTable(path)
    assert len(t.timeline.completed_writes()) == len(history)
    assert len({s.file_id for i in t.timeline.completed_writes()
                for s in t.timeline.commit_metadata(i).all_write_stats()}) >= 3


def _jobs_of(spark, group: str, run) -> int:
    """The Spark jobs ``run()`` starts (under job group ``group``)."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        run()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(sc.statusTracker().getJobIdsForGroup(group))


def test_a_small_write_is_one_check_job_and_one_write_job(spark, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A small input (a micro-batch of a file source: Spark knows its size) is checked in one Spark job and
    written in one, without a shuffle (before: the check's aggregation and the write's shuffle by partition
    were two jobs each under adaptive execution); the shuffle path writes the same table. Both upsert into
    existing file groups of 3 partitions, with a duplicate key in the batch. (Local data, as
    createDataFrame makes it, has no size estimate and takes the shuffle.)"""
    import pyarrow.parquet as pq

    import hoodie.engine.write as EW
    import hoodie.spark as hs

    first = [(k, f"p{k % 3}", 1, f"a{k}") for k in range(30)]
    second = [(k, f"p{k % 3}", 2, f"b{k}") for k in range(20, 40)] + [(25, "p1", 3, "dup")]
    table_type = "MERGE_ON_READ"
    opts = _opts(table_type, "upsert", True)
    del opts["hoodie.payload.event.time.field"]  # ts 1..3 are no plausible times: the Python check would run
    tables = {}
    for path_kind in ("small", "shuffle"):
        if path_kind == "shuffle":
            monkeypatch.setattr(EW, "SMALL_INPUT_BYTES", -1)
        path = str(tmp_path / path_kind)
        hs.write(_df(spark, first), path, opts)
        assert not EW._small_input(_df(spark, second))
        pq.write_table(pa.Table.from_pylist([dict(zip(COLS, r)) for r in second]), tmp_path / f"{path_kind}.parquet")
        df = spark.read.parquet(str(tmp_path / f"{path_kind}.parquet"))
        assert EW._small_input(df) is (path_kind == "small")
        jobs = _jobs_of(spark, f"hoodie-test-{table_type}-{path_kind}", lambda df=df, path=path: hs.write(df, path, opts))
        if path_kind == "small":
            assert jobs == 2
        tables[path_kind] = _rows(hoodie.read_table(path))
    expected = {k: (f"p{k % 3}", 1, f"a{k}") for k in range(20)}
    expected.update({k: (f"p{k % 3}", 2, f"b{k}") for k in range(20, 40)})
    expected[25] = ("p1", 3, "dup")
    assert tables["small"] == tables["shuffle"] == _model_rows(expected)
    assert _rows(read_hudi_rs(str(tmp_path / "small"))) == _model_rows(expected)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_inserts_sized_into_file_groups(spark, tmp_path: Path, table_type: str) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    hs.write(_df(spark, [(i, "p0", 1, str(i)) for i in range(100)]), path, _opts(table_type, "insert", True))
    t = HoodieTable(path)
    stats = list(t.timeline.commit_metadata(t.timeline.last()).all_write_stats())
    # 4096-byte files at an estimated 256 bytes per record: 16 records each, so 7 file groups.
    assert len(stats) == 7 and sum(s.num_inserts for s in stats) == 100
    assert hoodie.read_table(path).num_rows == 100


def test_unknown_option_warns_with_suggestion(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    opts = _opts("COPY_ON_WRITE", "upsert", True)
    opts["hoodie.datasource.write.precombine.feild"] = "ts"
    with pytest.warns(UserWarning, match="precombine.field"):
        hs.write(_df(spark, [(1, "p1", 1, "a")]), str(tmp_path / "t"), opts)


def test_overwrite_mode_replaces_the_data(spark, tmp_path: Path) -> None:
    """mode="overwrite" is an insert_overwrite_table replacecommit (the table is not deleted); it
    keeps the table's configuration."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    hs.write(_df(spark, [(1, "p1", 1, "a"), (2, "p2", 1, "b")]), path, _opts("COPY_ON_WRITE", "upsert", True))
    hs.write(_df(spark, [(3, "p1", 1, "c")]), path, _opts("COPY_ON_WRITE", "upsert", True), mode="overwrite")
    t = HoodieTable(path)
    assert not t.is_mor and [i.action for i in t.timeline.completed_writes()] == ["commit", "replacecommit"]
    assert hoodie.read_table(path, columns=["id"]).column("id").to_pylist() == [3]
    assert read_hudi_rs(path).column("id").to_pylist() == [3]


def test_overwrite_and_delete_partition_through_spark(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    o = _opts("MERGE_ON_READ", "insert", True)
    hs.write(_df(spark, [(1, "p0", 1, "a"), (2, "p1", 1, "b"), (3, "p2", 1, "c")]), path, o)
    hs.write(_df(spark, [(4, "p0", 1, "d")]), path, {**o, "hoodie.datasource.write.operation": "insert_overwrite"})
    exp = {2: "b", 3: "c", 4: "d"}
    got = hoodie.read_table(path, columns=["id", "v"])
    assert dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist())) == exp
    hs.write(_df(spark, [(0, "p1", 0, "")]), path, {**o, "hoodie.datasource.write.operation": "delete_partition"})
    got = read_hudi_rs(path)
    assert dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist())) == {3: "c", 4: "d"}
    t = HoodieTable(path)
    assert [i.action for i in t.timeline.completed_writes()] == ["deltacommit", "replacecommit", "replacecommit"]


def test_a_spark_upsert_lists_the_timeline_once(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk of docs/architecture.md: hoodie.spark.write's upsert on a table with a metadata table
    lists the data timeline once, in its transaction (the tasks get the driver's snapshot)."""
    import hoodie.spark as hs
    from tests.services.test_snapshots import data_timeline_loads, opts, rows

    path = str(tmp_path / "t")
    o = opts(**{"hoodie.metadata.enable": "true"})
    hoodie.write_arrow(path, rows(1), o)
    df = spark.createDataFrame([("a", "p", 2), ("c", "p", 2)], "k string, part string, ts long")
    per_txn, outside = data_timeline_loads(monkeypatch, lambda: hs.write(df, path, o))
    assert (per_txn, outside) == ([1], 0)
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["a", "b", "c"]
