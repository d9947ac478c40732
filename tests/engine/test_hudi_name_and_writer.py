"""Hudi's Spark habits: ``format("hudi")`` reads with hoodie where the JVM has no Hudi; the DataFrame
writer (save, saveAsTable, INSERT INTO) fails naming ``hoodie.spark.write`` and ``hoodie.sql``; a
``hoodie.spark.write`` without a record key field generates Hudi's keys, unique across Spark tasks."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie import write_arrow
from hoodie.errors import WriteError
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark
COLS = ["_hoodie_record_key", "_hoodie_partition_path", "day", "v"]


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


def _table(tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"id": ["a", "b", "c"], "day": ["d1", "d1", "d2"], "v": [1, 2, 3]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                 "hoodie.datasource.write.partitionpath.field": "day", "hoodie.datasource.write.operation": "insert"})
    return path


def test_format_hudi_reads_what_format_hoodie_reads(spark, tmp_path: Path) -> None:
    from hoodie.engine.datasource import jvm_hudi_source

    path = _table(tmp_path)
    assert jvm_hudi_source(spark) is None  # no Hudi bundle here: the name is hoodie's
    hudi = spark.read.format("hudi").load(path).orderBy("id").collect()
    assert hudi == spark.read.format("hoodie").load(path).orderBy("id").collect()
    assert [(r.id, r.v) for r in hudi] == [("a", 1), ("b", 2), ("c", 3)]


def test_dataframe_writer_names_hoodie_spark_write(spark, tmp_path: Path) -> None:
    path = _table(tmp_path)
    before = [str(i) for i in HoodieTable(path).timeline.instants]
    df = spark.createDataFrame([("d", "d3", 4)], "id string, day string, v long")
    fix = re.compile(r"hoodie\.spark\.write\(df, .*hoodie\.sql\(spark, \"INSERT INTO .*Nothing was written", re.S)
    with pytest.raises(Exception, match=r"WriteError: df.write.format\('hudi'\)") as e:
        df.write.format("hudi").mode("append").save(path)
    assert fix.search(str(e.value)) and repr(path) in str(e.value)
    with pytest.raises(Exception, match=fix):
        df.write.format("hoodie").saveAsTable("not_created")
    assert not spark.catalog.tableExists("not_created")
    spark.sql(f"CREATE TEMPORARY VIEW hudi_name_v USING hudi OPTIONS (path '{path}')")
    with pytest.raises(Exception, match=fix):
        spark.sql("INSERT INTO hudi_name_v SELECT null, null, null, null, null, 'e', 'd3', 5").collect()
    # .save() in Spark's default mode (errorifexists) is refused by Spark itself, before the source is
    # asked: its message is Spark's (docs/spark.md).
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        df.write.format("hoodie").save(path)
    assert [str(i) for i in HoodieTable(path).timeline.instants] == before
    assert len(hoodie.read_table(path)) == 3


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_write_without_record_key_generates_hudis_keys(spark, tmp_path: Path, table_type: str) -> None:
    """Keys ``<instant>_<Spark partition id>_<row id>``: three input partitions give three ids, each
    numbering its rows from 0; unique, and read the same by hudi-rs. An upsert is refused before Spark
    is touched; a delete takes the keys the rows were read with (MERGE_ON_READ: a log delete block)."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.partitionpath.field": "day"}
    df = spark.range(0, 9, 1, 3).selectExpr("concat('d', cast(id % 2 as string)) as day", "id as v")
    instant = hs.write(df, path, opts)
    t = hoodie.read_table(path)
    keys = sorted(t.column("_hoodie_record_key").to_pylist())
    assert keys == sorted(f"{instant}_{p}_{r}" for p in range(3) for r in range(3))
    assert _rows(read_hudi_rs(path)) == _rows(t)
    with pytest.raises(WriteError, match="operation=upsert matches incoming rows"):
        hs.write(df, path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    if table_type == "MERGE_ON_READ":
        gone = spark.read.format("hoodie").load(path).where("v in (1, 4)")
        hs.write(gone, path, {**opts, "hoodie.datasource.write.operation": "delete"})
        t = hoodie.read_table(path)
        assert sorted(t.column("v").to_pylist()) == [0, 2, 3, 5, 6, 7, 8]
        assert _rows(read_hudi_rs(path)) == _rows(t)
