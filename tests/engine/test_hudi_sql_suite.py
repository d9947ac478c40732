"""Hudi's Spark SQL suite, replayed through ``hoodie.sql``.

Each test below replays one test of Hudi's own suite (hudi-spark-datasource/hudi-spark/src/test/scala/
org/apache/spark/sql/hudi/dml/others/: TestUpdateTable, TestDeleteTable, TestInsertTable,
TestMergeIntoTable, TestTimeTravelTable and the procedure tests): the statements and the answers
Hudi's test expects are facts of Hudi's behaviour; the code is ours. Hudi's tests loop over
``cow``/``mor`` (and over ``hoodie.spark.sql.optimized.writes.enable``, which does not change an
answer); the slow run replays every test here on copy-on-write and merge-on-read (7 min 12 s for the
copy-on-write half alone, about 2 s per statement); the default run keeps the cheaper eight (about 75 s:
duplicates on INSERT, the ON rules, case, aliasing, time travel, dup policy, the
exception and single-partition tests), the statement classes of the rest being drawn by
test_sql_differential.py's generator against the reference engines. Hudi's test names
are in each test's docstring; session settings a Hudi test makes with ``SET`` are made with
``spark.conf.set`` here and unset after.

Not replayed, with the reason (hoodie does not offer the feature, or answers differently on purpose):

* TestUpdateTable "Test Update Table with Clustering", run_clustering / show_clustering procedure
  tests: hoodie builds no clustering (CALL run_clustering answers NOT_SUPPORTED); "Test Update Table Without
  Primary Key"'s compaction check on merge-on-read (its guard compares the string "mor" with an enum, so Hudi
  never runs it);
* TestInsertTable: test_hudi_sql_suite_insert.py replays the rest of it case by case and lists what it does not
  replay (bucket indexes, key generator classes, ``_hoodie_operation``, nested keys...);
* TestMergeIntoTable: test_hudi_sql_suite_merge.py replays the rest of it case by case and lists what it does not
  replay or where hoodie answers differently (docs/hudi-sql-suite.md maps all 25 cases);
* TestMergeIntoTable tests of partial updates (``hoodie.spark.sql.merge.into.partial.updates``), and of
  conditions that Hudi accepts on a table with a record key but ignores (an ON conjunct on a non-key
  column, TestMergeIntoTableWithNonRecordKeyField "Test Merge into extra cond"): hoodie refuses those
  before writing;
* TestMergeIntoTable2 "Test MergeInto for MOR table 2"'s last statement (``price = s0.price + t0.price`` on
  merge-on-read, which Hudi's Spark 4 build fails with an INTERNAL_ERROR): hoodie computes it;
* TestMergeIntoTable tests with bucket indexes: hoodie refuses the BUCKET index type (the GLOBAL_BLOOM |
  GLOBAL_SIMPLE ones are not replayed here; hoodie's global tagging is tested against a model in
  tests/services/test_record_index_tagging.py);
  "Test MergeInto Basic"'s check that files of partitions the source does not touch are not read (it
  empties them): hoodie's MERGE reads the whole target table;
* TestTimeTravelTable on tables written by Hudi's datasource with ``VERSION AS OF`` a commit
  number: hoodie takes instants only;
* TestCDCForSparkSQL, TestDataSkippingQuery, TestHoodieTableValuedFunction, TestRepairTable,
  TestTruncateTable, TestDropTable, variant and blob types: features hoodie does not offer.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql import SqlError, sql
from tests.engine.hudi_suite import answer

pytestmark = pytest.mark.spark
_n = itertools.count()
TYPES = ["cow", pytest.param("mor", marks=pytest.mark.slow)]


def table_name() -> str:
    """A fresh name, as Hudi's generateTableName."""
    return f"default.h1_{next(_n)}"



def create(spark, tmp: Path, name: str, cols: str, props: str, extra: str = "") -> None:
    sql(spark, f"create table {name} ({cols}) using hudi location '{tmp / name.split('.')[1]}' "
               f"tblproperties ({props}) {extra}")


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
@pytest.mark.parametrize("ttype", TYPES)
def test_update_table(spark, tmp_path: Path, ttype: str) -> None:
    """TestUpdateTable: "Test Update Table", "Test Update Table On Non-PK Condition", "Test decimal type"."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts long",
           f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'")
    sql(spark, f"insert into {t} select 1, 'a1', 10, 1000")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 10.0, 1000)]
    sql(spark, f"update {t} set price = 20 where id = 1")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 20.0, 1000)]
    sql(spark, f"update {t} set price = price * 2 where id = 1")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 40.0, 1000)]

    pt = table_name()
    create(spark, tmp_path, pt, "id int, name string, price double, ts long, pt string",
           f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (pt)")
    sql(spark, f"""insert into {pt} values (1, 'a1', 10.0, 1000, "2021"), (2, 'a2', 20.0, 1000, "2021"),
                   (3, 'a2', 30.0, 1000, "2022")""")
    sql(spark, f"update {pt} set price = price * 1.1, ts = ts + 1 where name = 'a2'")
    assert answer(spark, f"select id, name, price, ts, pt from {pt}") == [
        (1, "a1", 10.0, 1000, "2021"), (2, "a2", 22.0, 1001, "2021"), (3, "a2", 33.0, 1001, "2022")]
    sql(spark, f"update {pt} set price = price + 5, ts = ts + 1 where pt = '2021'")
    assert answer(spark, f"select id, name, price, ts, pt from {pt}") == [
        (1, "a1", 15.0, 1001, "2021"), (2, "a2", 27.0, 1002, "2021"), (3, "a2", 33.0, 1001, "2022")]
    # "Test Update Table With Primary Key and Partition Key Updates error out"
    for text, kind, col in ((f"update {pt} set id = 2 where id = 1", "record key field", "id"),
                            (f"update {pt} set pt = '2022' where id = 1", "partition field", "pt")):
        with pytest.raises(SqlError) as e:
            sql(spark, text)
        assert (f"Detected disallowed assignment clause in UPDATE statement for {kind} `{col}` for table "
                f"`spark_catalog.{pt}`. Please remove the assignment clause to avoid the error.") in str(e.value)
    assert answer(spark, f"select id, pt from {pt}") == [(1, "2021"), (2, "2021"), (3, "2022")]
    sql(spark, f"update {pt} set price = 20.0 where id = 1")  # a normal update still works after the refusals
    assert answer(spark, f"select id, price, pt from {pt} where id = 1") == [(1, 20.0, "2021")]

    d = table_name()
    create(spark, tmp_path, d, "id int, name string, price double, ts long, ff decimal(38, 10)",
           "type = 'mor', primaryKey = 'id', preCombineField = 'ts'")
    sql(spark, f"insert into {d} select 1, 'a1', 10, 1000, 10.0")
    sql(spark, f"update {d} set price = 22 where id = 1")
    assert answer(spark, f"select id, name, price, ts from {d}") == [(1, "a1", 22.0, 1000)]


def test_update_ignoring_case(spark, tmp_path: Path) -> None:
    """TestUpdateTable "Test ignoring case for Update Table": OPTIONS instead of TBLPROPERTIES, upper-case
    columns, key and ordering field, lower-case names in the statements."""
    t = table_name()
    sql(spark, f"create table {t} (ID int, NAME string, PRICE double, TS long) using hudi "
               f"location '{tmp_path / 'ic'}' options (type = 'cow', primaryKey = 'ID', preCombineField = 'TS')")
    sql(spark, f"insert into {t} select 1, 'a1', 10, 1000")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 10.0, 1000)]
    sql(spark, f"update {t} set PRICE = 20 where ID = 1")
    sql(spark, f"update {t} set PRICE = PRICE * 2 where ID = 1")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 40.0, 1000)]


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
@pytest.mark.parametrize("ttype", TYPES)
def test_delete_table(spark, tmp_path: Path, ttype: str) -> None:
    """TestDeleteTable: "Test Delete Table", "Test Delete Table with op upsert", "Test Delete Table On
    Non-PK Condition"."""
    for props in (f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'",
                  f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts', "
                  "hoodie.datasource.write.operation = 'upsert'"):
        t = table_name()
        create(spark, tmp_path, t, "id int, name string, price double, ts long", props)
        sql(spark, f"insert into {t} select 1, 'a1', 10, 1000")
        sql(spark, f"delete from {t} where id = 1")
        assert answer(spark, f"select count(1) from {t}") == [(0,)]
        sql(spark, f"insert into {t} select 2, 'a2', 10, 1000")
        sql(spark, f"delete from {t} where id = 1")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(2, "a2", 10.0, 1000)]
        sql(spark, f"delete from {t}")
        assert answer(spark, f"select count(1) from {t}") == [(0,)]
    pt = table_name()
    create(spark, tmp_path, pt, "id int, name string, price double, ts long, pt string",
           f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (pt)")
    sql(spark, f"""insert into {pt} values (1, 'a1', 10.0, 1000, "2021"), (2, 'a2', 20.0, 1000, "2021"),
                   (3, 'a2', 30.0, 1000, "2022")""")
    sql(spark, f"delete from {pt} where name = 'a2'")
    assert answer(spark, f"select id, name, price, ts, pt from {pt}") == [(1, "a1", 10.0, 1000, "2021")]
    sql(spark, f"delete from {pt} where pt = '2021'")
    assert answer(spark, f"select id, name, price, ts, pt from {pt}") == []


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
@pytest.mark.parametrize("ttype", TYPES)
def test_delete_table_without_primary_key(spark, tmp_path: Path, ttype: str) -> None:
    """TestDeleteTable "Test Delete Table Without Primary Key" (partitioned and not) and "Test Delete From
    Partitioned Table Without Primary Key": key-less tables (auto keys), deleted by their stored keys."""
    for partitioned in ("partitioned by (name)", ""):
        t = table_name()
        create(spark, tmp_path, t, "id int, price double, ts long, name string",
               f"type = '{ttype}', preCombineField = 'ts'", partitioned)
        assert HoodieTable(str(tmp_path / t.split(".")[1])).record_key_fields == []
        sql(spark, f"insert into {t} select 1, 10, 1000, 'a1'")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 10.0, 1000)]
        sql(spark, f"delete from {t} where id = 1")
        assert answer(spark, f"select count(1) from {t}") == [(0,)]
        sql(spark, f"insert into {t} select 2, 10, 1000, 'a2'")
        sql(spark, f"delete from {t} where id = 1")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(2, "a2", 10.0, 1000)]
        sql(spark, f"delete from {t}")
        assert answer(spark, f"select count(1) from {t}") == [(0,)]
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts long",
           f"type = '{ttype}', preCombineField = 'price'", "partitioned by (ts)")
    sql(spark, f"""insert into {t} values (1, 'a1', cast(10.0 as double), 1000), (2, 'a2', cast(20.0 as double), 1000),
                   (3, 'a2', cast(30.0 as double), 1000)""")
    sql(spark, f"delete from {t} where id = 1")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(2, "a2", 20.0, 1000), (3, "a2", 30.0, 1000)]
    # TestUpdateTable "Test Update Partitioned Table Without Primary Key": an UPDATE by the stored keys
    # (Hudi's upsert prepped) on the same table.
    sql(spark, f"update {t} set price = cast(25.0 as double) where id = 2")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(2, "a2", 25.0, 1000), (3, "a2", 30.0, 1000)]
    with pytest.raises(SqlError, match="Detected disallowed assignment clause in UPDATE statement for partition field `ts`"):
        sql(spark, f"update {t} set ts = 2000 where id = 2")


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
@pytest.mark.parametrize("ttype", TYPES)
def test_update_table_without_primary_key(spark, tmp_path: Path, ttype: str) -> None:
    """TestUpdateTable "Test Update Table Without Primary Key" (partitioned and not): UPDATE on a key-less
    table rewrites each matching record under the key it was read with (Hudi's upsert prepped), so the
    table keeps one row per record; hudi-rs reads the same rows."""
    from tests.hudi_rs import read_hudi_rs

    for partitioned in ("partitioned by (name)", ""):
        t = table_name()
        create(spark, tmp_path, t, "id int, price double, ts long, name string",
               f"type = '{ttype}', preCombineField = 'ts'", partitioned)
        sql(spark, f"insert into {t} select 1, 10, 1000, 'a1'")
        sql(spark, f"insert into {t} select 2, 15, 1000, 'a2'")
        sql(spark, f"update {t} set price = 20 where id = 1")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 20.0, 1000), (2, "a2", 15.0, 1000)]
        sql(spark, f"update {t} set price = price * 2 where id = 1")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 40.0, 1000), (2, "a2", 15.0, 1000)]
        keys = answer(spark, f"select _hoodie_record_key from {t}")
        sql(spark, f"update {t} set price = price + 1")
        assert answer(spark, f"select _hoodie_record_key from {t}") == keys  # the stored keys, not new ones
        path = str(tmp_path / t.split(".")[1])
        rs = read_hudi_rs(path)
        assert sorted(zip(rs.column("id").to_pylist(), rs.column("price").to_pylist())) == [(1, 41.0), (2, 16.0)]


@pytest.mark.slow  # long replay (28 s): test_sql_differential.py's fixed key-less example runs in the default run
@pytest.mark.parametrize("ttype", TYPES)
def test_merge_into_table_without_primary_key(spark, tmp_path: Path, ttype: str) -> None:
    """TestMergeIntoTableWithNonRecordKeyField "Test MergeInto Basic pkless", "Test pkless complex merge cond",
    "Test pkless multiple source match": on a key-less table any ON condition matches, matched rows are
    written under their stored keys, inserted rows get generated keys, and several source rows matching one
    target row keep the one with the greatest ordering value (the later one without an ordering field)."""
    full = table_name()
    create(spark, tmp_path, full, "id int, name string, price double, ts int", f"type = '{ttype}', preCombineField = 'ts'")
    t = full.split(".")[1]  # Hudi's tests name the table (and qualify columns) without the database
    sql(spark, f"""merge into {t} using (select 1 as id, 'a1' as name, 10 as price, 1000 as ts, '1' as flag) s0
                   on s0.id = {t}.id when matched and flag = '1' then update set id = s0.id, name = s0.name,
                   price = s0.price, ts = s0.ts when not matched and flag = '1' then insert *""")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 10.0, 1000)]
    sql(spark, f"""merge into {t} using (select 1 as id, 'a1' as name, 10 as price, 1001 as ts) s0 on s0.id = {t}.id
                   when matched then update set id = s0.id, name = s0.name, price = s0.price + {t}.price, ts = s0.ts
                   when not matched then insert *""")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 20.0, 1001)]
    sql(spark, f"""merge into {t} using (select * from (select 1 as id, 'a1' as name, 10 as price, 1002 as ts
                   union all select 2 as id, 'a2' as name, 12 as price, 1001 as ts)) s0 on s0.id = {t}.id
                   when matched then update set id = s0.id, name = s0.name, price = s0.price + {t}.price, ts = s0.ts
                   when not matched and s0.id % 2 = 0 then insert *""")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 30.0, 1002), (2, "a2", 12.0, 1001)]
    sql(spark, f"""merge into {t} using (select 1 as id, 'a1' as name, 12 as price, 1003 as ts) s0 on s0.id = {t}.id
                   when matched and s0.id != 1 then update set id = s0.id, name = s0.name, price = s0.price, ts = s0.ts
                   when matched and s0.id = 1 then delete when not matched then insert *""")
    assert answer(spark, f"select id, name, price, ts from {t}") == [(2, "a2", 12.0, 1001)]

    c = table_name()
    create(spark, tmp_path, c, "id int, name string, price double, ts int", f"type = '{ttype}', preCombineField = 'ts'")
    c = c.split(".")[1]
    sql(spark, f"""insert into {c} values (1, 'a1', 10, 100), (2, 'a2', 20, 100), (3, 'a3', 30, 100),
                   (4, 'a4', 40, 100), (5, 'a5', 50, 100), (6, 'a6', 60, 100)""")
    sql(spark, f"""merge into {c} using (select 2 as id, 'a1' as name, 50 as price, 999 as ts) s0
                   on {c}.price < s0.price and {c}.id >= s0.id when matched then update set ts = s0.ts
                   when not matched then insert *""")
    expected = [(1, "a1", 10.0, 100), (2, "a2", 20.0, 999), (3, "a3", 30.0, 999), (4, "a4", 40.0, 999),
                (5, "a5", 50.0, 100), (6, "a6", 60.0, 100)]
    assert answer(spark, f"select id, name, price, ts from {c}") == expected
    sql(spark, f"""merge into {c} using (select 1 as id, 'a1' as name, 50 as price, 999 as ts) s0 on {c}.id < s0.id
                   when matched then update set ts = s0.ts when not matched then insert *""")
    assert answer(spark, f"select id, name, price, ts from {c}") == sorted(expected + [(1, "a1", 50.0, 999)])

    for ordering in (True, False):
        m = table_name()
        create(spark, tmp_path, m, "id int, name string, price double, ts int",
               f"type = '{ttype}'" + (", preCombineField = 'ts'" if ordering else ""))
        m = m.split(".")[1]
        sql(spark, f"insert into {m} values (1, 'a1', 10, 100)")
        assign = "price = s0.price, ts = s0.ts" if ordering else "price = s0.price"
        sql(spark, f"""merge into {m} using (select 1 as id, 'a1' as name, 20 as price, 200 as ts union all
                       select 2 as id, 'a1' as name, 30 as price, 100 as ts) s0 on {m}.name = s0.name
                       when matched then update set {assign} when not matched then insert *""")
        assert answer(spark, f"select id, name, price, ts from {m}") == (
            [(1, "a1", 20.0, 200)] if ordering else [(1, "a1", 30.0, 100)])


def test_insert_static_partition_aligns_aliased_select_by_name(spark, tmp_path: Path) -> None:
    """TestInsertTable: INSERT INTO ... PARTITION (dt = '...') SELECT with aliases in another order."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts long, dt string",
           "type = 'cow', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (dt)")
    sql(spark, f"insert into {t} partition (dt = '2021-01-05') select 1 as id, 'a1' as name, 10 as price, 1000 as ts")
    sql(spark, f"insert into {t} partition (dt = '2021-01-06') select 20 as price, 2000 as ts, 2 as id, 'a2' as name")
    sql(spark, f"insert into {t} select 3, 'a3', 30, 3000, '2021-01-07'")
    assert answer(spark, f"select id, name, price, ts, dt from {t}") == [
        (1, "a1", 10.0, 1000, "2021-01-05"), (2, "a2", 20.0, 2000, "2021-01-06"), (3, "a3", 30.0, 3000, "2021-01-07")]


def test_merge_on_condition_rules(spark, tmp_path: Path) -> None:
    """TestMergeIntoTable: an ON on an expression of the key is refused with Hudi's message; assignments
    of the key and partition to the values ON matched are accepted."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts long, dt string",
           "type = 'cow', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (dt)")
    sql(spark, f"insert into {t} select 1, 'a1', 10, 1000, '2021-03-21'")
    sql(spark, f"""merge into {t} t0 using (select 1 as s_id, 'a1' as s_name, 12 as s_price, 1001 as s_ts,
                   '2021-03-21' as dt) s0 on t0.id = s0.s_id when matched and s_ts = 1001
                   then update set id = s_id, name = s_name, price = s_price, ts = s_ts, t0.dt = s0.dt""")
    sql(spark, f"""merge into {t} t0 using (select 2 as s_id, 'a2' as s_name, 15 as s_price, 1001 as s_ts,
                   '2021-03-21' as dt) s0 on t0.id = s0.s_id when matched and s_ts = 1001
                   then update set id = s_id, name = s_name, price = s_price, ts = s_ts, t0.dt = s0.dt
                   when not matched and s_ts = 1001 then insert (id, name, price, ts, dt)
                   values (s_id, s_name, s_price, s_ts, s0.dt)""")
    assert answer(spark, f"select id, name, price, dt from {t}") == [
        (1, "a1", 12.0, "2021-03-21"), (2, "a2", 15.0, "2021-03-21")]
    # TestUpdateTable "Test Update Table With Primary Key and Partition Key Updates error out": Hudi's message
    # names the table as Spark 3.4+ does (spark_catalog.db.name); before, hoodie named it db.name.
    with pytest.raises(SqlError) as e:
        sql(spark, f"update {t} set id = 2 where id = 1")
    assert ("Detected disallowed assignment clause in UPDATE statement for record key field `id` for table "
            f"`spark_catalog.{t}`. Please remove the assignment clause to avoid the error.") in str(e.value)
    with pytest.raises(SqlError, match="Only simple conditions of the form `t.id = s.id` are allowed on the "
                                       "primary-key and partition path column. Found `t0.id = s0.s_id \\+ 1`"):
        sql(spark, f"""merge into {t} t0 using (select 1 as s_id, 'a2' as s_name, 15 as s_price, 1001 as s_ts,
                       '2021-03-21' as dt) s0 on t0.id = s0.s_id + 1 when matched and s_ts = 1001 then delete""")


def test_insert_select_time_travel_and_show_commits_filter(spark, tmp_path: Path) -> None:
    """TestTimeTravelTable: INSERT INTO t2 SELECT ... FROM t1 TIMESTAMP AS OF '<instant>'; the procedure
    tests' CALL show_commits(table => ..., filter => "...")."""
    t1, t2 = table_name(), table_name()
    for t in (t1, t2):
        create(spark, tmp_path, t, "id int, name string, price double, ts long",
               "type = 'cow', primaryKey = 'id', preCombineField = 'ts'")
    first = sql(spark, f"insert into {t1} select 1, 'a1', 10, 1000").collect()[0].instant
    sql(spark, f"insert into {t1} select 2, 'a2', 20, 2000")
    sql(spark, f"insert into {t2} select id, name, price, ts from {t1} timestamp as of '{first}'")
    assert answer(spark, f"select id, name, price, ts from {t2}") == [(1, "a1", 10.0, 1000)]
    rows = sql(spark, f"""CALL show_commits(table => '{t1}', filter => "commit_time > '{first}'")""").collect()
    assert len(rows) == 1 and rows[0].commit_time > first
    with pytest.raises(SqlError, match="not a predicate over show_commits"):
        sql(spark, f"""CALL show_commits(table => '{t1}', filter => "no_such_column = 1")""")


@pytest.mark.parametrize("ttype", TYPES)
def test_insert_into_keeps_duplicates_unless_told(spark, tmp_path: Path, ttype: str) -> None:
    """TestInsertTable3 "Test INSERT INTO preserves duplicates by default", "Test enable
    hoodie.merge.allow.duplicate.on.inserts when write", "Test INSERT INTO deduplicates when operation is set
    to upsert": Hudi 1.x's INSERT INTO is operation insert with hoodie.merge.allow.duplicate.on.inserts=true,
    so a key inserted again is stored again (on copy-on-write too, where the insert lands in the small file
    holding the key); =false merges it with the stored record; operation upsert keeps one row per key."""
    t = table_name()
    create(spark, tmp_path, t, "id bigint, ts bigint, v string", f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'")
    sql(spark, f"insert into {t} values (1, 1000, 'a'), (1, 1001, 'a_dup'), (2, 1002, 'b')")
    assert answer(spark, f"select id, ts, v from {t}") == [(1, 1000, "a"), (1, 1001, "a_dup"), (2, 1002, "b")]
    sql(spark, f"insert into {t} values (1, 1003, 'a_again'), (3, 1004, 'c')")
    assert answer(spark, f"select id, ts, v from {t}") == [
        (1, 1000, "a"), (1, 1001, "a_dup"), (1, 1003, "a_again"), (2, 1002, "b"), (3, 1004, "c")]

    d = table_name()
    create(spark, tmp_path, d, "id int, name string, price double, ts long, dt string",
           f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (dt)")
    sql(spark, f"insert into {d} partition(dt='2021-12-25') values (1, 'a1', 10, 1000)")
    spark.conf.set("hoodie.merge.allow.duplicate.on.inserts", "false")
    try:
        sql(spark, f"insert into {d} partition(dt='2021-12-25') values (1, 'a2', 20, 1001)")
        assert answer(spark, f"select id, name, price, ts, dt from {d}") == [(1, "a2", 20.0, 1001, "2021-12-25")]
        spark.conf.set("hoodie.merge.allow.duplicate.on.inserts", "true")
        sql(spark, f"insert into {d} partition(dt='2021-12-25') values (1, 'a3', 30, 1002)")
        assert answer(spark, f"select id, name, price, ts, dt from {d}") == [
            (1, "a2", 20.0, 1001, "2021-12-25"), (1, "a3", 30.0, 1002, "2021-12-25")]
    finally:
        spark.conf.unset("hoodie.merge.allow.duplicate.on.inserts")

    u = table_name()
    create(spark, tmp_path, u, "id bigint, ts bigint, v string", f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'")
    spark.conf.set("hoodie.spark.sql.insert.into.operation", "upsert")
    try:
        sql(spark, f"insert into {u} values (1, 1000, 'a'), (1, 1001, 'a_dup'), (2, 1002, 'b')")
        assert answer(spark, f"select id, ts, v from {u}") == [(1, 1001, "a_dup"), (2, 1002, "b")]
        sql(spark, f"insert into {u} values (1, 1003, 'a_again'), (3, 1004, 'c')")
        assert answer(spark, f"select id, ts, v from {u}") == [(1, 1003, "a_again"), (2, 1002, "b"), (3, 1004, "c")]
    finally:
        spark.conf.unset("hoodie.spark.sql.insert.into.operation")


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
def test_insert_partition_columns_last(spark, tmp_path: Path) -> None:
    """TestInsertTable "Test Insert Into with dynamic partition", "... with multi partition", "... with subset
    of columns": a table PARTITIONED BY has its partition columns last (in PARTITIONED BY order) whatever the
    column list's order, so INSERT by position fills them from the query's last columns; a query naming the
    expected columns in another order is aligned by name; a column list may name a subset (the rest null)."""
    t = table_name()
    create(spark, tmp_path, t, "id int, dt string, name string, price double, ts long",
           "type = 'cow', primaryKey = 'id'", "partitioned by (dt)")
    assert [c for c in sql(spark, f"select * from {t}").columns if not c.startswith("_hoodie")] == [
        "id", "name", "price", "ts", "dt"]
    sql(spark, f"insert into {t} partition(dt) select 1 as id, '2021-01-05' as dt, 'a1' as name, 10 as price, 1000 as ts")
    sql(spark, f"insert into {t} select 2 as id, 'a2' as name, 20 as price, 2000 as ts, '2021-01-06' as dt")
    sql(spark, f"insert into {t} select 3, 'a3', 30, 3000, '2021-01-07'")
    sql(spark, f"insert into {t} (dt, ts, name, id) values ('2021-01-08', 4000, 'a4', 4)")
    sql(spark, f"insert into {t} (dt, ts, id, name) values ('2021-01-09' as dt, 6000 as ts, 6 as id, 'a6' as name)")
    sql(spark, f"insert into {t} partition(dt='2021-01-10') (ts, id, name) values (7000, 7, 'a7')")
    assert answer(spark, f"select id, name, price, ts, dt from {t}") == [
        (1, "a1", 10.0, 1000, "2021-01-05"), (2, "a2", 20.0, 2000, "2021-01-06"), (3, "a3", 30.0, 3000, "2021-01-07"),
        (4, "a4", None, 4000, "2021-01-08"), (6, "a6", None, 6000, "2021-01-09"), (7, "a7", None, 7000, "2021-01-10")]

    m = table_name()
    create(spark, tmp_path, m, "id int, dt string, name string, price double, ht string, ts long",
           "type = 'cow', primaryKey = 'id'", "partitioned by (dt, ht)")
    sql(spark, f"insert into {m} partition(dt, ht) select 1 as id, 'a1' as name, 10 as price,'20210101' as dt, "
               "1000 as ts, '01' as ht")
    sql(spark, f"insert into {m} partition(dt = '20210102', ht) select 2 as id, 'a2' as name, 20 as price, 2000 as ts, "
               "'02' as ht")
    sql(spark, f"insert into {m} partition(dt, ht = '03') select 3 as id, 'a3' as name, 30 as price, 3000 as ts, "
               "'20210103' as dt")
    sql(spark, f"insert into {m} select 4, 'a4', 40, 4000, '20210104', '04'")
    assert answer(spark, f"select id, name, price, ts, dt, ht from {m}") == [
        (1, "a1", 10.0, 1000, "20210101", "01"), (2, "a2", 20.0, 2000, "20210102", "02"),
        (3, "a3", 30.0, 3000, "20210103", "03"), (4, "a4", 40.0, 4000, "20210104", "04")]


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
@pytest.mark.parametrize("ttype", TYPES)
def test_insert_overwrite(spark, tmp_path: Path, ttype: str) -> None:
    """TestInsertTable "Test Insert Overwrite" and "Test insert overwrite for multi partitioned table": the
    overwrite mode (session hoodie.datasource.overwrite.mode, then spark.sql.sources.partitionOverwriteMode),
    a PARTITION clause, and hoodie.datasource.write.operation in the session, which takes precedence."""
    conf = ("spark.sql.sources.partitionOverwriteMode", "hoodie.datasource.overwrite.mode",
            "hoodie.datasource.write.operation")
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts long, dt string",
           f"type = '{ttype}', primaryKey = 'id'", "partitioned by (dt)")
    q = f"select id, name, price, ts, dt from {t}"
    try:
        sql(spark, f"insert into {t} values (1,'a1',10,1000,'2021-01-05'), (2,'a2',10,1000,'2021-01-06')")
        sql(spark, f"insert overwrite table {t} values (3,'a3',10,1000,'2021-01-06'), (4,'a4',10,1000,'2021-01-07')")
        assert answer(spark, q) == [(3, "a3", 10.0, 1000, "2021-01-06"), (4, "a4", 10.0, 1000, "2021-01-07")]
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        sql(spark, f"insert overwrite table {t} values (5,'a5',10,1000,'2021-01-07')")
        assert answer(spark, q) == [(3, "a3", 10.0, 1000, "2021-01-06"), (5, "a5", 10.0, 1000, "2021-01-07")]
        sql(spark, f"insert overwrite table {t} partition(dt = '2021-01-06') select * from (select 6 , 'a6', 10, 1000) limit 10")
        assert answer(spark, q) == [(5, "a5", 10.0, 1000, "2021-01-07"), (6, "a6", 10.0, 1000, "2021-01-06")]
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "static")
        spark.conf.set("hoodie.datasource.overwrite.mode", "dynamic")
        sql(spark, f"insert overwrite table {t} values (7,'a7',10,1000,'2021-01-07')")
        assert answer(spark, q) == [(6, "a6", 10.0, 1000, "2021-01-06"), (7, "a7", 10.0, 1000, "2021-01-07")]
        spark.conf.set("hoodie.datasource.overwrite.mode", "static")
        sql(spark, f"insert overwrite table {t} values (8,'a8',10,1000,'2021-01-07'), (9,'a9',10,1000,'2021-01-08')")
        assert answer(spark, q) == [(8, "a8", 10.0, 1000, "2021-01-07"), (9, "a9", 10.0, 1000, "2021-01-08")]
        spark.conf.set("hoodie.datasource.write.operation", "insert_overwrite")
        sql(spark, f"insert overwrite table {t} values (10,'a10',10,1000,'2021-01-08')")
        assert answer(spark, q) == [(8, "a8", 10.0, 1000, "2021-01-07"), (10, "a10", 10.0, 1000, "2021-01-08")]
        spark.conf.set("hoodie.datasource.write.operation", "insert_overwrite_table")
        sql(spark, f"insert overwrite table {t} values (11,'a11',10,1000,'2021-01-08'), (12,'a12',10,1000,'2021-01-09')")
        assert answer(spark, q) == [(11, "a11", 10.0, 1000, "2021-01-08"), (12, "a12", 10.0, 1000, "2021-01-09")]
    finally:
        for k in conf:
            spark.conf.unset(k)

    for mode in ("dynamic", "static"):
        m = table_name()
        create(spark, tmp_path, m, "id int, name string, price double, ts long, dt string, hh string",
               f"type = '{ttype}', primaryKey = 'id'", "partitioned by (dt, hh)")
        q = f"select id, name, price, ts, dt, hh from {m}"
        sql(spark, f"insert into table {m} values (0, 'a0', 10, 1000, '2023-12-05', '00'), "
                   "(1, 'a1', 10, 1000, '2023-12-06', '00'), (2, 'a2', 10, 1000, '2023-12-06', '01')")
        spark.conf.set("hoodie.datasource.overwrite.mode", mode)
        try:
            sql(spark, f"insert overwrite table {m} partition (dt='2023-12-06', hh) values "
                       "(3, 'a3', 10, 1000, '00'), (4, 'a4', 10, 1000, '02')")
            kept = [(2, "a2", 10.0, 1000, "2023-12-06", "01")] if mode == "dynamic" else []
            assert answer(spark, q) == sorted([(0, "a0", 10.0, 1000, "2023-12-05", "00"),
                                               (3, "a3", 10.0, 1000, "2023-12-06", "00"),
                                               (4, "a4", 10.0, 1000, "2023-12-06", "02")] + kept)
            sql(spark, f"insert overwrite table {m} values (5, 'a5', 10, 1000, '2023-12-06', '02')")
            five = (5, "a5", 10.0, 1000, "2023-12-06", "02")
            assert answer(spark, q) == (sorted([(0, "a0", 10.0, 1000, "2023-12-05", "00"),
                                                (3, "a3", 10.0, 1000, "2023-12-06", "00"),
                                                (2, "a2", 10.0, 1000, "2023-12-06", "01"), five])
                                        if mode == "dynamic" else [five])
            spark.conf.set("hoodie.datasource.write.operation", "insert_overwrite_table")
            sql(spark, f"insert overwrite table {m} partition (dt='2023-12-06', hh) values (6, 'a6', 10, 1000, '00')")
            assert answer(spark, q) == [(6, "a6", 10.0, 1000, "2023-12-06", "00")]
        finally:
            for k in conf:
                spark.conf.unset(k)


def test_insert_dup_policy(spark, tmp_path: Path) -> None:
    """TestInsertTable "Test Insert Into Non Partitioned Table" and "... strict mode with no preCombineField":
    hoodie.datasource.insert.dup.policy=fail refuses an INSERT of a stored key (nothing written), =drop leaves
    such rows out."""
    t = table_name()
    spark.conf.set("hoodie.datasource.insert.dup.policy", "fail")
    try:
        create(spark, tmp_path, t, "id int, name string, price double, ts long",
               "type = 'cow', primaryKey = 'id', preCombineField = 'ts'")
        sql(spark, f"insert into {t} values(1, 'a1', 10, 1000)")
        sql(spark, f"insert into {t} select 2, 'a2', 12, 1000")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 10.0, 1000), (2, "a2", 12.0, 1000)]
        before = len(HoodieTable(str(tmp_path / t.split(".")[1])).timeline.instants)
        with pytest.raises(SqlError, match="Duplicate key found for insert statement, key is: 1"):
            sql(spark, f"insert into {t} select 1, 'a1', 10, 1000")
        assert len(HoodieTable(str(tmp_path / t.split(".")[1])).timeline.instants) == before
        spark.conf.set("hoodie.datasource.insert.dup.policy", "drop")
        d = table_name()
        create(spark, tmp_path, d, "id int, name string, price double, ts long",
               "type = 'mor', primaryKey = 'id', preCombineField = 'ts'")
        sql(spark, f"insert into {d} select 1, 'a1', 10, 1000")
        sql(spark, f"insert into {d} select 1, 'a1', 12, 1000")
        assert answer(spark, f"select id, name, price, ts from {d}") == [(1, "a1", 10.0, 1000)]
    finally:
        spark.conf.unset("hoodie.datasource.insert.dup.policy")


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
@pytest.mark.parametrize("ttype", TYPES)
def test_merge_into_table2(spark, tmp_path: Path, ttype: str) -> None:
    """TestMergeIntoTable2 "Test MergeInto for MOR table 2" (there on merge-on-read only), "Test Merge Into CTAS
    Table", "Test column name matching for insert * and update set *" (several source rows of one key: the
    greatest ordering value wins) and "Test MergeInto For Source Table With Column Aliases" (refused)."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts int, dt string",
           f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (dt)")
    src = "select 1 as id, 'a1' as name, {price} as price, 1000 as ts, '2021-03-21' as dt"
    q = f"select id, name, price, dt from {t}"
    sql(spark, f"merge into {t} as t0 using ({src.format(price=10)}) as s0 on t0.id = s0.id "
               "when not matched and s0.id % 2 = 1 then insert *")
    assert answer(spark, q) == [(1, "a1", 10.0, "2021-03-21")]
    sql(spark, f"merge into {t} as t0 using (select 2 as id, 'a2' as name, 10 as price, 1000 as ts, '2021-03-21' as dt) "
               "as s0 on t0.id = s0.id when not matched and s0.id % 2 = 1 then insert *")
    assert answer(spark, q) == [(1, "a1", 10.0, "2021-03-21")]
    sql(spark, f"merge into {t} as t0 using ({src.format(price=11)}) as s0 on t0.id = s0.id "
               "when matched and s0.id % 2 = 0 then update set * when matched and s0.id % 3 = 2 then delete "
               "when not matched then insert *")
    assert answer(spark, q) == [(1, "a1", 10.0, "2021-03-21")]
    sql(spark, f"merge into {t} as t0 using ({src.format(price=11)}) as s0 on t0.id = s0.id "
               "when matched and s0.id % 2 = 1 then update set id = s0.id, name = s0.name, price = s0.price * 2, "
               "ts = s0.ts, dt = s0.dt when not matched then insert (id,name,price,ts,dt) "
               "values(s0.id, s0.name, s0.price, s0.ts, s0.dt)")
    assert answer(spark, q) == [(1, "a1", 22.0, "2021-03-21")]
    sql(spark, f"merge into {t} as t0 using ({src.format(price=11)}) as s0 on t0.id = s0.id "
               "when matched and s0.id % 2 = 0 then update set id = s0.id, name = s0.name, price = s0.price * 2, "
               "ts = s0.ts, dt = s0.dt when matched and s0.id % 2 = 1 then delete when not matched then insert "
               "(id,name,price,ts,dt) values(s0.id, s0.name, s0.price, s0.ts, s0.dt)")
    assert answer(spark, f"select count(1) from {t}") == [(0,)]

    c = table_name()
    sql(spark, f"create table {c} using hudi tblproperties(primaryKey = 'id', type = '{ttype}') "
               f"location '{tmp_path / c.split('.')[1]}' as select 1 as id, 'a1' as name")
    assert HoodieTable(str(tmp_path / c.split(".")[1])).record_key_fields == ["id"]
    sql(spark, f"merge into {c} h0 using (select 1 as id, 'a1_1' as name) s0 on h0.id = s0.id "
               "when matched then update set *")
    assert answer(spark, f"select id, name from {c}") == [(1, "a1_1")]

    m = table_name()
    create(spark, tmp_path, m, "id int, name string, price double, ts int, dt string",
           f"type = '{ttype}', primaryKey = 'id', preCombineField = 'ts'")
    q = f"select id, name, price, ts, dt from {m}"
    sql(spark, f"insert into {m} select 1, 'a1', 1, 10, '2021-03-21'")
    sql(spark, f"""merge into {m} as t0 using (
                     select 1 as id, 'a1' as name, 97 as price, 1002 as ts, '2021-05-05' as dt union all
                     select 1 as id, 'a2' as name, 98 as price, 1003 as ts, '2021-05-05' as dt union all
                     select 2 as id, 'a3' as name, 99 as price, 1001 as ts, '2021-05-05' as dt) as s0
                   on t0.id = s0.id when matched then update set * when not matched then insert *""")
    assert answer(spark, q) == [(1, "a2", 98.0, 1003, "2021-05-05"), (2, "a3", 99.0, 1001, "2021-05-05")]
    sql(spark, f"""merge into {m} as t0 using (
                     select 1 as id, 'a1' as name, 1004 as ts, '2021-05-05' as dt, 100 as price union all
                     select 2 as id, 'a5' as name, 1000 as ts, '2021-05-05' as dt, 101 as price union all
                     select 3 as id, 'a3' as name, 1000 as ts, '2021-05-05' as dt, 102 as price) as s0
                   on t0.id = s0.id when matched then update set t0.name = s0.name, t0.ts = s0.ts, t0.dt = s0.dt,
                   t0.price = s0.price when not matched then insert (id, name, ts, dt, price)
                   values (s0.id, s0.name, s0.ts, s0.dt, s0.price)""")
    assert answer(spark, q) == [(1, "a1", 100.0, 1004, "2021-05-05"), (2, "a3", 99.0, 1001, "2021-05-05"),
                                (3, "a3", 102.0, 1000, "2021-05-05")]
    sql(spark, f"""merge into {m} as t0 using (
                     select 1 as id, 'a6' as name, 106 as price, 1006 as ts, '2021-05-05' as dt, '0' as flag union all
                     select 4 as id, 'a4' as name, 100 as price, 1000 as ts, '2021-05-06' as dt, '1' as flag) as s0
                   on t0.id = s0.id when matched and flag = '1' then update set *
                   when not matched and flag = '1' then insert *""")
    assert answer(spark, q) == [(1, "a1", 100.0, 1004, "2021-05-05"), (2, "a3", 99.0, 1001, "2021-05-05"),
                                (3, "a3", 102.0, 1000, "2021-05-05"), (4, "a4", 100.0, 1000, "2021-05-06")]
    bare = m.split(".")[1]
    with pytest.raises(SqlError, match=r"\[COLUMN_ALIASES_NOT_ALLOWED\] Column aliases are not allowed in MERGE"):
        sql(spark, f"""merge into {bare} using (select 1, 'a1', 10, 1000, '1') s0(id,name,price,ts,flag)
                       on s0.id = {bare}.id when matched and flag = '1' then update set id = s0.id, name = s0.name,
                       price = s0.price, ts = s0.ts when not matched and flag = '1' then insert *""")


def test_insert_exception(spark) -> None:
    """TestInsertTable "Test Insert Exception": too many / not enough data columns are refused with Spark's
    message (the table made without LOCATION, under the warehouse); a positional query whose outputs share a
    name (SELECT 1, 'a1', 1, ...) is taken by position, not refused as ambiguous."""
    t = table_name()
    bare = t.split(".")[1]
    sql(spark, f"create table {t} (id int, name string, price double, dt string) using hudi "
               "tblproperties (primaryKey = 'id') partitioned by (dt)")
    with pytest.raises(SqlError) as e:
        sql(spark, f"insert into {t} partition(dt = '2021-06-20') select 1, 'a1', 10, '2021-06-20'")
    assert (f"[INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS] Cannot write to `spark_catalog`.`default`.`{bare}`, "
            "the reason is too many data columns:\nTable columns: `id`, `name`, `price`.\n"
            "Data columns: `1`, `a1`, `10`, `2021-06-20`.\n") in str(e.value)
    with pytest.raises(SqlError) as e:
        sql(spark, f"insert into {t} select 1, 'a1', 10")
    assert ("[INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS] Cannot write to "
            f"`spark_catalog`.`default`.`{bare}`, the reason is not enough data columns:\n"
            "Table columns: `id`, `name`, `price`, `dt`.\nData columns: `1`, `a1`, `10`.\n") in str(e.value)
    sql(spark, f"insert into {t} select 1, 'a1', 1, '2021-06-20'")
    assert answer(spark, f"select id, name, price, dt from {t}") == [(1, "a1", 1.0, "2021-06-20")]


@pytest.mark.parametrize("urlencode", ["false", pytest.param("true", marks=pytest.mark.slow)])
def test_delete_single_partition_tables_partitions(spark, tmp_path: Path, urlencode: str) -> None:
    """TestDeleteTable "Test Delete single-partition table' partitions, urlencode": a merge-on-read table
    written by the datasource (hoodie.spark.write), registered with CREATE TABLE ... USING hudi LOCATION, then
    DELETE FROM by its slash-separated partition value."""
    from hoodie.spark import write as spark_write

    t = table_name()
    path = str(tmp_path / t.split(".")[1])
    df = spark.createDataFrame([(1, "z3", "v1", "2021/10/01"), (2, "l4", "v1", "2021/10/02")], "id int, name string, ts string, dt string")
    spark_write(df, path, {"hoodie.table.name": t.split(".")[1], "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                           "hoodie.datasource.write.recordkey.field": "id",
                           "hoodie.table.ordering.fields": "ts",
                           "hoodie.datasource.write.partitionpath.field": "dt",
                           "hoodie.datasource.write.partitionpath.urlencode": urlencode}, mode="overwrite")
    # Hudi 1.1 names the ordering field by the table config's key; before, hoodie ignored it (no ordering field).
    assert HoodieTable(path).precombine_field == "ts"
    sql(spark, f"create table {t} using hudi location '{path}'")
    quote = '"' if urlencode == "true" else "'"  # Hudi's test writes a double-quoted literal in the urlencode case
    sql(spark, f"delete from {t} where dt = {quote}2021/10/01{quote}")
    assert answer(spark, f"select dt from {t}") == [("2021/10/02",)]


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
def test_merge_into_table(spark, tmp_path: Path) -> None:
    """TestMergeIntoTable "Test MergeInto Basic" (without its check that files of unaffected partitions are
    not read: hoodie's MERGE reads the whole target), "Test MergeInto with more than once update actions",
    "Test MergeInto with ignored record" (the source a Spark Parquet table)."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts int, partition string",
           "primaryKey = 'id', preCombineField = 'ts'", "partitioned by (partition)")
    b = t.split(".")[1]
    q = f"select id, name, price, ts, partition from {t}"
    sql(spark, f"""merge into {b} using (
                     select 1 as id, 'a1' as name, 10 as price, 1000 as ts, 'p1' as partition, '1' as flag union
                     select 2 as id, 'a2' as name, 20 as price, 1000 as ts, 'p2' as partition, '1' as flag union
                     select 3 as id, 'a3' as name, 30 as price, 1000 as ts, 'p3' as partition, '1' as flag) s0
                   on s0.id = {b}.id when matched and flag = '1' then update set id = s0.id, name = s0.name,
                   price = s0.price, ts = s0.ts when not matched and flag = '1' then insert *""")
    assert [(f.name, f.dataType.simpleString()) for f in sql(spark, q).schema.fields] == [
        ("id", "int"), ("name", "string"), ("price", "double"), ("ts", "int"), ("partition", "string")]
    assert answer(spark, q) == [(1, "a1", 10.0, 1000, "p1"), (2, "a2", 20.0, 1000, "p2"), (3, "a3", 30.0, 1000, "p3")]
    sql(spark, f"""merge into {b} using (select 1 as _id, 'a1' as name, 10 as _price, 1001 as _ts, 'p1' as partition) s0
                   on s0._id = {b}.id when matched then update set id = s0._id, name = s0.name,
                   price = s0._price + {b}.price, ts = s0._ts""")
    assert answer(spark, q) == [(1, "a1", 20.0, 1001, "p1"), (2, "a2", 20.0, 1000, "p2"), (3, "a3", 30.0, 1000, "p3")]
    sql(spark, f"""merge into {b} using (select * from (
                     select 1 as id, 'a1' as name, 10 as price, 1002 as ts, 'p1' as partition union all
                     select 4 as id, 'a4' as name, 40 as price, 1001 as ts, 'p4' as partition)) s0
                   on s0.id = {b}.id when matched then update set id = s0.id, name = s0.name,
                   price = s0.price + {b}.price, ts = s0.ts when not matched and s0.id % 2 = 0 then insert *""")
    assert answer(spark, q) == [(1, "a1", 30.0, 1002, "p1"), (2, "a2", 20.0, 1000, "p2"), (3, "a3", 30.0, 1000, "p3"),
                                (4, "a4", 40.0, 1001, "p4")]
    sql(spark, f"""merge into {b} using (select 1 as id, 'a1' as name, 12 as price, 1003 as ts, 'p1' as partition) s0
                   on s0.id = {b}.id when matched and s0.id != 1 then update set id = s0.id, name = s0.name,
                   price = s0.price, ts = s0.ts when matched and s0.id = 1 then delete when not matched then insert *""")
    assert answer(spark, f"select count(*) from {t} where partition = 'p1'") == [(0,)]

    c = table_name()
    create(spark, tmp_path, c, "id int, name string, data int, country string, ts int",
           "type = 'cow', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (country)")
    sql(spark, f"merge into {c} as target using (select 1 as id, 'lb' as name, 6 as data, 'shu' as country, "
               "43193 as ts) source on source.id = target.id when matched then update set * "
               "when not matched then insert *")
    sql(spark, f"merge into {c} as target using (select 1 as id, 'lb' as name, 5 as data, 'shu' as country, "
               "43196 as ts) source on source.id = target.id when matched and source.data > target.data then "
               "update set target.data = source.data, target.ts = source.ts when matched and source.data = 5 then "
               "update set target.data = source.data, target.ts = source.ts when not matched then insert *")
    assert answer(spark, f"select id, name, data, country, ts from {c}") == [(1, "lb", 5, "shu", 43196)]

    src, tgt = table_name(), table_name()
    spark.sql(f"create table {src} (id int, name string, price double, ts int) using parquet "
              f"location '{tmp_path / src.split('.')[1]}'")
    create(spark, tmp_path, tgt, "id int, name string, price double, ts int", "primaryKey = 'id', preCombineField = 'ts'")
    spark.sql(f"insert into {src} values(1, 'a1', 10, 1000)")
    spark.sql(f"insert into {src} values(2, 'a2', 11, 1000)")
    sql(spark, f"merge into {tgt} as t0 using (select * from {src}) as s0 on t0.id = s0.id "
               "when matched then update set * when not matched and s0.name = 'a1' then insert *")
    assert answer(spark, f"select id, name, price, ts from {tgt}") == [(1, "a1", 10.0, 1000)]
    sql(spark, f"insert into {tgt} select 3, 'a3', 12, 1000")
    sql(spark, f"""merge into {tgt} as t0 using (select * from (
                     select 1 as s_id, 'a1' as name, 20 as price, 1001 as ts union all
                     select 3 as s_id, 'a3' as name, 20 as price, 1003 as ts union all
                     select 4 as s_id, 'a4' as name, 10 as price, 1004 as ts)) s0
                   on s0.s_id = t0.id when matched and s0.ts = 1001 then update set id = s0.s_id, name = t0.name,
                   price = s0.price, ts = s0.ts""")
    assert answer(spark, f"select id, name, price, ts from {tgt}") == [(1, "a1", 20.0, 1001), (3, "a3", 12.0, 1000)]
    spark.sql(f"drop table {src}")


@pytest.mark.slow  # long replay: see the module docstring (default-run subset)
def test_insert_modes_and_combine(spark, tmp_path: Path) -> None:
    """TestInsertTable "Test insert pk-table" (run there after other tests left ``hoodie.sql.insert.mode=upsert``
    in the session: one row per key), "Test Insert Exception"'s strict-mode bulk insert refusal, "Test bulk
    insert with insert into for single partitioned table" (non-strict + hoodie.sql.bulk.insert.enable:
    bulk_insert, then insert) and "Test combine before insert" (allow.duplicate.on.inserts=false: an insert
    overwrite keeps one row per key, the greatest ordering value)."""
    keys = ("hoodie.sql.insert.mode", "hoodie.sql.bulk.insert.enable", "hoodie.merge.allow.duplicate.on.inserts")
    try:
        spark.conf.set("hoodie.sql.insert.mode", "upsert")
        t = table_name()
        create(spark, tmp_path, t, "id int, name string, price double, ts long",
               "primaryKey = 'id', type = 'cow', preCombineField = 'ts'")
        sql(spark, f"insert into {t} values(1, 'a1', 10, 1000)")
        sql(spark, f"insert into {t} values(1, 'a1', 11, 1000)")
        assert answer(spark, f"select id, name, price, ts from {t}") == [(1, "a1", 11.0, 1000)]

        spark.conf.set("hoodie.sql.insert.mode", "strict")
        spark.conf.set("hoodie.sql.bulk.insert.enable", "true")
        with pytest.raises(SqlError, match="Table with primaryKey can not use bulk insert in strict mode."):
            sql(spark, f"insert into {t} values(2, 'a2', 10, 1000)")

        spark.conf.set("hoodie.sql.insert.mode", "non-strict")
        p = table_name()
        create(spark, tmp_path, p, "id int, name string, price double, dt string", "type = 'cow', primaryKey = 'id'",
               "partitioned by (dt)")
        assert sql(spark, f"insert into {p} values(1, 'a1', 10, '2021-07-18')").collect()[0].operation == "bulk_insert"
        spark.conf.set("hoodie.sql.bulk.insert.enable", "false")
        assert sql(spark, f"insert into {p} values(2, 'a2', 10, '2021-07-18')").collect()[0].operation == "insert"
        assert answer(spark, f"select id, name, price, dt from {p}") == [(1, "a1", 10.0, "2021-07-18"),
                                                                         (2, "a2", 10.0, "2021-07-18")]
        spark.conf.unset("hoodie.sql.insert.mode")
        spark.conf.set("hoodie.merge.allow.duplicate.on.inserts", "false")
        c = table_name()
        create(spark, tmp_path, c, "id int, name string, price double, ts long",
               "primaryKey = 'id', type = 'cow', preCombineField = 'ts'")
        sql(spark, f"""insert overwrite table {c} select * from (select 1 as id, 'a1' as name, 10 as price, 1000 as ts
                       union all select 1 as id, 'a1' as name, 11 as price, 1001 as ts)""")
        assert answer(spark, f"select id, name, price, ts from {c}") == [(1, "a1", 11.0, 1001)]
    finally:
        for k in keys:
            spark.conf.unset(k)
