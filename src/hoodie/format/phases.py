"""Where a write spends its time: exclusive phase timers for profiling (``hoodie.write.profile``).

A profile is opened with :func:`recording`; inside it, code marks its phases with
``with phase("index"):``. Timing is exclusive: entering a nested phase pauses the enclosing one, so
the phases of one recording add up to its wall time (the rest is booked as ``other``). Outside a
recording :func:`phase` costs one context-variable lookup, so the marks stay in the code for good.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterator, Optional


@dataclass
class Profile:
    """Seconds per phase of one recording (exclusive), and the phase being timed now."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    _stack: list[tuple[str, float]] = field(default_factory=list)

    def _enter(self, name: str) -> None:
        now = time.perf_counter()
        if self._stack:
            outer, since = self._stack[-1]
            self.seconds[outer] += now - since
        self._stack.append((name, now))

    def _exit(self) -> None:
        now = time.perf_counter()
        name, since = self._stack.pop()
        self.seconds[name] += now - since
        if self._stack:
            outer, _ = self._stack[-1]
            self._stack[-1] = (outer, now)  # the enclosing phase resumes now

    def as_dict(self) -> dict[str, float]:
        """Seconds per phase, rounded to microseconds."""
        return {k: round(v, 6) for k, v in sorted(self.seconds.items())}


_current: contextvars.ContextVar[Optional[Profile]] = contextvars.ContextVar("hoodie_profile", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Profile]:
    """Open a profile for the code run inside; time not inside a phase is booked as ``other``."""
    prof = Profile()
    token = _current.set(prof)
    prof._enter("other")
    try:
        yield prof
    finally:
        prof._exit()
        _current.reset(token)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Book the time spent inside to ``name`` in the open recording (no-op without one)."""
    prof = _current.get()
    if prof is None:
        yield
        return
    prof._enter(name)
    try:
        yield
    finally:
        prof._exit()


def add(into: dict[str, float], more: dict[str, float]) -> dict[str, float]:
    """Sum two phase dicts into ``into`` (returned)."""
    for k, v in more.items():
        into[k] = into.get(k, 0.0) + v
    return into
