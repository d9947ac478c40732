"""The metadata table's write side: every commit of every action records its files in the ``files``
partition first, so that listing through the metadata table equals listing storage (Java's
``HoodieMetadataTableValidator`` check) and reads through it equal the model and hudi-rs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.metadata import MetadataTable
from hoodie.format.metadata.table import METADATA_FOLDER
from hoodie.format.table import HoodieTable, update_table_properties
from hoodie.format.timeline import instant as I
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.metadata import metadata_status, validate_metadata_table
from hoodie.services.metadata import writer as MWR
from hoodie.services.rollback.operation import rollback
from hoodie.services.ttl import restore, run_ttl
from hoodie import write_arrow
from tests.format.metadata_builder import MdtBuilder, commit_listing
from tests.format.test_fsview import _uncommitted_write
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

OPTS = {"hoodie.table.name": "md", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.clean.automatic": "false"}
ON = {**OPTS, "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "4"}


def _rows(ids: list[int], p: str, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids), "ts": pa.array([ts] * len(ids), pa.int64())})


def _ids(path: str, **kw) -> list[int]:
    return sorted(hoodie.read_table(path, **kw).column("id").to_pylist())


def check(path: str, model: set[int], hudi_rs: bool = True) -> None:
    """The metadata table is ready, lists what storage holds, and every reader sees the model."""
    table = HoodieTable(path)
    assert metadata_status(table).state == "ready"
    v = validate_metadata_table(table)
    assert v.equal, v.to_dict()
    assert _ids(path) == sorted(model)
    assert _ids(path, options={"hoodie.metadata.enable": "true"}) == sorted(model)
    if hudi_rs:
        assert sorted(read_hudi_rs(path).column("id").to_pylist()) == sorted(model)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_every_action_keeps_the_metadata_table_equal_to_storage(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    on = {**ON, "hoodie.datasource.write.table.type": table_type}
    write_arrow(path, _rows([1, 2], "2020-01-01", 1), {**on, "hoodie.datasource.write.operation": "insert"},
                instant="20200101000000000")
    model = {1, 2}
    check(path, model)
    for i in range(10):  # enough deltacommits for metadata compactions and cleans
        write_arrow(path, _rows(sorted({3, 3 + i}), "a", i + 2), on)  # new keys and updates
        model |= {3 + i}
        check(path, model)
    mdt = Timeline_of(path)
    assert mdt.completed().by_actions(I.COMMIT).instants, "the metadata table was compacted"
    assert mdt.completed().by_actions(I.CLEAN).instants, "and cleaned"
    if table_type == "MERGE_ON_READ":
        run_compaction(path, schedule_compaction(path, check_trigger=False))
        check(path, model)
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    check(path, model)
    write_arrow(path, _rows([50], "b", 9), {**on, "hoodie.datasource.write.operation": "insert_overwrite"})
    model |= {50}
    check(path, model)
    last = write_arrow(path, _rows([60], "c", 9), on)
    check(path, model | {60})
    rollback(path, last)  # a completed commit: its files go, and so do their entries
    check(path, model)
    _uncommitted_write(path, _rows([70], "c", 9), opts=on)  # a crashed writer
    write_arrow(path, _rows([71], "c", 9), on)  # rolls it back first, then commits
    model |= {71}
    check(path, model)
    ttl = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10",
                         "hoodie.partition.ttl.stash.enabled": "true"}).instant
    check(path, model - {1, 2})
    restore(path, ttl)
    check(path, model)
    write_arrow(path, _rows([], "b", 9), {**on, "hoodie.datasource.write.operation": "delete_partition",
                                           "hoodie.datasource.write.partitions.to.delete": "b"})
    check(path, model - {50})


def Timeline_of(path: str):
    from hoodie.format.timeline.active import Timeline
    return Timeline.load(HoodieTable(path).storage.child(METADATA_FOLDER))


def test_a_metadata_table_laid_out_by_java_is_kept_and_updated(tmp_path: Path) -> None:
    """A v6 metadata table as Hudi 0.14/0.15 writes it is updated in place, not rebuilt."""
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1, 2], "a", 1), OPTS)
    table = HoodieTable(path)
    init = table.timeline.completed_writes().last().timestamp + "010"
    MdtBuilder(path).bootstrap(init, commit_listing(table, table.timeline.completed_writes().last().timestamp))
    write_arrow(path, _rows([3], "b", 2), OPTS)  # no option: the table's metadata table is kept
    check(path, {1, 2, 3})
    assert Timeline_of(path).get(init) is not None  # not rebuilt


def test_enable_false_drops_it_and_enable_true_creates_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1], "a", 1), OPTS)
    assert metadata_status(HoodieTable(path)).state == "none"  # new tables have none by default
    write_arrow(path, _rows([2], "a", 2), {**OPTS, "hoodie.metadata.enable": "true"})
    check(path, {1, 2})
    with pytest.warns(UserWarning, match="hoodie.metadata.enable=false"):
        write_arrow(path, _rows([3], "a", 3), {**OPTS, "hoodie.metadata.enable": "false"})
    table = HoodieTable(path)
    assert not table.has_metadata_table and not (Path(path) / METADATA_FOLDER).exists()
    assert _ids(path) == [1, 2, 3]


def test_index_partitions_are_dropped_with_one_warning(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1], "a", 1), ON)
    table = HoodieTable(path)
    update_table_properties(table, {"hoodie.table.metadata.partitions": "column_stats,files,record_index"})
    for p in ("column_stats", "record_index"):
        (Path(path) / METADATA_FOLDER / p).mkdir()
        (Path(path) / METADATA_FOLDER / p / "x.hfile").write_bytes(b"x")
    MWR._warned.clear()
    with pytest.warns(UserWarning, match="column_stats, record_index.*does not maintain"):
        write_arrow(path, _rows([2], "a", 2), OPTS)
    assert HoodieTable(path).props["hoodie.table.metadata.partitions"] == "files"
    assert not (Path(path) / METADATA_FOLDER / "column_stats").exists()
    check(path, {1, 2})


def test_a_stale_metadata_table_is_rebuilt_from_a_listing(tmp_path: Path) -> None:
    """A metadata table that misses a completed commit (written by a writer that did not update it)
    would hide that commit's files from readers listing through it: it is dropped and rebuilt."""
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1], "a", 1), ON)
    c2 = write_arrow(path, _rows([2], "b", 2), ON)
    (Path(path) / METADATA_FOLDER / ".hoodie" / f"{c2}.deltacommit").unlink()
    assert metadata_status(HoodieTable(path)).state.startswith("broken")
    MWR._warned.clear()
    with pytest.warns(UserWarning, match="unusable.*created again"):
        write_arrow(path, _rows([3], "a", 3), OPTS)
    check(path, {1, 2, 3})


def test_a_dry_run_leaves_the_metadata_table(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1], "2020-01-01", 1), ON, instant="20200101000000000")
    before = sorted(p.name for p in (Path(path) / METADATA_FOLDER / ".hoodie").iterdir())
    assert run_clean(path, dry_run=True).instant is None
    run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10"}, dry_run=True)
    assert sorted(p.name for p in (Path(path) / METADATA_FOLDER / ".hoodie").iterdir()) == before


def test_a_completion_outside_the_commit_path_is_refused(tmp_path: Path) -> None:
    """Every completed instant must pass the metadata table first; a completion around it fails
    before the completed file is written."""
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline.active import TimelineError

    path = str(tmp_path / "t")
    write_arrow(path, _rows([1], "a", 1), ON)
    storage = HoodieTable(path).storage
    req = T.create_requested(storage, "20990101000000000", I.DELTA_COMMIT)
    inflight = T.transition_to_inflight(storage, req)
    with pytest.raises(TimelineError, match="outside hoodie's commit path"):
        T.transition_to_complete(storage, inflight, b"{}")
    assert HoodieTable(path).timeline.get("20990101000000000").is_inflight


CRASH_POINTS = ["metadata.deltacommit.after_log", "metadata.after_deltacommit", "metadata.compaction.after_base_file",
                "metadata.rollback.after_command_block", "metadata.bootstrap.before_property",
                "metadata.after_disable_properties"]


def _write_in_child(path: str, ids: list[int], opts: dict, fault: str) -> subprocess.CompletedProcess:
    code = ("import json, sys, pyarrow as pa; from hoodie import write_arrow; "
            "ids = json.loads(sys.argv[2]); "
            "write_arrow(sys.argv[1], pa.table({'id': pa.array(ids, pa.int64()), 'p': ['a'] * len(ids), "
            "'ts': pa.array([5] * len(ids), pa.int64())}), json.loads(sys.argv[3]))")
    env = {**os.environ, "HOODIE_FAULT_POINTS": fault}
    return subprocess.run([sys.executable, "-c", code, path, json.dumps(ids), json.dumps(opts)], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("fault", CRASH_POINTS)
def test_a_kill_at_each_metadata_step_is_repaired_by_the_next_commit(tmp_path: Path, fault: str) -> None:
    """Killed inside the metadata deltacommit, between it and the data commit, inside a metadata
    compaction or rollback, or while creating or dropping it: readers (through the metadata table
    too) see the state before, and the next write leaves the metadata table equal to storage."""
    path = str(tmp_path / "t")
    opts = dict(ON)
    if fault == "metadata.bootstrap.before_property":
        write_arrow(path, _rows([1, 2], "a", 1), OPTS)
    else:
        write_arrow(path, _rows([1, 2], "a", 1), ON)
        for i in range(2):  # with the initialisation, 4 deltacommits: the next write compacts first
            write_arrow(path, _rows([1], "a", 2 + i), ON)
    if fault == "metadata.rollback.after_command_block":
        # A writer killed after its metadata deltacommit: the killed write rolls both back first.
        assert _write_in_child(path, [70], ON, "metadata.after_deltacommit").returncode != 0
    if fault == "metadata.after_disable_properties":
        opts["hoodie.metadata.enable"] = "false"
    out = _write_in_child(path, [9], opts, fault)
    assert out.returncode != 0, out.stderr[-2000:]
    assert _ids(path) == [1, 2]
    if HoodieTable(path).has_metadata_table:
        assert _ids(path, options={"hoodie.metadata.enable": "true"}) == [1, 2]
    write_arrow(path, _rows([3], "a", 6), ON)
    check(path, {1, 2, 3})
    assert not HoodieTable(path).timeline.pending().instants
    assert not Timeline_of(path).pending().instants


_PART_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_PARTS = st.one_of(st.text(_PART_CHARS, min_size=1, max_size=12),
                   st.sampled_from(["__all_partitions__", ".", "a/b", "2024/.late", "x y", "ü/ß", "%2F", "😀"]))


@settings(max_examples=examples(25), deadline=None)
@given(values=st.lists(_PARTS, min_size=1, max_size=4, unique=True))
def test_any_partition_value_is_listed_through_the_metadata_table_as_on_storage(values: list[str]) -> None:
    """Partition paths are the metadata table's record keys: any value a write accepts is listed
    through it exactly as on storage (UTF-8 byte order, non-BMP characters, dots, separators); a value
    it cannot hold as a key (the partition list's own key) is refused before anything is committed."""
    root = tempfile.mkdtemp(prefix="mdt_parts_")
    try:
        _check_partition_values_listed(root + "/t", values)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _check_partition_values_listed(path: str, values: list[str]) -> None:
    from hoodie.errors import HoodieError

    data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "p": values,
                     "ts": pa.array([1] * len(values), pa.int64())})
    try:
        write_arrow(path, data, ON)
    except HoodieError as e:
        assert "partition" in str(e).lower(), e  # refused values: tests/prove/test_partition_values.py
        if "key of the metadata table's partition list" in str(e):  # refused in the write's checks
            assert not HoodieTable(path).timeline.instants
        # On a new table the metadata table is created after those checks: refused at its update,
        # before the data commit completes. (Other refused values leave no table at all.)
        if os.path.exists(os.path.join(path, ".hoodie", "hoodie.properties")):
            assert not HoodieTable(path).timeline.completed().instants
        return
    assert "__all_partitions__" not in values
    # hudi-rs is left out: it cannot open paths with control characters (an object_store limit).
    check(path, set(range(len(values))), hudi_rs=False)


def test_the_partition_list_key_as_a_partition_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1], "a", 1), ON)
    from hoodie.format.keys.paths import PartitionPathError

    with pytest.raises(PartitionPathError, match="key of the metadata table's partition list"):
        write_arrow(path, _rows([2], "__all_partitions__", 2), ON)
    assert len(HoodieTable(path).timeline.instants) == 1
    check(path, {1})


@pytest.mark.parametrize("version", ["6", "9"])
def test_recording_a_commit_lists_the_metadata_timeline_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             version: str) -> None:
    """On an object store a listing is a request: recording one data commit in the metadata table lists
    the MDT timeline once and the ``files`` partition once on version 6 (it listed them 5 and 3 times)."""
    from hoodie.format.storage import Storage

    path = str(tmp_path / "t")
    # No MDT compaction in the commit measured (it lists again after compacting, once per compaction).
    opts = {**ON, "hoodie.write.table.version": version, "hoodie.metadata.compact.max.delta.commits": "50"}
    for n in range(3):
        write_arrow(path, _rows([n, n + 10], "a", n), opts)
    seen: list[str] = []
    inside = {"update": False}
    real_list, real_update = Storage.list_dir, MWR.MetadataWriter.update

    def list_dir(self: Storage, rel: str = "") -> list:
        full = self.full(rel)
        if inside["update"]:
            seen.append(full.split(f"/{METADATA_FOLDER}", 1)[-1].strip("/") if f"/{METADATA_FOLDER}" in full
                        else "data:" + full.rsplit("/t/", 1)[-1])
        return real_list(self, rel)

    def update(self: MWR.MetadataWriter, *a: object, **k: object) -> MWR.UpdateResult:
        inside["update"] = True
        try:
            return real_update(self, *a, **k)
        finally:
            inside["update"] = False

    monkeypatch.setattr(Storage, "list_dir", list_dir)
    monkeypatch.setattr(MWR.MetadataWriter, "update", update)
    write_arrow(path, _rows([1, 2], "b", 7), opts)
    timeline = [s for s in seen if s.startswith(".hoodie")]
    # 8/9: also the reader's completion-time timeline and the completion time's check that it is the latest.
    assert len(timeline) == (1 if version == "6" else 3), seen
    assert seen.count("files") == 1, seen
    assert HoodieTable(path).timeline.completed_writes().last() is not None
    assert validate_metadata_table(HoodieTable(path)).equal
