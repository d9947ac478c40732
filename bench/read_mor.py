"""Benchmark: snapshot read of a MOR table with 10% of its rows updated in log files.

Builds the table with hoodie's pure-Python write path (1M rows by default, 4 partitions), then
times ``hoodie.read_table`` against hudi-rs (the reference) on the same table in the same run,
best of N repetitions each, and prints the ratio. Run on demand:

    python bench/read_mor.py [--rows 1000000] [--repeat 3] [--block-format avro|parquet]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import hoodie  # noqa: E402
from hoodie import write_arrow  # noqa: E402


def build_table(path: str, rows: int, block_format: str) -> dict[str, float]:
    rng = np.random.default_rng(7)
    days = np.array(["2024-05-01", "2024-05-02", "2024-05-03", "2024-05-04"])
    base = pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "day": pa.array(days[np.arange(rows) % 4]),
        "ts": pa.array(np.full(rows, 1, dtype=np.int64)),
        "amount": pa.array(rng.random(rows)),
        "label": pa.array([f"row-{i}" for i in range(rows)]),
    })
    opts = {
        "hoodie.table.name": "bench_mor",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.logfile.data.block.format": block_format,
        "hoodie.copyonwrite.record.size.estimate": "64",
    }
    t0 = time.perf_counter()
    write_arrow(path, base, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
    t1 = time.perf_counter()
    upd_idx = rng.choice(rows, size=rows // 10, replace=False)
    upd = base.take(pa.array(upd_idx))
    upd = upd.set_column(2, "ts", pa.array(np.full(len(upd_idx), 2, dtype=np.int64)))
    upd = upd.set_column(3, "amount", pa.array(rng.random(len(upd_idx))))
    write_arrow(path, upd, {**opts, "hoodie.datasource.write.operation": "upsert"})
    t2 = time.perf_counter()
    return {"insert_s": t1 - t0, "upsert_s": t2 - t1}


def best_of(fn, repeat: int) -> tuple[float, int]:
    best = float("inf")
    n = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = fn()
        best = min(best, time.perf_counter() - t0)
    return best, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--block-format", default="avro", choices=["avro", "parquet"])
    ap.add_argument("--keep", action="store_true", help="keep the table for inspection")
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="hoodie_bench_")
    path = os.path.join(d, "t")
    try:
        build = build_table(path, args.rows, args.block_format)
        from hudi import HudiTableBuilder

        def ours() -> int:
            return hoodie.read_table(path).num_rows

        def theirs() -> int:
            t = HudiTableBuilder.from_base_uri(path).build()
            return sum(b.num_rows for b in t.read())

        ours_s, n1 = best_of(ours, args.repeat)
        theirs_s, n2 = best_of(theirs, args.repeat)
        assert n1 == n2 == args.rows, (n1, n2)
        result = {
            "benchmark": "snapshot read, MOR, 10% rows updated in logs",
            "rows": args.rows,
            "block_format": args.block_format,
            "hoodie_s": round(ours_s, 3),
            "hudi_rs_s": round(theirs_s, 3),
            "ratio_hoodie_over_hudi_rs": round(ours_s / theirs_s, 2),
            **{k: round(v, 2) for k, v in build.items()},
        }
        print(json.dumps(result, indent=2))
    finally:
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
        else:
            print(f"table kept at {path}")


if __name__ == "__main__":
    main()
