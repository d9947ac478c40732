"""``hoodie ttl``: partition TTL without a JVM (run, restore a stash, list stashes) and record-level
TTL (``hoodie ttl records``)."""

from __future__ import annotations

import argparse
import json
from typing import Any, Optional, Sequence


def parse_sets(items: Optional[Sequence[str]]) -> dict[str, str]:
    """``--set KEY=VALUE`` options as a dict (the value may contain '=')."""
    out: dict[str, str] = {}
    for item in items or []:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise ValueError(f"--set {item!r} is not KEY=VALUE (e.g. --set hoodie.partition.ttl.strategy.days.retain=30)")
        out[k.strip()] = v
    return out


def _print(args: argparse.Namespace, doc: Any, text: str) -> None:
    if args.json:
        print(json.dumps(doc, indent=2, sort_keys=False))
    else:
        print(text)


def _run(args: argparse.Namespace) -> int:
    from hoodie.services.ttl import run_ttl

    opts = parse_sets(args.set)
    if args.move_to:
        opts["hoodie.partition.ttl.action"] = "move"
        opts["hoodie.partition.ttl.move.target"] = args.move_to
    res = run_ttl(args.base_path, opts, dry_run=args.dry_run)
    lines = []
    moving = res.action == "move"
    verb = ("would move" if moving else "would expire") if args.dry_run else ("moved" if moving else "expired")
    if res.expired_partitions:
        head = f"{verb} {len(res.expired_partitions)} partition(s)"
        if res.instant:
            head += f" in replacecommit {res.instant}"
        lines.append(head + ":")
        for d in res.decisions:
            if d.expired:
                to = f" -> {res.move_plan[d.partition]}" if moving else ""
                rows = f" ({res.moved[d.partition]['rows']} rows, verified)" if d.partition in res.moved else ""
                lines.append(f"  {d.partition}{to}{rows}: {d.reason}")
    else:
        lines.append("nothing expired; no instant was written" if not args.dry_run else "nothing would expire")
    for p, why in res.skipped.items():
        lines.append(f"  skipped {p}: {why}")
    if args.verbose:
        for d in res.decisions:
            if d.status == "kept":
                lines.append(f"  kept {d.partition}: {d.reason}")
    lines += [f"warning: {w}" for w in res.warnings]
    _print(args, res.to_json(), "\n".join(lines))
    return 0


def _restore(args: argparse.Namespace) -> int:
    from hoodie.services.ttl import restore

    res = restore(args.base_path, args.instant, force=args.force)
    if res.already_restored:
        text = f"the stash of {args.instant} had already been restored by commit {res.instant}"
    else:
        total = sum(res.rows.values())
        text = f"restored {total} row(s) of {len(res.rows)} partition(s) from TTL instant {args.instant} as commit {res.instant}"
        sup = sum(res.superseded_rows.values())
        if sup:
            text += f" ({sup} row(s) not restored: their keys were written or deleted after the TTL run)"
    text += "".join(f"\nwarning: {w}" for w in res.warnings)
    _print(args, res.to_json(), text)
    return 0


def _bring_back(args: argparse.Namespace) -> int:
    from hoodie.services.ttl.move import bring_back

    res = bring_back(args.base_path, args.partitions, target=args.target, options=parse_sets(args.set),
                     drop_from_cold=not args.keep_cold, dry_run=args.dry_run)
    verb = "would bring back" if args.dry_run else "brought back"
    lines = [f"{verb} {len(res.partitions)} partition(s) from {res.target}"
             + (f" as commit {res.instant}" if res.instant else "")]
    for p, c in sorted(res.partitions.items()):
        lines.append(f"  {p}: {c.rows} row(s)" + (" (already back)" if p in res.already_back else ""))
    if res.cold_drop_instant:
        lines.append(f"dropped from the cold table by {res.cold_drop_instant}")
    _print(args, res.to_json(), "\n".join(lines))
    return 0


def _stashes(args: argparse.Namespace) -> int:
    from hoodie.services.ttl import list_stashes

    rows = list_stashes(args.base_path)
    text = "\n".join(f"{s.instant}  {s.state:<9} {', '.join(f'{p} ({n} files)' for p, n in s.partitions.items())}"
                     for s in rows) or "no stashes"
    _print(args, [s.to_json() for s in rows], text)
    return 0


def _records(args: argparse.Namespace) -> int:
    from hoodie.services.ttl.record_ttl import run_record_ttl

    opts = parse_sets(args.set)
    if args.retention is not None:
        opts["hoodie.record.ttl.retention"] = args.retention
    if args.field is not None:
        opts["hoodie.record.ttl.field"] = args.field
    res = run_record_ttl(args.base_path, opts, dry_run=args.dry_run)
    doc = res.to_json()
    verb = "would delete" if args.dry_run else "deleted"
    head = (f"{verb} {res.expired_records} record(s) with {res.field} before {doc['cutoff']} from "
            f"{len(res.file_groups)} file group(s)")
    if res.instant:
        head += f" in {res.instant}"
    elif not args.dry_run:
        head = f"nothing expired before {doc['cutoff']}; no instant was written"
    lines = [head + f" ({len(res.candidates)} candidate(s) of {res.file_groups_examined} file group(s) by metadata)"]
    for c in res.candidates:
        if c.expired_records or args.verbose:
            lines.append(f"  {c.partition}/{c.file_id}: {c.expired_records} of {c.records} expired "
                         f"(min {c.to_json()['min_event_time'] or 'unknown'}: {c.source})")
    lines += [f"warning: {w}" for w in res.warnings]
    _print(args, doc, "\n".join(lines))
    return 0


def register(sub: argparse._SubParsersAction, show_sub: argparse._SubParsersAction) -> None:
    """Add ``hoodie ttl run|bring-back|restore|stashes|records``."""
    t = sub.add_parser("ttl", help="partition TTL: expire old partitions (no JVM)")
    tsub = t.add_subparsers(dest="ttl_command", required=True)
    r = tsub.add_parser("run", help="expire partitions now (a delete_partition replacecommit)")
    r.add_argument("base_path")
    r.add_argument("--dry-run", action="store_true", help="list what would expire and why; write nothing")
    r.add_argument("--json", action="store_true")
    r.add_argument("--verbose", "-v", action="store_true", help="also list kept partitions")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a TTL option, e.g. --set hoodie.partition.ttl.strategy.days.retain=30 (repeatable)")
    r.add_argument("--move-to", metavar="TARGET",
                   help="tiering: move the expired partitions to the cold table at TARGET (a path or URI) instead of "
                        "only deleting them (hoodie.partition.ttl.action=move, hoodie.partition.ttl.move.target)")
    r.set_defaults(func=_run)
    bb = tsub.add_parser("bring-back", help="bring partitions a TTL move put in the cold table back (verified), "
                                            "then drop them there")
    bb.add_argument("base_path")
    bb.add_argument("partitions", nargs="+", help="partition paths, as on storage")
    bb.add_argument("--target", help="the cold table (default: where the newest move of the partition went)")
    bb.add_argument("--keep-cold", action="store_true", help="keep the partitions in the cold table too")
    bb.add_argument("--dry-run", action="store_true", help="check and count; write nothing")
    bb.add_argument("--json", action="store_true")
    bb.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="e.g. --set hoodie.partition.ttl.move.storage.options={...} (repeatable)")
    bb.set_defaults(func=_bring_back)
    rs = tsub.add_parser("restore", help="bring back the partitions a TTL run stashed, as a new commit")
    rs.add_argument("base_path")
    rs.add_argument("instant", help="the TTL replacecommit instant (see `hoodie ttl stashes`)")
    rs.add_argument("--json", action="store_true")
    rs.add_argument("--force", action="store_true",
                    help="restore even when it cannot be proven that no row deleted after the TTL run comes back "
                         "(the error without --force says why)")
    rs.set_defaults(func=_restore)
    rec = tsub.add_parser("records", help="record-level TTL: delete records whose event time is older than a "
                                          "retention (a delete commit; no JVM)")
    rec.add_argument("base_path")
    rec.add_argument("--retention", help="hoodie.record.ttl.retention, e.g. P30D or PT36H")
    rec.add_argument("--field", help="hoodie.record.ttl.field: the event-time column")
    rec.add_argument("--dry-run", action="store_true",
                     help="list the candidate file groups and their expired record counts; write nothing")
    rec.add_argument("--json", action="store_true")
    rec.add_argument("--verbose", "-v", action="store_true", help="also list candidates without expired records")
    rec.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="an option, e.g. --set hoodie.payload.event.time.unit=SECONDS (repeatable)")
    rec.set_defaults(func=_records)
    ls = tsub.add_parser("stashes", help="list the stashes of expired partitions")
    ls.add_argument("base_path")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_stashes)
