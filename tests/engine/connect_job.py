"""Every hoodie API on a Spark Connect session, in a child process (tests/engine/test_spark_connect.py):
``python -m tests.engine.connect_job REMOTE BASE_DIR`` prints one JSON line per step."""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    remote, base = sys.argv[1], sys.argv[2]
    import hoodie
    import hoodie.spark as hs
    from hoodie.engine.compaction import is_connect, spark_executor
    from hoodie.services.compaction import CompactionAsyncService

    spark = hs.session(remote=remote, app_name="hoodie-connect")
    assert is_connect(spark), type(spark)
    path = f"{base}/t"
    opts = {"hoodie.table.name": "sc", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false",
            "hoodie.metadata.enable": "true", "hoodie.payload.event.time.field": "ts"}

    def df(ids, ts, v, p=None):
        return spark.createDataFrame([(i, p or f"2020-01-0{1 + i % 2}", ts, f"{v}{i}") for i in ids],
                                     "id long, p string, ts long, v string")

    def out(step, **kw):
        print(json.dumps({"step": step, **kw}), flush=True)

    out("insert", instant=hs.write(df(range(20), 1, "a"), path, {**opts, "hoodie.datasource.write.operation": "insert"}))
    out("upsert", instant=hs.write(df(range(5), 2, "b"), path, opts))
    out("read", count=spark.read.format("hoodie").load(path).count(),
        hudi_count=spark.read.format("hudi").load(path).count())  # the same source under Hudi's name
    # Inline compaction after a write: runs on Spark through the Connect session.
    inline = {**opts, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
    out("inline_compaction", instant=hs.write(df(range(3), 3, "c"), path, inline),
        commits=[i.timestamp for i in hoodie.open(path).timeline.completed().by_actions("commit")])
    hs.write(df(range(2), 4, "d"), path, opts)
    rows = hoodie.sql(spark, f"CALL run_compaction(op => 'scheduleAndExecute', path => '{path}', "
                             "options => 'hoodie.compact.inline.max.delta.commits=1')").collect()
    out("call_run_compaction", rows=[r.state for r in rows])
    hs.write(df(range(2), 5, "e"), path, opts)
    svc = CompactionAsyncService(path, {"hoodie.compact.inline.max.delta.commits": "1"}, schedule=True,
                                 executor=spark_executor(spark), interval_seconds=0.2).start()
    deadline = time.time() + 120
    while not svc.results and not svc.errors and time.time() < deadline:
        time.sleep(0.2)
    svc.stop()
    out("async_compaction", results=len(svc.results), errors=[str(e) for e in svc.errors])
    out("call_show_commits", rows=len(hoodie.sql(spark, f"CALL show_commits(path => '{path}')").collect()))
    out("call_show_compaction", rows=len(hoodie.sql(spark, f"CALL show_compaction(path => '{path}')").collect()))
    out("call_show_freshness", rows=len(hoodie.sql(spark, f"CALL show_freshness(path => '{path}')").collect()))
    out("call_run_clean", rows=len(hoodie.sql(spark, f"CALL run_clean(path => '{path}', clean_policy => "
                                                     "'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1)"
                                               ).collect()))
    out("call_run_ttl", rows=[r.deleted_partitions for r in hoodie.sql(
        spark, f"CALL run_ttl(path => '{path}', options => "
               "'hoodie.partition.ttl.management.strategy.type=KEEP_BY_EVENT_TIME,"
               "hoodie.partition.ttl.strategy.days.retain=30')").collect()])
    last = hs.write(df([100], 6, "f", p="2999-01-01"), path, opts)
    out("call_rollback", rows=[r.rollback_result for r in hoodie.sql(
        spark, f"CALL rollback_to_instant(path => '{path}', instant_time => '{last}')").collect()])
    out("call_metadata", partitions=[r.partition for r in hoodie.sql(
        spark, f"CALL show_metadata_table_partitions(path => '{path}')").collect()],
        invalid=len(hoodie.sql(spark, f"CALL validate_metadata_table_files(path => '{path}')").collect()))
    hoodie.sql(spark, f"CREATE TABLE connect_t USING hoodie LOCATION '{path}'")
    out("catalog", count=hoodie.sql(spark, "SELECT count(*) AS n FROM connect_t").collect()[0].n)
    spark.stop()


if __name__ == "__main__":
    main()
