"""``hoodie archive``: archive the timeline (Hudi's archival) without a JVM."""

from __future__ import annotations

import argparse
import json

from hoodie.interfaces.cli_ttl import parse_sets


def _describe(res, indent: str = "") -> list[str]:  # type: ignore[no-untyped-def]
    plan = res.plan
    lines = []
    head = f"{indent}{res.base_path}: {plan.active_commits} completed commit(s) active " \
           f"(hoodie.keep.min.commits={plan.min_commits}, hoodie.keep.max.commits={plan.max_commits})"
    lines.append(head)
    if plan.instants:
        verb = "would archive" if res.dry_run else "archived"
        lines.append(f"{indent}  {verb} {len(plan.instants)} instant(s), {plan.instants[0].timestamp} .. "
                     f"{plan.instants[-1].timestamp}" + (f" into {res.archive_file}" if res.archive_file else ""))
        for i in plan.instants:
            lines.append(f"{indent}    {i.timestamp}  {i.action}")
    else:
        lines.append(f"{indent}  nothing to archive")
    lines.extend(f"{indent}  why not more: {n}" for n in plan.notes)
    if res.merge_recovery:
        what = {"plan removed": "dropped (its plan did not parse)"}.get(res.merge_recovery, res.merge_recovery)
        lines.append(f"{indent}  archive merge: an interrupted merge {'would be' if res.dry_run else 'was'} {what} first")
    if res.merged_into:
        verb = "would merge" if res.dry_run else "merged"
        lines.append(f"{indent}  archive merge: {verb} {len(res.merged_files)} small archive file(s) into "
                     f"{res.merged_into}: {', '.join(res.merged_files)}")
    elif res.merge_note:
        lines.append(f"{indent}  archive merge: {res.merge_note}")
    if res.metadata_table is not None:
        lines.append(f"{indent}  metadata table:")
        lines.extend(_describe(res.metadata_table, indent + "    "))
    return lines


def _archive(args: argparse.Namespace) -> int:
    from hoodie.services.archive import run_archival

    res = run_archival(args.base_path, parse_sets(args.set), dry_run=args.dry_run)
    if args.json:
        print(json.dumps(res.to_json(), indent=2))
    else:
        print("\n".join(_describe(res)))
    return 0


def register(sub: argparse._SubParsersAction, show_sub: argparse._SubParsersAction) -> None:
    """Add ``hoodie archive``."""
    a = sub.add_parser("archive", help="move old completed instants to the archived timeline (Hudi's archival, "
                                       "no JVM)")
    a.add_argument("base_path")
    a.add_argument("--dry-run", action="store_true",
                   help="show what would be archived and why not more; write nothing")
    a.add_argument("--json", action="store_true")
    a.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="an archival option, e.g. --set hoodie.keep.min.commits=20 (repeatable)")
    a.set_defaults(func=_archive)
