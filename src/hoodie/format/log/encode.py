"""Writing Hudi log files (log format version 1, block content version 3) byte-exactly: framing a
block (:func:`encode_block`), the data blocks (Avro or Parquet content), the delete block, the
rollback command block, and a log file of blocks (:func:`write_log_file`).

The layout these follow is :mod:`hoodie.format.log.layout`; reading is
:mod:`hoodie.format.log.logformat`, which re-exports this module's names.
"""

from __future__ import annotations

import struct
from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.format.avro.encode import zigzag_long, encode_records_array
from hoodie.format.avro.schema import avro_to_arrow_schema, conform_table, schema_to_json
from hoodie.format.storage import Storage
from hoodie.format.log.layout import (
    DATA_BLOCK_CONTENT_VERSION, DELETE_BLOCK_CONTENT_VERSION, LOG_FORMAT_VERSION, MAGIC, ORDERING_WRAPPERS,
    ROLLBACK_COMMAND, BlockType, HeaderKey, with_event_time, _wrapper, _KEY_SCHEMA,
)


# ----------------------------------------------------------------------------------------------
# writing
# ----------------------------------------------------------------------------------------------
def _encode_map(entries: Mapping[int, str] | None, keep_order: bool) -> bytes:
    items = list((entries or {}).items())
    if not keep_order:
        items.sort(key=lambda kv: int(kv[0]))
    parts = [struct.pack(">i", len(items))]
    for key, value in items:
        if not isinstance(value, str):
            raise TypeError(f"header value for key {int(key)} must be str, got {type(value).__name__}")
        raw = value.encode("utf-8")
        parts.append(struct.pack(">ii", int(key), len(raw)))
        parts.append(raw)
    return b"".join(parts)


def encode_block(block_type: BlockType | int, header: Mapping[int, str], content: bytes,
                 footer: Mapping[int, str] | None = None, *, keep_header_order: bool = False) -> bytes:
    """Frame one block: MAGIC, int64 blockLength, int32 version 1, int32 type, header, int64
    contentLength, content, footer, int64 reverse pointer (= blockLength + 6).

    Header/footer entries are written in ascending key order, or in the mapping's own order with
    ``keep_header_order`` (to reproduce a Java-written block, whose HashMap order is arbitrary).
    """
    body = [
        struct.pack(">ii", LOG_FORMAT_VERSION, int(block_type)),
        _encode_map(header, keep_header_order),
        struct.pack(">q", len(content)),
        content,
        _encode_map(footer, keep_header_order),
    ]
    length = sum(len(p) for p in body) + 8
    return b"".join([MAGIC, struct.pack(">q", length), *body, struct.pack(">q", length + 6)])


def _data_header(instant: str, avro_schema: dict | str,
                 event_time_range: tuple[int, int] | None) -> dict[int, str]:
    schema_json = schema_to_json(avro_schema)
    if event_time_range is not None:
        schema_json = with_event_time(schema_json, *event_time_range)
    return {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json}


def _concat_datums(datums: pa.Array, *, length_prefix: bool) -> bytes:
    """All values of a binary array back to back, each optionally led by its int32 BE length."""
    if len(datums) == 0:
        return b""
    if length_prefix:
        lengths = pc.binary_length(datums).to_numpy(zero_copy_only=False).astype(">i4")
        prefixes = pa.Array.from_buffers(pa.binary(4), len(datums), [None, pa.py_buffer(lengths.tobytes())])
        datums = pc.binary_join_element_wise(prefixes.cast(pa.binary()), datums, b"")
    offsets = np.frombuffer(datums.buffers()[1], dtype=np.int32)[datums.offset:datums.offset + len(datums) + 1]
    data = datums.buffers()[2]
    return data[int(offsets[0]):int(offsets[-1])].to_pybytes()


def encode_avro_data_block(table: pa.Table, *, instant: str, avro_schema: dict | str,
                           event_time_range: tuple[int, int] | None = None) -> bytes:
    """An AVRO_DATA block: header ``{INSTANT_TIME, SCHEMA}``, content ``int32 3, int32 count,
    count x (int32 len, Avro binary datum)``, byte-identical to Hudi's ``HoodieAvroDataBlock``.

    ``event_time_range`` (epoch ms) is stored in the schema header (:func:`with_event_time`).
    """
    datums = encode_records_array(table, avro_schema)
    content = struct.pack(">ii", DATA_BLOCK_CONTENT_VERSION, len(datums)) + _concat_datums(datums, length_prefix=True)
    return encode_block(BlockType.AVRO_DATA, _data_header(instant, avro_schema, event_time_range), content)


def encode_parquet_data_block(table: pa.Table, *, instant: str, avro_schema: dict | str,
                              event_time_range: tuple[int, int] | None = None,
                              compression: str = "snappy") -> bytes:
    """A PARQUET_DATA block: header ``{INSTANT_TIME, SCHEMA}``, content a whole Parquet file.

    The table is first conformed to the Avro schema's Arrow mapping (column order and types),
    then written with standard 3-level lists (``list``/``element``), ``key_value`` maps,
    timestamps as int64 in the schema's unit (micros for ``timestamp-micros``) and small decimals
    as int32/int64 like Spark, which parquet-avro and hudi-rs read.

    Raises:
        ValueError: if the table has columns the schema lacks.
    """
    target = avro_to_arrow_schema(avro_schema)
    extra = [c for c in table.column_names if c not in target.names]
    if extra:
        raise ValueError(f"table columns {extra} are not in the Avro schema {target.names}")
    data = conform_table(table, target)
    sink = pa.BufferOutputStream()
    pq.write_table(data, sink, compression=compression, use_compliant_nested_type=True,
                   store_decimal_as_integer=True, coerce_timestamps=None)
    content = sink.getvalue().to_pybytes()
    return encode_block(BlockType.PARQUET_DATA, _data_header(instant, avro_schema, event_time_range), content)


def _ordering_branch(t: pa.DataType) -> int:
    """orderingVal union branch for an Arrow type (see :data:`ORDERING_WRAPPERS`)."""
    if pa.types.is_null(t):
        return 0
    if pa.types.is_boolean(t):
        return 1
    if t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        return 2
    if t in (pa.int64(), pa.uint32()):
        return 3
    if t in (pa.float16(), pa.float32()):
        return 4
    if t == pa.float64():
        return 5
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return 6
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return 7
    if pa.types.is_date(t):
        return 8
    if pa.types.is_decimal(t):
        return 9
    if pa.types.is_time(t):
        return 10
    if pa.types.is_timestamp(t):
        return 11
    raise ValueError(f"no Hudi ordering value wrapper for Arrow type {t}")


def encode_delete_block(keys: pa.Table, *, instant: str, avro_schema: dict | str,
                        event_time_range: tuple[int, int] | None = None) -> bytes:
    """A DELETE block (content version 3): ``int32 3, int32 payloadLen`` + Avro binary
    ``HoodieDeleteRecordList``, header ``{INSTANT_TIME, SCHEMA}`` with the table's writer schema.

    ``keys`` has ``record_key`` and ``partition_path`` and optionally ``ordering_value``, whose
    Arrow type picks the wrapper (int32 -> IntWrapper, int64 -> LongWrapper, timestamp ->
    TimestampMicrosWrapper, decimal -> DecimalWrapper rescaled to (30, 15), ...); null values are
    written as the null branch. Without an ordering column every record gets ``IntWrapper(0)``,
    as Hudi's SQL ``DELETE`` writes it (natural/commit order).

    Raises:
        ValueError: for missing key columns, ordering types without a wrapper, or decimals that
            do not fit (30, 15).
    """
    for col in ("record_key", "partition_path"):
        if col not in keys.column_names:
            raise ValueError(f"delete keys need a {col!r} column, got {keys.column_names}")
    n = keys.num_rows
    key_pieces = encode_records_array(keys.select(["record_key", "partition_path"]).rename_columns(
        ["recordKey", "partitionPath"]), _KEY_SCHEMA)
    if "ordering_value" in keys.column_names:
        ordering = keys.column("ordering_value")
        ordering = ordering.combine_chunks() if isinstance(ordering, pa.ChunkedArray) else ordering
        branch = _ordering_branch(ordering.type)
    else:
        ordering = pa.array(np.zeros(n, dtype=np.int32))
        branch = 2
    if branch == 0 or ordering.null_count == n:
        ordering_pieces = pa.repeat(pa.scalar(b"\x00", pa.binary()), n)
    else:
        name, value_type, arrow_t = ORDERING_WRAPPERS[branch - 1]
        wrapper_schema = _wrapper(name, value_type)
        try:
            # normalise units first: dates to days, times/timestamps to micros, decimals to (30, 15)
            ordering = ordering.cast(arrow_t, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise ValueError(f"ordering_value of type {ordering.type} cannot be written as {name}: {e}") from e
        valid = ordering.is_valid()
        try:
            encoded = encode_records_array(pa.table({"value": ordering.filter(valid)}), wrapper_schema)
        except ValueError as e:
            raise ValueError(f"ordering_value cannot be written as {name}: {e}") from e
        tag = pa.scalar(bytes([branch * 2]), pa.binary())  # zig-zag of a small union index
        ordering_pieces = pc.replace_with_mask(pa.repeat(pa.scalar(b"\x00", pa.binary()), n), valid,
                                               pc.binary_join_element_wise(tag, encoded, b""))
    items = pc.binary_join_element_wise(key_pieces, ordering_pieces, b"") if n else pa.array([], pa.binary())
    # deleteRecordList: one Avro array block (count, items, 0); an empty list is just 0
    payload = (zigzag_long(n) + _concat_datums(items, length_prefix=False) + b"\x00") if n else b"\x00"
    content = struct.pack(">ii", DELETE_BLOCK_CONTENT_VERSION, len(payload)) + payload
    return encode_block(BlockType.DELETE, _data_header(instant, avro_schema, event_time_range), content)


def encode_command_block(instant: str, target_instant: str) -> bytes:
    """A ROLLBACK command block: header ``{INSTANT_TIME: instant, TARGET_INSTANT_TIME: target,
    COMMAND_BLOCK_TYPE: "0"}``, empty content (what MOR rollback writes into a new log file)."""
    header = {
        HeaderKey.INSTANT_TIME: instant,
        HeaderKey.TARGET_INSTANT_TIME: target_instant,
        HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND,
    }
    return encode_block(BlockType.COMMAND, header, b"")


def write_log_file(storage: Storage, rel_path: str, blocks: list[bytes]) -> int:
    """Create a new log file holding ``blocks`` (encoded blocks) and return its size.

    Create-only, like Hudi 0.14+ (which rolls over to a new version instead of appending).

    Raises:
        FileExistsError: if the file already exists.
        ValueError: if an element is not an encoded block.
    """
    for i, b in enumerate(blocks):
        if not b.startswith(MAGIC):
            raise ValueError(f"element {i} for {rel_path} is not an encoded log block")
    data = b"".join(blocks)
    storage.create_new(rel_path, data)
    return len(data)
