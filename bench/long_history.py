"""Benchmark (issue 33): the cost of commit N of a long-lived table, with and without timeline archival.

A merge-on-read table of constant size (``--rows`` keys in one partition, every commit upserts all of
them, pure Python ``write_arrow``), inline compaction (every 5 deltacommits, Hudi's default) and
automatic clean on. Each run writes ``--commits`` commits and times every commit; the ratio is the
median time of the last ``--window`` commits over the median of the first ``--window`` (1.0: commit
N costs what the first ones did). Two runs in one process, alternating nothing but measured on the
same machine minutes apart: archival on (``hoodie.archive.automatic=true``, Hudi's defaults
``hoodie.keep.min.commits=20``, ``hoodie.keep.max.commits=30``) and the reference, archival off.

    python bench/long_history.py [--commits 1500] [--rows 100] [--window 300] [--metadata] [--only on|off]

Prints one JSON document: per run the two medians and their ratio, in wall time and in this process's
CPU time (less sensitive to other processes on a shared machine), the active timeline's file count at the
end, the archived timeline's file count, and the whole run's time.

``--ops`` also times what else a long-lived table does (median of 5, wall and CPU) right after the first
window of commits and at the end: a snapshot read and a read-optimized read (``hoodie.read_table``), a
compaction plan (``plan_compaction``, trigger ignored), a TTL dry run (KEEP_BY_TIME, nothing expires), a
clean plan and the freshness report; each with its ratio end / early (1.0: costs what it did when young).
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

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pyarrow as pa  # noqa: E402

from hoodie.format.table import HoodieTable  # noqa: E402
from hoodie import read_table, write_arrow  # noqa: E402
from hoodie.services.clean.planner import plan_clean  # noqa: E402
from hoodie.services.compaction import freshness  # noqa: E402
from hoodie.services.compaction.schedule import plan_compaction  # noqa: E402
from hoodie.services.ttl import run_ttl  # noqa: E402

TTL_DRY_RUN = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_TIME",
               "hoodie.partition.ttl.strategy.days.retain": "3650"}
OPS = {
    "read_snapshot": lambda base: read_table(base),
    "read_optimized": lambda base: read_table(base, query_type="read_optimized"),
    "compaction_plan": lambda base: plan_compaction(HoodieTable(base), check_trigger=False),
    "ttl_dry_run": lambda base: run_ttl(base, TTL_DRY_RUN, dry_run=True),
    "clean_plan": lambda base: plan_clean(HoodieTable(base)),
    "freshness": lambda base: freshness(base),
}


def ops_costs(base: str, reps: int = 5) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of each of :data:`OPS` on the table at ``base``."""
    out = {}
    for name, op in OPS.items():
        wall, cpu = [], []
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            op(base)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        out[name] = {"wall_s": round(statistics.median(wall), 4), "cpu_s": round(statistics.median(cpu), 4)}
    return out


def _batch(rows: int, n: int) -> pa.Table:
    return pa.table({"k": [f"k{i}" for i in range(rows)], "part": ["p"] * rows,
                     "ts": pa.array([n] * rows, pa.int64()), "v": pa.array([n * rows + i for i in range(rows)],
                                                                          pa.int64())})


def run(base: str, commits: int, rows: int, archival: bool, metadata: bool, window: int, ops: bool = False) -> dict:
    opts = {"hoodie.table.name": "long", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true",
            "hoodie.archive.automatic": str(archival).lower(), "hoodie.metadata.enable": str(metadata).lower()}
    times: list[float] = []
    cpu: list[float] = []
    started = time.monotonic()
    for n in range(commits):
        t0, c0 = time.perf_counter(), time.process_time()
        write_arrow(base, _batch(rows, n), opts)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if ops and n + 1 == window:
            early = ops_costs(base)
    total = time.monotonic() - started
    extra = {}
    if ops:
        late = ops_costs(base)
        extra["ops"] = {k: {"early": early[k], "end": late[k],
                            "ratio_wall": round(late[k]["wall_s"] / early[k]["wall_s"], 2),
                            "ratio_cpu": round(late[k]["cpu_s"] / max(early[k]["cpu_s"], 1e-4), 2)} for k in OPS}
    first = statistics.median(times[:window])
    last = statistics.median(times[-window:])
    t = HoodieTable(base)
    folder = ".hoodie/timeline" if t.timeline_layout == 2 else ".hoodie"
    active = [s for s in t.storage.list_dir(folder) if not s.is_dir and s.name[:1].isdigit()]
    archived_folder = ".hoodie/timeline/history" if t.timeline_layout == 2 else ".hoodie/archived"
    archived = [s for s in t.storage.list_dir(archived_folder) if not s.is_dir]
    return {"archival": archival, "metadata_table": metadata, "commits": commits, "rows": rows,
            "median_first_s": round(first, 4), "median_last_s": round(last, 4), "ratio": round(last / first, 2),
            # CPU time of this process: what the commit costs, less the other processes on a shared machine.
            "cpu_median_first_s": round(statistics.median(cpu[:window]), 4),
            "cpu_median_last_s": round(statistics.median(cpu[-window:]), 4),
            "cpu_ratio": round(statistics.median(cpu[-window:]) / statistics.median(cpu[:window]), 2),
            "active_timeline_files": len(active),
            "active_completed_commits": len(t.timeline.completed_writes()),
            "archived_timeline_files": len(archived), "total_s": round(total, 1), **extra}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--commits", type=int, default=1500)
    p.add_argument("--rows", type=int, default=100)
    p.add_argument("--window", type=int, default=300)
    p.add_argument("--metadata", action="store_true", help="with a metadata table (hoodie.metadata.enable=true)")
    p.add_argument("--only", choices=("on", "off"), help="one run only: archival on or off")
    p.add_argument("--ops", action="store_true", help="also time reads, plans and the freshness report, early and at the end")
    a = p.parse_args(argv)
    out = []
    tmp = tempfile.mkdtemp(prefix="hoodie-long-history-")
    try:
        for archival in ((True, False) if a.only is None else (a.only == "on",)):
            base = os.path.join(tmp, f"t-{'on' if archival else 'off'}")
            out.append(run(base, a.commits, a.rows, archival, a.metadata, a.window, a.ops))
            print(json.dumps(out[-1]), file=sys.stderr, flush=True)
            shutil.rmtree(base, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
