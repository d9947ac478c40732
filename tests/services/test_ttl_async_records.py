"""Record TTL in the async TTL service (``hoodie.ttl.async.enabled=true`` with
``hoodie.record.ttl.retention``; docs/ttl.md, record TTL "Modes and metrics").

Writes go through the writer hook (:func:`maybe_run_async_ttl`), the service is waited on with
:meth:`TTLAsyncService.wait_idle` (no sleeps), and the table is read by hoodie and hudi-rs.
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services.ttl import TTLAsyncService, TTLConfigError, maybe_run_async_ttl, stop_async_services
from hoodie.services.ttl.record_ttl import CUTOFF_KEY, RecordTTLConfigError
from hoodie import write_arrow
from tests.hudi_rs import read_hudi_rs

DAY = 86_400_000


def _opts(table_type: str = "COPY_ON_WRITE", **extra: str) -> dict[str, str]:
    o = {
        "hoodie.table.name": "attl", "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "upsert",
        "hoodie.clean.automatic": "false", "hoodie.payload.event.time.field": "ev",
        "hoodie.ttl.async.enabled": "true", "hoodie.ttl.async.poll.interval.ms": "50",
        "hoodie.record.ttl.retention": "P5D",
    }
    o.update(extra)
    return o


def _batch(rows: dict[str, int], part: str = "p0") -> pa.Table:
    """rows: key -> age of the event time in days (the service's clock is the real one)."""
    now = int(time.time() * 1000)
    keys = sorted(rows)
    return pa.table({"k": keys, "part": [part] * len(keys), "ts": pa.array([1] * len(keys), pa.int64()),
                     "ev": pa.array([now - rows[k] * DAY for k in keys], pa.int64())})


def _keys(t: pa.Table) -> list[str]:
    return sorted(t.column("k").to_pylist()) if t.num_rows else []


def _write(path: str, rows: dict[str, int], o: dict[str, str], part: str = "p0") -> TTLAsyncService:
    """One write through the hook, then wait until the service handled it."""
    write_arrow(path, _batch(rows, part), o)
    svc = maybe_run_async_ttl(HoodieTable(path), o)
    assert svc is not None and svc.wait_idle(60)
    return svc


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_async_service_runs_record_ttl(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    o = _opts(table_type, **{"hoodie.ttl.async.max.commits": "2"})
    try:
        svc = _write(path, {"a": 30, "b": 0, "c": 10}, o)
        # One write < max.commits=2: nothing ran yet.
        assert svc.record_results == [] and _keys(hoodie.read_table(path)) == ["a", "b", "c"]
        svc = _write(path, {"d": 0, "e": 20}, o)
        assert not svc.errors and not svc.partition_ttl  # record TTL only: no partition retention set
        assert [r.expired_records for r in svc.record_results] == [3]
        assert _keys(hoodie.read_table(path)) == ["b", "d"] == _keys(read_hudi_rs(path))
        table = HoodieTable(path)
        last = table.timeline.completed_writes().last()
        assert last is not None and last.timestamp == svc.record_results[0].instant
        assert CUTOFF_KEY in table.timeline.commit_metadata(last).extra_metadata
        # One write since the record TTL commit (its own commit does not count): no second run.
        svc = _write(path, {"f": 40}, o)
        assert len(svc.record_results) == 1 and "f" in _keys(hoodie.read_table(path))
        svc = _write(path, {"g": 0}, o)
        assert [r.expired_records for r in svc.record_results] == [3, 1]
        assert _keys(hoodie.read_table(path)) == ["b", "d", "g"] == _keys(read_hudi_rs(path))
    finally:
        stop_async_services()
    assert not svc.running


def test_async_service_runs_partition_and_record_ttl(tmp_path: Path) -> None:
    """Both kinds in one service: partition TTL first, then record TTL; the partition TTL
    replacecommit does not count as a write for record TTL, nor the record TTL commit for partition TTL."""
    path = str(tmp_path / "t")
    o = _opts(**{"hoodie.ttl.async.max.commits": "1", "hoodie.partition.ttl.strategy.days.retain": "10"})
    try:
        # Partition "1970" is written at an instant of 1970 (KEEP_BY_TIME expires it).
        write_arrow(path, _batch({"old": 0}, "1970"), {**o, "hoodie.ttl.async.enabled": "false"},
                    instant="19700101000000000")
        svc = _write(path, {"a": 30, "b": 0}, o)
        assert svc.partition_ttl and svc.record_config is not None and not svc.errors
        assert [r.expired_partitions for r in svc.results] == [["1970"]]
        assert [r.expired_records for r in svc.record_results] == [1]
        assert _keys(hoodie.read_table(path)) == ["b"] == _keys(read_hudi_rs(path))
        # Nothing new was written: a poll or a spurious notification runs neither kind again.
        svc.notify_commit()
        assert svc.wait_idle(60) and not svc.due()
        assert len(svc.results) == 1 and len(svc.record_results) == 1
    finally:
        stop_async_services()


def test_async_record_ttl_settings_checked_before_the_write(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = _opts()
    # Neither partition nor record TTL configured: refused, naming partition TTL's retention keys.
    no_retention = {k: v for k, v in o.items() if k != "hoodie.record.ttl.retention"}
    with pytest.raises(TTLConfigError, match="no retention is set"):
        write_arrow(path, _batch({"a": 30}), no_retention)
    with pytest.raises(RecordTTLConfigError, match="hoodie.record.ttl.retention"):
        write_arrow(path, _batch({"a": 30}), {**o, "hoodie.record.ttl.retention": "PT1M"})
    assert not (Path(path) / ".hoodie").exists() or HoodieTable(path).timeline.completed_writes().last() is None


def test_async_record_ttl_on_an_unpartitioned_table(tmp_path: Path) -> None:
    """Record TTL alone does not need partitions (partition TTL refuses such tables)."""
    path = str(tmp_path / "t")
    o = _opts(**{"hoodie.datasource.write.partitionpath.field": "", "hoodie.ttl.async.max.commits": "1",
                 "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"})
    try:
        svc = _write(path, {"a": 30, "b": 0}, o)
        assert not svc.errors and [r.expired_records for r in svc.record_results] == [1]
        assert _keys(hoodie.read_table(path)) == ["b"] == _keys(read_hudi_rs(path))
    finally:
        stop_async_services()
