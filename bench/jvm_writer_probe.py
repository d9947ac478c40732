"""Probe of the "keep rows in the JVM" write path of issue 18: how long Spark's own Parquet writer takes to
write the benchmark rows with Hudi's five meta columns computed in Spark SQL, beside the plain writes.

Variants, each on the same cached input in one session:

* ``one folder``: ``df.write.parquet`` (the write profile's reference);
* ``partitioned``: ``df.write.partitionBy("day").parquet``;
* ``meta, one folder``: the rows plus the meta columns (commit time, sequence number
  ``<instant>_<task>_<row>``, record key, partition path, file name) into one folder;
* ``meta, by file``: the same partitioned by the target file (partition path + file name), so that every
  file's ``_hoodie_file_name`` is known before Spark writes it, as a Hudi base file needs.

Nothing here writes a Hudi table: it measures whether that path could beat hoodie's Python write.

    python bench/jvm_writer_probe.py [--rows 2000000] [--partitions 100] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Callable

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from report import generate_base, write_source  # noqa: E402

INSTANT = "20261127010101000"


def _seconds(f: Callable[[], Any]) -> float:
    started = time.perf_counter()
    f()
    return round(time.perf_counter() - started, 3)


def with_meta(df: Any) -> Any:
    """The rows with Hudi's meta columns built by Spark expressions, plus ``__target`` (partition/file)."""
    from pyspark.sql import functions as F

    pid = F.spark_partition_id()
    part = F.col("day")
    name = F.concat(F.lit("0b1c2d3e-"), F.lpad(F.hex(pid), 4, "0"), F.lit("-"), F.lpad(F.hex(F.xxhash64(part)), 16, "0"),
                    F.lit("-0_"), pid.cast("string"), F.lit(f"-0-0_{INSTANT}.parquet"))
    seq = F.concat(F.lit(INSTANT + "_"), pid.cast("string"), F.lit("_"),
                   F.monotonically_increasing_id().bitwiseAND((1 << 33) - 1).cast("string"))
    return df.select(F.lit(INSTANT).alias("_hoodie_commit_time"), seq.alias("_hoodie_commit_seqno"),
                     F.col("id").cast("string").alias("_hoodie_record_key"), part.alias("_hoodie_partition_path"),
                     name.alias("_hoodie_file_name"), *df.columns, F.concat(part, F.lit("/"), name).alias("__target"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from hoodie.engine.session import get_session

    work = tempfile.mkdtemp(prefix="hoodie_jvm_probe_")
    try:
        src_path = write_source(generate_base(args.rows, args.partitions, 7), os.path.join(work, "src"), 8)
        spark = get_session(args.master, app_name="hoodie-jvm-writer-probe",
                            conf={"spark.driver.memory": "6g",
                                  "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"})
        spark.sparkContext.setLogLevel("ERROR")
        src = spark.read.parquet(src_path).cache()
        src.count()
        out = os.path.join(work, "out")

        def concurrent(f: Callable[[], Any]) -> Any:
            # Spark keeps a writer open per output folder instead of sorting each task's rows by folder.
            spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", "10000")
            try:
                return f()
            finally:
                spark.conf.unset("spark.sql.maxConcurrentOutputFileWriters")
        variants = {
            "one folder": lambda: src.write.mode("overwrite").parquet(out),
            "partitioned": lambda: src.write.mode("overwrite").partitionBy("day").parquet(out),
            "meta, one folder": lambda: with_meta(src).drop("__target").write.mode("overwrite").parquet(out),
            "meta, by file": lambda: with_meta(src).write.mode("overwrite").partitionBy("__target").parquet(out),
            "meta, by file, concurrent writers": lambda: concurrent(
                lambda: with_meta(src).write.mode("overwrite").partitionBy("__target").parquet(out)),
            "partitioned, concurrent writers": lambda: concurrent(
                lambda: src.write.mode("overwrite").partitionBy("day").parquet(out)),
        }
        for i in range(args.repeat):
            for what, f in variants.items():
                print(f"run {i + 1}  {what:18} {_seconds(f):8.3f} s", flush=True)
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
