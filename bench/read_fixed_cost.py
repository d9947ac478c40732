"""Benchmark (issue 33): the fixed cost of a snapshot read, ``hoodie.read_table`` vs hudi-rs, on the quickstart
table young and aged.

The table is ``hoodie quickstart``'s (15k rows in 8 daily partitions, merge-on-read slices with log files);
building it takes Spark and about 30 s, so the script reuses ``--base-path`` when a table is there (build it
once with ``hoodie quickstart --base-path <path>``). The *aged* twin is a copy given ``--commits`` more
pure-Python commits that change no row (empty upserts; clean and archival on with Hudi's defaults, compaction
not triggered): the same rows and slices behind a long history (archived instants, a full active timeline).

Timed in one process, alternating, after one warm-up read each: ``hoodie.read_table(path)`` (one Arrow table)
and hudi-rs ``HudiTableBuilder.from_base_uri(path).build().read(...)`` plus ``pa.Table.from_batches`` (as
``tests/hudi_rs.py`` calls it); best and median of ``--repeat`` wall times, and this process's CPU time. Row
counts and a checksum of the rows must agree. Repeated reads in one process profit from hoodie's cache of
Parquet footers (``HOODIE_PARQUET_FOOTER_CACHE_MB``, docs/storage.md); the *first* read of a process does not:
``--fresh N`` also times N first reads, each in a new process (imports done before the clock starts), hoodie
and hudi-rs alternating, and hoodie once more with pandas imported before the clock: pyarrow imports pandas
(when installed) at a process's first ``pa.array`` call, which hoodie's read path makes and hudi-rs (arrays
built in Rust) does not.

    python bench/read_fixed_cost.py [--base-path /tmp/hoodie_quickstart] [--commits 200] [--repeat 15] [--fresh 6]
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
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

from _common import machine_info, utc_now  # noqa: E402


def _hudi_rs(path: str) -> pa.Table:
    from tests.hudi_rs import read_hudi_rs

    return read_hudi_rs(path)


def _age(src: str, dst: str, commits: int) -> None:
    """Copy ``src`` to ``dst`` and give it ``commits`` more commits that change no row (empty upserts): the
    same slices behind a long history. Compaction would rewrite every slice with log files, so its inline
    trigger is set to elapsed time (never reached here); clean and archival run with Hudi's defaults."""
    import hoodie

    shutil.copytree(src, dst)
    empty = hoodie.read_table(dst).slice(0, 0)
    empty = empty.drop_columns([c for c in empty.column_names if c.startswith("_hoodie_")])
    opts = {"hoodie.datasource.write.operation": "upsert", "hoodie.compact.inline": "true",
            "hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED",
            "hoodie.compact.inline.max.delta.seconds": str(10 ** 9)}
    for _ in range(commits):
        hoodie.write_arrow(dst, empty, opts)


_FIRST_READ = """
import sys, time, warnings, json
warnings.simplefilter("ignore")
sys.path[:0] = {paths!r}
import pyarrow as pa, hoodie
from tests.hudi_rs import read_hudi_rs
if {who!r} == "hoodie, pandas imported":
    import pandas  # what pyarrow imports at a process's first pa.array call (about 240 ms of CPU), paid here
fn = read_hudi_rs if {who!r} == "hudi-rs" else hoodie.read_table
c0, w0 = time.process_time(), time.perf_counter()
fn({path!r})
print(json.dumps([time.perf_counter() - w0, time.process_time() - c0]))
"""


def _first_read(who: str, path: str) -> tuple[float, float]:
    """Wall and CPU seconds of one read, the first of a new process."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    code = _FIRST_READ.format(paths=[os.path.join(here, "..", "src"), os.path.join(here, "..")], who=who, path=path)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    wall, cpu = json.loads(out.strip().splitlines()[-1])
    return wall, cpu


def _checksum(t: pa.Table) -> tuple[int, str]:
    keys = pc.sort_indices(t, [("event_id", "ascending")])
    ids = t.column("event_id").take(keys).to_pylist()
    return t.num_rows, str(hash(tuple(ids)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-path", default="/tmp/hoodie_quickstart")
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--no-cache-too", action="store_true",
                    help="also time hoodie with its footer cache off (HOODIE_PARQUET_FOOTER_CACHE_MB=0), in the same rounds")
    ap.add_argument("--fresh", type=int, default=0, help="also time this many first reads, each in a new process")
    args = ap.parse_args(argv)
    import hoodie
    from hoodie.format.table import HoodieTable

    if not os.path.exists(os.path.join(args.base_path, ".hoodie", "hoodie.properties")):
        print(f"no table at {args.base_path}: build it once with `hoodie quickstart --base-path {args.base_path}`",
              file=sys.stderr)
        return 2
    warnings.simplefilter("ignore")
    root = tempfile.mkdtemp(prefix="read_fixed_")
    try:
        tables = {"young": os.path.join(root, "young"), "aged": os.path.join(root, "aged")}
        shutil.copytree(args.base_path, tables["young"])
        t0 = time.perf_counter()
        _age(args.base_path, tables["aged"], args.commits)
        out: dict = {"date": utc_now(), "machine": machine_info(java=False), "aged_commits": args.commits,
                     "aging_s": round(time.perf_counter() - t0, 1), "load_average": os.getloadavg(), "tables": {}}
        for name, path in tables.items():
            t = HoodieTable(path)
            a, b = hoodie.read_table(path), _hudi_rs(path)
            out["tables"][name] = {"rows": a.num_rows, "rows_equal_hudi_rs": _checksum(a) == _checksum(b),
                                   "active_timeline_files": len(t.timeline.file_names),
                                   "archive_files": len(t.storage.list_dir(".hoodie/archived"))}
        readers = {"hoodie": hoodie.read_table, "hudi-rs": _hudi_rs}
        if args.no_cache_too:
            def uncached(path: str) -> pa.Table:
                os.environ["HOODIE_PARQUET_FOOTER_CACHE_MB"] = "0"
                try:
                    return hoodie.read_table(path)
                finally:
                    os.environ.pop("HOODIE_PARQUET_FOOTER_CACHE_MB")
            readers["hoodie, footer cache off"] = uncached
        samples: dict[str, list[tuple[float, float]]] = {}
        for _ in range(args.repeat):
            for name, path in tables.items():
                for who, fn in readers.items():
                    c0, w0 = time.process_time(), time.perf_counter()
                    fn(path)
                    samples.setdefault(f"{name}: {who}", []).append((time.perf_counter() - w0, time.process_time() - c0))
        for _ in range(args.fresh):
            for name, path in tables.items():
                for who in ("hoodie", "hudi-rs", "hoodie, pandas imported"):
                    samples.setdefault(f"{name}: {who} (first read)", []).append(_first_read(who, path))
        out["ms"] = {k: {"best": round(min(w for w, _ in v) * 1e3, 1),
                         "median": round(statistics.median(w for w, _ in v) * 1e3, 1),
                         "cpu_median": round(statistics.median(c for _, c in v) * 1e3, 1)} for k, v in samples.items()}
        for name in tables:
            for tag, suffix, rs in (("", "", ""), ("first_read_", " (first read)", " (first read)"),
                                    ("first_read_pandas_imported_", ", pandas imported (first read)", " (first read)"),
                                    ("cache_off_", ", footer cache off", "")):
                if f"{name}: hoodie{suffix}" not in out["ms"]:
                    continue
                h, r = out["ms"][f"{name}: hoodie{suffix}"], out["ms"][f"{name}: hudi-rs{rs}"]
                out["tables"][name].update({f"{tag}ratio_best": round(h["best"] / r["best"], 2),
                                            f"{tag}ratio_median": round(h["median"] / r["median"], 2),
                                            f"{tag}ratio_cpu": round(h["cpu_median"] / r["cpu_median"], 2)})
        out["load_average_end"] = os.getloadavg()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
