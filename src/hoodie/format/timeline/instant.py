"""Instants: times, actions, states, file names and a strictly increasing generator.

Reference: ``hudi-v6-format.md`` §3.2 (timeline layout version 1).
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
from dataclasses import dataclass
from enum import IntEnum
from typing import Iterator, Optional

# Actions (HoodieTimeline constants).
COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
RESTORE = "restore"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"
CLUSTERING = "clustering"  # timeline layout 2: a pending clustering (completes as a replacecommit)

ACTIONS = (
    COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLEAN, ROLLBACK,
    SAVEPOINT, RESTORE, INDEXING, SCHEMA_COMMIT,
)
# Actions whose completed instants change table data.
WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)

INIT_INSTANT = "00000000000000"
METADATA_BOOTSTRAP_INSTANT = "00000000000001"
FULL_BOOTSTRAP_INSTANT = "00000000000002"

INSTANT_FORMAT = "%Y%m%d%H%M%S"


class State(IntEnum):
    """Instant states, ordered as Hudi compares them."""

    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


def comparable_action(action: str) -> str:
    """Hudi groups a compaction with its completing commit (and log compaction with deltacommit)."""
    if action == COMPACTION:
        return COMMIT
    if action == LOG_COMPACTION:
        return DELTA_COMMIT
    if action == CLUSTERING:
        return REPLACE_COMMIT
    return action


@dataclass(frozen=True, order=False)
class Instant:
    """One instant on the timeline: ``<timestamp>.<action>[.<state>]``."""

    timestamp: str
    action: str
    state: State = State.COMPLETED
    # Timeline layout 2 (table versions 8/9): when a completed instant completed (its file is
    # ``<timestamp>_<completion>.<action>``). None on layout 1.
    completion: Optional[str] = None

    # -- file names -----------------------------------------------------------------------------
    @property
    def file_name(self) -> str:
        """The timeline file that holds this instant in this state."""
        if self.completion is not None and self.state == State.COMPLETED:
            return f"{self.timestamp}_{self.completion}.{self.action}"
        return instant_file_name(self.timestamp, self.action, self.state)

    @property
    def requested_file_name(self) -> str:
        """The ``.requested`` file of this instant (plans are always read from it)."""
        return instant_file_name(self.timestamp, self.action, State.REQUESTED)

    @property
    def is_completed(self) -> bool:
        """Whether the instant is completed."""
        return self.state == State.COMPLETED

    @property
    def is_requested(self) -> bool:
        """Whether the instant is only requested."""
        return self.state == State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        """Whether the instant is inflight."""
        return self.state == State.INFLIGHT

    def with_state(self, state: State) -> "Instant":
        """The same instant in another state (a completed compaction is a ``commit``)."""
        action = self.action
        if state == State.COMPLETED and action == COMPACTION:
            action = COMMIT
        elif state == State.COMPLETED and action == LOG_COMPACTION:
            action = DELTA_COMMIT
        return Instant(self.timestamp, action, state)

    def sort_key(self) -> tuple:
        """Order: timestamp, then comparable action, then state."""
        return (self.timestamp, comparable_action(self.action), int(self.state))

    def __lt__(self, other: "Instant") -> bool:
        return self.sort_key() < other.sort_key()

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.name}]"


class InstantSequence:
    """Iteration, length and truth over ``self.instants`` (the active and the archived timeline)."""

    instants: list[Instant]

    def __iter__(self) -> "Iterator[Instant]":
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def __bool__(self) -> bool:
        return bool(self.instants)


def instant_file_name(timestamp: str, action: str, state: State) -> str:
    """File name for (timestamp, action, state) under timeline layout v1."""
    if state == State.COMPLETED:
        return f"{timestamp}.{action}"
    if state == State.REQUESTED:
        return f"{timestamp}.{action}.requested"
    # COW commits' inflight file carries no action word.
    if action == COMMIT:
        return f"{timestamp}.inflight"
    return f"{timestamp}.{action}.inflight"


def parse_instant_file_name_v2(name: str) -> Optional[Instant]:
    """Parse a timeline layout 2 file name (``<t>.<action>.requested``, ``<t>.<action>.inflight``,
    ``<t>.inflight``, completed ``<t>_<completion>.<action>``); a completed name without the
    completion time is a legacy (pre-1.0) file, which Java still reads. ``clustering`` is 1.x's
    name for a pending replacecommit of clustering. None for anything else."""
    parts = name.split(".")
    if len(parts) < 2:
        return None
    ts, _, completion = parts[0].partition("_")
    if not ts.isdigit() or len(ts) < 14 or (completion and not completion.isdigit()):
        return None
    known = parts[1] in ACTIONS or parts[1] == CLUSTERING
    if len(parts) == 2:
        if parts[1] == "inflight" and not completion:
            return Instant(ts, COMMIT, State.INFLIGHT)
        if known and parts[1] not in (COMPACTION, LOG_COMPACTION, CLUSTERING):
            return Instant(ts, parts[1], State.COMPLETED, completion or None)
        return None
    if len(parts) == 3 and not completion and known:
        if parts[2] == "requested":
            return Instant(ts, parts[1], State.REQUESTED)
        if parts[2] == "inflight":
            return Instant(ts, parts[1], State.INFLIGHT)
    return None


def parse_instant_file_name(name: str) -> Optional[Instant]:
    """Parse a timeline file name; None for anything that is not an instant file."""
    parts = name.split(".")
    if not parts or not parts[0].isdigit() or len(parts[0]) < 14:
        return None
    ts = parts[0]
    if len(parts) == 2:
        if parts[1] == "inflight":
            return Instant(ts, COMMIT, State.INFLIGHT)
        if parts[1] in ACTIONS:
            if parts[1] in (COMPACTION, LOG_COMPACTION):
                return None  # never a completed-state file name
            return Instant(ts, parts[1], State.COMPLETED)
        return None
    if len(parts) == 3 and parts[1] in ACTIONS:
        if parts[2] == "requested":
            return Instant(ts, parts[1], State.REQUESTED)
        if parts[2] == "inflight":
            return Instant(ts, parts[1], State.INFLIGHT)
    return None


# -- time ------------------------------------------------------------------------------------------

def _tz(timeline_timezone: str) -> Optional[_dt.tzinfo]:
    return _dt.timezone.utc if timeline_timezone.upper() == "UTC" else None


def format_instant(dt: _dt.datetime) -> str:
    """``yyyyMMddHHmmssSSS`` for a datetime (interpreted in its own zone)."""
    return dt.strftime(INSTANT_FORMAT) + f"{dt.microsecond // 1000:03d}"


def instant_to_datetime(instant: str, timeline_timezone: str = "LOCAL") -> _dt.datetime:
    """An aware datetime for a 14- or 17-digit instant in the timeline's zone."""
    base = _dt.datetime.strptime(instant[:14], INSTANT_FORMAT)
    ms = int(instant[14:17]) if len(instant) >= 17 else 0
    base = base.replace(microsecond=ms * 1000)
    tz = _tz(timeline_timezone)
    if tz is None:
        return base.astimezone()  # naive -> local zone
    return base.replace(tzinfo=tz)


def instant_to_epoch_ms(instant: str, timeline_timezone: str = "LOCAL") -> int:
    """Epoch milliseconds of an instant in the timeline's zone."""
    return int(instant_to_datetime(instant, timeline_timezone).timestamp() * 1000)


def epoch_ms_to_instant(ms: int, timeline_timezone: str = "LOCAL") -> str:
    """The instant string for epoch milliseconds, in the timeline's zone."""
    tz = _tz(timeline_timezone)
    dt = _dt.datetime.fromtimestamp(ms / 1000.0, tz=tz or None)
    dt = dt.replace(microsecond=(ms % 1000) * 1000)
    return format_instant(dt)


def fix_instant_compatibility(instant: str) -> str:
    """Pad a 14-digit (seconds) instant with ``999`` and cut longer ones to 17 digits."""
    if len(instant) == 14:
        return instant + "999"
    return instant[:17]


class InstantGenerator:
    """Strictly increasing 17-digit instants, in UTC or local time.

    Two calls in one process never return the same instant, and every instant is later than
    ``floor`` (typically the newest instant already on the timeline), so a clock that goes
    backwards cannot produce an instant older than what the table holds.
    """

    _lock = threading.Lock()
    _last: dict[str, str] = {}

    def __init__(self, timeline_timezone: str = "LOCAL") -> None:
        self.timeline_timezone = timeline_timezone.upper()

    def now(self, floor: str | None = None) -> str:
        """A new instant greater than every instant issued here and than ``floor``."""
        with self._lock:
            tz = _tz(self.timeline_timezone)
            candidate = format_instant(_dt.datetime.now(tz))
            last = self._last.get(self.timeline_timezone, "")
            if candidate <= last:
                candidate = _next_ms(last, self.timeline_timezone)
            # Only clock-driven instants update the process-wide state: a table whose timeline
            # holds a future instant must not drag every other table into the future.
            self._last[self.timeline_timezone] = candidate
            if floor and candidate <= fix_instant_compatibility(floor):
                candidate = _next_ms(fix_instant_compatibility(floor), self.timeline_timezone)
            return candidate


def _next_ms(instant: str, tz: str) -> str:
    ms = instant_to_epoch_ms(fix_instant_compatibility(instant), tz)
    return epoch_ms_to_instant(ms + 1, tz)


def sleep_until_after(instant: str, timeline_timezone: str = "LOCAL") -> None:
    """Block until the clock has passed ``instant`` (used by tests that need distinct times)."""
    target = instant_to_epoch_ms(instant, timeline_timezone)
    while time.time() * 1000 <= target:
        time.sleep(0.001)
