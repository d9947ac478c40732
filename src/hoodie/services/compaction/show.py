"""Showing compactions: one :class:`CompactionSummary` per compaction instant, pending and completed.

``hoodie compaction show`` and ``CALL show_compaction`` both list what :func:`show_compactions`
returns, so they report the same fields. A damaged plan file is reported (``damaged`` names the
file, the problem and the fix), never raised: showing compactions is where a user looks when
something is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Union

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.compaction_plan import CompactionPlan
from hoodie.format.table import HoodieTable, open_table
from hoodie.format.timeline.active import DamagedTimelineFileError, Timeline

import hoodie.services.compaction.keys as K


@dataclass(frozen=True)
class CompactionSummary:
    """One compaction instant as the show commands report it.

    The plan fields (``operations`` .. ``threshold_ms``) come from ``<t>.compaction.requested``;
    they are None when the plan is damaged (``damaged`` says why). ``duration_ms``,
    ``bytes_written`` and ``remaining_log_files`` come from the metrics hoodie records in a
    completed compaction's commit (None while pending, and for compactions hoodie did not run).
    """

    instant: str
    state: str  # REQUESTED, INFLIGHT or COMPLETED
    operations: Optional[int] = None
    partial_operations: Optional[int] = None
    file_groups: Optional[int] = None
    partitions: Optional[tuple[str, ...]] = None
    strategy: Optional[str] = None
    threshold_ms: Optional[int] = None  # the event-time threshold T of an event-time plan
    damaged: Optional[str] = None
    duration_ms: Optional[int] = None
    bytes_written: Optional[int] = None
    remaining_log_files: Optional[int] = None

    @property
    def is_pending(self) -> bool:
        """Whether the compaction is requested or inflight."""
        return self.state != I.State.COMPLETED.name

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``hoodie compaction show --json``: the plan's fields, or ``damaged``
        instead of them; a completed compaction adds its commit's metrics."""
        out: dict[str, Any] = {"instant": self.instant, "state": self.state}
        if self.damaged is None:
            out.update(operations=self.operations, partial_operations=self.partial_operations,
                       file_groups=self.file_groups, partitions=list(self.partitions or ()),
                       strategy=self.strategy, threshold_ms=self.threshold_ms)
        else:
            out["damaged"] = self.damaged
            if not self.is_pending:
                out["operations"] = self.operations
        if not self.is_pending:
            out.update(duration_ms=self.duration_ms, bytes_written=self.bytes_written,
                       remaining_log_files=self.remaining_log_files)
        return out


def _threshold(extra: dict[str, str]) -> Optional[int]:
    raw = extra.get(K.THRESHOLD_KEY)
    try:
        return int(raw) if raw else None
    except ValueError:
        return None  # not written by hoodie: shown without a threshold rather than failing the listing


def _commit_metrics(tl: Timeline, inst: I.Instant) -> dict[str, Any]:
    try:
        m = json.loads(tl.commit_metadata(inst).extra_metadata.get(K.METRICS_KEY) or "{}")
    except ValueError:
        return {}  # unparsable metrics: the compaction is still listed
    return m if isinstance(m, dict) else {}


def summarize(tl: Timeline, inst: I.Instant) -> CompactionSummary:
    """The summary of compaction ``inst`` (a pending ``compaction`` instant, or the completed
    ``commit`` of a compaction)."""
    plan: Optional[CompactionPlan] = None
    damaged: Optional[str] = None
    try:
        plan = tl.compaction_plan(inst.timestamp)
    except DamagedTimelineFileError as e:
        damaged = str(e)
    except FileNotFoundError:
        damaged = (f".hoodie/{I.instant_file_name(inst.timestamp, I.COMPACTION, I.State.REQUESTED)} is missing: "
                   "the compaction has no plan")
    metrics = _commit_metrics(tl, inst) if inst.is_completed else {}
    common: dict[str, Any] = dict(
        instant=inst.timestamp, state=inst.state.name, damaged=damaged,
        duration_ms=metrics.get("durationMs"), bytes_written=metrics.get("bytesWritten"),
        remaining_log_files=metrics.get("remainingLogFiles"))
    if plan is None:
        # A completed compaction recorded its operation count in its commit as well.
        return CompactionSummary(operations=metrics.get("operations"), **common)
    return CompactionSummary(
        operations=len(plan.operations), partial_operations=len(plan.partial_operations()),
        file_groups=len(plan.file_groups()), partitions=tuple(plan.partitions()),
        strategy=plan.extra_metadata.get(K.STRATEGY_KEY), threshold_ms=_threshold(plan.extra_metadata),
        **common)


def show_compactions(table_or_path: Union[str, HoodieTable], *, limit: Optional[int] = None,
                     storage_options: Optional[dict[str, Any]] = None) -> list[CompactionSummary]:
    """Every compaction on the active timeline, pending and completed, oldest first.

    Args:
        table_or_path: the table or its base path.
        limit: keep only the newest ``limit`` compactions.
        storage_options: for a base path on an object store.
    """
    table = open_table(table_or_path, storage_options)
    tl = table.timeline
    insts = [i for i in tl.instants if (i.action == I.COMPACTION and not i.is_completed) or tl.is_compaction_commit(i)]
    if limit is not None:
        insts = insts[-limit:] if limit > 0 else []
    return [summarize(tl, i) for i in insts]


__all__ = ["CompactionSummary", "show_compactions", "summarize"]
