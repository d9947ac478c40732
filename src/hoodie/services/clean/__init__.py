"""The cleaner: remove file versions no query needs any more, the way Hudi 0.14/0.15 does it.

Pure Python, no Spark. A clean is planned from the timeline and a listing of the table, written as
``<t>.clean.requested`` (Avro ``HoodieCleanerPlan`` version 2), moved to ``<t>.clean.inflight`` (the
same plan), executed (files deleted, empty partitions removed) and completed as ``<t>.clean`` (Avro
``HoodieCleanMetadata``). References: ``table-services-upstream.md`` §1.6, ``hudi-v6-format.md``
§3.2/§3.4/§3.8.6, Hudi's ``CleanPlanner``/``CleanActionExecutor``.

Policies (``hoodie.cleaner.policy``):

* ``KEEP_LATEST_COMMITS`` (default, ``hoodie.cleaner.commits.retained`` = 10): the earliest commit to
  retain (ECTR) is the ``retained``-th newest completed commit. Every slice based at or after ECTR
  stays, plus, per file group, the newest slice before ECTR (a query as of any instant >= ECTR reads
  it) and the latest slice.
* ``KEEP_LATEST_BY_HOURS`` (``hoodie.cleaner.hours.retained`` = 24): ECTR is the first completed
  commit inside the window; the same retention rules apply.
* ``KEEP_LATEST_FILE_VERSIONS`` (``hoodie.cleaner.fileversions.retained`` = 3): the newest N slices
  of every file group stay.

Safety rules, whatever the policy:

* ECTR never passes the earliest pending instant of the commits timeline, so a running write (or a
  pending compaction/clustering) still finds every slice it started from.
* Slices whose base instant is not committed (files of running or failed writes) are never touched;
  rollback owns them.
* A slice a pending compaction or log compaction needs (base instant >= the operation's base
  instant) stays, and so does every file group in a pending clustering plan.
* Savepointed slices stay.
* Replaced file groups (completed replacecommits) are removed entirely once the replacecommit is
  before ECTR, or at once under KEEP_LATEST_FILE_VERSIONS.
* A log file that a live partial-compaction *symlink* targets is never deleted (``hoodie.format.file_group.links``);
  links and copies go with the slice they belong to.
* A partition folder is deleted only when, after the clean, nothing but ``.hoodie_partition_metadata``
  would remain in it (no live file group, no uncommitted file, no pending write touching it).
"""

from hoodie.services.clean.config import (
    AUTOMATIC_KEY, COMMITS_RETAINED_KEY, FILE_VERSIONS_RETAINED_KEY, HOURS_RETAINED_KEY, KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, MAX_COMMITS_KEY, POLICIES, POLICY_KEY, CleanConfig, CleanError,
)
from hoodie.services.clean.executor import (
    CleanOperation, CleanResult, commits_since_last_clean, maybe_clean_after_commit, run_clean,
)
from hoodie.services.clean.pending import TTL_PARTITIONS_KEY, PendingOperations, pending_operations
from hoodie.services.clean.planner import CleanPlan, plan_clean

__all__ = [
    "CleanConfig", "CleanPlan", "CleanResult", "CleanError", "CleanOperation", "PendingOperations", "POLICIES",
    "plan_clean", "run_clean", "maybe_clean_after_commit", "pending_operations", "commits_since_last_clean",
    "TTL_PARTITIONS_KEY",
    "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS",
    "POLICY_KEY", "COMMITS_RETAINED_KEY", "FILE_VERSIONS_RETAINED_KEY", "HOURS_RETAINED_KEY", "AUTOMATIC_KEY",
    "MAX_COMMITS_KEY",
]
