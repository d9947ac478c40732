"""Deterministic tests at the clean planner's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): the retention window and the earliest commit to retain, what a plan keeps (savepoints,
pending compactions and clusterings, links, dropped partitions a writer marked), the plan as Hudi reads
it, notes and pending operations."""

from __future__ import annotations

from pathlib import Path

import pytest


from hoodie.format.file_group import naming as N
from hoodie.format.slice import writer as W
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction, schedule_compaction
from tests.services.test_compaction_support import (
    UNBOUNDED, Setup, snapshot, write,
)
from tests.services.boundaries_support import T0, _stats_table


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
