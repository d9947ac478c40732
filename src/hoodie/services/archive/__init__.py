"""Timeline archival, as Hudi does it: completed instants older than the newest commits move out of the
active timeline into the archived timeline, so that a commit's cost does not grow with the table's age.

* :mod:`~hoodie.services.archive.config`: Hudi's keys (``hoodie.archive.automatic``, ``hoodie.keep.min.commits``,
  ``hoodie.keep.max.commits``, ``hoodie.commits.archival.batch``, ``hoodie.archive.async``, ...);
* :mod:`~hoodie.services.archive.planner`: which instants, by Java's rule and guards (pure);
* :mod:`~hoodie.services.archive.action`: the action under the table lock, for the data table and its
  metadata table, and the post-commit step writers run (:func:`maybe_archive_after_commit`);
* :mod:`~hoodie.services.archive.merge`: table version 6, merging small archive files
  (``hoodie.archive.merge.*``) and recovering a merge a crash interrupted.

The archived timeline's formats are in :mod:`hoodie.format.timeline.archive_v1` (table version 6) and
:mod:`hoodie.format.timeline.lsm_writer` / :mod:`hoodie.format.timeline.archived` (versions 8/9).
"""

from hoodie.services.archive.action import (
    ArchivalResult, load_archived_timeline, maybe_archive_after_commit, run_archival, wait_for_async_archival,
)
from hoodie.services.archive.config import ArchivalConfig, ArchivalConfigError
from hoodie.services.archive.planner import ArchivalPlan, Bound, CleanFacts, plan_archival

__all__ = ["ArchivalConfig", "ArchivalConfigError", "ArchivalPlan", "ArchivalResult", "Bound", "CleanFacts",
           "plan_archival", "load_archived_timeline", "run_archival", "maybe_archive_after_commit", "wait_for_async_archival"]
