"""Table services: every action that changes a table, each an ``Operation`` that commits through the one
:class:`~hoodie.services.transaction.Transaction` and its commit point (:func:`hoodie.services.commit.commit`).
Planning is pure Python; data work goes to an executor the caller passes in (the Spark engine passes its own).

=========================================  ==========================================  ==============================
action (timeline instant)                  operation                                    module
=========================================  ==========================================  ==============================
write: insert, upsert, delete, overwrite   ``WriteOperation``                           ``services/write/``
delete_partition (replacecommit)           ``DeletePartitionOperation``                 ``services/delete_partition.py``
compaction (commit)                        ``CompactionCommit``                         ``services/compaction/runner.py``
compaction rollback, plan removal          ``_CompactionRollback``, ``_PlanRemoval``    ``services/compaction/rollback.py``
clean                                      ``CleanOperation``                           ``services/clean/executor.py``
rollback of a write                        ``RollbackOperation``                        ``services/rollback/operation.py``
                                           (its steps: ``WriteRollback``)               ``services/rollback/action.py``
rollback of failed writes (each write)     ``WriteRollback``, in the write's            ``services/rollback/failed_writes.py``
                                           transaction
partition TTL (replacecommit)              ``TTLOperation``                             ``services/ttl/service.py``
record TTL (commit, deltacommit)           ``RecordTTLOperation``                       ``services/ttl/record_ttl.py``
TTL stash restore (commit)                 ``RestoreOperation``                         ``services/ttl/stash.py``
savepoint                                  ``SavepointOperation``                       ``services/savepoint.py``
restore to a savepoint                     ``SavepointRestoreOperation``                ``services/savepoint.py``
metadata table: deltacommit, compaction,   ``MetadataWriter`` (inside the data          ``services/metadata/writer.py``
clean, rollback                            table's commit point)
timeline archival (no instant)             ``run_archival`` (under the table lock)      ``services/archive/action.py``
=========================================  ==========================================  ==============================

Around them: ``transaction.py`` (the one order of steps), ``commit.py`` (the commit point: metadata
table, completed instant, markers), ``metadata/`` (the metadata table every commit records in first),
``inline.py`` (the services a write runs after its commit, as post-commit hooks its entry points pass).
"""
