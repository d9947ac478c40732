"""Rollback: undoing a write instant the way Hudi does it, one module per step of the room.

===================  ===========================================================================
module               what it holds
===================  ===========================================================================
``operation.py``     the entry point: :func:`~hoodie.services.rollback.operation.rollback`
                     (``hoodie rollback``, ``hoodie.rollback``, ``CALL rollback_to_instant``) and
                     ``RollbackOperation``, the transaction's operation; a pending compaction is
                     handed to compaction's own rollback (``services/compaction/rollback.py``)
``action.py``        ``WriteRollback``: the steps of rolling back one write instant (its files
                     found by markers or listing, deleted or hidden behind a command block; a
                     stashed TTL commit's files moved back), and the pending-compaction guard
``failed_writes.py`` the rollback of failed writes every writing transaction starts with, and the
                     instants this process is still committing (left alone)
``instant.py``       the rollback instant (requested, inflight, resumed after a crash),
                     ``RollbackError``, ``RollbackResult``
===================  ===========================================================================

The rollback of a pending compaction stays in the compaction's room
(:mod:`hoodie.services.compaction.rollback`): it undoes what the compaction wrote (split files, the
links of a partial compaction, base files within the plan's reserved log versions) under the
compaction's own lock, and the compaction runner resumes through it; it writes its rollback instant
through :mod:`hoodie.services.rollback.instant`.

This package's head imports nothing: the transaction imports the rollback of failed writes, while
the entry point is itself a transaction's operation, so a head that re-exported the entry point
would make importing ``hoodie.services.transaction`` first fail half-way. Import from the modules.
"""
