"""A streaming query in a child driver, for the kill tests (tests/engine/test_streaming_kills.py).

usage: python -m tests.engine.stream_child SOURCE TABLE CHECKPOINT OPTIONS_JSON

or, without a JVM of its own, :func:`run_attached` in a process forked from a preloaded server
(``multiprocessing`` forkserver): the child attaches to the JVM of the test session through a py4j server
of its own (``org.apache.spark.api.python.Py4JServer``, the kind Spark starts for a Python driver), runs
its query in a new session of that JVM, and dies at its fault point. Its callbacks (``foreachBatch``) go
to its own process, so when it is killed inside a micro-batch the JVM's query fails that batch without
writing Spark's commit log, as it would had the whole driver died.

Streams the Parquet files of the folder SOURCE (one file per micro-batch), or with ``hoodie:PATH`` the
commits of the hoodie table at PATH (``spark.readStream.format("hoodie")``), into TABLE with
``hoodie.spark.write_stream`` until everything available is written (``processAllAvailable``), then exits 0. ``HOODIE_FAULT_POINTS`` (hoodie.faults) kills the driver at a named point: inside a
micro-batch, between the table's commit and Spark's commit log (``stream.after_commit``), or inside an
inline service. Prints one JSON line when done.
"""

from __future__ import annotations

import json
import os
import sys


def run_stream(spark, src: str, table: str, ck: str, opts: dict):
    """Stream SOURCE into TABLE until everything available is written; returns the query."""
    import hoodie.spark as hs

    if src.startswith("hoodie:"):
        df = spark.readStream.format("hoodie").load(src[len("hoodie:"):]).select("id", "p", "ts", "v")
    else:
        df = spark.readStream.schema("id long, p string, ts long, v string").option("maxFilesPerTrigger", 1) \
            .parquet(src)
    if os.environ.get("STREAM_CHILD_TRIGGER") == "availableNow":
        q = hs.write_stream(df, table, opts, checkpoint_location=ck, trigger={"availableNow": True})
        q.awaitTermination()
    else:
        # Spark's default trigger, run until everything available is written. (availableNow stops after the
        # replayed batch when a Python stream source restarts with an uncommitted batch: Spark 4.3.)
        q = hs.write_stream(df, table, opts, checkpoint_location=ck)
        q.processAllAvailable()
        q.stop()
    return q


def attach(port: int, secret: str):
    """A Spark session of the JVM whose py4j server listens on ``port``: a new session (its own SQL
    settings, data sources and streaming queries) of that JVM's SparkContext."""
    os.environ["PYSPARK_GATEWAY_PORT"], os.environ["PYSPARK_GATEWAY_SECRET"] = str(port), secret
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    from hoodie.engine.datasource import register
    from hoodie.engine.session import HOODIE_SPARK_CONF

    gateway = launch_gateway()  # connects: PYSPARK_GATEWAY_PORT names a running JVM
    jvm = gateway.jvm
    jsc = jvm.org.apache.spark.api.java.JavaSparkContext.fromSparkContext(jvm.org.apache.spark.SparkContext.getOrCreate())
    sc = SparkContext(gateway=gateway, jsc=jsc, conf=SparkConf(_jvm=jvm, _jconf=jsc.getConf()))
    sessions = SparkSession._get_j_spark_session_class(jvm)
    parent = sessions.getDefaultSession().get()
    spark = SparkSession(sc, parent.newSession())
    sessions.setDefaultSession(parent)  # the JVM's default session stays the test session's
    for k, v in HOODIE_SPARK_CONF.items():
        if k.startswith("spark.sql."):
            spark.conf.set(k, v)
    register(spark)
    return spark


def run_attached(src: str, table: str, ck: str, opts: dict, port: int, secret: str, fault: str | None,
                 log: str) -> None:
    """The child of a kill trial, forked from a preloaded server (see the module docstring): attach, stream,
    exit 0 (``os._exit``: nothing of the JVM is stopped), or die at the fault point."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.environ.pop("HOODIE_FAULT_POINTS", None)
    if fault:
        os.environ["HOODIE_FAULT_POINTS"] = fault
    try:
        import time

        started = time.perf_counter()
        spark = attach(port, secret)
        print(f"attached in {time.perf_counter() - started:.2f} s", file=sys.stderr, flush=True)
        run_stream(spark, src, table, ck, opts)
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


def main() -> None:
    src, table, ck, opts = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    import hoodie.spark as hs

    spark = hs.session("local[1]", app_name="hoodie-stream-child")
    q = run_stream(spark, src, table, ck, opts)
    progress = [(p["batchId"], p["numInputRows"], [(x["startOffset"], x["endOffset"]) for x in p["sources"]])
                for p in q.recentProgress]
    print(json.dumps({"done": True, "failures": [f.service for f in hs.service_failures(q)], "progress": progress}))
    spark.stop()


if __name__ == "__main__":
    main()
