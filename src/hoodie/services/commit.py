"""The commit point: the one function that completes an instant, for every action of every table.

:func:`commit` does, in this order:

1. record the instant in the table's metadata table (``record``: the transaction passes
   :meth:`hoodie.services.transaction.Transaction.record_in_metadata_table`; the metadata table's own
   instants pass nothing, it has no metadata table of its own);
2. write the completed instant file: from here on the instant is committed;
3. remove the instant's markers (``.hoodie/.temp/<instant>``);
4. return the completed instant and the table's new snapshot: the snapshot it was given, with the
   properties the metadata-table step left and the completed instant added (no listing).

A transaction's commit step calls it with what its operation prepared (delta-rs: a
``PreparedCommit`` becomes a ``PostCommit``; pyiceberg: ``commit_transaction``); so do the rollbacks
of failed writes a transaction runs first, and the metadata table's deltacommits, compactions, cleans
and rollbacks. The format layer refuses a completion that did not come this way on a table with a
metadata table (:func:`hoodie.format.timeline.active.write_completion`): the metadata table would
miss the instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from hoodie.format.slice import writer as W
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import active as T
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.instant import Instant

# Records an instant about to complete, with the bytes its completed file will hold, in the table's
# metadata table; raises when it cannot (the instant must not complete then). Returns the table's
# snapshot as the recording left it (it may change the table's properties), or None.
MetadataRecorder = Callable[[Instant, bytes], Optional[HoodieTable]]


@dataclass(frozen=True)
class Committed:
    """What :func:`commit` returns: the completed instant, and the table's snapshot after it (the
    completed instant added to its timeline; None for the metadata table's own instants, which name
    no table object)."""

    instant: Instant
    table: Optional[HoodieTable] = None


def commit(storage: Storage, inflight: Instant, content: bytes | CommitMetadata, *,
           record: Optional[MetadataRecorder] = None, table: Optional[HoodieTable] = None) -> Committed:
    """Complete ``inflight`` on the timeline at ``storage`` with ``content`` (see the module docstring).

    ``record`` records the instant in the metadata table first; without it a table that has a
    metadata table refuses the completion (``TimelineError``), before anything is written.
    ``table`` (the transaction's snapshot of the table at ``storage``) comes back with the completed
    instant added (:meth:`HoodieTable.wrote`), as a listing would show it: the caller goes on with it.
    """
    # Checked first (still inflight, lock still held): a lost lock must not reach the metadata table.
    pending = T.prepare_completion(storage, inflight, content)
    if record is not None:
        table = record(inflight, pending.data) or table
    done = T.write_completion(pending, metadata_table_updated=record is not None)
    W.delete_markers(storage, inflight.timestamp)
    return Committed(done, table.wrote(done) if table is not None else None)


# A commit point bound to one table and its metadata-table recorder: (inflight, content) -> Committed
# (:meth:`hoodie.services.transaction.Transaction.commit`).
Commit = Callable[[Instant, "bytes | CommitMetadata"], Committed]


__all__ = ["commit", "Commit", "Committed", "MetadataRecorder"]
