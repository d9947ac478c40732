"""Savepoints, and restoring a table to one (Hudi's ``savepoint`` and ``restore`` actions).

A savepoint marks a completed commit ``t`` as a state the table can go back to. It is Hudi's
savepoint action at the commit's own instant time, committed through the
:class:`~hoodie.services.transaction.Transaction`: ``<t>.savepoint.inflight`` (empty), then
``<t>.savepoint`` (``<t>_<completion>.savepoint`` on table versions 8/9) holding the Avro
``HoodieSavepointMetadata``: per partition, the files of the latest file slices as of ``t``. While
it exists:

* the cleaner keeps every file slice holding a savepointed file (:mod:`hoodie.services.clean`);
* partition TTL skips partitions holding savepointed files, saying so (:mod:`hoodie.services.ttl`);
* the savepointed commit cannot be rolled back (``rollback_to_instant`` refuses, as Hudi does).

:func:`rollback_to_savepoint` is Hudi's restore: every write after the savepoint (commits,
deltacommits, replacecommits, compactions, pending or completed) is rolled back, newest first, as
one ``restore`` instant: ``<r>.restore.requested`` (``HoodieRestorePlan``: the instants, newest
first, and the savepoint), ``<r>.restore.inflight``, the files deleted (and stashed TTL files moved
back), ``<r>.restore`` (``HoodieRestoreMetadata``: one ``HoodieRollbackMetadata`` per instant); the
rolled-back instants' timeline files go last. The metadata table follows through the transaction's
hook (:mod:`hoodie.services.metadata.writer`). As in Hudi, no rollback instant is left for the
instants a restore undid. A restore is refused, before anything is written, when it cannot bring the
savepoint's state back: a clean deleted files the savepoint needs, a log compaction came after it,
a later savepoint exists, a stash a TTL commit needs is gone, or (table versions 8/9) the metadata
table compacted a commit it would have to take out. An interrupted restore is finished by calling
:func:`rollback_to_savepoint` again with the same savepoint.

Pure Python; no Spark.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Union

from hoodie.errors import HoodieError
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.lock import LockError, TableLock, compaction_lock
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.table import files_partition_available
from hoodie.format.slice import writer as W
from hoodie.format.table import HoodieTable, open_table
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.timeline.savepoints import Savepoint, completed_savepoints, savepoint_at
from hoodie.services.compaction.rollback import compaction_files_by_listing
from hoodie.services.metadata.writer import MetadataWriter
from hoodie.services.rollback.operation import restored_from, ttl_stash_of
from hoodie.services.rollback.action import StashReturn, WriteRollback
from hoodie.services.rollback.failed_writes import live_instants
from hoodie.services.rollback.instant import RollbackError
from hoodie.services.transaction import Operation, Transaction
from hoodie.services.ttl import stash as S

log = logging.getLogger("hoodie.services.savepoint")

# The write timeline Hudi's restore rolls back: commits, deltacommits, replacecommits and
# compactions (pending or completed), clustering and log compaction included.
_WRITE_TIMELINE = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT)


class SavepointError(HoodieError):
    """A savepoint, its deletion or a restore to it is refused; the message says why and what to do.
    Nothing was written."""


@dataclass
class SavepointResult:
    """What :func:`create_savepoint` did."""

    instant: str
    partitions: int
    files: int
    message: str


@dataclass
class SavepointRestoreResult:
    """What :func:`rollback_to_savepoint` did."""

    restore_instant: str
    savepoint: str
    rolled_back: list[tuple[str, str]] = field(default_factory=list)  # (instant, action), newest first
    deleted_files: int = 0
    resumed: bool = False
    message: str = ""


def _open(table_or_path: Union[str, HoodieTable], storage_options: Optional[dict[str, Any]]) -> HoodieTable:
    return open_table(table_or_path, storage_options)


def _names(items: Iterable[str], n: int = 3) -> str:
    items = list(items)
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


# -- what a savepoint holds, and what cleans took ---------------------------------------------------

def savepoint_files(table: HoodieTable, instant: str) -> dict[str, list[str]]:
    """Per partition, the files of the latest file slices as of ``instant`` (what a savepoint of it
    records): base files and log files; on table versions 8/9 only logs of deltacommits up to it."""
    view = FileSystemView(table.storage, table.timeline)
    layout2 = table.timeline_layout == 2
    out: dict[str, list[str]] = {}
    for p in view.partitions():
        names: list[str] = []
        for sl in view.latest_file_slices(p, as_of=instant):
            if sl.base_file is not None:
                names.append(sl.base_file.name)
            names += [lf.name for lf in sl.log_files if not (layout2 and lf.parsed.base_instant > instant)]
        if names:
            out[p] = sorted(names)
    return out


def _slice_key(name: str) -> Optional[tuple[str, str, bool]]:
    """(file id, instant in the name, is a log file) of a data file name, None for other files."""
    try:
        if N.is_base_file(name):
            b = N.parse_base_file(name)
            return b.file_id, b.instant, False
        if N.is_log_file(name):
            lp = N.parse_log_file(name)
            return lp.file_id, lp.base_instant, True
    except ValueError:
        return None
    return None


def cleaned_files_needed(table: HoodieTable, instant: str) -> list[tuple[str, str]]:
    """``(clean instant, partition/file)`` for every file a completed clean deleted that the table as
    of ``instant`` needs: a file of the latest file slice (as of ``instant``) of a file group that was
    live then. A savepoint of ``instant`` made now would miss them, and a restore to it would bring
    back a table without their rows."""
    tl = table.timeline
    layout2 = table.timeline_layout == 2
    cleaned: dict[tuple[str, str], list[tuple[str, str, bool, str]]] = {}  # (p, fid) -> (key, name, log, clean)
    for c in tl.completed().by_actions(I.CLEAN).instants:
        try:
            md = tl.read_avro(c)
        except (FileNotFoundError, ValueError):
            continue
        for key, pm in (md.get("partitionMetadata") or {}).items():
            part = (pm or {}).get("partitionPath") or key
            for f in (pm or {}).get("successDeleteFiles") or []:
                name = str(f).rsplit("/", 1)[-1]
                k = _slice_key(name)
                if k is not None and k[1] <= instant:
                    cleaned.setdefault((part, k[0]), []).append((k[1], name, k[2], c.timestamp))
    if not cleaned:
        return []
    committed = {i.timestamp for i in tl.completed().instants if I.comparable_action(i.action) in _WRITE_TIMELINE}
    first = tl.first()
    start = first.timestamp if first else ""
    view = FileSystemView(table.storage, tl)
    lost: list[tuple[str, str]] = []
    for (part, fid), files in sorted(cleaned.items()):
        if view.is_replaced(part, fid, as_of=instant):
            continue  # not live as of the instant: nothing of it is needed
        existing = []
        fg = view.file_groups(part).get(fid)
        if fg is not None:
            existing = [k for k in fg.slices if k <= instant and (k in committed or k < start)]
        bases = sorted({k for k in existing} | {k for k, _, log_file, _ in files if not log_file})

        def slice_of(k: str, log_file: bool) -> str:
            if log_file and layout2:  # 1.x names a log by its deltacommit: it joins the slice before it
                return max((b for b in bases if b <= k), default=k)
            return k

        keys = set(existing) | {slice_of(k, lg) for k, _, lg, _ in files}
        latest = max(keys)
        for k, name, lg, c in files:
            if slice_of(k, lg) == latest:
                lost.append((c, f"{part}/{name}" if part else name))
    return lost


def _last_clean_retained(tl: T.Timeline) -> Optional[tuple[str, str]]:
    """(clean instant, earliest commit it retains) of the last clean, pending or completed (Hudi's
    savepoint lookup window); None without a clean or an earliest commit to retain."""
    last = tl.by_actions(I.CLEAN).last()
    if last is None:
        return None
    try:
        if last.is_completed:
            ectr = tl.read_avro(last).get("earliestCommitToRetain") or ""
        else:
            plan = tl.read_avro(Instant(last.timestamp, I.CLEAN, State.REQUESTED))
            ectr = (plan.get("earliestInstantToRetain") or {}).get("timestamp") or ""
    except (FileNotFoundError, ValueError):
        return None
    return (last.timestamp, ectr) if ectr else None


def _pending_clean_deletes(tl: T.Timeline, names: set[str]) -> list[tuple[str, str]]:
    """(pending clean, file) for files of ``names`` a pending clean's plan deletes when it runs."""
    out = []
    for c in tl.pending().by_actions(I.CLEAN).instants:
        try:
            plan = tl.read_avro(Instant(c.timestamp, I.CLEAN, State.REQUESTED))
        except (FileNotFoundError, ValueError):
            continue
        for p, infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
            for info in infos or []:
                name = str((info or {}).get("filePath") or "").rsplit("/", 1)[-1]
                if name in names:
                    out.append((c.timestamp, f"{p}/{name}" if p else name))
        for p, files in (plan.get("filesToBeDeletedPerPartition") or {}).items():
            out += [(c.timestamp, f"{p}/{n}" if p else n) for n in files or [] if n in names]
    return out


# -- creating, listing and deleting savepoints ------------------------------------------------------

def create_savepoint(table_or_path: Union[str, HoodieTable], commit_time: str, user: str = "", comments: str = "",
                     *, storage_options: Optional[dict[str, Any]] = None,
                     options: Optional[Mapping[str, Any]] = None) -> SavepointResult:
    """Savepoint the completed commit ``commit_time`` (Hudi's ``create_savepoint``).

    Raises:
        SavepointError: it is no completed commit, is savepointed already, is older than what the
            last clean retains, or files of its state were cleaned or are planned to be. Nothing
            was written then.
    """
    table = _open(table_or_path, storage_options)
    op = SavepointOperation(commit_time, user or "", comments or "")
    Transaction(op, table=table, options=options).run()
    assert op.outcome is not None
    return op.outcome


class SavepointOperation(Operation):
    """Hudi's savepoint action as a transaction's operation (its work is writing the instant)."""

    table_versions = (6, 8, 9)
    schema_on_read_safe = True  # removes files / records instants only

    def __init__(self, instant: str, user: str = "", comments: str = "") -> None:
        self.target = instant
        self.user = user
        self.comments = comments
        self.what = f"savepoint of {instant}"
        self.record: Optional[dict] = None
        self.resume = False
        self.files = 0
        self.outcome: Optional[SavepointResult] = None

    def prepare(self, txn: Transaction) -> bool:
        """Check the commit can be savepointed and collect its files (nothing written yet)."""
        table = txn.open_table()
        tl = table.timeline
        t = self.target
        base = table.base_path
        if savepoint_at(tl, t) is not None:
            raise SavepointError(f"{t} is savepointed already (see CALL show_savepoints); nothing was written")
        pending = tl.pending().by_actions(I.RESTORE).first()
        if pending is not None:
            raise SavepointError(f"restore {pending.timestamp} of {base} is pending: finish it first (run "
                                 "rollback_to_savepoint again with its savepoint); nothing was written")
        inst = tl.get(t)
        done = [i.timestamp for i in tl.completed().instants if I.comparable_action(i.action) in _WRITE_TIMELINE]
        if inst is None or not inst.is_completed or I.comparable_action(inst.action) not in _WRITE_TIMELINE:
            state = "" if inst is None else ("completed" if inst.is_completed else "pending")
            what = "no instant" if inst is None else f"a {state} {inst.action}"
            raise SavepointError(
                f"could not savepoint {t}: it is {what} on the timeline of {base}, and only completed commits "
                f"can be savepointed (the latest: {_names(reversed(done)) or 'none'}); nothing was written")
        window = _last_clean_retained(tl)
        if window is not None and t < window[1]:
            raise SavepointError(
                f"could not savepoint {t}: it is before the lookup window of clean {window[0]}, which retains commits "
                f"from {window[1]} on (older file versions may be cleaned already), as Hudi refuses it; savepoint a "
                f"commit at or after {window[1]}. Nothing was written")
        lost = cleaned_files_needed(table, t)
        if lost:
            raise SavepointError(
                f"could not savepoint {t}: clean {lost[0][0]} deleted {len(lost)} file(s) of its state "
                f"({_names(p for _, p in lost)}), so a restore to it could not bring its rows back; savepoint a "
                "later commit. Nothing was written")
        files = savepoint_files(table, t)
        names = {n for ns in files.values() for n in ns}
        doomed = _pending_clean_deletes(tl, names)
        if doomed:
            raise SavepointError(
                f"could not savepoint {t}: pending clean {doomed[0][0]} is planned to delete {len(doomed)} of its "
                f"file(s) ({_names(p for _, p in doomed)}) and runs before the next clean plans again; savepoint a "
                "later commit. Nothing was written")
        self.files = len(names)
        self.record = plans.savepoint_metadata(self.user, int(time.time() * 1000), self.comments, files)
        self.resume = tl.has_file(Instant(t, I.SAVEPOINT, State.INFLIGHT).file_name)
        return True

    def start(self, txn: Transaction) -> Instant:
        """``<t>.savepoint.inflight`` (Hudi writes no requested file), or an interrupted one's."""
        assert txn.table is not None
        if self.resume:
            return Instant(self.target, I.SAVEPOINT, State.INFLIGHT)
        inflight = T.create_inflight(txn.table.storage, self.target, I.SAVEPOINT)
        txn.table.wrote(inflight)
        return inflight

    def complete(self, txn: Transaction, result: Any) -> bytes:
        """What ``<t>.savepoint`` holds: the ``HoodieSavepointMetadata``."""
        assert txn.table is not None and txn.instant is not None and self.record is not None
        return plans.write_avro_metadata("HoodieSavepointMetadata", self.record)

    def finalize(self, txn: Transaction) -> None:
        """Report what the savepoint holds."""
        assert self.record is not None
        parts = len(self.record["partitionMetadata"])
        msg = (f"savepointed {self.target}: it holds {self.files} file(s) in {parts} partition(s), which clean and "
               "partition TTL keep until the savepoint is deleted")
        log.info("%s of %s", msg, txn.table.base_path if txn.table else "")
        self.outcome = SavepointResult(self.target, parts, self.files, msg)


def show_savepoints(table_or_path: Union[str, HoodieTable], *,
                    storage_options: Optional[dict[str, Any]] = None) -> list[Savepoint]:
    """The completed savepoints, newest first."""
    return list(reversed(completed_savepoints(_open(table_or_path, storage_options).timeline)))


def delete_savepoint(table_or_path: Union[str, HoodieTable], instant: str, *,
                     storage_options: Optional[dict[str, Any]] = None,
                     options: Optional[Mapping[str, Any]] = None) -> str:
    """Delete the savepoint at ``instant`` as Hudi does (the completed file, then the inflight one),
    under the table lock; returns what was done. The savepointed files become cleanable.

    Raises:
        SavepointError: there is no savepoint at ``instant``, or a restore to it is pending.
    """
    table = _open(table_or_path, storage_options)
    with TableLock(table.storage, options, f"delete savepoint {instant}"):
        tl = table.timeline  # the new snapshot's first listing, under the lock
        mine = [i for i in tl.by_actions(I.SAVEPOINT).instants if i.timestamp == instant]
        if not mine:
            have = [sp.instant for sp in completed_savepoints(tl)]
            raise SavepointError(f"no savepoint at {instant} on {table.base_path} (savepoints: "
                                 f"{_names(have) if have else 'none'}); nothing was deleted")
        for r in tl.pending().by_actions(I.RESTORE).instants:
            if _restore_plan(tl, r).get("savepointToRestoreTimestamp") == instant:
                raise SavepointError(f"restore {r.timestamp} to savepoint {instant} is pending: finish it first "
                                     f"(rollback_to_savepoint('{instant}')); nothing was deleted")
        T.delete_instant_files(table.storage, instant, I.SAVEPOINT, (State.COMPLETED, State.INFLIGHT))
    if mine[0].is_completed:
        return f"deleted savepoint {instant}; its files can be cleaned again"
    return f"removed the unfinished savepoint {instant} (an interrupted create_savepoint left it inflight)"


# -- restore ------------------------------------------------------------------------------------------

def _restore_plan(tl: T.Timeline, inst: Instant) -> dict:
    try:
        return tl.read_avro(Instant(inst.timestamp, I.RESTORE, State.REQUESTED))
    except (FileNotFoundError, ValueError):
        return {}


class _CompactionUndo:
    """Rolling back a compaction inside a restore: its outputs (base files, links or copies, split
    log files) are deleted; the slices it compacted are the latest again once later writes are
    gone. A completed compaction's ``commit`` goes first, then its ``compaction`` plan files."""

    def __init__(self, table: HoodieTable, target: Instant) -> None:
        self.table = table
        self.target = target
        self.completed = target.is_completed
        self.action = I.COMMIT if self.completed else I.COMPACTION
        self.files: list[str] = []
        self.deleted: list[str] = []
        self.started = time.monotonic()
        self.plan()

    def plan(self) -> None:
        """Find the compaction's outputs (again right before :meth:`execute`: the later instants undone
        first may have changed the listing)."""
        out = compaction_files_by_listing(self.table, self.target.timestamp)
        self.files = sorted(set(out["split"]) | set(out["base"]) | set(out["tmp"]))

    def execute(self, inflight: Instant) -> None:
        storage = self.table.storage
        for f in self.files:
            if storage.delete(f) or not storage.exists(f):
                self.deleted.append(f)

    def metadata(self, inflight: Instant) -> dict:
        storage = self.table.storage
        by_part: dict[str, list[str]] = {}
        for f in self.deleted:
            by_part.setdefault(f.rpartition("/")[0], []).append(storage.uri(f))
        return plans.rollback_metadata(
            inflight.timestamp, int((time.monotonic() - self.started) * 1000), [(self.target.timestamp, self.action)],
            {p: plans.rollback_partition_metadata(p, fs) for p, fs in sorted(by_part.items())})

    def finalize(self, inflight: Instant, table: HoodieTable) -> None:
        """Delete the compaction's instant files, out of ``table`` (the transaction's snapshot) too."""
        ts = self.target.timestamp
        if self.completed:
            table.delete_instant(ts, I.COMMIT, (State.COMPLETED,))
        table.delete_instant(ts, I.COMPACTION, (State.INFLIGHT, State.REQUESTED))
        W.delete_markers(table.storage, ts)


class _WriteUndo:
    """Rolling back a write (commit, deltacommit, replacecommit; pending or completed) inside a restore,
    with the rollback action's own steps (:class:`~hoodie.services.rollback.action.WriteRollback`)."""

    def __init__(self, table: HoodieTable, target: Instant, ignore_compactions: Iterable[str]) -> None:
        self.table = table
        self.target = target
        self.action = target.action
        self.restored_from = restored_from(table, target)
        try:
            stash = ttl_stash_of(table, target)
        except RollbackError as e:
            raise SavepointError(f"{e}; the restore was refused, nothing was written") from None
        back = None
        if stash is not None:
            ts = target.timestamp
            back = StashReturn(unstash=lambda rb: S.unstash(table, ts, rb),
                               finish=lambda rb: S.finish_unstash(table, ts, rb))
        self.rollback = WriteRollback(table, target, back)
        self.ignore = set(ignore_compactions)
        try:
            self.plan()
        except RollbackError as e:
            raise SavepointError(f"{e}; the restore was refused") from None

    def plan(self) -> None:
        """Find the files to delete (again right before :meth:`execute`: a later TTL commit undone first
        may have moved this write's stashed files back into their partition)."""
        self.rollback.plan(self.ignore)

    @property
    def files(self) -> list[str]:
        return self.rollback.to_delete

    @property
    def deleted(self) -> list[str]:
        return self.rollback.deleted

    def execute(self, inflight: Instant) -> None:
        self.rollback.inflight = inflight
        self.rollback.execute()

    def metadata(self, inflight: Instant) -> dict:
        self.rollback.inflight = inflight
        return self.rollback.metadata()

    def finalize(self, inflight: Instant, table: HoodieTable) -> None:
        """The rollback's last step, on ``table`` (the transaction's snapshot: the write's instant files
        leave it too)."""
        self.rollback.inflight = inflight
        self.rollback.table = table
        self.rollback.finalize()
        if self.restored_from is not None:
            S.reopen_stash(self.table, self.restored_from, self.target.timestamp)


def _finish_completed_restores(table: HoodieTable) -> list[str]:
    """Remove what a completed restore left on the timeline when it was cut short after its commit:
    the timeline files of instants it rolled back. Returns those instants."""
    tl = table.timeline
    done: list[str] = []
    for r in tl.completed().by_actions(I.RESTORE).instants:
        try:
            md = tl.read_avro(r)
        except (FileNotFoundError, ValueError):
            continue
        for info in md.get("restoreInstantInfo") or []:
            ts, action = info.get("commitTime"), info.get("action")
            left = tl.get(ts) if ts else None
            if left is None or I.comparable_action(left.action) not in _WRITE_TIMELINE:
                continue
            if action == I.COMPACTION or (action == I.COMMIT and tl.is_compaction_commit(left)):
                if left.is_completed:
                    table.delete_instant(ts, I.COMMIT, (State.COMPLETED,))
                table.delete_instant(ts, I.COMPACTION, (State.INFLIGHT, State.REQUESTED))
            else:
                table.delete_instant(ts, left.action, (State.COMPLETED, State.INFLIGHT, State.REQUESTED))
            W.delete_markers(table.storage, ts)
            done.append(ts)
    if done:
        log.warning("finished restore(s) cut short after their commit: removed the rolled-back instant(s) %s",
                    ", ".join(done))
    return done


def rollback_to_savepoint(table_or_path: Union[str, HoodieTable], instant: str, *,
                          storage_options: Optional[dict[str, Any]] = None,
                          options: Optional[Mapping[str, Any]] = None) -> SavepointRestoreResult:
    """Restore the table to the savepoint at ``instant`` (Hudi's ``rollback_to_savepoint``): every
    write after it is rolled back, newest first, as one restore instant (module docstring).

    Raises:
        SavepointError: no such savepoint, or the restore cannot bring its state back (the message
            says why); nothing was written then.
    """
    table = _open(table_or_path, storage_options)
    # Pending compactions after the savepoint are removed: none may be executing meanwhile.
    locks = []
    try:
        for c in table.timeline.pending_compactions().after(instant).instants:
            lk = compaction_lock(table.storage, c.timestamp, options)
            try:
                lk.acquire()
            except LockError as e:
                raise SavepointError(f"cannot restore to {instant}: compaction {c.timestamp} is being executed by "
                                     f"another process ({e}); retry when it is done. Nothing was written") from None
            locks.append((c.timestamp, lk))
        op = SavepointRestoreOperation(instant, locked={c for c, _ in locks})
        Transaction(op, op, table=table, options=options).run()
    finally:
        for _, lk in locks:
            lk.release()
    assert op.outcome is not None
    return op.outcome


class SavepointRestoreOperation(Operation):
    """The restore of a savepoint as a transaction's operation, and its own in-process executor."""

    table_versions = (6, 8, 9)
    schema_on_read_safe = True  # removes files / records instants only

    def __init__(self, savepoint: str, locked: Iterable[str] = ()) -> None:
        self.savepoint = savepoint
        self.locked = set(locked)
        self.what = f"restore to savepoint {savepoint}"
        self.undo: list[Any] = []
        self.resume: Optional[Instant] = None
        self.started = time.monotonic()
        self.outcome: Optional[SavepointRestoreResult] = None

    def prepare(self, txn: Transaction) -> bool:
        """Check the restore can bring the savepoint's state back and plan every rollback."""
        table = txn.open_table()
        _finish_completed_restores(table)
        tl = table.timeline
        s = self.savepoint
        base = table.base_path
        sp = savepoint_at(tl, s)
        if sp is None:
            have = [x.instant for x in completed_savepoints(tl)]
            raise SavepointError(f"no savepoint at {s} on {base} (savepoints: {_names(have) if have else 'none'}; "
                                 "create one with CALL create_savepoint); nothing was written")
        if sp.damaged is not None:
            raise SavepointError(f"savepoint {s} cannot be read ({sp.damaged}); nothing was written")
        for r in tl.pending().by_actions(I.RESTORE).instants:
            to = _restore_plan(tl, r).get("savepointToRestoreTimestamp")
            if to != s:
                raise SavepointError(f"restore {r.timestamp} to savepoint {to} is pending: finish it first "
                                     f"(rollback_to_savepoint('{to}')); nothing was written")
            self.resume = r
        later = [x.instant for x in completed_savepoints(tl) if x.instant > s]
        if later:
            raise SavepointError(
                f"cannot restore to {s}: savepoint(s) {_names(later)} are later and would point at commits the "
                f"restore removes; delete them first (CALL delete_savepoint) or restore to {later[-1]}. Nothing "
                "was written")
        targets = self._targets(tl)
        mine = live_instants(table.storage.uri())
        for t in targets:
            if t.timestamp in mine:
                raise SavepointError(f"cannot restore to {s}: {t.timestamp} is being written by this process right "
                                     "now; retry when it is done. Nothing was written")
            if t.action == I.LOG_COMPACTION or tl.has_file(
                    I.instant_file_name(t.timestamp, I.LOG_COMPACTION, State.REQUESTED)):
                raise SavepointError(
                    f"cannot restore to {s}: log compaction {t.timestamp} came after it, and hoodie does not roll back "
                    "log compactions; restore with Hudi's own rollback_to_savepoint. Nothing was written")
            if t.action == I.COMPACTION and t.timestamp not in self.locked:
                raise SavepointError(f"cannot restore to {s}: compaction {t.timestamp} was scheduled meanwhile; "
                                     "retry. Nothing was written")
        self._check_files(table, sp)
        pending_c = {t.timestamp for t in targets if t.action == I.COMPACTION}
        self.undo = []
        for t in targets:
            if t.action == I.COMPACTION or (t.action == I.COMMIT and t.is_completed and tl.is_compaction_commit(t)):
                self.undo.append(_CompactionUndo(table, t))
            else:
                self.undo.append(_WriteUndo(table, t, pending_c))
        if not self.undo and self.resume is None:
            self.outcome = SavepointRestoreResult("", s, message=f"nothing to restore: no write after savepoint {s}; the "
                                                        "table is at the savepoint already")
            return False
        return True

    def _targets(self, tl: T.Timeline) -> list[Instant]:
        """The writes after the savepoint, newest first (a resumed restore: those of its plan still there)."""
        after = [i for i in reversed(tl.instants)
                 if i.timestamp > self.savepoint and I.comparable_action(i.action) in _WRITE_TIMELINE]
        if self.resume is None:
            return after
        planned = {(x.get("commitTime"), x.get("action"))
                   for x in _restore_plan(tl, self.resume).get("instantsToRollback") or []}
        return [i for i in after if (i.timestamp, i.action) in planned]

    def _check_files(self, table: HoodieTable, sp: Savepoint) -> None:
        """Refuse when files the savepoint's state needs are gone: deleted by a clean (which names them),
        or missing from its own list."""
        s = sp.instant
        lost = cleaned_files_needed(table, s)
        if lost:
            raise SavepointError(
                f"cannot restore to {s}: clean {lost[0][0]} deleted {len(lost)} file(s) its state needs "
                f"({_names(p for _, p in lost)}), so the restore could not bring those rows back. Nothing was "
                "written")
        storage = table.storage
        layout2 = table.timeline_layout == 2
        missing = []
        for p, names in sorted(sp.partition_files.items()):
            for n in names:
                k = _slice_key(n)
                # A 0.x log file names its slice, not its writer: a later, rolled-back write may have owned it.
                if k is None or k[1] > s or (k[2] and not layout2):
                    continue
                rel = f"{p}/{n}" if p else n
                if not storage.exists(rel):
                    missing.append(rel)
        if missing:
            raise SavepointError(
                f"cannot restore to {s}: {len(missing)} file(s) the savepoint holds are gone ({_names(missing)}), "
                "deleted outside hoodie's clean; the restore could not bring their rows back. Nothing was written")

    def check(self, txn: Transaction) -> None:
        """On table versions 8/9 the metadata table must be able to take every rolled-back commit out."""
        table = txn.table
        assert table is not None
        if table.timeline_layout != 2 or not (table.has_metadata_table and files_partition_available(table.props)):
            return
        writer = MetadataWriter(table)
        for u in self.undo:
            try:
                writer.check_rollback(u.target.timestamp)
            except MetadataTableError as e:
                raise SavepointError(f"cannot restore to {self.savepoint}: {e}") from None

    def start(self, txn: Transaction) -> Instant:
        """``<r>.restore.requested`` (the plan) and ``<r>.restore.inflight``, or the pending restore resumed."""
        table = txn.table
        assert table is not None
        storage = table.storage
        self.started = time.monotonic()
        if self.resume is not None:
            log.info("resuming restore %s to savepoint %s", self.resume.timestamp, self.savepoint)
            if self.resume.is_inflight:
                return self.resume
            inflight = T.transition_to_inflight(storage, self.resume, b"")
            table.wrote(inflight)
            return inflight
        plan = plans.restore_plan([(u.target.timestamp, u.action) for u in self.undo], self.savepoint)
        req = T.create_requested(storage, table.new_instant_time(), I.RESTORE,
                                 plans.write_avro_metadata("HoodieRestorePlan", plan))
        inflight = T.transition_to_inflight(storage, req, b"")
        table.wrote(req, inflight)
        return inflight

    def execute(self, txn: Transaction) -> Any:
        """Roll back every write after the savepoint, newest first (their files; the instants go at
        :meth:`finalize`)."""
        assert txn.instant is not None
        for n, u in enumerate(self.undo):
            if n:
                u.plan()
            u.execute(txn.instant)
            log.info("restore %s: rolled back %s (%d file(s) deleted)", txn.instant.timestamp, u.target,
                     len(u.deleted))
        return None

    def complete(self, txn: Transaction, result: Any) -> bytes:
        """What ``<r>.restore`` holds: the ``HoodieRestoreMetadata``."""
        assert txn.table is not None and txn.instant is not None
        r = txn.instant
        meta = plans.restore_metadata(
            r.timestamp, int((time.monotonic() - self.started) * 1000),
            [(u.target.timestamp, u.action) for u in self.undo],
            {u.target.timestamp: [u.metadata(r)] for u in self.undo})
        return plans.write_avro_metadata("HoodieRestoreMetadata", meta)

    def finalize(self, txn: Transaction) -> None:
        """Remove the rolled-back instants (newest first), and pending rollbacks of them."""
        table = txn.table
        assert table is not None and txn.instant is not None
        r = txn.instant
        for u in self.undo:
            u.finalize(r, table)  # the instant files they delete leave the transaction's snapshot too
        gone = {u.target.timestamp for u in self.undo}
        tl = table.timeline
        for rb in tl.pending().by_actions(I.ROLLBACK).instants:
            if rb.timestamp <= self.savepoint:
                continue
            try:
                target = (tl.read_avro(Instant(rb.timestamp, I.ROLLBACK, State.REQUESTED))
                          .get("instantToRollback") or {}).get("commitTime")
            except (FileNotFoundError, ValueError):
                continue
            if target in gone or (target and tl.get(target) is None):
                # Hudi deletes them too: a pending rollback would hold back metadata-table compaction.
                table.delete_instant(rb.timestamp, I.ROLLBACK, (State.INFLIGHT, State.REQUESTED))
        deleted = sum(len(u.deleted) for u in self.undo)
        rolled = [(u.target.timestamp, u.action) for u in self.undo]
        msg = (f"restored to savepoint {self.savepoint} with restore {r.timestamp}: rolled back {len(rolled)} "
               f"instant(s) ({_names(t for t, _ in rolled) or 'none left'}), deleted {deleted} file(s)")
        if self.resume is not None:
            msg += " (finished an interrupted restore)"
        log.info("%s on %s", msg, table.base_path)
        self.outcome = SavepointRestoreResult(r.timestamp, self.savepoint, rolled, deleted, self.resume is not None, msg)


__all__ = ["SavepointError", "SavepointResult", "SavepointRestoreResult", "create_savepoint", "show_savepoints",
           "delete_savepoint", "rollback_to_savepoint", "savepoint_files", "cleaned_files_needed",
           "SavepointOperation", "SavepointRestoreOperation"]
