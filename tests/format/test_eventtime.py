"""Event-time values to epoch milliseconds: timestamps of every unit round down, like Hudi's
millisecond event times, including sub-millisecond Spark timestamps and instants before 1970."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from hoodie.format.eventtime import event_time_millis

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
PER_MS = {"us": 1_000, "ns": 1_000_000, "ms": 1}


@given(st.lists(st.one_of(st.none(), st.integers(-(2**62), 2**62)), max_size=20),
       st.sampled_from(["ms", "us", "ns"]), st.sampled_from([None, "UTC", "Asia/Kolkata"]))
def test_timestamps_round_down_to_milliseconds(ticks: list, unit: str, tz: str) -> None:
    got = event_time_millis(pa.array(ticks, pa.timestamp(unit, tz=tz))).to_pylist()
    assert got == [None if t is None else t // PER_MS[unit] for t in ticks]  # Python's // floors


def test_sub_millisecond_spark_timestamp() -> None:
    """A Spark timestamp (microseconds) with sub-millisecond digits: once a failed cast."""
    ts = dt.datetime(2024, 5, 1, 12, 0, 0, 999, tzinfo=dt.timezone.utc)
    before = dt.datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=dt.timezone.utc)
    got = event_time_millis(pa.array([ts, before], pa.timestamp("us", tz="UTC"))).to_pylist()
    assert got == [int((ts - EPOCH).total_seconds()) * 1000, -1]


def test_seconds_dates_and_integers() -> None:
    assert event_time_millis(pa.array([2, -1], pa.timestamp("s"))).to_pylist() == [2000, -1000]
    for date_type in (pa.date32(), pa.date64()):  # date columns once failed to cast
        got = event_time_millis(pa.array([dt.date(1970, 1, 2), dt.date(1969, 12, 31)], date_type)).to_pylist()
        assert got == [86_400_000, -86_400_000]
    assert event_time_millis(pa.array([5, None], pa.int32())).to_pylist() == [5, None]
