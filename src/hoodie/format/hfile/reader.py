"""Reading HFiles (version 3) as HBase 2.x, Hudi 1.0 and Hudi 1.1 write them.

Opening reads the trailer and the load-on-open section (root data index, meta index, file
info). Data blocks are read on demand: a lookup finds its block by binary search over the index
first keys, then by binary search inside the block. Multi-level indexes (leaf and intermediate
index blocks) are read and flattened into one sorted list on first data access.

Keys are compared by row only, as unsigned bytes, like Hudi's readers. An index key may be a
shortened "fake" key (HBase writes the shortest row between the previous block's last row and
the block's first row); it is always greater than every row of the blocks before it and not
greater than the block's first row, which is all a lookup needs. HBase never splits equal keys
across two blocks, so a key is looked for in the last block whose index key is not greater.

Every problem with the file surfaces as :class:`HFileError` naming the file and, where there is
one, the offset of the block.
"""

from __future__ import annotations

import struct
import zlib
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterator, Union

import pyarrow.fs as pafs

from .blocks import (
    DATA, FILE_INFO, GZ, HEADER_SIZE, INTERMEDIATE_INDEX, LEAF_INDEX, META, NONE, ROOT_INDEX,
    BlockHeader, Cell, IndexEntry, compression_name, decompress, key_row, lookup_cells, parse_cells,
    parse_file_info, parse_full_cells, parse_header, parse_nonroot_index, parse_root_index,
    verify_checksums,
)
from .errors import HFileError
from .trailer import TRAILER_SIZE, HFileTrailer, parse_trailer

__all__ = ["HFileReader", "Key", "DataBlockInfo"]

Key = Union[bytes, bytearray, memoryview, str]

# File info keys HBase and Hudi write.
LAST_KEY = b"hfile.LASTKEY"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
DATA_BLOCK_ENCODING = b"DATA_BLOCK_ENCODING"
SCHEMA = b"schema"
MIN_RECORD_KEY = b"minRecordKey"
MAX_RECORD_KEY = b"maxRecordKey"
BLOOM_FILTER_TYPE = b"bloomFilterTypeCode"
BLOOM_FILTER_BLOCK = "bloomFilter"

_MAX_LEVELS = 16  # HBase never writes more (BlockIndexWriter's sanity limit)
# Exceptions that mean "these bytes are not what the format says": turned into HFileError.
_DECODE_ERRORS = (struct.error, IndexError, ValueError, OverflowError, zlib.error, KeyError)


def _key_bytes(key: Key) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    raise TypeError(f"HFile keys are bytes or str, not {type(key).__name__}")


class DataBlockInfo:
    """Where one data block is and the index key that points to it."""

    __slots__ = ("offset", "size", "index_key")

    def __init__(self, offset: int, size: int, index_key: bytes) -> None:
        self.offset = offset
        self.size = size  # on disk, header and checksums included
        self.index_key = index_key  # as stored: full, fake (type 0xFF) or row-only key

    @property
    def index_row(self) -> bytes:
        """The row part of the index key."""
        return key_row(self.index_key)

    def __repr__(self) -> str:
        return f"DataBlockInfo(offset={self.offset}, size={self.size}, index_key={self.index_key!r})"


class _Source:
    """Random reads from bytes or from a seekable binary file (Python or pyarrow)."""

    def __init__(self, source: Any) -> None:
        self._buf: memoryview | None = None
        self._file: Any = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._buf = memoryview(source).cast("B")
            self.size = len(self._buf)
        elif hasattr(source, "read") and hasattr(source, "seek"):
            self._file = source
            size_attr = getattr(source, "size", None)
            if callable(size_attr):
                self.size = int(size_attr())  # pyarrow NativeFile
            else:
                self.size = source.seek(0, 2)
        else:
            raise TypeError(
                f"an HFile source is bytes or a seekable binary file, not {type(source).__name__}"
            )

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise HFileError(
                f"read of {length} bytes at offset {offset} goes past the end of the "
                f"{self.size}-byte file (truncated?)"
            )
        if self._buf is not None:
            return bytes(self._buf[offset:offset + length])
        read_at = getattr(self._file, "read_at", None)
        if read_at is not None:
            data = read_at(length, offset)  # pyarrow RandomAccessFile: thread-safe positional read
        else:
            self._file.seek(offset)
            data = self._file.read(length)
        data = bytes(data)
        if len(data) != length:
            raise HFileError(f"short read: {len(data)} of {length} bytes at offset {offset}")
        return data


class HFileReader:
    """Read-only access to one HFile: ordered scans, point and prefix lookups, file info.

    ``source`` is the file content (``bytes``) or a seekable binary file, e.g. a pyarrow
    ``RandomAccessFile``; :meth:`open` and :meth:`from_storage` open one for you. ``name`` is
    used in error messages. With ``verify_checksums`` (the default) every block read is checked
    against its stored CRC32C / CRC32 checksums. Data blocks decoded for lookups are kept in an
    LRU cache of up to ``cache_bytes`` uncompressed bytes (full scans bypass it).

    Keys and prefixes may be given as ``bytes`` or ``str`` (UTF-8); keys and values are returned
    as ``bytes``.
    """

    def __init__(
        self, source: bytes | bytearray | memoryview | BinaryIO | Any, *, name: str | None = None,
        verify_checksums: bool = True, cache_bytes: int = 64 << 20,
    ) -> None:
        self.name = name if name is not None else getattr(source, "name", None) or "<bytes>"
        if not isinstance(self.name, str):
            self.name = str(self.name)
        self._source = _Source(source)
        self._owned: Any = None
        self.verify_checksums = verify_checksums
        self._cache: OrderedDict[int, tuple[list[bytes], list[bytes], int]] = OrderedDict()
        self._cache_limit = max(0, cache_bytes)
        self._cached_bytes = 0
        self._entries: list[IndexEntry] | None = None
        self._rows: list[bytes] = []
        with self._located(None):
            self._open()

    # ---- construction -----------------------------------------------------------------------

    @classmethod
    def open(cls, path: str, filesystem: Any = None, **kwargs: Any) -> "HFileReader":
        """Open ``path`` on a ``pyarrow.fs`` file system (local when ``None``); close the reader
        (or use it as a context manager) to release the file."""
        fs = filesystem if filesystem is not None else pafs.LocalFileSystem()
        f = fs.open_input_file(path)
        try:
            reader = cls(f, name=kwargs.pop("name", path), **kwargs)
        except BaseException:
            f.close()
            raise
        reader._owned = f
        return reader

    @classmethod
    def from_storage(cls, storage: Any, rel: str, **kwargs: Any) -> "HFileReader":
        """Open the file ``rel`` of a :class:`hoodie.format.storage.Storage`."""
        f = storage.open_input(rel)
        try:
            reader = cls(f, name=kwargs.pop("name", storage.uri(rel)), **kwargs)
        except BaseException:
            f.close()
            raise
        reader._owned = f
        return reader

    def close(self) -> None:
        """Release the file if this reader opened it."""
        self._cache.clear()
        self._cached_bytes = 0
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __enter__(self) -> "HFileReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HFileReader({self.name!r}, entries={self.num_entries})"

    @contextmanager
    def _located(self, offset: int | None) -> Iterator[None]:
        """Turn any decoding failure into an HFileError naming this file and block."""
        try:
            yield
        except HFileError as exc:
            raise exc.located(self.name, offset) from None
        except _DECODE_ERRORS as exc:
            raise HFileError(f"corrupt data ({type(exc).__name__}: {exc})",
                             path=self.name, offset=offset) from None

    def _open(self) -> None:
        size = self._source.size
        if size < TRAILER_SIZE:
            raise HFileError(f"{size} bytes is too short for an HFile (the trailer alone is {TRAILER_SIZE})")
        t = parse_trailer(self._source.read(size - TRAILER_SIZE, TRAILER_SIZE))
        self.trailer: HFileTrailer = t
        end = size - TRAILER_SIZE
        if t.encryption_key is not None:
            raise HFileError("encrypted HFiles are not supported")
        if t.compression_codec not in (GZ, NONE):
            raise HFileError(
                f"unsupported compression {compression_name(t.compression_codec)} "
                "(only GZ and NONE are supported)"
            )
        if not 0 <= t.load_on_open_data_offset < end:
            raise HFileError(f"load-on-open offset {t.load_on_open_data_offset} lies outside the file")
        if not t.load_on_open_data_offset <= t.file_info_offset < end:
            raise HFileError(f"file info offset {t.file_info_offset} lies outside the load-on-open section")
        if not 1 <= t.num_data_index_levels <= _MAX_LEVELS:
            raise HFileError(f"implausible number of data index levels {t.num_data_index_levels}")
        if t.data_index_count < 0 or t.meta_index_count < 0 or t.entry_count < 0:
            raise HFileError("negative count in the trailer")
        if (t.entry_count == 0) != (t.data_index_count == 0):
            raise HFileError(
                f"trailer counts disagree: {t.entry_count} entries but {t.data_index_count} "
                "root index entries"
            )
        self._loo_offset = t.load_on_open_data_offset
        self._loo = self._source.read(t.load_on_open_data_offset, end - t.load_on_open_data_offset)

        header, payload = self._loo_block(0, ROOT_INDEX)
        self._root, used = parse_root_index(payload, t.data_index_count)
        if t.num_data_index_levels > 1 and t.data_index_count and len(payload) - used not in (0, 16):
            raise HFileError("root index has trailing bytes that are not mid-key metadata")
        meta_pos = header.on_disk_size_with_header
        header, payload = self._loo_block(meta_pos, ROOT_INDEX)
        metas, _ = parse_root_index(payload, t.meta_index_count)
        self._meta = {e.key: e for e in metas}
        _, payload = self._loo_block(t.file_info_offset - t.load_on_open_data_offset, FILE_INFO)
        self.raw_file_info: dict[bytes, bytes] = parse_file_info(payload)

        for e in [*self._root, *metas]:
            self._check_entry(e)
        if t.num_data_index_levels == 1:
            self._set_entries(self._root)
        encoding = self.raw_file_info.get(DATA_BLOCK_ENCODING)
        if encoding not in (None, b"NONE"):
            raise HFileError(f"data block encoding {encoding.decode('latin-1')} is not supported")
        kv_version = self.raw_file_info.get(KEY_VALUE_VERSION)
        self._mvcc = kv_version is not None and int.from_bytes(kv_version[:4], "big") == 1
        self._tags = MAX_TAGS_LEN in self.raw_file_info

    def _loo_block(self, rel: int, magic: bytes) -> tuple[BlockHeader, bytes]:
        """A block of the load-on-open section, ``rel`` bytes into it."""
        with self._located(self._loo_offset + rel):
            if rel < 0 or rel >= len(self._loo):
                raise HFileError(f"{magic.decode()} block lies outside the load-on-open section")
            header = parse_header(self._loo[rel:rel + HEADER_SIZE], expected=magic)
            raw = self._loo[rel:rel + header.on_disk_size_with_header]
            if len(raw) != header.on_disk_size_with_header:
                raise HFileError(f"{magic.decode()} block runs past the end of the load-on-open section")
            return header, self._payload(raw, header)

    def _payload(self, raw: bytes, header: BlockHeader) -> bytes:
        if self.verify_checksums:
            verify_checksums(raw, header)
        return decompress(
            raw[HEADER_SIZE:header.on_disk_data_size_with_header], self.trailer.compression_codec,
            header.uncompressed_size_without_header,
        )

    def _check_entry(self, e: IndexEntry) -> None:
        # every block an index points to (data, leaf, intermediate, meta) precedes the root index
        if e.offset < 0 or e.size < HEADER_SIZE or e.offset + e.size > self._loo_offset:
            raise HFileError(
                f"index entry points to {e.size} bytes at offset {e.offset}, outside the "
                f"{self._loo_offset}-byte block section"
            )

    def _read_block(self, offset: int, size: int, magic: bytes) -> bytes:
        """Payload of the block of ``size`` on-disk bytes at ``offset``, checked and inflated."""
        with self._located(offset):
            raw = self._source.read(offset, size)
            header = parse_header(raw, expected=magic)
            if header.on_disk_size_with_header != size:
                raise HFileError(
                    f"the index says the block has {size} bytes, its header says "
                    f"{header.on_disk_size_with_header}"
                )
            return self._payload(raw, header)

    def _set_entries(self, entries: list[IndexEntry]) -> None:
        rows = [key_row(e.key) for e in entries]
        for i in range(1, len(rows)):
            if rows[i] < rows[i - 1]:
                raise HFileError(f"data block index keys out of order at entry {i}")
        self._entries, self._rows = entries, rows

    def _index(self) -> list[IndexEntry]:
        """All data block index entries in key order, descending a multi-level index once."""
        if self._entries is None:
            level = self._root
            # every level has at most one entry per data block, and a data block holds a cell:
            # a damaged index that repeats blocks cannot make the descent explode
            limit = max(1, self.trailer.entry_count)
            for depth in range(self.trailer.num_data_index_levels - 1, 0, -1):
                magic = LEAF_INDEX if depth == 1 else INTERMEDIATE_INDEX
                nxt: list[IndexEntry] = []
                for e in level:
                    with self._located(e.offset):
                        children = parse_nonroot_index(self._read_block(e.offset, e.size, magic))
                        for c in children:
                            self._check_entry(c)
                        nxt.extend(children)
                        if len(nxt) > limit:
                            raise HFileError(
                                f"the index lists more blocks than the file has cells ({limit})"
                            )
                level = nxt
            with self._located(None):
                self._set_entries(level)
        assert self._entries is not None
        return self._entries

    # ---- metadata ---------------------------------------------------------------------------

    @property
    def num_entries(self) -> int:
        """Number of cells, from the trailer."""
        return self.trailer.entry_count

    def __len__(self) -> int:
        return self.trailer.entry_count

    @property
    def compression(self) -> str:
        """The block codec's HBase name: ``GZ`` or ``NONE``."""
        return self.trailer.compression_name

    @property
    def file_info(self) -> dict[str, bytes]:
        """The file info map with keys decoded as UTF-8 (values stay bytes: several are
        big-endian integers, ``hfile.LASTKEY`` is a serialized key)."""
        return {k.decode("utf-8", "backslashreplace"): v for k, v in self.raw_file_info.items()}

    @property
    def schema(self) -> str | None:
        """Hudi's Avro schema (file info ``schema``), if the file has one."""
        raw = self.raw_file_info.get(SCHEMA)
        return None if raw is None else raw.decode("utf-8", "replace")

    @property
    def min_record_key(self) -> bytes | None:
        """Hudi's ``minRecordKey`` file info entry (base files with a bloom filter)."""
        return self.raw_file_info.get(MIN_RECORD_KEY)

    @property
    def max_record_key(self) -> bytes | None:
        """Hudi's ``maxRecordKey`` file info entry (base files with a bloom filter)."""
        return self.raw_file_info.get(MAX_RECORD_KEY)

    @property
    def bloom_filter_type(self) -> str | None:
        """Hudi's ``bloomFilterTypeCode`` (``DYNAMIC_V0`` or ``SIMPLE``), if present."""
        raw = self.raw_file_info.get(BLOOM_FILTER_TYPE)
        return None if raw is None else raw.decode("utf-8", "replace")

    @property
    def bloom_filter(self) -> bytes | None:
        """The ``bloomFilter`` meta block: Hudi's serialized bloom filter (Base64 text)."""
        return self.meta_block(BLOOM_FILTER_BLOCK)

    @property
    def last_key(self) -> bytes | None:
        """The last row, from file info ``hfile.LASTKEY`` (``None`` for an empty file)."""
        raw = self.raw_file_info.get(LAST_KEY)
        if raw is None:
            return None
        with self._located(None):
            return key_row(raw)

    @property
    def first_key(self) -> bytes | None:
        """The first row (reads the first data block)."""
        if not self.num_entries:
            return None
        rows, _ = self._block(0)
        return rows[0] if rows else None

    @property
    def meta_block_names(self) -> list[str]:
        """Names of the meta blocks (Hudi 1.0 base files have ``bloomFilter``)."""
        return [k.decode("utf-8", "backslashreplace") for k in self._meta]

    def meta_block(self, name: str | bytes) -> bytes | None:
        """The uncompressed content of a meta block, or ``None`` if there is none of that name."""
        e = self._meta.get(_key_bytes(name))
        if e is None:
            return None
        return self._read_block(e.offset, e.size, META)

    def data_blocks(self) -> list[DataBlockInfo]:
        """The data blocks in key order, as the (flattened) index lists them."""
        return [DataBlockInfo(e.offset, e.size, e.key) for e in self._index()]

    def raw_block(self, offset: int) -> tuple[BlockHeader, bytes]:
        """The header and the exact on-disk bytes of the block at ``offset`` (for inspection)."""
        with self._located(offset):
            header = parse_header(self._source.read(offset, HEADER_SIZE))
            return header, self._source.read(offset, header.on_disk_size_with_header)

    # ---- data -------------------------------------------------------------------------------

    def _decode_block(self, i: int) -> tuple[list[bytes], list[bytes], int]:
        """Rows, values and payload size of data block ``i``."""
        e = self._index()[i]
        payload = self._read_block(e.offset, e.size, DATA)
        with self._located(e.offset):
            rows, values = parse_cells(payload, self._mvcc, self._tags)
            if not rows:
                raise HFileError("empty data block")
            return rows, values, len(payload)

    def _block(self, i: int) -> tuple[list[bytes], list[bytes]]:
        e = self._index()[i]
        hit = self._cache.get(e.offset)
        if hit is not None:
            self._cache.move_to_end(e.offset)
            return hit[0], hit[1]
        block = self._decode_block(i)
        if block[2] <= self._cache_limit:
            self._cache[e.offset] = block
            self._cached_bytes += block[2]
            while self._cached_bytes > self._cache_limit:
                _, old = self._cache.popitem(last=False)
                self._cached_bytes -= old[2]
        return block[0], block[1]

    def _block_for(self, row: bytes) -> int:
        """Index of the only block that can hold ``row`` (-1: before the first key)."""
        self._index()
        return bisect_right(self._rows, row) - 1

    def items(self, start: Key | None = None) -> Iterator[tuple[bytes, bytes]]:
        """All ``(key, value)`` pairs in key order, from the first key ``>= start`` if given."""
        if not self.num_entries:
            return
        entries = self._index()
        if start is None:
            b, j = 0, 0
        else:
            row = _key_bytes(start)
            b = max(0, self._block_for(row))
            j = bisect_left(self._block(b)[0], row)
        for i in range(b, len(entries)):
            # a full scan decodes each block once; keep it out of the lookup cache
            rows, values = self._block(i) if i == b and start is not None else self._decode_block(i)[:2]
            yield from zip(rows[j:], values[j:])
            j = 0

    __iter__ = items

    def keys(self, start: Key | None = None) -> Iterator[bytes]:
        """All keys in order (from the first key ``>= start`` if given)."""
        for k, _ in self.items(start):
            yield k

    def cells(self) -> Iterator[Cell]:
        """Every cell with all its KeyValue fields (family, qualifier, timestamp, type, MVCC)."""
        for e in self._index():
            payload = self._read_block(e.offset, e.size, DATA)
            with self._located(e.offset):
                cells = parse_full_cells(payload, self._mvcc, self._tags)
            yield from cells

    def get(self, key: Key) -> bytes | None:
        """The value of ``key`` (the first one if the file repeats it), or ``None``."""
        row = _key_bytes(key)
        if not self.num_entries:
            return None
        b = self._block_for(row)
        if b < 0:
            return None
        rows, values = self._block(b)
        j = bisect_left(rows, row)
        if j < len(rows) and rows[j] == row:
            return values[j]
        return None

    def get_all(self, key: Key) -> list[bytes]:
        """Every value stored under ``key``, in file order (files with repeated keys)."""
        row = _key_bytes(key)
        return [v for _, v in self._run(row, lambda k: k == row)]

    def __getitem__(self, key: Key) -> bytes:
        """The value of ``key``; ``KeyError`` if absent (so ``dict(reader)`` works)."""
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, (bytes, bytearray, memoryview, str)):
            return False
        return self.get(key) is not None

    def get_many(self, keys: Any) -> dict[bytes, bytes]:
        """Values of the given keys that exist (the first one of a repeated key, as :meth:`get`).

        The keys are sorted and split by the block index, so only the blocks whose key range can hold
        one of them are read, each once; within a block only the cells the search probes are sliced
        (:func:`~hoodie.format.hfile.blocks.lookup_cells`), not the whole block (a record-index lookup
        of a few keys per 1 MiB block would otherwise decode every cell of the block)."""
        out: dict[bytes, bytes] = {}
        if not self.num_entries:
            return out
        wanted = sorted({_key_bytes(k) for k in keys})
        entries = self._index()
        i, n = 0, len(wanted)
        while i < n:
            b = self._block_for(wanted[i])
            if b < 0:
                i += 1
                continue
            j = bisect_left(wanted, self._rows[b + 1], i) if b + 1 < len(entries) else n
            e = entries[b]
            hit = self._cache.get(e.offset)
            if hit is not None:  # decoded by get() before: search its rows
                rows, values = hit[0], hit[1]
                for row in wanted[i:j]:
                    k = bisect_left(rows, row)
                    if k < len(rows) and rows[k] == row:
                        out[row] = values[k]
            else:
                payload = self._read_block(e.offset, e.size, DATA)
                with self._located(e.offset):
                    out.update(lookup_cells(payload, self._mvcc, self._tags, wanted[i:j]))
            i = j
        return out

    def items_with_prefix(self, prefix: Key) -> Iterator[tuple[bytes, bytes]]:
        """``(key, value)`` pairs whose key starts with ``prefix``, in key order."""
        row = _key_bytes(prefix)
        return self._run(row, lambda k: k.startswith(row))

    def keys_with_prefix(self, prefix: Key) -> list[bytes]:
        """Keys starting with ``prefix``, in order."""
        return [k for k, _ in self.items_with_prefix(prefix)]

    def _run(self, start: bytes, keep: Any) -> Iterator[tuple[bytes, bytes]]:
        """Pairs from the first key ``>= start`` for as long as ``keep(key)`` holds."""
        if not self.num_entries:
            return
        entries = self._index()
        b = max(0, self._block_for(start))
        rows, values = self._block(b)
        j = bisect_left(rows, start)
        while True:
            while j < len(rows):
                if not keep(rows[j]):
                    return
                yield rows[j], values[j]
                j += 1
            b += 1
            if b >= len(entries):
                return
            rows, values = self._block(b)
            j = 0

    def validate(self) -> int:
        """Read every index, data and meta block, checking checksums, sizes and key order;
        returns the number of cells, which must match the trailer."""
        count = 0
        last: bytes | None = None
        for i, e in enumerate(self._index()):
            rows = self._decode_block(i)[0]
            with self._located(e.offset):
                if last is not None and rows[0] < last:
                    raise HFileError("keys out of order across blocks")
                if any(rows[k] < rows[k - 1] for k in range(1, len(rows))):
                    raise HFileError("keys out of order within the block")
                if key_row(e.key) > rows[0]:
                    raise HFileError("index key sorts after the block's first key")
            last = rows[-1]
            count += len(rows)
        for name in list(self._meta):
            self.meta_block(name)
        if count != self.num_entries:
            raise HFileError(f"the data blocks hold {count} cells, the trailer says {self.num_entries}",
                             path=self.name)
        return count
