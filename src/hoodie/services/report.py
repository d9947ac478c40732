"""The table health report's figures (issue 37): what ``hoodie report`` draws and ``--json`` prints.

:func:`gather_report` reads metadata only (the timeline, commit metadata and its write stats, log
block headers through the event-time index, Parquet footers, partition metafiles, directory
listings) and starts no JVM. It reuses the services' own answers rather than re-deriving them:

* partition ages: :func:`hoodie.services.ttl.stats.partition_last_modified` (what KEEP_BY_TIME uses)
  and the partition metafile's ``commitTime`` (when the partition was created);
* TTL: a dry run of :func:`hoodie.services.ttl.run_ttl` with the configured options (it writes
  nothing and takes no lock), so "would expire" is exactly what a run would do now;
* freshness: :func:`hoodie.services.compaction.freshness` for T and W now, and the watermark and
  threshold each compaction commit recorded for the history;
* compaction: :func:`hoodie.services.compaction.show_compactions` for pending plans and
  :func:`hoodie.services.compaction.triggers.evaluate_trigger` for the trigger in force;
* files and backlog: the file-system view's latest file slices (what a reader sees now).

The result is a JSON-ready dict (see :func:`gather_report`); :mod:`hoodie.interfaces.report_html`
draws it. Times are epoch milliseconds (UTC) plus the instant they came from.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Iterable, Mapping, Optional, Union

from hoodie import configs as C
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.file_group.naming import is_log_file
from hoodie.format.table import HoodieTable, open_table, read_partition_metadata, table_exists
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.active import Timeline, layout_of
from hoodie.errors import HoodieError
from hoodie.format.timeline.archived import HISTORY_FOLDER, ArchivedTimeline, ArchivedTimelineError

import hoodie.services.compaction.keys as K
from hoodie.services.compaction.config import CompactionConfig
from hoodie.format.slice.event_ranges import EventTimeIndex
from hoodie.services.compaction.freshness import freshness, iso_millis
from hoodie.services.compaction.show import show_compactions
from hoodie.services.compaction.triggers import evaluate_trigger
from hoodie.services.ttl.config import TTLConfig
from hoodie.services.ttl.move import ACTION as MV_ACTION, MOVE as MV_MOVE, MOVED_KEY, MOVE_TARGET_KEY, \
    TARGET as MV_TARGET, move_config
from hoodie.services.ttl.service import TTL_STRATEGY_KEY, run_ttl
from hoodie.services.ttl.stash import TTL_MARKER_KEY
from hoodie.services.ttl.stats import partition_last_modified
from hoodie.services.ttl.strategies import EXPIRED, KEPT, SKIPPED

log = logging.getLogger(__name__)

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
# Instant kinds of the timeline chart (Hudi actions grouped by what the service did).
WRITE, COMPACTION, CLEAN, TTL, ROLLBACK, OTHER = "write", "compaction", "clean", "ttl", "rollback", "other"
KINDS = (WRITE, COMPACTION, CLEAN, TTL, ROLLBACK, OTHER)
# Where the attention thresholds come from; each is a reporting choice, not a Hudi setting.
LAG_WARN_MS = HOUR_MS  # a watermark more than an hour behind the newest waiting event
EXPIRY_SOON_MS = DAY_MS  # partitions that expire within a day
PENDING_COMPACTION_WARN = 2  # more pending compaction plans than this is a stuck service
V6_ARCHIVE_FOLDER = ".hoodie/archived"
METADATA_FOLDER = ".hoodie/metadata"
FOOTER_THREADS = 8


def _ms(table: HoodieTable, instant: str) -> Optional[int]:
    """Epoch ms of an instant time in the table's timeline zone (None for a non-time instant)."""
    try:
        return I.instant_to_epoch_ms(I.fix_instant_compatibility(instant), table.timeline_timezone)
    except ValueError:
        return None  # e.g. 00000000000001 (bootstrap): not a time


def _point(ms: Optional[int]) -> dict[str, Any]:
    return {"epoch_ms": ms, "iso": iso_millis(ms)}


def _ttl_options(table: HoodieTable, options: Mapping[str, str]) -> dict[str, str]:
    """TTL keys in force: the table's properties, overridden by the given options."""
    prefixes = ("hoodie.partition.ttl.", "hoodie.payload.event.time.")
    out = {k: v for k, v in table.props.items() if k.startswith(prefixes)}
    out.update({k: v for k, v in options.items()})
    return out


def _ttl_configured(cfg: TTLConfig) -> bool:
    return cfg.strategy_class is not None or cfg.retention_ms is not None or bool(cfg.rules)


def _footer_rows(table: HoodieTable, path: str) -> Optional[int]:
    """Row count from a base file's Parquet footer (None when the footer cannot be read)."""
    import pyarrow.parquet as pq

    try:
        with table.storage.open_input(path) as f:
            return int(pq.read_metadata(f).num_rows)
    except (OSError, ValueError) as e:  # reported as unknown, never as 0 rows
        log.warning("report: cannot read the footer of %s: %s", path, e)
        return None


# -- partitions, files and the compaction backlog -----------------------------------------------

def _log_records(tl: Timeline) -> dict[str, int]:
    """Records (writes and deletes) each log file received, from the write stats of the completed
    deltacommits: path -> sum over the commits that appended to it."""
    out: dict[str, int] = {}
    for inst in tl.completed().by_actions(I.DELTA_COMMIT).instants:
        for st in tl.commit_metadata(inst).all_write_stats():
            if st.path and st.file_name and is_log_file(st.file_name):
                out[st.path] = out.get(st.path, 0) + st.num_writes + st.num_deletes
    return out


def _sum_known(values: Iterable[Optional[int]]) -> Optional[int]:
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def _slices(table: HoodieTable, view: FileSystemView, small_limit: int,
            index: Optional[EventTimeIndex]) -> tuple[list[dict], list[dict], list[int], dict[str, Any]]:
    """Per partition: sizes, rows and logs; per file group with logs: its backlog; base-file sizes;
    the event-time range of the waiting logs.

    ``log_records`` counts the records written into the waiting log files (an update of a key
    counts each time; None when a log file has no write stat, e.g. blocks a compaction split off)."""
    log_records = _log_records(table.timeline) if table.is_mor else {}
    from concurrent.futures import ThreadPoolExecutor

    latest = {p: view.latest_file_slices(p) for p in view.partitions()}
    # A partition whose file groups were all replaced (delete_partition, TTL) is gone for readers;
    # its folder stays until the cleaner removes it. It is no partition of the table any more.
    latest = {p: slices for p, slices in latest.items() if slices}
    base_paths = [sl.base_file.path for slices in latest.values() for sl in slices if sl.base_file is not None]
    # Footer reads are I/O (one or two ranged reads each, much slower on object stores): in parallel.
    with ThreadPoolExecutor(max_workers=FOOTER_THREADS) as pool:
        footer_rows = dict(zip(base_paths, pool.map(lambda path: _footer_rows(table, path), base_paths)))
    parts: list[dict] = []
    groups: list[dict] = []
    sizes: list[int] = []
    lo: Optional[int] = None
    hi: Optional[int] = None
    unknown = 0
    for p, slices in latest.items():
        base = [sl.base_file for sl in slices if sl.base_file is not None]
        rows: Optional[int] = 0
        for bf in base:
            n = footer_rows[bf.path]
            rows = None if rows is None or n is None else rows + n
        log_files = sum(len(sl.log_files) for sl in slices)
        for sl in slices:
            if not sl.log_files:
                continue
            glo: Optional[int] = None
            ghi: Optional[int] = None
            for lf in sl.log_files:
                if index is None:
                    continue
                r = index.for_log(lf)
                if not r.has_data:
                    continue
                if r.min_ms is None or r.max_ms is None:
                    unknown += 1
                    continue
                glo = r.min_ms if glo is None else min(glo, r.min_ms)
                ghi = r.max_ms if ghi is None else max(ghi, r.max_ms)
            if glo is not None:
                lo = glo if lo is None else min(lo, glo)
                hi = ghi if hi is None else max(hi, ghi)  # type: ignore[type-var]
            groups.append({"partition": p, "file_id": sl.file_id, "base_instant": sl.base_instant,
                           "log_files": len(sl.log_files), "log_bytes": sl.total_log_size,
                           "log_records": _sum_known(log_records.get(lf.path) for lf in sl.log_files),
                           "min_event_ms": glo, "max_event_ms": ghi})
        sizes.extend(bf.size for bf in base)
        parts.append({
            "partition": p,
            "file_groups": len(slices),
            "base_files": len(base),
            "base_bytes": sum(bf.size for bf in base),
            "small_base_files": sum(1 for bf in base if bf.size < small_limit),
            "log_files": log_files,
            "log_bytes": sum(sl.total_log_size for sl in slices),
            "rows": rows,
            "log_records": _sum_known(log_records.get(lf.path) for sl in slices for lf in sl.log_files),
        })
    waiting = {"min": _point(lo), "max": _point(hi), "log_files_unknown_range": unknown}
    return parts, groups, sizes, waiting


def _histogram(sizes: Iterable[int]) -> list[dict[str, int]]:
    """Base-file sizes in power-of-two bins ``[lo, hi)`` (bytes); only non-empty bins and those between."""
    counts: dict[int, int] = {}
    for s in sizes:
        e = max(0, int(s).bit_length() - 1)  # 2**e <= s < 2**(e+1)
        counts[e] = counts.get(e, 0) + 1
    if not counts:
        return []
    return [{"lo": 0 if e == 0 else 1 << e, "hi": 1 << (e + 1), "count": counts.get(e, 0)}
            for e in range(min(counts), max(counts) + 1)]


def _folder_usage(table: HoodieTable, rel: str) -> dict[str, int]:
    files = list(table.storage.walk_files(rel))
    return {"files": len(files), "bytes": sum(f.size for f in files)}


# -- the timeline ----------------------------------------------------------------------------------

def _kind(tl: Timeline, inst: I.Instant) -> tuple[str, dict[str, str]]:
    """The chart kind of an instant, and the commit metadata's extra keys a TTL run left."""
    a = inst.action
    if a in (I.COMPACTION, I.LOG_COMPACTION):
        return COMPACTION, {}
    if a == I.COMMIT and inst.is_completed and tl.is_compaction_commit(inst):
        return COMPACTION, {}
    if a == I.CLEAN:
        return CLEAN, {}
    if a in (I.ROLLBACK, I.RESTORE):
        return ROLLBACK, {}
    if a == I.REPLACE_COMMIT and inst.is_completed:
        try:
            extra = tl.commit_metadata(inst).extra_metadata
        except (FileNotFoundError, ValueError):
            extra = {}
        if TTL_MARKER_KEY in extra or TTL_STRATEGY_KEY in extra:
            return TTL, extra
        return WRITE, {}
    if a in I.WRITE_ACTIONS or a == I.CLUSTERING:
        return WRITE, {}
    return OTHER, {}


def _rolled_back(tl: Timeline, inst: I.Instant) -> list[str]:
    """Instants a completed rollback undid (``commitsRollback``); the plan's target when the
    completed file says nothing."""
    try:
        meta = tl.read_avro(inst)
        done = [str(c) for c in meta.get("commitsRollback") or []]
        if done:
            return done
    except (FileNotFoundError, ValueError):
        pass
    try:
        plan = tl.read_avro(inst.with_state(I.State.REQUESTED))
        target = (plan.get("instantToRollback") or {}).get("commitTime")
        return [str(target)] if target else []
    except (FileNotFoundError, ValueError):
        return []


def _archived(table: HoodieTable) -> dict[str, Any]:
    """The archived timeline: instants (layout 2's LSM timeline) or files (table version 6)."""
    if table.table_version >= 8:
        try:
            arch = ArchivedTimeline.load(table.storage)
        except ArchivedTimelineError as e:  # shown in the report, which must still open
            return {"instants": None, "by_action": {}, **_folder_usage(table, HISTORY_FOLDER),
                    "first": None, "last": None, "error": str(e)}
        kinds: dict[str, int] = {}
        for inst in arch.instants:
            kinds[inst.action] = kinds.get(inst.action, 0) + 1
        usage = _folder_usage(table, HISTORY_FOLDER)
        return {"instants": len(arch.instants), "by_action": kinds, **usage, "error": None,
                "first": arch.instants[0].timestamp if arch.instants else None,
                "last": arch.instants[-1].timestamp if arch.instants else None}
    usage = _folder_usage(table, V6_ARCHIVE_FOLDER)
    # Table version 6 archives into Avro log files (.commits_.archive.N); hoodie counts their size
    # but does not decode them, so the instant count is unknown rather than guessed.
    return {"instants": None if usage["files"] else 0, "by_action": {}, **usage, "first": None, "last": None,
            "error": None}


def _timeline(table: HoodieTable) -> tuple[dict[str, Any], list[dict], list[dict]]:
    """The active timeline by kind, rollbacks, TTL runs (with tiering moves)."""
    tl = table.timeline
    instants: list[dict] = []
    rollbacks: list[dict] = []
    ttl_runs: list[dict] = []
    counts = {k: 0 for k in KINDS}
    for inst in tl.instants:
        kind, extra = _kind(tl, inst)
        counts[kind] += 1
        instants.append({"instant": inst.timestamp, "action": inst.action, "state": inst.state.name,
                         "kind": kind, "epoch_ms": _ms(table, inst.timestamp),
                         "completion": inst.completion})
        if kind == ROLLBACK and inst.is_completed:
            rollbacks.append({"instant": inst.timestamp, "action": inst.action,
                              "rolled_back": _rolled_back(tl, inst)})
        if kind == TTL:
            meta = tl.commit_metadata(inst)
            moved: dict[str, Any] = {}
            try:
                moved = json.loads(extra.get(MOVED_KEY) or "{}")
            except ValueError:
                moved = {}
            ttl_runs.append({"instant": inst.timestamp, "epoch_ms": _ms(table, inst.timestamp),
                             "strategy": extra.get(TTL_STRATEGY_KEY),
                             "partitions": sorted((meta.partition_to_replace_file_ids or {}).keys()),
                             "move_target": extra.get(MOVE_TARGET_KEY), "moved": moved})
    pending = [i for i in instants if i["state"] != I.State.COMPLETED.name]
    return ({"instants": instants, "by_kind": counts, "active": len(instants),
             "completed": len(instants) - len(pending), "pending": len(pending)}, rollbacks, ttl_runs)


def _growth(instants: list[dict], now: int) -> dict[str, Any]:
    """How fast the active timeline grows: instants requested in the last day and week, and per
    UTC day over the last 14 days (instants from the future, a writer's clock ahead, count as now)."""
    import datetime as _dt

    times = [i["epoch_ms"] for i in instants if i["epoch_ms"] is not None]
    per_day: dict[str, int] = {}
    for t in times:
        if t >= now - 14 * DAY_MS:
            day = _dt.datetime.fromtimestamp(min(t, now) / 1000, _dt.timezone.utc).strftime("%Y-%m-%d")
            per_day[day] = per_day.get(day, 0) + 1
    return {"last_24h": sum(1 for t in times if t >= now - DAY_MS),
            "last_7d": sum(1 for t in times if t >= now - 7 * DAY_MS),
            "per_day": [{"day": d, "instants": n} for d, n in sorted(per_day.items())]}


def _mdt_instants(table: HoodieTable) -> Optional[int]:
    """Instants on the metadata table's active timeline (None without a metadata table)."""
    if not table.storage.exists(METADATA_FOLDER + "/.hoodie"):
        return None
    child = table.storage.child(METADATA_FOLDER)  # same file system and credentials as the table
    mdt = HoodieTable(child.base_uri, storage=child, read_only=True)
    return len(mdt.timeline.instants)


# -- freshness -------------------------------------------------------------------------------------

def _int(v: Optional[str]) -> Optional[int]:
    try:
        return int(v) if v not in (None, "") else None
    except ValueError:
        return None


def _freshness_history(table: HoodieTable) -> list[dict]:
    """W and T as each completed compaction recorded them, with the wall-clock time it completed."""
    tl = table.timeline
    out = []
    for inst in tl.completed().by_actions(I.COMMIT).instants:
        if not tl.is_compaction_commit(inst):
            continue
        extra = tl.commit_metadata(inst).extra_metadata
        wall = _ms(table, inst.timestamp)
        w = _int(extra.get(K.WATERMARK_KEY))
        t = _int(extra.get(K.THRESHOLD_KEY))
        out.append({"instant": inst.timestamp, "epoch_ms": wall,
                    "watermark_ms": w, "watermark_status": extra.get(K.WATERMARK_STATUS_KEY),
                    "threshold_ms": t, "threshold_complete": extra.get(K.THRESHOLD_COMPLETE_KEY) == "true",
                    "watermark_lag_ms": None if w is None or wall is None else wall - w,
                    "threshold_lag_ms": None if t is None or wall is None else wall - t})
    return out


# -- the whole report ------------------------------------------------------------------------------

def _fmt_bytes(n: int) -> str:
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if v < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{n} B"


def fmt_duration(ms: Optional[int]) -> str:
    """A duration for people: ``3 h 5 min``, ``2 d 4 h``, ``45 s`` (``-`` for None)."""
    if ms is None:
        return "-"
    neg = ms < 0
    s = abs(int(ms)) // 1000
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    if d:
        txt = f"{d} d {h} h" if h else f"{d} d"
    elif h:
        txt = f"{h} h {m} min" if m else f"{h} h"
    elif m:
        txt = f"{m} min"
    else:
        txt = f"{s} s"
    return ("-" if neg else "") + txt


def gather_report(table_or_path: Union[str, HoodieTable], options: Optional[Mapping[str, Any]] = None, *,
                  storage_options: Optional[dict[str, Any]] = None, now_ms: Optional[int] = None) -> dict:
    """The health report's figures as JSON-ready data.

    Args:
        table_or_path: the table or its base path.
        options: Hudi keys in force for the services (TTL strategy and retention, compaction
            strategy and trigger, ``hoodie.parquet.max.file.size``, ``hoodie.parquet.small.file.limit``);
            the table's properties fill in what is not given. Without a TTL retention or strategy
            class the TTL dry run is skipped (``partitions.ttl.configured`` is false).
        storage_options: for a base path on an object store.
        now_ms: the wall-clock time the report is as of (default: now).

    Returns keys ``table``, ``generated``, ``attention`` (what needs looking at, most urgent
    first), ``partitions``, ``freshness``, ``compaction``, ``files``, ``timeline``. Reads only
    metadata; writes nothing.
    """
    started = time.monotonic()
    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    C.warn_unknown_keys(opts)  # a misspelled retention key would silently mean "TTL not configured"
    table = open_table(table_or_path, storage_options, read_only=True)
    now = int(time.time() * 1000) if now_ms is None else int(now_ms)
    tl = table.timeline
    reader = C.read({**table.props, **opts})
    max_size = int(reader.get(C.PARQUET_MAX_FILE_SIZE))
    small_limit = int(reader.get(C.PARQUET_SMALL_FILE_LIMIT))
    view = FileSystemView(table.storage, tl)
    ccfg = CompactionConfig.from_options(opts, table.props)
    # Log files record event times when the table has an event-time field (or the logs' headers do).
    index = EventTimeIndex(table) if table.is_mor else None
    parts, groups, sizes, waiting = _slices(table, view, small_limit, index)

    # Partition ages: created (metafile) and last modified (the TTL statistics).
    stats = partition_last_modified(table, incremental=False).last_modified
    for row in parts:
        p = row["partition"]
        meta = read_partition_metadata(table.storage, p) or {}
        created = meta.get("commitTime")
        row["created_instant"] = created
        row["created_ms"] = _ms(table, created) if created else None
        row["last_modified_instant"] = stats.get(p)
        row["last_modified_ms"] = _ms(table, stats[p]) if p in stats else None

    timeline, rollbacks, ttl_runs = _timeline(table)
    timeline["rollbacks"] = rollbacks
    timeline["rolled_back_instants"] = sorted({r for rb in rollbacks for r in rb["rolled_back"]})
    timeline["archived"] = _archived(table)
    timeline["growth"] = _growth(timeline["instants"], now)
    timeline["metadata_table_instants"] = _mdt_instants(table)
    timeline["active_timeline_bytes"] = sum(
        f.size for f in table.storage.list_dir(tl_folder(table)) if not f.is_dir)

    ttl = _ttl_section(table, parts, opts, now)
    moved = [{"partition": p, "ttl_instant": run["instant"], **(info if isinstance(info, dict) else {})}
             for run in ttl_runs for p, info in sorted((run["moved"] or {}).items())]
    ttl["runs"] = [{k: v for k, v in r.items() if k != "moved"} for r in ttl_runs]
    targets = sorted({r["move_target"] for r in ttl_runs if r.get("move_target")}
                     | ({ttl["move_target"]} if ttl.get("move_target") else set()))
    cold = [_cold_table(table, t, _ttl_options(table, opts)) for t in targets]

    fresh = freshness(table, view=view) if table.is_mor else None
    history = _freshness_history(table)
    compactions = show_compactions(table)
    pending = [c.to_json() for c in compactions if c.is_pending]
    trigger = evaluate_trigger(table, ccfg, I.epoch_ms_to_instant(now, table.timeline_timezone)) if table.is_mor else None
    by_part: dict[str, dict[str, int]] = {}
    for g in groups:
        b = by_part.setdefault(g["partition"], {"file_groups": 0, "log_files": 0, "log_bytes": 0})
        b["file_groups"] += 1
        b["log_files"] += g["log_files"]
        b["log_bytes"] += g["log_bytes"]

    report: dict[str, Any] = {
        "table": {"base_path": table.base_path, "name": table.name, "table_type": table.table_type,
                  "table_version": table.table_version, "partition_fields": list(table.partition_fields),
                  "timeline_timezone": table.timeline_timezone, "metadata_table": table.has_metadata_table},
        "generated": {**_point(now)},
        "partitions": {"rows": parts, "ttl": ttl, "tiering": {"moved": moved, "cold_tables": cold}},
        "freshness": {"enabled": table.is_mor, "now": fresh, "history": history, "waiting": waiting},
        "compaction": {
            "backlog": {"log_files": sum(g["log_files"] for g in groups),
                        "log_bytes": sum(g["log_bytes"] for g in groups),
                        "file_groups": groups,
                        "partitions": [{"partition": p, **v} for p, v in sorted(by_part.items())]},
            "pending": pending,
            "completed": sum(1 for c in compactions if not c.is_pending),
            "config": {"strategy": ccfg.strategy, "trigger": ccfg.trigger,
                       "max_delta_commits": ccfg.max_delta_commits, "max_delta_seconds": ccfg.max_delta_seconds,
                       "event_time_field": ccfg.event_time_field, "inline": ccfg.inline,
                       # What the newest plan recorded (options given to the scheduler are not stored).
                       "last_plan_strategy": next((c.strategy for c in reversed(compactions) if c.strategy), None)},
            "trigger_now": None if trigger is None else {"schedule": trigger.schedule, "reason": trigger.reason},
        },
        "files": {
            "base_files": len(sizes), "base_bytes": sum(sizes),
            "max_file_size": max_size, "small_file_limit": small_limit,
            "small_files": sum(1 for s in sizes if s < small_limit),
            "over_max": sum(1 for s in sizes if s > max_size),
            "min_bytes": min(sizes) if sizes else None, "max_bytes": max(sizes) if sizes else None,
            "median_bytes": sorted(sizes)[len(sizes) // 2] if sizes else None,
            "histogram": _histogram(sizes),
            "metadata_table": {"enabled": table.has_metadata_table, **_folder_usage(table, METADATA_FOLDER)},
        },
        "timeline": timeline,
    }
    report["attention"] = attention(report)
    report["generated"]["seconds"] = round(time.monotonic() - started, 3)
    return report


def tl_folder(table: HoodieTable) -> str:
    """The active timeline's folder (``.hoodie`` on layout 1, ``.hoodie/timeline`` on layout 2)."""
    return layout_of(table.storage).folder


def _cold_table(hot: HoodieTable, target: str, ttl_opts: Mapping[str, str]) -> dict[str, Any]:
    """The partitions living in a tiering target now (what moves left there, minus what was
    brought back), with their sizes; the cold table is reached with the move's own storage rules."""
    out: dict[str, Any] = {"target": target, "partitions": [], "error": None}
    try:
        mc = move_config({**ttl_opts, str(MV_ACTION): MV_MOVE, str(MV_TARGET): target}, hot)
        st = mc.storage()
        if not table_exists(st):
            out["error"] = "no table there yet"
            return out
        cold = HoodieTable(st.base_uri, storage=st, read_only=True)
        view = FileSystemView(cold.storage, cold.timeline)
        for p in view.partitions():
            slices = view.latest_file_slices(p)
            if slices:
                out["partitions"].append({"partition": p, "file_groups": len(slices),
                                          "bytes": sum(sl.base_file.size for sl in slices if sl.base_file)
                                          + sum(sl.total_log_size for sl in slices)})
    except HoodieError as e:  # an unreachable cold table is shown, the hot table's report still opens
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def _ttl_section(table: HoodieTable, parts: list[dict], opts: Mapping[str, str], now: int) -> dict[str, Any]:
    """The TTL dry run's verdicts merged into the partition rows, and what expires next."""
    ttl_opts = _ttl_options(table, opts)
    cfg = TTLConfig.from_options(ttl_opts)
    out: dict[str, Any] = {"configured": _ttl_configured(cfg), "strategy": cfg.strategy_name,
                           "retention_ms": cfg.retention_ms, "retention": cfg.retention_text,
                           "would_expire": [], "skipped": {}, "next": [], "note": None, "dry_run_instant": None,
                           "error": None}
    for row in parts:
        row["ttl"] = None
    if not table.is_partitioned:
        out["note"] = "the table is not partitioned: partition TTL does not apply"
        return out
    if not out["configured"]:
        out["note"] = ("no TTL retention configured: pass --set hoodie.partition.ttl.strategy.days.retain=<days> "
                       "(or hoodie.partition.ttl.strategy.retention / .rules) to see what would expire")
        return out
    if not table.timeline.completed_writes():
        out["note"] = "the table has no completed commit yet: nothing to expire"
        return out
    instant = I.epoch_ms_to_instant(now, table.timeline_timezone)
    try:
        res = run_ttl(table, cfg, dry_run=True, instant_time=instant)
    except HoodieError as e:
        # The settings parsed (a bad value raised above), but this table refuses the run, e.g. a
        # KEEP_BY_EVENT_TIME format that parses none of its partitions: shown, never hidden.
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    out["dry_run_instant"] = res.now_instant
    out["warnings"] = list(res.warnings)
    by_part = {d.partition: d for d in res.decisions}
    nxt = []
    for row in parts:
        d = by_part.get(row["partition"])
        if d is None:
            continue
        left = None if d.age_ms is None or d.retention_ms is None else d.retention_ms - d.age_ms
        row["ttl"] = {"status": d.status, "reason": d.reason, "reference_ms": d.reference_ms,
                      "age_ms": d.age_ms, "retention_ms": d.retention_ms, "rule": d.rule,
                      "expires_in_ms": left}
        if d.status == KEPT and left is not None and left >= 0:
            nxt.append({"partition": d.partition, "expires_in_ms": left, "bytes": row["base_bytes"] + row["log_bytes"],
                        "rows": row["rows"]})
    out["would_expire"] = [d.partition for d in res.decisions if d.status == EXPIRED]
    out["would_expire_bytes"] = sum(r["base_bytes"] + r["log_bytes"] for r in parts
                                    if r["ttl"] and r["ttl"]["status"] == EXPIRED)
    out["skipped"] = {d.partition: d.reason for d in res.decisions if d.status == SKIPPED}
    out["next"] = sorted(nxt, key=lambda x: (x["expires_in_ms"], x["partition"]))
    out["action"] = res.action
    out["move_target"] = res.move_target
    return out


def attention(report: Mapping[str, Any]) -> list[dict[str, str]]:
    """What needs looking at, as ``{"level": "warn"|"info", "topic", "text"}``, warnings first."""
    items: list[dict[str, str]] = []

    def add(level: str, topic: str, text: str) -> None:
        items.append({"level": level, "topic": topic, "text": text})

    fr = report["freshness"]
    wait = fr["waiting"]
    now_ms = report["generated"]["epoch_ms"]
    if fr["enabled"] and fr["now"] is not None:
        wm = fr["now"]["watermark"]
        if wm.get("problem"):
            add("warn", "freshness", wm["problem"])
        if wm["status"] == "unknown":
            add("warn", "freshness", "watermark unknown: a waiting log file's event times are not recorded "
                                     "(set hoodie.payload.event.time.field on the writers)")
        elif wm["status"] == "known" and wait["max"]["epoch_ms"] is not None:
            lag = wait["max"]["epoch_ms"] - wm["epoch_ms"]
            add("warn" if lag > LAG_WARN_MS else "info", "freshness",
                f"watermark {fmt_duration(lag)} behind the newest event waiting in log files "
                f"(W {wm['iso']}, newest {wait['max']['iso']})")
        t = fr["now"]["threshold"]
        if t["epoch_ms"] is not None:
            add("info", "freshness", f"read-optimized view complete up to event time {t['iso']} "
                                     f"(threshold T, {fmt_duration(now_ms - t['epoch_ms'])} before now)")
    ttl = report["partitions"]["ttl"]
    if ttl.get("error"):
        add("warn", "ttl", f"the TTL dry run failed: {ttl['error']}")
    if ttl["configured"] and ttl.get("dry_run_instant"):
        n = len(ttl["would_expire"])
        if n:
            verb = "move to the cold table" if ttl.get("action") == "move" else "expire"
            add("warn", "ttl", f"{n} partition(s) ({_fmt_bytes(ttl['would_expire_bytes'])}) would {verb} now "
                               f"under {ttl['strategy']}: {', '.join(ttl['would_expire'][:5])}"
                               + (", ..." if n > 5 else ""))
        soon = [x for x in ttl["next"] if x["expires_in_ms"] <= EXPIRY_SOON_MS]
        if soon:
            add("warn", "ttl", f"{len(soon)} partition(s) expire within {fmt_duration(EXPIRY_SOON_MS)}: "
                               + ", ".join(x["partition"] for x in soon[:5]) + (", ..." if len(soon) > 5 else ""))
        if ttl["skipped"]:
            add("warn", "ttl", f"{len(ttl['skipped'])} expired partition(s) skipped: "
                               + "; ".join(f"{p}: {r}" for p, r in list(ttl["skipped"].items())[:3]))
    comp = report["compaction"]
    bl = comp["backlog"]
    if bl["log_files"]:
        add("warn" if len(comp["pending"]) > PENDING_COMPACTION_WARN else "info", "compaction",
            f"{bl['log_files']} log file(s) ({_fmt_bytes(bl['log_bytes'])}) waiting for compaction in "
            f"{len(bl['partitions'])} partition(s), {len(bl['file_groups'])} file group(s)")
    damaged = [c for c in comp["pending"] if c.get("damaged")]
    for c in damaged:
        add("warn", "compaction", f"compaction {c['instant']}: {c['damaged']}")
    if len(comp["pending"]) > PENDING_COMPACTION_WARN:
        add("warn", "compaction", f"{len(comp['pending'])} compaction plans pending (oldest {comp['pending'][0]['instant']})")
    files = report["files"]
    if files["base_files"] and files["small_files"]:
        add("info", "files", f"{files['small_files']} of {files['base_files']} base files are below the small-file "
                             f"limit ({_fmt_bytes(files['small_file_limit'])}, hoodie.parquet.small.file.limit)")
    if files["over_max"]:
        add("warn", "files", f"{files['over_max']} base file(s) above hoodie.parquet.max.file.size "
                             f"({_fmt_bytes(files['max_file_size'])})")
    tl = report["timeline"]
    if tl["archived"].get("error"):
        add("warn", "timeline", f"the archived timeline cannot be read: {tl['archived']['error']}")
    pending_writes = [i for i in tl["instants"] if i["kind"] == WRITE and i["state"] != "COMPLETED"]
    if pending_writes:
        add("warn", "timeline", f"{len(pending_writes)} write(s) not completed ({pending_writes[0]['instant']}"
                                + (", ..." if len(pending_writes) > 1 else "")
                                + "): running now, or failed and waiting for rollback")
    if tl["rolled_back_instants"]:
        add("info", "timeline", f"{len(tl['rolled_back_instants'])} failed or undone instant(s) rolled back "
                                f"({len(tl['rollbacks'])} rollback(s) on the active timeline)")
    items.sort(key=lambda x: x["level"] != "warn")
    return items


__all__ = ["gather_report", "attention", "fmt_duration", "KINDS"]
