"""TTL keys: partition TTL (Hudi 1.x's ``HoodieTTLConfig`` where Hudi has one; the RFC-65 spellings are
accepted as aliases: ``hoodie.partition.ttl.strategy``, ``hoodie.partition.ttl.days.retain``,
``hoodie.partition.ttl.partition.selected``), its tiering (``move``), async TTL and record-level TTL.
Keys Hudi does not have are hoodie's and documented in docs/ttl.md."""

from __future__ import annotations

from hoodie.configs.registry import define
from hoodie.configs.rules import BOOLEAN, DURATION, LIST, Duration, Enum, Int

KEEP_BY_TIME = "KEEP_BY_TIME"
KEEP_BY_CREATION_TIME = "KEEP_BY_CREATION_TIME"
KEEP_BY_EVENT_TIME = "KEEP_BY_EVENT_TIME"
STRATEGY_TYPES = (KEEP_BY_TIME, KEEP_BY_CREATION_TIME, KEEP_BY_EVENT_TIME)

_G = "ttl"
_DAYS = "hoodie.partition.ttl.strategy.days.retain"
_RETENTION = "hoodie.partition.ttl.strategy.retention"
_STRATEGY_CLASS = "hoodie.partition.ttl.strategy.class"

INLINE = define("hoodie.partition.ttl.inline", False,
                "Run partition TTL right after each commit (inline table service).", _G, type=BOOLEAN)
STRATEGY_CLASS = define(_STRATEGY_CLASS, None,
                        "Dotted path of a PartitionTTLStrategy subclass (module.Class); takes precedence over the "
                        "strategy type. Hudi's Java class names of the built-in strategies map to the built-ins.", _G)
STRATEGY_TYPE = define("hoodie.partition.ttl.management.strategy.type", KEEP_BY_TIME,
                       "Built-in strategy: KEEP_BY_TIME, KEEP_BY_CREATION_TIME or KEEP_BY_EVENT_TIME "
                       "(case-insensitive).", _G, aliases=("hoodie.partition.ttl.strategy",),
                       type=Enum(STRATEGY_TYPES, what="a TTL strategy type", hint=f"(or set {_STRATEGY_CLASS})"))
DAYS_RETAIN = define(_DAYS, -1,
                     "Whole days a partition is kept (an integer, as Hudi reads it). Must be positive when TTL runs "
                     "(unless every candidate partition is covered by a rule).", _G,
                     aliases=("hoodie.partition.ttl.days.retain",),
                     type=Int(what="a whole number of days",
                              hint=f"Hudi reads this key as an integer (e.g. {_DAYS}=30). For a retention that is not "
                                   f"whole days set {_RETENTION} to an ISO-8601 duration instead (e.g. "
                                   f"{_RETENTION}=PT36H; at least PT1H)"))
RETENTION = define(_RETENTION, None,
                   "Retention as an ISO-8601 duration (P7D, PT36H, P1DT12H, P2W) or a number of days, at least "
                   "PT1H; an alternative to days.retain (set one of them).", _G, type=DURATION)
SELECTED = define("hoodie.partition.ttl.strategy.partition.selected", None,
                  "Comma-separated exact partition paths to consider (default: all partitions).", _G,
                  aliases=("hoodie.partition.ttl.partition.selected",), type=LIST)
PREDICATE = define("hoodie.partition.ttl.strategy.partition.predicate", None,
                   "SQL-like predicate over partition columns selecting the partitions to consider, e.g. "
                   "region IN ('eu','us') AND day < '2024-01-01'.", _G, aliases=("hoodie.partition.ttl.predicate",))
RULES = define("hoodie.partition.ttl.rules", None,
               "Per-partition retention rules: a JSON list of {\"partition\": glob, \"retention\": duration} or "
               "'glob:duration;glob:duration'. The most specific matching glob wins.", _G)
MAX_DELETE = define("hoodie.partition.ttl.strategy.max.delete.partitions", 1000,
                    "At most this many partitions are deleted by one TTL run (oldest first).", _G, type=Int(minimum=0))
COUNT_TABLE_SERVICES = define("hoodie.partition.ttl.strategy.count.table.services", False,
                              "KEEP_BY_TIME: whether compaction, log compaction and clustering count as modifications "
                              "of a partition.", _G, type=BOOLEAN)
STATS_INCREMENTAL = define("hoodie.partition.ttl.strategy.stats.incremental", True,
                           "KEEP_BY_TIME: reuse the partition last-modified times recorded by the previous TTL run "
                           "and read only newer instants.", _G, type=BOOLEAN)
EVENT_FORMAT = define("hoodie.partition.ttl.strategy.event.time.format", "yyyy-MM-dd",
                      "KEEP_BY_EVENT_TIME: Java-style date pattern of the partition value; a '/' spans several path "
                      "segments (yyyy/MM/dd/HH).", _G)
EVENT_START_INDEX = define("hoodie.partition.ttl.strategy.event.time.segment.start.index", 0,
                           "KEEP_BY_EVENT_TIME: zero-based index of the first path segment holding the time.", _G,
                           type=Int(minimum=0))
EVENT_TIMEZONE = define("hoodie.partition.ttl.strategy.event.time.timezone", "UTC",
                        "KEEP_BY_EVENT_TIME: zone of the partition values (UTC, LOCAL, an IANA name such as "
                        "Asia/Shanghai, or an offset such as +08:00).", _G)
EVENT_AGE_FROM = define("hoodie.partition.ttl.strategy.event.time.age.from", "END",
                        "KEEP_BY_EVENT_TIME: age counts from the START or the END of the partition's period (END: a "
                        "1-day TTL keeps yesterday's daily partition all of today).", _G,
                        type=Enum(("START", "END"), what="a period end"))
EVENT_DELETE_DEFAULT = define("hoodie.partition.ttl.strategy.event.time.delete.hive.default.partition", False,
                              "KEEP_BY_EVENT_TIME: whether __HIVE_DEFAULT_PARTITION__ counts as expired.", _G,
                              type=BOOLEAN)
STASH_ENABLED = define("hoodie.partition.ttl.stash.enabled", False,
                       "Move expired partitions' files to .hoodie/.stashedForDeletion/<instant>/ after the TTL "
                       "commit, so `hoodie ttl restore` can bring them back.", _G, type=BOOLEAN)
STASH_RETAIN_DAYS = define("hoodie.partition.ttl.stash.retain.days", "7",
                           "Days a stash is kept before clean or TTL runs delete it (a number of days or an ISO-8601 "
                           "duration).", _G, type=Duration(minimum="PT0S"))
LOCAL_SKEW = define("hoodie.partition.ttl.local.timeline.skew", "PT26H",
                    "LOCAL timelines only (hoodie.table.timeline.timezone=LOCAL, instants are writers' wall-clock "
                    "times): how far writers' time zones may be from this process's. KEEP_BY_TIME and "
                    "KEEP_BY_CREATION_TIME keep partitions whose age exceeds the retention by no more than this (the "
                    "stash retention gets the same margin). PT26H covers every pair of zones; PT0S when every writer "
                    "and TTL run share one zone.", _G,
                    type=Duration(minimum="PT0S", maximum="PT26H",
                                  hint="(the largest difference between two time zones)"))
ASYNC_ENABLED = define("hoodie.ttl.async.enabled", False,
                       "Run TTL asynchronously (a background thread) as writes happen: partition TTL when configured, "
                       "and record TTL when hoodie.record.ttl.retention is set.", _G, type=BOOLEAN)
ASYNC_MAX_COMMITS = define("hoodie.ttl.async.max.commits", 4,
                           "Async TTL runs once at least this many commits completed since the last TTL run.", _G,
                           type=Int(minimum=1))
ASYNC_POLL_MS = define("hoodie.ttl.async.poll.interval.ms", 1000,
                       "How often the async TTL service checks the timeline without being notified.", _G,
                       type=Int(minimum=10, bits=64))

# Record-level TTL (issue 19; hoodie.services.ttl.record_ttl, docs/ttl.md "Record-level TTL"). Hudi has no
# record-level TTL yet; the keys follow the hoodie.partition.ttl.* spelling.
_RTTL = "ttl"
RECORD_TTL_FIELD = define(
    "hoodie.record.ttl.field", None,
    "Event-time column whose age expires a record: a timestamp, date, number (epoch time in "
    "hoodie.payload.event.time.unit) or ISO-8601 string column. Unset: hoodie.payload.event.time.field.", _RTTL)
RECORD_TTL_RETENTION = define(
    "hoodie.record.ttl.retention", None,
    "How long a record is kept after its event time: an ISO-8601 duration (P30D, PT36H) or a number of days; "
    "at least PT1H. A record whose event time is before now minus this is deleted by a record TTL run.", _RTTL,
    type=Duration(minimum="PT1H", hint="(e.g. P30D or PT36H)"))
RECORD_TTL_INLINE = define(
    "hoodie.record.ttl.inline", False,
    "Run record TTL right after a write commits (an inline table service, after partition TTL and "
    "before clean).", _RTTL, type=BOOLEAN)
RECORD_TTL_INLINE_MAX_COMMITS = define(
    "hoodie.record.ttl.inline.max.commits", 1,
    "Inline record TTL runs once at least this many writes completed since the last record TTL run.", _RTTL,
    type=Int(minimum=1))


# Partition TTL tiering (issue 19; hoodie.services.ttl.move, docs/ttl.md "Tiering"): the action of a
# partition TTL run, and where `move` puts the expired partitions.
TTL_ACTION = define(
    "hoodie.partition.ttl.action", "delete",
    "What partition TTL does with expired partitions: delete (a delete_partition replacecommit) or move (copy "
    "them into the Hudi table at hoodie.partition.ttl.move.target, verify the copy, then delete them from this "
    "table).", _RTTL, type=Enum(("delete", "move"), what="a partition TTL action"))
TTL_MOVE_TARGET = define(
    "hoodie.partition.ttl.move.target", None,
    "action=move: base path of the cold table (created on the first move): a local path, file://, s3://, gs://, "
    "abfs[s]:// or hdfs:// URI outside this table's base path.", _RTTL)
TTL_MOVE_STORAGE_OPTIONS = define(
    "hoodie.partition.ttl.move.storage.options", None,
    "action=move: storage options of the cold table's store as a JSON object (credentials, endpoint_override, "
    "region...; the names the hot table's storage options take). Unset: the hot table's storage options when "
    "the target is on the same kind of store.", _RTTL)
