"""Benchmark: data skipping with the metadata table's column_stats (``hoodie.enable.data.skipping``).

A copy-on-write table of ``--rows`` rows per commit in ``--partitions`` day partitions, written by
``--commits`` inserts (so each partition holds ``--commits`` base files), with the metadata table and
its column_stats partition kept by every commit. Ids grow with time, as event ids do: each file holds
a contiguous block of ids. Measured in one run:

1. a point filter on a non-partition column (``id = X``): base files read and wall time of
   ``hoodie.read_table`` with data skipping against the same read without it (best of 3 each);
2. what keeping column_stats costs a commit: the same inserts into a table whose metadata table has
   no column_stats (median commit time of each).

    python bench/data_skipping.py [--partitions 120] [--commits 4] [--rows 100000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pyarrow as pa  # noqa: E402

from _common import best_of, timed  # noqa: E402

import hoodie  # noqa: E402
from hoodie import write_arrow  # noqa: E402
from hoodie.format.slice.reader import plan_read  # noqa: E402
from hoodie.format.table import HoodieTable  # noqa: E402

OPTS = {"hoodie.table.name": "ds", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.clean.automatic": "false",
        "hoodie.metadata.enable": "true", "hoodie.parquet.small.file.limit": "0",
        "hoodie.datasource.write.operation": "insert"}
ON = {"hoodie.enable.data.skipping": "true", "hoodie.metadata.enable": "true"}
OFF = {"hoodie.enable.data.skipping": "false", "hoodie.metadata.enable": "true"}


def batch(commit: int, rows: int, partitions: int) -> pa.Table:
    """Ids ``commit * rows ...``, in blocks of ``rows / partitions`` per day partition."""
    start = commit * rows
    ids = pa.array(range(start, start + rows), pa.int64())
    per = -(-rows // partitions)
    first = dt.date(2025, 1, 1)
    names = [(first + dt.timedelta(days=d)).isoformat() for d in range(partitions)]
    days = [names[(i // per) % partitions] for i in range(rows)]
    return pa.table({"id": ids, "day": days, "ts": pa.array([commit] * rows, pa.int64()),
                     "amount": pa.array([(i * 37) % 1000 / 10 for i in range(start, start + rows)], pa.float64()),
                     "note": [f"n{i % 977}" for i in range(start, start + rows)]})


def build(with_cs: str, without: str, args: argparse.Namespace) -> tuple[list[float], list[float]]:
    """The same commits into both tables, interleaved (the machine's load hits both alike)."""
    on = {**OPTS, "hoodie.metadata.index.column.stats.enable": "true"}
    off = {**OPTS, "hoodie.metadata.index.column.stats.enable": "false"}
    t_with, t_without = [], []
    for c in range(args.commits):
        data = batch(c, args.rows, args.partitions)
        t_with.append(timed(lambda: write_arrow(with_cs, data, on))[0])
        t_without.append(timed(lambda: write_arrow(without, data, off))[0])
    return t_with, t_without


def files_read(table: HoodieTable, flt: list, options: dict) -> int:
    return sum(1 for sl in plan_read(table, filters=flt, options=options).slices if sl.base_file)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=120)
    ap.add_argument("--commits", type=int, default=4)
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="hoodie-ds-")
    try:
        with_cs = os.path.join(root, "with")
        without = os.path.join(root, "without")
        t_with, t_without = build(with_cs, without, args)
        table = HoodieTable(with_cs)
        target = args.rows * (args.commits // 2) + args.rows // 3
        flt = [("id", "=", target)]
        n_on, n_off = files_read(table, flt, ON), files_read(table, flt, OFF)
        s_on, r_on = best_of(lambda: hoodie.read_table(with_cs, filters=flt, options=ON), 3)
        s_off, r_off = best_of(lambda: hoodie.read_table(with_cs, filters=flt, options=OFF), 3)
        assert r_on.column("id").to_pylist() == r_off.column("id").to_pylist() == [target]
        total = args.rows * args.commits
        print(f"table: {total:,} rows, {args.partitions} partitions, {n_off} base files")
        print(f"point filter id = {target}: with skipping {n_on} file(s) read, {s_on:.3f} s; "
              f"without {n_off} files, {s_off:.3f} s; files ratio {n_on / n_off:.4f}, time ratio {s_on / s_off:.3f}")
        print(f"commit ({args.rows:,} rows into {args.partitions} partitions), median of {args.commits}: "
              f"{statistics.median(t_with):.3f} s keeping column_stats, {statistics.median(t_without):.3f} s "
              f"without: ratio {statistics.median(t_with) / statistics.median(t_without):.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
