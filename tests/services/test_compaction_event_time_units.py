"""Event-time column units through writes, event-time compaction and the freshness report
(issue 12, item 19): typed columns by their type, numbers by ``hoodie.payload.event.time.unit``,
numbers in another unit refused before anything is written, and ranges an older writer recorded in
another unit refused by the event-time strategy and reported (not an OverflowError) by freshness."""

from __future__ import annotations

import datetime as dt
import json
import os
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.errors import WriteError
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import (
    CompactionError, freshness, run_compaction, schedule_compaction, schedule_compaction_result,
)
from tests.services.test_compaction_support import UNBOUNDED, event_time_config, log_names

OLD = dt.datetime(2024, 5, 1, 12, 0, 0, tzinfo=dt.timezone.utc)  # the first log's event time
NEW = dt.datetime(2024, 5, 3, 12, 0, 0, tzinfo=dt.timezone.utc)  # the second log's
THRESHOLD = "2024-05-02T00:00:00Z"
OLD_MS = int((OLD - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds()) * 1000
NEW_MS = OLD_MS + 2 * 86_400_000


def _opts(op: str, unit: str | None = None) -> dict[str, str]:
    o = {"hoodie.table.name": "u", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
         "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p",
         "hoodie.datasource.write.operation": op, "hoodie.payload.event.time.field": "et"}
    if unit:
        o["hoodie.payload.event.time.unit"] = unit
    return o


def _epoch(t: dt.datetime, unit: str) -> int:
    s = int((t - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds())
    return s * {"SECONDS": 1, "MILLISECONDS": 1000, "MICROSECONDS": 10**6, "NANOSECONDS": 10**9}[unit]


# (label, arrow type, value maker, unit option, ms the value adds to the time): every typed column
# and every plain-number unit.
COLUMNS = [
    ("timestamp[s]", pa.timestamp("s"), lambda t: t.replace(tzinfo=None), None, 0),
    ("timestamp[ms, UTC]", pa.timestamp("ms", tz="UTC"), lambda t: t, None, 0),
    ("timestamp[us, Asia/Kolkata]", pa.timestamp("us", tz="Asia/Kolkata"), lambda t: t, None, 0),
    ("timestamp[ns]", pa.timestamp("ns"), lambda t: t.replace(tzinfo=None), None, 0),
    ("date32", pa.date32(), lambda t: t.date(), None, -12 * 3_600_000),  # midnight UTC
    ("int seconds", pa.int32(), lambda t: _epoch(t, "SECONDS"), "SECONDS", 0),
    ("long millis", pa.int64(), lambda t: _epoch(t, "MILLISECONDS"), None, 0),
    ("long micros", pa.int64(), lambda t: _epoch(t, "MICROSECONDS"), "MICROSECONDS", 0),
    ("long nanos", pa.int64(), lambda t: _epoch(t, "NANOSECONDS"), "nanoseconds", 0),
    ("double seconds", pa.float64(), lambda t: _epoch(t, "SECONDS") + 0.5, "SECONDS", 500),
    ("decimal seconds", pa.decimal128(14, 3), lambda t: Decimal(_epoch(t, "SECONDS")) + Decimal("0.001"), "SECONDS", 1),
    ("string seconds", pa.string(), lambda t: str(_epoch(t, "SECONDS")), "SECONDS", 0),
]


def _batch(keys: list[int], t: dt.datetime, typ: pa.DataType, make) -> pa.Table:
    return pa.table({"k": pa.array(keys, pa.int64()), "p": ["a"] * len(keys), "et": pa.array([make(t)] * len(keys), typ)})


@pytest.mark.parametrize("label,typ,make,unit,offset", COLUMNS, ids=[c[0] for c in COLUMNS])
def test_event_time_compaction_by_column_type_and_unit(tmp_path: Path, label: str, typ: pa.DataType, make,
                                                       unit: str | None, offset: int) -> None:
    """Only the log whose events are before the threshold is compacted; W is its neighbour's time.
    Seconds and dates were once read as milliseconds (January 1970: everything compacted)."""
    path = str(tmp_path / "t")
    write_arrow(path, _batch([1, 2], OLD, typ, make), _opts("insert", unit))
    write_arrow(path, _batch([1], OLD, typ, make), _opts("upsert", unit))
    write_arrow(path, _batch([2], NEW, typ, make), _opts("upsert", unit))
    cfg = event_time_config(None, **{"hoodie.compaction.event.time.threshold": THRESHOLD})
    if unit:
        cfg["hoodie.payload.event.time.unit"] = unit
    res = schedule_compaction_result(path, cfg)
    assert res.instant is not None and len(res.operations) == 1
    (op,) = res.operations
    assert len(op.to_compact) == 1 and len(op.to_remain) == 1, "only the old log is before the threshold"
    run_compaction(path, res.instant, cfg)
    f = freshness(path)
    assert f["watermark"]["status"] == "known"
    assert f["watermark"]["epoch_ms"] == NEW_MS + offset
    assert f["watermark"]["iso"] == (NEW + dt.timedelta(milliseconds=offset)).isoformat(timespec="milliseconds")[:-6] + "Z"
    assert "problem" not in f["watermark"]


@pytest.mark.parametrize("value,looks_like", [(1_714_521_600, "SECONDS"), (1_714_521_600_000_000, "MICROSECONDS"),
                                              (1_714_521_600_000_000_000, "NANOSECONDS")])
def test_numbers_in_another_unit_are_refused_before_the_table_is_created(tmp_path: Path, value: int,
                                                                          looks_like: str) -> None:
    path = str(tmp_path / "t")
    data = pa.table({"k": [1], "p": ["a"], "et": pa.array([value], pa.int64())})
    with pytest.raises(WriteError) as e:
        write_arrow(path, data, _opts("insert"))
    assert f"hoodie.payload.event.time.unit={looks_like}" in str(e.value) and "2024-05-01" in str(e.value)
    assert not os.path.exists(path), "the refused write created the table"
    write_arrow(path, data, _opts("insert", looks_like))
    assert hoodie.read_table(path).column("et").to_pylist() == [value]


def _rewrite_stats(path: str, factor: int) -> None:
    """Make the table look written by a writer that read the column in another unit: multiply the
    event-time ranges recorded in the deltacommits' write stats (log block headers stay right)."""
    tl = HoodieTable(path).timeline
    for inst in tl.completed().by_actions("deltacommit").instants:
        p = os.path.join(path, ".hoodie", inst.file_name)
        with open(p) as fh:
            meta = json.load(fh)
        for stats in meta["partitionToWriteStats"].values():
            for s in stats:
                for k in ("minEventTime", "maxEventTime"):
                    if s.get(k) is not None:
                        s[k] = s[k] * factor if factor > 0 else s[k] // -factor
        with open(p, "w") as fh:
            json.dump(meta, fh)


@pytest.mark.parametrize("factor,looks_like", [(1000, "MICROSECONDS"), (-1000, "SECONDS")])
def test_ranges_recorded_in_another_unit_are_reported_not_used(tmp_path: Path, factor: int, looks_like: str) -> None:
    """A table written before the unit option (or by Java, which reads numbers as milliseconds):
    freshness once failed with OverflowError, and the event-time strategy compacted everything."""
    path = str(tmp_path / "t")
    ms = pa.int64()
    write_arrow(path, _batch([1, 2], OLD, ms, lambda t: _epoch(t, "MILLISECONDS")), _opts("insert"))
    write_arrow(path, _batch([1], NEW, ms, lambda t: _epoch(t, "MILLISECONDS")), _opts("upsert"))
    _rewrite_stats(path, factor)
    f = freshness(path)
    problem = f["watermark"]["problem"]
    (log,) = log_names(path, "a")
    assert f"a/{log}" in problem and looks_like in problem and "hoodie.compaction.strategy=UnBounded" in problem
    with pytest.raises(CompactionError, match=f"a/{log}.*{looks_like}"):
        schedule_compaction(path, event_time_config(None, **{"hoodie.compaction.event.time.threshold": THRESHOLD}))
    assert not HoodieTable(path).timeline.pending_compactions()
    # The way out the message names: one compaction that does not read event times.
    run_compaction(path, schedule_compaction(path, UNBOUNDED))
    assert "problem" not in freshness(path)["watermark"]


def test_threshold_in_another_unit_is_refused() -> None:
    """hoodie.compaction.event.time.threshold is epoch milliseconds: seconds would be January 1970."""
    from hoodie.services.compaction.config import CompactionConfigError, parse_threshold

    with pytest.raises(CompactionConfigError, match="threshold=1714521600 .*1970-01-20.*looks like SECONDS"):
        parse_threshold("1714521600")
    assert parse_threshold("1714521600000") == OLD_MS - 12 * 3_600_000
    assert parse_threshold("2024-05-01T12:00:00Z") == OLD_MS
