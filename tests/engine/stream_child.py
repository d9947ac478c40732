"""A streaming query in a child driver, for the kill tests (tests/engine/test_streaming_kills.py).

usage: python -m tests.engine.stream_child SOURCE TABLE CHECKPOINT OPTIONS_JSON

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


def main() -> None:
    src, table, ck, opts = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    import hoodie.spark as hs

    spark = hs.session("local[1]", app_name="hoodie-stream-child")
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
    progress = [(p["batchId"], p["numInputRows"], [(x["startOffset"], x["endOffset"]) for x in p["sources"]])
                for p in q.recentProgress]
    print(json.dumps({"done": True, "failures": [f.service for f in hs.service_failures(q)], "progress": progress}))
    spark.stop()


if __name__ == "__main__":
    main()
