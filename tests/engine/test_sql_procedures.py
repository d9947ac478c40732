"""SQL CALL procedures through hoodie.sql on Spark: TTL (Hudi's run_ttl and the RFC's
managePartitionTTL), compaction, commits, clean, rollback and freshness; names resolved through
the catalog or given as a base path."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql import SqlError
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark

OPTS = {
    "hoodie.table.name": "sqlt", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "product",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.clean.automatic": "false",
}
OLD = "19700101000000000"


def _table(path: str) -> None:
    """product=1 and product=2 written in 1970, product=3 written now (upstream's TTL test shape)."""
    for i, (product, instant) in enumerate([(1, OLD), (2, "19700101000001000"), (3, None)]):
        data = pa.table({"id": pa.array([i * 10 + k for k in range(10)], pa.int64()), "product": [product] * 10,
                         "ts": pa.array([1] * 10, pa.int64())})
        write_arrow(path, data, {**OPTS, "hoodie.datasource.write.operation": "insert"}, instant=instant)


def test_run_ttl_by_table_name(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _table(path)
    spark.sql(f"CREATE OR REPLACE VIEW sql_ttl_t TBLPROPERTIES ('hoodie.base.path' = '{path}') "
              "AS SELECT raise_error('read it with spark.read.format(\"hoodie\")') AS x")
    with pytest.raises(Exception, match="read it with"):
        spark.sql("SELECT * FROM sql_ttl_t").collect()
    df = hoodie.sql(spark, "CALL run_ttl(table => 'sql_ttl_t', retain_days => 10)")
    assert df.columns == ["deleted_partitions", "partition", "status", "reason"]
    assert sorted(r[0] for r in df.collect()) == ["product=1", "product=2"]
    assert hoodie.read_table(path).num_rows == 10 == read_hudi_rs(path).num_rows


def test_manage_partition_ttl_with_predicate(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _table(path)
    df = hoodie.sql(spark, f"CALL managePartitionTTL(basePath => '{path}', strategy => 'KEEP_BY_TIME', "
                           "daysRetain => '10', predicate => 'product = 1')")
    assert [r[0] for r in df.collect()] == ["product=1"]
    assert hoodie.read_table(path).num_rows == 20


def test_compaction_commits_clean_rollback_freshness(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _table(path)
    write_arrow(path, pa.table({"id": pa.array([20, 21], pa.int64()), "product": [3, 3],
                                "ts": pa.array([2, 2], pa.int64())}),
                {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    before = sorted(hoodie.read_table(path, columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"])
    sched = hoodie.sql(spark, f"CALL run_compaction(op => 'schedule', basePath => '{path}', "
                              "options => 'hoodie.compact.inline.max.delta.commits=1')").collect()
    assert len(sched) == 1 and sched[0]["state"] == "REQUESTED"
    ran = hoodie.sql(spark, f"CALL run_compaction('run', null, '{path}')").collect()
    assert [r["timestamp"] for r in ran] == [sched[0]["timestamp"]]
    assert sorted(hoodie.read_table(path, columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == before
    shown = hoodie.sql(spark, f"CALL show_compaction(basePath => '{path}')").collect()
    assert shown[0]["state"] == "COMPLETED"
    commits = hoodie.sql(spark, f"CALL show_commits(basePath => '{path}', limit => 2)").collect()
    assert [c["action"] for c in commits][0] == "commit"
    fresh = hoodie.sql(spark, f"CALL show_freshness(basePath => '{path}')")
    assert fresh.columns[:2] == ["threshold_epoch_ms", "threshold"]
    last = HoodieTable(path).timeline.completed_writes().last().timestamp
    write_arrow(path, pa.table({"id": pa.array([20], pa.int64()), "product": [3], "ts": pa.array([9], pa.int64())}),
                {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    newest = HoodieTable(path).timeline.completed_writes().last().timestamp
    assert newest != last
    assert hoodie.sql(spark, f"CALL rollback_to_instant(basePath => '{path}', instant_time => '{newest}')").collect()[0][0]
    assert sorted(hoodie.read_table(path, columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == before
    cleaned = hoodie.sql(spark, f"CALL run_clean(basePath => '{path}', clean_policy => 'KEEP_LATEST_FILE_VERSIONS', "
                                "file_versions_retained => 1)").collect()
    assert cleaned and cleaned[0]["total_files_deleted"] > 0
    assert sorted(hoodie.read_table(path, columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == before


def test_errors_name_the_argument(spark) -> None:
    with pytest.raises(SqlError, match="'retain_days' of run_ttl must be int"):
        hoodie.sql(spark, "CALL run_ttl(basePath => '/x', retain_days => 'ten')")
    with pytest.raises(SqlError, match="unknown procedure"):
        hoodie.sql(spark, "CALL nope()")
    assert hoodie.sql(spark, "SELECT 1 AS one").collect()[0]["one"] == 1


def test_inline_compaction_after_spark_writes(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2",
         "hoodie.datasource.write.operation": "upsert"}
    for step in range(3):
        df = spark.createDataFrame([(i, i % 2, step) for i in range(20)], "id long, product int, ts long")
        hs.write(df, path, o)
    t = HoodieTable(path)
    compactions = [i for i in t.timeline.completed().instants if t.timeline.is_compaction_commit(i)]
    assert compactions, "inline compaction ran after the second delta commit"
    assert sorted(hoodie.read_table(path, columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "ts": 2} for i in range(20)]
    assert read_hudi_rs(path).num_rows == 20


def test_unqualified_table_name_behind_the_attach_session_view(spark, tmp_path: Path) -> None:
    """`table => 'hudi_table'` in the current database resolves to the registered table although
    attach made a session view of the same name (it carries no table properties)."""
    from hoodie.catalog import register_table

    path = str(tmp_path / "t")
    _table(path)
    spark.sql("CREATE DATABASE IF NOT EXISTS sql_unq")
    spark.sql("USE sql_unq")
    try:
        register_table(spark, "hudi_table", path)  # attach: session views hudi_table, hudi_table_ro
        assert spark.sql("SELECT count(*) AS n FROM hudi_table").collect()[0]["n"] == 30
        df = hoodie.sql(spark, "CALL managePartitionTTL(table => 'hudi_table', strategy => 'KEEP_BY_TIME', "
                               "daysRetain => 10)")
        assert sorted(r[0] for r in df.collect()) == ["product=1", "product=2"]
        assert spark.sql("SELECT count(*) AS n FROM hudi_table").collect()[0]["n"] == 10
        commits = hoodie.sql(spark, "CALL show_commits(table => 'hudi_table_ro', limit => 1)").collect()
        assert commits[0]["action"] == "replacecommit"
    finally:
        spark.sql("USE default")
        for v in ("hudi_table", "hudi_table_ro"):
            spark.catalog.dropTempView(v)


def test_show_commits_positional_path_as_documented(spark, tmp_path: Path) -> None:
    """`CALL show_commits('/data/t', 5)` (hoodie.sql's docstring): Hudi's positional order
    (table, limit), the table given as a base path."""
    path = str(tmp_path / "t")
    _table(path)
    rows = hoodie.sql(spark, f"CALL show_commits('{path}', 2)").collect()
    assert [r["commit_time"] for r in rows] == [i.timestamp for i in
                                                reversed(HoodieTable(path).timeline.completed_writes().instants)][:2]
    newest = rows[0]["commit_time"]
    assert hoodie.sql(spark, f"CALL rollback_to_instant('{path}', '{newest}')").collect()[0][0]
    assert hoodie.read_table(path).num_rows == 20


def test_metadata_table_procedures(spark, tmp_path: Path) -> None:
    """create, show partitions and files, validate (differences only, or every file), delete."""
    path = str(tmp_path / "t")
    _table(path)
    with pytest.raises(SqlError, match="no usable metadata table.*create_metadata_table"):
        hoodie.sql(spark, f"CALL show_metadata_table_partitions(path => '{path}')").collect()
    assert "created the metadata table" in hoodie.sql(
        spark, f"CALL create_metadata_table(path => '{path}')").collect()[0].result
    parts = [r.partition for r in hoodie.sql(spark, f"CALL show_metadata_table_partitions(path => '{path}')").collect()]
    assert parts == ["product=1", "product=2", "product=3"]
    files = hoodie.sql(spark, f"CALL show_metadata_table_files(path => '{path}', partition => 'product=3')").collect()
    assert len(files) == 1 and files[0].file_path.startswith("product=3/") and files[0].size > 0
    assert hoodie.sql(spark, f"CALL validate_metadata_table_files(path => '{path}')").collect() == []
    every = hoodie.sql(spark, f"CALL validate_metadata_table_files(path => '{path}', verbose => true)").collect()
    assert len(every) == 3 and all(r.is_present_in_fs and r.is_present_in_metadata for r in every)
    Path(path, files[0].file_path).unlink()  # behind hoodie's back
    (diff,) = hoodie.sql(spark, f"CALL validate_metadata_table_files(path => '{path}')").collect()
    assert diff.file_name == files[0].file_path.split("/")[1] and diff.is_present_in_metadata
    assert not diff.is_present_in_fs
    assert "deleted the metadata table" in hoodie.sql(
        spark, f"CALL delete_metadata_table(path => '{path}')").collect()[0].result
    assert not HoodieTable(path).has_metadata_table


def test_savepoint_and_restore_through_sql(spark, tmp_path: Path) -> None:
    """create_savepoint, show_savepoints, show_fsview_latest and rollback_to_savepoint as SQL calls; the
    restored table reads the savepoint's rows (hoodie and hudi-rs), and a refusal is a row saying why."""
    path = str(tmp_path / "t")
    _table(path)
    sp = HoodieTable(path).timeline.completed_writes().last().timestamp
    before = sorted(hoodie.read_table(path, columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"])
    made = hoodie.sql(spark, f"CALL create_savepoint('{path}', '{sp}', 'ops', 'before the fix')").collect()
    assert made[0]["create_savepoint_result"] and made[0]["savepoint_time"] == sp
    shown = hoodie.sql(spark, f"CALL show_savepoints(path => '{path}')").collect()
    assert [(r["savepoint_time"], r["savepointed_by"]) for r in shown] == [(sp, "ops")]
    write_arrow(path, pa.table({"id": pa.array([20, 99], pa.int64()), "product": [3, 3],
                                "ts": pa.array([5, 5], pa.int64())}),
                {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    view = hoodie.sql(spark, f"CALL show_fsview_latest(path => '{path}', partition_path => 'product=3')").collect()
    assert {r["partition"] for r in view} == {"product=3"} and sum(r["num_delta_files"] for r in view) == 1
    refused = hoodie.sql(spark, f"CALL rollback_to_instant(basePath => '{path}', instant_time => '{sp}')").collect()
    assert not refused[0]["rollback_result"] and "savepointed" in refused[0]["message"]
    done = hoodie.sql(spark, f"CALL rollback_to_savepoint(table => '{path}', instant_time => '{sp}')").collect()
    assert done[0]["rollback_savepoint_result"] and done[0]["restore_instant"]
    assert sorted(hoodie.read_table(path, columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == before
    assert sorted(read_hudi_rs(path).select(["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == before
