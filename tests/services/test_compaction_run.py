"""Executing compactions: commit format, hudi-rs agreement, links (symlinks locally, copies on S3),
exact split, rollback and re-run, incremental/time-travel reads, guards and the executor hook."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import uuid
from pathlib import Path

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.timeline import instant as I
from hoodie.format.log import logformat as L
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.file_group.links import LINKS_KEY, links_from_metadata
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import (
    CompactionError, execute_operation, execute_task, freshness, rollback_compaction, run_compaction,
    schedule_compaction,
)
from hoodie.services.compaction import partial as P
from tests.hudi_rs import read_hudi_rs
from tests.s3 import moto_s3  # noqa: F401
from tests.services.test_compaction_support import (
    UNBOUNDED, Setup, batch, event_time_config, latest_slices, log_names, options, read_optimized, rows, snapshot,
    write,
)


def _history(path: str, s: Setup = Setup(), **storage) -> list[str]:
    """Insert 4 keys (ts 1), then upserts at event times 10, 20, a delete at 30, an upsert at 40."""
    return [
        write(path, "insert", [(1, 1, 0), (2, 1, 0), (3, 1, 0), (4, 1, 0)], s, **storage),
        write(path, "upsert", [(1, 10, 1)], s, **storage),
        write(path, "upsert", [(2, 20, 2)], s, **storage),
        write(path, "delete", [(3, 30, 0)], s, **storage),
        write(path, "upsert", [(4, 40, 4), (1, 41, 5)], s, **storage),
    ]


def _hudi_rs_agrees(path: str) -> None:
    assert rows(read_hudi_rs(path)) == snapshot(path)
    assert rows(read_hudi_rs(path, query_type="read_optimized")) == read_optimized(path)


def test_full_compaction_commit_and_meta_columns(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    before = hoodie.read_table(path)
    c = schedule_compaction(path, UNBOUNDED)
    (res,) = run_compaction(path, c)
    t = HoodieTable(path)
    commit = tmp_path / "t" / ".hoodie" / f"{c}.commit"
    assert (tmp_path / "t" / ".hoodie" / f"{c}.compaction.inflight").read_bytes() == b""
    meta = json.loads(commit.read_text())
    assert meta["compacted"] is True and meta["operationType"] == "COMPACT"
    assert json.loads(meta["extraMetadata"]["schema"]) == t.avro_schema()
    (stat,) = meta["partitionToWriteStats"]["all"]
    (new_slice,) = latest_slices(path)
    assert new_slice.base_instant == c
    assert stat["prevCommit"] != "null" and stat["prevCommit"] < c
    assert stat["totalLogFilesCompacted"] == 4 and stat["totalLogSizeCompacted"] > 0
    assert stat["totalLogRecords"] == 5 and stat["numWrites"] == 3 and stat["numDeletes"] == 1
    name = stat["path"].rsplit("/", 1)[-1]
    assert N.parse_base_file(name).instant == c and N.parse_base_file(name).file_id == stat["fileId"]
    # Meta columns come from the merged records; the file name column names the new base file.
    base = pq.read_table(tmp_path / "t" / stat["path"])
    assert set(base.column("_hoodie_file_name").to_pylist()) == {name}
    cols = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "k", "ts", "v"]
    assert sorted(tuple(r[c_] for c_ in cols) for r in base.to_pylist()) == \
        sorted(tuple(r[c_] for c_ in cols) for r in before.to_pylist())
    assert res.metrics["operations"] == 1 and res.metrics["watermarkStatus"] == "complete"
    assert snapshot(path) == rows(before) == read_optimized(path)
    _hudi_rs_agrees(path)


@pytest.mark.parametrize("ordering", [True, False])
def test_partial_compaction_symlinks_and_hudi_rs(tmp_path: Path, ordering: bool) -> None:
    path = str(tmp_path / "t")
    s = Setup(ordering=ordering)
    _history(path, s)
    before = snapshot(path)
    c = schedule_compaction(path, event_time_config(25))
    (res,) = run_compaction(path, c)
    assert snapshot(path) == before
    at_c = [n for n in log_names(path) if N.parse_log_file(n).base_instant == c]
    assert len(at_c) == 2 and all(os.path.islink(tmp_path / "t" / "all" / n) for n in at_c)
    meta = CommitMetadata.from_json_bytes((tmp_path / "t" / ".hoodie" / f"{c}.commit").read_bytes())
    links = links_from_metadata(meta)
    assert sorted(l.link for l in links) == sorted(at_c) and {l.mode for l in links} == {"symlink"}
    assert [l.to_json() for l in res.links] == json.loads(meta.extra_metadata[LINKS_KEY])
    # RO holds the compacted prefix (events <= 25), not the later files.
    ro = {r[0]: r for r in read_optimized(path)}
    assert ro[repr(("int", 2))][2] == repr(("int", 20)) and ro[repr(("int", 4))][2] == repr(("int", 1))
    assert repr(("int", 3)) in ro  # its delete (event 30) is not compacted yet
    _hudi_rs_agrees(path)
    f = freshness(path)
    assert f["threshold"]["epoch_ms"] == 25 and f["watermark"] == {"epoch_ms": 30, "iso": "1970-01-01T00:00:00.030Z",
                                                                   "status": "known"}
    # A second compaction compacts the links (a link of a link in the plan, targets kept).
    write(path, "upsert", [(2, 50, 9)], s)
    before2 = snapshot(path)
    c2 = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c2)
    assert snapshot(path) == before2 == read_optimized(path)
    _hudi_rs_agrees(path)


def test_partial_compaction_copy_mode_local(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    before = snapshot(path)
    c = schedule_compaction(path, event_time_config(25))
    (res,) = run_compaction(path, c, {"hoodie.compaction.partial.link.mode": "copy"})
    at_c = [n for n in log_names(path) if N.parse_log_file(n).base_instant == c]
    assert len(at_c) == 2 and not any(os.path.islink(tmp_path / "t" / "all" / n) for n in at_c)
    assert {l.mode for l in res.links} == {"copy"}
    for l in res.links:
        assert (tmp_path / "t" / "all" / l.link).read_bytes() == (tmp_path / "t" / "all" / l.target).read_bytes()
    assert snapshot(path) == before
    _hudi_rs_agrees(path)


def test_partial_compaction_copies_on_object_store(moto_s3: dict, tmp_path: Path) -> None:
    base = f"s3://hoodie-test/compaction-{uuid.uuid4().hex[:8]}"
    so = {"storage_options": moto_s3}
    _history(base, **so)
    before = rows(hoodie.read_table(base, **so))
    c = schedule_compaction(base, event_time_config(25), storage_options=moto_s3)
    (res,) = run_compaction(base, c, storage_options=moto_s3)
    assert {l.mode for l in res.links} == {"copy"} and len(res.links) == 2
    st = Storage(base, moto_s3)
    for l in res.links:
        assert st.is_file(l.link_path) and not st.is_symlink(l.link_path)
        assert st.read_bytes(l.link_path) == st.read_bytes(l.target_path)
    assert rows(hoodie.read_table(base, **so)) == before
    # hudi-rs cannot reach moto: read a downloaded copy of the table with it.
    local = tmp_path / "download"
    pafs.copy_files(st.full(""), str(local), source_filesystem=st.fs, destination_filesystem=pafs.LocalFileSystem())
    assert rows(read_hudi_rs(str(local))) == before
    assert rows(read_hudi_rs(str(local), query_type="read_optimized")) == \
        rows(hoodie.read_table(base, query_type="read_optimized", **so))


@pytest.mark.parametrize("ordering", [True, False])
def test_exact_split_keeps_later_events_out_of_base(tmp_path: Path, ordering: bool) -> None:
    path = str(tmp_path / "t")
    s = Setup(ordering=ordering, block_format="parquet")
    write(path, "insert", [(1, 1, 0), (2, 1, 0), (3, 1, 0)], s)
    write(path, "upsert", [(1, 10, 1), (2, 90, 2)], s)    # one log: events 10 and 90
    write(path, "upsert", [(3, 20, 3)], s)                # events 20
    write(path, "upsert", [(2, 95, 4)], s)                # events 95: remains
    before = snapshot(path)
    c = schedule_compaction(path, event_time_config(50, exact=True))
    (res,) = run_compaction(path, c)
    assert snapshot(path) == before
    assert all(int(r[2].split(", ")[1].rstrip(")")) <= 50 for r in read_optimized(path))
    (split,) = res.split_files
    assert split["records"] == 1 and (split["minEventTime"], split["maxEventTime"]) == (90, 90)
    name = split["path"].rsplit("/", 1)[-1]
    assert N.parse_log_file(name).version == 1 and N.parse_log_file(name).base_instant == c
    (block,) = list(L.read_log_file(Storage(path), split["path"]))
    assert block.instant_time == c and block.event_time_range == (90, 90)
    _hudi_rs_agrees(path)
    assert freshness(path)["watermark"]["epoch_ms"] == 90


def _crash_after_execution(path: str, c: str) -> list[str]:
    """Run a compaction up to (not including) its commit, as a crashed job leaves it."""
    t = HoodieTable(path)
    plan = t.timeline.compaction_plan(c)
    T.transition_to_inflight(t.storage, I.Instant(c, I.COMPACTION, I.State.REQUESTED), b"")
    for op in plan.operations:
        P.materialize_links(t.storage, P.operation_links(op), "symlink")
    paths = []
    for i, op in enumerate(plan.operations):
        st = execute_operation(t.reload(), c, op, token=N.write_token(i, 5, i))
        paths.append(st.path)
        if st.split_file:
            paths.append(st.split_file)
    return paths


@pytest.mark.parametrize("exact", [False, True])
def test_rollback_then_rerun_gives_the_same_result(tmp_path: Path, exact: bool) -> None:
    path = str(tmp_path / "t")
    s = Setup(ordering=False)
    _history(path, s)
    write(path, "upsert", [(2, 45, 7), (4, 5, 8)], s)
    before = snapshot(path)
    history = [i.timestamp for i in HoodieTable(path).timeline.completed().instants]
    c = schedule_compaction(path, event_time_config(25, exact=exact))
    twin = str(tmp_path / "twin")
    shutil.copytree(path, twin, symlinks=True)
    written = _crash_after_execution(path, c)
    # While it is inflight, every read still sees the table as before.
    assert snapshot(path) == before
    for inst in history:
        assert snapshot(path, as_of=inst) == snapshot(twin, as_of=inst)
    assert rows(hoodie.read_table(path, query_type="incremental", begin=history[0])) == \
        rows(hoodie.read_table(twin, query_type="incremental", begin=history[0]))
    r = rollback_compaction(path, c)
    assert set(written) <= set(r.deleted)
    assert r.rollback_instant and (tmp_path / "t" / ".hoodie" / f"{r.rollback_instant}.rollback").exists()
    assert not (tmp_path / "t" / ".hoodie" / f"{c}.compaction.inflight").exists()
    assert (tmp_path / "t" / ".hoodie" / f"{c}.compaction.requested").exists()
    assert sorted(os.listdir(tmp_path / "t" / "all")) == sorted(os.listdir(Path(twin) / "all"))
    (again,) = run_compaction(path, c)
    (clean,) = run_compaction(twin, c)
    assert snapshot(path) == snapshot(twin) == before
    assert read_optimized(path) == read_optimized(twin)
    assert sorted(os.listdir(tmp_path / "t" / "all")) == sorted(os.listdir(Path(twin) / "all"))
    assert again.metrics["recordsWritten"] == clean.metrics["recordsWritten"]
    _hudi_rs_agrees(path)


def test_run_rolls_back_an_inflight_compaction_first(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    before = snapshot(path)
    c = schedule_compaction(path, event_time_config(25))
    _crash_after_execution(path, c)
    (res,) = run_compaction(path)
    assert res.rolled_back_first and res.instant == c
    assert snapshot(path) == before
    bases = [n for n in os.listdir(tmp_path / "t" / "all") if n.endswith(f"_{c}.parquet")]
    assert len(bases) == 1


def test_rollback_refuses_completed_and_unknown(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    c = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c)
    with pytest.raises(CompactionError, match="restore"):
        rollback_compaction(path, c)
    with pytest.raises(CompactionError, match="no compaction plan"):
        rollback_compaction(path, "20000101000000000")


def test_incremental_and_time_travel_unchanged_by_partial_compaction(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    s = Setup(ordering=False)
    instants = _history(path, s)
    expected_tt = {i: snapshot(path, as_of=i) for i in instants}
    expected_inc = {i: rows(hoodie.read_table(path, query_type="incremental", begin=i)) for i in instants}
    c = schedule_compaction(path, event_time_config(25))
    run_compaction(path, c)
    for i in instants:
        assert snapshot(path, as_of=i) == expected_tt[i]
        assert rows(hoodie.read_table(path, query_type="incremental", begin=i)) == expected_inc[i]
    # Nothing is new after the compaction: linked records are not changes of the compaction instant.
    assert rows(hoodie.read_table(path, query_type="incremental", begin=c)) == []
    assert snapshot(path, as_of=c) == snapshot(path)
    later = write(path, "upsert", [(2, 60, 6)], s)
    inc = rows(hoodie.read_table(path, query_type="incremental", begin=c))
    assert len(inc) == 1 and inc[0][0] == repr(("int", 2))
    assert snapshot(path, as_of=c) == expected_tt[instants[-1]]
    assert rows(hoodie.read_table(path, query_type="incremental", begin=instants[-1], end=later)) == inc


def test_duplicate_link_of_target_in_same_slice_is_read_once(tmp_path: Path) -> None:
    """The reader rule behind incremental/time-travel reads: a recorded link whose target is read in
    the same slice is skipped (here forced by listing a target under the link's slice)."""
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.slice.reader import _compaction_skips

    path = str(tmp_path / "t")
    _history(path, Setup(ordering=False))
    c = schedule_compaction(path, event_time_config(25))
    (res,) = run_compaction(path, c)
    t = HoodieTable(path)
    view = FileSystemView(t.storage, t.timeline)
    (sl,) = view.latest_file_slices("all")
    link = res.links[0]
    from hoodie.format.file_group.fsview import LogFile

    target = LogFile("all", link.target, N.parse_log_file(link.target), 1)
    sl.log_files.append(target)
    assert _compaction_skips(t, view, [sl]) == frozenset({link.link_path})


def test_late_log_in_old_slice_stops_the_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    c = schedule_compaction(path, UNBOUNDED)
    # A writer that planned before the compaction was requested appends to the old slice.
    t = HoodieTable(path)
    (sl,) = latest_slices(path)
    inflight = W.start_commit(t, I.DELTA_COMMIT, operation_type="UPSERT")
    schema = t.avro_schema()
    import pyarrow as pa_

    data = W.add_meta_columns(pa_.table({"k": pa_.array([9], pa_.int64()), "part": ["all"],
                                         "ts": pa_.array([9], pa_.int64()), "v": pa_.array([9], pa_.int64())}),
                              instant=inflight.timestamp, record_keys=pa_.array(["9"]), partition_paths="all",
                              file_name=sl.file_id)
    st = W.write_log_file(t.storage, partition="all", file_id=sl.file_id, base_instant=sl.base_instant,
                          instant=inflight.timestamp, token="9-9-9", write=W.LogWrite(data=data), avro_schema=schema)
    W.complete_commit(t, inflight, W.commit_metadata_for([st], avro_schema=schema, operation_type="UPSERT"))
    with pytest.raises(CompactionError, match="after compaction"):
        run_compaction(path, c)
    assert not (tmp_path / "t" / ".hoodie" / f"{c}.commit").exists()
    assert (tmp_path / "t" / ".hoodie" / f"{c}.compaction.inflight").exists()


def test_missing_target_fails_before_anything_is_committed(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    c = schedule_compaction(path, event_time_config(25))
    op = HoodieTable(path).timeline.compaction_plan(c).operations[0]
    os.unlink(tmp_path / "t" / "all" / op.symlink_operations[0].target)
    with pytest.raises(CompactionError, match="missing"):
        run_compaction(path, c)
    assert not (tmp_path / "t" / ".hoodie" / f"{c}.commit").exists()


def test_plan_without_marker_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    c = schedule_compaction(path, event_time_config(25))
    t = HoodieTable(path)
    op = t.timeline.compaction_plan(c).operations[0]
    with pytest.raises(CompactionError, match="marker"):
        execute_operation(t, c, op, plan_extra={})
    with pytest.raises(CompactionError, match="marker"):  # the operation's Avro record is accepted too
        execute_operation(t, c, op.to_avro(), plan_extra={})


def test_stock_plan_without_extensions_runs(tmp_path: Path) -> None:
    """A plan as Java Hudi writes it (no symlinkOperations field at all) runs as a full compaction."""
    from hoodie.format.timeline import plans as PL

    path = str(tmp_path / "t")
    _history(path)
    before = snapshot(path)
    t = HoodieTable(path)
    (sl,) = latest_slices(path)
    op = PL.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.sorted_logs()],
                                 sl.file_id, "all", {})
    del op["symlinkOperations"]
    c = t.new_instant_time()
    plan = PL.compaction_plan([op])
    T.create_requested(t.storage, c, I.COMPACTION, PL.write_avro_metadata("HoodieCompactionPlan", plan))
    run_compaction(path, c)
    assert snapshot(path) == before == read_optimized(path)


def test_executor_hook_with_pickled_tasks_and_failed_attempts(tmp_path: Path) -> None:
    """The Spark engine's path: tasks travel pickled, a failed attempt leaves files, the retry wins."""
    path = str(tmp_path / "t")
    s = Setup(partitioned=True)
    write(path, "insert", [(k, 1, 0) for k in range(6)], s)
    write(path, "upsert", [(k, 10 * k, k) for k in range(6)], s)
    write(path, "upsert", [(k, 100 + k, k) for k in range(0, 6, 2)], s)
    before = snapshot(path)
    c = schedule_compaction(path, event_time_config(35, exact=True))
    seen = []

    def spark_like(tasks):
        out = []
        for task in reversed(tasks):  # any order
            remote = pickle.loads(pickle.dumps(task))
            execute_task(remote, token=f"{remote.task_id}-7-1")        # attempt that "failed"
            out.append(pickle.loads(pickle.dumps(execute_task(remote, token=f"{remote.task_id}-7-2"))))
            seen.append(remote.operation.file_id)
        return out

    (res,) = run_compaction(path, c, executor=spark_like)
    assert sorted(seen) == sorted(op.file_id for op in HoodieTable(path).timeline.compaction_plan(c).operations)
    for part in ("p0", "p1"):
        names = os.listdir(tmp_path / "t" / part)
        assert not any("-7-1" in n for n in names)
        assert len([n for n in names if n.endswith(f"_{c}.parquet")]) == 1
    assert snapshot(path) == before
    _hudi_rs_agrees(path)


def test_executor_missing_stats_leaves_compaction_inflight(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    c = schedule_compaction(path, UNBOUNDED)
    with pytest.raises(CompactionError, match="executor returned 0"):
        run_compaction(path, c, executor=lambda tasks: [])
    assert not (tmp_path / "t" / ".hoodie" / f"{c}.commit").exists()
    before = snapshot(path)
    (res,) = run_compaction(path, c)
    assert res.rolled_back_first and snapshot(path) == before
    assert (tmp_path / "t" / ".hoodie" / f"{c}.commit").exists()


def test_all_records_deleted_still_writes_a_base_file(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0), (2, 1, 0)])
    write(path, "delete", [(1, 2, 0), (2, 2, 0)])
    c = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c)
    assert snapshot(path) == [] and read_optimized(path) == []
    assert any(n.endswith(f"_{c}.parquet") for n in os.listdir(tmp_path / "t" / "all"))
    assert rows(read_hudi_rs(path)) == []


def test_reader_ignores_outputs_of_a_running_compaction(tmp_path: Path) -> None:
    """While a compaction runs, its links are outputs, not data: even a *prefix* of them (which our
    executor never leaves, but another one could) must not replay old values after newer ones."""
    path = str(tmp_path / "t")
    s = Setup(ordering=False)
    write(path, "insert", [(1, 1, 0), (2, 1, 0)], s)
    write(path, "upsert", [(2, 5, 1)], s)
    write(path, "upsert", [(1, 30, 1)], s)
    write(path, "upsert", [(1, 40, 2)], s)
    before = snapshot(path)
    instants = [i.timestamp for i in HoodieTable(path).timeline.completed().instants]
    inc = rows(hoodie.read_table(path, query_type="incremental", begin=instants[0]))
    c = schedule_compaction(path, event_time_config(10))
    t = HoodieTable(path)
    (op,) = t.timeline.compaction_plan(c).operations
    first, _second = P.operation_links(op)
    T.transition_to_inflight(t.storage, I.Instant(c, I.COMPACTION, I.State.REQUESTED), b"")
    P.materialize_link(t.storage, first, "symlink")  # value 1 of key 1, older than the value 2 after it
    assert snapshot(path) == before
    assert snapshot(path, as_of=c) == before
    assert rows(hoodie.read_table(path, query_type="incremental", begin=instants[0])) == inc
    write(path, "upsert", [(2, 50, 7)], s)  # a write while it runs lands above the reserved versions
    after_write = snapshot(path)
    assert dict((r[0], r[3]) for r in after_write)[repr(("int", 2))] == repr(("int", 7))
    (res,) = run_compaction(path, c)
    assert res.rolled_back_first and snapshot(path) == after_write
    _hudi_rs_agrees(path)


def test_executor_returning_plain_write_stats_keeps_split_files(tmp_path: Path) -> None:
    """An engine may rebuild plain WriteStats from its tasks' results: split files must survive."""
    from hoodie.format.timeline.commit_metadata import WriteStat

    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0), (2, 1, 0)])
    write(path, "upsert", [(1, 10, 1), (2, 90, 2)])
    before = snapshot(path)
    c = schedule_compaction(path, event_time_config(50, exact=True))

    def plain(tasks):
        out = []
        for task in tasks:
            st = execute_task(task, token=f"{task.task_id}-3-1")
            out.append(WriteStat.from_json(st.to_json()))
        return out

    run_compaction(path, c, executor=plain)
    assert snapshot(path) == before
    assert any(N.parse_log_file(n).base_instant == c for n in log_names(path))


def test_pending_older_write_blocks_the_run(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path)
    t = HoodieTable(path)
    c = schedule_compaction(path, UNBOUNDED)
    # A write that raced with scheduling: older than C, still pending.
    older = I.epoch_ms_to_instant(I.instant_to_epoch_ms(c, t.timeline_timezone) - 1, t.timeline_timezone)
    T.create_requested(t.storage, older, I.DELTA_COMMIT)
    with pytest.raises(CompactionError, match="still pending"):
        run_compaction(path, c)
    assert not (tmp_path / "t" / ".hoodie" / f"{c}.compaction.inflight").exists()
    (tmp_path / "t" / ".hoodie" / f"{older}.deltacommit.requested").unlink()
    run_compaction(path, c)
    assert snapshot(path) == read_optimized(path)


@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_clean_after_partial_compaction_keeps_what_links_need(tmp_path: Path, mode: str) -> None:
    """The links contract with the clean service: cleaning the old slice keeps symlink targets."""
    from hoodie.services.clean import run_clean

    path = str(tmp_path / "t")
    _history(path)
    c = schedule_compaction(path, event_time_config(25))
    (res,) = run_compaction(path, c, {"hoodie.compaction.partial.link.mode": mode})
    expected, expected_ro = snapshot(path), read_optimized(path)
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    names = set(os.listdir(tmp_path / "t" / "all"))
    assert {l.link for l in res.links} <= names
    assert ({l.target for l in res.links} <= names) == (mode == "symlink")
    assert snapshot(path) == expected and read_optimized(path) == expected_ro
    _hudi_rs_agrees(path)


@pytest.mark.parametrize("version", [6, 9])
def test_threshold_survives_archival_of_the_compaction_that_published_it(tmp_path: Path, version: int) -> None:
    """T is read from the last event-time compaction that covered the table; archival moving it (and every
    later compaction) out of the active timeline must not make the read-optimized view's T unknown."""
    from hoodie.services.archive import run_archival
    from hoodie.services.clean import run_clean

    path = str(tmp_path / "t")
    extra = {"hoodie.write.table.version": str(version)}
    s = Setup()

    def write_v(op: str, rs: list[tuple[int, int, int]]) -> str:
        return write_arrow(path, batch(rs, s), {**options(s, op), **extra})

    write_v("insert", [(1, 1, 0), (2, 1, 0)])
    write_v("upsert", [(1, 10, 1)])
    c = schedule_compaction(path, event_time_config(15, **extra))
    run_compaction(path, c, event_time_config(15, **extra))
    assert freshness(path)["threshold"]["epoch_ms"] == 15
    for n in range(8):  # later writes, no compaction: the compaction ages out of the active window
        write_v("upsert", [(2, 100 + n, n)])
    arch = {**event_time_config(), **extra, "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
            "hoodie.cleaner.commits.retained": "1"}
    run_clean(path, arch)
    run_archival(path, arch)
    assert HoodieTable(path).timeline.get(c) is None, "the test needs the compaction archived"
    f = freshness(path)
    assert (f["threshold"]["epoch_ms"], f["threshold_instant"]) == (15, c)
    # Later calls read nothing that grows with the history: no listing of the version-6 archive (one file per
    # archival) while no archival ran. (The 1.x history is read by the file-system view for completion
    # times of archived writes; LSM compaction keeps its file count bounded.)
    from hoodie.format.storage import Storage

    listed: list[str] = []
    real = Storage.list_dir

    def list_dir(self: Storage, rel: str = "") -> list:
        listed.append(rel)
        return real(self, rel)

    Storage.list_dir = list_dir  # type: ignore[method-assign]
    try:
        for _ in range(3):
            assert freshness(path)["threshold_instant"] == c
    finally:
        Storage.list_dir = real  # type: ignore[method-assign]
    assert not [r for r in listed if "archived" in r], listed
    # A newer compaction archived in turn: the next call sees the new archive and its T.
    write_v("upsert", [(1, 20, 9)])
    c2 = schedule_compaction(path, event_time_config(30, **extra))
    run_compaction(path, c2, event_time_config(30, **extra))
    for n in range(8):
        write_v("upsert", [(2, 200 + n, 10 + n)])
    run_clean(path, arch)
    run_archival(path, arch)
    assert HoodieTable(path).timeline.get(c2) is None, "the test needs the second compaction archived"
    f = freshness(path)
    assert (f["threshold"]["epoch_ms"], f["threshold_instant"]) == (30, c2)
