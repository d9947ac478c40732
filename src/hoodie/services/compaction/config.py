"""Compaction configuration: Hudi's own keys and defaults, plus the event-time and partial-compaction
keys this project adds (``docs/compaction.md`` lists every key).

Options are plain string maps, as Hudi writers and ``hoodie compaction --set KEY=VALUE`` pass them.
Unknown keys are ignored (a writer's full option map can be passed as is); malformed values of
known keys raise :class:`CompactionConfigError` naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie import configs as C
from hoodie.configs import BOOLEAN, Custom, Enum, Float, Int, define
from hoodie.errors import HoodieError
from hoodie.format.slice.bloom import BloomSpec
from hoodie.format.slice.eventtime import (
    DEFAULT_UNIT, EventTimeError, describe_millis, implausible, looks_like, parse_iso_millis,
)
from hoodie.metrics import PUSHGATEWAY_HOST_KEY as HUDI_PUSHGATEWAY_HOST
from hoodie.metrics import PUSHGATEWAY_PORT_KEY as HUDI_PUSHGATEWAY_PORT
from hoodie.services.compaction import keys as K
from hoodie.format.slice.writer import parquet_codec

# Keys shared with writes, defined once in hoodie.configs.
PARQUET_MAX_FILE_SIZE = C.PARQUET_MAX_FILE_SIZE
PARQUET_CODEC = C.PARQUET_CODEC
LOG_BLOCK_FORMAT = C.LOG_BLOCK_FORMAT
EVENT_TIME_FIELD = C.EVENT_TIME_FIELD
EVENT_TIME_UNIT = C.EVENT_TIME_UNIT

DEFAULT_STRATEGY = "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy"
TRIGGERS = ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME",
            "EVENT_TIME_TRIGGER")
LINK_MODES = ("auto", "symlink", "copy")


class CompactionError(HoodieError):
    """A compaction cannot be scheduled, run or rolled back; the message says why and what to do."""


class CompactionConfigError(CompactionError, C.ConfigValueError):
    """A compaction option has an invalid value."""


def parse_threshold(value: str, key: str = K.THRESHOLD_KEY) -> int:
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


# -- keys (Hudi's: table-services-upstream.md §2.4, §2.5; then the event-time and partial-compaction
# keys this project adds) -----------------------------------------------------------------------
_G = "compaction"
STRATEGY = define(K.STRATEGY_KEY, DEFAULT_STRATEGY,
                  "Compaction strategy: a Hudi class name (LogFileSizeBased, LogFileNumBased, BoundedIO, UnBounded, "
                  "DayBased, BoundedPartitionAware, UnBoundedPartitionAware, PartitionRegexBased, EventTimeBased) or a "
                  "dotted Python class; several comma-separated for Composite.", _G)
LOGFILE_SIZE_THRESHOLD = define("hoodie.compaction.logfile.size.threshold", 0,
                                "LogFileSizeBased: slices with less log data (bytes) are skipped.", _G,
                                type=Int(minimum=0, bits=64))
TARGET_IO = define("hoodie.compaction.target.io", 500 * 1024, "BoundedIO budget per compaction, MB.", _G,
                   type=Int(bits=64))
LOGFILE_NUM_THRESHOLD = define("hoodie.compaction.logfile.num.threshold", 0,
                               "LogFileNumBased: slices with fewer log files are skipped.", _G, type=Int(minimum=0))
DAYBASED_TARGET_PARTITIONS = define("hoodie.compaction.daybased.target.partitions", 10,
                                    "DayBased: number of latest day partitions.", _G, type=Int(minimum=0))
PARTITION_REGEX = define("hoodie.compaction.partition.path.regex", None,
                         "PartitionRegexBased: partitions matching this regex are compacted.", _G)
TRIGGER_STRATEGY = define("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS",
                          "When to schedule: " + ", ".join(TRIGGERS) + ".", _G,
                          type=Enum(TRIGGERS, what="a compaction trigger strategy"))
MAX_DELTA_COMMITS = define("hoodie.compact.inline.max.delta.commits", 5,
                           "Delta commits before a compaction is scheduled.", _G, type=Int(minimum=0))
MAX_DELTA_SECONDS = define("hoodie.compact.inline.max.delta.seconds", 3600,
                           "Seconds before a compaction is scheduled.", _G, type=Int(minimum=0))
INLINE = define("hoodie.compact.inline", False, "Schedule and run compaction after each write.", _G, type=BOOLEAN)
SCHEDULE_INLINE = define("hoodie.compact.schedule.inline", False, "Only schedule compaction after each write.", _G,
                         type=BOOLEAN)
# One hour: data is expected to arrive at most an hour after its event time, so a compaction
# scheduled at C covers events up to C - 1h. Matches the default time trigger (3600 s).
EVENT_TIME_LATENCY_MS = define("hoodie.compaction.event.time.data.latency.ms", 3_600_000,
                               "EventTimeBased: threshold T = compaction instant - this latency (ms).", _G,
                               type=Int(minimum=0, bits=64))
EVENT_TIME_THRESHOLD = define(K.THRESHOLD_KEY, None, "EventTimeBased: explicit threshold T (epoch ms or ISO-8601).",
                              _G, type=Custom("epoch ms or ISO-8601", parse_threshold))
EVENT_TIME_EXACT_SPLIT = define(K.EXACT_SPLIT_KEY, False,
                                "EventTimeBased: keep records after T out of the new base file.", _G, type=BOOLEAN)
LINK_MODE = define("hoodie.compaction.partial.link.mode", "auto",
                   "Remaining log files of a partial compaction: auto (symlink if possible), symlink, copy.", _G,
                   type=Enum(LINK_MODES, what="a link mode"))
PROMETHEUS_FILE = define("hoodie.compaction.metrics.prometheus.file", None,
                         "Write compaction metrics to this Prometheus text file.", _G)
PUSHGATEWAY_URL = define("hoodie.compaction.metrics.pushgateway.url", None,
                         "Push compaction metrics to this Prometheus push gateway URL (default: from "
                         f"{HUDI_PUSHGATEWAY_HOST} and {HUDI_PUSHGATEWAY_PORT}).", _G)
ASYNC_INTERVAL_SECONDS = define("hoodie.compaction.async.interval.seconds", 60.0,
                                "Async compaction service poll interval.", _G, type=Float(minimum=0.0))

DEFAULT_TARGET_IO_MB: int = TARGET_IO.default
DEFAULT_MAX_DELTA_COMMITS: int = MAX_DELTA_COMMITS.default
DEFAULT_MAX_DELTA_SECONDS: int = MAX_DELTA_SECONDS.default
DEFAULT_DAYBASED_PARTITIONS: int = DAYBASED_TARGET_PARTITIONS.default
DEFAULT_EVENT_TIME_LATENCY_MS: int = EVENT_TIME_LATENCY_MS.default
DEFAULT_ASYNC_INTERVAL_SECONDS: float = ASYNC_INTERVAL_SECONDS.default


@dataclass
class CompactionConfig:
    """Every option scheduling, execution and the services read, with Hudi's defaults."""

    strategy: str = STRATEGY.default
    logfile_size_threshold: int = LOGFILE_SIZE_THRESHOLD.default
    target_io_mb: int = DEFAULT_TARGET_IO_MB
    logfile_num_threshold: int = LOGFILE_NUM_THRESHOLD.default
    daybased_target_partitions: int = DEFAULT_DAYBASED_PARTITIONS
    partition_regex: Optional[str] = None
    trigger: str = TRIGGER_STRATEGY.default
    max_delta_commits: int = DEFAULT_MAX_DELTA_COMMITS
    max_delta_seconds: int = DEFAULT_MAX_DELTA_SECONDS
    inline: bool = INLINE.default
    schedule_inline: bool = SCHEDULE_INLINE.default
    parquet_max_file_size: int = PARQUET_MAX_FILE_SIZE.default
    parquet_codec: str = PARQUET_CODEC.default
    log_block_format: str = LOG_BLOCK_FORMAT.default
    event_time_field: Optional[str] = None
    event_time_unit: str = EVENT_TIME_UNIT.default
    event_time_latency_ms: int = DEFAULT_EVENT_TIME_LATENCY_MS
    event_time_threshold_ms: Optional[int] = None
    exact_split: bool = EVENT_TIME_EXACT_SPLIT.default
    link_mode: str = LINK_MODE.default
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
        r = C.read(o, CompactionConfigError)
        push = r.get(PUSHGATEWAY_URL)
        if push is None and r.get(HUDI_PUSHGATEWAY_HOST):
            push = f"http://{r.get(HUDI_PUSHGATEWAY_HOST)}:{r.get(HUDI_PUSHGATEWAY_PORT)}"
        try:
            bloom = BloomSpec.from_options(o)
        except ValueError as e:
            raise CompactionConfigError(str(e)) from None
        return cls(
            strategy=r.get(STRATEGY),
            logfile_size_threshold=r.get(LOGFILE_SIZE_THRESHOLD),
            target_io_mb=r.get(TARGET_IO),
            logfile_num_threshold=r.get(LOGFILE_NUM_THRESHOLD),
            daybased_target_partitions=r.get(DAYBASED_TARGET_PARTITIONS),
            partition_regex=r.get(PARTITION_REGEX),
            trigger=r.get(TRIGGER_STRATEGY),
            max_delta_commits=r.get(MAX_DELTA_COMMITS),
            max_delta_seconds=r.get(MAX_DELTA_SECONDS),
            inline=r.get(INLINE),
            schedule_inline=r.get(SCHEDULE_INLINE),
            parquet_max_file_size=r.get(PARQUET_MAX_FILE_SIZE),
            parquet_codec=_codec(r.get(PARQUET_CODEC)),
            log_block_format=r.get(LOG_BLOCK_FORMAT),
            event_time_field=r.get(EVENT_TIME_FIELD),
            event_time_unit=r.get(EVENT_TIME_UNIT),
            event_time_latency_ms=r.get(EVENT_TIME_LATENCY_MS),
            event_time_threshold_ms=r.get(EVENT_TIME_THRESHOLD),
            exact_split=r.get(EVENT_TIME_EXACT_SPLIT),
            link_mode=r.get(LINK_MODE),
            prometheus_file=r.get(PROMETHEUS_FILE),
            pushgateway_url=push,
            async_interval_seconds=r.get(ASYNC_INTERVAL_SECONDS),
            bloom=bloom,
            options=o,
        )


def _codec(value: Optional[str]) -> str:
    """pyarrow's name of a Hudi codec name (already checked by the codec rule)."""
    return parquet_codec(value)


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

