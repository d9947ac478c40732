"""Rollback of writes, the way Hudi v6 (timeline layout 1) does it. Pure Python, no Spark.

A rollback of instant X writes ``<r>.rollback.requested`` (Avro plan: the files X created),
``<r>.rollback.inflight``, deletes those files (or, for a log file that also holds other instants'
blocks, appends a rollback command block in a new log file), writes ``<r>.rollback`` (Avro
metadata), then removes X's own timeline files. Every step is idempotent, so a crash during a
rollback is repaired by rolling back again.

Files created by X are found through its markers (``.hoodie/.temp/X``); without markers (a
Java writer with markers disabled, or a crash before the first marker) every partition is listed:
base files named with instant X, and log files whose blocks all carry instant X.

A partition TTL replacecommit whose expired files were stashed (``hoodie.partition.ttl.stash.enabled``)
writes no data file, but its rollback moves the stashed files back before removing the commit
(hoodie.services.ttl.stash.unstash), so the rows return; when the stash is gone the rollback is refused.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Iterable, Optional

from hoodie.errors import HoodieError
from hoodie.faults import fault_point
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie.format.file_group.fsview import list_partitions
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.table import HoodieTable

log = logging.getLogger(__name__)

ROLLBACK_ACTIONS = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT)


class RollbackError(HoodieError):
    """A rollback is not allowed; the message says why and what to do."""


@dataclass
class RollbackResult:
    """What a rollback did."""

    rollback_instant: str
    rolled_back: str
    action: str
    deleted_files: list[str] = field(default_factory=list)
    command_blocks: list[str] = field(default_factory=list)
    unstashed_files: list[str] = field(default_factory=list)  # a stashed TTL commit's files, moved back
    moved_files: list[tuple[str, str]] = field(default_factory=list)  # a removed compaction plan's logs


def _files_of_instant(table: HoodieTable, instant: str) -> tuple[list[str], list[str]]:
    """(files to delete, log files that need a rollback command block instead)."""
    from hoodie.format.log.logformat import BlockType, read_log_file

    storage = table.storage
    if _is_delete_partition(table, instant):
        return [], []  # a delete_partition replacecommit writes no data files
    marked = [p for p, _ in W.marker_files(storage, instant)]
    candidates: list[str] = []
    if marked:
        candidates = [p for p in marked if storage.exists(p)]
    else:
        for part in list_partitions(storage):
            for st in storage.list_dir(part):
                if st.is_dir:
                    continue
                if N.is_base_file(st.name) and N.parse_base_file(st.name).instant == instant:
                    candidates.append(st.path)
                elif N.is_log_file(st.name):
                    candidates.append(st.path)
    to_delete: list[str] = []
    to_block: list[str] = []
    for path in candidates:
        name = path.rsplit("/", 1)[-1]
        if N.is_base_file(name):
            if N.parse_base_file(name).instant == instant:
                to_delete.append(path)
            continue
        if not N.is_log_file(name):
            continue
        instants = set()
        try:
            for b in read_log_file(storage, path, warn=False):
                if b.block_type != BlockType.CORRUPT:
                    instants.add(b.instant_time)
        except FileNotFoundError:
            continue
        if not instants or instants == {instant}:
            # Hudi 0.14+ never appends, so a log file written by X holds only X's blocks (a file
            # with no readable block is the torn tail of X's own write).
            if instants or marked:
                to_delete.append(path)
        elif instant in instants:
            to_block.append(path)
    return sorted(set(to_delete)), sorted(set(to_block))


def rollback(base_path: str | HoodieTable, instant: str, *, storage_options: Optional[dict] = None,
             allow_completed: bool = True) -> RollbackResult:
    """Roll back a pending or the latest completed write instant; returns what was done.

    A completed instant can be rolled back only if no later completed write exists (Hudi's rule;
    restore to a savepoint is the tool for going further back), and not while a pending compaction
    plan reads its files. A pending compaction instant is removed with its plan (see
    :func:`hoodie.services.compaction.rollback.remove_compaction_plan`).
    """
    table = base_path if isinstance(base_path, HoodieTable) else HoodieTable(base_path, storage_options)
    tl = table.reload().timeline
    if tl.has_file(I.instant_file_name(instant, I.COMPACTION, State.REQUESTED)) and not tl.has_file(
            I.instant_file_name(instant, I.COMMIT, State.COMPLETED)):
        # A pending compaction (its plan may be damaged): removed like Hudi's compaction unschedule.
        from hoodie.services.compaction.rollback import remove_compaction_plan

        r = remove_compaction_plan(table, instant)
        return RollbackResult(r.rollback_instant or "", instant, I.COMPACTION, r.deleted, [], moved_files=r.moved)
    from hoodie.format.lock import TableLock

    # A pending instant may be a live writer's until the lock says otherwise (writers hold it).
    with TableLock(table.storage, None, f"rollback of {instant}"):
        return _rollback_locked(table.reload(), instant, allow_completed)


def _rollback_locked(table: HoodieTable, instant: str, allow_completed: bool) -> RollbackResult:
    tl = table.timeline
    target = tl.get(instant)
    if target is None:
        raise RollbackError(f"no instant {instant} on the timeline of {table.base_path}; "
                            "see `hoodie show timeline`")
    if target.action == I.COMPACTION or tl.is_compaction_commit(target):
        raise RollbackError(f"{instant} is a completed compaction; rolling it back would need a restore")
    if target.action not in ROLLBACK_ACTIONS:
        raise RollbackError(f"{instant} is a {target.action}; only commit, deltacommit and replacecommit "
                            "instants can be rolled back")
    if target.is_completed:
        if not allow_completed:
            raise RollbackError(f"{instant} is completed")
        later = [i for i in tl.completed_writes().after(instant).instants]
        if later:
            raise RollbackError(
                f"{instant} is completed and later writes exist ({', '.join(i.timestamp for i in later[:3])}); "
                "only the latest completed write can be rolled back")
    restored_from = _restored_from(table, target)
    result = _execute(table, target, _ttl_stash(table, target))
    if restored_from is not None:
        from hoodie.services.ttl.stash import reopen_stash

        # The restored rows are gone again: the stash (kept until its retention) is restorable again.
        reopen_stash(table, restored_from, target.timestamp)
    return result


def _restored_from(table: HoodieTable, target: Instant) -> Optional[str]:
    """The TTL instant whose stash the completed commit ``target`` restored, if it is a restore."""
    if not target.is_completed or target.action not in (I.COMMIT, I.DELTA_COMMIT):
        return None
    from hoodie.services.ttl.stash import RESTORED_FROM_KEY

    return table.timeline.commit_metadata(target).extra_metadata.get(RESTORED_FROM_KEY)


def _ttl_stash(table: HoodieTable, target: Instant) -> Optional[dict]:
    """The stash manifest of a completed TTL replacecommit whose files were stashed: the rollback
    moves them back. Refuses (before anything is written) when the stashed files are gone."""
    if not (target.is_completed and target.action == I.REPLACE_COMMIT):
        return None
    from hoodie.services.ttl.stash import StashError, stash_to_unstash

    try:
        return stash_to_unstash(table, target.timestamp)
    except StashError as e:
        raise RollbackError(str(e)) from None


def pending_rollback_of(table: HoodieTable, instant: str) -> Optional[Instant]:
    """A rollback of ``instant`` that an interrupted run left requested or inflight, if any.

    Hudi re-executes such a rollback instead of starting another one; starting a new one would leave
    the interrupted rollback pending on the timeline forever.
    """
    tl = table.timeline
    for inst in tl.pending().by_actions(I.ROLLBACK).instants:
        try:
            plan = tl.read_avro(Instant(inst.timestamp, I.ROLLBACK, State.REQUESTED))
        except FileNotFoundError:
            continue
        except T.DamagedTimelineFileError as e:
            # Which instant it rolls back is unknown: it cannot be resumed, and must not stop this one.
            log.warning("%s", e)
            continue
        if (plan.get("instantToRollback") or {}).get("commitTime") == instant:
            return inst
    return None


def start_rollback(table: HoodieTable, instant: str, plan: bytes) -> Instant:
    """The inflight rollback instant for ``instant``: an interrupted one resumed (its own plan kept;
    the files it still has to delete are found again, which is idempotent), or a new one with ``plan``."""
    storage = table.storage
    resumed = pending_rollback_of(table, instant)
    if resumed is None:
        req = T.create_requested(storage, table.new_instant_time(), I.ROLLBACK, plan)
        inflight = T.transition_to_inflight(storage, req, b"")
    else:
        log.info("resuming rollback %s of %s, left %s by an interrupted run", resumed.timestamp, instant,
                 resumed.state.name.lower())
        inflight = resumed if resumed.is_inflight else T.transition_to_inflight(storage, resumed, b"")
    fault_point("rollback.after_inflight")
    return inflight


def check_pending_compactions(table: HoodieTable, target: Instant, files: Iterable[str]) -> None:
    """Refuse to roll back ``target`` when a pending compaction plan reads one of its ``files``.

    Deleting such a file (or hiding its blocks behind a rollback block the plan does not list) would
    wedge the table: the compaction fails on the missing file or brings the data back, and its own
    rollback keeps the plan. Java Hudi refuses this rollback too. A plan only reads slices committed
    before its instant, so only plans later than ``target`` are read.

    Raises:
        RollbackError: naming the compaction and how to get rid of it first; nothing has changed.
    """
    paths = set(files)
    if not paths:
        return
    tl = table.timeline
    base = table.storage.uri()
    for c in tl.pending_compactions().after(target.timestamp).instants:
        try:
            plan = tl.compaction_plan(c.timestamp)
        except T.DamagedTimelineFileError as e:
            raise RollbackError(f"cannot roll back {target.timestamp}: pending compaction {c.timestamp} may read its "
                                f"files, and {e}") from None
        # Its base files, log files and the targets of its planned links.
        hit = sorted(paths & plan.file_paths())
        if hit:
            raise RollbackError(
                f"cannot roll back {target.timestamp}: pending compaction {c.timestamp} includes its file(s) "
                f"{', '.join(hit[:3])}{' ...' if len(hit) > 3 else ''}. Run the compaction first "
                f"(`hoodie compaction run {base} --instant {c.timestamp}`; {target.timestamp} then is no longer the latest "
                f"write and stays), or remove the plan with `hoodie rollback {base} {c.timestamp}` and roll back "
                f"{target.timestamp} after it. Nothing was changed")


def _execute(table: HoodieTable, target: Instant, stash: Optional[dict] = None) -> RollbackResult:
    from hoodie.format.log import logformat as L

    storage = table.storage
    started = time.monotonic()
    to_delete, to_block = _files_of_instant(table, target.timestamp)
    # Before anything is written (a resumed rollback has nothing left in a plan: it was checked).
    check_pending_compactions(table, target, to_delete + to_block)
    requests = []
    by_part: dict[str, list[str]] = {}
    for p in to_delete:
        part, _, name = p.rpartition("/")
        by_part.setdefault(part, []).append(p)
    for part, files in sorted(by_part.items()):
        requests.append(plans.rollback_request(part, files_to_delete=[storage.uri(f) for f in files]))
    for p in to_block:
        part, _, name = p.rpartition("/")
        lp = N.parse_log_file(name)
        requests.append(plans.rollback_request(part, lp.file_id, lp.base_instant, [],
                                               {storage.uri(p): storage.size(p)}))
    plan = plans.rollback_plan((target.timestamp, target.action), requests)
    inf = start_rollback(table, target.timestamp, plans.write_avro_metadata("HoodieRollbackPlan", plan))
    rb = inf.timestamp
    part_meta: dict[str, dict] = {}
    deleted: list[str] = []
    for p in to_delete:
        part = p.rpartition("/")[0]
        ok = storage.delete(p)
        pm = part_meta.setdefault(part, {"ok": [], "failed": [], "blocks": {}})
        (pm["ok"] if ok or not storage.exists(p) else pm["failed"]).append(storage.uri(p))
        deleted.append(p)
        fault_point("rollback.after_delete")
    unstashed: list[str] = []
    if stash is not None:
        from hoodie.services.ttl.stash import unstash

        # Before the TTL commit goes: until then the moved files stay hidden (and safe, see unstash).
        unstashed = unstash(table, target.timestamp, rb)
    blocks_written: list[str] = []
    for p in to_block:
        part, _, name = p.rpartition("/")
        lp = N.parse_log_file(name)
        ver = W.next_log_version(storage, part, lp.file_id, lp.base_instant)
        new = N.log_file_name(lp.file_id, lp.base_instant, ver, N.UNKNOWN_WRITE_TOKEN)
        rel = f"{part}/{new}" if part else new
        L.write_log_file(storage, rel, [L.encode_command_block(rb, target.timestamp)])
        part_meta.setdefault(part, {"ok": [], "failed": [], "blocks": {}})["blocks"][storage.uri(rel)] = storage.size(rel)
        blocks_written.append(rel)
    meta = plans.rollback_metadata(
        rb, int((time.monotonic() - started) * 1000), [(target.timestamp, target.action)],
        {part: plans.rollback_partition_metadata(part, pm["ok"], pm["failed"], pm["blocks"] or None)
         for part, pm in part_meta.items()},
    )
    T.transition_to_complete(storage, inf, plans.write_avro_metadata("HoodieRollbackMetadata", meta))
    fault_point("rollback.after_complete")
    # Only now remove the rolled-back instant's own files (completed last-to-first).
    for st in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
        storage.delete(f"{T.METAFOLDER}/{I.instant_file_name(target.timestamp, target.action, st)}")
    W.delete_markers(storage, target.timestamp)
    if stash is not None:
        from hoodie.services.ttl.stash import finish_unstash

        finish_unstash(table, target.timestamp, rb)
    table.reload()
    log.info("rolled back %s (%d files deleted, %d command blocks%s)", target, len(deleted), len(blocks_written),
             f", {len(unstashed)} stashed files moved back" if stash is not None else "")
    return RollbackResult(rb, target.timestamp, target.action, deleted, blocks_written, unstashed_files=unstashed)


def pending_failed_writes(table: HoodieTable, exclude: Iterable[str] = ()) -> list[Instant]:
    """Pending commit/deltacommit/replacecommit instants (failed writes under single-writer mode).

    Pending clustering replacecommits (those with a clustering plan) are left to their service.
    """
    skip = set(exclude)
    out = []
    for inst in table.timeline.pending().instants:
        if inst.action not in ROLLBACK_ACTIONS or inst.timestamp in skip:
            continue
        if inst.action == I.REPLACE_COMMIT and _is_clustering(table, inst):
            continue
        out.append(inst)
    return out


def _is_delete_partition(table: HoodieTable, instant: str) -> bool:
    inst = table.timeline.get(instant)
    if inst is None or inst.action != I.REPLACE_COMMIT:
        return False
    try:
        data = table.timeline.read_file(inst.requested_file_name)
        return bool(data) and plans.read_avro_metadata(data).get("operationType") == "DELETE_PARTITION"
    except (FileNotFoundError, ValueError):
        return False


def _is_clustering(table: HoodieTable, inst: Instant) -> bool:
    try:
        data = table.timeline.read_file(inst.requested_file_name)
    except FileNotFoundError:
        return False
    if not data:
        return False
    try:
        md = plans.read_avro_metadata(data)
    except ValueError:
        return False
    return bool(md.get("clusteringPlan"))


def rollback_failed_writes(table: HoodieTable, exclude: Iterable[str] = ()) -> list[RollbackResult]:
    """Roll back every failed (pending) write before a new write starts (Hudi's EAGER policy)."""
    skip = set(exclude)
    try:
        from hoodie.services.ttl import active_instants
    except ModuleNotFoundError as e:
        if e.name is None or not "hoodie.services.ttl".startswith(e.name):
            raise
    else:
        # An async TTL service of this process may be committing right now: not a failed write.
        skip |= active_instants(table.storage.uri())
    results = []
    for inst in pending_failed_writes(table.reload(), skip):
        results.append(_execute(table, inst))
    return results
