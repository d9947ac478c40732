"""The ``hoodie`` command line.

Metadata commands (``show timeline``, ``demo`` reads) never start a JVM: they use the pure-Python
format core only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from typing import Optional, Sequence

EXAMPLES = """examples:
  hoodie demo --base-path /tmp/hoodie_demo
  hoodie show timeline /tmp/hoodie_demo --json
"""


class CliError(Exception):
    """An error reported as one line on stderr with exit code 2."""


def _demo(args: argparse.Namespace) -> int:
    import pyarrow as pa

    import hoodie
    from hoodie.format.batch_write import write_arrow

    base = args.base_path
    if args.overwrite:
        shutil.rmtree(base, ignore_errors=True)
    opts = {
        "hoodie.table.name": "demo_events",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "event_id",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.payload.event.time.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }
    n = args.rows
    days = ["2024-05-01", "2024-05-02", "2024-05-03"]
    base_ms = 1714521600000
    batch = pa.table({
        "event_id": [f"e{i:06d}" for i in range(n)],
        "day": [days[i % 3] for i in range(n)],
        "ts": pa.array([base_ms + (i % 3) * 86_400_000 + i for i in range(n)], pa.int64()),
        "amount": [float(i) for i in range(n)],
    })
    t0 = time.monotonic()
    c1 = write_arrow(base, batch, {**opts, "hoodie.datasource.write.operation": "insert"})
    upd = batch.slice(0, max(1, n // 10))
    upd = upd.set_column(3, "amount", pa.array([v * 10 for v in upd.column("amount").to_pylist()]))
    upd = upd.set_column(2, "ts", pa.array([v + 1 for v in upd.column("ts").to_pylist()], pa.int64()))
    c2 = write_arrow(base, upd, {**opts, "hoodie.datasource.write.operation": "upsert"})
    dels = batch.slice(n - max(1, n // 20), max(1, n // 20))
    c3 = write_arrow(base, dels, {**opts, "hoodie.datasource.write.operation": "delete"})
    snap = hoodie.read_table(base)
    ro = hoodie.read_table(base, query_type="read_optimized")
    inc = hoodie.read_table(base, query_type="incremental", begin=c1)
    summary = {
        "base_path": base,
        "commits": [c1, c2, c3],
        "snapshot_rows": snap.num_rows,
        "read_optimized_rows": ro.num_rows,
        "incremental_rows_after_first_commit": inc.num_rows,
        "seconds": round(time.monotonic() - t0, 2),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"wrote a MERGE_ON_READ table at {base}: insert {c1}, upsert {c2}, delete {c3}")
        print(f"snapshot rows: {snap.num_rows} (read-optimized: {ro.num_rows}; "
              f"changed since the insert: {inc.num_rows}) in {summary['seconds']} s")
    return 0


def _show_timeline(args: argparse.Namespace) -> int:
    from hoodie.format.table import HoodieTable

    t = HoodieTable(args.base_path)
    rows = [{"instant": i.timestamp, "action": i.action, "state": i.state.name} for i in t.timeline]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['instant']}  {r['action']:<14} {r['state']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the docs' CLI reference)."""
    p = argparse.ArgumentParser(prog="hoodie", description="Apache Hudi v6 tables from Python.",
                                epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="write a small MOR table (insert, upsert, delete) and read it back")
    d.add_argument("--base-path", default="/tmp/hoodie_demo")
    d.add_argument("--rows", type=int, default=3000)
    d.add_argument("--json", action="store_true")
    d.add_argument("--no-overwrite", dest="overwrite", action="store_false",
                   help="keep an existing table at the base path")
    d.set_defaults(func=_demo)
    s = sub.add_parser("show", help="show table metadata (no JVM)")
    ssub = s.add_subparsers(dest="what", required=True)
    tl = ssub.add_parser("timeline", help="the instants of the active timeline")
    tl.add_argument("base_path")
    tl.add_argument("--json", action="store_true")
    tl.set_defaults(func=_show_timeline)
    # Command groups live in modules named hoodie.interfaces.cli_<group>, each with
    # register(subparsers, show_subparsers); discovery keeps them independent of this file.
    import importlib
    import pkgutil

    import hoodie.interfaces as _pkg

    for m in sorted(pkgutil.iter_modules(_pkg.__path__, "hoodie.interfaces.")):
        if m.name.rsplit(".", 1)[-1].startswith("cli_"):
            importlib.import_module(m.name).register(sub, ssub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``hoodie`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except Exception as e:  # one clear line, non-zero exit; tracebacks only on request
        if "--debug" in (argv or sys.argv):
            raise
        print(f"hoodie: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
