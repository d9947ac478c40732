"""CALL archive_commits: Hudi's procedure of that name (``ArchiveCommitsProcedure``), without a JVM.

Imported by :mod:`hoodie.interfaces.procedures`, which registers every procedure.
"""

from __future__ import annotations

from typing import Any

from hoodie.interfaces.sql_call import PROCEDURES, Param, TableRef, parse_options, procedure, resolve_table

TABLE = Param("table", str)
PATH = Param("basePath", str, aliases=("path", "base_path"))


def _table(spark: Any, args: dict[str, Any], name: str) -> TableRef:
    return resolve_table(spark, args, PROCEDURES[name.lower()])


@procedure("archive_commits",
           [TABLE, PATH, Param("min_commits", int, default=20), Param("max_commits", int, default=30),
            Param("retain_commits", int, default=10), Param("enable_metadata", bool, default=False),
            Param("options", str), Param("dry_run", bool, default=False)],
           "result int, archived int, first_archived string, last_archived string, message string",
           "Archive the timeline now (Hudi's archive_commits): completed instants older than the newest "
           "`min_commits` commits move to the archived timeline once more than `max_commits` are active, within "
           "Hudi's guards (pending instants, savepoints, the cleaner's earliest commit to retain, the metadata "
           "table), and the metadata table's timeline by its own rules. `retain_commits` is the cleaner's "
           "hoodie.cleaner.commits.retained the guards assume. One row: `result` 0 as in Hudi, how many instants "
           "were archived (with `dry_run => true`: would be) and `message` saying why not more. "
           "`enable_metadata` is accepted for Hudi's signature; the table's own metadata table is always "
           "respected.",
           examples=("CALL archive_commits(table => 'analytics.events', min_commits => 20, max_commits => 30)",
                     "CALL archive_commits(path => '/data/events', dry_run => true)"))
def _archive_commits(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.archive import run_archival

    opts = parse_options(a["options"])
    opts.setdefault("hoodie.keep.min.commits", str(a["min_commits"]))
    opts.setdefault("hoodie.keep.max.commits", str(a["max_commits"]))
    opts.setdefault("hoodie.cleaner.commits.retained", str(a["retain_commits"]))
    res = run_archival(_table(spark, a, "archive_commits").base_path, opts, dry_run=a["dry_run"])
    ts = [i.timestamp for i in res.plan.instants]
    msg = "; ".join(res.plan.notes)
    if res.metadata_table is not None and res.metadata_table.plan.instants:
        verb = "would archive" if a["dry_run"] else "archived"
        msg += f"; metadata table: {verb} {len(res.metadata_table.plan.instants)} instant(s)"
    return [(0, len(ts), ts[0] if ts else "", ts[-1] if ts else "", msg)]
