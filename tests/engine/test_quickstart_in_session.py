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
