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
