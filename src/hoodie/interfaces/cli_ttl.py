"""``hoodie ttl``: partition TTL without a JVM (run, restore a stash, list stashes)."""

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

    res = run_ttl(args.base_path, parse_sets(args.set), dry_run=args.dry_run)
    lines = []
    verb = "would expire" if args.dry_run else "expired"
    if res.expired_partitions:
        head = f"{verb} {len(res.expired_partitions)} partition(s)"
        if res.instant:
            head += f" in replacecommit {res.instant}"
        lines.append(head + ":")
        for d in res.decisions:
            if d.expired:
                lines.append(f"  {d.partition}: {d.reason}")
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


def _stashes(args: argparse.Namespace) -> int:
    from hoodie.services.ttl import list_stashes

    rows = list_stashes(args.base_path)
    text = "\n".join(f"{s.instant}  {s.state:<9} {', '.join(f'{p} ({n} files)' for p, n in s.partitions.items())}"
                     for s in rows) or "no stashes"
    _print(args, [s.to_json() for s in rows], text)
    return 0


def register(sub: argparse._SubParsersAction, show_sub: argparse._SubParsersAction) -> None:
    """Add ``hoodie ttl run|restore|stashes``."""
    t = sub.add_parser("ttl", help="partition TTL: expire old partitions (no JVM)")
    tsub = t.add_subparsers(dest="ttl_command", required=True)
    r = tsub.add_parser("run", help="expire partitions now (a delete_partition replacecommit)")
    r.add_argument("base_path")
    r.add_argument("--dry-run", action="store_true", help="list what would expire and why; write nothing")
    r.add_argument("--json", action="store_true")
    r.add_argument("--verbose", "-v", action="store_true", help="also list kept partitions")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a TTL option, e.g. --set hoodie.partition.ttl.strategy.days.retain=30 (repeatable)")
    r.set_defaults(func=_run)
    rs = tsub.add_parser("restore", help="bring back the partitions a TTL run stashed, as a new commit")
    rs.add_argument("base_path")
    rs.add_argument("instant", help="the TTL replacecommit instant (see `hoodie ttl stashes`)")
    rs.add_argument("--json", action="store_true")
    rs.add_argument("--force", action="store_true",
                    help="restore even when it cannot be proven that no row deleted after the TTL run comes back "
                         "(the error without --force says why)")
    rs.set_defaults(func=_restore)
    ls = tsub.add_parser("stashes", help="list the stashes of expired partitions")
    ls.add_argument("base_path")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_stashes)
