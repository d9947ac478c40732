"""Which instants archival moves out of the active timeline: Java's rule, as a pure function.

The rule is ``TimelineArchiverV2.getInstantsToArchive`` of Hudi 1.x (the same candidates as Hudi 0.15's
``HoodieTimelineArchiver`` since HUDI-6678), applied to the data table and, with the extra guard of
its step 5, to the metadata table:

* nothing unless more than ``hoodie.keep.max.commits`` completed commits (commit, deltacommit,
  replacecommit) are active; then the oldest of them, keeping the newest ``hoodie.keep.min.commits``
  (both widened, as ``ArchivalUtils.getMinAndMaxInstantsToKeep`` does, when the cleaner's earliest
  commit to retain needs more);
* never a commit at or after the earliest *retain bound*, the smallest of:

  1. the earliest pending write (commit, deltacommit, replacecommit, compaction, log compaction,
     clustering): the last completed commit before it stays too (or the pending instant itself when
     none is before it);
  2. merge-on-read tables whose compaction triggers on commit counts (``NUM_COMMITS``,
     ``NUM_AND_TIME``): the deltacommits compaction scheduling needs (``CompactionUtils
     .getEarliestInstantToRetainForCompaction``);
  3. replacecommits (TTL's delete_partition, insert_overwrite, clustering) whose replaced file groups
     the cleaner has not removed: the first replacecommit at or after the latest clean's earliest
     instant to retain (or its earliest savepoint that blocked cleaning, HUDI-7779), and **the first
     replacecommit at all when no clean ever ran** (``ClusteringUtils.getEarliestInstantToRetainForClustering``);
  4. a data table with a metadata table: the metadata table's latest compaction (nothing at all
     before its first one): instants after it exist only in the metadata table's log files;
  5. a metadata table: the data table's first commits-timeline instant and its first pending
     instant of any action (``TimelineUtils.getEarliestInstantForMetadataArchival``);
  6. hoodie's own: a completed partial compaction whose links (:mod:`hoodie.format.file_group.links`)
     still exist. Its commit metadata is the only record that a link stands for an older log file:
     the cleaner must not delete a live link's target, and incremental reads must not return a linked
     log's records as new. Archived, the record would be out of the cleaner's sight (a symlink's
     target was deleted under a live link; tests/prove/test_concurrency.py's long run). The links die
     when the cleaner removes the slice holding them, so the guard lifts with the next compaction of
     those file groups and the clean after it.

* never a commit at or after the first savepoint (``hoodie.archive.beyond.savepoint=false``);
* completed cleans and rollbacks older than the newest archived commit go with the commits.

Each instant is archived with all its state files (requested, inflight, completed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Sequence

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.instant import Instant
from hoodie.services.archive.config import ArchivalConfig

# The write timeline (Java's getWriteTimeline): actions whose pending instants archival never passes.
WRITE_TIMELINE = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION, I.LOG_COMPACTION, I.CLUSTERING)
COMMITS_TIMELINE = WRITE_TIMELINE
# CleanerUtils.SAVEPOINTED_TIMESTAMPS: extra metadata of a clean plan naming the savepoints it kept files for.
SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"


@dataclass(frozen=True)
class Bound:
    """One guard: no commit at or after ``timestamp`` is archived, because of ``reason``."""

    timestamp: str
    reason: str


@dataclass
class ArchivalPlan:
    """What one archival moves: ``instants`` (completed commits, then the cleans and rollbacks among
    them, in timeline order), the guards that stopped it (``bounds``, smallest first) and the
    ``min_commits``/``max_commits`` in force. ``notes`` say in words why nothing more is archived."""

    instants: list[Instant] = field(default_factory=list)
    commits: list[Instant] = field(default_factory=list)
    bounds: list[Bound] = field(default_factory=list)
    min_commits: int = 0
    max_commits: int = 0
    active_commits: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def timestamps(self) -> list[str]:
        """The archived instant times, in order."""
        return [i.timestamp for i in self.instants]

    def to_json(self) -> dict:
        """A JSON-able summary (CLI, procedures)."""
        return {"instants": [f"{i.timestamp}.{i.action}" for i in self.instants],
                "active_commits": self.active_commits, "min_commits": self.min_commits,
                "max_commits": self.max_commits,
                "bounds": [{"timestamp": b.timestamp, "reason": b.reason} for b in self.bounds],
                "notes": list(self.notes)}


@dataclass(frozen=True)
class CleanFacts:
    """What the guards read from the latest completed clean: its instant, the earliest instant to retain of
    its plan (None: KEEP_LATEST_FILE_VERSIONS or nothing retained) and the savepoints its plan kept files for."""

    instant: str
    earliest_instant_to_retain: Optional[str]
    savepointed: tuple[str, ...] = ()


def clean_facts_from_plan(instant: str, plan: Optional[Mapping]) -> CleanFacts:
    """:class:`CleanFacts` from a ``HoodieCleanerPlan`` record (as read from ``<t>.clean.requested``)."""
    if not plan:
        return CleanFacts(instant, None)
    eitr = plan.get("earliestInstantToRetain") or {}
    ts = eitr.get("timestamp") if isinstance(eitr, Mapping) else None
    extra = plan.get("extraMetadata") or {}
    sps = tuple(s for s in str(extra.get(SAVEPOINTED_TIMESTAMPS) or "").split(",") if s)
    return CleanFacts(instant, ts or None, sps)


def _cleaner_ectr(instants: Sequence[Instant], completed: Sequence[Instant], cfg: ArchivalConfig,
                  tz: str) -> Optional[str]:
    """``CleanerUtils.getEarliestCommitToRetain`` as archival's min/max adjustment calls it."""
    if cfg.cleaner_policy == "KEEP_LATEST_COMMITS":
        if len(completed) <= cfg.cleaner_commits_retained:
            return None
        nth = completed[len(completed) - cfg.cleaner_commits_retained].timestamp
        pending = next((i.timestamp for i in instants if i.action in COMMITS_TIMELINE and not i.is_completed), None)
        return pending if pending is not None and pending < nth else nth
    if cfg.cleaner_policy == "KEEP_LATEST_BY_HOURS" and completed:
        try:
            latest_ms = I.instant_to_epoch_ms(completed[-1].timestamp, tz)
        except ValueError:
            return None  # a reserved or unparsable instant: Java logs and skips the adjustment
        cutoff = I.epoch_ms_to_instant(latest_ms - cfg.cleaner_hours_retained * 3_600_000, tz)
        return next((c.timestamp for c in completed if I.fix_instant_compatibility(c.timestamp) >= cutoff), None)
    return None


def min_max_to_keep(instants: Sequence[Instant], completed: Sequence[Instant], cfg: ArchivalConfig,
                    tz: str) -> tuple[int, int]:
    """``ArchivalUtils.getMinAndMaxInstantsToKeep``: the configured window, widened (keeping max - min) when
    the cleaner's earliest commit to retain has more commits after it than the window keeps."""
    lo, hi = cfg.min_commits, cfg.max_commits
    ectr = _cleaner_ectr(instants, completed, cfg, tz)
    if ectr is not None:
        need = sum(1 for c in completed if c.timestamp > ectr) + 2
        if lo < need:
            return need, need + hi - lo
    return lo, hi


def _compaction_bound(instants: Sequence[Instant], max_delta_commits: int) -> Optional[Bound]:
    """``CompactionUtils.getEarliestInstantToRetainForCompaction``: keep the deltacommits since the latest
    completed compaction (and it), or the newest ``max_delta_commits`` of them when there are more."""
    last_compaction = next((i for i in reversed(instants) if i.action == I.COMMIT and i.is_completed), None)
    deltas = [i for i in instants if i.action == I.DELTA_COMMIT
              and (last_compaction is None or i.timestamp > last_compaction.timestamp)]
    if last_compaction is None and not deltas:
        return None
    anchor = last_compaction if last_compaction is not None else deltas[0]
    if len(deltas) < max_delta_commits:
        return Bound(anchor.timestamp, f"compaction scheduling counts the deltacommits since {anchor.timestamp} "
                                       f"(fewer than {max_delta_commits})")
    keep = deltas[len(deltas) - max_delta_commits]
    return Bound(keep.timestamp, f"compaction scheduling counts the newest {max_delta_commits} deltacommits")


def _replace_bound(instants: Sequence[Instant], clean: Optional[CleanFacts], cleaner_policy: str) -> Optional[Bound]:
    """``ClusteringUtils.getEarliestInstantToRetainForClustering`` with HUDI-7779's savepoint guard."""
    replaces = [i for i in instants if i.action in (I.REPLACE_COMMIT, I.CLUSTERING)]
    if not replaces:
        return None
    if clean is None:
        return Bound(replaces[0].timestamp, f"replacecommit {replaces[0].timestamp}: no clean has run yet, so the "
                                            "file groups it replaced are still on storage (HUDI-7779)")
    lower: str
    why: str
    sp = min(clean.savepointed) if clean.savepointed else None
    ectr = clean.earliest_instant_to_retain
    completed_replaces = [i for i in replaces if i.is_completed]
    if (cleaner_policy != "KEEP_LATEST_FILE_VERSIONS" and ectr and sp and ectr > sp
            and any(sp <= r.timestamp <= ectr for r in completed_replaces)):
        lower, why = sp, f"savepoint {sp} kept replaced file groups from clean {clean.instant}"
    elif ectr:
        lower, why = ectr, f"clean {clean.instant} retains from {ectr}"
    else:
        lower, why = clean.instant, f"clean {clean.instant} (no earliest instant to retain)"
    first = next((r for r in replaces if r.timestamp >= lower), None)
    if first is None:
        return None
    return Bound(first.timestamp, f"replacecommit {first.timestamp}: its replaced file groups are not cleaned yet "
                                  f"({why})")


def plan_archival(instants: Sequence[Instant], cfg: ArchivalConfig, *, is_mor: bool, tz: str = "UTC",
                  latest_clean: Optional[CleanFacts] = None,
                  metadata_table: Optional[tuple[bool, Optional[str], Callable[[str], Optional[str]]]] = None,
                  data_timeline: Optional[Sequence[Instant]] = None,
                  live_links: Optional[str] = None) -> ArchivalPlan:
    """The instants one archival moves, by Java's rule (module docstring).

    Args:
        instants: the active timeline, one instant per (time, action) in its highest state, in order.
        cfg: the archival (and cleaner, compaction) settings.
        is_mor: whether the table is merge-on-read (the compaction guard).
        tz: the timeline's zone (``hoodie.table.timeline.timezone``), for KEEP_LATEST_BY_HOURS.
        latest_clean: the latest completed clean's plan facts, None when no clean completed.
        metadata_table: for a data table with a metadata table: ``(layout 2, latest MDT compaction or None,
            completion time of a data instant)``; None without one.
        data_timeline: when ``instants`` are a metadata table's: the data table's active timeline.
        live_links: the earliest completed compaction whose partial-compaction links still exist (guard 6).
    """
    instants = sorted(instants, key=Instant.sort_key)
    completed = [i for i in instants if i.is_completed and i.action in I.WRITE_ACTIONS]
    lo, hi = min_max_to_keep(instants, completed, cfg, tz)
    plan = ArchivalPlan(min_commits=lo, max_commits=hi, active_commits=len(completed))
    if len(completed) <= hi:
        plan.notes.append(f"{len(completed)} completed commit(s) in the active timeline, not more than "
                          f"hoodie.keep.max.commits={hi}: nothing to archive")
        return plan
    bounds: list[Bound] = []
    # 1. the earliest pending write, and the last completed commit before it
    pending = next((i for i in instants if i.action in WRITE_TIMELINE and not i.is_completed), None)
    if pending is not None:
        before = [c for c in completed if c.timestamp < pending.timestamp]
        keep = before[-1] if before else pending
        bounds.append(Bound(keep.timestamp, f"{pending.action} {pending.timestamp} is {pending.state.name.lower()}"))
    # 2. compaction scheduling of merge-on-read tables
    if is_mor and cfg.compaction_trigger in ("NUM_COMMITS", "NUM_AND_TIME"):
        max_delta = cfg.mdt_max_delta_commits if data_timeline is not None else cfg.compaction_max_delta_commits
        b = _compaction_bound(instants, max_delta)
        if b is not None:
            bounds.append(b)
    # 3. replacecommits whose replaced file groups are not cleaned
    b = _replace_bound(instants, latest_clean, cfg.cleaner_policy)
    if b is not None:
        bounds.append(b)
    # 4. the metadata table has not compacted the instants yet
    if metadata_table is not None:
        layout2, mdt_compaction, completion_of = metadata_table
        if mdt_compaction is None:
            plan.notes.append("the metadata table has not compacted yet: nothing is archived before its first "
                              "compaction (its log files refer to the data table's active instants)")
            plan.bounds = [Bound("", "no metadata table compaction yet")]
            return plan
        if layout2:
            after = next((c for c in completed if (completion_of(c.timestamp) or c.timestamp) > mdt_compaction), None)
            if after is not None:
                bounds.append(Bound(after.timestamp, f"completed after the metadata table's latest compaction "
                                                     f"{mdt_compaction}"))
        else:
            bounds.append(Bound(mdt_compaction, f"the metadata table's latest compaction is {mdt_compaction}"))
    # 5. a metadata table never archives what the data table's active timeline still refers to
    if data_timeline is not None:
        data = sorted(data_timeline, key=Instant.sort_key)
        first_commit = next((i for i in data if i.action in COMMITS_TIMELINE), None)
        first_pending = next((i for i in data if not i.is_completed), None)
        cands = [i for i in (first_commit, first_pending) if i is not None]
        if cands:
            first = min(cands, key=Instant.sort_key)
            bounds.append(Bound(first.timestamp, f"the data table's active timeline starts at {first.timestamp}"))
    # 6. a partial compaction whose links are live
    if live_links is not None:
        bounds.append(Bound(live_links, f"compaction {live_links} keeps log files visible through links that "
                                        f"still exist (its commit records which log file each one stands for)"))
    bounds.sort(key=lambda b: b.timestamp)
    plan.bounds = bounds
    savepoint = next((i for i in instants if i.action == I.SAVEPOINT and i.is_completed), None)
    eligible = []
    for c in completed:
        if savepoint is not None and c.timestamp >= savepoint.timestamp:
            break
        if bounds and c.timestamp >= bounds[0].timestamp:
            break
        eligible.append(c)
    eligible = eligible[:max(0, len(completed) - lo)]
    plan.commits = eligible
    if savepoint is not None:
        plan.notes.append(f"savepoint {savepoint.timestamp}: archival stops before it")
    if bounds:
        plan.notes.append(f"{bounds[0].reason}: nothing at or after {bounds[0].timestamp} is archived")
    plan.notes.append(f"keeps the newest hoodie.keep.min.commits={lo} completed commits")
    if not eligible:
        return plan
    last = eligible[-1].timestamp
    services = [i for i in instants if i.is_completed and i.action in (I.CLEAN, I.ROLLBACK) and i.timestamp < last]
    plan.instants = sorted(eligible + services, key=Instant.sort_key)
    return plan


__all__ = ["ArchivalPlan", "Bound", "CleanFacts", "plan_archival", "clean_facts_from_plan", "min_max_to_keep",
           "WRITE_TIMELINE"]
