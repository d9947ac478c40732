"""The archival planner against a model of Java's rule (issue 33).

:func:`java_instants_to_archive` transcribes ``TimelineArchiverV2.getInstantsToArchive`` (Hudi 1.x; the
same candidates as 0.15's ``HoodieTimelineArchiver``), ``ArchivalUtils.getMinAndMaxInstantsToKeep``,
``CleanerUtils.getEarliestCommitToRetain`` (KEEP_LATEST_COMMITS), ``CompactionUtils
.getEarliestInstantToRetainForCompaction``, ``ClusteringUtils.getEarliestInstantToRetainForClustering``
(with HUDI-7779's savepoint guard) and ``TimelineUtils.getEarliestInstantForMetadataArchival`` step by
step, stream by stream, over generated timelines with pending writes and compactions, replacecommits,
cleans (with and without an earliest instant to retain), rollbacks, savepoints and a metadata table that
lags. The planner must archive exactly that set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.instant import Instant, State
from hoodie.services.archive.config import ArchivalConfig
from hoodie.services.archive.planner import CleanFacts, plan_archival
from tests.helpers import examples


@dataclass
class Case:
    instants: list[Instant]
    cfg: ArchivalConfig
    is_mor: bool
    clean: Optional[CleanFacts]
    mdt: Optional[Optional[str]]  # None: no metadata table; (latest compaction or None) otherwise
    has_mdt: bool
    data: Optional[list[Instant]]  # when the timeline is a metadata table's: the data table's


def _ts(n: int) -> str:
    return f"2025010100{n:07d}"


@st.composite
def cases(draw: st.DrawFn, metadata_table: bool = False) -> Case:
    n = draw(st.integers(3, 45))
    is_mor = draw(st.booleans())
    instants: list[Instant] = []
    commits: list[str] = []
    for k in range(n):
        ts = _ts(10 * k + 10)
        kind = draw(st.sampled_from(["write"] * 6 + ["compaction", "replace", "clean", "rollback", "savepoint",
                                                     "pending"]))
        if kind == "write":
            instants.append(Instant(ts, I.DELTA_COMMIT if is_mor else I.COMMIT, State.COMPLETED))
            commits.append(ts)
        elif kind == "compaction":
            done = draw(st.booleans())
            instants.append(Instant(ts, I.COMMIT if done else I.COMPACTION,
                                    State.COMPLETED if done else draw(st.sampled_from([State.REQUESTED,
                                                                                        State.INFLIGHT]))))
            if done:
                commits.append(ts)
        elif kind == "replace":
            state = draw(st.sampled_from([State.COMPLETED] * 3 + [State.REQUESTED, State.INFLIGHT]))
            instants.append(Instant(ts, I.REPLACE_COMMIT, state))
            if state == State.COMPLETED:
                commits.append(ts)
        elif kind == "clean":
            instants.append(Instant(ts, I.CLEAN, draw(st.sampled_from([State.COMPLETED] * 4 + [State.INFLIGHT]))))
        elif kind == "rollback":
            instants.append(Instant(ts, I.ROLLBACK, draw(st.sampled_from([State.COMPLETED] * 4 + [State.INFLIGHT]))))
        elif kind == "savepoint" and commits:
            instants.append(Instant(draw(st.sampled_from(commits)), I.SAVEPOINT, State.COMPLETED))
        elif kind == "pending":
            instants.append(Instant(ts, I.DELTA_COMMIT if is_mor else I.COMMIT,
                                    draw(st.sampled_from([State.REQUESTED, State.INFLIGHT]))))
    instants.sort(key=Instant.sort_key)
    # One savepoint per commit at most (Hudi refuses a second).
    seen: set[tuple[str, str]] = set()
    instants = [i for i in instants if not ((i.timestamp, i.action) in seen or seen.add((i.timestamp, i.action)))]
    lo = draw(st.integers(1, 8))
    hi = lo + draw(st.integers(1, 6))
    retained = draw(st.integers(1, 12))
    policy = draw(st.sampled_from(["KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"]))
    cfg = ArchivalConfig(min_commits=lo, max_commits=hi, cleaner_policy=policy, cleaner_commits_retained=retained,
                         compaction_trigger=draw(st.sampled_from(["NUM_COMMITS", "TIME_ELAPSED"])),
                         compaction_max_delta_commits=draw(st.integers(1, 6)),
                         mdt_max_delta_commits=draw(st.integers(1, 6)))
    done_cleans = [i for i in instants if i.action == I.CLEAN and i.is_completed]
    clean = None
    if done_cleans:
        last = done_cleans[-1].timestamp
        before = [c for c in commits if c < last]
        ectr = draw(st.sampled_from([None, *before])) if before else None
        sps = draw(st.lists(st.sampled_from(before), max_size=2, unique=True)) if before else []
        clean = CleanFacts(last, ectr, tuple(sps))
    has_mdt = draw(st.booleans()) and not metadata_table
    mdt = None
    if has_mdt:
        mdt = draw(st.sampled_from([None, *[c + "001" for c in commits]])) if commits else None
    data = None
    if metadata_table:
        # The data table's active timeline: its first commit and first pending instant bound the MDT's archival.
        first = draw(st.integers(0, 10 * n + 20))
        data = [Instant(_ts(first), I.DELTA_COMMIT, State.COMPLETED)]
        if draw(st.booleans()):
            data.append(Instant(_ts(first + draw(st.integers(-5, 30))), I.CLEAN, State.REQUESTED))
    return Case(instants, cfg, is_mor, clean, mdt, has_mdt, data)


# -- the model: Java's code, transcribed ------------------------------------------------------------------------

def java_instants_to_archive(c: Case) -> list[tuple[str, str]]:
    """(timestamp, action) of the instants TimelineArchiverV2 archives, following its code."""
    active = c.instants
    commits_timeline = [i for i in active if i.action in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION,
                                                          I.LOG_COMPACTION, I.CLUSTERING)]
    completed_commits = [i for i in commits_timeline if i.is_completed]
    cfg = c.cfg
    # ArchivalUtils.getMinAndMaxInstantsToKeep
    lo, hi = cfg.min_commits, cfg.max_commits
    ectr = None
    if cfg.cleaner_policy == "KEEP_LATEST_COMMITS" and len(completed_commits) > cfg.cleaner_commits_retained:
        nth = completed_commits[len(completed_commits) - cfg.cleaner_commits_retained]
        pend = next((i for i in commits_timeline if not i.is_completed), None)
        ectr = pend if pend is not None and pend.timestamp < nth.timestamp else nth
    if ectr is not None:
        based = len([i for i in completed_commits if i.timestamp > ectr.timestamp]) + 2
        if lo < based:
            lo, hi = based, based + cfg.max_commits - cfg.min_commits
    # getCommitInstantsToArchive
    if len(completed_commits) <= hi:
        return []
    candidates: list[str] = []
    write_timeline = commits_timeline
    earliest_pending = next((i for i in write_timeline if not i.is_completed), None)
    if earliest_pending is not None:
        before = [i for i in completed_commits if i.timestamp < earliest_pending.timestamp]
        candidates.append(before[-1].timestamp if before else earliest_pending.timestamp)
    if c.is_mor and cfg.compaction_trigger in ("NUM_COMMITS", "NUM_AND_TIME"):
        max_delta = cfg.mdt_max_delta_commits if c.data is not None else cfg.compaction_max_delta_commits
        last_compaction = [i for i in active if i.action == I.COMMIT and i.is_completed]
        deltas = [i for i in active if i.action == I.DELTA_COMMIT]
        info = None
        if last_compaction:
            info = ([d for d in deltas if d.timestamp > last_compaction[-1].timestamp], last_compaction[-1])
        elif deltas:
            info = (deltas, deltas[0])
        if info is not None:
            dts, anchor = info
            if len(dts) < max_delta:
                candidates.append(anchor.timestamp)
            else:
                candidates.append(dts[:len(dts) - max_delta + 1][-1].timestamp)
    replace_or_cluster = [i for i in active if i.action in (I.REPLACE_COMMIT, I.CLUSTERING)]
    if replace_or_cluster:
        if c.clean is not None:
            eitr = c.clean.earliest_instant_to_retain
            sps = sorted(c.clean.savepointed)
            replaced_sp = None
            if cfg.cleaner_policy != "KEEP_LATEST_FILE_VERSIONS" and eitr and sps and eitr > sps[0]:
                if [r for r in replace_or_cluster if r.is_completed and sps[0] <= r.timestamp <= eitr]:
                    replaced_sp = sps[0]
            lower = replaced_sp or eitr or c.clean.instant
            after = [r for r in replace_or_cluster if r.timestamp >= lower]
            if after:
                candidates.append(after[0].timestamp)
        else:
            candidates.append(replace_or_cluster[0].timestamp)
    if c.has_mdt:
        if c.mdt is None:
            return []
        candidates.append(c.mdt)  # layout 1: instant < latest compaction time
    if c.data is not None:
        data_commits = [i for i in c.data if i.action in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION)]
        data_pending = [i for i in c.data if not i.is_completed]
        firsts = [x[0].timestamp for x in (sorted(data_commits, key=Instant.sort_key),
                                           sorted(data_pending, key=Instant.sort_key)) if x]
        if firsts:
            candidates.append(min(firsts))
    earliest_to_retain = min(candidates) if candidates else None
    savepoints = [i for i in active if i.action == I.SAVEPOINT and i.is_completed]
    first_sp = savepoints[0].timestamp if savepoints else None
    stream = [s for s in completed_commits if first_sp is None or s.timestamp < first_sp]
    stream = [s for s in stream if earliest_to_retain is None or s.timestamp < earliest_to_retain]
    to_archive = stream[:len(completed_commits) - lo]
    if not to_archive:
        return []
    latest = to_archive[-1].timestamp
    cleans = [i for i in active if i.action in (I.CLEAN, I.ROLLBACK) and i.is_completed and i.timestamp < latest]
    return sorted((i.timestamp, i.action) for i in to_archive + cleans)


def _planned(c: Case) -> list[tuple[str, str]]:
    mdt = (False, c.mdt, lambda ts: None) if c.has_mdt else None
    plan = plan_archival(c.instants, c.cfg, is_mor=c.is_mor, latest_clean=c.clean, metadata_table=mdt,
                         data_timeline=c.data)
    return sorted((i.timestamp, i.action) for i in plan.instants)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_data_table_archives_what_java_archives(c: Case) -> None:
    assert _planned(c) == java_instants_to_archive(c)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(metadata_table=True))
def test_the_metadata_table_archives_what_java_archives(c: Case) -> None:
    assert _planned(c) == java_instants_to_archive(c)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_what_stays_active_starts_after_everything_archived(c: Case) -> None:
    """hoodie's readers take a write older than the first active commits-timeline instant as archived and
    completed: archival must never leave a pending or unarchived commits-timeline instant before an archived
    one, nor archive anything at or after a savepoint, and keeps at least hoodie.keep.min.commits commits."""
    mdt = (False, c.mdt, lambda ts: None) if c.has_mdt else None
    plan = plan_archival(c.instants, c.cfg, is_mor=c.is_mor, latest_clean=c.clean, metadata_table=mdt)
    archived = {(i.timestamp, i.action) for i in plan.instants}
    if not archived:
        return
    last = max(ts for ts, _ in archived)
    stays = [i for i in c.instants if (i.timestamp, i.action) not in archived
             and i.action in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION)]
    assert all(i.timestamp > last for i in stays)
    # What readers take as archived (hence completed): every write older than the active timeline's start.
    # A pending clean or rollback, or a savepoint, that stays must not move the start before an archived
    # write (the old start, the first instant of any action, hid archived writes after a stale pending clean).
    from hoodie.format.timeline.active import Timeline

    remaining = Timeline([i for i in c.instants if (i.timestamp, i.action) not in archived])
    assert remaining.start is None or remaining.start > last
    assert all(i.timestamp > last for i in c.instants if i.action == I.SAVEPOINT)
    completed = [i for i in c.instants if i.is_completed and i.action in I.WRITE_ACTIONS]
    assert len(completed) - len(plan.commits) >= c.cfg.min_commits
    assert all(i.is_completed for i in plan.instants)
