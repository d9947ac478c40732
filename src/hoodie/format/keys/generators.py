"""Key generators: record keys and partition paths as Hudi 0.14/0.15 computes them, over pyarrow.

Semantics follow the Avro key generators that the Spark datasource uses on its default
(non-row-writer) path: ``SimpleAvroKeyGenerator``, ``ComplexAvroKeyGenerator``,
``NonpartitionedAvroKeyGenerator``, ``TimestampBasedAvroKeyGenerator``,
``CustomAvroKeyGenerator`` and ``GlobalAvroDeleteKeyGenerator``, with the rules of ``KeyGenUtils``.

Everything is computed column-wise with ``pyarrow.compute``. Java value rendering lives in
:mod:`hoodie.format.keys.java_text`, Joda date patterns in :mod:`hoodie.format.keys.joda`,
partition paths as folders in :mod:`hoodie.format.keys.paths`.
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence
import pyarrow as pa
import pyarrow.compute as pc
from hoodie.format.keys.common import (
    COLUMN_VALUE_SEPARATOR, COMPLEX, COMPLEX_KEYGEN_NEW_ENCODING, CONSISTENT_LOGICAL_TIMESTAMP, CUSTOM,
    DEFAULT_PARTITION_PATH, EMPTY_RECORDKEY_PLACEHOLDER, GLOBAL_DELETE, HIVE_STYLE_PARTITIONING,
    KEYGENERATOR_CLASS, KEYGENERATOR_TYPE, NON_PARTITION, NULL_RECORDKEY_PLACEHOLDER, PARTITIONPATH_FIELD,
    PARTITION_PATH_SEPARATOR, RECORDKEY_FIELD, RECORD_KEY_PARTS_SEPARATOR, SIMPLE, TABLE_KEYGENERATOR_CLASS,
    TABLE_KEYGENERATOR_TYPE, TABLE_PARTITION_FIELDS, TABLE_RECORDKEY_FIELDS, TIMESTAMP, TS_INPUT_DATEFORMAT,
    TS_INPUT_DATEFORMAT_DELIMITER, TS_INPUT_TIMEZONE, TS_OUTPUT_DATEFORMAT, TS_OUTPUT_TIMEZONE, TS_PREFIX,
    TS_SCALAR_TIME_UNIT, TS_TIMEZONE, TS_TYPE, URL_ENCODE_PARTITIONING, _CLASS_TO_TYPE, _PKG, _TS_OLD_PREFIX,
    _TYPE_TO_CLASS, _as_array, _concat, _empty_strings, _option_bool, _null_or_empty, _split_fields,
)
from hoodie.format.keys.java_text import _escape_path_array, _timestamp_micros, java_strings
from hoodie.format.keys.joda import (
    _arrow_zone, _compile_parser, _parse_one, format_millis, parse_joda_pattern,
)


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
        # True for a table without record key fields: keys are generated per write
        # (:func:`auto_record_keys`) and this generator computes partition paths only.
        self.auto_record_keys = False

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
            f"hoodie.properties); a write without one generates its keys (auto_record_keys)"
        )


# ---------------------------------------------------------------------------------------------
# Auto-generated record keys (Hudi 0.14+)
# ---------------------------------------------------------------------------------------------

# Stands in for the record key field while a partition-only generator is built (never read).
_AUTO_KEY_FIELD = "<auto-generated record key>"


def auto_record_keys(instant: str, partition_id: int, first_row: int, n: int) -> pa.Array:
    """The record keys Hudi 0.14+ generates for rows without a record key field: ``<instant>_<partition
    id>_<row id>`` (``HoodieRecord.generateSequenceId``, called by ``AutoRecordGenWrapperKeyGenerator``),
    where the partition id is the Spark partition the row was read in and the row id counts the rows of
    that partition from 0, in decimal without padding. ``first_row`` is the row id of the first of the
    ``n`` rows. Unique across a table as long as (partition id, row id) is unique within one write."""
    if n == 0:
        return pa.array([], pa.string())
    rows = pc.cast(pa.array(range(first_row, first_row + n), pa.int64()), pa.string())
    return pc.binary_join_element_wise(pa.scalar(f"{instant}_{int(partition_id)}"), rows, "_")


def _generated_per_write(table: pa.Table) -> pa.Array:
    raise ValueError(
        "this table has no record key field: its record keys are generated per write "
        "(<instant>_<partition id>_<row id>, Hudi 0.14+'s auto-generated keys), not computed from columns"
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
# Timestamp-based partitioning (TimestampBasedAvroKeyGenerator)
# ---------------------------------------------------------------------------------------------

TIMESTAMP_TYPES = ("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR")
_UNIT_MILLIS = {"NANOSECONDS": -1_000_000, "MICROSECONDS": -1000, "MILLISECONDS": 1, "SECONDS": 1000,
                "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}
_LONG_MAX = 2**63 - 1


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


def key_generator_from_config(config: Mapping[str, str], *, jvm_timezone: str = "UTC",
                              allow_auto_record_keys: bool = False) -> KeyGenerator:
    """Build the key generator a Hudi 0.14/0.15 writer would use for these settings.

    ``config`` may hold write options (``hoodie.datasource.write.*``), table properties
    (``hoodie.table.*`` from hoodie.properties) or both; a write option that contradicts the
    table's value is an error. The class (``keygenerator.class``) wins over the type
    (``keygenerator.type``); with neither, the type is inferred like Hudi does
    (:func:`infer_key_generator_type`). ``jvm_timezone`` stands in for the writer JVM's default
    zone, which Hudi's timestamp formatting falls back to when no zone is configured.

    Without a record key field, ``allow_auto_record_keys`` gives the generator of a table whose keys
    Hudi 0.14+ generates (``AutoRecordGenWrapperKeyGenerator``): it computes partition paths only
    (``auto_record_keys`` is True, ``record_keys`` raises; the keys come from :func:`auto_record_keys`),
    and its type is inferred from the partition fields alone, as ``KeyGenUtils.inferKeyGeneratorType``
    does for such tables.
    """
    rk_value = _pick(config, RECORDKEY_FIELD, TABLE_RECORDKEY_FIELDS, _split_fields)
    record_keys = _split_fields(rk_value)
    auto = not record_keys
    if auto and not allow_auto_record_keys:
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
    if auto:
        record_keys = [_AUTO_KEY_FIELD]

    hive = _option_bool(config, HIVE_STYLE_PARTITIONING)
    encode = _option_bool(config, URL_ENCODE_PARTITIONING)
    consistent = _option_bool(config, CONSISTENT_LOGICAL_TIMESTAMP)
    gen: KeyGenerator
    if kind == SIMPLE:
        gen = SimpleKeyGenerator(",".join(record_keys), ",".join(partition_fields), hive, encode, consistent,
                                 jvm_timezone)
    elif kind == COMPLEX:
        gen = ComplexKeyGenerator(record_keys, partition_fields, hive, encode, consistent, jvm_timezone,
                                  encode_single_key_field_name=not _option_bool(config, COMPLEX_KEYGEN_NEW_ENCODING))
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
    if auto:
        gen.record_key_fields = []
        gen.auto_record_keys = True
        gen.record_keys = _generated_per_write  # type: ignore[method-assign]
    return gen


