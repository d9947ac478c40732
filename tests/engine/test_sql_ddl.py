"""Hudi's DDL on registered hoodie tables through ``hoodie.sql``: DROP TABLE (managed tables lose their data
folder, external ones keep it, PURGE deletes it), ALTER TABLE RENAME TO, SET/UNSET TBLPROPERTIES, the
refusal of ADD COLUMNS, and the ``hudi_table_changes`` table-valued function (incremental reads; ``cdc``
refused). One table per test, written with INSERT INTO and read back with hudi-rs."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.interfaces.python_io import write_arrow
from hoodie.format.table import HoodieTable
from hoodie.interfaces.catalog import table_properties
from hoodie.interfaces.sql import SqlError
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark


def _create(spark, name: str, location: str | None = None) -> str:
    loc = f"LOCATION '{location}'" if location else ""
    hoodie.sql(spark, f"CREATE TABLE {name} (id bigint, v string, p string) USING hudi PARTITIONED BY (p) "
                      f"TBLPROPERTIES (primaryKey = 'id') {loc}")
    base = _prop(spark, name.split(".")[-1], "hoodie.base.path")
    # The rows are written in this process (no Spark job): the statements under test are the DDL.
    write_arrow(base, pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"], "p": ["x", "y"]}),
                {"hoodie.table.name": name.split(".")[-1], "hoodie.datasource.write.operation": "insert"})
    return base


def _prop(spark, name: str, key: str) -> str:
    return table_properties(spark, f"`default`.`{name}`").get(key)


def _names(spark) -> set[str]:
    return {t.name for t in spark.catalog.listTables("default")}


def test_drop_table_managed_external_purge(spark, tmp_path: Path) -> None:
    managed = _create(spark, "ddl_managed")
    assert managed.startswith(spark.conf.get("spark.sql.warehouse.dir").replace("file:", ""))
    assert read_hudi_rs(managed).num_rows == 2
    r = hoodie.sql(spark, "DROP TABLE ddl_managed").collect()[0]
    assert "deleted its data folder" in r.note and not os.path.exists(managed)
    assert not {"ddl_managed", "ddl_managed_ro"} & _names(spark)

    ext = str(tmp_path / "ext")
    _create(spark, "default.ddl_ext", ext)
    sibling = tmp_path / "sibling.txt"
    sibling.write_text("not the table's")
    r = hoodie.sql(spark, "DROP TABLE IF EXISTS default.ddl_ext").collect()[0]
    assert "its data stays" in r.note and read_hudi_rs(ext).num_rows == 2
    assert not {"ddl_ext", "ddl_ext_ro"} & _names(spark)
    hoodie.sql(spark, f"CREATE TABLE default.ddl_ext USING hudi LOCATION '{ext}'")  # register it again
    hoodie.sql(spark, "DROP TABLE default.ddl_ext PURGE").collect()
    assert not os.path.exists(ext) and sibling.read_text() == "not the table's"  # only the table's own folder
    hoodie.sql(spark, "DROP TABLE IF EXISTS default.ddl_ext")  # gone: Spark's IF EXISTS
    with pytest.raises(SqlError, match="read-optimized entry of default.ddl_ro"):
        _create(spark, "default.ddl_ro", str(tmp_path / "ro"))
        hoodie.sql(spark, "DROP TABLE default.ddl_ro_ro")
    hoodie.sql(spark, "DROP TABLE default.ddl_ro")
    assert os.path.exists(tmp_path / "ro")

    # Never outside the table's own folder: a managed entry naming the warehouse, or a folder without a table.
    warehouse = spark.conf.get("spark.sql.warehouse.dir").replace("file:", "")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "keep.txt").write_text("x")
    for where in (warehouse, str(plain)):
        spark.sql(f"CREATE OR REPLACE VIEW default.ddl_bad TBLPROPERTIES ('hoodie.base.path' = '{where}', "
                  "'hoodie.catalog.managed' = 'true') AS SELECT 1 AS x")
        with pytest.raises(SqlError, match="its data folder is not deleted: .*(warehouse|no hoodie table).*Nothing"):
            hoodie.sql(spark, "DROP TABLE default.ddl_bad")
        assert "ddl_bad" in _names(spark)
    assert (plain / "keep.txt").exists() and os.path.isdir(warehouse)
    spark.sql("DROP VIEW default.ddl_bad")


def test_rename_and_table_properties(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _create(spark, "default.ddl_old", path)
    r = hoodie.sql(spark, "ALTER TABLE default.ddl_old RENAME TO default.ddl_new").collect()[0]
    assert r.operation == "rename"
    assert {"ddl_new", "ddl_new_ro"} <= _names(spark) and not {"ddl_old", "ddl_old_ro"} & _names(spark)
    assert HoodieTable(path).name == "ddl_new"
    hoodie.sql(spark, "INSERT INTO ddl_new VALUES (3, 'c', 'x')")
    assert sorted(read_hudi_rs(path).column("id").to_pylist()) == [1, 2, 3]

    # A table-level SQL option goes to hoodie.properties, where INSERT OVERWRITE reads it.
    hoodie.sql(spark, "ALTER TABLE ddl_new SET TBLPROPERTIES ('hoodie.datasource.overwrite.mode' = 'dynamic', "
                      "'team' = 'ops')")
    assert HoodieTable(path).props["hoodie.datasource.overwrite.mode"] == "dynamic"
    assert _prop(spark, "ddl_new", "team") == "ops"
    r = hoodie.sql(spark, "INSERT OVERWRITE ddl_new SELECT 9, 'z', 'y'").collect()[0]
    assert r.operation == "insert_overwrite"  # dynamic: only p=y replaced
    assert sorted(read_hudi_rs(path).column("id").to_pylist()) == [1, 3, 9]
    hoodie.sql(spark, "ALTER TABLE ddl_new UNSET TBLPROPERTIES ('hoodie.datasource.overwrite.mode', 'team')")
    assert "hoodie.datasource.overwrite.mode" not in HoodieTable(path).props
    with pytest.raises(SqlError, match="not set; use UNSET TBLPROPERTIES IF EXISTS"):
        hoodie.sql(spark, "ALTER TABLE ddl_new UNSET TBLPROPERTIES ('team')")
    hoodie.sql(spark, "ALTER TABLE ddl_new UNSET TBLPROPERTIES IF EXISTS ('team')")
    before = dict(HoodieTable(path).props)
    for key in ("primaryKey", "hoodie.table.recordkey.fields", "type"):
        with pytest.raises(SqlError, match="own configuration.*AS SELECT \\* FROM default.ddl_new"):
            hoodie.sql(spark, f"ALTER TABLE ddl_new SET TBLPROPERTIES ('{key}' = 'v')")
    with pytest.raises(SqlError, match="do not read hoodie.keep.max.commits from the table: pass it as a write"):
        hoodie.sql(spark, "ALTER TABLE ddl_new SET TBLPROPERTIES ('hoodie.keep.max.commits' = '10')")
    n_commits = len(HoodieTable(path).timeline.completed_writes())
    with pytest.raises(SqlError, match="has a column 'V' already"):
        hoodie.sql(spark, "ALTER TABLE ddl_new ADD COLUMNS (w string, V int)")
    with pytest.raises(SqlError, match="must be nullable"):
        hoodie.sql(spark, "ALTER TABLE ddl_new ADD COLUMNS (w string NOT NULL)")
    with pytest.raises(SqlError, match="hoodie adds columns at the end"):
        hoodie.sql(spark, "ALTER TABLE ddl_new ADD COLUMNS (w string FIRST)")
    assert HoodieTable(path).props == before  # nothing was changed by the refusals
    assert len(HoodieTable(path).timeline.completed_writes()) == n_commits

    # hudi_table_changes: the incremental read after begin; cdc refused.
    commits = [r.commit_time for r in hoodie.sql(spark, f"CALL show_commits(table => '{path}')").collect()]
    first = commits[-1]
    got = hoodie.sql(spark, f"SELECT id FROM hudi_table_changes('ddl_new', 'latest_state', '{first}') ORDER BY id")
    assert [x.id for x in got.collect()] == [3, 9]
    got = hoodie.sql(spark, "SELECT count(*) AS n FROM hudi_table_changes('default.ddl_new', 'latest_state', "
                            "'earliest')").collect()[0]
    assert got.n == 3
    got = hoodie.sql(spark, f"SELECT id FROM hudi_table_changes('{path}', 'latest_state', '{first}', '{commits[-2]}')")
    assert [x.id for x in got.collect()] == [3]
    with pytest.raises(SqlError, match="'latest_state', 'earliest'\\): the latest state"):
        hoodie.sql(spark, "SELECT * FROM hudi_table_changes('ddl_new', 'cdc', 'earliest')")

    # ADD COLUMNS (Hudi's schema evolution example): a commit without records whose schema has the columns.
    r = hoodie.sql(spark, "ALTER TABLE ddl_new ADD COLUMNS (ext0 string, ext1 int COMMENT 'n')").collect()[0]
    assert r.operation == "add columns" and r.instant
    table = HoodieTable(path)
    assert table.arrow_schema(with_meta=False).names == ["id", "v", "p", "ext0", "ext1"]
    meta = table.timeline.commit_metadata(table.timeline.completed_writes().last())
    assert '"ext1"' in meta.schema and meta.operation_type == "ALTER_SCHEMA"  # Hudi's schema commit
    hoodie.sql(spark, "INSERT INTO ddl_new VALUES (4, 'd', 'x', 'e', 7)")
    got = sorted(tuple(x) for x in hoodie.sql(spark, "SELECT id, ext0, ext1 FROM ddl_new").collect())
    assert got == [(1, None, None), (3, None, None), (4, "e", 7), (9, None, None)]
    theirs = read_hudi_rs(path)
    assert sorted(zip(theirs.column("id").to_pylist(), theirs.column("ext1").to_pylist())) == \
        [(1, None), (3, None), (4, 7), (9, None)]
    hoodie.sql(spark, "DROP TABLE ddl_new")
    assert read_hudi_rs(path).num_rows == 4  # external: kept


@pytest.mark.slow
def test_rename_of_a_managed_table_moves_its_folder(spark) -> None:
    """Spark's rule for managed tables: the folder follows the name (default-run counterpart of the rename:
    test_rename_and_table_properties, an external table)."""
    managed = _create(spark, "ddl_mold")
    hoodie.sql(spark, "ALTER TABLE ddl_mold RENAME TO ddl_mnew")
    moved = _prop(spark, "ddl_mnew", "hoodie.base.path")
    assert not os.path.exists(managed) and moved.endswith("/ddl_mnew") and read_hudi_rs(moved).num_rows == 2
    assert HoodieTable(moved).name == "ddl_mnew"
    hoodie.sql(spark, "DROP TABLE ddl_mnew")
    assert not os.path.exists(moved)
