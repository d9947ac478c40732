"""The long run of issue 33 (``-m slow``): a stream of small upserts into a merge-on-read table with inline
compaction, clean and archival on, with and without a metadata table. The active timeline stays bounded
and commit N costs what the first commits cost; reads agree with hudi-rs at the end. The full benchmark
(1,500 commits, archival on and off) is ``bench/long_history.py``, its numbers in BENCHMARKS.md."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie import write_arrow
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("version,metadata", [(6, False), (6, True), (9, False), (9, True)])
def test_commit_cost_and_active_timeline_stay_bounded(tmp_path: Path, version: int, metadata: bool) -> None:
    base = str(tmp_path / "t")
    opts = {"hoodie.table.name": "long", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": str(version),
            "hoodie.compact.inline": "true", "hoodie.metadata.enable": str(metadata).lower()}
    times = []
    commits, window = 400, 80
    for n in range(commits):
        data = pa.table({"k": [f"k{i}" for i in range(100)], "part": ["p"] * 100,
                         "ts": pa.array([n] * 100, pa.int64()), "v": pa.array(range(n, n + 100), pa.int64())})
        t0 = time.perf_counter()
        write_arrow(base, data, opts)
        times.append(time.perf_counter() - t0)
    t = HoodieTable(base)
    # keep.max.commits (30) completed commits at most, plus a bounded number of clean instants.
    assert len(t.timeline.completed_writes()) <= 30
    assert len(t.timeline.instants) <= 30 + 10
    ratio = statistics.median(times[-window:]) / statistics.median(times[:window])
    assert ratio <= 1.5, f"commit cost grew {ratio:.2f}x over {commits} commits"
    cols = ["k", "ts", "v"]
    ours = sorted(rows_of(hoodie.read_table(base), cols))
    last = commits - 1
    expected = pa.table({"k": [f"k{i}" for i in range(100)], "ts": pa.array([last] * 100, pa.int64()),
                         "v": pa.array(range(last, last + 100), pa.int64())})
    assert ours == sorted(rows_of(expected, cols))
    if version == 9 or not metadata:
        assert sorted(rows_of(read_hudi_rs(base), cols)) == ours
