"""Partition TTL configuration: keys, defaults, retention durations and per-partition rules.

Keys follow Hudi 1.x's ``HoodieTTLConfig`` where Hudi has one; the RFC-65 spellings are accepted
as aliases (``hoodie.partition.ttl.strategy``, ``hoodie.partition.ttl.days.retain``,
``hoodie.partition.ttl.partition.selected``). Keys Hudi does not have are ours and documented in
docs/ttl.md. Setting a key and one of its aliases to different values is an error.
"""

from __future__ import annotations

import decimal
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.errors import HoodieError
from hoodie.configs import define

DAY_MS = 86_400_000


class TTLConfigError(HoodieError, ValueError):
    """Partition TTL is misconfigured; the message names the key and how to fix it."""


_GROUP = "ttl"

INLINE = "hoodie.partition.ttl.inline"
STRATEGY_CLASS = "hoodie.partition.ttl.strategy.class"
STRATEGY_TYPE = "hoodie.partition.ttl.management.strategy.type"
DAYS_RETAIN = "hoodie.partition.ttl.strategy.days.retain"
RETENTION = "hoodie.partition.ttl.strategy.retention"
SELECTED = "hoodie.partition.ttl.strategy.partition.selected"
PREDICATE = "hoodie.partition.ttl.strategy.partition.predicate"
RULES = "hoodie.partition.ttl.rules"
MAX_DELETE = "hoodie.partition.ttl.strategy.max.delete.partitions"
COUNT_TABLE_SERVICES = "hoodie.partition.ttl.strategy.count.table.services"
STATS_INCREMENTAL = "hoodie.partition.ttl.strategy.stats.incremental"
EVENT_FORMAT = "hoodie.partition.ttl.strategy.event.time.format"
EVENT_START_INDEX = "hoodie.partition.ttl.strategy.event.time.segment.start.index"
EVENT_TIMEZONE = "hoodie.partition.ttl.strategy.event.time.timezone"
EVENT_AGE_FROM = "hoodie.partition.ttl.strategy.event.time.age.from"
EVENT_DELETE_DEFAULT = "hoodie.partition.ttl.strategy.event.time.delete.hive.default.partition"
STASH_ENABLED = "hoodie.partition.ttl.stash.enabled"
STASH_RETAIN_DAYS = "hoodie.partition.ttl.stash.retain.days"
LOCAL_SKEW = "hoodie.partition.ttl.local.timeline.skew"
TIMELINE_TIMEZONE = "hoodie.table.timeline.timezone"
# UTC offsets run from -12:00 to +14:00: two writers' wall clocks can differ by up to 26 hours.
MAX_ZONE_SKEW_MS = 26 * 3_600_000
ASYNC_ENABLED = "hoodie.ttl.async.enabled"
ASYNC_MAX_COMMITS = "hoodie.ttl.async.max.commits"
ASYNC_POLL_MS = "hoodie.ttl.async.poll.interval.ms"

ALIASES: dict[str, tuple[str, ...]] = {
    STRATEGY_TYPE: ("hoodie.partition.ttl.strategy",),
    DAYS_RETAIN: ("hoodie.partition.ttl.days.retain",),
    SELECTED: ("hoodie.partition.ttl.partition.selected",),
    PREDICATE: ("hoodie.partition.ttl.predicate",),
}

KEEP_BY_TIME = "KEEP_BY_TIME"
KEEP_BY_CREATION_TIME = "KEEP_BY_CREATION_TIME"
KEEP_BY_EVENT_TIME = "KEEP_BY_EVENT_TIME"
STRATEGY_TYPES = (KEEP_BY_TIME, KEEP_BY_CREATION_TIME, KEEP_BY_EVENT_TIME)

_DEFS = [
    (INLINE, "false", "Run partition TTL right after each commit (inline table service)."),
    (STRATEGY_CLASS, None, "Dotted path of a PartitionTTLStrategy subclass (module.Class); takes "
                           "precedence over the strategy type. Hudi's Java class names of the built-in "
                           "strategies map to the built-ins."),
    (STRATEGY_TYPE, KEEP_BY_TIME, "Built-in strategy: KEEP_BY_TIME, KEEP_BY_CREATION_TIME or "
                                  "KEEP_BY_EVENT_TIME (case-insensitive)."),
    (DAYS_RETAIN, "-1", "Whole days a partition is kept (an integer, as Hudi reads it). Must be positive "
                        "when TTL runs (unless every candidate partition is covered by a rule)."),
    (RETENTION, None, "Retention as an ISO-8601 duration (P7D, PT36H, P1DT12H, P2W) or a number of "
                      "days, at least PT1H; an alternative to days.retain (set one of them)."),
    (SELECTED, None, "Comma-separated exact partition paths to consider (default: all partitions)."),
    (PREDICATE, None, "SQL-like predicate over partition columns selecting the partitions to consider, "
                      "e.g. region IN ('eu','us') AND day < '2024-01-01'."),
    (RULES, None, "Per-partition retention rules: a JSON list of {\"partition\": glob, \"retention\": "
                  "duration} or 'glob:duration;glob:duration'. The most specific matching glob wins."),
    (MAX_DELETE, "1000", "At most this many partitions are deleted by one TTL run (oldest first)."),
    (COUNT_TABLE_SERVICES, "false", "KEEP_BY_TIME: whether compaction, log compaction and clustering "
                                    "count as modifications of a partition."),
    (STATS_INCREMENTAL, "true", "KEEP_BY_TIME: reuse the partition last-modified times recorded by the "
                                "previous TTL run and read only newer instants."),
    (EVENT_FORMAT, "yyyy-MM-dd", "KEEP_BY_EVENT_TIME: Java-style date pattern of the partition value; a "
                                 "'/' spans several path segments (yyyy/MM/dd/HH)."),
    (EVENT_START_INDEX, "0", "KEEP_BY_EVENT_TIME: zero-based index of the first path segment holding the time."),
    (EVENT_TIMEZONE, "UTC", "KEEP_BY_EVENT_TIME: zone of the partition values (UTC, LOCAL, an IANA name "
                            "such as Asia/Shanghai, or an offset such as +08:00)."),
    (EVENT_AGE_FROM, "END", "KEEP_BY_EVENT_TIME: age counts from the START or the END of the partition's "
                            "period (END: a 1-day TTL keeps yesterday's daily partition all of today)."),
    (EVENT_DELETE_DEFAULT, "false", "KEEP_BY_EVENT_TIME: whether __HIVE_DEFAULT_PARTITION__ counts as expired."),
    (STASH_ENABLED, "false", "Move expired partitions' files to .hoodie/.stashedForDeletion/<instant>/ "
                             "after the TTL commit, so `hoodie ttl restore` can bring them back."),
    (STASH_RETAIN_DAYS, "7", "Days a stash is kept before clean or TTL runs delete it."),
    (LOCAL_SKEW, "PT26H", "LOCAL timelines only (hoodie.table.timeline.timezone=LOCAL, instants are writers' "
                          "wall-clock times): how far writers' time zones may be from this process's. "
                          "KEEP_BY_TIME and KEEP_BY_CREATION_TIME keep partitions whose age exceeds the retention "
                          "by no more than this (the stash retention gets the same margin). PT26H covers every "
                          "pair of zones; PT0S when every writer and TTL run share one zone."),
    (ASYNC_ENABLED, "false", "Run TTL asynchronously (a background thread) as writes happen."),
    (ASYNC_MAX_COMMITS, "4", "Async TTL runs once at least this many commits completed since the last TTL run."),
    (ASYNC_POLL_MS, "1000", "How often the async TTL service checks the timeline without being notified."),
]
for _k, _d, _doc in _DEFS:
    define(_k, _d, _doc, _GROUP, aliases=ALIASES.get(_k, ()))

# Hudi's Java strategy classes, so a config written for Hudi keeps working here.
JAVA_CLASS_TYPES = {
    "org.apache.hudi.table.action.ttl.strategy.KeepByTimeStrategy": KEEP_BY_TIME,
    "org.apache.hudi.table.action.ttl.strategy.KeepByTimePartitionTTLStrategy": KEEP_BY_TIME,
    "org.apache.hudi.table.action.ttl.strategy.KeepByCreationTimeStrategy": KEEP_BY_CREATION_TIME,
    "org.apache.hudi.table.action.ttl.strategy.KeepByEventTimeStrategy": KEEP_BY_EVENT_TIME,
}


# -- durations --------------------------------------------------------------------------------------

_ISO = re.compile(
    r"^P(?:(?P<w>[0-9]+(?:\.[0-9]+)?)W)?(?:(?P<d>[0-9]+(?:\.[0-9]+)?)D)?"
    r"(?:T(?:(?P<h>[0-9]+(?:\.[0-9]+)?)H)?(?:(?P<m>[0-9]+(?:\.[0-9]+)?)M)?(?:(?P<s>[0-9]+(?:\.[0-9]+)?)S)?)?$"
)
JAVA_INT_MAX = 2**31 - 1  # Hudi reads days.retain with getInt
MAX_RETENTION_MS = 2**63 - 1  # Hudi keeps ttlMillis in a Java long
MIN_RETENTION_MS = 3_600_000  # PT1H: anything shorter is a typo (1e-7 days is 9 ms), not a TTL
_MAX_DIGITS = 30  # longer numbers are typos; also keeps int() below Python's digit limit
_EXACT = decimal.Context(prec=200)


def _exact_ms(number: str, unit_ms: int, key: str, text: str) -> int:
    """``number`` (ASCII digits, maybe a fraction) times ``unit_ms``, exactly, rounded half-even
    to whole milliseconds; no float on the way, so no overflow and no inf/nan."""
    if len(number.replace(".", "").lstrip("0")) > _MAX_DIGITS:
        raise TTLConfigError(f"{key}={text!r} is implausibly large; give a retention such as P30D")
    if "." not in number:
        return int(number) * unit_ms
    return int((_EXACT.multiply(decimal.Decimal(number), decimal.Decimal(unit_ms)))
               .to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def parse_duration_ms(text: str, key: str = RETENTION) -> int:
    """Milliseconds of a retention: an ISO-8601 duration (``P7D``, ``PT36H``, ``P1DT12H``, ``P2W``)
    or a plain number of days (``30``, ``1.5``). Exact decimal arithmetic, so large values never
    overflow or lose precision; ``inf``, ``nan`` and exponents (``1e-7``) are not durations."""
    t = str(text).strip().upper()
    if not t:
        raise TTLConfigError(f"{key} is empty; give a duration such as P30D or a number of days")
    plain = re.fullmatch(r"(-?)([0-9]+(?:\.[0-9]+)?)", t)
    if plain:
        ms = _exact_ms(plain.group(2), DAY_MS, key, text)
        total = -ms if plain.group(1) else ms
    else:
        if re.search(r"P[0-9]+(?:\.[0-9]+)?[YM]", t.split("T")[0]):
            raise TTLConfigError(f"{key}={text!r}: years and months have no fixed length; use days (P365D, P30D)")
        m = _ISO.match(t)
        if not m or t in ("P", "PT") or t.endswith("T"):
            raise TTLConfigError(f"{key}={text!r} is not a duration; use ISO-8601 such as P30D, PT36H, "
                                 "P1DT12H, P2W, or a number of days")
        units = {"w": 7 * DAY_MS, "d": DAY_MS, "h": 3_600_000, "m": 60_000, "s": 1000}
        total = sum(_exact_ms(m.group(name), unit, key, text) for name, unit in units.items()
                    if m.group(name) is not None)
    if abs(total) > MAX_RETENTION_MS:
        raise TTLConfigError(f"{key}={text!r} is out of range (more than {MAX_RETENTION_MS} ms); "
                             "give a retention such as P30D")
    return total


def parse_retention_ms(text: str, key: str = RETENTION) -> int:
    """A TTL retention (``hoodie.partition.ttl.strategy.retention`` or a rule's): a duration as
    :func:`parse_duration_ms` reads it, at least ``PT1H``."""
    ms = parse_duration_ms(text, key)
    if ms < MIN_RETENTION_MS:
        what = "keeps nothing" if ms <= 0 else "is implausibly short"
        raise TTLConfigError(f"{key}={text!r} {what}; a retention must be positive and at least "
                             f"{format_duration(MIN_RETENTION_MS)} (e.g. P30D, PT36H, or a number of days)")
    return ms


def format_duration(ms: Optional[int]) -> Optional[str]:
    """An ISO-8601 duration for milliseconds (``P30D``, ``P1DT12H``, ``PT0.5S``)."""
    if ms is None:
        return None
    sign = "-" if ms < 0 else ""
    ms = abs(int(ms))
    days, rem = divmod(ms, DAY_MS)
    h, rem = divmod(rem, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, milli = divmod(rem, 1000)
    out = f"{sign}P"
    if days:
        out += f"{days}D"
    t = ""
    if h:
        t += f"{h}H"
    if m:
        t += f"{m}M"
    if s or milli:
        t += f"{s}.{milli:03d}S".replace(".000S", "S")
    if t:
        out += "T" + t
    return out if out not in ("P", "-P") else "PT0S"


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

def _lookup(o: Mapping[str, str], key: str) -> Optional[str]:
    found = [(k, o[k]) for k in (key, *ALIASES.get(key, ())) if k in o and str(o[k]).strip() != ""]
    if not found:
        return None
    values = {v.strip() for _, v in found}
    if len(values) > 1:
        raise TTLConfigError(f"{' and '.join(k for k, _ in found)} are both set, to different values "
                             f"({', '.join(repr(v) for _, v in found)}); keep only {key}")
    return found[0][1].strip()


def _bool(o: Mapping[str, str], key: str, default: bool) -> bool:
    v = _lookup(o, key)
    if v is None:
        return default
    if v.lower() not in ("true", "false"):
        raise TTLConfigError(f"{key}={v!r}: use true or false")
    return v.lower() == "true"


def _int(o: Mapping[str, str], key: str, default: int, minimum: int) -> int:
    v = _lookup(o, key)
    if v is None:
        return default
    try:
        n = int(v)
    except ValueError:
        raise TTLConfigError(f"{key}={v!r} is not an integer") from None
    if n < minimum:
        raise TTLConfigError(f"{key}={n} must be at least {minimum}")
    return n


@dataclass(frozen=True)
class TTLConfig:
    """Parsed partition TTL settings. ``options`` keeps every raw key for user strategies."""

    inline: bool = False
    strategy_class: Optional[str] = None
    strategy_type: str = KEEP_BY_TIME
    retention_ms: Optional[int] = None
    retention_key: Optional[str] = None
    retention_text: Optional[str] = None
    selected: tuple[str, ...] = ()
    predicate: Optional[str] = None
    rules: tuple[TTLRule, ...] = ()
    max_delete_partitions: int = 1000
    count_table_services: bool = False
    stats_incremental: bool = True
    event_time_format: str = "yyyy-MM-dd"
    event_time_segment_start: int = 0
    event_time_timezone: str = "UTC"
    event_time_age_from: str = "END"
    event_time_delete_default_partition: bool = False
    stash_enabled: bool = False
    stash_retain_ms: int = 7 * DAY_MS
    async_enabled: bool = False
    async_max_commits: int = 4
    async_poll_ms: int = 1000
    local_skew_ms: int = MAX_ZONE_SKEW_MS
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None) -> "TTLConfig":
        """Parse TTL keys from write/CLI options; every error names the key and the fix."""
        o = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
        stype = (_lookup(o, STRATEGY_TYPE) or KEEP_BY_TIME).upper()
        if stype not in STRATEGY_TYPES:
            raise TTLConfigError(f"{STRATEGY_TYPE}={stype!r} is not a TTL strategy type; use one of "
                                 f"{', '.join(STRATEGY_TYPES)} (or set {STRATEGY_CLASS})")
        days = _lookup(o, DAYS_RETAIN)
        dur = _lookup(o, RETENTION)
        retention_ms = retention_key = retention_text = None
        if days is not None and dur is not None:
            d_ms = _days_ms(days)
            if d_ms != parse_retention_ms(dur):
                raise TTLConfigError(f"{DAYS_RETAIN}={days} and {RETENTION}={dur} disagree; set only one")
        if dur is not None:
            retention_ms, retention_key, retention_text = parse_retention_ms(dur), RETENTION, dur
        elif days is not None:
            retention_ms, retention_key, retention_text = _days_ms(days), DAYS_RETAIN, days
        selected = tuple(p.strip().strip("/") for p in (_lookup(o, SELECTED) or "").split(",") if p.strip())
        age_from = (_lookup(o, EVENT_AGE_FROM) or "END").upper()
        if age_from not in ("START", "END"):
            raise TTLConfigError(f"{EVENT_AGE_FROM}={age_from!r}: use START or END")
        stash_days = _lookup(o, STASH_RETAIN_DAYS)
        stash_ms = 7 * DAY_MS if stash_days is None else parse_duration_ms(stash_days, STASH_RETAIN_DAYS)
        if stash_ms < 0:
            raise TTLConfigError(f"{STASH_RETAIN_DAYS}={stash_days} must not be negative")
        skew_text = _lookup(o, LOCAL_SKEW)
        skew_ms = MAX_ZONE_SKEW_MS if skew_text is None else parse_duration_ms(skew_text, LOCAL_SKEW)
        if not 0 <= skew_ms <= MAX_ZONE_SKEW_MS:
            raise TTLConfigError(f"{LOCAL_SKEW}={skew_text} must be between PT0S and PT26H (the largest difference "
                                 "between two time zones)")
        cfg = cls(
            inline=_bool(o, INLINE, False),
            strategy_class=_lookup(o, STRATEGY_CLASS),
            strategy_type=stype,
            retention_ms=retention_ms,
            retention_key=retention_key,
            retention_text=retention_text,
            selected=selected,
            predicate=_lookup(o, PREDICATE),
            rules=parse_rules(_lookup(o, RULES)),
            max_delete_partitions=_int(o, MAX_DELETE, 1000, 0),
            count_table_services=_bool(o, COUNT_TABLE_SERVICES, False),
            stats_incremental=_bool(o, STATS_INCREMENTAL, True),
            event_time_format=_lookup(o, EVENT_FORMAT) or "yyyy-MM-dd",
            event_time_segment_start=_int(o, EVENT_START_INDEX, 0, 0),
            event_time_timezone=_lookup(o, EVENT_TIMEZONE) or "UTC",
            event_time_age_from=age_from,
            event_time_delete_default_partition=_bool(o, EVENT_DELETE_DEFAULT, False),
            stash_enabled=_bool(o, STASH_ENABLED, False),
            stash_retain_ms=stash_ms,
            async_enabled=_bool(o, ASYNC_ENABLED, False),
            async_max_commits=_int(o, ASYNC_MAX_COMMITS, 4, 1),
            async_poll_ms=_int(o, ASYNC_POLL_MS, 1000, 10),
            local_skew_ms=skew_ms,
            options=o,
        )
        if cfg.predicate is not None:
            from hoodie.services.ttl.predicate import parse_predicate

            parse_predicate(cfg.predicate)  # syntax errors surface now, columns are checked per table
        return cfg

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


def _days_ms(days: str) -> int:
    """``days.retain`` in milliseconds. Hudi reads the key as a Java int, so only whole numbers are
    accepted (``0`` and negatives are Hudi's "disabled" and refused when TTL runs)."""
    t = days.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", t):
        raise TTLConfigError(
            f"{DAYS_RETAIN}={days!r} is not a whole number of days; Hudi reads this key as an integer "
            f"(e.g. {DAYS_RETAIN}=30). For a retention that is not whole days set {RETENTION} to an "
            f"ISO-8601 duration instead (e.g. {RETENTION}=PT36H; at least {format_duration(MIN_RETENTION_MS)})")
    if len(t.lstrip("+-").lstrip("0")) > 10 or not -JAVA_INT_MAX - 1 <= int(t) <= JAVA_INT_MAX:
        raise TTLConfigError(f"{DAYS_RETAIN}={days} is out of range: Hudi reads it as a Java int "
                             f"(at most {JAVA_INT_MAX}); give the days to keep, e.g. {DAYS_RETAIN}=30")
    return int(t) * DAY_MS  # integer arithmetic: 10000 days must not overflow (Hudi bug #19075)


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
    "TTLConfig", "TTLConfigError", "TTLRule", "parse_duration_ms", "parse_retention_ms", "format_duration",
    "parse_rules", "MIN_RETENTION_MS",
    "parse_options_string", "STRATEGY_TYPES", "KEEP_BY_TIME", "KEEP_BY_CREATION_TIME", "KEEP_BY_EVENT_TIME",
    "DAY_MS", "JAVA_CLASS_TYPES", "LOCAL_SKEW", "MAX_ZONE_SKEW_MS", "TIMELINE_TIMEZONE",
]
