"""Hudi's Spark SQL quickstart through ``hoodie.sql``: CREATE TABLE ... USING hudi, INSERT INTO,
MERGE INTO, UPDATE, DELETE FROM, INSERT OVERWRITE, ALTER TABLE ... DROP PARTITION, SHOW PARTITIONS,
SELECT and time travel (TIMESTAMP AS OF), each statement one commit, checked after every step against a model of
Hudi's semantics and against hudi-rs."""

from __future__ import annotations

from pathlib import Path

import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql import sql
from tests.hudi_rs import read_hudi_rs

COLS = ["uuid", "rider", "fare", "city", "ts"]


def _ours(path: str) -> list[tuple]:
    t = hoodie.read_table(path, columns=COLS)
    return sorted(tuple(r[c] for c in COLS) for r in t.to_pylist())


def _theirs(path: str) -> list[tuple]:
    t = read_hudi_rs(path)
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist()) if t.num_rows else []


@pytest.mark.parametrize("table_type", ["mor"])
def test_hudi_sql_quickstart(spark, tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "trips")
    name = f"default.trips_{table_type}"
    out = sql(spark, f"""CREATE TABLE {name} (ts BIGINT, uuid STRING, rider STRING, fare DOUBLE, city STRING)
                         USING hudi PARTITIONED BY (city)
                         TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = '{table_type}')
                         LOCATION '{path}'""").collect()
    assert out[0].operation == "create"
    assert HoodieTable(path).is_mor == (table_type == "mor")
    model: dict[str, tuple] = {}

    def check(what: str) -> None:
        want = sorted(model.values())
        assert _ours(path) == want, what
        assert _theirs(path) == want, f"hudi-rs after {what}"

    def check_select(what: str) -> None:
        got = sorted(tuple(r[c] for c in COLS) for r in
                     (r.asDict() for r in sql(spark, f"SELECT {', '.join(COLS)} FROM {name}").collect()))
        assert got == sorted(model.values()), f"SELECT after {what}"
        # Plain Spark SQL on the session view (no hoodie.sql in between) sees the commit too: the
        # statement re-binds its table's views after committing.
        plain = sorted(tuple(r[c] for c in COLS) for r in
                       (r.asDict() for r in spark.sql(f"SELECT {', '.join(COLS)} FROM trips_{table_type}").collect()))
        assert plain == sorted(model.values()), f"plain spark.sql SELECT after {what}"

    r = sql(spark, f"""INSERT INTO {name} VALUES
        (1695159649087, 'u1', 'rider-A', 19.10, 'san_francisco'),
        (1695091554788, 'u2', 'rider-C', 27.70, 'san_francisco'),
        (1695046462179, 'u3', 'rider-D', 33.90, 'sao_paulo'),
        (1695332066204, 'u4', 'rider-E', 93.50, 'chennai')""").collect()[0]
    assert r.rows == 4 and r.instant
    for ts, u, rider, fare, city in [(1695159649087, "u1", "rider-A", 19.10, "san_francisco"),
                                     (1695091554788, "u2", "rider-C", 27.70, "san_francisco"),
                                     (1695046462179, "u3", "rider-D", 33.90, "sao_paulo"),
                                     (1695332066204, "u4", "rider-E", 93.50, "chennai")]:
        model[u] = (u, rider, fare, city, ts)
    first = r.instant
    check("INSERT INTO")

    r = sql(spark, f"UPDATE {name} SET fare = fare * 10 WHERE rider = 'rider-D'").collect()[0]
    assert r.rows == 1
    u, rider, fare, city, ts = model["u3"]
    model["u3"] = (u, rider, fare * 10, city, ts)
    check("UPDATE")
    check_select("UPDATE")  # the catalog's views see the new commit

    spark.createDataFrame([(1695159649099, "u1", "rider-A", 1.0, "san_francisco", "U"),
                           (1695091554788, "u2", "rider-C", 0.0, "san_francisco", "D"),
                           (1695400000000, "u5", "rider-F", 5.5, "chennai", "I")],
                          "ts long, uuid string, rider string, fare double, city string, op string") \
        .createOrReplaceTempView("changes")
    r = sql(spark, f"""MERGE INTO {name} AS t USING changes AS s ON t.uuid = s.uuid
        WHEN MATCHED AND s.op = 'D' THEN DELETE
        WHEN MATCHED THEN UPDATE SET t.fare = s.fare, t.ts = s.ts
        WHEN NOT MATCHED THEN INSERT (ts, uuid, rider, fare, city) VALUES (s.ts, s.uuid, s.rider, s.fare, s.city)
        """).collect()[0]
    assert r.note == "merged: 1 updated, 1 deleted, 1 inserted", r.note
    model["u1"] = ("u1", "rider-A", 1.0, "san_francisco", 1695159649099)
    del model["u2"]
    model["u5"] = ("u5", "rider-F", 5.5, "chennai", 1695400000000)
    check("MERGE INTO")
    assert "_hoodie_is_deleted" not in HoodieTable(path).arrow_schema().names  # a marker, not a column

    r = sql(spark, f"DELETE FROM {name} WHERE fare > 300").collect()[0]
    assert r.rows == 1
    del model["u3"]
    check("DELETE FROM")

    r = sql(spark, f"DELETE FROM {name} WHERE rider = 'nobody'").collect()[0]
    assert r.instant is None and r.note.startswith("nothing to delete")

    parts = sorted(x[0] for x in sql(spark, f"SHOW PARTITIONS {name}").collect())
    # As Hudi lists them: every partition with files, also one whose rows were all deleted.
    assert parts == ["city=chennai", "city=san_francisco", "city=sao_paulo"]

    r = sql(spark, f"ALTER TABLE {name} DROP PARTITION (city = 'chennai')").collect()[0]
    assert r.operation == "delete_partition"
    model = {k: v for k, v in model.items() if v[3] != "chennai"}
    check("ALTER TABLE DROP PARTITION")

    r = sql(spark, f"""INSERT OVERWRITE TABLE {name} PARTITION (city = 'san_francisco')
                      SELECT 1695500000000, 'u9', 'rider-Z', 9.9""").collect()[0]
    assert r.operation == "insert_overwrite"
    model = {k: v for k, v in model.items() if v[3] != "san_francisco"}
    model["u9"] = ("u9", "rider-Z", 9.9, "san_francisco", 1695500000000)
    check("INSERT OVERWRITE ... PARTITION")
    check_select("INSERT OVERWRITE ... PARTITION")

    # Time travel to the first commit, in Hudi's SQL: TIMESTAMP AS OF.
    old = sql(spark, f"SELECT uuid, fare FROM {name} TIMESTAMP AS OF '{first}' WHERE fare > 20").collect()
    assert sorted((r.uuid, r.fare) for r in old) == [("u2", 27.7), ("u3", 33.9), ("u4", 93.5)]
    with pytest.raises(Exception, match="record key or partition column"):
        sql(spark, f"UPDATE {name} SET uuid = 'x'")
    # A lower ordering value would lose to the stored record on read: refused, nothing written.
    before = len(HoodieTable(path).timeline.completed_writes())
    with pytest.raises(Exception, match="ordering field ts below its stored value"):
        sql(spark, f"UPDATE {name} SET ts = 0 WHERE uuid = 'u9'")
    assert len(HoodieTable(path).timeline.completed_writes()) == before
    check("a refused UPDATE")
    spark.createDataFrame([(1, "u9", 1.0), (2, "u9", 2.0)], "ts long, uuid string, fare double") \
        .createOrReplaceTempView("dups")
    with pytest.raises(Exception, match="several source rows match one target row"):
        sql(spark, f"MERGE INTO {name} AS t USING dups AS s ON t.uuid = s.uuid WHEN MATCHED THEN UPDATE SET t.fare = s.fare")
    assert len(HoodieTable(path).timeline.completed_writes()) == before
    rows = sql(spark, f"CALL show_commits(table => '{name}', limit => 20)").collect()
    assert len(rows) >= 6


def test_create_table_as_select_and_statements_on_other_tables(spark, tmp_path: Path) -> None:
    """CTAS makes a hoodie table (bulk_insert) registered in the catalog; a statement on a table that
    is not a hoodie table goes to Spark unchanged."""
    path = str(tmp_path / "ctas")
    r = sql(spark, f"""CREATE TABLE default.ctas_cow USING hudi TBLPROPERTIES (primaryKey = 'id', type = 'cow')
                       LOCATION '{path}' AS SELECT id, CAST(id * 2 AS BIGINT) AS v FROM range(5)""").collect()[0]
    assert r.operation == "bulk_insert" and r.rows == 5
    assert sorted(read_hudi_rs(path).column("v").to_pylist()) == [0, 2, 4, 6, 8]
    assert sql(spark, "SELECT count(*) AS n FROM default.ctas_cow").collect()[0].n == 5
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW plain AS SELECT 1 AS a")
    assert sql(spark, "SELECT a FROM plain").collect()[0].a == 1
