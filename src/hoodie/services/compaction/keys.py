"""Metadata keys compaction writes into plans (``extraMetadata`` of ``<t>.compaction.requested``) and
into completed compaction commits (``extraMetadata`` of ``<t>.commit``). Stock Hudi ignores them.
"""

from __future__ import annotations

from hoodie.configs.compaction import EVENT_TIME_EXACT_SPLIT, EVENT_TIME_THRESHOLD, STRATEGY
from hoodie.format.file_group.links import LINKS_KEY, PARTIAL_PLAN_KEY

# Plan and commit: which strategy planned the compaction.
STRATEGY_KEY = STRATEGY.key  # the option's own key (hoodie.configs.compaction)
# Plan and commit: the event-time threshold T (epoch ms) of an event-time compaction, and whether
# the plan compacts every log file of the table whose minimum event time is <= T.
THRESHOLD_KEY = EVENT_TIME_THRESHOLD.key
THRESHOLD_COMPLETE_KEY = "hoodie.compaction.event.time.threshold.complete"
# Plan: records after T are kept out of the base file (exact split), and the event-time field.
EXACT_SPLIT_KEY = EVENT_TIME_EXACT_SPLIT.key
EVENT_FIELD_KEY = "hoodie.compaction.event.time.field"
EVENT_UNIT_KEY = "hoodie.compaction.event.time.unit"  # hoodie.payload.event.time.unit at scheduling
# Commit: watermark W (epoch ms) and its status (known | unknown | complete) right after the commit.
WATERMARK_KEY = "hoodie.compaction.event.time.watermark"
WATERMARK_STATUS_KEY = "hoodie.compaction.event.time.watermark.status"
# Commit: metrics of the compaction and of the table's remaining log files (JSON object).
METRICS_KEY = "hoodie.compaction.metrics"
# Commit: log files written by an exact split (JSON list).
SPLIT_FILES_KEY = "hoodie.compaction.split.files"

__all__ = [
    "LINKS_KEY", "PARTIAL_PLAN_KEY", "STRATEGY_KEY", "THRESHOLD_KEY", "THRESHOLD_COMPLETE_KEY",
    "EXACT_SPLIT_KEY", "EVENT_FIELD_KEY", "EVENT_UNIT_KEY", "WATERMARK_KEY", "WATERMARK_STATUS_KEY", "METRICS_KEY",
    "SPLIT_FILES_KEY",
]
