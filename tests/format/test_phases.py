"""The write profiler's phase timers: exclusive, adding up to the recording's wall time."""

from __future__ import annotations


import pytest

from hoodie.format import phases


def test_nested_phases_are_exclusive_and_add_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake clock (a loaded machine's sleeps overshoot): each phase gets its own time only."""
    clock = [100.0]

    def advance(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(phases.time, "perf_counter", lambda: clock[0])
    with phases.recording() as prof:
        advance(0.01)  # other
        with phases.phase("outer"):
            advance(0.02)
            with phases.phase("inner"):
                advance(0.03)
            advance(0.02)
        advance(0.005)  # other again
    s = prof.as_dict()
    assert set(s) == {"other", "outer", "inner"}
    assert s["inner"] == pytest.approx(0.03)
    assert s["outer"] == pytest.approx(0.04)  # its own time only: the inner time is not counted twice
    assert s["other"] == pytest.approx(0.015)
    assert sum(s.values()) == pytest.approx(0.085)


def test_phase_outside_a_recording_records_nothing() -> None:
    with phases.phase("x"):
        pass
    with phases.recording() as prof:
        pass
    assert set(prof.as_dict()) == {"other"}
    assert phases.add({"a": 1.0}, {"a": 0.5, "b": 2.0}) == {"a": 1.5, "b": 2.0}
