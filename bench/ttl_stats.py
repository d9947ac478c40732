"""Benchmark: KEEP_BY_TIME partition statistics, first (full scan) vs second (incremental) TTL run.

Synthesizes a table with 10,000 partitions and 1,000 completed deltacommits: each commit's metadata
JSON holds write stats for ``--per-commit`` partitions (no data files; every partition folder has its
``.hoodie_partition_metadata`` so listing finds it). Then, in one process, runs the real
``hoodie.services.ttl.run_ttl`` twice, with ``--new`` more commits written in between, and reports
the time of the whole run and of its statistics stage (``partition_last_modified``, as the
KEEP_BY_TIME strategy calls it). Run on demand:

    python bench/ttl_stats.py [--partitions 10000] [--commits 1000] [--per-commit 20] [--new 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from hoodie.format.timeline import instant as I
from hoodie.format.timeline import active as T
from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.format.table import create_table, write_partition_metadata  # noqa: E402
from hoodie.services.ttl import run_ttl  # noqa: E402
from hoodie.services.ttl import strategies as S  # noqa: E402
from hoodie.services.ttl.stats import forget  # noqa: E402

from _common import call_timer  # noqa: E402

SCHEMA = {"type": "record", "name": "r", "fields": [{"name": "k", "type": "string"},
                                                    {"name": "day", "type": "string"}]}


def _commit(table, ts: str, parts: list[str]) -> None:
    meta = CommitMetadata(operation_type="UPSERT")
    for p in parts:
        fid = f"{abs(hash(p)) % 10**8:08d}-0000-0000-0000-000000000000-0"
        meta.add_write_stat(p, WriteStat(
            file_id=fid, path=f"{p}/.{fid}_{ts}.log.1_0-1-0", partition_path=p, prev_commit=ts,
            num_writes=100, num_update_writes=100, total_write_bytes=4096, file_size_in_bytes=4096,
            is_delta=True, log_version=1, base_file="", log_files=[f".{fid}_{ts}.log.1_0-1-0"]))
    meta.extra_metadata["schema"] = json.dumps(SCHEMA, separators=(",", ":"))
    st = table.storage
    inf = T.transition_to_inflight(st, T.create_requested(st, ts, I.DELTA_COMMIT), b"")
    T.transition_to_complete(st, inf, meta.to_json_bytes())


def build(path: str, partitions: int, commits: int, per_commit: int, seed: int = 7) -> tuple[object, list[str], int]:
    rnd = random.Random(seed)
    table = create_table(path, table_name="bench_ttl", table_type="MERGE_ON_READ", record_key_fields=["k"],
                         partition_fields=["day"], avro_schema=SCHEMA)
    parts = [f"day={i:05d}" for i in range(partitions)]
    start_ms = int(time.time() * 1000) - 3_600_000  # the last hour: nothing expires with days.retain=10
    for p in parts:
        write_partition_metadata(table.storage, p, I.epoch_ms_to_instant(start_ms))
    for c in range(commits):
        chosen = [parts[(c * per_commit + j) % partitions] for j in range(per_commit // 2)]
        chosen += rnd.sample(parts, per_commit - len(chosen))
        _commit(table, I.epoch_ms_to_instant(start_ms + 1 + c), sorted(set(chosen)))
    return table, parts, start_ms + 1 + commits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=1_000)
    ap.add_argument("--per-commit", type=int, default=20)
    ap.add_argument("--new", type=int, default=10, help="commits written between the two runs")
    ap.add_argument("--keep", action="store_true", help="keep the synthesized table")
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="hoodie_bench_ttl_")
    try:
        t0 = time.perf_counter()
        table, parts, next_ms = build(f"{d}/t", args.partitions, args.commits, args.per_commit)
        build_s = time.perf_counter() - t0
        cfg = {"hoodie.partition.ttl.strategy.days.retain": "10"}
        # The strategy's own call of the statistics stage, timed (patched where the strategy looks it up).
        with call_timer(S, "partition_last_modified") as stats_time:
            forget()
            s = time.perf_counter()
            first = run_ttl(f"{d}/t", cfg)
            first_s = time.perf_counter() - s
            rnd = random.Random(11)
            for c in range(args.new):
                _commit(table, I.epoch_ms_to_instant(next_ms + c), rnd.sample(parts, args.per_commit))
            s = time.perf_counter()
            second = run_ttl(f"{d}/t", cfg)
            second_s = time.perf_counter() - s
        assert first.instant is None and second.instant is None, "nothing should expire in this benchmark"
        out = {
            "partitions": args.partitions,
            "commits": args.commits,
            "stats_per_commit": args.per_commit,
            "new_commits_between_runs": args.new,
            "build_seconds": round(build_s, 2),
            "first_run": {"seconds": round(first_s, 3), "stats_seconds": round(stats_time[0], 3),
                          "scanned_instants": first.stats_scanned_instants},
            "second_run": {"seconds": round(second_s, 3), "stats_seconds": round(stats_time[1], 3),
                           "scanned_instants": second.stats_scanned_instants,
                           "incremental": second.stats_incremental},
            "ratio_run": round(first_s / second_s, 1),
            "ratio_stats": round(stats_time[0] / stats_time[1], 1),
        }
        print(json.dumps(out, indent=2))
        print(f"first/second TTL run: {out['ratio_run']}x; statistics stage: {out['ratio_stats']}x "
              f"({first.stats_scanned_instants} vs {second.stats_scanned_instants} instants read)")
        if args.keep:
            print(f"table kept at {d}/t")
    finally:
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
