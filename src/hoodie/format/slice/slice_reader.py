"""Reading one file slice into Arrow: its base file (conformed to the read schema, Java's float
widening, schema evolution on read) and its log blocks (scanned in log order: corrupt, rolled-back and
uncommitted blocks left out), merged by Hudi's rules (ordering field or commit time, deletes, the
partial updates of table versions 8/9, Hudi's operation column).

The table read that plans which slices a query reads is :mod:`hoodie.format.slice.reader`, which
re-exports this module's names (``from hoodie.format.slice.reader import read_file_slice`` stays).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.format.slice.filters import ReadError
from hoodie.format.file_group.fsview import FileSlice
from hoodie.format.slice.merge import (
    IS_DELETED, DeleteBatch, LogBatch, merge_commit_time, merge_ordering,
)
from hoodie.format.schema_on_read import SchemaOnRead, SchemaOnReadError, apply_mapping, base_file_instant
from hoodie.format.storage import Storage, arrow_threads, open_parquet
from hoodie.format.table import OPERATION_COLUMN, HoodieTable
from hoodie.format.timeline.active import Timeline
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.keys.java_text import java_double_to_string
from hoodie.format.avro.schema import avro_to_arrow_schema


@dataclass
class ScanResult:
    """The valid data/delete blocks of a slice's logs, in log order, plus scan statistics."""

    blocks: list[Any] = field(default_factory=list)
    total_blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0
    skipped_uncommitted: int = 0


IS_PARTIAL_HEADER = 7  # HoodieLogBlock.HeaderMetadataType.IS_PARTIAL (table versions 8/9)


def scan_log_blocks(storage: Storage, log_paths: Sequence[str], timeline: Timeline,
                    as_of: Optional[str] = None, skip_files: Iterable[str] = ()) -> ScanResult:
    """Apply Hudi's log-scan rules (reference §3.8.5) to a slice's log files (already in order).

    * stop at the first block whose instant is after ``as_of``;
    * skip data/delete blocks whose instant is not a completed commit-timeline instant (or is
      inflight), unless it is older than the active timeline (archived, hence completed);
    * a rollback command block removes earlier queued blocks of its target instant and any
      corrupt blocks;
    * corrupt blocks are skipped (the log reader has already warned).
    """
    completed = {i.timestamp for i in timeline.completed().commits().instants}
    # The listed timeline's start, not the filtered one's first instant: a write a reader's completion-time
    # cut dropped is not archived, however old.
    start = timeline.start
    skip = set(skip_files)
    res = ScanResult()
    queue: list[Any] = []
    for path in log_paths:
        if path in skip or path.rsplit("/", 1)[-1] in skip:
            continue
        stop = False
        for block in read_log_file(storage, path):
            res.total_blocks += 1
            btype = block.block_type
            if btype == BlockType.CORRUPT:
                res.corrupt_blocks += 1
                queue.append(block)
                continue
            inst = block.instant_time
            if as_of is not None and inst is not None and inst > as_of:
                stop = True
                break
            if btype == BlockType.COMMAND:
                res.rollback_blocks += 1
                target = block.target_instant_time
                queue = [
                    b for b in queue
                    if b.block_type != BlockType.CORRUPT and b.instant_time != target
                ]
                continue
            if btype in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE):
                if inst not in completed and not (start is not None and inst is not None and inst < start):
                    res.skipped_uncommitted += 1
                    continue
                queue.append(block)
                continue
            if btype == BlockType.HFILE_DATA:
                raise ReadError(f"{path}: HFile data blocks belong to the metadata table, not data tables")
            if btype == BlockType.CDC_DATA:
                continue
        if stop:
            break
    res.blocks = [b for b in queue if b.block_type != BlockType.CORRUPT]
    return res


def java_float_to_double(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """float -> double as Hudi's record rewriting widens it: ``Double.valueOf(Float.toString(f))``
    (``HoodieAvroUtils.rewritePrimaryTypeWithDiffSchemaType``), so ``0.1f`` becomes ``0.1``, not
    the float's binary value ``0.10000000149011612``."""
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    uniq = pc.unique(arr)
    as_double = pa.array([None if v is None else float(java_double_to_string(v, float32=True))
                          for v in uniq.to_pylist()], pa.float64())
    return pc.take(as_double, pc.index_in(arr, value_set=uniq))


def _conform(table: pa.Table, schema: pa.Schema, java_floats: bool = False) -> pa.Table:
    """Project ``table`` onto ``schema``: reorder, cast, and fill absent columns with nulls.

    ``java_floats``: widen float columns to double as Hudi does when it merges or rewrites
    records (:func:`java_float_to_double`); otherwise the binary value is kept (a plain base
    file read, as Spark and hudi-rs read copy-on-write files)."""
    if table.schema.equals(schema, check_metadata=False):
        # The file holds exactly the wanted columns with the wanted types (the common case): nothing to
        # reorder, cast, fill or widen; the result carries ``schema`` itself (its metadata, not the file's).
        return pa.Table.from_arrays(table.columns, schema=schema)
    cols = []
    n = table.num_rows
    names = set(table.column_names)
    for f in schema:
        if f.name in names:
            col = table.column(f.name)
            if java_floats and pa.types.is_float32(col.type) and pa.types.is_float64(f.type):
                col = java_float_to_double(col)
            if not col.type.equals(f.type):
                try:
                    col = col.cast(f.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise ReadError(
                        f"column {f.name!r} has type {col.type} in a data file but {f.type} in the "
                        f"table schema and cannot be converted: {e}"
                    ) from e
            cols.append(col)
        else:
            cols.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def read_base_file(storage: Storage, path: str, schema: pa.Schema,
                   filters: Optional[pc.Expression] = None, java_floats: bool = False,
                   schema_on_read: Optional[SchemaOnRead] = None,
                   footer: Optional[dict[bytes, bytes]] = None) -> pa.Table:
    """Read one base file projected onto ``schema`` (missing columns become nulls; ``java_floats``
    as in :func:`_conform`, for records that are merged or rewritten). ``schema_on_read``: the table
    evolves its schema on read, the file's columns are mapped onto ``schema`` by field id.
    ``footer``, when given, receives the file's footer key/value metadata (bloom filter, key range).

    Raises:
        ReadError: the file is not readable Parquet (truncated, overwritten, not a base file); the
            message names it. A missing or forbidden file keeps its own OSError.
    """
    try:
        # A cached footer (local files) spares decoding the footer and its bloom filter again on every read.
        pf = open_parquet(storage, path)
        present = set(pf.schema_arrow.names)
        mapping = None
        if schema_on_read is not None:
            mapping = schema_on_read.columns_of(base_file_instant(path), log=False)
            by_lower = {n.lower(): n for n in present}
            cols = [by_lower[m.file_name.lower()] for m in mapping
                    if m.file_name is not None and m.file_name.lower() in by_lower]
        else:
            cols = [f.name for f in schema if f.name in present]
        tbl = pf.read(columns=cols, use_threads=arrow_threads())
        if footer is not None:
            footer.update(pf.metadata.metadata or {})
        if mapping is not None:
            tbl = apply_mapping(tbl, mapping, schema)
    except (FileNotFoundError, PermissionError):
        raise
    except (pa.ArrowException, OSError) as e:
        # pyarrow's message ("Parquet magic bytes not found in footer") does not say which file.
        raise ReadError(f"base file {storage.uri(path)} is not readable Parquet ({e}); it is damaged or was "
                        "replaced by another file. Restore it from a copy, or roll back / restore the table to "
                        "before the commit that wrote it") from e
    out = _conform(tbl, schema, java_floats)
    if filters is not None:
        out = out.filter(filters)
    return out


def read_file_slice(table: HoodieTable, file_slice: FileSlice, schema: pa.Schema, *,
                    as_of: Optional[str] = None, skip_log_files: Iterable[str] = (),
                    schema_on_read: Optional[SchemaOnRead] = None) -> pa.Table:
    """Merge one file slice (base file + valid log blocks) into Arrow, with ``schema`` columns.

    ``schema`` must contain ``_hoodie_record_key`` and ``_hoodie_commit_time`` (and the ordering
    field in ordering mode) when the slice has log files. ``schema_on_read`` maps each file's columns
    by field id (:class:`~hoodie.format.schema_on_read.SchemaOnRead`, from :func:`plan_read`).
    """
    blocks: Sequence[Any] = ()
    if file_slice.log_files:
        blocks = scan_log_blocks(table.storage, [lf.path for lf in file_slice.sorted_logs()], table.timeline,
                                 as_of, skip_log_files).blocks
    return _merge_slice(table, file_slice, blocks, schema, schema_on_read)


def _merge_slice(table: HoodieTable, file_slice: FileSlice, blocks: Sequence[Any], schema: pa.Schema,
                 schema_on_read: Optional[SchemaOnRead] = None) -> pa.Table:
    """Merge a slice's base file with its valid log blocks (as :func:`scan_log_blocks` returns them).

    Merge-on-read records go through Hudi's record merging, which widens float to double through
    the decimal string (:func:`java_float_to_double`), also in slices without log files and in
    read-optimized reads: hudi-rs reads every merge-on-read file that way."""
    java = table.is_mor
    # A table with Hudi's operation field (Flink changelog mode): a log record whose _hoodie_operation is
    # "D" deletes its key when it wins the merge, as a _hoodie_is_deleted = true row does (Hudi's Spark
    # LogFileIterator drops it; so does hudi-rs). The flag column is added for the merge only.
    op_flag = bool(blocks) and IS_DELETED not in schema.names and table.has_operation_field
    merge_schema = schema.append(pa.field(IS_DELETED, pa.bool_())) if op_flag else schema
    if op_flag:
        return _merge_slice(table, file_slice, blocks, merge_schema, schema_on_read).drop_columns([IS_DELETED])
    base = (read_base_file(table.storage, file_slice.base_file.path, schema, java_floats=java,
                           schema_on_read=schema_on_read)
            if file_slice.base_file else None)
    if not blocks:
        return base if base is not None else schema.empty_table()
    mode = table.merge_mode
    if any(_is_partial(b) for b in blocks):
        if schema_on_read is not None:
            raise SchemaOnReadError(
                f"{table.base_path}: partial-update log blocks (IS_PARTIAL) in a table whose schema evolves on read; "
                "hoodie does not map partial blocks by field id. Read this table with Java Hudi")
        return _merge_partial(table, base, blocks, schema, java)
    batches = _log_batches(blocks, schema, java_floats=java, schema_on_read=schema_on_read)
    if mode.use_ordering and mode.ordering_field:
        return merge_ordering(base, batches, schema, mode.ordering_field)
    return merge_commit_time(base, batches, schema)


def is_partial(block: Any) -> bool:
    """Whether a log block is a Hudi 1.x partial-update block (header ``IS_PARTIAL=true``)."""
    return _is_partial(block)


def merge_partial_blocks(table: HoodieTable, base: Optional[pa.Table], blocks: Sequence[Any],
                         schema: pa.Schema) -> pa.Table:
    """A slice's records from its base rows and committed log blocks, some of them partial updates
    (compaction merges such a slice as a read does; see :func:`_merge_partial`)."""
    return _merge_partial(table, base, blocks, schema, True)


def _is_partial(block: Any) -> bool:
    return str(block.header.get(IS_PARTIAL_HEADER, "")).lower() == "true"


def _merge_partial(table: HoodieTable, base: Optional[pa.Table], blocks: Sequence[Any], schema: pa.Schema,
                   java: bool) -> pa.Table:
    """Merge a slice holding Hudi 1.x partial-update blocks (``IS_PARTIAL``), commit-time ordering:
    blocks apply in log order; a partial block's rows carry only the columns of its own schema, laid
    over the key's current record (the other columns keep their values; a key without one gets nulls).

    Raises:
        ReadError: with event-time ordering, where whether a partial row wins depends on ordering
            values it may not hold (Hudi 1.1's rules for that are not implemented).
    """
    mode = table.merge_mode
    if mode.use_ordering and mode.ordering_field:
        raise ReadError(
            f"{table.base_path}: partial-update log blocks (IS_PARTIAL) on a table merged by event time "
            f"({mode.ordering_field}); hoodie merges partial updates with commit-time ordering only. Read this "
            f"table with Hudi 1.x, or compact it with Hudi first")
    state = base
    pending: list[Any] = []
    for b in blocks:
        if not _is_partial(b):
            pending.append(b)
            continue
        state = merge_commit_time(state, _log_batches(pending, schema, java_floats=java), schema)
        pending = []
        rows = block_data(b, schema, java)
        held = {f["name"] for f in json.loads(b.schema_json or "{}").get("fields", [])}
        keys = rows.column("_hoodie_record_key").combine_chunks().cast(pa.string())
        at = (pc.index_in(keys, value_set=state.column("_hoodie_record_key").combine_chunks().cast(pa.string()))
              if state is not None and state.num_rows else pa.nulls(len(keys), pa.int32()))
        cols = []
        for f in schema:
            if f.name in held or state is None or not state.num_rows:
                cols.append(rows.column(f.name) if f.name in held else pa.nulls(rows.num_rows, f.type))
            else:
                cols.append(state.column(f.name).take(at))
        overlaid = pa.Table.from_arrays(cols, schema=schema)
        state = merge_commit_time(state, [LogBatch(data=overlaid)], schema)
    return merge_commit_time(state, _log_batches(pending, schema, java_floats=java), schema)


def slice_record_keys(table: HoodieTable, file_slice: FileSlice) -> pa.Array:
    """The record keys alive in a file slice (with duplicates), for the writer's index lookup.

    Same answer as the ``_hoodie_record_key`` column of :func:`read_file_slice`, cheaper: while
    no valid log block deletes anything, the live keys are the base file's keys plus the keys
    of the valid data blocks (merging only picks versions), so only key columns are read. A
    slice with delete blocks is merged, because a delete may or may not win over a version; so
    is a slice with log blocks in a table with a ``_hoodie_is_deleted`` column.
    """
    storage = table.storage
    blocks: list[Any] = []
    if file_slice.log_files:
        blocks = scan_log_blocks(storage, [lf.path for lf in file_slice.sorted_logs()], table.timeline).blocks
        schema = table.arrow_schema()
        # A data block may delete keys too (rows with _hoodie_is_deleted = true).
        if blocks and (IS_DELETED in schema.names or any(b.block_type == BlockType.DELETE for b in blocks)):
            cols = ["_hoodie_record_key", "_hoodie_commit_time"]
            mode = table.merge_mode
            if mode.ordering_field and mode.ordering_field in schema.names:
                cols.append(mode.ordering_field)
            if IS_DELETED in schema.names:
                cols.append(IS_DELETED)
            merged = _merge_slice(table, file_slice, blocks, pa.schema([schema.field(c) for c in cols]))
            return merged.column("_hoodie_record_key").combine_chunks()
    parts: list[pa.Array] = []
    if file_slice.base_file is not None:
        key = pa.schema([pa.field("_hoodie_record_key", pa.string())])
        parts.append(read_base_file(storage, file_slice.base_file.path, key).column(0).combine_chunks())
    parts += [b.record_keys() for b in blocks]
    if not parts:
        return pa.array([], pa.string())
    return pa.concat_arrays([p.cast(pa.string()) for p in parts])


def block_data(block: Any, schema: pa.Schema, java_floats: bool = False,
               schema_on_read: Optional[SchemaOnRead] = None) -> pa.Table:
    """A data block's records projected onto ``schema`` (``java_floats`` as in :func:`_conform`;
    ``schema_on_read`` maps the block's columns by field id)."""
    if schema_on_read is not None:
        written = avro_to_arrow_schema(block.schema_json) if block.schema_json else pa.schema([])
        mapping = schema_on_read.columns_of(block.instant_time, log=True, written_names=written.names)
        by_lower = {f.name.lower(): f for f in written}
        read = pa.schema([by_lower[m.file_name.lower()] for m in mapping
                          if m.file_name is not None and m.file_name.lower() in by_lower])
        # Decoded under the block's own names and types, then renamed and converted (floats widen the
        # Hudi way in _conform).
        return _conform(apply_mapping(block.data_table(read), mapping, schema), schema, java_floats=java_floats)
    if java_floats and any(pa.types.is_float64(f.type) for f in schema) and block.schema_json:
        written = avro_to_arrow_schema(block.schema_json)
        narrow = {f.name for f in written if pa.types.is_float32(f.type)}
        if any(f.name in narrow and pa.types.is_float64(f.type) for f in schema):
            # Decode those columns as the floats they were written as, then widen the Hudi way.
            read = pa.schema([f.with_type(pa.float32()) if f.name in narrow and pa.types.is_float64(f.type) else f
                              for f in schema])
            return _conform(block.data_table(read), schema, java_floats=True)
    return _conform(block.data_table(schema), schema)


def _log_batches(blocks: Sequence[Any], schema: pa.Schema, java_floats: bool = False,
                 schema_on_read: Optional[SchemaOnRead] = None) -> list[LogBatch]:
    out: list[LogBatch] = []
    for b in blocks:
        if b.block_type == BlockType.DELETE:
            d = b.delete_records()
            ordering = d.column("ordering_value").combine_chunks() if "ordering_value" in d.column_names else None
            out.append(LogBatch(deletes=DeleteBatch(d.column("record_key").combine_chunks(), ordering, b.instant_time)))
        else:
            data = block_data(b, schema, java_floats, schema_on_read)
            data = with_operation_deletes(b, data)
            out.append(LogBatch(data=data))
    return out


def _has_operation_column(block: Any) -> bool:
    """Whether a data block's writer schema holds ``_hoodie_operation``."""
    try:
        fields = json.loads(block.schema_json or "{}").get("fields", [])
    except ValueError:
        return False
    return any(f.get("name") == OPERATION_COLUMN for f in fields)


def with_operation_deletes(block: Any, data: pa.Table) -> pa.Table:
    """``data`` (a data block's rows) with ``_hoodie_is_deleted`` also true where the block's
    ``_hoodie_operation`` is ``D`` (HoodieOperation.DELETE), so a merge drops those rows when they win;
    unchanged when ``data`` has no ``_hoodie_is_deleted`` column or the block no operation column."""
    if IS_DELETED not in data.column_names or not data.num_rows or not _has_operation_column(block):
        return data
    ops = block.data_table(pa.schema([pa.field(OPERATION_COLUMN, pa.string())])).column(0)
    deleted = pc.fill_null(pc.equal(ops, "D"), False)
    i = data.schema.get_field_index(IS_DELETED)
    col = data.column(i)
    if not pa.types.is_boolean(col.type):
        # Hudi deletes by _hoodie_is_deleted only when it is a boolean; any other type is the user's data,
        # which this flag must not overwrite, and the merge has no other column to carry D rows' deletes.
        raise ReadError(
            f"the table has Hudi's operation field ({OPERATION_COLUMN}) and a {IS_DELETED} column of type "
            f"{col.type}, not boolean: hoodie marks deletes in that column and cannot without changing the "
            "column's values. Read this table with Java Hudi")
    # D rows become deletes; every other row keeps its own flag (a null stays null, as written).
    return data.set_column(i, IS_DELETED, pc.if_else(deleted, pa.scalar(True), col))
