"""The Hypothesis profiles of tests/conftest.py: "ci" by default, "long" exactly when the run
includes the slow tests, and per-test counts that scale with the profile (docs/testing.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import settings

from tests.helpers import examples

REPO = Path(__file__).resolve().parent.parent
# A module with four Hypothesis tests and four plain ones.
MODULE = "tests/format/test_eventtime.py"


def test_examples_scale_with_the_active_profile() -> None:
    before = settings.get_current_profile_name()
    try:
        settings.load_profile("ci")
        assert (examples(1), examples(2), examples(50)) == (1, 1, 25)  # half, at least one
        settings.load_profile("long")
        assert (examples(1), examples(50)) == (10, 500)
    finally:
        settings.load_profile(before)


def _collect(args: list[str], profile: Optional[str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_PROFILE"}
    if profile:
        env["HYPOTHESIS_PROFILE"] = profile
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "--collect-only", "-q", MODULE, *args],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=120)


@pytest.mark.parametrize("args,profile,collected", [
    ([], None, 8),                  # ci: every test, none of them slow
    (["-m", "slow"], None, 4),      # long: the Hypothesis tests are the slow ones
    (["-m", "slow"], "ci", 0),      # ci asked for: no Hypothesis test is slow
    (["-m", "not spark"], None, 8),  # an expression that lets slow tests through is a long run
])
def test_profile_follows_the_slow_selection(args: list[str], profile: Optional[str], collected: int) -> None:
    out = _collect(args, profile)
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert len(ids) == collected, out.stdout + out.stderr
    assert all("test_eventtime.py::" in i for i in ids)


def test_long_profile_in_a_run_without_slow_tests_is_refused() -> None:
    out = _collect([], "long")
    assert out.returncode == pytest.ExitCode.USAGE_ERROR
    assert "run the long suite with `python3 -m pytest -m slow`" in out.stderr


def test_unknown_profile_is_refused() -> None:
    out = _collect([], "nightly")
    assert out.returncode == pytest.ExitCode.USAGE_ERROR
    assert "unknown Hypothesis profile 'nightly'" in out.stderr
