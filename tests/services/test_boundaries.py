"""Deterministic tests at the service boundaries mutation testing found unguarded (issue 21,
MUTATION.md): the event-time threshold itself, Java-written write stats of log files with deletes."""

from __future__ import annotations

import abc
import datetime as dt
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie

from hoodie.format.file_group import naming as N
from hoodie.format.slice import writer as W
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import plan_compaction, run_compaction, schedule_compaction
from hoodie.services.compaction import partial as P
from hoodie.services.compaction.event_index import EventTimeIndex
from hoodie.services.compaction.strategies import CompactionStrategy
from hoodie.services.ttl import PartitionTTLStrategy
from tests.services.test_compaction_support import (
    UNBOUNDED, Setup, event_time_config, latest_slices, log_names, read_optimized, snapshot, write,
)

# Realistic epoch-millisecond event times (2023-11-14T22:13:20Z) around a threshold T.
T = 1_700_000_000_000
T0 = "2024010100000000"  # synthetic instants T0 + "1", T0 + "2", ...: 17 digits, in order


def _plan(path: str, instant: str) -> dict:
    """The plan as its Avro record (the boundary tests check the fields as written)."""
    return HoodieTable(path).timeline.compaction_plan(instant).to_avro()


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


# -- rollback -------------------------------------------------------------------------------------

def _rb_table(path: str, table_type: str = "MERGE_ON_READ") -> dict[str, str]:
    from hoodie import write_arrow
    from tests.services.test_rollback import OPTS, _data

    o = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    write_arrow(path, _data([0, 1, 2, 3], 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    return o


def test_interrupted_rollback_is_resumed_not_duplicated(tmp_path: Path, caplog) -> None:
    """A rollback left requested or inflight by a crash is finished by the next rollback of the same
    instant (Hudi re-executes it); pending rollbacks of other instants, or unreadable ones, are not
    taken for it."""
    import logging

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.services.rollback.operation import rollback
    from hoodie.services.rollback.instant import pending_rollback_of, start_rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data, _vals

    path = str(tmp_path / "t")
    o = _rb_table(path)
    other = _uncommitted_write(path, _data([1], 5, "x"), opts=o)
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    t = HoodieTable(path)
    unreadable = T.create_requested(t.storage, t.new_instant_time(), I.ROLLBACK, b"")
    for target in (other, failed):
        plan = plans.write_avro_metadata("HoodieRollbackPlan", plans.rollback_plan((target, I.DELTA_COMMIT), []))
        T.create_requested(t.storage, t.new_instant_time(), I.ROLLBACK, plan)
    t.reload()
    first = pending_rollback_of(t, failed)
    assert first is not None and first.is_requested
    assert pending_rollback_of(t, other).timestamp < first.timestamp
    assert pending_rollback_of(t, "20000101000000000") is None
    # Resuming a requested one moves it to inflight (empty inflight file, as Hudi writes it).
    again = start_rollback(t, failed, b"unused")
    assert again.timestamp == first.timestamp and again.is_inflight
    assert t.storage.read_bytes(f".hoodie/{again.file_name}") == b""
    with caplog.at_level(logging.INFO, logger="hoodie.services.rollback"):
        res = rollback(path, failed)
    assert res.rollback_instant == first.timestamp
    assert f"resuming rollback {first.timestamp} of {failed}, left inflight by an interrupted run" in [
        r.getMessage() for r in caplog.records]
    tl = HoodieTable(path).timeline
    assert tl.get(first.timestamp).is_completed and tl.get(failed) is None
    assert sorted(i.timestamp for i in tl.pending().by_actions(I.ROLLBACK)) == sorted(
        [unreadable.timestamp, pending_rollback_of(HoodieTable(path), other).timestamp])
    assert _vals(hoodie.read_table(path)) == {0: "a0", 1: "a1", 2: "a2", 3: "a3"}


def test_new_rollback_writes_its_plan_and_an_empty_inflight(tmp_path: Path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data

    path = str(tmp_path / "t")
    o = _rb_table(path)
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    res = rollback(path, failed)
    t = HoodieTable(path)
    rb = t.timeline.get(res.rollback_instant)
    plan = plans.read_avro_metadata(t.timeline.read_file(rb.requested_file_name))
    assert plan["instantToRollback"]["commitTime"] == failed
    assert plan["instantToRollback"]["action"] == I.DELTA_COMMIT
    assert t.storage.read_bytes(f".hoodie/{I.instant_file_name(rb.timestamp, I.ROLLBACK, I.State.INFLIGHT)}") == b""
    assert sorted(res.deleted_files) == res.deleted_files and res.deleted_files


def test_rollback_without_markers_lists_every_partition(tmp_path: Path) -> None:
    """Without markers (Java with markers disabled), the files of the failed write are found by
    listing: its base files by name, log files whose blocks are all its own; folders inside a
    partition and files of other instants are left alone."""
    import shutil

    from hoodie.format.slice import writer as W
    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data, _vals

    path = str(tmp_path / "t")
    o = _rb_table(path, "COPY_ON_WRITE")
    failed = _uncommitted_write(path, _data([0, 1, 5], 5, "bad"), opts=o)
    marked = sorted(p for p, _ in W.marker_files(HoodieTable(path).storage, failed))
    assert {p.split("/")[0] for p in marked} == {"p0", "p1"} and len(marked) >= 2
    shutil.rmtree(tmp_path / "t" / ".hoodie" / ".temp")
    for part in ("p0", "p1"):
        (tmp_path / "t" / part / "-a-folder").mkdir()  # sorts before every file of the partition
        (tmp_path / "t" / part / "-a-folder" / "keep.txt").write_text("not hoodie's")
    (tmp_path / "t" / "p0" / "notes.txt").write_text("not a table file")
    res = rollback(path, failed)
    assert sorted(res.deleted_files) == marked
    assert (tmp_path / "t" / "p0" / "notes.txt").exists()
    assert (tmp_path / "t" / "p1" / "-a-folder" / "keep.txt").exists()
    assert _vals(hoodie.read_table(path)) == {0: "a0", 1: "a1", 2: "a2", 3: "a3"}


def test_rollback_without_markers_keeps_log_files_of_other_instants(tmp_path: Path) -> None:
    import shutil

    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from hoodie import write_arrow
    from tests.services.test_rollback import _data, _vals

    path = str(tmp_path / "t")
    o = _rb_table(path)
    write_arrow(path, _data([2], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    shutil.rmtree(tmp_path / "t" / ".hoodie" / ".temp")
    logs_before = sorted(p.name for p in (tmp_path / "t" / "p0").iterdir() if ".log." in p.name)
    assert len(logs_before) == 2
    res = rollback(path, failed)
    assert len(res.deleted_files) == 1 and res.deleted_files[0].startswith("p0/")
    assert not res.command_blocks
    assert sorted(p.name for p in (tmp_path / "t" / "p0").iterdir() if ".log." in p.name) == [
        n for n in logs_before if n != res.deleted_files[0].split("/")[1]]
    assert _vals(hoodie.read_table(path)) == {0: "a0", 1: "a1", 2: "b2", 3: "a3"}


def test_rollback_refusals_name_the_reason(tmp_path: Path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie import write_arrow
    from hoodie.services.rollback.operation import rollback
    from hoodie.services.rollback.failed_writes import pending_failed_writes
    from hoodie.services.rollback.instant import RollbackError
    from tests.services.test_rollback import _data

    path = str(tmp_path / "t")
    o = _rb_table(path)
    c2 = write_arrow(path, _data([1], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    later = [write_arrow(path, _data([2], ts, "c"), {**o, "hoodie.datasource.write.operation": "upsert"})
             for ts in (3, 4, 5, 6)]
    # Four later writes: the message names the first three.
    with pytest.raises(RollbackError, match=rf"^{c2} is completed and later writes exist \({', '.join(later[:3])}\); "
                                            "only the latest completed write can be rolled back$"):
        rollback(path, c2)
    c3 = later[-1]
    with pytest.raises(RollbackError, match=rf"^{c3} is completed$"):
        rollback(path, c3, allow_completed=False)
    with pytest.raises(RollbackError, match=r"no instant 20000101000000000 on the timeline of .*; see `hoodie show "
                                            r"timeline`$"):
        rollback(path, "20000101000000000")
    t = HoodieTable(path)
    clean = T.create_requested(t.storage, t.new_instant_time(), I.CLEAN, b"")
    with pytest.raises(RollbackError, match=rf"{clean.timestamp} is a clean; only commit, deltacommit and "
                                            "replacecommit instants can be rolled back"):
        rollback(path, clean.timestamp)
    # A pending clustering replacecommit belongs to its service; a pending insert_overwrite is a failed write.
    t.reload()
    clustering = T.create_requested(t.storage, t.new_instant_time(), I.REPLACE_COMMIT, plans.write_avro_metadata(
        "HoodieRequestedReplaceMetadata", {**plans.requested_replace_metadata("CLUSTER"),
                                           "clusteringPlan": {"inputGroups": [], "strategy": None,
                                                              "extraMetadata": None, "version": 1,
                                                              "preserveHoodieMetadata": None}}))
    overwrite = T.create_requested(t.storage, t.new_instant_time(), I.REPLACE_COMMIT, plans.write_avro_metadata(
        "HoodieRequestedReplaceMetadata", plans.requested_replace_metadata("INSERT_OVERWRITE")))
    empty = T.create_requested(t.storage, t.new_instant_time(), I.REPLACE_COMMIT, b"")
    corrupt = T.create_requested(t.storage, t.new_instant_time(), I.REPLACE_COMMIT, b"not avro")
    no_plan = t.new_instant_time()  # only an inflight file: no requested plan to read
    t.storage.write_bytes(f".hoodie/{I.instant_file_name(no_plan, I.REPLACE_COMMIT, I.State.INFLIGHT)}", b"")
    pending = [i.timestamp for i in pending_failed_writes(t.reload())]
    assert pending == [overwrite.timestamp, empty.timestamp, corrupt.timestamp, no_plan]
    assert clustering.timestamp not in pending
    assert [i.timestamp for i in pending_failed_writes(t, exclude=[overwrite.timestamp, corrupt.timestamp])] == [
        empty.timestamp, no_plan]


def test_rollback_plan_and_metadata_in_nested_partitions(tmp_path: Path, caplog) -> None:
    """What Java reads back: per partition (nested paths), the plan's requests (files to delete;
    for a log file shared with another instant, its file id, base instant and size) and the
    metadata (deleted files, failed deletes, log files given a command block)."""
    import logging
    import shutil

    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline import plans
    from hoodie import write_arrow
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.services.rollback.operation import rollback
    from tests.services.test_rollback import OPTS

    def rows(ids: list[int], ts: int) -> pa.Table:
        return pa.table({"id": pa.array(ids, pa.int64()), "p": [f"2024/0{1 + i % 2}" for i in ids],
                         "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"v{ts}"] * len(ids)})

    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_arrow(path, rows([0, 1], 1), {**o, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, rows([0], 2), {**o, "hoodie.datasource.write.operation": "upsert"})
    c3 = write_arrow(path, rows([0, 1], 3), {**o, "hoodie.datasource.write.operation": "upsert"})
    t = HoodieTable(path)
    (sl,) = FileSystemView(t.storage, t.timeline).latest_file_slices("2024/01")
    first, second = sl.sorted_logs()
    # One log file holding blocks of c2 and c3 (pre-0.14 appends); no markers: the listing path.
    merged = (tmp_path / "t" / first.path).read_bytes() + (tmp_path / "t" / second.path).read_bytes()
    (tmp_path / "t" / first.path).write_bytes(merged)
    (tmp_path / "t" / second.path).unlink()
    shutil.rmtree(tmp_path / "t" / ".hoodie" / ".temp")
    (c3_log,) = [p for p in (tmp_path / "t" / "2024" / "02").iterdir() if ".log." in p.name]
    with caplog.at_level(logging.INFO, logger="hoodie.services.rollback"):
        res = rollback(path, c3)
    assert res.deleted_files == [f"2024/02/{c3_log.name}"]
    (block_file,) = res.command_blocks
    assert block_file.startswith("2024/01/.") and N.parse_log_file(block_file.rsplit("/", 1)[1]).file_id == sl.file_id
    assert N.parse_log_file(block_file.rsplit("/", 1)[1]).base_instant == sl.base_instant
    assert f"rolled back [{c3}__deltacommit__COMPLETED] (1 files deleted, 1 command blocks)" in [
        r.getMessage() for r in caplog.records]
    assert N.parse_log_file(block_file.rsplit("/", 1)[1]).version == first.version + 1
    t.reload()
    rb = t.timeline.get(res.rollback_instant)
    plan = plans.read_avro_metadata(t.timeline.read_file(rb.requested_file_name))
    reqs = {r["partitionPath"]: r for r in plan["RollbackRequests"]}
    assert reqs["2024/02"]["filesToBeDeleted"] == [t.storage.uri(res.deleted_files[0])]
    assert reqs["2024/02"]["fileId"] == "" and reqs["2024/02"]["logBlocksToBeDeleted"] == {}
    shared = reqs["2024/01"]
    assert (shared["fileId"], shared["latestBaseInstant"], shared["filesToBeDeleted"]) == (
        sl.file_id, sl.base_instant, [])
    assert shared["logBlocksToBeDeleted"] == {t.storage.uri(first.path): len(merged)}
    meta = plans.read_avro_metadata(t.timeline.read_file(rb.file_name))
    assert meta["commitsRollback"] == [c3] and meta["totalFilesDeleted"] == 1
    assert meta["instantsRollback"] == [{"commitTime": c3, "action": I.DELTA_COMMIT}]
    assert meta["startRollbackTime"] == rb.timestamp and 0 <= meta["timeTakenInMillis"] < 600_000
    pm = meta["partitionMetadata"]
    assert sorted(pm) == ["2024/01", "2024/02"]
    assert pm["2024/02"]["successDeleteFiles"] == [t.storage.uri(res.deleted_files[0])]
    assert pm["2024/02"]["failedDeleteFiles"] == [] and pm["2024/02"]["rollbackLogFiles"] == {}
    assert pm["2024/01"]["successDeleteFiles"] == [] and pm["2024/01"]["failedDeleteFiles"] == []
    assert pm["2024/01"]["rollbackLogFiles"] == {t.storage.uri(block_file): t.storage.size(block_file)}


# -- compaction strategies (pure: synthetic slices, no table) -------------------------------------

def _slice(partition: str, file_id: str, log_sizes: list[int], base_size: int | None = 10 * 1024 * 1024):
    from hoodie.format.file_group.fsview import BaseFile, FileSlice, LogFile

    base = None if base_size is None else BaseFile(partition, f"{file_id}_1-0-1_001.parquet", file_id, "001",
                                                   base_size)
    logs = [LogFile(partition, n, N.parse_log_file(n), size) for n, size in
            ((N.log_file_name(file_id, "001", v + 1, "1-0-1"), s) for v, s in enumerate(log_sizes))]
    return FileSlice(partition, file_id, "001", base, logs)


def _ops(strategy, slices):
    from hoodie.services.compaction.strategies import CandidateOperation

    return [CandidateOperation(sl, sl.sorted_logs(), [], strategy.capture_metrics(sl, sl.sorted_logs()))
            for sl in slices]


def _context(cfg, today=None):
    from hoodie.services.compaction.strategies import PlanningContext

    return PlanningContext(table=None, config=cfg, instant="20240101000000000", event_times=None,
                           today=today or dt.date(2024, 3, 10))


def test_capture_metrics_uses_whole_mebibytes_and_the_max_file_size_without_a_base() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    cfg = CompactionConfig.from_options({"hoodie.parquet.max.file.size": str(120 * S.MIB)})
    strategy = S.CompactionStrategy(cfg)
    sl = _slice("p", "f", [S.MIB, S.MIB // 2], base_size=3 * S.MIB - 1)
    m = strategy.capture_metrics(sl, sl.sorted_logs())
    assert m == {S.TOTAL_LOG_FILES_SIZE: 1.5 * S.MIB, S.TOTAL_LOG_FILES: 2.0, S.TOTAL_IO_READ_MB: 4.0,
                 S.TOTAL_IO_WRITE_MB: 2.0, S.TOTAL_IO_MB: 6.0}
    no_base = _slice("p", "g", [S.MIB - 1], base_size=None)
    m = strategy.capture_metrics(no_base, no_base.sorted_logs())
    assert (m[S.TOTAL_IO_READ_MB], m[S.TOTAL_IO_WRITE_MB], m[S.TOTAL_IO_MB]) == (0.0, 120.0, 120.0)


def test_bounded_io_includes_the_operation_that_uses_up_the_budget() -> None:
    """Hudi's BoundedIO: subtract each operation's IO, keep it, stop once the budget is <= 0."""
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    def kept(target_io: int, ios: list[int]) -> list[str]:
        strategy = S.BoundedIOCompactionStrategy(CompactionConfig.from_options(
            {"hoodie.compaction.target.io": str(target_io)}))
        ops = [S.CandidateOperation(_slice("p", f"f{i}", [1]), [], [], {S.TOTAL_IO_MB: float(io)})
               for i, io in enumerate(ios)]
        return [op.file_id for op in strategy.order_and_filter(ops, [], _context(strategy.config))]

    assert kept(100, [40, 60, 10]) == ["f0", "f1"]        # exactly used up: stop after it
    assert kept(100, [40, 59, 10, 5]) == ["f0", "f1", "f2"]  # crossing it: included, then stop
    assert kept(100, [150, 1]) == ["f0"]
    assert kept(100, [10, 20]) == ["f0", "f1"]


def test_log_file_size_threshold_keeps_the_equal_and_orders_largest_first() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    strategy = S.resolve_strategy(CompactionConfig.from_options({
        "hoodie.compaction.strategy": "LogFileSizeBased", "hoodie.compaction.logfile.size.threshold": "3000",
        "hoodie.compaction.target.io": "1000000"}))
    slices = [_slice("p", "below", [1000, 1999]), _slice("p", "equal", [1000, 2000]), _slice("p", "big", [4000])]
    got = strategy.order_and_filter(_ops(strategy, slices), [], _context(strategy.config))
    assert [op.file_id for op in got] == ["big", "equal"]


def test_log_file_num_threshold_keeps_the_equal_and_orders_most_first() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    strategy = S.resolve_strategy(CompactionConfig.from_options({
        "hoodie.compaction.strategy": "LogFileNumBased", "hoodie.compaction.logfile.num.threshold": "3",
        "hoodie.compaction.target.io": "1000000"}))
    slices = [_slice("p", "two", [1, 1]), _slice("p", "three", [1, 1, 1]), _slice("p", "four", [1, 1, 1, 1])]
    got = strategy.order_and_filter(_ops(strategy, slices), [], _context(strategy.config))
    assert [op.file_id for op in got] == ["four", "three"]


def test_date_partition_strategies_at_their_boundaries() -> None:
    """DayBased keeps the newest N date partitions; BoundedPartitionAware keeps dates on or after
    today - N days (future ones too), newest first; UnBoundedPartitionAware the rest."""
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    parts = ["2024/03/07", "dt=2024/03/08", "2024/03/09", "2024/03/12"]

    def run(name: str) -> tuple[list[str], list[str]]:
        strategy = S.resolve_strategy(CompactionConfig.from_options({
            "hoodie.compaction.strategy": name, "hoodie.compaction.daybased.target.partitions": "2"}))
        ctx = _context(strategy.config)  # today = 2024-03-10: earliest = 2024-03-08
        ops = _ops(strategy, [_slice(p, f"f{i}", [1]) for i, p in enumerate(parts)])
        return strategy.filter_partition_paths(parts, ctx), [op.partition for op in
                                                             strategy.order_and_filter(ops, [], ctx)]

    assert run("DayBased") == (["2024/03/12", "2024/03/09"], ["2024/03/12", "2024/03/09"])
    assert run("BoundedPartitionAware") == (["2024/03/12", "2024/03/09", "dt=2024/03/08"],
                                            ["2024/03/12", "2024/03/09", "dt=2024/03/08"])
    assert run("UnBoundedPartitionAware") == (["2024/03/07"], ["2024/03/07"])
    assert S.partition_date("y=2024/m=02/d=29/extra") == dt.date(2024, 2, 29)
    with pytest.raises(S.CompactionConfigError, match=r"partition 'us/2024' is not a yyyy/MM/dd date path \(hive-style "
                                                      r"k=v allowed\); the day-based and partition-aware strategies "
                                                      r"need date partitions"):
        S.partition_date("us/2024")
    with pytest.raises(S.CompactionConfigError, match="is not a yyyy/MM/dd date path"):
        S.partition_date("y=2024=2025/m=03/d=01")  # only the first '=' separates key and value


def test_partition_regex_searches_and_composites_narrow_in_turn() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    cfg = CompactionConfig.from_options({
        "hoodie.compaction.strategy": "PartitionRegexBased,DayBased",
        "hoodie.compaction.partition.path.regex": "03/0[89]", "hoodie.compaction.daybased.target.partitions": "1"})
    strategy = S.resolve_strategy(cfg)
    assert isinstance(strategy, S.CompositeCompactionStrategy)
    assert strategy.name == S.JAVA_PACKAGE + "PartitionRegexBasedCompactionStrategy," + S.JAVA_PACKAGE \
        + "DayBasedCompactionStrategy"
    ctx = _context(cfg)
    assert strategy.filter_partition_paths(["2024/03/07", "2024/03/08", "2024/03/09"], ctx) == ["2024/03/09"]
    sl = _slice("2024/03/09", "f", [1, 2, 3])
    assert strategy.filter_log_files(sl.sorted_logs(), file_slice=sl, context=ctx) == (sl.sorted_logs(), [])
    with pytest.raises(S.CompactionConfigError, match="^PartitionRegexBasedCompactionStrategy needs "
                                                      "hoodie.compaction.partition.path.regex$"):
        S.resolve_strategy(CompactionConfig.from_options({"hoodie.compaction.strategy": "PartitionRegexBased"}))
    with pytest.raises(S.CompactionConfigError, match=r"regex='\(' is not a valid regex"):
        S.resolve_strategy(CompactionConfig.from_options({"hoodie.compaction.strategy": "PartitionRegexBased",
                                                          "hoodie.compaction.partition.path.regex": "("}))


def test_strategy_names_resolve_like_hudi_and_refuse_clearly() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    def resolve(name: str) -> S.CompactionStrategy:
        return S.resolve_strategy(CompactionConfig.from_options({"hoodie.compaction.strategy": name}))

    for cls in S.BUILTIN:
        if cls is S.PartitionRegexBasedCompactionStrategy:
            continue
        simple = cls.java_class.rsplit(".", 1)[1]
        assert type(resolve(cls.java_class)) is cls and type(resolve(simple)) is cls
        assert type(resolve(cls.short_name)) is cls and resolve(cls.short_name).name == cls.java_class
    # Composite names are dropped from a list; a list of one strategy is that strategy.
    assert type(resolve(" Composite , UnBounded ")) is S.UnBoundedCompactionStrategy
    assert type(resolve(S.JAVA_PACKAGE + "CompositeCompactionStrategy,DayBased")) is S.DayBasedCompactionStrategy
    assert type(resolve("CompositeCompactionStrategy,DayBased")) is S.DayBasedCompactionStrategy
    user = resolve("tests.services.test_compaction_plan.PickLastLog")
    assert user.name == "tests.services.test_compaction_plan.PickLastLog"
    assert S.event_time_strategy(resolve("UnBounded,EventTimeBased")) is not None
    assert S.event_time_strategy(resolve("UnBounded,DayBased")) is None
    with pytest.raises(S.CompactionConfigError, match=r"'org.apache.hudi.Foo' is a Hudi class hoodie does not "
                                                      r"implement; use one of LogFileSizeBased, LogFileNumBased"):
        resolve("org.apache.hudi.Foo")
    builtins = ", ".join(c.short_name for c in S.BUILTIN)
    assert builtins.startswith("LogFileSizeBased, LogFileNumBased, BoundedIO, UnBounded, DayBased")
    with pytest.raises(S.CompactionConfigError, match=rf"^hoodie.compaction.strategy='Nope' is unknown; use one of "
                                                      rf"{builtins}, a Hudi class name, or a dotted Python path$"):
        resolve("Nope")
    with pytest.raises(S.CompactionConfigError, match=r"'no_such_module.X' cannot be loaded"):
        resolve("no_such_module.X")
    with pytest.raises(S.CompactionConfigError, match=r"'pathlib.Path' is not a subclass of "
                                                      r"hoodie.services.compaction.strategies.CompactionStrategy"):
        resolve("pathlib.Path")
    with pytest.raises(S.CompactionConfigError, match="^hoodie.compaction.strategy is empty$"):
        resolve(" , ")
    with pytest.raises(S.CompactionConfigError, match="^a composite compaction strategy needs at least one strategy$"):
        S.CompositeCompactionStrategy(CompactionConfig(), [])


class _Recorder(CompactionStrategy):
    """A user strategy recording what a composite hands it (and keeping the last log file out)."""

    seen: list = []

    def filter_partition_paths(self, partitions, context):
        self.seen.append(("partitions", context.today))
        return list(partitions)

    def filter_log_files(self, logs, *, file_slice, context):
        self.seen.append(("logs", file_slice.file_id, context.today))
        return list(logs[:-1]), list(logs[-1:])

    def order_and_filter(self, operations, pending_plans, context):
        self.seen.append(("ops", len(pending_plans), context.today))
        return list(operations)


def test_composite_hands_every_member_the_context_slice_and_pending_plans() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    _Recorder.seen = []
    cfg = CompactionConfig.from_options({
        "hoodie.compaction.strategy": f"{__name__}._Recorder,BoundedPartitionAware",
        "hoodie.compaction.daybased.target.partitions": "1"})
    strategy = S.resolve_strategy(cfg)
    ctx = _context(cfg)
    assert strategy.filter_partition_paths(["2024/03/01", "2024/03/09"], ctx) == ["2024/03/09"]
    sl = _slice("2024/03/09", "f", [1, 2, 3])
    logs = sl.sorted_logs()
    assert strategy.filter_log_files(logs, file_slice=sl, context=ctx) == (logs[:2], logs[2:])
    ops = _ops(strategy, [sl, _slice("2024/03/01", "g", [1])])
    assert [op.file_id for op in strategy.order_and_filter(ops, [{"plan": 1}], ctx)] == ["f"]
    assert _Recorder.seen == [("partitions", ctx.today), ("logs", "f", ctx.today), ("ops", 1, ctx.today)]


def test_event_time_strategy_splits_at_the_threshold_itself() -> None:
    from types import SimpleNamespace

    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    cfg = CompactionConfig.from_options(event_time_config(T))
    strategy = S.resolve_strategy(cfg)
    sl = _slice("p", "f", [1, 1, 1, 1])
    logs = sl.sorted_logs()
    mins = dict(zip((lf.name for lf in logs), (T + 1, T, float("-inf"), float("inf"))))
    ctx = _context(cfg)
    # known=False: the unit check (a recorded range in another unit) has nothing to look at.
    ctx.event_times = SimpleNamespace(for_log=lambda lf: SimpleNamespace(planning_min=mins[lf.name], known=False))
    assert strategy.filter_log_files(logs, file_slice=sl, context=ctx) == ([logs[1], logs[2]], [logs[0], logs[3]])


def test_rollback_of_a_torn_log_file_with_markers_and_of_a_table_object(tmp_path: Path) -> None:
    """A log file the failed write left without one readable block (torn while written) is deleted
    when its marker names it, without warnings; rollback accepts an opened table too."""
    import warnings

    from hoodie.format.timeline import instant as I
    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data, _vals

    path = str(tmp_path / "t")
    o = _rb_table(path)
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    (log,) = [p for p in (tmp_path / "t" / "p0").iterdir() if ".log." in p.name]
    log.write_bytes(log.read_bytes()[:20])  # a torn first block
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = rollback(HoodieTable(path), failed)
    assert res.deleted_files == [f"p0/{log.name}"] and not log.exists()
    assert (res.rolled_back, res.action) == (failed, I.DELTA_COMMIT)
    assert _vals(hoodie.read_table(path)) == {0: "a0", 1: "a1", 2: "a2", 3: "a3"}


def test_rollback_command_block_in_a_non_partitioned_table(tmp_path: Path) -> None:
    from hoodie.format.file_group import naming as N
    from hoodie import write_arrow
    from hoodie.services.rollback.operation import rollback

    path = str(tmp_path / "t")
    o = {"hoodie.table.name": "np", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
         "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts"}

    def rows(ids: list[int], ts: int) -> pa.Table:
        return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array([ts] * len(ids), pa.int64()),
                         "v": [f"v{ts}"] * len(ids)})

    write_arrow(path, rows([0, 1], 1), {**o, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, rows([0], 2), {**o, "hoodie.datasource.write.operation": "upsert"})
    c3 = write_arrow(path, rows([1], 3), {**o, "hoodie.datasource.write.operation": "upsert"})
    first, second = sorted((p for p in (tmp_path / "t").iterdir() if ".log." in p.name),
                           key=lambda p: N.parse_log_file(p.name).sort_key())
    first.write_bytes(first.read_bytes() + second.read_bytes())
    second.unlink()
    res = rollback(path, c3)
    (block,) = res.command_blocks
    assert "/" not in block and N.parse_log_file(block).version == N.parse_log_file(first.name).version + 1
    t = hoodie.read_table(path)
    assert dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist())) == {0: "v2", 1: "v1"}


# -- partial compaction: links --------------------------------------------------------------------

def test_original_of_follows_links_and_refuses_broken_or_foreign_ones(tmp_path: Path) -> None:
    import os
    from types import SimpleNamespace

    from hoodie.format.storage import Storage
    from hoodie.services.compaction import CompactionError
    from hoodie.services.compaction import partial as P

    root = tmp_path / "t"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    st = Storage(str(root))
    target = N.log_file_name("f", "001", 1, "1-0-1")
    (root / "a" / target).write_bytes(b"x")
    (root / target).write_bytes(b"x")  # a non-partitioned table's log file
    link = N.log_file_name("f", "002", 1, "1-0-1")
    os.symlink(root / "a" / target, root / "a" / link)
    os.symlink(root / target, root / link)
    assert P.original_of(st, "a", link) == target and P.original_of(st, "a", target) == target
    assert P.original_of(st, "", link) == target
    gone = N.log_file_name("f", "003", 1, "1-0-1")
    os.symlink(root / "a" / "missing.log", root / "a" / gone)
    with pytest.raises(CompactionError, match=rf"^log file a/{gone} is a link to {root}/a/missing.log, which is "
                                              r"missing; restore it \(or roll back the compaction that created the "
                                              r"link\) before compacting again$"):
        P.original_of(st, "a", gone)
    foreign = N.log_file_name("f", "004", 1, "1-0-1")
    (root / "b" / "other.log").write_bytes(b"x")
    os.symlink(root / "b" / "other.log", root / "a" / foreign)
    with pytest.raises(CompactionError, match=rf"^log file a/{foreign} links outside its partition folder "
                                              rf"\({root}/b/other.log\); hoodie only creates links between log "
                                              "files of one file group$"):
        P.original_of(st, "a", foreign)

    # Storage without symlinks (object stores) is never asked about links.
    def refuse(rel: str) -> bool:
        raise AssertionError("is_symlink asked on storage without symlinks")
    assert P.original_of(SimpleNamespace(supports_symlinks=False, is_symlink=refuse), "a", link) == link
    assert P.parse_version(link) == 1 and P.parse_version(N.log_file_name("f", "002", 7, "1-0-1")) == 7
    assert P.parse_version("f_1-0-1_001.parquet") is None


def test_remove_links_deletes_leftover_copies_and_links_lowest_version_first(tmp_path: Path) -> None:
    from hoodie.format.storage import Storage
    from hoodie.services.compaction import CompactionError
    from hoodie.services.compaction import partial as P

    root = tmp_path / "t"
    (root / "a").mkdir(parents=True)
    st = Storage(str(root))
    links = [P.LinkOp("a", "f", N.log_file_name("f", "002", v, "1-0-1"), N.log_file_name("f", "001", v + 1, "1-0-1"))
             for v in (2, 1)]
    for lk in links:
        (root / lk.target_path).write_bytes(b"target")
        (root / lk.link_path).write_bytes(b"copy")
    (root / (links[0].link_path + P.COPY_TMP_SUFFIX)).write_bytes(b"half")
    assert P.remove_links(st, links) == [links[1].link_path, links[0].link_path + P.COPY_TMP_SUFFIX,
                                         links[0].link_path]
    assert sorted(p.name for p in (root / "a").iterdir()) == sorted(lk.target for lk in links)
    assert P.remove_links(st, links) == []
    (root / links[0].target_path).unlink()
    with pytest.raises(CompactionError, match=rf"^log file {links[0].target_path} \(target of planned link "
                                              rf"{links[0].link}\) is missing; the table changed under the "
                                              r"compaction plan \(was it cleaned\?\)\. Nothing was committed; "
                                              "restore the file or roll the compaction back$"):
        P.materialize_link(st, links[0], "copy")


def test_event_index_counts_archived_blocks_as_committed_but_not_a_pending_first_instant(tmp_path: Path) -> None:
    """Without a write stat (its deltacommit archived), the headers give the range: a block older
    than the active timeline was committed. A block of the first active instant is committed only
    if that instant completed."""
    import warnings

    from hoodie.format.timeline import instant as I
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_compaction_support import batch, options

    path = str(tmp_path / "t")
    c1 = write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0)])
    c2 = write(path, "upsert", [(1, T + 5, 1)])
    c3 = write(path, "upsert", [(2, T + 6, 2)])
    for inst in (c1, c2):  # archive c1 and c2: their timeline files go, their files stay
        for st in I.State:
            (tmp_path / "t" / ".hoodie" / I.instant_file_name(inst, I.DELTA_COMMIT, st)).unlink()
    (sl,) = latest_slices(path)
    logs = sl.sorted_logs()
    archived_log = tmp_path / "t" / logs[0].path
    intact = archived_log.read_bytes()
    archived_log.write_bytes(intact + b"#HUDI#\x00\x00\x00\x00\x00\x00\x01\x00torn")  # a torn block after it
    index = EventTimeIndex(HoodieTable(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # planning reads headers quietly
        old, new = index.for_log(logs[0]), index.for_log(logs[1])
    assert (old.min_ms, old.source, new.min_ms, new.source) == (T + 5, "headers", T + 6, "stats")
    assert index.header_reads == 1
    archived_log.write_bytes(intact)
    # Now make the first active instant a failed write: its log block is not committed data.
    for st in I.State:
        (tmp_path / "t" / ".hoodie" / I.instant_file_name(c3, I.DELTA_COMMIT, st)).unlink()
    failed = _uncommitted_write(path, batch([(1, T + 7, 3)], Setup()), opts=options(Setup(), "upsert"))
    table = HoodieTable(path)
    assert table.timeline.first().timestamp == failed
    (pending_log,) = [lf for lf in latest_slices(path)[0].log_files if lf.name not in {x.name for x in logs}]
    index = EventTimeIndex(table)
    pending_range = index.for_log(pending_log)
    assert (pending_range.has_data, pending_range.min_ms, pending_range.source) == (False, None, "headers")
    assert index.for_log(logs[1]).min_ms == T + 6
    assert index.header_reads == 2


# -- TTL partition stats (a synthetic timeline: commit files only) ---------------------------------

def _stats_table(root: Path):
    from types import SimpleNamespace

    from hoodie.format.timeline import active as TL
    from hoodie.format.storage import Storage

    st = Storage(str(root))
    return SimpleNamespace(storage=st, timeline=TL.Timeline.load(st))


def _commit_file(root: Path, name: str, parts: dict[str, int], op: str = "UPSERT", extra: dict | None = None) -> None:
    import json

    doc = {"partitionToWriteStats": {p: [{"fileId": f"f{i}"} for i in range(n)] for p, n in parts.items()},
           "operationType": op, "extraMetadata": extra or {}}
    (root / ".hoodie").mkdir(parents=True, exist_ok=True)
    (root / ".hoodie" / name).write_text(json.dumps(doc))


def test_touched_partitions_skip_empty_stats_unreadable_files_and_table_services(tmp_path: Path) -> None:
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1, "p2": 0})
    _commit_file(root, f"{T0}2.commit", {"p1": 1})
    (root / ".hoodie" / f"{T0}2.compaction.requested").write_bytes(b"")
    _commit_file(root, f"{T0}3.deltacommit", {"p3": 1})
    (root / ".hoodie" / f"{T0}3.logcompaction.requested").write_bytes(b"")
    _commit_file(root, f"{T0}4.replacecommit", {"p4": 1}, op="CLUSTER")
    (root / ".hoodie" / f"{T0}5.deltacommit").write_text("  \n")
    (root / ".hoodie" / f"{T0}6.deltacommit").write_text("{not json")
    _commit_file(root, f"{T0}7.commit", {"p7": 2}, op="INSERT_OVERWRITE")
    tl = _stats_table(root).timeline
    got = {i.timestamp[-1]: (TS.touched_partitions(tl, i, False), TS.touched_partitions(tl, i, True))
           for i in tl if not i.timestamp.endswith("6")}
    assert got == {"1": (["p1"], ["p1"]), "2": ([], ["p1"]), "3": ([], ["p3"]), "4": ([], ["p4"]),
                   "5": ([], []), "7": (["p7"], ["p7"])}
    # An unreadable commit is an error naming its file, never "no write": a write it hides would make
    # its partitions look older than they are (and TTL would expire them).
    damaged = next(i for i in tl if i.timestamp.endswith("6"))
    with pytest.raises(ValueError, match=rf"{T0}6\.deltacommit"):
        TS.touched_partitions(tl, damaged, False)


def test_partition_stats_encode_decode_and_copy() -> None:
    import base64
    import json
    import zlib

    from hoodie.services.ttl import stats as TS

    st = TS.PartitionStats({"p": "001"}, "002", ["001", "000"], True, 5)
    back = TS.PartitionStats.decode(st.encode())
    assert (back.last_modified, back.upto, back.pending, back.count_table_services, back.covered) == (
        {"p": "001"}, "002", ["000", "001"], True, 5)

    def raw(doc: object) -> str:
        return base64.b64encode(zlib.compress(json.dumps(doc).encode())).decode()

    assert TS.PartitionStats.decode("not base64 !") is None
    assert TS.PartitionStats.decode(base64.b64encode(b"not zlib").decode()) is None
    assert TS.PartitionStats.decode(raw([1, 2])) is None
    assert TS.PartitionStats.decode(raw({"v": TS.STATS_VERSION + 1, "lm": {}})) is None
    empty = TS.PartitionStats.decode(raw({"v": TS.STATS_VERSION}))
    assert (empty.last_modified, empty.upto, empty.pending, empty.count_table_services, empty.covered) == (
        {}, None, [], False, 0)
    st.scanned_instants, st.incremental, st.source = 7, True, "replacecommit 002"
    assert st.copy() == st
    c = st.copy()
    c.last_modified["q"] = "003"
    c.pending.append("x")
    assert st.last_modified == {"p": "001"} and st.pending == ["001", "000"]
    assert (c.upto, c.count_table_services, c.covered) == ("002", True, 5)


def test_partition_last_modified_incremental_rechecks_pending_and_rescans_after_a_rollback(tmp_path: Path) -> None:
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1})
    _commit_file(root, f"{T0}2.deltacommit", {"p2": 1})
    table = _stats_table(root)
    TS.forget(table)
    first = TS.partition_last_modified(table)
    assert first.last_modified == {"p1": f"{T0}1", "p2": f"{T0}2"}
    assert (first.upto, first.covered, first.scanned_instants, first.incremental, first.source) == (
        f"{T0}2", 2, 2, False, "full scan")
    # A new write: only it is read.
    _commit_file(root, f"{T0}3.deltacommit", {"p1": 1})
    (root / ".hoodie" / f"{T0}4.deltacommit.requested").write_bytes(b"")
    _commit_file(root, f"{T0}5.deltacommit", {"p3": 1})
    second = TS.partition_last_modified(_stats_table(root))
    assert second.last_modified == {"p1": f"{T0}3", "p2": f"{T0}2", "p3": f"{T0}5"}
    assert (second.scanned_instants, second.incremental, second.source, second.pending) == (
        2, True, "process cache", [f"{T0}4"])
    # The pending write completes later, touching p3 (older than p3's newer write) and p2.
    _commit_file(root, f"{T0}4.deltacommit", {"p3": 1, "p2": 1})
    third = TS.partition_last_modified(_stats_table(root))
    assert third.scanned_instants == 1 and third.pending == []
    assert third.last_modified == {"p1": f"{T0}3", "p2": f"{T0}4", "p3": f"{T0}5"}
    assert TS.partitions_in(third, ["p2", "nope"]) == {"p2": f"{T0}4"}
    # A rolled-back write below upto: the incremental state no longer matches, so everything is read again.
    (root / ".hoodie" / f"{T0}3.deltacommit").unlink()
    fourth = TS.partition_last_modified(_stats_table(root))
    assert fourth.last_modified == {"p1": f"{T0}1", "p2": f"{T0}4", "p3": f"{T0}5"} == TS.full_scan(_stats_table(root))
    # A compaction commit counts only when table services count.
    _commit_file(root, f"{T0}6.commit", {"p1": 1}, op="COMPACT")
    assert TS.full_scan(_stats_table(root))["p1"] == f"{T0}1"
    assert TS.full_scan(_stats_table(root), count_table_services=True)["p1"] == f"{T0}6"
    (root / ".hoodie" / f"{T0}6.commit").unlink()
    assert (fourth.scanned_instants, fourth.incremental) == (4, False)
    # Counting table services is a separate state; forgetting one table leaves the others.
    _commit_file(tmp_path / "other", f"{T0}1.deltacommit", {"x": 1})
    other = _stats_table(tmp_path / "other")
    TS.partition_last_modified(other)
    counted = TS.partition_last_modified(_stats_table(root), count_table_services=True)
    assert counted.scanned_instants == 4 and counted.count_table_services
    again = TS.partition_last_modified(_stats_table(root), count_table_services=True)
    assert (again.scanned_instants, again.incremental, again.count_table_services) == (0, True, True)
    TS.forget(_stats_table(root))
    assert TS.partition_last_modified(_stats_table(root)).scanned_instants == 4
    assert TS.partition_last_modified(other).scanned_instants == 0
    TS.forget()
    assert TS.partition_last_modified(other).scanned_instants == 1
    assert TS.partition_last_modified(other, incremental=False).scanned_instants == 1


def test_partition_stats_persisted_by_a_ttl_replacecommit_are_the_starting_point(tmp_path: Path) -> None:
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1})
    _commit_file(root, f"{T0}2.deltacommit", {"p2": 1})
    saved = TS.PartitionStats({"p1": f"{T0}1", "p2": f"{T0}2"}, f"{T0}2", [], False, 2)
    other_rule = TS.PartitionStats({"p1": f"{T0}1"}, f"{T0}2", [], True, 2)
    _commit_file(root, f"{T0}3.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: saved.encode()})
    _commit_file(root, f"{T0}4.replacecommit", {}, op="DELETE_PARTITION",
                 extra={TS.STATS_KEY: other_rule.encode()})
    _commit_file(root, f"{T0}5.replacecommit", {}, op="DELETE_PARTITION")
    TS.forget()
    got = TS.partition_last_modified(_stats_table(root))
    assert got.source == f"replacecommit {T0}3" and got.incremental
    assert got.scanned_instants == 3 and got.last_modified == {"p1": f"{T0}1", "p2": f"{T0}2"}
    counted = TS.partition_last_modified(_stats_table(root), count_table_services=True)
    assert counted.source == f"replacecommit {T0}4"
    # The process's state keeps the source it started from, until a TTL commit persists a newer one.
    assert TS.partition_last_modified(_stats_table(root)).source == f"replacecommit {T0}3"
    _commit_file(root, f"{T0}6.deltacommit", {"p1": 1})
    newer = TS.PartitionStats({"p1": f"{T0}6", "p2": f"{T0}2"}, f"{T0}6", [], False, 6)
    _commit_file(root, f"{T0}7.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: newer.encode()})
    got = TS.partition_last_modified(_stats_table(root))
    assert got.source == f"replacecommit {T0}7" and got.scanned_instants == 1
    assert got.last_modified == {"p1": f"{T0}6", "p2": f"{T0}2"}
    again = TS.partition_last_modified(_stats_table(root))
    assert again.source == f"replacecommit {T0}7" and again.scanned_instants == 0
    # A state computed on a timeline without writes never hides the persisted one.
    (tmp_path / "empty" / ".hoodie").mkdir(parents=True)
    empty = _stats_table(tmp_path / "empty")
    assert TS.partition_last_modified(empty).upto is None
    for f in sorted((root / ".hoodie").iterdir()):
        (tmp_path / "empty" / ".hoodie" / f.name).write_bytes(f.read_bytes())
    assert TS.partition_last_modified(_stats_table(tmp_path / "empty")).source == f"replacecommit {T0}7"


# -- clean: what `hoodie clean --json` prints -----------------------------------------------------

def test_clean_result_json_for_a_recovered_and_a_new_clean(tmp_path: Path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as TL
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    hist = _history(path, 3)
    table = HoodieTable(path)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"}
    plan = plan_clean(table, cfg)
    doomed = {p: sorted(fs) for p, fs in plan.files_to_delete.items() if fs}
    assert sorted(doomed) == ["p0", "p1"] and plan.total_files == 2
    ts = table.new_instant_time()  # an interrupted clean: planned, requested, nothing deleted yet
    TL.create_requested(table.storage, ts, I.CLEAN,
                        plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage)))
    dry = run_clean(path, cfg, dry_run=True).to_json()
    assert dry["dry_run"] is True and dry["instant"] is None and dry["total_deleted"] == 0
    assert dry["plan"]["notes"] == [f"pending clean(s) {ts} would be re-executed first"]
    res = run_clean(path, {**cfg, "hoodie.cleaner.fileversions.retained": "1"})
    out = res.to_json()
    assert sorted(out) == ["deleted_files", "deleted_partitions", "dry_run", "failed_files", "instant", "plan",
                           "reason", "recovered_cleans", "stash_purged", "total_deleted"]
    assert out["reason"] == f"deleted {res.total_deleted} file(s) in clean {res.instant} (KEEP_LATEST_FILE_VERSIONS); " \
        "finished 1 interrupted clean(s)"
    (rec,) = out["recovered_cleans"]
    assert rec == {
        "instant": ts, "dry_run": False,
        "plan": {"policy": "KEEP_LATEST_FILE_VERSIONS", "earliest_instant_to_retain": None,
                 "last_completed_commit": hist[-1][0], "files_to_delete": doomed, "total_files": 2,
                 "partitions_to_delete": [], "notes": []},
        "deleted_files": doomed, "total_deleted": 2, "failed_files": {}, "deleted_partitions": [],
        "recovered_cleans": [], "stash_purged": [],
        "reason": f"deleted 2 file(s) in clean {ts} (KEEP_LATEST_FILE_VERSIONS)"}
    assert out["instant"] == res.instant and out["instant"] > ts and out["dry_run"] is False
    assert out["total_deleted"] == 2 == sum(len(v) for v in out["deleted_files"].values())
    assert out["plan"]["total_files"] == 2 and sorted(out["plan"]["files_to_delete"]) == ["p0", "p1"]
    assert out["failed_files"] == {} and out["deleted_partitions"] == [] and out["stash_purged"] == []


def test_clean_deletes_a_dropped_partition_with_its_checksum_files_only(tmp_path: Path) -> None:
    """Hadoop writes ``.<name>.crc`` beside files: those of doomed files and of the partition
    metafile go with the partition; any other file (a foreign checksum too) keeps it."""
    from hoodie import write_arrow
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1), (2, "b", 2), (3, "c", 3)]), options())
    base_of = {}
    for part in ("a", "c"):
        drop_partition(path, part)
        folder = tmp_path / "t" / part
        (base,) = [p.name for p in folder.iterdir() if p.name.endswith(".parquet")]
        base_of[part] = base
        (folder / f".{base}.crc").write_bytes(b"crc")
        (folder / "..hoodie_partition_metadata.crc").write_bytes(b"crc")
    (tmp_path / "t" / "c" / ".foreign.parquet.crc").write_bytes(b"crc")  # no such file: not ours
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}
    plan = plan_clean(HoodieTable(path), cfg)
    assert plan.partitions_to_delete == ["a"]
    assert plan.partitions_to_delete == ["a"]
    # Both groups were replaced: their files and checksums go. The kept partition keeps the checksum
    # of its metafile, which stays.
    assert sorted(f.rsplit("/", 1)[1] for f in plan.files_to_delete["a"]) == sorted(
        [base_of["a"], f".{base_of['a']}.crc", "..hoodie_partition_metadata.crc"])
    assert sorted(f.rsplit("/", 1)[1] for f in plan.files_to_delete["c"]) == sorted(
        [base_of["c"], f".{base_of['c']}.crc"])
    res = run_clean(path, cfg)
    assert res.deleted_partitions == ["a"] and not (tmp_path / "t" / "a").exists()
    assert sorted(p.name for p in (tmp_path / "t" / "c").iterdir()) == [
        "..hoodie_partition_metadata.crc", ".foreign.parquet.crc", ".hoodie_partition_metadata"]
    assert any("partition c is kept: .foreign.parquet.crc is not part of any cleanable file group" in n
               for n in res.plan.notes)


def test_clean_plan_from_avro_reads_the_earliest_instant_to_retain(tmp_path: Path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.services.clean import CleanPlan, plan_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    hist = _history(path, 3)
    table = HoodieTable(path)
    plan = plan_clean(table, {"hoodie.cleaner.commits.retained": "1"})
    assert plan.earliest_instant_to_retain is not None
    rec = plans.read_avro_metadata(plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage)))
    back = CleanPlan.from_avro(rec, table.storage)
    e = back.earliest_instant_to_retain
    assert (e.timestamp, e.action, e.state) == (hist[-1][0], I.COMMIT, I.State.COMPLETED)
    assert (back.policy, back.last_completed_commit) == (plan.policy, plan.last_completed_commit)
    assert plan.to_json()["earliest_instant_to_retain"] == hist[-1][0]
    rec["earliestInstantToRetain"] = {"timestamp": hist[1][0], "action": None, "state": "COMPLETED"}
    assert CleanPlan.from_avro(rec, table.storage).earliest_instant_to_retain.action == I.COMMIT
    rec["earliestInstantToRetain"] = {"timestamp": hist[1][0], "action": "deltacommit", "state": "COMPLETED"}
    assert CleanPlan.from_avro(rec, table.storage).earliest_instant_to_retain.action == I.DELTA_COMMIT
    rec["earliestInstantToRetain"] = None
    assert CleanPlan.from_avro(rec, table.storage).earliest_instant_to_retain is None


def test_event_index_headers_skip_foreign_blocks_and_mark_unknown_ranges(tmp_path: Path) -> None:
    """Reading headers goes on past a corrupt block and past blocks of uncommitted instants; a
    committed block without a range makes the whole file unknown."""
    from hoodie.format.file_group import naming as N
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_compaction_support import batch, options

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0)])
    write(path, "upsert", [(1, T + 5, 1)])
    write(path, "upsert", [(2, 0, 2)], Setup(event_field=False))  # no event time recorded
    _uncommitted_write(path, batch([(1, T + 7, 3)], Setup()), opts=options(Setup(), "upsert"))
    (sl,) = latest_slices(path)
    known, unknown, failed = sl.sorted_logs()
    part = tmp_path / "t" / "all"
    table = HoodieTable(path)
    index = EventTimeIndex(table)
    got = index.for_log(unknown)
    assert (got.min_ms, got.max_ms, got.has_data, got.source) == (None, None, True, "headers")

    # Files no stat describes (as an older Java writer appending to one file would leave them).
    def craft(version: int, content: bytes) -> str:
        name = N.log_file_name(sl.file_id, sl.base_instant, version, "9-9-9")
        (part / name).write_bytes(content)
        return f"all/{name}"

    torn_then_known = craft(20, b"#HUDI#\x00\x00\x00\x00\x00\x00\x01\x00torn" + (part / known.name).read_bytes())
    failed_then_known = craft(21, (part / failed.name).read_bytes() + (part / known.name).read_bytes())
    index = EventTimeIndex(table)
    for rel in (torn_then_known, failed_then_known):
        got = index.for_path(rel)
        assert (got.min_ms, got.max_ms, got.source) == (T + 5, T + 5, "headers"), rel


def test_rollback_failed_writes_leaves_excluded_instants_alone(tmp_path: Path) -> None:
    from hoodie.services.rollback.failed_writes import rollback_failed_writes
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data, _vals

    path = str(tmp_path / "t")
    o = _rb_table(path)
    mine = _uncommitted_write(path, _data([0], 5, "mine"), opts=o)
    dead = _uncommitted_write(path, _data([1], 5, "dead"), opts=o)
    table = HoodieTable(path)
    done = rollback_failed_writes(table, exclude=[mine])
    assert [r.rolled_back for r in done] == [dead]
    tl = HoodieTable(path).timeline
    assert tl.get(mine) is not None and not tl.get(mine).is_completed and tl.get(dead) is None
    assert _vals(hoodie.read_table(path)) == {0: "a0", 1: "a1", 2: "a2", 3: "a3"}



def test_eager_rollback_skips_only_the_live_instants_of_its_own_table(tmp_path: Path) -> None:
    """An instant another thread of this process is committing is no failed write of its table, but the
    same instant time live on another table says nothing about this one."""
    from hoodie.services.rollback.failed_writes import rollback_failed_writes
    from hoodie.services.rollback.failed_writes import live_instants, register_live_instant, unregister_live_instant
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data

    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    in_a = _uncommitted_write(a, _data([0], 5, "x"), opts=_rb_table(a))
    in_b = _uncommitted_write(b, _data([0], 5, "x"), opts=_rb_table(b))
    ta, tb = HoodieTable(a), HoodieTable(b)
    keys = [register_live_instant(ta.storage.uri(), in_a), register_live_instant(ta.storage.uri(), in_b)]
    try:
        assert live_instants(ta.storage.uri()) == {in_a, in_b} and live_instants(tb.storage.uri()) == set()
        assert {in_a, in_b} <= live_instants()
        assert rollback_failed_writes(ta) == []  # its own live instant stays
        assert [r.rolled_back for r in rollback_failed_writes(tb)] == [in_b]  # live on A only
    finally:
        for k in keys:
            unregister_live_instant(k)
    assert [r.rolled_back for r in rollback_failed_writes(HoodieTable(a))] == [in_a]

# -- TTL strategies: the retention boundary --------------------------------------------------------

@pytest.fixture()
def new_york_machine():
    """The machine's local zone is America/New_York for the test (a UTC timeline must not care)."""
    import os
    import time

    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.parametrize("strategy_type", ["KEEP_BY_TIME", "KEEP_BY_CREATION_TIME"])
def test_ttl_expires_only_strictly_after_the_retention(tmp_path: Path, strategy_type: str,
                                                       new_york_machine: None) -> None:
    """Hudi's rule: a partition expires when its age is greater than the retention; at exactly the
    retention it is kept (instants read in the table's UTC timeline zone, whatever the machine's)."""
    from hoodie.format.timeline import instant as I
    from hoodie import write_arrow
    from hoodie.services.ttl.config import DAY_MS, TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    w_ms = 1_700_000_000_000
    written = I.epoch_ms_to_instant(w_ms, "UTC")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC"})  # instants below are UTC
    write_arrow(path, ten_rows("p0"), o, instant=written)
    write_arrow(path, ten_rows("p1"), o, instant=I.epoch_ms_to_instant(w_ms + DAY_MS, "UTC"))
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1",
                                  "hoodie.partition.ttl.management.strategy.type": strategy_type})
    table = HoodieTable(path)

    def decide(now_ms: int) -> dict:
        strategy = create_strategy(table, I.epoch_ms_to_instant(now_ms, "UTC"), cfg)
        return {d.partition: d for d in strategy.decisions()}

    at_limit = decide(w_ms + DAY_MS)
    d = at_limit["p0"]
    assert (d.status, d.age_ms, d.retention_ms, d.reference) == ("kept", DAY_MS, DAY_MS, written)
    assert d.rule.startswith("default hoodie.partition.ttl.strategy.days.retain")
    assert d.reason.endswith(f" {written}: age P1D <= retention P1D ({d.rule})")
    past = decide(w_ms + DAY_MS + 1)
    d = past["p0"]
    assert (d.status, d.age_ms) == ("expired", DAY_MS + 1)
    assert d.reason.endswith(f" {written}: age P1DT0.001S > retention P1D ({d.rule})")
    assert past["p1"].status == "kept" and past["p1"].age_ms == 1
    assert create_strategy(table, I.epoch_ms_to_instant(w_ms + DAY_MS + 1, "UTC"), cfg) \
        .get_expired_partition_paths() == ["p0"]
    doc = d.to_json()
    assert doc["status"] == "expired" and doc["age_ms"] == DAY_MS + 1 and doc["retention"] == "P1D"
    assert doc["reference_time"] == "2023-11-14T22:13:20.000Z" and doc["strategy"] == strategy_type


@pytest.mark.parametrize("partition", ["a", ""])
def test_materialize_link_replaces_leftovers_of_a_failed_attempt(tmp_path: Path, partition: str) -> None:
    """A leftover at the link's name (a dangling link, or a half copy) is replaced; in symlink mode
    the link points at the file its target finally reaches."""
    import os

    from hoodie.format.storage import Storage
    from hoodie.services.compaction import partial as P

    root = tmp_path / "t"
    folder = root / partition if partition else root
    folder.mkdir(parents=True, exist_ok=True)
    st = Storage(str(root))
    original = N.log_file_name("f", "001", 1, "1-0-1")
    middle = N.log_file_name("f", "002", 1, "1-0-1")
    (folder / original).write_bytes(b"data")
    os.symlink(original, folder / middle)  # an earlier partial compaction's link
    for leftover in ("dangling", "regular"):
        lk = P.LinkOp(partition, "f", N.log_file_name("f", "003", 1 if leftover == "dangling" else 2, "1-0-1"),
                      middle)
        if leftover == "dangling":
            os.symlink("no-such-file", folder / lk.link)
        else:
            (folder / lk.link).write_bytes(b"half")
        P.materialize_link(st, lk, "symlink")
        assert os.path.realpath(folder / lk.link) == str(folder / original)
        assert (folder / lk.link).read_bytes() == b"data"
    copy = P.LinkOp(partition, "f", N.log_file_name("f", "004", 1, "1-0-1"), original)
    (folder / copy.link).write_bytes(b"half")
    P.materialize_link(st, copy, "copy")
    assert not os.path.islink(folder / copy.link) and (folder / copy.link).read_bytes() == b"data"


def test_clean_plan_from_java_records_all_path_forms(tmp_path: Path) -> None:
    """Plans Java wrote: version-1 file names per partition (used only where no full paths are
    given), file:// and file: URIs, absolute and relative paths, s3a:// for an s3:// table."""
    from types import SimpleNamespace

    from hoodie.format.storage import Storage
    from hoodie.services.clean import CleanError, CleanPlan

    root = tmp_path / "t"
    root.mkdir()
    st = Storage(str(root))
    base = st.uri("")
    rec = {"policy": None, "lastCompletedCommitTimestamp": None, "earliestInstantToRetain": None,
           "filesToBeDeletedPerPartition": {"p0": ["a.parquet"], "": ["b.parquet"], "p1": ["ignored.parquet"]},
           "filePathsToBeDeletedPerPartition": {"p1": [{"filePath": f"file://{base}/p1/c.parquet"},
                                                       {"filePath": f"file:{base}/p1/d.parquet"},
                                                       {"filePath": f"{base}/p1/e.parquet"},
                                                       {"filePath": "p1/f.parquet"}, {"filePath": None}],
                                                "p2": None},
           "partitionsToBeDeleted": ["p9"]}
    plan = CleanPlan.from_avro(rec, st)
    assert plan.files_to_delete == {"p1": ["p1/c.parquet", "p1/d.parquet", "p1/e.parquet", "p1/f.parquet"],
                                    "p2": [], "p0": ["p0/a.parquet"], "": ["b.parquet"]}
    assert (plan.policy, plan.last_completed_commit, plan.partitions_to_delete) == (
        "KEEP_LATEST_COMMITS", "", ["p9"])
    s3 = SimpleNamespace(uri=lambda rel="": "s3://bucket/t/")
    on_s3 = {**rec, "filesToBeDeletedPerPartition": None, "partitionsToBeDeleted": None,
             "filePathsToBeDeletedPerPartition": {"p": [{"filePath": "s3a://bucket/t/p/x.parquet"},
                                                        {"filePath": "s3://bucket/t/p/y.parquet"}]}}
    plan = CleanPlan.from_avro(on_s3, s3)
    assert plan.files_to_delete == {"p": ["p/x.parquet", "p/y.parquet"]} and plan.partitions_to_delete == []
    for outside in ("s3a://other/t/p/x.parquet", "/elsewhere/x.parquet", f"{base}x/p/x.parquet"):
        bad = {**rec, "filePathsToBeDeletedPerPartition": {"p": [{"filePath": outside}]}}
        with pytest.raises(CleanError, match=rf"^clean plan path {outside} is outside the table at "
                                             r".*; the plan belongs to another table \(or the table was moved\): "
                                             "delete the pending clean instant files$"):
            CleanPlan.from_avro(bad, s3 if outside.startswith("s3") else st)


# -- clean: deleting a partition folder while a writer may add to it -------------------------------

def _partition_with_metafile(root: Path, partition: str) -> bytes:
    from hoodie.format.storage import Storage
    from hoodie.format.table import write_partition_metadata

    write_partition_metadata(Storage(str(root)), partition, "20240101000000000")
    return (root / partition / ".hoodie_partition_metadata").read_bytes()


def test_delete_partition_folder_removes_emptied_parents_only(tmp_path: Path) -> None:
    from hoodie.format.storage import Storage
    from hoodie.services.clean import executor as C

    root = tmp_path / "t"
    _partition_with_metafile(root, "y=2024/m=01/d=01")
    _partition_with_metafile(root, "y=2024/m=02/d=01")
    st = Storage(str(root))
    assert C._delete_partition_folder(st, "y=2024/m=01/d=01")
    assert sorted(p.name for p in (root / "y=2024").iterdir()) == ["m=02"]  # m=01 emptied: gone
    assert C._delete_partition_folder(st, "y=2024/m=02/d=01") and not (root / "y=2024").exists()


def test_delete_partition_folder_keeps_a_partition_a_writer_adds_to(tmp_path: Path, monkeypatch, caplog) -> None:
    """New files in the partition: nothing is deleted. A file appearing between the check and the
    folder removal: the metafile comes back (with its content, or a fresh one), so the new file
    stays visible; a metafile the writer re-created first is left as it is."""
    import logging

    from hoodie.format.storage import Storage
    from hoodie.services.clean import executor as C

    root = tmp_path / "t"
    st = Storage(str(root))
    meta = _partition_with_metafile(root, "p")
    (root / "p" / "new.parquet").write_bytes(b"x")
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean"):
        assert not C._delete_partition_folder(st, "p")
    assert (root / "p" / ".hoodie_partition_metadata").read_bytes() == meta
    assert "partition p was not deleted: new files appeared in it" in [r.getMessage() for r in caplog.records]
    (root / "p" / "new.parquet").unlink()

    real = C._remove_empty_dir

    def writer_arrives(storage: Storage, rel: str, recreate: bool = False) -> bool:
        (root / rel / "late.parquet").write_bytes(b"x")
        if recreate:
            (root / rel / ".hoodie_partition_metadata").write_bytes(b"writer's own")
        return real(storage, rel)

    monkeypatch.setattr(C, "_remove_empty_dir", writer_arrives)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean"):
        assert not C._delete_partition_folder(st, "p")
    assert (root / "p" / ".hoodie_partition_metadata").read_bytes() == meta
    assert "partition p was not deleted: a file appeared while deleting it" in [r.getMessage() for r in caplog.records]
    (root / "p" / "late.parquet").unlink()
    monkeypatch.setattr(C, "_remove_empty_dir", lambda s, rel: writer_arrives(s, rel, recreate=True))
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="hoodie.services.clean"):
        assert not C._delete_partition_folder(st, "p")
    assert (root / "p" / ".hoodie_partition_metadata").read_bytes() == b"writer's own"
    assert "the writer already re-created p/.hoodie_partition_metadata" in [r.getMessage() for r in caplog.records]
    # A folder whose metafile was already gone gets a fresh one.
    (root / "p" / "late.parquet").unlink()
    (root / "p" / ".hoodie_partition_metadata").unlink()
    monkeypatch.setattr(C, "_remove_empty_dir", writer_arrives)
    assert not C._delete_partition_folder(st, "p")
    fresh = (root / "p" / ".hoodie_partition_metadata").read_text()
    assert "commitTime=00000000000000" in fresh and "partitionDepth=1" in fresh


def test_remove_empty_dir_local_and_object_store(tmp_path: Path, caplog) -> None:
    import logging
    from types import SimpleNamespace

    from hoodie.format.storage import Storage
    from hoodie.services.clean import executor as C

    root = tmp_path / "t"
    (root / "full").mkdir(parents=True)
    (root / "full" / "f").write_bytes(b"x")
    (root / "empty").mkdir()
    st = Storage(str(root))
    assert C._remove_empty_dir(st, "empty") and not (root / "empty").exists()
    assert C._remove_empty_dir(st, "missing")
    assert not C._remove_empty_dir(st, "full") and (root / "full" / "f").exists()
    deleted: list[str] = []

    def object_store(listing: list, fail: bool = False) -> SimpleNamespace:
        def delete_dir(path: str) -> None:
            if fail:
                raise FileNotFoundError(path)
            deleted.append(path)

        return SimpleNamespace(is_local=False, list_dir=lambda rel: listing if rel == "p" else ["?"],
                               full=lambda rel: f"bucket/t/{rel}", uri=lambda rel: f"s3://bucket/t/{rel}",
                               fs=SimpleNamespace(delete_dir=delete_dir))

    assert not C._remove_empty_dir(object_store(["a file"]), "p") and deleted == []
    assert C._remove_empty_dir(object_store([]), "p") and deleted == ["bucket/t/p"]
    with caplog.at_level(logging.DEBUG, logger="hoodie.services.clean"):
        assert C._remove_empty_dir(object_store([], fail=True), "p")  # no folder marker object: fine
    assert "no folder object to delete at s3://bucket/t/p" in [r.getMessage() for r in caplog.records]


def test_operation_links_of_a_plan_operation() -> None:
    from hoodie.format.timeline.compaction_plan import CompactionOperation
    from hoodie.services.compaction import partial as P

    def link(v: int) -> dict:
        return {"symlink": N.log_file_name("f", "002", v, "1-0-1"), "target": N.log_file_name("f", "001", v, "1-0-1")}

    op = {"partitionPath": None, "fileId": "f",
          "symlinkOperations": [link(2), {"symlink": None, "target": "x"}, {"symlink": "y", "target": None}, link(1)]}
    got = P.operation_links(CompactionOperation.from_avro(op))
    assert [(lk.partition, lk.file_id, lk.version) for lk in got] == [("", "f", 1), ("", "f", 2)]
    assert got[0].link_path == link(1)["symlink"] and got[0].target_path == link(1)["target"]
    op = {"partitionPath": "a/b", "fileId": "f", "symlinkOperations": [link(1)]}
    (only,) = P.operation_links(CompactionOperation.from_avro(op))
    assert (only.link_path, only.target_path) == (f"a/b/{link(1)['symlink']}", f"a/b/{link(1)['target']}")
    assert P.operation_links(CompactionOperation.from_avro({"partitionPath": "a", "fileId": None, "symlinkOperations": None})) == []
    assert P.operation_links(CompactionOperation.from_avro({"partitionPath": "a", "symlinkOperations": [link(3)]}))[0].file_id == ""


def test_keep_by_event_time_reasons_for_unreadable_partition_values(tmp_path: Path, caplog) -> None:
    """Partitions whose path is too short or whose value does not match the format are kept, with
    the reason, and logged; when no partition parses at all the run is refused, naming up to three."""
    import logging

    from hoodie import write_arrow
    from hoodie.services.ttl import TTLConfigError, run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="dt", op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    # 2023/12 is shorter than the format; it must not be a prefix of another partition (nesting is refused).
    for dt in ("2024/01/01", "2024/01/02", "2024/xx/01", "2023/12", "2024/yy/02"):
        write_arrow(path, ten_rows(dt.replace("/", ""), dt=dt), o)
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.event.time.format": "yyyy/MM/dd"}
    with caplog.at_level(logging.WARNING, logger="hoodie.services.ttl.strategies"):
        res = run_ttl(path, cfg, dry_run=True, instant_time="20240103120000000")
    reasons = {d.partition: (d.status, d.reason) for d in res.decisions}
    assert reasons["2023/12"] == ("kept", "cannot read an event time: the path has fewer than 3 segment(s) from "
                                          "index 0")
    assert reasons["2024/xx/01"] == ("kept", "cannot read an event time: '2024/xx/01' does not match "
                                             "hoodie.partition.ttl.strategy.event.time.format='yyyy/MM/dd'")
    assert reasons["2024/01/01"][0] == "expired"
    assert reasons["2024/01/01"][1].startswith("event period ends 2024/01/01: age P1DT12H > retention P1D")
    assert reasons["2024/01/02"] == ("kept", reasons["2024/01/02"][1])
    assert reasons["2024/01/02"][1].startswith("event period ends 2024/01/02: age PT12H <= retention P1D")
    start = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.age.from": "START"}, dry_run=True,
                    instant_time="20240103120000000")
    d = next(x for x in start.decisions if x.partition == "2024/01/02")
    assert d.status == "expired" and d.reason.startswith("event period starts 2024/01/02: age P1DT12H > retention")
    messages = [r.getMessage() for r in caplog.records]
    assert "KEEP_BY_EVENT_TIME skips partition 2023/12: the path has fewer than 3 segment(s) from index 0" in messages
    # No partition parses: refused, naming the first three.
    with pytest.raises(TTLConfigError) as err:
        run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd"}, dry_run=True)
    msg = str(err.value)
    assert msg.startswith("KEEP_BY_EVENT_TIME parses no partition with "
                          "hoodie.partition.ttl.strategy.event.time.format='yyyy-MM-dd' (segment start index 0): ")
    assert msg.endswith(". Fix the format or the start index, or switch to KEEP_BY_TIME")
    assert msg.count("does not match") == 3 and msg.count("; 2024/") == 2


def test_keep_by_event_time_hive_style_and_creation_time_metafiles(tmp_path: Path) -> None:
    from hoodie import write_arrow
    from hoodie.services.ttl import run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="day", hive=True, op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    write_arrow(path, ten_rows("a", day="2024-01-01"), o, instant="20240101000000000")
    write_arrow(path, pa.table({"k": ["n1"], "part": ["x"], "ts": [1], "day": pa.array([None], pa.string())}), o,
                instant="20240101000001000")
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1"}
    res = run_ttl(path, cfg, dry_run=True, instant_time="20240105000000000")
    reasons = {d.partition: (d.status, d.reason) for d in res.decisions}
    assert reasons["day=2024-01-01"][0] == "expired"
    assert reasons["day=__HIVE_DEFAULT_PARTITION__"] == (
        "kept", "the hive default partition has no event time (set event.time.delete.hive.default.partition=true "
                "to expire it)")
    # KEEP_BY_CREATION_TIME reads the metafile's commitTime (14 or 17 digits); anything else never expires.
    meta = tmp_path / "t" / "day=2024-01-01" / ".hoodie_partition_metadata"
    text = meta.read_text()
    created = next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith("commitTime="))
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1"}
    for value, expires in ((created[:14], True), (created[:13], False), ("2024010100000x", False), ("", False)):
        meta.write_text(text.replace(f"commitTime={created}", f"commitTime={value}"))
        by = {x.partition: x for x in run_ttl(path, cfg, dry_run=True).decisions}
        d = by["day=2024-01-01"]
        assert d.expired is expires, value
        assert by["day=__HIVE_DEFAULT_PARTITION__"].reference == "20240101000001000"  # read after a bad one
        if expires:
            assert d.reference == created[:14] and d.reason.startswith(f"created at {created[:14]}: age ")
        else:
            assert d.reason == ".hoodie_partition_metadata has no commitTime"


class _HalfStrategy(PartitionTTLStrategy):
    """A user TTL strategy that forgot to implement get_expired_partition_paths."""


class _TwoMissing(PartitionTTLStrategy):
    """A user TTL strategy with an abstract method of its own, implementing neither."""

    @abc.abstractmethod
    def extra_hook(self) -> None:
        """Left abstract."""


def test_ttl_strategy_class_loading_and_its_refusals() -> None:
    from hoodie.services.ttl import TTLConfigError
    from hoodie.services.ttl import strategies as S

    java = "org.apache.hudi.table.action.ttl.strategy."
    assert S.load_strategy_class(java + "KeepByTimeStrategy") is S.KeepByTimeStrategy
    assert S.load_strategy_class(java + "KeepByCreationTimeStrategy") is S.KeepByCreationTimeStrategy
    event = S.load_strategy_class("hoodie.services.ttl.strategies:KeepByEventTimeStrategy")
    assert event is S.KeepByEventTimeStrategy
    key = "hoodie.partition.ttl.strategy.class"
    cases = {
        "NoDots": rf"^{key}='NoDots' is not a dotted class path \(module.ClassName\)$",
        "no_such_module.Cls": rf"^{key}='no_such_module.Cls': cannot import no_such_module: ",
        "pathlib.NoSuchClass": rf"^{key}='pathlib.NoSuchClass': module pathlib has no NoSuchClass$",
        "pathlib.Path": rf"^{key}='pathlib.Path' is not a subclass of hoodie.services.ttl.PartitionTTLStrategy$",
        f"{__name__}._HalfStrategy": rf"^{key}='{__name__}._HalfStrategy' does not implement "
                                     "get_expired_partition_paths$",
        f"{__name__}._TwoMissing": rf"^{key}='{__name__}._TwoMissing' does not implement "
                                   "extra_hook, get_expired_partition_paths$",
    }
    cases[".Cls"] = rf"^{key}='.Cls' is not a dotted class path \(module.ClassName\)$"
    for path, pattern in cases.items():
        with pytest.raises(TTLConfigError, match=pattern):
            S.load_strategy_class(path)
    import dataclasses

    from hoodie.services.ttl.config import TTLConfig

    cfg = dataclasses.replace(TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1"}),
                              strategy_type="nope")  # from_options refuses it first; build it directly
    with pytest.raises(TTLConfigError, match=r"^hoodie.partition.ttl.management.strategy.type='nope' is not a TTL "
                                              "strategy type; use one of KEEP_BY_TIME, KEEP_BY_CREATION_TIME, "
                                              "KEEP_BY_EVENT_TIME$"):
        S.create_strategy(None, "20240101000000000", cfg)


def test_keep_by_event_time_strips_only_the_hive_key_prefix() -> None:
    """Hive-style folders lose their ``key=`` prefix (up to the first '='; values may hold '=');
    folders without one, and every folder of a non-hive table, are read as they are. Only a value
    that is exactly __HIVE_DEFAULT_PARTITION__ is the default partition."""
    from types import SimpleNamespace

    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import KeepByEventTimeStrategy

    cfg = TTLConfig.from_options({"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
                                  "hoodie.partition.ttl.strategy.days.retain": "1"})

    def strategy(hive: bool) -> KeepByEventTimeStrategy:
        return KeepByEventTimeStrategy(SimpleNamespace(hive_style=hive, url_encode=False), "20240105000000000", cfg)

    hive, plain = strategy(True), strategy(False)
    assert hive.value_text("day=2024-01-01") == "2024-01-01"
    assert hive.value_text("day=x=2024-01-01") == "x=2024-01-01"
    assert hive.value_text("2024-01-01") == "2024-01-01"
    assert plain.value_text("day=2024-01-01") == "day=2024-01-01"
    parts = ["day=2024-01-01", "2024-01-02", "day=__HIVE_DEFAULT_PARTITION__", "day=__HIVE_DEFAULT_PARTITION__=x",
             "day=x=__HIVE_DEFAULT_PARTITION__"]
    refs = hive.reference_times(parts)
    assert {p: r.reference for p, r in refs.items()} == {"day=2024-01-01": "2024-01-01", "2024-01-02": "2024-01-02"}
    assert hive._default == {"day=__HIVE_DEFAULT_PARTITION__"}
    assert set(hive._unparsed) == {"day=__HIVE_DEFAULT_PARTITION__=x", "day=x=__HIVE_DEFAULT_PARTITION__"}


def test_builtin_strategy_without_a_reference_says_so(tmp_path: Path) -> None:
    """A BuiltinTTLStrategy subclass that finds no reference time keeps the partition with the
    base class's reason."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import BuiltinTTLStrategy
    from tests.services.test_ttl import opts, ten_rows

    class NoReference(BuiltinTTLStrategy):
        type_name = "NO_REFERENCE"

        def reference_times(self, partitions):
            return {}

    class NamedMissing(NoReference):
        def missing_reason(self, partition: str) -> str:
            return f"nothing known of {partition}"

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p0"), opts(op="insert"))
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1"})
    (d,) = NoReference(HoodieTable(path), "20990101000000000", cfg).decisions()
    assert (d.partition, d.status, d.reason, d.strategy) == ("p0", "kept", "no reference time", "NO_REFERENCE")
    (d,) = NamedMissing(HoodieTable(path), "20990101000000000", cfg).decisions()
    assert d.reason == "nothing known of p0"


def test_local_timeline_margin_at_its_boundaries(tmp_path: Path) -> None:
    """On a LOCAL timeline a partition expires only when its age exceeds retention + skew: at
    exactly the retention it is kept as young, up to and including retention + skew it is kept as
    zone-uncertain (saying until when), one millisecond later it expires, naming the margin."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "LOCAL"})
    # TTL at 2024-01-10 12:00 (one January day: no DST change in any zone); ages 12h+1ms ... 10h.
    written = {"d": "20240109235959999", "c": "20240110000000000", "b": "20240110015959999",
               "a": "20240110020000000"}
    for part, inst in written.items():
        write_arrow(path, ten_rows(part), o, instant=inst)
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.retention": "PT10H",
                                  "hoodie.partition.ttl.local.timeline.skew": "PT2H"})
    strategy = create_strategy(HoodieTable(path), "20240110120000000", cfg)
    assert strategy.stats is None  # before decisions
    got = {d.partition: d for d in strategy.decisions()}
    assert {p: (d.status, d.zone_uncertain) for p, d in got.items()} == {
        "a": ("kept", False), "b": ("kept", True), "c": ("kept", True), "d": ("expired", False)}
    assert got["a"].reason == "last modified at 20240110020000000: age PT10H <= retention PT10H (default hoodie.partition.ttl.strategy.retention=PT10H)"
    assert got["c"].reason == (
        "last modified at 20240110000000000: age PT12H > retention PT10H (default hoodie.partition.ttl.strategy.retention=PT10H), but by less than PT2H, "
        "the time-zone uncertainty of a LOCAL timeline (hoodie.table.timeline.timezone=LOCAL: instants are each "
        "writer's wall-clock time, and a writer in another zone may have written this partition up to PT2H later "
        "than it looks here); kept until its age exceeds PT12H. Create tables with "
        "hoodie.table.timeline.timezone=UTC (hoodie's default); if every writer and TTL run share one zone, set "
        "hoodie.partition.ttl.local.timeline.skew=PT0S")
    assert got["d"].reason.startswith("last modified at 20240109235959999: age PT12H0.001S > retention PT10H")
    assert got["d"].reason.endswith(" (default hoodie.partition.ttl.strategy.retention=PT10H), beyond the PT2H time-zone uncertainty of a LOCAL timeline")


def test_keep_by_time_reuses_recorded_stats_only_when_incremental(tmp_path: Path) -> None:
    """hoodie.partition.ttl.strategy.stats.incremental (default true) reaches the stats: the second
    run starts from the first one's state; with false every run is a full scan."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p0"), opts(op="insert"))

    def stats(options: dict):
        cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1", **options})
        strategy = create_strategy(HoodieTable(path), "20990101000000000", cfg)
        strategy.decisions()
        return strategy.stats

    stats({})  # warms the process state
    assert stats({}).incremental is True
    off = stats({"hoodie.partition.ttl.strategy.stats.incremental": "false"})
    assert off.incremental is False and off.source == "full scan"


def test_ttl_selected_partitions_that_do_not_exist_name_the_fix(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from hoodie.services.ttl import strategies as S

    hive = SimpleNamespace(partition_fields=["productid", "day"], hive_style=True)
    existing = ["productid=1/day=a", "productid=1/day=b", "productid=2/day=a", "productid=2/day=b"]
    assert S._selected_hint(["1/a"], existing, hive) == (
        " (the table is hive-style partitioned: write paths as productid=<value>; existing partitions include "
        "productid=1/day=a, productid=1/day=b, productid=2/day=a)")
    # A path that already has key=value parts, or a table that is not hive-style: give exact paths.
    exact = " (existing partitions include productid=1/day=a, productid=1/day=b, productid=2/day=a); give exact " \
            "relative partition paths"
    assert S._selected_hint(["productid=9/day=a"], existing, hive) == exact
    plain = SimpleNamespace(partition_fields=["productid"], hive_style=False)
    assert S._selected_hint(["9"], existing, plain) == exact
    assert S._selected_hint(["9"], [], SimpleNamespace(partition_fields=[], hive_style=True)) == (
        " (existing partitions include none); give exact relative partition paths")


def test_clean_metadata_records_file_names_per_nested_partition(tmp_path: Path) -> None:
    """What Java reads back from ``<t>.clean``: per partition the policy, the planned and deleted
    file names (names, not paths, also for nested partitions) and whether the partition went."""
    from hoodie.format.timeline import instant as I
    from hoodie import write_arrow
    from hoodie.services.clean import run_clean
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a/x", 1), (2, "b/y", 2)]), options())
    c2 = write_arrow(path, batch([(2, "b/y", 3)]), options())
    drop_partition(path, "a/x")
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                           "hoodie.cleaner.fileversions.retained": "1"})
    assert res.deleted_partitions == ["a/x"]
    t = HoodieTable(path)
    md = t.timeline.avro_metadata(I.Instant(res.instant, I.CLEAN))
    assert md["startCleanTime"] == res.instant and md["totalFilesDeleted"] == 2
    assert md["earliestCommitToRetain"] == "" and md["lastCompletedCommitTimestamp"] == res.plan.last_completed_commit
    assert 0 <= md["timeTakenInMillis"] < 600_000
    pm = md["partitionMetadata"]
    assert sorted(pm) == ["a/x", "b/y"]
    (old_b,) = res.deleted["b/y"]
    assert pm["b/y"] == {"partitionPath": "b/y", "policy": "KEEP_LATEST_FILE_VERSIONS",
                         "deletePathPatterns": [old_b.rsplit("/", 1)[1]],
                         "successDeleteFiles": [old_b.rsplit("/", 1)[1]], "failedDeleteFiles": [],
                         "isPartitionDeleted": False}
    (gone,) = res.deleted["a/x"]
    assert pm["a/x"]["deletePathPatterns"] == pm["a/x"]["successDeleteFiles"] == [gone.rsplit("/", 1)[1]]
    assert pm["a/x"]["isPartitionDeleted"] is True and c2 < res.instant


def test_clean_planner_goes_on_past_groups_it_must_keep(tmp_path: Path) -> None:
    """In one partition, a group the clean must keep (replaced too recently, or only uncommitted
    files) never stops the planner from cleaning the groups after it; a partition with files of a
    failed write is kept without a "not part of any cleanable file group" note (rollback owns them)."""
    import shutil

    import pyarrow.parquet as pq

    from hoodie import write_arrow
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.services.clean import plan_clean
    from hoodie.services.ttl.service import delete_partitions  # a delete_partition replacecommit
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    o = {**options(), "hoodie.parquet.small.file.limit": "0"}  # each insert: a new file group
    write_arrow(path, batch([(1, "p", 1)]), o)
    write_arrow(path, batch([(2, "p", 1)]), o)
    table = HoodieTable(path)
    first, second = sorted(FileSystemView(table.storage, table.timeline).file_groups("p"))
    (second_base,) = [p for p in (tmp_path / "t" / "p").iterdir() if p.name.startswith(second)]
    k2 = pq.read_table(second_base).column("k").to_pylist()[0]
    # Update the second group twice: two old versions to clean. Replace the first group now.
    write_arrow(path, batch([(k2, "p", 2)]), options())
    write_arrow(path, batch([(k2, "p", 3)]), options())
    delete_partitions(HoodieTable(path), {"p": [first]})
    plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.commits.retained": "2"})
    doomed = plan.files_to_delete.get("p", [])
    assert doomed and all(second in f for f in doomed) and len(doomed) == 1
    assert plan.partitions_to_delete == []
    # A partition left with only a replaced group and a failed write's files: kept, no foreign-file note.
    write_arrow(path, batch([(9, "q", 1)]), options())
    drop_partition(path, "q")
    orphan = _uncommitted_write(path, batch([(8, "q", 1)]), opts=options())
    for f in (tmp_path / "t" / ".hoodie").glob(f"{orphan}.*"):  # its instant gone, its files left
        f.unlink()
    shutil.rmtree(tmp_path / "t" / ".hoodie" / ".temp" / orphan, ignore_errors=True)
    plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert "q" not in plan.partitions_to_delete and plan.files_to_delete.get("q")
    assert not any(n.startswith("partition q is kept") for n in plan.notes)


def test_keep_by_time_falls_back_to_slice_base_instants_only_with_an_archived_timeline(tmp_path: Path) -> None:
    """A partition whose writes all left the active timeline: with an archived timeline its newest
    slice's base instant is the reference; without one (or without data) it is never expired."""
    from hoodie.format.timeline import instant as I
    from hoodie import write_arrow
    from hoodie.format.table import write_partition_metadata
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    old = "20230101000000000"
    write_arrow(path, ten_rows("p0"), o, instant=old)
    write_arrow(path, ten_rows("p1"), o, instant="20240101000000000")
    for st in I.State:  # archive the old write
        (tmp_path / "t" / ".hoodie" / I.instant_file_name(old, I.COMMIT, st)).unlink(missing_ok=True)
    write_partition_metadata(HoodieTable(path).storage, "empty", old)  # a partition without data
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "30"})

    def decisions() -> dict:
        strategy = create_strategy(HoodieTable(path), "20240301000000000", cfg)
        return {d.partition: d for d in strategy.decisions()}

    without_archive = decisions()
    assert without_archive["p1"].reason.startswith("last modified at 20240101000000000: age ")  # after "empty"
    assert without_archive["p0"].status == "kept"
    assert without_archive["p0"].reason == "no completed write touches it and it holds no data"
    archived = tmp_path / "t" / ".hoodie" / "archived"
    archived.mkdir(exist_ok=True)
    (archived / ".commits_.archive.1_1-0-1").write_bytes(b"archived instants")
    got = decisions()
    assert got["p0"].status == "expired" and got["p0"].reference == old
    assert got["p0"].reason.startswith(f"last modified (archived write, slice base instant) {old}: age ")
    assert got["p1"].reason.startswith("last modified at 20240101000000000: age ")
    assert got["empty"].status == "kept" and got["empty"].reason == without_archive["p0"].reason


def test_keep_by_time_finds_the_archived_timeline_of_a_1x_table(tmp_path: Path) -> None:
    """Timeline layout 2 (table version 8): the archived timeline is the LSM history
    (.hoodie/timeline/history), not .hoodie/archived; a partition whose writes were archived there
    falls back to its slice's base instant."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC", "hoodie.write.table.version": "8"})
    old = "20230101000000000"
    write_arrow(path, ten_rows("p0"), o, instant=old)
    write_arrow(path, ten_rows("p1"), o, instant="20240101000000000")
    timeline = tmp_path / "t" / ".hoodie" / "timeline"
    archived = [f for f in timeline.iterdir() if f.name.startswith(old)]
    assert archived
    for f in archived:  # archive the old write
        f.unlink()
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "30"})

    def decision():
        strategy = create_strategy(HoodieTable(path), "20240301000000000", cfg)
        return next(d for d in strategy.decisions() if d.partition == "p0")

    assert decision().status == "kept"  # no archived timeline: nothing proves p0's write is complete
    (tmp_path / "t" / ".hoodie" / "archived").mkdir(exist_ok=True)
    (tmp_path / "t" / ".hoodie" / "archived" / ".commits_.archive.1_1-0-1").write_bytes(b"not layout 2's")
    assert decision().status == "kept"
    (timeline / "history").mkdir(exist_ok=True)
    (timeline / "history" / f"{old}_{old}_0.parquet").write_bytes(b"archived instants")
    d = decision()
    assert d.status == "expired" and d.reference == old
    assert d.reason.startswith(f"last modified (archived write, slice base instant) {old}: age ")


def test_ttl_decisions_without_a_rule_without_data_and_without_a_reference(tmp_path: Path) -> None:
    """Every candidate gets a full decision: no rule and no default retention (kept), a reference
    older than the retention but no live data (kept, nothing to delete), no reference at all."""
    import json

    from hoodie import write_arrow
    from hoodie.format.table import write_partition_metadata
    from hoodie.services.ttl.config import DAY_MS, TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_clean import drop_partition
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    for part, inst in (("a", "20240101000000000"), ("b", "20240101000001000"), ("c", "20240101000002000")):
        write_arrow(path, ten_rows(part), o, instant=inst)
    drop_partition(path, "b")  # its reference is old, but nothing in it is live
    # Never written to; it sorts first, so the partitions after it must still be decided.
    write_partition_metadata(HoodieTable(path).storage, "0", "20240101000003000")
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.rules": json.dumps(
        [{"partition": "a", "retention": "P1D"}, {"partition": "b", "retention": "P1D"},
         {"partition": "0", "retention": "P1D"}])})
    strategy = create_strategy(HoodieTable(path), "20240301000000000", cfg)
    got = {d.partition: d for d in strategy.decisions()}
    c = got["c"]
    assert (c.status, c.reason, c.strategy, c.rule, c.retention_ms) == (
        "kept", "no rule matches it and no table-wide retention is set", "KEEP_BY_TIME", None, None)
    a = got["a"]
    assert (a.status, a.strategy, a.retention_ms) == ("expired", "KEEP_BY_TIME", DAY_MS) and "rule #1" in a.rule
    b = got["b"]
    assert b.status == "kept" and b.reason.startswith("last modified at ")
    assert b.reason.endswith(" is older than the retention, but the partition holds no live data (nothing to delete)")
    d = got["0"]
    assert (d.status, d.reason, d.strategy, d.retention_ms) == (
        "kept", "no completed write touches it and it holds no data", "KEEP_BY_TIME", DAY_MS)
    assert "rule #3" in d.rule and d.reference is None and d.age_ms is None
    assert strategy.get_expired_partition_paths() == ["a"]
    assert d.to_json() == {"partition": "0", "status": "kept", "reason": d.reason, "strategy": "KEEP_BY_TIME",
                           "reference_time": None, "reference": None, "age": None, "age_ms": None,
                           "retention": "P1D", "retention_ms": DAY_MS, "rule": d.rule}
    assert a.to_json() == {"partition": "a", "status": "expired", "reason": a.reason, "strategy": "KEEP_BY_TIME",
                           "reference_time": "2024-01-01T00:00:00.000Z", "reference": "20240101000000000",
                           "age": "P60D", "age_ms": 60 * DAY_MS, "retention": "P1D", "retention_ms": DAY_MS,
                           "rule": a.rule}


def test_keep_by_event_time_reads_url_encoded_partition_values(tmp_path: Path) -> None:
    """With hoodie.datasource.write.partitionpath.urlencode, a value such as 2024-01-01 05:00 is stored
    as 2024-01-01 05%3A00; the strategy decodes it before parsing."""
    from hoodie import write_arrow
    from hoodie.services.ttl import TTLConfigError, run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="dt", op="insert", **{"hoodie.table.timeline.timezone": "UTC",
                                          "hoodie.datasource.write.partitionpath.urlencode": "true"})
    write_arrow(path, ten_rows("x", dt="2024-01-01 05:00"), o)
    write_arrow(path, ten_rows("y", dt="2024-01-03 05:00"), o)
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd HH:mm"}
    res = run_ttl(path, cfg, dry_run=True, instant_time="20240103120000000")
    by = {d.partition: d for d in res.decisions}
    assert sorted(by) == ["2024-01-01 05%3A00", "2024-01-03 05%3A00"]
    assert res.expired_partitions == ["2024-01-01 05%3A00"]
    assert by["2024-01-03 05%3A00"].reference == "2024-01-03 05:00" and by["2024-01-03 05%3A00"].status == "kept"
    # A predicate compares decoded values too; naming missing partitions lists them all.
    pred = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.partition.predicate": "dt = '2024-01-03 05:00'"},
                   dry_run=True, instant_time="20240105000000000")
    assert [d.partition for d in pred.decisions] == ["2024-01-03 05%3A00"] and pred.expired_partitions == [
        "2024-01-03 05%3A00"]
    with pytest.raises(TTLConfigError, match=r"names partition\(s\) that do not exist: nope, gone \("):
        run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.partition.selected": "nope,gone"}, dry_run=True)


def test_partial_compaction_naming_and_ordering_rules(monkeypatch) -> None:
    """The sentinel's exact name, the prefix rule with nothing selected, links keeping their
    targets' write tokens, links made highest version first, and the link mode per storage."""
    from types import SimpleNamespace

    from hoodie.format.file_group.fsview import LogFile
    from hoodie.services.compaction import CompactionError
    from hoodie.services.compaction import partial as P

    assert P.sentinel_name("fid-0", "002") == ".fid-0_002.log.0_0-0-0"
    assert P.is_sentinel(".fid-0_002.log.0_0-0-0", "fid-0", "002") and not P.is_sentinel("x", "fid-0", "002")

    def lf(v: int, token: str | None = "1-0-1") -> LogFile:
        name = N.log_file_name("f", "001", v, token) if token else f".f_001.log.{v}"
        return LogFile("p", name, N.parse_log_file(name), 1)

    logs = [lf(1), lf(2), lf(3, None)]
    assert P.prefix_closure(logs, []) == ([], logs)
    assert P.prefix_closure(logs, [logs[1]]) == (logs[:2], logs[2:])
    assert P.link_names("f", "002", logs[1:], 4) == [
        (N.log_file_name("f", "002", 4, "1-0-1"), logs[1].name),
        (N.log_file_name("f", "002", 5, N.UNKNOWN_WRITE_TOKEN), logs[2].name)]
    made: list[int] = []
    monkeypatch.setattr(P, "materialize_link", lambda storage, link, mode: made.append(link.version))
    links = [P.LinkOp("p", "f", N.log_file_name("f", "002", v, "1-0-1"), logs[0].name) for v in (2, 3, 1)]
    P.materialize_links(None, links, "copy")
    assert made == [3, 2, 1]
    s3 = SimpleNamespace(supports_symlinks=False, base_uri="s3://bucket/t")
    local = SimpleNamespace(supports_symlinks=True, base_uri="/data/t")
    assert (P.resolve_link_mode(s3, "auto"), P.resolve_link_mode(local, "auto")) == ("copy", "symlink")
    assert (P.resolve_link_mode(s3, "copy"), P.resolve_link_mode(local, "symlink")) == ("copy", "symlink")
    with pytest.raises(CompactionError, match=r"^s3://bucket/t cannot hold symlinks \(object store\); set "
                                              r"hoodie.compaction.partial.link.mode=copy or auto$"):
        P.resolve_link_mode(s3, "symlink")


def test_keep_by_event_time_default_partition_below_a_first_level(tmp_path: Path) -> None:
    """The event time starts at segment 1 (region=.../day=...); a null day is the hive default
    partition: kept, or expired with delete.hive.default.partition; a table holding only default
    partitions is no configuration error."""
    from hoodie import write_arrow
    from hoodie.services.ttl import run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="region,day", hive=True, op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    write_arrow(path, ten_rows("a", region="eu", day="2024-01-01"), o)  # sorts after the default one
    nulls = pa.table({"k": ["n1"], "part": ["x"], "ts": [1], "region": ["de"], "day": pa.array([None], pa.string())})
    write_arrow(path, nulls, o)
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.event.time.segment.start.index": "1"}
    default = "region=de/day=__HIVE_DEFAULT_PARTITION__"
    res = run_ttl(path, cfg, dry_run=True, instant_time="20240105000000000")
    by = {d.partition: d for d in res.decisions}
    assert res.expired_partitions == ["region=eu/day=2024-01-01"]
    assert by[default].status == "kept" and by[default].reason.startswith("the hive default partition has no event")
    res = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.delete.hive.default.partition": "true"},
                  dry_run=True, instant_time="20240105000000000")
    by = {d.partition: d for d in res.decisions}
    assert by[default].status == "expired" and by[default].reason == (
        "the hive default partition (null partition value) and event.time.delete.hive.default.partition=true")
    only_default = str(tmp_path / "only")
    write_arrow(only_default, nulls, o)
    (d,) = run_ttl(only_default, cfg, dry_run=True, instant_time="20240105000000000").decisions
    assert d.partition == default and d.status == "kept"


class _ExpireP0(PartitionTTLStrategy):
    """A user TTL strategy: always p0."""

    def get_expired_partition_paths(self) -> list[str]:
        return ["p0"]


def test_user_ttl_strategy_decisions_name_the_strategy(tmp_path: Path) -> None:
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p0"), opts(op="insert"))
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.class": f"{__name__}._ExpireP0"})
    strategy = create_strategy(HoodieTable(path), "20990101000000000", cfg)
    (d,) = strategy.decisions()
    assert (d.partition, d.status, d.strategy) == ("p0", "expired", strategy.name)
    assert d.reason == f"returned by {strategy.name}.get_expired_partition_paths"


def test_pending_operations_of_every_kind_of_pending_instant(tmp_path: Path) -> None:
    """What a clean (or TTL) must leave alone: partitions and groups of pending compactions (with
    the smallest base instant each group's operations read), of pending clustering, of inflight
    writes (their write stats, replaced groups, TTL partitions hint and markers), and writes that
    have recorded nothing yet."""
    import json

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as TL
    from hoodie.format.slice import writer as W
    from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
    from hoodie.services import clean as C

    root = tmp_path / "t"
    (root / ".hoodie").mkdir(parents=True)
    t = _stats_table(root)
    st = t.storage

    def op(part: str | None, fid: str, base: str | None) -> dict:
        o = plans.compaction_operation(base or "", None, [], fid, part or "", {})
        o["partitionPath"], o["baseInstantTime"] = part, base
        return o

    def compaction(ts: str, ops: list[dict]) -> None:
        plan = plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan(ops))
        TL.create_requested(st, ts, I.COMPACTION, plan)

    compaction(f"{T0}1", [op("a", "f1", f"{T0}0"), op("a", "f2", None), op(None, "f3", f"{T0}0")])
    compaction(f"{T0}2", [op("a", "f1", "20230101000000000")])
    TL.create_requested(st, f"{T0}3", I.REPLACE_COMMIT, plans.write_avro_metadata(
        "HoodieRequestedReplaceMetadata", plans.requested_replace_metadata("CLUSTER", clustering_plan={
            "inputGroups": [{"slices": [{"partitionPath": "b", "fileId": "g1"}, {"partitionPath": "b",
                                                                                   "fileId": "g2"}]}],
            "strategy": None, "extraMetadata": None, "version": 1, "preserveHoodieMetadata": None})))
    meta = CommitMetadata(operation_type="UPSERT", partition_to_replace_file_ids={"r": ["x"]},
                          extra_metadata={C.TTL_PARTITIONS_KEY: json.dumps(["ttl1", "ttl2"])})
    meta.add_write_stat("w", WriteStat(file_id="f", path="w/f", partition_path="w", num_writes=1))
    meta.partition_to_write_stats["empty"] = []
    TL.transition_to_inflight(st, TL.create_requested(st, f"{T0}4", I.DELTA_COMMIT), meta.to_json_bytes())
    bad = CommitMetadata(operation_type="UPSERT", extra_metadata={C.TTL_PARTITIONS_KEY: "{not json"})
    TL.transition_to_inflight(st, TL.create_requested(st, f"{T0}5", I.DELTA_COMMIT), bad.to_json_bytes())
    TL.create_requested(st, f"{T0}6", I.COMMIT)
    W.create_marker(st, f"{T0}6", "x/y", "f_1-0-1_x.parquet", "CREATE")
    TL.create_requested(st, f"{T0}7", I.COMMIT)  # nothing recorded yet
    TL.create_requested(st, f"{T0}8", I.CLEAN)  # not a write: ignored
    ops = C.pending_operations(_stats_table(root))
    assert ops.service_partitions == {"a": [f"compaction {T0}1", f"compaction {T0}2"], "": [f"compaction {T0}1"],
                                      "b": [f"clustering {T0}3"]}
    assert ops.file_groups == {("a", "f1"): f"compaction {T0}2", ("a", "f2"): f"compaction {T0}1",
                               ("", "f3"): f"compaction {T0}1", ("b", "g1"): f"clustering {T0}3",
                               ("b", "g2"): f"clustering {T0}3"}
    assert ops.compaction_base == {("a", "f1"): "20230101000000000", ("a", "f2"): f"{T0}1", ("", "f3"): f"{T0}0"}
    assert {p: w for p, w in ops.write_partitions.items()} == {
        "w": [f"deltacommit {T0}4"], "r": [f"deltacommit {T0}4"], "ttl1": [f"deltacommit {T0}4"],
        "ttl2": [f"deltacommit {T0}4"], "x/y": [f"commit {T0}6"]}
    assert ops.unknown_writes == [f"deltacommit {T0}5", f"commit {T0}7"]
    unknown = [f"pending write {w} has not recorded its partitions yet (no markers); let it finish or roll it back "
               "(hoodie rollback)" for w in ops.unknown_writes]
    assert ops.reasons("a") == [f"pending compaction {T0}1", f"pending compaction {T0}2"] + unknown
    assert ops.reasons("w") == [f"pending write deltacommit {T0}4 touches it"] + unknown
    assert ops.reasons("nothing") == unknown


def test_event_index_combines_several_stats_and_blocks_of_one_file(tmp_path: Path) -> None:
    """Older Java writers appended several commits to one log file: its range is the union of its
    stats' ranges (stats without records and without a range add nothing; one without a range
    makes the headers decide), or of its blocks' headers."""
    from hoodie.format.timeline.commit_metadata import WriteStat
    from hoodie.services.compaction.event_index import EMPTY, LogEventTime, min_event_time

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0)])
    write(path, "upsert", [(1, T + 9, 1)])
    write(path, "upsert", [(1, T + 5, 2)])
    (sl,) = latest_slices(path)
    late, early = sl.sorted_logs()
    part = tmp_path / "t" / "all"
    both = N.log_file_name(sl.file_id, sl.base_instant, 30, "9-9-9")
    (part / both).write_bytes((part / late.name).read_bytes() + (part / early.name).read_bytes())
    index = EventTimeIndex(HoodieTable(path))
    got = index.for_path(f"all/{both}")
    assert (got.min_ms, got.max_ms, got.source) == (T + 5, T + 9, "headers")

    def stat(writes: int, lo: int | None, hi: int | None) -> WriteStat:
        return WriteStat(file_id="f", path="all/x", partition_path="all", num_writes=writes,
                         min_event_time=lo, max_event_time=hi)

    index._stats["all/x"] = [stat(2, T + 7, T + 8), stat(0, None, None), stat(3, T + 1, T + 9), stat(1, T + 4, T + 6)]
    got = index._from_stats("all/x")
    assert (got.min_ms, got.max_ms, got.has_data, got.source) == (T + 1, T + 9, True, "stats")
    index._stats["all/y"] = [stat(0, None, None)]
    assert index._from_stats("all/y") is None  # no records: the headers decide
    index._stats["all/z"] = [stat(2, T, T), stat(1, T + 2, None)]
    assert index._from_stats("all/z") is None  # a range half missing: the headers decide
    index._stats["all/w"] = [stat(0, T + 3, T + 3)]  # a range without records still counts
    assert (index._from_stats("all/w").min_ms, index._from_stats("all/w").max_ms) == (T + 3, T + 3)
    # The table-wide minimum: unknown wins, files without data are skipped, nothing at all is complete.
    known = [LogEventTime(T + 2, T + 3, True), EMPTY, LogEventTime(T + 1, T + 9, True)]
    assert min_event_time(known) == (T + 1, "known")
    assert min_event_time([EMPTY, LogEventTime(None, None, True, "headers")] + known) == (None, "unknown")
    assert min_event_time([EMPTY, EMPTY]) == (None, "complete") and min_event_time([]) == (None, "complete")


def test_event_index_header_ranges_take_the_least_minimum_of_every_block(tmp_path: Path) -> None:
    """A log file of several blocks (headers read): its minimum is the least block minimum, whether
    the first or a later block holds it and whatever the later blocks' maxima; a stat with one
    write and no range sends the file to the headers; a block without an instant is uncommitted."""
    from hoodie.format.timeline.commit_metadata import WriteStat

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T, 0), (2, T, 0)])
    for lo, hi in ((1, 20), (10, 30), (10, 20), (1, 5)):
        write(path, "upsert", [(1, T + lo, 1), (2, T + hi, 1)])
    (sl,) = latest_slices(path)
    index = EventTimeIndex(HoodieTable(path))
    by_range = {(index.for_log(lf).min_ms - T, index.for_log(lf).max_ms - T): lf for lf in sl.sorted_logs()}
    part = tmp_path / "t" / "all"

    def joined(version: int, *ranges: tuple[int, int]) -> str:
        name = N.log_file_name(sl.file_id, sl.base_instant, version, "9-9-9")
        (part / name).write_bytes(b"".join((part / by_range[r].name).read_bytes() for r in ranges))
        return f"all/{name}"

    first_holds_min = joined(40, (1, 20), (10, 30))
    later_holds_min = joined(41, (10, 20), (1, 5))
    index = EventTimeIndex(HoodieTable(path))
    for rel, want in ((first_holds_min, (T + 1, T + 30)), (later_holds_min, (T + 1, T + 20))):
        got = index.for_path(rel)
        assert (got.min_ms, got.max_ms, got.source) == (*want, "headers"), rel

    def stat(writes: int, lo: int | None, hi: int | None) -> WriteStat:
        return WriteStat(file_id="f", path="all/v", partition_path="all", num_writes=writes,
                         min_event_time=lo, max_event_time=hi)

    index._stats["all/v"] = [stat(5, T + 10, T + 20), stat(1, None, None)]
    assert index._from_stats("all/v") is None
    assert not index._committed(None)

    # Links (partial compaction) resolve through chains to their target's stats; a cycle, or a
    # chain without stats, falls back to the headers of the file asked about; results are cached.
    index = EventTimeIndex(HoodieTable(path))
    index._stats["all/target"] = [stat(2, T + 3, T + 4)]
    index._links.update({"all/link2": "all/link1", "all/link1": "all/target",
                         first_holds_min: "all/loop", "all/loop": first_holds_min,
                         later_holds_min: "all/c1", "all/c1": "all/c2", "all/c2": "all/c1"})
    for rel in ("all/link1", "all/link2"):
        got = index.for_path(rel)
        assert (got.min_ms, got.max_ms, got.source) == (T + 3, T + 4, "stats"), rel
    got = index.for_path(later_holds_min)  # a cycle further down the chain
    assert (got.min_ms, got.max_ms, got.source) == (T + 1, T + 20, "headers")
    reads = index.header_reads
    for _ in range(2):
        got = index.for_path(first_holds_min)
        assert (got.min_ms, got.max_ms, got.source) == (T + 1, T + 30, "headers")
    assert index.header_reads == reads + 1


def test_event_index_of_a_table_without_instants(tmp_path: Path) -> None:
    from hoodie.format.timeline import instant as I

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T, 0)])
    for f in (tmp_path / "t" / ".hoodie").iterdir():
        if f.is_file() and I.parse_instant_file_name(f.name) is not None:
            f.unlink()
    table = HoodieTable(path)
    assert table.timeline.first() is None
    index = EventTimeIndex(table)
    assert index._start is None and not index._committed("20240101000000000")


def test_unit_problem_names_the_value_and_the_way_out() -> None:
    """A recorded range that is milliseconds only in another unit, or in none, is a problem naming
    the file, the value and the fix; the maximum is checked too when the minimum is fine."""
    from hoodie.services.compaction.event_index import LogEventTime, unit_problem

    assert unit_problem("p/f.log", LogEventTime(T, T + 1, True)) is None
    assert unit_problem("p/f.log", LogEventTime(None, None, True)) is None  # unknown: nothing to check
    micros = T * 1000
    got = unit_problem("p/f.log", LogEventTime(T, micros, True))
    assert got is not None and got.startswith(f"log file p/f.log records event time {micros} ms (")
    assert "which is a MICROSECONDS value (" in got
    huge = 9 * 10**18
    assert unit_problem("p/f.log", LogEventTime(huge, huge, True)).endswith(
        "which is no epoch time in any unit: it was written from an event-time column in another unit read as "
        "milliseconds. Compact it once with a strategy that does not read event times (e.g. --set "
        "hoodie.compaction.strategy=UnBounded), and write event times in milliseconds or set "
        "hoodie.payload.event.time.unit to the column's unit")


def test_ttl_predicate_skips_partitions_whose_path_does_not_fit_the_fields(tmp_path: Path, caplog) -> None:
    import logging

    from hoodie import write_arrow
    from hoodie.format.table import write_partition_metadata
    from hoodie.services.ttl import run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p1", sub="x"), opts(fields="part,sub", op="insert"), instant="20240101000000000")
    write_partition_metadata(HoodieTable(path).storage, "0", "20240101000000000")  # one level, two fields
    cfg = {"hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.partition.predicate": "part = 'p1'"}
    with caplog.at_level(logging.WARNING, logger="hoodie.services.ttl.strategies"):
        res = run_ttl(path, cfg, dry_run=True)
    assert [d.partition for d in res.decisions] == ["p1/x"] and res.expired_partitions == ["p1/x"]
    assert "partition 0 skipped by the TTL predicate: partition path '0' has 1 segment(s) but the table has 2 " \
           "partition field(s) ['part', 'sub']" in [r.getMessage() for r in caplog.records]


# -- rollback entry point (hoodie.services.rollback) -----------------------------------------------

def test_rollback_of_a_completed_compaction_is_refused_and_names_the_reason(tmp_path: Path) -> None:
    """A completed compaction is a commit with a compaction plan: not a pending plan to remove, and
    not a write to roll back (that would need a restore)."""
    from hoodie.services.rollback.operation import rollback
    from hoodie.services.rollback.instant import RollbackError

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T, 0)])
    write(path, "upsert", [(1, T + 1, 1)])
    c = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c)
    before = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    with pytest.raises(RollbackError, match=rf"^{c} is a completed compaction; rolling it back would need a restore$"):
        rollback(path, c)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == before


def test_rollback_operation_defaults_and_name() -> None:
    """What a transaction reports for a rollback, and that a completed write may be rolled back
    unless the caller says otherwise."""
    from hoodie.services.rollback.operation import RollbackOperation

    op = RollbackOperation("20240101000000000")
    assert op.allow_completed is True and op.what == "rollback of 20240101000000000"


def test_rollback_of_a_restore_commit_reopens_its_stash_at_once(tmp_path: Path, caplog) -> None:
    """The manifest says so right after the rollback (not only when the next restore repairs it),
    and the rollback of the stashed TTL commit records its own instant in the manifest and logs the
    files it moved back."""
    import logging

    from hoodie.services.rollback.operation import rollback
    from hoodie.services.ttl import restore, run_ttl
    from hoodie.services.ttl.stash import read_manifest
    from tests.services.test_ttl_stash import STASH, build

    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    ttl = run_ttl(path, STASH)
    back = restore(path, ttl.instant)
    storage = HoodieTable(path).storage
    assert read_manifest(storage, ttl.instant)["restored_by"] == back.instant
    rollback(path, back.instant)
    doc = read_manifest(storage, ttl.instant)
    assert doc["state"] == "complete" and "restored_by" not in doc and "restored_at" not in doc
    with caplog.at_level(logging.INFO, logger="hoodie.services.rollback"):
        rb = rollback(path, ttl.instant)
    assert rb.unstashed_files and (
        f"rolled back [{ttl.instant}__replacecommit__COMPLETED] (0 files deleted, 0 command blocks, "
        f"{len(rb.unstashed_files)} stashed files moved back)") in [r.getMessage() for r in caplog.records]
    doc = read_manifest(storage, ttl.instant)
    assert (doc["state"], doc["rollback"], doc["rolled_back_by"]) == ("rolled_back", rb.rollback_instant,
                                                                      rb.rollback_instant)


def test_rollback_refused_when_the_1x_metadata_table_compacted_the_commit(tmp_path: Path) -> None:
    """Table version 9: the metadata table can no longer take out a commit an MDT compaction merged
    (here the one a later clean triggers); the refusal names the commit and comes before anything
    is written."""
    from hoodie.services.clean import run_clean
    from hoodie.services.rollback.operation import rollback
    from hoodie import write_arrow
    from tests.services.test_savepoint import KEEP_ONE, _data, _opts, _snapshot

    path = str(tmp_path / "t")
    o, first = _opts("COPY_ON_WRITE", 9, True)
    every = {"hoodie.metadata.compact.max.delta.commits": "1"}
    write_arrow(path, _data(range(4), 1, "a"), {**first, **every, "hoodie.datasource.write.operation": "insert"})
    last = write_arrow(path, _data([1], 2, "b"), {**o, **every, "hoodie.datasource.write.operation": "upsert"})
    assert run_clean(path, {**KEEP_ONE, **every}).instant is not None
    before = _snapshot(path)
    with pytest.raises(Exception, match=rf"^cannot roll back {last} on .*: its metadata table compacted that "
                                        "commit already"):
        rollback(path, last)
    assert _snapshot(path) == before


def test_rollback_by_path_opens_the_table_with_the_storage_options(tmp_path: Path, monkeypatch) -> None:
    """``rollback(path, ..., storage_options=...)`` opens the table with those options (what an
    object store needs; recorded here on a local table)."""
    from hoodie.services.rollback import operation as R
    from hoodie import write_arrow
    from tests.services.test_rollback import OPTS, _data, _vals

    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    write_arrow(path, _data([0, 1], 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([1], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    opened: list[tuple] = []

    class Recording(HoodieTable):
        def __init__(self, base_path: str, storage_options: "dict | None" = None, **kw) -> None:
            opened.append((base_path, storage_options))
            super().__init__(base_path, storage_options, **kw)

    monkeypatch.setattr(R, "HoodieTable", Recording)
    options = {"region": "nowhere"}  # ignored by local storage
    res = R.rollback(path, c2, storage_options=options)
    assert res.rolled_back == c2 and opened[0] == (path, options)
    assert _vals(hoodie.read_table(path)) == {0: "a0", 1: "a1"}


def test_rollback_of_a_pending_compaction_reports_the_plan_removal(tmp_path: Path) -> None:
    """``rollback(path, <pending compaction>)`` removes the plan and says so in its result: the
    rollback instant on the timeline, the compaction it removed, nothing deleted or moved here."""
    from hoodie.format.timeline import instant as I
    from hoodie.services.rollback.operation import rollback

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T, 0)])
    write(path, "upsert", [(1, T + 1, 1)])
    c = schedule_compaction(path, UNBOUNDED)
    res = rollback(path, c)
    (rb,) = HoodieTable(path).timeline.completed().by_actions(I.ROLLBACK).instants
    assert (res.rollback_instant, res.rolled_back, res.action) == (rb.timestamp, c, I.COMPACTION)
    assert (res.deleted_files, res.command_blocks, res.moved_files) == ([], [], [])


def test_rollback_of_a_failed_write_with_a_torn_inflight_file(tmp_path: Path) -> None:
    """A crashed writer may leave its inflight file torn: the rollback reads only completed commits'
    metadata (a restore commit names its stash there), so it still removes the failed write."""
    from hoodie.format.timeline import instant as I
    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data, _vals

    path = str(tmp_path / "t")
    o = _rb_table(path)
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    (tmp_path / "t" / ".hoodie" / I.instant_file_name(failed, I.DELTA_COMMIT, I.State.INFLIGHT)).write_bytes(b'{"part')
    res = rollback(path, failed)
    assert res.rolled_back == failed and HoodieTable(path).timeline.get(failed) is None
    assert res.unstashed_files == [] and res.moved_files == []  # nothing was stashed
    assert _vals(hoodie.read_table(path)) == {0: "a0", 1: "a1", 2: "a2", 3: "a3"}


def test_pending_rollback_lookup_skips_plans_it_cannot_read_and_says_why(tmp_path: Path, caplog) -> None:
    """An interrupted rollback without its requested plan, or with a damaged one, is passed over
    (the damage is logged, naming the file) and the search goes on to the next pending rollback."""
    import logging

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.services.rollback.instant import pending_rollback_of
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data

    path = str(tmp_path / "t")
    o = _rb_table(path)
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    t = HoodieTable(path)
    no_plan = t.new_instant_time()  # only an inflight file: its plan is gone
    t.storage.write_bytes(f".hoodie/{I.instant_file_name(no_plan, I.ROLLBACK, I.State.INFLIGHT)}", b"")
    damaged = T.create_requested(t.storage, t.new_instant_time(), I.ROLLBACK, b"not avro")
    plan = plans.write_avro_metadata("HoodieRollbackPlan", plans.rollback_plan((failed, I.DELTA_COMMIT), []))
    real = T.create_requested(t.storage, t.new_instant_time(), I.ROLLBACK, plan)
    with caplog.at_level(logging.WARNING, logger="hoodie.services.rollback"):
        assert pending_rollback_of(t.reload(), failed) == real
    (msg,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert msg.startswith(t.storage.uri(f".hoodie/{damaged.file_name}") + " is damaged")


class _Stopped(Exception):
    """Raised instead of the SIGKILL a fault point sends (see _stop_at)."""


def _stop_at(monkeypatch, point: str) -> None:
    """Enable fault point ``point`` in this process, raising _Stopped where it would kill: the crash
    harness (tests/prove) kills at these names, so a renamed or dropped point would test nothing."""
    import os
    import signal

    import hoodie.faults as F

    kill = os.kill

    def fake_kill(pid: int, sig: int) -> None:
        if pid == os.getpid() and sig == signal.SIGKILL:
            raise _Stopped(point)
        kill(pid, sig)

    monkeypatch.setenv(F.ENV, point)
    monkeypatch.setattr(F, "_hits", {})
    monkeypatch.setattr(F.os, "kill", fake_kill)


@pytest.mark.parametrize("point, done", [("rollback.after_inflight", False), ("rollback.after_delete", False),
                                         ("rollback.after_complete", True)])
def test_rollback_reaches_its_fault_points(tmp_path: Path, monkeypatch, point: str, done: bool) -> None:
    from hoodie.errors import PostCommitError
    from hoodie.format.timeline import instant as I
    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data

    path = str(tmp_path / "t")
    o = _rb_table(path)
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    _stop_at(monkeypatch, point)
    # The fault point raises here instead of killing; once the rollback instant completed (the commit
    # point passed) the transaction reports a later failure as one after the commit.
    with pytest.raises(PostCommitError if done else _Stopped) as caught:
        rollback(path, failed)
    assert isinstance(caught.value.__cause__ if done else caught.value, _Stopped)
    (rb,) = HoodieTable(path).timeline.by_actions(I.ROLLBACK).instants
    assert rb.is_completed == done and HoodieTable(path).timeline.get(failed) is not None


def test_rollback_metadata_separates_failed_deletes_from_files_already_gone(tmp_path: Path, monkeypatch) -> None:
    """successDeleteFiles holds the files that no longer exist (deleted now, or by an earlier
    attempt); failedDeleteFiles the ones a delete left in place."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import plans
    from hoodie.format.slice import writer as W
    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import _data

    path = str(tmp_path / "t")
    o = _rb_table(path, "COPY_ON_WRITE")
    failed = _uncommitted_write(path, _data([0, 1], 5, "bad"), opts=o)
    stuck, gone = sorted(p for p, _ in W.marker_files(HoodieTable(path).storage, failed))
    real = Storage.delete

    def delete(self: Storage, rel: str, missing_ok: bool = True) -> bool:
        if rel == stuck:
            return False  # the delete failed: the file stays
        if rel == gone:
            real(self, rel)
            return False  # gone before this delete (an earlier attempt deleted it)
        return real(self, rel, missing_ok)

    monkeypatch.setattr(Storage, "delete", delete)
    res = rollback(path, failed)
    t = HoodieTable(path)
    meta = plans.read_avro_metadata(t.timeline.read_file(t.timeline.get(res.rollback_instant).file_name))
    pm = meta["partitionMetadata"]
    assert (pm["p0"]["successDeleteFiles"], pm["p0"]["failedDeleteFiles"]) == ([], [t.storage.uri(stuck)])
    assert (pm["p1"]["successDeleteFiles"], pm["p1"]["failedDeleteFiles"]) == ([t.storage.uri(gone)], [])


def test_clean_records_a_file_it_could_not_delete(tmp_path: Path, monkeypatch, caplog) -> None:
    """A delete that fails is logged, reported in the result and in the clean metadata
    (failedDeleteFiles), and the clean still completes with the other files deleted."""
    import logging

    from hoodie.format.storage import Storage
    from hoodie.format.timeline import plans
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    doomed = plan_clean(HoodieTable(path), cfg).files_to_delete
    (stuck,) = doomed["p0"][:1]
    real = Storage.delete

    def delete(self: Storage, rel: str, missing_ok: bool = True) -> bool:
        if rel == stuck:
            raise PermissionError(13, "Permission denied", rel)
        return real(self, rel, missing_ok)

    monkeypatch.setattr(Storage, "delete", delete)
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean.executor"):
        res = run_clean(path, cfg)
    assert res.failed["p0"] == [stuck] and stuck not in res.deleted["p0"]
    assert res.to_json()["failed_files"] == {"p0": [stuck]} and (tmp_path / "t" / stuck).exists()
    assert res.total_deleted == sum(len(v) for v in doomed.values()) - 1
    assert any(r.getMessage().startswith(f"clean {res.instant} could not delete {stuck}: ")
               and "Permission denied" in r.getMessage() for r in caplog.records)
    t = HoodieTable(path)
    meta = plans.read_avro_metadata(t.timeline.read_file(t.timeline.get(res.instant).file_name))
    pm = meta["partitionMetadata"]["p0"]
    assert pm["failedDeleteFiles"] == [stuck.rsplit("/", 1)[1]]
    assert stuck.rsplit("/", 1)[1] not in pm["successDeleteFiles"] and pm["successDeleteFiles"]


@pytest.mark.parametrize("point", ["clean.after_inflight", "clean.after_file", "clean.after_partition_files",
                                   "clean.before_complete"])
def test_clean_reaches_its_fault_points(tmp_path: Path, monkeypatch, point: str) -> None:
    """Each named point stops the clean before it completes (the next clean re-executes it)."""
    from hoodie.format.timeline import instant as I
    from hoodie.services.clean import run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    _stop_at(monkeypatch, point)
    with pytest.raises(_Stopped):
        run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    (c,) = HoodieTable(path).timeline.by_actions(I.CLEAN).instants
    assert c.is_inflight


def test_automatic_clean_runs_when_the_commits_since_the_last_clean_reach_the_maximum(tmp_path: Path) -> None:
    """hoodie.clean.max.commits=N: the automatic clean runs once N commits completed since the last
    clean (not only after more), and counts from the newest completed clean."""
    from hoodie.services.clean import maybe_clean_after_commit, run_clean
    from hoodie.services.clean.executor import commits_since_last_clean
    from hoodie import write_arrow
    from tests.services.test_clean import _history, batch, options

    path = str(tmp_path / "t")
    _history(path, 2)
    table = HoodieTable(path)
    keep_one = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    assert commits_since_last_clean(table) == 2
    assert run_clean(table, keep_one).instant is not None
    assert commits_since_last_clean(table.reload()) == 0
    write_arrow(path, batch([(0, "p0", 7)]), options())
    assert maybe_clean_after_commit(table, {**keep_one, "hoodie.clean.max.commits": "2"}) is None
    write_arrow(path, batch([(0, "p0", 8)]), options())
    assert commits_since_last_clean(table.reload()) == 2
    res = maybe_clean_after_commit(table, {**keep_one, "hoodie.clean.max.commits": "2"})
    assert res is not None and res.instant is not None


def test_interrupted_cleans_resumed_with_their_plan_or_dropped_when_it_is_damaged(tmp_path: Path, caplog) -> None:
    """A requested-only clean gets its inflight file (holding the same plan) and is re-executed; one
    whose plan is damaged is dropped with a warning naming the file, and the new plan covers its
    files."""
    import logging

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as TL
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    table = HoodieTable(path)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    plan = plan_clean(table, cfg)
    data = plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage))
    damaged = TL.create_requested(table.storage, table.new_instant_time(), I.CLEAN, b"garbage")
    requested = TL.create_requested(table.storage, table.new_instant_time(), I.CLEAN, data)
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean.executor"):
        res = run_clean(path, cfg)
    assert [r.instant for r in res.recovered] == [requested.timestamp] and res.instant is None
    assert res.recovered[0].total_deleted == plan.total_files
    t = HoodieTable(path)
    assert t.timeline.get(damaged.timestamp) is None and t.timeline.get(requested.timestamp).is_completed
    inflight = I.instant_file_name(requested.timestamp, I.CLEAN, I.State.INFLIGHT)
    assert t.storage.read_bytes(f".hoodie/{inflight}") == data
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.startswith(f"{t.storage.uri('.hoodie/' + damaged.file_name)} is damaged (") and
               m.endswith(f"): dropping that interrupted clean {damaged.timestamp}; the new clean plan covers "
                          "what it had not deleted") for m in msgs)
    assert f"re-executing clean {requested.timestamp} left requested by an earlier run" in msgs


def test_pending_compaction_check_of_a_rollback_at_its_edges(tmp_path: Path) -> None:
    """Only plans after the rolled-back instant are read, those the caller removes first are
    skipped, at most three of the files are named, and a damaged plan refuses too."""
    from hoodie.format.timeline import instant as I
    from hoodie.services.rollback.action import check_pending_compactions
    from hoodie.services.rollback.instant import RollbackError
    path = str(tmp_path / "t")
    s = Setup(event_field=False)
    write(path, "upsert", [(1, 1, 1), (2, 1, 2)], s)
    d2 = [write(path, "upsert", [(1, 2 + k, 10 + k)], s) for k in range(3)][0]
    c = schedule_compaction(path, UNBOUNDED)
    t = HoodieTable(path)
    target = t.timeline.get(d2)
    files = sorted(t.timeline.compaction_plan(c).file_paths())
    assert len(files) == 4  # the base file and three log files
    base = t.storage.uri()
    check_pending_compactions(t, target, [])
    check_pending_compactions(t, target, files, ignore=[c])
    check_pending_compactions(t, t.timeline.get(c), files)  # a plan does not read its own instant's writes
    check_pending_compactions(t, target, ["p/a", "p/b"])  # files the plan does not read

    def refusal(named: list[str], more: bool) -> str:
        return (f"cannot roll back {d2}: pending compaction {c} includes its file(s) {', '.join(named)}"
                f"{' ...' if more else ''}. Run the compaction first (`hoodie compaction run {base} --instant {c}`; "
                f"{d2} then is no longer the latest write and stays), or remove the plan with `hoodie rollback "
                f"{base} {c}` and roll back {d2} after it. Nothing was changed")

    for given, named, more in ((files[:1] + ["p/a"], files[:1], False), (files[:3] + ["p/a"], files[:3], False),
                               (files + ["p/a"] + files, files[:3], True)):
        with pytest.raises(RollbackError) as e:
            check_pending_compactions(t, target, given)
        assert str(e.value) == refusal(named, more)
    requested = t.storage.full(f".hoodie/{I.instant_file_name(c, I.COMPACTION, I.State.REQUESTED)}")
    # A plan the caller removes first does not end the search: a later one reading the files refuses.
    c2 = t.new_instant_time()
    copy = t.storage.full(f".hoodie/{I.instant_file_name(c2, I.COMPACTION, I.State.REQUESTED)}")
    shutil.copyfile(requested, copy)
    t.reload()
    with pytest.raises(RollbackError, match=f"^cannot roll back {d2}: pending compaction {c2} includes"):
        check_pending_compactions(t, target, files, ignore=[c])
    os.remove(copy)
    t.reload()
    with open(requested, "wb") as f:
        f.write(b"garbage")
    t.reload()
    with pytest.raises(RollbackError, match=rf"^cannot roll back {d2}: pending compaction {c} may read its files, "
                                            r"and .* is damaged \("):
        check_pending_compactions(t, target, files)


class _Clock:
    """A stand-in for a module's ``time``: monotonic() advances 1.5 s per call."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        self.now += 1.5
        return self.now


def test_rollback_and_clean_record_their_duration_in_milliseconds(tmp_path: Path, monkeypatch) -> None:
    """timeTakenInMillis is the time from planning to the metadata, in whole milliseconds."""
    from hoodie.format.timeline import plans
    from hoodie.services.rollback import action as rollback_action
    from hoodie.services.clean import executor, run_clean
    from hoodie.services.rollback.operation import rollback
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_clean import _history
    from tests.services.test_rollback import _data

    path = str(tmp_path / "t")
    o = _rb_table(path)
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    monkeypatch.setattr(rollback_action, "time", _Clock())
    res = rollback(path, failed)
    t = HoodieTable(path)
    meta = plans.read_avro_metadata(t.timeline.read_file(t.timeline.get(res.rollback_instant).file_name))
    assert meta["timeTakenInMillis"] == 1500  # planned at one call, the metadata at the next

    path = str(tmp_path / "c")
    _history(path, 3)
    monkeypatch.setattr(executor, "time", _Clock())
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                           "hoodie.cleaner.fileversions.retained": "1"})
    t = HoodieTable(path)
    meta = plans.read_avro_metadata(t.timeline.read_file(t.timeline.get(res.instant).file_name))
    assert meta["timeTakenInMillis"] == 1500


def test_a_link_goes_with_the_file_slice_it_belongs_to() -> None:
    """The cleaner deletes a compaction's link with its slice: the slice is doomed when its base
    file or one of its log files is (same file group, same base instant, same partition folder)."""
    from hoodie.format.file_group.links import Link
    from hoodie.services.clean.planner import _Planner

    doomed_with = _Planner._slice_of_link_doomed
    fid, c, old = "f1", "20240101000000005", "20240101000000001"
    link = Link("p/q", fid, N.log_file_name(fid, c, 1, "1-0-1"), N.log_file_name(fid, old, 2, "1-0-1"), "symlink")
    base_c = N.base_file_name(fid, "0-1-0", c)
    assert doomed_with(link, {f"p/q/{base_c}"})
    assert doomed_with(link, {f"p/q/{N.log_file_name(fid, c, 2, '1-0-1')}"})
    # Skipped entries before the one that matches (the order of the loop does not matter).
    assert doomed_with(link, [f"p/q/r/{base_c}", "p/q/notes.txt", f"p/{base_c}", f"p/q/{base_c}"])
    for other in (N.base_file_name(fid, "0-1-0", old), N.log_file_name(fid, old, 1, "1-0-1"),
                  N.base_file_name("f2", "0-1-0", c), N.log_file_name("f2", c, 1, "1-0-1"), "notes.txt"):
        assert not doomed_with(link, {f"p/q/{other}"}), other
    assert not doomed_with(link, {f"p/{base_c}", f"p/q/r/{base_c}", f"x/p/q/{base_c}", "p/q/"})
    assert not doomed_with(link, {f"p/r/{base_c}"})  # a sibling partition whose name is as long
    assert not doomed_with(Link("p/q", fid, "not-a-log-file", "x", "symlink"), {f"p/q/{base_c}"})
    flat = Link("", fid, link.link, link.target, "symlink")  # a non-partitioned table
    assert doomed_with(flat, {base_c}) and not doomed_with(flat, {f"p/q/{base_c}"})


def test_a_hidden_file_that_is_no_checksum_keeps_a_dropped_partition(tmp_path: Path) -> None:
    """Only ``.<name>.crc`` is a Hadoop checksum: ``.<name>.bak`` (same length of suffix) beside a
    doomed file is foreign data, so the partition stays and the file with it."""
    from hoodie import write_arrow
    from hoodie.services.clean import plan_clean
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1)]), options())
    drop_partition(path, "a")
    folder = tmp_path / "t" / "a"
    (base,) = [p.name for p in folder.iterdir() if p.name.endswith(".parquet")]
    (folder / f".{base}.bak").write_bytes(b"not a checksum")
    plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert plan.partitions_to_delete == [] and plan.files_to_delete == {"a": [f"a/{base}"]}
    assert f"partition a is kept: .{base}.bak is not part of any cleanable file group" in plan.notes


@pytest.mark.parametrize("policy", [
    {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": "1"},
    {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"}])
def test_clean_keeps_savepointed_slices_and_counts_their_files(tmp_path: Path, policy: dict) -> None:
    """A slice outside the retention that a savepoint holds stays (every partition's), the older
    one goes, and the note counts the kept files (both policies)."""
    from hoodie.services.clean import run_clean
    from hoodie.services.savepoint import create_savepoint
    from hoodie import write_arrow
    from tests.services.test_savepoint import _data, _opts

    path = str(tmp_path / "t")
    o, _ = _opts("COPY_ON_WRITE")
    c1 = write_arrow(path, _data(range(2), 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    c2, c3, c4 = (write_arrow(path, _data(range(2), ts, t), {**o, "hoodie.datasource.write.operation": "upsert"})
                  for ts, t in ((2, "b"), (3, "c"), (4, "d")))
    create_savepoint(path, c2)
    res = run_clean(path, policy)
    assert res.plan.earliest_instant_to_retain is None or res.plan.earliest_instant_to_retain.timestamp == c4
    # Per partition: c3 the newest before the retention (kept), c2 savepointed (kept), the older c1 cleaned.
    deleted = sorted(f.rsplit("/", 1)[1].rsplit("_", 1)[1] for fs in res.deleted.values() for f in fs)
    assert deleted == [f"{c1}.parquet"] * 2
    assert f"kept 2 file(s) of savepointed file slices (savepoint(s) {c2}); they go once the savepoint is deleted" \
        in res.plan.notes
    on_disk = sorted(p.name.rsplit("_", 1)[1] for part in ("p0", "p1") for p in (tmp_path / "t" / part).iterdir()
                     if p.name.endswith(".parquet"))
    assert on_disk == sorted([f"{c}.parquet" for c in (c2, c3, c4)] * 2)


def test_a_pending_write_that_marked_a_dropped_partition_keeps_it(tmp_path: Path) -> None:
    """A writer that has created its marker in a dropped partition but not its file yet: the
    partition's files may go, the partition folder stays (the writer's file would be invisible)."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as TL
    from hoodie.services.clean import plan_clean
    from hoodie import write_arrow
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1), (2, "b", 2)]), options())
    drop_partition(path, "a")
    table = HoodieTable(path)
    ts = table.new_instant_time()
    TL.create_requested(table.storage, ts, I.COMMIT)
    W.create_marker(table.storage, ts, "a", N.base_file_name(N.new_file_id(0), "0-1-0", ts), "CREATE")
    plan = plan_clean(table.reload(), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert plan.files_to_delete.get("a") and plan.partitions_to_delete == []


def test_clean_plan_paths_relative_to_a_base_path_of_any_name(tmp_path: Path) -> None:
    """Only trailing slashes are taken off the base path (a table folder ending in X keeps its X)."""
    from hoodie.format.storage import Storage
    from hoodie.services.clean.config import CleanError
    from hoodie.services.clean.planner import _relativize

    st = Storage(str(tmp_path / "tableX"))
    assert _relativize(st, st.uri("p/f.parquet")) == "p/f.parquet"
    assert _relativize(st, "p/f.parquet") == "p/f.parquet"
    with pytest.raises(CleanError, match=r"^clean plan path /elsewhere/f is outside the table at "):
        _relativize(st, "/elsewhere/f")


def test_a_folder_inside_a_dropped_partition_keeps_it(tmp_path: Path) -> None:
    from hoodie import write_arrow
    from hoodie.services.clean import plan_clean
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1)]), options())
    drop_partition(path, "a")
    (tmp_path / "t" / "a" / "foreign").mkdir()
    (tmp_path / "t" / "a" / "foreign" / "data.txt").write_text("not the table's")
    plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert plan.partitions_to_delete == [] and len(plan.files_to_delete["a"]) == 1


def test_earliest_commit_to_retain_at_its_boundaries() -> None:
    """KEEP_LATEST_COMMITS retains exactly N commits; KEEP_LATEST_BY_HOURS keeps a commit exactly at
    the cutoff; both are capped below the first pending instant of the commits timeline."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline.active import Timeline
    from hoodie.services.clean.config import CleanConfig
    from hoodie.services.clean.planner import _ectr

    def tl(*insts: "I.Instant") -> Timeline:
        return Timeline(sorted(insts, key=I.Instant.sort_key))

    c = [I.Instant(f"2024010{d}000000000", I.COMMIT) for d in range(1, 6)]  # days 1..5, midnight UTC
    now = "20240105120000000"
    commits = CleanConfig(policy="KEEP_LATEST_COMMITS", commits_retained=5)
    assert _ectr(tl(*c), commits, now, "UTC") is None  # exactly N commits: nothing passes the window
    assert _ectr(tl(*c), CleanConfig(policy="KEEP_LATEST_COMMITS", commits_retained=4), now, "UTC") == c[1]
    assert _ectr(tl(*c), CleanConfig(policy="KEEP_LATEST_COMMITS", commits_retained=1), now, "UTC") == c[4]
    assert _ectr(tl(), commits, now, "UTC") is None
    assert _ectr(tl(*c), CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS"), now, "UTC") is None
    # A clean is not a commit: it neither counts nor caps.
    assert _ectr(tl(*c, I.Instant("20240102100000000", I.CLEAN, I.State.REQUESTED)),
                 CleanConfig(policy="KEEP_LATEST_COMMITS", commits_retained=1), now, "UTC") == c[4]

    def hours(h: int, *extra: "I.Instant") -> "Optional[I.Instant]":
        return _ectr(tl(*c, *extra), CleanConfig(policy="KEEP_LATEST_BY_HOURS", hours_retained=h), now, "UTC")

    assert hours(36) == c[3]  # cutoff day 4 00:00 exactly: that commit is inside the window
    assert hours(35) == c[4]
    assert hours(37) == c[3]
    assert hours(60) == c[2]  # cutoff day 3 00:00
    assert hours(1) == c[4]  # nothing inside the window: the newest commit
    assert hours(1000) == c[0]
    # A pending write (or compaction) before the ECTR caps it at the last commit before it.
    pend = I.Instant("20240103120000000", I.DELTA_COMMIT, I.State.INFLIGHT)
    assert hours(1, pend) == c[2]
    assert hours(1, I.Instant("20240103120000000", I.COMPACTION, I.State.REQUESTED)) == c[2]
    assert hours(1, I.Instant("20240105100000000", I.COMMIT, I.State.REQUESTED)) == c[4]  # after the ECTR: no cap
    assert hours(1, I.Instant("20231231000000000", I.COMMIT, I.State.REQUESTED)) is None  # nothing before it


def test_keep_latest_file_versions_counts_a_pending_compaction_as_one_version(tmp_path: Path) -> None:
    """With a pending compaction, the slice it reads and its own slice are kept and count as one of
    the retained versions; the remaining versions are counted among the older slices."""
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.services.clean import run_clean

    path = str(tmp_path / "t")
    s = Setup(event_field=False)
    b0 = write(path, "upsert", [(1, 1, 1)], s)
    bases = [b0]
    for k in range(2):
        write(path, "upsert", [(1, 2 + k, 10 + k)], s)
        c = schedule_compaction(path, UNBOUNDED)
        run_compaction(path, c)
        bases.append(c)
    write(path, "upsert", [(1, 9, 99)], s)
    pending = schedule_compaction(path, UNBOUNDED)
    expected = snapshot(path)
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"})
    t = HoodieTable(path)
    (fg,) = FileSystemView(t.storage, t.timeline).file_groups("all").values()
    assert sorted(fg.slices) == sorted([bases[1], bases[2], pending])  # b0's slice went, one older one stays
    assert snapshot(path) == expected


def test_clean_plan_record_as_hudi_reads_it(tmp_path: Path) -> None:
    """HoodieCleanerPlan: the ECTR with its action and state, full paths of partitions that lose
    files (empty ones left out), partitions to delete sorted; read back the same."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.services.clean import CleanPlan

    st = Storage(str(tmp_path))
    P1 = "20240101000000001"
    plan = CleanPlan("KEEP_LATEST_COMMITS", I.Instant(P1, I.DELTA_COMMIT),
                     "20240101000000009", {"b": ["b/2", "b/1"], "a": []}, ["z", "y"])
    rec = plan.to_avro(st)
    assert rec["earliestInstantToRetain"] == {"timestamp": P1, "action": I.DELTA_COMMIT, "state": "COMPLETED"}
    assert (rec["policy"], rec["lastCompletedCommitTimestamp"]) == ("KEEP_LATEST_COMMITS", "20240101000000009")
    assert {p: [f["filePath"] for f in fs] for p, fs in rec["filePathsToBeDeletedPerPartition"].items()} == {
        "b": [st.uri("b/2"), st.uri("b/1")]}
    assert rec["partitionsToBeDeleted"] == ["y", "z"]
    back = CleanPlan.from_avro(rec, st)
    assert (back.earliest_instant_to_retain, back.files_to_delete, back.partitions_to_delete) == (
        I.Instant(P1, I.DELTA_COMMIT), {"b": ["b/2", "b/1"]}, ["y", "z"])
    none = CleanPlan("KEEP_LATEST_FILE_VERSIONS", None, "").to_avro(st)
    assert none["earliestInstantToRetain"] is None and none["filePathsToBeDeletedPerPartition"] == {}
    assert plan.is_empty() is False and CleanPlan("x", None, "", {"a": []}).is_empty()
    assert not CleanPlan("x", None, "", {}, ["a"]).is_empty() and plan.total_files == 2


def test_clean_takes_slices_older_than_the_active_timeline_as_committed(tmp_path: Path) -> None:
    """A slice whose instant was archived (older than the first instant on the active timeline) is
    committed: the cleaner removes it like any old version; a failed write's file is not touched."""
    from hoodie.format.timeline import instant as I
    from hoodie.services.clean import plan_clean
    from hoodie import write_arrow
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_clean import batch, options

    path = str(tmp_path / "t")
    c1 = write_arrow(path, batch([(1, "a", 1)]), options())
    c2 = write_arrow(path, batch([(1, "a", 2)]), options())
    write_arrow(path, batch([(1, "a", 3)]), options())
    _uncommitted_write(path, batch([(1, "a", 4)]), opts=options())  # newer than the timeline's start
    for st in (I.State.REQUESTED, I.State.INFLIGHT, I.State.COMPLETED):  # c1 archived
        (tmp_path / "t" / ".hoodie" / I.instant_file_name(c1, I.COMMIT, st)).unlink(missing_ok=True)
    # A failed write between c1 and c2, now the first instant of the active timeline: not committed.
    failed = str(int(c1) + 1)
    assert failed < c2
    (tmp_path / "t" / ".hoodie" / I.instant_file_name(failed, I.COMMIT, I.State.REQUESTED)).write_bytes(b"")
    (c1_file,) = [p for p in (tmp_path / "t" / "a").iterdir() if p.name.endswith(f"_{c1}.parquet")]
    (c1_file.parent / c1_file.name.replace(c1, failed)).write_bytes(c1_file.read_bytes())
    plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                          "hoodie.cleaner.fileversions.retained": "1"})
    gone = sorted(f.rsplit("_", 1)[1] for f in plan.files_to_delete["a"])
    assert gone == [f"{c1}.parquet", f"{c2}.parquet"]


def test_run_clean_publishes_its_metrics_and_warns_about_unknown_keys(tmp_path: Path, monkeypatch) -> None:
    """What ``run_clean`` hands the metrics publisher (not for a dry run), with the table's labels and
    the caller's options; a misspelled option key is warned about."""
    from hoodie.services.clean import CleanConfig, executor, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    sent: list[tuple] = []
    monkeypatch.setattr(executor, "publish", lambda *a: sent.append(a))
    keep_one = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    run_clean(path, keep_one, dry_run=True)
    assert sent == []
    with pytest.warns(UserWarning, match="hoodie.cleaner.polcy"):
        res = run_clean(path, {**keep_one, "hoodie.cleaner.polcy": "x"})
    ((job, metrics, labels, options),) = sent
    assert job == "clean" and options == {**keep_one, "hoodie.cleaner.polcy": "x"}
    assert labels == {"table": HoodieTable(path).name, "base_path": HoodieTable(path).base_path}
    assert {k: v[0] for k, v in metrics.items() if k != "duration_ms"} == {
        "files_deleted": res.total_deleted, "files_failed": 0, "partitions_deleted": 0}
    assert res.total_deleted == 4 and 0 <= metrics["duration_ms"][0] < 600_000
    assert [v[1] for v in metrics.values()] == [
        "Files the last clean deleted", "Files the last clean failed to delete", "Partitions the last clean deleted",
        "Duration of the last clean, ms"]
    sent.clear()
    run_clean(HoodieTable(path), CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS", file_versions_retained=1))
    assert sent[0][3] == {}  # a CleanConfig carries no metrics options


def test_clean_leaves_every_slice_of_a_group_a_pending_clustering_reads(tmp_path: Path) -> None:
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.services.clean import plan_clean
    from hoodie import write_arrow
    from tests.services.test_clean import batch, options
    from tests.services.test_compaction_plan import _clustering_request

    path = str(tmp_path / "t")
    for v in range(3):
        write_arrow(path, batch([(1, "a", v), (2, "b", v)]), options())
    t = HoodieTable(path)
    view = FileSystemView(t.storage, t.timeline)
    ((fid_a, _),) = view.file_groups("a").items()
    _clustering_request(t, fid_a, "a")
    plan = plan_clean(t.reload(), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                   "hoodie.cleaner.fileversions.retained": "1"})
    assert "a" not in plan.files_to_delete and len(plan.files_to_delete["b"]) == 2


def test_a_clean_instant_holds_its_plan_twice_and_logs_what_it_did(tmp_path: Path, caplog) -> None:
    """``.clean.requested`` and ``.clean.inflight`` both hold the HoodieCleanerPlan (as Hudi writes
    them); the completion is logged with the counts."""
    import logging

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.services.clean import run_clean
    from tests.services.test_clean import _history, batch, drop_partition, options
    from hoodie import write_arrow

    path = str(tmp_path / "t")
    _history(path, 2)
    write_arrow(path, batch([(9, "z", 1)]), options())
    drop_partition(path, "z")
    with caplog.at_level(logging.INFO, logger="hoodie.services.clean.executor"):
        res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                               "hoodie.cleaner.fileversions.retained": "1"})
    t = HoodieTable(path)
    req = t.storage.read_bytes(f".hoodie/{I.instant_file_name(res.instant, I.CLEAN, I.State.REQUESTED)}")
    inflight = t.storage.read_bytes(f".hoodie/{I.instant_file_name(res.instant, I.CLEAN, I.State.INFLIGHT)}")
    assert plans.read_avro_metadata(req) == plans.read_avro_metadata(inflight) == res.plan.to_avro(t.storage)
    assert res.deleted_partitions == ["z"] and res.total_deleted == 3
    assert f"clean {res.instant} deleted 3 files and 1 partitions" in [r.getMessage() for r in caplog.records]
    meta = plans.read_avro_metadata(t.timeline.read_file(t.timeline.get(res.instant).file_name))
    z = meta["partitionMetadata"]["z"]
    assert z["isPartitionDeleted"] is True and len(z["deletePathPatterns"]) == 1 == len(z["successDeleteFiles"])
    assert meta["partitionMetadata"]["p0"]["isPartitionDeleted"] is False
    assert meta["totalFilesDeleted"] == 3 and meta["earliestCommitToRetain"] == ""


def test_partition_stats_the_process_state_wins_unless_a_persisted_one_is_newer(tmp_path: Path) -> None:
    """Persisted stats replace the process's own only when they cover more (a later upto): at equal
    upto, or without an upto, the process state stays the starting point."""
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1})
    _commit_file(root, f"{T0}2.deltacommit", {"p2": 1})
    TS.forget()
    first = TS.partition_last_modified(_stats_table(root))
    assert (first.source, first.upto) == ("full scan", f"{T0}2")
    same = TS.PartitionStats({"p1": f"{T0}1", "p2": f"{T0}2"}, f"{T0}2", [], False, 2)
    _commit_file(root, f"{T0}3.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: same.encode()})
    got = TS.partition_last_modified(_stats_table(root))
    assert (got.source, got.scanned_instants) == ("process cache", 1)
    no_upto = TS.PartitionStats({"p1": f"{T0}1"}, None, [], False, 0)
    _commit_file(root, f"{T0}4.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: no_upto.encode()})
    got = TS.partition_last_modified(_stats_table(root))
    assert (got.source, got.scanned_instants, got.incremental) == ("process cache", 1, True)
    TS.forget()


def test_a_group_replaced_at_the_earliest_commit_to_retain_is_kept(tmp_path: Path) -> None:
    """KEEP_LATEST_COMMITS deletes a replaced file group only when it was replaced before the
    earliest commit to retain (Hudi's rule): replaced exactly at it, it stays, and the partition is
    not reported as holding foreign files."""
    from hoodie.services.clean import plan_clean
    from hoodie import write_arrow
    from tests.services.test_clean import batch, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1)]), options())
    c2 = write_arrow(path, batch([(2, "a", 2)]), options(op="insert_overwrite"))
    write_arrow(path, batch([(3, "b", 3)]), options())
    write_arrow(path, batch([(4, "b", 4)]), options())
    plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS",
                                          "hoodie.cleaner.commits.retained": "3"})
    assert plan.earliest_instant_to_retain.timestamp == c2
    assert "a" not in plan.files_to_delete and plan.partitions_to_delete == []
    assert not any("partition a" in n for n in plan.notes)


def test_rollback_without_markers_on_a_1x_table_finds_the_log_file_by_its_instant(tmp_path: Path) -> None:
    """Table version 9 names a log file by the deltacommit that wrote it: without markers, that
    name finds the failed write's log file (and only it)."""
    import shutil

    from hoodie.services.rollback.operation import rollback
    from hoodie import write_arrow
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_rollback import OPTS, _data, _vals

    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_arrow(path, _data([0, 1], 1, "a"), {**o, "hoodie.datasource.write.operation": "insert",
                                              "hoodie.write.table.version": "9"})
    write_arrow(path, _data([0], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    failed = _uncommitted_write(path, _data([0], 5, "bad"), opts=o)
    shutil.rmtree(tmp_path / "t" / ".hoodie" / ".temp")
    logs = sorted(p.name for p in (tmp_path / "t" / "p0").iterdir() if ".log." in p.name)
    mine = [n for n in logs if f"_{failed}.log." in n]
    assert len(logs) == 2 and len(mine) == 1
    res = rollback(path, failed)
    assert res.deleted_files == [f"p0/{mine[0]}"]
    assert _vals(hoodie.read_table(path)) == {0: "b0", 1: "a1"}


# -- clean planner: retention window, notes and tables without commits ------------------------------

def _commit_timeline(stamps: list[str]):
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline import instant as I

    return T.Timeline([I.Instant(s, I.COMMIT, I.State.COMPLETED) for s in stamps])


def test_hours_window_is_exact_to_the_millisecond() -> None:
    """KEEP_LATEST_BY_HOURS keeps commits at or after now - hours: one millisecond older is outside."""
    from hoodie.services.clean.planner import _config, _ectr

    cfg = _config({"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "1"})
    now = "20240101120000000"
    tl = _commit_timeline(["20240101105959999", "20240101113000000"])
    assert _ectr(tl, cfg, now, "UTC").timestamp == "20240101113000000"
    tl = _commit_timeline(["20240101105959999", "20240101110000000", "20240101113000000"])
    assert _ectr(tl, cfg, now, "UTC").timestamp == "20240101110000000"


def test_hours_window_is_computed_in_the_timeline_zone(new_york_machine) -> None:
    """A UTC timeline on a machine in New York: both conversions use the timeline's zone, not the machine's."""
    from hoodie.services.clean.planner import _config, _ectr

    cfg = _config({"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "1"})
    tl = _commit_timeline(["20240101103000000", "20240101113000000", "20240101114500000"])
    assert _ectr(tl, cfg, "20240101120000000", "UTC").timestamp == "20240101113000000"


def test_clean_of_a_table_without_commits_plans_nothing(tmp_path: Path) -> None:
    from hoodie.format.table import create_table
    from hoodie.services.clean.planner import plan_clean

    path = str(tmp_path / "t")
    create_table(path, table_name="t", record_key_fields=["k"])
    for policy in ("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"):
        plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.policy": policy})
        assert plan.is_empty() and plan.last_completed_commit == "" and plan.earliest_instant_to_retain is None


def test_clean_notes_say_why_nothing_or_what_was_kept(tmp_path: Path) -> None:
    from hoodie.services.clean import run_clean
    from hoodie.services.savepoint import create_savepoint
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    hist = _history(path, 2)
    res = run_clean(path)
    assert res.plan.notes == ["nothing to clean: not enough completed commits to pass the retention window (or "
                              "the earliest pending instant is the oldest commit)"]
    for inst, _ in hist:
        create_savepoint(path, inst)
    _history(path, 3)
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                           "hoodie.cleaner.fileversions.retained": "1"})
    kept = [n for n in res.plan.notes if n.startswith("kept ")]
    assert kept and kept[-1].endswith(f"of savepointed file slices (savepoint(s) {hist[0][0]}, {hist[1][0]}); they "
                                      "go once the savepoint is deleted")


def test_clean_refuses_a_damaged_savepoint_naming_it(tmp_path: Path) -> None:
    from hoodie.services.clean import CleanError, run_clean
    from hoodie.services.savepoint import create_savepoint
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    hist = _history(path, 2)
    sp = hist[0][0]
    create_savepoint(path, sp)
    (Path(path) / ".hoodie" / f"{sp}.savepoint").write_bytes(b"not avro")
    with pytest.raises(CleanError, match=rf"^cannot clean: savepoint {sp} cannot be read \(.*\), so the files it "
                                         rf"holds are unknown and any of them could be deleted\. Delete the savepoint "
                                         rf"\(CALL delete_savepoint\(instant_time => '{sp}'\)\) or restore its file"):
        run_clean(path)


def test_pending_clean_plans_that_cannot_be_used_are_named(tmp_path: Path, caplog) -> None:
    """A damaged (non-Avro) plan of an interrupted clean is dropped with a warning naming the problem; a plan
    naming a file outside the table stops the clean (hoodie never deletes outside the table)."""
    import logging

    from hoodie.format.timeline import active as TL
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.services.clean import CleanError, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    table = HoodieTable(path)
    damaged = TL.create_requested(table.storage, table.new_instant_time(), I.CLEAN, b"garbage")
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean.executor"):
        run_clean(path)
    (msg,) = [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]
    assert "is damaged (None)" not in msg and msg.split("is damaged (")[1].split(")")[0].strip()
    table = HoodieTable(path)
    # A plan naming a file outside the table: never deleted, the clean stops and says why.
    outside = plans.write_avro_metadata("HoodieCleanerPlan", plans.cleaner_plan(
        None, "", "KEEP_LATEST_COMMITS", {"p0": [str(tmp_path / "not_the_table" / "f.parquet")]}))
    wrong = TL.create_requested(table.storage, table.new_instant_time(), I.CLEAN, outside)
    with pytest.raises(CleanError, match=r"^clean plan path .*not_the_table/f\.parquet is outside the table at "):
        run_clean(path)
    assert (tmp_path / "t" / ".hoodie" / wrong.file_name).exists()
    (tmp_path / "t" / ".hoodie" / wrong.file_name).unlink()
    assert damaged.timestamp not in {i.timestamp for i in HoodieTable(path).timeline.instants}
