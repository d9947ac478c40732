"""Hudi's record-key bloom filters, as Java Hudi writes them into base-file footers.

Java Hudi's default index on Spark (``hoodie.index.type=BLOOM``) reads the footer key
``org.apache.hudi.bloomfilter`` of every candidate base file and fails with a
NullPointerException when it is missing, so every base file hoodie writes carries one. The
bytes must be exactly Java's (they are a serialized Java object), which this module reproduces:

* keys are the UTF-8 bytes of ``_hoodie_record_key``; each key is hashed ``nbHash`` times with
  Hadoop's MurmurHash 2 (hash type 1), each round seeded with the previous round's hash; bit
  position = ``abs(hash % vectorSize)`` with Java's truncating ``%``;
* ``vectorSize = ceil(n * -ln(fpp) / ln(2)^2)`` and ``nbHash = ceil(ln(2) * vectorSize / n)`` for
  ``n = hoodie.index.bloom.num_entries`` and ``fpp = hoodie.index.bloom.fpp``;
* ``DYNAMIC_V0`` (the default) is a bounded dynamic filter: a new row of bits every
  ``num_entries`` keys until ``rows * num_entries >= hoodie.bloom.index.filter.dynamic.max.entries``,
  after which keys go to the rows in turn; ``SIMPLE`` is one row;
* serialization is Java ``DataOutput``: version ``-1``, ``nbHash``, hash type (a byte),
  ``vectorSize``, then (dynamic only) ``nr``, the current row's record count and the row count,
  each row repeating that header before its bits (bit ``i`` in byte ``i // 8`` at ``1 << (i % 8)``);
  the footer holds it Base64-encoded.

Hashing is vectorised with numpy over keys of equal byte length (record keys have few lengths),
so a million keys take about a second instead of a minute in a per-key loop.
"""

from __future__ import annotations

import base64
import math
import struct
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie import configs as C
from hoodie.configs import read

__all__ = [
    "BLOOM_FOOTER_KEY", "OLD_BLOOM_FOOTER_KEY", "BLOOM_TYPE_FOOTER_KEY", "BloomSpec", "BloomFilter",
    "bit_positions", "read_bloom_filter", "reusable_footer",
]

BLOOM_FOOTER_KEY = "org.apache.hudi.bloomfilter"
OLD_BLOOM_FOOTER_KEY = "com.uber.hoodie.bloomfilter"
BLOOM_TYPE_FOOTER_KEY = "hoodie_bloom_filter_type_code"
NUM_ENTRIES_KEY = C.BLOOM_NUM_ENTRIES
FPP_KEY = C.BLOOM_FPP
FILTER_TYPE_KEY = C.BLOOM_FILTER_TYPE
DYNAMIC_MAX_KEY = C.BLOOM_DYNAMIC_MAX_ENTRIES
MURMUR_HASH = 1
_VERSION = -1
_M = np.uint32(0x5BD1E995)
_LN2 = math.log(2)


@dataclass(frozen=True)
class BloomSpec:
    """How to size a bloom filter (Hudi's ``hoodie.index.bloom.*`` / ``hoodie.bloom.index.filter.*``)."""

    num_entries: int = C.BLOOM_NUM_ENTRIES.default
    fpp: float = C.BLOOM_FPP.default
    filter_type: str = C.BLOOM_FILTER_TYPE.default
    dynamic_max_entries: int = C.BLOOM_DYNAMIC_MAX_ENTRIES.default

    def __post_init__(self) -> None:
        if self.filter_type not in ("DYNAMIC_V0", "SIMPLE"):
            raise ValueError(f"hoodie.bloom.index.filter.type={self.filter_type!r}: use DYNAMIC_V0 or SIMPLE")
        if self.num_entries <= 0:
            raise ValueError(f"hoodie.index.bloom.num_entries={self.num_entries}: must be a positive integer")
        if not 0.0 < self.fpp < 1.0:
            raise ValueError(f"hoodie.index.bloom.fpp={self.fpp}: must be between 0 and 1 (exclusive)")
        if self.dynamic_max_entries <= 0:
            raise ValueError(f"hoodie.bloom.index.filter.dynamic.max.entries={self.dynamic_max_entries}: "
                             "must be a positive integer")

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "BloomSpec":
        """Read Hudi's bloom keys from write options; a bad value raises ValueError naming the key."""
        cfg = read(options)
        return cls(
            num_entries=cfg.get(C.BLOOM_NUM_ENTRIES),
            fpp=cfg.get(C.BLOOM_FPP),
            filter_type=cfg.get(C.BLOOM_FILTER_TYPE),
            dynamic_max_entries=cfg.get(C.BLOOM_DYNAMIC_MAX_ENTRIES),
        )

    @property
    def vector_size(self) -> int:
        """Bits per row, as Hudi's ``BloomFilterUtils.getBitSize``."""
        return int(math.ceil(self.num_entries * (-math.log(self.fpp) / (_LN2 * _LN2))))

    @property
    def num_hashes(self) -> int:
        """Hash rounds per key, as Hudi's ``BloomFilterUtils.getNumHashes``."""
        return int(math.ceil(_LN2 * self.vector_size / self.num_entries))


def _java_bytes_signed(col: np.ndarray) -> np.ndarray:
    """Java's ``(int) byte``: sign-extended, as uint32 bits."""
    return col.view(np.int8).astype(np.int32).view(np.uint32)


def _mixed_words(data: np.ndarray) -> list[np.ndarray]:
    """The seed-independent part of MurmurHash 2: each 4-byte little-endian word, mixed."""
    words = []
    with np.errstate(over="ignore"):
        for w in range(data.shape[1] // 4):
            k = data[:, 4 * w:4 * w + 4].copy().view("<u4").reshape(-1)
            k = k * _M
            k ^= k >> np.uint32(24)
            k = k * _M
            words.append(k)
    return words


def _tail(data: np.ndarray) -> Optional[np.ndarray]:
    """The tail bytes XOR-ed together the way Hadoop's MurmurHash does (sign-extended bytes)."""
    length = data.shape[1]
    left = length % 4
    if left == 0:
        return None
    t = np.zeros(data.shape[0], dtype=np.uint32)
    if left >= 3:
        t ^= _java_bytes_signed(data[:, length - 3].copy()) << np.uint32(16)
    if left >= 2:
        t ^= _java_bytes_signed(data[:, length - 2].copy()) << np.uint32(8)
    t ^= _java_bytes_signed(data[:, length - 1].copy())
    return t


def _rounds(data: np.ndarray, nb_hash: int, vector_size: int) -> Iterator[np.ndarray]:
    """Yield, round by round, the bit positions of keys that all have ``data.shape[1]`` bytes."""
    length = data.shape[1]
    words = _mixed_words(data)
    tail = _tail(data)
    n = data.shape[0]
    # Every operation in place on preallocated uint32 buffers: 30 rounds (Hudi's default) over
    # every key dominate a base file's write otherwise.
    h = np.zeros(n, dtype=np.uint32)
    tmp = np.empty(n, dtype=np.uint32)
    pos = np.empty(n, dtype=np.uint32)
    ln = np.uint32(length & 0xFFFFFFFF)
    vs = np.uint32(vector_size)
    with np.errstate(over="ignore"):
        for _ in range(nb_hash):
            h ^= ln  # h holds the seed: the previous round's hash (0 first)
            for k in words:
                np.multiply(h, _M, out=h)
                h ^= k
            if tail is not None:
                h ^= tail
                np.multiply(h, _M, out=h)
            np.right_shift(h, np.uint32(13), out=tmp)
            h ^= tmp
            np.multiply(h, _M, out=h)
            np.right_shift(h, np.uint32(15), out=tmp)
            h ^= tmp
            # Java: Math.abs(initval % maxValue), % truncating toward zero on a signed int: the
            # magnitude of the signed hash (2^31 for Integer.MIN_VALUE, as uint32) modulo the size.
            np.abs(h.view(np.int32), out=pos.view(np.int32))
            yield np.remainder(pos, vs).astype(np.int64)  # a fresh array: callers may keep it


def bit_positions(keys: pa.Array | pa.ChunkedArray, nb_hash: int, vector_size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(row_indices, positions)`` per key length and hash round.

    ``positions[j]`` is a bit the key at ``row_indices[j]`` sets (or needs) in a filter of
    ``vector_size`` bits; raises on null or empty keys, which Java's ``HashFunction`` rejects too.
    """
    arr = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if arr.null_count:
        raise ValueError("a bloom filter cannot hold a null record key")
    if len(arr) == 0:
        return
    lengths = pc.binary_length(arr).to_numpy(zero_copy_only=False).astype(np.int64)
    if (lengths == 0).any():
        raise ValueError("a bloom filter cannot hold an empty record key (Hudi's HashFunction rejects it)")
    arr = arr.cast(pa.large_string()) if not pa.types.is_large_string(arr.type) else arr
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    values = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1]
    for length in np.unique(lengths):
        rows = np.nonzero(lengths == length)[0]
        data = values[starts[rows][:, None] + np.arange(length)[None, :]]
        for pos in _rounds(data, nb_hash, vector_size):
            yield rows, pos


@dataclass
class BloomFilter:
    """A Hudi bloom filter: one row of bits (SIMPLE) or a bounded dynamic matrix (DYNAMIC_V0)."""

    filter_type: str
    vector_size: int
    nb_hash: int
    hash_type: int = MURMUR_HASH
    nr: int = 0
    max_nr: int = 0
    current_nb_record: int = 0
    rows: list[np.ndarray] = field(default_factory=list)  # bool arrays of vector_size bits
    # Where the next key goes once the dynamic filter reached its bound (Java's curMatrixIndex).
    _reached_max: bool = False
    _cur_matrix_index: int = 0

    @classmethod
    def empty(cls, spec: BloomSpec) -> "BloomFilter":
        """A filter with no keys, sized by ``spec``."""
        return cls(spec.filter_type, spec.vector_size, spec.num_hashes, MURMUR_HASH,
                   spec.num_entries, spec.dynamic_max_entries, 0,
                   [np.zeros(spec.vector_size, dtype=bool)])

    @classmethod
    def build(cls, keys: pa.Array | pa.ChunkedArray, spec: BloomSpec = BloomSpec()) -> "BloomFilter":
        """A filter holding ``keys``, added in order (row assignment depends on order)."""
        bf = cls.empty(spec)
        bf.add(keys)
        return bf

    def _row_of_each(self, n: int) -> np.ndarray:
        """Row index of the next ``n`` keys, advancing the dynamic state as Java's ``add`` does."""
        out = np.empty(n, dtype=np.int64)
        if self.filter_type == "SIMPLE":
            out[:] = 0
            self.current_nb_record += n
            return out
        i = 0
        while i < n:
            if self._reached_max:
                m = len(self.rows)
                out[i:] = (self._cur_matrix_index + np.arange(n - i)) % m
                self._cur_matrix_index += n - i
                self.current_nb_record += n - i
                return out
            if self.current_nb_record >= self.nr:
                if len(self.rows) * self.nr < self.max_nr:
                    self.rows.append(np.zeros(self.vector_size, dtype=bool))
                    self.current_nb_record = 0
                else:
                    # The key that hits the bound goes to row 0, then rows take turns.
                    self._reached_max = True
                    out[i] = 0
                    self.current_nb_record += 1
                    i += 1
                    continue
            take = min(n - i, self.nr - self.current_nb_record)
            out[i:i + take] = len(self.rows) - 1
            self.current_nb_record += take
            i += take
        return out

    def add(self, keys: pa.Array | pa.ChunkedArray) -> None:
        """Add keys in order."""
        n = len(keys)
        if n == 0:
            return
        row_of = self._row_of_each(n)
        if len(self.rows) == 1:
            # The common case (a base file holds fewer keys than a row): set the bits in place; the
            # matrix below would copy the 2.6M-bit row twice per file.
            bits = self.rows[0]
            for _idx, pos in bit_positions(keys, self.nb_hash, self.vector_size):
                bits[pos] = True
            return
        # One flat bit matrix, so each round sets its bits with a single scatter.
        mat = np.stack(self.rows)
        flat = mat.reshape(-1)
        one_row = bool((row_of == row_of[0]).all())
        for idx, pos in bit_positions(keys, self.nb_hash, self.vector_size):
            if one_row:  # the common case (fewer keys than a row holds): no offsets to add
                flat[int(row_of[0]) * self.vector_size + pos] = True
            else:
                flat[row_of[idx] * self.vector_size + pos] = True
        self.rows = list(mat)

    def might_contain(self, keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """For each key: could it be in the filter (no false negatives)."""
        n = len(keys)
        per_row = np.ones((len(self.rows), n), dtype=bool)
        for idx, pos in bit_positions(keys, self.nb_hash, self.vector_size):
            for r, bits in enumerate(self.rows):
                per_row[r, idx] &= bits[pos]
        return per_row.any(axis=0) if len(self.rows) else np.zeros(n, dtype=bool)

    # -- serialization (Java DataOutput, big-endian) ------------------------------------------
    def _header(self) -> bytes:
        return struct.pack(">iibi", _VERSION, self.nb_hash, self.hash_type, self.vector_size)

    def _row_bytes(self, bits: np.ndarray) -> bytes:
        return self._header() + np.packbits(bits, bitorder="little").tobytes()

    def to_bytes(self) -> bytes:
        """The Java serialization of this filter."""
        if self.filter_type == "SIMPLE":
            return self._row_bytes(self.rows[0])
        parts = [self._header(), struct.pack(">iii", self.nr, self.current_nb_record, len(self.rows))]
        parts += [self._row_bytes(r) for r in self.rows]
        return b"".join(parts)

    def serialize(self) -> str:
        """The footer value: Base64 of :meth:`to_bytes`."""
        return base64.b64encode(self.to_bytes()).decode("ascii")

    def footer(self) -> dict[str, str]:
        """Footer key/values Java Hudi writes for this filter (the type code only for dynamic ones)."""
        md = {BLOOM_FOOTER_KEY: self.serialize()}
        if self.filter_type.startswith("DYNAMIC"):
            md[BLOOM_TYPE_FOOTER_KEY] = self.filter_type
        return md

    @classmethod
    def deserialize(cls, text: str | bytes, filter_type: Optional[str] = None) -> "BloomFilter":
        """Parse a footer value; ``filter_type`` from ``hoodie_bloom_filter_type_code`` (absent: SIMPLE)."""
        try:
            raw = base64.b64decode(text, validate=True)
        except (ValueError, TypeError) as e:
            raise ValueError(f"bloom filter footer is not Base64: {e}") from None
        ftype = (filter_type or "SIMPLE")
        if ftype not in ("SIMPLE", "DYNAMIC_V0"):
            raise ValueError(f"unknown bloom filter type code {ftype!r} (expected SIMPLE or DYNAMIC_V0)")
        pos = 0

        def header() -> tuple[int, int, int]:
            nonlocal pos
            if len(raw) < pos + 13:
                raise ValueError("bloom filter footer is truncated")
            ver, nbh, ht, vs = struct.unpack_from(">iibi", raw, pos)
            if ver != _VERSION:
                raise ValueError(f"bloom filter version {ver} is not supported (expected -1)")
            if ht != MURMUR_HASH:
                raise ValueError(f"bloom filter hash type {ht} is not supported (expected 1, murmur)")
            if vs <= 0 or nbh <= 0:
                raise ValueError(f"bloom filter with vector size {vs} and {nbh} hashes is invalid")
            pos += 13
            return nbh, ht, vs

        def bits(vs: int) -> np.ndarray:
            nonlocal pos
            nb = (vs + 7) // 8
            if len(raw) < pos + nb:
                raise ValueError("bloom filter footer is truncated")
            b = np.unpackbits(np.frombuffer(raw, dtype=np.uint8, count=nb, offset=pos), bitorder="little")
            pos += nb
            return b[:vs].astype(bool)

        nbh, ht, vs = header()
        if ftype == "SIMPLE":
            return cls("SIMPLE", vs, nbh, ht, 0, 0, 0, [bits(vs)])
        if len(raw) < pos + 12:
            raise ValueError("bloom filter footer is truncated")
        nr, cur, nrows = struct.unpack_from(">iii", raw, pos)
        pos += 12
        rows = []
        for _ in range(nrows):
            rn, _rt, rv = header()
            if (rn, rv) != (nbh, vs):
                raise ValueError("bloom filter rows disagree with the filter's size")
            rows.append(bits(rv))
        # max_nr is not serialized (Java loses it too); readers only test membership.
        return cls("DYNAMIC_V0", vs, nbh, ht, nr, 0, cur, rows)


def read_bloom_filter(footer: dict[bytes, bytes] | None) -> Optional[BloomFilter]:
    """The bloom filter in a Parquet file's key/value metadata, or None if it has none."""
    if not footer:
        return None
    text = footer.get(BLOOM_FOOTER_KEY.encode()) or footer.get(OLD_BLOOM_FOOTER_KEY.encode())
    if text is None:
        return None
    tc = footer.get(BLOOM_TYPE_FOOTER_KEY.encode())
    return BloomFilter.deserialize(text, tc.decode() if tc else None)


def reusable_footer(footer: Optional[Mapping[bytes, bytes]], spec: BloomSpec, num_keys: int) -> Optional[dict[str, str]]:
    """The bloom filter entries of an old base file's ``footer``, when they are byte for byte what
    :meth:`BloomFilter.build` with ``spec`` writes for the same ``num_keys`` keys in the same order; else
    None.

    For a copy-on-write rewrite that keeps exactly the old file's record keys in their order (updates in
    place, as Hudi's merge handle writes them). Only the headers are decoded (the filter is ~0.4 MB of
    Base64 per row), and any doubt answers None so the caller builds the filter: another size, hash
    count or type, a dynamic filter whose row count or last row's count is not the one ``num_keys`` keys
    give (or that reached its bound, where keys go to rows in turn), or a footer that does not parse.
    """
    if not footer or num_keys <= 0:
        return None
    text = footer.get(BLOOM_FOOTER_KEY.encode())
    if text is None:
        return None
    code = footer.get(BLOOM_TYPE_FOOTER_KEY.encode())
    ftype = code.decode("utf-8", "replace") if code else "SIMPLE"
    if ftype != spec.filter_type:
        return None
    try:
        head = base64.b64decode(text[:36], validate=True)  # 27 bytes: both headers of a dynamic filter
        ver, nbh, ht, vs = struct.unpack_from(">iibi", head, 0)
        if (ver, nbh, ht, vs) != (_VERSION, spec.num_hashes, MURMUR_HASH, spec.vector_size):
            return None
        rows = 1
        if ftype == "DYNAMIC_V0":
            nr, cur, nrows = struct.unpack_from(">iii", head, 13)
            # A row per num_entries keys, opened by the key after a full row while rows * num_entries
            # stays below the bound (past it keys go to the rows in turn: not reproduced here).
            rows = max(1, math.ceil(num_keys / spec.num_entries))
            if (rows - 1) * spec.num_entries >= spec.dynamic_max_entries and rows > 1:
                return None
            if (nr, cur, nrows) != (spec.num_entries, num_keys - (rows - 1) * spec.num_entries, rows):
                return None
        if len(text) != 4 * math.ceil(_serialized_size(spec, rows) / 3):
            return None  # another row count, or a truncated filter
    except (ValueError, TypeError, struct.error):
        return None
    out = {BLOOM_FOOTER_KEY: text.decode("ascii")}
    if ftype.startswith("DYNAMIC"):
        out[BLOOM_TYPE_FOOTER_KEY] = ftype
    return out


def _serialized_size(spec: BloomSpec, rows: int = 1) -> int:
    """Bytes of a filter of ``spec`` with ``rows`` rows (:meth:`BloomFilter.to_bytes`)."""
    row = 13 + (spec.vector_size + 7) // 8
    return row if spec.filter_type == "SIMPLE" else 13 + 12 + rows * row
