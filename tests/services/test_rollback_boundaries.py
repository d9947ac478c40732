"""Deterministic tests at the rollback's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): resumed and new rollback instants, files found without markers, refusals, the entry
point (hoodie.services.rollback.operation), the pending-compaction guard and the rollback of failed writes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie

from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction, schedule_compaction
from tests.services.test_compaction_support import (
    UNBOUNDED, Setup, write,
)
from tests.services.boundaries_support import T, _Stopped, _stop_at


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
    real_open = R.open_table

    def recording(table_or_path: "str | HoodieTable", storage_options: "dict | None" = None, **kw) -> HoodieTable:
        opened.append((table_or_path, storage_options))
        table = real_open(table_or_path, storage_options, **kw)
        opened.append(("storage options", table.storage.storage_options))
        return table

    monkeypatch.setattr(R, "open_table", recording)
    options = {"region": "nowhere"}  # ignored by local storage
    res = R.rollback(path, c2, storage_options=options)
    assert res.rolled_back == c2 and opened[:2] == [(path, options), ("storage options", options)]
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
