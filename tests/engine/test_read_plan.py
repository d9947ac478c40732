"""The Spark data source plans once, on the driver: each input partition carries the plan (pinned
timeline, schema, filters, log files to skip) and its slices, so executor tasks neither list nor plan,
and every task of one read sees one snapshot however many commits land meanwhile. Driven here through
the reader's own API with pickled partitions (what Spark ships to executors), and once through Spark."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.engine.datasource import HoodieDataSource, HoodieReader
from hoodie import write_arrow
from tests.helpers import rows_of
from tests.prove.crash_harness import run_child

OPTS = {"hoodie.table.name": "rp", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false",
        "hoodie.payload.event.time.field": "ts"}
COLS = ["k", "part", "ts", "v"]


def _rows(keys: list[int], ts: int, v: int) -> pa.Table:
    return pa.table({"k": pa.array(keys, pa.int64()), "part": [f"p{k % 4}" for k in keys],
                     "ts": pa.array([ts] * len(keys), pa.int64()), "v": pa.array([v] * len(keys), pa.int64())})


def _reader(path: str, **options: str) -> HoodieReader:
    src = HoodieDataSource({"path": path, **options})
    return src.reader(src.schema())


def _read_shipped(reader: HoodieReader, partitions: list) -> list[tuple]:
    """Read every partition the way executors do: reader and partition pickled and unpickled."""
    out = []
    for part in partitions:
        r = pickle.loads(pickle.dumps(reader))
        for b in r.read(pickle.loads(pickle.dumps(part))):
            out += rows_of(pa.Table.from_batches([b]), COLS)
    return sorted(out)


def test_tasks_read_the_planned_snapshot_while_commits_land(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _rows(list(range(16)), 1, 1), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, _rows([0, 1, 2, 3], 2, 2), OPTS)
    before = sorted(rows_of(hoodie.read_table(path, columns=COLS), COLS))
    reader = _reader(path, **{"hoodie.datasource.read.split.target.bytes": "1"})  # a task per slice
    shipped = pickle.dumps(reader)  # Spark pickles the reader before it plans the partitions
    partitions = reader.partitions()
    reader = pickle.loads(shipped)
    assert len(partitions) >= 4
    # Commits land between planning and the tasks: updates, new keys, a new partition.
    write_arrow(path, _rows([0, 1, 5, 40, 41], 3, 3), OPTS)
    write_arrow(path, pa.table({"k": pa.array([99], pa.int64()), "part": ["new"], "ts": pa.array([4], pa.int64()),
                                "v": pa.array([4], pa.int64())}), OPTS)
    import hoodie.format.slice.reader as R

    def no_planning(*a, **k):
        raise AssertionError("an executor task planned the read again")

    monkeypatch.setattr(R, "plan_read", no_planning)
    assert _read_shipped(reader, partitions) == before


def test_a_pending_partial_compaction_reads_on_spark_as_in_python(spark, tmp_path: Path) -> None:
    """Links of a pending partial compaction stand for log files the same merged slice already holds:
    Spark tasks read the plan's slices with the plan's list of log files to skip, as the pure-Python
    reader does."""
    path = str(tmp_path / "t")
    # No ordering field: later log records win by position, so a link read after the newer logs
    # it duplicates would bring old values back.
    opts = {k: v for k, v in OPTS.items() if k != "hoodie.datasource.write.precombine.field"}
    write_arrow(path, _rows(list(range(8)), 1, 1), {**opts, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, _rows([0, 1, 2, 3], 10, 2), opts)
    write_arrow(path, _rows([0, 4], 40, 3), opts)
    compaction = {"hoodie.compaction.strategy":
                  "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy",
                  "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER",
                  "hoodie.compaction.event.time.threshold": "25", "hoodie.payload.event.time.field": "ts",
                  "hoodie.compaction.partial.link.mode": "copy"}
    assert run_child({"op": "compaction", "path": path, "options": compaction}, fault="compaction.after_links").killed
    expected = sorted(rows_of(hoodie.read_table(path, columns=COLS), COLS))
    assert len(expected) == 8
    got = spark.read.format("hoodie").load(path).select(*COLS).collect()
    assert sorted(rows_of(pa.Table.from_pylist([r.asDict() for r in got]), COLS)) == expected


def test_spark_reads_a_hudi_1x_table(spark, tmp_path: Path) -> None:
    """A table Hudi 1.0 wrote (table version 8, MOR, with a metadata table) reads on Spark as in Python."""
    from tests.format.test_fixtures_v8v9 import ZIPS
    from tests.format.test_metadata_fixtures import _table

    z = next(z for z in ZIPS if z.stem == "quickstart_trips_table_mor_avro_v8_trips_8i3u1d")
    path = str(_table(z, tmp_path / "v8"))
    cols = ["uuid", "rider", "fare", "city"]
    expected = sorted(rows_of(hoodie.read_table(path, columns=cols), cols))
    assert len(expected) == 6
    got = spark.read.format("hoodie").load(path).select(*cols).collect()
    assert sorted(rows_of(pa.Table.from_pylist([r.asDict() for r in got]), cols)) == expected
