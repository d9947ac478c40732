"""CALL archive_commits, show_archived_commits and show_archived_commits_metadata: Hudi's procedures of those
names (``ArchiveCommitsProcedure``, ``ShowArchivedCommitsProcedure``), without a JVM. The two ``show_`` ones
only read the archived timeline (version 6: ``.hoodie/archived``; 8/9: the LSM history).

Imported by :mod:`hoodie.interfaces.procedures`, which registers every procedure.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from hoodie.interfaces.sql_call import PROCEDURES, Param, TableRef, commit_totals, parse_options, procedure, resolve_table

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


# -- show_archived_commits / show_archived_commits_metadata --------------------------------------------------

_ARCHIVED_PARAMS = [TABLE, Param("limit", int, default=10), Param("start_ts", str),
                    Param("end_ts", str), PATH]
_ARCHIVED_COLUMNS = ("commit_time string, state_transition_time string, total_bytes_written long, "
                     "total_files_added long, total_files_updated long, total_partitions_written long, "
                     "total_records_written long, total_update_records_written long, total_errors long")
_ARCHIVED_METADATA_COLUMNS = (
    "commit_time string, state_transition_time string, action string, partition string, file_id string, "
    "previous_commit string, num_writes long, num_inserts long, num_deletes long, num_update_writes long, "
    "total_errors long, total_log_blocks long, total_corrupt_log_blocks long, total_rollback_blocks long, "
    "total_log_records long, total_updated_records_compacted long, total_bytes_written long")
_WINDOW = ("`start_ts` (exclusive) and `end_ts` (inclusive) bound the instant times; as in Hudi, they default to "
           "ten days and one day ago, so commits archived within the last day need `end_ts`. At most `limit` rows, "
           "newest first.")


def _archived_commits(spark: Any, a: dict[str, Any], name: str) -> list[tuple[Any, Optional[str], Any]]:
    """(instant, completion time, commit metadata) of the archived completed commits in the window, newest
    first, read from the archived timeline alone (nothing is written)."""
    from hoodie.format.table import HoodieTable
    from hoodie.format.timeline import instant as I
    from hoodie.services.archive.action import load_archived_timeline

    table = HoodieTable(_table(spark, a, name).base_path, read_only=True)
    tz = table.timeline_timezone
    now_ms = int(time.time() * 1000)
    start = (a["start_ts"] or "").strip() or I.epoch_ms_to_instant(now_ms - 10 * _DAY_MS, tz)
    end = (a["end_ts"] or "").strip() or I.epoch_ms_to_instant(now_ms - _DAY_MS, tz)
    archived = load_archived_timeline(table)
    out = []
    for inst in sorted(archived.instants, key=lambda i: i.timestamp, reverse=True):
        if inst.action not in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT) or not (start < inst.timestamp <= end):
            continue
        meta = archived.commit_metadata(inst.timestamp)
        if meta is None:
            continue  # an archived commit without metadata (an empty completed file) has no stats to show
        completion = inst.completion
        if completion is None and hasattr(archived, "entry"):  # version 6: the entry's stateTransitionTime
            entry = archived.entry(inst.timestamp, inst.action) or {}
            completion = entry.get("stateTransitionTime")
        out.append((inst, completion, meta))
    return out


_DAY_MS = 24 * 3600 * 1000


@procedure("show_archived_commits", _ARCHIVED_PARAMS, _ARCHIVED_COLUMNS,
           "Completed commits of the archived timeline (Hudi's show_archived_commits), with the write-stat totals "
           "show_commits gives for the active ones and the completion time (`state_transition_time`). " + _WINDOW,
           examples=("CALL show_archived_commits(table => 'analytics.events', start_ts => '20240101000000000', "
                     "end_ts => '20250101000000000')",))
def _show_archived_commits(spark: Any, a: dict[str, Any]) -> list[tuple]:
    rows = []
    for inst, completion, m in _archived_commits(spark, a, "show_archived_commits"):
        rows.append((inst.timestamp, completion, *commit_totals(m)))
    return rows[: max(0, a["limit"])]


@procedure("show_archived_commits_metadata", _ARCHIVED_PARAMS, _ARCHIVED_METADATA_COLUMNS,
           "The write stats of the archived timeline's completed commits (Hudi's show_archived_commits_metadata): "
           "one row per file written. " + _WINDOW,
           examples=("CALL show_archived_commits_metadata(table => 'analytics.events', start_ts => "
                     "'20240101000000000', end_ts => '20250101000000000', limit => 100)",))
def _show_archived_commits_metadata(spark: Any, a: dict[str, Any]) -> list[tuple]:
    rows = []
    for inst, completion, m in _archived_commits(spark, a, "show_archived_commits_metadata"):
        for part, stats in m.partition_to_write_stats.items():
            for s in stats:
                rows.append((inst.timestamp, completion, inst.action, part, s.file_id, s.prev_commit, s.num_writes,
                             s.num_inserts, s.num_deletes, s.num_update_writes, s.total_write_errors,
                             s.total_log_blocks, s.total_corrupt_log_block, s.total_rollback_blocks,
                             s.total_log_records, s.total_updated_records_compacted, s.total_write_bytes))
    return rows[: max(0, a["limit"])]
