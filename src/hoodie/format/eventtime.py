"""Event time values: converting an event-time column to epoch milliseconds.

Hudi's ``hoodie.payload.event.time.field`` feeds ``HoodieWriteStat.minEventTime``/``maxEventTime``;
Java parses the value with ``DateTimeUtils.parseDateTime`` (epoch milliseconds, or ISO-8601). We
follow that for numbers and strings, and convert real timestamp/date columns exactly.
"""

from __future__ import annotations

import datetime as _dt
from typing import Optional, Union

import pyarrow as pa
import pyarrow.compute as pc

ArrayLike = Union[pa.Array, pa.ChunkedArray]


class EventTimeError(ValueError):
    """An event-time column cannot be turned into epoch milliseconds."""


def event_time_millis(values: ArrayLike, field_name: str = "event time") -> pa.Array:
    """Epoch milliseconds (int64, nulls kept) for an event-time column.

    * timestamps: converted exactly (naive timestamps are taken as UTC);
    * dates: midnight UTC;
    * integers: taken as epoch milliseconds (as Hudi does);
    * floats: truncated epoch milliseconds;
    * strings: digits are epoch milliseconds, anything else must be ISO-8601.
    """
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    t = arr.type
    if pa.types.is_timestamp(t):
        return _floor_to_millis(pc.cast(arr, pa.int64()), t.unit)
    if pa.types.is_date(t):
        # date32 casts to int32 (days) only; widen before multiplying.
        days = pc.cast(pc.cast(arr, pa.date32()), pa.int32())
        return pc.multiply(pc.cast(days, pa.int64()), 86_400_000)
    if pa.types.is_integer(t):
        return pc.cast(arr, pa.int64())
    if pa.types.is_floating(t):
        return pc.cast(pc.floor(arr), pa.int64())
    if pa.types.is_decimal(t):
        return pc.cast(pc.floor(pc.cast(arr, pa.float64())), pa.int64())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _strings_to_millis(arr, field_name)
    raise EventTimeError(
        f"event time field {field_name!r} has type {t}; use a timestamp, date, integer "
        "(epoch milliseconds) or ISO-8601 string column"
    )


_PER_MS = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}


def _floor_to_millis(ticks: pa.Array, unit: str) -> pa.Array:
    """Epoch milliseconds of timestamp ticks, rounded down (a Spark timestamp has microseconds:
    12:00:00.000999 is in millisecond 12:00:00.000, and 1969-12-31 23:59:59.9995 in ...999)."""
    if unit == "s":
        return pc.multiply(ticks, 1000)
    per = _PER_MS[unit]
    if per == 1:
        return ticks
    q = pc.divide(ticks, per)  # integer division truncates toward zero
    negative_rest = pc.less(pc.subtract(ticks, pc.multiply(q, per)), 0)
    return pc.subtract(q, pc.cast(negative_rest, pa.int64()))


def _strings_to_millis(arr: pa.Array, field_name: str) -> pa.Array:
    is_num = pc.match_substring_regex(arr, r"^-?\d+$")
    out = []
    # Strings are rare for event times; parse per value with a clear error on the first bad one.
    for s, num in zip(arr.to_pylist(), is_num.to_pylist()):
        if s is None:
            out.append(None)
        elif num:
            out.append(int(s))
        else:
            out.append(parse_iso_millis(s, field_name))
    return pa.array(out, pa.int64())


def parse_iso_millis(s: str, what: str = "value") -> int:
    """Epoch milliseconds of an ISO-8601 date or date-time (``Z`` or offset; naive means UTC)."""
    text = s.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise EventTimeError(
            f"{what} {s!r} is neither epoch milliseconds nor ISO-8601 (e.g. 2024-05-01T12:00:00Z)"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.timezone.utc)
    return int(dt.timestamp() * 1000)


def min_max_millis(values: ArrayLike, field_name: str = "event time") -> Optional[tuple[int, int]]:
    """(min, max) epoch milliseconds of a column, or None when it has no non-null value."""
    ms = event_time_millis(values, field_name)
    if len(ms) == 0 or ms.null_count == len(ms):
        return None
    mm = pc.min_max(ms)
    return int(mm["min"].as_py()), int(mm["max"].as_py())


def millis_to_iso(ms: Optional[int]) -> Optional[str]:
    """ISO-8601 UTC text for epoch milliseconds (None stays None)."""
    if ms is None:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).isoformat().replace("+00:00", "Z")
