"""Rolling back a write instant (``hoodie rollback``, ``hoodie.rollback``), through the transaction.

The rollback action itself (plan, execute, complete) is :mod:`hoodie.services.rollback.action`; this
module is the entry point, which runs it as a :class:`~hoodie.services.transaction.Transaction`
under the table lock. A pending compaction is removed with its plan instead (:func:`hoodie.services.compaction.rollback.remove_compaction_plan`);
a completed TTL replacecommit whose files were stashed gets them back
(:mod:`hoodie.services.ttl.stash`).
"""

from __future__ import annotations

from typing import Any, Optional

from hoodie.faults import fault_point
from hoodie.format.metadata.table import files_partition_available
from hoodie.format.table import HoodieTable, open_table
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.timeline.savepoints import is_savepointed
from hoodie.services.compaction.rollback import remove_compaction_plan
from hoodie.services.rollback.action import StashReturn, WriteRollback
from hoodie.services.rollback.instant import ROLLBACK_ACTIONS, RollbackError, RollbackResult
from hoodie.services.metadata.writer import MetadataWriter
from hoodie.services.transaction import Operation, Transaction
from hoodie.services.ttl import stash as S


def rollback(base_path: str | HoodieTable, instant: str, *, storage_options: Optional[dict] = None,
             allow_completed: bool = True) -> RollbackResult:
    """Roll back a pending or the latest completed write instant; returns what was done.

    A completed instant can be rolled back only if no later completed write exists (Hudi's rule;
    restore to a savepoint is the tool for going further back), and not while a pending compaction
    plan reads its files. A pending compaction instant is removed with its plan (see
    :func:`hoodie.services.compaction.rollback.remove_compaction_plan`).
    """
    table = open_table(base_path, storage_options)
    tl = table.timeline  # to choose the operation; the transaction loads the table again under the lock
    if tl.has_file(I.instant_file_name(instant, I.COMPACTION, State.REQUESTED)) and not tl.has_file(
            I.instant_file_name(instant, I.COMMIT, State.COMPLETED)):
        # A pending compaction (its plan may be damaged): removed like Hudi's compaction unschedule.
        r = remove_compaction_plan(table, instant)
        return RollbackResult(r.rollback_instant or "", instant, I.COMPACTION, r.deleted, [], moved_files=r.moved)
    # A pending instant may be a live writer's until the lock says otherwise (writers hold it).
    op = RollbackOperation(instant, allow_completed)
    Transaction(op, op, table=table).run()
    assert op.outcome is not None
    return op.outcome


class RollbackOperation(Operation):
    """The rollback of one write instant as a transaction's operation (and its own in-process
    executor: the rollback's work is deleting the instant's files)."""

    table_versions = (6, 8, 9)
    schema_on_read_safe = True  # removes files / records instants only

    def __init__(self, instant: str, allow_completed: bool = True) -> None:
        self.target_instant = instant
        self.allow_completed = allow_completed
        self.what = f"rollback of {instant}"
        self.restored_from: Optional[str] = None
        self.rollback: Optional[WriteRollback] = None
        self.outcome: Optional[RollbackResult] = None

    def prepare(self, txn: Transaction) -> bool:
        """Check the target may be rolled back and plan the rollback (nothing written yet)."""
        table = txn.open_table()
        instant = self.target_instant
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
            if not self.allow_completed:
                raise RollbackError(f"{instant} is completed")
            if is_savepointed(tl, instant):
                # Hudi's validateSavepointRollbacks: the savepoint would point at a commit that is gone.
                raise RollbackError(
                    f"{instant} is savepointed: a savepointed commit cannot be rolled back. Delete the savepoint "
                    f"first (CALL delete_savepoint(instant_time => '{instant}')), then roll back. Nothing was written")
            later = [i for i in tl.completed_writes().after(instant).instants]
            if later:
                raise RollbackError(
                    f"{instant} is completed and later writes exist ({', '.join(i.timestamp for i in later[:3])}); "
                    "only the latest completed write can be rolled back")
        if table.has_metadata_table and files_partition_available(table.props):
            MetadataWriter(table).check_rollback(instant)
        self.restored_from = restored_from(table, target)
        stash = ttl_stash_of(table, target)
        back = None
        if stash is not None:
            back = StashReturn(unstash=lambda rb: S.unstash(table, target.timestamp, rb),
                               finish=lambda rb: S.finish_unstash(table, target.timestamp, rb))
        self.rollback = WriteRollback(table, target, back)
        self.rollback.plan()
        return True

    def start(self, txn: Transaction) -> Instant:
        """The rollback instant (requested, inflight), or an interrupted one resumed."""
        assert self.rollback is not None
        return self.rollback.start()

    def execute(self, txn: Transaction) -> Any:
        """Delete the instant's files (the executor step)."""
        assert self.rollback is not None
        self.rollback.execute()
        return None

    def complete(self, txn: Transaction, result: Any) -> bytes:
        """What the completed rollback instant holds."""
        assert self.rollback is not None
        return self.rollback.content()

    def finalize(self, txn: Transaction) -> None:
        """Remove the rolled-back instant; a rolled-back stash restore makes its stash restorable."""
        assert self.rollback is not None and txn.table is not None
        fault_point("rollback.after_complete")
        self.rollback.table = txn.table  # the snapshot the commit returned: the removals go into it
        self.outcome = self.rollback.finalize()
        if self.restored_from is not None:
            # The restored rows are gone again: the stash (kept until its retention) is restorable again.
            S.reopen_stash(txn.table, self.restored_from, self.target_instant)


def restored_from(table: HoodieTable, target: Instant) -> Optional[str]:
    """The TTL instant whose stash the completed commit ``target`` restored, if it is a restore."""
    if not target.is_completed or target.action not in (I.COMMIT, I.DELTA_COMMIT):
        return None
    return table.timeline.commit_metadata(target).extra_metadata.get(S.RESTORED_FROM_KEY)


def ttl_stash_of(table: HoodieTable, target: Instant) -> Optional[dict]:
    """The stash manifest of a completed TTL replacecommit whose files were stashed: the rollback
    moves them back. Refuses (before anything is written) when the stashed files are gone."""
    if not (target.is_completed and target.action == I.REPLACE_COMMIT):
        return None
    try:
        return S.stash_to_unstash(table, target.timestamp)
    except S.StashError as e:
        raise RollbackError(str(e)) from None


__all__ = ["rollback", "RollbackOperation", "restored_from", "ttl_stash_of"]
