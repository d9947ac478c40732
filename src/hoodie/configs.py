"""Config definitions: every ``hoodie.*`` key hoodie understands, with default and meaning.

Keys are Hudi's own where Hudi has one. This registry drives unknown-key warnings (with the
closest known key as a suggestion) and the configuration table in the docs. Services register
their keys in their own modules through :func:`define`; :func:`known_keys` imports them.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import importlib
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional

# Modules that define service configs (imported lazily by known_keys / all_configs).
SERVICE_CONFIG_MODULES = (
    "hoodie.metrics",
    "hoodie.format.lock",
    "hoodie.services.ttl.config",
    "hoodie.services.compaction.config",
    "hoodie.services.clean",
)


@dataclass(frozen=True)
class ConfigKey:
    """One configuration key."""

    key: str
    default: Optional[str]
    doc: str
    group: str
    aliases: tuple[str, ...] = field(default=())


_REGISTRY: dict[str, ConfigKey] = {}


def define(key: str, default: Optional[str], doc: str, group: str, aliases: tuple[str, ...] = ()) -> ConfigKey:
    """Register a key (idempotent for identical definitions)."""
    ck = ConfigKey(key, default, doc, group, tuple(aliases))
    _REGISTRY[key] = ck
    return ck


W = "write"
R = "read"
T = "table"
define("hoodie.table.name", None, "Table name (required when creating a table).", W)
define("hoodie.database.name", None, "Database name recorded in hoodie.properties.", T)
define("hoodie.datasource.write.operation", "upsert",
       "insert, bulk_insert, upsert, delete, insert_overwrite, insert_overwrite_table or delete_partition.", W)
define("hoodie.datasource.write.partitions.to.delete", None,
       "delete_partition: comma-separated partition paths (default: the partitions of the input rows).", W)
define("hoodie.datasource.write.table.type", "COPY_ON_WRITE", "COPY_ON_WRITE or MERGE_ON_READ.", W)
define("hoodie.datasource.write.recordkey.field", None, "Record key column(s), comma-separated.", W)
define("hoodie.datasource.write.partitionpath.field", "", "Partition column(s), comma-separated.", W)
define("hoodie.datasource.write.precombine.field", None,
       "Ordering (precombine) column: the greatest value wins on duplicates and, with an ordering "
       "payload, on merges.", W)
define("hoodie.datasource.write.keygenerator.class", None, "Key generator (Hudi Java class name).", W)
define("hoodie.datasource.write.keygenerator.type", None, "SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM.", W)
define("hoodie.datasource.write.hive_style_partitioning", "false",
       "Partition folders as field=value. Fixed when the table is created; a write option that "
       "contradicts the table is refused.", W)
define("hoodie.datasource.write.partitionpath.urlencode", "false",
       "URL-encode partition values (Hive escaping: '/' as %2F, so a value with '/' is one folder, not "
       "nested folders). Fixed when the table is created; a write option that contradicts the table is refused.", W)
define("hoodie.datasource.write.payload.class", None,
       "Record payload: OverwriteWithLatestAvroPayload (commit-time ordering) or "
       "DefaultHoodieRecordPayload (ordering-field ordering; the default with a precombine field).", W)
define("hoodie.payload.event.time.field", None,
       "Event-time column: min/max event time go into write stats and log block headers.", W)
define("hoodie.payload.event.time.unit", "MILLISECONDS",
       "Unit of a numeric event-time column (int, long, double, decimal, digit strings): SECONDS, "
       "MILLISECONDS (Hudi's), MICROSECONDS or NANOSECONDS. Timestamp and date columns are converted by "
       "their type. A number that is a 1971-2200 time only in another unit is refused, naming that unit.", W)
define("hoodie.logfile.data.block.format", "avro", "Log data block format: avro or parquet.", W)
define("hoodie.parquet.max.file.size", str(120 * 1024 * 1024), "Target base file size in bytes.", W)
define("hoodie.parquet.small.file.limit", str(100 * 1024 * 1024),
       "Base files below this size receive inserts (COW).", W)
define("hoodie.copyonwrite.record.size.estimate", "1024", "Record size estimate used to size file groups.", W)
define("hoodie.parquet.compression.codec", "snappy", "Parquet codec for base files.", W)
define("hoodie.index.bloom.num_entries", "60000",
       "Keys per bloom filter row in base-file footers (Java Hudi's BLOOM index reads them).", W)
define("hoodie.index.bloom.fpp", "0.000000001", "Target false-positive rate of the base-file bloom filters.", W)
define("hoodie.bloom.index.filter.type", "DYNAMIC_V0", "Base-file bloom filter type: DYNAMIC_V0 or SIMPLE.", W)
define("hoodie.bloom.index.filter.dynamic.max.entries", "100000",
       "DYNAMIC_V0: rows are added until rows x num_entries reaches this bound.", W)
define("hoodie.table.timeline.timezone", "UTC",
       "Time zone of instant times: LOCAL or UTC. Tables hoodie creates default to UTC; a table whose "
       "hoodie.properties lacks the key is LOCAL (Hudi's default), where each instant is its writer's "
       "wall-clock time (see docs/ttl.md).", T)
define("hoodie.combine.before.insert", "false", "De-duplicate inserts by key before writing.", W)
define("hoodie.write.set.null.for.missing.columns", "false",
       "A batch lacking table columns is refused (as Hudi refuses it); true writes the missing columns "
       "as null, also over the stored values of updated records.", W)
define("hoodie.write.instant", None, "Use this instant time for the write (testing/backfills).", W)
for _k in ("hoodie.keygen.timebased.timestamp.type", "hoodie.keygen.timebased.input.dateformat",
           "hoodie.keygen.timebased.output.dateformat", "hoodie.keygen.timebased.timezone",
           "hoodie.keygen.timebased.input.timezone", "hoodie.keygen.timebased.output.timezone",
           "hoodie.keygen.timebased.timestamp.scalar.time.unit"):
    define(_k, None, "Timestamp-based key generator setting (as in Hudi).", W)
define("hoodie.datasource.query.type", "snapshot", "snapshot, read_optimized or incremental.", R)
define("hoodie.datasource.read.begin.instanttime", None, "Incremental start instant (exclusive).", R)
define("hoodie.datasource.read.end.instanttime", None, "Incremental end instant (inclusive).", R)
define("hoodie.datasource.read.split.target.bytes", str(128 * 1024 * 1024),
       "Bytes of file slices grouped into one Spark task.", R)


def _load_services() -> None:
    for mod in SERVICE_CONFIG_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            # A service package that is not installed defines no keys; any other error surfaces.
            if e.name is None or not mod.startswith(e.name):
                raise


def all_configs() -> list[ConfigKey]:
    """Every defined key, sorted by group then key."""
    _load_services()
    return sorted(_REGISTRY.values(), key=lambda c: (c.group, c.key))


def known_keys() -> set[str]:
    """Every key and alias hoodie accepts."""
    out: set[str] = set()
    for c in all_configs():
        out.add(c.key)
        out.update(c.aliases)
    return out


_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("hoodie_quiet_unknown_keys", default=False)


def warn_unknown_keys(options: Optional[Mapping[str, Any]], stacklevel: int = 3) -> list[str]:
    """Warn about each ``hoodie.*`` key in ``options`` that hoodie does not know, suggesting the
    closest known key; returns the unknown keys.

    Every entry point that takes options calls this (writes, TTL, clean, compaction, the CLI's
    ``--set``): a misspelled key would otherwise be ignored and its default applied in silence.
    """
    if not options or _quiet.get():
        return []
    known = known_keys()
    unknown = [k for k in options if isinstance(k, str) and k.startswith("hoodie.") and k not in known]
    for k in unknown:
        close = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        warnings.warn(f"unknown option {k!r} is ignored{hint}", UserWarning, stacklevel=stacklevel)
    return unknown


@contextlib.contextmanager
def unknown_keys_checked() -> Iterator[None]:
    """Inside this block :func:`warn_unknown_keys` is silent: the caller has already warned about
    these options (inline services get the options of the write that warned)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)
