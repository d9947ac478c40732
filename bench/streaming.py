"""Benchmark: a 10,000-row micro-batch into a merge-on-read table (``hoodie.spark.write_stream``) against
Spark's own Parquet file sink (``writeStream.format("parquet")``) on the same micro-batches, in one run,
and the added time of each inline service.

    python bench/streaming.py [--rows 10000] [--batches 8] [--master local[2]]

The source is a folder of Parquet files, one per micro-batch (``maxFilesPerTrigger=1``): the first
holds ``rows`` new keys, each later one half updates of earlier keys and half new keys, over 8 daily
partitions, with an event time ``ev`` on the row's day. Each query runs with ``availableNow``; a batch's time is Spark's ``addBatch`` duration
from the query's progress (the sink's own work: for hoodie the whole write with its commit and inline
services; for the Parquet sink the file write and its metadata log). The first batch of each query is
a warm-up and not counted, and one whole query of each sink runs before the measured ones; the median
of the rest is reported. Variants: hoodie with every service off (``hoodie.clean.automatic=false``,
``hoodie.datasource.compaction.async.enable=false``), then each service alone: automatic clean (with
archival; Hudi's default), the sink's async compaction beside the stream (Hudi's streaming default: a
plan after every 5 delta commits, executed by a driver thread), inline compaction after every batch,
inline partition TTL (``KEEP_BY_EVENT_TIME`` on ``day``, nothing old enough to expire) and inline record
TTL (on ``ev``, nothing expires). Prints one JSON document; ratio = hoodie / Parquet sink; "added" =
the variant's median minus the services-off median. ``--variants`` picks some by the first word of
their name.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

BASE_OPTS = {
    "hoodie.table.name": "stream_bench", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.operation": "upsert", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "day", "hoodie.datasource.write.precombine.field": "ts",
}
OFF = {"hoodie.clean.automatic": "false", "hoodie.datasource.compaction.async.enable": "false"}
VARIANTS = {
    "services off": OFF,
    "automatic clean and archival (default)": {**OFF, "hoodie.clean.automatic": "true"},
    "async compaction beside the stream (default)": {**OFF, "hoodie.datasource.compaction.async.enable": "true"},
    "inline compaction every batch": {**OFF, "hoodie.compact.inline": "true",
                                      "hoodie.compact.inline.max.delta.commits": "1"},
    "partition TTL inline": {**OFF, "hoodie.partition.ttl.inline": "true",
                             "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
                             "hoodie.partition.ttl.strategy.days.retain": "36500",
                             "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd"},
    "record TTL inline": {**OFF, "hoodie.record.ttl.inline": "true", "hoodie.record.ttl.field": "ev",
                          "hoodie.record.ttl.retention": "P36500D"},
}
SCHEMA = "id long, day string, ts long, v1 string, v2 double, v3 long, ev timestamp"


def make_source(folder: str, rows: int, batches: int) -> None:
    """One Parquet file per micro-batch (see the module docstring)."""
    os.makedirs(folder)
    rng = np.random.default_rng(7)
    next_id = 0
    for b in range(batches):
        if b == 0:
            ids = np.arange(rows)
            next_id = rows
        else:
            upd = rng.choice(next_id, rows // 2, replace=False)
            new = np.arange(next_id, next_id + rows - rows // 2)
            next_id += len(new)
            ids = np.concatenate([upd, new])
        n = len(ids)
        pq.write_table(pa.table({
            "id": pa.array(ids, pa.int64()),
            "day": pa.array([f"2025-01-0{1 + int(i) % 8}" for i in ids]),
            "ts": pa.array(np.full(n, b), pa.int64()),
            "v1": pa.array([f"value-{int(i)}-{b}" for i in ids]),
            "v2": pa.array(rng.random(n)),
            "v3": pa.array(rng.integers(0, 1 << 40, n), pa.int64()),
            "ev": pa.array((np.datetime64("2025-01-01", "us") + (ids % 8) * np.timedelta64(1, "D")
                            + b * np.timedelta64(1, "h")).astype("datetime64[us]"), pa.timestamp("us", tz="UTC")),
        }), os.path.join(folder, f"batch-{b:04d}.parquet"))


def batch_times(query) -> list[float]:
    """Seconds of ``addBatch`` per micro-batch, in batch order."""
    out = []
    for p in sorted(query.recentProgress, key=lambda p: p["batchId"]):
        if p.get("numInputRows", 0) and "addBatch" in p.get("durationMs", {}):
            out.append(p["durationMs"]["addBatch"] / 1000)
    return out


PROFILES: dict[str, list[dict]] = {}


def run_hoodie(spark, src: str, work: str, name: str, extra: dict) -> list[float]:
    import hoodie.engine.stream as ES
    import hoodie.engine.write as EW
    import hoodie.spark as hs

    # Where each micro-batch's write spent its time (hoodie.engine.write.last_write_profile), and the sink's
    # own lookup of the stream's last batch in the table.
    real_write, real_committed = EW.write, ES.HoodieStreamSink._committed
    profiles = PROFILES.setdefault(name, [])

    def write(*a, **k):
        out = real_write(*a, **k)
        profiles.append(EW.last_write_profile().get("driver", {}))
        return out

    def committed(self, *a, **k):
        t0 = time.perf_counter()
        try:
            return real_committed(self, *a, **k)
        finally:
            profiles.append({"sink lookup": round(time.perf_counter() - t0, 4)})

    EW.write, ES.HoodieStreamSink._committed = write, committed
    try:
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(src)
        tag = "-".join(name.split()[:2])
        q = hs.write_stream(df, os.path.join(work, f"hoodie-{tag}"), {**BASE_OPTS, **extra},
                            checkpoint_location=os.path.join(work, f"ck-hoodie-{tag}"), trigger={"availableNow": True})
        q.awaitTermination()
        hs.stop_services(q)  # the async compaction thread must not run into the next variant
    finally:
        EW.write, ES.HoodieStreamSink._committed = real_write, real_committed
    return batch_times(q)


def run_parquet(spark, src: str, work: str, tag: str) -> list[float]:
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(src)
    q = df.writeStream.format("parquet").partitionBy("day").option("checkpointLocation", os.path.join(work, f"ck-pq-{tag}")) \
        .trigger(availableNow=True).start(os.path.join(work, f"parquet-{tag}"))
    q.awaitTermination()
    return batch_times(q)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--variants", default="", help="comma-separated first words of the variants to run "
                    "(services off always runs); default: all")
    args = ap.parse_args()
    wanted = {w.strip() for w in args.variants.split(",") if w.strip()}
    variants = {k: v for k, v in VARIANTS.items() if not wanted or k == "services off" or k.split()[0] in wanted}
    import hoodie.spark as hs

    spark = hs.session(args.master, app_name="bench-streaming")
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    work = tempfile.mkdtemp(prefix="hoodie-bench-stream-")
    try:
        src = os.path.join(work, "src")
        make_source(src, args.rows, args.batches)
        results: dict = {"rows_per_batch": args.rows, "batches": args.batches, "master": args.master}
        # One whole query of each sink first, not counted: the JVM's code paths, Python workers and hoodie's
        # imports warm up (the first measured variant paid them otherwise).
        run_parquet(spark, src, work, "warm")
        run_hoodie(spark, src, work, "warm-up", VARIANTS["services off"])
        PROFILES.pop("warm-up", None)
        # Alternate the sinks so load on a shared machine hits both alike.
        parquet_runs, hoodie_runs = [], {}
        for i, (name, extra) in enumerate(variants.items()):
            parquet_runs.append(run_parquet(spark, src, work, str(i)))
            hoodie_runs[name] = run_hoodie(spark, src, work, name, extra)
        pq_times = [t for run in parquet_runs for t in run[1:]]
        pq_median = statistics.median(pq_times)
        results["parquet sink median s"] = round(pq_median, 3)
        base = None
        for name, times in hoodie_runs.items():
            med = statistics.median(times[1:])
            base = med if base is None else base
            results[f"hoodie ({name}) median s"] = round(med, 3)
            results[f"hoodie ({name}) ratio"] = round(med / pq_median, 2)
            results[f"hoodie ({name}) added over services off s"] = round(med - base, 3)
            results[f"hoodie ({name}) batch s"] = [round(t, 3) for t in times]
        results["parquet sink batch s"] = [[round(t, 3) for t in run] for run in parquet_runs]
        # Medians over the counted batches of each write phase (driver wall seconds) and of the sink's lookup.
        for name, profs in PROFILES.items():
            writes = [p for p in profs if "total" in p][1:]
            lookups = [p["sink lookup"] for p in profs if "sink lookup" in p][1:]
            phases = {k: round(statistics.median([p.get(k, 0.0) for p in writes]), 3)
                      for k in ("total", "check", "stage", "reconcile")} if writes else {}
            if lookups:
                phases["sink lookup"] = round(statistics.median(lookups), 4)
            results[f"hoodie ({name}) write phases s"] = phases
        print(json.dumps(results, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
