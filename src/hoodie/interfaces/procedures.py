"""The CALL procedures of :func:`hoodie.sql`, with Hudi's names, parameters and output columns."""

from __future__ import annotations

from typing import Any, Optional

from hoodie.interfaces.catalog import drop_partitions, sync_freshness
from hoodie.services.transaction import Hook
from hoodie.interfaces.sql_call import PROCEDURES, Param, SqlError, commit_totals, TableRef, parse_options, procedure, resolve_table

TABLE = Param("table", str)
PATH = Param("basePath", str, aliases=("path", "base_path"))


def _table(spark: Any, args: dict[str, Any], name: str) -> TableRef:
    return resolve_table(spark, args, PROCEDURES[name.lower()])


TTL_OUTPUT = "deleted_partitions string, partition string, status string, reason string"
TTL_ROWS = ("One row per deleted partition (`deleted_partitions`, Hudi's column, and `partition` name it; "
            "`status` deleted), one per expired partition skipped this run (`deleted_partitions` null, `status` "
            "skipped: a pending operation touches it, a savepoint holds its files, or the run's cap), or a "
            "single row (`status` `nothing deleted`) saying why nothing was deleted; `reason` says why.")


@procedure("run_ttl", [TABLE, Param("ttl_policy", str), Param("retain_days", int), Param("options", str), PATH,
                       Param("action", str), Param("target", str), Param("dry_run", bool)],
           TTL_OUTPUT,
           "Run partition TTL (Hudi 1.x run_ttl). `action => 'move'` with `target` (hoodie's tiering, "
           "docs/ttl.md) copies the expired partitions to the cold table there, verifies them, then deletes them "
           "(`status` moved); `dry_run => true` writes nothing (`status` would delete / would move, with where). "
           + TTL_ROWS,
           examples=(
               "CALL run_ttl(table => 'analytics.events', retain_days => 30)",
               "CALL run_ttl(table => 'events', ttl_policy => 'KEEP_BY_TIME', "
               "options => 'hoodie.partition.ttl.strategy.days.retain=30')",
               "CALL run_ttl(table => 'events', retain_days => 90, action => 'move', "
               "target => '/tmp/hoodie_docs_cold/events', dry_run => true)",
           ))
def _run_ttl(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.ttl.service import call_run_ttl_result, result_rows

    ref = _table(spark, a, "run_ttl")
    res = call_run_ttl_result(ref.base_path, a["ttl_policy"], a["retain_days"], a["options"] or "",
                              action=a["action"], target=a["target"], dry_run=bool(a["dry_run"]))
    _drop_catalog_partitions(spark, ref, sorted(res.partition_to_replace_file_ids))
    return result_rows(res)


@procedure("managePartitionTTL",
           [TABLE, PATH, Param("strategy", str, default="KEEP_BY_TIME"), Param("daysRetain", int),
            Param("predicate", str)],
           TTL_OUTPUT,
           "RFC-65's partition TTL call with a partition predicate. " + TTL_ROWS,
           examples=(
               "CALL managePartitionTTL(table => 'analytics.events', strategy => 'KEEP_BY_TIME', daysRetain => 10, "
               "predicate => 'productid = 1')",
               "CALL managePartitionTTL(basePath => '/data/events', daysRetain => 10)",
           ))
def _manage_ttl(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.ttl.service import call_manage_partition_ttl_result, result_rows

    ref = _table(spark, a, "managePartitionTTL")
    res = call_manage_partition_ttl_result(ref.base_path, a["strategy"], a["daysRetain"], a["predicate"])
    _drop_catalog_partitions(spark, ref, sorted(res.partition_to_replace_file_ids))
    return result_rows(res)


@procedure("run_record_ttl",
           [TABLE, Param("retention", str), Param("field", str), Param("options", str), Param("dry_run", bool),
            PATH],
           "partition string, file_id string, expired_records bigint, instant string, status string, reason string",
           "Record-level TTL (hoodie's; docs/ttl.md): delete the records whose event-time field is older than the "
           "retention, in one delete commit touching only the file groups that hold them. One row per file group "
           "with expired records (`status` deleted, or `would delete` in a dry run), or one row saying why nothing "
           "was deleted.",
           examples=(
               "CALL run_record_ttl(table => 'analytics.events', retention => 'P30D', field => 'event_ts')",
               "CALL run_record_ttl(table => 'events', retention => 'PT36H', field => 'event_ts', dry_run => true)",
           ))
def _run_record_ttl(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.ttl.record_ttl import call_run_record_ttl, result_rows

    ref = _table(spark, a, "run_record_ttl")
    res = call_run_record_ttl(ref.base_path, a["retention"], a["field"], a["options"] or "", bool(a["dry_run"]))
    return result_rows(res)


@procedure("bring_back_partitions",
           [TABLE, Param("partitions", str, required=True), Param("target", str), Param("keep_cold", bool),
            Param("dry_run", bool), PATH],
           "partition string, rows bigint, instant string, status string, target string",
           "Bring partitions that partition TTL moved to a cold table (action=move, docs/ttl.md) back into the "
           "table: an insert_overwrite of each partition from the cold rows, verified (row count and digest), "
           "then a delete_partition of it in the cold table unless `keep_cold`. `partitions` is comma-separated; "
           "`target` defaults to the cold table the newest move of the first partition recorded. One row per "
           "partition (`status` brought back, already back, or would bring back).",
           examples=(
               "CALL bring_back_partitions(table => 'analytics.events', partitions => '4')",
               "CALL bring_back_partitions(basePath => '/data/events', partitions => '4', keep_cold => true)",
           ))
def _bring_back(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.ttl.move import bring_back

    ref = _table(spark, a, "bring_back_partitions")
    parts = [p.strip() for p in str(a["partitions"]).split(",") if p.strip()]
    res = bring_back(ref.base_path, parts, target=a["target"], drop_from_cold=not a["keep_cold"],
                     dry_run=bool(a["dry_run"]))
    status = "would bring back" if res.dry_run else "brought back"
    return [(p, c.rows, res.instant, "already back" if p in res.already_back else status, res.target)
            for p, c in sorted(res.partitions.items())]


def _drop_catalog_partitions(spark: Any, ref: TableRef, parts: list[str]) -> None:
    """Keep catalog partitions in step with TTL when the table was named (see catalog.py)."""
    if ref.name and parts:
        drop_partitions(spark, ref.name, parts)


@procedure("run_compaction",
           [Param("op", str, default="run"), TABLE, PATH, Param("timestamp", str), Param("options", str)],
           "timestamp string, operation_size int, state string, message string",
           "schedule, run or scheduleAndExecute compaction (Hudi's run_compaction). One row per compaction "
           "scheduled (`state` REQUESTED) or run (COMPLETED); when nothing was scheduled or run, one row with "
           "`state` NONE and `message` saying why (the trigger, no log files, nothing pending, a copy-on-write "
           "table).",
           examples=(
               "CALL run_compaction(op => 'schedule', table => 'analytics.events', "
               "options => 'hoodie.compact.inline.max.delta.commits=1')",
               "CALL run_compaction('run', 'analytics.events')",
           ))
def _run_compaction(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.engine.compaction import spark_executor
    from hoodie.format.table import HoodieTable
    from hoodie.services.compaction import run_compaction, schedule_compaction_result

    ref = _table(spark, a, "run_compaction")
    path = ref.base_path
    opts = parse_options(a["options"])
    op = (a["op"] or "run").lower()
    if op not in ("schedule", "run", "scheduleandexecute"):
        raise SqlError(f"argument 'op' of run_compaction must be schedule, run or scheduleAndExecute, got {a['op']!r}")
    table = HoodieTable(path)
    if not table.is_mor:
        return [(None, 0, "NONE", f"nothing to compact: the table is {table.table_type}; compaction merges the log "
                                  "files of MERGE_ON_READ tables")]
    if op in ("schedule", "scheduleandexecute") and (op == "schedule" or not table.timeline.pending_compactions()):
        res = schedule_compaction_result(path, opts, instant=a["timestamp"] if op == "schedule" else None)
        if res.instant is None:
            return [(None, 0, "NONE", f"no compaction scheduled: {res.reason}")]
        if op == "schedule":
            plan = HoodieTable(path).timeline.compaction_plan(res.instant)
            return [(res.instant, len(plan.operations), "REQUESTED", f"scheduled: {res.reason}")]
    elif not table.timeline.pending_compactions() and a["timestamp"] is None:
        return [(None, 0, "NONE", "no pending compaction plan to run; schedule one with op => 'schedule' (or use "
                                  "op => 'scheduleAndExecute')")]
    # The _ro view's freshness properties follow each compaction, as a post-commit hook.
    hooks = [Hook("the catalog's freshness properties", lambda _txn: sync_freshness(spark, ref.name))] if ref.name else []
    results = run_compaction(path, a["timestamp"], opts, executor=spark_executor(spark), post_commit=hooks)
    return [(r.instant, len(r.stats), "COMPLETED", f"compacted {len(r.stats)} file group(s)") for r in results]


@procedure("show_compaction", [TABLE, PATH, Param("limit", int, default=20)],
           "timestamp string, operation_size int, state string, partial_operations int, file_groups int, "
           "partitions array<string>, strategy string, threshold_ms long, damaged string, duration_ms long, "
           "bytes_written long, remaining_log_files int, note string",
           "Compaction instants (pending and completed), newest first, with what `hoodie compaction show` "
           "reports: the plan's operations, partial operations, file groups, partitions, strategy and "
           "event-time threshold (null, and `damaged` naming the file, when the plan file is damaged), and "
           "a completed compaction's duration, bytes written and remaining log files. `note` says what a "
           "pending one waits for; without any compaction, one row (`timestamp` null) whose `note` says why.",
           examples=(
               "CALL show_compaction(table => 'analytics.events', limit => 5)",
           ))
def _show_compaction(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.compaction import show_compactions

    from hoodie.format.table import HoodieTable

    table = HoodieTable(_table(spark, a, "show_compaction").base_path)
    summaries = show_compactions(table, limit=a["limit"])
    if not summaries:
        if not table.is_mor:
            why = (f"no compaction: the table is {table.table_type}, whose writes rewrite base files; compaction "
                   "applies to MERGE_ON_READ tables")
        else:
            why = ("no compaction on the active timeline yet: schedule one with CALL run_compaction(op => "
                   "'schedule', ...) or let writers do it (hoodie.compact.inline=true)")
        return [(None, None, None, None, None, None, None, None, None, None, None, None, why)]

    def note(s: Any) -> Optional[str]:
        if s.damaged:
            return "the plan file is damaged: remove the plan with CALL rollback_to_instant, then schedule again"
        if s.state != "COMPLETED":
            return "pending: CALL run_compaction(op => 'run', ...) executes it"
        return None

    return [(s.instant, s.operations, s.state, s.partial_operations, s.file_groups,
             None if s.partitions is None else list(s.partitions), s.strategy, s.threshold_ms, s.damaged,
             s.duration_ms, s.bytes_written, s.remaining_log_files, note(s)) for s in reversed(summaries)]


@procedure("show_commits", [TABLE, Param("limit", int, default=10), PATH],
           "commit_time string, action string, total_bytes_written long, total_files_added long, "
           "total_files_updated long, total_partitions_written long, total_records_written long, "
           "total_update_records_written long, total_errors long",
           "Completed commits, newest first, with Hudi's write-stat totals.",
           examples=(
               "CALL show_commits(table => 'events', limit => 5)",
               "CALL show_commits('/data/events', 5)",
           ))
def _show_commits(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.format.table import HoodieTable

    t = HoodieTable(_table(spark, a, "show_commits").base_path)
    tl = t.timeline
    rows = []
    for inst in reversed(tl.completed_writes().instants):
        rows.append((inst.timestamp, inst.action, *commit_totals(tl.commit_metadata(inst))))
        if len(rows) >= a["limit"]:
            break
    return rows


@procedure("run_clean",
           [TABLE, PATH, Param("clean_policy", str), Param("retain_commits", int), Param("hours_retained", int),
            Param("file_versions_retained", int), Param("options", str), Param("dry_run", bool, default=False)],
           "start_clean_time string, total_files_deleted int, earliest_commit_to_retain string, "
           "deleted_partitions string, message string",
           "Clean old file versions and replaced file groups (Hudi's run_clean). One row: the clean instant and "
           "what it deleted, or (with `dry_run => true`) what it would delete; when nothing is cleaned, "
           "`start_clean_time` is empty and `message` says why (the retention window, savepoints holding files).",
           examples=(
               "CALL run_clean(table => 'analytics.events', clean_policy => 'KEEP_LATEST_FILE_VERSIONS', "
               "file_versions_retained => 1, dry_run => true)",
           ))
def _run_clean(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.clean import run_clean

    opts = parse_options(a["options"])
    for key, arg in (("hoodie.cleaner.policy", "clean_policy"), ("hoodie.cleaner.commits.retained", "retain_commits"),
                     ("hoodie.cleaner.hours.retained", "hours_retained"),
                     ("hoodie.cleaner.fileversions.retained", "file_versions_retained")):
        if a[arg] is not None:
            opts[key] = str(a[arg])
    res = run_clean(_table(spark, a, "run_clean").base_path, opts, dry_run=a["dry_run"])
    notes = "; ".join(res.plan.notes)
    ectr = res.plan.earliest_instant_to_retain
    ectr_ts = ectr.timestamp if ectr is not None else ""
    if a["dry_run"]:
        n = res.plan.total_files
        msg = f"dry run: would delete {n} file(s) and {len(res.plan.partitions_to_delete)} partition(s) " \
              f"({res.plan.policy})" + (f"; {notes}" if notes else "")
        return [("", n, ectr_ts, ",".join(sorted(res.plan.partitions_to_delete)), msg)]
    recovered = sum(r.total_deleted for r in res.recovered)
    if res.instant is None:
        msg = f"nothing to clean ({res.plan.policy})" + (f": {notes}" if notes else ": no file version is "
                                                          "outside the retention")
        if recovered:
            msg += f"; finished {len(res.recovered)} interrupted clean(s) that deleted {recovered} file(s)"
        return [("", 0, ectr_ts, "", msg)]
    msg = f"deleted {res.total_deleted} file(s) ({res.plan.policy})" + (f"; {notes}" if notes else "")
    return [(res.instant, res.total_deleted, ectr_ts, ",".join(res.deleted_partitions), msg)]


@procedure("rollback_to_instant", [TABLE, Param("instant_time", str, required=True), PATH],
           "rollback_result boolean, message string",
           "Roll back a pending or the latest completed write instant, or remove a pending compaction plan. "
           "`rollback_result` false when it is refused (a later write, a savepoint on it, a pending compaction "
           "reading its files...): nothing was written, and `message` says why and what to do.",
           examples=(
               "CALL rollback_to_instant(table => 'analytics.events', instant_time => '20240501000000000')",
           ))
def _rollback(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.compaction.config import CompactionError
    from hoodie.services.rollback.operation import rollback
    from hoodie.services.rollback.instant import RollbackError

    try:
        r = rollback(_table(spark, a, "rollback_to_instant").base_path, a["instant_time"])
    except (RollbackError, CompactionError) as e:
        return [(False, str(e))]
    if r.action == "compaction":
        return [(True, f"removed the pending compaction plan {r.rolled_back} (rollback {r.rollback_instant}): "
                       f"deleted {len(r.deleted_files)} file(s), moved {len(r.moved_files)} log file(s) back")]
    extra = f", moved {len(r.unstashed_files)} stashed file(s) back" if r.unstashed_files else ""
    return [(True, f"rolled back {r.action} {r.rolled_back} with rollback {r.rollback_instant}: deleted "
                   f"{len(r.deleted_files)} file(s), wrote {len(r.command_blocks)} rollback block(s){extra}")]


@procedure("show_freshness", [TABLE, PATH],
           "threshold_epoch_ms long, threshold string, watermark_epoch_ms long, watermark string, "
           "watermark_status string, note string",
           "The read-optimized view's event-time freshness: threshold T and watermark W. A null watermark "
           "means one of two things, which `watermark_status` tells apart: `complete` (no log block is "
           "uncompacted: the read-optimized view equals the snapshot) or `unknown` (an uncompacted log block's "
           "event times are not known); `known` when W is set. `note` explains both values.",
           examples=(
               "CALL show_freshness(table => 'analytics.events_ro')",
           ))
def _show_freshness(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.compaction import freshness

    f = freshness(_table(spark, a, "show_freshness").base_path)
    th, wm = f.get("threshold") or {}, f.get("watermark") or {}
    status = wm.get("status")
    un = f.get("uncompacted") or {}
    notes = []
    if status == "complete":
        notes.append("watermark null because nothing is left to compact: no log block is outside the base files, so "
                     "the read-optimized view holds every record (it equals the snapshot)")
    elif status == "unknown":
        notes.append(f"watermark unknown: the event times of some of the {un.get('log_files', 0)} uncompacted log "
                     "file(s) are not recorded (written without hoodie.payload.event.time.field, or by another "
                     "writer), so no bound can be given")
    else:
        notes.append(f"every record with event time before the watermark is in the read-optimized view; "
                     f"{un.get('log_files', 0)} log file(s) in {un.get('slices', 0)} file slice(s) are uncompacted")
    if wm.get("problem"):
        notes.append(str(wm["problem"]))
    if th.get("epoch_ms") is None:
        notes.append("threshold null: no event-time compaction has published one (see docs/compaction.md)")
    else:
        notes.append(f"threshold published by compaction {f.get('threshold_instant')}")
    return [(th.get("epoch_ms"), th.get("iso"), wm.get("epoch_ms"), wm.get("iso"), status, "; ".join(notes))]


def _metadata_ready(base_path: str, proc: str) -> Any:
    from hoodie.format.table import HoodieTable
    from hoodie.services.metadata.writer import metadata_table_state

    table = HoodieTable(base_path)
    state = metadata_table_state(table)
    if state != "ready":
        raise SqlError(f"{proc}: {base_path} has no usable metadata table ({state}); create it with "
                       f"CALL create_metadata_table(table => ...) or hoodie metadata create {base_path}")
    return table


@procedure("create_metadata_table", [TABLE, PATH], "result string",
           "Build the metadata table's files partition from a listing (Hudi's create_metadata_table); every "
           "later commit keeps it up to date.",
           examples=("CALL create_metadata_table(table => 'analytics.events')",))
def _create_metadata_table(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.format.table import HoodieTable
    from hoodie.services.metadata import create_metadata_table

    base = _table(spark, a, "create_metadata_table").base_path
    init = create_metadata_table(HoodieTable(base))
    return [(f"created the metadata table of {base} at {init}",)]


@procedure("delete_metadata_table", [TABLE, PATH], "result string",
           "Delete the metadata table and clear hoodie.table.metadata.partitions (Hudi's delete_metadata_table); "
           "readers list storage.",
           examples=("CALL delete_metadata_table(table => 'analytics.events')",))
def _delete_metadata_table(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.format.table import HoodieTable
    from hoodie.services.metadata import drop_table_metadata

    base = _table(spark, a, "delete_metadata_table").base_path
    dropped = drop_table_metadata(HoodieTable(base))
    return [(f"deleted the metadata table of {base}" if dropped else f"{base} has no metadata table",)]


@procedure("show_metadata_table_partitions", [TABLE, PATH], "partition string",
           "The partitions the metadata table lists (Hudi's show_metadata_table_partitions).",
           examples=("CALL show_metadata_table_partitions(table => 'analytics.events')",))
def _show_metadata_table_partitions(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.format.metadata import MetadataTable

    table = _metadata_ready(_table(spark, a, "show_metadata_table_partitions").base_path,
                            "show_metadata_table_partitions")
    return [(p,) for p in MetadataTable(table).partitions()]


@procedure("show_metadata_table_files", [TABLE, PATH, Param("partition", str)], "file_path string, size long",
           "The files the metadata table lists in one partition, or in all (Hudi's show_metadata_table_files).",
           examples=("CALL show_metadata_table_files(table => 'analytics.events', partition => '1')",))
def _show_metadata_table_files(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.format.metadata import MetadataTable

    table = _metadata_ready(_table(spark, a, "show_metadata_table_files").base_path, "show_metadata_table_files")
    listing = MetadataTable(table).listing()
    if a["partition"] is not None:
        if a["partition"] not in listing:
            raise SqlError(f"show_metadata_table_files: the metadata table lists no partition {a['partition']!r}; "
                           f"it lists {sorted(listing)[:10]}")
        listing = {a["partition"]: listing[a["partition"]]}
    return [(f"{p}/{n}" if p else n, size) for p, files in sorted(listing.items()) for n, size in sorted(files.items())]


@procedure("validate_metadata_table_files", [TABLE, PATH, Param("verbose", bool, default=False)],
           "partition string, file_name string, is_present_in_fs boolean, is_present_in_metadata boolean, "
           "fs_size long, metadata_size long",
           "Compare the metadata table's listing with storage (Hudi's validate_metadata_table_files): the files that "
           "differ, or every file with verbose => true.",
           examples=("CALL validate_metadata_table_files(table => 'analytics.events', verbose => true)",))
def _validate_metadata_table_files(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.metadata.lifecycle import listings

    table = _metadata_ready(_table(spark, a, "validate_metadata_table_files").base_path,
                            "validate_metadata_table_files")
    meta, store = listings(table)
    rows = []
    for p in sorted(set(meta) | set(store)):
        m, s = meta.get(p, {}), store.get(p, {})
        for n in sorted(set(m) | set(s)):
            same = n in m and n in s and m[n] == s[n]
            if a["verbose"] or not same:
                rows.append((p, n, n in s, n in m, s.get(n), m.get(n)))
    return rows


# The procedures of these modules register on import: importing this module registers them all.
import hoodie.interfaces.procedures_archive  # noqa: E402,F401
import hoodie.interfaces.procedures_info  # noqa: E402,F401
import hoodie.interfaces.procedures_savepoint  # noqa: E402,F401
import hoodie.interfaces.procedures_views  # noqa: E402,F401
