"""The index partitions' side of a metadata-table compaction.

Java compacts every file group of every metadata-table partition at once (one compaction plan); hoodie
compacted only ``files``, so the index partitions (``column_stats``, ``partition_stats``,
``record_index``) kept every deltacommit's log block and each lookup read all of them. Here every file
group of each index partition the table lists gets, at the compaction instant, a base HFile holding its
merged records: its latest slice's base file and valid log blocks folded as a reader folds them (a record
index entry: the newest one, a DELETE block's key removed; statistics: merged as
:func:`~hoodie.format.metadata.index_reader.merge_stats_into` merges them, tombstones dropped), encoded
as hoodie encodes new records (the writer schema of the table version). Keys stay in their file group
(the same hash), so writers keep finding them.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import fastavro

from hoodie.format.file_group import naming as N
from hoodie.format.metadata import column_stats as CS
from hoodie.format.metadata import encoding as MW
from hoodie.format.metadata import record_index as RI
from hoodie.format.metadata.index_reader import merged_locations, merged_stats, slice_cells
from hoodie.format.metadata.table import PARTITIONS_PROP, MetadataTable
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import plans
from hoodie.format.timeline.commit_metadata import WriteStat
from hoodie.services.metadata.indexes import PARTITION_STATS, RECORD_INDEX, TOKEN, hfile

# The index partitions a compaction folds, with the record type of their statistics (None: record index).
COMPACTED = {CS.COLUMN_STATS_PARTITION: CS.TYPE_COLUMN_STATS, PARTITION_STATS: CS.TYPE_PARTITION_STATS,
             RECORD_INDEX: None}


class IndexCompaction:
    """The compaction of the index partitions of ``table``'s metadata table (at ``storage``): the plan's
    operations first (:meth:`operations`), then the base files (:meth:`execute`)."""

    def __init__(self, table: HoodieTable, storage: Storage, version: int, layout: int) -> None:
        self.table = table
        self.storage = storage
        self.version = version
        self.layout = layout
        listed = [p.strip() for p in str(table.props.get(PARTITIONS_PROP, "")).split(",") if p.strip()]
        self.partitions = [p for p in COMPACTED if p in listed and storage.exists(p)]
        mdt = MetadataTable(table)
        self._mdt = mdt
        # (partition, file id, slice, log scan) of every file group, read once for the plan and the work.
        self._groups: list[tuple[str, str, Any, Any]] = []
        for part in self.partitions:
            for sl, scan in mdt.index_blocks(part):
                ref = (sl.base_file or (sl.log_files[0] if sl.log_files else "")).rsplit("/", 1)[-1]
                if not ref:
                    continue
                fid = N.parse_base_file(ref).file_id if N.is_base_file(ref) else N.parse_log_file(ref).file_id
                self._groups.append((part, fid, sl, scan))

    def operations(self) -> list[dict]:
        """One ``HoodieCompactionOperation`` per index file group (base file and log files by name)."""
        def name(path: str) -> str:
            return path.rsplit("/", 1)[-1]

        return [plans.compaction_operation(sl.base_instant, name(sl.base_file) if sl.base_file else None,
                                           [name(p) for p in sl.log_files], fid, part, {})
                for part, fid, sl, _ in self._groups]

    def execute(self, instant: str) -> list[tuple[str, WriteStat]]:
        """Write each file group's merged records as its base file at ``instant``; (partition, write stat)."""
        schema = MW.schema_json(self.version)
        out = []
        for part, fid, sl, scan in self._groups:
            cells = _merged_cells(self._mdt, part, sl, scan, self.version, schema)
            rel = f"{part}/{N.base_file_name(fid, TOKEN, instant, '.hfile')}"
            data = hfile(cells, schema)
            self.storage.create_new(rel, data)
            base_name = sl.base_file.rsplit("/", 1)[-1] if sl.base_file else None
            out.append((part, WriteStat(
                file_id=fid, path=rel, partition_path=part, prev_commit=sl.base_instant, num_writes=len(cells),
                total_write_bytes=len(data), file_size_in_bytes=len(data), total_log_files_compacted=len(sl.log_files),
                prev_base_file=base_name if self.layout == 2 else None)))
        return out


def _merged_cells(mdt: MetadataTable, partition: str, sl: Any, scan: Any, version: int,
                  schema: str) -> Mapping[str, bytes]:
    """The encoded records of one file group once its slice is folded (module doc)."""
    record_type = COMPACTED[partition]
    if record_type is None:
        return dict(RI.encode_locations(merged_locations(slice_cells(mdt, sl, scan)), schema))
    # Keyed by the stored keys (a record's own key derivation may differ from a Java writer's: the cells must
    # stay where later tombstones and updates look for them).
    parsed = fastavro.parse_schema(json.loads(schema))
    return {k: CS.encode_stats_value(s, parsed, version)
            for k, s in merged_stats(slice_cells(mdt, sl, scan), record_type).items()}


__all__ = ["COMPACTED", "IndexCompaction"]
