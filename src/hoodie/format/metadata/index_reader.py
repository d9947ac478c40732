"""Reading the ``column_stats`` partition of a metadata table: every file group's latest slice (base
HFile, then the valid log blocks in log order), merged per key.

Merging (``HoodieMetadataPayload`` for type 3, :func:`~hoodie.format.metadata.column_stats.merge_stats`):
a newer record for a key widens the older one's range and adds its counts, a tombstone
(``isDeleted``) removes the key, and so does a DELETE block's key. The slices and the valid
blocks follow the ``files`` partition's rules (:class:`~hoodie.format.metadata.table.MetadataTable`).
"""

from __future__ import annotations

from typing import Any, Optional

from hoodie.format.hfile import HFileError, HFileReader
from hoodie.format.log.logformat import BlockType, LogFormatError
from hoodie.format.metadata.column_stats import COLUMN_STATS_PARTITION, ColumnStats, StatsDecoder, merge_stats
from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError
from hoodie.format.metadata.table import PARTITIONS_PROP, MetadataTable


def column_stats_available(props: dict[str, str]) -> bool:
    """Whether ``column_stats`` is a fully initialised MDT partition of the table."""
    parts = {p.strip() for p in (props.get(PARTITIONS_PROP) or "").split(",") if p.strip()}
    return COLUMN_STATS_PARTITION in parts


def _hfile_stats(reader: HFileReader, schema: Optional[str], where: str) -> list[ColumnStats]:
    if not schema:
        raise MetadataTableError(f"{where}: HFile without a schema. {LIST_THROUGH_STORAGE}")
    dec = StatsDecoder(schema, where)
    return [dec.decode(k, v) for k, v in reader.items()]


def _merge_into(out: dict[str, ColumnStats], key: str, s: ColumnStats) -> None:
    old = out.get(key)
    if old is None:
        if not s.is_deleted:
            out[key] = s
        return
    merged = merge_stats(old, s)
    if merged is None:
        del out[key]
    else:
        out[key] = merged


def read_column_stats(mdt: MetadataTable) -> dict[str, ColumnStats]:
    """key -> the live column statistics of the ``column_stats`` partition.

    Raises:
        MetadataTableError: unreadable files, records of another type, a stale metadata table.
    """
    out: dict[str, ColumnStats] = {}
    st = mdt.storage
    for sl, scan in mdt.index_blocks(COLUMN_STATS_PARTITION):
        if sl.base_file:
            try:
                with HFileReader.from_storage(st, sl.base_file) as reader:
                    for k, s in zip((k.decode() for k, _ in reader.items()),
                                    _hfile_stats(reader, reader.schema, st.uri(sl.base_file))):
                        _merge_into(out, k, s)
            except HFileError as e:
                raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
        for block in scan.blocks:
            where = f"{st.uri(block.log_file)} (block at offset {block.offset})"
            if block.block_type == BlockType.DELETE:
                try:
                    keys = block.delete_records().column("record_key").to_pylist()
                except LogFormatError as e:
                    raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
                for k in keys:
                    out.pop(str(k), None)
                continue
            try:
                reader = HFileReader(block.read_content(), name=where)
                keys = [k.decode() for k, _ in reader.items()]
                stats = _hfile_stats(reader, block.schema_json or reader.schema, where)
            except HFileError as e:
                raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
            for k, s in zip(keys, stats):
                _merge_into(out, k, s)
    return out


def stats_by_file(stats: dict[str, Any]) -> dict[str, dict[str, ColumnStats]]:
    """file name -> column -> statistics."""
    out: dict[str, dict[str, ColumnStats]] = {}
    for s in stats.values():
        out.setdefault(s.file_name, {})[s.column_name] = s
    return out


__all__ = ["column_stats_available", "read_column_stats", "stats_by_file"]
