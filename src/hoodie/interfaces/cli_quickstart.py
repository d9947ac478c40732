"""``hoodie quickstart``: the README's main job (needs Java for local Spark)."""

from __future__ import annotations

import argparse
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from hoodie.interfaces.quickstart import result_json, run_quickstart

    if args.rows < 100:
        raise ValueError(f"--rows {args.rows} is too small for a meaningful run; use at least 100")
    import sys

    log = (lambda s: None) if args.json else print
    try:
        if args.streaming:
            from hoodie.interfaces.quickstart_stream import run_stream_quickstart

            res = run_stream_quickstart(args.base_path, rows=args.rows, days=args.days, batches=args.batches,
                                        retain_days=args.retain_days, log=log, overwrite=args.overwrite or None)
        else:
            res = run_quickstart(args.base_path, rows=args.rows, days=args.days, batches=args.batches,
                                 retain_days=args.retain_days, log=log,
                                 progress=not args.json and sys.stdout.isatty(), overwrite=args.overwrite or None)
    finally:
        _stop_spark()
    if args.json:
        print(result_json(res))
    return 0


def _stop_spark() -> None:
    """Stop the Spark session this command started, before the interpreter exits: left to interpreter
    shutdown, its gateway and worker threads were once still running when native libraries were torn
    down (the process aborted after the run had finished and printed)."""
    import sys

    if "pyspark" not in sys.modules:
        return
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def register(sub: Any, show: Any) -> None:
    """Add ``hoodie quickstart``."""
    q = sub.add_parser(
        "quickstart", help="run the event pipeline on local Spark: upserts, event-time compaction, TTL, clean",
        description="Generate an event stream (partitioned by day, late data, updates, deletes) into a "
                    "MERGE_ON_READ table on local Spark, compact by event time, expire old partitions, clean.",
        epilog="example: hoodie quickstart --base-path /tmp/hoodie_quickstart --rows 20000",
    )
    q.add_argument("--base-path", default="/tmp/hoodie_quickstart")
    q.add_argument("--rows", type=int, default=20000)
    q.add_argument("--days", type=int, default=10)
    q.add_argument("--batches", type=int, default=10)
    q.add_argument("--retain-days", type=int, default=7)
    q.add_argument("--json", action="store_true")
    q.add_argument("--streaming", action="store_true",
                   help="the same events through Structured Streaming (hoodie.spark.write_stream, one micro-batch "
                        "per arrival) with event-time compaction and partition TTL inline; prints the freshness "
                        "watermark after each micro-batch")
    q.add_argument("--overwrite", action="store_true",
                   help="delete whatever --base-path holds (by default only a table an earlier quickstart or "
                        "demo made there is replaced, and any other non-empty folder is refused)")
    q.set_defaults(func=_run)
