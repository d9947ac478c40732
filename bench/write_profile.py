"""Where ``hoodie.spark.write`` spends its time: bulk_insert and upsert, MOR and COW, each beside
Spark's own Parquet writer of the same rows in the same run (issue 18's profile).

For each write it prints the wall time, the reference's, and the breakdown from
:func:`hoodie.engine.write.last_write_profile`: the record-check job, the write stage, the commit on
the driver, and the tasks' phases (index lookup, encoding, file I/O...). ``transfer`` is measured
on its own: the same grouping of the same input by table partition, with Python tasks that return
nothing (the shuffle and the JVM/Python round trip every write stage pays before hoodie's code runs).

    python bench/write_profile.py [--rows 2000000] [--partitions 100] [--updates 200000]
                                  [--types MERGE_ON_READ,COPY_ON_WRITE] [--json PATH] [--set KEY=VALUE ...]

Reads by hoodie and hudi-rs of every table written are compared (row counts and sums) at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from _common import timed  # noqa: E402
from jvm_writer_probe import with_meta  # noqa: E402
from report import (  # noqa: E402
    digest, first_row_of, generate_base, generate_updates, hudi_rs_read, write_options, write_source,
)


def passthrough_stage(df, field: str, grouped: bool = True) -> float:
    """Seconds of the write stage's shape with Python tasks that receive every row and return nothing:
    ``repartition(partition).mapInArrow`` (upserts; a shuffle) or ``mapInArrow`` (bulk_insert with
    ``hoodie.bulkinsert.sort.mode=NONE``, Hudi's default: no shuffle)."""
    from pyspark.sql.types import StringType, StructField, StructType

    out = StructType([StructField("stat", StringType(), True)])

    def drain(batches):
        for _ in batches:
            pass
        yield from ()

    if grouped:
        return timed(lambda: df.repartition(field).mapInArrow(drain, out).collect())[0]
    return timed(lambda: df.mapInArrow(drain, out).collect())[0]


def profile_row(what: str, hoodie_s: float, ref: str, ref_s: float, prof: dict[str, Any],
                transfer_s: float, ref_part_s: float = 0.0, ref_meta_s: float = 0.0) -> dict[str, Any]:
    """One measured write with its breakdown. ``ref_s`` is Spark's Parquet writer of the same rows into
    one folder; ``ref_part_s`` the same rows laid out by the table's partition column
    (``partitionBy``): what a plain Parquet pipeline of a time-partitioned table writes; ``ref_meta_s``
    (bulk_insert only) Spark's writer of the rows with Hudi's five meta columns into one folder, the
    least any writer of Hudi's base files can do (no bloom filter, no file layout)."""
    driver = prof.get("driver", {})
    total = driver.get("total", hoodie_s)
    commit = total - driver.get("check", 0) - driver.get("stage", 0) - driver.get("reconcile", 0)
    return {"what": what, "hoodie_s": round(hoodie_s, 3), "reference": ref, "reference_s": round(ref_s, 3),
            "ratio": round(hoodie_s / ref_s, 2),
            "reference_partitioned_s": round(ref_part_s, 3),
            "ratio_partitioned": round(hoodie_s / ref_part_s, 2) if ref_part_s else None,
            "reference_meta_s": round(ref_meta_s, 3) if ref_meta_s else None,
            "meta_over_reference": round(ref_meta_s / ref_s, 2) if ref_meta_s else None,
            "check_s": round(driver.get("check", 0), 3),
            "stage_s": round(driver.get("stage", 0), 3), "transfer_s": round(transfer_s, 3),
            "commit_s": round(commit, 3), "reconcile_s": round(driver.get("reconcile", 0), 3),
            "task_phases_s": {k: round(v, 3) for k, v in sorted(prof.get("tasks", {}).items(),
                                                                key=lambda kv: -kv[1])}}


PHASE_NAMES = {
    "keys": "key generation + checks", "dedupe": "de-duplication", "index.read": "index: read stored keys",
    "index.match": "index: match", "plan": "planning", "meta": "meta columns", "bloom": "bloom filter + key range",
    "parquet": "Parquet encode + write", "encode": "log block encode", "io": "log file write",
    "markers": "markers + partition metadata", "merge.read": "COW: read old base file", "write": "rest of the file-group write (COW merge)",
    "sort": "sort", "sync": "fsync of the task's base files", "other": "other",
}


def markdown(doc: dict[str, Any], heading: str = "## Write profile: where `hoodie.spark.write` spends its time") -> str:
    """The profile as a BENCHMARKS.md section: one row per write, then each write's task phases."""
    rows = [r for r in doc["results"] if "hoodie_s" in r]
    out = [heading, "",
           f"`python bench/write_profile.py --rows {doc['rows']} --partitions {doc['partitions']} "
           f"--updates {doc['updates']}`" + "".join(f" --set {k}={v}" for k, v in doc.get("options", {}).items())
           + (f" ({doc['note']})" if doc.get("note") else ""), "",
           "Wall seconds on the driver: **check** (the record-check job), **stage** (the write stage: shuffle, "
           "JVM/Python transfer, the tasks), **commit** (timeline, metadata table, lock), beside the stage's "
           "**transfer** measured alone (the same layout of the same input through Python tasks that do nothing).",
           "",
           "Two references, both Spark's own Parquet writer of the same cached rows in the same session: "
           "**one folder** (`df.write.parquet`, no layout) and **partitioned** (`df.write.partitionBy(<the "
           "table's partition column>).parquet`: the layout a plain Parquet pipeline of a time-partitioned "
           "table writes, as hoodie does). For bulk_insert also **Hudi rows, one folder**: the same writer "
           "of the rows with Hudi's five meta columns computed in Spark SQL (`bench/jvm_writer_probe.py`), "
           "no bloom filter and no layout: what writing Hudi's base file contents costs Spark itself, "
           "as a multiple of the one-folder reference.",
           "",
           "| write | hoodie (s) | one folder (s) | ratio | partitioned (s) | ratio | Hudi rows, one folder (s) | its ratio to one folder | check | stage | transfer alone | commit |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        part = r.get("reference_partitioned_s") or 0.0
        part_ratio = f"**{r['ratio_partitioned']:.2f}**" if r.get("ratio_partitioned") else "n/a"
        meta = f"{r['reference_meta_s']:.2f} | **{r['meta_over_reference']:.2f}**" if r.get("reference_meta_s") else "n/a | n/a"
        out.append(f"| {r['what']} | {r['hoodie_s']:.2f} | {r['reference_s']:.2f} | "
                   f"**{r['ratio']:.2f}** | {part:.2f} | {part_ratio} | {meta} | {r['check_s']:.2f} | {r['stage_s']:.2f} | {r['transfer_s']:.2f} | "
                   f"{r['commit_s'] + r['reconcile_s']:.2f} |")
    out += ["", "Task phases (CPU seconds summed over the tasks; two cores run them):", "",
            "| write | " + " | ".join(["phase (s)"] * 1) + " |", "|---|---|"]
    for r in rows:
        ph = ", ".join(f"{PHASE_NAMES.get(k, k)} {v:.2f}" for k, v in r["task_phases_s"].items() if v >= 0.005)
        out.append(f"| {r['what']} | {ph} |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--updates", type=int, default=200_000)
    ap.add_argument("--types", default="MERGE_ON_READ,COPY_ON_WRITE")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--json", default="")
    ap.add_argument("--set", action="append", default=[], help="extra write option KEY=VALUE")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--markdown", default="", help="also write the profile as a Markdown section to this file")
    ap.add_argument("--note", default="", help="a note on the run for the Markdown (e.g. the machine's load)")
    args = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in args.set)

    work = tempfile.mkdtemp(prefix="hoodie_write_profile_")
    rows: list[dict[str, Any]] = []
    try:
        base = generate_base(args.rows, args.partitions, args.seed)
        lo = first_row_of(args.partitions // 5, args.rows, args.partitions)
        upds = [generate_updates(base, lo, args.updates, ts, 1_750_000_000_000_000 + ts, args.seed + ts)
                for ts in (2, 3)]
        base_src = write_source(base, os.path.join(work, "src_base"), 8)
        upd_src = [write_source(u, os.path.join(work, f"src_upd{i}"), 2) for i, u in enumerate(upds)]
        del base, upds

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        import hoodie.spark as hs
        from hoodie.engine.session import get_session
        try:
            from hoodie.engine.write import last_write_profile
        except ImportError:  # a hoodie from before the profile (a baseline run): times without breakdown
            def last_write_profile() -> dict[str, Any]:
                return {}

        spark = get_session(args.master, app_name="hoodie-write-profile",
                            conf={"spark.driver.memory": "6g",
                                  "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"})
        spark.sparkContext.setLogLevel("ERROR")
        # Warm-up: JVM, Python workers and the write path once on a small table.
        # Warm-up: every core's Python worker runs the bulk_insert and upsert paths once (imports,
        # first-call costs), and Spark's own writer runs once.
        small = spark.read.parquet(base_src).limit(200_000).repartition(4).cache()
        warm = os.path.join(work, "warm")
        hs.write(small, warm, {**write_options("warm", "bulk_insert"), **extra})
        hs.write(small.limit(20_000), warm, {**write_options("warm", "upsert"), **extra})
        small.write.mode("overwrite").parquet(os.path.join(work, "warm_native"))
        small.write.mode("overwrite").partitionBy("day").parquet(os.path.join(work, "warm_native_part"))
        small.unpersist()

        src = spark.read.parquet(base_src).cache()
        src.count()
        transfer_base = passthrough_stage(src, "day", grouped=extra.get("hoodie.bulkinsert.sort.mode", "NONE")
                                          not in ("NONE", "GLOBAL_SORT", "PARTITION_SORT"))
        for typ in [t.strip() for t in args.types.split(",") if t.strip()]:
            path = os.path.join(work, f"t_{typ}")
            opts = {**write_options("prof", "bulk_insert"), "hoodie.datasource.write.table.type": typ, **extra}
            ref_s, _ = timed(lambda: src.write.mode("overwrite").parquet(os.path.join(work, f"native_{typ}")))
            ref_part_s, _ = timed(lambda: src.write.mode("overwrite").partitionBy("day")
                                  .parquet(os.path.join(work, f"native_part_{typ}")))
            ref_meta_s, _ = timed(lambda: with_meta(src).drop("__target").write.mode("overwrite")
                                  .parquet(os.path.join(work, f"native_meta_{typ}")))
            s, _ = timed(lambda: hs.write(src, path, opts))
            rows.append(profile_row(f"bulk_insert {args.rows:,} rows ({typ})", s, "df.write.parquet", ref_s,
                                    last_write_profile(), transfer_base, ref_part_s, ref_meta_s))
            print(json.dumps(rows[-1]), flush=True)
            for i, us in enumerate(upd_src, 1):
                udf = spark.read.parquet(us).cache()
                udf.count()
                transfer_up = passthrough_stage(udf, "day")
                ref_s, _ = timed(lambda: udf.write.mode("append").parquet(os.path.join(work, f"native_up_{typ}")))
                ref_part_s, _ = timed(lambda: udf.write.mode("append").partitionBy("day")
                                      .parquet(os.path.join(work, f"native_part_{typ}")))
                s, _ = timed(lambda: hs.write(udf, path, {**opts, "hoodie.datasource.write.operation": "upsert"}))
                rows.append(profile_row(f"upsert #{i} {args.updates:,} rows ({typ})", s,
                                        "df.write.mode('append').parquet", ref_s, last_write_profile(), transfer_up,
                                        ref_part_s))
                print(json.dumps(rows[-1]), flush=True)
                udf.unpersist()
            # Both readers agree on the table written (and on its row count).
            import hoodie

            ours = digest(hoodie.read_table(path))
            theirs = digest(hudi_rs_read(path))
            if ours != theirs or ours[0] != args.rows:
                raise SystemExit(f"{typ}: hoodie read {ours}, hudi-rs read {theirs}, expected {args.rows} rows")
            rows.append({"what": f"check {typ}", "hoodie_read": list(ours), "hudi_rs_read": list(theirs)})
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    doc = {"rows": args.rows, "partitions": args.partitions, "updates": args.updates, "options": extra,
           "note": args.note, "results": rows}
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(doc))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
