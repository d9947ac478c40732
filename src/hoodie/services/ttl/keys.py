"""Partition TTL's keys (defined in :mod:`hoodie.configs.ttl`: Hudi 1.x's ``HoodieTTLConfig`` names, the
RFC-65 spellings as aliases), its error class and limits.

This module imports nothing from the rest of the TTL package, so the config parser and the predicate
parser both build on it without importing each other.
"""

from __future__ import annotations

from hoodie import configs as C
from hoodie.configs import ConfigValueError
from hoodie.configs.ttl import (
    ASYNC_ENABLED, ASYNC_MAX_COMMITS, ASYNC_POLL_MS, COUNT_TABLE_SERVICES, DAYS_RETAIN, EVENT_AGE_FROM,
    EVENT_DELETE_DEFAULT, EVENT_FORMAT, EVENT_START_INDEX, EVENT_TIMEZONE, INLINE, KEEP_BY_CREATION_TIME,
    KEEP_BY_EVENT_TIME, KEEP_BY_TIME, LOCAL_SKEW, MAX_DELETE, PREDICATE, RETENTION, RULES, SELECTED,
    STASH_ENABLED, STASH_RETAIN_DAYS, STATS_INCREMENTAL, STRATEGY_CLASS, STRATEGY_TYPE, STRATEGY_TYPES,
)

DAY_MS = C.DAY_MS
MIN_RETENTION_MS = 3_600_000  # PT1H: anything shorter is a typo (1e-7 days is 9 ms), not a TTL
# UTC offsets run from -12:00 to +14:00: two writers' wall clocks can differ by up to 26 hours.
MAX_ZONE_SKEW_MS = 26 * 3_600_000


class TTLConfigError(ConfigValueError):
    """Partition TTL is misconfigured; the message names the key and how to fix it."""


TIMELINE_TIMEZONE = C.TIMELINE_TIMEZONE

# Older spellings, by key (each property carries its own; kept for callers that list them).
ALIASES: dict[str, tuple[str, ...]] = {p.key: p.aliases for p in (STRATEGY_TYPE, DAYS_RETAIN, SELECTED, PREDICATE)}

__all__ = [
    "TTLConfigError", "INLINE", "STRATEGY_CLASS", "STRATEGY_TYPE", "DAYS_RETAIN", "RETENTION", "SELECTED", "PREDICATE",
    "RULES", "MAX_DELETE", "COUNT_TABLE_SERVICES", "STATS_INCREMENTAL", "EVENT_FORMAT", "EVENT_START_INDEX",
    "EVENT_TIMEZONE", "EVENT_AGE_FROM", "EVENT_DELETE_DEFAULT", "STASH_ENABLED", "STASH_RETAIN_DAYS", "LOCAL_SKEW",
    "ASYNC_ENABLED", "ASYNC_MAX_COMMITS", "ASYNC_POLL_MS", "TIMELINE_TIMEZONE", "ALIASES", "KEEP_BY_TIME",
    "KEEP_BY_CREATION_TIME", "KEEP_BY_EVENT_TIME", "STRATEGY_TYPES", "DAY_MS", "MIN_RETENTION_MS", "MAX_ZONE_SKEW_MS",
]
