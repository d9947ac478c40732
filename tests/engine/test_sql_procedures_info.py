"""Hudi's read-only procedures (help, show_table_properties, show_timeline, show_commits_metadata, ...), the
``system.`` prefix, the refusal of every Hudi procedure hoodie does not have, and Hudi's documented SQL
that used to fail (a quoted SET value, unaliased literals in INSERT OVERWRITE, TIMESTAMP AS OF a date),
through ``hoodie.sql`` on one small table per test."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.table import HoodieTable
from hoodie.interfaces.procedures_unsupported import HUDI_PROCEDURES, UNSUPPORTED
from hoodie.interfaces.sql import PROCEDURES, SqlError
from hoodie.services.rollback.operation import rollback
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark

OPTS = {
    "hoodie.table.name": "info", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false",
}


def _rows(ids: list[int], p: int, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([p] * len(ids), pa.int32()),
                     "ts": pa.array([ts] * len(ids), pa.int64())})


def _table(path: str) -> list[str]:
    """Two partitions inserted, an upsert (log files), a third write rolled back: the instants."""
    a = write_arrow(path, pa.concat_tables([_rows([1, 2, 3], 1, 1), _rows([4, 5], 2, 1)]),
                    {**OPTS, "hoodie.datasource.write.operation": "insert"})
    b = write_arrow(path, _rows([1, 2], 1, 2), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    c = write_arrow(path, _rows([9], 2, 3), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    rollback(path, c)
    return [a, b, c]


def _call(spark, text: str) -> list[dict]:
    return [r.asDict() for r in hoodie.sql(spark, text).collect()]


def test_read_only_procedures_answer_from_the_timeline_without_spark_jobs(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    a, b, c = _table(path)
    table = HoodieTable(path)
    sc = spark.sparkContext
    sc.setJobGroup("hoodie-info", "metadata procedures")
    try:
        # Hudi's docs write CALL system.<name>: the prefix means nothing.
        assert _call(spark, f"CALL system.show_commits(table => '{path}', limit => 10)") == \
            _call(spark, f"CALL show_commits(table => '{path}', limit => 10)")
        commits = _call(spark, f"CALL show_commits(table => '{path}')")
        assert [r["commit_time"] for r in commits] == [b, a]  # c was rolled back

        props = _call(spark, f"CALL show_table_properties(table => '{path}', limit => 100)")
        assert [(r["key"], r["value"]) for r in props] == sorted(table.props.items())
        assert len(_call(spark, f"CALL show_table_properties('{path}')")) == min(10, len(table.props))

        meta = _call(spark, f"CALL show_commits_metadata(table => '{path}')")
        assert list(meta[0]) == ["commit_time", "action", "partition", "file_id", "previous_commit", "num_writes",
                                 "num_inserts", "num_deletes", "num_update_writes", "total_errors", "total_log_blocks",
                                 "total_corrupt_logblocks", "total_rollback_blocks", "total_log_records",
                                 "total_updated_records_compacted", "total_bytes_written"]
        # Per commit, the files' rows add up to show_commits' totals (two views of one metadata).
        for c_row in commits:
            mine = [m for m in meta if m["commit_time"] == c_row["commit_time"]]
            assert sum(m["num_writes"] for m in mine) == c_row["total_records_written"]
            assert sum(m["total_bytes_written"] for m in mine) == c_row["total_bytes_written"]
            assert len({m["partition"] for m in mine}) == c_row["total_partitions_written"]
        assert {m["partition"] for m in meta if m["commit_time"] == a} == {"1", "2"}

        files = _call(spark, f"CALL show_commit_files(table => '{path}', instant_time => '{a}')")
        assert sorted(f["file_id"] for f in files) == sorted(m["file_id"] for m in meta if m["commit_time"] == a)
        parts = _call(spark, f"CALL show_commit_partitions(table => '{path}', instant_time => '{a}')")
        assert sorted((p["partition_path"], p["total_records_inserted"]) for p in parts) == [("1", 3), ("2", 2)]
        ws = _call(spark, f"CALL show_commit_write_stats(table => '{path}', instant_time => '{b}')")[0]
        assert ws["total_records_written"] == 2 and ws["avg_record_size"] == ws["total_bytes_written"] // 2
        extra = _call(spark, f"CALL show_commit_extra_metadata(table => '{path}', metadata_key => 'schema')")
        assert [(e["instant_time"], e["metadata_key"]) for e in extra] == [(b, "schema")]
        assert '"name"' in extra[0]["metadata_value"]
        wa = _call(spark, f"CALL stats_wa(table => '{path}')")
        assert wa[-1] == {"commit_time": "Total", "total_upserted": 2, "total_written": 7,
                          "write_amplification_factor": "3.5"}

        # show_timeline: every instant of the timeline folder once, newest first, the rollback linked both ways.
        tl = _call(spark, f"CALL show_timeline(table => '{path}', limit => 100)")
        names = {re.match(r"(\d+)", f.name).group(1) for f in (Path(path) / ".hoodie").iterdir()
                 if re.match(r"\d{14,17}\.", f.name)}
        assert sorted(r["instant_time"] for r in tl) == sorted(names)
        assert [r["instant_time"] for r in tl] == sorted(names, reverse=True)
        rb = [r for r in tl if r["action"] == "rollback"]
        assert len(rb) == 1 and rb[0]["rollback_info"] == f"Rolled back: {c}" and rb[0]["state"] == "COMPLETED"
        assert rb[0]["requested_time"] and rb[0]["completed_time"] and rb[0]["timeline_type"] == "ACTIVE"
        assert [r["rollback_info"] for r in tl if r["instant_time"] == a] == [None]
        assert len(_call(spark, f"CALL show_timeline(table => '{path}', limit => 2)")) == 2
        only = _call(spark, f"CALL show_timeline(table => '{path}', filter => \"action = 'rollback'\")")
        assert [r["instant_time"] for r in only] == [rb[0]["instant_time"]]
        assert [r["instant_time"] for r in _call(spark, f"CALL show_timeline(table => '{path}', startTime => '{a}', "
                                                        f"endTime => '{a}')")] == [a]

        rbs = _call(spark, f"CALL show_rollbacks(table => '{path}')")
        assert [(r["instant"], r["rollback_instant"]) for r in rbs] == [(rb[0]["instant_time"], c)]
        detail = _call(spark, f"CALL show_rollback_detail(table => '{path}', instant_time => '{rbs[0]['instant']}')")
        assert len(detail) == rbs[0]["total_files_deleted"] and all(d["succeeded"] for d in detail)

        latest = _call(spark, f"CALL show_fsview_latest(table => '{path}', limit => 100)")
        everything = _call(spark, f"CALL show_fsview_all(table => '{path}', limit => 100)")
        assert {(r["partition"], r["file_id"]) for r in everything} == {(r["partition"], r["file_id"]) for r in latest}
        assert sum(r["num_delta_files"] for r in everything) >= 1  # the upsert's log file

        helped = _call(spark, "CALL help(cmd => 'show_commits')")[0]["result"]
        assert re.search(r"^limit\s+integer\s+10\s+false$", helped, re.M)
        assert re.search(r"^total_records_written\s+long\s+true\s+\{\}$", helped, re.M)
        listed = _call(spark, "CALL help()")[0]["result"]
        assert "show_timeline" in listed and "hive_sync" in listed
        assert sc.statusTracker().getJobIdsForGroup("hoodie-info") == []  # no Spark job for any of them
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


def test_every_hudi_procedure_answers_or_names_what_to_use(spark, tmp_path: Path) -> None:
    """Each name of Hudi's procedures page: a hoodie procedure, or refused (before anything is read) with
    what to use; help(cmd => name) says the same."""
    ours = {p.name.lower() for p in PROCEDURES.values()} | set(PROCEDURES)
    for name in HUDI_PROCEDURES:
        assert (name in ours) != (name in UNSUPPORTED), name
    assert set(UNSUPPORTED) <= set(HUDI_PROCEDURES)
    for name in sorted(UNSUPPORTED):
        with pytest.raises(SqlError, match=rf"^CALL {name}: Hudi's {name} is not supported by hoodie, and nothing "
                                           r"was read or written\. Instead: \S"):
            hoodie.sql(spark, f"CALL system.{name}(table => '/no/such/table')")
        assert _call(spark, f"CALL help(cmd => '{name}')")[0]["result"].startswith(f"CALL {name}: ")
    with pytest.raises(SqlError, match="unknown procedure 'no_such_proc'.*CALL help"):
        hoodie.sql(spark, "CALL no_such_proc()")


@pytest.mark.slow
def test_copy_to_temp_view(spark, tmp_path: Path) -> None:
    """Reads through the view (snapshot, then incremental); its default-run counterpart is the documented
    example in tests/engine/test_sql_examples.py, which defines the view."""
    path = str(tmp_path / "t")
    a, b, _ = _table(path)
    hoodie.sql(spark, f"CALL copy_to_temp_view(table => '{path}', view_name => 'info_copy')").collect()
    assert sorted(r.id for r in spark.sql("SELECT id FROM info_copy").collect()) == \
        sorted(read_hudi_rs(path).column("id").to_pylist())
    with pytest.raises(SqlError, match="replace => true"):
        hoodie.sql(spark, f"CALL copy_to_temp_view(table => '{path}', view_name => 'info_copy')")
    hoodie.sql(spark, f"CALL copy_to_temp_view(table => '{path}', view_name => 'info_copy', replace => true, "
                      f"query_type => 'incremental', begin_instance_time => '{a}')").collect()
    assert sorted(r.id for r in spark.sql("SELECT id FROM info_copy").collect()) == [1, 2]
    spark.catalog.dropTempView("info_copy")


def test_hudi_documented_sql_that_used_to_fail(spark, tmp_path: Path) -> None:
    """SET with a quoted value; INSERT OVERWRITE of unaliased literals (two columns named 10); TIMESTAMP AS OF
    and as.of.instant with a date only (that day's 00:00:00, Hudi's formatQueryInstant)."""
    key = "hoodie.spark.sql.insert.into.operation"
    out = hoodie.sql(spark, f"SET {key} = 'bulk_insert'").collect()
    try:
        assert spark.conf.get(key) == "bulk_insert" and out[0].value == "bulk_insert"
        path = str(tmp_path / "pt")
        hoodie.sql(spark, f"""CREATE TABLE default.info_pt (id bigint, name string, ts bigint, dt string, hh string)
                             USING hudi PARTITIONED BY (dt, hh) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')
                             LOCATION '{path}'""")
        r = hoodie.sql(spark, "INSERT INTO info_pt SELECT 1, 'a1', 1000, '2021-12-09', '10'").collect()[0]
        assert r.operation == "bulk_insert"
    finally:
        spark.conf.unset(key)
    try:
        r = hoodie.sql(spark, "INSERT OVERWRITE info_pt SELECT 10, 'a10', 1100, '2021-12-09', '10'").collect()[0]
        assert r.operation == "insert_overwrite_table" and r.rows == 1
        got = hoodie.sql(spark, "SELECT id, name, ts, dt, hh FROM info_pt").collect()
        assert [tuple(x) for x in got] == [(10, "a10", 1100, "2021-12-09", "10")]
        assert read_hudi_rs(path).column("id").to_pylist() == [10]
    finally:
        spark.sql("DROP VIEW IF EXISTS default.info_pt")
        spark.sql("DROP VIEW IF EXISTS default.info_pt_ro")

    tt = str(tmp_path / "tt")
    opts = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.write.table.version": "6"}
    write_arrow(tt, _rows([1], 1, 1), {**opts, "hoodie.datasource.write.operation": "insert"},
                instant="20210727120000000")
    write_arrow(tt, _rows([2], 1, 1), {**opts, "hoodie.datasource.write.operation": "insert"},
                instant="20210728120000000")
    for day, want in (("2021-07-28", [1]), ("2021-07-29", [1, 2]), ("2021-07-27", [])):
        got = sorted(r.id for r in hoodie.sql(spark, f"SELECT id FROM hudi.`{tt}` TIMESTAMP AS OF '{day}'").collect())
        assert got == want, day
        df = spark.read.format("hoodie").option("as.of.instant", day).load(tt)
        assert sorted(r.id for r in df.collect()) == want, day


def test_show_timeline_with_the_archived_timeline(spark, tmp_path: Path) -> None:
    """showArchived => true adds the archived instants (version 6 archive files), marked ARCHIVED."""
    from hoodie.services.archive.action import run_archival

    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.archive.automatic": "false"}
    for i in range(6):
        write_arrow(path, _rows([i], 1, i), {**opts, "hoodie.datasource.write.operation": "upsert"})
    res = run_archival(path, opts)
    assert res.archived
    rows = _call(spark, f"CALL show_timeline(table => '{path}', showArchived => true, limit => 100)")
    archived = sorted(r["instant_time"] for r in rows if r["timeline_type"] == "ARCHIVED")
    assert archived == sorted(res.archived)
    assert all(r["state"] == "COMPLETED" and r["completed_time"] for r in rows if r["timeline_type"] == "ARCHIVED")
    active = _call(spark, f"CALL show_timeline(table => '{path}', limit => 100)")
    assert {r["instant_time"] for r in active}.isdisjoint(archived)
