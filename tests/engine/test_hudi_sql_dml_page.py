"""Hudi's SQL DML page (hudi.apache.org/docs/sql_dml, 0.14 to 1.1): its tables and its INSERT INTO, UPDATE,
MERGE INTO and DELETE FROM examples run as written through ``hoodie.sql``; after every statement each table
equals a model of what Hudi documents, read back by hoodie and by hudi-rs."""

from __future__ import annotations

from pathlib import Path

import pytest

import hoodie
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark


def _rows(rows: list[dict], cols: list[str]) -> list[tuple]:
    return sorted(tuple(r[c] for c in cols) for r in rows)


def test_hudi_sql_dml_page_examples(spark, tmp_path: Path) -> None:
    tables = {"hudi_cow_nonpcf_tbl": (["uuid", "name", "price"], {}),
              "hudi_mor_tbl": (["id", "name", "price", "ts"], {}),
              "hudi_cow_pt_tbl": (["id", "name", "ts", "dt", "hh"], {})}
    paths = {t: str(tmp_path / t) for t in tables}

    def run(stmt: str) -> None:
        hoodie.sql(spark, stmt).collect()

    def check(what: str, through_sql: bool = False) -> None:
        for t, (cols, model) in tables.items():
            want = sorted(model.values())
            if through_sql:  # once, at the end: a SELECT through hoodie.sql costs a Spark job per table
                got = _rows([r.asDict() for r in hoodie.sql(spark, f"SELECT {', '.join(cols)} FROM {t}").collect()],
                            cols)
                assert got == want, f"{t} after {what}"
            assert _rows(hoodie.read_table(paths[t]).to_pylist(), cols) == want, f"{t} (read_table) after {what}"
            theirs = read_hudi_rs(paths[t])
            assert (_rows(theirs.to_pylist(), cols) if theirs.num_rows else []) == want, f"{t} (hudi-rs) after {what}"

    run(f"""CREATE TABLE hudi_cow_nonpcf_tbl (uuid INT, name STRING, price DOUBLE) USING hudi
            TBLPROPERTIES (primaryKey = 'uuid') LOCATION '{paths["hudi_cow_nonpcf_tbl"]}'""")
    run(f"""CREATE TABLE hudi_mor_tbl (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi
            TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts') LOCATION '{paths["hudi_mor_tbl"]}'""")
    run(f"""CREATE TABLE hudi_cow_pt_tbl (id BIGINT, name STRING, ts BIGINT, dt STRING, hh STRING) USING hudi
            TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'ts') PARTITIONED BY (dt, hh)
            LOCATION '{paths["hudi_cow_pt_tbl"]}'""")
    nonpcf, mor, pt = (tables[t][1] for t in tables)

    # Insert Into
    run("INSERT INTO hudi_cow_nonpcf_tbl SELECT 1, 'a1', 20")
    nonpcf[1] = (1, "a1", 20.0)
    run("INSERT INTO hudi_mor_tbl SELECT 1, 'a1', 20, 1000")
    mor[1] = (1, "a1", 20.0, 1000)
    run("INSERT INTO hudi_cow_pt_tbl PARTITION(dt = '2021-12-09', hh='11') SELECT 2, 'a2', 1000")
    pt[2] = (2, "a2", 1000, "2021-12-09", "11")
    run("INSERT INTO hudi_cow_pt_tbl PARTITION(dt, hh) SELECT 1 AS id, 'a1' AS name, 1000 AS ts, "
        "'2021-12-09' AS dt, '10' AS hh")
    pt[1] = (1, "a1", 1000, "2021-12-09", "10")
    check("INSERT INTO")

    # Update
    run("UPDATE hudi_mor_tbl SET price = price * 2, ts = 1111 WHERE id = 1")
    mor[1] = (1, "a1", 40.0, 1111)
    run("UPDATE hudi_cow_pt_tbl SET name = 'a1_1', ts = 1001 WHERE id = 1")
    pt[1] = (1, "a1_1", 1001, "2021-12-09", "10")
    run("UPDATE hudi_cow_pt_tbl SET ts = 1001 WHERE name = 'a2'")  # by a non-key field
    pt[2] = (2, "a2", 1001, "2021-12-09", "11")
    check("UPDATE")

    # Merge Into: a source table, then a subquery with an explicit column list
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW merge_source AS "
              "SELECT * FROM VALUES (1, 'a1_new', 22.22, 1200), (2, 'new_a2', 33.33, 2000) AS t(id, name, price, ts)")
    run("""MERGE INTO hudi_mor_tbl AS target USING merge_source AS source ON target.id = source.id
           WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    mor[1] = (1, "a1_new", 22.22, 1200)
    mor[2] = (2, "new_a2", 33.33, 2000)
    run("""MERGE INTO hudi_cow_pt_tbl AS target
           USING (SELECT 1 AS id, 'a1' AS name, 10000 AS ts, '2021-12-09' AS dt, '10' AS hh) source
           ON target.id = source.id
           WHEN MATCHED THEN UPDATE SET id = source.id, name = source.name, ts = source.ts, dt = source.dt, hh = source.hh
           WHEN NOT MATCHED THEN INSERT (id, name, ts, dt, hh) VALUES (source.id, source.name, source.ts, source.dt, source.hh)""")
    pt[1] = (1, "a1", 10000, "2021-12-09", "10")
    check("MERGE INTO")

    # Delete From
    run("DELETE FROM hudi_cow_nonpcf_tbl WHERE uuid = 1")
    nonpcf.clear()
    run("DELETE FROM hudi_mor_tbl WHERE id % 2 = 0")
    del mor[2]
    run("DELETE FROM hudi_cow_pt_tbl WHERE name = 'a1'")
    del pt[1]
    check("DELETE FROM", through_sql=True)
