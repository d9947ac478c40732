"""hoodie on Spark Connect (``remote("local[2]")``: a Connect server Spark starts, the client in a
child process of its own): writes, reads, inline, CALL-driven and async compaction, every CALL
procedure kind, clean, TTL, rollback, the metadata table and the catalog. Compaction used to fail
there (it broadcast its tasks through ``spark.sparkContext``, which Connect does not have)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services.metadata import validate_metadata_table
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # starts a Spark Connect server (93 s loaded)
def test_every_api_on_spark_connect(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "tests.engine.connect_job", "local[2]", str(tmp_path)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    steps = {d["step"]: d for d in (json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{"))}
    assert steps["read"]["count"] == steps["read"]["hudi_count"] == 20
    assert steps["inline_compaction"]["commits"], "inline compaction ran on Spark through Connect"
    assert steps["call_run_compaction"]["rows"] == ["COMPLETED"]
    assert steps["async_compaction"] == {"step": "async_compaction", "results": 1, "errors": []}
    assert steps["call_show_commits"]["rows"] >= 5 and steps["call_show_compaction"]["rows"] == 3
    assert steps["call_run_clean"]["rows"] == 1
    assert sorted(steps["call_run_ttl"]["rows"]) == ["2020-01-01", "2020-01-02"]  # event times in 1970
    assert steps["call_rollback"]["rows"] == [True]
    assert steps["call_metadata"]["invalid"] == 0
    assert steps["catalog"]["count"] == 0  # every row was in the expired partitions
    path = str(tmp_path / "t")
    table = HoodieTable(path)
    assert not table.timeline.pending().instants
    assert hoodie.read_table(path).num_rows == 0 == read_hudi_rs(path).num_rows
    assert validate_metadata_table(table).equal
