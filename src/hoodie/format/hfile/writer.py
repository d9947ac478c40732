"""Writing HFiles the way HBase 2.x writes them for Hudi (0.14 - 1.0).

The block layout follows HBase's ``HFileWriterImpl`` and ``BlockIndexWriter`` step by step, so
that with the same block size, codec and keys the output has the same blocks as an HBase-written
file:

* a data block is closed when its cells (``8 + key + value + 1`` bytes each) reach the block
  size, checked before each new key; equal keys never start a new block;
* a leaf index block is written *inline* after the data block that makes the pending leaf
  entries reach the maximum index chunk size (HBase ``hfile.index.block.max.size``, 128 KiB);
  if none was needed by the end, the single-level root index holds every data block;
* at the end: meta blocks (sorted by name), intermediate index levels while the root would
  exceed the chunk size, the root index (plus mid-key metadata for multi-level indexes), the
  meta index, the file info and the 4096-byte trailer;
* every block is compressed on its own (GZ: a gzip member at zlib's default level, like Hadoop)
  and followed by CRC32C checksums of each ``bytes_per_checksum`` chunk.

Index keys: HBase stores for every data block but the first a shortened "fake" key between the
previous block's last row and the block's first row (``index_keys="midpoint"``). The default
``"full"`` stores each block's real first key instead, which every HFile reader accepts.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, BinaryIO, Iterable, Literal

from .blocks import (
    CHECKSUM_CRC32C, DATA, FILE_INFO, GZ, INTERMEDIATE_INDEX, LEAF_INDEX, META, NONE, ROOT_INDEX,
    IndexEntry, compression_name, encode_block, encode_cell, encode_file_info,
    encode_nonroot_index, encode_root_index, first_on_row_key, full_key, midpoint_row,
)
from .encoding import write_vlong
from .trailer import HOODIE_KV_COMPARATOR, TRAILER_SIZE, HFileTrailer

__all__ = ["HFileWriter", "write_hfile", "DEFAULT_BLOCK_SIZE", "BLOOM_FILTER_META_BLOCK"]

# Hudi's hoodie.hfile.block.size default (HoodieStorageConfig.HFILE_BLOCK_SIZE), also used for
# metadata-table base files and HFile log blocks.
DEFAULT_BLOCK_SIZE = 1024 * 1024
DEFAULT_MAX_INDEX_CHUNK = 128 * 1024  # HBase hfile.index.block.max.size
DEFAULT_MIN_INDEX_ENTRIES = 16  # HBase hfile.index.block.min.entries
DEFAULT_BYTES_PER_CHECKSUM = 16 * 1024  # HBase hbase.hstore.bytes.per.checksum
_MAX_LEVELS = 16

# Names Hudi's HoodieAvroHFileWriter uses.
BLOOM_FILTER_META_BLOCK = "bloomFilter"
_SCHEMA_KEY = b"schema"
_MIN_RECORD_KEY = b"minRecordKey"
_MAX_RECORD_KEY = b"maxRecordKey"
_BLOOM_TYPE_KEY = b"bloomFilterTypeCode"

_CODECS = {"GZ": GZ, "GZIP": GZ, "NONE": NONE}


def _to_bytes(key: Any, what: str) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    raise TypeError(f"HFile {what}s are bytes or str, not {type(key).__name__}")


class _Chunk:
    """Index entries collected for one index block (HBase ``BlockIndexChunk``)."""

    def __init__(self) -> None:
        self.entries: list[IndexEntry] = []
        self.sub_entries: list[int] = []  # cumulative data-block counts, for the mid-key
        self.root_size = 0
        self.nonroot_entries_size = 0

    def add(self, entry: IndexEntry, sub_entries: int = -1) -> None:
        self.entries.append(entry)
        if sub_entries >= 0:
            self.sub_entries.append(sub_entries)
        self.root_size += 12 + len(write_vlong(len(entry.key))) + len(entry.key)
        self.nonroot_entries_size += 12 + len(entry.key)

    @property
    def nonroot_size(self) -> int:
        return 4 + 4 * (len(self.entries) + 1) + self.nonroot_entries_size

    def midkey_metadata(self) -> bytes:
        """Where the middle data block's index entry is: the leaf block holding it and its
        position there (HBase's ``getMidKeyMetadata``)."""
        total = self.sub_entries[-1]
        mid = (total - 1) // 2
        i = bisect_right(self.sub_entries, mid)
        before = self.sub_entries[i - 1] if i > 0 else 0
        e = self.entries[i]
        return e.offset.to_bytes(8, "big", signed=True) + e.size.to_bytes(4, "big") + (
            mid - before).to_bytes(4, "big")


class HFileWriter:
    """Write one HFile, cell by cell, in key order.

    ``sink`` is a binary file opened for writing; without one the file is built in memory and
    :meth:`getvalue` returns it. Keys (the record keys, ``bytes`` or ``str``) must be appended in
    non-decreasing byte order; values are ``bytes``.

    Options (defaults are what Hudi's metadata table writes):

    * ``block_size``: data block target size before compression (1 MiB);
    * ``compression``: ``"GZ"`` or ``"NONE"``;
    * ``checksum_type``: 2 CRC32C (HBase's default), 1 CRC32 or 0 none (zero-filled, like Hudi 1.1);
    * ``index_keys``: ``"full"`` real first keys in the index, ``"midpoint"`` HBase's shortened keys;
    * ``schema``: the Avro schema JSON stored under file info ``schema`` (Hudi requires it);
    * ``bloom_filter``: the serialized bloom filter (Hudi's ``serializeToString()`` text) for a
      ``bloomFilter`` meta block; as Hudi does, this also writes ``minRecordKey``,
      ``maxRecordKey`` and ``bloomFilterTypeCode`` (``bloom_filter_type``);
    * ``comparator``: the class name recorded in the trailer;
    * ``create_time_ms``: ``hfile.CREATE_TIME_TS`` (HBase via Hudi 1.0 writes 0);
    * ``max_index_chunk_size`` / ``min_index_entries``: HBase's index block limits.
    """

    def __init__(
        self, sink: BinaryIO | None = None, *, block_size: int = DEFAULT_BLOCK_SIZE,
        compression: str | int = "GZ", checksum_type: int = CHECKSUM_CRC32C,
        bytes_per_checksum: int = DEFAULT_BYTES_PER_CHECKSUM,
        index_keys: Literal["full", "midpoint"] = "full", schema: str | bytes | None = None,
        bloom_filter: str | bytes | None = None, bloom_filter_type: str = "DYNAMIC_V0",
        comparator: str = HOODIE_KV_COMPARATOR, create_time_ms: int = 0,
        max_index_chunk_size: int = DEFAULT_MAX_INDEX_CHUNK,
        min_index_entries: int = DEFAULT_MIN_INDEX_ENTRIES,
    ) -> None:
        if isinstance(compression, str):
            codec = _CODECS.get(compression.upper())
            if codec is None:
                raise ValueError(f"unsupported compression {compression!r}; use GZ or NONE")
        else:
            codec = compression
            if codec not in (GZ, NONE):
                raise ValueError(f"unsupported compression {compression_name(codec)}; use GZ or NONE")
        if block_size <= 0 or bytes_per_checksum <= 0 or max_index_chunk_size <= 0:
            raise ValueError("block size, bytes per checksum and index chunk size must be positive")
        if min_index_entries < 2:
            raise ValueError("min_index_entries must be at least 2")
        if checksum_type not in (0, 1, 2):
            raise ValueError(f"unknown checksum type {checksum_type}")
        if index_keys not in ("full", "midpoint"):
            raise ValueError(f"index_keys is 'full' or 'midpoint', not {index_keys!r}")
        self._sink = sink
        self._parts: list[bytes] | None = [] if sink is None else None
        self._codec = codec
        self._block_size = block_size
        self._checksum_type = checksum_type
        self._bpc = bytes_per_checksum
        self._midpoint = index_keys == "midpoint"
        self._comparator = comparator
        self._create_time = create_time_ms
        self._max_chunk = max_index_chunk_size
        self._min_entries = min_index_entries
        self._file_info: dict[bytes, bytes] = {}
        self._meta: dict[bytes, bytes] = {}
        if schema is not None:
            self._file_info[_SCHEMA_KEY] = _to_bytes(schema, "schema")
        self._bloom = None if bloom_filter is None else _to_bytes(bloom_filter, "bloom filter")
        self._bloom_type = bloom_filter_type

        self._pos = 0
        self._prev: dict[bytes, int] = {}
        self._cells: list[bytes] = []
        self._cells_size = 0
        self._first_row: bytes | None = None  # of the block being filled
        self._last_row: bytes | None = None
        self._first_key_of_file: bytes | None = None
        self._prev_block_last_row: bytes | None = None
        self._entries = 0
        self._key_bytes = 0
        self._value_bytes = 0
        self._data_blocks = 0
        self._first_data = -1
        self._last_data = -1
        self._total_uncompressed = 0
        self._index_uncompressed = 0
        self._leaf = _Chunk()
        self._root = _Chunk()
        self._levels = 1
        self._closed = False

    # ---- public API -------------------------------------------------------------------------

    def append(self, key: bytes | str, value: bytes) -> None:
        """Add one cell. Keys must not decrease; an equal key adds another cell for it."""
        if self._closed:
            raise ValueError("the HFile writer is closed")
        row = key if type(key) is bytes else _to_bytes(key, "key")
        if type(value) is not bytes:
            value = _to_bytes(value, "value")
        if len(row) > 0x7FFF:
            raise ValueError(f"HFile keys are at most 32767 bytes, got {len(row)}")
        if len(value) > 0x7FFFFFF0:
            raise ValueError(f"HFile values are at most 2 GiB, got {len(value)} bytes")
        last = self._last_row
        if last is None:
            self._first_key_of_file = row
        elif row < last:
            raise ValueError(f"keys must be appended in sorted order: {row!r} after {last!r}")
        # HBase only ends a block between different keys, so equal keys share a block.
        elif row != last and self._cells_size >= self._block_size:
            self._finish_data_block()
            self._write_inline_index(closing=False)
            self._prev_block_last_row = last
        if not self._cells:
            self._first_row = row
        cell = encode_cell(row, value)
        self._cells.append(cell)
        self._cells_size += len(cell)
        self._last_row = row
        self._entries += 1
        self._key_bytes += len(row) + 12
        self._value_bytes += len(value)

    def extend(self, items: Iterable[tuple[bytes | str, bytes]]) -> None:
        """:meth:`append` every ``(key, value)`` pair."""
        for key, value in items:
            self.append(key, value)

    def add_file_info(self, key: bytes | str, value: bytes | str) -> None:
        """Add (or replace) a file info entry. The HBase entries (``hfile.*``,
        ``KEY_VALUE_VERSION``, ``MAX_MEMSTORE_TS_KEY``) are written by :meth:`close`."""
        if self._closed:
            raise ValueError("the HFile writer is closed")
        self._file_info[_to_bytes(key, "file info key")] = _to_bytes(value, "file info value")

    def add_meta_block(self, name: bytes | str, data: bytes | str) -> None:
        """Add a meta block (written, sorted by name, after the data blocks)."""
        if self._closed:
            raise ValueError("the HFile writer is closed")
        self._meta[_to_bytes(name, "meta block name")] = _to_bytes(data, "meta block")

    @property
    def num_entries(self) -> int:
        """Cells appended so far."""
        return self._entries

    def close(self) -> int:
        """Write everything after the last cell; returns the file size. Idempotent."""
        if self._closed:
            return self._pos
        self._closed = True
        self._finish_data_block()
        self._write_inline_index(closing=True)
        if self._bloom is not None:
            # HoodieAvroHFileWriter.close(): key range and bloom filter go together
            self._file_info[_MIN_RECORD_KEY] = self._first_key_of_file or b""
            self._file_info[_MAX_RECORD_KEY] = self._last_row or b""
            self._file_info[_BLOOM_TYPE_KEY] = self._bloom_type.encode()
            self._meta[BLOOM_FILTER_META_BLOCK.encode()] = self._bloom

        meta_entries = []
        for name in sorted(self._meta):
            offset = self._pos
            block = self._block(META, self._meta[name])
            self._total_uncompressed += 33 + len(self._meta[name])
            meta_entries.append(IndexEntry(offset, len(block), name))

        root_offset = self._write_index_levels()
        meta_index = encode_root_index(meta_entries)
        self._block(ROOT_INDEX, meta_index)
        self._total_uncompressed += 33 + len(meta_index)

        info = dict(self._file_info)
        info[b"MAX_MEMSTORE_TS_KEY"] = (0).to_bytes(8, "big")
        info[b"KEY_VALUE_VERSION"] = (1).to_bytes(4, "big")
        if self._last_row is not None:
            info[b"hfile.LASTKEY"] = full_key(self._last_row)
        n = self._entries
        info[b"hfile.AVG_KEY_LEN"] = (self._key_bytes // n if n else 0).to_bytes(4, "big")
        info[b"hfile.AVG_VALUE_LEN"] = (self._value_bytes // n if n else 0).to_bytes(4, "big")
        info[b"hfile.CREATE_TIME_TS"] = self._create_time.to_bytes(8, "big", signed=True)
        file_info_offset = self._pos
        payload = encode_file_info(info)
        self._block(FILE_INFO, payload)
        self._total_uncompressed += 33 + len(payload)

        trailer = HFileTrailer(
            file_info_offset=file_info_offset,
            load_on_open_data_offset=root_offset,
            uncompressed_data_index_size=self._index_uncompressed,
            total_uncompressed_bytes=self._total_uncompressed + TRAILER_SIZE,
            data_index_count=len(self._root.entries),
            meta_index_count=len(meta_entries),
            entry_count=n,
            num_data_index_levels=self._levels,
            first_data_block_offset=self._first_data,
            last_data_block_offset=self._last_data,
            comparator_class_name=self._comparator,
            compression_codec=self._codec,
        )
        self._write(trailer.serialize())
        if self._sink is not None and hasattr(self._sink, "flush"):
            self._sink.flush()
        return self._pos

    def getvalue(self) -> bytes:
        """The finished file, when writing in memory (closes the writer)."""
        if self._parts is None:
            raise ValueError("getvalue() is only for writers without a sink")
        self.close()
        return b"".join(self._parts)

    def __enter__(self) -> "HFileWriter":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()

    # ---- internals --------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        if self._parts is not None:
            self._parts.append(data)
        else:
            assert self._sink is not None
            self._sink.write(data)
        self._pos += len(data)

    def _block(self, magic: bytes, payload: bytes) -> bytes:
        """Write one block; ``prevBlockOffset`` chains blocks of the same type (the root and
        meta indexes share a type, as in HBase)."""
        block = encode_block(
            magic, payload, prev_offset=self._prev.get(magic, -1), codec=self._codec,
            checksum_type=self._checksum_type, bytes_per_checksum=self._bpc,
        )
        self._prev[magic] = self._pos
        self._write(block)
        return block

    def _finish_data_block(self) -> None:
        if not self._cells:
            return
        offset = self._pos
        if self._first_data < 0:
            self._first_data = offset
        self._last_data = offset
        payload = b"".join(self._cells)
        block = self._block(DATA, payload)
        self._total_uncompressed += 33 + len(payload)
        assert self._first_row is not None
        left = self._prev_block_last_row
        if self._midpoint and left is not None and left < self._first_row:
            key = first_on_row_key(midpoint_row(left, self._first_row))
        else:
            key = full_key(self._first_row)
        self._leaf.add(IndexEntry(offset, len(block), key))
        self._data_blocks += 1
        self._cells = []
        self._cells_size = 0

    def _write_inline_index(self, closing: bool) -> None:
        leaf = self._leaf
        if not leaf.entries:
            return
        if closing and not self._root.entries:
            # no leaf block was needed: the entries become a single-level root index
            self._root = leaf
            self._leaf = _Chunk()
            return
        if not closing and leaf.nonroot_size < self._max_chunk:
            return
        offset = self._pos
        payload = encode_nonroot_index(leaf.entries)
        block = self._block(LEAF_INDEX, payload)
        self._index_uncompressed += len(payload)
        self._total_uncompressed += 33 + len(payload)
        self._levels = max(self._levels, 2)
        self._root.add(IndexEntry(offset, len(block), leaf.entries[0].key), self._data_blocks)
        self._leaf = _Chunk()

    def _write_index_levels(self) -> int:
        """Intermediate levels (if the root is too big), then the root; returns its offset."""
        midkey = self._root.midkey_metadata() if self._levels > 1 else b""
        root = self._root
        if self._levels > 1:
            while (root.root_size > self._max_chunk and len(root.entries) > self._min_entries
                   and self._levels < _MAX_LEVELS):
                root = self._intermediate_level(root)
                self._levels += 1
        offset = self._pos
        payload = encode_root_index(root.entries) + midkey
        self._block(ROOT_INDEX, payload)
        self._index_uncompressed += len(payload)
        self._root = root
        return offset

    def _intermediate_level(self, level: _Chunk) -> _Chunk:
        parent = _Chunk()
        cur = _Chunk()
        for i, e in enumerate(level.entries):
            cur.add(e)
            # HBase (HBASE-16288) counts i over the whole level here, not within the chunk
            if i >= self._min_entries and cur.root_size >= self._max_chunk:
                self._intermediate_block(parent, cur)
                cur = _Chunk()
        if cur.entries:
            self._intermediate_block(parent, cur)
        return parent

    def _intermediate_block(self, parent: _Chunk, chunk: _Chunk) -> None:
        offset = self._pos
        payload = encode_nonroot_index(chunk.entries)
        block = self._block(INTERMEDIATE_INDEX, payload)
        self._index_uncompressed += len(payload)
        parent.add(IndexEntry(offset, len(block), chunk.entries[0].key))


def write_hfile(
    items: Iterable[tuple[bytes | str, bytes]], sink: BinaryIO | None = None,
    *, file_info: dict[str, bytes] | None = None, **options: Any,
) -> bytes | int:
    """Write ``(key, value)`` pairs (in key order) as one HFile; returns the bytes when no
    ``sink`` is given, else the number of bytes written. ``options`` go to :class:`HFileWriter`."""
    w = HFileWriter(sink, **options)
    w.extend(items)
    for k, v in (file_info or {}).items():
        w.add_file_info(k, v)
    if sink is None:
        return w.getvalue()
    return w.close()
