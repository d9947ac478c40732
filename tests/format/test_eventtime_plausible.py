"""``all_plausible``: the sufficient test the Spark writer's native record check uses for numeric event
times (both extremes plausible in the column's unit), never accepting what the writer refuses."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie.format.slice.eventtime import event_time_millis

@pytest.mark.parametrize("values,unit,expected", [
    ([1_700_000_000_000, 1_800_000_000_000], "MILLISECONDS", True),
    ([1_700_000_000, None], "SECONDS", True),
    (pa.array([None, None], pa.int64()), "MILLISECONDS", True),
    ([1_700_000_000, 1_700_000_001], "MILLISECONDS", False),   # seconds read as ms: 1970
    ([0, 1_700_000_000_000], "MILLISECONDS", False),           # accepted by the writer, but not provably
    ([1.7e12, float("nan")], "MILLISECONDS", False),
])
def test_all_plausible_is_a_sufficient_test_of_the_writer_check(values, unit, expected) -> None:
    from hoodie.format.slice.eventtime import all_plausible

    arr = values if isinstance(values, pa.Array) else pa.array(values)
    assert all_plausible(arr, unit) is expected
    if expected:
        event_time_millis(arr, "t", unit)  # the writer's own check accepts it
