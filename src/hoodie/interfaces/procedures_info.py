"""CALL procedures that read a table's timeline and properties: Hudi's help, show_table_properties,
show_timeline, show_commits_metadata, show_commit_extra_metadata, show_commit_files,
show_commit_partitions, show_commit_write_stats, show_rollbacks, show_rollback_detail, stats_wa,
show_fsview_all and copy_to_temp_view, with Hudi's parameter names and output columns.

Each works from the timeline files and ``hoodie.properties`` alone (no Spark job: the rows are built in
the driver and handed to Spark as a local relation), except ``copy_to_temp_view``, which defines a view
and reads nothing until the view is queried. Imported by :mod:`hoodie.interfaces.procedures`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.active import Timeline
from hoodie.format.timeline.instant import Instant, State
from hoodie.interfaces.procedures_views import _pick_partitions, _view_timeline
from hoodie.interfaces.sql_call import PROCEDURES, Param, SqlError, TableRef, procedure, resolve_table

TABLE = Param("table", str)
PATH = Param("basePath", str, aliases=("path", "base_path"))
LIMIT = Param("limit", int, default=10)
INSTANT = Param("instant_time", str, required=True)


def _table(spark: Any, args: dict[str, Any], name: str) -> TableRef:
    return resolve_table(spark, args, PROCEDURES[name.lower()])


def _open(spark: Any, a: dict[str, Any], name: str) -> HoodieTable:
    return HoodieTable(_table(spark, a, name).base_path, read_only=True)


# -- help ---------------------------------------------------------------------------------------------------

_SPARK_TYPE = {str: "string", int: "integer", bool: "boolean", float: "double"}


def help_text(name: str) -> str:
    """Hudi's ``help(cmd => name)`` text: the parameters (name, type, default, required) and the output
    columns, in Hudi's layout."""
    from hoodie.interfaces.procedures_unsupported import UNSUPPORTED, refusal

    proc = PROCEDURES.get(name.lower().removeprefix("system."))
    if proc is None:
        if name.lower() in UNSUPPORTED:
            return refusal(name.lower())
        raise SqlError(f"help: no procedure {name!r}; CALL help() lists them")
    lines = ["parameters:", f"{'param':<32}{'type_name':<32}{'default_value':<32}required"]
    for p in proc.params:
        default = "None" if p.default is None else str(p.default).lower() if isinstance(p.default, bool) else p.default
        lines.append(f"{p.name:<32}{_SPARK_TYPE.get(p.type, 'string'):<32}{str(default):<32}{str(p.required).lower()}")
    lines += ["outputType:", f"{'name':<32}{'type_name':<32}{'nullable':<32}metadata"]
    for col in proc.output.split(","):
        cname, ctype = col.strip().split(" ", 1)
        ctype = {"int": "integer", "bigint": "long"}.get(ctype.strip(), ctype.strip())
        lines.append(f"{cname:<32}{ctype:<32}{'true':<32}{{}}")
    return "\n".join(lines)


@procedure("help", [Param("cmd", str)], "result string",
           "Hudi's help: with `cmd`, the parameters (name, type, default, required) and output columns of that "
           "procedure, in Hudi's layout (for a Hudi procedure hoodie does not have, what to use instead); without, "
           "every procedure hoodie answers, then Hudi's that it does not.",
           examples=("CALL help(cmd => 'show_commits')", "CALL help()"))
def _help(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.interfaces.procedures_unsupported import UNSUPPORTED

    if a["cmd"]:
        return [(help_text(a["cmd"]),)]
    names = sorted({p.name for p in PROCEDURES.values()}, key=str.lower)
    return [("procedures: " + ", ".join(names) + "\nHudi procedures hoodie does not have (CALL help(cmd => name) "
             "says what to use instead): " + ", ".join(sorted(UNSUPPORTED)),)]


# -- table properties and the timeline -----------------------------------------------------------------------

@procedure("show_table_properties", [TABLE, PATH, Param("limit", int, default=10)], "key string, value string",
           "The table's `hoodie.properties` (Hudi's show_table_properties), sorted by key, at most `limit` rows.",
           examples=("CALL show_table_properties(table => 'analytics.events', limit => 100)",))
def _show_table_properties(spark: Any, a: dict[str, Any]) -> list[tuple]:
    t = _open(spark, a, "show_table_properties")
    return sorted(t.props.items())[: max(0, a["limit"])]


TIMELINE_COLUMNS = ("instant_time string, action string, state string, requested_time string, inflight_time string, "
                    "completed_time string, timeline_type string, rollback_info string")


def _file_times(table: HoodieTable) -> dict[tuple[str, State], int]:
    """(instant time, state) -> the modification time (ms) of that state's timeline file."""
    from hoodie.format.timeline.instant import parse_instant_file_name, parse_instant_file_name_v2

    parse = parse_instant_file_name_v2 if table.timeline_layout == 2 else parse_instant_file_name
    out: dict[tuple[str, State], int] = {}
    for f in table.storage.list_dir(table.timeline.folder):
        inst = None if f.is_dir else parse(f.name)
        if inst is not None and f.mtime_ms:
            out[(inst.timestamp, inst.state)] = f.mtime_ms
    return out


def _fmt_ms(ms: Optional[int]) -> Optional[str]:
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%m-%d %H:%M:%S") if ms else None


def _fmt_instant(ts: Optional[str]) -> Optional[str]:
    try:
        return dt.datetime.strptime((ts or "")[:14], "%Y%m%d%H%M%S").strftime("%m-%d %H:%M:%S")
    except ValueError:
        return None


def _rolled_back(tl: Any, instants: list[Instant]) -> dict[str, list[str]]:
    """Instant time -> the rollbacks that rolled it back (completed: their metadata; pending: their plan)."""
    out: dict[str, list[str]] = {}
    for r in instants:
        if r.action != I.ROLLBACK:
            continue
        for ts in _rollback_targets(tl, r):
            out.setdefault(ts, []).append(r.timestamp)
    return out


def _rollback_targets(tl: Any, r: Instant) -> list[str]:
    try:
        if r.is_completed:
            return [str(c) for c in (tl.read_avro(r).get("commitsRollback") or [])]
        plan = tl.read_avro(Instant(r.timestamp, I.ROLLBACK, State.REQUESTED))
        return [str((plan.get("instantToRollback") or {}).get("commitTime"))]
    except (FileNotFoundError, ValueError, KeyError, AttributeError):
        return []  # a damaged rollback file: show_timeline still lists the instant, without the detail


@procedure("show_timeline",
           [TABLE, PATH, Param("limit", int, default=20), Param("showArchived", bool, default=False),
            Param("filter", str), Param("startTime", str), Param("endTime", str)],
           TIMELINE_COLUMNS,
           "Every instant of the timeline, newest first (Hudi's show_timeline): action, state, when each state's "
           "file was written (`MM-dd HH:mm:ss`, local time; for archived instants from the instant and completion "
           "times), `timeline_type` ACTIVE or ARCHIVED (with `showArchived => true`), and `rollback_info` (what a "
           "rollback rolled back, or which rollback rolled an instant back). `startTime`/`endTime` bound the "
           "instant times (inclusive; with both, `limit` does not apply).",
           examples=("CALL show_timeline(table => 'analytics.events')",
                     "CALL show_timeline(table => 'analytics.events', showArchived => true, limit => 50)"))
def _show_timeline(spark: Any, a: dict[str, Any]) -> list[tuple]:
    table = _open(spark, a, "show_timeline")
    tl = table.timeline
    start, end = (a["startTime"] or "").strip(), (a["endTime"] or "").strip()

    def in_range(ts: str) -> bool:
        return (not start or ts >= start) and (not end or ts <= end)

    times = _file_times(table)
    active = [i for i in tl.instants if in_range(i.timestamp)]
    rolled = _rolled_back(tl, active)
    entries: list[tuple[Instant, str]] = [(i, "ACTIVE") for i in active]
    if a["showArchived"]:
        from hoodie.services.archive.action import load_archived_timeline

        archived = load_archived_timeline(table)
        entries += [(i, "ARCHIVED") for i in archived.instants if in_range(i.timestamp)]
    entries.sort(key=lambda e: (e[0].timestamp, int(e[0].state)), reverse=True)
    if not (start and end):
        entries = entries[: max(0, a["limit"])]
    rows = []
    for inst, kind in entries:
        if kind == "ACTIVE":
            req = _fmt_ms(times.get((inst.timestamp, State.REQUESTED)))
            inf = _fmt_ms(times.get((inst.timestamp, State.INFLIGHT)))
            done = _fmt_ms(times.get((inst.timestamp, State.COMPLETED)))
        else:
            req = inf = _fmt_instant(inst.timestamp)
            done = _fmt_instant(inst.completion or inst.timestamp)
        info = None
        if inst.action == I.ROLLBACK and kind == "ACTIVE":
            targets = _rollback_targets(tl, inst)
            info = (("Rolled back: " if inst.is_completed else "Rolls back ") + ", ".join(targets)) if targets else None
        elif inst.timestamp in rolled:
            info = "Rolled back by: " + ", ".join(rolled[inst.timestamp])
        rows.append((inst.timestamp, inst.action, inst.state.name, req, inf, done, kind, info))
    return rows


# -- commit metadata -----------------------------------------------------------------------------------------

def _latest_commits(tl: Timeline, limit: int) -> list[Instant]:
    return list(reversed(tl.completed_writes().instants))[: max(0, limit)]


def _commit(tl: Timeline, ts: str, proc: str) -> Instant:
    inst = tl.completed_writes().get(ts)
    if inst is None:
        some = ", ".join(i.timestamp for i in list(reversed(tl.completed_writes().instants))[:5])
        raise SqlError(f"{proc}: {ts!r} is not a completed commit of the active timeline (newest: {some or 'none'})")
    return inst


METADATA_COLUMNS = ("commit_time string, action string, partition string, file_id string, previous_commit string, "
                    "num_writes long, num_inserts long, num_deletes long, num_update_writes long, total_errors long, "
                    "total_log_blocks long, total_corrupt_logblocks long, total_rollback_blocks long, "
                    "total_log_records long, total_updated_records_compacted long, total_bytes_written long")


@procedure("show_commits_metadata", [TABLE, LIMIT, PATH], METADATA_COLUMNS,
           "The write stats of the newest `limit` completed commits (Hudi's show_commits_metadata): one row per "
           "file written, newest commit first.",
           examples=("CALL show_commits_metadata(table => 'analytics.events', limit => 5)",))
def _show_commits_metadata(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "show_commits_metadata").timeline
    rows = []
    for inst in _latest_commits(tl, a["limit"]):
        for part, stats in tl.commit_metadata(inst).partition_to_write_stats.items():
            for s in stats:
                rows.append((inst.timestamp, inst.action, part, s.file_id, s.prev_commit, s.num_writes, s.num_inserts,
                             s.num_deletes, s.num_update_writes, s.total_write_errors, s.total_log_blocks,
                             s.total_corrupt_log_block, s.total_rollback_blocks, s.total_log_records,
                             s.total_updated_records_compacted, s.total_write_bytes))
    return rows


@procedure("show_commit_extra_metadata",
           [TABLE, LIMIT, Param("instant_time", str), Param("metadata_key", str), PATH],
           "instant_time string, action string, metadata_key string, metadata_value string",
           "The extra metadata of a completed commit (Hudi's show_commit_extra_metadata; without `instant_time` the "
           "newest): the write `schema` and any other key, or only `metadata_key`; at most `limit` rows.",
           examples=("CALL show_commit_extra_metadata(table => 'analytics.events', metadata_key => 'schema')",))
def _show_commit_extra_metadata(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "show_commit_extra_metadata").timeline
    if a["instant_time"]:
        insts = [_commit(tl, a["instant_time"], "show_commit_extra_metadata")]
    else:
        insts = _latest_commits(tl, 1)
    rows = []
    for inst in insts:
        for k, v in sorted(tl.commit_metadata(inst).extra_metadata.items()):
            if a["metadata_key"] is None or k == a["metadata_key"]:
                rows.append((inst.timestamp, inst.action, k, v))
    return rows[: max(0, a["limit"])]


@procedure("show_commit_files", [TABLE, LIMIT, INSTANT, PATH],
           "action string, partition_path string, file_id string, previous_commit string, total_records_updated long, "
           "total_records_written long, total_bytes_written long, total_errors long, file_size long",
           "The files a completed commit wrote (Hudi's show_commit_files), at most `limit`.",
           examples=("CALL show_commit_files(table => 'analytics.events', instant_time => '20240501000000000')",))
def _show_commit_files(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "show_commit_files").timeline
    inst = _commit(tl, a["instant_time"], "show_commit_files")
    rows = [(inst.action, part, s.file_id, s.prev_commit, s.num_update_writes, s.num_writes, s.total_write_bytes,
             s.total_write_errors, s.file_size_in_bytes)
            for part, stats in tl.commit_metadata(inst).partition_to_write_stats.items() for s in stats]
    return rows[: max(0, a["limit"])]


@procedure("show_commit_partitions", [TABLE, LIMIT, INSTANT, PATH],
           "action string, partition_path string, total_files_added long, total_files_updated long, "
           "total_records_inserted long, total_records_updated long, total_bytes_written long, total_errors long",
           "Per partition, what a completed commit wrote (Hudi's show_commit_partitions), at most `limit`.",
           examples=("CALL show_commit_partitions(table => 'analytics.events', instant_time => '20240501000000000')",))
def _show_commit_partitions(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "show_commit_partitions").timeline
    inst = _commit(tl, a["instant_time"], "show_commit_partitions")
    rows = []
    for part, stats in tl.commit_metadata(inst).partition_to_write_stats.items():
        added = sum(1 for s in stats if s.prev_commit == "null")
        rows.append((inst.action, part, added, len(stats) - added,
                     sum(s.num_inserts if s.prev_commit != "null" else s.num_writes for s in stats),
                     sum(s.num_update_writes for s in stats), sum(s.total_write_bytes for s in stats),
                     sum(s.total_write_errors for s in stats)))
    return rows[: max(0, a["limit"])]


@procedure("show_commit_write_stats", [TABLE, LIMIT, INSTANT, PATH],
           "action string, total_bytes_written long, total_records_written long, avg_record_size long",
           "A completed commit's totals (Hudi's show_commit_write_stats): bytes, records and their ratio.",
           examples=("CALL show_commit_write_stats(table => 'analytics.events', instant_time => '20240501000000000')",))
def _show_commit_write_stats(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "show_commit_write_stats").timeline
    inst = _commit(tl, a["instant_time"], "show_commit_write_stats")
    stats = list(tl.commit_metadata(inst).all_write_stats())
    size, n = sum(s.total_write_bytes for s in stats), sum(s.num_writes for s in stats)
    return [(inst.action, size, n, size // n if n else 0)]


@procedure("stats_wa", [TABLE, LIMIT, PATH],
           "commit_time string, total_upserted long, total_written long, write_amplification_factor string",
           "Write amplification of the newest `limit` completed commits (Hudi's stats_wa): records updated and "
           "records written, their ratio (`0` without updates), then a `Total` row.",
           examples=("CALL stats_wa(table => 'analytics.events')",))
def _stats_wa(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "stats_wa").timeline

    def waf(written: int, upserted: int) -> str:
        return f"{written / upserted:.2f}".rstrip("0").rstrip(".") if upserted else "0"

    rows, tu, tw = [], 0, 0
    for inst in _latest_commits(tl, a["limit"]):
        stats = list(tl.commit_metadata(inst).all_write_stats())
        up, wr = sum(s.num_update_writes for s in stats), sum(s.num_writes for s in stats)
        tu, tw = tu + up, tw + wr
        rows.append((inst.timestamp, up, wr, waf(wr, up)))
    return rows + [("Total", tu, tw, waf(tw, tu))]


# -- rollbacks -----------------------------------------------------------------------------------------------

@procedure("show_rollbacks", [TABLE, LIMIT, PATH],
           "instant string, rollback_instant string, total_files_deleted int, time_taken_in_millis long, "
           "total_partitions int",
           "Completed rollbacks, newest first (Hudi's show_rollbacks): the rollback, what it rolled back, the "
           "files it deleted, how long it took and the partitions it touched.",
           examples=("CALL show_rollbacks(table => 'analytics.events')",))
def _show_rollbacks(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "show_rollbacks").timeline
    rows = []
    for r in reversed(tl.completed().by_actions(I.ROLLBACK).instants):
        md = tl.read_avro(r)
        for target in md.get("commitsRollback") or []:
            rows.append((r.timestamp, str(target), int(md.get("totalFilesDeleted") or 0),
                         int(md.get("timeTakenInMillis") or 0), len(md.get("partitionMetadata") or {})))
    return rows[: max(0, a["limit"])]


@procedure("show_rollback_detail", [TABLE, LIMIT, INSTANT, PATH],
           "instant string, rollback_instant string, partition string, deleted_file string, succeeded boolean",
           "The files a completed rollback deleted (Hudi's show_rollback_detail), `succeeded` false for those it "
           "failed to delete.",
           examples=("CALL show_rollback_detail(table => 'analytics.events', instant_time => '20240602000000001')",))
def _show_rollback_detail(spark: Any, a: dict[str, Any]) -> list[tuple]:
    tl = _open(spark, a, "show_rollback_detail").timeline
    r = tl.completed().by_actions(I.ROLLBACK).get(a["instant_time"])
    if r is None:
        raise SqlError(f"show_rollback_detail: {a['instant_time']!r} is not a completed rollback; CALL "
                       "show_rollbacks(table => ...) lists them")
    md = tl.read_avro(r)
    target = ",".join(str(c) for c in md.get("commitsRollback") or [])
    rows = []
    for key, pm in sorted((md.get("partitionMetadata") or {}).items()):
        part = (pm or {}).get("partitionPath") or key
        for ok, files in ((True, (pm or {}).get("successDeleteFiles")), (False, (pm or {}).get("failedDeleteFiles"))):
            rows += [(r.timestamp, target, part, str(f), ok) for f in files or []]
    return rows[: max(0, a["limit"])]


# -- show_fsview_all ------------------------------------------------------------------------------------------

@procedure("show_fsview_all",
           [TABLE, Param("max_instant", str), Param("include_max", bool, default=False),
            Param("include_in_flight", bool, default=False), Param("exclude_compaction", bool, default=False),
            Param("limit", int, default=10), Param("path_regex", str), PATH],
           "partition string, file_id string, base_instant string, data_file string, data_file_size long, "
           "num_delta_files long, total_delta_file_size long, delta_files string",
           "Every file slice of every live file group, newest first within a group (Hudi's show_fsview_all): "
           "base file, log files and their sizes. `path_regex` is a glob over partition paths; `max_instant` builds "
           "the view as of an instant (`include_max` includes it). At most `limit` rows.",
           examples=("CALL show_fsview_all(table => 'analytics.events', path_regex => '*')",))
def _show_fsview_all(spark: Any, a: dict[str, Any]) -> list[tuple]:
    table = _open(spark, a, "show_fsview_all")
    view = FileSystemView(table.storage, _view_timeline(table.timeline, a["max_instant"] or None, a["include_max"],
                                                        a["include_in_flight"], a["exclude_compaction"]))
    rows = []
    for p in _pick_partitions("show_fsview_all", view, None, a["path_regex"]):
        for fid, fg in sorted(view.file_groups(p).items()):
            if view.is_replaced(p, fid):
                continue
            for sl in fg.ordered_slices():
                if sl.is_empty():
                    continue
                logs = sl.sorted_logs()
                base = sl.base_file
                rows.append((p, fid, sl.base_instant, table.storage.uri(base.path) if base else "",
                             base.size if base else -1, len(logs), sum(lf.size for lf in logs),
                             "[" + ",".join(lf.name for lf in logs) + "]"))
    return rows[: max(0, a["limit"])]


# -- copy_to_temp_view ----------------------------------------------------------------------------------------

@procedure("copy_to_temp_view",
           [TABLE, Param("query_type", str, default="snapshot"), Param("view_name", str, required=True),
            Param("begin_instance_time", str), Param("end_instance_time", str), Param("as_of_instant", str),
            Param("replace", bool, default=False), Param("global", bool, default=False), PATH],
           "status int",
           "A temporary view of the table (Hudi's copy_to_temp_view): a snapshot, read_optimized or incremental "
           "(`begin_instance_time`, `end_instance_time`) read, or one as of `as_of_instant`; `global` makes it a "
           "global temporary view (`global_temp.<view_name>`). An existing view is refused unless `replace`. "
           "`status` 0 as in Hudi.",
           examples=("CALL copy_to_temp_view(table => 'analytics.events', view_name => 'events_copy', replace => true)",))
def _copy_to_temp_view(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.engine.read import read

    ref = _table(spark, a, "copy_to_temp_view")
    qt = (a["query_type"] or "snapshot").lower()
    opts = {"hoodie.datasource.query.type": qt}
    if qt == "incremental":
        if not a["begin_instance_time"]:
            raise SqlError("copy_to_temp_view: query_type => 'incremental' needs begin_instance_time")
        opts["hoodie.datasource.read.begin.instanttime"] = a["begin_instance_time"]
        if a["end_instance_time"]:
            opts["hoodie.datasource.read.end.instanttime"] = a["end_instance_time"]
    if a["as_of_instant"]:
        opts["as.of.instant"] = a["as_of_instant"]
    name = a["view_name"]
    exists = (name in [t.name for t in spark.catalog.listTables("global_temp")] if a["global"]
              else spark.catalog.tableExists(name) and any(t.name == name and t.isTemporary
                                                           for t in spark.catalog.listTables()))
    if exists and not a["replace"]:
        raise SqlError(f"copy_to_temp_view: a temporary view {name!r} exists; pass replace => true to replace it")
    df = read(spark, ref.base_path, opts)
    (df.createOrReplaceGlobalTempView if a["global"] else df.createOrReplaceTempView)(name)
    return [(0,)]
