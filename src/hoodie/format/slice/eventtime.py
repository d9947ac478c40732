"""Event time values: converting an event-time column to epoch milliseconds.

Hudi's ``hoodie.payload.event.time.field`` feeds ``HoodieWriteStat.minEventTime``/``maxEventTime``
(epoch milliseconds); Java parses the value with ``DateTimeUtils.parseDateTime`` (a number is epoch
milliseconds, anything else ISO-8601). hoodie converts typed columns by their type and plain numbers
by ``hoodie.payload.event.time.unit``:

* timestamps (any unit, any zone; naive means UTC) and dates: exactly, by their type, rounding down
  to the millisecond; the unit option does not apply;
* integers, floats, decimals and strings of digits: in the configured unit (default
  ``MILLISECONDS``, as Hudi reads them), rounded down to the millisecond;
* other strings: ISO-8601.

A digit value (integer or digit string) that reads as a compact calendar date (``yyyyMMdd``,
``yyyyMMddHH``, ``yyyyMMddHHmm``, ``yyyyMMddHHmmss``, ``yyyyMMddHHmmssSSS``, a year 1971-2200) while
its epoch reading in the configured unit is no time of today's world (not between 1980 and
tomorrow) is refused, naming both readings and the fix: Hudi reads digits as epoch milliseconds
(``DateTimeUtils.parseDateTime``), so ``20240115103000`` would be the year 2611 (a record TTL that
never expires) and ``20240115`` January 1970 (one that expires everything).

A plain number that, read in the configured unit, is not between 1971 and 2200 but is in another
unit is refused, naming that unit and the key to set: a seconds column read as milliseconds would
look like January 1970 and make an event-time compaction compact everything. Numbers that fit no
unit (e.g. small test values) are taken as they are. A value beyond what a date can hold (year 9999)
is refused in every case.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from typing import Optional, Union

import pyarrow as pa
import pyarrow.compute as pc
from hoodie import configs as _configs
from hoodie.configs.rules import (
    MAX_MS, MIN_MS, MS_PER_UNIT, PLAUSIBLE_MS, describe_millis, iso_millis, iso_text, looks_like,
)
from hoodie.errors import HoodieError

ArrayLike = Union[pa.Array, pa.ChunkedArray]

UNIT_KEY = _configs.EVENT_TIME_UNIT  # the key's one definition (type, default, doc) is in hoodie.configs
DEFAULT_UNIT: str = UNIT_KEY.default
# java.util.concurrent.TimeUnit names (as Hudi's hoodie.keygen.timebased.timestamp.scalar.time.unit).
UNITS = _configs.EVENT_TIME_UNITS
# Milliseconds per unit, as a float for range checks (exact conversions use integer arithmetic).
_MS_PER = MS_PER_UNIT
_DECIMAL_MS_PER = {u: _decimal.Decimal(x) for u, x in
                   (("SECONDS", "1000"), ("MILLISECONDS", "1"), ("MICROSECONDS", "0.001"), ("NANOSECONDS", "0.000001"))}
# Arrow timestamp unit -> ticks per millisecond (None: seconds, which multiply).
_TICKS_PER_MS = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)
# The range of a plausible event time (PLAUSIBLE_MS) and the range a date can hold (MIN_MS, MAX_MS) are
# the config rules' (hoodie.configs.rules), so a compaction threshold and a column are judged alike.


class EventTimeError(HoodieError, ValueError):
    """An event-time column cannot be turned into epoch milliseconds."""


def parse_unit(value: Optional[str]) -> str:
    """The unit named by ``hoodie.payload.event.time.unit`` (default ``MILLISECONDS``)."""
    try:
        return UNIT_KEY.get({UNIT_KEY: value})
    except _configs.ConfigValueError as e:
        raise EventTimeError(str(e)) from None


def event_time_millis(values: ArrayLike, field_name: str = "event time", unit: str = DEFAULT_UNIT) -> pa.Array:
    """Epoch milliseconds (int64, nulls kept) for an event-time column (see the module doc).

    Raises:
        EventTimeError: the type is not a time, a number looks like another unit than ``unit``,
            or a value is beyond year 9999; the message names the field, the value and the fix.
    """
    unit = parse_unit(unit)
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_timestamp(t):
        ticks = pc.cast(arr, pa.int64())
        if t.unit == "s":
            _check_range(pc.cast(ticks, pa.float64(), safe=False), 1000.0, field_name, f"timestamp[{t.unit}]")
        out = _floor_to_millis(ticks, t.unit)
        _check_range(pc.cast(out, pa.float64(), safe=False), 1.0, field_name, f"timestamp[{t.unit}]")
        return out
    if pa.types.is_date(t):
        # date32 casts to int32 (days) only; widen before multiplying.
        days = pc.cast(pc.cast(arr, pa.date32()), pa.int32())
        _check_range(pc.cast(days, pa.float64(), safe=False), 86_400_000.0, field_name, str(t))
        return pc.multiply(pc.cast(days, pa.int64()), 86_400_000)
    if pa.types.is_integer(t):
        ints = pc.cast(arr, pa.int64())
        _refuse_compact_dates(ints, unit, field_name)
        return _numbers_to_millis(ints, unit, field_name)
    if pa.types.is_floating(t):
        f = pc.cast(arr, pa.float64(), safe=False)
        finite = pc.is_finite(f)
        if pc.any(pc.and_(pc.is_valid(f), pc.invert(finite))).as_py():
            raise EventTimeError(f"event time field {field_name!r} holds NaN or infinity; event times must be finite")
        return _numbers_to_millis(f, unit, field_name)
    if pa.types.is_decimal(t):
        # Checked like floats, converted exactly (1714521600.001 seconds is ...001 ms, not ...000).
        _numbers_to_millis(pc.cast(arr, pa.float64(), safe=False), unit, field_name)
        per = _DECIMAL_MS_PER[unit]
        with _decimal.localcontext() as ctx:
            ctx.prec = 100  # decimal128 has at most 38 digits: the products are exact
            return pa.array([None if v is None else int((v * per).to_integral_value(_decimal.ROUND_FLOOR))
                             for v in arr.to_pylist()], pa.int64())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _strings_to_millis(arr, field_name, unit)
    raise EventTimeError(
        f"event time field {field_name!r} has type {t}; use a timestamp, date, number (epoch time in "
        f"{UNIT_KEY}, default {DEFAULT_UNIT}) or ISO-8601 string column"
    )


def _floor_to_millis(ticks: pa.Array, unit: str) -> pa.Array:
    """Epoch milliseconds of timestamp ticks, rounded down (a Spark timestamp has microseconds:
    12:00:00.000999 is in millisecond 12:00:00.000, and 1969-12-31 23:59:59.9995 in ...999)."""
    per = _TICKS_PER_MS[unit]
    if per is None:
        return pc.multiply(ticks, 1000)
    if per == 1:
        return ticks
    q = pc.divide(ticks, per)  # integer division truncates toward zero
    negative_rest = pc.less(pc.subtract(ticks, pc.multiply(q, per)), 0)
    return pc.subtract(q, pc.cast(negative_rest, pa.int64()))


def to_millis_float(value: Union[int, float], unit: str) -> float:
    """``value`` in ``unit`` as (approximate) epoch milliseconds, for range checks and messages."""
    return value * _MS_PER[unit]


def _fmt(value: Union[int, float]) -> str:
    return str(int(value)) if isinstance(value, int) or float(value).is_integer() else repr(float(value))


def implausible(value: Union[int, float], unit: str = DEFAULT_UNIT) -> Optional[str]:
    """Why a plain number read in ``unit`` cannot be this event time (None when it can): it is not a
    date at all, or it is one between 1971 and 2200 only in another unit."""
    ms = value * _MS_PER[unit]
    lo, hi = PLAUSIBLE_MS
    if lo <= ms <= hi:
        return None
    other = looks_like(value, unit)
    if other is not None:
        return (f"{_fmt(value)} read as {unit} is {describe_millis(ms)}, but as {other} it is "
                f"{describe_millis(value * _MS_PER[other])}: set {UNIT_KEY}={other}")
    if not MIN_MS <= ms <= MAX_MS:
        return f"{_fmt(value)} read as {unit} is {describe_millis(ms)}: it is not an epoch time in any unit"
    return None


def _check_range(raw: pa.Array, ms_per: float, field_name: str, what: str) -> None:
    """Refuse values whose milliseconds (``raw * ms_per``) are beyond what a date holds."""
    if len(raw) == 0 or raw.null_count == len(raw):
        return
    mm = pc.min_max(raw)
    for v in (mm["min"].as_py(), mm["max"].as_py()):
        if not MIN_MS <= v * ms_per <= MAX_MS:
            raise EventTimeError(f"event time field {field_name!r} ({what}) holds a value {describe_millis(v * ms_per)}")


def all_plausible(values: ArrayLike, unit: str = DEFAULT_UNIT) -> bool:
    """True when every non-null number of ``values``, read in ``unit``, is a 1971-2200 time: such a
    column passes :func:`event_time_millis`'s plausibility check, and so does any number between
    two such values (a sufficient test from a column's minimum and maximum)."""
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        return False
    f = pc.cast(arr, pa.float64(), safe=False).drop_null()
    if len(f) == 0:
        return True
    ms = pc.multiply(f, _MS_PER[parse_unit(unit)])
    lo, hi = PLAUSIBLE_MS
    return bool(pc.all(pc.and_(pc.greater_equal(ms, lo), pc.less_equal(ms, hi))).as_py())


def _numbers_to_millis(raw: pa.Array, unit: str, field_name: str) -> pa.Array:
    """Milliseconds of plain numbers (int64 or float64) in ``unit``, after the plausibility check."""
    if len(raw) and raw.null_count < len(raw):
        f = pc.cast(raw, pa.float64(), safe=False)
        lo, hi = PLAUSIBLE_MS
        ms = pc.multiply(f, _MS_PER[unit])
        outside = pc.fill_null(pc.or_(pc.less(ms, lo), pc.greater(ms, hi)), False)
        if pc.any(outside).as_py():
            # Another unit's plausible range first (the better hint), then what no date can hold.
            masks = [pc.and_(pc.greater_equal(pc.multiply(f, _MS_PER[u]), lo), pc.less_equal(pc.multiply(f, _MS_PER[u]), hi))
                     for u in UNITS if u != unit]
            masks.append(pc.or_(pc.less(ms, MIN_MS), pc.greater(ms, MAX_MS)))
            for m in masks:
                hit = pc.fill_null(pc.and_(outside, m), False)
                if pc.any(hit).as_py():
                    why = implausible(raw.filter(hit)[0].as_py(), unit)
                    raise EventTimeError(f"event time field {field_name!r}: {why}")
    if pa.types.is_floating(raw.type):
        scaled = pc.multiply(raw, 1000.0) if unit == "SECONDS" else (
            raw if unit == "MILLISECONDS" else pc.divide(raw, 1000.0 if unit == "MICROSECONDS" else 1e6))
        return pc.cast(pc.floor(scaled), pa.int64())
    if unit == "SECONDS":
        return pc.multiply(raw, 1000)
    return _floor_to_millis(raw, {"MILLISECONDS": "ms", "MICROSECONDS": "us", "NANOSECONDS": "ns"}[unit])


def _strings_to_millis(arr: pa.Array, field_name: str, unit: str) -> pa.Array:
    is_num = pc.match_substring_regex(arr, r"^\s*-?\d+\s*$")
    digits = arr.filter(pc.fill_null(is_num, False))
    if len(digits):
        _refuse_compact_dates(pa.array([int(v) for v in digits.to_pylist()], pa.int64()), unit, field_name)
    out: list[Optional[int]] = []
    # Strings are rare for event times; parse per value with a clear error on the first bad one.
    for s, num in zip(arr.to_pylist(), is_num.to_pylist()):
        if s is None:
            out.append(None)
        elif num:
            v = int(s)
            why = implausible(v, unit)
            if why is not None:
                raise EventTimeError(f"event time field {field_name!r}: {why}")
            out.append(_int_to_millis(v, unit))
        else:
            out.append(parse_iso_millis(s, f"event time field {field_name!r} value",
                                        f"an epoch number ({UNIT_KEY}={unit})"))
    return pa.array(out, pa.int64())


# Compact date forms by number of digits (Java patterns, as Hudi's timestamp key generator takes them).
COMPACT_DATE_FORMS = {8: "yyyyMMdd", 10: "yyyyMMddHH", 12: "yyyyMMddHHmm", 14: "yyyyMMddHHmmss",
                      17: "yyyyMMddHHmmssSSS"}
# An epoch reading of a compact-date-like value is trusted between these (a time of today's world).
_TRUSTED_FROM_MS = (_dt.datetime(1980, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS


def compact_date_millis(v: int) -> Optional[tuple[str, int]]:
    """(form, epoch ms in UTC) when the digits of ``v`` are a valid compact calendar date of a year
    1971-2200 (:data:`COMPACT_DATE_FORMS`), else None."""
    s = str(v)
    form = COMPACT_DATE_FORMS.get(len(s)) if v > 0 else None
    if form is None:
        return None
    parts = [int(s[0:4]), int(s[4:6]), int(s[6:8])] + [int(s[i:i + 2]) for i in range(8, min(len(s), 14), 2)]
    try:
        d = _dt.datetime(*parts, tzinfo=_dt.timezone.utc)  # type: ignore[misc]
    except ValueError:
        return None
    if not 1971 <= d.year <= 2200:
        return None
    return form, (d - _EPOCH) // _MS + (int(s[14:]) if len(s) == 17 else 0)


def _refuse_compact_dates(ints: pa.Array, unit: str, field_name: str) -> None:
    """Refuse digit values that are compact dates whose epoch reading is no time of today's world.

    Only values inside a compact form's numeric range are looked at one by one (real epoch values
    of today, 13-digit milliseconds or 10-digit seconds below 1971010100, are never in one)."""
    if len(ints) == 0 or ints.null_count == len(ints):
        return
    import time as _time

    now_ms = int(_time.time() * 1000) + 86_400_000
    for n in COMPACT_DATE_FORMS:
        lo, hi = 1971 * 10 ** (n - 4), 2201 * 10 ** (n - 4) - 1
        cand = ints.filter(pc.fill_null(pc.and_(pc.greater_equal(ints, lo), pc.less_equal(ints, hi)), False))
        for v in pc.unique(cand).to_pylist():
            hit = compact_date_millis(v)
            if hit is None:
                continue
            epoch = to_millis_float(v, unit)
            if _TRUSTED_FROM_MS <= epoch <= now_ms:
                continue
            form, ms = hit
            raise EventTimeError(
                f"event time field {field_name!r}: {v} reads as {form} ({millis_to_iso(ms)}), but digits are epoch "
                f"time in {UNIT_KEY}={unit} (Hudi's rule: DateTimeUtils.parseDateTime reads them as epoch "
                f"milliseconds), which makes it {describe_millis(epoch)}: a record TTL or event-time compaction "
                f"would use that time. Store the field as a timestamp or date column or as ISO-8601 text "
                f"('{(millis_to_iso(ms) or '')[:19]}Z'); if the values are epoch times, set {UNIT_KEY} to their unit")


def check_sub_microsecond(data: pa.Table) -> None:
    """Refuse ``timestamp[ns]`` values with digits below the microsecond, in any column (struct
    fields and list elements included), before anything is written: Hudi stores timestamps as Avro
    ``timestamp-micros`` (Spark's precision), so those digits cannot be written. The message names
    the column, a value, and the fix."""
    def walk(name: str, arr: pa.Array) -> None:
        t = arr.type
        if pa.types.is_timestamp(t) and t.unit == "ns":
            ticks = pc.cast(arr, pa.int64())
            rest = pc.fill_null(pc.not_equal(pc.subtract(ticks, pc.multiply(pc.divide(ticks, 1000), 1000)), 0), False)
            if pc.any(rest).as_py():
                bad = ticks.filter(rest)[0].as_py()
                raise EventTimeError(
                    f"column {name!r} holds timestamp[ns] values with digits below the microsecond (e.g. {bad} ns "
                    f"since the epoch); Hudi tables store timestamps in microseconds (Avro timestamp-micros), so "
                    f"they would be lost. Truncate them first, e.g. pyarrow.compute.floor_temporal(col, unit="
                    f"'microsecond'), or keep the nanoseconds in an int64 column")
        elif pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(f"{name}.{t.field(i).name}", arr.field(i))
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            walk(f"{name}[]", arr.flatten())
        elif pa.types.is_map(t):
            walk(f"{name}.key", arr.keys)
            walk(f"{name}.value", arr.items)

    for name in data.column_names:
        col = data.column(name)
        if _holds_ns(col.type):
            walk(name, col.combine_chunks())


def _holds_ns(t: pa.DataType) -> bool:
    if pa.types.is_timestamp(t):
        return t.unit == "ns"
    if pa.types.is_struct(t):
        return any(_holds_ns(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _holds_ns(t.value_type)
    if pa.types.is_map(t):
        return _holds_ns(t.key_type) or _holds_ns(t.item_type)
    return False


def _int_to_millis(v: int, unit: str) -> int:
    if unit == "SECONDS":
        return v * 1000
    if unit == "MILLISECONDS":
        return v
    return v // (1_000 if unit == "MICROSECONDS" else 1_000_000)  # // rounds down, like the arrays


def parse_iso_millis(s: str, what: str = "value", number: str = "epoch milliseconds") -> int:
    """Epoch milliseconds of an ISO-8601 date or date-time (``Z`` or offset; naive means UTC),
    rounded down, computed exactly (no floating point). ``number`` names the numeric form the
    caller also accepts, for the error message."""
    ms = iso_millis(s)
    if ms is None:
        raise EventTimeError(f"{what} {s!r} is neither {number} nor ISO-8601 (e.g. 2024-05-01T12:00:00Z)")
    return ms


def min_max_millis(values: ArrayLike, field_name: str = "event time",
                   unit: str = DEFAULT_UNIT) -> Optional[tuple[int, int]]:
    """(min, max) epoch milliseconds of a column, or None when it has no non-null value."""
    ms = event_time_millis(values, field_name, unit)
    if len(ms) == 0 or ms.null_count == len(ms):
        return None
    mm = pc.min_max(ms)
    return int(mm["min"].as_py()), int(mm["max"].as_py())


def millis_to_iso(ms: Optional[int]) -> Optional[str]:
    """ISO-8601 UTC text with milliseconds for epoch milliseconds (None stays None; exact).

    Raises:
        EventTimeError: ``ms`` is beyond the years 1-9999 a date can hold.
    """
    if ms is None:
        return None
    if not MIN_MS <= ms <= MAX_MS:
        raise EventTimeError(f"{ms} epoch milliseconds is {describe_millis(ms)}")
    return iso_text(ms)
