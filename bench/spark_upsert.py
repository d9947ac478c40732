"""Benchmark: Spark upsert and reads on a MOR table, each beside a reference in the same run.

* upsert of U updates into an N-row MOR table with ``hoodie.spark.write`` vs Spark's native Parquet
  append of the same U rows (``df.write.parquet``);
* snapshot read: ``hoodie.read_table`` and the Spark data source vs hudi-rs;
* read-optimized read through the Spark data source vs ``spark.read.parquet`` on the same base files.

    python bench/spark_upsert.py [--rows 10000000] [--updates 1000000] [--partitions 8]

Prints one JSON document with the timings and ratios (ratio = hoodie / reference).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import hoodie  # noqa: E402
from hoodie import write_arrow  # noqa: E402

from _common import timed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--updates", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="hoodie_bench_spark_")
    path = os.path.join(d, "t")
    try:
        rng = np.random.default_rng(11)
        n = args.rows
        days = np.array([f"2024-05-{i + 1:02d}" for i in range(args.partitions)])
        opts = {
            "hoodie.table.name": "bench", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "day",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.copyonwrite.record.size.estimate": "40",
        }
        base = pa.table({
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "day": pa.array(days[np.arange(n) % args.partitions]),
            "ts": pa.array(np.ones(n, dtype=np.int64)),
            "amount": pa.array(rng.random(n)),
        })
        build_s, _ = timed(lambda: write_arrow(path, base, {**opts, "hoodie.datasource.write.operation": "bulk_insert"}))
        del base
        import hoodie.spark as hs

        spark = hs.session(args.master, conf={"spark.driver.memory": "8g", "spark.sql.shuffle.partitions": "8"})
        import pyarrow.parquet as pq

        def update_df(seed: int, size: int):
            r = np.random.default_rng(seed)
            ids = r.choice(n, size=size, replace=False)
            upd = pa.table({
                "id": pa.array(ids.astype(np.int64)),
                "day": pa.array(days[ids % args.partitions]),
                "ts": pa.array(np.full(size, 2 + seed, dtype=np.int64)),
                "amount": pa.array(r.random(size)),
            })
            src = os.path.join(d, f"updates_{seed}.parquet")
            pq.write_table(upd, src)
            frame = spark.read.parquet(src).cache()
            frame.count()
            return frame

        native_dir = os.path.join(d, "native")
        up_opts = {**opts, "hoodie.datasource.write.operation": "upsert"}
        # Warm up both paths once (JVM JIT, Python workers) so neither pays start-up costs.
        warm = update_df(100, 1000)
        warm.write.mode("append").parquet(native_dir)
        hs.write(warm, path, up_opts)
        native_runs, upsert_runs = [], []
        for seed in (1, 2):
            df = update_df(seed, args.updates)
            native_runs.append(timed(lambda: df.write.mode("append").parquet(native_dir))[0])
            upsert_runs.append(timed(lambda: hs.write(df, path, up_opts))[0])
        native_s, upsert_s = min(native_runs), min(upsert_runs)

        from hudi import HudiTableBuilder

        ours_s, n1 = timed(lambda: hoodie.read_table(path).num_rows)
        theirs_s, n2 = timed(lambda: sum(b.num_rows for b in HudiTableBuilder.from_base_uri(path).build().read()))
        ds_s, n3 = timed(lambda: spark.read.format("hoodie").load(path).selectExpr("sum(amount)").collect())
        ro_s, _ = timed(lambda: spark.read.format("hoodie").option("hoodie.datasource.query.type", "read_optimized")
                        .load(path).selectExpr("sum(amount)").collect())
        base_files = glob.glob(os.path.join(path, "*", "*.parquet"))
        pq_s, _ = timed(lambda: spark.read.parquet(*base_files).selectExpr("sum(amount)").collect())
        assert n1 == n2 == n, (n1, n2)
        print(json.dumps({
            "rows": n, "updates": args.updates, "partitions": args.partitions, "master": args.master,
            "build_table_s": round(build_s, 2),
            "upsert_hoodie_s": round(upsert_s, 2), "native_parquet_append_s": round(native_s, 2),
            "ratio_upsert_vs_native_append": round(upsert_s / native_s, 2),
            "snapshot_read_hoodie_s": round(ours_s, 2), "snapshot_read_hudi_rs_s": round(theirs_s, 2),
            "ratio_snapshot_vs_hudi_rs": round(ours_s / theirs_s, 2),
            "snapshot_spark_datasource_sum_s": round(ds_s, 2),
            "ratio_spark_snapshot_vs_hudi_rs": round(ds_s / theirs_s, 2),
            "ro_spark_datasource_sum_s": round(ro_s, 2), "spark_read_parquet_sum_s": round(pq_s, 2),
            "ratio_ro_vs_spark_parquet": round(ro_s / pq_s, 2),
        }, indent=2))
        spark.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
