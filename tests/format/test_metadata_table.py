"""The metadata table's files partition as the listing of table-version-6 tables (layout 1 MDTs).

No Java-written v6 table carries a metadata table, so these tests build one with
``tests/format/metadata_builder.py`` the way Hudi 0.14/0.15 lays it out, over tables hoodie writes,
and check: the MDT listing equals the storage listing of committed files; the file-system view and
reads through it equal those through storage; Hudi's validation rules (uncommitted instants, rollback
command blocks, the MDT's own instants); and every hostile input gives Hudi's behaviour or a clear
error naming the file and the fix.
"""

from __future__ import annotations

import contextlib
import shutil
import warnings
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pytest

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.execution import execute_file_group
from hoodie.services.write.plan import plan_write
from hoodie.services.write.prepare import prepare_records
from hoodie import write_arrow
from hoodie.format.slice import writer as W
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.log.logformat import BlockType, HeaderKey, encode_block
from hoodie.format.metadata import (
    MetadataTable, MetadataTableError, MetadataTableNotFoundError, file_system_view, metadata_listing,
)
from hoodie.format.slice.reader import read_table
from hoodie.format.table import HoodieTable, update_table_properties
from tests.format.metadata_builder import MdtBuilder, commit_listing, listing_records

OPTS = {
    "hoodie.table.name": "m", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.clean.automatic": "false",
}
ON = {"hoodie.metadata.enable": "true"}


def _data(ids: list[int], ts: int, p: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids),
                     "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"v{ts}-{i}" for i in ids]})


def _write(path: str, data: pa.Table, op: str, table_type: str) -> str:
    return write_arrow(path, data, {**OPTS, "hoodie.datasource.write.table.type": table_type,
                                    "hoodie.datasource.write.operation": op})


def _crashed_write(path: str, data: pa.Table, table_type: str) -> str:
    """Files of a new instant that never completes (a crashed writer)."""
    table = HoodieTable(path)
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": "upsert"}
    cfg = WriteConfig.from_options(opts, table)
    inflight = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT")
    plan = plan_write(table, prepare_records(data, cfg), cfg, inflight.timestamp, table.avro_schema())
    for i, w in enumerate(plan.work):
        execute_file_group(table, w, instant=inflight.timestamp, avro_schema=table.avro_schema(), cfg=cfg,
                           token=N.write_token(i, 9, i))
    return inflight.timestamp


def _committed_storage_listing(table: HoodieTable) -> dict[str, dict[str, int]]:
    """Storage listing filtered to committed files, as the file-system view filters it: base files of
    visible instants; log files of slices whose base instant is visible. Partitions left without a
    committed file (a crashed write's new partition folder) are dropped."""
    view = FileSystemView(table.storage, table.timeline)
    out: dict[str, dict[str, int]] = {}
    for p in view.partitions():
        files: dict[str, int] = {}
        for fg in view.file_groups(p).values():
            for sl in fg.slices.values():
                if not view._is_visible(sl.base_instant, None):
                    continue
                if sl.base_file is not None and sl.base_instant not in view._pending_compaction:
                    files[sl.base_file.name] = sl.base_file.size
                for lf in sl.log_files:
                    files[lf.name] = lf.size
        if files:
            out[p] = files
    return out


def _slices(view: FileSystemView) -> dict[str, list[tuple]]:
    return {p: [(s.file_id, s.base_instant, s.base_file.name if s.base_file else None,
                 [(lf.name, lf.size) for lf in s.sorted_logs()]) for s in view.latest_file_slices(p)]
            for p in view.partitions()}


def _table_with_mdt(tmp_path: Path, table_type: str) -> tuple[str, MdtBuilder, list[str]]:
    """Two commits bootstrapped into the MDT at ``<t2>010``, then three synced commits (inserts into a
    new partition, updates, and for MOR log appends)."""
    path = str(tmp_path / "t")
    t1 = _write(path, _data([1, 2, 3], 1, "a"), "insert", table_type)
    t2 = _write(path, _data([4, 5], 1, "b"), "insert", table_type)
    table = HoodieTable(path)
    boot: dict[str, dict[str, int]] = {}
    for t in (t1, t2):
        for p, f in commit_listing(table, t).items():
            boot.setdefault(p, {}).update(f)
    # The data commits first: hoodie's writers disable a metadata table they do not maintain, so the
    # MDT (as a Java writer would have kept it) is laid out after them, instant by instant.
    later = [_write(path, _data(ids, ts, p), "upsert", table_type)
             for ids, ts, p in (([1, 4], 2, "a"), ([6], 3, "c"), ([2, 5], 4, "b"))]
    mdt = MdtBuilder(path)
    mdt.bootstrap(t2 + "010", boot)
    for t in later:
        mdt.sync(HoodieTable(path), t)
    return path, mdt, [t1, t2, *later]


@contextlib.contextmanager
def _as_java_writer(path: str) -> Iterator[None]:
    """Write as a Java writer that keeps the MDT: hoodie's writers would update (or rebuild) the
    metadata table, so the MDT and the property are set aside for the write and put back after it (the
    test then syncs the MDT, or leaves it stale on purpose)."""
    table = HoodieTable(path)
    value = table.props.get("hoodie.table.metadata.partitions")
    aside = Path(path).parent / "mdt-aside"
    shutil.move(str(Path(path) / ".hoodie" / "metadata"), str(aside))
    update_table_properties(table, {"hoodie.table.metadata.partitions": ""})
    try:
        yield
    finally:
        shutil.move(str(aside), str(Path(path) / ".hoodie" / "metadata"))
        update_table_properties(HoodieTable(path), {"hoodie.table.metadata.partitions": value})


# ------------------------------------------------------------------------------------------------
# the main property: MDT listing == committed storage listing, views and reads equal
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_listing_equals_storage(tmp_path: Path, table_type: str) -> None:
    path, _, _ = _table_with_mdt(tmp_path, table_type)
    table = HoodieTable(path)
    mdt = MetadataTable(table)
    expected = _committed_storage_listing(table)
    assert mdt.listing() == expected
    assert sorted(mdt.partitions()) == sorted(expected) == ["a", "b", "c"]
    through = file_system_view(table, ON)
    assert through.file_listing is not None
    assert _slices(through) == _slices(FileSystemView(table.storage, table.timeline))
    assert read_table(path, options=ON).sort_by("id").equals(read_table(path).sort_by("id"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_crashed_data_write_is_not_listed(tmp_path: Path, table_type: str) -> None:
    """A write that crashed before its MDT deltacommit leaves files in storage that the MDT never
    lists; the view through the MDT reads the same rows as the one through storage."""
    path, _, _ = _table_with_mdt(tmp_path, table_type)
    crashed = _crashed_write(path, _data([7, 1], 9, "a"), table_type)
    table = HoodieTable(path)
    listed = {n for files in MetadataTable(table).listing().values() for n in files}
    in_storage = {e.name for p in ("a", "b", "c") for e in table.storage.list_dir(p)}
    new = {n for n in in_storage - listed if n != ".hoodie_partition_metadata"}
    assert new and all(crashed in n or N.is_log_file(n) for n in new)
    assert read_table(path, options=ON).sort_by("id").equals(read_table(path).sort_by("id"))


def test_default_reads_list_storage_and_property_gates(tmp_path: Path) -> None:
    """hoodie.metadata.enable defaults to false for v6 reads (Hudi 0.14/0.15 readers); the MDT is used
    only when the data table's hoodie.table.metadata.partitions names files."""
    path, mdt, _ = _table_with_mdt(tmp_path, "MERGE_ON_READ")
    table = HoodieTable(path)
    assert metadata_listing(table) is None
    assert metadata_listing(table, {"hoodie.metadata.enable": "false"}) is None
    assert metadata_listing(table, ON) is not None
    mdt.set_partitions("column_stats")
    assert metadata_listing(HoodieTable(path), ON) is None
    with pytest.raises(ValueError, match="hoodie.metadata.enable='maybe'"):
        metadata_listing(table, {"hoodie.metadata.enable": "maybe"})


# ------------------------------------------------------------------------------------------------
# validation against the data timeline
# ------------------------------------------------------------------------------------------------
def test_mdt_ahead_of_data_timeline_is_ignored(tmp_path: Path) -> None:
    """The MDT deltacommit of a data instant that never completed (the writer died between the MDT
    commit and the data commit) is completed on the MDT but its block is skipped."""
    path, mdt, _ = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    crashed = _crashed_write(path, _data([8], 9, "d"), "COPY_ON_WRITE")
    table = HoodieTable(path)
    names = {e.name: e.size for e in table.storage.list_dir("d") if N.is_base_file(e.name)}
    mdt.deltacommit(crashed, listing_records({"d": names}))
    m = MetadataTable(table)
    assert "d" not in m.partitions() and m.files("d") == {}
    assert m.listing() == _committed_storage_listing(table)
    assert (f"files/{N.log_file_name('files-0000-0', mdt.base_instant, 1, '0-0-0')}", crashed) in m.scan.skipped_invalid


def test_inflight_mdt_deltacommit_is_ignored(tmp_path: Path) -> None:
    """A block whose MDT deltacommit is still inflight is skipped even if its data instant completed."""
    path, mdt, times = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    table = HoodieTable(path)
    before = MetadataTable(table).listing()
    ts = I.InstantGenerator().now(floor=times[-1])
    table.storage.write_bytes(f".hoodie/{ts}.clean", b"")  # completed on the data timeline
    mdt.deltacommit(ts, listing_records({"z": {"ghost.parquet": 5}}), state=I.State.INFLIGHT)
    m = MetadataTable(HoodieTable(path))
    with pytest.raises(MetadataTableError, match=f"behind the data timeline.*{ts}.clean"):
        m.listing()  # the data clean completed but its MDT deltacommit did not: stale
    mdt.instant(ts, I.CLEAN)  # an MDT instant at ts (its deltacommit stays inflight)
    assert MetadataTable(HoodieTable(path)).listing() == before


def test_rollback_command_block_removes_target(tmp_path: Path) -> None:
    """An MDT rollback writes a ROLLBACK command block: the target instant's blocks are dropped."""
    path, mdt, times = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    table = HoodieTable(path)
    target = times[-1]
    with_target = MetadataTable(table).listing()
    mdt.rollback(target + "006", target)
    m = MetadataTable(HoodieTable(path))
    without = m.listing()
    assert m.scan.rolled_back == 1
    written = commit_listing(table, target)
    for p, files in written.items():
        assert set(files) <= set(with_target[p])
        assert not set(files) & set(without.get(p, {}))


def test_mdt_own_instants_are_valid(tmp_path: Path) -> None:
    """MDT compaction (``<t>001``) is read as the new base; later deltacommits on top of it."""
    path, mdt, _ = _table_with_mdt(tmp_path, "MERGE_ON_READ")
    table = HoodieTable(path)
    expected = _committed_storage_listing(table)
    last = table.timeline.completed().last().timestamp
    mdt.compact(last + "001", listing_records(expected))
    with _as_java_writer(path):
        t = _write(path, _data([9], 5, "a"), "insert", "MERGE_ON_READ")
    mdt.sync(HoodieTable(path), t)
    table = HoodieTable(path)
    m = MetadataTable(table)
    assert m.files_slice().base_instant == last + "001"
    assert m.listing() == _committed_storage_listing(table)


def test_deleted_files_and_partitions(tmp_path: Path) -> None:
    """A clean's tombstones remove files; a partition marked deleted in __all_partitions__ leaves the
    partition list."""
    path, mdt, times = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    table = HoodieTable(path)
    first_c = commit_listing(table, times[3])["c"]
    clean = I.InstantGenerator().now(floor=times[-1])
    table.storage.write_bytes(f".hoodie/{clean}.clean", b"")
    mdt.deltacommit(clean, {"c": (2, {n: (0, True) for n in first_c}),
                            "__all_partitions__": (1, {"c": (0, True)})})
    m = MetadataTable(HoodieTable(path))
    assert "c" not in m.partitions() and m.files("c") == {}


# ------------------------------------------------------------------------------------------------
# hostile inputs
# ------------------------------------------------------------------------------------------------
def test_truncated_base_hfile_names_file_and_fix(tmp_path: Path) -> None:
    path, mdt, _ = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    base = mdt.mdt.full(f"files/{N.base_file_name('files-0000-0', '0-1-2', mdt.base_instant, '.hfile')}")
    data = Path(base).read_bytes()
    Path(base).write_bytes(data[: len(data) // 2])
    with pytest.raises(MetadataTableError, match=r"(?s)files-0000-0_0-1-2_.*\.hfile.*hoodie\.metadata\.enable=false"):
        MetadataTable(HoodieTable(path)).listing()


def test_bad_checksum_in_log_block_hfile(tmp_path: Path) -> None:
    path, mdt, _ = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    log = Path(mdt.mdt.full(mdt.log_path()))
    data = bytearray(log.read_bytes())
    last = bytes(data).rfind(b"DATABLK*")
    data[last + 40] ^= 0xFF  # inside the last block's compressed payload: the CRC32C no longer matches
    log.write_bytes(bytes(data))
    with pytest.raises(MetadataTableError, match=r"(?s)\.files-0000-0_.*block at offset.*hoodie\.metadata\.enable=false"):
        MetadataTable(HoodieTable(path)).listing()


def test_corrupt_block_of_committed_instant_is_refused(tmp_path: Path) -> None:
    """Overwriting a committed deltacommit's block magic makes it a corrupt region: Java would skip it
    and lose that commit's files; hoodie refuses, naming the log, the offset and the lost instant."""
    path, mdt, times = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    log = Path(mdt.mdt.full(mdt.log_path()))
    data = bytearray(log.read_bytes())
    last = bytes(data).rfind(b"#HUDI#")
    data[last:last + 6] = b"#ZZZZ#"
    log.write_bytes(bytes(data))
    with pytest.raises(MetadataTableError, match=rf"(?s)unreadable data.*offset {last}.*{times[-1]}.*enable=false"):
        MetadataTable(HoodieTable(path)).listing()


def test_corrupt_tail_of_failed_mdt_write_is_skipped(tmp_path: Path) -> None:
    """A half-written block of an MDT deltacommit that never completed (Hudi skips it) is skipped
    with a warning; the listing is unchanged."""
    path, mdt, times = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    before = MetadataTable(HoodieTable(path)).listing()
    block = mdt.deltacommit(I.InstantGenerator().now(floor=times[-1]), listing_records({"a": {"x.parquet": 9}}),
                            state=I.State.INFLIGHT)
    log = Path(mdt.mdt.full(mdt.log_path()))
    log.write_bytes(log.read_bytes()[: -len(block) // 2])
    with pytest.warns(UserWarning, match="remains of a failed write"):
        assert MetadataTable(HoodieTable(path)).listing() == before


def test_missing_files_partition_while_property_says_available(tmp_path: Path) -> None:
    path, mdt, _ = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    mdt.mdt.delete_dir("files")
    with pytest.raises(MetadataTableError, match=r"(?s)metadata/files holds no base or log file.*enable=false"):
        MetadataTable(HoodieTable(path)).partitions()
    with pytest.raises(MetadataTableError, match="holds no base or log file"):
        read_table(path, options=ON)


def test_missing_metadata_folder_lists_storage_with_warning(tmp_path: Path) -> None:
    """Java's readers list storage when the MDT is gone (TableNotFoundException); so does the hook."""
    path, mdt, _ = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    mdt.data.delete_dir(".hoodie/metadata")
    table = HoodieTable(path)
    with pytest.raises(MetadataTableNotFoundError, match="enable=false"):
        MetadataTable(table).listing()
    with pytest.warns(UserWarning, match="listing storage instead"):
        assert metadata_listing(table, ON) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert read_table(path, options=ON).num_rows == read_table(path).num_rows


def test_stale_mdt_is_refused(tmp_path: Path) -> None:
    """A data commit by a writer that did not update the MDT: listing through it would miss the
    commit's files, so hoodie refuses and names the instant and the fix."""
    path, _, _ = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    with _as_java_writer(path):
        t = _write(path, _data([10], 6, "e"), "insert", "COPY_ON_WRITE")
    with pytest.raises(MetadataTableError, match=rf"(?s)behind the data timeline.*{t}\.commit.*enable=false"):
        MetadataTable(HoodieTable(path)).listing()


def test_other_block_types_and_mismatched_records_are_refused(tmp_path: Path) -> None:
    path, mdt, times = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    table = HoodieTable(path)
    # a type-2 record arriving for the partition-list key cannot be combined
    ts = I.InstantGenerator().now(floor=times[-1])
    table.storage.write_bytes(f".hoodie/{ts}.clean", b"")
    mdt.deltacommit(ts, {"__all_partitions__": (2, {"f.parquet": (3, False)})})
    with pytest.raises(MetadataTableError, match=r"cannot combine metadata record '__all_partitions__' \(type 1\)"):
        MetadataTable(HoodieTable(path)).listing()
    # an Avro data block has no place in the files partition
    ts2 = I.InstantGenerator().now(floor=ts)
    table.storage.write_bytes(f".hoodie/{ts2}.clean", b"")
    mdt.append(encode_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: ts2}, b"\x00\x00\x00\x03\x00\x00\x00\x00"))
    mdt.instant(ts2)
    with pytest.raises(MetadataTableError, match=r"(?s)AVRO_DATA block in the metadata table's files partition.*enable=false"):
        MetadataTable(HoodieTable(path)).listing()


# ------------------------------------------------------------------------------------------------
# issue 31 item 13: the reader orders a merged slice's log files itself
# ------------------------------------------------------------------------------------------------

def mdt_file_id(mdt: MdtBuilder) -> str:
    """The file id of the builder's ``files`` file group (from its current log file's name)."""
    return N.parse_log_file(mdt.log_path().rsplit("/", 1)[-1]).file_id


def _mdt_with_pending_compaction(tmp_path: Path) -> str:
    """Partition ``c`` listed in the slice before a pending (crashed) MDT compaction at C, and its
    tombstone (a clean removing its files and the partition) in a log file of C's slice. Read merged
    in Hudi's log order the partition is gone."""
    path, mdt, times = _table_with_mdt(tmp_path, "COPY_ON_WRITE")
    table = HoodieTable(path)
    first_c = commit_listing(table, times[3])["c"]
    from hoodie.format.timeline.compaction_plan import CompactionOperation, CompactionPlan

    c = I.InstantGenerator().now(floor=times[-1])
    # Scheduled (a plan compacting the current slice), never completed: no base file at C.
    prev_base = N.base_file_name(mdt_file_id(mdt), "0-1-2", mdt.base_instant, ".hfile")
    plan = CompactionPlan(operations=(CompactionOperation(
        base_instant_time=mdt.base_instant, file_id=mdt_file_id(mdt), partition_path="files",
        data_file_path=prev_base, delta_file_paths=(mdt.log_path().rsplit("/", 1)[-1],)),))
    mdt.mdt.write_bytes(f".hoodie/{I.instant_file_name(c, I.COMPACTION, I.State.REQUESTED)}", plan.to_bytes())
    mdt.base_instant, mdt.log_version = c, 1
    clean = I.InstantGenerator().now(floor=c)
    table.storage.write_bytes(f".hoodie/{clean}.clean", b"")
    mdt.deltacommit(clean, {"c": (2, {n: (0, True) for n in first_c}),
                            "__all_partitions__": (1, {"c": (0, True)})})
    return path


def test_merged_slice_logs_are_read_in_hudi_order(tmp_path: Path) -> None:
    path = _mdt_with_pending_compaction(tmp_path)
    m = MetadataTable(HoodieTable(path))
    names = [N.parse_log_file(p.rsplit("/", 1)[-1]) for p in m.files_slice().log_files]
    assert [n.sort_key() for n in names] == sorted(n.sort_key() for n in names) and len(names) == 2
    assert "c" not in m.partitions() and m.files("c") == {}


def test_reader_does_not_trust_the_views_log_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A view that hands the merged slice's log files in another order (the pending compaction's
    before the previous slice's: a one-line slip) must not change the listing: the reader sorts them
    by Hudi's LogFileComparator (base instant, version, write token). Before, the later tombstone was
    applied first and the deleted partition came back."""
    path = _mdt_with_pending_compaction(tmp_path)
    real = FileSystemView.latest_file_slices

    def reversed_logs(self, *a, **k):  # type: ignore[no-untyped-def]
        out = real(self, *a, **k)
        for sl in out:
            sl.log_files = list(reversed(sl.sorted_logs()))
        return out

    monkeypatch.setattr(FileSystemView, "latest_file_slices", reversed_logs)
    m = MetadataTable(HoodieTable(path))
    assert len(m.files_slice().log_files) == 2
    assert "c" not in m.partitions() and m.files("c") == {}
