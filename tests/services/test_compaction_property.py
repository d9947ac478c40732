"""Property tests: for random MOR histories and any event-time threshold,

* a (partial, optionally exact-split) compaction leaves the snapshot unchanged, also when writes land
  while it is pending and when an earlier partial compaction left links behind;
* hudi-rs reads the same snapshot and read-optimized views afterwards;
* freshness: every key whose latest version has event time < W (the watermark) is in the
  read-optimized view with exactly that version (in the file group holding it: a key deleted and
  re-inserted elsewhere keeps a stale copy in its old group until that delete, whose event time is
  >= W, is compacted); with a complete threshold T and no late writes, the same holds for event
  times <= T;
* exact split: every row the compaction adds to the read-optimized view has event time <= T;
* a clean keeping one file version afterwards changes no read (links made from links survive it);
* rollbacks interleaved with writes, failed writes and compactions: a rollback of a write a pending
  plan includes is refused without changing a file, a removed plan changes no read, and nothing is
  left wedged (issue 12, item 14).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.file_group import naming as N
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import freshness, run_compaction, schedule_compaction_result
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs
from tests.services.test_compaction_support import (
    Setup, event_time_config, read_optimized, rows, snapshot, write,
)


@dataclass
class Scenario:
    setup: Setup
    ops: list[tuple[str, list[tuple[int, int, int]]]]
    mid: Optional[tuple[int, bool]]  # (threshold, exact) of an earlier compaction halfway through
    pending_ops: list[tuple[str, list[tuple[int, int, int]]]]
    threshold: int
    exact: bool
    link_mode: str


row = st.tuples(st.integers(0, 7), st.integers(0, 60), st.integers(0, 999))
op = st.tuples(st.sampled_from(["upsert", "upsert", "delete"]), st.lists(row, min_size=1, max_size=5))
setups = st.builds(Setup, ordering=st.booleans(), block_format=st.sampled_from(["avro", "parquet"]),
                   partitioned=st.booleans(), event_field=st.sampled_from([True, True, True, False]))
scenarios = st.builds(
    Scenario, setups, st.lists(op, min_size=1, max_size=6),
    st.one_of(st.none(), st.tuples(st.integers(-1, 70), st.booleans())),
    st.lists(op, max_size=2), st.integers(-1, 70), st.booleans(), st.sampled_from(["symlink", "copy"]))


def _ts(r: tuple) -> int:
    return int(r[2].split(", ")[1].rstrip(")"))


def _by_group(path: str, query_type: str) -> dict[tuple[int, str], tuple]:
    """(key, file id) -> (ts, v) of every row of a read."""
    out = {}
    for r in hoodie.read_table(path, query_type=query_type).to_pylist():
        fid = r["_hoodie_file_name"]
        if N.is_base_file(fid):
            fid = N.parse_base_file(fid).file_id
        assert (r["k"], fid) not in out, f"key {r['k']} twice in file group {fid}"
        out[(r["k"], fid)] = (r["ts"], r["v"])
    return out


def _compact(path: str, threshold: int, exact: bool, link_mode: str) -> Optional[str]:
    res = schedule_compaction_result(path, event_time_config(threshold, exact))
    return res.instant


def _run(sc: Scenario) -> None:
    d = tempfile.mkdtemp(prefix="hoodie_compaction_prop_")
    try:
        path = f"{d}/t"
        s = sc.setup
        write(path, "upsert", [(k, 0, k) for k in range(4)], s)
        half = len(sc.ops) // 2
        for i, (kind, rs) in enumerate(sc.ops):
            write(path, kind, rs, s)
            if sc.mid is not None and i == half:
                before = snapshot(path)
                c = _compact(path, sc.mid[0], sc.mid[1], sc.link_mode)
                if c is not None:
                    run_compaction(path, c, {"hoodie.compaction.partial.link.mode": sc.link_mode})
                assert snapshot(path) == before, "the mid-history compaction changed the snapshot"
        c = _compact(path, sc.threshold, sc.exact, sc.link_mode)
        for kind, rs in sc.pending_ops:
            write(path, kind, rs, s)
        expected = snapshot(path)
        ro_before = set(read_optimized(path))
        if c is not None:
            (res,) = run_compaction(path, c, {"hoodie.compaction.partial.link.mode": sc.link_mode})
            assert res.instant == c
        after = snapshot(path)
        assert after == expected, "compaction changed the snapshot"
        ro = read_optimized(path)
        # hudi-rs has no pending-compaction support; none is pending here.
        assert not HoodieTable(path).timeline.pending_compactions()
        assert rows(read_hudi_rs(path)) == after, "hudi-rs snapshot differs"
        assert rows(read_hudi_rs(path, query_type="read_optimized")) == ro, "hudi-rs read-optimized differs"
        # Freshness: W is exact.
        f = freshness(path)
        snap_g = _by_group(path, "snapshot")
        ro_g = _by_group(path, "read_optimized")
        w = f["watermark"]
        if w["status"] == "complete":
            assert ro == after
        elif w["status"] == "known":
            for kf, val in snap_g.items():
                if val[0] < w["epoch_ms"]:
                    assert ro_g.get(kf) == val, f"{kf}={val} is older than the watermark but not in RO"
        # The threshold of a complete event-time compaction, without writes after scheduling.
        if c is not None and not sc.pending_ops and f["threshold_instant"] == c:
            assert f["threshold"]["epoch_ms"] == sc.threshold
            for kf, val in snap_g.items():
                if val[0] <= sc.threshold:
                    assert ro_g.get(kf) == val, f"{kf}={val} is before the threshold but not in RO"
        if c is not None and sc.exact:
            for r in set(ro) - ro_before:
                assert _ts(r) <= sc.threshold, f"exact split put {r} (after {sc.threshold}) in the base file"
        # The most aggressive clean (one file version) removes every older slice, and with it the
        # files earlier links were made from: reads must not change (links of links once broke here).
        run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                         "hoodie.cleaner.fileversions.retained": "1"})
        assert snapshot(path) == after, "clean changed the snapshot"
        assert read_optimized(path) == ro, "clean changed the read-optimized view"
        assert rows(read_hudi_rs(path)) == after, "hudi-rs snapshot differs after clean"
    finally:
        shutil.rmtree(d, ignore_errors=True)


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_compaction_preserves_snapshot_and_freshness(sc: Scenario) -> None:
    _run(sc)


def test_example_late_delete_and_exact_split_ordering() -> None:
    """A deferred version before a delete that kills the key (ordering field): the split file
    carries the delete, so the key stays deleted."""
    s = Setup(ordering=True)
    _run(Scenario(s, [("upsert", [(1, 50, 5)]), ("delete", [(1, 10, 0)]), ("upsert", [(2, 40, 1)])],
                  None, [], 20, True, "symlink"))


def test_example_writes_while_pending_and_links_of_links() -> None:
    s = Setup(ordering=False, partitioned=True)
    _run(Scenario(s, [("upsert", [(1, 10, 1), (2, 30, 2)]), ("upsert", [(1, 40, 3)]),
                      ("upsert", [(3, 5, 4)]), ("upsert", [(2, 50, 5)])],
                  (20, False), [("upsert", [(1, 1, 9)]), ("delete", [(2, 0, 0)])], 45, True, "copy"))


def test_example_clean_after_links_of_links() -> None:
    """The second partial compaction keeps a file the first one had linked; the clean afterwards
    removes the first compaction's slice and the original (found by the concurrency test)."""
    s = Setup(ordering=True)
    _run(Scenario(s, [("upsert", [(1, 3, 1)]), ("upsert", [(2, 10, 2)]), ("delete", [(3, 45, 0)]),
                      ("upsert", [(1, 50, 4)])],
                  (5, False), [], 20, False, "symlink"))


# -- rollbacks interleaved with compactions (issue 12, item 14) ---------------------------------
#
# Random sequences of writes, failed writes, compaction scheduling (full and partial), runs, rollbacks
# of the latest write (which a pending plan may include) and removals of pending plans. Model: the
# snapshot after each committed write, so a rollback must bring back the one before it; compactions
# and plan removals change no read; a refused rollback changes no file. At the end a full compaction
# and the most aggressive clean must still work (the wedge once left by rolling back a planned write).

step = st.one_of(
    st.tuples(st.just("write"), op),
    st.tuples(st.just("failed_write"), st.lists(row, min_size=1, max_size=3)),
    st.tuples(st.just("schedule"), st.one_of(st.none(), st.integers(-1, 70))),  # None: full, else threshold
    st.tuples(st.just("run"), st.sampled_from(["symlink", "copy"])),
    st.tuples(st.just("crashed_run"), st.sampled_from(["symlink", "copy"])),  # left inflight with its files
    st.tuples(st.just("rollback_latest"), st.none()),
    st.tuples(st.just("rollback_plan"), st.none()),
)


def _files(path: str) -> dict[str, bytes]:
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = f"{root}/{f}"
            with open(p, "rb") as fh:
                out[p] = fh.read()
    return out


def _failed_write(path: str, rs: list[tuple[int, int, int]], s: Setup) -> str:
    from hoodie.format.slice import writer as W
    from hoodie.services.write.configs import WriteConfig
    from hoodie.services.write.execution import execute_file_group
    from hoodie.services.write.plan import plan_write
    from hoodie.services.write.prepare import prepare_records
    from tests.services.test_compaction_support import batch, options

    table = HoodieTable(path)
    cfg = WriteConfig.from_options(options(s, "upsert"), table)
    inflight = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT")
    plan = plan_write(table, prepare_records(batch(rs, s), cfg), cfg, inflight.timestamp, table.avro_schema())
    for i, w in enumerate(plan.work):
        execute_file_group(table, w, instant=inflight.timestamp, avro_schema=table.avro_schema(), cfg=cfg,
                           token=N.write_token(i, 9, i))
    return inflight.timestamp


def _crashing_executor(tasks: list) -> list:
    """Runs every operation (base files, split files written) and then dies before the commit."""
    from hoodie.services.compaction import execute_task

    for t in tasks:
        execute_task(t)
    raise RuntimeError("executor lost before the commit")


def _run_interleaved(s: Setup, steps: list) -> dict[str, int]:
    """Run the steps; returns how often each outcome happened (refused rollbacks, moved logs...)."""
    from hoodie.format.timeline import instant as I
    from hoodie.services.compaction import run_compaction as run
    from hoodie.services.rollback.operation import rollback
    from hoodie.services.rollback.instant import RollbackError
    from tests.services.test_compaction_support import UNBOUNDED

    d = tempfile.mkdtemp(prefix="hoodie_rollback_prop_")
    try:
        path = f"{d}/t"
        first = write(path, "upsert", [(k, 0, k) for k in range(4)], s)
        history: list[tuple[str, list]] = [(first, [])]  # (write instant, snapshot before it)
        seen: dict[str, int] = {}
        for kind, arg in steps:
            before = snapshot(path)
            if kind == "write":
                history.append((write(path, arg[0], arg[1], s), before))
            elif kind == "failed_write":
                _failed_write(path, arg, s)
                assert snapshot(path) == before, "a failed write is visible"
            elif kind == "schedule":
                cfg = UNBOUNDED if arg is None else event_time_config(arg)
                schedule_compaction_result(path, cfg)
            elif kind == "run":
                if HoodieTable(path).timeline.pending_compactions():
                    run(path, None, {"hoodie.compaction.partial.link.mode": arg})
            elif kind == "crashed_run":
                pending = HoodieTable(path).timeline.pending_compactions().instants
                if pending:
                    try:
                        run(path, pending[0].timestamp, {"hoodie.compaction.partial.link.mode": arg},
                            executor=_crashing_executor)
                    except RuntimeError:
                        seen["crashed"] = seen.get("crashed", 0) + 1
            elif kind == "rollback_latest":
                tl = HoodieTable(path).timeline
                latest = tl.completed_writes().last()
                if latest is None or tl.is_compaction_commit(latest):
                    continue
                files = _files(path)
                try:
                    rollback(path, latest.timestamp)
                except RollbackError as e:
                    pending = [c.timestamp for c in tl.pending_compactions().instants]
                    assert any(c in str(e) for c in pending) and "hoodie rollback" in str(e), e
                    assert _files(path) == files, "a refused rollback changed files"
                    seen["refused"] = seen.get("refused", 0) + 1
                    continue
                inst, prior = history.pop()
                assert inst == latest.timestamp
                assert snapshot(path) == prior, "the rollback did not bring back the previous state"
                continue
            elif kind == "rollback_plan":
                pending = HoodieTable(path).timeline.pending_compactions().instants
                if not pending:
                    continue
                res = rollback(path, pending[-1].timestamp)
                seen["moved"] = seen.get("moved", 0) + len(res.moved_files)
                tl = HoodieTable(path).timeline
                assert tl.get(pending[-1].timestamp) is None and not tl.pending().by_actions(I.DELTA_COMMIT)
            if kind != "write":
                assert snapshot(path) == before, f"{kind} changed the snapshot"
        # Nothing is wedged: every pending plan runs, a full compaction and a clean change no read.
        final = snapshot(path)
        run(path)
        assert snapshot(path) == final
        c = schedule_compaction_result(path, UNBOUNDED).instant
        if c is not None:
            run(path, c)
        run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                         "hoodie.cleaner.fileversions.retained": "1"})
        assert snapshot(path) == final
        assert rows(read_hudi_rs(path)) == final
        return seen
    finally:
        shutil.rmtree(d, ignore_errors=True)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups, st.lists(step, min_size=2, max_size=10))
def test_rollbacks_interleaved_with_compactions(s: Setup, steps: list) -> None:
    _run_interleaved(s, steps)


def test_example_rollback_of_planned_write_is_refused_and_plan_removal_moves_later_logs() -> None:
    s = Setup(ordering=True)
    seen = _run_interleaved(s, [("write", ("upsert", [(1, 10, 1)])), ("schedule", None), ("rollback_latest", None),
                                ("write", ("upsert", [(1, 20, 2), (2, 5, 3)])), ("rollback_plan", None),
                                ("rollback_latest", None), ("rollback_latest", None)])
    assert seen == {"refused": 1, "moved": 1}


def test_example_plan_removed_after_a_crashed_partial_run() -> None:
    """Links (or copies) and base files of a run that died are deleted with the plan; the write on
    top moves back; the write the plan included can then be rolled back."""
    s = Setup(ordering=True)
    seen = _run_interleaved(s, [("write", ("upsert", [(1, 10, 1)])), ("write", ("upsert", [(2, 50, 2)])),
                                ("schedule", 20), ("write", ("upsert", [(1, 30, 3)])), ("crashed_run", "copy"),
                                ("rollback_plan", None), ("rollback_latest", None), ("rollback_latest", None),
                                ("rollback_latest", None)])
    assert seen == {"crashed": 1, "moved": 1}
