"""Planning splits a task's records by partition path: every row lands in its partition, in input
order, whether the rows arrive grouped (sliced without a copy) or interleaved (one stable sort)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.errors import WriteError
from hoodie.services.write.plan import split_by_partition


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "b", "2024/01/01", "c=1"]), max_size=40), st.booleans())
def test_every_row_lands_in_its_partition_in_input_order(paths: list[str], grouped: bool) -> None:
    if grouped:
        paths = sorted(paths, key=paths.index)  # runs in first-appearance order
    t = pa.table({"_hoodie_partition_path": pa.array(paths, pa.string()), "row": list(range(len(paths)))})
    out = split_by_partition(t)
    assert set(out) == set(paths)
    for p, part in out.items():
        assert part.column("row").to_pylist() == [i for i, q in enumerate(paths) if q == p]
        assert part.schema == t.schema


def test_a_null_partition_path_is_an_internal_error() -> None:
    t = pa.table({"_hoodie_partition_path": pa.array(["a", None], pa.string()), "row": [0, 1]})
    with pytest.raises(WriteError, match="without a partition path"):
        split_by_partition(t)
