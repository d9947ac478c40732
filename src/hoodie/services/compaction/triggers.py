"""When to schedule a compaction: ``hoodie.compact.inline.trigger.strategy``.

Hudi's ``CompactionTriggerStrategy`` (table-services-upstream.md §2.5) plus ``EVENT_TIME_TRIGGER``:

* ``NUM_COMMITS``: completed deltacommits since the last completed compaction (or since the first
  deltacommit when there was none) >= ``hoodie.compact.inline.max.delta.commits``;
* ``NUM_COMMITS_AFTER_LAST_REQUEST``: the same count, from the latest compaction request, pending
  or completed;
* ``TIME_ELAPSED``: seconds from that compaction (or the first deltacommit) to the new instant >=
  ``hoodie.compact.inline.max.delta.seconds``;
* ``NUM_AND_TIME`` / ``NUM_OR_TIME``: both / either;
* ``EVENT_TIME_TRIGGER``: no compaction (or log compaction) and no clustering is pending, so
  event-time plans run strictly one after another (RFC §3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.plans import read_avro_metadata
from hoodie.format.table import HoodieTable
from hoodie.format.timeline.active import Timeline

from hoodie.services.compaction.config import CompactionConfig


@dataclass(frozen=True)
class TriggerDecision:
    """Whether to schedule, and why (shown by the CLI and in logs)."""

    schedule: bool
    reason: str


def delta_commits_since(timeline: Timeline, *, from_request: bool) -> tuple[int, Optional[str]]:
    """(count of completed deltacommits, reference instant) as Hudi's ``CompactionUtils`` computes
    them: after the last completed compaction (``commit``/``replacecommit``), or after the latest
    compaction request when ``from_request``; otherwise from the first deltacommit on."""
    deltas = timeline.completed().by_actions(I.DELTA_COMMIT)
    marks = [i.timestamp for i in timeline.completed().by_actions(I.COMMIT, I.REPLACE_COMMIT).instants]
    if from_request:
        marks += [i.timestamp for i in timeline.pending_compactions().instants]
    if marks:
        last = max(marks)
        return len(deltas.after(last)), last
    first = deltas.first()
    if first is None:
        return 0, None
    return len(deltas), first.timestamp


def pending_clustering(timeline: Timeline) -> list[str]:
    """Instants of pending replacecommits that are clustering (their requested file holds a
    clustering plan or says ``CLUSTER``). An unreadable requested file counts as clustering."""
    out = []
    for inst in timeline.pending_replaces().instants:
        try:
            data = timeline.read_file(inst.requested_file_name)
        except FileNotFoundError:
            continue
        if not data:
            continue  # insert_overwrite from the Spark datasource may leave it empty
        try:
            meta = read_avro_metadata(data)
        except ValueError:
            out.append(inst.timestamp)
            continue
        if meta.get("clusteringPlan") or (meta.get("operationType") or "").upper() == "CLUSTER":
            out.append(inst.timestamp)
    return out


def evaluate_trigger(table: HoodieTable, config: CompactionConfig, instant: str) -> TriggerDecision:
    """Decide whether a compaction at ``instant`` should be scheduled now."""
    tl = table.timeline
    trigger = config.trigger
    if trigger == "EVENT_TIME_TRIGGER":
        pending = [i.timestamp for i in tl.pending_compactions().instants]
        pending += [i.timestamp for i in tl.pending_log_compactions().instants]
        if pending:
            return TriggerDecision(False, f"EVENT_TIME_TRIGGER: compaction {min(pending)} is still pending; "
                                          "event-time compactions run one after another")
        clustering = pending_clustering(tl)
        if clustering:
            return TriggerDecision(False, f"EVENT_TIME_TRIGGER: clustering {min(clustering)} is pending")
        return TriggerDecision(True, "EVENT_TIME_TRIGGER: no compaction or clustering pending")
    count, ref = delta_commits_since(tl, from_request=trigger == "NUM_COMMITS_AFTER_LAST_REQUEST")
    if ref is None:
        return TriggerDecision(False, "no completed deltacommit yet")
    num_ok = count >= config.max_delta_commits
    elapsed = (I.instant_to_epoch_ms(instant, table.timeline_timezone)
               - I.instant_to_epoch_ms(I.fix_instant_compatibility(ref), table.timeline_timezone)) // 1000
    time_ok = elapsed >= config.max_delta_seconds
    num_txt = f"{count} delta commit(s) since {ref} (need {config.max_delta_commits})"
    time_txt = f"{elapsed} s since {ref} (need {config.max_delta_seconds})"
    if trigger in ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST"):
        return TriggerDecision(num_ok, f"{trigger}: {num_txt}")
    if trigger == "TIME_ELAPSED":
        return TriggerDecision(time_ok, f"{trigger}: {time_txt}")
    if trigger == "NUM_AND_TIME":
        return TriggerDecision(num_ok and time_ok, f"{trigger}: {num_txt}; {time_txt}")
    return TriggerDecision(num_ok or time_ok, f"{trigger}: {num_txt}; {time_txt}")


__all__ = ["TriggerDecision", "evaluate_trigger", "delta_commits_since", "pending_clustering"]
