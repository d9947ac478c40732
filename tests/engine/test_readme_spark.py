"""The README's Spark "Using it" block runs as written (on temporary paths) on the run's session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hoodie
from tests.interfaces.test_readme import readme_blocks


def test_readme_spark_block_runs_as_written(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hoodie.spark as hs

    block = readme_blocks()[1]
    assert "hs.session()" in block
    base = tmp_path / "tbl"
    # The block's own session call returns the run's session (a second JVM session cannot start).
    monkeypatch.setattr(hs, "session", lambda *a, **k: spark)
    code = block.replace("/tmp/hoodie_spark_events", str(base)).replace("spark_events", "readme_spark_events")
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
        rows = hoodie.read_table(str(base), columns=["event_id", "amount"]).to_pylist()
        assert rows == [{"event_id": "e1", "amount": 12.0}]  # the MERGE's update
    finally:
        spark.sql("DROP TABLE IF EXISTS readme_spark_events")
