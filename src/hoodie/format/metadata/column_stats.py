"""The metadata table's ``column_stats`` partition: keys, records and their computation from Parquet footers.

What Java writes (checked byte for byte against the Java-written v8/v9 fixtures by
``tests/format/test_column_stats.py``; sources ``HashID``, ``ColumnIndexID``/``PartitionIndexID``/
``FileIndexID``, ``HoodieTableMetadataUtil.getColumnStatsIndexKey``, ``mapRecordKeyToFileGroupIndex``,
``ParquetUtils.readColumnStatsFromMetadata``, ``HoodieMetadataPayload.createColumnStatsRecords``):

* **key** = base64(xxhash64(column name)) + base64(xxhash64(partition identifier)) +
  base64(md5(file name)): xxhash64 with Java's seed ``(long) 0xdabadaba`` (an ``int`` sign-extended),
  the 8 hash bytes big-endian, standard Base64 with padding; the partition identifier is the partition
  path, or ``.`` for a non-partitioned table;
* **file group** = ``abs(String.hashCode(key)) % N`` (Java's ``hashCode`` of the UTF-16 key), file id
  ``col-stats-<4-digit index>-0``;
* **record** (type 3, ``ColumnStatsMetadata``): file name (without directory), column name, min and
  max wrapped in the Avro wrapper record of their type, value count (rows, nulls included), null
  count, total compressed and uncompressed size of the column's chunks, ``isDeleted``,
  ``isTightBound`` false; table version 9 adds ``valueType`` (Hudi 1.1's ``ValueType`` ordinal and,
  for decimals, ``"precision,scale"``) and writes decimals as their minimal two's-complement unscaled
  bytes in a ``BytesWrapper``;
* a **base file**'s statistics aggregate its Parquet footer over row groups: min of the mins, max of
  the maxes, sums of the counts and sizes. A column chunk without min/max (Parquet leaves them out
  for values too large to keep) makes the file's min and max null: no bound is known.

Type mapping per table version, for the Parquet physical/logical types of top-level columns:

| column | v9 wrapper (ordinal) | v6/v8 wrapper |
|---|---|---|
| string | StringWrapper (7) | StringWrapper [verified v8] |
| boolean | BooleanWrapper (2) | BooleanWrapper |
| int32 | IntWrapper (3) | IntWrapper |
| int64 | LongWrapper (4) | LongWrapper [verified v8] |
| float / double | FloatWrapper (5) / DoubleWrapper (6) | same [double verified v8] |
| date | IntWrapper (12) | DateWrapper [unconfirmed] |
| timestamp micros / millis | LongWrapper (16 / 15) | LongWrapper [unconfirmed] |
| decimal | BytesWrapper (10, ``"p,s"``) | DecimalWrapper rescaled to (30, 15) [unconfirmed] |

Other types (binary without a logical type, nested columns) are not indexed.
"""

from __future__ import annotations

import base64
import decimal
import hashlib
import io
import json
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

import fastavro
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.format.hfile import HFileWriter
from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError

COLUMN_STATS_PARTITION = "column_stats"
FILE_ID_PREFIX = "col-stats-"
TYPE_COLUMN_STATS = 3
# partition_stats (table version 9): the same record body (type 6), one per partition and column.
PARTITION_STATS_PARTITION = "partition_stats"
PARTITION_STATS_FILE_ID_PREFIX = "partition-stats-"
TYPE_PARTITION_STATS = 6
NON_PARTITIONED_ID = "."
# HashID.HASH_SEED is the int 0xdabadaba handed to XXHash64.hash(..., long seed): sign-extended.
HASH_SEED = 0xFFFFFFFFDABADABA
# Hudi's default file-group count of column_stats (hoodie.metadata.index.column.stats.file.group.count).
DEFAULT_FILE_GROUP_COUNT = 2
# hoodie.metadata.index.column.stats.max.columns.to.index (Hudi 1.x default)
DEFAULT_MAX_COLUMNS = 32
# Hudi 1.x indexes these meta columns first (HoodieTableMetadataUtil.META_COL_SET_TO_INDEX).
META_COLUMNS_TO_INDEX = ("_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path")
_NS = "org.apache.hudi.avro.model."

# Hudi 1.1 ValueType ordinals (the v9 fixtures confirm 2, 4, 7, 10, 12, 16).
VT_BOOLEAN, VT_INT, VT_LONG, VT_FLOAT, VT_DOUBLE, VT_STRING = 2, 3, 4, 5, 6, 7
VT_DECIMAL, VT_DATE, VT_TIMESTAMP_MILLIS, VT_TIMESTAMP_MICROS = 10, 12, 15, 16

_M64 = (1 << 64) - 1
_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def xxhash64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` (unsigned 64-bit), as lz4-java's ``XXHash64`` computes it. Pure Python: keys
    are short (column names, partition paths)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed & _M64, (seed - _P1) & _M64]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            v = [_round(a, b) for a, b in zip(v, lanes)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for a in v:
            h = ((h ^ _round(0, a)) * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        (k,) = struct.unpack_from("<Q", data, i)
        h = (_rotl(h ^ _round(0, k), 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        (k,) = struct.unpack_from("<I", data, i)
        h = (_rotl(h ^ ((k * _P1) & _M64), 23) * _P2 + _P3) & _M64
        i += 4
    while i < n:
        h = (_rotl(h ^ ((data[i] * _P5) & _M64), 11) * _P1) & _M64
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    return h ^ (h >> 32)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def column_index_id(column: str) -> str:
    """``ColumnIndexID(column).asBase64EncodedString()``."""
    return _b64(struct.pack(">Q", xxhash64(column.encode("utf-8"), HASH_SEED)))


def partition_index_id(partition: str) -> str:
    """``PartitionIndexID`` of a partition path (``.`` for the non-partitioned table's ``""``)."""
    return _b64(struct.pack(">Q", xxhash64((partition or NON_PARTITIONED_ID).encode("utf-8"), HASH_SEED)))


def file_index_id(file_name: str) -> str:
    """``FileIndexID(file name)``: Base64 of the MD5 of the name."""
    return _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def column_stats_key(column: str, partition: str, file_name: str) -> str:
    """The ``column_stats`` record key of one file's column."""
    return column_index_id(column) + partition_index_id(partition) + file_index_id(file_name)


def partition_stats_key(column: str, partition: str) -> str:
    """The ``partition_stats`` record key of one partition's column (``ColumnIndexID`` + ``PartitionIndexID``)."""
    return column_index_id(column) + partition_index_id(partition)


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    raw = s.encode("utf-16-be")
    for j in range(0, len(raw), 2):
        h = (31 * h + ((raw[j] << 8) | raw[j + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def file_group_index(key: str, count: int) -> int:
    """``mapRecordKeyToFileGroupIndex``: ``abs(abs(hashCode) % count)``."""
    return abs(abs(java_string_hash(key)) % count)


def file_group_indexes(keys: Sequence[str], count: int) -> list[int]:
    """:func:`file_group_index` of every key, vectorised: Java's ``String.hashCode`` is
    ``sum(c[i] * 31**(n-1-i)) mod 2**32`` over UTF-16 code units, which for an ASCII key are its UTF-8
    bytes, so the products and per-key sums run in NumPy's wrapping uint32 arithmetic; a key with a
    non-ASCII byte takes :func:`java_string_hash` (a commit's keys number in the millions, and the
    per-character Python loop cost microseconds a key)."""
    import numpy as np
    import pyarrow as pa

    n = len(keys)
    if n == 0:
        return []
    arr = pa.array(keys, pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + n + 1]
    start, stop = int(offsets[0]), int(offsets[-1])
    lengths = np.diff(offsets)
    hashes = np.zeros(n, dtype=np.uint32)
    if stop > start:
        data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[start:stop]
        owner = np.repeat(np.arange(n), lengths)
        exps = (offsets[1:][owner] - 1 - np.arange(start, stop)).astype(np.int64)
        powers = np.array([pow(31, i, 1 << 32) for i in range(int(lengths.max()))], dtype=np.uint32)
        contrib = data.astype(np.uint32) * powers[exps]
        nonempty = lengths > 0
        firsts = (offsets[:-1] - start)[nonempty]
        hashes[nonempty] = np.add.reduceat(contrib, firsts, dtype=np.uint32)
        wide = np.zeros(n, dtype=bool)
        wide[nonempty] = np.maximum.reduceat(data, firsts) >= 0x80
        for i in np.flatnonzero(wide):
            hashes[i] = np.uint32(java_string_hash(keys[i]) & 0xFFFFFFFF)
    signed = hashes.view(np.int32).astype(np.int64)
    return (np.abs(signed) % count).tolist()


def file_group_id(index: int) -> str:
    """``col-stats-0000-0``-style file id of file group ``index``."""
    return f"{FILE_ID_PREFIX}{index:04d}-0"


@dataclass
class ColumnStats:
    """One ``HoodieMetadataColumnStats``: the statistics of one column of one data file.

    ``min_value``/``max_value`` are ``(wrapper name, value)`` (``("StringWrapper", "a")``) or None;
    ``value_type`` is ``(ordinal, additional info)`` (table version 9) or None.
    """

    file_name: str
    column_name: str
    min_value: Optional[tuple[str, Any]]
    max_value: Optional[tuple[str, Any]]
    value_count: int
    null_count: int
    total_size: int
    total_uncompressed_size: int
    is_deleted: bool = False
    is_tight_bound: bool = False
    value_type: Optional[tuple[int, Optional[str]]] = None
    partition: str = field(default="", compare=False)
    # 3: a file's statistics (column_stats); 6: a partition's (partition_stats, ``file_name`` is the
    # partition path).
    record_type: int = field(default=TYPE_COLUMN_STATS, compare=False)

    @property
    def key(self) -> str:
        """The record key (needs ``partition``)."""
        if self.record_type == TYPE_PARTITION_STATS:
            return partition_stats_key(self.column_name, self.partition)
        return column_stats_key(self.column_name, self.partition, self.file_name)

    def avro(self, version: int) -> dict[str, Any]:
        """The ``ColumnStatsMetadata`` datum for the schema of table ``version``."""
        def wrap(v: Optional[tuple[str, Any]]) -> Any:
            return None if v is None else (_NS + v[0], {"value": v[1]})

        out: dict[str, Any] = {
            "fileName": self.file_name, "columnName": self.column_name,
            "minValue": wrap(self.min_value), "maxValue": wrap(self.max_value),
            "valueCount": self.value_count, "nullCount": self.null_count, "totalSize": self.total_size,
            "totalUncompressedSize": self.total_uncompressed_size, "isDeleted": self.is_deleted,
            "isTightBound": self.is_tight_bound,
        }
        if version >= 9:
            out["valueType"] = None if self.value_type is None else {
                "typeOrdinal": self.value_type[0], "additionalInfo": self.value_type[1]}
        return out

    def python_min(self) -> Any:
        """The min as a comparable Python value (decimals as ``Decimal``), or None."""
        return _unwrap(self.min_value, self.value_type)

    def python_max(self) -> Any:
        """The max as a comparable Python value, or None."""
        return _unwrap(self.max_value, self.value_type)


def _unwrap(v: Optional[tuple[str, Any]], value_type: Optional[tuple[int, Optional[str]]]) -> Any:
    if v is None:
        return None
    name, value = v
    if name == "BytesWrapper" and value_type and value_type[0] == VT_DECIMAL:
        scale = int((value_type[1] or "0,0").split(",")[1])
        return decimal.Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
    return value


def has_unbounded_values(s: ColumnStats) -> bool:
    """Values without a known range: non-null values but no min or max."""
    return s.value_count > s.null_count and (s.min_value is None or s.max_value is None)


def merge_stats(older: ColumnStats, newer: ColumnStats) -> Optional[ColumnStats]:
    """Two records of one key merged as ``HoodieMetadataPayload`` does: a tombstone wins (None: the
    key is gone); otherwise the range widens to cover both and the counts and sizes add up. When
    either side has values without bounds, or the bounds do not compare (a column's type changed),
    the merged range is unknown (min and max None) rather than too narrow."""
    if newer.is_deleted:
        return None
    if older.is_deleted:
        return newer
    if newer.is_tight_bound:
        # A tight-bound record (partition_stats recomputed over the partition's latest files) replaces
        # the older one, as HoodieMetadataPayload.mergeColumnStatsRecords does.
        return newer
    lo, hi = older.min_value, older.max_value
    if has_unbounded_values(older) or has_unbounded_values(newer):
        lo = hi = None
    else:
        try:
            if newer.min_value is not None and (lo is None or newer.python_min() < older.python_min()):
                lo = newer.min_value
            if newer.max_value is not None and (hi is None or newer.python_max() > older.python_max()):
                hi = newer.max_value
        except TypeError:
            lo = hi = None
    return ColumnStats(newer.file_name, newer.column_name, lo, hi, older.value_count + newer.value_count,
                       older.null_count + newer.null_count, older.total_size + newer.total_size,
                       older.total_uncompressed_size + newer.total_uncompressed_size, False,
                       older.is_tight_bound and newer.is_tight_bound, newer.value_type or older.value_type,
                       newer.partition, newer.record_type)


def deleted_stats(file_name: str, column: str, partition: str, version: int) -> ColumnStats:
    """The tombstone Java writes for a deleted file's column (``isDeleted`` true, no values)."""
    return ColumnStats(file_name, column, None, None, 0, 0, 0, 0, is_deleted=True, partition=partition,
                       value_type=None)


# -- decoding -----------------------------------------------------------------------------------------
def decode_column_stats(key: str, rec: Mapping[str, Any], where: str,
                        record_type: int = TYPE_COLUMN_STATS) -> ColumnStats:
    """A ``ColumnStats`` from a record decoded with ``return_record_name=True`` (``record_type`` 3:
    column_stats, 6: partition_stats).

    Raises:
        MetadataTableError: the record is not a record of ``record_type``.
    """
    cs = rec.get("ColumnStatsMetadata")
    if isinstance(cs, tuple):
        cs = cs[1]
    if int(rec.get("type") or 0) != record_type or not isinstance(cs, Mapping):
        part = PARTITION_STATS_PARTITION if record_type == TYPE_PARTITION_STATS else COLUMN_STATS_PARTITION
        raise MetadataTableError(f"{where}: record {key!r} of type {rec.get('type')} in {part}, which holds "
                                 f"records of type {record_type} only. {LIST_THROUGH_STORAGE}")

    def unwrap(v: Any) -> Optional[tuple[str, Any]]:
        if v is None:
            return None
        name, body = v if isinstance(v, tuple) else ("", v)
        short = name.rsplit(".", 1)[-1]
        if short == "ArrayWrapper":
            return None  # Hudi 1.1 array statistics: not a range hoodie compares
        return short, body["value"]

    vt = cs.get("valueType")
    if isinstance(vt, tuple):
        vt = vt[1]
    return ColumnStats(
        str(cs.get("fileName") or ""), str(cs.get("columnName") or ""), unwrap(cs.get("minValue")),
        unwrap(cs.get("maxValue")), int(cs.get("valueCount") or 0), int(cs.get("nullCount") or 0),
        int(cs.get("totalSize") or 0), int(cs.get("totalUncompressedSize") or 0), bool(cs.get("isDeleted")),
        bool(cs.get("isTightBound")), None if vt is None else (int(vt["typeOrdinal"]), vt.get("additionalInfo")),
        str(cs.get("fileName") or "") if record_type == TYPE_PARTITION_STATS else "", record_type)


class StatsDecoder:
    """Decodes column-stats values written with one schema (keeping the union branches' names)."""

    def __init__(self, schema_json: str, where: str, record_type: int = TYPE_COLUMN_STATS) -> None:
        self.where = where
        self.record_type = record_type
        try:
            self._schema = fastavro.parse_schema(json.loads(schema_json))
        except Exception as e:  # json / fastavro raise assorted types on a damaged schema
            raise MetadataTableError(f"{where}: unreadable metadata record schema ({e}). {LIST_THROUGH_STORAGE}") from None

    def decode(self, key: bytes, value: bytes) -> ColumnStats:
        """One record (its key is the HFile cell row)."""
        k = key.decode("utf-8", errors="replace")
        try:
            rec = fastavro.schemaless_reader(io.BytesIO(value), self._schema, None, return_record_name=True)
        except Exception as e:  # malformed datums surface as assorted decoding errors
            raise MetadataTableError(f"{self.where}: undecodable column-stats record {k!r} ({e}). "
                                     f"{LIST_THROUGH_STORAGE}") from None
        return decode_column_stats(k, rec, self.where, self.record_type)


# -- encoding -------------------------------------------------------------------------------------------
def encode_stats_value(stats: ColumnStats, schema: Any, version: int,
                       meta_fields: Optional[Mapping[str, Any]] = None) -> bytes:
    """The Avro value of one column-stats record in the parsed ``schema`` of table ``version``
    (``meta_fields``: the 1.x ``_hoodie_*`` fields, null unless given; Java's base HFiles set
    ``_hoodie_file_name``)."""
    buf = io.BytesIO()
    datum: dict[str, Any] = {
        "key": "", "type": stats.record_type, "filesystemMetadata": None, "BloomFilterMetadata": None,
        "ColumnStatsMetadata": stats.avro(version), "recordIndexMetadata": None, **(meta_fields or {})}
    fastavro.schemaless_writer(buf, schema, datum)
    return buf.getvalue()


# -- computing from a Parquet footer ---------------------------------------------------------------
def _minimal_twos_complement(n: int) -> bytes:
    """``BigInteger.toByteArray``: the shortest big-endian two's complement."""
    length = max(1, (n + (n < 0)).bit_length() // 8 + 1)
    return n.to_bytes(length, "big", signed=True)


def _decimal_unscaled(raw: Any) -> int:
    if isinstance(raw, (bytes, bytearray)):
        return int.from_bytes(raw, "big", signed=True)
    return int(raw)  # int32/int64-backed decimals


def column_kind(pq_column: Any) -> Optional[tuple[str, Optional[str]]]:
    """(kind, extra) of a Parquet leaf column hoodie indexes, or None: kinds ``string``, ``boolean``,
    ``int``, ``long``, ``float``, ``double``, ``date``, ``ts_millis``, ``ts_micros``, ``decimal``
    (extra ``"precision,scale"``)."""
    phys = pq_column.physical_type
    logical = str(pq_column.logical_type)
    if logical.startswith("Decimal"):
        return "decimal", f"{pq_column.precision},{pq_column.scale}"
    if logical == "String" or (phys == "BYTE_ARRAY" and str(pq_column.converted_type) == "UTF8"):
        return "string", None
    if logical == "Date":
        return "date", None
    if logical.startswith("Timestamp"):
        if "milliseconds" in logical:
            return "ts_millis", None
        if "microseconds" in logical:
            return "ts_micros", None
        return None
    if logical not in ("None", "") and not logical.startswith("Int"):
        return None
    return {"BOOLEAN": ("boolean", None), "INT32": ("int", None), "INT64": ("long", None),
            "FLOAT": ("float", None), "DOUBLE": ("double", None)}.get(phys)


def wrap_value(kind: str, extra: Optional[str], raw: Any, version: int) -> tuple[str, Any]:
    """A footer's physical value (``Statistics.min_raw``) as the (wrapper, value) Java writes."""
    if kind == "string":
        return "StringWrapper", raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else str(raw)
    if kind == "boolean":
        return "BooleanWrapper", bool(raw)
    if kind == "int":
        return "IntWrapper", int(raw)
    if kind in ("long", "ts_millis", "ts_micros"):
        return "LongWrapper", int(raw)
    if kind == "float":
        return "FloatWrapper", float(raw)
    if kind == "double":
        return "DoubleWrapper", float(raw)
    if kind == "date":
        return ("IntWrapper" if version >= 9 else "DateWrapper"), int(raw)
    if kind == "decimal":
        unscaled = _decimal_unscaled(raw)
        if version >= 9:
            return "BytesWrapper", _minimal_twos_complement(unscaled)
        scale = int((extra or "0,0").split(",")[1])
        # Hudi <= 1.0 upcasts to the DecimalWrapper's (30, 15); fastavro encodes a Decimal by that scale.
        return "DecimalWrapper", decimal.Decimal(unscaled).scaleb(-scale)
    raise ValueError(f"column kind {kind}")


_VALUE_TYPES = {"string": VT_STRING, "boolean": VT_BOOLEAN, "int": VT_INT, "long": VT_LONG, "float": VT_FLOAT,
                "double": VT_DOUBLE, "date": VT_DATE, "ts_millis": VT_TIMESTAMP_MILLIS,
                "ts_micros": VT_TIMESTAMP_MICROS, "decimal": VT_DECIMAL}


def _parquet_min_max(stats: Any) -> tuple[Any, Any]:
    # min_raw / max_raw: the physical values (bytes for byte arrays, ints for dates and timestamps).
    return stats.min_raw, stats.max_raw


def footer_column_stats(metadata: Any, file_name: str, partition: str, columns: Optional[Sequence[str]],
                        version: int) -> list[ColumnStats]:
    """The column statistics of a Parquet base file from its footer (``pyarrow`` ``FileMetaData``),
    for ``columns`` (None: every top-level column hoodie can index), in the footer's column order."""
    schema = metadata.schema
    leaves: dict[str, tuple[int, tuple[str, Optional[str]]]] = {}
    for i in range(len(schema)):
        col = schema.column(i)
        if "." in col.path:
            continue  # nested: Hudi indexes top-level columns
        kind = column_kind(col)
        if kind is not None:
            leaves[col.path] = (i, kind)
    wanted = list(leaves) if columns is None else [c for c in columns if c in leaves]
    out: list[ColumnStats] = []
    for name in wanted:
        idx, (kind, extra) = leaves[name]
        mn = mx = None
        bounded = True
        values = nulls = size = usize = 0
        for rg in range(metadata.num_row_groups):
            cc = metadata.row_group(rg).column(idx)
            values += cc.num_values
            size += cc.total_compressed_size
            usize += cc.total_uncompressed_size
            st = cc.statistics
            if st is None:
                bounded = False
                continue
            nulls += st.null_count or 0
            if st.has_min_max:
                a, b = _parquet_min_max(st)
                key_a, key_b = _sort_key(kind, a), _sort_key(kind, b)
                if mn is None or key_a < mn[0]:
                    mn = (key_a, a)
                if mx is None or key_b > mx[0]:
                    mx = (key_b, b)
            elif (st.null_count or 0) < cc.num_values:
                bounded = False  # values without bounds
        lo = wrap_value(kind, extra, mn[1], version) if bounded and mn is not None else None
        hi = wrap_value(kind, extra, mx[1], version) if bounded and mx is not None else None
        if kind in ("float", "double") and lo is not None and hi is not None:
            # parquet-mr reads a +0.0 min as -0.0 and a -0.0 max as +0.0 (PARQUET-1222), so Java's
            # statistics hold those; a NaN bound makes parquet-mr drop the statistics.
            if lo[1] != lo[1] or hi[1] != hi[1]:
                lo = hi = None
            else:
                lo = (lo[0], -0.0) if lo[1] == 0.0 else lo
                hi = (hi[0], 0.0) if hi[1] == 0.0 else hi
        vt = (_VALUE_TYPES[kind], extra if kind == "decimal" else None) if version >= 9 else None
        out.append(ColumnStats(file_name, name, lo, hi, values, nulls, size, usize, value_type=vt,
                               partition=partition))
    return out


def _sort_key(kind: str, raw: Any) -> Any:
    if kind == "decimal":
        return _decimal_unscaled(raw)
    return raw  # bytes compare unsigned, as Parquet orders UTF-8 strings


def columns_to_index(field_names: Sequence[str], props: Mapping[str, str], options: Mapping[str, Any],
                     version: int) -> Optional[list[str]]:
    """The columns Hudi indexes: ``hoodie.metadata.index.column.stats.column.list`` when set (comma
    separated); else, on 1.x, the three indexed meta columns and the first
    ``hoodie.metadata.index.column.stats.max.columns.to.index`` (32) data columns; on 0.14/0.15 (v6),
    every column. Returns names in that order (None never: an explicit list)."""
    given = str(options.get("hoodie.metadata.index.column.stats.column.list")
                or props.get("hoodie.metadata.index.column.stats.column.list") or "").strip()
    if given:
        return [c.strip() for c in given.split(",") if c.strip()]
    if version < 8:
        return list(field_names)
    limit = int(options.get("hoodie.metadata.index.column.stats.max.columns.to.index") or DEFAULT_MAX_COLUMNS)
    data = [f for f in field_names if not f.startswith("_hoodie_")][:limit]
    meta = [f for f in META_COLUMNS_TO_INDEX if f in field_names]
    return meta + data


def _arrow_kind(t: Any) -> Optional[tuple[str, Optional[str]]]:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string", None
    if pa.types.is_boolean(t):
        return "boolean", None
    if pa.types.is_int32(t) or pa.types.is_int16(t) or pa.types.is_int8(t):
        return "int", None
    if pa.types.is_int64(t):
        return "long", None
    if pa.types.is_float32(t):
        return "float", None
    if pa.types.is_float64(t):
        return "double", None
    if pa.types.is_date32(t):
        return "date", None
    if pa.types.is_timestamp(t):
        return {"ms": ("ts_millis", None), "us": ("ts_micros", None)}.get(t.unit)
    if pa.types.is_decimal(t):
        return "decimal", f"{t.precision},{t.scale}"
    return None


def records_column_stats(table: Any, file_name: str, partition: str, columns: Optional[Sequence[str]],
                         version: int) -> list[ColumnStats]:
    """Column statistics of records (a ``pyarrow.Table``, e.g. the data blocks a commit appended to a
    log file), as Java's append handle records them: min, max, null count, value count = records,
    sizes 0."""
    names = [f.name for f in table.schema]
    wanted = names if columns is None else [c for c in columns if c in names]
    out: list[ColumnStats] = []
    for name in wanted:
        col = table.column(name)
        kind_extra = _arrow_kind(col.type)
        if kind_extra is None:
            continue
        kind, extra = kind_extra
        nulls = col.null_count
        lo = hi = None
        if len(col) > nulls:
            if kind in ("ts_millis", "ts_micros"):
                col = col.cast(pa.int64())
            elif kind == "date":
                col = col.cast(pa.int32())
            mm = pc.min_max(col)
            a, b = mm["min"].as_py(), mm["max"].as_py()
            if kind == "decimal":
                scale = int(extra.split(",")[1])
                a, b = int(a.scaleb(scale)), int(b.scaleb(scale))
            elif kind == "string":
                # Java compares strings as UTF-8 bytes (Parquet's order), Arrow by code point: the same.
                a, b = a.encode("utf-8"), b.encode("utf-8")
            if kind in ("float", "double") and (a != a or b != b):
                a = b = None
            if a is not None:
                lo, hi = wrap_value(kind, extra, a, version), wrap_value(kind, extra, b, version)
        vt = (_VALUE_TYPES[kind], extra if kind == "decimal" else None) if version >= 9 else None
        out.append(ColumnStats(file_name, name, lo, hi, len(col), nulls, 0, 0, value_type=vt, partition=partition))
    return out


def stats_hfile(stats: Iterable[ColumnStats], schema_json: str, version: int) -> bytes:
    """A whole HFile of column-stats records (sorted by key; one per key, the last given wins)."""
    parsed = fastavro.parse_schema(json.loads(schema_json))
    by_key = {s.key: s for s in stats}
    w = HFileWriter(schema=schema_json)
    for k in sorted(by_key, key=lambda k: k.encode("utf-8")):
        w.append(k, encode_stats_value(by_key[k], parsed, version))
    return w.getvalue()


def partition_range(partition: str, column: str, files: Sequence[ColumnStats]) -> ColumnStats:
    """One partition's statistics of ``column`` from its files' (``FileFormatUtils.getColumnRangeInPartition``):
    min of the mins, max of the maxes, sums of the counts and sizes; a ``partition_stats`` record (type
    6, ``isTightBound`` true, ``fileName`` the partition path). Unlike Java, a file with values but no
    bounds (or bounds that do not compare) leaves the partition's range unknown rather than too narrow."""
    lo = hi = None
    unknown = False
    vt = None
    for f in files:
        vt = vt or f.value_type
        if has_unbounded_values(f):
            unknown = True
            continue
        try:
            if f.min_value is not None and (lo is None or f.python_min() < _unwrap(lo, vt)):
                lo = f.min_value
            if f.max_value is not None and (hi is None or f.python_max() > _unwrap(hi, vt)):
                hi = f.max_value
        except TypeError:
            unknown = True
    if unknown:
        lo = hi = None
    return ColumnStats(partition, column, lo, hi, sum(f.value_count for f in files), sum(f.null_count for f in files),
                       sum(f.total_size for f in files), sum(f.total_uncompressed_size for f in files), False, True,
                       vt, partition, TYPE_PARTITION_STATS)


def deleted_partition_stats(partition: str, column: str) -> ColumnStats:
    """The tombstone of a partition's column (a partition that lost every file)."""
    return ColumnStats(partition, column, None, None, 0, 0, 0, 0, is_deleted=True, partition=partition,
                       record_type=TYPE_PARTITION_STATS)


def group_by_file_group(stats: Iterable[ColumnStats], count: int) -> dict[str, list[ColumnStats]]:
    """file id -> the records of that column_stats file group."""
    out: dict[str, list[ColumnStats]] = {}
    for s in stats:
        out.setdefault(file_group_id(file_group_index(s.key, count)), []).append(s)
    return out


__all__ = [
    "COLUMN_STATS_PARTITION", "PARTITION_STATS_PARTITION", "TYPE_PARTITION_STATS", "partition_range",
    "partition_stats_key", "deleted_partition_stats", "ColumnStats", "has_unbounded_values", "merge_stats", "StatsDecoder", "TYPE_COLUMN_STATS", "column_stats_key",
    "columns_to_index", "decode_column_stats", "deleted_stats", "encode_stats_value", "file_group_id",
    "file_group_index", "file_group_indexes", "footer_column_stats", "group_by_file_group", "java_string_hash", "xxhash64",
]
