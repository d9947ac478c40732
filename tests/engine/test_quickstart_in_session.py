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
    assert cli.main(["quickstart", "--base-path", base, "--rows", "2000", "--json"]) == 0
    check_quickstart(base, json.loads(capsys.readouterr().out))


def test_readme_cli_examples_work_on_the_quickstart_table(spark, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Every CLI line of the README's example block, run as written (base path substituted) on a
    quickstart table, exits 0 and does what it says: the compaction compacts, the TTL dry run finds
    partitions. The quickstart prints the same commands."""
    import re
    import shlex

    from hoodie.interfaces.quickstart import cli_examples, run_quickstart

    base = str(tmp_path / "qs")
    lines: list[str] = []
    run_quickstart(base, rows=2000, spark=spark, log=lines.append)
    capsys.readouterr()
    assert any("T (threshold)" in l for l in lines) and any("keys: hoodie.compaction.strategy=" in l for l in lines)
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
