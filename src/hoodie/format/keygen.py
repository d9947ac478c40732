"""Key generators: record keys and partition paths as Hudi 0.14/0.15 computes them, over pyarrow.

Semantics follow the Avro key generators that the Spark datasource uses on its default
(non-row-writer) path: ``SimpleAvroKeyGenerator``, ``ComplexAvroKeyGenerator``,
``NonpartitionedAvroKeyGenerator``, ``TimestampBasedAvroKeyGenerator``,
``CustomAvroKeyGenerator`` and ``GlobalAvroDeleteKeyGenerator``, with the value rendering of
``HoodieAvroUtils.getNestedFieldValAsString`` (Java ``toString`` of the Avro value) and the
rules of ``KeyGenUtils`` and ``PartitionPathEncodeUtils``.

Everything is computed column-wise with ``pyarrow.compute``. Where Java formatting has no Arrow
kernel (``Double.toString``, Joda date parsing, Hive path escaping) the Python code runs once
per *distinct* value (dictionary encoding) rather than once per row.
"""

from __future__ import annotations

import abc
import datetime as _dt
import math
import re
import zoneinfo
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hoodie.errors import HoodieError

# ---------------------------------------------------------------------------------------------
# Constants (KeyGenerator, KeyGenUtils, PartitionPathEncodeUtils)
# ---------------------------------------------------------------------------------------------

DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
RECORD_KEY_PARTS_SEPARATOR = ","
COLUMN_VALUE_SEPARATOR = ":"
PARTITION_PATH_SEPARATOR = "/"

# Write configs (DataSourceWriteOptions / KeyGeneratorOptions / HoodieWriteConfig).
RECORDKEY_FIELD = "hoodie.datasource.write.recordkey.field"
PARTITIONPATH_FIELD = "hoodie.datasource.write.partitionpath.field"
KEYGENERATOR_CLASS = "hoodie.datasource.write.keygenerator.class"
KEYGENERATOR_TYPE = "hoodie.datasource.write.keygenerator.type"
HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_PARTITIONING = "hoodie.datasource.write.partitionpath.urlencode"
CONSISTENT_LOGICAL_TIMESTAMP = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
COMPLEX_KEYGEN_NEW_ENCODING = "hoodie.write.complex.keygen.new.encoding"
# Table configs (hoodie.properties).
TABLE_RECORDKEY_FIELDS = "hoodie.table.recordkey.fields"
TABLE_PARTITION_FIELDS = "hoodie.table.partition.fields"
TABLE_KEYGENERATOR_CLASS = "hoodie.table.keygenerator.class"
TABLE_KEYGENERATOR_TYPE = "hoodie.table.keygenerator.type"
# TimestampKeyGeneratorConfig; each also has a deprecated "hoodie.deltastreamer.keygen.timebased." alias.
TS_PREFIX = "hoodie.keygen.timebased."
_TS_OLD_PREFIX = "hoodie.deltastreamer.keygen.timebased."
TS_TYPE = TS_PREFIX + "timestamp.type"
TS_SCALAR_TIME_UNIT = TS_PREFIX + "timestamp.scalar.time.unit"
TS_INPUT_DATEFORMAT = TS_PREFIX + "input.dateformat"
TS_INPUT_DATEFORMAT_DELIMITER = TS_PREFIX + "input.dateformat.list.delimiter.regex"
TS_INPUT_TIMEZONE = TS_PREFIX + "input.timezone"
TS_OUTPUT_DATEFORMAT = TS_PREFIX + "output.dateformat"
TS_OUTPUT_TIMEZONE = TS_PREFIX + "output.timezone"
TS_TIMEZONE = TS_PREFIX + "timezone"

_PKG = "org.apache.hudi.keygen."
SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM, GLOBAL_DELETE = (
    "SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE")

# Java class (Spark and Avro variants) -> KeyGeneratorType name.
_CLASS_TO_TYPE = {
    "SimpleKeyGenerator": SIMPLE, "SimpleAvroKeyGenerator": SIMPLE,
    "ComplexKeyGenerator": COMPLEX, "ComplexAvroKeyGenerator": COMPLEX,
    "NonpartitionedKeyGenerator": NON_PARTITION, "NonpartitionedAvroKeyGenerator": NON_PARTITION,
    "TimestampBasedKeyGenerator": TIMESTAMP, "TimestampBasedAvroKeyGenerator": TIMESTAMP,
    "CustomKeyGenerator": CUSTOM, "CustomAvroKeyGenerator": CUSTOM,
    "GlobalDeleteKeyGenerator": GLOBAL_DELETE, "GlobalAvroDeleteKeyGenerator": GLOBAL_DELETE,
}
_TYPE_TO_CLASS = {
    SIMPLE: _PKG + "SimpleKeyGenerator",
    COMPLEX: _PKG + "ComplexKeyGenerator",
    NON_PARTITION: _PKG + "NonpartitionedKeyGenerator",
    TIMESTAMP: _PKG + "TimestampBasedKeyGenerator",
    CUSTOM: _PKG + "CustomKeyGenerator",
    GLOBAL_DELETE: _PKG + "GlobalDeleteKeyGenerator",
}

# PartitionPathEncodeUtils.charToEscape: ASCII controls and Hive's special characters.
_ESCAPE_CHARS = frozenset([chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
_ESCAPE_REGEX = "[" + "".join(f"\\x{ord(c):02x}" for c in sorted(_ESCAPE_CHARS)) + "]"


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def _java_bool(value: Optional[str], default: bool = False) -> bool:
    """``Boolean.parseBoolean``: only a case-insensitive "true" is true."""
    if value is None:
        return default
    return str(value).strip().lower() == "true"


def _split_fields(value: Optional[str]) -> list[str]:
    """Comma-separated field list, trimmed, empties dropped (``KeyGenUtils.getRecordKeyFields``)."""
    if value is None:
        return []
    return [f.strip() for f in str(value).split(",") if f.strip()]


def _as_array(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def _empty_strings(n: int) -> pa.Array:
    return pc.fill_null(pa.nulls(n, pa.string()), "")


def _map_distinct(arr: pa.Array, fn: Callable[[object], Optional[str]]) -> pa.Array:
    """Apply a Python function once per distinct non-null value; nulls stay null."""
    enc = pc.dictionary_encode(arr)
    mapped = pa.array([fn(v) for v in enc.dictionary.to_pylist()], pa.string())
    return pc.take(mapped, enc.indices)


def _concat(*parts: pa.Array | str, n: int) -> pa.Array:
    """Element-wise string concatenation of arrays and literal strings (nulls propagate)."""
    if not any(isinstance(p, (pa.Array, pa.ChunkedArray)) for p in parts):
        return pc.fill_null(pa.nulls(n, pa.string()), "".join(parts))  # type: ignore[arg-type]
    args = [pa.scalar(p, pa.string()) if isinstance(p, str) else p for p in parts]
    if len(args) == 1:
        return args[0]  # type: ignore[return-value]
    return pc.binary_join_element_wise(*args, "")


def _null_or_empty(values: pa.Array) -> pa.Array:
    """Boolean mask without nulls: value is null or the empty string."""
    return pc.fill_null(pc.or_kleene(pc.is_null(values), pc.equal(pc.utf8_length(values), 0)), True)


# ---------------------------------------------------------------------------------------------
# Java rendering of Avro values (HoodieAvroUtils.getNestedFieldValAsString)
# ---------------------------------------------------------------------------------------------

def _shortest_digits(v: float, float32: bool) -> tuple[str, int]:
    """Shortest round-trip decimal digits of |v| (no trailing zeros) and the decimal exponent of
    the first digit, e.g. 1234.5 -> ("12345", 3), 0.00015 -> ("15", -4)."""
    if float32:
        mant, exp = np.format_float_scientific(np.float32(abs(v)), unique=True, trim="-").split("e")
        return mant.replace(".", "").rstrip("0") or "0", int(exp)
    t = Decimal(repr(abs(v))).as_tuple()  # repr is the shortest round-trip form
    digits = "".join(map(str, t.digits))
    return digits.rstrip("0") or "0", len(digits) - 1 + int(t.exponent)


def java_double_to_string(v: float, *, float32: bool = False) -> str:
    """Java ``Double.toString`` (or ``Float.toString`` with ``float32``), shortest-digit form.

    Decimal notation for 1e-3 <= |v| < 1e7 with at least one fraction digit (``1.0``), else
    computerized scientific notation (``1.0E7``, ``1.5E-4``).
    """
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    sign = "-" if v < 0 else ""
    digits, e = _shortest_digits(v, float32)
    mag = abs(float(np.float32(v))) if float32 else abs(v)
    if 1e-3 <= mag < 1e7:
        if e >= 0:
            int_part = (digits[: e + 1]).ljust(e + 1, "0")
            frac = digits[e + 1:] or "0"
        else:
            int_part = "0"
            frac = "0" * (-e - 1) + digits
        return f"{sign}{int_part}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


def java_strings(
    values: pa.Array | pa.ChunkedArray,
    *,
    consistent_logical_timestamp: bool = False,
    jvm_timezone: str = "UTC",
    what: str = "value",
) -> pa.Array:
    """Render a column the way Hudi's key generators turn an Avro field value into a string.

    * strings as they are; integers in decimal; booleans ``true``/``false``;
    * doubles/floats via ``Double.toString``/``Float.toString`` (``1.0``, ``1.0E7``);
    * decimals via ``BigDecimal.toString`` (Arrow's decimal rendering is the same);
    * dates (Avro ``date``) as ``yyyy-MM-dd`` (``LocalDate.toString``);
    * timestamps (Avro ``timestamp-micros``) as the raw epoch-microsecond number, unless
      ``consistent_logical_timestamp`` is set, then as ``java.sql.Timestamp.toString`` of the
      millisecond value in ``jvm_timezone``; zone-less timestamps (Avro ``local-timestamp``)
      stay raw numbers in both cases, as Hudi only converts the zoned logical types;
    * times (Avro ``time-millis``/``time-micros``) as raw numbers.

    Nulls stay null. Binary and nested values raise ValueError: Hudi renders them as Java
    object descriptions, which are never usable keys.
    """
    arr = _as_array(values)
    t = arr.type
    if pa.types.is_dictionary(t):
        rendered = java_strings(arr.dictionary, consistent_logical_timestamp=consistent_logical_timestamp,
                                jvm_timezone=jvm_timezone, what=what)
        return pc.take(rendered, arr.indices)
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pc.cast(arr, pa.string())
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_decimal(t):
        return pc.cast(arr, pa.string())
    if pa.types.is_floating(t):
        f32 = not pa.types.is_float64(t)
        return _map_distinct(arr, lambda v: java_double_to_string(v, float32=f32))
    if pa.types.is_date(t):
        return pc.cast(pc.cast(arr, pa.date32()), pa.string())
    if pa.types.is_timestamp(t):
        micros = _timestamp_micros(arr)
        if consistent_logical_timestamp and t.tz is not None:
            return _sql_timestamp_strings(pc.divide(micros, 1000), jvm_timezone)
        return pc.cast(micros, pa.string())
    if pa.types.is_time(t):
        if t.unit == "ns":
            return pc.cast(pc.divide(pc.cast(arr, pa.int64()), 1000), pa.string())
        return pc.cast(pc.cast(arr, pa.int64() if t.bit_width == 64 else pa.int32()), pa.string())
    raise ValueError(
        f"{what} has Arrow type {t}, which cannot be a Hudi key: Hudi would render it as a Java object "
        f"description (binary, nested and duration values are not supported as record key or partition fields)"
    )


def _timestamp_micros(arr: pa.Array) -> pa.Array:
    """Epoch microseconds of a timestamp array as int64 (what Spark stores in Avro)."""
    t = arr.type
    if t.unit == "us":
        return pc.cast(arr, pa.int64())
    if t.unit == "ns":
        return pc.divide(pc.cast(arr, pa.int64()), 1000)  # truncation like Spark's conversion
    factor = {"s": 1_000_000, "ms": 1000}[t.unit]
    return pc.multiply(pc.cast(arr, pa.int64()), factor)


def _sql_timestamp_strings(millis: pa.Array, tz: str) -> pa.Array:
    """``java.sql.Timestamp.toString``: ``yyyy-mm-dd hh:mm:ss.f`` with trailing fraction zeros
    dropped (``.0`` when there is no fraction), in the JVM default zone."""
    sec = pc.cast(pc.floor(pc.divide(pc.cast(millis, pa.float64()), 1000.0)), pa.int64())
    frac = pc.subtract(millis, pc.multiply(sec, 1000))
    ts = pc.cast(sec, pa.timestamp("s", tz=_arrow_zone(tz, "jvm timezone")))
    base = pc.strftime(ts, "%Y-%m-%d %H:%M:%S")
    f = pc.utf8_rtrim(pc.utf8_lpad(pc.cast(frac, pa.string()), 3, "0"), "0")
    f = pc.if_else(pc.equal(pc.utf8_length(f), 0), "0", f)
    return _concat(base, ".", f, n=len(millis))


# ---------------------------------------------------------------------------------------------
# Hive path escaping (PartitionPathEncodeUtils)
# ---------------------------------------------------------------------------------------------

def escape_path_name(value: str) -> str:
    """``PartitionPathEncodeUtils.escapePathName``: ``%XX`` (upper-case hex) for controls and
    ``"#%'*/:=?\\{[]^`` and DEL; an empty value becomes ``__HIVE_DEFAULT_PARTITION__``."""
    if not value:
        return DEFAULT_PARTITION_PATH
    return "".join(f"%{ord(c):02X}" if c in _ESCAPE_CHARS else c for c in value)


def unescape_path_name(value: str) -> str:
    """``PartitionPathEncodeUtils.unescapePathName``: decode ``%XX`` sequences.

    Like the Java code, a ``%`` is decoded when two more characters follow it and they parse
    as a non-negative hex int (``Integer.parseInt(s, 16)``, so ``%+A`` decodes too); anything
    else is kept literally.
    """
    out: list[str] = []
    i = 0
    n = len(value)
    while i < n:
        c = value[i]
        if c == "%" and i + 2 < n:
            code = _java_parse_hex(value[i + 1:i + 3])
            if code is not None and code >= 0:
                out.append(chr(code))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _java_parse_hex(s: str) -> Optional[int]:
    """``Integer.parseInt(s, 16)`` (optional sign, hex digits only) or None."""
    if not re.fullmatch(r"[+-]?[0-9A-Fa-f]+", s):
        return None
    return int(s, 16)


def _escape_path_array(values: pa.Array) -> pa.Array:
    needs = pc.fill_null(pc.match_substring_regex(values, _ESCAPE_REGEX), False)
    if not pc.any(needs).as_py():
        return values
    return _map_distinct(values, escape_path_name)


# ---------------------------------------------------------------------------------------------
# Column resolution
# ---------------------------------------------------------------------------------------------

def _column(table: pa.Table | pa.RecordBatch, name: str, role: str) -> pa.Array:
    """The column for a (possibly dotted, nested) field name, or a ValueError listing the columns."""
    names = table.schema.names
    if name in names:
        return _as_array(table.column(name))
    parts = name.split(".")
    if len(parts) > 1 and parts[0] in names:
        arr = _as_array(table.column(parts[0]))
        for i, part in enumerate(parts[1:], start=1):
            if not pa.types.is_struct(arr.type) or arr.type.get_field_index(part) < 0:
                break
            arr = pc.struct_field(arr, [arr.type.get_field_index(part)])
            if i == len(parts) - 1:
                return arr
    raise ValueError(
        f"{role} field {name!r} is not a column of the table; available columns: {', '.join(names)}. "
        f"Fix the field list ({RECORDKEY_FIELD if role == 'record key' else PARTITIONPATH_FIELD}) "
        f"or add the column"
    )


# ---------------------------------------------------------------------------------------------
# Key generators
# ---------------------------------------------------------------------------------------------

class KeyGenerator(abc.ABC):
    """Computes Hudi's ``_hoodie_record_key`` and ``_hoodie_partition_path`` for a table of rows.

    Attributes mirror the Java configuration: ``record_key_fields``, ``partition_path_fields``
    (names only), ``hive_style`` (``field=value`` segments), ``url_encode`` (Hive path escaping of
    values) and ``java_class_name`` (what goes into ``hoodie.table.keygenerator.class``).
    """

    JAVA_CLASS: str = ""

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_path_fields: Sequence[str],
        hive_style: bool = False,
        url_encode: bool = False,
        consistent_logical_timestamp: bool = False,
        jvm_timezone: str = "UTC",
    ) -> None:
        self.record_key_fields: list[str] = list(record_key_fields)
        self.partition_path_fields: list[str] = list(partition_path_fields)
        self.hive_style = bool(hive_style)
        self.url_encode = bool(url_encode)
        self.consistent_logical_timestamp = bool(consistent_logical_timestamp)
        self.jvm_timezone = jvm_timezone
        self.java_class_name: str = self.JAVA_CLASS

    @abc.abstractmethod
    def record_keys(self, table: pa.Table) -> pa.Array:
        """The record key of every row (string array, no nulls)."""

    @abc.abstractmethod
    def partition_paths(self, table: pa.Table) -> pa.Array:
        """The relative partition path of every row (string array, no nulls; "" if unpartitioned)."""

    def keys(self, table: pa.Table) -> tuple[pa.Array, pa.Array]:
        """``(record_keys, partition_paths)`` of ``table``."""
        return self.record_keys(table), self.partition_paths(table)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(record_key_fields={self.record_key_fields!r}, "
                f"partition_path_fields={self.partition_path_fields!r}, hive_style={self.hive_style}, "
                f"url_encode={self.url_encode})")

    # -- shared building blocks ------------------------------------------------------------

    def _strings(self, table: pa.Table, name: str, role: str) -> pa.Array:
        return java_strings(_column(table, name, role),
                            consistent_logical_timestamp=self.consistent_logical_timestamp,
                            jvm_timezone=self.jvm_timezone, what=f"{role} field {name!r}")

    def _simple_record_key(self, table: pa.Table, name: str) -> pa.Array:
        """``KeyGenUtils.getRecordKey(record, field)``: the value; null or empty is an error."""
        values = self._strings(table, name, "record key")
        bad = _null_or_empty(values)
        n_bad = pc.sum(bad).as_py() or 0
        if n_bad:
            raise ValueError(
                f"record key field {name!r} is null or empty in {n_bad} of {len(values)} rows; Hudi rejects "
                f"such rows (HoodieKeyException: recordKey value for field {name!r} cannot be null or empty). "
                f"Fill or filter those rows, or choose a record key that is always set"
            )
        return values

    def _complex_record_key(self, table: pa.Table, names: Sequence[str]) -> pa.Array:
        """``KeyGenUtils.getRecordKey(record, fields)``: ``f1:v1,f2:v2``; null -> ``__null__``,
        empty -> ``__empty__``; a row whose parts are all null/empty is an error, and so is a
        value that would make two records share a key (:func:`check_composite_key_values`)."""
        n = table.num_rows
        parts: list[pa.Array | str] = []
        all_bad: Optional[pa.Array] = None
        for i, name in enumerate(names):
            values = self._strings(table, name, "record key")
            if len(names) > 1:
                check_composite_key_values(values, name, names)
            is_null = pc.is_null(values)
            is_empty = pc.fill_null(pc.equal(pc.utf8_length(values), 0), False)
            rendered = pc.if_else(is_null, NULL_RECORDKEY_PLACEHOLDER,
                                  pc.if_else(is_empty, EMPTY_RECORDKEY_PLACEHOLDER, values))
            bad = pc.or_(is_null, is_empty)
            all_bad = bad if all_bad is None else pc.and_(all_bad, bad)
            if i:
                parts.append(RECORD_KEY_PARTS_SEPARATOR)
            parts.extend([name + COLUMN_VALUE_SEPARATOR, rendered])
        n_bad = (pc.sum(all_bad).as_py() or 0) if all_bad is not None else 0
        if n_bad:
            raise ValueError(
                f"record key fields {list(names)} are all null or empty in {n_bad} of {n} rows; Hudi rejects "
                f"such rows (HoodieKeyException: recordKey values cannot be entirely null or empty)"
            )
        return _concat(*parts, n=n)

    def _simple_partition(self, table: pa.Table, name: str) -> pa.Array:
        """One partition path segment: value, or ``__HIVE_DEFAULT_PARTITION__`` when null/empty;
        escaped if url-encoding; prefixed ``field=`` if hive style."""
        values = self._strings(table, name, "partition path")
        default = _null_or_empty(values)
        if self.url_encode:
            values = _escape_path_array(values)
        seg = pc.if_else(default, DEFAULT_PARTITION_PATH, values)
        if self.hive_style:
            seg = _concat(name + "=", seg, n=len(seg))
        return seg

    def _joined_partitions(self, segments: Sequence[pa.Array], n: int) -> pa.Array:
        if not segments:
            return _empty_strings(n)
        if len(segments) == 1:
            return segments[0]
        return pc.binary_join_element_wise(*segments, PARTITION_PATH_SEPARATOR)


def check_composite_key_values(values: pa.Array, name: str, names: Sequence[str]) -> None:
    """Refuse record key values that make a composite key ambiguous (ValueError naming the field,
    the value and the fix).

    Java's encoding ``f1:v1,f2:v2`` is kept (Hudi readers and writers share it), so a ``,`` inside
    a value lets two different records encode to one key: ``f1='x,f2:y', f2='z'`` and
    ``f1='x', f2='y,f2:z'`` both give ``f1:x,f2:y,f2:z``, and the later write would silently
    replace the other record. The literal values ``__null__``/``__empty__`` are what a null or
    empty value encodes to, so they collide with those. ``:`` is unambiguous (fields come in a
    fixed order and Java splits each part at its first ``:``; timestamps contain it) and is kept.
    """
    comma = pc.fill_null(pc.match_substring(values, RECORD_KEY_PARTS_SEPARATOR), False)
    placeholder = pc.fill_null(pc.is_in(values, value_set=pa.array(
        [NULL_RECORDKEY_PLACEHOLDER, EMPTY_RECORDKEY_PLACEHOLDER])), False)
    bad = pc.or_(comma, placeholder)
    n_bad = pc.sum(bad).as_py() or 0
    if not n_bad:
        return
    row = int(pc.index(bad, True).as_py())
    value = values[row].as_py()
    a, b = names[0], names[1]
    if "," in value:
        why = (f"which contains ','. A record key of several fields is encoded as "
               f"{':…,'.join(names)}:… (Java Hudi's format), so a ',' inside a value lets two different "
               f"records share a key ({a}='x,{b}:y', {b}='z' and {a}='x', {b}='y,{b}:z' both become "
               f"'{a}:x,{b}:y,{b}:z') and one write would silently replace the other record")
        fix = f"replace the ',' in {name!r} before writing (e.g. regexp_replace({name}, ',', ';'))"
    else:
        what = "null" if value == NULL_RECORDKEY_PLACEHOLDER else "empty"
        why = (f"which is how a {what} value is encoded in a record key of several fields, so the record "
               f"would share its key with one whose {name!r} is {what}")
        fix = f"map {value!r} in {name!r} to another value before writing"
    raise ValueError(
        f"record key field {name!r} has the value {value!r} (row {row}; {n_bad} of {len(values)} rows "
        f"are affected), {why}. Fix: {fix}, or use a single record key field (e.g. a hash of "
        f"{', '.join(names)})"
    )


def _require_record_keys(fields: Sequence[str], cls: str) -> None:
    if not fields:
        raise ValueError(
            f"{cls} needs a record key field: set {RECORDKEY_FIELD} (or {TABLE_RECORDKEY_FIELDS} in "
            f"hoodie.properties); auto-generated record keys are not supported"
        )


class SimpleKeyGenerator(KeyGenerator):
    """One record key field (its value) and one partition field (its value, or the default partition)."""

    JAVA_CLASS = _TYPE_TO_CLASS[SIMPLE]

    def __init__(self, record_key_field: str, partition_path_field: str, hive_style: bool = False,
                 url_encode: bool = False, consistent_logical_timestamp: bool = False,
                 jvm_timezone: str = "UTC") -> None:
        rk = _split_fields(record_key_field)
        _require_record_keys(rk, "SimpleKeyGenerator")
        if len(rk) != 1:
            raise ValueError(f"SimpleKeyGenerator takes exactly one record key field, got {rk}; "
                             f"use {_TYPE_TO_CLASS[COMPLEX]} for several")
        pp = _split_fields(partition_path_field)
        if len(pp) != 1:
            raise ValueError(
                f"SimpleKeyGenerator takes exactly one partition path field, got {pp or 'none'}; use "
                f"{_TYPE_TO_CLASS[COMPLEX]} for several, or {_TYPE_TO_CLASS[NON_PARTITION]} for a "
                f"non-partitioned table"
            )
        super().__init__(rk, pp, hive_style, url_encode, consistent_logical_timestamp, jvm_timezone)

    def record_keys(self, table: pa.Table) -> pa.Array:
        return self._simple_record_key(table, self.record_key_fields[0])

    def partition_paths(self, table: pa.Table) -> pa.Array:
        return self._simple_partition(table, self.partition_path_fields[0])


class ComplexKeyGenerator(KeyGenerator):
    """Record key ``f1:v1,f2:v2``; partition path ``v1/v2`` (or ``f1=v1/f2=v2`` hive style).

    With a single record key field the key is still ``field:value`` (Hudi 0.14.0 and, by
    default, 0.14.2+/0.15.1+); ``encode_single_key_field_name=False`` gives the bare value as
    0.14.1 and 0.15.0 wrote it (``hoodie.write.complex.keygen.new.encoding=true``).
    """

    JAVA_CLASS = _TYPE_TO_CLASS[COMPLEX]

    def __init__(self, record_key_fields: Sequence[str] | str, partition_path_fields: Sequence[str] | str,
                 hive_style: bool = False, url_encode: bool = False,
                 consistent_logical_timestamp: bool = False, jvm_timezone: str = "UTC",
                 encode_single_key_field_name: bool = True) -> None:
        rk = _split_fields(record_key_fields) if isinstance(record_key_fields, str) else list(record_key_fields)
        pp = (_split_fields(partition_path_fields) if isinstance(partition_path_fields, str)
              else list(partition_path_fields))
        _require_record_keys(rk, "ComplexKeyGenerator")
        super().__init__(rk, pp, hive_style, url_encode, consistent_logical_timestamp, jvm_timezone)
        self.encode_single_key_field_name = bool(encode_single_key_field_name)

    def record_keys(self, table: pa.Table) -> pa.Array:
        if len(self.record_key_fields) == 1 and not self.encode_single_key_field_name:
            return self._simple_record_key(table, self.record_key_fields[0])
        return self._complex_record_key(table, self.record_key_fields)

    def partition_paths(self, table: pa.Table) -> pa.Array:
        segs = [self._simple_partition(table, f) for f in self.partition_path_fields]
        return self._joined_partitions(segs, table.num_rows)


class NonpartitionedKeyGenerator(KeyGenerator):
    """Partition path ``""``; record key as Simple for one field, as Complex for several."""

    JAVA_CLASS = _TYPE_TO_CLASS[NON_PARTITION]

    def __init__(self, record_key_fields: Sequence[str] | str, consistent_logical_timestamp: bool = False,
                 jvm_timezone: str = "UTC", hive_style: bool = False, url_encode: bool = False) -> None:
        rk = _split_fields(record_key_fields) if isinstance(record_key_fields, str) else list(record_key_fields)
        _require_record_keys(rk, "NonpartitionedKeyGenerator")
        super().__init__(rk, [], hive_style, url_encode, consistent_logical_timestamp, jvm_timezone)

    def record_keys(self, table: pa.Table) -> pa.Array:
        if len(self.record_key_fields) == 1:
            return self._simple_record_key(table, self.record_key_fields[0])
        return self._complex_record_key(table, self.record_key_fields)

    def partition_paths(self, table: pa.Table) -> pa.Array:
        return _empty_strings(table.num_rows)


class GlobalDeleteKeyGenerator(NonpartitionedKeyGenerator):
    """For deletes across partitions: Complex-style record key (always ``f:v``), partition ``""``."""

    JAVA_CLASS = _TYPE_TO_CLASS[GLOBAL_DELETE]

    def record_keys(self, table: pa.Table) -> pa.Array:
        return self._complex_record_key(table, self.record_key_fields)


# ---------------------------------------------------------------------------------------------
# Time zones (java.util.TimeZone ids as Joda's DateTimeZone.forTimeZone sees them)
# ---------------------------------------------------------------------------------------------

# Joda's DateTimeZone.forTimeZone conversion of the legacy three-letter java.util.TimeZone ids
# (DateTimeZone.getConvertedId); note EST/MST/HST become DST-observing zones, not fixed offsets.
_JAVA_SHORT_IDS = {
    "MET": "CET", "ECT": "Europe/Paris", "MIT": "Pacific/Apia", "HST": "Pacific/Honolulu",
    "AST": "America/Anchorage", "PST": "America/Los_Angeles", "MST": "America/Denver",
    "PNT": "America/Phoenix", "CST": "America/Chicago", "EST": "America/New_York",
    "IET": "America/Indiana/Indianapolis", "PRT": "America/Puerto_Rico", "CNT": "America/St_Johns",
    "AGT": "America/Argentina/Buenos_Aires", "BET": "America/Sao_Paulo", "ART": "Africa/Cairo",
    "CAT": "Africa/Harare", "EAT": "Africa/Addis_Ababa", "NET": "Asia/Yerevan", "PLT": "Asia/Karachi",
    "IST": "Asia/Kolkata", "BST": "Asia/Dhaka", "VST": "Asia/Ho_Chi_Minh", "CTT": "Asia/Shanghai",
    "JST": "Asia/Tokyo", "ACT": "Australia/Darwin", "AET": "Australia/Sydney",
    "SST": "Pacific/Guadalcanal", "NST": "Pacific/Auckland",
}
_OFFSET_ID = re.compile(r"^(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def _arrow_zone(zone_id: str, key: str) -> str:
    """A Java time zone id as an Arrow/IANA zone string: ``UTC``, ``+08:00`` or ``Area/City``.

    Java maps an unknown id silently to GMT; here it is an error naming the config key.
    """
    z = zone_id.strip()
    if z.upper() in ("UTC", "GMT", "UT", "Z", "ETC/UTC", "ETC/GMT", "UCT", "ZULU"):
        return "UTC"
    if z in _JAVA_SHORT_IDS:
        return _JAVA_SHORT_IDS[z]
    m = _OFFSET_ID.match(z)
    if m:
        sign, hh, mm = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        if hh > 23 or mm > 59:
            raise ValueError(f"{key}: time zone offset {zone_id!r} is out of range")
        if hh == 0 and mm == 0:
            return "UTC"
        return f"{sign}{hh:02d}:{mm:02d}"
    try:
        zoneinfo.ZoneInfo(z)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{key}: unknown time zone {zone_id!r}; use an IANA id such as 'Asia/Shanghai', 'UTC' or "
            f"an offset such as 'GMT+08:00'"
        ) from None
    return z


def _py_zone(arrow_zone: str) -> _dt.tzinfo:
    if arrow_zone == "UTC":
        return _dt.timezone.utc
    m = re.fullmatch(r"([+-])(\d{2}):(\d{2})", arrow_zone)
    if m:
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return _dt.timezone(-delta if m.group(1) == "-" else delta)
    return zoneinfo.ZoneInfo(arrow_zone)


def _offset_zone(offset_seconds: int) -> str:
    """Joda ``DateTimeZone.forOffsetMillis``: ``UTC`` for zero, else ``+hh:mm``."""
    if offset_seconds == 0:
        return "UTC"
    sign = "-" if offset_seconds < 0 else "+"
    s = abs(offset_seconds)
    return f"{sign}{s // 3600:02d}:{(s % 3600) // 60:02d}"


# ---------------------------------------------------------------------------------------------
# Joda DateTimeFormat patterns: vectorized printing, per-distinct-value parsing
# ---------------------------------------------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PATTERN_LETTERS = set("GCYxwyDMdHhKkmsSeEazZ")
_NUMERIC_LETTERS = set("CYxwyDdHhKkmsSe")
# Earliest/latest instants Arrow's calendar kernels handle correctly (years 1..9999).
_MIN_MILLIS = -62135596800000
_MAX_MILLIS = 253402300799999


@dataclass(frozen=True)
class _Tok:
    letter: str  # "" for a literal
    count: int = 0
    text: str = ""

    def numeric(self) -> bool:
        return self.letter in _NUMERIC_LETTERS or (self.letter == "M" and self.count <= 2)


def parse_joda_pattern(pattern: str) -> list[_Tok]:
    """Tokenize a Joda ``DateTimeFormat`` pattern (letters repeat, ``'quoted'`` literals, ``''`` = ')."""
    toks: list[_Tok] = []
    lit: list[str] = []
    i, n = 0, len(pattern)

    def flush() -> None:
        if lit:
            toks.append(_Tok("", 0, "".join(lit)))
            lit.clear()

    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                lit.append("'")
                i += 2
                continue
            j = i + 1
            while j < n:
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        lit.append("'")
                        j += 2
                        continue
                    break
                lit.append(pattern[j])
                j += 1
            i = j + 1
            continue
        if ("a" <= c <= "z") or ("A" <= c <= "Z"):
            if c not in _PATTERN_LETTERS:
                raise ValueError(f"illegal pattern component {c!r} in date format {pattern!r}")
            j = i
            while j < n and pattern[j] == c:
                j += 1
            flush()
            toks.append(_Tok(c, j - i))
            i = j
            continue
        lit.append(c)
        i += 1
    flush()
    return toks


def _pad(values: pa.Array, width: int) -> pa.Array:
    s = pc.cast(values, pa.string())
    return pc.utf8_lpad(s, width, "0") if width > 1 else s


def _mod(values: pa.Array, m: int) -> pa.Array:
    return pc.subtract(values, pc.multiply(pc.divide(values, m), m))


def format_millis(millis: pa.Array, pattern: str | list[_Tok], zone: str) -> pa.Array:
    """Format epoch milliseconds with a Joda pattern in ``zone`` (an Arrow zone string), vectorized.

    Supports the letters y Y x w e E D M d H k h K m s S a G C Z (English text). ``z`` (zone
    short names) is not supported. Instants outside years 1..9999 raise ValueError.
    """
    toks = parse_joda_pattern(pattern) if isinstance(pattern, str) else pattern
    n = len(millis)
    valid = pc.drop_null(millis)
    if len(valid):
        lo, hi = pc.min(valid).as_py(), pc.max(valid).as_py()
        if lo < _MIN_MILLIS or hi > _MAX_MILLIS:
            raise ValueError(
                f"timestamp value(s) out of the supported range (years 1..9999): {lo}..{hi} ms since epoch; "
                f"check {TS_TYPE} / {TS_SCALAR_TIME_UNIT} (is the column in a different time unit?)"
            )
    ts = pc.cast(pc.cast(millis, pa.int64()), pa.timestamp("ms", tz=zone))
    cache: dict[str, pa.Array] = {}

    def comp(name: str) -> pa.Array:
        if name not in cache:
            if name == "dow":
                cache[name] = pc.day_of_week(ts, count_from_zero=True, week_start=1)
            elif name == "offset":
                local = pc.cast(pc.local_timestamp(ts), pa.int64())
                cache[name] = pc.divide(pc.subtract(local, pc.cast(ts, pa.int64())), 60_000)
            else:
                cache[name] = getattr(pc, name)(ts)
        return cache[name]

    parts: list[pa.Array | str] = []
    for t in toks:
        L, k = t.letter, t.count
        if not L:
            parts.append(t.text)
        elif L in "yYx":
            v = comp("iso_year") if L == "x" else comp("year")
            parts.append(_pad(_mod(pc.abs(v), 100), 2) if k == 2 else _pad(v, k))
        elif L == "C":
            parts.append(_pad(pc.divide(comp("year"), 100), k))
        elif L == "G":
            parts.append(pc.if_else(pc.greater(comp("year"), 0), "AD", "BC"))
        elif L == "w":
            parts.append(_pad(comp("iso_week"), k))
        elif L == "e":
            parts.append(_pad(pc.add(comp("dow"), 1), k))
        elif L == "E":
            names = pa.array(_DAYS if k >= 4 else [d[:3] for d in _DAYS])
            parts.append(pc.take(names, comp("dow")))
        elif L == "D":
            parts.append(_pad(comp("day_of_year"), k))
        elif L == "M":
            if k >= 3:
                names = pa.array(_MONTHS if k >= 4 else [m[:3] for m in _MONTHS])
                parts.append(pc.take(names, pc.subtract(comp("month"), 1)))
            else:
                parts.append(_pad(comp("month"), k))
        elif L == "d":
            parts.append(_pad(comp("day"), k))
        elif L == "H":
            parts.append(_pad(comp("hour"), k))
        elif L == "k":
            h = comp("hour")
            parts.append(_pad(pc.if_else(pc.equal(h, 0), 24, h), k))
        elif L in "hK":
            h12 = _mod(comp("hour"), 12)
            if L == "h":
                h12 = pc.if_else(pc.equal(h12, 0), 12, h12)
            parts.append(_pad(h12, k))
        elif L == "m":
            parts.append(_pad(comp("minute"), k))
        elif L == "s":
            parts.append(_pad(comp("second"), k))
        elif L == "S":
            ms = comp("millisecond")
            v = pc.divide(ms, 10 ** (3 - k)) if k <= 3 else pc.multiply(pc.cast(ms, pa.int64()), 10 ** (k - 3))
            parts.append(_pad(v, k))
        elif L == "a":
            parts.append(pc.if_else(pc.less(comp("hour"), 12), "AM", "PM"))
        elif L == "Z":
            if k >= 3:
                parts.append(zone)
            else:
                off = comp("offset")
                a = pc.abs(off)
                sign = pc.if_else(pc.less(off, 0), "-", "+")
                hh, mm = _pad(pc.divide(a, 60), 2), _pad(_mod(a, 60), 2)
                parts.append(_concat(sign, hh, ":" if k == 2 else "", mm, n=n))
        else:  # "z"
            raise ValueError("the Joda pattern letter 'z' (time zone name) is not supported in date formats")
    return _concat(*parts, n=n)


@dataclass
class _Parser:
    """One Joda input format compiled to a regex, with the group -> field mapping."""

    pattern: str
    regex: re.Pattern
    fields: list[_Tok] = field(default_factory=list)


def _compile_parser(pattern: str) -> _Parser:
    toks = parse_joda_pattern(pattern)
    rx: list[str] = []
    fields: list[_Tok] = []
    for i, t in enumerate(toks):
        nxt_numeric = i + 1 < len(toks) and toks[i + 1].letter != "" and toks[i + 1].numeric()
        L, k = t.letter, t.count
        if not L:
            rx.append(re.escape(t.text))
            continue
        fields.append(t)
        if L in "yxY":
            if k == 2:
                rx.append(r"(\d{2})" if nxt_numeric else r"([+-]?\d{1,9})")
            else:
                rx.append(rf"(\d{{1,{k}}})" if nxt_numeric else r"([+-]?\d{1,9})")
        elif L == "M" and k >= 3:
            names = sorted(_MONTHS + [m[:3] for m in _MONTHS], key=len, reverse=True)
            rx.append("(" + "|".join(names) + ")")
        elif L == "E":
            names = sorted(_DAYS + [d[:3] for d in _DAYS], key=len, reverse=True)
            rx.append("(" + "|".join(names) + ")")
        elif L == "a":
            rx.append("(AM|PM)")
        elif L == "G":
            rx.append("(AD|BC)")
        elif L == "S":
            rx.append(rf"(\d{{1,{k}}})" if nxt_numeric else r"(\d{1,9})")
        elif L in "DC":
            rx.append(r"(\d{1,3})")
        elif L == "e":
            rx.append(r"(\d)")
        elif L == "Z":
            rx.append(r"(Z|[+-]\d{2}(?::?\d{2})?)" if k < 3 else r"([A-Za-z][A-Za-z0-9_/+\-]*)")
        elif L == "z":
            raise ValueError("the Joda pattern letter 'z' (time zone name) cannot be parsed; use Z, ZZ or ZZZ")
        else:  # d H h K k m s w
            rx.append(r"(\d{1,2})")
    return _Parser(pattern, re.compile("".join(rx), re.IGNORECASE), fields)


def _two_digit_year(yy: int) -> int:
    """Joda ``appendTwoDigitYear(now.year - 30)``: map 00..99 into [pivot-50, pivot+49]."""
    pivot = _dt.date.today().year - 30
    low = pivot - 50
    t = low % 100 if low >= 0 else 99 + ((low + 1) % 100)
    return yy + low + (100 if yy < t else 0) - t


def _parse_one(value: str, parsers: Sequence[_Parser], default_zone: str,
               input_zone: Optional[str]) -> tuple[int, str]:
    """Parse like Joda ``parseDateTime`` with ``withZone(inputZone)`` or ``withOffsetParsed()``.

    Returns ``(epoch_millis, zone)`` where zone is what the resulting DateTime carries: the input
    zone when configured, else the parsed offset/zone, else ``default_zone`` (the JVM zone).
    """
    for p in parsers:
        m = p.regex.fullmatch(value)
        if not m:
            continue
        year, month, day, doy = 1970, 1, 1, None
        hour, minute, second, frac = 0, 0, 0, 0
        half: Optional[str] = None
        h12: Optional[int] = None
        bc = False
        zone: Optional[str] = None
        for t, g in zip(p.fields, m.groups()):
            L, k = t.letter, t.count
            if L in "yxY":
                year = _two_digit_year(int(g)) if k == 2 and len(g) == 2 and g[0] not in "+-" else int(g)
            elif L == "M":
                month = int(g) if k <= 2 else next(i + 1 for i, nm in enumerate(_MONTHS)
                                                   if nm.lower().startswith(g.lower()[:3]))
            elif L == "d":
                day = int(g)
            elif L == "D":
                doy = int(g)
            elif L == "H":
                hour = int(g)
            elif L == "k":
                hour = int(g) % 24
            elif L in "hK":
                h12 = int(g) % 12
            elif L == "a":
                half = g.upper()
            elif L == "m":
                minute = int(g)
            elif L == "s":
                second = int(g)
            elif L == "S":
                frac = int(g.ljust(3, "0")[:3])
            elif L == "G":
                bc = g.upper() == "BC"
            elif L == "Z":
                if k >= 3:
                    zone = _arrow_zone(g, "parsed zone id")
                elif g.upper() == "Z":
                    zone = "UTC"
                else:
                    digits = g[1:].replace(":", "")
                    secs = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60
                    zone = _offset_zone(-secs if g[0] == "-" else secs)
            # C, w, e, E carry no information Joda would need here (the date fields win).
        if h12 is not None:
            hour = h12 + (12 if half == "PM" else 0)
        if bc:
            year = 1 - year
        try:
            if doy is not None:
                base = _dt.datetime(year, 1, 1) + _dt.timedelta(days=doy - 1)
                if base.year != year:
                    raise ValueError(f"day of year {doy} out of range")
                local = base.replace(hour=hour, minute=minute, second=second, microsecond=frac * 1000)
            else:
                local = _dt.datetime(year, month, day, hour, minute, second, frac * 1000)
        except ValueError as e:
            raise ValueError(f"cannot parse {value!r} with date format {p.pattern!r}: {e}") from None
        calc_zone = zone or input_zone or default_zone
        tz = _py_zone(calc_zone)
        aware = local.replace(tzinfo=tz)
        # Joda rejects local times in a DST gap ("Illegal instant due to time zone offset transition").
        if aware.astimezone(_dt.timezone.utc).astimezone(tz).replace(tzinfo=None) != local:
            raise ValueError(f"{value!r} is not a valid local time in {calc_zone} (daylight saving gap)")
        millis = (aware - _EPOCH) // _dt.timedelta(milliseconds=1)
        result_zone = input_zone or zone or default_zone
        return millis, result_zone
    formats = ", ".join(repr(p.pattern) for p in parsers)
    raise ValueError(f"cannot parse partition value {value!r} with the input date format(s) {formats} "
                     f"({TS_INPUT_DATEFORMAT})")


# ---------------------------------------------------------------------------------------------
# Timestamp-based partitioning (TimestampBasedAvroKeyGenerator)
# ---------------------------------------------------------------------------------------------

TIMESTAMP_TYPES = ("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR")
_UNIT_MILLIS = {"NANOSECONDS": -1_000_000, "MICROSECONDS": -1000, "MILLISECONDS": 1, "SECONDS": 1000,
                "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}
_LONG_MAX = 2**63 - 1
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass(frozen=True)
class TimestampConfig:
    """The ``hoodie.keygen.timebased.*`` settings of a timestamp-based partition field.

    Zones are Java ids; None means "not configured", which makes Hudi fall back to the zone of
    the parsed value (DATE_STRING/MIXED) or the JVM default zone, taken as ``jvm_timezone``.
    """

    timestamp_type: str
    output_dateformat: str
    input_dateformats: tuple[str, ...] = ()
    input_timezone: Optional[str] = None
    output_timezone: Optional[str] = None
    scalar_time_unit: str = "SECONDS"
    jvm_timezone: str = "UTC"

    def __post_init__(self) -> None:
        if self.timestamp_type not in TIMESTAMP_TYPES:
            raise ValueError(f"{TS_TYPE}: unknown timestamp type {self.timestamp_type!r}; "
                             f"expected one of {', '.join(TIMESTAMP_TYPES)}")
        if not self.output_dateformat:
            raise ValueError(f"{TS_OUTPUT_DATEFORMAT} is required for timestamp-based partitioning")
        if self.timestamp_type in ("DATE_STRING", "MIXED") and not self.input_dateformats:
            raise ValueError(f"{TS_INPUT_DATEFORMAT} is required when {TS_TYPE} is {self.timestamp_type}")
        if self.timestamp_type == "SCALAR" and self.scalar_time_unit.upper() not in _UNIT_MILLIS:
            raise ValueError(f"{TS_SCALAR_TIME_UNIT}: unknown time unit {self.scalar_time_unit!r}; "
                             f"expected one of {', '.join(_UNIT_MILLIS)}")
        parse_joda_pattern(self.output_dateformat)
        for f in self.input_dateformats:
            _compile_parser(f)
        for key, z in ((TS_INPUT_TIMEZONE, self.input_timezone), (TS_OUTPUT_TIMEZONE, self.output_timezone),
                       ("jvm_timezone", self.jvm_timezone)):
            if z is not None:
                _arrow_zone(z, key)

    @classmethod
    def from_config(cls, config: Mapping[str, str], jvm_timezone: str = "UTC") -> "TimestampConfig":
        """Read the timestamp settings (new ``hoodie.keygen.timebased.*`` keys or the deprecated
        ``hoodie.deltastreamer.keygen.timebased.*`` ones). ``hoodie.keygen.timebased.timezone``,
        when present, sets both zones (``HoodieDateTimeParser``)."""

        def get(key: str) -> Optional[str]:
            for k in (key, key.replace(TS_PREFIX, _TS_OLD_PREFIX)):
                if k in config and config[k] is not None:
                    return str(config[k])
            return None

        ts_type = get(TS_TYPE)
        if ts_type is None:
            raise ValueError(f"{TS_TYPE} is required for timestamp-based partitioning "
                             f"(one of {', '.join(TIMESTAMP_TYPES)})")
        delim = get(TS_INPUT_DATEFORMAT_DELIMITER) or ","
        inputs = tuple(f.strip() for f in re.split(delim, get(TS_INPUT_DATEFORMAT) or "") if f.strip())
        both = get(TS_TIMEZONE)
        if both is not None:
            in_tz = out_tz = both.strip() or None
        else:
            in_tz = (get(TS_INPUT_TIMEZONE) or "").strip() or None
            out_tz = (get(TS_OUTPUT_TIMEZONE) or "").strip() or None
        return cls(
            timestamp_type=ts_type.strip().upper(),
            output_dateformat=get(TS_OUTPUT_DATEFORMAT) or "",
            input_dateformats=inputs,
            input_timezone=in_tz,
            output_timezone=out_tz,
            scalar_time_unit=(get(TS_SCALAR_TIME_UNIT) or "SECONDS").strip().upper(),
            jvm_timezone=jvm_timezone,
        )

    @property
    def time_unit(self) -> Optional[str]:
        """The ``TimeUnit`` numbers are read in (None for DATE_STRING and MIXED)."""
        return {"EPOCHMILLISECONDS": "MILLISECONDS", "EPOCHMICROSECONDS": "MICROSECONDS",
                "UNIX_TIMESTAMP": "SECONDS", "SCALAR": self.scalar_time_unit.upper()}.get(self.timestamp_type)


def _to_java_long(arr: pa.Array, consistent_ts: bool) -> tuple[pa.Array, bool]:
    """The ``long`` Hudi derives from a numeric Avro value; second item: already epoch millis."""
    t = arr.type
    if pa.types.is_integer(t):
        return pc.cast(arr, pa.int64()), False
    if pa.types.is_floating(t):
        x = pc.cast(arr, pa.float64())
        x = pc.if_else(pc.is_nan(x), 0.0, pc.trunc(x))  # Double.longValue: NaN -> 0, truncation
        x = pc.min_element_wise(pc.max_element_wise(x, -9.223372036854775e18), 9.223372036854775e18)
        return pc.cast(x, pa.int64(), safe=False), False
    if pa.types.is_decimal(t):
        return pc.cast(arr, options=pc.CastOptions(target_type=pa.int64(), allow_decimal_truncate=True)), False
    if pa.types.is_date(t):
        # Avro date -> LocalDate -> toEpochDay(), then (quirk) converted with the configured unit.
        return pc.cast(pc.cast(arr, pa.date32()), pa.int32()).cast(pa.int64()), False
    if pa.types.is_timestamp(t):
        micros = _timestamp_micros(arr)
        if consistent_ts and t.tz is not None:
            return pc.divide(micros, 1000), True  # java.sql.Timestamp.getTime()
        return micros, False
    raise ValueError(f"unexpected type for a timestamp partition field: {t}")


def _convert_to_millis(values: pa.Array, unit: str) -> pa.Array:
    """``TimeUnit.MILLISECONDS.convert(v, unit)``: truncating division or saturating multiplication."""
    f = _UNIT_MILLIS[unit]
    if f < 0:
        return pc.divide(values, -f)
    if f == 1:
        return values
    over = _LONG_MAX // f
    safe = pc.min_element_wise(pc.max_element_wise(values, -over), over)
    out = pc.multiply(safe, f)
    out = pc.if_else(pc.greater(values, over), _LONG_MAX, out)
    return pc.if_else(pc.less(values, -over), -_LONG_MAX - 1, out)


class _TimestampPartitioner:
    """Partition path of one timestamp field (``TimestampBasedAvroKeyGenerator.getPartitionPath``)."""

    def __init__(self, field_name: str, cfg: TimestampConfig, hive_style: bool, url_encode: bool,
                 consistent_ts: bool) -> None:
        self.field = field_name
        self.cfg = cfg
        self.hive_style = hive_style
        self.url_encode = url_encode
        self.consistent_ts = consistent_ts
        self.out_tokens = parse_joda_pattern(cfg.output_dateformat)
        self.parsers = [_compile_parser(f) for f in cfg.input_dateformats]
        self.jvm_zone = _arrow_zone(cfg.jvm_timezone, "jvm_timezone")
        self.in_zone = _arrow_zone(cfg.input_timezone, TS_INPUT_TIMEZONE) if cfg.input_timezone else None
        self.out_zone = _arrow_zone(cfg.output_timezone, TS_OUTPUT_TIMEZONE) if cfg.output_timezone else None

    def _finish(self, formatted: pa.Array) -> pa.Array:
        if self.url_encode:
            formatted = _escape_path_array(formatted)
        if self.hive_style:
            formatted = _concat(self.field + "=", formatted, n=len(formatted))
        return formatted

    def _default_string(self) -> str:
        """``getDefaultPartitionVal`` for string types: 1 ms after the epoch printed with the first
        input format in the input zone, else the output zone, else GMT."""
        zone = self.in_zone or self.out_zone or "UTC"
        return format_millis(pa.array([1], pa.int64()), self.cfg.input_dateformats[0], zone)[0].as_py()

    def partition_paths(self, col: pa.Array) -> pa.Array:
        t = col.type
        if pa.types.is_dictionary(t):
            col = col.dictionary_decode()
            t = col.type
        ts_type = self.cfg.timestamp_type
        n = len(col)
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            if ts_type not in ("DATE_STRING", "MIXED"):
                raise ValueError(
                    f"partition field {self.field!r} holds strings, but {TS_TYPE} is {ts_type}: Hudi needs "
                    f"DATE_STRING or MIXED with {TS_INPUT_DATEFORMAT} to parse strings (HoodieException: "
                    f"Missing input formatter)"
                )
            values = pc.fill_null(pc.cast(col, pa.string()), self._default_string())
            enc = pc.dictionary_encode(values)
            parsed = [_parse_one(v, self.parsers, self.jvm_zone, self.in_zone) for v in enc.dictionary.to_pylist()]
            millis_d = pa.array([p[0] for p in parsed], pa.int64())
            if self.out_zone is not None:
                out_d = format_millis(millis_d, self.out_tokens, self.out_zone)
            else:
                # Hudi formats each value in the zone it was parsed with.
                zones = [p[1] for p in parsed]
                pieces: list[Optional[str]] = [None] * len(zones)
                for z in sorted(set(zones)):
                    idx = [i for i, zz in enumerate(zones) if zz == z]
                    f = format_millis(pc.take(millis_d, pa.array(idx)), self.out_tokens, z).to_pylist()
                    for i, s in zip(idx, f):
                        pieces[i] = s
                out_d = pa.array(pieces, pa.string())
            return self._finish(pc.take(out_d, enc.indices))
        if pa.types.is_boolean(t) or not (pa.types.is_integer(t) or pa.types.is_floating(t)
                                          or pa.types.is_decimal(t) or pa.types.is_date(t)
                                          or pa.types.is_timestamp(t)):
            raise ValueError(f"unexpected type for timestamp partition field {self.field!r}: {t} "
                             f"(HoodieNotSupportedException in Hudi)")
        unit = self.cfg.time_unit
        if unit is None:
            raise ValueError(
                f"partition field {self.field!r} is numeric ({t}) but {TS_TYPE} is {ts_type}, which has no "
                f"time unit for numbers; use UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS or SCALAR"
            )
        longs, is_millis = _to_java_long(col, self.consistent_ts)
        millis = longs if is_millis else _convert_to_millis(longs, unit)
        # A null value becomes 1L (getDefaultPartitionVal), converted with the time unit.
        millis = pc.if_else(pc.is_null(col), _convert_to_millis(pa.array([1], pa.int64()), unit)[0], millis)
        zone = self.out_zone or self.jvm_zone
        return self._finish(format_millis(millis, self.out_tokens, zone))


class TimestampBasedKeyGenerator(KeyGenerator):
    """Simple record key; the single partition field is read as a time and formatted as a date.

    Numbers are read in the type's unit (UNIX_TIMESTAMP seconds, EPOCHMILLISECONDS,
    EPOCHMICROSECONDS, SCALAR with ``scalar.time.unit``); strings are parsed with the input
    date format(s) (DATE_STRING/MIXED). A null value is *not* the default partition: Hudi uses
    1 (in the time unit) or, for strings, 1 ms after the epoch.
    """

    JAVA_CLASS = _TYPE_TO_CLASS[TIMESTAMP]

    def __init__(self, record_key_field: str, partition_path_field: str, timestamp: TimestampConfig,
                 hive_style: bool = False, url_encode: bool = False,
                 consistent_logical_timestamp: bool = False) -> None:
        rk = _split_fields(record_key_field)
        _require_record_keys(rk, "TimestampBasedKeyGenerator")
        if len(rk) != 1:
            raise ValueError(f"TimestampBasedKeyGenerator takes exactly one record key field, got {rk}")
        pp = _split_fields(partition_path_field)
        if len(pp) != 1:
            raise ValueError(f"TimestampBasedKeyGenerator takes exactly one partition path field, got {pp or 'none'}; "
                             f"use {_TYPE_TO_CLASS[CUSTOM]} (field:TIMESTAMP,...) for several")
        super().__init__(rk, pp, hive_style, url_encode, consistent_logical_timestamp, timestamp.jvm_timezone)
        self.timestamp = timestamp
        self._partitioner = _TimestampPartitioner(pp[0], timestamp, self.hive_style, self.url_encode,
                                                  self.consistent_logical_timestamp)

    def record_keys(self, table: pa.Table) -> pa.Array:
        return self._simple_record_key(table, self.record_key_fields[0])

    def partition_paths(self, table: pa.Table) -> pa.Array:
        return self._partitioner.partition_paths(_column(table, self.partition_path_fields[0], "partition path"))


class CustomKeyGenerator(KeyGenerator):
    """Partition fields given as ``field:SIMPLE`` / ``field:TIMESTAMP``, joined with ``/``.

    The record key is Simple for one field and Complex (``f:v,...``) for several.
    """

    JAVA_CLASS = _TYPE_TO_CLASS[CUSTOM]

    def __init__(self, record_key_fields: Sequence[str] | str, partition_specs: Sequence[tuple[str, str]] | str,
                 timestamp: Optional[TimestampConfig] = None, hive_style: bool = False, url_encode: bool = False,
                 consistent_logical_timestamp: bool = False, jvm_timezone: str = "UTC") -> None:
        rk = _split_fields(record_key_fields) if isinstance(record_key_fields, str) else list(record_key_fields)
        _require_record_keys(rk, "CustomKeyGenerator")
        specs = self.parse_partition_specs(partition_specs) if isinstance(partition_specs, str) \
            else [(f, k.upper()) for f, k in partition_specs]
        for f, kind in specs:
            if kind not in ("SIMPLE", "TIMESTAMP"):
                raise ValueError(f"{PARTITIONPATH_FIELD}: partition key type {kind!r} of field {f!r} must be "
                                 f"SIMPLE or TIMESTAMP")
        if any(k == "TIMESTAMP" for _, k in specs) and timestamp is None:
            raise ValueError(f"a TIMESTAMP partition field needs the {TS_PREFIX}* settings ({TS_TYPE}, "
                             f"{TS_OUTPUT_DATEFORMAT}, ...)")
        super().__init__(rk, [f for f, _ in specs], hive_style, url_encode, consistent_logical_timestamp,
                         timestamp.jvm_timezone if timestamp else jvm_timezone)
        self.partition_specs = specs
        self.timestamp = timestamp

    @staticmethod
    def parse_partition_specs(value: str) -> list[tuple[str, str]]:
        """``"a:SIMPLE,b:TIMESTAMP"`` -> ``[("a", "SIMPLE"), ("b", "TIMESTAMP")]``."""
        specs = []
        for item in _split_fields(value):
            parts = item.split(":")
            if len(parts) != 2 or not parts[0].strip():
                raise ValueError(
                    f"{PARTITIONPATH_FIELD}: CustomKeyGenerator expects field:TYPE entries (TYPE is SIMPLE or "
                    f"TIMESTAMP), got {item!r} (Hudi: Unable to find field names for partition path in proper format)"
                )
            specs.append((parts[0].strip(), parts[1].strip().upper()))
        return specs

    def record_keys(self, table: pa.Table) -> pa.Array:
        if len(self.record_key_fields) == 1:
            return self._simple_record_key(table, self.record_key_fields[0])
        return self._complex_record_key(table, self.record_key_fields)

    def partition_paths(self, table: pa.Table) -> pa.Array:
        segs = []
        for f, kind in self.partition_specs:
            if kind == "SIMPLE":
                segs.append(self._simple_partition(table, f))
            else:
                assert self.timestamp is not None
                p = _TimestampPartitioner(f, self.timestamp, self.hive_style, self.url_encode,
                                          self.consistent_logical_timestamp)
                segs.append(p.partition_paths(_column(table, f, "partition path")))
        return self._joined_partitions(segs, table.num_rows)


# ---------------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------------

def _pick(config: Mapping[str, str], write_key: str, table_key: str,
          normalize: Callable[[str], object] = lambda v: v) -> Optional[str]:
    """The write config value, else the table config value; both present and different is an error."""
    w = config.get(write_key)
    t = config.get(table_key)
    if w is not None and t is not None and normalize(str(w)) != normalize(str(t)):
        raise ValueError(
            f"conflicting settings: {write_key}={w!r} but the table has {table_key}={t!r}; "
            f"drop the write option or make it match hoodie.properties"
        )
    v = w if w is not None else t
    return None if v is None else str(v)


def _strip_types(value: str) -> list[str]:
    return [f.split(":")[0].strip() for f in _split_fields(value)]


def _class_type(name: str, key: str) -> str:
    short = name.strip().rsplit(".", 1)[-1]
    if short in _CLASS_TO_TYPE and (name.strip() == short or name.strip().startswith(_PKG)):
        return _CLASS_TO_TYPE[short]
    raise ValueError(
        f"{key}: unknown key generator class {name!r}; supported: "
        f"{', '.join(sorted(_PKG + c for c in _CLASS_TO_TYPE))}"
    )


def infer_key_generator_type(record_key_fields: Sequence[str], partition_fields: Sequence[str]) -> str:
    """``KeyGenUtils.inferKeyGeneratorType``: NON_PARTITION without partition fields; CUSTOM if the
    first partition field has ``:TYPE``; SIMPLE for one partition field and at most one record key
    field; COMPLEX otherwise."""
    if not partition_fields:
        return NON_PARTITION
    if ":" in partition_fields[0]:
        return CUSTOM
    if len(partition_fields) == 1:
        return SIMPLE if len(record_key_fields) <= 1 else COMPLEX
    return COMPLEX


def key_generator_from_config(config: Mapping[str, str], *, jvm_timezone: str = "UTC") -> KeyGenerator:
    """Build the key generator a Hudi 0.14/0.15 writer would use for these settings.

    ``config`` may hold write options (``hoodie.datasource.write.*``), table properties
    (``hoodie.table.*`` from hoodie.properties) or both; a write option that contradicts the
    table's value is an error. The class (``keygenerator.class``) wins over the type
    (``keygenerator.type``); with neither, the type is inferred like Hudi does
    (:func:`infer_key_generator_type`). ``jvm_timezone`` stands in for the writer JVM's default
    zone, which Hudi's timestamp formatting falls back to when no zone is configured.
    """
    rk_value = _pick(config, RECORDKEY_FIELD, TABLE_RECORDKEY_FIELDS, _split_fields)
    record_keys = _split_fields(rk_value)
    if not record_keys:
        raise ValueError(
            f"no record key field configured: set {RECORDKEY_FIELD} (write option) or "
            f"{TABLE_RECORDKEY_FIELDS} (hoodie.properties), e.g. {RECORDKEY_FIELD}=id"
        )
    pp_value = _pick(config, PARTITIONPATH_FIELD, TABLE_PARTITION_FIELDS, _strip_types)
    partition_fields = _split_fields(pp_value)

    cls_value = _pick(config, KEYGENERATOR_CLASS, TABLE_KEYGENERATOR_CLASS,
                      lambda v: _class_type(v, KEYGENERATOR_CLASS) if v.strip() else "")
    type_value = _pick(config, KEYGENERATOR_TYPE, TABLE_KEYGENERATOR_TYPE, lambda v: v.strip().upper())
    java_class: Optional[str] = None
    if cls_value and cls_value.strip():
        key = KEYGENERATOR_CLASS if config.get(KEYGENERATOR_CLASS) else TABLE_KEYGENERATOR_CLASS
        kind = _class_type(cls_value, key)
        java_class = cls_value.strip() if cls_value.strip().startswith(_PKG) else _PKG + cls_value.strip()
    elif type_value and type_value.strip():
        kind = type_value.strip().upper()
        if kind not in _TYPE_TO_CLASS:
            raise ValueError(f"{KEYGENERATOR_TYPE}: unknown key generator type {type_value!r}; expected one of "
                             f"{', '.join(_TYPE_TO_CLASS)}")
    else:
        kind = infer_key_generator_type(record_keys, partition_fields)

    hive = _java_bool(config.get(HIVE_STYLE_PARTITIONING))
    encode = _java_bool(config.get(URL_ENCODE_PARTITIONING))
    consistent = _java_bool(config.get(CONSISTENT_LOGICAL_TIMESTAMP))
    gen: KeyGenerator
    if kind == SIMPLE:
        gen = SimpleKeyGenerator(",".join(record_keys), ",".join(partition_fields), hive, encode, consistent,
                                 jvm_timezone)
    elif kind == COMPLEX:
        gen = ComplexKeyGenerator(record_keys, partition_fields, hive, encode, consistent, jvm_timezone,
                                  encode_single_key_field_name=not _java_bool(config.get(COMPLEX_KEYGEN_NEW_ENCODING)))
    elif kind == NON_PARTITION:
        gen = NonpartitionedKeyGenerator(record_keys, consistent, jvm_timezone, hive, encode)
    elif kind == GLOBAL_DELETE:
        gen = GlobalDeleteKeyGenerator(record_keys, consistent, jvm_timezone, hive, encode)
    elif kind == TIMESTAMP:
        gen = TimestampBasedKeyGenerator(",".join(record_keys), ",".join(partition_fields),
                                         TimestampConfig.from_config(config, jvm_timezone), hive, encode, consistent)
    else:  # CUSTOM
        raw = config.get(PARTITIONPATH_FIELD)
        if raw is None:
            raw = config.get(TABLE_PARTITION_FIELDS, "")
        specs = CustomKeyGenerator.parse_partition_specs(str(raw))
        ts = TimestampConfig.from_config(config, jvm_timezone) if any(k == "TIMESTAMP" for _, k in specs) else None
        gen = CustomKeyGenerator(record_keys, specs, ts, hive, encode, consistent, jvm_timezone)
    if java_class is not None:
        gen.java_class_name = java_class
    return gen


# ---------------------------------------------------------------------------------------------
# Reading: partition path -> partition column values
# ---------------------------------------------------------------------------------------------

def partition_values(partition_path: str, fields: Sequence[str], hive_style: bool,
                     url_encoded: bool = False) -> dict[str, Optional[str]]:
    """The partition column values encoded in a relative partition path.

    Strips ``field=`` prefixes (hive style) and decodes ``%XX`` escapes when the table was
    written with ``hoodie.datasource.write.partitionpath.urlencode=true``. The default
    partition ``__HIVE_DEFAULT_PARTITION__`` maps to None (the value was null or empty).
    A single field takes the whole path, so timestamp formats such as ``yyyy/MM/dd`` keep
    their slashes; several fields need one path segment each.
    """
    fields = list(fields)
    if not fields:
        return {}
    if len(fields) == 1:
        segments = [partition_path]
    else:
        segments = partition_path.split(PARTITION_PATH_SEPARATOR)
        if len(segments) != len(fields):
            raise ValueError(
                f"partition path {partition_path!r} has {len(segments)} segment(s) but the table has "
                f"{len(fields)} partition field(s) {fields}"
            )
    out: dict[str, Optional[str]] = {}
    for name, seg in zip(fields, segments):
        if hive_style:
            prefix = name + "="
            if not seg.startswith(prefix):
                raise ValueError(f"partition path {partition_path!r}: expected segment {prefix}<value> for "
                                 f"field {name!r}, got {seg!r} (is the table hive-style partitioned?)")
            seg = seg[len(prefix):]
        if seg == DEFAULT_PARTITION_PATH:
            out[name] = None
            continue
        out[name] = unescape_path_name(seg) if url_encoded else seg
    return out


# ---------------------------------------------------------------------------------------------
# Partition paths as folders: what a partition path may not be
# ---------------------------------------------------------------------------------------------

# Local file systems (ext4, xfs, APFS) allow at most 255 bytes per name; S3 allows longer keys.
MAX_FOLDER_NAME_BYTES = 255
_METAFOLDER = ".hoodie"  # hoodie.format.timeline.METAFOLDER
_PARTITION_METAFILE = ".hoodie_partition_metadata"  # hoodie.format.naming.PARTITION_METAFILE


class PartitionPathError(HoodieError, ValueError):
    """A partition path that cannot be a partition folder of the table. The message names the
    value, its partition field and the fix; it is raised before anything is written."""


def partition_path_problem(path: str) -> Optional[str]:
    """Why the relative partition path ``path`` cannot be a partition folder, or None if it can.

    A partition path is a folder below the table base path, one folder per ``/``-separated
    segment. Refused, because local storage and S3 would store them differently or the files
    would land outside the table or in hoodie's own folders: an empty segment (a leading or
    trailing ``/``, or ``//``), ``.`` and ``..``, ``.hoodie``, names starting with
    ``.hoodie_partition_metadata``, NUL, and names longer than 255 bytes. Other names, those
    starting with a dot included (``.NET``), are ordinary partitions.
    """
    if "\x00" in path:
        return "a NUL character, which local file systems refuse in a name (S3 keeps it)"
    for seg in path.split("/"):
        if not seg:
            return ("an empty folder name (a '/' at the start or the end, or '//'): S3 refuses it and local "
                    "storage merges it with its neighbour, so the value would not read back as written")
        if seg == "..":
            return "the folder name '..', which would put files outside the table base path"
        if seg == ".":
            return ("the folder name '.', which local storage reads as the folder above it and S3 as a folder "
                    "of its own, so one record would live in two partitions")
        if seg == _METAFOLDER:
            return ("the folder name '.hoodie', the table's metadata folder (Hudi's file listing skips folders of "
                    "that name at any depth, so Java Hudi would never read the rows)")
        if seg.startswith(_PARTITION_METAFILE):
            return f"a folder name starting with {_PARTITION_METAFILE!r}, the name of Hudi's partition marker file"
        size = len(seg.encode("utf-8"))
        if size > MAX_FOLDER_NAME_BYTES:
            return (f"a folder name of {size} bytes; local file systems allow at most {MAX_FOLDER_NAME_BYTES} "
                    f"bytes per name (S3 takes longer ones)")
    return None


def _short(value: object, limit: int = 80) -> str:
    """``repr`` of a value for a message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}...' ({len(str(value))} characters)"


def value_partition_fields(kg: KeyGenerator) -> list[str]:
    """The partition fields whose path segment is the field's value rendered as a string: every
    field of the Simple and Complex key generators, the SIMPLE fields of the Custom one. (The
    segment of a timestamp field is a formatted date, not the value.)"""
    if isinstance(kg, CustomKeyGenerator):
        return [f for f, kind in kg.partition_specs if kind == "SIMPLE"]
    if isinstance(kg, (SimpleKeyGenerator, ComplexKeyGenerator)):
        return list(kg.partition_path_fields)
    return []


def _value_segment(value: Optional[str], name: str, url_encode: bool, hive_style: bool) -> str:
    """The path segment of one rendered value, as ``KeyGenerator._simple_partition`` builds it."""
    seg = DEFAULT_PARTITION_PATH if not value else (escape_path_name(value) if url_encode else value)
    return f"{name}={seg}" if hive_style else seg


def check_partition_paths(kg: KeyGenerator, data: pa.Table, paths: pa.Array | pa.ChunkedArray) -> None:
    """Refuse a batch if any row's partition path (``paths``, as ``kg`` computed it from
    ``data``) cannot be a partition folder (:func:`partition_path_problem`).

    Raises:
        PartitionPathError: naming the first bad path, the partition field value(s) it comes
            from and the fix: ``hoodie.datasource.write.partitionpath.urlencode=true`` or hive-style
            partitioning when either would make the value a safe folder name, else changing it.
    """
    if not kg.partition_path_fields or len(paths) == 0:
        return
    for path in pc.unique(paths).to_pylist():
        problem = partition_path_problem(path)
        if problem is not None:
            raise PartitionPathError(_explain_bad_path(kg, data, _as_array(paths), path, problem))


def _explain_bad_path(kg: KeyGenerator, data: pa.Table, paths: pa.Array, path: str, problem: str) -> str:
    row = data.slice(pc.index(paths, path).as_py(), 1)
    simple = value_partition_fields(kg)
    rendered = {f: kg._strings(row, f, "partition path")[0].as_py() for f in simple}
    # The culprit is the field whose own segment is bad; a timestamp field's segment is a format.
    culprits = [f for f in simple
                if partition_path_problem(_value_segment(rendered[f], f, kg.url_encode, kg.hive_style))]
    if not culprits:
        culprits = [f for f in kg.partition_path_fields if f not in simple] or list(kg.partition_path_fields)
    values = ", ".join(f"{f}={_short(_column(row, f, 'partition path')[0].as_py())}" for f in culprits)
    msg = (f"partition path {_short(path)} has {problem}. It comes from partition field value {values}. "
           f"Nothing was committed. ")
    if all(f in simple for f in culprits):
        for option, enc, hive in ((URL_ENCODE_PARTITIONING, True, kg.hive_style),
                                  (HIVE_STYLE_PARTITIONING, kg.url_encode, True)):
            if (enc, hive) == (kg.url_encode, kg.hive_style):
                continue
            fixed = [_value_segment(rendered[f], f, enc, hive) for f in culprits]
            if not any(partition_path_problem(s) for s in fixed):
                how = ("it writes '/' as %2F and control characters as %XX" if enc != kg.url_encode
                       else "it writes field=value folders")
                return msg + (f"Change the value, or create the table with {option}=true ({how}; the folder "
                              f"becomes {_short('/'.join(fixed))}). The setting is fixed when the table is created.")
    return msg + "Change the value (map it to a valid folder name in the data before the write)."
