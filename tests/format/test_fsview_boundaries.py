"""Deterministic tests at the file-system view's boundaries that mutation testing found unguarded
(issue 21, MUTATION.md): pending compactions, replaced groups and time travel, partitions and their
nesting, listings, and slices older than the active timeline."""

from __future__ import annotations


import pyarrow as pa
import pytest



def _pending_compaction_with_partial_base(tmp_path) -> tuple[str, str]:
    """insert 1,2,3 (a*); update 1 (b1) in a log; schedule a compaction C and leave a half-written
    base file at C whose rows differ from every committed version; then update 2 (c2) into C's slice."""
    import pyarrow.parquet as pq

    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _write

    path = str(tmp_path / "t")
    _write(path, _data([1, 2, 3], 1, "a"), "insert")
    _write(path, _data([1], 2, "b"), "upsert")
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    c = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.sorted_logs()],
                                    sl.file_id, "a", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    base = pq.read_table(tmp_path / "t" / "a" / sl.base_file.name)
    half = base.set_column(base.schema.get_field_index("v"), "v", pa.array(["HALF"] * base.num_rows))
    pq.write_table(half, tmp_path / "t" / "a" / N.base_file_name(sl.file_id, "0-1-1", c))
    _write(path, _data([2], 3, "c"), "upsert")
    return path, c


def test_read_optimized_view_skips_the_base_file_of_a_pending_compaction(tmp_path) -> None:
    import hoodie
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _vals
    from tests.hudi_rs import read_hudi_rs

    path, c = _pending_compaction_with_partial_base(tmp_path)
    assert _vals(hoodie.read_table(path, query_type="read_optimized")) == {1: "a1", 2: "a2", 3: "a3"}
    assert _vals(read_hudi_rs(path, query_type="read_optimized")) == {1: "a1", 2: "a2", 3: "a3"}
    assert _vals(hoodie.read_table(path)) == {1: "b1", 2: "c2", 3: "a3"}
    t = HoodieTable(path)
    view = FileSystemView(t.storage, t.timeline)
    (bf,) = view.latest_base_files("a")
    assert bf.instant < c
    # Without merging, the pending slice stands alone: no base file, only the log written during C.
    (pending,) = view.latest_file_slices("a", merge_pending_compaction=False)
    assert pending.base_instant == c and pending.base_file is None and len(pending.log_files) == 1
    assert pending.partition == "a"


def test_time_travel_to_exactly_a_replacecommit_sees_the_replacement(tmp_path) -> None:
    """as_of is inclusive: at the replacecommit's own instant the replaced group is gone; one
    instant earlier it is there. A commit at exactly as_of is visible."""
    import json

    import hoodie
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline.commit_metadata import CommitMetadata
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _vals, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    c2 = _write(path, _data([1], 2, "b"), "upsert")
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    r = table.new_instant_time()
    T.create_requested(table.storage, r, I.REPLACE_COMMIT,
                       plans.write_avro_metadata("HoodieRequestedReplaceMetadata",
                                                 plans.requested_replace_metadata("DELETE_PARTITION")))
    inf = T.transition_to_inflight(table.storage, I.Instant(r, I.REPLACE_COMMIT, I.State.REQUESTED),
                                   CommitMetadata(operation_type="DELETE_PARTITION").to_json_bytes())
    meta = CommitMetadata(operation_type="DELETE_PARTITION", partition_to_replace_file_ids={"a": [sl.file_id]},
                          extra_metadata={"schema": json.dumps(table.avro_schema())})
    T.transition_to_complete(table.storage, inf, meta.to_json_bytes())
    assert hoodie.read_table(path, as_of=r).num_rows == 0
    assert _vals(hoodie.read_table(path, as_of=c2)) == {1: "b1", 2: "a2"}
    assert _vals(hoodie.read_table(path, as_of=c1)) == {1: "a1", 2: "a2"}
    view = FileSystemView(table.storage, T.Timeline.load(table.storage))
    assert view.is_replaced("a", sl.file_id, as_of=r) and not view.is_replaced("a", sl.file_id, as_of=c2)
    assert view.is_replaced("a", sl.file_id) and not view.is_replaced("a", "another-file-id")
    assert not view.is_replaced("b", sl.file_id)


def test_requested_only_instant_is_not_completed(tmp_path) -> None:
    """A write that only got as far as ``.requested`` (or ``.inflight``) is pending: its files are
    invisible to reads and views, and the timeline filters agree."""
    import hoodie
    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline import active as T
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _uncommitted_write, _vals, _write
    from tests.hudi_rs import read_hudi_rs

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    failed = _uncommitted_write(path, _data([1], 5, "bad"))
    # Leave only the requested file of the failed write.
    (tmp_path / "t" / ".hoodie" / I.instant_file_name(failed, I.DELTA_COMMIT, I.State.INFLIGHT)).unlink()
    table = HoodieTable(path)
    tl = table.timeline
    inst = tl.get(failed)
    assert inst is not None and inst.is_requested and not inst.is_completed and not inst.is_inflight
    assert tl.completed().timestamps == [c1] and tl.pending().timestamps == [failed]
    assert tl.completed_writes().timestamps == [c1]
    assert _vals(hoodie.read_table(path)) == {1: "a1", 2: "a2"} == _vals(read_hudi_rs(path))
    view = FileSystemView(table.storage, tl)
    (sl,) = view.latest_file_slices("a")
    assert sl.base_instant == c1
    assert not any(lf.parsed.base_instant == failed for lf in sl.log_files)
    assert all(N.parse_base_file(bf.name).instant == c1 for bf in view.latest_base_files("a"))
    # Moving it to inflight (a slow writer going on) keeps it pending and its files hidden.
    T.transition_to_inflight(table.storage, inst, b"")
    assert T.Timeline.load(table.storage).get(failed).is_inflight
    assert _vals(hoodie.read_table(path)) == {1: "a1", 2: "a2"}


def test_reserved_log_version_takes_the_highest_of_metric_and_links() -> None:
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline.compaction_plan import CompactionOperation
    from hoodie.format.file_group.fsview import RESERVED_LOG_VERSION_METRIC
    from hoodie.format.file_group.fsview import reserved_log_version as _reserved

    def reserved_log_version(record: dict) -> int:
        return _reserved(CompactionOperation.from_avro(record))

    def link(v: int) -> dict:
        return {"symlink": N.log_file_name("f", "002", v, "1-0-1"), "target": N.log_file_name("f", "001", v, "1-0-1")}

    assert reserved_log_version({}) == 0
    assert reserved_log_version({"metrics": None, "symlinkOperations": None}) == 0
    assert reserved_log_version({"metrics": {RESERVED_LOG_VERSION_METRIC: 3.0}}) == 3
    assert reserved_log_version({"symlinkOperations": [link(1), link(2)]}) == 2
    assert reserved_log_version({"metrics": {RESERVED_LOG_VERSION_METRIC: 1.0},
                                 "symlinkOperations": [link(1), link(4)]}) == 4
    assert reserved_log_version({"metrics": {RESERVED_LOG_VERSION_METRIC: 5.0},
                                 "symlinkOperations": [link(2)]}) == 5
    # Entries that name no log file reserve nothing.
    assert reserved_log_version({"symlinkOperations": [{"symlink": None}, {"symlink": "x.parquet"},
                                                       {"target": link(7)["target"]}]}) == 0


def test_partitions_are_folders_with_partition_metadata_outside_the_metafolder(tmp_path) -> None:
    """A folder is a partition only when it holds a ``.hoodie_partition_metadata`` file; folders
    with other files are not, and the metafolder (where the metadata table keeps partitions of its
    own) is never walked."""
    from hoodie.format.file_group import naming as N
    from hoodie.format.file_group.fsview import list_partitions
    from hoodie.format.storage import Storage

    root = tmp_path / "t"
    for rel in ("a", "b/c", ".hoodie/metadata/files"):
        (root / rel).mkdir(parents=True)
        (root / rel / N.PARTITION_METAFILE).write_text("#partition metadata\n")
    (root / "notes").mkdir()
    (root / "notes" / "readme.txt").write_text("not a partition")
    (root / "b" / N.PARTITION_METAFILE).mkdir()  # a folder of that name is no metadata file
    assert list_partitions(Storage(str(root))) == ["a", "b/c"]
    (root / N.PARTITION_METAFILE).write_text("#partition metadata\n")  # non-partitioned layout
    assert list_partitions(Storage(str(root))) == ["", "a", "b/c"]


def test_views_of_a_non_partitioned_table_key_groups_by_the_empty_partition(tmp_path) -> None:
    """Pending compactions of a non-partitioned table (partitionPath "") are keyed by ("", fileId)."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie import write_arrow
    from hoodie.format.file_group.fsview import RESERVED_LOG_VERSION_METRIC, FileSystemView, table_view
    from hoodie.format.table import HoodieTable

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "n", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts"}
    data = pa.table({"id": pa.array([1], pa.int64()), "ts": pa.array([1], pa.int64())})
    write_arrow(path, data, {**opts, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, data, {**opts, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable(path)
    view = table_view(table.storage)
    assert view.partitions() == [""]
    (sl,) = view.all_latest_file_slices()
    c = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.sorted_logs()],
                                    sl.file_id, "", {RESERVED_LOG_VERSION_METRIC: 2.0})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    table.reload()
    view = table_view(table.storage, table.timeline)
    assert view.pending_compaction_file_groups() == {("", sl.file_id): c}
    assert view.reserved_log_versions() == {("", sl.file_id): (c, 2)}
    assert sorted(view.file_groups("")[sl.file_id].slices) == [sl.base_instant, c]
    assert FileSystemView(table.storage, table.timeline).all_latest_file_slices(partitions=[""])[0].file_id \
        == sl.file_id
    assert N.parse_log_file(sl.sorted_logs()[0].name).file_id == sl.file_id


def test_read_optimized_view_with_replaced_groups_and_time_travel(tmp_path) -> None:
    """latest_base_files drops replaced groups (as of the query instant) and keeps looking at the
    other groups; time travel returns the base file that was newest then."""
    import json

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie import write_arrow
    from hoodie.format.timeline.commit_metadata import CommitMetadata
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import OPTS, _data

    path = str(tmp_path / "t")
    cow = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.parquet.small.file.limit": "0"}
    c1 = write_arrow(path, _data([1], 1, "a"), {**cow, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([2], 1, "a"), {**cow, "hoodie.datasource.write.operation": "insert"})
    c3 = write_arrow(path, _data([1, 2], 2, "b"), {**cow, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    groups = sorted(view.file_groups("a"))
    assert len(groups) == 2
    assert {b.instant for b in view.latest_base_files("a")} == {c3}
    assert {b.instant for b in view.latest_base_files("a", as_of=c2)} == {c1, c2}
    assert {b.instant for b in view.latest_base_files("a", as_of=c1)} == {c1}
    assert {sl.base_instant for sl in view.latest_file_slices("a", as_of=c2)} == {c1, c2}
    assert {sl.base_instant for sl in view.latest_file_slices("a")} == {c3}
    # Replace the group that sorts first: the other one must still be listed.
    r = table.new_instant_time()
    T.create_requested(table.storage, r, I.REPLACE_COMMIT,
                       plans.write_avro_metadata("HoodieRequestedReplaceMetadata",
                                                 plans.requested_replace_metadata("DELETE_PARTITION")))
    inf = T.transition_to_inflight(table.storage, I.Instant(r, I.REPLACE_COMMIT, I.State.REQUESTED),
                                   CommitMetadata(operation_type="DELETE_PARTITION").to_json_bytes())
    meta = CommitMetadata(operation_type="DELETE_PARTITION", partition_to_replace_file_ids={"a": [groups[0]]},
                          extra_metadata={"schema": json.dumps(table.avro_schema())})
    T.transition_to_complete(table.storage, inf, meta.to_json_bytes())
    table.reload()
    view = FileSystemView(table.storage, table.timeline)
    assert [b.file_id for b in view.latest_base_files("a")] == [groups[1]]
    assert sorted(b.file_id for b in view.latest_base_files("a", as_of=c3)) == groups
    assert [sl.file_id for sl in view.latest_file_slices("a")] == [groups[1]]
    assert sorted(sl.file_id for sl in view.all_latest_file_slices(as_of=c3)) == groups


def test_view_lists_through_the_file_listing_it_is_given(tmp_path) -> None:
    """With a file listing (the metadata table's), partitions and files come from it, not storage."""
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from hoodie import write_arrow

    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["k1"], "p": ["p0"]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert"})
    table = HoodieTable(path)

    class Listing:
        def partitions(self) -> list[str]:
            return ["elsewhere"]

        def list_files(self, partition: str) -> list:
            return []

    assert FileSystemView(table.storage, table.timeline).partitions() == ["p0"]
    view = FileSystemView(table.storage, table.timeline, file_listing=Listing())
    assert view.partitions() == ["elsewhere"]
    assert view.file_groups("p0") == {}


def test_pending_compaction_slices_of_a_plan_over_partitions_and_a_damaged_plan(tmp_path, caplog) -> None:
    """A plan over two partitions opens its slice in both (whichever partition's operation comes
    first); slices know their partition (base-only groups too). A damaged plan of a compaction that
    never ran is read around with one warning per file, naming the problem; reserved log versions
    skip it, but once the compaction ran (inflight) they refuse it."""
    import logging

    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from hoodie.format.timeline.active import DamagedTimelineFileError
    from hoodie.services.compaction import schedule_compaction
    from hoodie import write_arrow
    from tests.services.test_compaction_support import UNBOUNDED

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts"}

    def write(op: str, keys: list[str], parts: list[str], ts: int) -> None:
        write_arrow(path, pa.table({"k": keys, "p": parts, "ts": pa.array([ts] * len(keys), pa.int64())}),
                    {**opts, "hoodie.datasource.write.operation": op})

    write("insert", ["a", "b", "c"], ["p1", "p2", "p3"], 1)
    write("upsert", ["a", "b"], ["p1", "p2"], 2)
    c = schedule_compaction(path, UNBOUNDED)
    table = HoodieTable(path)
    assert {op.partition for op in table.timeline.compaction_plan(c).operations} == {"p1", "p2"}
    view = FileSystemView(table.storage, table.timeline)
    for p in ("p1", "p2"):
        (fg,) = view.file_groups(p).values()
        assert c in fg.slices and fg.slices[c].is_empty()
        assert {sl.partition for sl in fg.slices.values()} == {p}
    (sl,) = view.latest_file_slices("p3")
    assert sl.partition == "p3" and sl.base_file is not None

    plan_file = tmp_path / "t" / ".hoodie" / f"{c}.compaction.requested"
    plan_file.write_bytes(b"")
    with pytest.raises(DamagedTimelineFileError) as err:
        HoodieTable(path).timeline.compaction_plan(c)
    e = err.value
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            t = HoodieTable(path)
            damaged = FileSystemView(t.storage, t.timeline)
            assert [s.base_instant for s in damaged.latest_file_slices("p1")] != []
            assert damaged.reserved_log_versions() == {}
    warned = [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]
    assert warned == [f"{e.path} is damaged ({e.problem}); reading without it: it has not run, so its file slices "
                      f"hold only log files writers added. {e.fix}"]
    (tmp_path / "t" / ".hoodie" / f"{c}.compaction.inflight").write_bytes(b"")
    t = HoodieTable(path)
    with pytest.raises(DamagedTimelineFileError):
        FileSystemView(t.storage, t.timeline).reserved_log_versions()


def test_layout2_log_of_a_failed_first_deltacommit_is_not_read(tmp_path) -> None:
    """Timeline layout 2: a log written by a deltacommit that never completed is dropped, also when
    that deltacommit is the oldest instant of the active timeline (only logs of older, archived
    deltacommits are looked up in the archived timeline)."""
    import hoodie
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from hoodie import write_arrow

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "8"}

    def write(op: str, key: str, part: str, ts: int) -> str:
        return write_arrow(path, pa.table({"k": [key], "p": [part], "ts": pa.array([ts], pa.int64())}),
                           {**opts, "hoodie.datasource.write.operation": op})

    first, failed = write("insert", "k1", "p1", 1), write("upsert", "k1", "p1", 2)
    write("insert", "k2", "p2", 3)
    timeline = tmp_path / "t" / ".hoodie" / "timeline"
    for f in timeline.iterdir():
        if f.name.startswith(first) or (f.name.startswith(failed) and f.name.endswith(".deltacommit")):
            f.unlink()  # the insert archived (without an LSM timeline), the upsert failed
    assert any(f.name.startswith(failed) for f in timeline.iterdir())
    assert any(".log." in f.name for f in (tmp_path / "t" / "p1").iterdir())
    got = hoodie.read_table(path, columns=["k", "ts"]).to_pylist()
    assert sorted(got, key=lambda r: r["k"]) == [{"k": "k1", "ts": 1}, {"k": "k2", "ts": 3}]
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("p1")
    assert sl.base_instant == first and sl.log_files == []  # e.g. a compaction plan must not name it


def test_partition_nesting_at_its_boundaries(tmp_path) -> None:
    """A new partition may not sit inside or above a partition of the same write or of the table. A
    folder is a partition of the table when its metafile's commitTime is a completed instant, or
    older than the active timeline (archived), or missing (written elsewhere: "0"); a metafile
    left by a write that never completed makes no partition."""
    from hoodie.format.file_group.fsview import _parent_paths, check_partition_nesting
    from hoodie.format.keys.paths import PartitionPathError
    from hoodie.format.table import HoodieTable, write_partition_metadata
    from hoodie import write_arrow

    path = tmp_path / "t"
    first = "20240101000000000"
    write_arrow(str(path), pa.table({"k": ["k1"], "p": ["p0"]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert"},
                instant=first)
    pending_first = "20231231000000000"  # a write that never completed, the oldest instant of the timeline
    (path / ".hoodie" / f"{pending_first}.commit.requested").write_bytes(b"")
    table = HoodieTable(str(path))
    assert table.timeline.first().timestamp == pending_first
    storage, timeline = table.storage, table.timeline
    write_partition_metadata(storage, "a", first)  # committed
    write_partition_metadata(storage, "q/r", first)  # committed, one level down
    write_partition_metadata(storage, "m/n", first)  # committed, two levels
    write_partition_metadata(storage, "failed", "20240102000000000")  # its write never completed
    write_partition_metadata(storage, "old", "20230101000000000")  # archived
    write_partition_metadata(storage, "pending", pending_first)  # the pending first instant's: no partition
    write_partition_metadata(storage, "fz/child", "20240102000000000")  # failed, below a new partition
    write_partition_metadata(storage, "j", first)  # nested partitions another writer made (Java
    write_partition_metadata(storage, "j/k", first)  # Hudi does not refuse them)
    (path / "nocommit").mkdir()
    (path / "nocommit" / ".hoodie_partition_metadata").write_text("partitionDepth=1\n")

    def message(inner: str, outer: str, where: str) -> str:
        return (f"partition path {inner!r} would be a partition inside partition {outer!r} ({where}). Java Hudi "
                "does not look inside a partition folder and hudi-rs reads only the innermost one, so rows would "
                "disappear for them. Nothing was committed. Partition values containing '/' make nested folders: "
                "keep every value at the same depth (e.g. 'a/_' next to 'a/b' instead of 'a'), or create the table "
                "with hoodie.datasource.write.partitionpath.urlencode=true, which writes '/' as %2F (one folder per "
                "value).")

    def refused(parts: list[str], tl=timeline) -> str:
        with pytest.raises(PartitionPathError) as e:
            check_partition_nesting(storage, parts, tl)
        return str(e.value)

    assert _parent_paths("a/b/c") == ["a", "a/b"] and _parent_paths("a") == []
    assert refused(["x", "x/y"]) == message("x/y", "x", "both in this write")
    assert refused(["a/b"]) == message("a/b", "a", "already in the table")
    assert refused(["m/n/o/p"]) == message("m/n/o/p", "m/n", "already in the table")
    assert refused(["q"]) == message("q/r", "q", "already in the table")
    assert refused(["old/x"]) == message("old/x", "old", "already in the table")
    assert refused(["nocommit/x"]) == message("nocommit/x", "nocommit", "already in the table")
    assert refused(["a", "q"]) == message("q/r", "q", "already in the table")  # checks go on past "a"
    for fine in (["failed/x"], ["a"], ["q/s"], ["m/x/y"], [], [""], ["p0", "a", "q/r"], ["pending/x"], ["fz"],
                 ["j"], ["j/k"]):
        check_partition_nesting(storage, fine, timeline)
    check_partition_nesting(storage, ["a/b"], None)  # without a timeline no metafile proves a partition
    # The metadata table's partition-list key, only on a table with a metadata table.
    check_partition_nesting(storage, ["__all_partitions__"], timeline)
    (path / ".hoodie" / "metadata").mkdir()
    assert refused(["__all_partitions__"]).startswith(
        "partition path '__all_partitions__' is the key of the metadata table's partition list: ")


def test_pending_compaction_opens_a_slice_in_its_own_group_only(tmp_path) -> None:
    """A pending compaction opens an (empty) slice at C in each group of its plan and partition;
    snapshot views merge it with the previous slice, Hudi's getLatestFileSlices view drops it while
    it is empty; CDC log files are no table data."""
    import shutil

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie import write_arrow
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import OPTS

    path = str(tmp_path / "t")
    rows = pa.table({"id": pa.array([1, 2], pa.int64()), "p": ["a", "b"], "ts": pa.array([1, 1], pa.int64()),
                     "v": ["x", "y"]})
    write_arrow(path, rows, {**OPTS, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, rows, {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    (sa,), (sb,) = view.latest_file_slices("a"), view.latest_file_slices("b")
    c = table.new_instant_time()
    op = plans.compaction_operation(sa.base_instant, sa.base_file.name, [lf.name for lf in sa.sorted_logs()],
                                    sa.file_id, "a", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    # A CDC log sorting before every other file of the partition: skipped, and the listing goes on.
    (sl_log,) = sa.log_files
    shutil.copy(tmp_path / "t" / sl_log.path, tmp_path / "t" / "a" / f".00000000-cdc_{sa.base_instant}.log.1_0-1-0.cdc")
    table.reload()
    view = FileSystemView(table.storage, table.timeline)
    groups_a = view.file_groups("a")
    assert sorted(groups_a) == [sa.file_id]
    fg = groups_a[sa.file_id]
    assert (fg.partition, fg.file_id) == ("a", sa.file_id)
    assert sorted(fg.slices) == [sa.base_instant, c] and fg.slices[c].is_empty()
    assert fg.slices[sa.base_instant].base_file.file_id == sa.file_id
    assert [lf.name for lf in fg.slices[sa.base_instant].log_files] == [sl_log.name]
    assert sorted(view.file_groups("b")[sb.file_id].slices) == [sb.base_instant]
    (merged,) = view.latest_file_slices("a")
    assert (merged.partition, merged.base_instant, merged.base_file.name) == ("a", sa.base_instant, sa.base_file.name)
    assert view.latest_file_slices("a", merge_pending_compaction=False) == []
    (b_slice,) = view.latest_file_slices("b", merge_pending_compaction=False)
    assert b_slice.base_instant == sb.base_instant and b_slice.partition == "b"
    assert view.pending_compaction_file_groups() == {("a", sa.file_id): c}
    assert [sl.partition for sl in view.all_latest_file_slices(partitions=["b"])] == ["b"]
    assert sorted(sl.partition for sl in view.all_latest_file_slices()) == ["a", "b"]


def test_slices_older_than_the_active_timeline_are_visible_but_not_failed_first_writes(tmp_path) -> None:
    """A base file whose instant is older than the first instant of the active timeline was archived:
    completed. One whose instant is the first instant itself, left by a failed write, is not."""
    import shutil

    import hoodie
    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _vals, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    c2 = _write(path, _data([1], 2, "b"), "upsert")
    # Archive c1: its timeline files go, its base file stays.
    for st in I.State:
        (tmp_path / "t" / ".hoodie" / I.instant_file_name(c1, I.DELTA_COMMIT, st)).unlink()
    table = HoodieTable(path)
    assert table.timeline.first().timestamp == c2
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    assert sl.base_instant == c1 and sl.base_file is not None
    assert _vals(hoodie.read_table(path)) == {1: "b1", 2: "a2"}
    # Now make the first active instant a failed write that left a base file of its own.
    (tmp_path / "t" / ".hoodie" / I.instant_file_name(c2, I.DELTA_COMMIT, I.State.COMPLETED)).unlink()
    other = tmp_path / "t" / "a" / sl.base_file.name.replace(c1, c2).replace(sl.file_id, "ffffffff-dead-0")
    shutil.copy(tmp_path / "t" / "a" / sl.base_file.name, other)
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    assert table.timeline.first().timestamp == c2 and not table.timeline.first().is_completed
    assert [b.name for b in view.latest_base_files("a")] == [sl.base_file.name]


def test_views_of_an_empty_timeline_and_of_a_plan_naming_a_vanished_group(tmp_path) -> None:
    """A table with no instant yet has no slices; a pending compaction whose file group has no
    file left opens an empty group (nothing to read) instead of failing."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.storage import Storage
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _write

    st = Storage(str(tmp_path / "empty"))
    st.write_bytes(".hoodie/hoodie.properties", b"")
    view = FileSystemView(st, T.Timeline.load(st))
    assert view.partitions() == [] and view.all_latest_file_slices() == []
    path = str(tmp_path / "t")
    _write(path, _data([1], 1, "a"), "insert")
    table = HoodieTable(path)
    c = table.new_instant_time()
    op = plans.compaction_operation("001", None, [], "ghost-0", "a", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    table.reload()
    view = FileSystemView(table.storage, table.timeline)
    ghost = view.file_groups("a")["ghost-0"]
    assert (ghost.partition, ghost.file_id, list(ghost.slices)) == ("a", "ghost-0", [c])
    (only,) = view.latest_file_slices("a")
    assert only.file_id != "ghost-0"
