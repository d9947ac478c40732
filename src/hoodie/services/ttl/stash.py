"""Stash and restore for partition TTL: expired data is moved aside instead of waiting for the cleaner.

With ``hoodie.partition.ttl.stash.enabled=true`` a TTL run, once its delete_partition replacecommit
is complete, moves every file of the replaced file groups to
``.hoodie/.stashedForDeletion/<ttl instant>/<partition>/<file>`` (on object stores a move is a copy
plus a delete) and records ``stash.json`` there. Readers are unaffected: the replacecommit already
hides those file groups. Time travel to before the TTL instant no longer finds the moved files.

``restore`` brings a stash back as a **new commit**: for each stashed file group it reads the latest
slice as of just before the TTL instant (base file merged with its log files) and writes it as a new
base file with a fresh file id, keeping every meta column except ``_hoodie_file_name`` (as clustering
with preserved metadata does). New file ids are needed because the replacecommit hides the old ones
forever. A restore never undoes a later write: keys written, deleted or expired again in the
partition after the TTL run keep their later state (:func:`restore` says how, and when it refuses).

A rollback of the TTL commit moves the stashed files back (:func:`unstash`); a rollback of a restore
commit makes the stash restorable again (the files stay after a restore, until the retention).
Stashes older than ``hoodie.partition.ttl.stash.retain.days`` are deleted by clean and TTL runs.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import HoodieError
from hoodie.faults import fault_point
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.slice import writer as W
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, write_partition_metadata
from hoodie.format.timeline.active import METAFOLDER
from hoodie.configs import read
from hoodie.format.timeline.instant import Instant
from hoodie.format.log.logformat import BlockType
from hoodie.format.slice.reader import read_base_file, read_file_slice, scan_log_blocks
from hoodie.services.transaction import Operation, Transaction
from hoodie.services.ttl.keys import MAX_ZONE_SKEW_MS, STASH_RETAIN_DAYS, TTLConfigError

log = logging.getLogger(__name__)

STASH_DIR = f"{METAFOLDER}/.stashedForDeletion"
MANIFEST = "stash.json"
RESTORED_FROM_KEY = "hoodie.partition.ttl.restored.from"
TTL_MARKER_KEY = "hoodie.partition.ttl.instant"  # in TTL commits' extraMetadata: which run made it
TTL_STASH_KEY = "hoodie.partition.ttl.stash"  # in TTL commits' extraMetadata: their files are stashed
MOVING, COMPLETE, RESTORED = "moving", "complete", "restored"
# A rollback of the TTL commit is moving the files back (UNSTASHING), or has (ROLLED_BACK).
UNSTASHING, ROLLED_BACK = "unstashing", "rolled_back"
DEFAULT_RETAIN_MS: int = STASH_RETAIN_DAYS.default


class StashError(HoodieError):
    """A stash cannot be restored; the message says why and what to do."""


def stash_retain_ms(options: Optional[Mapping[str, Any]]) -> int:
    """``hoodie.partition.ttl.stash.retain.days`` in milliseconds (default 7 days)."""
    return read(options, TTLConfigError).get(STASH_RETAIN_DAYS)


def _stash_root(instant: str) -> str:
    return f"{STASH_DIR}/{instant}"


def _manifest_path(instant: str) -> str:
    return f"{_stash_root(instant)}/{MANIFEST}"


def read_manifest(storage: Storage, instant: str) -> Optional[dict]:
    """The stash manifest of a TTL instant, or None."""
    try:
        return json.loads(storage.read_bytes(_manifest_path(instant)))
    except FileNotFoundError:
        return None


def _write_manifest(storage: Storage, instant: str, doc: dict) -> None:
    storage.write_bytes(_manifest_path(instant), json.dumps(doc, indent=2, sort_keys=True).encode("utf-8"))


def _file_id(name: str) -> Optional[str]:
    if N.is_base_file(name):
        try:
            return N.parse_base_file(name).file_id
        except ValueError:
            return None
    if N.is_log_file(name):
        return N.parse_log_file(name).file_id
    return None


def _move(storage: Storage, src: str, dst: str) -> None:
    if storage.is_symlink(src):
        # Moving a (relative) symlink would leave it dangling: stash the content it points at.
        storage.write_bytes(dst, storage.read_bytes(src))
        storage.delete(src)
        return
    storage.move(src, dst)


def stash_partitions(table: HoodieTable, instant: str, partition_to_replace_file_ids: Mapping[str, list[str]]) -> dict:
    """Move the files of the replaced file groups into the stash of ``instant`` (idempotent: a
    re-run moves what is still in place). Returns the manifest."""
    storage = table.storage
    doc = read_manifest(storage, instant) or {
        "version": 1, "instant": instant, "table_type": table.table_type, "state": MOVING,
        "created_ms": int(time.time() * 1000), "partitions": {},
    }
    if doc.get("state") in (COMPLETE, RESTORED):
        return doc
    for p, fids in sorted(partition_to_replace_file_ids.items()):
        entry = doc["partitions"].setdefault(p, {"file_ids": sorted(fids), "files": []})
        entry["file_ids"] = sorted(set(entry["file_ids"]) | set(fids))
        if "partition_metadata" not in entry:
            # The cleaner deletes the emptied folder with its metafile; a rollback of the TTL commit
            # puts it back as it was (KEEP_BY_CREATION_TIME reads its commitTime).
            try:
                entry["partition_metadata"] = storage.read_bytes(f"{p}/{N.PARTITION_METAFILE}").decode("utf-8")
            except FileNotFoundError:
                entry["partition_metadata"] = None
    doc["state"] = MOVING
    _write_manifest(storage, instant, doc)
    for p, fids in sorted(partition_to_replace_file_ids.items()):
        wanted = set(fids)
        entries = [e for e in storage.list_dir(p) if not e.is_dir and _file_id(e.name) in wanted]
        # Links first: their targets may be in the same file group.
        entries.sort(key=lambda e: (not storage.is_symlink(e.path), e.name))
        files = doc["partitions"][p]["files"]
        for e in entries:
            dst = f"{_stash_root(instant)}/{p}/{e.name}"
            try:
                _move(storage, e.path, dst)
            except FileNotFoundError:
                log.warning("stash %s: %s vanished before it could be moved", instant, e.path)
                continue
            if e.name not in files:
                files.append(e.name)
        files.sort()
    doc["state"] = COMPLETE
    _write_manifest(storage, instant, doc)
    log.info("stashed %d partition(s) of TTL instant %s under %s", len(partition_to_replace_file_ids), instant,
             _stash_root(instant))
    return doc


def _stash_instants(storage: Storage) -> list[str]:
    return sorted(e.name for e in storage.list_dir(STASH_DIR) if e.is_dir and e.name.isdigit())


def _age_ms(table: HoodieTable, instant: str, now_ms: Optional[int] = None) -> int:
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return now - I.instant_to_epoch_ms(I.fix_instant_compatibility(instant), table.timeline_timezone)


def finish_pending_stashes(table: HoodieTable, retain_ms: int = DEFAULT_RETAIN_MS) -> list[str]:
    """Complete stashes interrupted after their TTL commit (before the cleaner can delete the files).

    Looks at completed TTL replacecommits that asked for a stash: a manifest still "moving", or no
    manifest although the instant is within the stash retention, means the move did not finish.
    Also settles rollbacks of TTL commits that died while moving the files back ("unstashing"):
    with the TTL commit still in effect the files are stashed again (a retried rollback brings them
    back); with the commit gone the rollback had moved every file, and only its bookkeeping is left.
    """
    storage = table.storage
    tl = table.timeline
    done: list[str] = []
    for inst in tl.completed().by_actions(I.REPLACE_COMMIT).instants:
        meta = tl.commit_metadata(inst)
        if meta.extra_metadata.get(TTL_STASH_KEY) != "true":
            continue
        doc = read_manifest(storage, inst.timestamp)
        if doc is not None and doc.get("state") in (COMPLETE, RESTORED, ROLLED_BACK):
            continue
        if doc is not None and doc.get("state") == UNSTASHING:
            # A rollback of this TTL commit died while moving files back. The commit is still in
            # effect, so the cleaner would delete those files as replaced: stash them again.
            log.warning("the rollback %s of TTL instant %s was interrupted before it completed; its files "
                        "go back into the stash (the TTL commit stays in effect). Run `hoodie rollback %s` "
                        "again to bring the partitions back", doc.get("rollback"), inst.timestamp, inst.timestamp)
        elif doc is None and _age_ms(table, inst.timestamp) > retain_ms + _zone_margin_ms(table):
            continue  # purged long ago
        p2r = meta.partition_to_replace_file_ids or {}
        if doc is None and not any(
                _file_id(e.name) in set(fids) for p, fids in p2r.items() for e in storage.list_dir(p)):
            continue  # nothing left in place (already stashed and purged)
        if doc is None or doc.get("state") != UNSTASHING:
            log.warning("finishing the interrupted stash of TTL instant %s", inst.timestamp)
        stash_partitions(table, inst.timestamp, p2r)
        done.append(inst.timestamp)
    live = {i.timestamp for i in tl.completed().by_actions(I.REPLACE_COMMIT).instants}
    for ts in _stash_instants(storage):
        doc = read_manifest(storage, ts)
        if doc is None or doc.get("state") != UNSTASHING or ts in live:
            continue
        # The rollback got as far as removing the TTL commit, which it does only after every file
        # is back: finish its bookkeeping.
        log.warning("finishing the interrupted rollback %s of TTL instant %s", doc.get("rollback"), ts)
        unstash(table, ts, doc.get("rollback") or "")
        finish_unstash(table, ts, doc.get("rollback") or "")
        done.append(ts)
    return done


def stash_to_unstash(table: HoodieTable, instant: str) -> Optional[dict]:
    """For a rollback of the completed TTL replacecommit ``instant``: its stash manifest when the
    rollback has to move stashed files back, None when nothing was moved (no stash asked for, or
    the move never started). Raises :class:`StashError` when the stashed files are gone, so that
    no rollback reports success with the rows still missing."""
    tl = table.timeline
    inst = tl.get(instant)
    if inst is None or not inst.is_completed or inst.action != I.REPLACE_COMMIT:
        return None
    meta = tl.commit_metadata(inst)
    if meta.extra_metadata.get(TTL_STASH_KEY) != "true":
        return None
    storage = table.storage
    p2r = meta.partition_to_replace_file_ids or {}
    doc = read_manifest(storage, instant)
    gone = (f"cannot roll back TTL commit {instant}: it stashed its expired partitions "
            f"({', '.join(sorted(p2r))}) and")
    keep = ("Rolling back would report success with the rows still missing, so the TTL commit stays; "
            "the rows cannot be brought back")
    if doc is None:
        # The manifest is written before the first move: without one, nothing moved yet, or the
        # stash was deleted after hoodie.partition.ttl.stash.retain.days.
        if any(_file_id(e.name) in set(fids) for p, fids in p2r.items() for e in storage.list_dir(p)):
            return None
        raise StashError(f"{gone} the stash is gone (deleted after {STASH_RETAIN_DAYS}). {keep}")
    if doc.get("state") == RESTORED and _restore_commit(table, instant) is None:
        doc = reopen_stash(table, instant, str(doc.get("restored_by"))) or doc  # its restore was rolled back
    state = doc.get("state")
    if state in (RESTORED, ROLLED_BACK):
        by = doc.get("restored_by") or doc.get("rolled_back_by")
        raise StashError(f"{gone} the stash was already {state.replace('_', ' ')} by {by}; roll that back first")
    missing = []
    for p, entry in sorted(doc.get("partitions", {}).items()):
        for name in entry.get("files", []):
            if not storage.exists(f"{_stash_root(instant)}/{p}/{name}") and not storage.exists(f"{p}/{name}"):
                missing.append(f"{p}/{name}")
    if missing:
        raise StashError(f"{gone} {len(missing)} stashed file(s) are gone ({', '.join(missing[:3])}); "
                         f"the stash was deleted in part (after {STASH_RETAIN_DAYS}?). {keep}")
    return doc


def unstash(table: HoodieTable, instant: str, rollback_instant: str) -> list[str]:
    """Move the stashed files of TTL instant ``instant`` back into their partitions, for the
    rollback ``rollback_instant`` (which holds the table lock and has its plan on the timeline).

    Idempotent, and crash-safe together with :func:`finish_pending_stashes`: the manifest says
    "unstashing" before the first move, and until the rollback removes the TTL commit the moved
    files stay hidden from readers (the commit replaces their file groups); if the rollback dies
    first, the next clean or TTL run stashes them again before the cleaner could delete them.
    Returns the files moved back (``partition/name``).
    """
    storage = table.storage
    doc = read_manifest(storage, instant)
    if doc is None:
        return []
    doc.update(state=UNSTASHING, rollback=rollback_instant)
    _write_manifest(storage, instant, doc)
    fault_point("ttl.unstash.after_manifest")
    moved = []
    for p, entry in sorted(doc.get("partitions", {}).items()):
        if not storage.exists(f"{p}/{N.PARTITION_METAFILE}"):
            text = entry.get("partition_metadata")
            if text:
                try:
                    storage.create_new(f"{p}/{N.PARTITION_METAFILE}", text.encode("utf-8"))
                except FileExistsError:
                    pass  # created meanwhile: a metafile's content is the same for every writer
            else:
                names = entry.get("files", [])
                instants = [N.parse_base_file(n).instant if N.is_base_file(n) else N.parse_log_file(n).base_instant
                            for n in names if N.is_base_file(n) or N.is_log_file(n)]
                write_partition_metadata(storage, p, min(instants) if instants else instant)
        stash_p = f"{_stash_root(instant)}/{p}"
        for e in storage.list_dir(stash_p):
            if e.is_dir:
                continue
            dst = f"{p}/{e.name}"
            if storage.exists(dst):
                # An object-store move is a copy and a delete: the copy got there, the delete did not.
                if storage.size(dst) != storage.size(e.path):
                    raise StashError(f"cannot move {e.path} back: {dst} exists with a different size")
                storage.delete(e.path)
            else:
                storage.move(e.path, dst)
            moved.append(dst)
            fault_point("ttl.unstash.after_move")
    return moved


def reopen_stash(table: HoodieTable, instant: str, restore_instant: str) -> Optional[dict]:
    """Make the stash of TTL instant ``instant`` restorable again after its restore commit
    ``restore_instant`` was rolled back (the stashed files are kept until the stash retention).
    Returns the manifest, or None when there is no such stash."""
    storage = table.storage
    doc = read_manifest(storage, instant)
    if doc is None or doc.get("state") != RESTORED or doc.get("restored_by") != restore_instant:
        return doc
    doc["state"] = COMPLETE
    for k in ("restored_by", "restored_at"):
        doc.pop(k, None)
    _write_manifest(storage, instant, doc)
    log.info("the restore commit %s of TTL stash %s was rolled back: the stash can be restored again",
             restore_instant, instant)
    return doc


def finish_unstash(table: HoodieTable, instant: str, rollback_instant: str) -> None:
    """Record that the rollback ``rollback_instant`` removed TTL commit ``instant`` and brought its
    stash back; the emptied stash folders go (the manifest stays, for ``hoodie ttl stashes``)."""
    storage = table.storage
    doc = read_manifest(storage, instant)
    if doc is None:
        return
    doc.update(state=ROLLED_BACK, rolled_back_by=rollback_instant,
               rolled_back_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    _write_manifest(storage, instant, doc)
    _cleanup_stash_files(storage, instant, doc)


def _zone_margin_ms(table: HoodieTable) -> int:
    # A LOCAL timeline's instants are writers' wall-clock times: ages are uncertain by the zone skew.
    return MAX_ZONE_SKEW_MS if table.timeline_timezone == "LOCAL" else 0


def purge_expired_stashes(table: HoodieTable, retain_ms: int = DEFAULT_RETAIN_MS,
                          now_ms: Optional[int] = None, margin_ms: Optional[int] = None) -> list[str]:
    """Delete stashes older than the retention; returns their instants. On a LOCAL timeline a stash
    must be older than the retention plus ``margin_ms`` (default: the largest zone difference,
    ``hoodie.partition.ttl.local.timeline.skew``), as its instant may come from another zone."""
    storage = table.storage
    margin = _zone_margin_ms(table) if margin_ms is None else margin_ms
    purged = []
    for inst in _stash_instants(storage):
        if (read_manifest(storage, inst) or {}).get("state") == UNSTASHING:
            continue  # a rollback is moving these files back (finish_pending_stashes settles it)
        if _age_ms(table, inst, now_ms) > retain_ms + margin:
            storage.delete_dir(_stash_root(inst))
            purged.append(inst)
            log.info("deleted the TTL stash of %s (older than the stash retention)", inst)
    return purged


@dataclass
class StashInfo:
    """One stash, as ``hoodie ttl stashes`` lists it."""

    instant: str
    state: str
    partitions: dict[str, int]  # partition -> number of stashed files
    restored_by: Optional[str] = None
    rolled_back_by: Optional[str] = None

    def to_json(self) -> dict:
        """JSON form."""
        return {"instant": self.instant, "state": self.state, "partitions": self.partitions,
                "restored_by": self.restored_by, "rolled_back_by": self.rolled_back_by}


def list_stashes(table_or_path: str | HoodieTable, *, storage_options: Optional[dict[str, Any]] = None
                 ) -> list[StashInfo]:
    """Every stash of the table, oldest first."""
    table = table_or_path if isinstance(table_or_path, HoodieTable) else HoodieTable(table_or_path, storage_options)
    out = []
    for inst in _stash_instants(table.storage):
        doc = read_manifest(table.storage, inst) or {"state": MOVING, "partitions": {}}
        out.append(StashInfo(inst, doc.get("state", MOVING),
                             {p: len(e.get("files", [])) for p, e in sorted(doc.get("partitions", {}).items())},
                             doc.get("restored_by"), doc.get("rolled_back_by")))
    return out


@dataclass
class RestoreResult:
    """What ``restore`` wrote."""

    instant: Optional[str]
    ttl_instant: str
    rows: dict[str, int] = field(default_factory=dict)
    superseded_rows: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    already_restored: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """JSON form (``hoodie ttl restore --json``)."""
        return {"instant": self.instant, "ttl_instant": self.ttl_instant, "rows": self.rows,
                "superseded_rows": self.superseded_rows, "files": self.files,
                "already_restored": self.already_restored, "warnings": self.warnings}


def _restore_commit(table: HoodieTable, ttl_instant: str) -> Optional[str]:
    tl = table.timeline
    for inst in tl.completed_writes().after(ttl_instant).instants:
        if tl.commit_metadata(inst).extra_metadata.get(RESTORED_FROM_KEY) == ttl_instant:
            return inst.timestamp
    return None


@dataclass
class _LaterWrites:
    """What completed instants after a TTL run did to one of its stashed partitions."""

    keys: set[str] = field(default_factory=set)  # every key they wrote or deleted there (as far as files show)
    instants: list[str] = field(default_factory=list)  # instants that wrote to or replaced the partition
    deleting: list[str] = field(default_factory=list)  # ... of which removed keys (deletes, TTL)
    replaced_by: list[str] = field(default_factory=list)  # user overwrites / delete_partition of it
    missing: dict[str, list[str]] = field(default_factory=dict)  # instant -> its files no longer found


def _file_keys(table: HoodieTable, path: str) -> list[str]:
    """Record keys a base file holds, or a log file writes or deletes (valid blocks only)."""
    name = path.rsplit("/", 1)[-1]
    if N.is_base_file(name):
        schema = pa.schema([pa.field("_hoodie_record_key", pa.string())])
        return read_base_file(table.storage, path, schema).column(0).to_pylist()
    keys: list[str] = []
    for b in scan_log_blocks(table.storage, [path], table.timeline).blocks:
        if b.block_type == BlockType.DELETE:
            keys += b.delete_records().column("record_key").to_pylist()
        else:
            keys += b.record_keys().cast(pa.string()).to_pylist()
    return keys


def _later_writes(table: HoodieTable, ttl_instant: str, partitions: list[str]) -> dict[str, _LaterWrites]:
    """Per stashed partition: the keys completed instants after ``ttl_instant`` wrote or deleted there.

    Every file group in the partition was created after the TTL instant (it replaced all earlier
    ones), so the keys come from the files those instants name in their write stats, found in the
    partition or, when a later TTL run stashed them, in its stash. Files the cleaner removed are
    reported as missing: the keys deleted through them can then no longer be known.
    """
    storage = table.storage
    tl = table.timeline
    wanted = set(partitions)
    out = {p: _LaterWrites() for p in partitions}
    stashes = _stash_instants(storage)
    for inst in tl.completed().commits().after(ttl_instant).instants:
        try:
            meta = tl.commit_metadata(inst)
        except (FileNotFoundError, ValueError):
            continue
        op = (meta.operation_type or "").upper()
        p2r = meta.partition_to_replace_file_ids or {}
        for p in sorted(wanted):
            # An overwrite or a user's delete_partition defines the partition's content, even when
            # the partition was empty (expired) then: restoring would add rows it did not have.
            defined = TTL_MARKER_KEY not in meta.extra_metadata and (
                op == "INSERT_OVERWRITE_TABLE"
                or (op in ("INSERT_OVERWRITE", "DELETE_PARTITION")
                    and (p in p2r or p in (meta.partition_to_write_stats or {}))))
            if defined:
                out[p].replaced_by.append(f"{inst.timestamp} ({op})")
            if p2r.get(p):
                lw = out[p]
                lw.instants.append(inst.timestamp)
                lw.deleting.append(inst.timestamp)
        for p, stats in (meta.partition_to_write_stats or {}).items():
            if p not in wanted:
                continue
            lw = out[p]
            if inst.timestamp not in lw.instants:
                lw.instants.append(inst.timestamp)
            if any(st.num_deletes for st in stats) and inst.timestamp not in lw.deleting:
                lw.deleting.append(inst.timestamp)
            for st in stats:
                name = st.file_name
                if not name:
                    continue
                where = [f"{p}/{name}"] + [f"{_stash_root(s)}/{p}/{name}" for s in stashes]
                found = next((w for w in where if storage.exists(w)), None)
                if found is None:
                    lw.missing.setdefault(inst.timestamp, []).append(f"{p}/{name}")
                    continue
                lw.keys.update(_file_keys(table, found))
    return out


def _later_deletes(table: HoodieTable, ttl_instant: str) -> list[str]:
    """Completed delete operations after the TTL run (keys they asked for in an expired partition
    were not found then, so they left no trace a restore could honour)."""
    tl = table.timeline
    out = []
    for inst in tl.completed_writes().after(ttl_instant).instants:
        try:
            op = (tl.commit_metadata(inst).operation_type or "").upper()
        except (FileNotFoundError, ValueError):
            continue
        if op in ("DELETE", "DELETE_PREPPED"):
            out.append(inst.timestamp)
    return out


def _refuse_unsafe_restore(ttl_instant: str, later: Mapping[str, _LaterWrites]) -> None:
    """Refuse a restore that could undo a later write (see :func:`restore`)."""
    problems = []
    for p, lw in sorted(later.items()):
        if lw.replaced_by:
            problems.append(f"partition {p} was replaced after the TTL run by {', '.join(lw.replaced_by)}, and "
                            "restoring would add the stashed rows back into what that write defined")
        elif lw.deleting and lw.missing:
            gone = [f for files in lw.missing.values() for f in files]
            problems.append(f"in partition {p}, instants {', '.join(lw.deleting)} deleted rows after the TTL run, and "
                            f"files written there after it by {', '.join(sorted(lw.missing))} are gone (cleaned; e.g. "
                            f"{gone[0]}), so rows deleted since cannot be told from rows never written again")
    if problems:
        raise StashError(
            f"cannot restore the stash of TTL instant {ttl_instant} without possibly undoing later writes: "
            + "; ".join(problems) + ". Nothing was written and the stash is kept. To restore anyway, run "
            "`hoodie ttl restore --force` (restore(..., force=True)): stashed rows whose keys were written or "
            "deleted after the TTL run as far as the remaining files show stay as they are now, the other "
            "stashed rows come back, and rows deleted through the cleaned files may come back too")


def _cleanup_stash_files(storage: Storage, instant: str, doc: dict) -> None:
    for p in doc.get("partitions", {}):
        storage.delete_dir(f"{_stash_root(instant)}/{p}")


def restore(table_or_path: str | HoodieTable, ttl_instant: str, *, force: bool = False,
            storage_options: Optional[dict[str, Any]] = None) -> RestoreResult:
    """Bring the partitions a TTL run stashed back, as a new commit (see the module docstring).

    A restore never undoes a later write: a stashed row comes back only if no completed instant
    after the TTL run wrote or deleted its key in that partition (later versions win, later
    deletes stay deleted). Refused with :class:`StashError`, before anything is written, when
    that cannot be proven (rows were deleted after the TTL run and the cleaner has removed files
    written since) or when a user overwrite or delete_partition replaced the partition since;
    ``force=True`` restores the rows that are not known to have been written or deleted since.
    """
    table = table_or_path if isinstance(table_or_path, HoodieTable) else HoodieTable(table_or_path, storage_options)
    op = RestoreOperation(ttl_instant, force=force)
    Transaction(op, op, table=table).run()
    return op.result


class RestoreOperation(Operation):
    """A stash restore as a transaction's operation (and its own in-process executor). A restore
    is a write: like every writer, the transaction rolls back failed writes first (an interrupted
    restore among them, even one that only got as far as its empty .requested file)."""

    rollback_failed_writes = True
    table_versions = (6, 8, 9)

    def __init__(self, ttl_instant: str, *, force: bool = False) -> None:
        self.ttl_instant = ttl_instant
        self.force = force
        self.what = f"restore of TTL stash {ttl_instant}"
        self.result = RestoreResult(None, ttl_instant)
        self.doc: dict = {}
        self.later: dict[str, _LaterWrites] = {}

    def prepare(self, txn: Transaction) -> bool:
        """Read the manifest; settle interrupted stashes and rollbacks; False when already restored."""
        table = txn.open_table()
        storage = table.storage
        ttl_instant = self.ttl_instant
        doc = read_manifest(storage, ttl_instant)
        if doc is None:
            known = ", ".join(_stash_instants(storage)) or "none"
            raise StashError(f"no TTL stash for instant {ttl_instant} in {table.base_path} (stashes: {known}); "
                             "stashing needs hoodie.partition.ttl.stash.enabled=true at TTL time, and stashes "
                             "are deleted after hoodie.partition.ttl.stash.retain.days")
        if doc.get("state") == UNSTASHING:
            # An interrupted rollback of the TTL commit: settle it first (it moves files and rewrites
            # manifests; the timeline stands).
            finish_pending_stashes(table)
            doc = read_manifest(storage, ttl_instant) or doc
        if doc.get("state") == ROLLED_BACK:
            raise StashError(f"TTL commit {ttl_instant} was rolled back by {doc.get('rolled_back_by')}, which "
                             "brought its partitions back; there is nothing to restore")
        existing = _restore_commit(table, ttl_instant)
        if doc.get("state") == RESTORED and existing is None:
            # Its restore commit was rolled back (and the process died before reopening the stash).
            doc = reopen_stash(table, ttl_instant, str(doc.get("restored_by"))) or doc
        if doc.get("state") == RESTORED:
            raise StashError(f"the stash of {ttl_instant} was already restored by commit {doc.get('restored_by')}")
        if existing is not None:
            doc.update(state=RESTORED, restored_by=existing)
            _write_manifest(storage, ttl_instant, doc)
            self.result = RestoreResult(existing, ttl_instant, already_restored=True)
            return False
        if doc.get("state") == MOVING:
            meta = table.timeline.commit_metadata(I.Instant(ttl_instant, I.REPLACE_COMMIT))
            doc = stash_partitions(table, ttl_instant, meta.partition_to_replace_file_ids or {})
        self.doc = doc
        return True

    def check(self, txn: Transaction) -> None:
        """Refuse a restore that could undo a later write (unless forced)."""
        assert txn.table is not None
        self.later = _later_writes(txn.table, self.ttl_instant, sorted(self.doc.get("partitions", {})))
        if not self.force:
            _refuse_unsafe_restore(self.ttl_instant, self.later)

    def start(self, txn: Transaction) -> Instant:
        """An INSERT commit (deltacommit on merge-on-read) naming the TTL instant it restores."""
        assert txn.table is not None
        return W.start_commit(txn.table, W.write_action_for(txn.table), operation_type="INSERT",
                              inflight=CommitMetadata(operation_type="INSERT",
                                                      extra_metadata={RESTORED_FROM_KEY: self.ttl_instant}))

    def execute(self, txn: Transaction) -> list:
        """Write every stashed file group's slice as of before the TTL run, without the rows
        written or deleted since, as new base files; returns their write stats."""
        assert txn.table is not None and txn.instant is not None
        table, storage, result = txn.table, txn.table.storage, self.result
        ttl_instant, new_instant = self.ttl_instant, txn.instant.timestamp
        before = table.timeline.filter(lambda i: i.timestamp < ttl_instant)
        schema = table.arrow_schema()
        stats = []
        task = 0
        for p, entry in sorted(self.doc.get("partitions", {}).items()):
            stash_p = f"{_stash_root(ttl_instant)}/{p}"
            listing = [e for e in storage.list_dir(stash_p) if not e.is_dir]
            view = FileSystemView(storage, before, listing={stash_p: listing})
            live = pa.array(sorted(self.later[p].keys), pa.string())
            n_rows = n_superseded = 0
            for sl in view.latest_file_slices(stash_p):
                rows = read_file_slice(table, sl, schema)
                if len(live) and rows.num_rows:
                    clash = pc.is_in(rows.column("_hoodie_record_key"), value_set=live)
                    n_superseded += int(pc.sum(clash).as_py() or 0)
                    rows = rows.filter(pc.invert(clash))
                if rows.num_rows == 0:
                    continue
                fid = N.new_file_id(0)
                token = N.write_token(task, 1, task)
                task += 1
                name = N.base_file_name(fid, token, new_instant)
                idx = rows.schema.get_field_index("_hoodie_file_name")
                rows = rows.set_column(idx, schema.field("_hoodie_file_name"),
                                       pa.repeat(pa.scalar(name, pa.string()), rows.num_rows))
                stats.append(W.write_base_file(storage, partition=p, file_id=fid, instant=new_instant, token=token,
                                               records=rows, num_inserts=rows.num_rows))
                result.files.append(f"{p}/{name}")
                n_rows += rows.num_rows
            result.rows[p] = n_rows
            result.superseded_rows[p] = n_superseded
        return stats

    def complete(self, txn: Transaction, result: Any) -> CommitMetadata:
        """The restore commit's metadata."""
        assert txn.table is not None and txn.instant is not None
        meta = W.commit_metadata_for(result, avro_schema=txn.table.avro_schema(), operation_type="INSERT",
                                     extra={RESTORED_FROM_KEY: self.ttl_instant})
        return meta

    def finalize(self, txn: Transaction) -> None:
        """Mark the stash restored (its files stay until the retention), warn about lost deletes."""
        assert txn.table is not None and txn.completed is not None
        table, result, ttl_instant = txn.table, self.result, self.ttl_instant
        new_instant = txn.completed.timestamp
        result.instant = new_instant
        deletes = _later_deletes(table, ttl_instant)
        if deletes and any(result.rows.values()):
            result.warnings.append(
                f"delete operations ran after the TTL run ({', '.join(deletes[:5])}); a key they asked to delete "
                "while its partition was expired was not found then and left no trace, so it may be among the "
                "restored rows: delete it again if so")
        for w in result.warnings:
            log.warning("restore of TTL stash %s: %s", ttl_instant, w)
        self.doc.update(state=RESTORED, restored_by=new_instant,
                        restored_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
        # The stashed files stay until the stash retention: rolling back the restore commit makes
        # them restorable again (reopen_stash).
        _write_manifest(table.storage, ttl_instant, self.doc)
        log.info("restored %d row(s) of TTL instant %s as commit %s", sum(result.rows.values()), ttl_instant,
                 new_instant)


__all__ = ["RestoreOperation", "TTL_MARKER_KEY", "TTL_STASH_KEY", "stash_partitions", "finish_pending_stashes", "purge_expired_stashes", "list_stashes", "restore",
           "RestoreResult", "StashInfo", "StashError", "read_manifest", "stash_retain_ms", "STASH_DIR",
           "RESTORED_FROM_KEY", "stash_to_unstash", "unstash", "finish_unstash", "reopen_stash"]
