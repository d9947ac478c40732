"""Benchmark: what maintaining the metadata table costs (``hoodie.services.metadata``).

1. Commit overhead: the same sequence of small pure-Python upserts (``write_arrow``) on a table with
   and without a metadata table (``hoodie.metadata.enable``), per commit (median), in one run. The
   metadata table adds a deltacommit (an HFile log block and three timeline files), a compaction
   every ``hoodie.metadata.compact.max.delta.commits`` commits and its clean.
2. A large ``files`` partition: bootstrap of a table with ``--partitions`` x ``--files`` files
   (``hoodie metadata create``), one deltacommit on it, a metadata-table compaction of it (merging
   every record into a new base HFile), and listing through it against listing storage.

    python bench/metadata_table.py [--commits 40] [--partitions 1000] [--files 100]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pyarrow as pa  # noqa: E402

from _common import timed  # noqa: E402

from hoodie.format.metadata import MetadataTable  # noqa: E402
from hoodie.format.table import HoodieTable  # noqa: E402
from hoodie.services.metadata import create_metadata_table  # noqa: E402
from hoodie.services.metadata.writer import MetadataWriter, storage_listing  # noqa: E402
from hoodie import write_arrow  # noqa: E402

OPTS = {"hoodie.table.name": "b", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.clean.automatic": "false"}


def commit_overhead(root: str, commits: int) -> dict[str, float]:
    out = {}
    for label, enable in (("without", "false"), ("with", "true")):
        path = os.path.join(root, f"t_{label}")
        opts = {**OPTS, "hoodie.metadata.enable": enable}
        times = []
        for i in range(commits):
            data = pa.table({"id": pa.array([i % 50, 1000 + i], pa.int64()), "p": [f"p{i % 10}", f"p{i % 7}"],
                             "ts": pa.array([i, i], pa.int64())})
            s, _ = timed(lambda: write_arrow(path, data, opts))
            times.append(s)
        out[label] = statistics.median(times[5:])
    return out


def fake_table(root: str, partitions: int, files: int) -> str:
    """A table with one commit and ``partitions`` x ``files`` (empty-content) base files named like
    Hudi's, enough for listing and metadata work (no reads)."""
    path = os.path.join(root, "big")
    write_arrow(path, pa.table({"id": pa.array([0], pa.int64()), "p": ["p0"], "ts": pa.array([0], pa.int64())}), OPTS)
    table = HoodieTable(path)
    inst = table.timeline.completed().last().timestamp
    for p in range(partitions):
        d = os.path.join(path, f"dt={p:05d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, ".hoodie_partition_metadata"), "w") as f:
            f.write(f"commitTime={inst}\npartitionDepth=1\n")
        for i in range(files):
            with open(os.path.join(d, f"{p:08x}-{i:04x}-4000-8000-000000000000-0_0-1-{i}_{inst}.parquet"), "wb") as f:
                f.write(b"x" * (100 + i))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=40)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--files", type=int, default=100)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="hoodie_bench_mdt_")
    try:
        o = commit_overhead(root, args.commits)
        print(f"commit (median of {args.commits - 5}): without a metadata table {o['without'] * 1000:.1f} ms, "
              f"with {o['with'] * 1000:.1f} ms: +{(o['with'] - o['without']) * 1000:.1f} ms, "
              f"ratio {o['with'] / o['without']:.2f}")
        path = fake_table(root, args.partitions, args.files)
        n = args.partitions * args.files
        t_create, _ = timed(lambda: create_metadata_table(HoodieTable(path)))
        t_list_mdt, listing = timed(lambda: MetadataTable(HoodieTable(path)).listing())
        t_list_storage, _ = timed(lambda: storage_listing(HoodieTable(path).storage))
        assert sum(len(f) for f in listing.values()) >= n
        data = pa.table({"id": pa.array([1], pa.int64()), "p": ["new"], "ts": pa.array([1], pa.int64())})
        t_commit, _ = timed(lambda: write_arrow(path, data, OPTS))
        table = HoodieTable(path)
        writer = MetadataWriter(table)
        t0 = time.perf_counter()
        writer._compact(table.timeline.completed().last().timestamp + "001")
        t_compact = time.perf_counter() - t0
        print(f"{n} files in {args.partitions} partitions: create {t_create:.2f} s, list through it {t_list_mdt:.2f} s "
              f"(storage {t_list_storage:.2f} s), a commit on it {t_commit * 1000:.0f} ms, "
              f"its compaction {t_compact:.2f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
