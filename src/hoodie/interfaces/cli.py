"""The ``hoodie`` command line.

Metadata commands (``show timeline``, ``demo`` reads) never start a JVM: they use the pure-Python
format core only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Optional, Sequence
from hoodie.errors import HoodieError
from hoodie import progress

EXAMPLES = """examples:
  hoodie quickstart --base-path /tmp/hoodie_quickstart
  hoodie show timeline /tmp/hoodie_quickstart --json
  hoodie show partitions /tmp/hoodie_quickstart
  hoodie report /tmp/hoodie_quickstart --out quickstart-report.html
  hoodie compaction run /tmp/hoodie_quickstart
  hoodie ttl run /tmp/hoodie_quickstart --dry-run --set hoodie.partition.ttl.strategy.days.retain=7
  hoodie --metrics-file /tmp/hoodie.prom clean /tmp/hoodie_quickstart
"""


class CliError(HoodieError):
    """An error reported as one line on stderr with exit code 2."""


def _demo(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from hoodie.interfaces.python_io import write_arrow
    from hoodie.format.slice.reader import read_table
    from hoodie.interfaces.quickstart import claim_base_path

    base = args.base_path
    if args.rows < 1:
        raise CliError(f"--rows {args.rows}: the demo needs at least 1 row")
    # Never delete what hoodie did not create: only the demo's (or quickstart's) own earlier table
    # is replaced without --overwrite.
    claim_base_path(base, "hoodie demo", args.overwrite).prepare()
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
    snap = read_table(base)
    ro = read_table(base, query_type="read_optimized")
    inc = read_table(base, query_type="incremental", begin=c1)
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

    t = HoodieTable(args.base_path, read_only=True)
    rows = [{"instant": i.timestamp, "action": i.action, "state": i.state.name,
             **({"completion": i.completion} if i.completion else {})} for i in t.timeline]
    if getattr(args, "archived", False):
        # The archived timeline first (older), each row marked: hoodie archive moved them there.
        from hoodie.services.archive import load_archived_timeline

        rows = [{"instant": i.timestamp, "action": i.action, "state": i.state.name, "archived": True,
                 **({"completion": i.completion} if i.completion else {})}
                for i in load_archived_timeline(t)] + rows
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            done = f"  completed {r['completion']}" if "completion" in r else ""
            print(f"{r['instant']}  {r['action']:<14} {r['state']}{done}" + ("  (archived)" if r.get("archived")
                                                                              else ""))
    return 0


def _parse_sets(items: Optional[Sequence[str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise CliError(f"--set {item!r} is not KEY=VALUE")
        out[k.strip()] = v
    return out


def _emit(args: argparse.Namespace, doc: Any, text: str) -> None:
    print(json.dumps(doc, indent=2, default=str) if args.json else text)


def _create(args: argparse.Namespace) -> int:
    from hoodie.format.table import create_table

    o = _parse_sets(args.set)
    version = o.pop("hoodie.write.table.version", None) or args.table_version
    reserved = sorted(k for k in o if k in ("hoodie.table.version", "hoodie.table.initial.version",
                                            "hoodie.timeline.layout.version", "hoodie.table.type",
                                            "hoodie.table.name", "hoodie.table.recordkey.fields"))
    if reserved:
        raise CliError(f"--set {', '.join(reserved)}: set by hoodie from the other options (use --table-version, "
                       "--type, --name, --record-key); a property file that says otherwise would misdescribe the table")
    if str(version) not in ("6", "8", "9"):
        raise CliError(f"table version {version}: hoodie creates tables of version 6, 8 (Hudi 1.0) or 9 (Hudi 1.1)")
    t = create_table(
        args.base_path, table_name=args.name,
        table_type={"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}.get(args.type.upper(), args.type.upper()),
        record_key_fields=[f for f in args.record_key.split(",") if f],
        partition_fields=[f for f in (args.partition_fields or "").split(",") if f],
        precombine_field=args.precombine, hive_style=args.hive_style,
        timeline_timezone=o.pop("hoodie.table.timeline.timezone", "UTC"), extra_props=o, table_version=int(version),
    )
    _emit(args, {"base_path": t.base_path, "table_type": t.table_type, "properties": t.props},
          f"created {t.table_type} table {t.name} at {t.base_path}")
    return 0


def _show_partitions(args: argparse.Namespace) -> int:
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable

    t = HoodieTable(args.base_path, read_only=True)
    view = FileSystemView(t.storage, t.timeline)
    rows = []
    for p in view.partitions():
        slices = view.latest_file_slices(p)
        rows.append({"partition": p, "file_groups": len(slices),
                     "base_bytes": sum(sl.base_file.size for sl in slices if sl.base_file),
                     "log_files": sum(len(sl.log_files) for sl in slices),
                     "log_bytes": sum(sl.total_log_size for sl in slices)})
    _emit(args, rows, "\n".join(f"{r['partition'] or '(root)'}  {r['file_groups']} file group(s), "
                                 f"{r['base_bytes']} base bytes, {r['log_files']} log file(s)" for r in rows))
    return 0


def _show_file_slices(args: argparse.Namespace) -> int:
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable

    t = HoodieTable(args.base_path, read_only=True)
    view = FileSystemView(t.storage, t.timeline)
    parts = [args.partition] if args.partition is not None else view.partitions()
    rows = []
    for p in parts:
        for sl in view.latest_file_slices(p, args.as_of):
            rows.append({"partition": p, "file_id": sl.file_id, "base_instant": sl.base_instant,
                         "base_file": sl.base_file.name if sl.base_file else None,
                         "base_bytes": sl.base_file.size if sl.base_file else 0,
                         "log_files": [lf.name for lf in sl.sorted_logs()]})
    _emit(args, rows, "\n".join(f"{r['partition'] or '(root)'}/{r['file_id']} @ {r['base_instant']}: "
                                 f"{r['base_file'] or '(no base file)'} + {len(r['log_files'])} log file(s)"
                                 for r in rows))
    return 0


def _show_stats(args: argparse.Namespace) -> int:
    from hoodie.format.table import HoodieTable

    t = HoodieTable(args.base_path, read_only=True)
    tl = t.timeline
    rows = []
    for inst in tl.completed_writes().instants[-args.limit:]:
        stats = list(tl.commit_metadata(inst).all_write_stats())
        rows.append({"instant": inst.timestamp, "action": inst.action,
                     "records_written": sum(s.num_writes for s in stats),
                     "inserts": sum(s.num_inserts for s in stats), "updates": sum(s.num_update_writes for s in stats),
                     "deletes": sum(s.num_deletes for s in stats), "files": len(stats),
                     "bytes": sum(s.total_write_bytes for s in stats)})
    _emit(args, rows, "\n".join(f"{r['instant']} {r['action']:<13} {r['records_written']:>9} records "
                                 f"({r['inserts']} ins, {r['updates']} upd, {r['deletes']} del) "
                                 f"{r['files']} files {r['bytes']} bytes" for r in rows))
    return 0


def _rollback(args: argparse.Namespace) -> int:
    from hoodie.services.rollback.operation import rollback

    r = rollback(args.base_path, args.instant)
    text = (f"rolled back {r.rolled_back} ({r.action}) in rollback {r.rollback_instant}: "
            f"{len(r.deleted_files)} file(s) deleted, {len(r.command_blocks)} rollback block(s)")
    if r.action == "compaction":
        text += f"; plan removed, {len(r.moved_files)} log file(s) moved back to their previous file slices"
    if r.unstashed_files:
        text += f", {len(r.unstashed_files)} stashed file(s) of the TTL commit moved back"
    _emit(args, {"rollback_instant": r.rollback_instant, "rolled_back": r.rolled_back,
                 "deleted_files": r.deleted_files, "command_blocks": r.command_blocks,
                 "unstashed_files": r.unstashed_files, "moved_files": [list(m) for m in r.moved_files]}, text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the docs' CLI reference)."""
    p = argparse.ArgumentParser(prog="hoodie", description="Apache Hudi tables (table versions 6, 8 and 9: Hudi 0.14/0.15 and 1.0/1.1) from Python.",
                                epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metrics-file", help="write Prometheus metrics of writes, TTL, clean and compaction here")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("create", help="create an empty table (hoodie.properties and the layout of table version 6, 8 or 9)",
                       epilog="example: hoodie create /data/t --name t --type MERGE_ON_READ --record-key id "
                              "--partition-fields day --precombine ts")
    c.add_argument("base_path")
    c.add_argument("--name", required=True)
    c.add_argument("--type", default="COPY_ON_WRITE", choices=["COPY_ON_WRITE", "MERGE_ON_READ", "cow", "mor"])
    c.add_argument("--record-key", required=True, help="record key field(s), comma-separated")
    c.add_argument("--partition-fields")
    c.add_argument("--precombine")
    c.add_argument("--hive-style", action="store_true")
    c.add_argument("--table-version", default="6", choices=["6", "8", "9"],
                   help="6 (Hudi 0.14/0.15, default), 8 (Hudi 1.0) or 9 (Hudi 1.1)")
    c.add_argument("--json", action="store_true")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", help="extra table property (repeatable)")
    c.set_defaults(func=_create)
    rb = sub.add_parser("rollback", help="roll back a pending or the latest completed write, or remove a pending "
                        "compaction plan (no JVM)",
                        epilog="example: hoodie rollback /data/t 20240501120000000")
    rb.add_argument("base_path")
    rb.add_argument("instant")
    rb.add_argument("--json", action="store_true")
    rb.set_defaults(func=_rollback)
    d = sub.add_parser("demo", help="write a small MOR table (insert, upsert, delete) and read it back")
    d.add_argument("--base-path", default="/tmp/hoodie_demo")
    d.add_argument("--rows", type=int, default=3000)
    d.add_argument("--json", action="store_true")
    ow = d.add_mutually_exclusive_group()
    ow.add_argument("--overwrite", dest="overwrite", action="store_const", const=True,
                    help="delete whatever --base-path holds (by default only a table an earlier demo or "
                         "quickstart made there is replaced, and any other non-empty folder is refused)")
    ow.add_argument("--no-overwrite", dest="overwrite", action="store_const", const=False,
                    help="keep the table an earlier demo made at the base path and write into it")
    d.set_defaults(func=_demo, overwrite=None)
    s = sub.add_parser("show", help="show table metadata (no JVM)")
    ssub = s.add_subparsers(dest="what", required=True)
    tl = ssub.add_parser("timeline", help="the instants of the active timeline")
    tl.add_argument("base_path")
    tl.add_argument("--json", action="store_true")
    tl.add_argument("--archived", action="store_true", help="also the archived timeline's instants (older), marked")
    tl.set_defaults(func=_show_timeline)
    sp = ssub.add_parser("partitions", help="partitions with file group, base and log sizes")
    sp.add_argument("base_path")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=_show_partitions)
    fs = ssub.add_parser("file-slices", help="the latest file slice of every file group")
    fs.add_argument("base_path")
    fs.add_argument("--partition")
    fs.add_argument("--as-of")
    fs.add_argument("--json", action="store_true")
    fs.set_defaults(func=_show_file_slices)
    st = ssub.add_parser("stats", help="write statistics of the latest commits")
    st.add_argument("base_path")
    st.add_argument("--limit", type=int, default=10)
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_show_stats)
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
    import warnings

    saved = warnings.showwarning
    if not args.debug:
        # One line per warning (an unknown --set key, a skipped corrupt log block), not Python's
        # "file:line: UserWarning" followed by a source line.
        def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
            print(f"hoodie: warning: {message}", file=sys.stderr)

        warnings.showwarning = show
    # Progress bars for long pure-Python work only where a person watches (logs and pipes get none).
    previous = progress.use(progress.terminal_reporter() if _interactive() else None)
    try:
        return _run(args)
    finally:
        warnings.showwarning = saved
        progress.use(previous)


def _interactive() -> bool:
    """Whether standard error is a terminal."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _run(args: argparse.Namespace) -> int:
    if args.metrics_file:
        import os

        os.environ["HOODIE_METRICS_FILE"] = args.metrics_file
    try:
        return int(args.func(args))
    except Exception as e:  # one clear line, non-zero exit; tracebacks only on request
        if args.debug:
            raise
        print(f"hoodie: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
