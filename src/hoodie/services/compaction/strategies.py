"""Compaction strategies: which partitions, which file slices, and which log files a plan compacts.

Hudi's strategies (``org.apache.hudi.table.action.compact.strategy``, table-services-upstream.md
§2.4) are re-implemented with the same semantics, plus the event-time strategy of RFC "support
EventTimeBasedCompactionStrategy". ``hoodie.compaction.strategy`` takes a Java class name, our short
name, a dotted Python path to a :class:`CompactionStrategy` subclass, or a comma-separated list of
those (composite: applied one after another).

The planner calls, in order:

1. :meth:`CompactionStrategy.filter_partition_paths` on all partitions;
2. per candidate slice, :meth:`CompactionStrategy.filter_log_files` (the RFC's ``filterLogFiles``),
   then widens the selection to a log-order prefix (see ``partial.prefix_closure``);
3. :meth:`CompactionStrategy.capture_metrics` on the compacted files;
4. :meth:`CompactionStrategy.order_and_filter` on the resulting operations.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Optional, Sequence

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.compaction_plan import CompactionPlan
from hoodie.format.file_group.fsview import FileSlice, LogFile

from hoodie.services.compaction.config import CompactionConfig, CompactionConfigError, CompactionError
from hoodie.format.slice.event_ranges import unit_problem

if TYPE_CHECKING:  # pragma: no cover
    from hoodie.format.table import HoodieTable
    from hoodie.format.slice.event_ranges import EventTimeIndex

JAVA_PACKAGE = "org.apache.hudi.table.action.compact.strategy."
MIB = 1024 * 1024

# Metric names of Hudi's CompactionStrategy / FileSliceMetricUtils.
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
TOTAL_IO_MB = "TOTAL_IO_MB"


@dataclass
class PlanningContext:
    """What a strategy may consult while planning one compaction instant."""

    table: "HoodieTable"
    config: CompactionConfig
    instant: str
    event_times: "EventTimeIndex"
    today: _dt.date = field(default_factory=_dt.date.today)

    @property
    def instant_ms(self) -> int:
        """The compaction instant as epoch milliseconds (timeline zone)."""
        return I.instant_to_epoch_ms(self.instant, self.table.timeline_timezone)


@dataclass
class CandidateOperation:
    """One file slice the plan would compact: the compacted prefix, the remaining logs, metrics."""

    file_slice: FileSlice
    to_compact: list[LogFile]
    to_remain: list[LogFile]
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def partition(self) -> str:
        """Partition path of the slice."""
        return self.file_slice.partition

    @property
    def file_id(self) -> str:
        """File id of the slice."""
        return self.file_slice.file_id

    @property
    def is_partial(self) -> bool:
        """Whether some log files remain after this operation."""
        return bool(self.to_remain)


class CompactionStrategy:
    """Base strategy: every partition, every log file, every operation (Hudi's defaults)."""

    java_class: ClassVar[Optional[str]] = None
    short_name: ClassVar[str] = "Base"

    def __init__(self, config: CompactionConfig) -> None:
        self.config = config

    @property
    def name(self) -> str:
        """The name recorded in plans (the Java class name when there is one)."""
        return self.java_class or f"{type(self).__module__}.{type(self).__qualname__}"

    def capture_metrics(self, file_slice: FileSlice, logs: Sequence[LogFile]) -> dict[str, float]:
        """Hudi's operation metrics, over the log files being compacted (integer MiB division, as
        ``FileSliceMetricUtils`` does)."""
        log_size = sum(lf.size for lf in logs)
        base_size = file_slice.base_file.size if file_slice.base_file else 0
        io_read = (base_size + log_size) // MIB
        io_write = (base_size if file_slice.base_file else self.config.parquet_max_file_size) // MIB
        return {
            TOTAL_LOG_FILES_SIZE: float(log_size),
            TOTAL_LOG_FILES: float(len(logs)),
            TOTAL_IO_READ_MB: float(io_read),
            TOTAL_IO_WRITE_MB: float(io_write),
            TOTAL_IO_MB: float(io_read + io_write),
        }

    def filter_partition_paths(self, partitions: Sequence[str], context: PlanningContext) -> list[str]:
        """Partitions to consider (applied before listing file slices)."""
        return list(partitions)

    def filter_log_files(self, logs: Sequence[LogFile], *, file_slice: FileSlice,
                         context: PlanningContext) -> tuple[list[LogFile], list[LogFile]]:
        """(to compact, to remain) for one slice's log files (given in log order). Default: all.

        The planner widens ``to compact`` to the shortest log-order prefix that contains it.
        """
        return list(logs), []

    def order_and_filter(self, operations: Sequence[CandidateOperation],
                         pending_plans: Sequence[CompactionPlan], context: PlanningContext) -> list[CandidateOperation]:
        """The operations to plan, in order (``pending_plans``: the plans of the pending compactions)."""
        return list(operations)


class UnBoundedCompactionStrategy(CompactionStrategy):
    """Compacts every candidate operation."""

    java_class = JAVA_PACKAGE + "UnBoundedCompactionStrategy"
    short_name = "UnBounded"


class BoundedIOCompactionStrategy(CompactionStrategy):
    """Keeps operations in order until ``hoodie.compaction.target.io`` (MB) is used up; the
    operation that crosses the budget is included."""

    java_class = JAVA_PACKAGE + "BoundedIOCompactionStrategy"
    short_name = "BoundedIO"

    def order_and_filter(self, operations, pending_plans, context):
        remaining = self.config.target_io_mb
        out: list[CandidateOperation] = []
        for op in operations:
            remaining -= int(op.metrics.get(TOTAL_IO_MB, 0.0))
            out.append(op)
            if remaining <= 0:
                break
        return out


class LogFileSizeBasedCompactionStrategy(BoundedIOCompactionStrategy):
    """Drops operations whose log size is below ``hoodie.compaction.logfile.size.threshold``, orders
    by log size (largest first), then applies the IO budget. Hudi's default strategy."""

    java_class = JAVA_PACKAGE + "LogFileSizeBasedCompactionStrategy"
    short_name = "LogFileSizeBased"

    def order_and_filter(self, operations, pending_plans, context):
        threshold = self.config.logfile_size_threshold
        kept = [op for op in operations if op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0) >= threshold]
        kept.sort(key=lambda op: op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0), reverse=True)
        return super().order_and_filter(kept, pending_plans, context)


class LogFileNumBasedCompactionStrategy(BoundedIOCompactionStrategy):
    """Keeps operations with at least ``hoodie.compaction.logfile.num.threshold`` log files, most
    files first, then applies the IO budget."""

    java_class = JAVA_PACKAGE + "LogFileNumBasedCompactionStrategy"
    short_name = "LogFileNumBased"

    def order_and_filter(self, operations, pending_plans, context):
        threshold = self.config.logfile_num_threshold
        kept = [op for op in operations if op.metrics.get(TOTAL_LOG_FILES, 0.0) >= threshold]
        kept.sort(key=lambda op: op.metrics.get(TOTAL_LOG_FILES, 0.0), reverse=True)
        return super().order_and_filter(kept, pending_plans, context)


def partition_date(partition: str) -> _dt.date:
    """The ``yyyy/MM/dd`` date of a partition path (``k=v`` prefixes stripped), as DayBased reads it."""
    parts = [p.split("=", 1)[1] if "=" in p else p for p in partition.split("/")]
    try:
        y, m, d = (int(x) for x in parts[:3])
        return _dt.date(y, m, d)
    except (ValueError, TypeError):
        raise CompactionConfigError(
            f"partition {partition!r} is not a yyyy/MM/dd date path (hive-style k=v allowed); the "
            "day-based and partition-aware strategies need date partitions") from None


class DayBasedCompactionStrategy(CompactionStrategy):
    """Keeps the newest ``hoodie.compaction.daybased.target.partitions`` date partitions."""

    java_class = JAVA_PACKAGE + "DayBasedCompactionStrategy"
    short_name = "DayBased"

    def filter_partition_paths(self, partitions, context):
        ordered = sorted(partitions, key=partition_date, reverse=True)
        return ordered[: self.config.daybased_target_partitions]

    def order_and_filter(self, operations, pending_plans, context):
        by_part: dict[str, list[CandidateOperation]] = {}
        for op in operations:
            by_part.setdefault(op.partition, []).append(op)
        keep = sorted(by_part, key=partition_date, reverse=True)[: self.config.daybased_target_partitions]
        return [op for p in keep for op in by_part[p]]


class BoundedPartitionAwareCompactionStrategy(DayBasedCompactionStrategy):
    """Keeps date partitions on or after today minus N days (future dates included), newest first."""

    java_class = JAVA_PACKAGE + "BoundedPartitionAwareCompactionStrategy"
    short_name = "BoundedPartitionAware"

    def _earliest(self, context: PlanningContext) -> _dt.date:
        return context.today - _dt.timedelta(days=self.config.daybased_target_partitions)

    def filter_partition_paths(self, partitions, context):
        earliest = self._earliest(context)
        return [p for p in sorted(partitions, key=partition_date, reverse=True) if partition_date(p) >= earliest]

    def order_and_filter(self, operations, pending_plans, context):
        earliest = self._earliest(context)
        ordered = sorted(operations, key=lambda op: partition_date(op.partition), reverse=True)
        return [op for op in ordered if partition_date(op.partition) >= earliest]


class UnBoundedPartitionAwareCompactionStrategy(CompactionStrategy):
    """The complement of BoundedPartitionAware: date partitions before today minus N days."""

    java_class = JAVA_PACKAGE + "UnBoundedPartitionAwareCompactionStrategy"
    short_name = "UnBoundedPartitionAware"

    def __init__(self, config: CompactionConfig) -> None:
        super().__init__(config)
        self._bounded = BoundedPartitionAwareCompactionStrategy(config)

    def filter_partition_paths(self, partitions, context):
        bounded = set(self._bounded.filter_partition_paths(partitions, context))
        return [p for p in partitions if p not in bounded]

    def order_and_filter(self, operations, pending_plans, context):
        bounded = {id(op) for op in self._bounded.order_and_filter(operations, pending_plans, context)}
        return [op for op in operations if id(op) not in bounded]


class PartitionRegexBasedCompactionStrategy(CompactionStrategy):
    """Partitions matching ``hoodie.compaction.partition.path.regex`` (search semantics, as Java's
    ``Pattern.asPredicate``)."""

    java_class = JAVA_PACKAGE + "PartitionRegexBasedCompactionStrategy"
    short_name = "PartitionRegexBased"

    def __init__(self, config: CompactionConfig) -> None:
        super().__init__(config)
        if not config.partition_regex:
            raise CompactionConfigError(
                "PartitionRegexBasedCompactionStrategy needs hoodie.compaction.partition.path.regex")
        try:
            self._pattern = re.compile(config.partition_regex)
        except re.error as e:
            raise CompactionConfigError(
                f"hoodie.compaction.partition.path.regex={config.partition_regex!r} is not a valid regex: {e}"
            ) from None

    def filter_partition_paths(self, partitions, context):
        return [p for p in partitions if self._pattern.search(p)]


class EventTimeBasedCompactionStrategy(CompactionStrategy):
    """Compacts, per slice, the shortest log prefix holding every log file whose minimum event time
    is at or before the threshold T (files of unknown event time count as -infinity).

    T = compaction instant (epoch ms, timeline zone) - ``hoodie.compaction.event.time.data.latency.ms``,
    or ``hoodie.compaction.event.time.threshold`` when set. Every resulting operation is kept (an
    IO budget would leave files before T uncompacted and void the freshness guarantee).
    """

    java_class = JAVA_PACKAGE + "EventTimeBasedCompactionStrategy"
    short_name = "EventTimeBased"

    def threshold(self, context: PlanningContext) -> int:
        """T in epoch milliseconds."""
        if self.config.event_time_threshold_ms is not None:
            return self.config.event_time_threshold_ms
        return context.instant_ms - self.config.event_time_latency_ms

    def filter_log_files(self, logs, *, file_slice, context):
        t = self.threshold(context)
        for lf in logs:
            problem = unit_problem(lf.path, context.event_times.for_log(lf))
            if problem is not None:
                raise CompactionError(f"no event-time compaction scheduled: {problem}")
        chosen = [lf for lf in logs if context.event_times.for_log(lf).planning_min <= t]
        names = {lf.name for lf in chosen}
        return chosen, [lf for lf in logs if lf.name not in names]


class CompositeCompactionStrategy(CompactionStrategy):
    """Several strategies applied one after another (each narrows what the previous kept)."""

    short_name = "Composite"

    def __init__(self, config: CompactionConfig, strategies: Sequence[CompactionStrategy]) -> None:
        super().__init__(config)
        if not strategies:
            raise CompactionConfigError("a composite compaction strategy needs at least one strategy")
        self.strategies = list(strategies)

    @property
    def name(self) -> str:
        return ",".join(s.name for s in self.strategies)

    def filter_partition_paths(self, partitions, context):
        out = list(partitions)
        for s in self.strategies:
            out = s.filter_partition_paths(out, context)
        return out

    def filter_log_files(self, logs, *, file_slice, context):
        compact = list(logs)
        for s in self.strategies:
            compact, _ = s.filter_log_files(compact, file_slice=file_slice, context=context)
        chosen = {lf.name for lf in compact}
        return compact, [lf for lf in logs if lf.name not in chosen]

    def order_and_filter(self, operations, pending_plans, context):
        out = list(operations)
        for s in self.strategies:
            out = s.order_and_filter(out, pending_plans, context)
        return out


BUILTIN: tuple[type[CompactionStrategy], ...] = (
    LogFileSizeBasedCompactionStrategy, LogFileNumBasedCompactionStrategy, BoundedIOCompactionStrategy,
    UnBoundedCompactionStrategy, DayBasedCompactionStrategy, BoundedPartitionAwareCompactionStrategy,
    UnBoundedPartitionAwareCompactionStrategy, PartitionRegexBasedCompactionStrategy,
    EventTimeBasedCompactionStrategy,
)


def _lookup(name: str) -> type[CompactionStrategy]:
    for cls in BUILTIN:
        simple = cls.java_class.rsplit(".", 1)[-1] if cls.java_class else ""
        if name in (cls.java_class, simple, cls.short_name):
            return cls
    if name.startswith("org.apache.hudi."):
        raise CompactionConfigError(
            f"hoodie.compaction.strategy={name!r} is a Hudi class hoodie does not implement; use one of "
            + ", ".join(c.short_name for c in BUILTIN))
    module, _, attr = name.rpartition(".")
    if not module:
        raise CompactionConfigError(
            f"hoodie.compaction.strategy={name!r} is unknown; use one of "
            + ", ".join(c.short_name for c in BUILTIN) + ", a Hudi class name, or a dotted Python path")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise CompactionConfigError(f"hoodie.compaction.strategy={name!r} cannot be loaded: {e}") from None
    if not (isinstance(cls, type) and issubclass(cls, CompactionStrategy)):
        raise CompactionConfigError(
            f"hoodie.compaction.strategy={name!r} is not a subclass of "
            "hoodie.services.compaction.strategies.CompactionStrategy")
    return cls


def resolve_strategy(config: CompactionConfig) -> CompactionStrategy:
    """The strategy named by ``hoodie.compaction.strategy`` (comma-separated: composite)."""
    names = [n.strip() for n in config.strategy.split(",") if n.strip()]
    if not names:
        raise CompactionConfigError("hoodie.compaction.strategy is empty")
    names = [n for n in names if n not in (JAVA_PACKAGE + "CompositeCompactionStrategy",
                                           "CompositeCompactionStrategy", "Composite")] or names
    strategies = [_lookup(n)(config) for n in names]
    if len(strategies) == 1:
        return strategies[0]
    return CompositeCompactionStrategy(config, strategies)


def event_time_strategy(strategy: CompactionStrategy) -> Optional[EventTimeBasedCompactionStrategy]:
    """The event-time strategy inside ``strategy`` (itself or a composite member), if any."""
    if isinstance(strategy, EventTimeBasedCompactionStrategy):
        return strategy
    if isinstance(strategy, CompositeCompactionStrategy):
        for s in strategy.strategies:
            found = event_time_strategy(s)
            if found is not None:
                return found
    return None


__all__ = [
    "CompactionStrategy", "CandidateOperation", "PlanningContext", "resolve_strategy", "event_time_strategy",
    "UnBoundedCompactionStrategy", "BoundedIOCompactionStrategy", "LogFileSizeBasedCompactionStrategy",
    "LogFileNumBasedCompactionStrategy", "DayBasedCompactionStrategy", "BoundedPartitionAwareCompactionStrategy",
    "UnBoundedPartitionAwareCompactionStrategy", "PartitionRegexBasedCompactionStrategy",
    "EventTimeBasedCompactionStrategy", "CompositeCompactionStrategy", "partition_date", "BUILTIN",
    "TOTAL_LOG_FILES_SIZE", "TOTAL_LOG_FILES", "TOTAL_IO_READ_MB", "TOTAL_IO_WRITE_MB", "TOTAL_IO_MB",
]
