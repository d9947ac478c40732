"""``hoodie compaction schedule|run|show|rollback`` and ``hoodie show freshness`` (no JVM).

Options are Hudi keys given as ``--set KEY=VALUE`` (repeatable), e.g.
``--set hoodie.compaction.strategy=EventTimeBased --set hoodie.compaction.event.time.threshold=2024-05-01T00:00:00Z``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

EXAMPLES = """examples:
  hoodie compaction schedule /data/trips --set hoodie.compact.inline.max.delta.commits=1
  hoodie compaction run /data/trips --set hoodie.compaction.strategy=EventTimeBased --json
  hoodie compaction show /data/trips
  hoodie show freshness /data/trips --json
"""


def _options(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {p!r} is not KEY=VALUE (e.g. --set hoodie.compaction.strategy=EventTimeBased)")
        out[key.strip()] = value.strip()
    return out


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, default=str) if args.json else text)


def _schedule(args: argparse.Namespace) -> int:
    from hoodie.services.compaction import schedule_compaction_result

    res = schedule_compaction_result(args.base_path, _options(args.set), instant=args.instant)
    data = {"instant": res.instant, "reason": res.reason, "operations": len(res.operations),
            "partial_operations": sum(1 for op in res.operations if op.is_partial),
            "threshold_ms": res.threshold_ms if res.instant else None}
    text = (f"scheduled compaction {res.instant}: {res.reason}" if res.instant
            else f"no compaction scheduled: {res.reason}")
    _print(args, data, text)
    return 0


def _run(args: argparse.Namespace) -> int:
    from hoodie.format.table import HoodieTable
    from hoodie.services.compaction import run_compaction, schedule_compaction_result

    opts = _options(args.set)
    reason = ""
    if args.instant is None and not HoodieTable(args.base_path).timeline.pending_compactions():
        res = schedule_compaction_result(args.base_path, opts)
        reason = res.reason
        results = run_compaction(args.base_path, res.instant, opts) if res.instant else []
    else:
        results = run_compaction(args.base_path, args.instant, opts)
    data = {"completed": [{"instant": r.instant, "metrics": r.metrics, "links": [l.to_json() for l in r.links],
                           "split_files": r.split_files} for r in results], "reason": reason}
    if not results:
        text = f"nothing to compact: {reason}"
    else:
        text = "\n".join(
            f"completed compaction {r.instant}: {r.metrics['operations']} operation(s) "
            f"({r.metrics['partialOperations']} partial, {len(r.links)} {r.metrics.get('linkMode') or 'link'}(s)), "
            f"{r.metrics['logFilesCompacted']} log file(s) merged in {r.metrics['durationMs']} ms"
            for r in results)
    _print(args, data, text)
    return 0


def _rollback(args: argparse.Namespace) -> int:
    from hoodie.services.compaction import rollback_compaction

    r = rollback_compaction(args.base_path, args.instant)
    data = {"instant": r.instant, "rollback_instant": r.rollback_instant, "deleted": r.deleted}
    text = (f"rolled back compaction {r.instant} (rollback {r.rollback_instant}): deleted {len(r.deleted)} file(s); "
            "the plan stays requested" if r.rollback_instant else f"compaction {r.instant} had nothing to roll back")
    _print(args, data, text)
    return 0


def _show(args: argparse.Namespace) -> int:
    from hoodie.format.table import HoodieTable
    from hoodie.services.compaction import freshness, show_compactions

    t = HoodieTable(args.base_path)
    summaries = show_compactions(t)
    pending = [s.to_json() for s in summaries if s.is_pending]
    completed = [s.to_json() for s in summaries if not s.is_pending]
    data = {"pending": pending, "completed": completed[-args.limit:], "freshness": freshness(t)}
    lines = [f"pending compactions: {len(pending)}"]
    lines += [f"  {p['instant']} {p['state']:<9} " + _plan_text(p) for p in pending]
    lines.append(f"completed compactions: {len(completed)} (last {min(len(completed), args.limit)})")
    lines += [f"  {c['instant']} {c['operations']} op(s) {c['duration_ms']} ms, "
              f"{c['remaining_log_files']} log file(s) left" + (f"; DAMAGED PLAN: {c['damaged']}" if "damaged" in c else "")
              for c in completed[-args.limit:]]
    lines.append(_freshness_text(data["freshness"]))
    _print(args, data, "\n".join(lines))
    return 0


def _plan_text(p: dict) -> str:
    """A pending compaction's plan in one line (a damaged plan names its file and the fix)."""
    if "damaged" in p:
        return f"DAMAGED PLAN: {p['damaged']}"
    parts = p["partitions"]
    text = (f"{p['operations']} op(s), {p['partial_operations']} partial, strategy {p['strategy']}, "
            f"{p['file_groups']} file group(s) in {len(parts)} partition(s)")
    if p["threshold_ms"] is not None:
        text += f", event-time threshold {p['threshold_ms']}"
    return text


def _freshness_text(f: dict) -> str:
    t = f["threshold"]
    w = f["watermark"]
    wt = {"known": f"{w['iso']} ({w['epoch_ms']})", "unknown": "unknown (a log block has no event time)",
          "complete": "none: every log block is compacted (read-optimized = snapshot)"}[w["status"]]
    tt = f"{t['iso']} ({t['epoch_ms']}) from compaction {f['threshold_instant']}" if t["epoch_ms"] is not None else "none"
    u = f["uncompacted"]
    problem = f"\nwarning: {w['problem']}" if w.get("problem") else ""
    return (f"freshness threshold: {tt}\nwatermark: {wt}\n"
            f"uncompacted: {u['log_files']} log file(s), {u['log_bytes']} bytes in {u['slices']} slice(s){problem}")


def _show_freshness(args: argparse.Namespace) -> int:
    from hoodie.services.compaction import freshness

    f = freshness(args.base_path)
    _print(args, f, _freshness_text(f))
    return 0


def register(subparsers: Any, show_subparsers: Any) -> None:
    """Add ``hoodie compaction ...`` and ``hoodie show freshness`` to the CLI."""
    c = subparsers.add_parser("compaction", help="schedule, run, inspect and roll back compactions (MOR)",
                              epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    csub = c.add_subparsers(dest="compaction_command", required=True)

    def common(p: argparse.ArgumentParser, with_set: bool = True) -> None:
        p.add_argument("base_path")
        if with_set:
            p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                           help="a Hudi option, e.g. hoodie.compaction.strategy=EventTimeBased (repeatable)")
        p.add_argument("--json", action="store_true")

    s = csub.add_parser("schedule", help="plan a compaction (writes <t>.compaction.requested)")
    common(s)
    s.add_argument("--instant", help="compaction instant (default: a new one)")
    s.set_defaults(func=_schedule)
    r = csub.add_parser("run", help="run pending compactions; schedules one first when none is pending")
    common(r)
    r.add_argument("--instant", help="run only this pending compaction")
    r.set_defaults(func=_run)
    sh = csub.add_parser("show", help="pending and completed compactions, and read-optimized freshness")
    common(sh, with_set=False)
    sh.add_argument("--limit", type=int, default=10, help="completed compactions to list (default 10)")
    sh.set_defaults(func=_show)
    rb = csub.add_parser("rollback", help="undo a pending compaction's files; the plan stays requested")
    common(rb, with_set=False)
    rb.add_argument("--instant", required=True)
    rb.set_defaults(func=_rollback)
    f = show_subparsers.add_parser("freshness", help="read-optimized freshness: event-time threshold and watermark")
    f.add_argument("base_path")
    f.add_argument("--json", action="store_true")
    f.set_defaults(func=_show_freshness)
