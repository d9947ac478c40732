"""Progress of long pure-Python operations (compaction, TTL's move and bring-back, building or validating
the metadata table), shown only where a person watches.

Services report through :func:`task`; nothing is shown unless an entry point installed a reporter with
:func:`use`. The CLI installs :func:`terminal_reporter` when its standard error is a terminal (Spark's own
progress bar covers Spark jobs: ``spark.ui.showConsoleProgress``, set the same way), so logs, pipes and
library callers see nothing.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, ContextManager, Iterator, Optional, Protocol


class Task(Protocol):
    """One operation's progress: ``advance`` after each unit of work."""

    def advance(self, n: int = 1) -> None: ...


class _Silent:
    def advance(self, n: int = 1) -> None:
        return None


Reporter = Callable[[str, int], ContextManager[Task]]
_SILENT = _Silent()
_lock = threading.Lock()
_reporter: Optional[Reporter] = None


def use(reporter: Optional[Reporter]) -> Optional[Reporter]:
    """Install ``reporter`` (None: show nothing) for every later :func:`task`; returns the previous one."""
    global _reporter
    with _lock:
        previous, _reporter = _reporter, reporter
    return previous


@contextlib.contextmanager
def task(description: str, total: int) -> Iterator[Task]:
    """Report an operation of ``total`` units (silently unless a reporter is installed, or for one unit)."""
    reporter = _reporter
    if reporter is None or total <= 1:
        yield _SILENT
        return
    with reporter(description, total) as t:
        yield t


def terminal_reporter(console: object = None) -> Reporter:
    """A reporter drawing a ``rich`` progress bar on standard error (or ``console``)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    out = console if console is not None else Console(stderr=True)

    @contextlib.contextmanager
    def report(description: str, total: int) -> Iterator[Task]:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=out, transient=True) as bar:
            tid = bar.add_task(description, total=total)

            class _Bar:
                def advance(self, n: int = 1) -> None:
                    bar.advance(tid, n)

            yield _Bar()

    return report
