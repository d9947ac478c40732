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
from hoodie.configs.compaction import (
    ASYNC_INTERVAL_SECONDS, DAYBASED_TARGET_PARTITIONS, EVENT_TIME_EXACT_SPLIT,
    EVENT_TIME_LATENCY_MS, EVENT_TIME_THRESHOLD, HUDI_PUSHGATEWAY_HOST, HUDI_PUSHGATEWAY_PORT, INLINE, LINK_MODE,
    LINK_MODES, LOGFILE_NUM_THRESHOLD, LOGFILE_SIZE_THRESHOLD, MAX_DELTA_COMMITS, MAX_DELTA_SECONDS, PARTITION_REGEX,
    PROMETHEUS_FILE, PUSHGATEWAY_URL, SCHEDULE_INLINE, STRATEGY, TARGET_IO, TRIGGER_STRATEGY, TRIGGERS,
)
from hoodie.errors import HoodieError
from hoodie.format.slice.bloom import BloomSpec
from hoodie.format.slice.writer import parquet_codec
from hoodie.services.compaction import keys as K

# Keys shared with writes, defined once in hoodie.configs.
PARQUET_MAX_FILE_SIZE = C.PARQUET_MAX_FILE_SIZE
PARQUET_CODEC = C.PARQUET_CODEC
LOG_BLOCK_FORMAT = C.LOG_BLOCK_FORMAT
EVENT_TIME_FIELD = C.EVENT_TIME_FIELD
EVENT_TIME_UNIT = C.EVENT_TIME_UNIT


class CompactionError(HoodieError):
    """A compaction cannot be scheduled, run or rolled back; the message says why and what to do."""


class CompactionConfigError(CompactionError, C.ConfigValueError):
    """A compaction option has an invalid value."""


def parse_threshold(value: str, key: str = K.THRESHOLD_KEY) -> int:
    """An explicit event-time threshold: epoch milliseconds, or ISO-8601 (naive means UTC), read by the
    rule of ``hoodie.compaction.event.time.threshold``.

    Raises:
        CompactionConfigError: neither, or a number that is a time only in another unit (seconds).
    """
    try:
        return EVENT_TIME_THRESHOLD.parse(value, key)
    except C.ConfigValueError as e:
        raise CompactionConfigError(str(e)) from None


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

