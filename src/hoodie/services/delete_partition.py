"""The one writer of ``delete_partition`` replacecommits: a user's delete_partition write (pure
Python or Spark) and every partition TTL run commit through :class:`DeletePartitionOperation`.

The instant files are Hudi's (``SparkDeletePartitionCommitActionExecutor``,
table-services-upstream.md §1.5):

* ``<t>.replacecommit.requested``: Avro ``HoodieRequestedReplaceMetadata`` with operationType
  DELETE_PARTITION and empty ``extraMetadata``;
* ``<t>.replacecommit.inflight``: JSON ``HoodieCommitMetadata`` of an empty workload profile
  (no write stats, empty extraMetadata, operationType DELETE_PARTITION);
* ``<t>.replacecommit``: ``partitionToReplaceFileIds`` (the live file groups of the partitions),
  the table schema in ``extraMetadata``, no write stats. No data file is touched.

A pending delete_partition names no partitions (as in Hudi): pending-operation checks
(:func:`hoodie.services.clean.pending_operations`) count it as touching every partition until it
completes or is rolled back.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from hoodie.faults import fault_point
from hoodie.format.slice import writer as W
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.instant import Instant
from hoodie.services.transaction import Operation, Transaction

DELETE_PARTITION = "DELETE_PARTITION"


def requested_content() -> bytes:
    """The ``.replacecommit.requested`` of a delete_partition."""
    return plans.write_avro_metadata("HoodieRequestedReplaceMetadata",
                                     plans.requested_replace_metadata(DELETE_PARTITION))


def is_delete_partition(requested: Optional[Mapping[str, Any]]) -> bool:
    """Whether a replacecommit's requested metadata is a delete_partition's."""
    return bool(requested) and requested.get("operationType") == DELETE_PARTITION \
        and not requested.get("clusteringPlan")


class DeletePartitionOperation(Operation):
    """A delete_partition replacecommit replacing ``partition_to_replace_file_ids`` (see the module
    docstring). ``extra_metadata`` goes into the completed instant's extraMetadata. Used as a step
    of other operations (a write, a TTL run), or on its own through :func:`delete_partitions`."""

    what = "delete_partition"
    table_versions = (6, 8, 9)

    def __init__(self, partition_to_replace_file_ids: Mapping[str, list[str]], *, instant: Optional[str] = None,
                 extra_metadata: Optional[Mapping[str, str]] = None, fault: Optional[str] = None) -> None:
        self.partition_to_replace_file_ids = {p: sorted(ids) for p, ids in sorted(partition_to_replace_file_ids.items())}
        self.instant_time = instant
        self.extra_metadata = dict(extra_metadata or {})
        self.fault = fault

    def start(self, txn: Transaction) -> Instant:
        """``.replacecommit.requested`` then ``.replacecommit.inflight``."""
        assert txn.table is not None
        return W.start_commit(txn.table, I.REPLACE_COMMIT, self.instant_time,
                              inflight=CommitMetadata(operation_type=DELETE_PARTITION),
                              requested_content=requested_content())

    def complete(self, txn: Transaction, result: Any) -> CommitMetadata:
        """The replacecommit's metadata: the file groups it replaces."""
        assert txn.table is not None and txn.instant is not None
        if self.fault:
            fault_point(self.fault)
        table = txn.table
        extra = {"schema": json.dumps(table.avro_schema(), separators=(",", ":"))}
        extra.update(self.extra_metadata)
        done = CommitMetadata(partition_to_write_stats={}, compacted=False, extra_metadata=extra,
                              operation_type=DELETE_PARTITION,
                              partition_to_replace_file_ids=self.partition_to_replace_file_ids)
        return done


def delete_partitions(table: HoodieTable, partition_to_replace_file_ids: Mapping[str, list[str]], *,
                      instant: Optional[str] = None, extra_metadata: Optional[Mapping[str, str]] = None,
                      options: Optional[Mapping[str, Any]] = None, rollback_failed_writes: bool = False,
                      fault: Optional[str] = None) -> Instant:
    """Commit a delete_partition replacecommit removing the given file groups, in its own
    transaction (under the table lock); returns the completed instant.

    ``rollback_failed_writes`` first rolls back every failed (pending) write, as Hudi's write client
    does before a delete_partition write: a caller that is the table's only writer (a bring-back
    dropping partitions from its cold table) needs it, or a drop it was killed in stays pending for
    ever. ``fault`` names a fault point just before the commit (crash tests)."""
    if not partition_to_replace_file_ids:
        raise ValueError("delete_partitions needs at least one partition with file groups")
    op = DeletePartitionOperation(partition_to_replace_file_ids, instant=instant, extra_metadata=extra_metadata,
                                  fault=fault)
    op.rollback_failed_writes = rollback_failed_writes
    txn = Transaction(op, table=table, options=options).run()
    assert txn.completed is not None
    return txn.completed


__all__ = ["DeletePartitionOperation", "delete_partitions", "requested_content", "is_delete_partition",
           "DELETE_PARTITION"]
