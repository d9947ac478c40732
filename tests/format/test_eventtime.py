"""Event-time values to epoch milliseconds (issue 12, item 19).

Typed columns (timestamps of every unit and zone, dates) convert by their type and round down, like
Hudi's millisecond event times, including sub-millisecond Spark timestamps and instants before 1970.
Plain numbers (ints, floats, decimals, digit strings) are read in ``hoodie.payload.event.time.unit``;
a number that is a 1971-2200 time only in another unit is refused naming that unit, and no value
beyond year 9999 gets through (microseconds once overflowed the freshness report).
"""

from __future__ import annotations

import datetime as dt
import decimal
from fractions import Fraction

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.slice.eventtime import (
    MAX_MS, MIN_MS, PLAUSIBLE_MS, UNIT_KEY, UNITS, EventTimeError, event_time_millis, millis_to_iso,
    parse_iso_millis,
)
from tests.helpers import examples

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
TICKS_PER_MS = {"s": Fraction(1, 1000), "ms": Fraction(1), "us": Fraction(1000), "ns": Fraction(1_000_000)}
UNIT_PER_MS = {"SECONDS": Fraction(1, 1000), "MILLISECONDS": Fraction(1), "MICROSECONDS": Fraction(1000),
               "NANOSECONDS": Fraction(1_000_000)}
ZONES = [None, "UTC", "Asia/Kolkata", "America/St_Johns"]


def _floor_ms(raw: object, per_ms: Fraction) -> int:
    """Exact epoch milliseconds (rounded down) of ``raw`` ticks/units."""
    return int((Fraction(raw) / per_ms).__floor__())


# -- typed columns: by their type, every unit and zone ------------------------------------------

@settings(max_examples=examples(80), deadline=None)
@given(st.sampled_from(["s", "ms", "us", "ns"]), st.sampled_from(ZONES),
       st.lists(st.one_of(st.none(), st.integers(-(2**63) + 1, 2**63 - 1)), max_size=12),
       st.sampled_from(UNITS))
def test_timestamps_convert_by_their_type(unit: str, tz: str, ticks: list, configured: str) -> None:
    """The unit option never applies to a timestamp; values beyond year 9999 are refused."""
    arr = pa.array(ticks, pa.timestamp(unit, tz=tz))
    expected = [None if t is None else _floor_ms(t, TICKS_PER_MS[unit]) for t in ticks]
    if all(e is None or MIN_MS <= e <= MAX_MS for e in expected):
        assert event_time_millis(arr, "ts", configured).to_pylist() == expected
    else:
        with pytest.raises(EventTimeError, match="'ts'.*year"):
            event_time_millis(arr, "ts", configured)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.one_of(st.none(), st.dates()), max_size=8), st.sampled_from([pa.date32(), pa.date64()]),
       st.sampled_from(UNITS))
def test_dates_are_midnight_utc(days: list, date_type: pa.DataType, configured: str) -> None:
    got = event_time_millis(pa.array(days, date_type), "d", configured).to_pylist()
    assert got == [None if d is None else (d - dt.date(1970, 1, 1)).days * 86_400_000 for d in days]


# -- plain numbers: the unit option, and a refusal naming the unit they look like ----------------

_lo, _hi = PLAUSIBLE_MS


def _plausible(unit: str) -> st.SearchStrategy[int]:
    """Integers that are a 1971-2200 time in ``unit``."""
    per = UNIT_PER_MS[unit]
    return st.integers(int(Fraction(_lo) * per) + 1, int(Fraction(_hi) * per) - 1)


def _column(values: list, kind: str) -> pa.Array:
    if kind == "int64":
        return pa.array(values, pa.int64())
    if kind == "int32":
        return pa.array(values, pa.int32())
    if kind == "double":
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if kind == "decimal":
        return pa.array([None if v is None else decimal.Decimal(v) + decimal.Decimal("0.75") for v in values],
                        pa.decimal128(38, 2))
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def _exact(v: object, kind: str, unit: str) -> int:
    if kind == "double":
        return _floor_ms(float(v), UNIT_PER_MS[unit])  # the float as stored
    if kind == "decimal":
        return _floor_ms(Fraction(v) + Fraction(3, 4), UNIT_PER_MS[unit])
    return _floor_ms(v, UNIT_PER_MS[unit])


@settings(max_examples=examples(120), deadline=None)
@given(st.data(), st.sampled_from(UNITS), st.sampled_from(UNITS),
       st.sampled_from(["int64", "int32", "double", "decimal", "string"]))
def test_numbers_are_read_in_the_configured_unit(data: st.DataObject, stored: str, configured: str, kind: str) -> None:
    values = data.draw(st.lists(st.one_of(st.none(), _plausible(stored)), min_size=1, max_size=8))
    if kind == "int32" and any(v is not None and not -(2**31) <= v < 2**31 for v in values):
        kind = "int64"
    arr = _column(values, kind)
    real = [v for v in values if v is not None]
    if configured == stored:
        got = event_time_millis(arr, "ts", configured).to_pylist()
        want = [None if v is None else _exact(v, kind, configured) for v in values]
        if kind == "double" and stored in ("MICROSECONDS", "NANOSECONDS"):
            # A float division: exact up to one millisecond at most (floats this large are rare).
            assert all((g is None and w is None) or abs(g - w) <= 1 for g, w in zip(got, want))
        else:
            assert got == want
    elif real:
        with pytest.raises(EventTimeError) as e:
            event_time_millis(arr, "ts", configured)
        assert f"{UNIT_KEY}={stored}" in str(e.value) and "'ts'" in str(e.value)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6), st.sampled_from(UNITS))
def test_no_number_beyond_year_9999_gets_through(values: list, configured: str) -> None:
    """Whatever is accepted is a real date (the freshness report renders it); nothing overflows."""
    try:
        got = event_time_millis(pa.array(values, pa.int64()), "ts", configured).to_pylist()
    except EventTimeError as e:
        assert "'ts'" in str(e) and ("year" in str(e) or UNIT_KEY in str(e))
        return
    for g in got:
        assert MIN_MS <= g <= MAX_MS
        assert millis_to_iso(g)


def test_small_numbers_fit_no_unit_and_are_taken_as_they_are() -> None:
    """Test tables (and counters) use tiny event times: not a time in any unit, so not refused."""
    assert event_time_millis(pa.array([5, -3, 0], pa.int64()), "ts").to_pylist() == [5, -3, 0]
    assert event_time_millis(pa.array([5], pa.int64()), "ts", "SECONDS").to_pylist() == [5000]


def test_sub_millisecond_spark_timestamp() -> None:
    """A Spark timestamp (microseconds) with sub-millisecond digits: once a failed cast."""
    ts = dt.datetime(2024, 5, 1, 12, 0, 0, 999, tzinfo=dt.timezone.utc)
    before = dt.datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=dt.timezone.utc)
    got = event_time_millis(pa.array([ts, before], pa.timestamp("us", tz="UTC"))).to_pylist()
    assert got == [int((ts - EPOCH).total_seconds()) * 1000, -1]


def test_epoch_microseconds_and_seconds_columns_are_refused_naming_the_unit() -> None:
    """Issue 12 item 19: a long column of epoch microseconds made freshness fail with OverflowError,
    and one of epoch seconds was read as January 1970."""
    with pytest.raises(EventTimeError, match=f"as MICROSECONDS it is 2024-05-01.*{UNIT_KEY}=MICROSECONDS"):
        event_time_millis(pa.array([1_714_521_600_000_000], pa.int64()), "ts")
    with pytest.raises(EventTimeError, match=f"as SECONDS it is 2024-05-01.*{UNIT_KEY}=SECONDS"):
        event_time_millis(pa.array([1_714_521_600], pa.int64()), "ts")
    assert event_time_millis(pa.array([1_714_521_600], pa.int64()), "ts", "SECONDS").to_pylist() == [1_714_521_600_000]
    with pytest.raises(EventTimeError, match="is not a unit"):
        event_time_millis(pa.array([1], pa.int64()), "ts", "HOURS")


def test_iso_strings_are_exact() -> None:
    """Float arithmetic once turned .001 into .000 (timestamp() * 1000 truncated)."""
    for ms in (1_714_564_800_001, -1, 1_714_564_800_999, 253_402_300_799_999):
        assert parse_iso_millis(millis_to_iso(ms)) == ms
    assert parse_iso_millis("1969-12-31T23:59:59.9995Z") == -1

