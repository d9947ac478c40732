"""Catalog: hoodie tables registered in an embedded Hive metastore resolve by name (snapshot and
read-optimized), carry their freshness as table properties, and follow TTL."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
import hoodie.catalog
from hoodie.catalog import register_table, resolve_table_path
from hoodie.format.batch_write import write_arrow

pytestmark = pytest.mark.spark
OPTS = {
    "hoodie.table.name": "ev", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.payload.event.time.field": "ts",
    "hoodie.clean.automatic": "false",
}


def test_register_resolve_query_freshness_ttl(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "ev")
    write_arrow(path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "day": ["d1", "d1", "d2"],
                                "ts": pa.array([1000, 2000, 3000], pa.int64())}),
                {**OPTS, "hoodie.datasource.write.operation": "insert"}, instant="19700101000000000")
    write_arrow(path, pa.table({"id": pa.array([1], pa.int64()), "day": ["d1"], "ts": pa.array([5000], pa.int64())}),
                {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    views = register_table(spark, "analytics.events", path)
    assert views == ["analytics.events", "analytics.events_ro"]
    assert resolve_table_path(spark, "analytics.events") == path
    # Qualified names through hoodie.sql; plain Spark SQL fails loudly instead of returning wrong rows.
    snap = hoodie.sql(spark, "SELECT id, ts FROM analytics.events ORDER BY id").collect()
    assert [(r.id, r.ts) for r in snap] == [(1, 5000), (2, 2000), (3, 3000)]
    ro = hoodie.sql(spark, "SELECT id, ts FROM analytics.events_ro WHERE id = 1").collect()
    assert [(r.id, r.ts) for r in ro] == [(1, 1000)]
    with pytest.raises(Exception, match="is a hoodie table"):
        spark.sql("SELECT * FROM analytics.events").collect()
    with pytest.raises(Exception, match="is a hoodie table"):
        spark.sql("SELECT count(*) FROM analytics.events_ro").collect()
    spark.sql("USE analytics")
    try:
        hoodie.catalog.attach(spark)  # unqualified names for the current database
        assert spark.sql("SELECT count(*) AS n FROM events_ro").collect()[0]["n"] == 3
    finally:
        spark.sql("USE default")
    # Compaction through CALL with the table name updates the RO view's freshness properties.
    hoodie.sql(spark, "CALL run_compaction(op => 'scheduleAndExecute', table => 'analytics.events', options => "
                      "'hoodie.compaction.strategy=org.apache.hudi.table.action.compact.strategy."
                      "EventTimeBasedCompactionStrategy,hoodie.compaction.event.time.threshold=9000,"
                      "hoodie.compact.inline.trigger.strategy=EVENT_TIME_TRIGGER')")
    props = {r[0]: r[1] for r in spark.sql("SHOW TBLPROPERTIES analytics.events_ro").collect()}
    assert props["hoodie.ro.freshness.threshold.epoch.ms"] == "9000"
    assert hoodie.sql(spark, "SELECT ts FROM analytics.events_ro WHERE id = 1").collect()[0].ts == 5000
    # TTL by name: the partitions written in 1970 expire and disappear from the named views.
    gone = [r[0] for r in hoodie.sql(spark, "CALL run_ttl(table => 'analytics.events', retain_days => 1, "
                                            "options => 'hoodie.partition.ttl.management.strategy.type=KEEP_BY_CREATION_TIME')").collect()]
    assert gone == ["d1", "d2"]
    assert hoodie.sql(spark, "SELECT count(*) AS n FROM analytics.events").collect()[0]["n"] == 0
