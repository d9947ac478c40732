"""The hoodie CLI through subprocess: the demo job and metadata commands (no JVM)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_demo_then_show_timeline(tmp_path: Path) -> None:
    base = str(tmp_path / "demo")
    out = _cli("demo", "--base-path", base, "--rows", "300", "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["read_optimized_rows"] == 300
    assert summary["snapshot_rows"] == 300 - 15
    tl = _cli("show", "timeline", base, "--json")
    assert tl.returncode == 0, tl.stderr
    rows = json.loads(tl.stdout)
    assert [r["instant"] for r in rows] == summary["commits"]
    assert {r["action"] for r in rows} == {"deltacommit"}


def test_error_is_one_line_with_nonzero_exit(tmp_path: Path) -> None:
    out = _cli("show", "timeline", str(tmp_path / "missing"))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "not a Hudi table" in out.stderr


def test_create_show_rollback_and_metrics_file(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    out = _cli("create", base, "--name", "t", "--type", "mor", "--record-key", "id", "--partition-fields", "day",
               "--precombine", "ts", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["table_type"] == "MERGE_ON_READ"
    import pyarrow as pa

    from hoodie.format.batch_write import write_arrow

    metrics = tmp_path / "m.prom"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.operation": "upsert",
            "hoodie.metrics.prometheus.file": str(metrics), "hoodie.clean.automatic": "false"}
    write_arrow(base, pa.table({"id": [1, 2], "day": ["d1", "d2"], "ts": [1, 1]}), opts)
    c2 = write_arrow(base, pa.table({"id": [1], "day": ["d1"], "ts": [2]}), opts)
    text = metrics.read_text()
    assert 'hoodie_write_records_written{base_path="' in text and 'operation="UPSERT"' in text
    parts = json.loads(_cli("show", "partitions", base, "--json").stdout)
    assert [p["partition"] for p in parts] == ["d1", "d2"] and parts[0]["log_files"] == 1
    slices = json.loads(_cli("show", "file-slices", base, "--partition", "d1", "--json").stdout)
    assert len(slices) == 1 and len(slices[0]["log_files"]) == 1
    stats = json.loads(_cli("show", "stats", base, "--json").stdout)
    assert [s["records_written"] for s in stats] == [2, 1]
    out = _cli("--metrics-file", str(metrics), "rollback", base, c2, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rolled_back"] == c2
    out = _cli("--metrics-file", str(metrics), "clean", base, "--set", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
               "--set", "hoodie.cleaner.fileversions.retained=1")
    assert out.returncode == 0, out.stderr
    text = metrics.read_text()
    assert "hoodie_clean_files_deleted" in text and "hoodie_write_records_written" in text
