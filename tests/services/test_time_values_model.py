"""One generator for time values (issue 31): record-TTL and event-time fields in every type and
string form the docs accept (docs/ttl.md "Record-level TTL", docs/compaction.md event time), and the
forms they refuse, against a model; and partition values in the KEEP_BY_EVENT_TIME patterns.

Hypothesis draws an instant and a representation of it: a timestamp (each unit, naive or zoned), a
date, a number or digit string in each ``hoodie.payload.event.time.unit``, a float or decimal, ISO-8601
text (``Z``, an offset, naive, date only, with fractions), dictionary-encoded text; and the hostile
forms: compact-date digits (``yyyyMMdd`` ... ``yyyyMMddHHmmssSSS``, as text or number, which Hudi's
digit rule would read as absurd epoch times) and ``timestamp[ns]`` with digits below the microsecond.
The model is the instant's epoch milliseconds (rounded down), or the refusal. Three paths are checked:

* the conversion (:func:`~hoodie.format.slice.eventtime.event_time_millis`) equals the model or refuses;
* a write with the field as ``hoodie.payload.event.time.field`` records the model's minimum and
  maximum as ``minEventTime``/``maxEventTime`` in its write stats (one file group: all rows in one);
* end to end, a table written with the field (on MERGE_ON_READ updated once more, into a log file)
  and a record TTL run whose cutoff falls between the values keeps exactly the rows the model keeps
  (hoodie's reader); a refused form stops the write
  (when the field is the table's event-time field) or the TTL run, before anything is written;
* a partition value formatted in a drawn pattern and zone parses to the start of its period.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import shutil
import tempfile
from typing import Any, Optional

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.slice.eventtime import EventTimeError, event_time_millis
from hoodie.services.ttl.record_ttl import RecordTTLConfigError, run_record_ttl
from hoodie.services.ttl.timeformat import TimePattern, zone
from hoodie import write_arrow
from hoodie.errors import WriteError
from tests.helpers import examples

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
UNITS = {"SECONDS": 10**6, "MILLISECONDS": 10**3, "MICROSECONDS": 1, "NANOSECONDS": None}  # us per unit
ZONES = [None, "UTC", "+05:30", "America/New_York"]
COMPACT_LENGTHS = (8, 10, 12, 14, 17)  # yyyyMMdd, ..HH, ..HHmm, ..HHmmss, ..HHmmssSSS
KINDS = ["timestamp", "date", "int", "float", "decimal", "digits", "iso", "dict_iso", "compact", "compact_int", "ns_sub_us"]

# Instants between 1980 and 2150 (every unit reads them as a plausible time), at microsecond precision.
INSTANTS = st.datetimes(min_value=dt.datetime(1980, 1, 2), max_value=dt.datetime(2150, 12, 30)).map(
    lambda d: d.replace(tzinfo=dt.timezone.utc))


def _us(d: dt.datetime) -> int:
    delta = d - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10**6 + delta.microseconds


def _ms(d: dt.datetime) -> int:
    return _us(d) // 1000


def represent(kind: str, d: dt.datetime, unit: str, tz: Optional[str], variant: int) -> tuple[Any, pa.DataType, Optional[int]]:
    """(python value, arrow type, model ms or None when the form is refused)."""
    us = _us(d)
    if kind == "timestamp":
        tu = ["s", "ms", "us", "ns"][variant % 4]
        per = {"s": 10**6, "ms": 10**3, "us": 1, "ns": 1}[tu]
        ticks = us // per if tu != "ns" else us * 1000
        return ticks, pa.timestamp(tu, tz=tz), (ticks * per) // 1000 if tu != "ns" else us // 1000
    if kind == "date":
        day = d.date()
        return day, [pa.date32(), pa.date64()][variant % 2], (day - dt.date(1970, 1, 1)).days * 86_400_000
    if kind in ("int", "digits", "decimal", "float"):
        per = UNITS[unit]
        v = us * 1000 if per is None else us // per
        ms = v * 1000 if unit == "SECONDS" else (v if unit == "MILLISECONDS" else v // (10**3 if unit == "MICROSECONDS" else 10**6))
        if kind == "int":
            return v, pa.int64(), ms
        if kind == "digits":
            return str(v), pa.string(), ms
        if kind == "decimal":
            return decimal.Decimal(v), pa.decimal128(38, 0), ms
        if unit != "SECONDS" and unit != "MILLISECONDS":
            v, ms = us // 10**3, us // 10**3  # a float holds epoch ms exactly; other units lose digits
            return float(v), pa.float64(), None if unit != "MILLISECONDS" else ms
        return float(v), pa.float64(), ms
    if kind in ("iso", "dict_iso"):
        forms = [d.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), d.strftime("%Y-%m-%dT%H:%M:%SZ"),
                 d.astimezone(dt.timezone(dt.timedelta(hours=-3))).isoformat(), d.replace(tzinfo=None).isoformat(),
                 d.date().isoformat(), d.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+00:00"]
        text = forms[variant % len(forms)]
        if variant % len(forms) == 1:
            ms = _ms(d.replace(microsecond=0))
        elif variant % len(forms) == 4:
            ms = _ms(dt.datetime.combine(d.date(), dt.time(), dt.timezone.utc))
        elif variant % len(forms) == 5:
            ms = _ms(d.replace(microsecond=d.microsecond // 1000 * 1000))
        else:
            ms = _ms(d)
        return text, (pa.dictionary(pa.int32(), pa.string()) if kind == "dict_iso" else pa.string()), ms
    if kind in ("compact", "compact_int"):
        n = COMPACT_LENGTHS[variant % len(COMPACT_LENGTHS)]
        text = d.strftime("%Y%m%d%H%M%S%f")[:n] if n <= 14 else d.strftime("%Y%m%d%H%M%S") + f"{d.microsecond // 1000:03d}"
        return (text if kind == "compact" else int(text)), (pa.string() if kind == "compact" else pa.int64()), None
    if kind == "ns_sub_us":
        return us * 1000 + 1 + variant % 999, pa.timestamp("ns", tz=tz), us // 1000
    raise AssertionError(kind)


def compact_like(v: Any, unit: str) -> bool:
    """The documented refusal, as a model: digits of a compact date form (8, 10, 12, 14 or 17 digits,
    a valid date of a year 1971-2200) whose epoch reading in ``unit`` is not between 1980-01-01 and
    tomorrow."""
    s = str(v)
    fmt = {8: "%Y%m%d", 10: "%Y%m%d%H", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S", 17: "%Y%m%d%H%M%S"}.get(len(s))
    if fmt is None or not s.isdigit():
        return False
    try:
        d = dt.datetime.strptime(s[:14] if len(s) == 17 else s, fmt)
    except ValueError:
        return False
    if not 1971 <= d.year <= 2200:
        return False
    epoch_ms = int(s) * {"SECONDS": 1000, "MILLISECONDS": 1, "MICROSECONDS": 1e-3, "NANOSECONDS": 1e-6}[unit]
    tomorrow = (dt.datetime.now(dt.timezone.utc) - EPOCH).total_seconds() * 1000 + 86_400_000
    return not _ms(dt.datetime(1980, 1, 1, tzinfo=dt.timezone.utc)) <= epoch_ms <= tomorrow


def _array(values: list, typ: pa.DataType) -> pa.Array:
    if pa.types.is_dictionary(typ):
        return pa.array(values, pa.string()).dictionary_encode()
    if pa.types.is_timestamp(typ):
        return pa.array(values, pa.int64()).cast(typ)
    return pa.array(values, typ)


SAMPLE = st.tuples(st.sampled_from(KINDS), st.sampled_from(list(UNITS)), st.sampled_from(ZONES),
                   st.integers(0, 20), st.lists(INSTANTS, min_size=1, max_size=4), st.booleans())


def check_sample(kind: str, unit: str, tz: Optional[str], variant: int, instants: list[dt.datetime],
                 event_field: bool, table_type: str = "COPY_ON_WRITE") -> None:
    reps = [represent(kind, d, unit, tz, variant) for d in instants]
    typ = reps[0][1]
    values = [r[0] for r in reps] + [None]
    model = [r[2] for r in reps]
    refused = any(m is None for m in model) or (kind in ("int", "digits", "compact", "compact_int")
                                                and any(compact_like(r[0], unit) for r in reps))
    write_refused = kind == "ns_sub_us"
    arr = _array(values, typ)
    # 1. the conversion
    if refused:
        with pytest.raises(EventTimeError):
            event_time_millis(arr, "ev", unit)
    else:
        assert event_time_millis(arr, "ev", unit).to_pylist() == model + [None]
    # 2. end to end: write, then record TTL with the cutoff in the middle of the values
    d = tempfile.mkdtemp()
    try:
        path = f"{d}/t"
        opts = {"hoodie.table.name": "tv", "hoodie.datasource.write.recordkey.field": "k",
                "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "insert",
                "hoodie.datasource.write.table.type": table_type, "hoodie.payload.event.time.unit": unit}
        if event_field:
            opts["hoodie.payload.event.time.field"] = "ev"
        data = pa.table({"k": [f"k{i}" for i in range(len(values))], "ts": pa.array([1] * len(values), pa.int64()),
                         "ev": arr})
        if write_refused or (refused and event_field):
            with pytest.raises(WriteError, match="nothing was written"):
                write_arrow(path, data, opts)
            assert not os.path.exists(f"{path}/.hoodie") or not any(
                n.endswith((".commit", ".deltacommit", ".inflight", ".requested")) for n in os.listdir(f"{path}/.hoodie"))
            return
        instant = write_arrow(path, data, opts)
        known = sorted(m for m in model if m is not None)
        if event_field and known:
            # The write stats record the field's range in epoch milliseconds (what event-time
            # compaction and Hudi read): the model's minimum and maximum.
            from hoodie.format.table import HoodieTable

            t = HoodieTable(path)
            stats = [s for ss in t.timeline.commit_metadata(t.timeline.last()).partition_to_write_stats.values()
                     for s in ss]
            assert stats and {(s.min_event_time, s.max_event_time) for s in stats} == {(known[0], known[-1])}, instant
        if table_type == "MERGE_ON_READ":
            # An update of every row (same values) puts them in a log file: record TTL then decides
            # from the log's event-time range (with the field set) or reads the slice.
            write_arrow(path, data, {**opts, "hoodie.datasource.write.operation": "upsert"})
        cutoff = known[len(known) // 2] if known else 0
        ttl = {"hoodie.record.ttl.retention": "P1D", "hoodie.record.ttl.field": "ev",
               "hoodie.payload.event.time.unit": unit}
        if refused:
            before = sorted(os.listdir(f"{path}/.hoodie"))
            with pytest.raises(RecordTTLConfigError, match="nothing was written"):
                run_record_ttl(path, ttl, now_ms=cutoff + 86_400_000)
            assert sorted(os.listdir(f"{path}/.hoodie")) == before
            return
        run_record_ttl(path, ttl, now_ms=cutoff + 86_400_000)
        kept = sorted(f"k{i}" for i, m in enumerate(model + [None]) if m is None or m >= cutoff)
        assert sorted(hoodie.read_table(path).column("k").to_pylist()) == kept
    finally:
        shutil.rmtree(d, ignore_errors=True)


# Partition values of KEEP_BY_EVENT_TIME: (Java pattern, strftime, period).
PATTERNS = [("yyyy-MM-dd", "%Y-%m-%d", "day"), ("yyyyMMdd", "%Y%m%d", "day"), ("yyyy/MM/dd/HH", "%Y/%m/%d/%H", "hour"),
            ("yyyy-MM-dd'T'HH", "%Y-%m-%dT%H", "hour"), ("yyyy-MM", "%Y-%m", "month"), ("MMM-yyyy", "%b-%Y", "month"),
            ("yyyyMMddHHmmss", "%Y%m%d%H%M%S", "second"), ("yy-MM-dd", "%y-%m-%d", "day")]


def check_partition_value(instant: dt.datetime, pattern: int, tz: Optional[str]) -> None:
    java, fmt, period = PATTERNS[pattern % len(PATTERNS)]
    z = zone(tz or "UTC")
    local = instant.astimezone(z)
    if java.startswith("yy-") and not 2000 <= local.year <= 2099:
        return  # a two-digit year is read in 2000-2099
    text = local.strftime(fmt)
    start = local.replace(microsecond=0)
    if period in ("day", "hour", "month"):
        start = start.replace(minute=0, second=0)
        if period in ("day", "month"):
            start = start.replace(hour=0)
        if period == "month":
            start = start.replace(day=1)
    start = start.replace(fold=0)  # an hour repeated by a DST change reads as its first occurrence
    got = TimePattern(java).parse(text, z)
    assert got is not None and got[0] == _ms(start.astimezone(dt.timezone.utc)), (java, text, tz)


@settings(max_examples=examples(12), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(SAMPLE, st.integers(0, 7), st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]))
def test_time_values_model(sample: tuple, pattern: int, table_type: str) -> None:
    kind, unit, tz, variant, instants, event_field = sample
    check_sample(kind, unit, tz, variant, instants, event_field, table_type)
    check_partition_value(instants[0], pattern, tz)


@pytest.mark.parametrize("kind", KINDS)
def test_time_values_every_kind(kind: str) -> None:
    """Each kind once, fixed (the default run's floor under the drawn examples), both table types."""
    d = [dt.datetime(2024, 1, 15, 10, 30, 5, 123456, tzinfo=dt.timezone.utc),
         dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)]
    for i, unit in enumerate(UNITS):
        check_sample(kind, unit, ZONES[i % len(ZONES)], i, d, i % 2 == 0, ["COPY_ON_WRITE", "MERGE_ON_READ"][i % 2])
    for p in range(len(PATTERNS)):
        check_partition_value(d[p % 2], p, ZONES[p % len(ZONES)])
