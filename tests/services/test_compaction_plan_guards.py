"""Rollbacks against pending compaction plans (issue 12, item 14) and damaged Avro plan files
(item 15): a rollback that would pull a log file out from under a plan is refused before anything
changes, and ``hoodie rollback <compaction instant>`` removes a pending plan (damaged or not)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.rollback import RollbackError, rollback
from tests.services.test_compaction_support import UNBOUNDED, Setup, snapshot, write


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
