"""Rolling back a pending (failed or interrupted) compaction.

Deletes what the compaction created and nothing else: its (partial) base files
``<fileId>_*_<C>.parquet``, the links or copies of its plan (never their targets), and its
exact-split log files; then deletes ``<C>.compaction.inflight`` and leaves the plan requested, so the
compaction can run again (Hudi's ``rollbackInflightCompaction``). Like Hudi, it records a
``rollback`` instant (plan, empty inflight, metadata listing the deleted files).

Log files that writers appended to the file group while the compaction was pending carry versions
above the plan's reserved ones and are never touched. A file in the reserved range that this
compaction did not write (a stock Hudi writer ignoring the reservation) stops the rollback.

:func:`remove_compaction_plan` (``hoodie rollback <compaction instant>``) goes further and removes the
plan, as Hudi's ``compaction unschedule`` does: after undoing the compaction's files it moves the log
files writers added to the slices the plan opened back to each file group's previous slice (new
versions after its last log file), then deletes the plan. It also works when the plan file is
damaged (empty, truncated, not Avro): the compaction's outputs are then found by listing.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans as PL
from hoodie.format.timeline import active as T
from hoodie.format.timeline.compaction_plan import CompactionPlan
from hoodie.format.file_group.fsview import list_partitions
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, open_table

import hoodie.services.compaction.partial as P
from hoodie.services.compaction.config import CompactionError
from hoodie.format.lock import LockError, compaction_lock
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.slice import writer as W
from hoodie.services.rollback.instant import pending_rollback_of, start_rollback
from hoodie.services.transaction import Operation, Transaction

log = logging.getLogger("hoodie.compaction")


@dataclass
class CompactionRollbackResult:
    """What a compaction rollback deleted."""

    instant: str
    rollback_instant: Optional[str]
    deleted: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)  # (from, to): logs moved back (plan removal)
    plan_removed: bool = False


def is_split_file(storage: Storage, rel: str, instant: str) -> bool:
    """Whether a log file is an exact-split file of compaction ``instant``: its first block is a data
    block written under the compaction instant (writers never use a compaction instant)."""
    for block in read_log_file(storage, rel, warn=False):
        return block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA) and block.instant_time == instant
    return True  # an empty file: a split file whose write was cut short


def compaction_outputs(table: HoodieTable, instant: str, plan: CompactionPlan) -> dict[str, list]:
    """Files compaction ``instant`` created (or may have created), by kind: ``split`` (and stray
    reserved-version files of earlier attempts), ``links`` (existing links as
    :class:`~hoodie.services.compaction.partial.LinkOp`, version order), ``base``, ``tmp`` (paths).

    Raises:
        CompactionError: a reserved-version log file was not written by this compaction.
    """
    storage = table.storage
    out: dict[str, list] = {"split": [], "links": [], "base": [], "tmp": []}
    listing: dict[str, list[str]] = {}
    for op in plan.operations:
        part, fid = op.file_group
        if part not in listing:
            listing[part] = [s.name for s in storage.list_dir(part) if not s.is_dir]
        links = {l.link: l for l in P.operation_links(op)}
        top = op.reserved_log_version
        for name in listing[part]:
            rel = f"{part}/{name}" if part else name
            if name.endswith(P.COPY_TMP_SUFFIX) and name[: -len(P.COPY_TMP_SUFFIX)] in links:
                out["tmp"].append(rel)
            elif N.is_base_file(name):
                try:
                    b = N.parse_base_file(name)
                except ValueError:
                    continue
                if b.file_id == fid and b.instant == instant:
                    out["base"].append(rel)
            elif N.is_log_file(name):
                lp = N.parse_log_file(name)
                if lp.file_id != fid or lp.base_instant != instant or lp.version > top:
                    continue
                if name in links:
                    continue
                if not is_split_file(storage, rel, instant):
                    raise CompactionError(
                        f"{rel} uses log version {lp.version}, reserved by compaction {instant}, but was not "
                        "written by it (a writer that ignores the reservation, such as a Java Hudi writer, wrote it). "
                        "Move it aside before rolling back or re-running the compaction")
                out["split"].append(rel)
        for l in sorted(links.values(), key=lambda x: x.version):
            if l.link in listing[part] or storage.is_symlink(l.link_path):
                out["links"].append(l)
    return out


def _by_partition(files: list[str]) -> dict[str, list[str]]:
    """Paths relative to the base path, grouped by partition ('' for a non-partitioned table)."""
    by_part: dict[str, list[str]] = {}
    for f in files:
        by_part.setdefault(f.rsplit("/", 1)[0] if "/" in f else "", []).append(f)
    return by_part


def _delete_outputs(storage: Storage, outputs: dict[str, list]) -> list[str]:
    """Delete a compaction's outputs, returning what was deleted: split files first, then links
    lowest version first (the links left are a suffix at every moment, see
    partial.materialize_links), then base files and temporary copies."""
    deleted: list[str] = []
    for f in outputs["split"]:
        if storage.delete(f):
            deleted.append(f)
    deleted.extend(P.remove_links(storage, outputs["links"]))
    for f in outputs["base"] + outputs["tmp"]:
        if storage.delete(f):
            deleted.append(f)
    return deleted


def _under_compaction_locks(table_or_path: Union[str, HoodieTable], instant: str,
                            storage_options: Optional[dict[str, Any]], verb: str,
                            op: "_CompactionRollbackBase") -> CompactionRollbackResult:
    """Commit ``op`` through a :class:`Transaction` (the table lock, the rollback instant) while
    holding the compaction's own lock (refused while another process executes the compaction)."""
    table = open_table(table_or_path, storage_options)
    own = compaction_lock(table.storage, instant)
    try:
        own.acquire()
    except LockError as e:
        raise CompactionError(f"compaction {instant} is being executed by another process ({e}); it cannot be "
                              f"{verb} under it") from None
    try:
        Transaction(op, op, table=table).run()
    finally:
        own.release()
    assert op.outcome is not None
    return op.outcome


class _CompactionRollbackBase(Operation):
    """A rollback instant undoing (part of) a pending compaction; its own in-process executor."""

    table_versions = (6, 8, 9)
    schema_on_read_safe = True  # removes files / records instants only

    def __init__(self, instant: str, what: str) -> None:
        self.target = instant
        self.what = what
        self.requested = I.Instant(instant, I.COMPACTION, I.State.REQUESTED)
        self.inflight = I.Instant(instant, I.COMPACTION, I.State.INFLIGHT)
        self.outputs: dict[str, list] = {}
        self.by_part: dict[str, list[str]] = {}
        self.deleted: list[str] = []
        self.started = 0.0
        self.outcome: Optional[CompactionRollbackResult] = None

    def _check_pending(self, table: HoodieTable, verb: str) -> None:
        tl = table.timeline
        done = tl.get(self.target)
        if done is not None and done.is_completed:
            raise CompactionError(f"compaction {self.target} is completed; {verb} it would need a restore")
        if not tl.has_file(self.requested.file_name):
            raise CompactionError(f"there is no compaction plan {self.target} "
                                  f"({T.instant_file_path(table.storage, self.requested)} is missing)")

    def _plan_outputs(self, table: HoodieTable, outputs: dict[str, list]) -> None:
        self.outputs = outputs
        files = outputs["split"] + [l.link_path for l in outputs["links"]] + outputs["base"] + outputs["tmp"]
        self.by_part = _by_partition(files)

    def start(self, txn: Transaction) -> I.Instant:
        """The rollback instant (requested, inflight), or an interrupted one resumed."""
        assert txn.table is not None
        storage = txn.table.storage
        self.started = time.monotonic()
        requests = [PL.rollback_request(p, files_to_delete=[storage.uri(f) for f in fs])
                    for p, fs in sorted(self.by_part.items())]
        return start_rollback(txn.table, self.target, PL.write_avro_metadata(
            "HoodieRollbackPlan", PL.rollback_plan((self.target, I.COMPACTION), requests)))

    def execute(self, txn: Transaction) -> Any:
        """Delete the compaction's outputs (the executor step)."""
        assert txn.table is not None
        self.deleted = _delete_outputs(txn.table.storage, self.outputs)
        return None

    def complete(self, txn: Transaction, result: Any) -> bytes:
        """What the completed rollback instant holds: the files deleted."""
        assert txn.table is not None and txn.instant is not None
        storage = txn.table.storage
        r = txn.instant.timestamp
        part_meta = {p: PL.rollback_partition_metadata(p, [storage.uri(f) for f in fs if f in self.deleted])
                     for p, fs in sorted(self.by_part.items())}
        meta = PL.rollback_metadata(r, int((time.monotonic() - self.started) * 1000),
                                    [(self.target, I.COMPACTION)], part_meta)
        return PL.write_avro_metadata("HoodieRollbackMetadata", meta)


def rollback_compaction(table_or_path: Union[str, HoodieTable], instant: str, *,
                        storage_options: Optional[dict[str, Any]] = None) -> CompactionRollbackResult:
    """Undo a pending compaction's files and return it to requested (see module doc).

    Raises:
        CompactionError: the instant is not a compaction, is already completed (that would need a
            restore), or a reserved-version file was not written by it.
    """
    return _under_compaction_locks(table_or_path, instant, storage_options, "rolled back",
                                   _CompactionRollback(instant))


class _CompactionRollback(_CompactionRollbackBase):
    """Undo a pending compaction's files and return it to requested."""

    def __init__(self, instant: str) -> None:
        super().__init__(instant, f"rollback of compaction {instant}")
        self.has_inflight = False

    def prepare(self, txn: Transaction) -> bool:
        """Check the compaction is pending and find its outputs; nothing to do ends here."""
        table = txn.open_table()
        self._check_pending(table, "rolling back")
        tl = table.timeline
        self._plan_outputs(table, compaction_outputs(table, self.target, tl.compaction_plan(self.target)))
        self.has_inflight = tl.has_file(self.inflight.file_name)
        if not self.by_part and not self.has_inflight and pending_rollback_of(table, self.target) is None:
            self.outcome = CompactionRollbackResult(self.target, None, [])
            return False
        return True

    def finalize(self, txn: Transaction) -> None:
        """Back to requested: the compaction's inflight file goes."""
        assert txn.table is not None and txn.completed is not None
        if self.has_inflight:
            txn.table.delete_instant(self.target, I.COMPACTION, [I.State.INFLIGHT])
        r = txn.completed.timestamp
        log.info("rolled back compaction %s (rollback %s): deleted %d file(s)", self.target, r, len(self.deleted))
        self.outcome = CompactionRollbackResult(self.target, r, self.deleted)


def _log_instants(storage: Storage, rel: str) -> set[str]:
    return {b.instant_time for b in read_log_file(storage, rel, warn=False)
            if b.block_type != BlockType.CORRUPT and b.instant_time}


def _outputs_by_listing(table: HoodieTable, instant: str) -> dict[str, list]:
    """The files compaction ``instant`` may have created, found without its (damaged) plan.

    The instant is a compaction's, so every base file named with it is an output, and a log file in
    a slice at it is one unless a writer wrote it: links are symlinks, copies only hold blocks of
    instants before the compaction, split files blocks of the compaction itself, and writers' log
    files blocks of later instants.
    """
    storage = table.storage
    out: dict[str, list] = {"split": [], "links": [], "base": [], "tmp": []}
    for part in list_partitions(storage):
        for st in storage.list_dir(part):
            if st.is_dir:
                continue
            name, rel = st.name, st.path
            if name.endswith(P.COPY_TMP_SUFFIX):
                inner = name[: -len(P.COPY_TMP_SUFFIX)]
                if N.is_log_file(inner) and N.parse_log_file(inner).base_instant == instant:
                    out["tmp"].append(rel)
            elif N.is_base_file(name):
                try:
                    if N.parse_base_file(name).instant == instant:
                        out["base"].append(rel)
                except ValueError:
                    continue
            elif N.is_log_file(name) and N.parse_log_file(name).base_instant == instant:
                if storage.is_symlink(rel) or all(i <= instant for i in _log_instants(storage, rel)):
                    out["split"].append(rel)
    return out


def compaction_files_by_listing(table: HoodieTable, instant: str) -> dict[str, list]:
    """The files compaction ``instant`` (pending or completed) created, found by listing: ``split``
    (its split log files, links and copies), ``base``, ``tmp`` (a restore rolls compactions back)."""
    return _outputs_by_listing(table, instant)


def _slice_logs(table: HoodieTable, instant: str) -> list[str]:
    """Every log file in a slice at ``instant`` (paths relative to the base path)."""
    out = []
    for part in list_partitions(table.storage):
        for st in table.storage.list_dir(part):
            if not st.is_dir and N.is_log_file(st.name) and N.parse_log_file(st.name).base_instant == instant:
                out.append(st.path)
    return out


def _previous_slice(table: HoodieTable, part: str, file_id: str, instant: str, names: list[str]) -> Optional[str]:
    """The base instant of the newest visible slice of a file group before ``instant``."""
    tl = table.timeline
    first = tl.first()
    done = {i.timestamp for i in tl.completed().instants if i.action in I.WRITE_ACTIONS}
    best: Optional[str] = None
    for name in names:
        b: Optional[str] = None
        if N.is_base_file(name):
            try:
                pb = N.parse_base_file(name)
            except ValueError:
                continue
            b = pb.instant if pb.file_id == file_id else None
        elif N.is_log_file(name):
            lp = N.parse_log_file(name)
            b = lp.base_instant if lp.file_id == file_id else None
        if b is None or b >= instant:
            continue
        if b in done or (first is not None and b < first.timestamp):
            best = b if best is None else max(best, b)
    return best


def remove_compaction_plan(table_or_path: Union[str, HoodieTable], instant: str, *,
                           storage_options: Optional[dict[str, Any]] = None) -> CompactionRollbackResult:
    """Remove a pending compaction altogether (``hoodie rollback <compaction instant>``; module doc).

    Failed (pending) writes are rolled back first, as every write does. The plan file may be
    damaged. Raises :class:`CompactionError` when the compaction is completed, being executed by
    another process, when there is no such plan, or when a log file in its slices has no previous
    slice to go back to; nothing is changed then.
    """
    return _under_compaction_locks(table_or_path, instant, storage_options, "removed", _PlanRemoval(instant))


class _PlanRemoval(_CompactionRollbackBase):
    """Remove a pending compaction: delete its outputs, move log files written into its slices back to
    the previous slices, then delete the plan."""

    # Failed writes may have left log files in the slices the plan opened: gone before we look.
    rollback_failed_writes = True

    def __init__(self, instant: str) -> None:
        super().__init__(instant, f"removal of compaction plan {instant}")
        self.to_move: dict[tuple[str, str], list[str]] = {}
        self.targets: dict[tuple[str, str], str] = {}
        self.moved: list[tuple[str, str]] = []

    def prepare(self, txn: Transaction) -> bool:
        """The compaction must be pending."""
        self._check_pending(txn.open_table(), "removing")
        return True

    def check(self, txn: Transaction) -> None:
        """Plan the removal after failed writes were rolled back; refuse before anything is written."""
        assert txn.table is not None
        table = txn.table  # the snapshot the rollbacks of failed writes left
        storage = table.storage
        instant = self.target
        try:
            plan: Optional[CompactionPlan] = table.timeline.compaction_plan(instant)
        except T.DamagedTimelineFileError as e:
            log.warning("%s; removing the plan, finding compaction %s's files by listing", e.path, instant)
            plan = None
        outputs = compaction_outputs(table, instant, plan) if plan is not None else _outputs_by_listing(table, instant)
        out_paths = set(outputs["split"]) | {l.link_path for l in outputs["links"]}
        # Everything else in the slices at the instant is data writers committed on top of the plan.
        # Layout 2 slices logs by completion time: without the plan they join the previous slice as
        # they are, so nothing moves.
        for rel in (_slice_logs(table, instant) if table.timeline_layout == 1 else ()):
            if rel not in out_paths:
                part = rel.rsplit("/", 1)[0] if "/" in rel else ""
                self.to_move.setdefault((part, N.parse_log_file(rel.rsplit("/", 1)[-1]).file_id), []).append(rel)
        listings: dict[str, list[str]] = {}
        for (part, fid), rels in sorted(self.to_move.items()):
            if part not in listings:
                listings[part] = [s.name for s in storage.list_dir(part) if not s.is_dir]
            prev = _previous_slice(table, part, fid, instant, listings[part])
            if prev is None:
                raise CompactionError(
                    f"{rels[0]} was written into compaction {instant}'s slice of file group {fid}, which has no "
                    "earlier slice to move it back to; the plan was not removed (nothing was changed)")
            self.targets[(part, fid)] = prev
        self._plan_outputs(table, outputs)

    def execute(self, txn: Transaction) -> Any:
        """Delete the outputs, then move the later log files back to their previous slices."""
        super().execute(txn)
        assert txn.table is not None
        storage = txn.table.storage
        # Moved in log order, each after the previous slice's last version: the merged read (previous
        # slice, then the pending one) sees the same files in the same order at every moment. A move
        # cut short on an object store (copied, not yet deleted) leaves an adjacent duplicate of the
        # same blocks after the re-run, which merges to the same records.
        for (part, fid), rels in sorted(self.to_move.items()):
            prev = self.targets[(part, fid)]
            for rel in sorted(rels, key=lambda x: N.parse_log_file(x.rsplit("/", 1)[-1]).sort_key()):
                lp = N.parse_log_file(rel.rsplit("/", 1)[-1])
                names = [s.name for s in storage.list_dir(part) if not s.is_dir]
                ver = W.next_log_version(storage, part, fid, prev, listing=names)
                new = N.log_file_name(fid, prev, ver, lp.write_token or N.UNKNOWN_WRITE_TOKEN)
                dst = f"{part}/{new}" if part else new
                storage.move(rel, dst)
                self.moved.append((rel, dst))
        return None

    def finalize(self, txn: Transaction) -> None:
        """The plan goes last (inflight first), so an interrupted removal is finished by running it again."""
        assert txn.table is not None and txn.completed is not None
        storage = txn.table.storage
        txn.table.delete_instant(self.target, I.COMPACTION, [I.State.INFLIGHT, I.State.REQUESTED])
        W.delete_markers(storage, self.target)
        r = txn.completed.timestamp
        log.info("removed compaction plan %s (rollback %s): deleted %d file(s), moved %d log file(s) back to their "
                 "previous slices", self.target, r, len(self.deleted), len(self.moved))
        self.outcome = CompactionRollbackResult(self.target, r, self.deleted, self.moved, True)


__all__ = ["rollback_compaction", "remove_compaction_plan", "CompactionRollbackResult", "compaction_outputs", "is_split_file"]
