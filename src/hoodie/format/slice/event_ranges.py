"""Event-time ranges of log files, without decoding records: what event-time compaction plans and its
watermark read, and what record TTL reads to find the log files that may hold an expired record (both
from here: the ranges are a fact of the files and the timeline, not of either service).

Sources, cheapest first (docs/compaction.md "Event time"):

1. the timeline: ``HoodieWriteStat.minEventTime``/``maxEventTime`` of completed deltacommits,
   keyed by the stat's ``path`` (one stat per log file for our writers);
2. block headers (``LogBlock.event_time_range``): read when no stat covers the file, when a stat
   lacks the range, or when the file holds deletes (a stat's range may cover only the data block
   of a file whose delete block has no range).

A link or copy made by a partial compaction has the range of its target. A data or delete block
without a range makes the file's range **unknown**: planning treats its minimum as -infinity (it
must be compacted) and the watermark cannot be stated. A file with no committed data or delete
block (e.g. only a rollback command block) has no event time and constrains nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import links as LK
from hoodie.format.file_group import naming as N
from hoodie.format.timeline.commit_metadata import WriteStat
from hoodie.format.slice.eventtime import (
    DEFAULT_UNIT, UNIT_KEY, describe_millis, implausible, looks_like, to_millis_float,
)
from hoodie.format.table import HoodieTable
from hoodie.format.log.logformat import BlockType, read_log_file


@dataclass(frozen=True)
class LogEventTime:
    """The event-time range of one log file's committed data and delete blocks."""

    min_ms: Optional[int]
    max_ms: Optional[int]
    has_data: bool
    source: str = "stats"  # "stats" | "headers"

    @property
    def known(self) -> bool:
        """Whether the file holds data and its whole range is known."""
        return self.has_data and self.min_ms is not None

    @property
    def unknown(self) -> bool:
        """Whether some block's event time is unknown (the file could hold any event time)."""
        return self.has_data and self.min_ms is None

    @property
    def planning_min(self) -> float:
        """Minimum for threshold decisions: -inf when unknown, +inf when the file has no data."""
        if not self.has_data:
            return math.inf
        return -math.inf if self.min_ms is None else float(self.min_ms)


EMPTY = LogEventTime(None, None, False)


class EventTimeIndex:
    """Event-time ranges of a table's log files: write stats first, block headers as fallback.

    ``assume_completed`` names instants to treat as completed when reading headers (a compaction
    computing the watermark it will publish counts its own split-off blocks). ``extra_links``
    maps link paths (relative) to target paths for links not yet recorded by a completed commit.
    """

    def __init__(self, table: HoodieTable, *, assume_completed: Iterable[str] = (),
                 extra_links: Optional[Mapping[str, str]] = None) -> None:
        self.table = table
        tl = table.timeline
        self._completed = {i.timestamp for i in tl.completed().commits().instants} | set(assume_completed)
        first = tl.first()
        self._start = first.timestamp if first else None
        self._stats: dict[str, list[WriteStat]] = {}
        for inst in tl.completed().by_actions(I.DELTA_COMMIT).instants:
            for s in tl.commit_metadata(inst).all_write_stats():
                name = s.file_name
                if name and N.is_log_file(name):
                    self._stats.setdefault(s.path, []).append(s)
        self._links: dict[str, str] = {l.link_path: l.target_path for l in LK.all_links(tl)}
        self._links.update(extra_links or {})
        self._cache: dict[str, LogEventTime] = {}
        self.header_reads = 0

    def _from_stats(self, path: str) -> Optional[LogEventTime]:
        stats = self._stats.get(path)
        if not stats:
            return None
        lo: Optional[int] = None
        hi: Optional[int] = None
        has_data = False
        for s in stats:
            if s.num_deletes:
                return None  # the delete block's range may be missing from the stat: ask the headers
            if s.num_writes <= 0 and s.min_event_time is None:
                continue
            has_data = True
            if s.min_event_time is None or s.max_event_time is None:
                return None
            lo = s.min_event_time if lo is None else min(lo, s.min_event_time)
            hi = s.max_event_time if hi is None else max(hi, s.max_event_time)
        if not has_data:
            return None
        return LogEventTime(int(lo), int(hi), True, "stats")  # type: ignore[arg-type]

    def _committed(self, instant: Optional[str]) -> bool:
        if instant is None:
            return False
        if instant in self._completed:
            return True
        # Older than the active timeline: archived, hence completed.
        return self._start is not None and instant < self._start

    def _from_headers(self, path: str) -> LogEventTime:
        self.header_reads += 1
        lo: Optional[int] = None
        hi: Optional[int] = None
        has_data = False
        for block in read_log_file(self.table.storage, path, warn=False):
            if block.block_type not in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE):
                continue
            if not self._committed(block.instant_time):
                continue
            has_data = True
            rng = block.event_time_range
            if rng is None:
                return LogEventTime(None, None, True, "headers")
            lo = rng[0] if lo is None else min(lo, rng[0])
            hi = rng[1] if hi is None else max(hi, rng[1])
        if not has_data:
            return LogEventTime(None, None, False, "headers")
        return LogEventTime(lo, hi, True, "headers")

    def for_path(self, path: str) -> LogEventTime:
        """The range of the log file at ``path`` (relative to the base path)."""
        hit = self._cache.get(path)
        if hit is not None:
            return hit
        p = path
        seen = {p}
        result: Optional[LogEventTime] = None
        while True:
            result = self._from_stats(p)
            if result is not None:
                break
            nxt = self._links.get(p)
            if nxt is None or nxt in seen:
                break
            seen.add(nxt)
            p = nxt
        if result is None:
            result = self._from_headers(path)
        self._cache[path] = result
        return result

    def for_log(self, log) -> LogEventTime:
        """The range of a :class:`~hoodie.format.file_group.fsview.LogFile`."""
        return self.for_path(log.path)


def unit_problem(path: str, r: LogEventTime) -> Optional[str]:
    """Why the recorded range of log file ``path`` cannot be epoch milliseconds (None when it can).

    Ranges are recorded in milliseconds; a range that is a 1971-2200 time only in another unit
    was written from a column in that unit read as milliseconds (an older hoodie, or Java Hudi,
    which reads every number as milliseconds). Planning by it would compact everything.
    """
    if not r.known:
        return None
    for v in (int(r.min_ms), int(r.max_ms)):  # type: ignore[arg-type]
        if implausible(v, DEFAULT_UNIT) is None:
            continue
        other = looks_like(v, DEFAULT_UNIT)
        seen = f"a {other} value ({describe_millis(to_millis_float(v, other))})" if other else "no epoch time in any unit"
        return (f"log file {path} records event time {v} ms ({describe_millis(v)}), which is {seen}: it was "
                "written from an event-time column in another unit read as milliseconds. Compact it once with a "
                "strategy that does not read event times (e.g. --set hoodie.compaction.strategy=UnBounded), and "
                f"write event times in milliseconds or set {UNIT_KEY} to the column's unit")
    return None


def min_event_time(ranges: Iterable[LogEventTime]) -> tuple[Optional[int], str]:
    """(min, status) over ranges: status ``known`` (min is set), ``unknown`` (some range is unknown)
    or ``complete`` (no data at all)."""
    lo: Optional[int] = None
    any_data = False
    for r in ranges:
        if not r.has_data:
            continue
        any_data = True
        if r.min_ms is None:
            return None, "unknown"
        lo = r.min_ms if lo is None else min(lo, r.min_ms)
    if not any_data:
        return None, "complete"
    return lo, "known"


__all__ = ["LogEventTime", "EventTimeIndex", "EMPTY", "min_event_time", "unit_problem"]
