"""The quickstart pipeline at a small size: its table equals the stream model and reads
identically in hudi-rs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hoodie
from hoodie.interfaces.quickstart import expected_live_rows, generate_batches
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

REPO = Path(__file__).resolve().parents[2]


def test_stream_has_late_data_updates_and_deletes() -> None:
    batches = generate_batches(2000, 10, 10, seed=3)
    ops = [op for op, _ in batches]
    assert "delete" in ops and ops[0] == "upsert"
    days_per_batch = [sorted({r["day"] for r in recs}) for op, recs in batches if op == "upsert"]
    assert any(len(d) > 1 for d in days_per_batch), "some batches carry late events of earlier days"
    assert any(r["updated_at"] % 1000 == 1 for _, recs in batches for r in recs), "updates exist"
    assert 0 < expected_live_rows(batches) < sum(len(r) for op, r in batches if op == "upsert")


def check_quickstart(base: str, res: dict) -> None:
    """What a small quickstart (2000 rows, 10 days, 7 kept) must have done, and its table read by
    hudi-rs."""
    assert res["rows_before_ttl"] == res["expected_rows"]
    # 10 days of events, 7 kept, ages counted from the end of each day: the oldest 2 days expire.
    assert res["ttl_dry_run"] == res["ttl_expired"] and len(res["ttl_expired"]) == 2
    assert res["partitions_after"] == res["partitions_before_ttl"] - 2
    assert any(c["instants"] for c in res["compactions"])
    assert res["clean_deleted_files"] > 0
    ours = hoodie.read_table(base)
    theirs = read_hudi_rs(base)
    cols = ["event_id", "day", "status", "amount", "updated_at"]
    assert ours.num_rows == res["rows_after"]
    assert sorted(rows_of(ours, cols)) == sorted(rows_of(theirs, cols))
    ro = hoodie.read_table(base, query_type="read_optimized")
    assert sorted(rows_of(ro, cols)) == sorted(rows_of(read_hudi_rs(base, query_type="read_optimized"), cols))


@pytest.mark.spark
@pytest.mark.slow
def test_quickstart_cli_small_own_process(tmp_path: Path) -> None:
    """The command as a user runs it, starting its own Spark (the default run's version,
    tests/engine/test_quickstart_in_session.py, runs the same command in the run's shared session)."""
    base = str(tmp_path / "qs")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # An earlier demo's table at the base path is the quickstart's to replace (no --overwrite needed).
    demo = subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", "demo", "--base-path", base, "--rows",
                           "100"], capture_output=True, text=True, timeout=300, env=env)
    assert demo.returncode == 0, demo.stderr
    out = subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", "quickstart", "--base-path", base,
                          "--rows", "2000", "--json"], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    check_quickstart(base, json.loads(out.stdout))


def test_stream_arrivals_order_a_delete_after_the_rows_it_deletes() -> None:
    """One arrival (one micro-batch) may hold a key's insert and its delete: the delete row carries a newer
    ordering value than every row before it, so the batch's de-duplication keeps the delete whatever order
    the rows meet in (with equal values either survives, in Hudi as in hoodie: the streaming quickstart once
    kept a deleted event)."""
    from hoodie.interfaces.quickstart import generate_batches
    from hoodie.interfaces.quickstart_stream import event_files

    stream = generate_batches(1000, 10, 10, today=__import__("datetime").date(2026, 1, 10))
    files = event_files(stream)
    seen_max = -1
    same_batch = 0
    for t in files:
        rows = t.to_pylist()
        deletes = [r for r in rows if r["_hoodie_is_deleted"]]
        upserts = [r for r in rows if not r["_hoodie_is_deleted"]]
        seen_max = max([seen_max] + [r["updated_at"] for r in upserts])
        assert all(d["updated_at"] > seen_max for d in deletes)
        same_batch += len({d["event_id"] for d in deletes} & {u["event_id"] for u in upserts})
        seen_max = max([seen_max] + [d["updated_at"] for d in deletes])
    assert same_batch > 0, "the generator no longer puts a key's insert and delete in one arrival: test needs one"
