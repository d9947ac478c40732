"""Compaction configuration: Hudi's own keys and defaults, plus the event-time and partial-compaction
keys this project adds (``docs/compaction.md`` lists every key).

Options are plain string maps, as Hudi writers and ``hoodie compaction --set KEY=VALUE`` pass them.
Unknown keys are ignored (a writer's full option map can be passed as is); malformed values of
known keys raise :class:`CompactionConfigError` naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.errors import HoodieError
from hoodie.format.slice.bloom import BloomSpec
from hoodie.format.slice.eventtime import (
    DEFAULT_UNIT, EventTimeError, describe_millis, implausible, looks_like, parse_iso_millis, parse_unit,
)
from hoodie.format.slice.eventtime import UNIT_KEY as EVENT_TIME_UNIT

# -- Hudi keys (table-services-upstream.md §2.4, §2.5) ------------------------------------------
STRATEGY = "hoodie.compaction.strategy"
LOGFILE_SIZE_THRESHOLD = "hoodie.compaction.logfile.size.threshold"
TARGET_IO = "hoodie.compaction.target.io"
LOGFILE_NUM_THRESHOLD = "hoodie.compaction.logfile.num.threshold"
DAYBASED_TARGET_PARTITIONS = "hoodie.compaction.daybased.target.partitions"
PARTITION_REGEX = "hoodie.compaction.partition.path.regex"
TRIGGER_STRATEGY = "hoodie.compact.inline.trigger.strategy"
MAX_DELTA_COMMITS = "hoodie.compact.inline.max.delta.commits"
MAX_DELTA_SECONDS = "hoodie.compact.inline.max.delta.seconds"
INLINE = "hoodie.compact.inline"
SCHEDULE_INLINE = "hoodie.compact.schedule.inline"
PARQUET_MAX_FILE_SIZE = "hoodie.parquet.max.file.size"
PARQUET_CODEC = "hoodie.parquet.compression.codec"
LOG_BLOCK_FORMAT = "hoodie.logfile.data.block.format"
EVENT_TIME_FIELD = "hoodie.payload.event.time.field"

# -- our keys -----------------------------------------------------------------------------------
EVENT_TIME_LATENCY_MS = "hoodie.compaction.event.time.data.latency.ms"
EVENT_TIME_THRESHOLD = "hoodie.compaction.event.time.threshold"
EVENT_TIME_EXACT_SPLIT = "hoodie.compaction.event.time.exact.split"
LINK_MODE = "hoodie.compaction.partial.link.mode"
PROMETHEUS_FILE = "hoodie.compaction.metrics.prometheus.file"
PUSHGATEWAY_URL = "hoodie.compaction.metrics.pushgateway.url"
# Hudi's own push-gateway keys, accepted as an alternative to the URL.
HUDI_PUSHGATEWAY_HOST = "hoodie.metrics.pushgateway.host"
HUDI_PUSHGATEWAY_PORT = "hoodie.metrics.pushgateway.port"
ASYNC_INTERVAL_SECONDS = "hoodie.compaction.async.interval.seconds"

DEFAULT_STRATEGY = "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy"
DEFAULT_TARGET_IO_MB = 500 * 1024
DEFAULT_MAX_DELTA_COMMITS = 5
DEFAULT_MAX_DELTA_SECONDS = 3600
DEFAULT_DAYBASED_PARTITIONS = 10
DEFAULT_PARQUET_MAX_FILE_SIZE = 120 * 1024 * 1024
# One hour: data is expected to arrive at most an hour after its event time, so a compaction
# scheduled at C covers events up to C - 1h. Matches the default time trigger (3600 s).
DEFAULT_EVENT_TIME_LATENCY_MS = 3_600_000
DEFAULT_ASYNC_INTERVAL_SECONDS = 60.0

TRIGGERS = ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME",
            "EVENT_TIME_TRIGGER")
LINK_MODES = ("auto", "symlink", "copy")


class CompactionError(HoodieError):
    """A compaction cannot be scheduled, run or rolled back; the message says why and what to do."""


class CompactionConfigError(CompactionError, ValueError):
    """A compaction option has an invalid value."""


def _bool(opts: Mapping[str, str], key: str, default: bool) -> bool:
    v = opts.get(key)
    if v is None or v == "":
        return default
    s = str(v).strip().lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise CompactionConfigError(f"{key}={v!r} is not a boolean; use true or false")


def _int(opts: Mapping[str, str], key: str, default: int, minimum: Optional[int] = None) -> int:
    v = opts.get(key)
    if v is None or v == "":
        return default
    try:
        n = int(str(v).strip())
    except ValueError:
        raise CompactionConfigError(f"{key}={v!r} is not an integer") from None
    if minimum is not None and n < minimum:
        raise CompactionConfigError(f"{key}={n} must be >= {minimum}")
    return n


def _float(opts: Mapping[str, str], key: str, default: float, minimum: Optional[float] = None) -> float:
    v = opts.get(key)
    if v is None or v == "":
        return default
    try:
        x = float(str(v).strip())
    except ValueError:
        raise CompactionConfigError(f"{key}={v!r} is not a number") from None
    if minimum is not None and x < minimum:
        raise CompactionConfigError(f"{key}={x} must be >= {minimum}")
    return x


def parse_threshold(value: str, key: str = EVENT_TIME_THRESHOLD) -> int:
    """An explicit event-time threshold: epoch milliseconds, or ISO-8601 (naive means UTC)."""
    s = str(value).strip()
    if s.lstrip("-").isdigit():
        v = int(s)
        if implausible(v, DEFAULT_UNIT) is not None:
            # A threshold in seconds would be read as January 1970 (nothing compacted, a false T).
            other = looks_like(v, DEFAULT_UNIT)
            hint = f"; it looks like {other}" if other else ""
            raise CompactionConfigError(f"{key}={s} read as epoch milliseconds is {describe_millis(v)}{hint}: give "
                                        "epoch milliseconds or ISO-8601 (e.g. 2024-05-01T00:00:00Z)")
        return v
    try:
        return parse_iso_millis(s, key)
    except EventTimeError as e:
        raise CompactionConfigError(str(e)) from None


@dataclass
class CompactionConfig:
    """Every option scheduling, execution and the services read, with Hudi's defaults."""

    strategy: str = DEFAULT_STRATEGY
    logfile_size_threshold: int = 0
    target_io_mb: int = DEFAULT_TARGET_IO_MB
    logfile_num_threshold: int = 0
    daybased_target_partitions: int = DEFAULT_DAYBASED_PARTITIONS
    partition_regex: Optional[str] = None
    trigger: str = "NUM_COMMITS"
    max_delta_commits: int = DEFAULT_MAX_DELTA_COMMITS
    max_delta_seconds: int = DEFAULT_MAX_DELTA_SECONDS
    inline: bool = False
    schedule_inline: bool = False
    parquet_max_file_size: int = DEFAULT_PARQUET_MAX_FILE_SIZE
    parquet_codec: str = "snappy"
    log_block_format: str = "avro"
    event_time_field: Optional[str] = None
    event_time_unit: str = DEFAULT_UNIT
    event_time_latency_ms: int = DEFAULT_EVENT_TIME_LATENCY_MS
    event_time_threshold_ms: Optional[int] = None
    exact_split: bool = False
    link_mode: str = "auto"
    prometheus_file: Optional[str] = None
    pushgateway_url: Optional[str] = None
    async_interval_seconds: float = DEFAULT_ASYNC_INTERVAL_SECONDS
    bloom: BloomSpec = BloomSpec()
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None,
                     table_props: Optional[Mapping[str, str]] = None) -> "CompactionConfig":
        """Parse Hudi-style options; table properties fill keys the options leave out (e.g. a
        table created with ``hoodie.payload.event.time.field`` among its properties)."""
        o: dict[str, str] = {str(k): str(v) for k, v in (table_props or {}).items()}
        o.update({str(k): str(v) for k, v in (options or {}).items() if v is not None})
        trigger = (o.get(TRIGGER_STRATEGY) or "NUM_COMMITS").strip().upper()
        if trigger not in TRIGGERS:
            raise CompactionConfigError(f"{TRIGGER_STRATEGY}={trigger!r} is not one of {', '.join(TRIGGERS)}")
        link_mode = (o.get(LINK_MODE) or "auto").strip().lower()
        if link_mode not in LINK_MODES:
            raise CompactionConfigError(f"{LINK_MODE}={link_mode!r} is not one of {', '.join(LINK_MODES)}")
        block = (o.get(LOG_BLOCK_FORMAT) or "avro").strip().lower()
        if block not in ("avro", "parquet"):
            raise CompactionConfigError(f"{LOG_BLOCK_FORMAT}={block!r} is not avro or parquet")
        threshold = o.get(EVENT_TIME_THRESHOLD)
        push = o.get(PUSHGATEWAY_URL) or None
        if push is None and o.get(HUDI_PUSHGATEWAY_HOST):
            port = _int(o, HUDI_PUSHGATEWAY_PORT, 9091, 1)
            push = f"http://{o[HUDI_PUSHGATEWAY_HOST]}:{port}"
        try:
            bloom = BloomSpec.from_options(o)
            unit = parse_unit(o.get(EVENT_TIME_UNIT))
        except ValueError as e:
            raise CompactionConfigError(str(e)) from None
        cfg = cls(
            strategy=(o.get(STRATEGY) or DEFAULT_STRATEGY).strip(),
            logfile_size_threshold=_int(o, LOGFILE_SIZE_THRESHOLD, 0, 0),
            target_io_mb=_int(o, TARGET_IO, DEFAULT_TARGET_IO_MB),
            logfile_num_threshold=_int(o, LOGFILE_NUM_THRESHOLD, 0, 0),
            daybased_target_partitions=_int(o, DAYBASED_TARGET_PARTITIONS, DEFAULT_DAYBASED_PARTITIONS, 0),
            partition_regex=o.get(PARTITION_REGEX) or None,
            trigger=trigger,
            max_delta_commits=_int(o, MAX_DELTA_COMMITS, DEFAULT_MAX_DELTA_COMMITS, 0),
            max_delta_seconds=_int(o, MAX_DELTA_SECONDS, DEFAULT_MAX_DELTA_SECONDS, 0),
            inline=_bool(o, INLINE, False),
            schedule_inline=_bool(o, SCHEDULE_INLINE, False),
            parquet_max_file_size=_int(o, PARQUET_MAX_FILE_SIZE, DEFAULT_PARQUET_MAX_FILE_SIZE, 1),
            parquet_codec=_codec(o.get(PARQUET_CODEC)),
            log_block_format=block,
            event_time_field=o.get(EVENT_TIME_FIELD) or None,
            event_time_unit=unit,
            event_time_latency_ms=_int(o, EVENT_TIME_LATENCY_MS, DEFAULT_EVENT_TIME_LATENCY_MS, 0),
            event_time_threshold_ms=parse_threshold(threshold) if threshold not in (None, "") else None,
            exact_split=_bool(o, EVENT_TIME_EXACT_SPLIT, False),
            link_mode=link_mode,
            prometheus_file=o.get(PROMETHEUS_FILE) or None,
            pushgateway_url=push,
            async_interval_seconds=_float(o, ASYNC_INTERVAL_SECONDS, DEFAULT_ASYNC_INTERVAL_SECONDS, 0.0),
            bloom=bloom,
            options=o,
        )
        return cfg


def _codec(value: Optional[str]) -> str:
    from hoodie.format.slice.writer import parquet_codec

    try:
        return parquet_codec(value)
    except ValueError as e:
        raise CompactionConfigError(str(e)) from None


def as_config(config: Any = None, table_props: Optional[Mapping[str, str]] = None) -> CompactionConfig:
    """Accept a :class:`CompactionConfig`, an option mapping, or None (all defaults)."""
    if isinstance(config, CompactionConfig):
        return config
    if config is None or isinstance(config, Mapping):
        return CompactionConfig.from_options(config, table_props)
    raise TypeError(f"compaction config must be a CompactionConfig or a mapping of options, got {type(config).__name__}")


__all__ = [
    "CompactionConfig", "CompactionError", "CompactionConfigError", "as_config", "parse_threshold",
    "TRIGGERS", "LINK_MODES",
]


def _register() -> None:
    """Register the compaction keys with :mod:`hoodie.configs` (unknown-key warnings, docs table)."""
    from hoodie.configs import define

    g = "compaction"
    define(STRATEGY, DEFAULT_STRATEGY, "Compaction strategy: a Hudi class name (LogFileSizeBased, LogFileNumBased, "
           "BoundedIO, UnBounded, DayBased, BoundedPartitionAware, UnBoundedPartitionAware, PartitionRegexBased, "
           "EventTimeBased) or a dotted Python class; several comma-separated for Composite.", g)
    define(LOGFILE_SIZE_THRESHOLD, "0", "LogFileSizeBased: slices with less log data (bytes) are skipped.", g)
    define(TARGET_IO, str(DEFAULT_TARGET_IO_MB), "BoundedIO budget per compaction, MB.", g)
    define(LOGFILE_NUM_THRESHOLD, "0", "LogFileNumBased: slices with fewer log files are skipped.", g)
    define(DAYBASED_TARGET_PARTITIONS, str(DEFAULT_DAYBASED_PARTITIONS), "DayBased: number of latest day partitions.", g)
    define(PARTITION_REGEX, None, "PartitionRegexBased: partitions matching this regex are compacted.", g)
    define(TRIGGER_STRATEGY, "NUM_COMMITS", "When to schedule: " + ", ".join(TRIGGERS) + ".", g)
    define(MAX_DELTA_COMMITS, str(DEFAULT_MAX_DELTA_COMMITS), "Delta commits before a compaction is scheduled.", g)
    define(MAX_DELTA_SECONDS, str(DEFAULT_MAX_DELTA_SECONDS), "Seconds before a compaction is scheduled.", g)
    define(INLINE, "false", "Schedule and run compaction after each write.", g)
    define(SCHEDULE_INLINE, "false", "Only schedule compaction after each write.", g)
    define(EVENT_TIME_LATENCY_MS, str(DEFAULT_EVENT_TIME_LATENCY_MS),
           "EventTimeBased: threshold T = compaction instant - this latency (ms).", g)
    define(EVENT_TIME_THRESHOLD, None, "EventTimeBased: explicit threshold T (epoch ms or ISO-8601).", g)
    define(EVENT_TIME_EXACT_SPLIT, "false", "EventTimeBased: keep records after T out of the new base file.", g)
    define(LINK_MODE, "auto", "Remaining log files of a partial compaction: auto (symlink if possible), symlink, copy.", g)
    define(PROMETHEUS_FILE, None, "Write compaction metrics to this Prometheus text file.", g)
    define(PUSHGATEWAY_URL, None, "Push compaction metrics to this Prometheus push gateway URL.", g)
    define(HUDI_PUSHGATEWAY_HOST, None, "Prometheus push gateway host (Hudi's key).", g)
    define(HUDI_PUSHGATEWAY_PORT, None, "Prometheus push gateway port (Hudi's key).", g)
    define(ASYNC_INTERVAL_SECONDS, str(DEFAULT_ASYNC_INTERVAL_SECONDS), "Async compaction service poll interval.", g)


_register()
