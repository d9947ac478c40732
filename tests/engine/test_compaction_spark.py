"""Compaction on Spark: the Spark executor runs each operation in its own Spark task and commits the
same table state as the in-process executor (model and hudi-rs agree)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hoodie.engine.compaction import spark_executor
from hoodie.format.file_group import naming as N
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction, schedule_compaction
from tests.hudi_rs import read_hudi_rs
from tests.prove.crash_child import batch
from tests.prove.crash_harness import Model, Setup, _rows, part_of, snapshot

pytestmark = pytest.mark.spark

SETUP = Setup("MERGE_ON_READ", ordering=True, block_format="avro", commits_retained=10)
FULL = {"hoodie.compaction.strategy": "UnBounded", "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER"}


def _table(path: str) -> Model:
    from hoodie import write_arrow

    model = Model(True)
    rows = [[k, part_of(k), 1, k] for k in range(30)]
    write_arrow(path, batch(rows), SETUP.write_options("insert"))
    model.apply("insert", rows)
    ups = [[k, part_of(k), 2, 1000 + k] for k in range(0, 30, 3)]
    write_arrow(path, batch(ups), SETUP.write_options("upsert"))
    model.apply("upsert", ups)
    return model


def test_spark_executor_matches_in_process(spark, tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    model = _table(a)
    shutil.copytree(a, b, symlinks=True)
    c = schedule_compaction(a, FULL)
    assert schedule_compaction(b, FULL, instant=c) == c
    ops = HoodieTable(a).timeline.compaction_plan(c).operations
    assert len(ops) >= 3  # updates in every partition: several Spark tasks
    (ra,) = run_compaction(a, c, FULL, executor=spark_executor(spark))
    (rb,) = run_compaction(b, c, FULL)
    assert len(ra.stats) == len(ops)
    # Each operation ran in a Spark task of its own: the write tokens name distinct task partitions.
    tokens = {N.parse_base_file(s.path.rsplit("/", 1)[-1]).write_token.split("-")[0] for s in ra.stats}
    assert len(tokens) == len(ops)
    expected = model.snapshot()
    assert snapshot(a) == snapshot(b) == expected == _rows(read_hudi_rs(a))
    assert sorted(s.num_writes for s in ra.stats) == sorted(s.num_writes for s in rb.stats)
