"""A small Spark write job, run in a child process by the crash and local-cluster tests, or in the
test run's own session through :func:`run_step`.

usage: python -m tests.engine.spark_job MASTER BASE_PATH STEPS [storage-options-json]
STEPS is one step or several separated by commas, all run in one session. STEP 0 inserts ids 0..49,
STEP n>0 upserts ids 0..9 with v = "s<n>", STEP c compacts through ``CALL run_compaction`` (Spark
executors); each step prints one JSON line with its instant and the row count read back.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Optional


def run_step(spark: Any, base: str, step: int, so: Optional[dict] = None) -> dict:
    """Write step ``step`` to ``base`` with ``spark`` and read the table back on the same session."""
    import hoodie.spark as hs

    opts = {
        "hoodie.table.name": "child", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "insert" if step == 0 else "upsert",
    }
    ids = range(50) if step == 0 else range(10)
    df = spark.createDataFrame([(i, f"p{i % 2}", step, f"s{step}") for i in ids], "id long, p string, ts long, v string")
    instant = hs.write(df, base, opts, storage_options=so)
    # Read back through the data source on the same cluster: executors plan nothing themselves.
    reader = spark.read.format("hoodie")
    for k, v in (so or {}).items():
        reader = reader.option(f"hoodie.storage.{k}", v)
    return {"instant": instant, "count": reader.load(base).count()}


def main() -> None:
    master, base = sys.argv[1], sys.argv[2]
    steps = sys.argv[3].split(",")
    so = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
    import hoodie.spark as hs

    spark = hs.session(master, app_name="hoodie-child")
    for step in steps:
        if step == "c":
            import hoodie

            rows = hoodie.sql(spark, f"CALL run_compaction(op => 'scheduleAndExecute', path => '{base}', "
                                   "options => 'hoodie.compact.inline.max.delta.commits=1')").collect()
            count = spark.read.format("hoodie").load(base).count()
            print(json.dumps({"instant": rows[0].timestamp if rows else None, "count": count}), flush=True)
        else:
            print(json.dumps(run_step(spark, base, int(step), so)), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
