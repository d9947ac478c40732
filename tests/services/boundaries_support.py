"""Helpers the services' boundary tests share (tests/services/test_*_boundaries.py)."""

from __future__ import annotations

from pathlib import Path





# Realistic epoch-millisecond event times (2023-11-14T22:13:20Z) around a threshold T.
T = 1_700_000_000_000


T0 = "2024010100000000"  # synthetic instants T0 + "1", T0 + "2", ...: 17 digits, in order


def _stats_table(root: Path):
    from types import SimpleNamespace

    from hoodie.format.timeline import active as TL
    from hoodie.format.storage import Storage

    st = Storage(str(root))
    return SimpleNamespace(storage=st, timeline=TL.Timeline.load(st))


class _Stopped(Exception):
    """Raised instead of the SIGKILL a fault point sends (see _stop_at)."""


def _stop_at(monkeypatch, point: str) -> None:
    """Enable fault point ``point`` in this process, raising _Stopped where it would kill: the crash
    harness (tests/prove) kills at these names, so a renamed or dropped point would test nothing."""
    import os
    import signal

    import hoodie.faults as F

    kill = os.kill

    def fake_kill(pid: int, sig: int) -> None:
        if pid == os.getpid() and sig == signal.SIGKILL:
            raise _Stopped(point)
        kill(pid, sig)

    monkeypatch.setenv(F.ENV, point)
    monkeypatch.setattr(F, "_hits", {})
    monkeypatch.setattr(F.os, "kill", fake_kill)
