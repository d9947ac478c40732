"""Deterministic tests at the service boundaries mutation testing found unguarded (issue 21,
MUTATION.md): the event-time threshold itself, Java-written write stats of log files with deletes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hoodie.format import naming as N
from hoodie.format import writer as W
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import plan_compaction, run_compaction, schedule_compaction
from hoodie.services.compaction import partial as P
from hoodie.services.compaction.event_index import EventTimeIndex
from tests.services.test_compaction_support import (
    event_time_config, latest_slices, log_names, read_optimized, snapshot, write,
)

# Realistic epoch-millisecond event times (2023-11-14T22:13:20Z) around a threshold T.
T = 1_700_000_000_000


def _plan(path: str, instant: str) -> dict:
    return HoodieTable(path).timeline.compaction_plan(instant)


def test_log_whose_minimum_event_time_equals_the_threshold_is_compacted(tmp_path: Path) -> None:
    """docs/compaction.md and RFC-74: every log file with minimum event time **at or before** T is
    compacted (after the compaction no log file with min_event_time <= T is left)."""
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0), (3, T - 10, 0)])
    write(path, "upsert", [(1, T - 1, 1)])
    write(path, "upsert", [(2, T, 2)])       # minimum exactly T: compacted
    write(path, "upsert", [(3, T + 1, 3)])   # one millisecond after T: kept as a link
    logs = log_names(path)
    c = schedule_compaction(path, event_time_config(T))
    (op,) = _plan(path, c)["operations"]
    assert op["deltaFilePaths"] == logs[:2] + [P.sentinel_name(op["fileId"], c)]
    assert [s["target"] for s in op["symlinkOperations"]] == logs[2:]
    expected = snapshot(path)
    run_compaction(path, c)
    assert snapshot(path) == expected
    ro = {r[0]: r[3] for r in read_optimized(path)}
    assert ro[repr(("int", 2))] == repr(("int", 2)) and ro[repr(("int", 3))] == repr(("int", 0))


def test_threshold_one_below_the_minimum_leaves_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0)])
    write(path, "upsert", [(1, T, 1)])
    t = HoodieTable(path)
    assert plan_compaction(t, event_time_config(T - 1), instant=t.new_instant_time()).operations == []
    t.reload()
    (op,) = plan_compaction(t, event_time_config(T), instant=t.new_instant_time()).operations
    assert op.is_partial is False


def _java_stat_log_with_delete(path: str, data_ms: int, delete_ms: int) -> str:
    """A deltacommit writing one log file holding a data block (event time ``data_ms``) and a
    delete block (``delete_ms``), whose write stat has numDeletes > 0 and a range covering only the
    data block, as a Java writer records it. Returns the log file's relative path."""
    t = HoodieTable(path)
    (sl,) = latest_slices(path)
    inflight = W.start_commit(t, "deltacommit", operation_type="UPSERT")
    data = pa.table({"k": pa.array([1], pa.int64()), "part": ["all"], "ts": pa.array([data_ms], pa.int64()),
                     "v": pa.array([9], pa.int64())})
    data = W.add_meta_columns(data, instant=inflight.timestamp, record_keys=pa.array(["1"]), partition_paths="all",
                              file_name=sl.file_id)
    deletes = pa.table({"record_key": ["2"], "partition_path": ["all"],
                        "event_time": pa.array([delete_ms], pa.int64())})
    stat = W.write_log_file(t.storage, partition="all", file_id=sl.file_id, base_instant=sl.base_instant,
                            instant=inflight.timestamp, token=N.write_token(0, 1, 1),
                            write=W.LogWrite(data=data, deletes=deletes), avro_schema=t.avro_schema(),
                            base_file_name=sl.base_file.name, event_time_field="ts")
    assert stat.num_deletes == 1 and stat.min_event_time == min(data_ms, delete_ms)
    stat.min_event_time = stat.max_event_time = data_ms  # the Java stat: the data block's range only
    W.complete_commit(t, inflight, W.commit_metadata_for([stat], avro_schema=t.avro_schema(),
                                                         operation_type="UPSERT"))
    return stat.path


def test_write_stat_of_a_log_file_with_deletes_is_not_trusted(tmp_path: Path) -> None:
    """A stat with numDeletes > 0 may cover only the data block: the headers decide, so a delete
    at or before T is compacted even though the stat's minimum is after T."""
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0)])
    log = _java_stat_log_with_delete(path, data_ms=T + 100, delete_ms=T - 100)
    t = HoodieTable(path)
    index = EventTimeIndex(t)
    got = index.for_path(log)
    assert (got.min_ms, got.max_ms, got.source) == (T - 100, T + 100, "headers") and index.header_reads == 1
    c = schedule_compaction(path, event_time_config(T))
    (op,) = _plan(path, c)["operations"]
    assert op["deltaFilePaths"] == [Path(log).name] and not op["symlinkOperations"]
    run_compaction(path, c)
    assert [r[0] for r in read_optimized(path)] == [repr(("int", 1))]


def test_write_stat_without_deletes_is_used_as_is(tmp_path: Path) -> None:
    """The guard is about deletes only: a stat of a data-only log file answers without headers."""
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0)])
    write(path, "upsert", [(1, T + 5, 1)])
    t = HoodieTable(path)
    index = EventTimeIndex(t)
    (sl,) = latest_slices(path)
    (lf,) = sl.log_files
    got = index.for_log(lf)
    assert (got.min_ms, got.max_ms, got.source) == (T + 5, T + 5, "stats") and index.header_reads == 0
