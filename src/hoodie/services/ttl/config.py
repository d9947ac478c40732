"""Partition TTL configuration: parsing the keys (defined in :mod:`hoodie.services.ttl.keys`),
retention durations and per-partition rules.

Every key is read through its typed definition (:mod:`hoodie.configs`: one rule per type, aliases
resolved in one place); setting a key and one of its aliases to different values is an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie import configs as C
from hoodie.configs import format_duration
from hoodie.services.ttl.keys import (
    ALIASES, ASYNC_ENABLED, ASYNC_MAX_COMMITS, ASYNC_POLL_MS, COUNT_TABLE_SERVICES, DAY_MS, DAYS_RETAIN,
    EVENT_AGE_FROM, EVENT_DELETE_DEFAULT, EVENT_FORMAT, EVENT_START_INDEX, EVENT_TIMEZONE, INLINE, KEEP_BY_CREATION_TIME,
    KEEP_BY_EVENT_TIME, KEEP_BY_TIME, LOCAL_SKEW, MAX_DELETE, MAX_ZONE_SKEW_MS, MIN_RETENTION_MS, PREDICATE, RETENTION,
    RULES, SELECTED, STASH_ENABLED, STASH_RETAIN_DAYS, STATS_INCREMENTAL, STRATEGY_CLASS, STRATEGY_TYPE, STRATEGY_TYPES,
    TIMELINE_TIMEZONE, TTLConfigError,
)
from hoodie.services.ttl.predicate import parse_predicate

# Hudi's Java strategy classes, so a config written for Hudi keeps working here.
JAVA_CLASS_TYPES = {
    "org.apache.hudi.table.action.ttl.strategy.KeepByTimeStrategy": KEEP_BY_TIME,
    "org.apache.hudi.table.action.ttl.strategy.KeepByTimePartitionTTLStrategy": KEEP_BY_TIME,
    "org.apache.hudi.table.action.ttl.strategy.KeepByCreationTimeStrategy": KEEP_BY_CREATION_TIME,
    "org.apache.hudi.table.action.ttl.strategy.KeepByEventTimeStrategy": KEEP_BY_EVENT_TIME,
}
JAVA_INT_MAX = C.JAVA_INT_MAX  # Hudi reads days.retain with getInt
MAX_RETENTION_MS = C.JAVA_LONG_MAX  # Hudi keeps ttlMillis in a Java long


# -- durations --------------------------------------------------------------------------------------

def parse_duration_ms(text: str, key: str = RETENTION) -> int:
    """Milliseconds of a retention: an ISO-8601 duration (``P7D``, ``PT36H``, ``P1DT12H``, ``P2W``)
    or a plain number of days (``30``, ``1.5``), by hoodie's duration rule (:mod:`hoodie.configs`).
    Exact decimal arithmetic, so large values never overflow or lose precision; ``inf``, ``nan``
    and exponents (``1e-7``) are not durations."""
    try:
        return C.parse_duration(text, key)
    except C.ConfigValueError as e:
        raise TTLConfigError(str(e)) from None


def parse_retention_ms(text: str, key: str = RETENTION) -> int:
    """A TTL retention (``hoodie.partition.ttl.strategy.retention`` or a rule's): a duration as
    :func:`parse_duration_ms` reads it, at least ``PT1H``."""
    ms = parse_duration_ms(text, key)
    _check_retention(ms, key, text)
    return ms


def _check_retention(ms: int, key: str, text: str) -> None:
    if ms < MIN_RETENTION_MS:
        what = "keeps nothing" if ms <= 0 else "is implausibly short"
        raise TTLConfigError(f"{key}={text!r} {what}; a retention must be positive and at least "
                             f"{format_duration(MIN_RETENTION_MS)} (e.g. P30D, PT36H, or a number of days)")


# -- rules ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TTLRule:
    """One retention rule: partitions matching ``pattern`` are kept for ``retention_ms``.

    Patterns are globs over the relative partition path: ``*`` and ``?`` stay inside one path segment,
    ``**`` spans segments, ``[abc]`` is a character class. A pattern without wildcards is exact.
    """

    pattern: str
    retention_ms: int
    retention_text: str
    index: int
    regex: re.Pattern = field(compare=False, repr=False)

    @property
    def specificity(self) -> tuple[int, int]:
        """(literal characters, literal segments): more of both means more specific."""
        literal = re.sub(r"\*\*|\*|\?|\[[^\]]*\]", "", self.pattern)
        segs = [s for s in self.pattern.split("/") if s and not re.search(r"[*?\[]", s)]
        return (len(literal), len(segs))

    def matches(self, partition: str) -> bool:
        """Whether the partition path matches the pattern."""
        return self.regex.fullmatch(partition) is not None

    def label(self) -> str:
        """How dry runs name the rule."""
        return f"rule #{self.index + 1} {self.pattern!r} keeps {self.retention_text}"


def _glob_regex(pattern: str) -> re.Pattern:
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            # "a/**/b" also matches "a/b"; a trailing "/**" matches everything below.
            if pattern.startswith("**/", i):
                out += "(?:.*/)?"
                i += 3
            else:
                out += ".*"
                i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                raise TTLConfigError(f"{RULES}: pattern {pattern!r} has an unclosed '['")
            body = pattern[i + 1:j]
            if body.startswith("!"):
                body = "^" + body[1:]
            out += f"[{body}]"
            i = j
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out)


def parse_rules(text: Optional[str]) -> tuple[TTLRule, ...]:
    """Parse ``hoodie.partition.ttl.rules``: a JSON list of objects with ``partition`` (alias
    ``spec``/``pattern``) and ``retention`` (alias ``days``), or ``glob:duration;glob:duration``."""
    if text is None or not str(text).strip():
        return ()
    raw = str(text).strip()
    items: list[tuple[str, str]] = []
    if raw.startswith("["):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as e:
            raise TTLConfigError(f"{RULES} is not valid JSON: {e}") from None
        for n, obj in enumerate(data):
            if not isinstance(obj, dict):
                raise TTLConfigError(f"{RULES}[{n}] must be an object like "
                                     '{"partition": "product=1/*", "retention": "P30D"}')
            pat = obj.get("partition", obj.get("spec", obj.get("pattern")))
            ret = obj.get("retention", obj.get("days"))
            if pat is None or ret is None:
                raise TTLConfigError(f"{RULES}[{n}] needs 'partition' and 'retention' "
                                     '(e.g. {"partition": "product=1/*", "retention": "P30D"})')
            items.append((str(pat), str(ret)))
    else:
        for part in raw.split(";"):
            part = part.strip()
            if not part:
                continue
            pat, sep, ret = part.rpartition(":")
            if not sep or not pat.strip():
                raise TTLConfigError(f"{RULES}: {part!r} is not 'glob:duration' (e.g. product=1/*:P30D)")
            items.append((pat.strip(), ret.strip()))
    rules = []
    for n, (pat, ret) in enumerate(items):
        key = f"{RULES} rule {pat!r}"
        ms = parse_duration_ms(ret, key)
        if ms < MIN_RETENTION_MS:
            raise TTLConfigError(f"{key} has retention {ret!r}; it must be positive and at least "
                                 f"{format_duration(MIN_RETENTION_MS)} (e.g. P30D, PT36H, or a number of days)")
        rules.append(TTLRule(pat.strip("/"), ms, format_duration(ms) or ret, n, _glob_regex(pat.strip("/"))))
    return tuple(rules)


# -- config -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TTLConfig:
    """Parsed partition TTL settings. ``options`` keeps every raw key for user strategies."""

    inline: bool = INLINE.default
    strategy_class: Optional[str] = None
    strategy_type: str = STRATEGY_TYPE.default
    retention_ms: Optional[int] = None
    retention_key: Optional[str] = None
    retention_text: Optional[str] = None
    selected: tuple[str, ...] = ()
    predicate: Optional[str] = None
    rules: tuple[TTLRule, ...] = ()
    max_delete_partitions: int = MAX_DELETE.default
    count_table_services: bool = COUNT_TABLE_SERVICES.default
    stats_incremental: bool = STATS_INCREMENTAL.default
    event_time_format: str = EVENT_FORMAT.default
    event_time_segment_start: int = EVENT_START_INDEX.default
    event_time_timezone: str = EVENT_TIMEZONE.default
    event_time_age_from: str = EVENT_AGE_FROM.default
    event_time_delete_default_partition: bool = EVENT_DELETE_DEFAULT.default
    stash_enabled: bool = STASH_ENABLED.default
    stash_retain_ms: int = STASH_RETAIN_DAYS.default
    async_enabled: bool = ASYNC_ENABLED.default
    async_max_commits: int = ASYNC_MAX_COMMITS.default
    async_poll_ms: int = ASYNC_POLL_MS.default
    local_skew_ms: int = LOCAL_SKEW.default
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None) -> "TTLConfig":
        """Parse TTL keys from write/CLI options; every error names the key and the fix."""
        o = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
        r = C.read(o, TTLConfigError)
        days = r.get(DAYS_RETAIN) if r.is_set(DAYS_RETAIN) else None
        dur = r.get(RETENTION)
        retention_ms = retention_key = retention_text = None
        if dur is not None:
            _check_retention(dur, RETENTION, r.raw(RETENTION) or "")
        if days is not None and dur is not None and days * DAY_MS != dur:
            raise TTLConfigError(f"{DAYS_RETAIN}={r.raw(DAYS_RETAIN)} and {RETENTION}={r.raw(RETENTION)} disagree; "
                                 "set only one")
        if dur is not None:
            retention_ms, retention_key, retention_text = dur, RETENTION, r.raw(RETENTION)
        elif days is not None:
            # Integer arithmetic: 10000 days must not overflow (Hudi bug #19075).
            retention_ms, retention_key, retention_text = days * DAY_MS, DAYS_RETAIN, r.raw(DAYS_RETAIN)
        predicate = r.get(PREDICATE)
        if predicate is not None:
            parse_predicate(predicate)  # syntax errors surface now, columns are checked per table
        return cls(
            inline=r.get(INLINE),
            strategy_class=r.get(STRATEGY_CLASS),
            strategy_type=r.get(STRATEGY_TYPE),
            retention_ms=retention_ms,
            retention_key=retention_key,
            retention_text=retention_text,
            selected=tuple(p.strip("/") for p in r.get(SELECTED) or () if p.strip("/")),
            predicate=predicate,
            rules=parse_rules(r.get(RULES)),
            max_delete_partitions=r.get(MAX_DELETE),
            count_table_services=r.get(COUNT_TABLE_SERVICES),
            stats_incremental=r.get(STATS_INCREMENTAL),
            event_time_format=r.get(EVENT_FORMAT),
            event_time_segment_start=r.get(EVENT_START_INDEX),
            event_time_timezone=r.get(EVENT_TIMEZONE),
            event_time_age_from=r.get(EVENT_AGE_FROM),
            event_time_delete_default_partition=r.get(EVENT_DELETE_DEFAULT),
            stash_enabled=r.get(STASH_ENABLED),
            stash_retain_ms=r.get(STASH_RETAIN_DAYS),
            async_enabled=r.get(ASYNC_ENABLED),
            async_max_commits=r.get(ASYNC_MAX_COMMITS),
            async_poll_ms=r.get(ASYNC_POLL_MS),
            local_skew_ms=r.get(LOCAL_SKEW),
            options=o,
        )

    @property
    def strategy_name(self) -> str:
        """The strategy in effect: the class path, or the built-in type."""
        return self.strategy_class or self.strategy_type

    def retention_for(self, partition: str) -> Optional[tuple[int, str]]:
        """(retention ms, which rule gave it) for a partition, or None when nothing covers it.

        The most specific matching rule wins (more literal characters, then more literal segments);
        equally specific rules resolve to the one listed first. Partitions no rule matches use the
        table-wide retention (days.retain / retention) when set.
        """
        best: Optional[TTLRule] = None
        for r in self.rules:
            if r.matches(partition) and (best is None or r.specificity > best.specificity):
                best = r
        if best is not None:
            return best.retention_ms, best.label()
        if self.retention_ms is not None:
            return self.retention_ms, f"default {self.retention_key}={self.retention_text}"
        return None

    def require_retention(self) -> None:
        """Refuse to run a built-in strategy without a positive retention (Hudi silently does nothing)."""
        if self.retention_ms is not None and self.retention_ms <= 0:
            raise TTLConfigError(
                f"partition TTL is enabled but {self.retention_key}={self.retention_text} keeps nothing; "
                f"set a positive retention, e.g. {DAYS_RETAIN}=30 or {RETENTION}=P30D "
                "(to turn TTL off, unset hoodie.partition.ttl.inline / hoodie.ttl.async.enabled instead)")
        if self.retention_ms is None and not self.rules:
            raise TTLConfigError(
                f"partition TTL is enabled but no retention is set ({DAYS_RETAIN} defaults to -1, which "
                f"would expire nothing); set {DAYS_RETAIN}=<days>, {RETENTION}=<ISO-8601 duration> "
                f"or {RULES}")


def parse_options_string(options: Optional[str]) -> dict[str, str]:
    """``"k1=v1,k2=v2"`` as Hudi's ``HoodieCLIUtils.extractOptions`` reads it (split on commas, then on
    the first ``=``). Values cannot contain commas; use the structured parameters for those."""
    out: dict[str, str] = {}
    for item in (options or "").split(","):
        item = item.strip()
        if not item:
            continue
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise TTLConfigError(f"options item {item!r} is not key=value")
        out[k.strip()] = v.strip()
    return out


__all__ = [
    "ALIASES", "STRATEGY_CLASS", "STRATEGY_TYPE", "DAYS_RETAIN", "RETENTION", "SELECTED", "PREDICATE", "RULES",
    "MAX_DELETE", "STASH_RETAIN_DAYS", "INLINE", "ASYNC_ENABLED", "ASYNC_MAX_COMMITS", "ASYNC_POLL_MS",
    "COUNT_TABLE_SERVICES", "STATS_INCREMENTAL", "EVENT_FORMAT", "EVENT_START_INDEX", "EVENT_TIMEZONE",
    "EVENT_AGE_FROM", "EVENT_DELETE_DEFAULT", "STASH_ENABLED", "JAVA_INT_MAX", "MAX_RETENTION_MS",
    "TTLConfig", "TTLConfigError", "TTLRule", "parse_duration_ms", "parse_retention_ms", "format_duration",
    "parse_rules", "MIN_RETENTION_MS",
    "parse_options_string", "STRATEGY_TYPES", "KEEP_BY_TIME", "KEEP_BY_CREATION_TIME", "KEEP_BY_EVENT_TIME",
    "DAY_MS", "JAVA_CLASS_TYPES", "LOCAL_SKEW", "MAX_ZONE_SKEW_MS", "TIMELINE_TIMEZONE",
]
