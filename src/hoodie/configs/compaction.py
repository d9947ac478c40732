"""Compaction keys: Hudi's own (``HoodieCompactionConfig``: strategies, triggers, inline scheduling), then
the event-time and partial-compaction keys hoodie adds (``docs/compaction.md`` lists every key);
``hoodie.services.compaction.config.CompactionConfig`` parses them. Keys compaction shares with writes
(file size, codec, log block format, event-time field and unit) are defined once, in
:mod:`hoodie.configs.write`."""

from __future__ import annotations

from hoodie.configs.metrics import PUSHGATEWAY_HOST_KEY as HUDI_PUSHGATEWAY_HOST
from hoodie.configs.metrics import PUSHGATEWAY_PORT_KEY as HUDI_PUSHGATEWAY_PORT
from hoodie.configs.registry import define
from hoodie.configs.rules import BOOLEAN, EpochMillis, Enum, Float, Int

DEFAULT_STRATEGY = "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy"
TRIGGERS = ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME",
            "EVENT_TIME_TRIGGER")
LINK_MODES = ("auto", "symlink", "copy")

# -- keys (Hudi's: table-services-upstream.md §2.4, §2.5; then the event-time and partial-compaction
# keys this project adds) -----------------------------------------------------------------------
_G = "compaction"
STRATEGY = define("hoodie.compaction.strategy", DEFAULT_STRATEGY,
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
FAIL_ON_INLINE_SERVICE_EXCEPTION = define(
    "hoodie.fail.writes.on.inline.table.service.exception", True,
    "A write whose inline table service cannot run fails (true, Hudi's default); false logs a warning. hoodie "
    "checks what it can before the write starts: inline compaction on a copy-on-write table is refused then, "
    "or (false) ignored with a warning.", _G, type=BOOLEAN)
# One hour: data is expected to arrive at most an hour after its event time, so a compaction
# scheduled at C covers events up to C - 1h. Matches the default time trigger (3600 s).
EVENT_TIME_LATENCY_MS = define("hoodie.compaction.event.time.data.latency.ms", 3_600_000,
                               "EventTimeBased: threshold T = compaction instant - this latency (ms).", _G,
                               type=Int(minimum=0, bits=64))
EVENT_TIME_THRESHOLD = define("hoodie.compaction.event.time.threshold", None,
                              "EventTimeBased: explicit threshold T (epoch ms or ISO-8601).", _G, type=EpochMillis())
EVENT_TIME_EXACT_SPLIT = define("hoodie.compaction.event.time.exact.split", False,
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
