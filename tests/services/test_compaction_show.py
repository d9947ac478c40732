"""show_compactions: the one listing behind ``hoodie compaction show`` and ``CALL show_compaction``
(pure Python: the procedure is called without Spark, as a base path needs no catalog)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoodie.format.timeline import instant as I
from hoodie.format.timeline import active as T
from hoodie.format.table import HoodieTable
import hoodie.interfaces.procedures  # noqa: F401  (registers the CALL procedures)
from hoodie.interfaces.cli import main
from hoodie.interfaces.sql import PROCEDURES, bind
from hoodie.services.compaction import (
    CompactionSummary, run_compaction, schedule_compaction, show_compactions,
)
from hoodie.services.compaction.strategies import JAVA_PACKAGE
from tests.services.test_compaction_support import UNBOUNDED, Setup, event_time_config, write

S = Setup(partitioned=True)


def _table(tmp_path: Path) -> tuple[str, str, str, str]:
    """A table with a completed full compaction c1, an inflight partial event-time compaction c2
    (threshold 50) and a pending compaction c3 whose plan file is garbage."""
    path = str(tmp_path / "t")
    write(path, "insert", [(k, 1, 0) for k in range(4)], S)
    write(path, "upsert", [(k, 2, 1) for k in range(4)], S)
    c1 = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c1)
    write(path, "upsert", [(k, 10, 2) for k in range(4)], S)
    write(path, "upsert", [(0, 100, 3), (2, 100, 3)], S)  # p0 only: its operation is partial
    c2 = schedule_compaction(path, event_time_config(50))
    t = HoodieTable(path)
    T.transition_to_inflight(t.storage, I.Instant(c2, I.COMPACTION, I.State.REQUESTED), b"")
    c3 = t.new_instant_time()
    (tmp_path / "t" / ".hoodie" / f"{c3}.compaction.requested").write_bytes(b"\x00garbage")
    return path, c1, c2, c3


def test_summaries(tmp_path: Path) -> None:
    path, c1, c2, c3 = _table(tmp_path)
    done, partial, damaged = show_compactions(path)
    assert [s.instant for s in (done, partial, damaged)] == [c1, c2, c3]

    assert done.state == "COMPLETED" and not done.is_pending and done.damaged is None
    assert (done.operations, done.partial_operations, done.file_groups) == (2, 0, 2)
    assert done.partitions == ("p0", "p1") and done.threshold_ms is None
    assert done.strategy == JAVA_PACKAGE + "UnBoundedCompactionStrategy"
    assert done.duration_ms >= 0 and done.bytes_written > 0 and done.remaining_log_files == 0

    assert partial.state == "INFLIGHT" and partial.is_pending
    assert (partial.operations, partial.partial_operations, partial.file_groups) == (2, 1, 2)
    assert partial.partitions == ("p0", "p1") and partial.threshold_ms == 50
    assert partial.strategy == JAVA_PACKAGE + "EventTimeBasedCompactionStrategy"
    assert partial.duration_ms is None and partial.bytes_written is None

    assert damaged.state == "REQUESTED" and f"{c3}.compaction.requested" in damaged.damaged
    assert f"hoodie rollback {path} {c3}" in damaged.damaged  # the fix
    assert damaged.operations is None and damaged.partitions is None
    assert damaged.to_json() == {"instant": c3, "state": "REQUESTED", "damaged": damaged.damaged}

    assert [s.instant for s in show_compactions(HoodieTable(path), limit=2)] == [c2, c3]
    assert show_compactions(path, limit=0) == []


def test_completed_compaction_with_damaged_plan_keeps_its_commit_metrics(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0)])
    write(path, "upsert", [(1, 2, 1)])
    c = schedule_compaction(path, UNBOUNDED)
    run_compaction(path, c)
    (tmp_path / "t" / ".hoodie" / f"{c}.compaction.requested").write_bytes(b"")
    (s,) = show_compactions(path)
    assert s.state == "COMPLETED" and "empty" in s.damaged
    assert s.operations == 1 and s.remaining_log_files == 0  # from the commit's metrics
    assert s.to_json() == {"instant": c, "state": "COMPLETED", "damaged": s.damaged, "operations": 1,
                           "duration_ms": s.duration_ms, "bytes_written": s.bytes_written, "remaining_log_files": 0}


def test_cli_shows_the_summaries(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path, c1, c2, c3 = _table(tmp_path)
    summaries = show_compactions(path)
    assert main(["compaction", "show", path, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["pending"] == [s.to_json() for s in summaries if s.is_pending]
    assert shown["completed"] == [s.to_json() for s in summaries if not s.is_pending]
    # The fields the command always showed are still there, with their names.
    ok = shown["pending"][0]
    assert {"instant", "state", "operations", "partial_operations", "strategy", "threshold_ms"} <= set(ok)
    assert set(shown["pending"][1]) == {"instant", "state", "damaged"}
    assert {"instant", "operations", "duration_ms", "bytes_written", "remaining_log_files"} <= set(shown["completed"][0])
    assert main(["compaction", "show", path, "--limit", "0"]) == 0
    text = capsys.readouterr().out
    assert "pending compactions: 2" in text and "completed compactions: 1 (last 0)" in text
    assert (f"  {c2} INFLIGHT  2 op(s), 1 partial, strategy {JAVA_PACKAGE}EventTimeBasedCompactionStrategy, "
            "2 file group(s) in 2 partition(s), event-time threshold 50") in text
    assert f"  {c3} REQUESTED DAMAGED PLAN: " in text


def test_procedure_returns_what_the_cli_shows(tmp_path: Path) -> None:
    path, c1, c2, c3 = _table(tmp_path)
    proc = PROCEDURES["show_compaction"]
    columns = [c.strip().split(" ")[0] for c in proc.output.split(",")]
    # Hudi's columns first, unchanged; then what `hoodie compaction show` reports.
    assert columns[:3] == ["timestamp", "operation_size", "state"]
    rows = proc.fn(None, bind(proc, [], {"basePath": path}))
    assert [r[0] for r in rows] == [c3, c2, c1]  # newest first
    by_name = [dict(zip(columns, r)) for r in rows]
    for row, s in zip(by_name, reversed(show_compactions(path))):
        assert isinstance(s, CompactionSummary)
        note = row.pop("note")
        assert row == {"timestamp": s.instant, "operation_size": s.operations, "state": s.state,
                       "partial_operations": s.partial_operations, "file_groups": s.file_groups,
                       "partitions": None if s.partitions is None else list(s.partitions), "strategy": s.strategy,
                       "threshold_ms": s.threshold_ms, "damaged": s.damaged, "duration_ms": s.duration_ms,
                       "bytes_written": s.bytes_written, "remaining_log_files": s.remaining_log_files}
        # hoodie's last column says what a row means: a damaged plan's fix, or what a pending one waits for.
        assert note == ("the plan file is damaged: remove the plan with CALL rollback_to_instant, then schedule again"
                        if s.damaged else None if s.state == "COMPLETED" else
                        "pending: CALL run_compaction(op => 'run', ...) executes it")
    assert by_name[1]["partitions"] == ["p0", "p1"] and by_name[1]["threshold_ms"] == 50
    assert by_name[0]["operation_size"] is None and f"{c3}.compaction.requested" in by_name[0]["damaged"]
    assert [r[0] for r in proc.fn(None, bind(proc, [], {"basePath": path, "limit": 1}))] == [c3]
