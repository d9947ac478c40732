"""Partition values through Spark (issue 12, items 1, 4, 5): ``WHERE`` on typed partition columns of
the ``hoodie`` source returns what Spark returns on the unpruned rows, also when one DataFrame is
scanned twice with different filters; dot-leading partitions are written and read; a partition
path refused in a Spark task rolls the write back at once."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.keys.paths import PartitionPathError
from hoodie.format.table import HoodieTable
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark
UTC = dt.timezone.utc


def test_where_on_typed_partition_columns_drops_no_row(spark, tmp_path: Path) -> None:
    """Every operator (=, <, <=, >, >=, IN, !=, NOT IN) at the boundary of each typed partition
    column, several scans of one DataFrame in one query: the read equals Spark's own filter over
    the rows read without a filter."""
    path = str(tmp_path / "t")
    n = 6
    data = pa.table({
        "k": [f"k{i}" for i in range(n)],
        "pi": pa.array([-1, 0, 7, 10, None, 7], pa.int64()),
        "pb": pa.array([True, False, None, True, False, True]),
        "pd": pa.array([Decimal("1.10"), Decimal("-1.00"), Decimal("10.05"), None, Decimal("1.10"), Decimal("2.00")],
                       pa.decimal128(5, 2)),
        "pdt": pa.array([dt.date(2024, 1, 31), dt.date(2024, 2, 1), None, dt.date(1969, 12, 31),
                         dt.date(2024, 1, 31), dt.date(2024, 2, 1)]),
        "pts": pa.array([dt.datetime(2024, 1, 1, tzinfo=UTC), dt.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC), None,
                         dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC), dt.datetime(2024, 1, 1, tzinfo=UTC),
                         dt.datetime(2030, 1, 1, tzinfo=UTC)], pa.timestamp("us", "UTC")),
        "ps": pa.array(["10", "9", "", None, ".NET", "a b"]),
    })
    fields = "pi,pb,pd,pdt,pts,ps"
    write_arrow(path, data, {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                             "hoodie.datasource.write.partitionpath.field": fields,
                             "hoodie.datasource.write.operation": "insert"})
    src = spark.read.format("hoodie").load(path)
    unpruned = spark.createDataFrame(hoodie.read_table(path).to_pandas(), schema=src.schema)
    wheres = [
        "pi <= 7", "pi > 0", "pi IN (0, 10)", "pi NOT IN (7, -1)", "pb = true", "pd = 1.1", "pd > 1.10",
        "pdt > DATE'2024-01-31'", "pts = TIMESTAMP'2024-01-01 00:00:00 UTC'", "ps < '9'", "ps = ''",
        "ps != '10' AND pi >= 0",
    ]
    from functools import reduce

    from pyspark.sql import functions as F

    # One job each way: the filtered scans as a union, and every condition as a column over the
    # rows read without a filter.
    pushed = reduce(lambda a, b: a.unionAll(b),
                    [src.where(w).select(F.lit(i).alias("w"), "k") for i, w in enumerate(wheres)])
    got = {i: set() for i in range(len(wheres))}
    for r in pushed.collect():
        got[r.w].add(r.k)
    flags = unpruned.select("k", *[F.expr(w).alias(f"w{i}") for i, w in enumerate(wheres)]).collect()
    for i, w in enumerate(wheres):
        assert got[i] == {r.k for r in flags if r[f"w{i}"]}, w


def test_a_filtered_query_does_not_narrow_other_scans_of_the_dataframe(spark, tmp_path: Path) -> None:
    """PySpark 4.3 keeps the read planned after a filter pushdown on the relation, shared by every
    scan of the DataFrame: with partitions pruned there, ``df.count()`` after
    ``df.where("p = 'x'")`` counted one partition, and a union of two filtered scans returned one
    side twice. The reader prunes nothing Spark pushes, so every scan reads every partition."""
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a", "b", "c"], "p": ["x", "y", "z"]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert"})
    df = spark.read.format("hoodie").load(path)
    assert df.where("p = 'x'").count() == 1
    assert df.count() == 3
    assert sorted(r.k for r in df.where("p = 'x'").unionAll(df.where("p = 'y'")).collect()) == ["a", "b"]
    df.createOrReplaceTempView("pruning_leak")
    got = spark.sql("SELECT k FROM pruning_leak WHERE p = 'z' UNION ALL SELECT k FROM pruning_leak WHERE p < 'y'")
    assert sorted(r.k for r in got.collect()) == ["a", "c"]


def test_dot_partitions_and_refused_values_through_spark(spark, tmp_path: Path) -> None:
    """Spark writes and reads '.NET'; a value that would leave the table is refused before the write
    starts (no instant, no file or folder); a partition inside another, found after the tasks ran,
    is refused and the write rolled back at once."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    o = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.operation": "upsert"}

    def df(rows: list[tuple]):
        return spark.createDataFrame(rows, "id long, p string, ts long")

    hs.write(df([(1, ".NET", 1), (2, "a", 1)]), path, o)
    assert sorted(r.p for r in spark.read.format("hoodie").load(path).collect()) == [".NET", "a"]

    def files() -> list[str]:
        return sorted(str(p.relative_to(tmp_path)) for p in Path(path).rglob("*")
                      if ".hoodie" not in p.relative_to(tmp_path).parts)

    before = files()
    # A value that cannot be a folder is refused by the record checks before an instant exists; a
    # partition nested in another is found after the tasks ran, and that write is rolled back at once.
    for rows, match, started in (([(3, "b", 1), (4, "../x", 1)], r"'\.\.', which would put files outside", False),
                                 ([(3, "b", 1), (5, "a/c", 1)], r"inside partition 'a' \(already in the table\)", True)):
        instants_before = [i.timestamp for i in HoodieTable(path).timeline.instants]
        with pytest.raises(PartitionPathError, match=match) as e:
            hs.write(df(rows), path, o)
        if started:
            assert "rolled back" in str(e.value) + "".join(getattr(e.value, "__notes__", []))
        else:
            assert [i.timestamp for i in HoodieTable(path).timeline.instants] == instants_before
        table = HoodieTable(path)
        assert table.timeline.pending().instants == [] and files() == before
        assert not os.path.exists(tmp_path / "x")
    assert sorted(r.p for r in spark.read.format("hoodie").load(path).collect()) == [".NET", "a"]
    assert sorted(read_hudi_rs(path).column("p").to_pylist()) == [".NET", "a"]
