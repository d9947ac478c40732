"""A short fuzz run of the log-block reader in CI (the long run: python -m tests.format.fuzz_logformat)."""

from tests.format.fuzz_logformat import run


def test_logformat_fuzz_short() -> None:
    assert run(seconds=4, seed=1) > 100
