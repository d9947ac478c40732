"""CALL procedures that look at a table's files: show_fsview_latest, show_file_status,
show_partitions, stats_file_sizes and show_clean_plans (Hudi's names, arguments and columns, with a
``note``/``detail`` column of hoodie's that says what a row means, or why there is none).

Imported by :mod:`hoodie.interfaces.procedures`, which registers every procedure. Each procedure's
work is a plain function of the base path (``*_rows``), so it runs without Spark.
"""

from __future__ import annotations

import fnmatch
import json
import math
from typing import Any, Iterable, Optional

from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import FileSlice, FileSystemView
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.active import Timeline
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.timeline.savepoints import completed_savepoints
from hoodie.interfaces.sql_call import PROCEDURES, Param, SqlError, TableRef, procedure, resolve_table

TABLE = Param("table", str)
PATH = Param("basePath", str, aliases=("path", "base_path"))
ALL_PARTITIONS = "ALL_PARTITIONS"


def _table(spark: Any, args: dict[str, Any], name: str) -> TableRef:
    return resolve_table(spark, args, PROCEDURES[name.lower()])


def _some(items: Iterable[str], n: int = 5) -> str:
    items = list(items)
    return ", ".join(repr(i) for i in items[:n]) + (", ..." if len(items) > n else "")


def _pick_partitions(proc: str, view: FileSystemView, partition: Optional[str], glob: Optional[str]) -> list[str]:
    """The partitions a procedure looks at: one named partition (an unknown one is an error naming
    the table's partitions), those matching a glob, or all."""
    parts = view.partitions()
    if partition and glob:
        raise SqlError(f"{proc}: path_regex and partition_path cannot be used together")
    if partition and partition != ALL_PARTITIONS:
        p = partition.strip("/")
        if p not in parts:
            raise SqlError(f"{proc}: the table has no partition {partition!r}; its partitions are "
                           f"{_some(sorted(parts))}")
        return [p]
    if glob and glob != ALL_PARTITIONS:
        return [p for p in parts if fnmatch.fnmatchcase(p, glob.strip("/"))]
    return parts


# -- show_fsview_latest -------------------------------------------------------------------------------

FSVIEW_COLUMNS = ("partition string, file_id string, base_instant string, data_file string, data_file_size long, "
                  "num_delta_files long, total_delta_file_size long, delta_size_compaction_scheduled long, "
                  "delta_size_compaction_unscheduled long, delta_to_base_radio_compaction_scheduled double, "
                  "delta_to_base_radio_compaction_unscheduled double, delta_files_compaction_scheduled string, "
                  "delta_files_compaction_unscheduled string, note string")


def _view_timeline(tl: Timeline, max_instant: Optional[str], include_max: bool, include_in_flight: bool,
                   exclude_compaction: bool) -> Timeline:
    """The timeline the view is built from, as Hudi's procedure filters it: writes up to
    ``max_instant`` (excluded unless ``include_max``), pending compactions unless
    ``exclude_compaction``, inflight commits and deltacommits as if completed with ``include_in_flight``."""
    out = []
    for i in tl.instants:
        write = I.comparable_action(i.action) in I.WRITE_ACTIONS
        if write and max_instant and (i.timestamp > max_instant or (i.timestamp == max_instant and not include_max)):
            continue
        if i.action == I.COMPACTION and not i.is_completed and exclude_compaction:
            continue
        if include_in_flight and not i.is_completed and i.action in (I.COMMIT, I.DELTA_COMMIT):
            i = Instant(i.timestamp, i.action, State.COMPLETED)
        out.append(i)
    return tl.with_instants(out)


def fsview_latest_rows(base_path: str, max_instant: Optional[str] = None, include_max: bool = False,
                       include_in_flight: bool = False, exclude_compaction: bool = False, limit: int = 10,
                       path_regex: Optional[str] = None, partition_path: Optional[str] = None,
                       merge: bool = True) -> list[tuple]:
    """The rows of ``show_fsview_latest``: the latest file slice of every live file group."""
    table = HoodieTable(base_path)
    tl = table.timeline
    view = FileSystemView(table.storage, _view_timeline(tl, max_instant or None, include_max, include_in_flight,
                                                        exclude_compaction))
    parts = _pick_partitions("show_fsview_latest", view, partition_path, path_regex)
    scheduled: dict[tuple[str, str], set[str]] = {}
    if not exclude_compaction:
        for c in tl.pending_compactions().instants:
            try:
                plan = tl.compaction_plan(c.timestamp)
            except ValueError:
                continue
            for op in plan.operations:
                scheduled.setdefault(op.file_group, set()).update(op.delta_file_names)
    slices: list[FileSlice] = []
    opened = view.pending_compaction_file_groups() if not merge else {}
    for p in parts:
        got = view.latest_file_slices(p, merge_pending_compaction=merge)
        # Unmerged, the slice a pending compaction opened is the latest even while it holds no file.
        have = {sl.file_id for sl in got}
        got += [FileSlice(p, fid, c) for (q, fid), c in sorted(opened.items())
                if q == p and fid not in have and not view.is_replaced(p, fid)]
        slices += sorted(got, key=lambda sl: sl.file_id)
    storage = table.storage
    rows = []
    for sl in slices[: max(0, limit)]:
        base = sl.base_file
        base_size = base.size if base else 0
        logs = sl.sorted_logs()
        planned = scheduled.get((sl.partition, sl.file_id), set())
        sched = [lf for lf in logs if lf.name in planned]
        unsched = [lf for lf in logs if lf.name not in planned]
        s_size, u_size = sum(lf.size for lf in sched), sum(lf.size for lf in unsched)
        note = None
        if base is None and not logs:
            note = (f"opened by pending compaction {sl.base_instant}: no file yet (its base file comes with the "
                    "compaction; logs written meanwhile go here)")
        elif base is None:
            note = "no base file: a log-only file slice (snapshot reads merge its log files)"
        elif not logs:
            note = "base file only: read-optimized and snapshot reads see the same rows"
        rows.append((sl.partition, sl.file_id, sl.base_instant, storage.uri(base.path) if base else "", base_size,
                     len(logs), s_size + u_size, s_size, u_size,
                     s_size / base_size if base_size > 0 else -1.0, u_size / base_size if base_size > 0 else -1.0,
                     "[" + ",".join(lf.name for lf in sched) + "]", "[" + ",".join(lf.name for lf in unsched) + "]",
                     note))
    if len(slices) > limit and rows:
        rows[-1] = rows[-1][:-1] + (f"{len(slices) - limit} more file slice(s) not shown (limit => {limit})",)
    if not rows:
        where = f"partition(s) {_some(parts)}" if parts else "the table"
        why = (f"no live file slice in {where}" + (f" as of {max_instant}" if max_instant else "")
               + ("" if parts else ": the table has no partition with data"))
        rows.append((None, None, None, None, None, None, None, None, None, None, None, None, None, why))
    return rows


@procedure("show_fsview_latest",
           [TABLE, Param("max_instant", str), Param("include_max", bool, default=False),
            Param("include_in_flight", bool, default=False), Param("exclude_compaction", bool, default=False),
            Param("limit", int, default=10), Param("path_regex", str), Param("partition_path", str),
            Param("merge", bool, default=True), PATH],
           FSVIEW_COLUMNS,
           "The latest file slice of every live file group (Hudi's show_fsview_latest): base file, log files "
           "and their sizes, split into the log files a pending compaction plan includes (`scheduled`) and the "
           "others (`unscheduled`), with their ratio to the base file (-1 without one). `partition_path` names "
           "one partition, `path_regex` a glob over partition paths; `max_instant` builds the view as of an "
           "instant (`include_max` includes it); `merge` merges a slice a pending compaction opened with the "
           "previous one, as snapshot reads do. At most `limit` rows; `note` says what a slice is, or why there "
           "is no row.",
           examples=(
               "CALL show_fsview_latest(table => 'analytics.events', partition_path => '1')",
               "CALL show_fsview_latest(table => 'analytics.events', max_instant => '20240430000000000', "
               "include_max => true)",
           ))
def _show_fsview_latest(spark: Any, a: dict[str, Any]) -> list[tuple]:
    return fsview_latest_rows(_table(spark, a, "show_fsview_latest").base_path, a["max_instant"], a["include_max"],
                              a["include_in_flight"], a["exclude_compaction"], a["limit"], a["path_regex"],
                              a["partition_path"], a["merge"])


# -- show_file_status ---------------------------------------------------------------------------------

def _deleted_by(tl: Timeline, name: str, partition: Optional[str]) -> Optional[tuple[str, str]]:
    """(action, instant) of the newest completed clean, rollback or restore that deleted ``name``."""
    def hit(pm_map: dict) -> bool:
        for key, pm in (pm_map or {}).items():
            part = (pm or {}).get("partitionPath") or key
            if partition is not None and part != partition:
                continue
            if any(str(f) == name or str(f).endswith("/" + name) for f in (pm or {}).get("successDeleteFiles") or []):
                return True
        return False

    for action in (I.CLEAN, I.ROLLBACK, I.RESTORE):
        for inst in reversed(tl.completed().by_actions(action).instants):
            try:
                md = tl.read_avro(inst)
            except (FileNotFoundError, ValueError):
                continue
            if action == I.RESTORE:
                found = any(hit((rm or {}).get("partitionMetadata"))
                            for rms in (md.get("hoodieRestoreMetadata") or {}).values() for rm in rms or [])
            else:
                found = hit(md.get("partitionMetadata"))
            if found:
                return action, inst.timestamp
    return None


def _file_role(table: HoodieTable, view: FileSystemView, partition: str, name: str) -> str:
    """What an existing data file is to readers."""
    tl = table.timeline
    if N.is_base_file(name):
        b = N.parse_base_file(name)
        fid, key, is_log = b.file_id, b.instant, False
    elif N.is_log_file(name):
        lp = N.parse_log_file(name)
        fid, key, is_log = lp.file_id, lp.base_instant, True
    else:
        return "not a data file of the table (no base or log file name)"
    sps = [sp.instant for sp in completed_savepoints(tl) if name in sp.files]
    held = f"; held by savepoint(s) {', '.join(sps)}" if sps else ""
    inst = tl.get(key)
    first = tl.first()
    archived = first is not None and key < first.timestamp
    if not is_log or table.timeline_layout == 2:
        if inst is None and not archived:
            return f"uncommitted: instant {key} is not on the timeline (a failed write's file; rollback removes it)"
        if inst is not None and not inst.is_completed and inst.action != I.COMPACTION:
            return f"uncommitted: instant {key} is {inst.state.name.lower()} (pending write)"
    if view.is_replaced(partition, fid):
        return f"its file group {fid} was replaced (insert_overwrite, delete_partition or TTL); clean removes it{held}"
    latest = {sl.file_id: sl for sl in view.latest_file_slices(partition)}
    sl = latest.get(fid)
    in_latest = sl is not None and ((sl.base_file is not None and sl.base_file.name == name)
                                    or any(lf.name == name for lf in sl.log_files))
    if in_latest:
        what = "log file" if is_log else "base file"
        return f"a {what} of the latest file slice of file group {fid}: current data{held}"
    return (f"an older version in file group {fid}: time travel and incremental reads use it until clean removes "
            f"it{held}")


def file_status_rows(base_path: str, partition: Optional[str], file: str) -> list[tuple]:
    """The rows of ``show_file_status`` (Hudi's status ``deleted``, ``exist`` or ``unknown``)."""
    table = HoodieTable(base_path)
    tl = table.timeline
    storage = table.storage
    name = file.rsplit("/", 1)[-1]
    view = FileSystemView(storage, tl)
    if partition is not None:
        partition = partition.strip("/")
        parts = [partition]
    elif not table.is_partitioned:
        parts = [""]
    else:
        parts = view.partitions()
    gone = _deleted_by(tl, name, partition)
    if gone is not None:
        action, instant = gone
        return [("deleted", action, instant, "active", "",
                 f"the {action} {instant} deleted it" + (
                     "; an older file version no query needed any more" if action == I.CLEAN else
                     "; it belonged to an instant that was rolled back"))]
    for p in parts:
        rel = f"{p}/{name}" if p else name
        if storage.exists(rel):
            return [("exist", "", "", "active", storage.uri(rel), _file_role(table, view, p, name))]
    where = f"partition {partition!r}" if partition is not None else (
        "any partition" if table.is_partitioned else "the table")
    return [("unknown", "", "", "", "",
             f"no file {name!r} in {where}, and no clean, rollback or restore on the active timeline deleted it "
             "(a name of another table, or deleted outside hoodie)")]


@procedure("show_file_status", [TABLE, Param("partition", str), Param("file", str, required=True), PATH],
           "status string, action string, instant string, timeline string, full_path string, detail string",
           "Whether a data file exists or what deleted it (Hudi's show_file_status): `status` `deleted` with the "
           "clean, rollback or restore that deleted it, `exist` with its path, or `unknown`. `detail` says what "
           "the file is to readers (current data, an older version, uncommitted, replaced, held by a savepoint) or "
           "why nothing is known. Without `partition`, every partition is searched.",
           examples=(
               "CALL show_file_status(table => 'analytics.events', partition => '1', "
               "file => 'd0073a12-085d-4f49-83e9-402947e7e90a-0_0-2-2_20240430000000000.parquet')",
           ))
def _show_file_status(spark: Any, a: dict[str, Any]) -> list[tuple]:
    return file_status_rows(_table(spark, a, "show_file_status").base_path, a["partition"], a["file"])


# -- show_partitions -------------------------------------------------------------------------------------

def partitions_rows(base_path: str) -> list[tuple]:
    """The rows of ``show_partitions``: each partition's latest file slices."""
    table = HoodieTable(base_path)
    tl = table.timeline
    view = FileSystemView(table.storage, tl)
    held: dict[str, list[str]] = {}
    for sp in completed_savepoints(tl):
        for p in sp.partitions:
            held.setdefault(p, []).append(sp.instant)
    rows = []
    for p in sorted(view.partitions()):
        slices = view.latest_file_slices(p)
        bases = [s.base_file for s in slices if s.base_file is not None]
        logs = [lf for s in slices for lf in s.log_files]
        size = sum(b.size for b in bases) + sum(lf.size for lf in logs)
        instants = [b.instant for b in bases] + [lf.parsed.base_instant for lf in logs]
        note = None
        if not slices:
            note = ("no live file group: replaced (insert_overwrite, delete_partition or TTL) or emptied; clean "
                    "removes it")
        if held.get(p):
            note = (note + "; " if note else "") + f"savepoint(s) {', '.join(held[p])} hold files in it"
        rows.append((p, len(slices), len(bases), len(logs), size, max(instants) if instants else None,
                     bool(held.get(p)), note))
    if not rows:
        rows.append((None, 0, 0, 0, 0, None, False, "the table has no partition with data files yet"))
    elif not table.is_partitioned:
        rows = [r[:-1] + ("the table is not partitioned: one row for the whole table",) for r in rows]
    return rows


@procedure("show_partitions", [TABLE, PATH],
           "partition string, file_groups int, base_files int, log_files int, total_size long, "
           "latest_instant string, savepointed boolean, note string",
           "The table's partitions (listed from storage), each with its live file groups and the base and log "
           "files of their latest file slices, their total size, the newest instant among them and whether a "
           "savepoint holds files in it. `note` marks partitions without live data and non-partitioned tables, "
           "or says the table has no partition yet.",
           examples=("CALL show_partitions(table => 'analytics.events')",))
def _show_partitions(spark: Any, a: dict[str, Any]) -> list[tuple]:
    return partitions_rows(_table(spark, a, "show_partitions").base_path)


# -- stats_file_sizes ----------------------------------------------------------------------------------------

def _quantile(values: list[int], q: float) -> float:
    """Dropwizard's ``UniformSnapshot.getValue`` (what Hudi's procedure reports)."""
    if not values:
        return 0.0
    pos = q * (len(values) + 1)
    if pos < 1:
        return float(values[0])
    if pos >= len(values):
        return float(values[-1])
    lower, upper = values[int(pos) - 1], values[int(pos)]
    return lower + (pos - math.floor(pos)) * (upper - lower)


def _histogram(label: str, sizes: list[int], note: Optional[str] = None) -> tuple:
    v = sorted(sizes)
    n = len(v)
    mean = sum(v) / n if n else 0.0
    std = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    return (label, v[0] if v else 0, _quantile(v, 0.1), _quantile(v, 0.5), mean, _quantile(v, 0.95),
            v[-1] if v else 0, n, std, note)


def file_size_rows(base_path: str, partition_path: Optional[str] = None, limit: int = 10) -> list[tuple]:
    """The rows of ``stats_file_sizes``: size histograms of the data files on storage (every version),
    per instant in their names (newest first, at most ``limit``), then ``ALL``."""
    table = HoodieTable(base_path)
    storage = table.storage
    view = FileSystemView(storage, table.timeline)
    parts = _pick_partitions("stats_file_sizes", view, None, partition_path or None)
    by_instant: dict[str, list[int]] = {}
    every: list[int] = []
    for p in parts:
        for st in storage.list_dir(p):
            key = None if st.is_dir else N.data_file_instant(st.name)
            if key is None:
                continue
            by_instant.setdefault(key, []).append(st.size)
            every.append(st.size)
    keys = sorted(by_instant, reverse=True)
    rows = [_histogram(k, by_instant[k]) for k in keys[: max(0, limit)]]
    note = None
    if not every:
        note = (f"no data file under {_some(parts)}" if parts else
                f"no partition matches {partition_path!r}" if partition_path else "the table has no data file yet")
    elif len(keys) > limit:
        note = f"{len(keys) - limit} more instant(s) not shown (limit => {limit}); ALL counts every file"
    rows.append(_histogram("ALL", every, note))
    return rows


@procedure("stats_file_sizes", [TABLE, Param("partition_path", str), Param("limit", int, default=10), PATH],
           "commit_time string, min long, 10th double, 50th double, avg double, 95th double, max long, "
           "num_files int, std_dev double, note string",
           "File size statistics of the data files on storage, every version (Hudi's stats_file_sizes): one row "
           "per instant named in the files (newest first, at most `limit`; a log file counts under its base "
           "instant, or on table versions 8/9 its deltacommit), then an `ALL` row. `partition_path` is a glob "
           "over partition paths. `note` on the `ALL` row says why there is no file, or how many instants the "
           "limit left out.",
           examples=(
               "CALL stats_file_sizes(table => 'analytics.events')",
               "CALL stats_file_sizes(table => 'analytics.events', partition_path => '1')",
           ))
def _stats_file_sizes(spark: Any, a: dict[str, Any]) -> list[tuple]:
    return file_size_rows(_table(spark, a, "stats_file_sizes").base_path, a["partition_path"], a["limit"])


# -- show_clean_plans -----------------------------------------------------------------------------------------

def clean_plan_rows(base_path: str, limit: int = 10) -> list[tuple]:
    """The rows of ``show_clean_plans``: every clean instant's plan, newest first."""
    table = HoodieTable(base_path)
    tl = table.timeline
    cleans = list(reversed(tl.by_actions(I.CLEAN).instants))
    rows = []
    for inst in cleans[: max(0, limit)]:
        req = Instant(inst.timestamp, I.CLEAN, State.REQUESTED)
        state = inst.state.name
        try:
            plan = tl.read_avro(req)
        except (FileNotFoundError, ValueError) as e:
            rows.append((inst.timestamp, state, I.CLEAN, None, None, None, None, None, None, None, None,
                         f"the plan cannot be read ({e})"))
            continue
        files = plan.get("filePathsToBeDeletedPerPartition") or {}
        old = plan.get("filesToBeDeletedPerPartition") or {}
        parts = set(files) | set(old)
        n_files = (sum(len(v or []) for v in files.values())
                   + sum(len(v or []) for p, v in old.items() if p not in files))
        ectr = (plan.get("earliestInstantToRetain") or {}).get("timestamp")
        extra = plan.get("extraMetadata")
        if inst.is_completed:
            note = "completed"
        else:
            note = "pending: the next clean (CALL run_clean) executes this plan before planning a new one"
        rows.append((inst.timestamp, state, I.CLEAN, ectr, plan.get("lastCompletedCommitTimestamp"),
                     plan.get("policy"), plan.get("version"), len(parts), len(plan.get("partitionsToBeDeleted") or []),
                     json.dumps(extra, sort_keys=True) if extra else None, n_files, note))
    if not rows:
        rows.append((None, None, None, None, None, None, None, None, None, None, None,
                     "no clean on the active timeline (CALL run_clean plans and runs one)"))
    elif len(cleans) > limit:
        rows[-1] = rows[-1][:-1] + (f"{rows[-1][-1]}; {len(cleans) - limit} older clean(s) not shown "
                                    f"(limit => {limit})",)
    return rows


@procedure("show_clean_plans", [TABLE, Param("limit", int, default=10), PATH],
           "plan_time string, state string, action string, earliest_instant_to_retain string, "
           "last_completed_commit_timestamp string, policy string, version int, total_partitions_to_clean int, "
           "total_partitions_to_delete int, extra_metadata string, total_files_to_delete int, note string",
           "Clean plans in every state, newest first (Hudi's show_clean_plans): the `HoodieCleanerPlan` of each "
           "clean instant (REQUESTED, INFLIGHT or COMPLETED), with the number of files it deletes. `note` says "
           "whether a plan is still to run; without any clean, one row (`plan_time` null) saying so. Also callable as "
           "`show_clean_plan`.",
           aliases=("show_clean_plan",),
           examples=("CALL show_clean_plans(table => 'analytics.events', limit => 5)",))
def _show_clean_plans(spark: Any, a: dict[str, Any]) -> list[tuple]:
    return clean_plan_rows(_table(spark, a, "show_clean_plans").base_path, a["limit"])
