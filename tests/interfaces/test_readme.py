"""The README's pure-Python "Using it" block runs as written (on a temporary path) and prints what
its comments say. The Spark block runs in tests/engine/test_readme_spark.py on the shared session."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from tests.fixture_paths import REPO


def readme_blocks() -> list[str]:
    """The ```python blocks of the README's "Using it" section, in order."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Using it"):text.index("\n## ", text.index("## Using it") + 3)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_python_block_runs_as_written(tmp_path: Path) -> None:
    block = readme_blocks()[0]
    assert "hoodie.write_table" in block and "import pyspark" not in block
    code = block.replace("/tmp/hoodie_events", str(tmp_path / "events"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    printed = out.getvalue()
    import hoodie

    got = sorted((r["event_id"], r["amount"]) for r in
                 hoodie.read_table(str(tmp_path / "events"), columns=["event_id", "amount"]).to_pylist())
    assert got == [("e1", 10.0), ("e2", 25.0), ("e4", 7.5)]  # the comment's promise (e3 deleted with its day)
    assert "[('2024-05-01', 35.0), ('2024-05-03', 7.5)]" in printed  # DuckDB's answer
    polars_out = printed[printed.index("shape:"):]
    assert sorted(re.findall(r"│ (e\d) ", polars_out)) == ["e1", "e2"]  # amount > 8
