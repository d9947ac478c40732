"""Crash injection: operations killed with SIGKILL at fault points or random moments leave the table
in a committed state, and the recovery a user would run restores the exact expected state
(tests/prove/crash_harness.py describes a trial). Also regression tests for the bugs the harness
found, and a check that the harness's own checks fail when they should."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hoodie.format.timeline import instant as I
from hoodie.format.timeline import active as T
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction
from tests.prove import crash_child
from tests.prove.crash_harness import (
    OLD_PARTS, OPERATIONS, Model, Setup, TrialFailure, build_history, check_nothing_lost, check_state, cold_snapshot,
    orphan_files, pending_instants, random_rows, run_child, run_trials, snapshot, ttl_options,
)
from tests.prove.crash_harness import last_ttl_instant

# 12: the trials cycle through all 11 operations (each at least once, the first twice), which keeps
# the default run under 8 minutes (the long run: 200 trials).
CI_TRIALS = 12


def _report(summary) -> dict:
    counts = summary.counts()
    print("\ncrash trials:", json.dumps(counts, indent=2))
    return counts


def test_crash_trials_ci(tmp_path: Path) -> None:
    counts = _report(run_trials(CI_TRIALS, seed=20_240_601, root=tmp_path))
    assert counts["trials"] == CI_TRIALS
    assert counts["per_operation"] == {op: 1 + (i < CI_TRIALS - len(OPERATIONS)) for i, op in enumerate(OPERATIONS)}
    # The trials must really crash things, by both kill modes, and see both sides of a commit point.
    assert counts["killed"] >= CI_TRIALS // 3
    assert set(counts["kill_modes"]) == {"fault", "timing"}
    states = {k.split(":")[1] for k in counts["observed_after_crash"]}
    assert {"before", "after"} <= states
    assert counts["with_metadata_table"] >= CI_TRIALS // 4
    # Tables of Hudi 1.x's versions 8 and 9 (timeline layout 2) as well as version 6.
    assert counts["per_table_version"].get(6) and (counts["per_table_version"].get(8, 0)
                                                     + counts["per_table_version"].get(9, 0)) >= CI_TRIALS // 4


@pytest.mark.slow
def test_crash_trials_slow(tmp_path: Path) -> None:
    counts = _report(run_trials(200, seed=7_000_000, root=tmp_path))
    assert counts["trials"] == 200 and counts["killed"] >= 60
    assert len(counts["fault_points_hit"]) >= 12
    # Record TTL and tiering are killed at their own fault points too.
    assert {"record_ttl.after_file_group", "record_ttl.before_complete", "ttl.move.after_copy", "ttl.move.after_verify",
            "ttl.bring_back.after_write", "ttl.bring_back.after_verify", "ttl.bring_back.cold_drop_inflight"} <= set(counts["fault_points_hit"])


def _table(tmp_path: Path, seed: int, table_type: str = "MERGE_ON_READ") -> tuple[str, Setup, Model]:
    setup = Setup(table_type, ordering=True, block_format="avro", commits_retained=10)
    path = str(tmp_path / "t")
    model = Model(True)
    build_history(random.Random(seed), path, setup, model, "upsert")
    return path, setup, model


def _write_spec(path: str, setup: Setup, rows: list) -> dict:
    return {"op": "write", "path": path, "rows": rows, "options": setup.write_options("upsert")}


def test_checks_see_a_crashed_write_until_the_next_write(tmp_path: Path) -> None:
    """The harness's checks can fail: a crashed write's files and instant are visible to them."""
    path, setup, model = _table(tmp_path, 1)
    before = model.snapshot()
    rows = random_rows(random.Random(2), [0, 1, 2, 3])
    assert run_child(_write_spec(path, setup, rows), fault="write.before_complete").killed
    assert snapshot(path) == before
    assert orphan_files(path) and pending_instants(path)
    wrong = model.copy()
    wrong.rows.pop(next(iter(wrong.rows)))
    with pytest.raises(TrialFailure, match="not a committed state"):
        check_state(path, {"lost a record": wrong.snapshot()}, "test")
    crash_child.perform(_write_spec(path, setup, rows))
    model.apply("upsert", rows)
    assert snapshot(path) == model.snapshot()
    assert orphan_files(path) == [] and pending_instants(path) == []


def test_interrupted_write_rollback_is_resumed_not_left_pending(tmp_path: Path) -> None:
    """Bug found by the harness: a rollback killed after its inflight file stayed pending forever,
    because the next rollback of the same write started a new rollback instant."""
    path, setup, model = _table(tmp_path, 3)
    rows = random_rows(random.Random(4), [0, 1, 2])
    assert run_child(_write_spec(path, setup, rows), fault="write.before_complete").killed
    assert run_child(_write_spec(path, setup, rows), fault="rollback.after_inflight").killed
    (stuck,) = [i for i in HoodieTable(path).timeline.pending().instants if i.action == I.ROLLBACK]
    crash_child.perform(_write_spec(path, setup, rows))
    model.apply("upsert", rows)
    tl = HoodieTable(path).timeline
    assert pending_instants(path) == []
    assert [i.timestamp for i in tl.by_actions(I.ROLLBACK).instants] == [stuck.timestamp]
    assert snapshot(path) == model.snapshot() and orphan_files(path) == []


def test_interrupted_compaction_rollback_is_resumed(tmp_path: Path) -> None:
    """The same bug in rollback_compaction: a second run resumes the interrupted rollback."""
    path, setup, model = _table(tmp_path, 5)
    updates = random_rows(random.Random(6), sorted(model.rows)[:3])  # log files to compact
    crash_child.perform(_write_spec(path, setup, updates))
    model.apply("upsert", updates)
    opts = {"hoodie.compaction.strategy": "UnBounded", "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER"}
    assert run_child({"op": "compaction", "path": path, "options": opts}, fault="compaction.before_commit").killed
    assert run_child({"op": "compaction", "path": path, "options": opts}, fault="rollback.after_inflight").killed
    (stuck,) = [i for i in HoodieTable(path).timeline.pending().instants if i.action == I.ROLLBACK]
    (res,) = run_compaction(path, None, opts)
    assert res.rolled_back_first
    tl = HoodieTable(path).timeline
    assert pending_instants(path) == [] and [i.timestamp for i in tl.by_actions(I.ROLLBACK).instants] == [stuck.timestamp]
    assert snapshot(path) == model.snapshot() and orphan_files(path) == []


def test_restore_rolls_back_a_restore_commit_cut_before_its_inflight(tmp_path: Path) -> None:
    """Bug found by the harness: a restore killed between ``<t>.deltacommit.requested`` and its
    inflight left the requested instant pending (it blocks TTL and compaction scheduling), because
    restore only recognised inflight restore commits. Restore now rolls back failed writes first."""
    path, setup, model = _table(tmp_path, 7)
    crash_child.perform({"op": "ttl", "path": path, "options": ttl_options(random.Random(8), stash=True)})
    table = HoodieTable(path)
    ttl = last_ttl_instant(table)
    # What the kill leaves: the restore's empty requested file and nothing else.
    T.create_requested(table.storage, table.new_instant_time(), I.DELTA_COMMIT, b"")
    assert pending_instants(path)
    crash_child.restore_once(path, ttl)
    assert pending_instants(path) == []
    assert snapshot(path) == model.snapshot()
    gone = model.copy()
    gone.expire(OLD_PARTS)
    assert gone.snapshot() != model.snapshot()  # the restore really brought rows back


def _move_spec(path: str, cold: str, seed: int) -> dict:
    return {"op": "ttl_move", "path": path, "cold": cold, "options": ttl_options(random.Random(seed), stash=False)}


def test_move_resumes_after_a_kill_while_creating_the_cold_table(tmp_path: Path) -> None:
    """Bug found by the harness: a move killed while its write created the cold table (folders and
    lock made, no hoodie.properties yet) left a location the re-run refused as "not a Hudi table"."""
    path, setup, model = _table(tmp_path, 9, "COPY_ON_WRITE")
    cold = tmp_path / "cold"
    for d in (".hoodie/archived", ".hoodie/.aux/.bootstrap", ".hoodie/.temp"):
        (cold / d).mkdir(parents=True)  # what create_table makes before the properties file
    crash_child.perform(_move_spec(path, str(cold), 10))
    assert cold_snapshot(str(cold)) == model.partitions(OLD_PARTS)
    moved = model.copy()
    moved.expire(OLD_PARTS)
    assert snapshot(path) == moved.snapshot()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "data.csv").write_text("x")  # someone's data is still refused
    with pytest.raises(Exception, match="not a Hudi table"):
        crash_child.perform(_move_spec(path, str(tmp_path / "other"), 10))


def test_bring_back_rerun_after_it_finished_is_a_no_op(tmp_path: Path) -> None:
    """Bug found by the harness: a bring-back killed after its last step (the cold drop) could not be
    re-run ("the cold table holds no rows"); the re-run now sees the partitions are back."""
    path, setup, model = _table(tmp_path, 11, "MERGE_ON_READ")
    cold = str(tmp_path / "cold")
    crash_child.perform(_move_spec(path, cold, 12))
    spec = {"op": "bring_back", "path": path, "cold": cold, "partitions": list(OLD_PARTS)}
    assert crash_child.perform(spec) is not None
    assert crash_child.perform(spec) is None  # nothing left to do, nothing written
    assert snapshot(path) == model.snapshot() and cold_snapshot(cold) == []
    check_nothing_lost(path, cold, model.snapshot(), "test")
    with pytest.raises(TrialFailure, match="neither the hot nor the cold table"):
        check_nothing_lost(path, cold, model.snapshot() + [(99, "2020-01-01", 1, 1)], "test")
