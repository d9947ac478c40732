"""``hoodie lock show|release``: inspect and clear the table lock (docs/concurrency.md), no JVM."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time

from hoodie.interfaces.cli_ttl import parse_sets


def _show(args: argparse.Namespace) -> int:
    from hoodie.format.lock import lock_status
    from hoodie.format.storage import Storage

    status = lock_status(Storage(args.base_path), parse_sets(args.set))
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    if status is None:
        print(f"{args.base_path}: the table lock is free")
        return 0
    who = status["holder"]
    if who is None:
        print(f"{status['path']}: held by a writer that is not hoodie (Hudi's own lock file?), "
              f"for {status['age_seconds']} s")
    else:
        since = dt.datetime.fromtimestamp(who["acquired_ms"] / 1000, dt.timezone.utc).isoformat(timespec="seconds")
        print(f"{status['path']}: held by {who['operation'] or 'an operation'} (pid {who['pid']} on {who['host']}) "
              f"since {since}")
        if who["lease_expires_ms"]:
            left = (who["lease_expires_ms"] - time.time() * 1000) / 1000
            print(f"  lease: expires in {left:.0f} s unless renewed" if left >= 0 else
                  f"  lease: expired {-left:.0f} s ago")
    if status["stale"]:
        print(f"  stale: {status['stale']}; the next operation takes it over (or: hoodie lock release)")
    return 0


def _release(args: argparse.Namespace) -> int:
    from hoodie.format.lock import break_lock
    from hoodie.format.storage import Storage

    removed = break_lock(Storage(args.base_path), parse_sets(args.set), force=args.force)
    print("removed the table lock" if removed else f"{args.base_path}: the table lock is free; nothing to remove")
    return 0


def register(sub: argparse._SubParsersAction, show_sub: argparse._SubParsersAction) -> None:
    """Add ``hoodie lock show|release``."""
    p = sub.add_parser("lock", help="inspect or clear the table lock that writers and services take")
    lsub = p.add_subparsers(dest="lock_cmd", required=True)
    s = lsub.add_parser("show", help="who holds the table lock, since when, and whether it is stale")
    s.add_argument("base_path")
    s.add_argument("--json", action="store_true")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="a lock option (hoodie.write.lock.*)")
    s.set_defaults(func=_show)
    r = lsub.add_parser("release", help="remove a lock left by a process that is gone (refused while the "
                                        "holder may be alive, unless --force)")
    r.add_argument("base_path")
    r.add_argument("--force", action="store_true", help="remove it even if the holder may be alive")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="a lock option (hoodie.write.lock.*)")
    r.set_defaults(func=_release)
