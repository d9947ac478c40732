"""The cleaner: policies, retention of what queries need, replaced file groups and empty partitions,
pending compactions and writes, partial-compaction links, crash recovery, the CLI, a Java fixture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie import write_arrow
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.file_group.links import LINKS_KEY, Link, encode_links
from hoodie.format.slice.reader import read_file_slice
from hoodie.format.table import HoodieTable
from hoodie.services.clean import (
    CleanConfig, CleanError, CleanPlan, pending_operations, plan_clean, run_clean, maybe_clean_after_commit,
)
from hoodie.services.ttl.service import delete_partitions
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

COLS = ["k", "part", "v"]


def options(table_type: str = "COPY_ON_WRITE", op: str = "upsert", **extra: str) -> dict[str, str]:
    """Write options of the small test tables: key k, partition part, commit-time merging."""
    o = {
        "hoodie.table.name": "clean_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.operation": op,
        "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    }
    o.update(extra)
    return o


def batch(rows: list[tuple[int, str, int]]) -> pa.Table:
    """A batch of (key, partition, value) rows."""
    return pa.table({
        "k": pa.array([r[0] for r in rows], pa.int64()),
        "part": [r[1] for r in rows],
        "v": pa.array([r[2] for r in rows], pa.int64()),
    })


def rows(t: pa.Table) -> list[tuple]:
    """Sorted comparable rows of the data columns (empty tables included)."""
    if t.num_rows == 0:
        return []
    return sorted(rows_of(t, COLS))


def all_files(path: str | Path) -> set[str]:
    """Every file under the table, .hoodie excluded, relative to the base path."""
    base = Path(path)
    return {str(p.relative_to(base)) for p in base.rglob("*")
            if (p.is_file() or p.is_symlink()) and ".hoodie" not in p.relative_to(base).parts[:1]}


def compact_all(path: str, partial_links: bool = False) -> Optional[str]:
    """A minimal full compaction of every MOR slice that has log files (test helper, independent of
    the compaction service): plan, merged base files under the compaction instant, commit."""
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    slices = [sl for p in view.partitions() for sl in view.latest_file_slices(p) if sl.log_files]
    if not slices:
        return None
    c = table.new_instant_time()
    ops = [plans.compaction_operation(sl.base_instant, sl.base_file.name if sl.base_file else None,
                                      [lf.name for lf in sl.sorted_logs()], sl.file_id, sl.partition, {})
           for sl in slices]
    req = T.create_requested(table.storage, c, I.COMPACTION,
                             plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan(ops)))
    inf = T.transition_to_inflight(table.storage, req, b"")
    schema = table.arrow_schema()
    stats = []
    for i, sl in enumerate(slices):
        recs = read_file_slice(table, sl, schema)
        token = N.write_token(i, 9, i)
        name = N.base_file_name(sl.file_id, token, c)
        idx = recs.schema.get_field_index("_hoodie_file_name")
        recs = recs.set_column(idx, schema.field("_hoodie_file_name"), pa.array([name] * recs.num_rows, pa.string()))
        stats.append(W.write_base_file(table.storage, partition=sl.partition, file_id=sl.file_id, instant=c,
                                       token=token, records=recs, prev_commit=sl.base_instant))
    meta = W.commit_metadata_for(stats, avro_schema=table.avro_schema(), operation_type="COMPACT", compacted=True)
    T.transition_to_complete(table.storage, inf, meta)  # JSON or Avro, as the table's layout writes it
    return c


def drop_partition(path: str, partition: str) -> Optional[str]:
    """A delete_partition replacecommit of one partition (None when it holds no live file group)."""
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    fids = sorted({s.file_id for s in view.latest_file_slices(partition)})
    if not fids:
        return None
    return delete_partitions(table, {partition: fids}).timestamp


def _history(path: str, n: int, table_type: str = "COPY_ON_WRITE") -> list[tuple[str, list[tuple]]]:
    """n upserts of the same 4 keys in 2 partitions; returns (instant, expected rows) per commit."""
    out = []
    for i in range(n):
        data = [(k, f"p{k % 2}", i * 10 + k) for k in range(4)]
        inst = write_arrow(path, batch(data), options(table_type))
        out.append((inst, rows(batch(data))))
    return out


def test_keep_latest_commits_keeps_what_time_travel_needs(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hist = _history(path, 6)
    cfg = {"hoodie.cleaner.commits.retained": "3"}
    res = run_clean(path, cfg)
    assert res.instant is not None
    ectr = res.plan.earliest_instant_to_retain
    assert ectr is not None and ectr.timestamp == hist[3][0]  # the 3rd newest of 6 commits
    table = HoodieTable(path)
    # Every COW file group now has: the newest slice before ECTR and the slices from ECTR on.
    for p in ("p0", "p1"):
        for fg in FileSystemView(table.storage, table.timeline).file_groups(p).values():
            assert sorted(fg.slices) == [hist[2][0], hist[3][0], hist[4][0], hist[5][0]]
    assert rows(hoodie.read_table(path)) == hist[-1][1] == rows(read_hudi_rs(path))
    for inst, expected in hist[2:]:
        assert rows(hoodie.read_table(path, as_of=inst)) == expected
        assert rows(read_hudi_rs(path, as_of=inst)) == expected
    # Completed clean instant files: Avro plan (requested, inflight) and metadata.
    tl = table.timeline
    done = tl.completed().by_actions(I.CLEAN).last()
    md = tl.avro_metadata(done)
    assert md["earliestCommitToRetain"] == ectr.timestamp
    assert md["totalFilesDeleted"] == 2 * 2
    assert md["partitionMetadata"]["p0"]["policy"] == "KEEP_LATEST_COMMITS"
    plan = plans.read_avro_metadata(tl.read_file(f"{done.timestamp}.clean.requested"))
    assert plan["version"] == 2 and plan["policy"] == "KEEP_LATEST_COMMITS"
    assert tl.read_file(f"{done.timestamp}.clean.inflight") == tl.read_file(f"{done.timestamp}.clean.requested")
    # A second clean has nothing to do and writes no instant.
    again = run_clean(path, cfg)
    assert again.instant is None and again.plan.is_empty()
    assert len(HoodieTable(path).timeline.by_actions(I.CLEAN)) == 1


def test_nothing_to_clean_writes_no_instant(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path, 3)
    res = run_clean(path)
    assert res.instant is None
    assert not HoodieTable(path).timeline.by_actions(I.CLEAN)


def test_keep_latest_file_versions(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hist = _history(path, 5)
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                           "hoodie.cleaner.fileversions.retained": "2"})
    assert res.plan.earliest_instant_to_retain is None
    table = HoodieTable(path)
    for p in ("p0", "p1"):
        for fg in FileSystemView(table.storage, table.timeline).file_groups(p).values():
            assert sorted(fg.slices) == [hist[3][0], hist[4][0]]
    assert rows(hoodie.read_table(path)) == hist[-1][1] == rows(read_hudi_rs(path))
    assert rows(read_hudi_rs(path, as_of=hist[3][0])) == hist[3][1]


def test_keep_latest_by_hours_with_old_commits(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hist = []
    for i, inst in enumerate(["20200101000000000", "20200102000000000", "20200103000000000"]):
        data = [(k, f"p{k % 2}", i * 10 + k) for k in range(4)]
        write_arrow(path, batch(data), options(), instant=inst)
        hist.append((inst, rows(batch(data))))
    # All commits are outside a 24 hour window: only the state after the newest commit must stay.
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS"})
    assert res.plan.earliest_instant_to_retain.timestamp == hist[-1][0]
    table = HoodieTable(path)
    for p in ("p0", "p1"):
        for fg in FileSystemView(table.storage, table.timeline).file_groups(p).values():
            assert sorted(fg.slices) == [hist[1][0], hist[2][0]]
    assert rows(read_hudi_rs(path)) == hist[-1][1]
    # A window covering the 2nd commit keeps the slices it needs.
    path2 = str(tmp_path / "t2")
    for i in range(3):
        write_arrow(path2, batch([(k, f"p{k % 2}", i) for k in range(4)]), options())
    plan = plan_clean(HoodieTable(path2), {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS",
                                           "hoodie.cleaner.hours.retained": "1"})
    assert plan.is_empty() and plan.earliest_instant_to_retain is not None


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_replaced_file_groups_and_empty_partition_are_removed(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a/x", 1), (2, "b/y", 2), (3, "b/y", 3)]), options(table_type))
    write_arrow(path, batch([(2, "b/y", 20)]), options(table_type))
    dropped = drop_partition(path, "a/x")
    # Under KEEP_LATEST_COMMITS the replaced group stays until the replacecommit leaves the window.
    cfg = {"hoodie.cleaner.commits.retained": "2"}
    first = run_clean(path, cfg)
    assert (tmp_path / "t" / "a" / "x").is_dir()
    assert first.instant is None or "a/x" not in first.plan.files_to_delete
    for i in range(2):
        write_arrow(path, batch([(3, "b/y", 30 + i)]), options(table_type))
    res = run_clean(path, cfg)
    assert res.plan.earliest_instant_to_retain.timestamp > dropped
    assert "a/x" in res.deleted_partitions
    assert not (tmp_path / "t" / "a").exists()  # the emptied parent folder goes too
    md = HoodieTable(path).timeline.avro_metadata(HoodieTable(path).timeline.by_actions(I.CLEAN).last())
    assert md["partitionMetadata"]["a/x"]["isPartitionDeleted"] is True
    assert rows(hoodie.read_table(path)) == rows(read_hudi_rs(path))
    assert {r["k"] for r in hoodie.read_table(path).to_pylist()} == {2, 3}


def test_file_versions_removes_replaced_groups_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1), (2, "b", 2)]), options())
    drop_partition(path, "a")
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert res.deleted_partitions == ["a"]
    assert not (tmp_path / "t" / "a").exists()
    assert rows(read_hudi_rs(path)) == rows(batch([(2, "b", 2)]))
    # Writing into the deleted partition again works (a new folder and metafile).
    write_arrow(path, batch([(5, "a", 5)]), options())
    assert {r["k"] for r in hoodie.read_table(path).to_pylist()} == {2, 5}
    assert {r["k"] for r in read_hudi_rs(path).to_pylist()} == {2, 5}


def test_partition_with_uncommitted_files_is_not_deleted(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1), (2, "b", 2)]), options())
    drop_partition(path, "a")
    stray = tmp_path / "t" / "a" / "notes.txt"
    stray.write_text("not hudi data")
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert "a" not in res.deleted_partitions and stray.exists()
    assert any("notes.txt" in n for n in res.plan.notes)


def test_pending_compaction_slices_are_kept(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1), (2, "a", 2)]), options("MERGE_ON_READ"))
    write_arrow(path, batch([(1, "a", 10)]), options("MERGE_ON_READ"))
    c1 = compact_all(path)
    write_arrow(path, batch([(2, "a", 20)]), options("MERGE_ON_READ"))
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    (sl,) = view.latest_file_slices("a")
    assert sl.base_instant == c1 and sl.log_files
    # Schedule (but do not run) a compaction of the c1 slice.
    c2 = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.log_files],
                                    sl.file_id, "a", {})
    T.create_requested(table.storage, c2, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    before = all_files(path)
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                           "hoodie.cleaner.fileversions.retained": "1"})
    after = all_files(path)
    # The pre-compaction slice (base at the first deltacommit + its log) goes; the c1 slice, which
    # the pending plan reads, stays with its base file and log.
    assert sl.base_file.path in after and all(lf.path in after for lf in sl.log_files)
    gone = before - after
    assert gone and all(c1 not in f for f in gone)
    assert res.plan.earliest_instant_to_retain is None
    ops = pending_operations(HoodieTable(path))
    assert ops.compaction_base[("a", sl.file_id)] == c1
    assert rows(hoodie.read_table(path)) == rows(batch([(1, "a", 10), (2, "a", 20)]))


def test_pending_write_caps_the_retention_window(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hist = _history(path, 4)
    table = HoodieTable(path)
    # A write that started after the 2nd commit and is still running (inflight, with a marker).
    pending = I.epoch_ms_to_instant(I.instant_to_epoch_ms(hist[1][0]) + 1)
    assert hist[1][0] < pending < hist[2][0]
    T.transition_to_inflight(table.storage, T.create_requested(table.storage, pending, I.COMMIT), b"")
    W.create_marker(table.storage, pending, "p0", N.base_file_name("f-0", "0-0-0", pending), "CREATE")
    plan = plan_clean(table.reload(), {"hoodie.cleaner.commits.retained": "1"})
    # ECTR would be the 4th commit; the pending write pulls it back to the last commit before it.
    assert plan.earliest_instant_to_retain.timestamp == hist[1][0]
    ops = pending_operations(table)
    assert ops.write_partitions == {"p0": [f"commit {pending}"]}


def test_unknown_pending_write_blocks_partition_deletion(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1), (2, "b", 2)]), options())
    drop_partition(path, "a")
    table = HoodieTable(path)
    T.create_requested(table.storage, table.new_instant_time(), I.COMMIT)  # no markers yet
    plan = plan_clean(table.reload(), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert plan.files_to_delete.get("a") and plan.partitions_to_delete == []


def test_interrupted_clean_is_reexecuted_from_its_plan(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path, 4)
    table = HoodieTable(path)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    plan = plan_clean(table, cfg)
    doomed = [f for fs in plan.files_to_delete.values() for f in fs]
    assert len(doomed) == 6
    # Simulate a crash in the middle of execution: plan written, inflight, half the files deleted.
    ts = table.new_instant_time()
    data = plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage))
    T.transition_to_inflight(table.storage, T.create_requested(table.storage, ts, I.CLEAN, data), data)
    for f in doomed[:3]:
        os.unlink(tmp_path / "t" / f)
    res = run_clean(path, cfg)
    assert [r.instant for r in res.recovered] == [ts]
    assert res.instant is None  # everything was already covered by the recovered clean
    assert all(not (tmp_path / "t" / f).exists() for f in doomed)
    md = HoodieTable(path).timeline.avro_metadata(I.Instant(ts, I.CLEAN))
    assert md["totalFilesDeleted"] == 6 and not any(pm["failedDeleteFiles"] for pm in md["partitionMetadata"].values())
    # A requested-only clean (crash before inflight) is also picked up.
    write_arrow(path, batch([(0, "p0", 99)]), options())
    table.reload()
    plan = plan_clean(table, cfg)
    ts2 = table.new_instant_time()
    T.create_requested(table.storage, ts2, I.CLEAN,
                       plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage)))
    res2 = run_clean(path, cfg)
    assert [r.instant for r in res2.recovered] == [ts2]
    assert HoodieTable(path).timeline.get(ts2).is_completed


def test_clean_plan_roundtrip_and_java_paths(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path, 3)
    table = HoodieTable(path)
    plan = plan_clean(table, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                              "hoodie.cleaner.fileversions.retained": "1"})
    rec = plans.read_avro_metadata(plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage)))
    assert all(i["filePath"].startswith(table.storage.uri()) for v in rec["filePathsToBeDeletedPerPartition"].values()
               for i in v)
    back = CleanPlan.from_avro(rec, table.storage)
    assert back.files_to_delete == plan.files_to_delete
    # Java writes file: URIs.
    for infos in rec["filePathsToBeDeletedPerPartition"].values():
        for i in infos:
            i["filePath"] = "file:" + i["filePath"]
    assert CleanPlan.from_avro(rec, table.storage).files_to_delete == plan.files_to_delete
    rec["filePathsToBeDeletedPerPartition"]["p0"][0]["filePath"] = "/elsewhere/x.parquet"
    with pytest.raises(CleanError, match="outside the table"):
        CleanPlan.from_avro(rec, table.storage)


def test_config_errors() -> None:
    with pytest.raises(CleanError, match="KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS"):
        CleanConfig.from_options({"hoodie.cleaner.policy": "KEEP_SOME"})
    with pytest.raises(CleanError, match="at least 1"):
        CleanConfig.from_options({"hoodie.cleaner.commits.retained": "0"})
    assert CleanConfig.from_options({"hoodie.clean.commits.retained": "4"}).commits_retained == 4
    assert CleanConfig.from_options({"hoodie.cleaner.policy": "keep_latest_by_hours"}).policy == "KEEP_LATEST_BY_HOURS"


def test_automatic_clean_after_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path, 3)
    table = HoodieTable(path)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1",
           "hoodie.clean.max.commits": "2"}
    assert maybe_clean_after_commit(table, {**cfg, "hoodie.clean.automatic": "false"}) is None
    res = maybe_clean_after_commit(table, cfg)
    assert res is not None and res.instant is not None
    write_arrow(path, batch([(0, "p0", 7)]), options())
    assert maybe_clean_after_commit(table, cfg) is None  # 1 commit since the last clean < 2


def _symlink_compaction(path: str) -> tuple[str, Link]:
    """A partial compaction by hand: the base merges the first log only; the second log is kept
    visible through a symlink under the compaction instant, recorded as the links contract says."""
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    (sl,) = view.latest_file_slices("a")
    logs = sl.sorted_logs()
    assert len(logs) == 2
    c = table.new_instant_time()
    link_name = N.log_file_name(sl.file_id, c, 1, "0-0-0")
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [logs[0].name], sl.file_id, "a", {},
                                    symlink_operations=[(link_name, logs[1].name)])
    req = T.create_requested(table.storage, c, I.COMPACTION,
                             plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    inf = T.transition_to_inflight(table.storage, req, b"")
    part = type(sl)(sl.partition, sl.file_id, sl.base_instant, sl.base_file, [logs[0]])
    schema = table.arrow_schema()
    recs = read_file_slice(table, part, schema)
    name = N.base_file_name(sl.file_id, "0-9-0", c)
    recs = recs.set_column(recs.schema.get_field_index("_hoodie_file_name"), schema.field("_hoodie_file_name"),
                           pa.array([name] * recs.num_rows, pa.string()))
    stat = W.write_base_file(table.storage, partition="a", file_id=sl.file_id, instant=c, token="0-9-0",
                             records=recs, prev_commit=sl.base_instant)
    link = Link("a", sl.file_id, link_name, logs[1].name, "symlink")
    table.storage.symlink(link.target_path, link.link_path)
    meta = W.commit_metadata_for([stat], avro_schema=table.avro_schema(), operation_type="COMPACT",
                                 compacted=True, extra={LINKS_KEY: encode_links([link])})
    T.transition_to_complete(table.storage, inf, meta.to_json_bytes())
    return c, link


def _linked_table(path: str, mor: dict[str, str]) -> tuple[str, Link]:
    """A merge-on-read file group in partition "a" with two log files, partially compacted by hand: the
    second log stays visible through a symlink (:func:`_symlink_compaction`)."""
    write_arrow(path, batch([(1, "a", 1), (2, "a", 2)]), mor)
    write_arrow(path, batch([(1, "a", 10)]), mor)
    write_arrow(path, batch([(2, "a", 20)]), mor)
    return _symlink_compaction(path)


def test_live_symlink_targets_survive_and_links_go_with_their_slice(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    mor = options("MERGE_ON_READ")
    c, link = _linked_table(path, mor)
    expected = rows(batch([(1, "a", 10), (2, "a", 20)]))
    assert rows(hoodie.read_table(path)) == expected
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    res = run_clean(path, cfg)
    base = tmp_path / "t"
    assert (base / link.target_path).exists(), "a live symlink's target was deleted"
    assert (base / link.link_path).exists() and os.path.islink(base / link.link_path)
    assert any("live link" in n for n in res.plan.notes)
    assert rows(hoodie.read_table(path)) == expected
    # A later full compaction supersedes the linked slice: the link goes with its slice, and then
    # the target is no longer protected.
    write_arrow(path, batch([(1, "a", 100)]), mor)
    compact_all(path)
    run_clean(path, cfg)
    assert not os.path.lexists(base / link.link_path)
    assert not (base / link.target_path).exists()
    assert rows(hoodie.read_table(path)) == rows(batch([(1, "a", 100), (2, "a", 20)]))


def test_archival_keeps_a_compaction_whose_links_are_live_so_the_cleaner_still_sees_them(tmp_path: Path) -> None:
    """The links' only record is the compaction's commit: archived, the cleaner no longer knew the symlink's
    target was live and deleted it under the link (seen with a writer, compaction and cleaner in separate
    processes). Archival stops before such a compaction until its links are gone."""
    from hoodie.services.archive import run_archival

    path = str(tmp_path / "t")
    mor = options("MERGE_ON_READ")
    c, link = _linked_table(path, mor)
    for i in range(8):  # commits elsewhere: the linked slice in "a" stays the latest
        write_arrow(path, batch([(100 + i, "b", i)]), mor)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1",
           "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    run_clean(path, cfg)
    res = run_archival(path, cfg)
    assert res.archived and all(ts < c for ts in res.archived)
    assert res.plan.bounds[0].timestamp == c and "links" in res.plan.bounds[0].reason
    assert c in [i.timestamp for i in HoodieTable(path).timeline.completed().instants]
    run_clean(path, cfg)
    base = tmp_path / "t"
    assert (base / link.target_path).exists(), "a live symlink's target was deleted"
    expected = rows(batch([(1, "a", 10), (2, "a", 20)] + [(100 + i, "b", i) for i in range(8)]))
    assert rows(hoodie.read_table(path)) == expected
    # A full compaction of the file group and a clean end the links: archival then passes the compaction.
    write_arrow(path, batch([(1, "a", 100)]), mor)
    compact_all(path)
    run_clean(path, cfg)
    assert not os.path.lexists(base / link.link_path)
    for i in range(4):
        write_arrow(path, batch([(200 + i, "b", i)]), mor)
    res = run_archival(path, cfg)
    assert c in res.archived
    assert rows(hoodie.read_table(path)) == rows(batch([(1, "a", 100), (2, "a", 20)]
                                                      + [(100 + i, "b", i) for i in range(8)]
                                                      + [(200 + i, "b", i) for i in range(4)]))


def test_java_fixture_overwrite_table(fixture_copy, fixtures_root: Path) -> None:
    import pyarrow.parquet as pq

    stem = "sample_table_cow_v6_simplekeygen_nonhivestyle_overwritetable"
    path = fixture_copy(stem)
    gold = pq.read_table(next((fixtures_root / stem / "gold_data").glob("*.parquet")))
    before = hoodie.read_table(str(path))
    dry = run_clean(str(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}, dry_run=True)
    assert sorted(dry.plan.partitions_to_delete) == ["10", "20"] and dry.instant is None
    assert (path / "10").is_dir()
    res = run_clean(str(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert sorted(res.deleted_partitions) == ["10", "20"]
    assert not (path / "10").exists() and not (path / "20").exists()
    assert sorted(os.listdir(path / "30")) == [".hoodie_partition_metadata",
                                               "ebcb261d-62d3-4895-90ec-5b3c9622dff4-0_0-111-154_20240707001303088.parquet"]
    after = hoodie.read_table(str(path))
    cols = ["id", "name"]
    assert sorted(rows_of(after, cols)) == sorted(rows_of(before, cols)) == sorted(rows_of(gold, cols))
    assert sorted(rows_of(read_hudi_rs(str(path)), cols)) == sorted(rows_of(gold, cols))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_cli_clean(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _history(path, 3)
    dry = _cli("clean", path, "--dry-run", "--json", "--set", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
               "--set", "hoodie.cleaner.fileversions.retained=1")
    assert dry.returncode == 0, dry.stderr
    doc = json.loads(dry.stdout)
    assert doc["dry_run"] is True and doc["instant"] is None and doc["plan"]["total_files"] == 4
    out = _cli("clean", path, "--set", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
               "--set", "hoodie.cleaner.fileversions.retained=1")
    assert out.returncode == 0, out.stderr
    assert "deleted 4 file(s)" in out.stdout
    bad = _cli("clean", path, "--set", "hoodie.cleaner.policy=NOPE")
    assert bad.returncode == 2 and "CleanError" in bad.stderr and bad.stderr.count("\n") == 1


