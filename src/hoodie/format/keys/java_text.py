"""Java text rendering of values, as Hudi's key generators see them.

``HoodieAvroUtils.getNestedFieldValAsString`` renders a value with Java's ``toString``
(``Double.toString``'s shortest digits, ``java.sql.Timestamp`` strings), and
``PartitionPathEncodeUtils`` escapes partition path characters the way Hive does. Where
Arrow has no kernel for that, the Python code runs once per *distinct* value.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Optional
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hoodie.format.keys.common import (
    DEFAULT_PARTITION_PATH, _ESCAPE_CHARS, _ESCAPE_REGEX, _as_array, _concat, _map_distinct,
)
from hoodie.format.keys.joda import _arrow_zone


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


