"""Hudi's Spark SQL suite, replayed through ``hoodie.sql``: TestCreateTable and TestTimeTravelTable.

The pattern of test_hudi_sql_suite.py: each test replays tests of Hudi's own suite
(hudi-spark-datasource/hudi-spark/src/test/scala/org/apache/spark/sql/hudi/ddl/TestCreateTable.scala and
dml/others/TestTimeTravelTable.scala, and cases of dml/insert/TestInsertTable.scala not replayed in
test_hudi_sql_suite.py); the statements and the answers Hudi's tests expect are facts of
Hudi's behaviour, the code is ours. Hudi's checks of its Spark catalog entry (``CatalogTableType``, Hive
input formats, ``table.properties``) have no counterpart: hoodie's catalog entries are views carrying
``hoodie.base.path`` (hoodie/interfaces/catalog.py); what those checks stand for is checked on the table
(``hoodie.properties``) and on what a query answers. The default run keeps the cheap ones (refusals,
the table's configuration from CREATE TABLE's properties, about 10 s); the rest is behind ``slow``.

Not replayed, with the reason:

* TestCreateTable "Test create table like" (``CREATE TABLE t LIKE s USING hudi``): hoodie.sql has no LIKE form;
  ``CREATE TABLE t (cols) USING hudi TBLPROPERTIES (...)`` names the columns;
* "Test Create ro/rt Table In The Right Way" / "In The Wrong Way" (``'hoodie.query.as.ro.table'``): hoodie
  registers ``t_ro`` (read-optimized) with every table itself, and a registration takes no TBLPROPERTIES;
* "Test create table with comment"'s SHOW CREATE TABLE and "Test Create Hoodie Table with base file format"'s
  Hive serde/input formats: hoodie's catalog entries are views (SHOW CREATE TABLE shows the view);
* "Test hoodie table schema consistency for non-Avro data types" (``tinyint``, ``varchar(10)`` kept in the
  catalog schema): hoodie's schema is the table's Avro schema, where a tinyint is an int;
* "Test Create Table From Existing Hoodie Table"'s checks that registering writes ``hoodie.table.create.schema``
  and ``hoodie.database.name`` into the table's hoodie.properties: registering an existing table changes
  nothing in it (the statements and answers after it are replayed);
* TestInsertTable "Test table type name incase-sensitive test" (``hoodie.index.type = 'BUCKET'``): hoodie's
  index is Hudi's BLOOM/SIMPLE, a bucket index is refused (test_hudi_sql_suite.py lists the other TestInsertTable
  cases not replayed);
* TestTimeTravelTable "Test Time Travel With Schema Evolution": ``ALTER TABLE ... DROP COLUMN``
  (``hoodie.schema.on.read.enable``) is not supported; "Test Unsupported syntax can be parsed"'s
  ``INSERT OVERWRITE LOCAL DIRECTORY``: a Spark statement, passed to Spark unchanged (its ``select 1
  distribute by 1`` is replayed).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from hoodie.errors import HoodieError
from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql import SqlError, sql
from tests.engine.hudi_suite import answer, last_operation

pytestmark = pytest.mark.spark
_n = itertools.count()
COLS = "id int, name string, price double, ts long"


def table_name() -> str:
    """A fresh name, as Hudi's generateTableName."""
    return f"hc_{next(_n)}"




def warehouse_path(spark, name: str, db: str = "default") -> str:
    from hoodie.interfaces.sql_ddl import managed_location

    return managed_location(spark, db, name)


def test_table_column_validate(spark, tmp_path: Path) -> None:
    """TestCreateTable "Test Table Column Validate": a primaryKey or preCombineField that is not a column, and a
    table type that is neither cow nor mor, are refused before anything is created."""
    t = table_name()
    for props in ("primaryKey = 'id1', type = 'cow'", "primaryKey = 'id', preCombineField = 'ts1', type = 'cow'",
                  "primaryKey = 'id', preCombineField = 'ts', type = 'cow1'"):
        with pytest.raises(SqlError):
            sql(spark, f"create table {t} ({COLS}) using hudi tblproperties ({props}) location '{tmp_path / t}'")
        assert not (tmp_path / t).exists()
        assert not spark.catalog.tableExists(t)


def test_create_table_properties(spark, tmp_path: Path) -> None:
    """TestCreateTable "Test Create Hoodie Table With Options", "... With Options in different case", "Test
    Create Managed Hoodie Table", "Test Create Hoodie Table with table configs": the
    table's configuration from OPTIONS or TBLPROPERTIES, Hudi's aliases (primaryKey, preCombineField, type) in any
    case and its own keys (hoodie.table.recordkey.fields, hoodie.table.type, hoodie.table.precombine.field); the
    table is named by the statement and its database, whatever hoodie.table.name / hoodie.database.name say,
    and hoodie.datasource.write.operation is not kept in hoodie.properties."""
    for key_case in ("PRIMARYKEY = 'id', precombineField = 'ts'",):  # (every spelling: test_sql_create_props.py)
        t = table_name()
        sql(spark, f"""create table {t} ({COLS}, dt string) using hudi partitioned by (dt) options (
                       hoodie.database.name = "databaseName", hoodie.table.name = "tableName", {key_case},
                       hoodie.datasource.write.operation = 'upsert') location '{tmp_path / t}'""")
        ht = HoodieTable(str(tmp_path / t))
        assert (ht.table_type, ht.record_key_fields, ht.partition_fields, ht.precombine_field) == (
            "COPY_ON_WRITE", ["id"], ["dt"], "ts")
        assert ht.props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
        assert (ht.props.get("hoodie.database.name"), ht.name) == ("default", t)
        assert "hoodie.datasource.write.operation" not in ht.props
        assert "hoodie.table.create.schema" in ht.props
        assert not any(f["name"].startswith("_hoodie") for f in json.loads(ht.props["hoodie.table.create.schema"])["fields"])

    for ttype in ("MERGE_ON_READ",):  # copy-on-write is the default, whatever the key says
        t = table_name()
        sql(spark, f"""create table {t} ({COLS}) using hudi tblproperties (hoodie.table.recordkey.fields = 'id',
                       hoodie.table.type = '{ttype}', hoodie.table.precombine.field = 'ts') location '{tmp_path / t}'""")
        ht = HoodieTable(str(tmp_path / t))
        assert (ht.record_key_fields, ht.table_type, ht.precombine_field) == (["id"], ttype, "ts")


@pytest.mark.slow  # long replay (two databases, managed tables)
def test_create_managed_table(spark, tmp_path: Path) -> None:
    """TestCreateTable "Test Create Managed Hoodie Table" and "Test Create Table Existing In Catalog": a table
    made without LOCATION lives in its database's warehouse folder, its hoodie.properties name the catalog
    database and table; CREATE TABLE IF NOT EXISTS after an ADD COLUMNS does nothing; "Test Infer KegGenClazz"."""
    sql(spark, "create database if not exists hudi_database")
    t = table_name()
    sql(spark, f"""create table hudi_database.{t} ({COLS}) using hudi tblproperties (
                   hoodie.database.name = "databaseName", hoodie.table.name = "tableName", primaryKey = 'id',
                   preCombineField = 'ts', hoodie.datasource.write.operation = 'upsert')""")
    ht = HoodieTable(warehouse_path(spark, t, "hudi_database"))
    assert (ht.props.get("hoodie.database.name"), ht.name) == ("hudi_database", t)
    assert "hoodie.datasource.write.operation" not in ht.props
    assert [c for c in sql(spark, f"select * from hudi_database.{t}").columns if not c.startswith("_hoodie")] == [
        "id", "name", "price", "ts"]
    sql(spark, f"drop table hudi_database.{t}")

    e = table_name()
    sql(spark, f"create table {e} (id int, name string, price double) using hudi tblproperties (primaryKey = 'id')")
    sql(spark, f"alter table {e} add columns(ts bigint)")
    sql(spark, f"create table if not exists {e} (id int, name string, price double) using hudi "
               "tblproperties (primaryKey = 'id')")
    assert [c for c in sql(spark, f"select * from {e}").columns if not c.startswith("_hoodie")] == [
        "id", "name", "price", "ts"]
    sql(spark, f"drop table {e}")

    # "Test Infer KegGenClazz"
    for part, key, keygen in (("", "id", "NonpartitionedKeyGenerator"), ("partitioned by (ts)", "id", "SimpleKeyGenerator"),
                              ("partitioned by (ts)", "id,name", "ComplexKeyGenerator")):
        t = table_name()
        sql(spark, f"""create table {t} ({COLS}) using hudi comment "This is a simple hudi table" {part}
                       tblproperties (primaryKey = '{key}', preCombineField = 'ts') location '{tmp_path / t}'""")
        assert HoodieTable(str(tmp_path / t)).props["hoodie.table.keygenerator.class"] == f"org.apache.hudi.keygen.{keygen}"


@pytest.mark.slow  # long replay: every CTAS is a Spark write
@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_create_table_as_select(spark, tmp_path: Path, ttype: str) -> None:
    """TestCreateTable "Test Create Table As Select" (bulk_insert; a null primary key refused with nothing left
    behind; timestamp and date partitions), "... With Auto record key gen", "... when
    'spark.sql.datetime.java8API.enabled' enables", "Test CTAS not de-duplicating (by default)"."""
    t1 = table_name()
    sql(spark, f"create table {t1} using hudi tblproperties(primaryKey = 'id', type = '{ttype}') "
               f"location '{tmp_path / t1}' as select 1 as id, 'a1' as name, 10 as price, 1000 as ts")
    assert last_operation(str(tmp_path / t1)) == "BULK_INSERT"
    assert answer(spark, f"select id, name, price, ts from {t1}") == [(1, "a1", 10, 1000)]
    t2 = table_name()
    sql(spark, f"create table {t2} using hudi partitioned by (dt) tblproperties(primaryKey = 'id', type = '{ttype}') "
               f"location '{tmp_path / t2}' as select 1 as id, 'a1' as name, 10 as price, '2021-04-01' as dt")
    assert last_operation(str(tmp_path / t2)) == "BULK_INSERT"
    assert answer(spark, f"select id, name, price, dt from {t2}") == [(1, "a1", 10, "2021-04-01")]
    t3 = table_name()
    with pytest.raises(Exception):
        sql(spark, f"create table {t3} using hudi partitioned by (dt) tblproperties(primaryKey = 'id', type = '{ttype}') "
                   f"location '{tmp_path / t3}' as select null as id, 'a1' as name, 10 as price, '2021-05-07' as dt")
    assert not spark.catalog.tableExists(t3)
    sql(spark, f"create table {t3} using hudi partitioned by (dt) tblproperties(primaryKey = 'id', type = '{ttype}') "
               f"location '{tmp_path / t3}' as select cast('2021-05-06 00:00:00' as timestamp) as dt, 1 as id, "
               "'a1' as name, 10 as price")
    assert answer(spark, f"select id, name, price, cast(dt as string) from {t3}") == [(1, "a1", 10, "2021-05-06 00:00:00")]
    t4 = table_name()
    sql(spark, f"create table {t4} using hudi partitioned by (dt) tblproperties(primaryKey = 'id', type = '{ttype}') "
               f"location '{tmp_path / t4}' as select cast('2021-05-06' as date) as dt, 1 as id, 'a1' as name, 10 as price")
    assert last_operation(str(tmp_path / t4)) == "BULK_INSERT"
    assert answer(spark, f"select id, name, price, cast(dt as string) from {t4}") == [(1, "a1", 10, "2021-05-06")]

    a = table_name()
    sql(spark, f"create table {a} using hudi tblproperties(type = '{ttype}') location '{tmp_path / a}' "
               "as select 1 as id, 'a1' as name, 10 as price, 1000 as ts")
    assert last_operation(str(tmp_path / a)) == "BULK_INSERT"
    assert answer(spark, f"select id, name, price, ts from {a}") == [(1, "a1", 10, 1000)]

    j = table_name()
    spark.conf.set("spark.sql.datetime.java8API.enabled", "true")
    try:
        sql(spark, f"create table {j} using hudi partitioned by(dt) options(type = '{ttype}', primaryKey = 'id') "
                   f"location '{tmp_path / j}' as select 1 as id, 'a1' as name, 10 as price, "
                   "cast('2021-05-07 00:00:00' as timestamp) as dt")
        assert answer(spark, f"select id, name, price, cast(dt as string) from {j}") == [(1, "a1", 10, "2021-05-07 00:00:00")]
    finally:
        spark.conf.set("spark.sql.datetime.java8API.enabled", "false")

    d = table_name()
    sql(spark, f"""CREATE TABLE {d} USING hudi LOCATION '{tmp_path / d}' TBLPROPERTIES (primaryKey = 'id',
                   preCombineField = 'ts', type = '{ttype}') AS SELECT * FROM (SELECT 1 as id, 'a1' as name, 10 as price,
                   1000 as ts UNION ALL SELECT 1 as id, 'a1' as name, 11 as price, 1001 as ts)""")
    assert answer(spark, f"select id, name, price, ts from {d}") == [(1, "a1", 10, 1000), (1, "a1", 11, 1001)]


@pytest.mark.slow  # long replay: managed CTAS, cow and mor
def test_create_table_as_select_filters_props(spark) -> None:
    """TestCreateTable "Test Create Table As Select With Tblproperties For Filter Props", "... With Options For
    Filter Props" and "Test Create Table As Select For existing table path" (refused: the managed location
    holds a table, which stays)."""
    for ttype, clause in (("cow", "tblproperties"), ("mor", "options")):
        t = table_name()
        sql(spark, f"""create table {t} using hudi partitioned by (dt) {clause}(hoodie.database.name = "databaseName",
                       hoodie.table.name = "tableName", primaryKey = 'id', preCombineField = 'ts',
                       hoodie.datasource.write.operation = 'upsert', type = '{ttype}')
                       AS select 1 as id, 'a1' as name, 10 as price, '2021-04-01' as dt, 1000 as ts""")
        assert answer(spark, f"select id, name, price, dt from {t}") == [(1, "a1", 10, "2021-04-01")]
        ht = HoodieTable(warehouse_path(spark, t))
        assert (ht.props.get("hoodie.database.name"), ht.name, ht.table_type) == (
            "default", t, {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}[ttype])
        assert "hoodie.datasource.write.operation" not in ht.props
        sql(spark, f"drop table {t}")

    t1, t2 = table_name(), table_name()
    location = warehouse_path(spark, t1)
    sql(spark, f"create table {t2} (id int, name string, ts long) using hudi tblproperties (primaryKey = 'id', "
               f"preCombineField = 'ts') location '{location}'")
    with pytest.raises(SqlError, match="Can not create the managed table"):
        sql(spark, f"create table {t1} using hudi as select * from {t2}")
    assert Path(location, ".hoodie", "hoodie.properties").exists()
    sql(spark, f"drop table {t2} purge")


def test_ctas_refuses_compaction_on_cow(spark) -> None:
    """TestCreateTable "Test CTAS using an illegal definition -- a COW table with compaction enabled.": refused
    with Hudi's message, and the managed location is not created."""
    t = table_name()
    with pytest.raises(SqlError, match="Compaction is not supported on a CopyOnWrite table"):
        sql(spark, f"create table {t} using hudi tblproperties(primaryKey = 'id', type = 'cow', "
                   "hoodie.compact.inline='true') AS select 1 as id, 'a1' as name, 10 as price, 1000 as ts")
    assert not Path(warehouse_path(spark, t)).exists()
    assert not spark.catalog.tableExists(t)


def test_non_hudi_tables(spark) -> None:
    """TestCreateTable "Test Create Non-Hudi Table(Parquet Table)" (passed to Spark) and "Test init
    HoodieCatalogTable class for non-Hudi table" (a procedure on it names it as not a Hudi table)."""
    t = table_name()
    sql(spark, f"create table {t} ({COLS}) using parquet")
    try:
        assert [(f.name, f.dataType.simpleString()) for f in spark.table(t).schema.fields] == [
            ("id", "int"), ("name", "string"), ("price", "double"), ("ts", "bigint")]
        with pytest.raises(HoodieError, match=f"{t} is not a Hudi table"):
            sql(spark, f"call show_commits(table => '{t}', limit => 10)").collect()
    finally:
        spark.sql(f"drop table {t}")


@pytest.mark.slow  # long replay: datasource writes, then DML on the registered table
@pytest.mark.parametrize("value", ["2021-08-02", "2021/08/02"])
def test_create_table_from_existing_table(spark, tmp_path: Path, value: str) -> None:
    """TestCreateTable "Test Create Table From Existing Hoodie Table" (PARTITIONED BY without a schema refused
    with Hudi's message) and "... For Multi-Level Partitioned Table" (merge-on-read, url-encoded partitions):
    a table written by the datasource, registered by LOCATION, then INSERT, MERGE, UPDATE and DELETE, with the
    stored keys and partition paths Hudi's tests expect."""
    from urllib.parse import quote

    from hoodie.spark import write as spark_write

    t = table_name()
    path = str(tmp_path / t)
    df = spark.createDataFrame([(1, "a1", 10, 1000, value)], "id int, name string, value int, ts int, dt string")
    spark_write(df, path, {"hoodie.table.name": f"original_{t}", "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
                           "hoodie.datasource.write.recordkey.field": "id",
                           "hoodie.datasource.write.precombine.field": "ts",
                           "hoodie.datasource.write.partitionpath.field": "dt"}, mode="overwrite")
    with pytest.raises(SqlError, match="It is not allowed to specify partition columns when the table schema is not "
                                       "defined."):
        sql(spark, f"create table {t} using hudi partitioned by (dt) location '{path}'")
    sql(spark, f"create table {t} using hudi location '{path}'")
    q = f"select _hoodie_record_key, _hoodie_partition_path, id, name, value, ts, dt from {t}"
    assert answer(spark, f"select id, name, value, ts, dt from {t}") == [(1, "a1", 10, 1000, value)]
    sql(spark, f"insert into {t} values(2, 'a2', 10, 1000, '{value}')")
    assert answer(spark, q) == [("1", value, 1, "a1", 10, 1000, value), ("2", value, 2, "a2", 10, 1000, value)]
    sql(spark, f"merge into {t} h0 using (select 1 as id, 'a1' as name, 11 as value, 1001 as ts, '{value}' as dt) s0 "
               "on h0.id = s0.id when matched then update set *")
    assert answer(spark, q) == [("1", value, 1, "a1", 11, 1001, value), ("2", value, 2, "a2", 10, 1000, value)]
    sql(spark, f"update {t} set value = value + 1 where id = 2")
    assert answer(spark, q) == [("1", value, 1, "a1", 11, 1001, value), ("2", value, 2, "a2", 11, 1000, value)]
    sql(spark, f"delete from {t} where id = 1")
    assert answer(spark, q) == [("2", value, 2, "a2", 11, 1000, value)]

    m = table_name()
    path = str(tmp_path / m)
    df = spark.createDataFrame([(1, "a1", 10, 1000, value, 12)], "id int, name string, value int, ts int, day string, hh int")
    spark_write(df, path, {"hoodie.table.name": m, "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                           "hoodie.datasource.write.recordkey.field": "id",
                           "hoodie.datasource.write.precombine.field": "ts",
                           "hoodie.datasource.write.partitionpath.field": "day,hh",
                           "hoodie.datasource.write.partitionpath.urlencode": "true"}, mode="overwrite")
    sql(spark, f"create table {m} using hudi location '{path}'")
    part = f"{quote(value, safe='')}/12"  # the complex key generator's keys are "id:<value>" (Hudi 1.1's test)
    q = f"select _hoodie_record_key, _hoodie_partition_path, id, name, value, ts, day, hh from {m}"
    assert answer(spark, f"select id, name, value, ts, day, hh from {m}") == [(1, "a1", 10, 1000, value, 12)]
    sql(spark, f"insert into {m} values(2, 'a2', 10, 1000, '{value}', 12)")
    assert answer(spark, q) == [("id:1", part, 1, "a1", 10, 1000, value, 12), ("id:2", part, 2, "a2", 10, 1000, value, 12)]
    sql(spark, f"merge into {m} h0 using (select 1 as id, 'a1' as name, 11 as value, 1001 as ts, '{value}' as day, "
               "12 as hh) s0 on h0.id = s0.id when matched then update set *")
    sql(spark, f"update {m} set value = value + 1 where id = 2")
    assert answer(spark, q) == [("id:1", part, 1, "a1", 11, 1001, value, 12), ("id:2", part, 2, "a2", 11, 1000, value, 12)]
    sql(spark, f"delete from {m} where id = 1")
    assert answer(spark, q) == [("id:2", part, 2, "a2", 11, 1000, value, 12)]


@pytest.mark.slow  # long replay
def test_create_table_existing_path(spark, tmp_path: Path) -> None:
    """TestCreateTable "Test Create Table From Existing Hoodie Table For None Partitioned Table", "Test Create
    External Hoodie Table" (a registration by LOCATION reads the table's schema and configuration) and "Test
    Create Hoodie Table with existing hoodie.properties" (CREATE TABLE with the table's own column list and
    properties over its location, after DROP TABLE, registers it again; its create schema stays)."""
    from hoodie.spark import write as spark_write

    t = table_name()
    path = str(tmp_path / t)
    spark_write(spark.createDataFrame([(1, "a1", 10, 1000)], "id int, name string, value int, ts int"), path,
                {"hoodie.table.name": t, "hoodie.datasource.write.recordkey.field": "id",
                 "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": ""},
                mode="overwrite")
    sql(spark, f"create table {t} using hudi location '{path}'")
    assert answer(spark, f"select id, name, value, ts from {t}") == [(1, "a1", 10, 1000)]
    sql(spark, f"insert into {t} values(2, 'a2', 10, 1000)")
    assert answer(spark, f"select _hoodie_record_key, _hoodie_partition_path, id from {t}") == [("1", "", 1), ("2", "", 2)]
    sql(spark, f"merge into {t} h0 using (select 1 as id, 'a1' as name, 11 as value, 1001 as ts) s0 on h0.id = s0.id "
               "when matched then update set *")
    sql(spark, f"update {t} set value = value + 1 where id = 2")
    sql(spark, f"delete from {t} where id = 1")
    assert answer(spark, f"select id, name, value, ts from {t}") == [(2, "a2", 11, 1000)]

    x, x3 = table_name(), table_name()
    sql(spark, f"create table {x} ({COLS}, dt string) using hudi partitioned by (dt) tblproperties (primaryKey = 'id', "
               f"type = 'mor') location '{tmp_path / 'h0'}'")
    sql(spark, f"create table {x3} using hudi location '{tmp_path / 'h0'}'")
    assert sql(spark, f"select * from {x3}").columns == [
        "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name", "id", "name", "price", "ts", "dt"]
    ht = HoodieTable(str(tmp_path / "h0"))
    assert (ht.table_type, ht.record_key_fields, ht.partition_fields) == ("MERGE_ON_READ", ["id"], ["dt"])

    e = table_name()
    loc = tmp_path / e
    create = (f"create table {e} ({COLS}) using hudi location '{loc}' tblproperties (primaryKey ='id', type = 'cow', "
              "preCombineField = 'ts')")
    sql(spark, create)
    sql(spark, f"drop table {e}")
    before = HoodieTable(str(loc)).props["hoodie.table.create.schema"]
    sql(spark, create)
    assert HoodieTable(str(loc)).props["hoodie.table.create.schema"] == before
    with pytest.raises(SqlError, match="already holds a hoodie table"):
        sql(spark, f"create table {table_name()} (id int, other string) using hudi location '{loc}' "
                   "tblproperties (primaryKey = 'id')")


# -- TestTimeTravelTable ---------------------------------------------------------------------------------------

@pytest.mark.slow  # long replay (about 60 s): time travel's statement classes run in test_hudi_sql_suite.py
def test_time_travel_insert_and_union(spark, tmp_path: Path) -> None:
    """TestTimeTravelTable "Test Insert and Update Record with time travel" and "Test Select Record with time
    travel and Repartition" (INSERT INTO as upsert; TIMESTAMP AS OF the first instant, also with DISTRIBUTE BY),
    "Test Two Table's Union Join with time travel" and "Test Unsupported syntax can be parsed" (``select 1
    distribute by 1``), on copy-on-write (merge-on-read in the slow run's replay below)."""
    _time_travel(spark, tmp_path, "cow")


@pytest.mark.slow  # the merge-on-read half of the replay above
def test_time_travel_insert_and_union_mor(spark, tmp_path: Path) -> None:
    """As test_time_travel_insert_and_union, on merge-on-read; and "Test Insert Into Records with time travel To
    new Table" on both types (dynamic and static partition from a time-travel query)."""
    _time_travel(spark, tmp_path, "mor")
    for ttype in ("cow", "mor"):
        t1, t2 = table_name(), table_name()
        sql(spark, f"create table {t1} ({COLS}) using hudi tblproperties (type = '{ttype}', primaryKey = 'id', "
                   f"preCombineField = 'ts') location '{tmp_path / t1}'")
        instant1 = sql(spark, f"insert into {t1} values(1, 'a1', 10, 1000)").collect()[0].instant
        sql(spark, f"create table {t2} ({COLS}, dt string) using hudi tblproperties (primaryKey = 'id', type = '{ttype}') "
                   f"partitioned by (dt) location '{tmp_path / t2}'")
        sql(spark, f"insert into {t2} select id, name, price, ts, '2022-02-14' as dt from {t1} TIMESTAMP AS OF '{instant1}'")
        assert answer(spark, f"select id, name, price, ts, dt from {t2}") == [(1, "a1", 10.0, 1000, "2022-02-14")]
        sql(spark, f"insert into {t2} partition(dt = '2022-02-15') select 2 as id, 'a2' as name, price, ts from {t1} "
                   f"TIMESTAMP AS OF '{instant1}'")
        assert answer(spark, f"select id, name, price, ts, dt from {t2}") == [
            (1, "a1", 10.0, 1000, "2022-02-14"), (2, "a2", 10.0, 1000, "2022-02-15")]


def _time_travel(spark, tmp_path: Path, ttype: str) -> None:
    props = f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'"
    spark.conf.set("hoodie.spark.sql.insert.into.operation", "upsert")
    try:
        t = table_name()
        sql(spark, f"create table {t} ({COLS}) using hudi tblproperties ({props}) location '{tmp_path / t}'")
        sql(spark, f"insert into {t} values(1, 'a1', 10, 1000)")
        instant1 = HoodieTable(str(tmp_path / t)).timeline.completed().last().timestamp
        sql(spark, f"insert into {t} values(1, 'a2', 20, 2000)")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a2", 20.0, 2000)]
        assert answer(spark, f"select id, name, price, ts from {t} TIMESTAMP AS OF '{instant1}'") == [(1, "a1", 10.0, 1000)]
        assert answer(spark, f"select id, name, price, ts from {t} distribute by cast(rand() * 2 as int)") == [
            (1, "a2", 20.0, 2000)]
        assert answer(spark, f"select id, name, price, ts from {t} TIMESTAMP AS OF '{instant1}' "
                             "distribute by cast(rand() * 2 as int)") == [(1, "a1", 10.0, 1000)]
    finally:
        spark.conf.unset("hoodie.spark.sql.insert.into.operation")
    t1, t2 = table_name(), table_name()
    for n in (t1, t2):
        sql(spark, f"create table {n} ({COLS}) using hudi tblproperties ({props}) location '{tmp_path / n}'")
    sql(spark, f"insert into {t1} values(1, 'a1', 10, 1000)")
    sql(spark, f"insert into {t1} values(2, 'a2', 20, 1000)")
    sql(spark, f"insert into {t2} values(3, 'a3', 10, 1000)")
    sql(spark, f"insert into {t2} values(4, 'a4', 20, 1000)")
    i1 = HoodieTable(str(tmp_path / t1)).timeline.completed().last().timestamp
    i2 = HoodieTable(str(tmp_path / t2)).timeline.completed().last().timestamp
    assert answer(spark, f"select id, name, price, ts from {t1} TIMESTAMP AS OF '{i1}' where id=1 union "
                         f"select id, name, price, ts from {t2} TIMESTAMP AS OF '{i2}' where id>1") == [
        (1, "a1", 10.0, 1000), (3, "a3", 10.0, 1000), (4, "a4", 20.0, 1000)]
    assert answer(spark, "select 1 distribute by 1") == [(1,)]


# -- TestInsertTable (cases not in test_hudi_sql_suite.py) -------------------------------------------------------

@pytest.mark.slow  # long replay
@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_insert_into_values_and_subset_of_columns(spark, tmp_path: Path, ttype: str) -> None:
    """TestInsertTable "Test Insert Into with values" (a WHERE with functions of the partition column) and "Test
    Insert Into with subset of columns" on a non-partitioned table (the partitioned half is in
    test_hudi_sql_suite.py): a column list in another order, a subset (the rest null), VALUES with aliases."""
    t = table_name()
    sql(spark, f"create table {t} (id int, dt string, name string, price double, ts long) using hudi "
               f"tblproperties (primaryKey = 'id', type = '{ttype}') partitioned by (dt) location '{tmp_path / t}'")
    sql(spark, f"""insert into {t} values (1, 'a1', 10, 1000, "2021-01-05"), (2, 'a2', 20, 2000, "2021-01-06"),
                   (3, 'a3', 30, 3000, "2021-01-07")""")
    assert answer(spark, f"select id, name, price, ts, dt from {t} where year(dt) > '2020' and lower(name) > 'a0'") == [
        (1, "a1", 10.0, 1000, "2021-01-05"), (2, "a2", 20.0, 2000, "2021-01-06"), (3, "a3", 30.0, 3000, "2021-01-07")]

    n = table_name()
    sql(spark, f"create table {n} (id int, dt string, name string, price double, ts long) using hudi "
               f"tblproperties (type = '{ttype}', primaryKey = 'id') location '{tmp_path / n}'")
    q = f"select id, name, price, ts, dt from {n}"
    sql(spark, f"insert into {n} (id, name, price, ts, dt) values (1, 'a1', 10, 1000, '2025-01-01'), "
               "(2, 'a2', 20, 2000, '2025-01-02')")
    sql(spark, f"insert into {n} (dt, name, id, price, ts) values ('2025-01-03', 'a3', 3, 30, 3000)")
    sql(spark, f"insert into {n} (dt, ts, name, id) values ('2025-01-04', 4000, 'a4', 4)")
    sql(spark, f"insert into {n} (id, price, ts, dt) values (5, 50.0, 5000, '2025-01-05')")
    sql(spark, f"insert into {n} (dt, ts, id, name) values ('2025-01-06' as dt, 6000 as ts, 6 as id, 'a6' as name)")
    assert answer(spark, q) == [
        (1, "a1", 10.0, 1000, "2025-01-01"), (2, "a2", 20.0, 2000, "2025-01-02"), (3, "a3", 30.0, 3000, "2025-01-03"),
        (4, "a4", None, 4000, "2025-01-04"), (5, None, 50.0, 5000, "2025-01-05"), (6, "a6", None, 6000, "2025-01-06")]
