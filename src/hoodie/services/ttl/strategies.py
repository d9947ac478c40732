"""Partition TTL strategies: which partitions are expired, and why.

:class:`PartitionTTLStrategy` is the extension point (RFC-65): subclasses implement
:meth:`~PartitionTTLStrategy.get_expired_partition_paths`; :meth:`~PartitionTTLStrategy.get_partition_paths_for_ttl`
gives the candidates (``partition.selected`` or every partition, narrowed by the predicate).

Built-ins compare a per-partition reference time with the retention that applies to the partition
(a rule, or the table-wide retention), in integer milliseconds:

* KEEP_BY_TIME: the newest completed instant that wrote to the partition, MOR log-only writes
  included (Hudi 1.x uses slice base instants and misses those);
* KEEP_BY_CREATION_TIME: ``commitTime`` of the partition's ``.hoodie_partition_metadata``;
* KEEP_BY_EVENT_TIME: the time the partition value denotes (start or end of its period).

"Now" is the TTL instant, in the timeline's zone (``hoodie.table.timeline.timezone``).
A partition expires when ``now - reference > retention``. Partitions without live data never expire.
On a LOCAL timeline an instant is its writer's wall-clock time, in a zone this process cannot know:
KEEP_BY_TIME and KEEP_BY_CREATION_TIME then also keep partitions less than
``hoodie.partition.ttl.local.timeline.skew`` (26 hours, every pair of zones) past their retention.
"""

from __future__ import annotations

import abc
import datetime as _dt
import importlib
import logging
from dataclasses import dataclass
from typing import Any, Optional

from hoodie.format.timeline import instant as I
from hoodie.format.file_group.fsview import FileSystemView, list_partitions
from hoodie.format.keys.common import DEFAULT_PARTITION_PATH
from hoodie.format.keys.paths import partition_values
from hoodie.format.keys.java_text import unescape_path_name
from hoodie.format.table import HoodieTable, read_partition_metadata
from hoodie.format.timeline.active import METAFOLDER
from hoodie.services.ttl.config import (
    EVENT_FORMAT, JAVA_CLASS_TYPES, KEEP_BY_CREATION_TIME, KEEP_BY_EVENT_TIME, KEEP_BY_TIME, LOCAL_SKEW, SELECTED,
    STRATEGY_CLASS, STRATEGY_TYPE, STRATEGY_TYPES, TIMELINE_TIMEZONE, TTLConfig, TTLConfigError, format_duration,
)
from hoodie.services.ttl.stats import PartitionStats, partition_last_modified
from hoodie.services.ttl.predicate import parse_predicate
from hoodie.services.ttl.timeformat import TimePattern, zone

log = logging.getLogger(__name__)

EXPIRED = "expired"
KEPT = "kept"
SKIPPED = "skipped"


@dataclass
class PartitionDecision:
    """The verdict on one candidate partition, with the numbers behind it."""

    partition: str
    status: str  # expired | kept | skipped
    reason: str
    strategy: str
    reference_ms: Optional[int] = None
    reference: Optional[str] = None  # the instant or partition value the time came from
    age_ms: Optional[int] = None
    retention_ms: Optional[int] = None
    rule: Optional[str] = None
    # Kept only because a LOCAL timeline's instants may come from writers in other zones.
    zone_uncertain: bool = False

    @property
    def expired(self) -> bool:
        """Whether the partition is (or, in a dry run, would be) deleted."""
        return self.status == EXPIRED

    def to_json(self) -> dict:
        """JSON form used by dry runs, the CLI and the TTL commit's audit record."""
        ref_time = None
        if self.reference_ms is not None:
            ref_time = _dt.datetime.fromtimestamp(self.reference_ms / 1000, _dt.timezone.utc).isoformat(
                timespec="milliseconds").replace("+00:00", "Z")
        return {
            "partition": self.partition,
            "status": self.status,
            "reason": self.reason,
            "strategy": self.strategy,
            "reference_time": ref_time,
            "reference": self.reference,
            "age": format_duration(self.age_ms),
            "age_ms": self.age_ms,
            "retention": format_duration(self.retention_ms),
            "retention_ms": self.retention_ms,
            "rule": self.rule,
        }


class PartitionTTLStrategy(abc.ABC):
    """Strategy for partition-level TTL (Hudi's ``PartitionTTLStrategy``).

    Subclasses get the table, the TTL instant (the time "now" of the run) and the parsed config
    (``config.options`` holds every raw key, for settings of their own).
    """

    def __init__(self, table: HoodieTable, instant_time: str, config: TTLConfig) -> None:
        self.table = table
        self.instant_time = instant_time
        self.config = config
        self._view: Optional[FileSystemView] = None
        self._all_partitions: Optional[list[str]] = None

    @property
    def name(self) -> str:
        """How results name this strategy."""
        return type(self).__name__

    @abc.abstractmethod
    def get_expired_partition_paths(self) -> list[str]:
        """Relative paths of the partitions this strategy considers expired."""

    def file_system_view(self) -> FileSystemView:
        """A file-system view of the table, listed lazily and shared with the TTL service."""
        if self._view is None:
            self._view = FileSystemView(self.table.storage, self.table.timeline)
        return self._view

    def all_partitions(self) -> list[str]:
        """Every partition of the table (one listing per run)."""
        if self._all_partitions is None:
            self._all_partitions = [p for p in list_partitions(self.table.storage) if p]
        return self._all_partitions

    def get_partition_paths_for_ttl(self) -> list[str]:
        """The candidates: ``partition.selected`` (which must exist) or every partition, narrowed by
        ``hoodie.partition.ttl.strategy.partition.predicate``."""
        existing = self.all_partitions()
        if self.config.selected:
            have = set(existing)
            missing = [p for p in self.config.selected if p not in have]
            if missing:
                hint = _selected_hint(missing, existing, self.table)
                raise TTLConfigError(
                    f"{SELECTED} names partition(s) that do not exist: {', '.join(missing)}{hint}")
            candidates = list(dict.fromkeys(self.config.selected))
        else:
            candidates = list(existing)
        if self.config.predicate:
            pred = parse_predicate(self.config.predicate).bind(self.table.partition_fields)
            out = []
            for p in candidates:
                try:
                    values = partition_values(p, self.table.partition_fields, self.table.hive_style,
                                              self.table.url_encode)
                except ValueError as e:
                    log.warning("partition %s skipped by the TTL predicate: %s", p, e)
                    continue
                if pred(values):
                    out.append(p)
            candidates = out
        return candidates

    def decisions(self) -> list[PartitionDecision]:
        """Per-partition verdicts. User strategies get one "expired" decision per returned path."""
        return [PartitionDecision(p, EXPIRED, f"returned by {self.name}.get_expired_partition_paths",
                                  self.name) for p in self.get_expired_partition_paths()]

    @property
    def stats(self) -> Optional[PartitionStats]:
        """Incremental last-modified stats to record in the TTL commit (KEEP_BY_TIME only)."""
        return None


def _selected_hint(missing: list[str], existing: list[str], table: HoodieTable) -> str:
    fields = table.partition_fields
    sample = ", ".join(existing[:3]) or "none"
    if table.hive_style and fields and not any("=" in m for m in missing):
        return (f" (the table is hive-style partitioned: write paths as {fields[0]}=<value>; "
                f"existing partitions include {sample})")
    return f" (existing partitions include {sample}); give exact relative partition paths"


@dataclass
class Reference:
    """A partition's reference time for a built-in strategy."""

    ms: int
    reference: str
    what: str  # e.g. "last modified", "created", "event time ends"


class BuiltinTTLStrategy(PartitionTTLStrategy):
    """Shared logic of the built-in strategies: reference times compared with the retention."""

    type_name = ""
    # Reference times are instants (KEEP_BY_TIME, KEEP_BY_CREATION_TIME), whose zone on a LOCAL
    # timeline is each writer's own.
    instant_reference = True

    def zone_margin_ms(self) -> int:
        """How far past the retention a partition must be before it expires: on a LOCAL timeline
        (instants are writers' wall-clock times, in zones this process cannot know) the configured
        ``hoodie.partition.ttl.local.timeline.skew``; otherwise 0."""
        if self.instant_reference and self.table.timeline_timezone == "LOCAL":
            return self.config.local_skew_ms
        return 0

    @property
    def name(self) -> str:
        """The strategy type name."""
        return self.type_name

    @abc.abstractmethod
    def reference_times(self, partitions: list[str]) -> dict[str, Reference]:
        """Reference time per partition; partitions left out have none (never expire)."""

    def missing_reason(self, partition: str) -> str:
        """Why a partition has no reference time."""
        return "no reference time"

    def now_ms(self) -> int:
        """The TTL instant in epoch milliseconds (timeline zone)."""
        return I.instant_to_epoch_ms(I.fix_instant_compatibility(self.instant_time),
                                     self.table.timeline_timezone)

    def get_expired_partition_paths(self) -> list[str]:
        """Expired partitions (with live data), oldest reference time first."""
        return [d.partition for d in self.decisions() if d.expired]

    def decisions(self) -> list[PartitionDecision]:
        """Verdicts for every candidate partition."""
        candidates = self.get_partition_paths_for_ttl()
        if not candidates:
            return []
        covered: list[tuple[str, int, str]] = []
        out: list[PartitionDecision] = []
        for p in candidates:
            r = self.config.retention_for(p)
            if r is None:
                out.append(PartitionDecision(p, KEPT, "no rule matches it and no table-wide retention is set",
                                             self.name))
            else:
                covered.append((p, r[0], r[1]))
        refs = self.reference_times([p for p, _, _ in covered])
        now = self.now_ms()
        margin = self.zone_margin_ms()
        view = None
        for p, retention, rule in covered:
            ref = refs.get(p)
            if ref is None:
                out.append(PartitionDecision(p, KEPT, self.missing_reason(p), self.name,
                                             retention_ms=retention, rule=rule))
                continue
            age = now - ref.ms
            d = PartitionDecision(p, KEPT, "", self.name, ref.ms, ref.reference, age, retention, rule)
            if retention < age <= retention + margin:
                d.zone_uncertain = True
                d.reason = (
                    f"{ref.what} {ref.reference}: age {format_duration(age)} > retention {format_duration(retention)} "
                    f"({rule}), but by less than {format_duration(margin)}, the time-zone uncertainty of a LOCAL "
                    f"timeline ({TIMELINE_TIMEZONE}=LOCAL: instants are each writer's wall-clock time, and a writer "
                    f"in another zone may have written this partition up to {format_duration(margin)} later than it "
                    f"looks here); kept until its age exceeds {format_duration(retention + margin)}. Create tables "
                    f"with {TIMELINE_TIMEZONE}=UTC (hoodie's default); if every writer and TTL run share one zone, "
                    f"set {LOCAL_SKEW}=PT0S")
            elif age > retention:
                view = view or self.file_system_view()
                if not view.latest_file_slices(p):
                    d.reason = f"{ref.what} {ref.reference} is older than the retention, but the partition " \
                               "holds no live data (nothing to delete)"
                else:
                    d.status = EXPIRED
                    d.reason = f"{ref.what} {ref.reference}: age {format_duration(age)} > retention " \
                               f"{format_duration(retention)} ({rule})"
                    if margin:
                        d.reason += f", beyond the {format_duration(margin)} time-zone uncertainty of a LOCAL timeline"
            else:
                d.reason = f"{ref.what} {ref.reference}: age {format_duration(age)} <= retention " \
                           f"{format_duration(retention)} ({rule})"
            out.append(d)
        return out


class KeepByTimeStrategy(BuiltinTTLStrategy):
    """Expire partitions not modified for longer than the retention (any completed write counts,
    MOR log-only writes included; table services only with count.table.services=true)."""

    type_name = KEEP_BY_TIME

    def __init__(self, table: HoodieTable, instant_time: str, config: TTLConfig) -> None:
        super().__init__(table, instant_time, config)
        self._stats: Optional[PartitionStats] = None

    @property
    def stats(self) -> Optional[PartitionStats]:
        """The stats computed by this run (None before :meth:`decisions`)."""
        return self._stats

    def reference_times(self, partitions: list[str]) -> dict[str, Reference]:
        """Newest completed instant writing to each partition (slice base instants as fallback for
        partitions whose writes are all older than the active timeline)."""
        self._stats = partition_last_modified(self.table, count_table_services=self.config.count_table_services,
                                              incremental=self.config.stats_incremental)
        tz = self.table.timeline_timezone
        out: dict[str, Reference] = {}
        view = None
        # Only an archived timeline can hide the writes of a partition that holds data.
        # (layout 1: .hoodie/archived; layout 2: the LSM timeline's .hoodie/timeline/history)
        # Listed only when a partition needs it: the archive grows with the table's age (a listing of it
        # on every run would make TTL's cost grow with the history too).
        folder = f"{METAFOLDER}/archived" if self.table.timeline_layout == 1 else f"{METAFOLDER}/timeline/history"
        archived: Optional[bool] = None
        epoch: dict[str, int] = {}  # many partitions share an instant: convert each once
        for p in partitions:
            inst = self._stats.last_modified.get(p)
            what = "last modified at"
            if inst is None:
                if archived is None:
                    archived = any(not e.is_dir for e in self.table.storage.list_dir(folder))
                if not archived:
                    continue
                view = view or self.file_system_view()
                bases = [s.base_instant for s in view.latest_file_slices(p)]
                if not bases:
                    continue
                inst = max(bases)
                what = "last modified (archived write, slice base instant)"
            ms = epoch.get(inst)
            if ms is None:
                ms = epoch[inst] = I.instant_to_epoch_ms(I.fix_instant_compatibility(inst), tz)
            out[p] = Reference(ms, inst, what)
        return out

    def missing_reason(self, partition: str) -> str:
        """KEEP_BY_TIME never expires a partition nothing was written to."""
        return "no completed write touches it and it holds no data"


class KeepByCreationTimeStrategy(BuiltinTTLStrategy):
    """Expire partitions created longer ago than the retention (``.hoodie_partition_metadata``'s
    commitTime); later writes do not extend their life."""

    type_name = KEEP_BY_CREATION_TIME

    def reference_times(self, partitions: list[str]) -> dict[str, Reference]:
        """Creation instant per partition from its metafile."""
        tz = self.table.timeline_timezone
        out: dict[str, Reference] = {}
        for p in partitions:
            meta = read_partition_metadata(self.table.storage, p)
            ct = (meta or {}).get("commitTime")
            if not ct or not ct.isdigit() or len(ct) < 14:
                continue
            out[p] = Reference(I.instant_to_epoch_ms(I.fix_instant_compatibility(ct), tz), ct, "created at")
        return out

    def missing_reason(self, partition: str) -> str:
        """Partitions without a readable metafile commitTime never expire."""
        return ".hoodie_partition_metadata has no commitTime"


class KeepByEventTimeStrategy(BuiltinTTLStrategy):
    """Expire partitions whose partition value (a date/time) is older than the retention.

    The value is read from ``segment.start.index`` on, as many path segments as the pattern has
    ('/'-separated), ``key=`` prefixes stripped for hive-style tables, parsed in
    ``event.time.timezone``. Age counts from the START or END of the period the value denotes.
    """

    type_name = KEEP_BY_EVENT_TIME
    instant_reference = False  # partition values have their own zone (event.time.timezone)

    def __init__(self, table: HoodieTable, instant_time: str, config: TTLConfig) -> None:
        super().__init__(table, instant_time, config)

        self.pattern = TimePattern(config.event_time_format)
        self.tz = zone(config.event_time_timezone)
        self._unparsed: dict[str, str] = {}
        self._default: set[str] = set()

    def value_text(self, partition: str) -> Optional[str]:
        """The time text taken from the partition path, or None when the path is too short."""
        segs = partition.split("/")
        start = self.config.event_time_segment_start
        take = segs[start:start + self.pattern.segment_count]
        if len(take) < self.pattern.segment_count:
            return None
        vals = []
        for s in take:
            if self.table.hive_style and "=" in s:
                s = s.split("=", 1)[1]
            if self.table.url_encode:
                s = unescape_path_name(s)
            vals.append(s)
        return "/".join(vals)

    def reference_times(self, partitions: list[str]) -> dict[str, Reference]:
        """Start or end of each partition's period."""
        out: dict[str, Reference] = {}
        use_end = self.config.event_time_age_from == "END"
        for p in partitions:
            segs = [x.split("=", 1)[1] if self.table.hive_style and "=" in x else x
                    for x in p.split("/")[self.config.event_time_segment_start:]]
            if DEFAULT_PARTITION_PATH in segs[:self.pattern.segment_count]:
                self._default.add(p)  # a null partition value: no event time
                continue
            text = self.value_text(p)
            if text is None:
                self._unparsed[p] = (f"the path has fewer than {self.pattern.segment_count} segment(s) from index "
                                     f"{self.config.event_time_segment_start}")
                continue
            rng = self.pattern.parse(text, self.tz)
            if rng is None:
                self._unparsed[p] = f"{text!r} does not match {EVENT_FORMAT}={self.config.event_time_format!r}"
                continue
            ms = rng[1] if use_end else rng[0]
            out[p] = Reference(ms, text, "event period ends" if use_end else "event period starts")
        if self._unparsed and len(self._unparsed) + len(self._default) == len(partitions) and not out:
            sample = "; ".join(f"{p}: {why}" for p, why in list(self._unparsed.items())[:3])
            raise TTLConfigError(
                f"KEEP_BY_EVENT_TIME parses no partition with {EVENT_FORMAT}={self.config.event_time_format!r} "
                f"(segment start index {self.config.event_time_segment_start}): {sample}. Fix the format or "
                "the start index, or switch to KEEP_BY_TIME")
        for p, why in self._unparsed.items():
            log.warning("KEEP_BY_EVENT_TIME skips partition %s: %s", p, why)
        return out

    def decisions(self) -> list[PartitionDecision]:
        """Built-in verdicts, plus the default partition when ``delete.hive.default.partition``."""
        out = super().decisions()
        for d in out:
            if d.partition in self._unparsed:
                d.status = KEPT
                d.reason = f"cannot read an event time: {self._unparsed[d.partition]}"
            elif d.partition in self._default:
                if self.config.event_time_delete_default_partition and \
                        self.file_system_view().latest_file_slices(d.partition):
                    d.status = EXPIRED
                    d.reason = "the hive default partition (null partition value) and " \
                               "event.time.delete.hive.default.partition=true"
                else:
                    d.status = KEPT
                    d.reason = "the hive default partition has no event time " \
                               "(set event.time.delete.hive.default.partition=true to expire it)"
        return out


BUILTIN: dict[str, type[BuiltinTTLStrategy]] = {
    KEEP_BY_TIME: KeepByTimeStrategy,
    KEEP_BY_CREATION_TIME: KeepByCreationTimeStrategy,
    KEEP_BY_EVENT_TIME: KeepByEventTimeStrategy,
}


def load_strategy_class(path: str) -> type[PartitionTTLStrategy]:
    """The class at ``module.Class`` (or ``module:Class``); Hudi's Java class names map to built-ins."""
    if path in JAVA_CLASS_TYPES:
        return BUILTIN[JAVA_CLASS_TYPES[path]]
    mod_name, sep, cls_name = path.replace(":", ".").rpartition(".")
    if not sep or not mod_name:
        raise TTLConfigError(f"{STRATEGY_CLASS}={path!r} is not a dotted class path (module.ClassName)")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise TTLConfigError(f"{STRATEGY_CLASS}={path!r}: cannot import {mod_name}: {e}") from None
    cls: Any = getattr(mod, cls_name, None)
    if cls is None:
        raise TTLConfigError(f"{STRATEGY_CLASS}={path!r}: module {mod_name} has no {cls_name}")
    if not (isinstance(cls, type) and issubclass(cls, PartitionTTLStrategy)):
        raise TTLConfigError(f"{STRATEGY_CLASS}={path!r} is not a subclass of "
                             "hoodie.services.ttl.PartitionTTLStrategy")
    if getattr(cls, "__abstractmethods__", None):
        raise TTLConfigError(f"{STRATEGY_CLASS}={path!r} does not implement "
                             f"{', '.join(sorted(cls.__abstractmethods__))}")
    return cls


def create_strategy(table: HoodieTable, instant_time: str, config: TTLConfig) -> PartitionTTLStrategy:
    """The strategy the config selects: the class (precedence) or the built-in type."""
    if config.strategy_class:
        cls = load_strategy_class(config.strategy_class)
    else:
        t = config.strategy_type.upper()
        if t not in BUILTIN:
            raise TTLConfigError(f"{STRATEGY_TYPE}={config.strategy_type!r} is not a TTL strategy type; use one "
                                 f"of {', '.join(STRATEGY_TYPES)}")
        cls = BUILTIN[t]
    if issubclass(cls, BuiltinTTLStrategy):
        config.require_retention()
    return cls(table, instant_time, config)


__all__ = [
    "PartitionTTLStrategy", "BuiltinTTLStrategy", "KeepByTimeStrategy", "KeepByCreationTimeStrategy",
    "KeepByEventTimeStrategy", "PartitionDecision", "Reference", "create_strategy", "load_strategy_class",
    "BUILTIN", "EXPIRED", "KEPT", "SKIPPED",
]
