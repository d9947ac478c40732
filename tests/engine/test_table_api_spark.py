"""``hoodie.open(path).compaction.run(spark=spark)`` runs the operations as Spark tasks and commits
what ``run_compaction(executor=spark_executor(spark))`` commits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.engine.compaction import spark_executor
from hoodie import write_arrow
from hoodie.format.slice.reader import read_table
from hoodie.services.compaction import run_compaction, schedule_compaction

pytestmark = pytest.mark.spark

OPTS = {
    "hoodie.table.name": "api_spark", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _rows(path: str, query_type: str) -> list[tuple]:
    return sorted(tuple(r.values()) for r in read_table(path, query_type=query_type,
                                                        columns=["k", "part", "ts", "v"]).to_pylist())


def test_compaction_run_on_spark_is_run_compaction_with_the_spark_executor(spark, tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    keys = [f"k{i}" for i in range(8)]
    write_arrow(a, pa.table({"k": keys, "part": ["p0", "p1"] * 4, "ts": [1] * 8, "v": list(range(8))}),
                {**OPTS, "hoodie.datasource.write.operation": "insert"})
    write_arrow(a, pa.table({"k": keys[:4], "part": ["p0", "p1"] * 2, "ts": [2] * 4, "v": [100, 101, 102, 103]}),
                {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    shutil.copytree(a, b)
    for p in (a, b):
        assert schedule_compaction(p, {"hoodie.compact.inline.max.delta.commits": "1"}) is not None
    spark.sparkContext.setJobGroup("hoodie-table-api", "compaction through hoodie.open")
    try:
        got = hoodie.open(a).compaction.run(spark=spark)
    finally:
        spark.sparkContext.setJobGroup("hoodie-other", "")
    assert spark.sparkContext.statusTracker().getJobIdsForGroup("hoodie-table-api")  # it ran on Spark
    want = run_compaction(b, executor=spark_executor(spark))
    assert len(got) == len(want) == 1 and got[0].metrics["operations"] == want[0].metrics["operations"] == 2
    assert _rows(a, "read_optimized") == _rows(b, "read_optimized") == _rows(a, "snapshot")
    assert [r[3] for r in _rows(a, "read_optimized")][:4] == [100, 101, 102, 103]


def test_spark_session_with_a_metastore_attaches_the_registered_tables(spark, tmp_path: Path) -> None:
    """``hoodie.spark.session(metastore=...)`` (the catalog's session, above the engine's) attaches
    every registered hoodie table, so ``db.name`` reads through hoodie.sql at once."""
    import hoodie.spark as hs
    from hoodie.catalog import register_table
    from hoodie.interfaces import catalog

    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a", "b", "c"], "part": ["p0", "p0", "p1"], "ts": [1, 1, 1], "v": [1, 2, 3]}),
                {**OPTS, "hoodie.datasource.write.operation": "insert"})
    register_table(spark, "attach_db.t", path)
    for view in ("__hoodie_attach_db_t", "__hoodie_attach_db_t_ro"):  # as a new process would start
        spark.catalog.dropTempView(view)
    catalog._ATTACHED.pop(id(spark), None)
    assert not spark.catalog.tableExists("__hoodie_attach_db_t")
    metastore = str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent)
    assert hs.session(metastore=metastore) is spark
    assert spark.catalog.tableExists("__hoodie_attach_db_t")
    assert hoodie.sql(spark, "SELECT count(*) AS n FROM attach_db.t").collect()[0]["n"] == 3
