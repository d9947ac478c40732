"""Rollbacks against pending compaction plans (issue 12, item 14) and damaged Avro plan files
(item 15): a rollback that would pull a log file out from under a plan is refused before anything
changes, and ``hoodie rollback <compaction instant>`` removes a pending plan (damaged or not)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.format.file_group import naming as N
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.rollback.operation import rollback
from hoodie.services.rollback.instant import RollbackError
from tests.hudi_rs import read_hudi_rs
from tests.services.test_compaction_support import UNBOUNDED, Setup, event_time_config, rows, snapshot, write
from tests.helpers import examples


def _tree(path: str) -> dict[str, bytes]:
    """Every file under the table (timeline included), with its bytes."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = fh.read()
    return out


def _table_with_plan(path: str) -> tuple[str, str]:
    """A MOR table whose latest deltacommit's log file is in a pending compaction plan."""
    s = Setup(event_field=False)
    write(path, "upsert", [(1, 1, 1), (2, 1, 2)], s)
    d2 = write(path, "upsert", [(1, 2, 10)], s)
    c = schedule_compaction(path, UNBOUNDED)
    assert c is not None
    return d2, c


def test_rollback_of_deltacommit_in_pending_compaction_plan_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    d2, c = _table_with_plan(path)
    before = _tree(path)
    with pytest.raises(RollbackError) as e:
        rollback(path, d2)
    msg = str(e.value)
    assert c in msg and "hoodie compaction run" in msg and f"hoodie rollback {path} {c}" in msg
    assert _tree(path) == before, "the refused rollback changed the table"
    # The compaction still runs and the table stays consistent.
    expected = snapshot(path)
    run_compaction(path, c)
    assert snapshot(path) == expected


def test_hoodie_rollback_of_pending_compaction_removes_plan_then_deltacommit_rolls_back(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The way out the refusal names: ``hoodie rollback <compaction instant>``, then the write."""
    from hoodie.interfaces.cli import main

    path = str(tmp_path / "t")
    s = Setup(event_field=False)
    write(path, "upsert", [(1, 1, 1), (2, 1, 2)], s)
    before_d2 = snapshot(path)
    d2 = write(path, "upsert", [(1, 2, 10)], s)
    c = schedule_compaction(path, UNBOUNDED)
    assert main(["rollback", path, c]) == 0
    assert "plan removed" in capsys.readouterr().out
    t = HoodieTable(path)
    assert not t.timeline.pending_compactions() and t.timeline.get(c) is None
    assert main(["rollback", path, d2]) == 0
    assert snapshot(path) == before_d2
    assert rows(read_hudi_rs(path)) == before_d2
    c2 = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c2)
    assert snapshot(path) == before_d2


def _damage(data: bytes, kind: str, cut: int, noise: bytes) -> bytes:
    """A damaged copy of an Avro timeline file: empty, truncated at ``cut``, or other bytes."""
    if kind == "zero":
        return b""
    if kind == "truncated":
        return data[: cut % max(1, len(data))]
    return noise


def _names_file(e: BaseException, path: str) -> bool:
    return path in str(e)


@pytest.mark.parametrize("kind", ["zero", "truncated", "garbage"])
def test_damaged_compaction_requested_reads_with_warning_and_rollback_removes_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture, kind: str) -> None:
    """Issue 12 item 15: a zero-byte/truncated/garbage plan once failed every read naming no file."""
    from hoodie.services.clean import run_clean

    path = str(tmp_path / "t")
    s = Setup(event_field=False)
    write(path, "upsert", [(1, 1, 1), (2, 1, 2)], s)
    write(path, "upsert", [(1, 2, 10)], s)
    c = schedule_compaction(path, UNBOUNDED)
    write(path, "upsert", [(2, 3, 20)], s)  # lands in the slice the plan opened
    expected = snapshot(path)
    plan_file = os.path.join(path, ".hoodie", f"{c}.compaction.requested")
    with open(plan_file, "rb") as fh:
        good = fh.read()
    with open(plan_file, "wb") as fh:
        fh.write(_damage(good, kind, len(good) // 2, b"\x00garbage\xff" * 7))
    with caplog.at_level("WARNING"):
        assert snapshot(path) == expected
    assert plan_file in caplog.text and f"hoodie rollback {path} {c}" in caplog.text
    from hoodie.interfaces.cli import main

    assert main(["compaction", "show", path]) == 0  # the place a user looks: lists it, does not fail
    out = capsys.readouterr().out
    assert "DAMAGED PLAN" in out and plan_file in out
    tree = _tree(path)
    # Writes route updates by the plan, a clean must keep the slices it reads, the compaction needs it.
    for action in (lambda: write(path, "upsert", [(3, 1, 3)], s), lambda: run_clean(path),
                   lambda: run_compaction(path, c),
                   lambda: schedule_compaction(path, {**UNBOUNDED, "hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
                                                      "hoodie.compact.inline.max.delta.commits": "1"})):
        with pytest.raises(ValueError) as e:
            action()
        assert _names_file(e.value, plan_file), e.value
        assert _tree(path) == tree, "a refused operation changed the table"
    res = rollback(path, c)
    assert res.action == "compaction" and len(res.moved_files) == 1
    assert not HoodieTable(path).timeline.pending()
    assert snapshot(path) == expected
    assert rows(read_hudi_rs(path)) == expected
    write(path, "upsert", [(3, 1, 3)], s)
    grown = snapshot(path)
    assert set(expected) < set(grown) and len(grown) == len(expected) + 1
    c2 = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c2)
    assert snapshot(path) == grown


def test_damaged_plan_of_a_compaction_that_ran_errors_on_read_and_rollback_cleans_up(tmp_path: Path) -> None:
    """A partial compaction stopped after its links: only the plan says which log files are links,
    so a merged read must not guess; the rollback finds them by listing."""
    from hoodie.services.compaction import execute_task

    path = str(tmp_path / "t")
    s = Setup()
    write(path, "upsert", [(1, 10, 1), (2, 10, 2)], s)
    write(path, "upsert", [(1, 50, 3)], s)
    write(path, "upsert", [(2, 60, 4)], s)
    c = schedule_compaction(path, event_time_config(55))
    assert c is not None
    write(path, "upsert", [(1, 70, 5)], s)
    expected = snapshot(path)

    def crash(tasks):
        for t in tasks:
            execute_task(t)
        raise RuntimeError("executor lost")

    with pytest.raises(RuntimeError):
        run_compaction(path, c, {"hoodie.compaction.partial.link.mode": "copy"}, executor=crash)
    assert snapshot(path) == expected
    plan_file = os.path.join(path, ".hoodie", f"{c}.compaction.requested")
    with open(plan_file, "wb") as fh:
        fh.write(b"")
    with pytest.raises(ValueError) as e:
        snapshot(path)
    assert _names_file(e.value, plan_file) and f"hoodie rollback {path} {c}" in str(e.value)
    res = rollback(path, c)
    deleted = [f.rsplit("/", 1)[-1] for f in res.deleted_files]
    assert any(N.is_log_file(n) for n in deleted), "the copy made for the remaining log file"
    assert any(N.is_base_file(n) for n in deleted), "the compacted base file"
    assert len(res.moved_files) == 1
    assert not any(n.endswith((".parquet",)) and c in n for n in os.listdir(os.path.join(path, "all")))
    assert snapshot(path) == expected
    assert rows(read_hudi_rs(path)) == expected


# -- the class: every kind of pending Avro plan file, damaged every way ---------------------------

_TEMPLATES: dict[str, tuple[str, str, str]] = {}  # kind -> (template table, damaged file, instant)


def _template(kind: str, factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """A table with one pending instant of ``kind`` whose requested (plan) file will be damaged
    (built once per session, copied by each example)."""
    from hoodie.services.clean import run_clean
    from hoodie.services.compaction import execute_task

    if kind in _TEMPLATES:
        return _TEMPLATES[kind]
    path = str(factory.mktemp(f"damaged_{kind}") / "t")
    s = Setup()
    write(path, "upsert", [(1, 10, 1), (2, 10, 2)], s)
    write(path, "upsert", [(1, 50, 3)], s)
    write(path, "upsert", [(2, 60, 4)], s)
    hoodie_dir = os.path.join(path, ".hoodie")
    if kind == "compaction":
        inst = schedule_compaction(path, event_time_config(55))
        write(path, "upsert", [(1, 70, 5)], s)
        name = f"{inst}.compaction.requested"
    elif kind == "compaction_ran":
        inst = schedule_compaction(path, event_time_config(55))
        write(path, "upsert", [(1, 70, 5)], s)

        def crash(tasks):
            for t in tasks:
                execute_task(t)
            raise RuntimeError("executor lost")

        with pytest.raises(RuntimeError):
            run_compaction(path, inst, {"hoodie.compaction.partial.link.mode": "copy"}, executor=crash)
        name = f"{inst}.compaction.requested"
    elif kind == "clean":
        run_compaction(path, schedule_compaction(path, UNBOUNDED))
        run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
        inst = HoodieTable(path).timeline.by_actions("clean").last().timestamp
        os.remove(os.path.join(hoodie_dir, f"{inst}.clean"))  # interrupted before it completed
        name = f"{inst}.clean.requested"
    elif kind == "rollback":
        d = write(path, "upsert", [(3, 5, 6)], s)
        inst = rollback(path, d).rollback_instant
        os.remove(os.path.join(hoodie_dir, f"{inst}.rollback"))
        os.remove(os.path.join(hoodie_dir, f"{inst}.rollback.inflight"))  # crashed right after its plan
        name = f"{inst}.rollback.requested"
    else:  # a replacecommit (insert_overwrite) that failed
        from hoodie import write_arrow
        from tests.services.test_compaction_support import batch, options

        inst = write_arrow(path, batch([(4, 1, 7)], s), options(s, "insert_overwrite"))
        os.remove(os.path.join(hoodie_dir, f"{inst}.replacecommit"))
        os.remove(os.path.join(hoodie_dir, f"{inst}.replacecommit.inflight"))
        name = f"{inst}.replacecommit.requested"
    _TEMPLATES[kind] = (path, name, inst)
    return _TEMPLATES[kind]


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["compaction", "compaction_ran", "clean", "rollback", "replacecommit"]),
       st.sampled_from(["zero", "truncated", "garbage"]), st.integers(0, 10_000), st.binary(max_size=64))
def test_damaged_avro_timeline_files_are_named_and_the_table_recovers(tmp_path_factory: pytest.TempPathFactory,
                                                                      kind: str, damage: str, cut: int,
                                                                      noise: bytes) -> None:
    """Every error names the damaged file; reads are exact where they go on; the named fix leaves a
    table that reads, writes, compacts and cleans."""
    import shutil

    from hoodie.services.clean import run_clean

    template, name, inst = _template(kind, tmp_path_factory)
    path = str(tmp_path_factory.mktemp("damaged") / "t")
    shutil.copytree(template, path, symlinks=True)
    expected = snapshot(template)
    damaged = os.path.join(path, ".hoodie", name)
    with open(damaged, "rb") as fh:
        good = fh.read()
    with open(damaged, "wb") as fh:
        fh.write(_damage(good, damage, cut, noise))
    s = Setup()

    def named(e: BaseException) -> None:
        assert damaged in str(e), f"{type(e).__name__}: {e}"

    try:
        assert snapshot(path) == expected
    except ValueError as e:
        assert kind == "compaction_ran", e
        named(e)
    try:
        write(path, "upsert", [(9, 1, 9)], s)  # its automatic clean drops a damaged pending clean
        wrote = True
    except ValueError as e:
        assert kind in ("compaction", "compaction_ran"), e
        named(e)
        wrote = False
    # The fix the message names (the write rolled a failed replacecommit back already).
    if kind in ("compaction", "compaction_ran", "replacecommit") and HoodieTable(path).timeline.get(inst):
        rollback(path, inst)
    if not wrote:
        write(path, "upsert", [(9, 1, 9)], s)
    assert not HoodieTable(path).timeline.pending().by_actions("compaction", "clean", "replacecommit")
    after = snapshot(path)
    assert set(expected) <= set(after) and len(after) == len(expected) + 1
    run_compaction(path, schedule_compaction(path, UNBOUNDED))
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    assert snapshot(path) == after
    assert rows(read_hudi_rs(path)) == after
