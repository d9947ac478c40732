"""Read-optimized freshness: the event-time threshold T and the watermark W.

* **T** (threshold) is published by an event-time compaction whose plan compacted every log file
  with minimum event time <= T. Right after it commits, all data with event time <= T that had
  arrived is in the read-optimized (RO) view; data arriving later with older event times (beyond
  the configured latency) is not covered, which is why T is a promise about timely data only.
* **W** (watermark) is exact: the minimum event time over all committed log blocks not yet in a base
  file (the log files of the latest file slices, merged across a pending compaction). Every record
  whose latest version has event time < W is in the RO view with exactly that version: any newer
  version would sit in a log block, whose events are >= W. W is unknown when some uncompacted
  block's event time is unknown, and there is none (status ``complete``) when no log block is
  uncompacted: then RO equals the snapshot.

:func:`freshness` reads T from the timeline and computes W live; each compaction commit also records
both as they were when it committed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Union

from hoodie.format.slice.eventtime import MAX_MS, MIN_MS, millis_to_iso
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable, open_table
from hoodie.format.timeline.archive_v1 import ARCHIVE_FOLDER, load_archived
from hoodie.format.timeline.archived import HISTORY_FOLDER
from hoodie.format.timeline.commit_metadata import CommitMetadata

import hoodie.services.compaction.keys as K
from hoodie.format.slice.event_ranges import EventTimeIndex, min_event_time, unit_problem

log = logging.getLogger("hoodie.compaction")


@dataclass
class Watermark:
    """W and the log files it was computed over."""

    min_ms: Optional[int]
    status: str  # known | unknown | complete
    slices_with_logs: int
    log_files: int
    log_bytes: int
    problem: Optional[str] = None  # a log file whose recorded range is not epoch milliseconds


def compute_watermark(table: HoodieTable, *, assume_completed: Iterable[str] = (),
                      extra_links: Optional[Mapping[str, str]] = None,
                      completing: Optional[tuple[str, set[tuple[str, str]]]] = None,
                      view: Optional[FileSystemView] = None) -> Watermark:
    """W over the table's latest file slices.

    ``completing=(C, {(partition, fileId)})`` computes W as it will be once the pending compaction C
    commits: for its file groups only the logs of the slice at C count.
    """
    index = EventTimeIndex(table, assume_completed=assume_completed, extra_links=extra_links)
    view = view or FileSystemView(table.storage, table.timeline)
    ranges = []
    problem: Optional[str] = None
    n_slices = n_files = n_bytes = 0
    for p in view.partitions():
        for sl in view.latest_file_slices(p):
            logs = sl.log_files
            if completing is not None and (p, sl.file_id) in completing[1]:
                logs = [lf for lf in logs if lf.parsed.base_instant == completing[0]]
            if not logs:
                continue
            n_slices += 1
            n_files += len(logs)
            n_bytes += sum(lf.size for lf in logs)
            for lf in logs:
                r = index.for_log(lf)
                ranges.append(r)
                problem = problem or unit_problem(lf.path, r)
    lo, status = min_event_time(ranges)
    return Watermark(lo, status, n_slices, n_files, n_bytes, problem)


def iso_millis(ms: Optional[int]) -> Optional[str]:
    """ISO-8601 UTC with millisecond precision (exact: no float rounding), None for None and for a
    value beyond the years 1-9999 (a range recorded in another unit; :func:`freshness` says so)."""
    if ms is None or not MIN_MS <= ms <= MAX_MS:
        return None
    return millis_to_iso(ms)


def _point(ms: Optional[int]) -> dict[str, Any]:
    return {"epoch_ms": ms, "iso": iso_millis(ms)}


def _int_or_none(v: Optional[str]) -> Optional[int]:
    try:
        return int(v) if v not in (None, "") else None
    except ValueError:
        return None


def last_threshold(table: HoodieTable) -> tuple[Optional[int], Optional[str]]:
    """(T, instant) of the last completed event-time compaction whose plan covered the whole table: in the
    active timeline, else in the archived one (archival may have moved every compaction out while the
    threshold they published still holds for the read-optimized view)."""
    tl = table.timeline
    for inst in reversed(tl.completed().by_actions("commit").instants):
        if not tl.is_compaction_commit(inst):
            continue
        found = _published_threshold(tl.commit_metadata(inst))
        if found is not None:
            return found, inst.timestamp
    return _archived_threshold(table)


# Per table, the active timeline's instants when the archive was last searched and the T found. The
# archive changes only when archival runs, and archival removes what it archives from the active
# timeline: while every instant active at the search is still active, the archive is the one searched.
# So a call costs nothing that grows with the history (no listing of the archive folder, which holds
# one file per archival on version 6), and the archive is read again only after an archival.
_ARCHIVED_T: dict[tuple[str, int], tuple[frozenset[str], tuple[Optional[int], Optional[str]]]] = {}


def _archived_threshold(table: HoodieTable) -> tuple[Optional[int], Optional[str]]:
    layout = table.timeline_layout
    active = frozenset(i.timestamp for i in table.timeline.instants)
    key = (table.storage.uri(), layout)
    cached = _ARCHIVED_T.get(key)
    if cached is not None and cached[0] and cached[0] <= active:
        # (An empty active timeline proves nothing: whatever it gains later may be archived.)
        return cached[1]
    folder = HISTORY_FOLDER if layout == 2 else ARCHIVE_FOLDER
    found: tuple[Optional[int], Optional[str]] = (None, None)
    if table.storage.exists(folder) and any(not f.is_dir for f in table.storage.list_dir(folder)):
        archived = load_archived(table.storage, layout)
        for inst in reversed([i for i in archived.instants if i.action == "commit"]):
            meta = archived.commit_metadata(inst.timestamp)
            t = _published_threshold(meta) if meta is not None else None
            if t is not None:
                found = (t, inst.timestamp)
                break
    _ARCHIVED_T[key] = (active, found)
    return found


def _published_threshold(meta: CommitMetadata) -> Optional[int]:
    """T of an event-time compaction that covered the whole table, from its commit metadata."""
    t = _int_or_none(meta.extra_metadata.get(K.THRESHOLD_KEY))
    return t if t is not None and meta.extra_metadata.get(K.THRESHOLD_COMPLETE_KEY) == "true" else None


def freshness(table_or_path: Union[str, HoodieTable], storage_options: Optional[dict[str, Any]] = None, *,
              view: Optional[FileSystemView] = None) -> dict:
    """The RO view's freshness as JSON-ready data.

    Keys: ``threshold`` and ``watermark``, each ``{"epoch_ms", "iso"}`` (both null when unknown;
    ``watermark`` adds ``status``: ``known``, ``unknown`` or ``complete``, and ``problem`` when an
    uncompacted log file records event times in another unit than milliseconds), ``threshold_instant`` (the
    compaction that published T), ``last_compaction`` (instant), ``published_watermark`` (W recorded
    by that compaction), and ``uncompacted`` (slices, log files and bytes W was computed over).
    ``view``: a file-system view of ``table``'s current timeline to reuse (its listings are not repeated).
    """
    if view is not None and isinstance(table_or_path, HoodieTable):
        table = table_or_path  # the caller's snapshot: its view was built from the table's timeline
    else:
        table = open_table(table_or_path, storage_options)
    t, t_inst = last_threshold(table)
    w = compute_watermark(table, view=view)
    tl = table.timeline
    last_c = None
    published = _point(None)
    for inst in reversed(tl.completed().by_actions("commit").instants):
        if tl.is_compaction_commit(inst):
            last_c = inst.timestamp
            extra = tl.commit_metadata(inst).extra_metadata
            published = _point(_int_or_none(extra.get(K.WATERMARK_KEY)))
            published["status"] = extra.get(K.WATERMARK_STATUS_KEY)
            break
    wm = _point(w.min_ms)
    wm["status"] = w.status
    if w.problem is not None:
        # Reported, not raised: a compaction that committed calls this to publish freshness.
        log.warning("read-optimized freshness: %s", w.problem)
        wm["problem"] = w.problem
    return {
        "threshold": _point(t),
        "watermark": wm,
        "threshold_instant": t_inst,
        "last_compaction": last_c,
        "published_watermark": published,
        "uncompacted": {"slices": w.slices_with_logs, "log_files": w.log_files, "log_bytes": w.log_bytes},
    }


__all__ = ["freshness", "compute_watermark", "Watermark", "last_threshold", "iso_millis"]
