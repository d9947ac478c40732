"""``hoodie quickstart`` at a small size, run in-process on the run's shared Spark session (the
command's own session is only started under -m slow: tests/interfaces/test_quickstart.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hoodie
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



def test_streaming_quickstart_small(spark, tmp_path: Path) -> None:
    """``hoodie quickstart --streaming``: every arrival one micro-batch, compaction and TTL inline beside the
    stream; the table holds exactly the model's live events outside the expired days, as hudi-rs reads it."""
    from hoodie.interfaces.quickstart import generate_batches
    from hoodie.interfaces.quickstart_stream import run_stream_quickstart
    from tests.hudi_rs import read_hudi_rs

    base = str(tmp_path / "qs")
    lines: list[str] = []
    res = run_stream_quickstart(base, rows=1000, days=10, batches=10, spark=spark, log=lines.append)
    live: dict[str, dict] = {}
    for op, recs in generate_batches(1000, 10, 10):
        for r in recs:
            if op == "delete":
                live.pop(r["event_id"], None)
            elif r["event_id"] not in live or r["updated_at"] >= live[r["event_id"]]["updated_at"]:
                live[r["event_id"]] = r
    assert len(res.ttl_expired) == 2  # 10 days of events, 7 kept: the oldest 2 days expire
    cols = ["event_id", "day", "status", "updated_at"]
    model = sorted((r["event_id"], r["day"], r["status"], r["updated_at"]) for r in live.values()
                   if f"day={r['day']}" not in res.ttl_expired and r["day"] not in res.ttl_expired)

    def plain(t) -> list[tuple]:
        return sorted(tuple(r[c] for c in cols) for r in t.select(cols).to_pylist())

    assert plain(hoodie.read_table(base)) == model
    assert plain(read_hudi_rs(base)) == model
    assert len(res.commits) == 10 and res.compactions
    assert sum("micro-batch ->" in line and "W=" in line for line in lines) == 10
