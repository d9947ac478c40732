"""The Spark write task's streaming by table partition (``_partition_runs``): one table per partition
run, in order, keys generated where missing; a partition meeting again after its run is refused."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie.engine.write import _partition_runs
from hoodie.errors import WriteError
from hoodie.services.write.configs import WriteConfig

OPTS = {"hoodie.table.name": "r", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert"}


def _batches(parts: list[str], size: int) -> list[pa.RecordBatch]:
    t = pa.table({"id": pa.array(range(len(parts)), pa.int64()), "p": parts})
    return t.to_batches(max_chunksize=size)


@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_runs_across_batch_boundaries(size: int) -> None:
    parts = ["a", "a", "a", "b", "c", "c", "d"]
    runs = list(_partition_runs(iter(_batches(parts, size)), WriteConfig.from_options(OPTS)))
    assert [r.column("_hoodie_partition_path").unique().to_pylist() for r in runs] == [["a"], ["b"], ["c"], ["d"]]
    assert [r.column("id").to_pylist() for r in runs] == [[0, 1, 2], [3], [4, 5], [6]]


def test_a_partition_meeting_again_is_refused() -> None:
    with pytest.raises(WriteError, match="partition 'a' reached a write task in two runs"):
        list(_partition_runs(iter(_batches(["a", "b", "a"], 2)), WriteConfig.from_options(OPTS)))
