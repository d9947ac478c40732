"""``hoodie clean``: run the cleaner without a JVM."""

from __future__ import annotations

import argparse
import json

from hoodie.interfaces.cli_ttl import parse_sets


def _clean(args: argparse.Namespace) -> int:
    from hoodie.services.clean import run_clean

    res = run_clean(args.base_path, parse_sets(args.set), dry_run=args.dry_run)
    if args.json:
        print(json.dumps(res.to_json(), indent=2))
        return 0
    plan = res.plan
    lines = []
    for r in res.recovered:
        lines.append(f"re-executed interrupted clean {r.instant}: {r.total_deleted} file(s) deleted")
    e = plan.earliest_instant_to_retain
    policy = f"policy {plan.policy}" + (f", earliest commit to retain {e.timestamp}" if e else "")
    if plan.is_empty():
        lines.append(f"nothing to clean ({policy}); no instant was written" if not args.dry_run
                     else f"nothing to clean ({policy})")
    elif args.dry_run:
        lines.append(f"would delete {plan.total_files} file(s) and {len(plan.partitions_to_delete)} "
                     f"partition folder(s) ({policy}):")
        for p, files in sorted(plan.files_to_delete.items()):
            lines.extend(f"  {f}" for f in files)
        lines.extend(f"  partition {p}/" for p in plan.partitions_to_delete)
    else:
        lines.append(f"clean {res.instant} deleted {res.total_deleted} file(s) and "
                     f"{len(res.deleted_partitions)} partition folder(s) ({policy})")
        failed = sum(len(v) for v in res.failed.values())
        if failed:
            lines.append(f"  {failed} file(s) could not be deleted (see the clean metadata)")
    lines.extend(f"  note: {n}" for n in plan.notes)
    print("\n".join(lines))
    return 0


def register(sub: argparse._SubParsersAction, show_sub: argparse._SubParsersAction) -> None:
    """Add ``hoodie clean``."""
    c = sub.add_parser("clean", help="delete file versions no query needs any more (Hudi's cleaner, no JVM)")
    c.add_argument("base_path")
    c.add_argument("--dry-run", action="store_true", help="show the plan; delete nothing")
    c.add_argument("--json", action="store_true")
    c.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a cleaner option, e.g. --set hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS (repeatable)")
    c.set_defaults(func=_clean)
