"""Archival settings: Hudi's ``HoodieArchivalConfig`` keys, parsed into :class:`ArchivalConfig`.

The keys, their defaults and their meaning are Hudi's (``hoodie.archive.*``, ``hoodie.keep.*``,
``hoodie.commits.archival.batch``, ``hoodie.timeline.compaction.batch.size``). Settings that would
let archival remove instants readers or the cleaner still need are refused before anything is
written (:meth:`ArchivalConfig.from_options`), with the rule they break.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from hoodie import configs as C
from hoodie.configs import compaction as CC
from hoodie.configs import read
from hoodie.configs.archive import (
    ASYNC, AUTOMATIC, BATCH, BEYOND_SAVEPOINT, MAX_COMMITS, MERGE_ENABLE, MERGE_FILES_BATCH_SIZE,
    MERGE_SMALL_FILE_LIMIT_BYTES, MIN_COMMITS, TIMELINE_COMPACTION_BATCH_SIZE,
)
from hoodie.configs.metadata import COMPACT_MAX_DELTA_COMMITS
from hoodie.errors import HoodieError

log = logging.getLogger(__name__)

# Hudi keeps the files of this many manifest versions of the LSM timeline (plus one per level compacted in
# the same archival): readers that loaded an older snapshot find its files still there.
LSM_RETAINED_MANIFESTS = 3


class ArchivalConfigError(HoodieError, ValueError):
    """Archival settings that would break readers or the cleaner; the message names the rule and the fix."""


@dataclass(frozen=True)
class ArchivalConfig:
    """Archival settings, parsed from Hudi's keys (see the module docstring)."""

    automatic: bool = AUTOMATIC.default
    run_async: bool = ASYNC.default
    min_commits: int = MIN_COMMITS.default
    max_commits: int = MAX_COMMITS.default
    batch: int = BATCH.default
    lsm_compaction_batch: int = TIMELINE_COMPACTION_BATCH_SIZE.default
    # Table version 6: merging small archive files (hoodie.archive.merge.*).
    merge_enable: bool = MERGE_ENABLE.default
    merge_files_batch_size: int = MERGE_FILES_BATCH_SIZE.default
    merge_small_file_limit_bytes: int = MERGE_SMALL_FILE_LIMIT_BYTES.default
    # The cleaner's settings, which the guards read (hoodie.cleaner.*).
    cleaner_policy: str = C.CLEANER_POLICY.default
    cleaner_commits_retained: int = C.CLEANER_COMMITS_RETAINED.default
    cleaner_hours_retained: int = C.CLEANER_HOURS_RETAINED.default
    # MOR tables: compaction's trigger (hoodie.compact.inline.*), which the compaction guard reads.
    compaction_trigger: str = "NUM_COMMITS"
    compaction_max_delta_commits: int = 5
    # Metadata table compaction (hoodie.metadata.compact.max.delta.commits): the guard of the MDT's own timeline.
    mdt_max_delta_commits: int = 10

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None) -> "ArchivalConfig":
        """Parse ``options``; refuse settings that would break readers.

        Raises:
            ArchivalConfigError: a value of the wrong type, hoodie.keep.min.commits >= hoodie.keep.max.commits,
                hoodie.keep.min.commits not above hoodie.cleaner.commits.retained (KEEP_LATEST_COMMITS), or
                hoodie.archive.beyond.savepoint=true.
        """
        o = {str(k): v for k, v in (options or {}).items() if v is not None}
        r = read(o, ArchivalConfigError)
        lo, hi = r.get(MIN_COMMITS), r.get(MAX_COMMITS)
        if lo >= hi:
            raise ArchivalConfigError(
                f"{MIN_COMMITS.key}={lo} and {MAX_COMMITS.key}={hi}: archival runs once more than {MAX_COMMITS.key} "
                f"commits are active and keeps {MIN_COMMITS.key} of them, so the maximum must be greater than the "
                f"minimum (Hudi's rule). Set e.g. {MIN_COMMITS.key}={lo} {MAX_COMMITS.key}={lo + 10}. Nothing was "
                "written")
        policy = r.get(C.CLEANER_POLICY)
        retained = r.get(C.CLEANER_COMMITS_RETAINED)
        explicit = r.is_set(MIN_COMMITS) or r.is_set(MAX_COMMITS)
        if policy == "KEEP_LATEST_COMMITS" and lo <= retained and not explicit:
            # Hudi's defaults under a cleaner retaining more commits: Hudi (HUDI-6370) widens the archival
            # window to the cleaner's, keeping max - min; so does hoodie, saying so.
            lo, hi = retained + 1, retained + 1 + (hi - lo)
            log.info("%s=%d: archival keeps %d commits (%s=%d, %s=%d), above what the cleaner retains",
                     C.CLEANER_COMMITS_RETAINED.key, retained, lo, MIN_COMMITS.key, lo, MAX_COMMITS.key, hi)
        elif policy == "KEEP_LATEST_COMMITS" and lo <= retained:
            raise ArchivalConfigError(
                f"{MIN_COMMITS.key}={lo} is not above {C.CLEANER_COMMITS_RETAINED.key}={retained}: archival would "
                "remove commits whose file versions the cleaner still keeps for queries (time travel and incremental "
                f"reads over them would lose their commit metadata). Set {MIN_COMMITS.key} to at least "
                f"{retained + 1} (and {MAX_COMMITS.key} above it), or retain fewer commits. Nothing was written")
        if r.get(BEYOND_SAVEPOINT):
            raise ArchivalConfigError(
                f"{BEYOND_SAVEPOINT.key}=true: archiving past a savepoint leaves holes in the active timeline, which "
                "hoodie's readers do not support (they take every instant older than the first active one as "
                f"archived). Leave {BEYOND_SAVEPOINT.key}=false (archival then stops at the first savepoint), or "
                "delete savepoints no longer needed. Nothing was written")
        return cls(
            automatic=r.get(AUTOMATIC), run_async=r.get(ASYNC), min_commits=lo, max_commits=hi,
            batch=r.get(BATCH), lsm_compaction_batch=r.get(TIMELINE_COMPACTION_BATCH_SIZE),
            merge_enable=r.get(MERGE_ENABLE), merge_files_batch_size=r.get(MERGE_FILES_BATCH_SIZE),
            merge_small_file_limit_bytes=r.get(MERGE_SMALL_FILE_LIMIT_BYTES),
            cleaner_policy=policy, cleaner_commits_retained=retained,
            cleaner_hours_retained=r.get(C.CLEANER_HOURS_RETAINED),
            compaction_trigger=r.get(CC.TRIGGER_STRATEGY), compaction_max_delta_commits=r.get(CC.MAX_DELTA_COMMITS),
            mdt_max_delta_commits=r.get(COMPACT_MAX_DELTA_COMMITS))


__all__ = ["ArchivalConfig", "ArchivalConfigError", "AUTOMATIC", "ASYNC", "MIN_COMMITS", "MAX_COMMITS", "BATCH",
           "BEYOND_SAVEPOINT", "MERGE_ENABLE", "MERGE_FILES_BATCH_SIZE", "MERGE_SMALL_FILE_LIMIT_BYTES",
           "TIMELINE_COMPACTION_BATCH_SIZE", "LSM_RETAINED_MANIFESTS"]
