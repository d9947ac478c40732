"""Hudi's Spark SQL suite, replayed through ``hoodie.sql``: TestMergeIntoTable, case by case.

The pattern of test_hudi_sql_suite.py (statements and the answers Hudi's tests expect are facts, the code is
ours), for the cases of hudi-spark-datasource/hudi-spark/src/test/scala/org/apache/spark/sql/hudi/dml/others/
TestMergeIntoTable.scala that test_hudi_sql_suite.py does not replay. Every test here is behind ``slow``
(each runs several MERGE commits); Hudi's loops over ``hoodie.spark.sql.optimized.writes.enable`` and record
types do not change an answer and are not repeated. docs/hudi-sql-suite.md maps every case of the class:
replayed here, replayed in test_hudi_sql_suite.py, not replayed (with the reason) or answering differently.

Not replayed here: "Test MergeInto Basic", "... with more than once update actions", "... with ignored record"
(test_hudi_sql_suite.py replays them); the GLOBAL_BLOOM / GLOBAL_SIMPLE index cases; "Test partial insert with
inline clustering" (hoodie builds no clustering and writes no partial updates). Differing, left out: Hudi refuses a MERGE whose source has no column named as the ordering field
("Failed to resolve ordering fields `v` w/in the source-table output", in "... with preCombine field
expression" and "... with primaryKey expression"); hoodie runs it.
Replayed with a different message text (the refusal itself agrees): an ON on ``s.id + 1`` (Hudi prints
Spark's ``(s0.id + 1)``), "Test unresolved columns in Merge Into statement" (Hudi expects Spark's
UNRESOLVED_COLUMN error, hoodie names the column in its own words).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql import SqlError, sql
from tests.engine.hudi_suite import answer

pytestmark = [pytest.mark.spark, pytest.mark.slow]
_n = itertools.count()


def table_name() -> str:
    """A fresh name, as Hudi's generateTableName."""
    return f"default.hmi_{next(_n)}"


def create(spark, tmp: Path, name: str, cols: str, props: str, extra: str = "") -> str:  # type: ignore[no-untyped-def]
    """CREATE TABLE ... USING hudi at a fresh location under ``tmp``; returns the location."""
    path = str(tmp / name.split(".")[1])
    sql(spark, f"create table {name} ({cols}) using hudi tblproperties ({props}) {extra} location '{path}'")
    return path


def test_merge_into_mor_table(spark, tmp_path: Path) -> None:
    """"Test MergeInto for MOR table": conditional inserts and updates, source columns named differently, the
    refusal of an ON on an expression of the key (Hudi's message), a conditional delete."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts int, dt string",
           "type = 'mor', primaryKey = 'id', preCombineField = 'ts'", "partitioned by(dt)")
    q = f"select id, name, price, dt from {t}"
    sql(spark, f"""merge into {t} as t0 using (select 1 as id, 'a1' as name, 10 as price, 1000 as ts,
                   '2021-03-21' as dt) as s0 on t0.id = s0.id when not matched and s0.id % 2 = 1 then insert *""")
    assert answer(spark, q) == [(1, "a1", 10.0, "2021-03-21")]
    upd = """merge into {t} as t0 using (select 1 as _id, 'a1' as name, 12 as _price, 1001 as _ts,
             '2021-03-21' as dt) as s0 on t0.id = s0._id when matched and s0._id % 2 = {r} then update set
             id = s0._id, name = s0.name, price = s0._price, ts = s0._ts, dt = s0.dt"""
    sql(spark, upd.format(t=t, r=0))
    assert answer(spark, q) == [(1, "a1", 10.0, "2021-03-21")]
    sql(spark, upd.format(t=t, r=1))
    assert answer(spark, q) == [(1, "a1", 12.0, "2021-03-21")]
    sql(spark, f"""merge into {t} as t0 using (select 2 as id, 'a2' as name, 10 as price, 1000 as ts,
                   '2021-03-21' as dt) as s0 on t0.id = s0.id when not matched and s0.id % 2 = 0 then insert *""")
    assert answer(spark, q) == [(1, "a1", 12.0, "2021-03-21"), (2, "a2", 10.0, "2021-03-21")]
    sql(spark, f"""merge into {t} t0 using (select 2 as s_id, 'a2' as s_name, 15 as s_price, 1001 as s_ts,
                   '2021-03-21' as dt) s0 on t0.id = s0.s_id when matched and s_ts = 1001
                   then update set id = s_id, name = s_name, price = s_price, ts = s_ts, t0.dt = s0.dt""")
    assert answer(spark, q) == [(1, "a1", 12.0, "2021-03-21"), (2, "a2", 15.0, "2021-03-21")]
    with pytest.raises(SqlError, match=r"Only simple conditions of the form `t.id = s.id` are allowed on the "
                                       r"primary-key and partition path column. Found `t0.id = \(?s0.s_id \+ 1\)?`"):
        sql(spark, f"""merge into {t} t0 using (select 1 as s_id, 'a2' as s_name, 15 as s_price, 1001 as s_ts,
                       '2021-03-21' as dt) s0 on t0.id = s0.s_id + 1 when matched and s_ts = 1001 then delete""")
    sql(spark, f"""merge into {t} t0 using (select 2 as s_id, 'a2' as s_name, 15 as s_price, 1001 as ts,
                   '2021-03-21' as dt) s0 on t0.id = s0.s_id when matched and s0.ts = 1001 then delete""")
    assert answer(spark, q) == [(1, "a1", 12.0, "2021-03-21")]


def test_merge_insert_only(spark, tmp_path: Path) -> None:
    """"Test MergeInto with insert only": a merge-on-read table without an ordering field, an INSERT clause
    naming its columns; a source row the clause's condition rejects is not written."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, dt string",
           "type = 'mor', primaryKey = 'id'", "partitioned by(dt)")
    sql(spark, f"insert into {t} select 1, 'a1', 10, '2021-03-21'")
    ins = """merge into {t} as t0 using (select {i} as id, 'a{i}' as name, 10 as price, 1000 as ts,
             '2021-03-20' as dt) s0 on s0.id = t0.id when not matched and s0.id % 2 = 0 then insert (id,name,price,dt)
             values(s0.id,s0.name,s0.price,s0.dt)"""
    expected = [(1, "a1", 10.0, "2021-03-21"), (2, "a2", 10.0, "2021-03-20")]
    sql(spark, ins.format(t=t, i=2))
    assert answer(spark, f"select id,name,price,dt from {t}") == expected
    sql(spark, ins.format(t=t, i=3))
    assert answer(spark, f"select id,name,price,dt from {t}") == expected


@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_merge_precombine_field(spark, tmp_path: Path, ttype: str) -> None:
    """"Test MergeInto For PreCombineField": an update whose ordering value is smaller than the stored one
    is dropped, a greater one wins."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, v int, dt string",
           f"type = '{ttype}', primaryKey = 'id', preCombineField = 'v'", "partitioned by(dt)")
    q = f"select id,name,price,dt,v from {t}"
    sql(spark, f"""merge into {t} as t0 using (select 1 as id, 'a1' as name, 10 as price, 1001 as v,
                   '2021-03-21' as dt) as s0 on t0.id = s0.id when not matched and s0.id % 2 = 1 then insert *""")
    assert answer(spark, q) == [(1, "a1", 10.0, "2021-03-21", 1001)]
    upd = """merge into {t} as t0 using (select 1 as id, 'a1' as name, {p} as price, {v} as v,
             '2021-03-21' as dt) as s0 on t0.id = s0.id when matched and s0.id % 2 = 1 then update set *"""
    sql(spark, upd.format(t=t, p=11, v=1000))
    assert answer(spark, q) == [(1, "a1", 10.0, "2021-03-21", 1001)]
    sql(spark, upd.format(t=t, p=12, v=1002))
    assert answer(spark, q) == [(1, "a1", 12.0, "2021-03-21", 1002)]


@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_merge_precombine_field_expression(spark, tmp_path: Path, ttype: str) -> None:
    """"Test MergeInto with preCombine field expression" (``orderingFields`` in the properties): the ordering
    field assigned an expression (in part: Hudi's refusal of a source without a column of the ordering field's
    name is not replayed, hoodie runs that MERGE)."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, v int, dt string",
           f"type = '{ttype}', primaryKey = 'id', orderingFields = 'v'", "partitioned by(dt)")
    q = f"select id,name,price,dt,v from {t}"
    sql(spark, f"insert into {t} values(1, 'a1', 10, 1000, '2021-03-21')")
    sql(spark, f"""merge into {t} as t0 using (select 1 as id, 'a1' as name, 11 as price, 999 as v,
                   '2021-03-21' as dt) as s0 on t0.id = s0.id
                   when matched then update set id=s0.id, name=s0.name, price=s0.price*2, v=s0.v+2, dt=s0.dt""")
    assert answer(spark, q) == [(1, "a1", 22.0, "2021-03-21", 1001)]
    # Hudi then refuses a source without a column named `v` ("Failed to resolve ordering fields `v` w/in the
    # source-table output"); hoodie runs it: not replayed, listed as differing in docs/hudi-sql-suite.md.
    sql(spark, f"""merge into {t} as t0 using (select 1 as s_id, 'a1' as s_name, 12 as s_price, 1000 as v,
                   '2021-03-21' as dt) as s0 on t0.id = s0.s_id when matched then update set id=s0.s_id,
                   name=s0.s_name, price=s0.s_price*2, v=s0.v+2, dt=s0.dt""")
    assert answer(spark, q) == [(1, "a1", 24.0, "2021-03-21", 1002)]


def test_merge_primary_key_expression(spark, tmp_path: Path) -> None:
    """"Test MergeInto with primaryKey expression": deletes; ON on an expression of the key is refused with
    Hudi's message (in part: Hudi's refusal of a DELETE whose source has no column of the ordering field's name
    is not replayed, hoodie runs it). Hudi's message shows the expression as Spark prints it, `(s0.id + 1)`;
    hoodie's without the parentheses."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, v int, dt string",
           "type = 'cow', primaryKey = 'id', preCombineField = 'v'", "partitioned by(dt)")
    for i in (3, 2, 1):
        sql(spark, f"insert into {t} values({i}, 'a{i}', {i}0, {i}000, '2021-03-21')")
    q = f"select id,name,price,v,dt from {t}"
    with pytest.raises(SqlError, match=r"Only simple conditions of the form `t.id = s.id` are allowed on the "
                                       r"primary-key and partition path column. Found `t0.id = \(?s0.id \+ 1\)?`"):
        sql(spark, f"""merge into {t} t0 using (select 1 as id, 'a1' as name, 15 as price, 1001 as v,
                       '2021-03-21' as dt) s0 on t0.id = s0.id + 1 when matched then delete""")
    sql(spark, f"""merge into {t} t0 using (select 2 as id, 'a2' as name, 20 as price, 2000 as v,
                   '2021-03-21' as dt) s0 on t0.id = s0.id when matched then delete""")
    assert answer(spark, q) == [(1, "a1", 10.0, 1000, "2021-03-21"), (3, "a3", 30.0, 3000, "2021-03-21")]
    # Hudi then refuses a DELETE whose source has no column named `v` ("Failed to resolve ordering fields `v`
    # w/in the source-table output"); hoodie runs it: not replayed, listed as differing in docs/hudi-sql-suite.md.
    sql(spark, f"""merge into {t} t0 using (select 3 as s_id, 'a3' as s_name, 30 as s_price, 3000 as v,
                   '2021-03-21' as dt) s0 on t0.id = s0.s_id when matched then delete""")
    assert answer(spark, q) == [(1, "a1", 10.0, 1000, "2021-03-21")]


def test_merge_delete_update_insert(spark, tmp_path: Path) -> None:
    """"Test MergeInto with combination of delete update insert": the source a Spark Parquet table."""
    src, t = table_name(), table_name()
    spark.sql(f"create table {src} (id int, name string, price double, ts long, dt string) using parquet "
              f"location '{tmp_path / src.split('.')[1]}'")
    for i in range(8, 13):
        spark.sql(f"insert into {src} values({i}, 's{i}', {i}0, {2000 + i}, '2021-03-21')")
    create(spark, tmp_path, t, "id int, name string, price double, ts long, dt string",
           "primaryKey ='id', preCombineField = 'ts'", "partitioned by(dt)")
    for i in range(7, 11):
        sql(spark, f"insert into {t} values({i}, 'a{i}', {i}0, {1000 + i}, '2021-03-21')")
    sql(spark, f"""merge into {t} as t0 using {src} as s0 on t0.id = s0.id
                   when matched and s0.id = 10 then delete
                   when matched and s0.id < 10 then update set id=s0.id, name='sxx', price=s0.price*2,
                   ts=s0.ts+10000, dt=s0.dt
                   when not matched and s0.id > 10 then insert *""")
    assert answer(spark, f"select id,name,price,ts,dt from {t}") == [
        (7, "a7", 70.0, 1007, "2021-03-21"), (8, "sxx", 160.0, 12008, "2021-03-21"),
        (9, "sxx", 180.0, 12009, "2021-03-21"), (11, "s11", 110.0, 2011, "2021-03-21"),
        (12, "s12", 120.0, 2012, "2021-03-21")]
    spark.sql(f"drop table {src}")


@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_merge_hudi_to_hudi(spark, tmp_path: Path, ttype: str) -> None:
    """"Merge Hudi to Hudi" (without its incremental queries): the source a Hudi table written by hoodie."""
    src, t = table_name(), table_name()
    props = f"type ='{ttype}', primaryKey = 'id', preCombineField = '_ts'"
    cols = "id int, name string, price double, _ts long"
    create(spark, tmp_path, src, cols, props)
    create(spark, tmp_path, t, cols, props)
    q = f"select id, name, price, _ts from {t}"
    sql(spark, f"insert into {src} values(1, 'a1', 10, 1000)")
    sql(spark, f"merge into {t} t0 using {src} s0 on t0.id = s0.id when not matched then insert *")
    assert answer(spark, q) == [(1, "a1", 10.0, 1000)]
    sql(spark, f"update {src} set price = 12, _ts = 1001 where id = 1")
    sql(spark, f"""merge into {t} t0 using {src} s0 on t0.id = s0.id
                   when matched and cast(s0._ts as string) > '1000' then update set *""")
    assert answer(spark, q) == [(1, "a1", 12.0, 1001)]
    sql(spark, f"insert into {src} values(2, 'a2', 10, 1001)")
    sql(spark, f"""merge into {t} t0 using {src} s0 on t0.id = s0.id when matched then update set *
                   when not matched and s0.name = 'a2' then insert *""")
    assert answer(spark, q) == [(1, "a1", 12.0, 1001), (2, "a2", 10.0, 1001)]


def test_merge_different_types_of_precombine_field(spark, tmp_path: Path) -> None:
    """"Test Different Type of PreCombineField": string, int, bigint, timestamp and date ordering fields; an
    equal ordering value on the second MERGE still updates (the latest write wins ties)."""
    for dtype, value in [("string", "'1000'"), ("int", "1000"), ("bigint", "10000"),
                         ("timestamp", "'2021-05-20 00:00:00'"), ("date", "'2021-05-20'")]:
        t = table_name()
        b = t.split(".")[1]
        create(spark, tmp_path, t, f"id int, name string, price double, c {dtype}",
               "primaryKey ='id', preCombineField = 'c'")
        sql(spark, f"""merge into {b} using (select 1 as id, 'a1' as name, 10 as price,
                       cast({value} as {dtype}) as c, '1' as flag) s0 on s0.id = {b}.id
                       when matched and flag = '1' then update set * when not matched and flag = '1' then insert *""")
        assert answer(spark, f"select id, name, price from {t}") == [(1, "a1", 10.0)], dtype
        sql(spark, f"""merge into {b} using (select 1 as id, 'a1' as name, 10 as price,
                       cast({value} as {dtype}) as c) s0 on s0.id = {b}.id when matched then update set
                       id = s0.id, name = s0.name, price = s0.price + {b}.price, c = s0.c
                       when not matched then insert *""")
        assert answer(spark, f"select id, name, price from {t}") == [(1, "a1", 20.0)], dtype


def test_merge_null_fields(spark, tmp_path: Path) -> None:
    """"Test MereInto With Null Fields": a null of each type inserted by MERGE reads back null."""
    for dtype in ["string", "int", "bigint", "double", "float", "timestamp", "date", "decimal"]:
        t = table_name()
        create(spark, tmp_path, t, f"id int, name string, value {dtype}, ts int", "primaryKey ='id', preCombineField = 'ts'")
        sql(spark, f"""merge into {t} h0 using (select 1 as id, 'a1' as name, cast(null as {dtype}) as value,
                       1000 as ts) s0 on h0.id = s0.id when not matched then insert *""")
        assert answer(spark, f"select id, name, value, ts from {t}") == [(1, "a1", None, 1000)], dtype


def test_merge_all_kinds_of_data_type(spark, tmp_path: Path) -> None:
    """"Test MergeInto With All Kinds Of DataType": a value of each type inserted by MERGE reads back
    (compared as a string, as Hudi's test does)."""
    for dtype, value, text in [("string", "'a1'", "a1"), ("int", "10", "10"), ("bigint", "10", "10"),
                               ("double", "10.0", "10.0"), ("float", "10.0", "10.0"),
                               ("decimal(5,2)", "10.11", "10.11"), ("decimal(5,0)", "10", "10"),
                               ("timestamp", "'2021-05-20 00:00:00'", "2021-05-20 00:00:00"),
                               ("date", "'2021-05-20'", "2021-05-20")]:
        t = table_name()
        create(spark, tmp_path, t, f"id int, name string, value {dtype}, ts int", "primaryKey ='id', preCombineField = 'ts'")
        sql(spark, f"""merge into {t} h0 using (select 1 as id, 'a1' as name, cast({value} as {dtype}) as value,
                       1000 as ts) s0 on h0.id = s0.id when not matched then insert *""")
        assert answer(spark, f"select id, name, cast(value as string), ts from {t}") == [(1, "a1", text, 1000)], dtype


def test_merge_no_full_fields_source_and_cast_on(spark, tmp_path: Path) -> None:
    """"Test MergeInto with no-full fields source" (a source of the key and the ordering field only, UPDATE
    SET of one column) and "Test Merge Into with target matched columns cast-ed" (ON with the same cast on
    both sides of the key)."""
    for on, ts in [("h0.id = s0.id", 1001), ("cast(h0.id as string) = cast(s0.id as string)", 1004)]:
        t = table_name()
        create(spark, tmp_path, t, "id int, name string, value int, ts int", "primaryKey ='id', preCombineField = 'ts'")
        sql(spark, f"insert into {t} values(1, 'a1', 10, 1000)")
        sql(spark, f"""merge into {t} h0 using (select cast(1 as int) as id, {ts} as ts) s0 on {on}
                       when matched then update set h0.ts = s0.ts""")
        assert answer(spark, f"select id, name, value, ts from {t}") == [(1, "a1", 10, ts)], on


def test_merge_partial_insert(spark, tmp_path: Path) -> None:
    """"Test MergeInto with partial insert": on merge-on-read, an UPDATE SET of some columns and an INSERT of
    some columns (the others null)."""
    t = table_name()
    create(spark, tmp_path, t, "id long, name string, price double, ts long, dt string",
           "type = 'mor', primaryKey = 'id', precombineField = 'ts'", "partitioned by(dt)")
    sql(spark, f"insert into {t} select 1L, 'a1', 10, 1L, '2021-03-21'")
    sql(spark, f"""MERGE INTO {t} AS t0 USING (
                     SELECT 2L as id, 'a2' as name, 10 as price, 1L as ts, '2021-03-20' as dt UNION
                     SELECT 1L as id, 'a3' as name, 11 as price, 1L as ts, '2021-03-21' as dt) s0
                   ON s0.id = t0.id WHEN MATCHED THEN UPDATE SET price = s0.price, name = s0.name, ts = s0.ts
                   WHEN NOT MATCHED AND s0.id % 2 = 0 THEN INSERT (id, name, dt, ts) VALUES (s0.id, s0.name, s0.dt, s0.ts)""")
    assert answer(spark, f"select id, name, price, ts, dt from {t}") == [
        (1, "a3", 11.0, 1, "2021-03-21"), (2, "a2", None, 1, "2021-03-20")]


def test_merge_partial_update_and_insert(spark, tmp_path: Path) -> None:
    """"Test MergeInto with partial update and insert" (copy-on-write, as Hudi runs it; no ordering field):
    columns the UPDATE does not assign keep their values, the INSERT's unnamed columns are null."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts bigint, dt string",
           "type = 'cow', primaryKey = 'id'", "partitioned by(dt)")
    sql(spark, f"insert into {t} select 1, 'a1', 10, 1L, '2021-03-21'")
    sql(spark, f"""merge into {t} as t0 using (
                     select 2 as id, 'a2' as name, 10 as price, 2L as ts, '2021-03-20' as dt union
                     select 1 as id, 'a1_updated' as name, 11 as price, 3L as ts, '2021-03-21' as dt) s0
                   on s0.id = t0.id when matched then update set t0.id = s0.id, t0.name = s0.name
                   when not matched and s0.id % 2 = 0 then insert (id, name, dt) values(s0.id, s0.name, s0.dt)""")
    assert answer(spark, f"select id, name, price, dt from {t}") == [
        (1, "a1_updated", 10.0, "2021-03-21"), (2, "a2", None, "2021-03-20")]


@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_merge_no_schema_evolution(spark, tmp_path: Path, ttype: str) -> None:
    """"Test no schema evolution in MERGE INTO": an UPDATE SET of a column the table lacks is refused naming
    it, the schema unchanged; an INSERT * from a source with an extra column drops that column."""
    t = table_name()
    b = t.split(".")[1]
    create(spark, tmp_path, t, "id int, dt string, name string, price double, ts long",
           f"primaryKey = 'id', type = '{ttype}'", "partitioned by (dt)")
    sql(spark, f"""insert into {t} partition(dt = '2024-01-14') select 1 as id, 'a1' as name, 10 as price,
                   1000 as ts union select 2 as id, 'a2' as name, 20 as price, 1002 as ts""")
    schema = [("id", "int"), ("name", "string"), ("price", "double"), ("ts", "bigint"), ("dt", "string")]
    q = f"select id, name, price, ts, dt from {t}"
    with pytest.raises(Exception, match="new_col"):
        sql(spark, f"""merge into {b} using (
                         select 2 as _id, '2024-01-14' as dt, 'a2_new' as name, 25 as _price, 1005 as _ts, 'x' as new_col
                         union select 3 as _id, '2024-01-14' as dt, 'a3' as name, 30 as _price, 1003 as _ts, 'y' as new_col
                       ) s0 on s0._id = {b}.id when matched then update set id = s0._id, dt = s0.dt, name = s0.name,
                       price = s0._price + {b}.price, ts = s0._ts, new_col = s0.new_col""")
    assert [(f.name, f.dataType.simpleString()) for f in sql(spark, f"select * from {t}").schema.fields
            if not f.name.startswith("_hoodie")] == schema
    sql(spark, f"""merge into {b} using (select 3 as id, '2024-01-14' as dt, 'a3' as name, 30 as price,
                   1003 as ts, 'y' as new_col) s0 on s0.id = {b}.id when not matched then insert *""")
    assert [(f.name, f.dataType.simpleString()) for f in sql(spark, f"select * from {t}").schema.fields
            if not f.name.startswith("_hoodie")] == schema
    assert answer(spark, q) == [(1, "a1", 10.0, 1000, "2024-01-14"), (2, "a2", 20.0, 1002, "2024-01-14"),
                                (3, "a3", 30.0, 1003, "2024-01-14")]


def test_merge_non_existent_target_table(spark, tmp_path: Path) -> None:
    """"Test MergeInto with non existent target table": refused with TABLE_OR_VIEW_NOT_FOUND."""
    src = table_name()
    spark.sql(f"create table {src} (id int, name string, price double, ts int) using parquet "
              f"location '{tmp_path / src.split('.')[1]}'")
    spark.sql(f"insert into {src} values(1, 'a1', 10, 1000)")
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND|Table or view not found"):
        sql(spark, f"""MERGE INTO hudi_test_table AS target USING {src} AS source ON target.id = source.id
                       WHEN MATCHED THEN UPDATE SET name = source.name, ts = source.ts WHEN NOT MATCHED THEN INSERT *""")
    spark.sql(f"drop table {src}")


def test_merge_mor_with_compaction_on(spark, tmp_path: Path) -> None:
    """"Test MergeInto For MOR With Compaction On" (``hoodie.compact.inline`` in the table's properties): four
    inserts and a MERGE on merge-on-read read back the merged rows."""
    t = table_name()
    create(spark, tmp_path, t, "id int, name string, price double, ts int",
           "primaryKey ='id', type = 'mor', preCombineField = 'ts', hoodie.compact.inline = 'true'")
    for i in range(1, 5):
        sql(spark, f"insert into {t} values({i}, 'a{i}', 10, 1000)")
    q = f"select id, name, price, ts from {t}"
    assert answer(spark, q) == [(i, f"a{i}", 10.0, 1000) for i in range(1, 5)]
    sql(spark, f"""merge into {t} h0 using (select 4 as _id, 'a4' as name, 11 as _price, 1000 as ts) s0
                   on h0.id = s0._id when matched then update set id = s0._id, name = s0.name, price = s0._price,
                   ts = s0.ts""")
    assert answer(spark, q) == [(1, "a1", 10.0, 1000), (2, "a2", 10.0, 1000), (3, "a3", 10.0, 1000),
                                (4, "a4", 11.0, 1000)]


@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_merge_unresolved_columns(spark, tmp_path: Path, ttype: str) -> None:
    """"Test unresolved columns in Merge Into statement": an UPDATE SET of a target column, or from a source
    column, that does not exist is refused naming it, nothing written. Hudi's expected message is Spark's
    UNRESOLVED_COLUMN error with its list of suggestions; hoodie's own message differs in form (matched here on
    the column's name only; listed in docs/hudi-sql-suite.md)."""
    t = table_name()
    b = t.split(".")[1]
    path = create(spark, tmp_path, t, "id int, dt string, name string, price double, ts long",
           f"primaryKey = 'id', type = '{ttype}'", "partitioned by (dt)")
    sql(spark, f"""insert into {t} partition(dt = '2024-01-14') select 1 as id, 'a1' as name, 10 as price,
                   1000 as ts union select 2 as id, 'a2' as name, 20 as price, 1002 as ts""")
    assert answer(spark, f"select id, name, price, ts, dt from {t}") == [(1, "a1", 10.0, 1000, "2024-01-14"),
                                                                         (2, "a2", 20.0, 1002, "2024-01-14")]
    src = """(select 2 as _id, '2024-01-14' as dt, 'a2_new' as name, 25 as _price, 1005 as _ts union
              select 3 as _id, '2024-01-14' as dt, 'a3' as name, 30 as _price, 1003 as _ts) s0"""
    before = HoodieTable(path).timeline.instants
    for target, value in [("new_col", "s0.name"), ("name", "s0.new_col")]:
        with pytest.raises(Exception, match="new_col"):
            sql(spark, f"""merge into {b} using {src} on s0._id = {b}.id when matched then update set
                           id = s0._id, dt = s0.dt, {target} = {value}, price = s0._price + {b}.price, ts = s0._ts""")
    assert HoodieTable(path).timeline.instants == before


def test_merge_partition_not_at_end(spark, tmp_path: Path) -> None:
    """"Test partition not at end": the partition column declared mid-schema (stored last, as Hudi does), ON on
    the key and the partition column. Hudi's test asserts only that the MERGE runs; the answer checked here is
    what its statements imply."""
    t = table_name()
    b = t.split(".")[1]
    create(spark, tmp_path, t, "id int, partition string, name string, price double, ts int",
           "primaryKey ='id', preCombineField = 'ts'", "partitioned by (partition)")
    rows = [(1, "a1", 1, 100, "p1"), (11, "a1", 1, 100, "p1"), (12, "a1", 1, 100, "p1"), (13, "a1", 1, 100, "p1"),
            (2, "a2", 2, 200, "p2"), (21, "a2", 2, 200, "p2"), (22, "a2", 2, 200, "p2"), (23, "a2", 2, 200, "p2")]
    sql(spark, f"insert into {t} values " + ", ".join(f"({i}, '{n}', {p}, {ts}, '{pt}')" for i, n, p, ts, pt in rows))
    src = [(i, pt, n, 10 * int(n[1]), 1000) for i, n, _p, _ts, pt in rows] + [(3, "p3", "a3", 30, 1000),
                                                                              (4, "p1", "a4", 40, 1000)]
    union = " union ".join(f"select {i} as id, '{pt}' as partition, '{n}' as name, {p} as price, {ts} as ts"
                           for i, pt, n, p, ts in src)
    sql(spark, f"""merge into {b} using ({union}) s0 on s0.id = {b}.id and s0.partition = {b}.partition
                   when matched then update set * when not matched then insert *""")
    assert answer(spark, f"select id, name, price, ts, partition from {t}") == sorted(
        (i, n, float(p), ts, pt) for i, pt, n, p, ts in src)
