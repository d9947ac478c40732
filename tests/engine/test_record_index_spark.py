"""hoodie.spark.write with hoodie.index.type=RECORD_INDEX or GLOBAL_SIMPLE: the same tagging as write_arrow (one
planner, the keys looked up once on the driver), so the same table: rows, partition paths and record index."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.metadata.index_reader import read_record_index
from hoodie.format.metadata.table import MetadataTable
from hoodie.format.table import HoodieTable
from hoodie.services.metadata.lifecycle import validate_record_index
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark
COLS = ["_hoodie_record_key", "_hoodie_partition_path", "k", "p", "ts", "v"]


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


# GLOBAL_SIMPLE's full history under -m slow; the default run has its one-write twin below.
@pytest.mark.parametrize("index", ["RECORD_INDEX", pytest.param("GLOBAL_SIMPLE", marks=pytest.mark.slow)])
def test_spark_global_index_write_equals_write_arrow(spark, tmp_path: Path, index: str) -> None:
    """Keys moving partitions (a: newer, moves; b: older, stays), a delete by a stale partition value; the
    file groups of x are touched by rows of three incoming partitions (two Spark tasks by partition would
    both rewrite them), planned as one group beside the groups of w and v. GLOBAL_SIMPLE: the same on a
    table whose metadata table has no record index (the driver's key scan, which the tasks tag with)."""
    import hoodie.spark as hs

    table_type, update_pp = "COPY_ON_WRITE", "true"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": "9",
            "hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": str(index == "RECORD_INDEX").lower(),
            "hoodie.index.type": index, "hoodie.record.index.update.partition.path": update_pp,
            "hoodie.simple.index.update.partition.path": update_pp}
    steps = [("upsert", [("a", "x", 1, "a1"), ("b", "x", 1, "b1"), ("c", "y", 1, "c1"), ("e", "w", 1, "e1")]),
             ("upsert", [("a", "y", 2, "a2"), ("b", "z", 0, "b0"), ("d", "z", 1, "d1"), ("e", "w", 2, "e2"),
                         ("f", "v", 1, "f1")]),
             ("delete", [("c", "z", 0, "")])]
    ours, theirs = str(tmp_path / "arrow"), str(tmp_path / "spark")
    for op, rows in steps:
        o = {**opts, "hoodie.datasource.write.operation": op}
        data = pa.Table.from_pylist([dict(zip(["k", "p", "ts", "v"], r)) for r in rows])
        hoodie.write_arrow(ours, data, o)
        hs.write(spark.createDataFrame(rows, "k string, p string, ts long, v string"), theirs, o)
    expected = _rows(hoodie.read_table(ours))
    assert _rows(hoodie.read_table(theirs)) == expected
    assert _rows(read_hudi_rs(theirs)) == expected
    moved = ("a", "y") if update_pp == "true" else ("a", "x")
    assert moved in {(r[0], r[1]) for r in expected}
    if index != "RECORD_INDEX":
        return
    for path in (ours, theirs):
        assert validate_record_index(HoodieTable(path)) == []
    index = {path: {k: loc.partition for k, loc in read_record_index(MetadataTable(HoodieTable(path))).items()}
             for path in (ours, theirs)}
    assert index[ours] == index[theirs] == {r[0]: r[1] for r in expected}


def test_spark_global_simple_write_moves_a_key_as_write_arrow_does(spark, tmp_path: Path) -> None:
    """One hoodie.spark.write with GLOBAL_SIMPLE (no record index; hoodie.simple.index.update.partition.path
    left at Hudi's default, true) over a table write_arrow made: a key arriving with another partition value
    moves (one copy), an older one stays, a new key is inserted; the same rows as write_arrow's twin table."""
    import hoodie.spark as hs

    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "6",
            "hoodie.index.type": "GLOBAL_SIMPLE", "hoodie.datasource.write.operation": "upsert"}
    first = pa.table({"k": ["a", "b", "c"], "p": ["x", "x", "y"], "ts": [1, 1, 1], "v": ["a1", "b1", "c1"]})
    rows = [("a", "y", 2, "a2"), ("b", "z", 0, "b0"), ("d", "z", 1, "d1")]
    ours, theirs = str(tmp_path / "arrow"), str(tmp_path / "spark")
    for path in (ours, theirs):
        hoodie.write_arrow(path, first, opts)
    hoodie.write_arrow(ours, pa.Table.from_pylist([dict(zip(["k", "p", "ts", "v"], r)) for r in rows]), opts)
    hs.write(spark.createDataFrame(rows, "k string, p string, ts long, v string"), theirs, opts)
    expected = [("a", "y", "a", "y", 2, "a2"), ("b", "x", "b", "x", 1, "b1"), ("c", "y", "c", "y", 1, "c1"),
                ("d", "z", "d", "z", 1, "d1")]
    assert _rows(hoodie.read_table(ours)) == _rows(hoodie.read_table(theirs)) == expected
    assert _rows(read_hudi_rs(theirs)) == expected
