"""``hoodie quickstart`` at a small size, run in-process on the run's shared Spark session (the
command's own session is only started under -m slow: tests/interfaces/test_quickstart.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoodie.interfaces import cli
from tests.interfaces.test_quickstart import check_quickstart

pytestmark = pytest.mark.spark


def test_quickstart_cli_small(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = str(tmp_path / "qs")
    # An earlier demo's table at the base path is the quickstart's to replace (no --overwrite needed).
    assert cli.main(["demo", "--base-path", base, "--rows", "100"]) == 0
    capsys.readouterr()
    from hoodie.interfaces.quickstart import result_json, run_quickstart

    lines: list[str] = []
    res = run_quickstart(base, rows=2000, spark=spark, log=lines.append)
    check_quickstart(base, json.loads(result_json(res)))
    # It teaches: the strategy, trigger and keys of each service, and what T and W mean.
    text = "\n".join(lines)
    for expected in ("keys: hoodie.compaction.strategy=", "T (threshold):", "W (watermark):",
                     "partition TTL: strategy KEEP_BY_EVENT_TIME", "clean: policy KEEP_LATEST_FILE_VERSIONS",
                     "hoodie compaction run "):
        assert expected in text, expected
    check_readme_cli_examples(base, capsys)


def check_readme_cli_examples(base: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every CLI line of the README's example block, run as written (base path substituted) on a
    quickstart table, exits 0 and does what it says: the compaction compacts, the TTL dry run finds
    partitions. The quickstart prints the same commands, with the strategies and keys it used."""
    import re
    import shlex

    from hoodie.interfaces.quickstart import cli_examples

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"On the quickstart's table.*?```bash\n(.*?)```", readme, re.S).group(1)
    commands = [l.replace("/tmp/hoodie_quickstart", base) for l in block.splitlines() if l.startswith("hoodie ")]
    assert commands == cli_examples(base)
    for line in commands:
        rc = cli.main(shlex.split(line)[1:])
        out = capsys.readouterr()
        assert rc == 0, (line, out.err)
        if " compaction run " in line:
            assert "nothing to compact" not in out.out, out.out
        if " ttl run " in line:
            assert "day=" in out.out, out.out

