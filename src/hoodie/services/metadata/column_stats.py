"""Keeping the metadata table's ``column_stats`` partition up to date (table versions 6, 8 and 9).

Every MDT deltacommit that records a data instant in ``files`` also writes, in the same deltacommit,
the column statistics of what changed (``HoodieTableMetadataUtil.convertMetadataToColumnStatsRecords``
and its clean/rollback counterparts), derived from the ``files`` records of the instant:

* a file added or grown: a **base file**'s statistics from its Parquet footer; a **log file**'s from
  the records of the data blocks this instant wrote into it (Java's append handle; a log file the
  instant did not write, such as one a rollback only appended a command block to, gets none);
* a file deleted (clean, rollback, a TTL run moving files to its stash): a tombstone per indexed
  column.

Readers merge records of one key as Java does (ranges widened, counts added; a tombstone removes the
key), so a log file appended by several commits keeps the range of all of them.

The records go into the partition's file groups by key (``mapRecordKeyToFileGroupIndex`` over the
partition's existing file-group count): one new log file per file group touched, holding one
``HFILE_DATA`` block (layout 1: in the group's latest slice; layout 2: named by the deltacommit).
The partition is created (:meth:`ColumnStatsWriter.bootstrap`) from the ``files`` listing: one
deltacommit at an initialisation instant (v6 ``<latest completed>011``, v8/9 ``00000000000000001``,
the next free one if taken), an empty DELETE block log and a base HFile per file group, then
``column_stats`` is added to ``hoodie.table.metadata.partitions``.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.format.file_group import naming as N
from hoodie.format.log import logformat as L
from hoodie.format.metadata import column_stats as CS
from hoodie.format.metadata import encoding as MW
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.index_reader import read_column_stats, stats_by_file
from hoodie.format.metadata.records import FilesRecord, partition_name
from hoodie.format.metadata.table import PARTITIONS_INFLIGHT_PROP, PARTITIONS_PROP, MetadataTable
from hoodie.format.storage import Storage
from hoodie.format.table import META_COLUMNS, HoodieTable, TableError
from hoodie.format.timeline.commit_metadata import WriteStat
from hoodie.configs import read
from hoodie.services.metadata.config import (
    COLUMN_STATS_COLUMNS, COLUMN_STATS_FILE_GROUPS, COLUMN_STATS_MAX_COLUMNS,
)

log = logging.getLogger("hoodie.services.metadata")

PARTITION = CS.COLUMN_STATS_PARTITION
TOKEN = "0-0-0"


def partitions_prop(props: Mapping[str, str], key: str = PARTITIONS_PROP) -> list[str]:
    """The names of ``hoodie.table.metadata.partitions`` (or ``key``)."""
    return [p.strip() for p in (props.get(key) or "").split(",") if p.strip()]


def column_stats_listed(props: Mapping[str, str]) -> bool:
    """Whether ``column_stats`` is a fully initialised MDT partition of the table."""
    return PARTITION in partitions_prop(props)


class ColumnStatsWriter:
    """The ``column_stats`` side of one MDT deltacommit of ``table`` (its MDT at ``storage``)."""

    def __init__(self, table: HoodieTable, storage: Storage, version: int, options: Optional[Mapping[str, Any]]):
        self.table = table
        self.data = table.storage
        self.storage = storage
        self.version = version
        self.layout = 2 if version >= 8 else 1
        self.options = dict(options or {})
        cfg = read(options)
        self.column_list = cfg.get(COLUMN_STATS_COLUMNS)
        self.max_columns = int(cfg.get(COLUMN_STATS_MAX_COLUMNS))
        self.new_group_count = int(cfg.get(COLUMN_STATS_FILE_GROUPS))
        self._columns: Optional[list[str]] = None

    # -- which columns ---------------------------------------------------------------------------
    def columns(self) -> list[str]:
        """The indexed columns of the table's current schema (Hudi's rule, ``columns_to_index``)."""
        if self._columns is None:
            try:
                fields = list(META_COLUMNS) + [f.name for f in self.table.arrow_schema(with_meta=False)]
            except TableError:
                fields = list(META_COLUMNS)
            self._columns = self._select(fields)
        return self._columns

    def _select(self, fields: list[str]) -> list[str]:
        opts = {"hoodie.metadata.index.column.stats.column.list": self.column_list or "",
                "hoodie.metadata.index.column.stats.max.columns.to.index": self.max_columns}
        return CS.columns_to_index(fields, {}, opts, self.version) or []

    # -- statistics of files ----------------------------------------------------------------------
    def base_file_stats(self, partition: str, name: str) -> list[CS.ColumnStats]:
        """A Parquet base file's statistics from its footer (other base formats: none)."""
        if not name.endswith(".parquet"):
            return []
        rel = f"{partition}/{name}" if partition else name
        md = pq.ParquetFile(self.data.full(rel), filesystem=self.data.fs).metadata
        fields = [md.schema.column(i).path for i in range(len(md.schema))]
        return CS.footer_column_stats(md, name, partition, self._select(fields), self.version)

    def log_file_stats(self, partition: str, name: str, instant: Optional[str],
                       skip: Optional[str] = None) -> list[CS.ColumnStats]:
        """The statistics of the records a log file's data blocks hold (only those of ``instant``
        when given; never those of ``skip``); none when it has no such data block."""
        rel = f"{partition}/{name}" if partition else name
        tables = []
        for b in L.read_log_file(self.data, rel, warn=False):
            if b.block_type not in (L.BlockType.AVRO_DATA, L.BlockType.PARQUET_DATA):
                continue
            if (instant is not None and b.instant_time != instant) or (skip is not None and b.instant_time == skip):
                continue
            tables.append(b.data_table())
        if not tables:
            return []
        data = pa.concat_tables(tables, promote_options="permissive")
        return CS.records_column_stats(data, name, partition, self._select(data.schema.names), self.version)

    def file_stats(self, partition: str, name: str, instant: Optional[str],
                   skip: Optional[str] = None) -> list[CS.ColumnStats]:
        """Statistics of one data file (see :meth:`base_file_stats`, :meth:`log_file_stats`)."""
        if N.is_base_file(name):
            return self.base_file_stats(partition, name)
        if N.is_log_file(name):
            return self.log_file_stats(partition, name, instant, skip)
        return []

    def tombstones(self, partition: str, name: str, recorded: Iterable[str] = ()) -> list[CS.ColumnStats]:
        """A deleted file's tombstones, one per indexed column and per column ``recorded`` for it (an
        earlier column list, or a Java writer's, may have indexed others)."""
        cols = list(dict.fromkeys([*self.columns(), *sorted(recorded)]))
        return [CS.deleted_stats(name, c, partition, self.version) for c in cols]

    def records(self, files_records: Iterable[FilesRecord], instant: str) -> list[CS.ColumnStats]:
        """The column-stats records of one deltacommit from its ``files`` records."""
        files_records = list(files_records)
        recorded: dict[str, dict[str, Any]] = {}
        if any(fi.is_deleted for r in files_records if r.type == 2 for fi in r.files.values()):
            recorded = stats_by_file(read_column_stats(MetadataTable(self.table)))
        out: list[CS.ColumnStats] = []
        for rec in files_records:
            if rec.type != 2:
                continue
            part = partition_name(rec.key)
            for name, fi in sorted(rec.files.items()):
                if fi.is_deleted:
                    out.extend(self.tombstones(part, name, recorded.get(name, {})))
                elif self.layout == 2 and N.is_log_file(name) and N.parse_log_file(name).base_instant == instant:
                    # A 1.x log file named by this instant was created by it: every block is its own, even
                    # blocks that keep another instant's time (a partial compaction's split files).
                    out.extend(self.file_stats(part, name, None))
                else:
                    out.extend(self.file_stats(part, name, instant))
        return out

    # -- writing -----------------------------------------------------------------------------------
    def file_groups(self) -> dict[str, tuple[str, Optional[str]]]:
        """file id -> (latest slice's base instant, its base file name) of every file group."""
        out: dict[str, tuple[str, Optional[str]]] = {}
        for sl in MetadataTable(self.table).partition_slices(PARTITION):
            ref = sl.base_file or (sl.log_files[0] if sl.log_files else None)
            if ref is None:
                continue
            name = ref.rsplit("/", 1)[-1]
            fid = N.parse_base_file(name).file_id if N.is_base_file(name) else N.parse_log_file(name).file_id
            base = sl.base_file.rsplit("/", 1)[-1] if sl.base_file else None
            out[fid] = (sl.base_instant, base)
        if not out:
            raise MetadataTableError(f"{self.storage.uri(PARTITION)} has no file group")
        return out

    def _next_version(self, fid: str, base_instant: str) -> int:
        top = 0
        for s in self.storage.list_dir(PARTITION):
            if N.is_log_file(s.name):
                lp = N.parse_log_file(s.name)
                if lp.file_id == fid and lp.base_instant == base_instant:
                    top = max(top, lp.version)
        return top + 1

    def write(self, stats: list[CS.ColumnStats], instant: str) -> list[tuple[str, WriteStat]]:
        """One log file per file group with records; returns (partition, write stat) of each."""
        if not stats:
            return []
        groups = self.file_groups()
        count = len(groups)
        by_group: dict[str, list[CS.ColumnStats]] = {}
        for s in stats:
            fid = CS.file_group_id(CS.file_group_index(s.key, count))
            if fid not in groups:
                raise MetadataTableError(
                    f"{self.storage.uri(PARTITION)} has file groups {sorted(groups)}, not {fid} that key {s.key} "
                    "maps to: the partition is damaged. Drop it (hoodie.metadata.index.column.stats.enable=false) "
                    "and create it again")
            by_group.setdefault(fid, []).append(s)
        out = []
        schema = MW.schema_json(self.version)
        for fid, recs in sorted(by_group.items()):
            base_instant, base_name = groups[fid]
            if self.layout == 2:
                base_instant, base_name = instant, None
            version = self._next_version(fid, base_instant)
            name = N.log_file_name(fid, base_instant, version, TOKEN)
            rel = f"{PARTITION}/{name}"
            header = {L.HeaderKey.INSTANT_TIME: instant, L.HeaderKey.SCHEMA: schema}
            block = L.encode_block(L.BlockType.HFILE_DATA, header, CS.stats_hfile(recs, schema, self.version))
            size = L.write_log_file(self.storage, rel, [block])
            out.append((PARTITION, WriteStat(
                file_id=fid, path=rel, partition_path=PARTITION, prev_commit=base_instant, num_writes=len(recs),
                num_update_writes=len(recs), total_write_bytes=size, file_size_in_bytes=size, total_log_blocks=1,
                is_delta=True, log_version=version, base_file=base_name or "", log_files=[name])))
        return out

    # -- creation ----------------------------------------------------------------------------------
    def init_instant(self, taken: set[str], upto: str) -> str:
        """The initialisation instant: v6 ``<upto>011`` (then 012...), v8/9 ``00000000000000001`` (then ...2)."""
        if self.layout == 1:
            cands = [f"{upto}{n:03d}" for n in range(11, 100)]
        else:
            cands = [f"{'0' * 16}{n}" for n in range(1, 10)]
        for c in cands:
            if c not in taken:
                return c
        raise MetadataTableError(f"no free initialisation instant for column_stats in {self.storage.uri()}")

    def bootstrap_files(self, init: str, listing: Mapping[str, Mapping[str, int]], skip: Optional[str] = None
                        ) -> tuple[list[tuple[str, WriteStat]], int]:
        """Write the partition's files for ``listing`` (partition -> names): per file group an empty
        DELETE block log and a base HFile. Log blocks of instant ``skip`` (the one being recorded) are
        left to its own deltacommit. Returns the write stats and the record count."""
        stats: list[CS.ColumnStats] = []
        for part, names in sorted(listing.items()):
            for name in sorted(names):
                stats.extend(self.file_stats(part, name, None, skip))
        count = self.new_group_count
        by_group: dict[str, list[CS.ColumnStats]] = {CS.file_group_id(i): [] for i in range(count)}
        for s in stats:
            by_group[CS.file_group_id(CS.file_group_index(s.key, count))].append(s)
        if self.storage.exists(PARTITION):
            self.storage.delete_dir(PARTITION)
        self.storage.write_bytes(f"{PARTITION}/{N.PARTITION_METAFILE}", MW.partition_metadata_bytes(init))
        schema = MW.schema_json(self.version)
        out = []
        for fid, recs in by_group.items():
            log_name = N.log_file_name(fid, init, 1, MW.BOOTSTRAP_LOG_TOKEN)
            L.write_log_file(self.storage, f"{PARTITION}/{log_name}", [MW.empty_delete_block(init)])
            rel = f"{PARTITION}/{N.base_file_name(fid, TOKEN, init, '.hfile')}"
            data = CS.stats_hfile(recs, schema, self.version)
            self.storage.create_new(rel, data)
            out.append((PARTITION, WriteStat(
                file_id=fid, path=rel, partition_path=PARTITION, num_writes=len(recs), num_inserts=len(recs),
                total_write_bytes=len(data), file_size_in_bytes=len(data))))
        return out, len(stats)


def mark_listed(table: HoodieTable, update: Any) -> HoodieTable:
    """Add ``column_stats`` to ``hoodie.table.metadata.partitions`` (after its init committed); returns
    what ``update`` (:func:`hoodie.format.table.update_table_properties`) returns, the new snapshot."""
    parts = sorted(set(partitions_prop(table.props)) | {PARTITION})
    inflight = [p for p in partitions_prop(table.props, PARTITIONS_INFLIGHT_PROP) if p != PARTITION]
    return update(table, {PARTITIONS_PROP: ",".join(parts), PARTITIONS_INFLIGHT_PROP: ",".join(inflight)})


__all__ = ["ColumnStatsWriter", "column_stats_listed", "mark_listed", "partitions_prop", "PARTITION"]
