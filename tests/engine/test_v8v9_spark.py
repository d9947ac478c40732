"""Table services on a Hudi 1.1 (version 9) table through Spark: compaction on Spark executors, clean,
partition TTL, delete_partition and insert_overwrite from ``hoodie.spark.write``, each read back
through Spark (``hoodie.spark.read`` and ``format("hoodie")``) as the pure-Python reader and hudi-rs
read it."""

from __future__ import annotations

from pathlib import Path

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql import sql
from hoodie.services.metadata import validate_metadata_table
from tests.hudi_rs import read_hudi_rs

COLS = ["id", "day", "ts", "v"]


def _rows_py(path: str) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in hoodie.read_table(path, columns=COLS).to_pylist())


def _rows_df(df) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in (x.asDict() for x in df.select(*COLS).collect()))


def test_services_on_a_version_9_table_through_spark(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "v9s", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "day", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "9",
            "hoodie.metadata.enable": "true", "hoodie.datasource.write.hive_style_partitioning": "true"}
    days = ["2020-01-01", "2020-01-02", "2999-01-01"]
    df = spark.createDataFrame([(i, days[i % 3], 1, f"a{i}") for i in range(12)], "id long, day string, ts long, v string")
    hs.write(df, path, {**opts, "hoodie.datasource.write.operation": "insert"})
    up = spark.createDataFrame([(i, days[i % 3], 2, f"b{i}") for i in range(0, 12, 2)],
                               "id long, day string, ts long, v string")
    hs.write(up, path, {**opts, "hoodie.datasource.write.operation": "upsert"})

    def check(what: str) -> None:
        want = _rows_py(path)
        assert _rows_df(hs.read(spark, path)) == want, what
        got = read_hudi_rs(path)
        assert sorted(tuple(r[c] for c in COLS) for r in got.select(COLS).to_pylist()) == want, f"hudi-rs: {what}"
        assert validate_metadata_table(HoodieTable(path)).equal, what

    check("the upsert")
    r = sql(spark, f"CALL run_compaction(op => 'scheduleAndExecute', path => '{path}', options => 'hoodie.compact.inline.max.delta.commits=1')").collect()
    assert any(x.state == "COMPLETED" for x in r), r  # executed on Spark executors
    t = HoodieTable(path)
    assert t.timeline.completed().by_actions("commit").last().completion  # layout 2, with completion time
    ro = _rows_df(hs.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"}))
    assert ro == _rows_py(path)  # everything compacted: read-optimized = snapshot
    check("compaction on Spark")
    sql(spark, f"CALL run_clean(table => '{path}', clean_policy => 'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1)")
    check("clean")
    over = spark.createDataFrame([(100, "2999-01-01", 5, "c")], "id long, day string, ts long, v string")
    hs.write(over, path, {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    check("insert_overwrite")
    rows = sql(spark, f"CALL run_ttl(table => '{path}', ttl_policy => 'KEEP_BY_EVENT_TIME', retain_days => 30, "
               "options => 'hoodie.partition.ttl.strategy.event.time.format=yyyy-MM-dd')").collect()
    assert {x.partition for x in rows if x.status == "deleted"} == {"day=2020-01-01", "day=2020-01-02"}, rows
    check("partition TTL")
    assert _rows_df(spark.read.format("hoodie").load(path)) == _rows_py(path)
    assert {x[2] for x in _rows_py(path)} and all(r[1] == "2999-01-01" for r in _rows_py(path))
