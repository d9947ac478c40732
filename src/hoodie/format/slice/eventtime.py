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
from hoodie.errors import HoodieError

ArrayLike = Union[pa.Array, pa.ChunkedArray]

UNIT_KEY = _configs.EVENT_TIME_UNIT  # the key's one definition (type, default, doc) is in hoodie.configs
DEFAULT_UNIT: str = UNIT_KEY.default
# java.util.concurrent.TimeUnit names (as Hudi's hoodie.keygen.timebased.timestamp.scalar.time.unit).
UNITS = _configs.EVENT_TIME_UNITS
# Milliseconds per unit, as a float for range checks (exact conversions use integer arithmetic).
_MS_PER = {"SECONDS": 1000.0, "MILLISECONDS": 1.0, "MICROSECONDS": 1e-3, "NANOSECONDS": 1e-6}
_DECIMAL_MS_PER = {u: _decimal.Decimal(x) for u, x in
                   (("SECONDS", "1000"), ("MILLISECONDS", "1"), ("MICROSECONDS", "0.001"), ("NANOSECONDS", "0.000001"))}
# Arrow timestamp unit -> ticks per millisecond (None: seconds, which multiply).
_TICKS_PER_MS = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)
# The range of a plausible event time, and the range a date (hence an ISO string) can hold.
PLAUSIBLE_MS = ((_dt.datetime(1971, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS,
                (_dt.datetime(2200, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS)
MIN_MS = (_dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS
MAX_MS = (_dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS


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
        return _numbers_to_millis(pc.cast(arr, pa.int64()), unit, field_name)
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


def describe_millis(ms: float) -> str:
    """An epoch-millisecond value as ISO-8601 text, or why it is no date."""
    if not MIN_MS <= ms <= MAX_MS:
        return "beyond year 9999" if ms > 0 else "before year 1"
    return millis_to_iso(int(ms)) or ""


def looks_like(raw: Union[int, float], unit: str) -> Optional[str]:
    """Another unit in which ``raw`` is a plausible event time, if any (the ranges do not overlap)."""
    lo, hi = PLAUSIBLE_MS
    for u in UNITS:
        if u != unit and lo <= raw * _MS_PER[u] <= hi:
            return u
    return None


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
    text = s.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise EventTimeError(
            f"{what} {s!r} is neither {number} nor ISO-8601 (e.g. 2024-05-01T12:00:00Z)"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.timezone.utc)
    return (dt - _EPOCH) // _MS


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
    return (_EPOCH + _dt.timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
