"""The archival action: move the planned instants into the archived timeline, then out of the active one.

Under the table lock (:class:`hoodie.format.lock.TableLock`), for the data table and then its metadata
table:

1. plan (:func:`hoodie.services.archive.planner.plan_archival`) from one listing of the timeline folder;
2. write the archived entries in the table version's format: version 6, a new archive log file
   (:mod:`hoodie.format.timeline.archive_v1`); versions 8/9, a level-0 file of the LSM timeline and a
   new manifest (:mod:`hoodie.format.timeline.lsm_writer`);
3. delete the archived instants' files from the active timeline: requested and inflight files first,
   then completed files oldest first (Java's order: a reader never sees a hole, nor a completed
   instant's pending file without its completed file), and their leftover marker folders;
4. versions 8/9: LSM compaction and cleaning of the archived timeline; version 6 with
   ``hoodie.archive.merge.enable``: merge the newest small archive files into one
   (:mod:`hoodie.services.archive.merge`), after recovering a merge a crash interrupted (step 1).

Crash safety: the archive is written before anything is deleted, so after a crash every completed
instant is in the active timeline, the archived one, or both. A re-run is idempotent: an instant still
active is planned again, and the entries an earlier run already wrote (the newest archive file of a
version 6 table, a committed LSM file of the same name) are not written twice; deleting an instant
file that is gone already is no error.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.faults import fault_point
from hoodie.format.file_group import links as LK
from hoodie.format.lock import TableLock
from hoodie.format.metadata.table import METADATA_FOLDER, files_partition_available
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, open_table
from hoodie.format.timeline import archive_v1 as A1
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import lsm_writer as LSM
from hoodie.format.timeline import plans
from hoodie.format.timeline.active import METAFOLDER, TIMELINE_FOLDER_V2, Timeline
from hoodie.format.timeline.archived import HISTORY_FOLDER, ArchivedTimeline
from hoodie.format.timeline.instant import Instant, State
from hoodie.metrics import publish
from hoodie.services.archive import merge as M
from hoodie.services.archive.config import LSM_RETAINED_MANIFESTS, ArchivalConfig
from hoodie.services.archive.planner import ArchivalPlan, CleanFacts, clean_facts_from_plan, plan_archival

log = logging.getLogger(__name__)


@dataclass
class ArchivalResult:
    """What one archival did (or, with ``dry_run``, would do) to a table: the ``plan``, the instants moved
    (``archived``), the archive file written (``archive_file``, None when nothing or all of it was written
    by an earlier, interrupted run), the active-timeline files deleted, the active timeline's size after, and
    the metadata table's own archival (``metadata_table``)."""

    base_path: str
    plan: ArchivalPlan
    dry_run: bool = False
    archived: list[str] = field(default_factory=list)
    archive_file: Optional[str] = None
    deleted_files: int = 0
    active_files: int = 0
    seconds: float = 0.0
    metadata_table: Optional["ArchivalResult"] = None
    # Version 6, hoodie.archive.merge.enable: the small archive files merged and the file replacing them.
    merged_files: list[str] = field(default_factory=list)
    merged_into: Optional[str] = None
    # Why no merge happened (or, in a dry run, would happen), when merging is on; and what the recovery of an
    # interrupted merge did (would do) first.
    merge_note: Optional[str] = None
    merge_recovery: Optional[str] = None
    # The active timeline as listed before archiving (reused when nothing was archived).
    timeline: Optional[Timeline] = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        """A JSON-able summary (CLI ``--json``)."""
        return {"base_path": self.base_path, "dry_run": self.dry_run, "archived": list(self.archived),
                "archive_file": self.archive_file, "deleted_files": self.deleted_files,
                "active_files": self.active_files, "seconds": round(self.seconds, 3), "plan": self.plan.to_json(),
                "merged_files": list(self.merged_files), "merged_into": self.merged_into,
                "merge_note": self.merge_note, "merge_recovery": self.merge_recovery,
                "metadata_table": self.metadata_table.to_json() if self.metadata_table is not None else None}


# -- one timeline --------------------------------------------------------------------------------------

def _folder(layout: int) -> str:
    return TIMELINE_FOLDER_V2 if layout == 2 else METAFOLDER


def _parse(layout: int):  # type: ignore[no-untyped-def]
    return I.parse_instant_file_name_v2 if layout == 2 else I.parse_instant_file_name


def _instant_files(storage: Storage, layout: int) -> tuple[list[tuple[str, Instant]], Timeline]:
    """One listing of the timeline folder: every instant file (name, parsed instant) and the timeline."""
    tl = Timeline.load(storage, layout)
    parse = _parse(layout)
    files = [(n, inst) for n, inst in ((n, parse(n)) for n in sorted(tl.file_names)) if inst is not None]
    return files, tl


def _latest_clean(storage: Storage, tl: Timeline) -> Optional[CleanFacts]:
    """The latest completed clean's plan facts; a plan that cannot be read counts as no clean (the most
    careful reading: every replacecommit then stays)."""
    clean = tl.completed().by_actions(I.CLEAN).last()
    if clean is None:
        return None
    try:
        data = tl.read_file(I.instant_file_name(clean.timestamp, I.CLEAN, State.REQUESTED))
        return clean_facts_from_plan(clean.timestamp, plans.read_avro_metadata(data) if data else None)
    except (FileNotFoundError, ValueError) as e:
        log.warning("archival: the plan of clean %s cannot be read (%s); replacecommits are kept", clean.timestamp, e)
        return None


def _plan(storage: Storage, tl: Timeline, cfg: ArchivalConfig, *, is_mor: bool, tz: str, layout: int,
          props: Mapping[str, str], data_timeline: Optional[Timeline] = None) -> ArchivalPlan:
    completed = sum(1 for i in tl.instants if i.is_completed and i.action in I.WRITE_ACTIONS)
    if completed <= cfg.max_commits:
        # Nothing to archive whatever the guards say (they only ever keep more): no plan file is read.
        return plan_archival(tl.instants, cfg, is_mor=is_mor, tz=tz)
    mdt: Any = None
    if data_timeline is None and files_partition_available(dict(props)):
        mdt_tl = Timeline.load(storage.child(METADATA_FOLDER), layout)
        last = mdt_tl.completed().by_actions(I.COMMIT).last()
        completion = {i.timestamp: i.completion for i in tl.instants if i.completion}
        mdt = (layout == 2, last.timestamp if last is not None else None, completion.get)
    return plan_archival(tl.instants, cfg, is_mor=is_mor, tz=tz, latest_clean=_latest_clean(storage, tl),
                         metadata_table=mdt, data_timeline=data_timeline.instants if data_timeline is not None else None,
                         live_links=_earliest_live_links(storage, tl) if data_timeline is None and is_mor else None)


def _earliest_live_links(storage: Storage, tl: Timeline) -> Optional[str]:
    """The earliest completed compaction whose partial-compaction links still exist on storage (the
    planner's guard 6), or None."""
    for inst in tl.completed().by_actions(I.COMMIT).instants:
        if not tl.is_compaction_commit(inst):
            continue
        links = LK.links_from_metadata(tl.commit_metadata(inst))
        if any(storage.exists(link.link_path) for link in links):
            return inst.timestamp
    return None


def _state_order(inst: Instant) -> int:
    return {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}[inst.state]


def _archive_one(storage: Storage, cfg: ArchivalConfig, plan: ArchivalPlan, files: list[tuple[str, Instant]],
                 layout: int, tz: str, result: ArchivalResult,
                 archive_listing: Optional[list[M.ArchiveFile]] = None) -> bool:
    """Steps 2-4 of the module docstring for one timeline (``storage``: the table's or its MDT's).
    ``archive_listing``: version 6, the archive folder as the caller listed it (newest first). Returns whether
    the archive folder holds no instant of the active timeline afterwards (version 6: the newest file, where a
    crashed run leaves them, was checked and nothing of it is left active), as far as this run knows."""
    folder = _folder(layout)
    wanted = {(i.timestamp, I.comparable_action(i.action)) for i in plan.instants}
    groups: dict[tuple[str, str], list[tuple[str, Instant]]] = {}
    for name, inst in files:
        key = (inst.timestamp, I.comparable_action(inst.action))
        if key in wanted:
            groups.setdefault(key, []).append((name, inst))
    ordered = [sorted(groups[k], key=lambda f: _state_order(f[1])) for k in sorted(groups)]
    if not ordered:
        return False  # a concurrent archival moved them (Java skips them the same way)

    def read(name: str) -> bytes:
        return storage.read_bytes(f"{folder}/{name}")

    if layout == 1:
        # One listing of .hoodie/archived per archival (it grows by one file per archival unless merged): the
        # newest file (a crashed run's instants are in it) and the next version both come from it.
        listed = archive_listing if archive_listing is not None else M.list_archive_files(storage)
        newest = f"{A1.ARCHIVE_FOLDER}/{listed[0].name}" if listed else None
        # A merged file this process completed holds no active instant (merging follows the deletion): not read.
        done = (A1.archived_keys(storage, newest) if newest and not M.merged_here(storage, newest, listed[0].size)
                else set())
        deleted = {(i.timestamp, i.action, i.state.name) for group in ordered for _, i in group}
        active = {(i.timestamp, i.action, i.state.name) for _, i in files}
        clean_after = not ((done & active) - deleted)
        todo = [A1.InstantFile(inst, read(name)) for group in ordered for name, inst in group
                if (inst.timestamp, inst.action, inst.state.name) not in done]
        if todo:
            result.archive_file = A1.write_archive_file(storage, todo, cfg.batch, timezone=tz,
                                                        version=(listed[0].version if listed else 0) + 1)
    else:
        rows = []
        for group in ordered:
            done_files = [(n, i) for n, i in group if i.is_completed]
            if not done_files:
                continue
            name, inst = done_files[0]
            req = next(((i.action, read(n)) for n, i in group if i.is_requested), None)
            infl = next((read(n) for n, i in group if i.is_inflight), None)
            rows.append(LSM.lsm_row(inst, read(name), req, infl))
        written = LSM.write_level0(storage, rows)
        result.archive_file = f"{HISTORY_FOLDER}/{written}" if written else None
        fault_point("archive.after_manifest")
    fault_point("archive.after_archive_file")
    result.archived = [i.timestamp for i in plan.instants]
    # Pending-state files first, then completed ones oldest first (HUDI-7207: no hole for readers).
    pending = [(n, i) for g in ordered for n, i in g if not i.is_completed]
    completed = [(n, i) for g in ordered for n, i in g if i.is_completed]
    for name, _ in pending + completed:
        storage.delete(f"{folder}/{name}")
        result.deleted_files += 1
        fault_point("archive.while_deleting")
    for ts in sorted({k[0] for k in groups}):
        marker = f"{METAFOLDER}/.temp/{ts}"
        if storage.exists(marker):
            storage.delete_dir(marker)
    if layout == 2:
        LSM.compact_and_clean(storage, cfg.lsm_compaction_batch, LSM_RETAINED_MANIFESTS)
        return False
    return clean_after


def _preview_merge(storage: Storage, cfg: ArchivalConfig, plan: ArchivalPlan, files: list[tuple[str, Instant]],
                   tz: str, result: ArchivalResult) -> None:
    """Version 6 dry run with ``hoodie.archive.merge.enable``: what the run's merge step would do after the
    recovery of an interrupted merge and this run's archive file (its size computed by encoding it, nothing
    written), into ``result.merged_files`` / ``merged_into``, or why it would not merge (``merge_note``)."""
    recovery, gone = M.recovery_preview(storage)
    result.merge_recovery = recovery
    listed = [f for f in M.list_archive_files(storage) if f.name not in gone]
    if plan.instants:
        wanted = {(i.timestamp, I.comparable_action(i.action)) for i in plan.instants}
        todo = sorted(((n, i) for n, i in files if (i.timestamp, I.comparable_action(i.action)) in wanted),
                      key=lambda f: (f[1].timestamp, _state_order(f[1])))
        entries = [A1.meta_entry(A1.InstantFile(i, storage.read_bytes(f"{METAFOLDER}/{n}")), tz) for n, i in todo]
        size = sum(len(A1.encode_archive_block(entries[k:k + cfg.batch])) for k in range(0, len(entries), cfg.batch))
        version = (listed[0].version if listed else 0) + 1
        listed.insert(0, M.ArchiveFile(version, A1.archive_file_name(version) + " (this archival's file)", size))
    decision = M.decide_merge(listed, batch_size=cfg.merge_files_batch_size,
                              small_file_limit_bytes=cfg.merge_small_file_limit_bytes)
    if decision.merged_name is None:
        result.merge_note = "no merge: " + str(decision.reason)
    else:
        result.merged_files = [c.name for c in decision.candidates]
        result.merged_into = f"{A1.ARCHIVE_FOLDER}/{decision.merged_name}"


def _archive_timeline(storage: Storage, cfg: ArchivalConfig, *, is_mor: bool, tz: str, layout: int,
                      props: Mapping[str, str], dry_run: bool, base_path: str,
                      data_timeline: Optional[Timeline] = None) -> ArchivalResult:
    started = time.monotonic()
    files, tl = _instant_files(storage, layout)
    plan = _plan(storage, tl, cfg, is_mor=is_mor, tz=tz, layout=layout, props=props, data_timeline=data_timeline)
    result = ArchivalResult(base_path, plan, dry_run, timeline=tl)
    merging = layout == 1 and not dry_run and data_timeline is None
    if merging:
        # Java runs this only while merging is enabled; hoodie whenever a plan is left (see merge.py why).
        result.merge_recovery = M.recover_merge(storage)
    # Version 6: the archive folder listed once per run, after the recovery, for archiving and merging both (the
    # run holds the table lock: only this run changes the folder until it ends).
    listing = M.list_archive_files(storage) if layout == 1 and not dry_run and (
        plan.instants or (merging and cfg.merge_enable)) else None
    no_active_archived = False
    if plan.instants and not dry_run:
        no_active_archived = _archive_one(storage, cfg, plan, files, layout, tz, result, listing)
        result.active_files = len(files) - result.deleted_files
        log.info("archived %d instant(s) of %s (%s .. %s) into %s", len(plan.instants), base_path,
                 plan.instants[0].timestamp, plan.instants[-1].timestamp, result.archive_file or "(already written)")
    else:
        result.archived = [i.timestamp for i in plan.instants] if dry_run else []
        result.active_files = len(files)
    if merging and cfg.merge_enable:
        # Java merges after archiving, whether or not this run archived anything. The metadata table's
        # write config never enables it (data_timeline is set for the metadata table).
        if result.archive_file is not None and listing is not None:
            name = result.archive_file.rsplit("/", 1)[-1]
            listing = [M.ArchiveFile(int(A1.archive_file_version(name) or 0), name, storage.size(result.archive_file)),
                       *listing]
        decision = M.decide_merge(listing if listing is not None else M.list_archive_files(storage),
                                  batch_size=cfg.merge_files_batch_size,
                                  small_file_limit_bytes=cfg.merge_small_file_limit_bytes)
        # The merged file holds no active instant when this run left none in the archive: remembered, so that the
        # next archival in this process does not read it (merge.merged_here).
        merged = M.run_merge(storage, decision, records_per_block=cfg.batch, remember=no_active_archived)
        if merged is not None:
            result.merged_files, result.merged_into = merged.candidates, merged.merged_file
        else:
            result.merge_note = f"no merge: {decision.reason}"
    elif layout == 1 and dry_run and data_timeline is None and cfg.merge_enable:
        _preview_merge(storage, cfg, plan, files, tz, result)
    result.seconds = time.monotonic() - started
    return result


# -- entry points --------------------------------------------------------------------------------------

def _open(table: HoodieTable | str, storage_options: Optional[dict[str, Any]]) -> HoodieTable:
    return open_table(table, storage_options)


def _publish(table: HoodieTable, res: ArchivalResult, options: Optional[Mapping[str, Any]]) -> None:
    """Prometheus metrics of an archival, when configured (``hoodie.metrics.*``)."""
    publish("archive", {
        "instants_archived": (len(res.archived), "Instants the last archival moved to the archived timeline"),
        "active_timeline_files": (res.active_files, "Files in the active timeline after the last archival"),
        "duration_ms": (int(res.seconds * 1000), "Duration of the last archival, ms"),
    }, {"table": table.name, "base_path": table.base_path}, options or {})


def run_archival(table: HoodieTable | str, options: Optional[Mapping[str, Any]] = None, *,
                 dry_run: bool = False, storage_options: Optional[dict[str, Any]] = None) -> ArchivalResult:
    """Archive the timeline of ``table`` (and of its metadata table) now, under the table lock.

    ``options``: Hudi's archival keys (:mod:`hoodie.services.archive.config`), the cleaner's and the lock's.
    With ``dry_run`` nothing is written and no lock is taken: the result's plan says what would be archived
    and why not more.

    Raises:
        ArchivalConfigError: settings that would break readers (before anything is written).
        LockError: the table lock could not be taken.
    """
    cfg = ArchivalConfig.from_options(options)
    t = _open(table, storage_options)
    if dry_run:
        return _run(t, cfg, dry_run=True)
    with TableLock(t.storage, options, "archive"):
        res = _run(t, cfg, dry_run=False)
    _publish(t, res, options)
    return res


def _run(table: HoodieTable, cfg: ArchivalConfig, *, dry_run: bool) -> ArchivalResult:
    """Archive under the lock the caller holds. The archival lists the timeline itself (once, under that
    lock) and leaves ``table``'s snapshot alone: its callers open a new one after it."""
    layout = table.timeline_layout
    if layout == 2 and cfg.merge_enable and not dry_run:
        log.info("hoodie.archive.merge.enable applies to table version 6 only: the LSM archived timeline of "
                 "versions 8/9 compacts its own levels (hoodie.timeline.compaction.batch.size)")
    tz = table.timeline_timezone
    props = dict(table.props)
    res = _archive_timeline(table.storage, cfg, is_mor=table.is_mor, tz=tz, layout=layout, props=props,
                            dry_run=dry_run, base_path=table.base_path)
    if files_partition_available(props) or table.storage.exists(f"{METADATA_FOLDER}/.hoodie/hoodie.properties"):
        mdt_storage = table.storage.child(METADATA_FOLDER)
        if mdt_storage.exists(".hoodie/hoodie.properties"):
            data_tl = res.timeline if not res.archived or dry_run else None
            data_tl = data_tl if data_tl is not None else Timeline.load(table.storage, layout)
            # The metadata table: merge-on-read, its compaction triggered by its own delta commit count,
            # cleaned by file versions (hoodie's metadata table cleaner).
            mcfg = dataclasses.replace(cfg, cleaner_policy="KEEP_LATEST_FILE_VERSIONS", compaction_trigger="NUM_COMMITS")
            res.metadata_table = _archive_timeline(mdt_storage, mcfg, is_mor=True, tz=tz, layout=layout, props={},
                                                   dry_run=dry_run, base_path=mdt_storage.base_uri,
                                                   data_timeline=data_tl)
    return res


def load_archived_timeline(table: HoodieTable) -> I.InstantSequence:
    """The archived timeline of ``table`` in its version's format: completed instants, oldest first
    (version 6: :class:`~hoodie.format.timeline.archive_v1.ArchivedTimelineV1`; 8/9: the LSM timeline)."""
    return A1.load_archived(table.storage, table.timeline_layout)


# -- the post-commit step --------------------------------------------------------------------------------

_async_lock = threading.Lock()
_async_runs: dict[str, threading.Thread] = {}
_async_errors: dict[str, BaseException] = {}


def maybe_archive_after_commit(table: HoodieTable, options: Optional[Mapping[str, Any]] = None,
                               config: Optional[ArchivalConfig] = None) -> Optional[ArchivalResult]:
    """The archival writers run after each commit (``hoodie.archive.automatic``, default true): inline, or in
    a background thread with ``hoodie.archive.async=true`` (one per table at a time; returns None then).
    ``config``: the settings already parsed from ``options`` (the write's check parsed them), else parsed
    here. Returns the result, or None when it did not run inline."""
    cfg = config if config is not None else ArchivalConfig.from_options(options)
    if not cfg.automatic:
        return None
    if not cfg.run_async:
        with TableLock(table.storage, options, "archive"):
            res = _run(table, cfg, dry_run=False)
        _publish(table, res, options)
        return res
    uri = table.storage.uri()
    with _async_lock:
        running = _async_runs.get(uri)
        if running is not None and running.is_alive():
            return None  # the running archival will see this commit's instants next time

        opts = dict(options or {})

        def work() -> None:
            try:
                run_archival(HoodieTable(table.base_path, storage=table.storage), opts)
            except BaseException as e:  # kept for wait_for_async_archival: the commit itself succeeded
                log.error("async archival of %s failed: %s", uri, e)
                _async_errors[uri] = e

        th = threading.Thread(target=work, name=f"hoodie-archive {uri}", daemon=False)
        _async_runs[uri] = th
        th.start()
    return None


def wait_for_async_archival(table: HoodieTable | str | None = None, timeout: Optional[float] = None) -> None:
    """Wait for the async archival of ``table`` (every table: None) to finish; re-raise its error, if any."""
    with _async_lock:
        if table is None:
            items = list(_async_runs.items())
        else:
            uri = table.storage.uri() if isinstance(table, HoodieTable) else Storage(str(table)).uri()
            items = [(uri, _async_runs[uri])] if uri in _async_runs else []
    for uri, th in items:
        th.join(timeout)
        err = _async_errors.pop(uri, None)
        if err is not None:
            raise err


__all__ = ["ArchivalResult", "load_archived_timeline", "run_archival", "maybe_archive_after_commit", "wait_for_async_archival"]
