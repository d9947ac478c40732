"""Partition last-modified times for KEEP_BY_TIME, computed from commit write stats, incrementally.

A partition's last modified time is the newest *completed* instant whose commit metadata has write
stats for it: commits, deltacommits (so MOR log-only writes count) and replacecommits
(insert_overwrite). Compaction, log compaction and clustering count only with
``hoodie.partition.ttl.strategy.count.table.services=true``. TTL's own delete_partition
replacecommits write no stats and never make a partition look newer.

Incremental state: every TTL replacecommit records, in ``extraMetadata``, the map partition ->
last-modified instant, the newest completed instant it covers (``upto``) and the instants that were
still pending below ``upto`` (they may complete later and must then be read). The process also keeps
the state of its last computation. The next computation reads only instants newer than ``upto`` plus
those formerly pending ones, which gives the same answer as a full scan of the active timeline.
A write that is rolled back after being read can only make a partition look newer (never older);
set ``hoodie.partition.ttl.strategy.stats.incremental=false`` to force a full scan.
"""

from __future__ import annotations

import base64
import json
import threading
import zlib
from dataclasses import dataclass, field
from typing import Iterable, Optional

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.instant import Instant
from hoodie.format.table import HoodieTable
from hoodie.format.timeline.active import Timeline

STATS_KEY = "hoodie.partition.ttl.stats"
STATS_VERSION = 1
TABLE_SERVICE_OPERATIONS = frozenset({"COMPACT", "LOG_COMPACT", "CLUSTER"})

_lock = threading.Lock()
_CACHE: dict[tuple[str, bool], "PartitionStats"] = {}


@dataclass
class PartitionStats:
    """Last-modified instant per partition, and how it was obtained."""

    last_modified: dict[str, str] = field(default_factory=dict)
    upto: Optional[str] = None
    pending: list[str] = field(default_factory=list)
    count_table_services: bool = False
    covered: int = 0  # completed write instants at or before ``upto`` that the map includes
    scanned_instants: int = 0
    incremental: bool = False
    source: str = "full scan"

    def encode(self) -> str:
        """The compact ``extraMetadata`` value (zlib + base64 of JSON: 10k partitions stay small)."""
        doc = {"v": STATS_VERSION, "upto": self.upto, "pending": sorted(self.pending),
               "cts": self.count_table_services, "n": self.covered, "lm": self.last_modified}
        raw = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode("utf-8")
        return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")

    @classmethod
    def decode(cls, value: str) -> Optional["PartitionStats"]:
        """Parse :meth:`encode` output; None when it is unreadable or of another version."""
        try:
            doc = json.loads(zlib.decompress(base64.b64decode(value)).decode("utf-8"))
        except (ValueError, zlib.error):
            return None
        if not isinstance(doc, dict) or doc.get("v") != STATS_VERSION:
            return None
        return cls(last_modified=dict(doc.get("lm") or {}), upto=doc.get("upto"),
                   pending=list(doc.get("pending") or []), count_table_services=bool(doc.get("cts")),
                   covered=int(doc.get("n") or 0))

    def copy(self) -> "PartitionStats":
        """An independent copy."""
        return PartitionStats(dict(self.last_modified), self.upto, list(self.pending),
                              self.count_table_services, self.covered, self.scanned_instants,
                              self.incremental, self.source)


def _is_table_service(tl: Timeline, inst: Instant, operation: str) -> bool:
    if operation in TABLE_SERVICE_OPERATIONS:
        return True
    if inst.action == I.COMMIT and tl.is_compaction_commit(inst):
        return True
    return inst.action == I.DELTA_COMMIT and tl.has_file(
        I.instant_file_name(inst.timestamp, I.LOG_COMPACTION, I.State.REQUESTED))


def touched_partitions(tl: Timeline, inst: Instant, count_table_services: bool) -> list[str]:
    """Partitions a completed write instant modified (its non-empty ``partitionToWriteStats``).

    Raises:
        ValueError: the instant's metadata cannot be parsed (the message names the file). A write it
            hides could make a partition look older than it is, so no guess is made.
    """
    if not tl.read_file(inst.file_name).strip():
        return []
    # Through the timeline's parser: JSON on version 6, Avro on versions 8/9 (parsing only JSON here
    # once skipped every write of a version 8/9 table, so KEEP_BY_TIME saw none of them).
    meta = tl.commit_metadata(inst)
    if not count_table_services and _is_table_service(tl, inst, str(meta.operation_type or "")):
        return []
    return [p for p, stats in (meta.partition_to_write_stats or {}).items() if stats]


def _persisted(table: HoodieTable, count_table_services: bool) -> Optional[PartitionStats]:
    """The stats recorded by the newest TTL replacecommit (with the same counting rule)."""
    tl = table.timeline
    for inst in reversed(tl.completed().by_actions(I.REPLACE_COMMIT).instants):
        meta = tl.commit_metadata(inst)
        raw = meta.extra_metadata.get(STATS_KEY)
        if not raw:
            continue
        st = PartitionStats.decode(raw)
        if st is not None and st.count_table_services == count_table_services:
            st.source = f"replacecommit {inst.timestamp}"
            return st
    return None


def _consistent(base: PartitionStats, writes: list[Instant]) -> bool:
    """Whether the completed writes at or before ``base.upto`` are exactly those ``base`` covered plus
    formerly pending ones that completed since (no rollback, no instant created out of order)."""
    upto = base.upto or ""
    pending = set(base.pending)
    at_or_before = [i for i in writes if i.timestamp <= upto]
    completed_pending = sum(1 for i in at_or_before if i.timestamp in pending)
    return len(at_or_before) == base.covered + completed_pending and any(
        i.timestamp == upto for i in at_or_before)


def _write_instants(tl: Timeline) -> list[Instant]:
    return tl.completed().by_actions(I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT).instants


def partition_last_modified(table: HoodieTable, *, count_table_services: bool = False,
                            incremental: bool = True) -> PartitionStats:
    """Last-modified instant per partition over the active timeline (see the module docstring).

    With ``incremental``, start from the newest of the in-process state and the state recorded by
    the last TTL replacecommit and read only the instants it does not cover.
    """
    tl = table.timeline
    key = (table.storage.uri(), count_table_services)
    base: Optional[PartitionStats] = None
    if incremental:
        with _lock:
            cached = _CACHE.get(key)
        base = cached.copy() if cached is not None else None
        persisted = _persisted(table, count_table_services)
        if persisted is not None and (base is None or (persisted.upto or "") > (base.upto or "")):
            base = persisted
    writes = _write_instants(tl)
    if base is not None and base.upto is not None and not _consistent(base, writes):
        base = None  # instants at or before ``upto`` appeared or vanished since: only a full scan is exact
    if base is not None and base.upto is not None:
        recheck = set(base.pending)
        todo = [i for i in writes if i.timestamp > base.upto or i.timestamp in recheck]
        out = PartitionStats(dict(base.last_modified), count_table_services=count_table_services,
                             incremental=True, source=base.source if base.source != "full scan" else "process cache")
    else:
        todo = writes
        out = PartitionStats(count_table_services=count_table_services)
    for inst in todo:
        for p in touched_partitions(tl, inst, count_table_services):
            cur = out.last_modified.get(p)
            if cur is None or inst.timestamp > cur:
                out.last_modified[p] = inst.timestamp
    out.scanned_instants = len(todo)
    out.upto = writes[-1].timestamp if writes else None
    if out.upto is not None:
        out.covered = len(writes)
        out.pending = sorted(i.timestamp for i in tl.commits().pending().instants if i.timestamp < out.upto)
    remember(table, out)
    return out


def remember(table: HoodieTable, stats: PartitionStats) -> None:
    """Keep ``stats`` as this process's incremental state for the table."""
    with _lock:
        _CACHE[(table.storage.uri(), stats.count_table_services)] = stats.copy()


def forget(table: Optional[HoodieTable] = None) -> None:
    """Drop the in-process state (of one table, or of all tables)."""
    with _lock:
        if table is None:
            _CACHE.clear()
            return
        uri = table.storage.uri()
        for k in [k for k in _CACHE if k[0] == uri]:
            del _CACHE[k]


def full_scan(table: HoodieTable, count_table_services: bool = False) -> dict[str, str]:
    """Last-modified instants from every completed write instant (no state; for checks and tests)."""
    tl = table.timeline
    out: dict[str, str] = {}
    for inst in _write_instants(tl):
        for p in touched_partitions(tl, inst, count_table_services):
            if p not in out or inst.timestamp > out[p]:
                out[p] = inst.timestamp
    return out


def partitions_in(stats: PartitionStats, partitions: Iterable[str]) -> dict[str, str]:
    """The subset of the stats for the given partitions."""
    return {p: stats.last_modified[p] for p in partitions if p in stats.last_modified}


__all__ = ["PartitionStats", "partition_last_modified", "full_scan", "touched_partitions", "remember",
           "forget", "STATS_KEY"]
