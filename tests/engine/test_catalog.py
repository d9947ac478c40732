"""Catalog: hoodie tables registered in an embedded Hive metastore resolve by name (snapshot and
read-optimized), carry their freshness as table properties, and follow TTL."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
import hoodie.catalog
from hoodie.catalog import register_table, resolve_table_path
from hoodie import write_arrow

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


def _small_table(path: str) -> None:
    write_arrow(path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "day": ["d1", "d1", "d2"],
                                "ts": pa.array([1000, 2000, 3000], pa.int64())}),
                {**OPTS, "hoodie.datasource.write.operation": "insert"})


def test_create_table_using_hoodie_location_then_select(spark, tmp_path: Path) -> None:
    """hoodie.sql's CREATE TABLE ... USING hoodie LOCATION registers the table (as register_table
    does); SELECT reads it. Before: the CREATE passed to Spark, which dropped LOCATION, and SELECT
    failed with KeyError: 'path'."""
    path = str(tmp_path / "ev")
    _small_table(path)
    hoodie.sql(spark, f"CREATE TABLE ct_db.events USING hoodie LOCATION '{path}'")
    assert resolve_table_path(spark, "ct_db.events") == resolve_table_path(spark, "ct_db.events_ro") == path
    rows = hoodie.sql(spark, "SELECT id, ts FROM ct_db.events ORDER BY id").collect()
    assert [(r.id, r.ts) for r in rows] == [(1, 1000), (2, 2000), (3, 3000)]
    assert hoodie.sql(spark, "SELECT count(*) AS n FROM ct_db.events_ro").collect()[0]["n"] == 3
    spark.sql("USE ct_db")
    try:  # Hudi's spelling, unqualified, in the current database: readable by plain spark.sql
        hoodie.sql(spark, f"create table if not exists events2 using hudi location '{path}/'")
        assert spark.sql("SELECT count(*) AS n FROM events2").collect()[0]["n"] == 3
        hoodie.sql(spark, f"CREATE TABLE IF NOT EXISTS events2 USING hudi LOCATION '{path}'")  # no-op
    finally:
        spark.sql("USE default")
        for v in ("events2", "events2_ro"):
            spark.catalog.dropTempView(v)


REFUSED = [
    ("CREATE TABLE ct_db.events USING hoodie LOCATION '{path}'", "already exists"),
    ("CREATE TABLE ct_db.nolocation USING hoodie", "LOCATION"),
    ("CREATE TABLE ct_db.cols (id bigint, ts bigint) USING hoodie LOCATION '{path}'", "already holds a hoodie table"),
    ("CREATE TABLE ct_db.props USING hudi LOCATION '{path}' TBLPROPERTIES (primaryKey = 'id')", "TBLPROPERTIES"),
    ("CREATE TABLE ct_db.opts USING hoodie OPTIONS (path '{path}')", "OPTIONS"),
    ("CREATE TABLE ct_db.ctas USING hoodie LOCATION '{path}' AS SELECT 1 AS id", "already holds a hoodie table"),
    ("CREATE TABLE ct_db.empty USING hoodie LOCATION '{empty}'", "no hoodie table at"),
    ("CREATE OR REPLACE TABLE ct_db.plain USING hoodie LOCATION '{path}'", "is not a hoodie registration"),
]


def test_create_table_using_hoodie_refuses_what_it_cannot_honour(spark, tmp_path: Path) -> None:
    """Clauses hoodie cannot honour, a missing or empty LOCATION and a name in use are refused
    before anything is registered, naming the way that works."""
    from hoodie.interfaces.sql import SqlError

    path = str(tmp_path / "ev")
    _small_table(path)
    (tmp_path / "empty").mkdir()
    hoodie.sql(spark, f"CREATE OR REPLACE TABLE ct_db.events USING hoodie LOCATION '{path}'")
    spark.sql("CREATE OR REPLACE VIEW ct_db.plain_ro AS SELECT 1 AS x")  # someone else's view
    listed = lambda: sorted((t.name, t.tableType) for t in spark.catalog.listTables("ct_db") if not t.isTemporary)
    before = listed()
    for stmt, msg in REFUSED:
        with pytest.raises(SqlError, match=msg) as e:
            hoodie.sql(spark, stmt.format(path=path, empty=str(tmp_path / "empty")))
        assert any(fix in str(e.value) for fix in ("hoodie.spark.write", "IF NOT EXISTS", "DROP")), stmt
        assert listed() == before, stmt


def test_plain_spark_sql_create_table_using_hoodie_fails_clearly(spark, tmp_path: Path) -> None:
    """Through plain spark.sql (which hoodie cannot intercept) the CREATE fails naming hoodie.sql;
    a table Spark does create (a column list skips the data source) fails at SELECT with the fix,
    never with KeyError: 'path'."""
    path = str(tmp_path / "ev")
    _small_table(path)
    with pytest.raises(Exception, match=r"hoodie\.sql\(spark, \"CREATE TABLE"):
        spark.sql(f"CREATE TABLE plain_ct USING hoodie LOCATION '{path}'")
    assert not spark.catalog.tableExists("plain_ct", "default")
    try:
        try:
            spark.sql(f"CREATE TABLE plain_ct2 (id bigint, ts bigint) USING hoodie LOCATION '{path}'")
        except Exception as e:  # refused at CREATE: as good
            assert "hoodie.sql" in str(e)
        else:
            with pytest.raises(Exception, match="no table base path reached the hoodie data source") as e:
                spark.sql("SELECT * FROM plain_ct2").collect()
            assert "KeyError" not in str(e.value) and "hoodie.catalog.register_table" in str(e.value)
    finally:
        spark.sql("DROP TABLE IF EXISTS plain_ct2")
    with pytest.raises(Exception, match="no table base path reached"):
        spark.read.format("hoodie").load().collect()
    # What plain Spark SQL can do (documented in docs/spark.md): a session view over the table.
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW plain_tv USING hoodie OPTIONS (path '{path}')")
    try:
        assert sorted(r.id for r in spark.sql("SELECT id FROM plain_tv WHERE day = 'd1'").collect()) == [1, 2]
    finally:
        spark.catalog.dropTempView("plain_tv")
