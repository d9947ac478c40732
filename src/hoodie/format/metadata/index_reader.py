"""Reading the index partitions of a metadata table (``column_stats``, ``partition_stats``, ``record_index``): every file group's latest slice (base
HFile, then the valid log blocks in log order), merged per key.

Merging (``HoodieMetadataPayload`` for type 3, :func:`~hoodie.format.metadata.column_stats.merge_stats`):
a newer record for a key widens the older one's range and adds its counts, a tombstone
(``isDeleted``) removes the key, and so does a DELETE block's key. The slices and the valid
blocks follow the ``files`` partition's rules (:class:`~hoodie.format.metadata.table.MetadataTable`).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

from hoodie.format.hfile import HFileError, HFileReader
from hoodie.format.log.logformat import BlockType, LogFormatError
from hoodie.format.metadata.column_stats import (
    COLUMN_STATS_PARTITION, PARTITION_STATS_PARTITION, TYPE_COLUMN_STATS, TYPE_PARTITION_STATS, ColumnStats,
    StatsDecoder, merge_stats,
)
from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError
from hoodie.format.metadata.record_index import FILE_ID_PREFIX as RI_FILE_ID_PREFIX
from hoodie.format.metadata.record_index import (
    RECORD_INDEX_PARTITION, RecordLocation, decode_record_location, keys_by_group,
)
from hoodie.format.metadata.table import PARTITIONS_PROP, MetadataTable


def column_stats_available(props: dict[str, str]) -> bool:
    """Whether ``column_stats`` is a fully initialised MDT partition of the table."""
    parts = {p.strip() for p in (props.get(PARTITIONS_PROP) or "").split(",") if p.strip()}
    return COLUMN_STATS_PARTITION in parts


def _index_partition_available(props: dict[str, str], partition: str) -> bool:
    parts = {p.strip() for p in (props.get(PARTITIONS_PROP) or "").split(",") if p.strip()}
    return partition in parts


def partition_stats_available(props: dict[str, str]) -> bool:
    """Whether ``partition_stats`` is a fully initialised MDT partition of the table."""
    return _index_partition_available(props, PARTITION_STATS_PARTITION)


def record_index_available(props: dict[str, str]) -> bool:
    """Whether ``record_index`` is a fully initialised MDT partition of the table."""
    return _index_partition_available(props, RECORD_INDEX_PARTITION)


def index_cells(mdt: MetadataTable, partition: str) -> Iterator[tuple[str, Optional[bytes], Optional[str], str]]:
    """Every cell of an index partition in merge order: (key, Avro value or None for a DELETE block's
    key, the writer schema, where): each file group's latest slice, base HFile first, then the valid log
    blocks in log order.

    Raises:
        MetadataTableError: unreadable files, a stale metadata table.
    """
    for sl, scan in mdt.index_blocks(partition):
        yield from slice_cells(mdt, sl, scan)


def slice_cells(mdt: MetadataTable, sl: Any, scan: Any) -> Iterator[tuple[str, Optional[bytes], Optional[str], str]]:
    """The cells of one index file group's latest slice ``sl`` and its surviving log ``scan`` (an
    :meth:`~hoodie.format.metadata.table.MetadataTable.index_blocks` pair), in merge order, as
    :func:`index_cells` yields them."""
    st = mdt.storage
    if sl.base_file:
        try:
            with HFileReader.from_storage(st, sl.base_file) as reader:
                schema = reader.schema
                where = st.uri(sl.base_file)
                for k, v in reader.items():
                    yield k.decode(), v, schema, where
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
                yield str(k), None, None, where
            continue
        try:
            reader = HFileReader(block.read_content(), name=where)
            schema = block.schema_json or reader.schema
            cells = [(k.decode(), v) for k, v in reader.items()]
        except HFileError as e:
            raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
        for k, v in cells:
            yield k, v, schema, where


def merge_stats_into(out: dict[str, ColumnStats], key: str, s: ColumnStats) -> None:
    """Merge the record ``s`` of ``key`` into ``out`` as a reader does (a tombstone removes the key)."""
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


def _read_stats(mdt: MetadataTable, partition: str, record_type: int) -> dict[str, ColumnStats]:
    return merged_stats(index_cells(mdt, partition), record_type)


def merged_stats(cells: Iterable[tuple[str, Optional[bytes], Optional[str], str]],
                 record_type: int) -> dict[str, ColumnStats]:
    """key -> the live statistics of ``cells`` (in merge order), merged as a reader merges them."""
    out: dict[str, ColumnStats] = {}
    decoders: dict[tuple[str, str], StatsDecoder] = {}
    for k, v, schema, where in cells:
        if v is None:
            out.pop(k, None)
            continue
        if not schema:
            raise MetadataTableError(f"{where}: HFile without a schema. {LIST_THROUGH_STORAGE}")
        dec = decoders.get((schema, where))
        if dec is None:
            dec = decoders[(schema, where)] = StatsDecoder(schema, where, record_type)
        merge_stats_into(out, k, dec.decode(k.encode(), v))
    return out


def read_column_stats(mdt: MetadataTable) -> dict[str, ColumnStats]:
    """key -> the live column statistics of the ``column_stats`` partition.

    Raises:
        MetadataTableError: unreadable files, records of another type, a stale metadata table.
    """
    return _read_stats(mdt, COLUMN_STATS_PARTITION, TYPE_COLUMN_STATS)


def read_partition_stats(mdt: MetadataTable) -> dict[str, ColumnStats]:
    """key -> the live partition statistics of the ``partition_stats`` partition (``file_name`` and
    ``partition``: the partition path).

    Raises:
        MetadataTableError: unreadable files, records of another type, a stale metadata table.
    """
    return _read_stats(mdt, PARTITION_STATS_PARTITION, TYPE_PARTITION_STATS)


def read_record_index(mdt: MetadataTable) -> dict[str, RecordLocation]:
    """record key -> its location in the ``record_index`` partition (a newer record replaces an
    older one; a DELETE block's key removes it).

    Raises:
        MetadataTableError: unreadable files, records of another type, a stale metadata table.
    """
    return merged_locations(index_cells(mdt, RECORD_INDEX_PARTITION))


def merged_locations(cells: Iterable[tuple[str, Optional[bytes], Optional[str], str]]) -> dict[str, RecordLocation]:
    """record key -> location of ``cells`` (in merge order): a newer record replaces an older one, a
    DELETE block's key removes it."""
    out: dict[str, RecordLocation] = {}
    decoders: dict[str, Any] = {}
    for k, v, schema, where in cells:
        if v is None:
            out.pop(k, None)
            continue
        if not schema:
            raise MetadataTableError(f"{where}: HFile without a schema. {LIST_THROUGH_STORAGE}")
        out[k] = decode_record_location(k, v, schema, where, decoders)
    return out


def lookup_record_index(mdt: MetadataTable, keys: Iterable[str]) -> dict[str, RecordLocation]:
    """The ``record_index`` locations of ``keys`` (those it holds): in each file group only the keys that
    hash to it, looked up in its base HFile and its valid log blocks (in order; a DELETE block's key
    removes it). Cheaper than :func:`read_record_index` for a few keys of a large index.

    Raises:
        MetadataTableError: unreadable files, records of another type, a stale metadata table.
    """
    wanted = set(keys)
    if not wanted:
        return {}
    st = mdt.storage
    blocks = mdt.index_blocks(RECORD_INDEX_PARTITION)
    count = len(blocks)
    per_group = keys_by_group(wanted, count)
    out: dict[str, RecordLocation] = {}
    decoders: dict[str, Any] = {}
    for sl, scan in blocks:
        ref = (sl.base_file or (sl.log_files[0] if sl.log_files else "")).rsplit("/", 1)[-1].lstrip(".")
        try:
            index = int(ref[len(RI_FILE_ID_PREFIX):len(RI_FILE_ID_PREFIX) + 4])
        except ValueError:
            raise MetadataTableError(f"{st.uri(RECORD_INDEX_PARTITION)}: {ref} is not a record-index file. "
                                     f"{LIST_THROUGH_STORAGE}") from None
        mine = per_group.get(index)
        if not mine:
            continue
        rows = [k.encode("utf-8") for k in mine]
        if sl.base_file:
            try:
                with HFileReader.from_storage(st, sl.base_file) as reader:
                    where = st.uri(sl.base_file)
                    schema = reader.schema or ""
                    for k, v in reader.get_many(rows).items():
                        key = k.decode()
                        out[key] = decode_record_location(key, v, schema, where, decoders)
            except HFileError as e:
                raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
        for block in scan.blocks:
            where = f"{st.uri(block.log_file)} (block at offset {block.offset})"
            if block.block_type == BlockType.DELETE:
                try:
                    for k in block.delete_records().column("record_key").to_pylist():
                        out.pop(str(k), None)
                except LogFormatError as e:
                    raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
                continue
            try:
                reader = HFileReader(block.read_content(), name=where)
                schema = block.schema_json or reader.schema or ""
                found = reader.get_many(rows)
            except HFileError as e:
                raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
            for k, v in found.items():
                key = k.decode()
                out[key] = decode_record_location(key, v, schema, where, decoders)
    return out  # only looked-up keys were added


def stats_by_file(stats: dict[str, Any]) -> dict[str, dict[str, ColumnStats]]:
    """file name -> column -> statistics."""
    out: dict[str, dict[str, ColumnStats]] = {}
    for s in stats.values():
        out.setdefault(s.file_name, {})[s.column_name] = s
    return out


__all__ = ["column_stats_available", "partition_stats_available", "record_index_available", "index_cells",
           "slice_cells", "merged_stats", "merged_locations",
           "read_column_stats", "read_partition_stats", "merge_stats_into", "lookup_record_index", "read_record_index", "stats_by_file"]
