"""Every configuration key hoodie understands, in one package of the base layer: its type, default, Hudi
aliases and meaning, and the one set of rules by which every value is parsed.

* :mod:`hoodie.configs.rules`: the parsing rule of each type (boolean, int, enum, duration...);
* :mod:`hoodie.configs.registry`: :class:`ConfigProperty` (a key that reads its value), :func:`define`,
  the registry, alias resolution, the unknown-key warnings;
* one module per concern holding its keys (every :func:`define` is in one of them):
  :mod:`~hoodie.configs.table` (``hoodie.properties``), :mod:`~hoodie.configs.write`,
  :mod:`~hoodie.configs.reads`, :mod:`~hoodie.configs.clean`, :mod:`~hoodie.configs.compaction`,
  :mod:`~hoodie.configs.ttl`, :mod:`~hoodie.configs.metadata`, :mod:`~hoodie.configs.archive`,
  :mod:`~hoodie.configs.lock`, :mod:`~hoodie.configs.metrics`, :mod:`~hoodie.configs.streaming`.

Importing the package imports every key module, so the registry (the unknown-key warnings and the
generated ``docs/configuration.md``) always holds every key. The services and the format read their
keys from here and keep their own parsed settings (``WriteConfig``, ``CompactionConfig``...). The
rule API and the keys shared by several services are re-exported here (``from hoodie.configs import
read, PARQUET_MAX_FILE_SIZE``); a service's own keys are imported from its module
(``from hoodie.configs.compaction import INLINE``).
"""

from __future__ import annotations

from hoodie.configs.rules import (  # noqa: F401
    JAVA_INT_MIN, JAVA_INT_MAX, JAVA_LONG_MIN, JAVA_LONG_MAX, DAY_MS, ConfigValueError, ConfigType, Rule, Str,
    Bool, Int, Float, Enum, ListOf, format_duration, Duration, duration_ms, EpochMillis, Custom, STRING, BOOLEAN,
    INT, LONG, LIST, DURATION, parse_duration,
)
from hoodie.configs.registry import (  # noqa: F401
    ConfigProperty, ConfigKey, ConfigReader, read, define, W, R, TB, all_configs, lookup, known_keys,
    warn_unknown_keys, unknown_keys_checked,
)

# The key modules, each registering its keys on import (names shared across services re-exported).
from hoodie.configs import archive, compaction, lock, metadata, metrics, streaming  # noqa: F401
from hoodie.configs.table import (  # noqa: F401
    TABLE_NAME, DATABASE_NAME, TIMELINE_TIMEZONE,
)
from hoodie.configs.write import (  # noqa: F401
    OPERATIONS, OPERATION, PARTITIONS_TO_DELETE, WRITE_TABLE_VERSION, TABLE_TYPE, RECORD_KEY_FIELD,
    PARTITION_PATH_FIELD, PRECOMBINE_FIELD, KEYGEN_CLASS, KEYGEN_TYPE, HIVE_STYLE_PARTITIONING,
    URL_ENCODE_PARTITIONING, PAYLOAD_CLASS, EVENT_TIME_FIELD, TRACK_EVENT_TIME_WATERMARK, EVENT_TIME_UNITS,
    EVENT_TIME_UNIT, LOG_BLOCK_FORMAT, PARQUET_MAX_FILE_SIZE, PARQUET_SMALL_FILE_LIMIT, RECORD_SIZE_ESTIMATE,
    PARQUET_CODEC, BLOOM_NUM_ENTRIES, BLOOM_FPP, BLOOM_FILTER_TYPE, BLOOM_DYNAMIC_MAX_ENTRIES, INDEX_TYPE,
    RECORD_INDEX_UPDATE_PARTITION_PATH, BLOOM_INDEX_UPDATE_PARTITION_PATH, SIMPLE_INDEX_UPDATE_PARTITION_PATH,
    BULK_INSERT_SORT_MODES, BULK_INSERT_SORT_MODE, COMBINE_BEFORE_INSERT, SET_NULL_FOR_MISSING_COLUMNS,
    TRANSIENT_DELETE_MARKER, WRITE_INSTANT, KEYGEN_TIMEBASED,
)
from hoodie.configs.reads import (  # noqa: F401
    QUERY_TYPE, READ_BEGIN_INSTANT, READ_END_INSTANT, HOLLOW_COMMIT_POLICY, SPARK_READ_NATIVE, INCREMENTAL_FORMAT,
    SPLIT_TARGET_BYTES,
)
from hoodie.configs.clean import (  # noqa: F401
    CLEAN_POLICIES, CLEANER_POLICY, CLEANER_COMMITS_RETAINED, CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED, CLEAN_AUTOMATIC, CLEAN_MAX_COMMITS,
)
from hoodie.configs.ttl import (  # noqa: F401
    RECORD_TTL_FIELD, RECORD_TTL_RETENTION, RECORD_TTL_INLINE, RECORD_TTL_INLINE_MAX_COMMITS, TTL_ACTION,
    TTL_MOVE_TARGET, TTL_MOVE_STORAGE_OPTIONS,
)

__all__ = [
    "ConfigProperty", "ConfigKey", "ConfigType", "ConfigValueError", "ConfigReader", "read", "define", "lookup",
    "all_configs", "known_keys", "warn_unknown_keys", "unknown_keys_checked", "Str", "Bool", "Int", "Float", "Enum",
    "ListOf", "Duration", "EpochMillis", "Custom", "Rule", "STRING", "BOOLEAN", "INT", "LONG", "LIST", "DURATION",
    "parse_duration", "duration_ms", "format_duration",
]
