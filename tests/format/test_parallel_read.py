"""``hoodie.read_table`` reads a plan's file slices on a pool of threads: the result is the sequential
read's, row for row in the plan's order, and a slice that cannot be read fails the read with its own
error (not a partial table)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.slice.reader import plan_read, read_plan_parallel
from hoodie.format.table import HoodieTable

OPTS = {"hoodie.table.name": "par", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _table(path: str) -> None:
    for n in range(3):
        write_arrow(path, pa.table({"k": [f"k{i}" for i in range(0, 40, n + 1)],
                                    "p": [f"p{i % 7}" for i in range(0, 40, n + 1)],
                                    "ts": pa.array([n] * len(range(0, 40, n + 1)), pa.int64()),
                                    "v": pa.array([n * 100 + i for i in range(0, 40, n + 1)], pa.int64())}), OPTS)


@pytest.mark.parametrize("query_type", ["snapshot", "read_optimized"])
def test_parallel_read_equals_the_sequential_read(tmp_path: Path, query_type: str) -> None:
    path = str(tmp_path / "t")
    _table(path)
    plan = plan_read(HoodieTable(path, read_only=True), query_type=query_type)
    assert len(plan.slices) == 7
    one = pa.concat_tables(read_plan_parallel(plan, threads=1))
    for threads in (2, 7):
        assert pa.concat_tables(read_plan_parallel(plan, threads=threads)).equals(one)
    assert hoodie.read_table(path, query_type=query_type).equals(one)


def test_a_slice_that_cannot_be_read_fails_the_whole_read(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _table(str(path))
    victim = sorted((path / "p3").glob("*.parquet"))[0]
    victim.write_bytes(b"not parquet")
    with pytest.raises(Exception, match=victim.name):
        hoodie.read_table(str(path))


def test_slices_with_log_files_are_read_first_without_nested_arrow_threads(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Merging slices (Python work holding the GIL) are queued first so base-file-only reads overlap them;
    inside the pool pyarrow decodes on the calling thread (no pool per file); the result keeps plan order."""
    import threading

    import hoodie.format.slice.reader as R
    from hoodie.format.storage import arrow_threads

    path = str(tmp_path / "t")
    keys = list(range(14))
    write_arrow(path, pa.table({"k": [f"k{i}" for i in keys], "p": [f"p{i % 7}" for i in keys],
                                "ts": pa.array([0] * 14, pa.int64()), "v": pa.array(keys, pa.int64())}), OPTS)
    write_arrow(path, pa.table({"k": ["k1", "k4"], "p": ["p1", "p4"], "ts": pa.array([1, 1], pa.int64()),
                                "v": pa.array([-1, -4], pa.int64())}), OPTS)
    plan = plan_read(HoodieTable(path, read_only=True))
    with_logs = [sl.partition for sl in plan.slices if sl.log_files]
    assert sorted(with_logs) == ["p1", "p4"] and [sl.partition for sl in plan.slices][:2] != with_logs
    one = pa.concat_tables(read_plan_parallel(plan, threads=1))
    assert arrow_threads()  # outside the pool pyarrow keeps its own threads
    started: list[tuple[str, bool]] = []
    lock = threading.Lock()
    real = R.read_slice

    def recording(p, sl):  # type: ignore[no-untyped-def]
        with lock:
            started.append((sl.partition, arrow_threads()))
        return real(p, sl)

    monkeypatch.setattr(R, "read_slice", recording)
    assert pa.concat_tables(read_plan_parallel(plan, threads=2)).equals(one)
    assert sorted(p for p, _ in started[:2]) == ["p1", "p4"]
    assert not any(threads for _, threads in started)
