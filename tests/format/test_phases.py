"""The write profiler's phase timers: exclusive, adding up to the recording's wall time."""

from __future__ import annotations

import time

from hoodie.format import phases


def test_nested_phases_are_exclusive_and_add_up() -> None:
    started = time.perf_counter()
    with phases.recording() as prof:
        time.sleep(0.01)  # other
        with phases.phase("outer"):
            time.sleep(0.02)
            with phases.phase("inner"):
                time.sleep(0.03)
            time.sleep(0.02)
    wall = time.perf_counter() - started
    s = prof.as_dict()
    assert set(s) == {"other", "outer", "inner"}
    assert 0.03 <= s["inner"] < 0.06
    assert 0.04 <= s["outer"] < 0.07  # its own time only: the inner sleep is not counted twice
    assert abs(sum(s.values()) - wall) < 0.005


def test_phase_outside_a_recording_records_nothing() -> None:
    with phases.phase("x"):
        pass
    with phases.recording() as prof:
        pass
    assert set(prof.as_dict()) == {"other"}
    assert phases.add({"a": 1.0}, {"a": 0.5, "b": 2.0}) == {"a": 1.5, "b": 2.0}
