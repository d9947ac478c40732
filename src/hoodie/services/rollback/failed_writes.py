"""The rollback of failed writes every writing transaction starts with (Hudi's EAGER failed-writes
clean policy under single-writer mode): every pending commit, deltacommit and replacecommit that is
not a clustering plan and not an instant this process is still committing (the live instants a
transaction registers between its start and its commit) is rolled back, each through the
transaction's commit point.
"""

from __future__ import annotations

import functools
import threading
from typing import Iterable, Optional

from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.instant import Instant
from hoodie.format.table import HoodieTable
from hoodie.services.commit import Commit
from hoodie.services.commit import commit as commit_point
from hoodie.services.rollback.action import WriteRollback
from hoodie.services.rollback.instant import ROLLBACK_ACTIONS, RollbackResult


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


_live_guard = threading.Lock()
_live: set[tuple[str, str]] = set()  # (table uri, instant) of transactions of this process not yet committed


def register_live_instant(table_uri: str, instant: str) -> tuple[str, str]:
    """Record that this process is committing ``instant`` (a transaction between start and
    commit): no failed write, so eager rollbacks leave it alone. Returns the key to unregister."""
    key = (table_uri, instant)
    with _live_guard:
        _live.add(key)
    return key


def unregister_live_instant(key: tuple[str, str]) -> None:
    """The transaction of ``key`` committed or gave up."""
    with _live_guard:
        _live.discard(key)


def live_instants(table_uri: Optional[str] = None) -> set[str]:
    """Instants this process is committing right now (of one table, or of all)."""
    with _live_guard:
        return {ts for uri, ts in _live if table_uri is None or uri == table_uri}


def rollback_failed_writes(table: HoodieTable, exclude: Iterable[str] = (), *,
                           commit: Optional[Commit] = None) -> list[RollbackResult]:
    """Roll back every failed (pending) write before a new write starts (Hudi's EAGER policy).

    Instants this process is still committing (another thread's transaction, an async TTL run)
    are no failed writes and stay. ``commit`` completes each rollback instant: the writing
    transaction's (:meth:`hoodie.services.transaction.Transaction.commit`, which records it in the
    metadata table); without it a table with a metadata table refuses the completion."""
    skip = set(exclude) | live_instants(table.storage.uri())
    done: Commit = commit or functools.partial(commit_point, table.storage, table=table)
    results = []
    # ``table`` is the transaction's, listed under the lock in its prepare step: no listing again.
    for inst in pending_failed_writes(table, skip):
        rb = WriteRollback(table, inst)
        results.append(rb.run(done))
        table = rb.table  # the snapshot the rollback's commit returned, its removals in it
    return results
