"""Scheduling: build a compaction plan and write ``<t>.compaction.requested`` (Avro plan version 2).

Hudi's plan generation (``BaseHoodieCompactionPlanGenerator``) with partial compaction added:

* file groups with a pending compaction, log compaction or clustering are excluded, and so are
  slices without log files; log files are taken in Hudi's log-file order;
* the strategy picks partitions, log files and operations (``strategies``); the compacted files of a
  slice are always a log-order prefix;
* a partial operation records its remaining files and their new names under the compaction instant
  in ``symlinkOperations``, reserves those log versions (operation metric
  ``hoodie.compaction.reserved.log.version``), and lists the sentinel delta file after the
  compacted files so that stock Hudi cannot execute it; the plan carries ``hoodie.compaction.partial``.

Scheduling is skipped (``None``) when the trigger says no, when nothing needs compacting, or while a
write is inflight: a write that started before the plan may still add log files to the slices the
plan rewrites, and those would be lost (Hudi refuses this case too).
"""

from __future__ import annotations

import datetime as _dt
import logging
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

from hoodie.configs import warn_unknown_keys

from hoodie.format.timeline import instant as I
from hoodie.format.timeline import active as T
from hoodie.format.timeline.compaction_plan import (
    RESERVED_LOG_VERSION_METRIC, CompactionOperation, CompactionPlan, SymlinkOperation,
)
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable, open_table, refuse_unwritable

import hoodie.services.compaction.keys as K
import hoodie.services.compaction.partial as P
from hoodie.services.compaction.config import CompactionError, as_config
from hoodie.format.slice.event_ranges import EventTimeIndex
from hoodie.services.compaction.strategies import (
    CandidateOperation, PlanningContext, event_time_strategy, resolve_strategy,
)
from hoodie.services.compaction.triggers import evaluate_trigger, pending_clustering
from hoodie.format.lock import TableLock
from hoodie.format.schema_on_read import refuse_write

log = logging.getLogger("hoodie.compaction")


@dataclass
class ScheduleResult:
    """The outcome of planning: the instant (None when nothing was scheduled), why, and the plan."""

    instant: Optional[str]
    reason: str
    plan: Optional[CompactionPlan] = None
    operations: list[CandidateOperation] = field(default_factory=list)
    threshold_ms: Optional[int] = None
    threshold_complete: bool = False




def excluded_file_groups(table: HoodieTable, view: FileSystemView) -> dict[tuple[str, str], str]:
    """(partition, fileId) -> why a file group cannot be compacted now (pending compaction, log
    compaction or clustering)."""
    out: dict[tuple[str, str], str] = {k: f"pending compaction {c}"
                                       for k, c in view.pending_compaction_file_groups().items()}
    tl = table.timeline
    for inst in tl.pending_log_compactions().instants:
        for op in tl.log_compaction_plan(inst.timestamp).operations:
            out[op.file_group] = f"pending log compaction {inst.timestamp}"
    for ts in pending_clustering(tl):
        try:
            meta = tl.avro_metadata(I.Instant(ts, I.REPLACE_COMMIT, I.State.REQUESTED))
        except ValueError:
            continue
        for group in ((meta.get("clusteringPlan") or {}).get("inputGroups") or []):
            for sl in group.get("slices") or []:
                out[(sl.get("partitionPath") or "", sl.get("fileId") or "")] = f"pending clustering {ts}"
    return out


def _check_instant(table: HoodieTable, instant: str) -> None:
    clash = [i.timestamp for i in table.timeline.instants
             if i.timestamp >= instant and (i.action in I.WRITE_ACTIONS or i.action == I.COMPACTION)]
    if clash:
        raise CompactionError(
            f"compaction instant {instant} must be later than every write and compaction instant on the "
            f"timeline, but {max(clash)} exists; omit the instant to get a fresh one")


def plan_compaction(table: HoodieTable, config: Any = None, *, instant: Optional[str] = None,
                    check_trigger: bool = True, context_today: Optional[_dt.date] = None) -> ScheduleResult:
    """Compute a compaction plan for ``table`` without writing it (``context_today`` pins "today"
    for the partition-aware strategies)."""
    cfg = as_config(config)
    if not table.is_mor:
        raise CompactionError(f"{table.base_path} is {table.table_type}; compaction applies to MERGE_ON_READ tables")
    # Resolved before the trigger: a misspelled strategy must fail now, not on the first round the
    # trigger fires (until then every round would report "nothing to compact").
    strategy = resolve_strategy(cfg)
    table.merge_mode  # a table whose merge hoodie cannot do Hudi's way is refused before a plan is written
    tl = table.timeline
    c = instant or table.new_instant_time()
    _check_instant(table, c)
    inflight_writes = [i.timestamp for i in tl.pending().by_actions(I.DELTA_COMMIT, I.COMMIT).instants
                       if i.timestamp < c]
    if inflight_writes:
        return ScheduleResult(None, f"write {min(inflight_writes)} is inflight: it may still add log files to "
                                    "the slices a plan would rewrite; let it complete or roll it back first")
    if check_trigger:
        decision = evaluate_trigger(table, cfg, c)
        if not decision.schedule:
            return ScheduleResult(None, decision.reason)
    index = EventTimeIndex(table)
    ctx = PlanningContext(table, cfg, c, index)
    if context_today is not None:
        ctx.today = context_today
    et = event_time_strategy(strategy)
    if cfg.exact_split:
        if et is None:
            raise CompactionError("hoodie.compaction.event.time.exact.split=true needs the "
                                  "EventTimeBasedCompactionStrategy in hoodie.compaction.strategy")
        if not cfg.event_time_field:
            raise CompactionError("hoodie.compaction.event.time.exact.split=true needs "
                                  "hoodie.payload.event.time.field (the column holding event times)")
        if cfg.event_time_field not in table.arrow_schema().names:
            raise CompactionError(f"event time field {cfg.event_time_field!r} is not a column of the table")
    view = FileSystemView(table.storage, tl)
    excluded = excluded_file_groups(table, view)
    candidates: list[CandidateOperation] = []
    for p in strategy.filter_partition_paths(view.partitions(), ctx):
        for sl in view.latest_file_slices(p, merge_pending_compaction=False):
            if (p, sl.file_id) in excluded or not sl.log_files:
                continue
            logs = sl.sorted_logs()
            chosen, _ = strategy.filter_log_files(logs, file_slice=sl, context=ctx)
            compact, remain = P.prefix_closure(logs, chosen)
            if not compact:
                continue
            candidates.append(CandidateOperation(sl, compact, remain, strategy.capture_metrics(sl, compact)))
    pending_plans = [tl.compaction_plan(i.timestamp) for i in tl.pending_compactions().instants]
    ops = strategy.order_and_filter(candidates, pending_plans, ctx)
    threshold = et.threshold(ctx) if et is not None else None
    if not ops:
        return ScheduleResult(None, "nothing to compact: no file slice with log files passed the strategy "
                                    f"({strategy.name})", threshold_ms=threshold)
    complete = False
    if threshold is not None:
        complete = _threshold_complete(view, index, ops, threshold)
        if not complete:
            log.warning("compaction %s leaves log files with events at or before the threshold %s "
                        "uncompacted (partition filters, IO budget or pending file groups); it will not be "
                        "published as the read-optimized freshness threshold", c, threshold)
    split = bool(cfg.exact_split)
    plan_ops = tuple(_operation(op, c, split) for op in ops)
    extra = {K.STRATEGY_KEY: strategy.name}
    if any(op.is_partial for op in ops):
        extra[K.PARTIAL_PLAN_KEY] = "true"
    if threshold is not None:
        extra[K.THRESHOLD_KEY] = str(threshold)
        extra[K.THRESHOLD_COMPLETE_KEY] = str(complete).lower()
    if split:
        extra[K.EXACT_SPLIT_KEY] = "true"
        extra[K.EVENT_FIELD_KEY] = cfg.event_time_field or ""
        extra[K.EVENT_UNIT_KEY] = cfg.event_time_unit
    plan = CompactionPlan(operations=plan_ops, extra_metadata=extra)
    n_partial = sum(1 for op in ops if op.is_partial)
    reason = f"{len(ops)} operation(s), {n_partial} partial, strategy {strategy.name}"
    return ScheduleResult(c, reason, plan, list(ops), threshold, complete)


def _operation(op: CandidateOperation, instant: str, split: bool) -> CompactionOperation:
    sl = op.file_slice
    first = 2 if split else 1
    links = P.link_names(sl.file_id, instant, op.to_remain, first)
    reserved = (first - 1) + len(op.to_remain)
    metrics = dict(op.metrics)
    if reserved:
        metrics[RESERVED_LOG_VERSION_METRIC] = float(reserved)
    deltas = [lf.name for lf in op.to_compact]
    if op.to_remain:
        deltas.append(P.sentinel_name(sl.file_id, instant))
    return CompactionOperation(
        base_instant_time=sl.base_instant, file_id=sl.file_id, partition_path=sl.partition,
        data_file_path=sl.base_file.name if sl.base_file else None, delta_file_paths=tuple(deltas),
        metrics={k: float(v) for k, v in metrics.items()},
        symlink_operations=tuple(SymlinkOperation(s, t) for s, t in links) if op.to_remain else None)


def _threshold_complete(view: FileSystemView, index: EventTimeIndex, ops, threshold: int) -> bool:
    """Whether the plan compacts every log file of the table whose minimum event time is <= T."""
    compacted = {(op.partition, lf.name) for op in ops for lf in op.to_compact}
    for p in view.partitions():
        for sl in view.latest_file_slices(p):
            for lf in sl.log_files:
                if (p, lf.name) not in compacted and index.for_log(lf).planning_min <= threshold:
                    return False
    return True


def write_plan(table: HoodieTable, instant: str, plan: CompactionPlan) -> None:
    """Create ``<instant>.compaction.requested`` holding the Avro plan."""
    table.wrote(T.create_requested(table.storage, instant, I.COMPACTION, plan.to_bytes()))


def schedule_compaction(table_or_path: Union[str, HoodieTable], config: Any = None, *,
                        instant: Optional[str] = None, check_trigger: bool = True,
                        storage_options: Optional[dict[str, Any]] = None) -> Optional[str]:
    """Plan a compaction and write ``<t>.compaction.requested``; returns the instant, or None when
    nothing was scheduled (the reason is logged; :func:`plan_compaction` returns it).

    Args:
        table_or_path: the table (or its base path) of a MERGE_ON_READ table.
        config: a :class:`CompactionConfig` or Hudi-style options (``hoodie.compaction.strategy``...).
        instant: the compaction instant (default: a fresh one after every instant on the timeline).
        check_trigger: apply ``hoodie.compact.inline.trigger.strategy`` (Hudi always does).
    """
    return schedule_compaction_result(table_or_path, config, instant=instant, check_trigger=check_trigger,
                                      storage_options=storage_options).instant


def schedule_compaction_result(table_or_path: Union[str, HoodieTable], config: Any = None, *,
                               instant: Optional[str] = None, check_trigger: bool = True,
                               storage_options: Optional[dict[str, Any]] = None) -> ScheduleResult:
    """Like :func:`schedule_compaction`, returning the full :class:`ScheduleResult`."""
    if isinstance(config, Mapping):
        warn_unknown_keys(config)
    table = open_table(table_or_path, storage_options)  # a new snapshot: its timeline is not listed yet
    cfg = as_config(config, table.props)

    # Under the table lock no write is in flight: the plan sees every committed log file, and a
    # write starting after it writes into the slices the plan opens. The snapshot lists its timeline
    # here, once, under the lock.
    with TableLock(table.storage, cfg.options, "compaction scheduling"):
        refuse_write(table, "compaction scheduling")  # hoodie could not run the plan it writes
        refuse_unwritable(table, "compaction scheduling")
        res = plan_compaction(table, cfg, instant=instant, check_trigger=check_trigger)
        if res.instant is None or res.plan is None:
            log.info("no compaction scheduled on %s: %s", table.base_path, res.reason)
            return res
        write_plan(table, res.instant, res.plan)
    log.info("scheduled compaction %s on %s: %s", res.instant, table.base_path, res.reason)
    return res


__all__ = ["schedule_compaction", "schedule_compaction_result", "plan_compaction", "ScheduleResult",
           "excluded_file_groups", "write_plan", "open_table"]
