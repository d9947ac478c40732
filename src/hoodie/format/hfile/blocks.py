"""HFile v3 blocks: header, checksums, compression, cells, index blocks and the file info.

Every block on disk is ``[33-byte header][payload, compressed with the file's codec][checksums]``:

====  ====  ==============================================================================
off   size  field
====  ====  ==============================================================================
0     8     magic (:data:`DATA`, :data:`ROOT_INDEX`, ...)
8     4     onDiskSizeWithoutHeader: compressed payload + checksum bytes
12    4     uncompressedSizeWithoutHeader: payload before compression
16    8     prevBlockOffset: offset of the previous block of the same type, or -1
24    1     checksum type: 0 NULL, 1 CRC32, 2 CRC32C
25    4     bytesPerChecksum
29    4     onDiskDataSizeWithHeader: 33 + compressed payload
====  ====  ==============================================================================

The checksums are one 4-byte big-endian value per ``bytesPerChecksum`` chunk of header plus
compressed payload. All integers are big-endian.
"""

from __future__ import annotations

import struct
import zlib
from bisect import bisect_left
from dataclasses import dataclass
from typing import Iterable, NamedTuple, Optional

from .crc32c import crc32c_chunks
from .encoding import (
    field_bytes, parse_message, read_uvarint, read_vlong, vlong_size, write_uvarint, write_vlong,
)
from .errors import HFileError

__all__ = [
    "DATA", "ENCODED_DATA", "LEAF_INDEX", "BLOOM_CHUNK", "META", "INTERMEDIATE_INDEX", "ROOT_INDEX",
    "FILE_INFO", "GENERAL_BLOOM_META", "DELETE_FAMILY_BLOOM_META", "TRAILER_MAGIC", "HEADER_SIZE",
    "COMPRESSION_NAMES", "GZ", "NONE", "CHECKSUM_NULL", "CHECKSUM_CRC32", "CHECKSUM_CRC32C",
    "LATEST_TIMESTAMP", "TYPE_PUT", "TYPE_MAXIMUM", "BlockHeader", "IndexEntry", "Cell",
    "parse_header", "verify_checksums", "decompress", "compress", "encode_block", "full_key",
    "first_on_row_key", "key_row", "midpoint_row", "parse_cells", "parse_full_cells", "encode_cell",
    "cell_offsets", "lookup_cells",
    "parse_root_index", "encode_root_index", "parse_nonroot_index", "encode_nonroot_index",
    "parse_file_info", "encode_file_info", "compression_name",
]

# Block magics (HBase BlockType).
DATA = b"DATABLK*"
ENCODED_DATA = b"DATABLKE"
LEAF_INDEX = b"IDXLEAF2"
BLOOM_CHUNK = b"BLMFBLK2"
META = b"METABLKc"
INTERMEDIATE_INDEX = b"IDXINTE2"
ROOT_INDEX = b"IDXROOT2"
FILE_INFO = b"FILEINF2"
GENERAL_BLOOM_META = b"BLMFMET2"
DELETE_FAMILY_BLOOM_META = b"DFBLMET2"
TRAILER_MAGIC = b'TRABLK"$'
KNOWN_MAGICS = frozenset({
    DATA, ENCODED_DATA, LEAF_INDEX, BLOOM_CHUNK, META, INTERMEDIATE_INDEX, ROOT_INDEX, FILE_INFO,
    GENERAL_BLOOM_META, DELETE_FAMILY_BLOOM_META,
})

HEADER_SIZE = 33
_HEADER = struct.Struct(">8siiqbii")

# Compression codec ids: the ordinal of HBase's Compression.Algorithm, stored in the trailer.
GZ = 1
NONE = 2
COMPRESSION_NAMES = {
    0: "LZO", 1: "GZ", 2: "NONE", 3: "SNAPPY", 4: "LZ4", 5: "BZIP2", 6: "ZSTD",
    7: "LZMA", 8: "BROTLI",  # added in HBase 2.5
}

CHECKSUM_NULL = 0
CHECKSUM_CRC32 = 1
CHECKSUM_CRC32C = 2
_CHECKSUM_NAMES = {CHECKSUM_NULL: "NULL", CHECKSUM_CRC32: "CRC32", CHECKSUM_CRC32C: "CRC32C"}

# KeyValue key fields HBase and Hudi write: timestamp HConstants.LATEST_TIMESTAMP, type Put.
# Type Maximum (0xFF) marks HBase's "first on row" fake keys in the block index.
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF
TYPE_PUT = 4
TYPE_MAXIMUM = 255
_KEY_TAIL_PUT = b"\x00" + LATEST_TIMESTAMP.to_bytes(8, "big") + bytes([TYPE_PUT])
_KEY_TAIL_MAX = b"\x00" + LATEST_TIMESTAMP.to_bytes(8, "big") + bytes([TYPE_MAXIMUM])

# Gzip member header as Hadoop's GzipCodec writes it: no flags, mtime 0, xfl 0, OS 0.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_GZIP_LEVEL = 6  # zlib's default, which Hadoop uses; gives byte-identical output to HBase

_MAX_BLOCK = 1 << 31  # sizes are Java ints


def compression_name(codec: int) -> str:
    """Human name of a trailer compression codec id."""
    return COMPRESSION_NAMES.get(codec, f"unknown codec id {codec}")


@dataclass(frozen=True)
class BlockHeader:
    """The 33-byte header in front of every block."""

    magic: bytes
    on_disk_size_without_header: int
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size_with_header(self) -> int:
        """Bytes the whole block takes on disk (header, payload, checksums)."""
        return HEADER_SIZE + self.on_disk_size_without_header

    @property
    def compressed_size(self) -> int:
        """Bytes of (compressed) payload between the header and the checksums."""
        return self.on_disk_data_size_with_header - HEADER_SIZE

    @property
    def block_type(self) -> str:
        """The magic as text, for messages."""
        return self.magic.decode("latin-1")


class IndexEntry(NamedTuple):
    """One block index entry: where a block is and the (possibly shortened) first key in it."""

    offset: int
    size: int  # on-disk size including header and checksums
    key: bytes


class Cell(NamedTuple):
    """A fully decoded KeyValue cell. Hudi only uses ``row`` (the record key) and ``value``."""

    row: bytes
    family: bytes
    qualifier: bytes
    timestamp: int
    type: int
    value: bytes
    mvcc: int


def parse_header(buf: bytes | memoryview, *, expected: bytes | None = None) -> BlockHeader:
    """Parse and sanity-check a block header (the first 33 bytes of ``buf``)."""
    if len(buf) < HEADER_SIZE:
        raise HFileError(f"truncated block header ({len(buf)} of {HEADER_SIZE} bytes)")
    magic, ods, us, prev, ctype, bpc, odd = _HEADER.unpack_from(buf, 0)
    if magic not in KNOWN_MAGICS:
        raise HFileError(f"bad block magic {magic!r}")
    if expected is not None and magic != expected:
        raise HFileError(f"expected a {expected.decode('latin-1')} block, found {magic.decode('latin-1')}")
    if ctype not in _CHECKSUM_NAMES:
        raise HFileError(f"unknown checksum type {ctype}")
    if ods < 0 or us < 0 or odd < HEADER_SIZE or odd - HEADER_SIZE > ods:
        raise HFileError(
            f"inconsistent block sizes (onDiskSizeWithoutHeader {ods}, "
            f"onDiskDataSizeWithHeader {odd}, uncompressed {us})"
        )
    header = BlockHeader(magic, ods, us, prev, ctype, bpc, odd)
    if ctype != CHECKSUM_NULL:
        if bpc <= 0:
            raise HFileError(f"bytesPerChecksum {bpc} with checksum type {_CHECKSUM_NAMES[ctype]}")
        want = 4 * -(-odd // bpc)
        if HEADER_SIZE + ods - odd != want:
            raise HFileError(
                f"{HEADER_SIZE + ods - odd} checksum bytes where {want} are expected "
                f"({odd} bytes at {bpc} bytes per checksum)"
            )
    return header


def verify_checksums(block: bytes | memoryview, header: BlockHeader) -> None:
    """Check the stored per-chunk checksums of a whole on-disk block (header first)."""
    if header.checksum_type == CHECKSUM_NULL:
        return
    data = memoryview(block)[:header.on_disk_data_size_with_header]
    stored = bytes(block[header.on_disk_data_size_with_header:header.on_disk_size_with_header])
    bpc = header.bytes_per_checksum
    if header.checksum_type == CHECKSUM_CRC32C:
        computed = crc32c_chunks(data, bpc)
    else:
        computed = [zlib.crc32(data[i:i + bpc]) for i in range(0, len(data), bpc)]
    for i, value in enumerate(computed):
        (want,) = struct.unpack_from(">I", stored, 4 * i)
        if want != value:
            raise HFileError(
                f"{_CHECKSUM_NAMES[header.checksum_type]} checksum mismatch in chunk {i} of the "
                f"{header.block_type} block (stored {want:08x}, computed {value:08x})"
            )


def decompress(payload: bytes | memoryview, codec: int, expected_size: int) -> bytes:
    """Decompress one block payload; the result must be exactly ``expected_size`` bytes."""
    if codec == NONE:
        if len(payload) != expected_size:
            raise HFileError(
                f"uncompressed block holds {len(payload)} bytes, its header says {expected_size}"
            )
        return bytes(payload)
    if codec != GZ:
        raise HFileError(f"unsupported compression {compression_name(codec)}")
    if expected_size >= _MAX_BLOCK:
        raise HFileError(f"uncompressed size {expected_size} is not a valid block size")
    out = bytearray()
    data = bytes(payload)
    try:
        # A block is one gzip member, but accept concatenated members like GZIPInputStream.
        while True:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += d.decompress(data, expected_size + 1 - len(out))
            if len(out) > expected_size or not d.eof:
                raise HFileError(
                    f"gzip payload does not decompress to the {expected_size} bytes its header says"
                )
            data = d.unused_data
            if not data:
                break
    except zlib.error as exc:
        raise HFileError(f"corrupt gzip payload: {exc}") from None
    if len(out) != expected_size:
        raise HFileError(
            f"gzip payload decompresses to {len(out)} bytes, its header says {expected_size}"
        )
    return bytes(out)


def compress(payload: bytes, codec: int) -> bytes:
    """Compress a block payload the way HBase does (GZ: a gzip member at zlib level 6)."""
    if codec == NONE:
        return payload
    if codec != GZ:
        raise ValueError(f"unsupported compression {compression_name(codec)}; use GZ or NONE")
    c = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = c.compress(payload) + c.flush()
    return b"".join((
        _GZIP_HEADER, body,
        struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF),
    ))


def encode_block(
    magic: bytes, payload: bytes, *, prev_offset: int, codec: int, checksum_type: int,
    bytes_per_checksum: int,
) -> bytes:
    """A complete on-disk block: header, compressed payload and checksums."""
    body = compress(payload, codec)
    odd = HEADER_SIZE + len(body)
    nchecks = -(-odd // bytes_per_checksum)
    ods = len(body) + 4 * nchecks
    header = _HEADER.pack(magic, ods, len(payload), prev_offset, checksum_type, bytes_per_checksum, odd)
    data = header + body
    if checksum_type == CHECKSUM_CRC32C:
        sums = crc32c_chunks(data, bytes_per_checksum)
    elif checksum_type == CHECKSUM_CRC32:
        sums = [zlib.crc32(data[i:i + bytes_per_checksum]) for i in range(0, odd, bytes_per_checksum)]
    else:
        sums = [0] * nchecks  # HBase reserves the space even without checksums
    return data + struct.pack(f">{nchecks}I", *sums)


# ---- keys -------------------------------------------------------------------------------------

def full_key(row: bytes) -> bytes:
    """The KeyValue key HBase and Hudi write for a record key: row, empty family and qualifier,
    timestamp LATEST, type Put."""
    return len(row).to_bytes(2, "big") + row + _KEY_TAIL_PUT


def first_on_row_key(row: bytes) -> bytes:
    """HBase's "first on row" key (type Maximum) used for shortened index keys."""
    return len(row).to_bytes(2, "big") + row + _KEY_TAIL_MAX


def key_row(key: bytes) -> bytes:
    """The row (record key) of a serialized key: an ``int16`` length then the row. Works for full
    KeyValue keys, HBase fake keys and Hudi 1.1's row-only index keys."""
    if len(key) < 2:
        raise HFileError(f"index key of {len(key)} bytes has no row length")
    n = (key[0] << 8) | key[1]
    if n + 2 > len(key):
        raise HFileError(f"index key row length {n} exceeds the key's {len(key)} bytes")
    return bytes(key[2:2 + n])


def midpoint_row(left: bytes, right: bytes) -> bytes:
    """HBase's shortest row sorting after ``left`` and not after ``right`` (its
    ``getMinimumMidpointArray``), used for the index key of every data block but the first."""
    n = min(len(left), len(right))
    i = 0
    while i < n and left[i] == right[i]:
        i += 1
    if i >= n:  # left is a prefix of right
        return right[:i + 1]
    b = left[i]
    if b < 0xFF and b + 1 < right[i]:
        return left[:i] + bytes([b + 1])
    return right[:i + 1]


# ---- cells ------------------------------------------------------------------------------------

_II = struct.Struct(">ii")


def _cell_error(pos: int, what: str) -> HFileError:
    return HFileError(f"corrupt cell at payload offset {pos}: {what}")


def parse_cells(payload: bytes, mvcc: bool, tags: bool) -> tuple[list[bytes], list[bytes]]:
    """Rows and values of all cells of an uncompressed data block payload, in order.

    Each cell is ``int32 keyLength, int32 valueLength, key, value``, then ``int16`` tags length
    and tags when the file has tags, then the MVCC timestamp as a VLong when
    ``KEY_VALUE_VERSION`` is 1. The key starts with ``int16`` row length and the row.
    """
    rows: list[bytes] = []
    values: list[bytes] = []
    add_row = rows.append
    add_value = values.append
    unpack = _II.unpack_from
    pos = 0
    end = len(payload)
    try:
        while pos < end:
            klen, vlen = unpack(payload, pos)
            k = pos + 8
            v = k + klen
            nxt = v + vlen
            rlen = (payload[k] << 8) | payload[k + 1]
            if klen < rlen + 2 or vlen < 0 or nxt > end:
                raise _cell_error(pos, f"key length {klen} (row {rlen}) / value length {vlen} "
                                       "do not fit the block")
            add_row(payload[k + 2:k + 2 + rlen])
            add_value(payload[v:nxt])
            if tags:
                nxt += 2 + ((payload[nxt] << 8) | payload[nxt + 1])
            if mvcc:
                first = payload[nxt]
                # a one-byte VLong (the usual 0) unless 0x80 <= first < 0x90
                nxt += vlong_size(first) if 0x80 <= first < 0x90 else 1
            if nxt > end:
                raise _cell_error(pos, "cell runs past the end of the block")
            pos = nxt
    except (struct.error, IndexError):
        raise _cell_error(pos, "truncated cell") from None
    return rows, values


def cell_offsets(payload: bytes, mvcc: bool, tags: bool, rows: Optional[list[bytes]] = None) -> list[int]:
    """The payload offset of every cell of an uncompressed data block, in order: the walk of
    :func:`parse_cells` without slicing values (nor rows, unless a ``rows`` list is given to append
    them to): a lookup then slices only the rows its binary search probes and the values it finds."""
    starts: list[int] = []
    add = starts.append
    add_row = rows.append if rows is not None else None
    unpack = _II.unpack_from
    pos = 0
    end = len(payload)
    try:
        while pos < end:
            add(pos)
            klen, vlen = unpack(payload, pos)
            nxt = pos + 8 + klen + vlen
            rlen = (payload[pos + 8] << 8) | payload[pos + 9]
            if klen < rlen + 2 or vlen < 0 or nxt > end:
                raise _cell_error(pos, f"key length {klen} (row {rlen}) / value length {vlen} "
                                       "do not fit the block")
            if add_row is not None:
                add_row(payload[pos + 10:pos + 10 + rlen])
            if tags:
                nxt += 2 + ((payload[nxt] << 8) | payload[nxt + 1])
            if mvcc:
                first = payload[nxt]
                nxt += vlong_size(first) if 0x80 <= first < 0x90 else 1
            if nxt > end:
                raise _cell_error(pos, "cell runs past the end of the block")
            pos = nxt
    except (struct.error, IndexError):
        raise _cell_error(pos, "truncated cell") from None
    return starts


def lookup_cells(payload: bytes, mvcc: bool, tags: bool, rows: list[bytes]) -> dict[bytes, bytes]:
    """The values of the sorted ``rows`` found in one uncompressed data block (the first cell of a
    repeated row), without slicing the block's other values: a walk of the cell offsets
    (:func:`cell_offsets`), then a binary search per row that slices only the rows it probes. When the
    rows are many against the block's cells (a search probes about log2(cells) rows), the walk slices
    every row once instead and the search runs over them."""
    dense = len(rows) * 16 >= len(payload) // 64  # cells are rarely under 64 bytes
    all_rows: Optional[list[bytes]] = [] if dense else None
    starts = cell_offsets(payload, mvcc, tags, all_rows)
    if not starts:
        raise HFileError("empty data block")

    def row_at(pos: int) -> bytes:  # the walk checked the row length against the key length
        return payload[pos + 10:pos + 10 + ((payload[pos + 8] << 8) | payload[pos + 9])]

    out: dict[bytes, bytes] = {}
    n = len(starts)
    lo = 0
    for row in rows:
        if all_rows is not None:
            j = bisect_left(all_rows, row, lo)
            hit = j < n and all_rows[j] == row
        else:
            j = bisect_left(starts, row, lo, key=row_at)
            hit = j < n and row_at(starts[j]) == row
        if j >= n:
            break
        lo = j
        if hit:
            pos = starts[j]
            klen, vlen = _II.unpack_from(payload, pos)
            v = pos + 8 + klen
            out[row] = payload[v:v + vlen]
    return out


def parse_full_cells(payload: bytes, mvcc: bool, tags: bool) -> list[Cell]:
    """Every field of every cell of a data block payload (slower than :func:`parse_cells`)."""
    cells: list[Cell] = []
    pos = 0
    end = len(payload)
    while pos < end:
        if pos + 8 > end:
            raise _cell_error(pos, "truncated lengths")
        klen, vlen = _II.unpack_from(payload, pos)
        k = pos + 8
        v = k + klen
        nxt = v + vlen
        if klen < 12 or vlen < 0 or nxt > end:
            raise _cell_error(pos, f"key length {klen} / value length {vlen} do not fit the block")
        key = payload[k:v]
        rlen = (key[0] << 8) | key[1]
        fpos = 2 + rlen
        if fpos + 1 + 9 > klen:
            raise _cell_error(pos, f"row length {rlen} leaves no room for the key's fields")
        flen = key[fpos]
        qpos = fpos + 1 + flen
        if qpos + 9 > klen:
            raise _cell_error(pos, f"family length {flen} leaves no room for the key's fields")
        ts = int.from_bytes(key[klen - 9:klen - 1], "big", signed=True)
        mv = 0
        if tags:
            if nxt + 2 > end:
                raise _cell_error(pos, "truncated tags length")
            nxt += 2 + ((payload[nxt] << 8) | payload[nxt + 1])
        if mvcc:
            if nxt >= end:
                raise _cell_error(pos, "missing MVCC timestamp")
            mv, nxt = read_vlong(payload, nxt, end)
        if nxt > end:
            raise _cell_error(pos, "cell runs past the end of the block")
        cells.append(Cell(
            row=key[2:2 + rlen], family=key[fpos + 1:qpos], qualifier=key[qpos:klen - 9],
            timestamp=ts, type=key[klen - 1], value=payload[v:v + vlen], mvcc=mv,
        ))
        pos = nxt
    return cells


def encode_cell(row: bytes, value: bytes) -> bytes:
    """One cell as Hudi writes it: full key, value, MVCC timestamp 0."""
    return b"".join((
        _II.pack(len(row) + 12, len(value)), len(row).to_bytes(2, "big"), row, _KEY_TAIL_PUT,
        value, b"\x00",
    ))


# ---- index blocks -----------------------------------------------------------------------------

_QI = struct.Struct(">qi")


def parse_root_index(payload: bytes, count: int) -> tuple[list[IndexEntry], int]:
    """``count`` root-format entries (``int64 offset, int32 size, VInt key length, key``); also
    returns where they end (a multi-level root index is followed by mid-key metadata)."""
    entries: list[IndexEntry] = []
    pos = 0
    end = len(payload)
    for i in range(count):
        if pos + 12 > end:
            raise HFileError(f"root index ends after {i} of {count} entries")
        offset, size = _QI.unpack_from(payload, pos)
        klen, pos = read_vlong(payload, pos + 12, end)
        if klen < 0 or pos + klen > end:
            raise HFileError(f"root index entry {i} has a key length of {klen} past the block end")
        entries.append(IndexEntry(offset, size, payload[pos:pos + klen]))
        pos += klen
    return entries, pos


def encode_root_index(entries: Iterable[IndexEntry]) -> bytes:
    """Root-format index entries."""
    return b"".join(_QI.pack(e.offset, e.size) + write_vlong(len(e.key)) + e.key for e in entries)


def parse_nonroot_index(payload: bytes) -> list[IndexEntry]:
    """Entries of a leaf or intermediate index block: ``int32 n``, ``n + 1`` ``int32`` offsets
    of the entries relative to the end of that list, then ``int64 offset, int32 size, key``."""
    end = len(payload)
    if end < 4:
        raise HFileError("non-root index block has no entry count")
    (n,) = struct.unpack_from(">i", payload, 0)
    base = 4 + 4 * (n + 1)
    if n < 0 or base > end:
        raise HFileError(f"non-root index entry count {n} does not fit the block")
    marks = struct.unpack_from(f">{n + 1}i", payload, 4)
    entries: list[IndexEntry] = []
    for i in range(n):
        start, stop = base + marks[i], base + marks[i + 1]
        if marks[i] < 0 or stop > end or stop - start < 12:
            raise HFileError(f"non-root index entry {i} lies outside the block")
        offset, size = _QI.unpack_from(payload, start)
        entries.append(IndexEntry(offset, size, payload[start + 12:stop]))
    return entries


def encode_nonroot_index(entries: list[IndexEntry]) -> bytes:
    """A leaf or intermediate index block payload."""
    marks = [0]
    for e in entries:
        marks.append(marks[-1] + 12 + len(e.key))
    return b"".join((
        struct.pack(f">i{len(marks)}i", len(entries), *marks),
        *(_QI.pack(e.offset, e.size) + e.key for e in entries),
    ))


# ---- file info --------------------------------------------------------------------------------

_PBUF = b"PBUF"


def parse_file_info(payload: bytes) -> dict[bytes, bytes]:
    """The file info map: ``PBUF`` then a varint-delimited ``InfoProto`` of
    ``BytesBytesPair{first, second}`` entries."""
    if payload[:4] != _PBUF:
        raise HFileError("file info block does not start with PBUF")
    length, pos = read_uvarint(payload, 4)
    if pos + length > len(payload):
        raise HFileError("file info message runs past the end of its block")
    info: dict[bytes, bytes] = {}
    for number, value in parse_message(payload[pos:pos + length]):
        if number != 1 or not isinstance(value, bytes):
            continue
        pair = {k: v for k, v in parse_message(value)}
        first, second = pair.get(1, b""), pair.get(2, b"")
        if not isinstance(first, bytes) or not isinstance(second, bytes):
            raise HFileError("file info entry with a non-bytes key or value")
        info[first] = second
    return info


def encode_file_info(info: dict[bytes, bytes]) -> bytes:
    """The file info payload, entries sorted by key bytes as HBase's sorted map writes them."""
    body = b"".join(
        field_bytes(1, field_bytes(1, k) + field_bytes(2, v)) for k, v in sorted(info.items())
    )
    return _PBUF + write_uvarint(len(body)) + body
