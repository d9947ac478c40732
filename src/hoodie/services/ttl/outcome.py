"""What a partition-TTL run did, in words and rows: the ``run_ttl`` / ``managePartitionTTL`` procedure
rows and the one-sentence reason every result carries (``TTLResult.reason``)."""

from __future__ import annotations

from typing import Any, Optional

from hoodie.services.ttl import move as MV
from hoodie.services.ttl.strategies import EXPIRED, KEPT, SKIPPED

# ``res`` is a hoodie.services.ttl.service.TTLResult; the service imports this module, so the type is
# not imported here (the layering test counts every import edge).
TTLResult = Any


def result_rows(res: TTLResult) -> list[tuple[Optional[str], Optional[str], str, str]]:
    """The run_ttl / managePartitionTTL procedure rows ``(deleted_partitions, partition, status,
    reason)``: one per deleted partition, one per expired partition skipped this run (with why), or
    a single row saying why nothing was deleted."""
    rows: list[tuple[Optional[str], Optional[str], str, str]] = []
    moving = res.action == MV.MOVE
    where = res.move_plan
    for d in sorted(res.decisions, key=lambda d: d.partition):
        if d.status == EXPIRED and res.dry_run:
            rows.append((None, d.partition, "would move" if moving else "would delete",
                         d.reason + (f"; would move to {where[d.partition]}" if moving else "")))
        elif d.status == EXPIRED and d.partition in res.partition_to_replace_file_ids:
            if moving:
                m = res.moved.get(d.partition, {})
                rows.append((d.partition, d.partition, "moved",
                             f"{d.reason}; moved {m.get('rows')} row(s) to {where.get(d.partition)} (cold commit "
                             f"{m.get('instant')}, verified; TTL instant {res.instant})"))
            else:
                rows.append((d.partition, d.partition, "deleted", f"{d.reason} (TTL instant {res.instant})"))
    for d in sorted(res.decisions, key=lambda d: d.partition):
        if d.status == SKIPPED:
            rows.append((None, d.partition, "skipped", d.reason))
    if rows:
        return rows
    if not res.decisions:
        why = "the table has no completed commit or no partition to evaluate"
    else:
        kept = [d for d in res.decisions if d.status == KEPT]
        why = (f"no partition expired: {len(res.decisions)} evaluated by {res.strategy}, all kept"
               + (f" (e.g. {kept[0].partition}: {kept[0].reason})" if kept else ""))
    if res.warnings:
        why += "; " + "; ".join(res.warnings)
    return [(None, None, "nothing deleted", why)]


def reason(res: TTLResult) -> str:
    """What the run did (``deleted 2 partition(s)``, ``would move 1 partition(s), skipped 1 ...``),
    or why it did nothing."""
    rows = result_rows(res)
    if rows[0][2] == "nothing deleted":
        return rows[0][3]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row[2]] = counts.get(row[2], 0) + 1
    return ", ".join(f"{status} {n} partition(s)" for status, n in counts.items())


__all__ = ["result_rows", "reason"]
