"""Keeping the metadata table's ``partition_stats`` (table versions 8/9) and ``record_index`` (6, 8, 9)
partitions up to date, in the same MDT deltacommit as ``files`` and ``column_stats``.

Both are derived from the table **as it is once the data instant completes**: a file-system view over
storage whose timeline holds the instant as completed (rolled-back instants removed, file groups the
instant replaces left out), the "after view" (:func:`after_view`).

* ``partition_stats``: for every partition the instant touched (files added or removed, file groups
  replaced), one record per indexed column aggregating the ``column_stats`` records (as they are after
  this deltacommit) of the files of the partition's latest file slices
  (``PartitionStatsIndexer.convertMetadataToPartitionStatRecords`` with ``isTightBound``: a newer record
  replaces the older). A partition left without files gets tombstones. When a file of a latest slice
  has no record for a column (column list changed, no Parquet footer), the range is recorded as unknown
  (no min/max) rather than too narrow, so a reader never prunes a partition on it.
* ``record_index``: for every file group the instant touched, its live record keys in the after view
  (``slice_record_keys``) against the record index as it is now: a key now in another place gets a new
  location (instant: this one for a write, the slice's base instant otherwise); a key the index puts in
  a touched group but no touched group holds any more is deleted (a ``DELETE`` block). A key live in an
  untouched group too (a duplicate across partitions, which a non-global index can write) is refused:
  the record index maps a key to one place (Hudi's global semantics).

A rollback is consistent with both: on 1.x the rolled-back deltacommit's log files are deleted, on
version 6 a command block invalidates its blocks, and the rollback's own deltacommit recomputes what
it touched.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
from typing import Any, Iterable, Mapping, Optional

import fastavro
import pyarrow as pa

from hoodie.configs import read
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import FileSlice, FileSystemView
from hoodie.format.log import logformat as L
from hoodie.format.metadata import column_stats as CS
from hoodie.format.metadata import record_index as RI
from hoodie.format.metadata import encoding as MW
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.index_reader import (
    lookup_record_index, merge_stats_into, read_column_stats, read_partition_stats, read_record_index,
    stats_by_file,
)
from hoodie.format.metadata.records import FilesRecord, partition_name
from hoodie.format.metadata.table import MetadataTable
from hoodie.format.hfile import HFileWriter
from hoodie.format.slice.reader import slice_record_keys
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.active import Timeline
from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.format.timeline.instant import Instant, State, instant_to_epoch_ms
from hoodie.format.timeline.plans import read_avro_metadata
from hoodie.services.metadata.config import (
    PARTITION_STATS_FILE_GROUPS, RECORD_INDEX_GROWTH, RECORD_INDEX_MAX_GROUPS, RECORD_INDEX_MAX_SIZE,
    RECORD_INDEX_MIN_GROUPS,
)

log = logging.getLogger("hoodie.services.metadata")

PARTITION_STATS = CS.PARTITION_STATS_PARTITION
RECORD_INDEX = RI.RECORD_INDEX_PARTITION
TOKEN = "0-0-0"
WRITE_ACTIONS = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION)
_LAST = "9" * 17  # the completion time of the instant being recorded: after every other


# -- the table once the instant completes -------------------------------------------------------------
def rolled_back_targets(action: str, content: bytes) -> list[str]:
    """The instants a rollback or restore undid (empty for other actions)."""
    if action not in (I.ROLLBACK, I.RESTORE):
        return []
    md = read_avro_metadata(content)
    if action == I.ROLLBACK:
        return [str(t) for t in md.get("commitsRollback") or []]
    out: list[str] = []
    for t in md.get("instantsToRollback") or []:
        for rm in (md.get("hoodieRestoreMetadata") or {}).get(t) or []:
            out.extend(str(c) for c in (rm or {}).get("commitsRollback") or [])
        out.append(str(t))
    return out


def replaced_file_ids(action: str, content: bytes) -> dict[str, set[str]]:
    """partition -> file ids a replacecommit replaces (empty for other actions)."""
    if action != I.REPLACE_COMMIT:
        return {}
    meta = CommitMetadata.from_json_bytes(content)
    return {p: set(ids) for p, ids in (meta.partition_to_replace_file_ids or {}).items()}


class _AfterTimeline(Timeline):
    """A timeline holding the instant being recorded as completed, whose completed file does not exist
    yet: its content is served from memory."""

    fake: tuple[str, bytes] = ("", b"")

    def _new(self, instants: Iterable[Instant]) -> "Timeline":
        out = _AfterTimeline(list(instants), self._storage, self._all_files, self.folder, self.start)
        out.fake = self.fake
        return out

    def read_file(self, name: str) -> bytes:
        """Raw bytes of a timeline file (the recorded instant's from memory)."""
        if name == self.fake[0]:
            return self.fake[1]
        return super().read_file(name)

    def commit_metadata(self, inst: Instant) -> CommitMetadata:
        """Commit metadata (the recorded instant's from memory)."""
        if inst.file_name == self.fake[0]:
            return CommitMetadata.from_json_bytes(self.fake[1])
        return super().commit_metadata(inst)


class AfterView:
    """The table once the data instant ``ts`` (``action``, completed file ``content``) completes."""

    def __init__(self, table: HoodieTable, ts: str, action: str, content: bytes) -> None:
        self.ts = ts
        self.action = action
        layout = table.timeline_layout
        gone = {ts, *rolled_back_targets(action, content)}
        instants = [i for i in Timeline.load(table.storage, layout) if i.timestamp not in gone]
        base = Timeline.load(table.storage, layout)
        fake_name = ""
        if action in WRITE_ACTIONS:
            # A replacecommit counts as a plain commit here: its replaced file groups are left out below.
            fake = Instant(ts, I.DELTA_COMMIT if action == I.DELTA_COMMIT else I.COMMIT, State.COMPLETED,
                           _LAST if layout == 2 else None)
            instants.append(fake)
            fake_name = fake.file_name
        after = _AfterTimeline(base.instants, base._storage, base._all_files, base.folder, base.start)
        after.fake = (fake_name, content)
        self.timeline = after.with_instants(instants)
        self.table = copy.copy(table).with_timeline(self.timeline)
        self.view = FileSystemView(table.storage, self.timeline)
        self.replaced = replaced_file_ids(action, content)
        self.is_write = action in WRITE_ACTIONS

    def slices(self, partition: str) -> list[FileSlice]:
        """The latest slices of ``partition`` (a pending compaction's merged with the previous one)."""
        if not self.table.storage.exists(partition) and partition:
            return []
        gone = self.replaced.get(partition, set())
        return [sl for sl in self.view.latest_file_slices(partition) if sl.file_id not in gone]


def touched(files_records: Iterable[FilesRecord], replaced: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """partition -> file ids whose files the instant's ``files`` records add or remove, plus replaced ones."""
    out: dict[str, set[str]] = {}
    for rec in files_records:
        if rec.type != 2:
            continue
        part = partition_name(rec.key)
        fids = out.setdefault(part, set())
        for name in rec.files:
            if N.is_base_file(name):
                fids.add(N.parse_base_file(name).file_id)
            elif N.is_log_file(name):
                fids.add(N.parse_log_file(name).file_id)
    for part, ids in replaced.items():
        out.setdefault(part, set()).update(ids)
    return out


# -- writing index file groups -------------------------------------------------------------------------
class IndexFileGroups:
    """The file groups of one index partition of the MDT at ``storage``: listing, new log files (an
    ``HFILE_DATA`` block of puts and/or a ``DELETE`` block of keys per touched group), creation."""

    def __init__(self, table: HoodieTable, storage: Storage, version: int, partition: str, prefix: str) -> None:
        self.table = table
        self.storage = storage
        self.version = version
        self.layout = 2 if version >= 8 else 1
        self.partition = partition
        self.prefix = prefix

    def fid(self, index: int) -> str:
        """The file id of file group ``index``."""
        return f"{self.prefix}{index:04d}-0"

    def groups(self) -> dict[str, tuple[str, Optional[str]]]:
        """file id -> (latest slice's base instant, its base file name)."""
        out: dict[str, tuple[str, Optional[str]]] = {}
        for sl in MetadataTable(self.table).partition_slices(self.partition):
            ref = sl.base_file or (sl.log_files[0] if sl.log_files else None)
            if ref is None:
                continue
            name = ref.rsplit("/", 1)[-1]
            fid = N.parse_base_file(name).file_id if N.is_base_file(name) else N.parse_log_file(name).file_id
            out[fid] = (sl.base_instant, sl.base_file.rsplit("/", 1)[-1] if sl.base_file else None)
        if not out:
            raise MetadataTableError(f"{self.storage.uri(self.partition)} has no file group")
        return out

    def next_version(self, fid: str, base_instant: str) -> int:
        """The next log version of ``fid``'s slice at ``base_instant``."""
        top = 0
        for s in self.storage.list_dir(self.partition):
            if N.is_log_file(s.name):
                lp = N.parse_log_file(s.name)
                if lp.file_id == fid and lp.base_instant == base_instant:
                    top = max(top, lp.version)
        return top + 1

    def write(self, puts: Mapping[str, bytes], deletes: Iterable[str], instant: str) -> list[tuple[str, WriteStat]]:
        """One new log file per file group with puts or deletes; returns (partition, write stat) of each."""
        deletes = sorted(set(deletes) - set(puts))
        if not puts and not deletes:
            return []
        groups = self.groups()
        count = len(groups)
        by_group: dict[str, tuple[dict[str, bytes], list[str]]] = {}
        put_keys = list(puts)
        for k, g in zip(put_keys, CS.file_group_indexes(put_keys, count)):
            by_group.setdefault(self.fid(g), ({}, []))[0][k] = puts[k]
        for k, g in zip(deletes, CS.file_group_indexes(deletes, count)):
            by_group.setdefault(self.fid(g), ({}, []))[1].append(k)
        schema = MW.schema_json(self.version)
        out = []
        for fid, (cells, dels) in sorted(by_group.items()):
            if fid not in groups:
                raise MetadataTableError(
                    f"{self.storage.uri(self.partition)} has file groups {sorted(groups)}, not {fid}: the partition is "
                    f"damaged. Drop it (`hoodie metadata create-index` rebuilds it) and create it again")
            base_instant, base_name = groups[fid]
            if self.layout == 2:
                base_instant, base_name = instant, None
            version = self.next_version(fid, base_instant)
            name = N.log_file_name(fid, base_instant, version, TOKEN)
            rel = f"{self.partition}/{name}"
            blocks = []
            if cells:
                header = {L.HeaderKey.INSTANT_TIME: instant, L.HeaderKey.SCHEMA: schema}
                blocks.append(L.encode_block(L.BlockType.HFILE_DATA, header, hfile(cells, schema)))
            if dels:
                keys = pa.table({"record_key": pa.array(dels, pa.string()),
                                 "partition_path": pa.array([self.partition] * len(dels), pa.string())})
                blocks.append(L.encode_delete_block(keys, instant=instant, avro_schema=schema))
            size = L.write_log_file(self.storage, rel, blocks)
            n = len(cells) + len(dels)
            out.append((self.partition, WriteStat(
                file_id=fid, path=rel, partition_path=self.partition, prev_commit=base_instant, num_writes=n,
                num_update_writes=len(cells), num_deletes=len(dels), total_write_bytes=size, file_size_in_bytes=size,
                total_log_blocks=len(blocks), is_delta=True, log_version=version, base_file=base_name or "",
                log_files=[name])))
        return out

    def bootstrap(self, init: str, cells: Mapping[str, bytes], count: int) -> list[tuple[str, WriteStat]]:
        """Create the partition's ``count`` file groups at ``init``: an empty DELETE block log and a base
        HFile each (Java's initialisation)."""
        by_group: dict[str, dict[str, bytes]] = {self.fid(i): {} for i in range(count)}
        keys = list(cells)
        for k, g in zip(keys, CS.file_group_indexes(keys, count)):
            by_group[self.fid(g)][k] = cells[k]
        if self.storage.exists(self.partition):
            self.storage.delete_dir(self.partition)
        self.storage.write_bytes(f"{self.partition}/{N.PARTITION_METAFILE}", MW.partition_metadata_bytes(init))
        schema = MW.schema_json(self.version)
        out = []
        for fid, recs in by_group.items():
            log_name = N.log_file_name(fid, init, 1, MW.BOOTSTRAP_LOG_TOKEN)
            L.write_log_file(self.storage, f"{self.partition}/{log_name}", [MW.empty_delete_block(init)])
            rel = f"{self.partition}/{N.base_file_name(fid, TOKEN, init, '.hfile')}"
            data = hfile(recs, schema)
            self.storage.create_new(rel, data)
            out.append((self.partition, WriteStat(
                file_id=fid, path=rel, partition_path=self.partition, num_writes=len(recs), num_inserts=len(recs),
                total_write_bytes=len(data), file_size_in_bytes=len(data))))
        return out


def hfile(cells: Mapping[str, bytes], schema_json: str) -> bytes:
    """An HFile of encoded cells, in key-byte order."""
    w = HFileWriter(schema=schema_json)
    for k in sorted(cells, key=lambda k: k.encode("utf-8")):
        w.append(k, cells[k])
    return w.getvalue()


def _encode_stats(stats: Iterable[CS.ColumnStats], version: int) -> dict[str, bytes]:
    parsed = fastavro.parse_schema(json.loads(MW.schema_json(version)))
    return {s.key: CS.encode_stats_value(s, parsed, version) for s in stats}


# -- partition_stats -------------------------------------------------------------------------------------
def partition_stats_of(partition: str, slices: Iterable[FileSlice],
                       file_stats: Mapping[str, Mapping[str, CS.ColumnStats]]) -> list[CS.ColumnStats]:
    """The ``partition_stats`` records of one partition from its latest ``slices`` and the column stats of
    their files (module doc: unknown range when a file lacks a column others have)."""
    names = []
    for sl in slices:
        if sl.base_file is not None:
            names.append((sl.base_file.name, True))
        names += [(lf.name, False) for lf in sl.log_files]
    columns = sorted({c for n, _ in names for c in file_stats.get(n, {})})
    out = []
    for col in columns:
        per_file, unknown = [], False
        for n, is_base in names:
            got = file_stats.get(n, {})
            if col in got:
                per_file.append(got[col])
            elif got or is_base:
                unknown = True  # a file with statistics, but none for this column: its values are unknown
        rec = CS.partition_range(partition, col, per_file)
        if unknown:
            rec.min_value = rec.max_value = None
        out.append(rec)
    return out


class PartitionStatsWriter:
    """The ``partition_stats`` side of one MDT deltacommit (and its creation)."""

    def __init__(self, table: HoodieTable, storage: Storage, version: int, options: Optional[Mapping[str, Any]]):
        self.table = table
        self.version = version
        self.groups = IndexFileGroups(table, storage, version, PARTITION_STATS, CS.PARTITION_STATS_FILE_ID_PREFIX)
        self.new_group_count = int(read(options).get(PARTITION_STATS_FILE_GROUPS))

    def records(self, after: AfterView, files_records: list[FilesRecord], file_stats: Mapping[str, Mapping[str, Any]]
                ) -> list[CS.ColumnStats]:
        """Records for every partition the instant touched (tombstones for one left without files)."""
        parts = sorted(touched(files_records, after.replaced))
        if not parts:
            return []
        current = read_partition_stats(MetadataTable(self.table))
        recorded: dict[str, set[str]] = {}
        for s in current.values():
            recorded.setdefault(s.partition, set()).add(s.column_name)
        out: list[CS.ColumnStats] = []
        for part in parts:
            if not part:
                continue  # a non-partitioned table has no partition stats
            fresh = partition_stats_of(part, after.slices(part), file_stats)
            have = {s.column_name for s in fresh}
            out += fresh
            out += [CS.deleted_partition_stats(part, c) for c in sorted(recorded.get(part, set()) - have)]
        return out

    def write(self, stats: list[CS.ColumnStats], instant: str) -> list[tuple[str, WriteStat]]:
        """Write ``stats`` into the partition's file groups."""
        return self.groups.write(_encode_stats(stats, self.version), (), instant)

    def bootstrap(self, init: str, view: FileSystemView, file_stats: Mapping[str, Mapping[str, Any]]
                  ) -> tuple[list[tuple[str, WriteStat]], int]:
        """Create the partition from the table's latest slices; returns write stats and record count."""
        stats: list[CS.ColumnStats] = []
        for part in view.partitions():
            if part:
                stats += partition_stats_of(part, view.latest_file_slices(part), file_stats)
        return self.groups.bootstrap(init, _encode_stats(stats, self.version), self.new_group_count), len(stats)


# -- record_index -----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def _epoch_ms(instant: str, timezone: str) -> int:
    return instant_to_epoch_ms(instant, timezone)


class RecordIndexUnusable(MetadataTableError):
    """The table cannot have a right record index (keys not unique, or not stored)."""


class DuplicateKeyError(RecordIndexUnusable):
    """A record key in two file groups: the record index maps each key to one."""


def _virtual_keys_error(table: HoodieTable) -> RecordIndexUnusable:
    return RecordIndexUnusable(
        f"{table.base_path} has virtual keys (hoodie.populate.meta.fields=false): the record index reads record keys "
        "from _hoodie_record_key, which such a table does not store")


def _dup_error(table: HoodieTable, key: str, a: tuple[str, str], b: tuple[str, str]) -> DuplicateKeyError:
    return DuplicateKeyError(
        f"{table.base_path}: record key {key!r} is in partition {a[0]!r} file group {a[1]} and in partition "
        f"{b[0]!r} file group {b[1]}; the record index (hoodie.metadata.record.index.enable) maps each key to one "
        "place, as Hudi's global index does. Write with keys unique across partitions (delete the old record "
        "first), or turn the record index off (hoodie.metadata.record.index.enable=false)")


class RecordIndexWriter:
    """The ``record_index`` side of one MDT deltacommit (and its creation)."""

    def __init__(self, table: HoodieTable, storage: Storage, version: int, options: Optional[Mapping[str, Any]]):
        self.table = table
        self.version = version
        self.groups = IndexFileGroups(table, storage, version, RECORD_INDEX, RI.FILE_ID_PREFIX)
        cfg = read(options)
        self.min_groups = int(cfg.get(RECORD_INDEX_MIN_GROUPS))
        self.max_groups = int(cfg.get(RECORD_INDEX_MAX_GROUPS))
        self.max_size = int(cfg.get(RECORD_INDEX_MAX_SIZE))
        self.growth = float(cfg.get(RECORD_INDEX_GROWTH))

    def _ms(self, instant: str) -> int:
        return _epoch_ms(instant, self.table.timeline_timezone)

    def changes(self, after: AfterView, files_records: list[FilesRecord]
                ) -> tuple[dict[str, RI.RecordLocation], set[str]]:
        """(key -> new location, keys to delete) for the file groups the instant touched: their live keys
        once it completes against their live keys now (both read from the files), and the index's
        entries of just those keys (module doc)."""
        if after.action == I.CLEAN:
            return {}, set()  # a clean removes old slices only: no live key moves
        if not self.table.populate_meta_fields:
            raise _virtual_keys_error(self.table)
        groups = touched(files_records, after.replaced)
        if not any(groups.values()):
            return {}, set()
        touched_set = {(p, f) for p, fids in groups.items() for f in fids}
        now: dict[str, tuple[str, str, str]] = {}  # key -> (partition, file id, slice base instant)
        for part, fids in sorted(groups.items()):
            for sl in after.slices(part):
                if sl.file_id not in fids:
                    continue
                for k in slice_record_keys(after.table, sl).to_pylist():
                    prev = now.get(k)
                    if prev is not None and prev[:2] != (part, sl.file_id):
                        raise _dup_error(self.table, k, prev[:2], (part, sl.file_id))
                    now[k] = (part, sl.file_id, sl.base_instant)
        if not after.is_write:
            # A rollback or restore: the files it removed are gone already, and a version-6 rollback of a
            # write the metadata table compacted leaves that write's entries in place; the whole index is
            # read so that every entry pointing at a touched group is checked.
            current = read_record_index(MetadataTable(self.table))
            return self._diff(after, now, current, touched_set)
        # The keys the touched groups hold now (what the index maps to them, if it is right).
        before: set[str] = set()
        view = FileSystemView(self.table.storage, Timeline.load(self.table.storage, self.table.timeline_layout))
        for part, fids in sorted(groups.items()):
            if part and not self.table.storage.exists(part):
                continue
            for sl in view.latest_file_slices(part):
                if sl.file_id in fids:
                    before.update(slice_record_keys(self.table, sl).to_pylist())
        current = lookup_record_index(MetadataTable(self.table), set(now) | before)
        return self._diff(after, now, current, touched_set)

    def _diff(self, after: AfterView, now: Mapping[str, tuple[str, str, str]], current: Mapping[str, RI.RecordLocation],
              touched_set: set[tuple[str, str]]) -> tuple[dict[str, RI.RecordLocation], set[str]]:
        puts: dict[str, RI.RecordLocation] = {}
        for k, (part, fid, base) in now.items():
            cur = current.get(k)
            if cur is not None and (cur.partition, cur.file_id) == (part, fid):
                continue
            if cur is not None and (cur.partition, cur.file_id) not in touched_set:
                raise _dup_error(self.table, k, (cur.partition, cur.file_id), (part, fid))
            puts[k] = RI.RecordLocation(part, fid, self._ms(after.ts if after.is_write else base[:17]))
        deletes = {k for k, loc in current.items() if (loc.partition, loc.file_id) in touched_set and k not in now}
        return puts, deletes

    def write(self, puts: Mapping[str, RI.RecordLocation], deletes: Iterable[str], instant: str
              ) -> list[tuple[str, WriteStat]]:
        """Write the changes into the partition's file groups."""
        cells = dict(RI.encode_locations(puts, MW.schema_json(self.version)))
        return self.groups.write(cells, deletes, instant)

    def scan_locations(self, view: FileSystemView) -> dict[str, list[RI.RecordLocation]]:
        """key -> every location of the key among the table's latest slices (``view``), oldest slice first
        (a table written with a non-global index may hold a key in several file groups).

        Raises:
            MetadataTableError: a table without meta fields.
        """
        if not self.table.populate_meta_fields:
            raise _virtual_keys_error(self.table)
        found: list[tuple[str, str, str, str]] = []  # (slice base instant, key, partition, file id)
        for part in view.partitions():
            for sl in view.latest_file_slices(part):
                for k in set(slice_record_keys(self.table, sl).to_pylist()):
                    found.append((sl.base_instant, k, part, sl.file_id))
        out: dict[str, list[RI.RecordLocation]] = {}
        for base, k, part, fid in sorted(found):
            out.setdefault(k, []).append(RI.RecordLocation(part, fid, self._ms(base[:17])))
        return out

    def table_locations(self, view: FileSystemView) -> dict[str, RI.RecordLocation]:
        """key -> location of every live record of the table (``view``: its latest slices).

        Raises:
            MetadataTableError: a key in two file groups, or a table without meta fields.
        """
        out: dict[str, RI.RecordLocation] = {}
        for k, locs in self.scan_locations(view).items():
            if len(locs) > 1:
                a, b = locs[0], locs[1]
                raise _dup_error(self.table, k, (a.partition, a.file_id), (b.partition, b.file_id))
            out[k] = locs[0]
        return out

    def bootstrap(self, init: str, locs: Mapping[str, RI.RecordLocation]) -> tuple[list[tuple[str, WriteStat]], int]:
        """Create the partition holding ``locs`` (:meth:`table_locations`); returns write stats and record count."""
        count = RI.file_group_count(len(locs), self.min_groups, self.max_groups, self.max_size, self.growth)
        cells = dict(RI.encode_locations(locs, MW.schema_json(self.version)))
        return self.groups.bootstrap(init, cells, count), len(locs)


def file_stats_after(table: HoodieTable, new_stats: Iterable[CS.ColumnStats]) -> dict[str, dict[str, CS.ColumnStats]]:
    """file name -> column -> statistics as ``column_stats`` holds them once ``new_stats`` are written."""
    merged = read_column_stats(MetadataTable(table))
    for s in new_stats:
        merge_stats_into(merged, s.key, s)
    return stats_by_file(merged)


__all__ = ["AfterView", "IndexFileGroups", "PartitionStatsWriter", "RecordIndexWriter", "DuplicateKeyError",
           "RecordIndexUnusable",
           "partition_stats_of", "file_stats_after", "touched", "PARTITION_STATS", "RECORD_INDEX"]
