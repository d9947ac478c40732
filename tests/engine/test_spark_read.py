"""``hoodie.spark.read``: base files through Spark's Parquet scan, merged slices through hoodie.

Every query type reads exactly what the pure-Python reader and ``format("hoodie")`` read; the plan
shows Spark's own FileScan with pruned columns for the slices that need no merging; files Spark
could read differently (an older schema) go through hoodie.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.table import HoodieTable
from hoodie import write_arrow
from tests.helpers import examples, rows_of

COLS = ["_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path", "id", "p", "ts", "v"]


def _opts(table_type: str, op: str, version: int = 6) -> dict[str, str]:
    return {"hoodie.table.name": "r", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": op,
            "hoodie.write.table.version": str(version)}


def _batch(ids: list[int], ts: int, tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [f"p{i % 3}" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"{tag}{i}" for i in ids]})


def _spark_rows(df, cols: list[str]) -> list[tuple]:
    got = [r.asDict() for r in df.select(*cols).collect()]
    return sorted(rows_of(pa.Table.from_pylist(got), cols)) if got else []


def _rows(t: pa.Table, cols: list[str]) -> list[tuple]:
    return sorted(rows_of(t, cols)) if t.num_rows else []


def _history(path: str, table_type: str, version: int = 6) -> list[str]:
    """Inserts in three partitions, then updates to one partition only: on MOR the other partitions'
    slices have no log files (read natively), the updated one has (merged by hoodie)."""
    instants = [write_arrow(path, _batch(list(range(30)), 1, "a"), _opts(table_type, "insert", version))]
    instants.append(write_arrow(path, _batch([0, 3, 6], 2, "b"), _opts(table_type, "upsert", version)))
    instants.append(write_arrow(path, _batch([9], 3, "c"), _opts(table_type, "delete", version)))
    if version >= 8:
        tl = HoodieTable(path).timeline
        instants = [tl.get(i).completion for i in instants]
    return instants


@pytest.mark.parametrize("table_type,version", [("MERGE_ON_READ", 6), ("COPY_ON_WRITE", 9)])
def test_every_query_type_reads_what_hoodie_reads(spark, tmp_path: Path, table_type: str, version: int) -> None:
    import hoodie.spark as hs
    from hoodie.engine.read import split_plan
    from hoodie.format.slice.reader import plan_read

    path = str(tmp_path / "t")
    instants = _history(path, table_type, version)
    cases = [({}, {}), ({"hoodie.datasource.query.type": "read_optimized"}, {"query_type": "read_optimized"}),
             ({"as.of.instant": instants[1]}, {"as_of": instants[1]}),
             ({"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": instants[0]},
              {"query_type": "incremental", "begin": instants[0]})]
    for spark_opts, py_args in cases:
        expected = _rows(hoodie.read_table(path, **py_args), COLS)
        assert _spark_rows(hs.read(spark, path, spark_opts), COLS) == expected, spark_opts
    split = split_plan(plan_read(HoodieTable(path)))
    assert split.native_files, split.reasons
    if table_type == "MERGE_ON_READ":
        assert split.reasons.get("log files to merge"), split.reasons  # the updated partition
    else:
        assert not split.python_slices, split.reasons


def test_native_slices_are_spark_file_scans_with_pruned_columns(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    _history(path, "COPY_ON_WRITE")
    df = hs.read(spark, path).select("v")
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in plan and "ReadSchema: struct<v:string>" in plan, plan
    assert "BatchEvalPython" not in plan and "PythonDataSource" not in plan, plan
    assert sorted(r.v for r in df.collect()) == sorted(hoodie.read_table(path).column("v").to_pylist())
    # Filter pushdown reaches the Parquet scan.
    filtered = hs.read(spark, path).where("ts = 2")
    assert "PushedFilters: [IsNotNull(ts), EqualTo(ts,2)]" in filtered._jdf.queryExecution().executedPlan().toString()
    assert filtered.count() == 3


def test_files_of_an_older_schema_go_through_hoodie(spark, tmp_path: Path) -> None:
    """A base file written before a column was added lacks it (hoodie's reader fills nulls as Hudi
    does); it is not handed to Spark's scan."""
    import hoodie.spark as hs
    from hoodie.engine.read import split_plan
    from hoodie.format.slice.reader import plan_read

    path = str(tmp_path / "t")
    write_arrow(path, _batch([0, 1, 2], 1, "a"), _opts("COPY_ON_WRITE", "insert"))
    wider = _batch([3], 2, "b").append_column("extra", pa.array([7], pa.int64()))
    write_arrow(path, wider, _opts("COPY_ON_WRITE", "upsert"))
    split = split_plan(plan_read(HoodieTable(path)))
    assert split.native_files and split.python_slices, split.reasons
    assert any("schema" in r for r in split.reasons)
    cols = COLS + ["extra"]
    assert _spark_rows(hs.read(spark, path), cols) == _rows(hoodie.read_table(path), cols)


def test_native_off_reads_through_hoodie(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    _history(path, "MERGE_ON_READ")
    df = hs.read(spark, path, {"hoodie.spark.read.native": "false"})
    assert "FileScan parquet" not in df._jdf.queryExecution().executedPlan().toString()
    assert _spark_rows(df, COLS) == _rows(hoodie.read_table(path), COLS)


def test_columns_project_the_merged_slices_too(spark, tmp_path: Path) -> None:
    """``columns=`` reaches hoodie's merge of the slices with log files (Spark cannot push a projection
    into a Python source): the merged read decodes only what it needs, with the same rows."""
    import hoodie.spark as hs
    from hoodie.format.slice.reader import plan_read

    path = str(tmp_path / "t")
    _history(path, "MERGE_ON_READ")
    df = hs.read(spark, path, columns=["id", "v"])
    assert df.columns == ["id", "v"]
    assert _spark_rows(df, ["id", "v"]) == _rows(hoodie.read_table(path, columns=["id", "v"]), ["id", "v"])
    plan = plan_read(HoodieTable(path), columns=["id", "v"])
    assert set(plan.schema.names) < set(HoodieTable(path).arrow_schema().names)


def test_hollow_commit_policy_reaches_spark_reads(spark, tmp_path: Path) -> None:
    """The hollow-commit policy is a read option of both Spark paths (refused by default, BLOCK on request)."""
    import hoodie.spark as hs
    from tests.format.test_hollow_commits import POLICY, ZERO, _hollow_table

    path = str(tmp_path / "t")
    _hollow_table(path)
    inc = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": ZERO}
    with pytest.raises(Exception, match="a hollow commit"):
        hs.read(spark, path, inc).collect()
    with pytest.raises(Exception, match="a hollow commit"):
        spark.read.format("hoodie").options(**inc).load(path).collect()
    for df in (hs.read(spark, path, {**inc, POLICY: "BLOCK"}),
               spark.read.format("hoodie").options(**inc, **{POLICY: "BLOCK"}).load(path)):
        assert [r["k"] for r in df.select("k").collect()] == ["a"]


def test_schema_on_read_tables_are_read_by_field_id_on_spark(spark, tmp_path: Path) -> None:
    """A column dropped and re-added under its old name has the old name in old files: Spark's own scan
    (by name) would show the old values; every slice goes through hoodie's field-id mapping instead."""
    import hoodie.spark as hs
    import pyarrow as pa
    from hoodie.engine.read import split_plan
    from hoodie.format.slice.reader import plan_read
    from hoodie.format.table import HoodieTable
    from tests.format.test_schema_on_read import _drop, _evolve

    base = str(tmp_path / "t")
    second = pa.table({"k": ["c"], "part": ["p"], "ts": pa.array([2], pa.int64()), "val": pa.array([99], pa.int32())})
    _evolve(base, "COPY_ON_WRITE", _drop("val", readd="int"), second)
    split = split_plan(plan_read(HoodieTable(base)))
    assert split.native_files == [] and split.reasons == {"schema evolved on read (columns matched by field id)": 2}
    rows = sorted((r["k"], r["val"]) for r in hs.read(spark, base).select("k", "val").collect())
    assert rows == [("a", None), ("b", None), ("c", 99)]


def test_spark_reads_refuse_a_cdc_query(spark, tmp_path: Path) -> None:
    """Both Spark paths check read options: a CDC query is refused, not answered in another format."""
    import hoodie.spark as hs
    from tests.format.test_hollow_commits import OPTS, ZERO
    import pyarrow as pa
    from hoodie import write_arrow

    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"]}), OPTS)
    cdc = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": ZERO,
           "hoodie.datasource.query.incremental.format": "cdc"}
    with pytest.raises(Exception, match="does not read Hudi's CDC log files"):
        hs.read(spark, path, cdc).collect()
    with pytest.raises(Exception, match="does not read Hudi's CDC log files"):
        spark.read.format("hoodie").options(**cdc).load(path).collect()


def _aged_table(path: str) -> None:
    """p0's base file written without the column ``extra`` and p1's with it, both by commits archived since;
    p2 rewritten by every later commit (active). Archival with small bounds so that 4 more commits archive them."""
    aged = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    write_arrow(path, _batch([0, 3], 1, "a"), {**_opts("COPY_ON_WRITE", "insert"), **aged})
    p1 = _batch([1, 4], 1, "b").append_column("extra", pa.array([1, 2], pa.int64()))
    write_arrow(path, p1, {**_opts("COPY_ON_WRITE", "insert"), **aged})
    for n in range(4):
        p2 = _batch([2, 5], 2 + n, f"c{n}").append_column("extra", pa.array([n, n], pa.int64()))
        write_arrow(path, p2, {**_opts("COPY_ON_WRITE", "upsert"), **aged})


def test_base_files_of_archived_writes_are_judged_by_their_footers(tmp_path: Path) -> None:
    """Pure Python: a base file whose commit was archived goes to Spark's scan when its footer has the table's
    schema (it went through hoodie whatever its schema before: the table's age decided the plan), and through
    hoodie when it does not (p0 lacks ``extra``)."""
    from hoodie.engine.read import split_plan
    from hoodie.format.slice.reader import plan_read

    path = str(tmp_path / "t")
    _aged_table(path)
    t = HoodieTable(path)
    first_two = sorted({sl.base_file.instant for sl in plan_read(t).slices if sl.base_file.partition in ("p0", "p1")})
    assert len(first_two) == 2 and not any(t.timeline.contains(i) for i in first_two)  # both archived
    split = split_plan(plan_read(t))
    assert [sl.partition for sl in split.python_slices] == ["p0"], split.reasons
    assert split.reasons == {"file schema differs from the table's (evolved, or an unreadable footer)": 1}
    assert sorted(f.split("/")[-2] for f in split.native_files) == ["p1", "p2"]


def test_an_aged_table_reads_as_hoodie_reads_and_a_native_plan_is_spark_s_own(spark, tmp_path: Path) -> None:
    import re

    import hoodie.spark as hs
    from hoodie.engine.read import split_plan
    from hoodie.format.slice.reader import plan_read

    path = str(tmp_path / "t")
    _aged_table(path)
    cols = COLS + ["extra"]
    assert _spark_rows(hs.read(spark, path), cols) == _rows(hoodie.read_table(path), cols)
    # All native (copy-on-write, one schema): the DataFrame is spark.read.parquet's, no projection on top.
    young = str(tmp_path / "young")
    _history(young, "COPY_ON_WRITE")
    df = hs.read(spark, young)
    files = split_plan(plan_read(HoodieTable(young))).native_files
    ref = spark.read.schema(df.schema).parquet(*files)

    def plan(d) -> str:  # type: ignore[no-untyped-def]
        return re.sub(r"#\d+L?", "", d._jdf.queryExecution().optimizedPlan().toString())

    assert plan(df) == plan(ref) and "Project" not in plan(df)
    assert _spark_rows(df, COLS) == _rows(hoodie.read_table(young), COLS)


@pytest.mark.slow
@settings(max_examples=examples(10), deadline=None)
@given(history=st.lists(st.tuples(st.sets(st.integers(0, 3), min_size=1), st.booleans()), min_size=1, max_size=7))
def test_which_files_spark_scans_does_not_depend_on_archival(tmp_path_factory: pytest.TempPathFactory,
                                                             history: list[tuple[set[int], bool]]) -> None:
    """A model (pure Python): commits upsert into some of 4 partitions, each with or without the column
    ``extra`` (once a commit has it, the table schema has it). A base file goes to Spark's scan exactly when
    the commit that last wrote its partition wrote the table's columns, with archival on (small bounds, so the
    oldest writes are archived) as with it off."""
    from hoodie.engine.read import split_plan
    from hoodie.format.slice.reader import plan_read

    root = tmp_path_factory.mktemp("aging")
    aged = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    last_writer_wide: dict[str, bool] = {}
    table_wide = False
    for n, (parts, wide) in enumerate(history):
        table_wide = table_wide or wide
        wide = wide or table_wide  # a column once added stays in every later write's schema
        ids = sorted(parts)
        rows = pa.table({"id": pa.array(ids, pa.int64()), "p": [f"p{i}" for i in ids],
                         "ts": pa.array([n] * len(ids), pa.int64()), "v": [f"v{n}"] * len(ids)})
        if wide:
            rows = rows.append_column("extra", pa.array([n] * len(ids), pa.int64()))
        for name, extra in (("on", aged), ("off", {"hoodie.archive.automatic": "false"})):
            write_arrow(str(root / name), rows, {**_opts("COPY_ON_WRITE", "upsert"), **extra})
        last_writer_wide.update({f"p{i}": wide for i in ids})
    expected = sorted(p for p, w in last_writer_wide.items() if w == table_wide)
    for name in ("on", "off"):
        split = split_plan(plan_read(HoodieTable(str(root / name))))
        assert sorted(f.split("/")[-2] for f in split.native_files) == expected, (name, split.reasons)
