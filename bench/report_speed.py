"""Benchmark: ``hoodie report`` on a generated table against a plain ``hoodie show timeline``.

Builds (pure Python, no JVM) a MERGE_ON_READ table partitioned by day: ``--days`` daily partitions
of ``--rows`` rows in total, event times inside each row's day, then ``--rounds`` rounds of "upsert
a slice of the newest week (into log files), event-time compaction" and ``--backlog`` upserts over
the newest 300 days left uncompacted, so the report has a compaction history (W and T), a backlog, partitions of many
ages for the TTL dry run (KEEP_BY_EVENT_TIME, ``--retain`` days) and a timeline of a few dozen
instants. Then, in the same process and alternating, times the two commands as a user runs them
(``hoodie.interfaces.cli.main``): ``hoodie report <t> --out <f> --set <ttl>`` and
``hoodie show timeline <t> --json`` (stdout discarded), best of ``--repeat``.

    python bench/report_speed.py [--rows 200000] [--days 120] [--rounds 4] [--repeat 3]
                                 [--keep /tmp/report_bench] [--screenshot docs/report.png]

``--screenshot`` also opens the report in headless Chromium and saves the whole page as PNG (the
picture in docs/report.md). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pyarrow as pa  # noqa: E402

from hoodie.interfaces.cli import main  # noqa: E402
from hoodie.services.compaction import run_compaction, schedule_compaction  # noqa: E402
from hoodie import write_arrow  # noqa: E402

from _common import machine_info  # noqa: E402

DAY_MS = 86_400_000
OPTS = {
    "hoodie.table.name": "events",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.payload.event.time.field": "ts",
}
COMPACT = {"hoodie.compaction.strategy": "EventTimeBased", "hoodie.compact.inline.max.delta.commits": "1",
           "hoodie.compaction.event.time.data.latency.ms": str(2 * 3_600_000)}


def _day(ms: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ms // 1000))


def _rows(ids: range, days: int, now: int, lag_ms: int) -> pa.Table:
    """Rows spread over the last ``days`` days (newest day = today), event time ``lag_ms`` before now
    within each row's day."""
    day_of = [i % days for i in ids]
    ts = [now - d * DAY_MS - lag_ms - (i % 977) for i, d in zip(ids, day_of)]
    return pa.table({"id": pa.array(list(ids), pa.int64()), "day": [_day(t) for t in ts],
                     "ts": pa.array(ts, pa.int64()), "amount": pa.array([float(i) for i in ids])})


def build(path: str, rows: int, days: int, rounds: int, backlog: int = 2) -> dict:
    """The generated table; returns what was written."""
    now = int(time.time() * 1000)
    t0 = time.monotonic()
    write_arrow(path, _rows(range(rows), days, now, 6 * 3_600_000), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    upd = max(1, rows // 20)
    compactions = 0
    for r in range(rounds):
        # Updates of the newest week, with event times creeping towards now, each round compacted.
        ids = range(r * upd % rows, r * upd % rows + upd)
        batch = _rows(ids, min(days, 7), now, max(5 - r, 1) * 3_600_000)
        write_arrow(path, batch, {**OPTS, "hoodie.datasource.write.operation": "upsert"})
        c = schedule_compaction(path, COMPACT)
        if c is not None:
            run_compaction(path, c, COMPACT)
            compactions += 1
    # Then ``backlog`` upserts over the newest 300 days left uncompacted: the backlog (as in the
    # 10M-row benchmark table: 600 log files over 300 partitions after its two upsert batches).
    for b in range(backlog):
        ids = range((rounds + b) * upd % rows, (rounds + b) * upd % rows + upd)
        write_arrow(path, _rows(ids, min(days, 300), now, 3_600_000), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    return {"rows": rows, "days": days, "compacted_upserts": rounds, "uncompacted_upserts": backlog,
            "rows_per_upsert": upd, "compactions": compactions, "build_seconds": round(time.monotonic() - t0, 1)}


def _quiet(argv: list[str]) -> float:
    out = io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    took = time.perf_counter() - t
    if rc != 0:
        raise SystemExit(f"hoodie {' '.join(argv)} failed ({rc})")
    return took


def screenshot(html: str, png: str) -> None:
    """The whole page in headless Chromium (fresh profile, no network)."""
    profile = tempfile.mkdtemp(prefix="hoodie-chromium-")
    try:
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--screenshot={os.path.abspath(png)}",
                        "--window-size=1000,4200", "file://" + os.path.abspath(html)],
                       check=True, timeout=120, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def run(args: argparse.Namespace) -> dict:
    work = args.keep or tempfile.mkdtemp(prefix="hoodie-report-bench-")
    path = os.path.join(work, "events")
    shutil.rmtree(path, ignore_errors=True)
    built = build(path, args.rows, args.days, args.rounds, args.backlog)
    html = os.path.join(work, "events-report.html")
    ttl = ["--set", "hoodie.partition.ttl.management.strategy.type=KEEP_BY_EVENT_TIME",
           "--set", f"hoodie.partition.ttl.strategy.days.retain={args.retain}",
           "--set", "hoodie.partition.ttl.strategy.event.time.format=yyyy-MM-dd"]
    ttl += [x for k, v in COMPACT.items() for x in ("--set", f"{k}={v}")]
    report_argv = ["report", path, "--out", html, *ttl]
    timeline_argv = ["show", "timeline", path, "--json"]
    _quiet(timeline_argv)  # warm-up: imports, page cache
    _quiet(report_argv)
    rep, tl = [], []
    for _ in range(args.repeat):
        rep.append(_quiet(report_argv))
        tl.append(_quiet(timeline_argv))
    figures = json.loads(subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", "report", path, "--json", *ttl],
                                        capture_output=True, text=True, check=True,
                                        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout)
    if args.screenshot:
        screenshot(html, args.screenshot)
    out = {
        "table": {**built, "partitions": len(figures["partitions"]["rows"]),
                  "base_files": figures["files"]["base_files"], "log_files": figures["compaction"]["backlog"]["log_files"],
                  "active_instants": figures["timeline"]["active"]},
        "report_seconds_best": round(min(rep), 3), "report_seconds_all": [round(x, 3) for x in rep],
        "show_timeline_seconds_best": round(min(tl), 3), "show_timeline_seconds_all": [round(x, 3) for x in tl],
        "ratio_report_to_show_timeline": round(min(rep) / min(tl), 1),
        "report_html_bytes": os.path.getsize(html),
        "attention": [a["text"] for a in figures["attention"]],
        "machine": machine_info(java=False),
    }
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main_() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--days", type=int, default=120)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--backlog", type=int, default=2, help="uncompacted upserts over the newest 300 days at the end")
    p.add_argument("--retain", type=int, default=90)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--keep", help="build the table in this folder and keep it")
    p.add_argument("--screenshot", help="save a PNG of the report page here (needs chromium)")
    print(json.dumps(run(p.parse_args()), indent=2))


if __name__ == "__main__":
    main_()
