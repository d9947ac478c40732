"""Hudi log files (log format version 1, block content version 3), read byte-exactly; the one module to
import for log files: it re-exports the layout (:mod:`hoodie.format.log.layout`: magic, versions,
block types, header keys, errors, the delete block's schema, event time) and the writing side
(:mod:`hoodie.format.log.encode`).

Reference: ``hudi-v6-format.md`` §3.6. A log file is a sequence of blocks::

    MAGIC "#HUDI#" | int64 blockLength | int32 logFormatVersion=1 | int32 blockType
    | header (int32 n, n x {int32 key, int32 len, utf-8}) | int64 contentLength | content
    | footer (same encoding, always empty) | int64 reversePointer = blockLength + 6

All integers are big-endian. Reading is streaming: only the small framing fields are read while
iterating; block content is read lazily by :meth:`LogBlock.read_content`. Corrupt or truncated
regions are reported as ``CORRUPT`` blocks with a :class:`CorruptLogBlockWarning`.

Event time: min/max event time of a block ride inside the SCHEMA header as two extra attributes
of the top-level Avro record (see ``docs/log-block-event-time.md``), because Hudi readers reject
unknown header keys.
"""

from __future__ import annotations

import io
import struct
import warnings
from dataclasses import dataclass, field
import decimal
from decimal import Decimal
from typing import Any, Iterator

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.format.avro.schema import avro_to_arrow_schema, conform_table
from hoodie.format.avro.decode import decode_buffer, decode_leading_field
from hoodie.format.storage import Storage, arrow_threads
from hoodie.format.log.layout import (
    DATA_BLOCK_CONTENT_VERSION, DELETE_BLOCK_CONTENT_VERSION, DELETE_RECORD_LIST_SCHEMA, EVENT_TIME_MAX_KEY,
    EVENT_TIME_MIN_KEY, LOG_FORMAT_VERSION, MAGIC, ORDERING_WRAPPERS, ROLLBACK_COMMAND, BlockType,
    CorruptLogBlockWarning, HeaderKey, LogFormatError, _DELETE_SCHEMA_PARSED, _WRAPPER_INDEX, event_time_from_schema,
    with_event_time,
)
from hoodie.format.log.encode import (
    encode_avro_data_block, encode_block, encode_command_block, encode_delete_block, encode_parquet_data_block,
    write_log_file,
)

__all__ = [
    "MAGIC",
    "LOG_FORMAT_VERSION",
    "BlockType",
    "HeaderKey",
    "CorruptLogBlockWarning",
    "LogFormatError",
    "LogBlock",
    "read_log_file",
    "encode_block",
    "encode_avro_data_block",
    "encode_parquet_data_block",
    "encode_delete_block",
    "encode_command_block",
    "write_log_file",
    "with_event_time",
    "event_time_from_schema",
    "EVENT_TIME_MIN_KEY",
    "EVENT_TIME_MAX_KEY",
    "DELETE_RECORD_LIST_SCHEMA",
    "ORDERING_WRAPPERS",
    "ROLLBACK_COMMAND",
    "commit_ordering_natural",
]

# version, type, empty header, content length, empty footer, reverse pointer
_MIN_BLOCK_LENGTH = 4 + 4 + 4 + 8 + 4 + 8
_SCAN_CHUNK = 1 << 20
_HEADER_PROBE = 64 * 1024
_MAX_FOOTER_BYTES = 16 << 20  # footers are empty in practice; a huge one means corruption

# ----------------------------------------------------------------------------------------------
# the block object
# ----------------------------------------------------------------------------------------------
@dataclass
class LogBlock:
    """One block of a log file. Content is read lazily from storage.

    ``offset`` is the byte offset of the block's magic and ``size`` its total length (magic to
    reverse pointer inclusive). For ``CORRUPT`` blocks, offset/size cover the skipped bytes and
    the content is those bytes.
    """

    block_type: BlockType
    header: dict[int, str]
    footer: dict[int, str]
    log_file: str
    offset: int
    size: int
    content_offset: int
    content_length: int
    _storage: Storage | None = field(default=None, repr=False, compare=False)
    # The whole file's bytes when the reader fetched it in one request (a small log file on an object
    # store): the content is sliced from it instead of fetched again.
    _file_bytes: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def instant_time(self) -> str | None:
        """The INSTANT_TIME header (the deltacommit/rollback instant that wrote the block)."""
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        """The TARGET_INSTANT_TIME header (rollback command blocks)."""
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema_json(self) -> str | None:
        """The raw SCHEMA header (writer Avro schema JSON), if any."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def event_time_range(self) -> tuple[int, int] | None:
        """``(min_ms, max_ms)`` from the schema header attributes; None if unknown. Never reads
        the content."""
        return event_time_from_schema(self.schema_json)

    @property
    def is_rollback(self) -> bool:
        """Whether this is a ROLLBACK command block."""
        return (self.block_type == BlockType.COMMAND
                and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND)

    def _where(self) -> str:
        return f"{self.log_file} (block at offset {self.offset})"

    def read_content(self) -> bytes:
        """The block's content bytes (for CORRUPT blocks: the skipped bytes)."""
        if self.content_length == 0:
            return b""
        return self._read_range(self.content_offset, self.content_length, "the content")

    def stored_bytes(self) -> bytes:
        """The whole block as stored (magic to reverse pointer), to copy it into another file unchanged."""
        return self._read_range(self.offset, self.size, "the block")

    def _read_range(self, offset: int, length: int, what: str) -> bytes:
        """``length`` bytes of the block's file at ``offset``: from the file's bytes when the reader holds
        them (one request per file on object stores), else one ranged read."""
        if self._file_bytes is not None:
            return self._file_bytes[offset:offset + length]
        if self._storage is None:
            raise ValueError(f"{self._where()}: no storage handle to read {what} from")
        f = self._storage.open_input(self.log_file)
        try:
            f.seek(offset)
            data = f.read(length)
        finally:
            f.close()
        if len(data) != length:
            raise ValueError(f"{self._where()}: file shrank while reading {what}")
        return data

    def data_table(self, reader_schema: pa.Schema | None = None) -> pa.Table:
        """Records of an AVRO_DATA or PARQUET_DATA block as a table.

        Without ``reader_schema`` the columns follow the block's SCHEMA header (Arrow mapping of
        :func:`~hoodie.format.avro.schema.avro_to_arrow_schema`). With it, columns are projected
        to it: absent columns become nulls, types are widened where safe, and Parquet list/map
        child names (parquet-avro's ``array``) are normalised.

        Raises:
            LogFormatError: for other block types or unsupported content versions.
        """
        if self.block_type == BlockType.AVRO_DATA:
            return self._avro_table(reader_schema)
        if self.block_type == BlockType.PARQUET_DATA:
            return self._parquet_table(reader_schema)
        raise LogFormatError(f"{self._where()}: {self.block_type.name} block has no data records")

    def _parquet_table(self, reader_schema: pa.Schema | None) -> pa.Table:
        content = self.read_content()
        try:
            pf = pq.ParquetFile(pa.BufferReader(content))
            if reader_schema is not None:
                # only decode the columns the reader wants
                present = set(pf.schema_arrow.names)
                table = pf.read(columns=[n for n in reader_schema.names if n in present], use_threads=arrow_threads())
            else:
                table = pf.read(use_threads=arrow_threads())
        except Exception as e:  # corrupt bytes surface as assorted pyarrow/codec errors
            raise LogFormatError(f"{self._where()}: unreadable Parquet content: {type(e).__name__}: {e}") from e
        if reader_schema is not None:
            target = reader_schema
        elif self.schema_json:
            try:
                target = avro_to_arrow_schema(self.schema_json)
            except Exception as e:  # a corrupt SCHEMA header
                raise LogFormatError(f"{self._where()}: unreadable SCHEMA header: {type(e).__name__}: {e}") from e
        else:
            return table
        try:
            return conform_table(table, target)
        except ValueError as e:
            raise LogFormatError(f"{self._where()}: {e}") from e

    def record_keys(self) -> pa.Array:
        """The ``_hoodie_record_key`` of every record of a data block, without decoding the rest.

        Avro blocks decode only the fields before the key (Hudi puts it third); Parquet blocks
        read only its column. Used by the writer's index lookup.

        Raises:
            LogFormatError: for other block types, or blocks without a record-key column.
        """
        key = "_hoodie_record_key"
        if self.block_type == BlockType.PARQUET_DATA:
            keys = self._parquet_table(pa.schema([pa.field(key, pa.string())])).column(0).combine_chunks()
            if keys.null_count:  # absent column (filled with nulls) or null keys: not a Hudi data block
                raise LogFormatError(f"{self._where()}: {keys.null_count} record(s) without a {key}")
            return keys
        if self.block_type != BlockType.AVRO_DATA:
            raise LogFormatError(f"{self._where()}: {self.block_type.name} block has no data records")
        content, starts, ends, schema = self._avro_datums()
        try:
            return decode_leading_field(content, starts, ends, schema, key)
        except KeyError:
            raise LogFormatError(f"{self._where()}: the block's records have no {key} field") from None
        except Exception as e:  # malformed datums surface as assorted decoding errors
            raise LogFormatError(f"{self._where()}: undecodable Avro records: {type(e).__name__}: {e}") from e

    def _avro_table(self, reader_schema: pa.Schema | None) -> pa.Table:
        content, starts, ends, schema = self._avro_datums()
        try:
            return decode_buffer(content, starts, ends, schema, reader_schema)
        except Exception as e:  # malformed datums surface as assorted decoding errors
            raise LogFormatError(f"{self._where()}: undecodable Avro records: {type(e).__name__}: {e}") from e

    def _avro_datums(self) -> tuple[bytes, np.ndarray, np.ndarray, str]:
        """The content of an Avro data block, where each datum starts and ends, and its schema."""
        schema = self.schema_json
        if not schema:
            raise LogFormatError(f"{self._where()}: Avro data block without a SCHEMA header")
        content = self.read_content()
        if len(content) < 8:
            raise LogFormatError(f"{self._where()}: Avro data block content is {len(content)} bytes")
        version, count = struct.unpack_from(">ii", content, 0)
        if version not in (2, DATA_BLOCK_CONTENT_VERSION):
            raise LogFormatError(f"{self._where()}: unsupported Avro data block content version {version}")
        if count < 0:
            raise LogFormatError(f"{self._where()}: negative record count {count}")
        starts = np.empty(count, dtype=np.int64)
        ends = np.empty(count, dtype=np.int64)
        pos = 8
        total = len(content)
        unpack = struct.Struct(">i").unpack_from
        for i in range(count):  # lengths chain sequentially; ~0.3 us per record
            if pos + 4 > total:
                raise LogFormatError(f"{self._where()}: record {i} of {count} is truncated")
            (length,) = unpack(content, pos)
            pos += 4
            if length < 0 or pos + length > total:
                raise LogFormatError(f"{self._where()}: record {i} has invalid length {length}")
            starts[i] = pos
            pos += length
            ends[i] = pos
        if pos != total:
            raise LogFormatError(f"{self._where()}: {total - pos} bytes after the last record")
        return content, starts, ends, schema

    def delete_records(self) -> pa.Table:
        """Keys deleted by a DELETE block (content version 3: Avro ``HoodieDeleteRecordList``).

        Columns: ``record_key`` (string), ``partition_path`` (string), ``ordering_value`` and
        ``ordering_type`` (int8, the orderingVal union branch: 0 = null, 1 = BooleanWrapper,
        2 = IntWrapper, 3 = LongWrapper, 4 = FloatWrapper, 5 = DoubleWrapper, 6 = BytesWrapper,
        7 = StringWrapper, 8 = DateWrapper, 9 = DecimalWrapper, 10 = TimeMicrosWrapper,
        11 = TimestampMicrosWrapper). ``ordering_value`` has the wrapper's natural Arrow type
        (bool, int32, int64, float32, float64, binary, string, date32, decimal128(30, 15),
        time64[us], timestamp[us, UTC]); pa.null() when every value is null.

        Hudi treats ``IntWrapper(0)`` (what SQL ``DELETE`` writes) as "natural order": such a
        delete applies in arrival (commit) order whatever the record's ordering value
        (``HoodieMergedLogRecordScanner``: ``!deleteOrderingVal.equals(0) && sameClass &&
        cur > delete`` keeps the record; so a delete whose wrapper type differs from the
        record's ordering type also always applies). The merger implements that rule;
        :func:`commit_ordering_natural` gives the mask of such deletes.

        Raises:
            LogFormatError: for Kryo delete blocks (content versions 1/2, Hudi <= 0.13), other
                unknown versions, malformed payloads, or when non-null ordering values use more
                than one wrapper type.
        """
        if self.block_type != BlockType.DELETE:
            raise LogFormatError(f"{self._where()}: {self.block_type.name} block is not a DELETE block")
        content = self.read_content()
        if len(content) < 8:
            raise LogFormatError(f"{self._where()}: delete block content is {len(content)} bytes")
        version, payload_len = struct.unpack_from(">ii", content, 0)
        if version in (1, 2):
            raise LogFormatError(
                f"{self._where()}: delete block content version {version} is Kryo-serialized "
                "(written by Hudi <= 0.13); Kryo delete blocks are unsupported")
        if version != DELETE_BLOCK_CONTENT_VERSION:
            raise LogFormatError(f"{self._where()}: unsupported delete block content version {version}")
        if payload_len < 0 or 8 + payload_len != len(content):
            raise LogFormatError(
                f"{self._where()}: delete payload length {payload_len} does not match content "
                f"length {len(content)}")
        fo = io.BytesIO(content[8:])
        try:
            datum = fastavro.schemaless_reader(fo, _DELETE_SCHEMA_PARSED, None, return_record_name=True)
        except Exception as e:  # fastavro raises assorted types on malformed input
            raise LogFormatError(f"{self._where()}: malformed delete payload: {e!r}") from e
        if fo.tell() != payload_len:
            raise LogFormatError(f"{self._where()}: {payload_len - fo.tell()} bytes after the delete list")
        return _delete_table(datum["deleteRecordList"], self._where())


def commit_ordering_natural(deletes: pa.Table) -> pa.Array:
    """Boolean mask of the deletes of :meth:`LogBlock.delete_records` that carry
    ``IntWrapper(0)``, which Hudi reads as "no ordering value: apply in commit order"."""
    types = deletes.column("ordering_type")
    values = deletes.column("ordering_value")
    if not pa.types.is_int32(values.type):
        return pa.array([False] * deletes.num_rows, pa.bool_())
    mask = pc.and_(pc.equal(types, 2), pc.equal(values, 0))
    return pc.fill_null(mask, False).combine_chunks()


def _delete_table(records: list[dict], where: str) -> pa.Table:
    keys = [r["recordKey"] for r in records]
    parts = [r["partitionPath"] for r in records]
    types = np.zeros(len(records), dtype=np.int8)
    values: list[Any] = [None] * len(records)
    for i, r in enumerate(records):
        ov = r["orderingVal"]
        if ov is None:
            continue
        name, rec = ov
        types[i] = _WRAPPER_INDEX[name]
        values[i] = rec["value"]
    present = set(types[types > 0].tolist())
    if len(present) > 1:
        names = sorted(ORDERING_WRAPPERS[t - 1][0] for t in present)
        raise LogFormatError(f"{where}: delete block mixes ordering value types {names}")
    if present:
        branch = present.pop()
        arrow_t = ORDERING_WRAPPERS[branch - 1][2]
        if branch == 9:  # DecimalWrapper: Java BigInteger bytes of the unscaled value, scale 15
            # scaleb rounds to the context precision (28 digits by default); decimal(30,15) needs 30.
            ctx = decimal.Context(prec=40)
            values = [None if v is None else Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-15, context=ctx)
                      for v in values]
        ordering = pa.array(values, type=arrow_t)
    else:
        ordering = pa.nulls(len(records))
    return pa.table({
        "record_key": pa.array(keys, pa.string()),
        "partition_path": pa.array(parts, pa.string()),
        "ordering_value": ordering,
        "ordering_type": pa.array(types, pa.int8()),
    })


# ----------------------------------------------------------------------------------------------
# reading
# ----------------------------------------------------------------------------------------------
class _Short(Exception):
    """A header/footer parse needs more bytes than were read."""


def _parse_map(buf: bytes, pos: int) -> tuple[dict[int, str], int]:
    """Parse a header/footer map at ``pos``; returns (map, position after it)."""
    if pos + 4 > len(buf):
        raise _Short()
    (count,) = struct.unpack_from(">i", buf, pos)
    pos += 4
    if count < 0 or count > 1024:
        raise ValueError(f"invalid metadata entry count {count}")
    out: dict[int, str] = {}
    for _ in range(count):
        if pos + 8 > len(buf):
            raise _Short()
        key, length = struct.unpack_from(">ii", buf, pos)
        pos += 8
        if length < 0:
            raise ValueError(f"invalid metadata value length {length}")
        if pos + length > len(buf):
            raise _Short()
        try:
            out[key] = buf[pos:pos + length].decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"metadata value is not UTF-8: {e}") from e
        pos += length
    return out, pos


def _read_at(f: Any, pos: int, n: int) -> bytes:
    f.seek(pos)
    return f.read(n)


def _try_block(f: Any, pos: int, file_size: int, rel_path: str, storage: Storage) -> LogBlock | str:
    """Parse the block at ``pos`` (reading only its framing), or return why it is corrupt."""
    if file_size - pos < 14:
        return f"{file_size - pos} trailing bytes are too short for a block"
    head = _read_at(f, pos, 14)
    if head[:6] != MAGIC:
        return "no magic at block start"
    (length,) = struct.unpack(">q", head[6:14])
    if length < _MIN_BLOCK_LENGTH:
        return f"invalid block length {length}"
    end = pos + 14 + length
    if end > file_size:
        return f"block length {length} runs past the end of the file ({file_size} bytes)"
    (reverse,) = struct.unpack(">q", _read_at(f, end - 8, 8))
    if reverse != length + 6:
        return f"reverse pointer {reverse} does not match block length {length}"
    body_len = length - 8  # version .. footer
    probe = _read_at(f, pos + 14, min(body_len, _HEADER_PROBE))
    version, btype = struct.unpack_from(">ii", probe, 0)
    if version != LOG_FORMAT_VERSION:
        return f"unsupported log format version {version}"
    if btype not in BlockType._value2member_map_ or btype == BlockType.CORRUPT:
        return f"unknown block type {btype}"
    try:
        try:
            header, hpos = _parse_map(probe, 8)
            if hpos + 8 > len(probe):
                raise _Short()
        except _Short:
            probe = _read_at(f, pos + 14, body_len)  # header larger than the probe: read it whole
            header, hpos = _parse_map(probe, 8)
            if hpos + 8 > len(probe):
                return "header runs past the block"
        (content_length,) = struct.unpack_from(">q", probe, hpos)
        content_offset = pos + 14 + hpos + 8
        footer_offset = content_offset + content_length
        footer_len = end - 8 - footer_offset
        if content_length < 0 or footer_len < 4:
            return f"content length {content_length} does not fit the block"
        if footer_len > _MAX_FOOTER_BYTES:
            return f"footer of {footer_len} bytes is implausible"
        footer_bytes = _read_at(f, footer_offset, footer_len)
        footer, fpos = _parse_map(footer_bytes, 0)
        if fpos != footer_len:
            return f"footer leaves {footer_len - fpos} unexplained bytes"
    except _Short:
        return "header or footer runs past the block"
    except ValueError as e:
        return str(e)
    return LogBlock(
        block_type=BlockType(btype), header=header, footer=footer, log_file=rel_path,
        offset=pos, size=end - pos, content_offset=content_offset,
        content_length=content_length, _storage=storage,
    )


def _next_magic(f: Any, start: int, file_size: int) -> int:
    """Offset of the next MAGIC at or after ``start`` (or ``file_size``), scanning in chunks."""
    carry = b""
    pos = start
    while pos < file_size:
        chunk = _read_at(f, pos, min(_SCAN_CHUNK, file_size - pos))
        if not chunk:
            break
        data = carry + chunk
        i = data.find(MAGIC)
        if i >= 0:
            return pos - len(carry) + i
        carry = data[-(len(MAGIC) - 1):]  # a magic may straddle two chunks
        pos += len(chunk)
    return file_size


# Object-store log files up to this size are read in one request (log files are small in practice:
# Hudi rolls them at hoodie.logfile.max.size, 1 GiB, but a stream's are a few MiB at most).
WHOLE_FILE_READ_BYTES = 8 << 20


def read_log_file(storage: Storage, rel_path: str, *, warn: bool = True, read_whole: bool = False) -> Iterator[LogBlock]:
    """Iterate the blocks of a log file without reading their content.

    A block is valid when its length fits the file, the trailing int64 equals
    ``blockLength + 6`` and its header/footer parse. Anything else (truncated tail, garbage
    before/between blocks, a wrong length field) becomes one ``CORRUPT`` block spanning up to
    the next magic (or end of file), reported with a :class:`CorruptLogBlockWarning` naming the
    file, offset and bytes skipped (when ``warn``).

    Two deliberate differences from Java's ``HoodieLogFileReader``: a self-consistent block
    followed by garbage stays valid (Java also requires a magic or EOF right after a block and
    reports block plus garbage as one corrupt block), and garbage at the very start of a file is a
    CORRUPT block here (Java's ``hasNext`` throws ``CorruptedLogFileException`` for the file).
    Corrupt regions are reported from the bad block's magic, not from after it.

    ``read_whole``: the caller reads every block's content (an archive file), so on an object store the file is
    fetched in one request whatever its size.
    """
    f = storage.open_input(rel_path)
    whole: bytes | None = None
    try:
        file_size = f.size()
        if not getattr(storage, "is_local", True) and (read_whole or file_size <= WHOLE_FILE_READ_BYTES):
            # On an object store every ranged read is a request (four per block): a small log file is
            # fetched once and parsed from memory, its blocks' content included.
            whole = f.read(file_size)
            f.close()
            f = pa.BufferReader(whole)
            file_size = len(whole)
        pos = 0
        while pos < file_size:
            block = _try_block(f, pos, file_size, rel_path, storage)
            if isinstance(block, LogBlock):
                if whole is not None:
                    block._file_bytes = whole
                yield block
                pos = block.offset + block.size
                continue
            nxt = _next_magic(f, pos + 1, file_size)
            skipped = nxt - pos
            if warn:
                until = f"the next block at offset {nxt}" if nxt < file_size else "the end of the file"
                warnings.warn(
                    f"{rel_path}: corrupt log block at offset {pos} ({block}); "
                    f"skipped {skipped} bytes to {until}",
                    CorruptLogBlockWarning, stacklevel=2)
            yield LogBlock(
                block_type=BlockType.CORRUPT, header={}, footer={}, log_file=rel_path,
                offset=pos, size=skipped, content_offset=pos, content_length=skipped,
                _storage=storage, _file_bytes=whole,
            )
            pos = nxt
    finally:
        f.close()


