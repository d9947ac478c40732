"""Inline compaction, the async service (thread and process), and the CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hoodie.format.table import HoodieTable
from hoodie.interfaces.cli import main
from hoodie.services.compaction import (
    CompactionAsyncService, CompactionConfigError, maybe_compact_inline, schedule_compaction,
)
from tests.services.test_compaction_support import Setup, batch, event_time_config, options, read_optimized, snapshot, write


def _compactions(path: str) -> list[str]:
    tl = HoodieTable(path).timeline
    return [i.timestamp for i in tl.completed().by_actions("commit").instants if tl.is_compaction_commit(i)]


def _wait(pred, timeout: float = 60.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_inline_compaction_after_n_delta_commits(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    write(path, "insert", [(1, 1, 0), (2, 1, 0)])
    assert maybe_compact_inline(path, opts) is None
    write(path, "upsert", [(1, 2, 1)])
    assert maybe_compact_inline(path, opts) is None
    write(path, "upsert", [(2, 3, 2)])
    c = maybe_compact_inline(HoodieTable(path), opts)
    assert c is not None and _compactions(path) == [c]
    assert snapshot(path) == read_optimized(path)
    assert maybe_compact_inline(path, {}) is None


def test_inline_schedule_only_and_cow(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0)])
    write(path, "upsert", [(1, 2, 1)])
    c = maybe_compact_inline(path, {"hoodie.compact.schedule.inline": "true",
                                    "hoodie.compact.inline.max.delta.commits": "1"})
    assert c is not None and not _compactions(path)
    assert [i.timestamp for i in HoodieTable(path).timeline.pending_compactions().instants] == [c]
    # A later inline run first completes what is pending.
    assert maybe_compact_inline(path, {"hoodie.compact.inline": "true"}) == c
    cow = str(tmp_path / "cow")
    from hoodie import write_arrow

    write_arrow(cow, batch([(1, 1, 0)], Setup()), {**options(Setup(), "insert"),
                                                   "hoodie.datasource.write.table.type": "COPY_ON_WRITE"})
    assert maybe_compact_inline(cow, {"hoodie.compact.inline": "true"}) is None


def test_async_service_thread_runs_plans_scheduled_by_the_writer(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0), (2, 1, 0)])
    with CompactionAsyncService(path, interval_seconds=0.05) as svc:
        for i in range(3):
            write(path, "upsert", [(1, 10 + i, i)])
            maybe_compact_inline(path, {"hoodie.compact.schedule.inline": "true",
                                        "hoodie.compact.inline.max.delta.commits": "1"})
            assert _wait(lambda: not HoodieTable(path).timeline.pending_compactions())
    assert not svc.is_alive() and not svc.errors
    assert len(svc.results) == len(_compactions(path)) >= 1
    assert snapshot(path) == read_optimized(path)


def test_async_service_process_schedules_and_runs(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0), (2, 1, 0)])
    write(path, "upsert", [(1, 10, 1)])
    svc = CompactionAsyncService(path, event_time_config(100), interval_seconds=0.2, schedule=True, mode="process")
    svc.start()
    try:
        assert _wait(lambda: len(_compactions(path)) == 1, timeout=120)
    finally:
        svc.stop()
    assert not svc.is_alive()
    assert snapshot(path) == read_optimized(path)
    with pytest.raises(ValueError, match="executor"):
        CompactionAsyncService(path, mode="process", executor=lambda tasks: [])


def test_async_service_records_errors_and_keeps_going(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0)])
    with pytest.raises(CompactionConfigError, match="NoSuchStrategy"):
        CompactionAsyncService(path, {"hoodie.compaction.strategy": "NoSuchStrategy"}, schedule=True)
    t = HoodieTable(path)
    bad = t.new_instant_time()
    (tmp_path / "t" / ".hoodie" / f"{bad}.compaction.requested").write_bytes(b"not avro")
    svc = CompactionAsyncService(path, interval_seconds=0.05)
    svc.start()
    try:
        assert _wait(lambda: len(svc.errors) >= 2)
        assert svc.is_alive()
    finally:
        svc.stop()
    assert "Avro" in str(svc.errors[0])


def test_cli_schedule_run_show_freshness_rollback(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0), (2, 1, 0)])
    write(path, "upsert", [(1, 10, 1)])
    write(path, "upsert", [(2, 30, 2)])
    et = ["--set", "hoodie.compaction.strategy=EventTimeBased", "--set", "hoodie.compaction.event.time.threshold=20",
          "--set", "hoodie.compact.inline.trigger.strategy=EVENT_TIME_TRIGGER"]
    assert main(["compaction", "schedule", path, *et, "--json"]) == 0
    sched = json.loads(capsys.readouterr().out)
    assert sched["instant"] and sched["partial_operations"] == 1 and sched["threshold_ms"] == 20
    assert main(["compaction", "show", path, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [p["instant"] for p in shown["pending"]] == [sched["instant"]]
    assert main(["compaction", "rollback", path, "--instant", sched["instant"]]) == 0
    assert "nothing to roll back" in capsys.readouterr().out
    assert main(["compaction", "run", path, "--json"]) == 0
    ran = json.loads(capsys.readouterr().out)
    (done,) = ran["completed"]
    assert done["instant"] == sched["instant"] and len(done["links"]) == 1
    assert main(["show", "freshness", path, "--json"]) == 0
    f = json.loads(capsys.readouterr().out)
    assert f["threshold"] == {"epoch_ms": 20, "iso": "1970-01-01T00:00:00.020Z"}
    assert f["watermark"]["epoch_ms"] == 30 and f["watermark"]["iso"] == "1970-01-01T00:00:00.030Z"
    assert main(["show", "freshness", path]) == 0
    assert "watermark: 1970-01-01T00:00:00.030Z" in capsys.readouterr().out
    # run with no pending plan schedules one (the default trigger needs 5 delta commits here).
    assert main(["compaction", "run", path]) == 0
    assert "nothing to compact: NUM_COMMITS" in capsys.readouterr().out
    assert main(["compaction", "run", path, "--set", "hoodie.compaction.strategy=UnBounded",
                 "--set", "hoodie.compact.inline.trigger.strategy=EVENT_TIME_TRIGGER"]) == 0
    assert "completed compaction" in capsys.readouterr().out
    assert main(["show", "freshness", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["watermark"] == {"epoch_ms": None, "iso": None, "status": "complete"}
    assert main(["compaction", "schedule", path, "--set", "nokeyvalue"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_cli_show_text(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0)])
    write(path, "upsert", [(1, 2, 1)])
    schedule_compaction(path, event_time_config(100))
    assert main(["compaction", "show", path]) == 0
    out = capsys.readouterr().out
    assert "pending compactions: 1" in out and "freshness threshold: none" in out
