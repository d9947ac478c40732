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
forever. Keys written to the partition after the TTL run win over the stashed versions.

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

from hoodie.faults import fault_point
from hoodie.format import instant as I
from hoodie.format import naming as N
from hoodie.format import writer as W
from hoodie.format.commit_metadata import CommitMetadata
from hoodie.format.fsview import FileSystemView
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, write_partition_metadata
from hoodie.format.timeline import METAFOLDER
from hoodie.services.ttl.config import STASH_RETAIN_DAYS, TTLConfigError, parse_duration_ms

log = logging.getLogger(__name__)

STASH_DIR = f"{METAFOLDER}/.stashedForDeletion"
MANIFEST = "stash.json"
RESTORED_FROM_KEY = "hoodie.partition.ttl.restored.from"
MOVING, COMPLETE, RESTORED = "moving", "complete", "restored"
# A rollback of the TTL commit is moving the files back (UNSTASHING), or has (ROLLED_BACK).
UNSTASHING, ROLLED_BACK = "unstashing", "rolled_back"
DEFAULT_RETAIN_MS = 7 * 86_400_000


class StashError(Exception):
    """A stash cannot be restored; the message says why and what to do."""


def stash_retain_ms(options: Optional[Mapping[str, Any]]) -> int:
    """``hoodie.partition.ttl.stash.retain.days`` in milliseconds (default 7 days)."""
    raw = (options or {}).get(STASH_RETAIN_DAYS)
    if raw is None or str(raw).strip() == "":
        return DEFAULT_RETAIN_MS
    ms = parse_duration_ms(str(raw), STASH_RETAIN_DAYS)
    if ms < 0:
        raise TTLConfigError(f"{STASH_RETAIN_DAYS}={raw} must not be negative")
    return ms


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
    from hoodie.services.ttl.service import TTL_STASH_KEY

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
        elif doc is None and _age_ms(table, inst.timestamp) > retain_ms:
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
    from hoodie.services.ttl.service import TTL_STASH_KEY

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
    state = doc.get("state")
    if state in (RESTORED, ROLLED_BACK):
        by = doc.get("restored_by") or doc.get("rolled_back_by")
        raise StashError(f"{gone} the stash was already {state.replace('_', ' ')} by {by}, which deleted the "
                         f"stashed files. {keep}")
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


def purge_expired_stashes(table: HoodieTable, retain_ms: int = DEFAULT_RETAIN_MS,
                          now_ms: Optional[int] = None) -> list[str]:
    """Delete stashes older than the retention; returns their instants."""
    storage = table.storage
    purged = []
    for inst in _stash_instants(storage):
        if (read_manifest(storage, inst) or {}).get("state") == UNSTASHING:
            continue  # a rollback is moving these files back (finish_pending_stashes settles it)
        if _age_ms(table, inst, now_ms) > retain_ms:
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

    def to_json(self) -> dict:
        """JSON form (``hoodie ttl restore --json``)."""
        return {"instant": self.instant, "ttl_instant": self.ttl_instant, "rows": self.rows,
                "superseded_rows": self.superseded_rows, "files": self.files,
                "already_restored": self.already_restored}


def _restore_commit(table: HoodieTable, ttl_instant: str) -> Optional[str]:
    tl = table.timeline
    for inst in tl.completed_writes().after(ttl_instant).instants:
        if tl.commit_metadata(inst).extra_metadata.get(RESTORED_FROM_KEY) == ttl_instant:
            return inst.timestamp
    return None


def _live_keys(table: HoodieTable, partition: str) -> Optional[pa.Array]:
    from hoodie.format.reader import read_file_slice

    view = FileSystemView(table.storage, table.timeline)
    slices = view.latest_file_slices(partition)
    if not slices:
        return None
    full = table.arrow_schema()
    cols = ["_hoodie_record_key", "_hoodie_commit_time"]
    mode = table.merge_mode
    if mode.ordering_field and mode.ordering_field in full.names:
        cols.append(mode.ordering_field)
    schema = pa.schema([full.field(c) for c in cols])
    keys = [read_file_slice(table, sl, schema).column("_hoodie_record_key") for sl in slices]
    return pa.chunked_array([c for k in keys for c in k.chunks], pa.string()).combine_chunks()


def _cleanup_stash_files(storage: Storage, instant: str, doc: dict) -> None:
    for p in doc.get("partitions", {}):
        storage.delete_dir(f"{_stash_root(instant)}/{p}")


def restore(table_or_path: str | HoodieTable, ttl_instant: str, *,
            storage_options: Optional[dict[str, Any]] = None) -> RestoreResult:
    """Bring the partitions a TTL run stashed back, as a new commit (see the module docstring)."""
    from hoodie.format.reader import read_file_slice
    from hoodie.services.ttl.service import _lock_for, _refuse_metadata_table

    table = table_or_path if isinstance(table_or_path, HoodieTable) else HoodieTable(table_or_path, storage_options)
    storage = table.storage
    with _lock_for(table, None, f"restore of TTL stash {ttl_instant}"):
        table.reload()
        _refuse_metadata_table(table, "a restore commit")
        doc = read_manifest(storage, ttl_instant)
        if doc is None:
            known = ", ".join(_stash_instants(storage)) or "none"
            raise StashError(f"no TTL stash for instant {ttl_instant} in {table.base_path} (stashes: {known}); "
                             "stashing needs hoodie.partition.ttl.stash.enabled=true at TTL time, and stashes "
                             "are deleted after hoodie.partition.ttl.stash.retain.days")
        if doc.get("state") == UNSTASHING:
            finish_pending_stashes(table)  # an interrupted rollback of the TTL commit: settle it first
            table.reload()
            doc = read_manifest(storage, ttl_instant) or doc
        if doc.get("state") == ROLLED_BACK:
            raise StashError(f"TTL commit {ttl_instant} was rolled back by {doc.get('rolled_back_by')}, which "
                             "brought its partitions back; there is nothing to restore")
        if doc.get("state") == RESTORED:
            raise StashError(f"the stash of {ttl_instant} was already restored by commit {doc.get('restored_by')}")
        existing = _restore_commit(table, ttl_instant)
        if existing is not None:
            doc.update(state=RESTORED, restored_by=existing)
            _write_manifest(storage, ttl_instant, doc)
            _cleanup_stash_files(storage, ttl_instant, doc)
            return RestoreResult(existing, ttl_instant, already_restored=True)
        if doc.get("state") == MOVING:
            meta = table.timeline.commit_metadata(I.Instant(ttl_instant, I.REPLACE_COMMIT))
            doc = stash_partitions(table, ttl_instant, meta.partition_to_replace_file_ids or {})
        # A restore is a write: like every writer, roll back failed writes first (an interrupted
        # restore among them, even one that only got as far as its empty .requested file).
        from hoodie.services.rollback import rollback_failed_writes

        rollback_failed_writes(table)
        table.reload()
        before = table.timeline.filter(lambda i: i.timestamp < ttl_instant)
        schema = table.arrow_schema()
        avro_schema = table.avro_schema()
        result = RestoreResult(None, ttl_instant)
        action = W.write_action_for(table)
        inflight = W.start_commit(table, action, operation_type="INSERT", inflight=CommitMetadata(
            operation_type="INSERT", extra_metadata={RESTORED_FROM_KEY: ttl_instant}))
        new_instant = inflight.timestamp
        stats = []
        task = 0
        for p, entry in sorted(doc.get("partitions", {}).items()):
            stash_p = f"{_stash_root(ttl_instant)}/{p}"
            listing = [e for e in storage.list_dir(stash_p) if not e.is_dir]
            view = FileSystemView(storage, before, listing={stash_p: listing})
            live = _live_keys(table, p)
            n_rows = n_superseded = 0
            for sl in view.latest_file_slices(stash_p):
                rows = read_file_slice(table, sl, schema)
                if live is not None and len(live) and rows.num_rows:
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
                                       pa.array([name] * rows.num_rows, pa.string()))
                stats.append(W.write_base_file(storage, partition=p, file_id=fid, instant=new_instant, token=token,
                                               records=rows, num_inserts=rows.num_rows))
                result.files.append(f"{p}/{name}")
                n_rows += rows.num_rows
            result.rows[p] = n_rows
            result.superseded_rows[p] = n_superseded
        meta = W.commit_metadata_for(stats, avro_schema=avro_schema, operation_type="INSERT",
                                     extra={RESTORED_FROM_KEY: ttl_instant})
        W.complete_commit(table, inflight, meta)
        result.instant = new_instant
        doc.update(state=RESTORED, restored_by=new_instant,
                   restored_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
        _write_manifest(storage, ttl_instant, doc)
        _cleanup_stash_files(storage, ttl_instant, doc)
        log.info("restored %d row(s) of TTL instant %s as commit %s", sum(result.rows.values()), ttl_instant,
                 new_instant)
        return result


__all__ = ["stash_partitions", "finish_pending_stashes", "purge_expired_stashes", "list_stashes", "restore",
           "RestoreResult", "StashInfo", "StashError", "read_manifest", "stash_retain_ms", "STASH_DIR",
           "RESTORED_FROM_KEY", "stash_to_unstash", "unstash", "finish_unstash"]
