"""Benchmark (issue 33): how long ``hoodie.spark.read`` takes to plan a 20-file table, young and old.

Two copy-on-write tables of 20 base files (20 partitions, one file group each), written in pure Python:
*young* (one commit) and *old* (the same first commit, then ``--commits`` small upserts into one partition
with archival on, so the other 19 base files were written by an archived commit and the active timeline
holds about ``hoodie.keep.max.commits`` commits). In ONE Spark session, alternating, best and median of
``--repeat``:

* ``hoodie.spark.read(spark, path)``: the DataFrame's creation (the driver's planning: table, timeline,
  listing, the split between Spark's scan and hoodie's merging, then ``spark.read.parquet`` of the files);
* the reference: ``spark.read.schema(s).parquet(*files)`` of the same files (its own listing in the JVM);
* hoodie's Python planning alone (the difference between the two, measured: ``HoodieTable`` + ``plan_read``
  + ``split_plan``).

It also checks that the optimized logical plans are the same once the relation's attribute ids are
normalised, and that both read the same rows.

    python bench/spark_plan.py [--commits 200] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import pyarrow as pa  # noqa: E402

from _common import machine_info, utc_now  # noqa: E402

OPTS = {"hoodie.table.name": "plan20", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.datasource.write.operation": "upsert"}


def _rows(n: int, parts: int, version: int, only_part: int | None = None) -> pa.Table:
    ids = [i for i in range(n) if only_part is None or i % parts == only_part]
    return pa.table({"k": [f"k{i}" for i in ids], "part": [f"p{i % parts:02d}" for i in ids],
                     "ts": pa.array([version] * len(ids), pa.int64()),
                     "v": pa.array([version * 1000 + i for i in ids], pa.int64())})


def build(base: str, commits: int, files: int = 20, rows: int = 2000) -> None:
    """A table of ``files`` base files; ``commits`` more upserts into partition p00 after the first."""
    from hoodie import write_arrow

    write_arrow(base, _rows(rows, files, 0), OPTS)
    for c in range(commits):
        write_arrow(base, _rows(rows, files, c + 1, only_part=0), OPTS)


def _norm_plan(df) -> str:  # type: ignore[no-untyped-def]
    """The optimized logical plan with expression ids removed (they differ between two DataFrames)."""
    text = df._jdf.queryExecution().optimizedPlan().toString()
    return re.sub(r"#\d+L?", "", text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)

    import hoodie.spark as hs
    from hoodie.engine.read import split_plan
    from hoodie.engine.session import get_session
    from hoodie.format.slice.reader import plan_read
    from hoodie.format.table import HoodieTable

    root = tempfile.mkdtemp(prefix="spark_plan_")
    tables = {"young": os.path.join(root, "young"), "old": os.path.join(root, "old")}
    t0 = time.perf_counter()
    build(tables["young"], 0)
    build(tables["old"], args.commits)
    build_s = time.perf_counter() - t0
    spark = get_session("local[2]")
    out: dict = {"date": utc_now(), "machine": machine_info(), "commits_old": args.commits, "build_s": round(build_s, 1),
                 "load_average": os.getloadavg(), "tables": {}}
    try:
        files = {}
        for name, base in tables.items():
            t = HoodieTable(base, read_only=True)
            split = split_plan(plan_read(t))
            files[name] = split.native_files
            info = {"native_files": len(split.native_files), "python_slices": len(split.python_slices),
                    "reasons": split.reasons, "active_instants": len(t.timeline.instants)}
            df = hs.read(spark, base)
            ref = spark.read.schema(df.schema).parquet(*split.native_files) if split.native_files else None
            info["same_plan"] = ref is not None and _norm_plan(df) == _norm_plan(ref.select(*df.columns))
            info["rows_equal"] = ref is not None and df.count() == ref.count()
            out["tables"][name] = info

        def timed(fn) -> tuple[float, float]:  # type: ignore[no-untyped-def]
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
            return time.perf_counter() - w0, time.process_time() - c0

        schemas = {name: hs.read(spark, base).schema for name, base in tables.items()}
        samples: dict[str, list[tuple[float, float]]] = {}
        for rep in range(args.repeat + 1):  # the first round is a warm-up
            for name, base in tables.items():
                for what, fn in (
                    ("hoodie.spark.read", lambda: hs.read(spark, base)),
                    ("spark.read.parquet", lambda: spark.read.schema(schemas[name]).parquet(*files[name])),
                    ("hoodie planning (Python)", lambda: split_plan(plan_read(HoodieTable(base, read_only=True)))),
                ):
                    w, c = timed(fn)
                    if rep:
                        samples.setdefault(f"{name}: {what}", []).append((w, c))
        out["ms"] = {k: {"best": round(min(w for w, _ in v) * 1e3, 1),
                         "median": round(statistics.median(w for w, _ in v) * 1e3, 1),
                         "cpu_median": round(statistics.median(c for _, c in v) * 1e3, 1)} for k, v in samples.items()}
        for name in tables:
            h = out["ms"][f"{name}: hoodie.spark.read"]
            r = out["ms"][f"{name}: spark.read.parquet"]
            out["tables"][name]["ratio_median"] = round(h["median"] / r["median"], 2)
        out["load_average_end"] = os.getloadavg()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
