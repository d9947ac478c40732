"""Progress of long pure-Python operations: silent unless an entry point installed a reporter; the CLI
installs a progress bar only when its standard error is a terminal."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pytest

from hoodie import progress, write_arrow
from hoodie.interfaces import cli
from hoodie.services.compaction import run_compaction
from hoodie.services.metadata.storage_listing import storage_listing
from hoodie.format.storage import Storage

OPTS = {"hoodie.table.name": "prog", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


class Recorder:
    def __init__(self) -> None:
        self.tasks: list[list] = []

    @contextlib.contextmanager
    def __call__(self, description: str, total: int) -> Iterator["Recorder"]:
        self.tasks.append([description, total, 0])
        yield self

    def advance(self, n: int = 1) -> None:
        self.tasks[-1][2] += n


def _table(path: str, partitions: int = 3) -> None:
    for ts in range(2):
        write_arrow(path, pa.table({"k": [f"k{i}" for i in range(partitions)], "p": [f"p{i}" for i in range(partitions)],
                                    "ts": pa.array([ts] * partitions, pa.int64())}), OPTS)


def test_silent_unless_a_reporter_is_installed(tmp_path: Path) -> None:
    assert progress.use(None) is None
    with progress.task("x", 10) as t:
        t.advance()  # nothing to see, nothing fails


def test_compaction_and_listing_report_each_unit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _table(path)
    rec = Recorder()
    previous = progress.use(rec)
    try:
        runs = run_compaction(path, config={"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
        storage_listing(Storage(path))
    finally:
        progress.use(previous)
    assert runs
    assert [t for t in rec.tasks if t[0].startswith("compacting")] == [["compacting 3 file group(s) of prog", 3, 3]]
    assert [t[1:] for t in rec.tasks if t[0].startswith("listing")] == [[3, 3]]


def test_the_terminal_bar_draws_on_its_console() -> None:
    from rich.console import Console

    out = io.StringIO()
    report = progress.terminal_reporter(Console(file=out, force_terminal=True, width=80))
    with report("compacting 4 file group(s) of t", 4) as bar:
        for _ in range(4):
            bar.advance()
    assert "compacting 4 file group(s) of t" in out.getvalue()


@pytest.mark.parametrize("terminal", [True, False])
def test_the_cli_shows_progress_only_at_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   terminal: bool) -> None:
    path = str(tmp_path / "t")
    _table(path)
    rec = Recorder()
    monkeypatch.setattr(cli, "_interactive", lambda: terminal)
    monkeypatch.setattr(progress, "terminal_reporter", lambda console=None: rec)
    assert cli.main(["compaction", "run", path,
                     "--set", "hoodie.compact.inline.max.delta.commits=1"]) == 0
    assert bool(rec.tasks) == terminal
    assert progress.use(None) is None  # the CLI put the previous reporter back
