"""Helpers shared by the compaction tests (no tests here): tables, writes, reads, plans."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import pyarrow as pa

import hoodie
from hoodie.format.file_group import naming as N
from hoodie import write_arrow
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable
from tests.helpers import rows_of

COLS = ["k", "part", "ts", "v"]
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


@dataclass(frozen=True)
class Setup:
    """How a test table is written."""

    ordering: bool = True
    block_format: str = "avro"
    partitioned: bool = False
    event_field: bool = True


def part_of(k: int, s: Setup) -> str:
    return f"p{k % 2}" if s.partitioned else "all"


def options(s: Setup, op: str) -> dict[str, str]:
    o = {
        "hoodie.table.name": "ct",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.operation": op,
        "hoodie.logfile.data.block.format": s.block_format,
        "hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD if s.ordering else OVERWRITE_PAYLOAD,
    }
    if s.ordering:
        o["hoodie.datasource.write.precombine.field"] = "ts"
    if s.event_field:
        o["hoodie.payload.event.time.field"] = "ts"
    return o


def batch(rows: list[tuple[int, int, int]], s: Setup) -> pa.Table:
    """Rows (key, ts, value) as a write batch; ``ts`` is the event time (epoch ms)."""
    return pa.table({
        "k": pa.array([r[0] for r in rows], pa.int64()),
        "part": [part_of(r[0], s) for r in rows],
        "ts": pa.array([r[1] for r in rows], pa.int64()),
        "v": pa.array([r[2] for r in rows], pa.int64()),
    })


def write(path: str, op: str, rows: list[tuple[int, int, int]], s: Setup = Setup(), **storage) -> str:
    """One write_arrow commit; returns its instant."""
    return write_arrow(path, batch(rows, s), options(s, op), **storage)


def rows(t: pa.Table) -> list[tuple]:
    """Sorted comparable rows of the test columns."""
    if t.num_rows == 0:
        return []
    return sorted(rows_of(t, COLS))


def snapshot(path: str, **kw) -> list[tuple]:
    return rows(hoodie.read_table(path, **kw))


def read_optimized(path: str, **kw) -> list[tuple]:
    return rows(hoodie.read_table(path, query_type="read_optimized", **kw))


def event_time_config(threshold: Optional[int] = None, exact: bool = False, **extra: str) -> dict[str, str]:
    """Options for an event-time compaction with an explicit threshold."""
    o = {
        "hoodie.compaction.strategy": "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy",
        "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER",
        "hoodie.payload.event.time.field": "ts",
    }
    if threshold is not None:
        o["hoodie.compaction.event.time.threshold"] = str(threshold)
    if exact:
        o["hoodie.compaction.event.time.exact.split"] = "true"
    o.update(extra)
    return o


UNBOUNDED = {"hoodie.compaction.strategy": "UnBounded", "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER"}


def log_names(path: str, partition: str = "all") -> list[str]:
    """Log file names in a partition, sorted in Hudi's log order."""
    names = [n for n in os.listdir(os.path.join(path, partition)) if N.is_log_file(n)]
    return sorted(names, key=lambda n: N.parse_log_file(n).sort_key())


def latest_slices(path: str):
    t = HoodieTable(path)
    v = FileSystemView(t.storage, t.timeline)
    return [sl for p in v.partitions() for sl in v.latest_file_slices(p)]
