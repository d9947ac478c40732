"""The CALL procedures of :func:`hoodie.sql`, with Hudi's names, parameters and output columns."""

from __future__ import annotations

from typing import Any

from hoodie.interfaces.catalog import drop_partitions, sync_freshness
from hoodie.services.transaction import Hook
from hoodie.interfaces.sql_call import PROCEDURES, Param, SqlError, TableRef, parse_options, procedure, resolve_table

TABLE = Param("table", str)
PATH = Param("basePath", str, aliases=("path", "base_path"))


def _table(spark: Any, args: dict[str, Any], name: str) -> TableRef:
    return resolve_table(spark, args, PROCEDURES[name.lower()])


@procedure("run_ttl", [TABLE, Param("ttl_policy", str), Param("retain_days", int), Param("options", str), PATH],
           "deleted_partitions string",
           "Run partition TTL (Hudi 1.x run_ttl); returns the deleted partitions.",
           examples=(
               "CALL run_ttl(table => 'analytics.events', retain_days => 30)",
               "CALL run_ttl(table => 'events', ttl_policy => 'KEEP_BY_TIME', "
               "options => 'hoodie.partition.ttl.strategy.days.retain=30')",
           ))
def _run_ttl(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.ttl import call_run_ttl

    ref = _table(spark, a, "run_ttl")
    parts = call_run_ttl(ref.base_path, a["ttl_policy"], a["retain_days"], a["options"] or "")
    _drop_catalog_partitions(spark, ref, parts)
    return [(p,) for p in parts]


@procedure("managePartitionTTL",
           [TABLE, PATH, Param("strategy", str, default="KEEP_BY_TIME"), Param("daysRetain", int),
            Param("predicate", str)],
           "deleted_partitions string",
           "RFC-65's partition TTL call with a partition predicate; returns the deleted partitions.",
           examples=(
               "CALL managePartitionTTL(table => 'analytics.events', strategy => 'KEEP_BY_TIME', daysRetain => 10, "
               "predicate => 'productid = 1')",
               "CALL managePartitionTTL(basePath => '/data/events', daysRetain => 10)",
           ))
def _manage_ttl(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.ttl import call_manage_partition_ttl

    ref = _table(spark, a, "managePartitionTTL")
    parts = call_manage_partition_ttl(ref.base_path, a["strategy"], a["daysRetain"], a["predicate"])
    _drop_catalog_partitions(spark, ref, parts)
    return [(p,) for p in parts]


def _drop_catalog_partitions(spark: Any, ref: TableRef, parts: list[str]) -> None:
    """Keep catalog partitions in step with TTL when the table was named (see catalog.py)."""
    if ref.name and parts:
        drop_partitions(spark, ref.name, parts)


@procedure("run_compaction",
           [Param("op", str, default="run"), TABLE, PATH, Param("timestamp", str), Param("options", str)],
           "timestamp string, operation_size int, state string",
           "schedule, run or scheduleAndExecute compaction (Hudi's run_compaction).",
           examples=(
               "CALL run_compaction(op => 'schedule', table => 'analytics.events', "
               "options => 'hoodie.compact.inline.max.delta.commits=1')",
               "CALL run_compaction('run', 'analytics.events')",
           ))
def _run_compaction(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.engine.compaction import spark_executor
    from hoodie.format.table import HoodieTable
    from hoodie.services.compaction import run_compaction, schedule_compaction

    ref = _table(spark, a, "run_compaction")
    path = ref.base_path
    opts = parse_options(a["options"])
    op = (a["op"] or "run").lower()
    if op not in ("schedule", "run", "scheduleandexecute"):
        raise SqlError(f"argument 'op' of run_compaction must be schedule, run or scheduleAndExecute, got {a['op']!r}")
    if op == "schedule":
        inst = schedule_compaction(path, opts, instant=a["timestamp"])
        if inst is None:
            return []
        plan = HoodieTable(path).timeline.compaction_plan(inst)
        return [(inst, len(plan.operations), "REQUESTED")]
    # The _ro view's freshness properties follow each compaction, as a post-commit hook.
    hooks = [Hook("the catalog's freshness properties", lambda _txn: sync_freshness(spark, ref.name))] if ref.name else []
    results = run_compaction(path, a["timestamp"], opts, executor=spark_executor(spark),
                             schedule_if_none=op == "scheduleandexecute", post_commit=hooks)
    return [(r.instant, len(r.stats), "COMPLETED") for r in results]


@procedure("show_compaction", [TABLE, PATH, Param("limit", int, default=20)],
           "timestamp string, operation_size int, state string, partial_operations int, file_groups int, "
           "partitions array<string>, strategy string, threshold_ms long, damaged string, duration_ms long, "
           "bytes_written long, remaining_log_files int",
           "Compaction instants (pending and completed), newest first, with what `hoodie compaction show` "
           "reports: the plan's operations, partial operations, file groups, partitions, strategy and "
           "event-time threshold (null, and `damaged` naming the file, when the plan file is damaged), and "
           "a completed compaction's duration, bytes written and remaining log files.",
           examples=(
               "CALL show_compaction(table => 'analytics.events', limit => 5)",
           ))
def _show_compaction(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.compaction import show_compactions

    summaries = show_compactions(_table(spark, a, "show_compaction").base_path, limit=a["limit"])
    return [(s.instant, s.operations, s.state, s.partial_operations, s.file_groups,
             None if s.partitions is None else list(s.partitions), s.strategy, s.threshold_ms, s.damaged,
             s.duration_ms, s.bytes_written, s.remaining_log_files) for s in reversed(summaries)]


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
        m = tl.commit_metadata(inst)
        stats = list(m.all_write_stats())
        rows.append((inst.timestamp, inst.action, sum(s.total_write_bytes for s in stats),
                     sum(1 for s in stats if s.prev_commit == "null"), sum(1 for s in stats if s.prev_commit != "null"),
                     len(m.partition_to_write_stats), sum(s.num_writes for s in stats),
                     sum(s.num_update_writes for s in stats), sum(s.total_write_errors for s in stats)))
        if len(rows) >= a["limit"]:
            break
    return rows


@procedure("run_clean",
           [TABLE, PATH, Param("clean_policy", str), Param("retain_commits", int), Param("hours_retained", int),
            Param("file_versions_retained", int), Param("options", str), Param("dry_run", bool, default=False)],
           "start_clean_time string, total_files_deleted int, earliest_commit_to_retain string, "
           "deleted_partitions string",
           "Clean old file versions and replaced file groups (Hudi's run_clean).",
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
    if res.instant is None and not a["dry_run"]:
        return []
    n = sum(len(v) for v in res.deleted.values()) if not a["dry_run"] else sum(
        len(v) for v in res.plan.files_to_delete.values())
    return [(res.instant or "", n, res.plan.earliest_instant_to_retain or "",
             ",".join(res.deleted_partitions))]


@procedure("rollback_to_instant", [TABLE, Param("instant_time", str, required=True), PATH],
           "rollback_result boolean",
           "Roll back a pending or the latest completed write instant, or remove a pending compaction plan.",
           examples=(
               "CALL rollback_to_instant(table => 'analytics.events', instant_time => '20240501000000000')",
           ))
def _rollback(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.rollback import rollback

    rollback(_table(spark, a, "rollback_to_instant").base_path, a["instant_time"])
    return [(True,)]


@procedure("show_freshness", [TABLE, PATH],
           "threshold_epoch_ms long, threshold string, watermark_epoch_ms long, watermark string",
           "The read-optimized view's event-time freshness: threshold T and watermark W.",
           examples=(
               "CALL show_freshness(table => 'analytics.events_ro')",
           ))
def _show_freshness(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.compaction import freshness

    f = freshness(_table(spark, a, "show_freshness").base_path)
    th, wm = f.get("threshold") or {}, f.get("watermark") or {}
    return [(th.get("epoch_ms"), th.get("iso"), wm.get("epoch_ms"), wm.get("iso"))]


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
