"""Compaction of MERGE_ON_READ tables, in pure Python: scheduling (Hudi's strategies and triggers plus
event-time compaction), partial compaction with links, execution, rollback, freshness and metrics.

Start with :func:`schedule_compaction` and :func:`run_compaction`; docs/compaction.md describes the
strategies, every option, the partial-compaction plan format and the freshness guarantees.
"""

from hoodie.services.compaction.config import (
    CompactionConfig, CompactionConfigError, CompactionError,
)
from hoodie.services.compaction.execute import (
    CompactionTask, CompactionWriteStat, execute_operation, execute_task,
)
from hoodie.services.compaction.freshness import compute_watermark, freshness
from hoodie.services.compaction.metrics import prometheus_text, push_prometheus, write_prometheus
from hoodie.services.compaction.rollback import CompactionRollbackResult, rollback_compaction
from hoodie.services.compaction.runner import (
    CompactionAsyncService, CompactionResult, CompactionRuns, maybe_compact_inline, run_compaction,
)
from hoodie.services.compaction.schedule import (
    ScheduleResult, plan_compaction, schedule_compaction, schedule_compaction_result,
)
from hoodie.services.compaction.show import CompactionSummary, show_compactions
from hoodie.services.compaction.strategies import CompactionStrategy, resolve_strategy

__all__ = [
    "CompactionConfig", "CompactionConfigError", "CompactionError", "CompactionTask", "CompactionWriteStat",
    "execute_operation", "execute_task", "compute_watermark", "freshness", "prometheus_text", "push_prometheus",
    "write_prometheus", "CompactionRollbackResult", "rollback_compaction", "CompactionAsyncService", "CompactionResult",
    "CompactionRuns",
    "maybe_compact_inline", "run_compaction", "ScheduleResult", "plan_compaction", "schedule_compaction",
    "schedule_compaction_result", "CompactionStrategy", "resolve_strategy", "CompactionSummary", "show_compactions",
]
