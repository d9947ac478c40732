"""Clean keys (Hudi's ``HoodieCleanConfig``); ``hoodie.services.clean.CleanConfig`` reads them."""

from __future__ import annotations

from hoodie.configs.registry import define
from hoodie.configs.rules import BOOLEAN, Enum, Int

CLEAN_POLICIES = ("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS")
_CLEAN = "clean"
CLEANER_POLICY = define("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS",
                        "Cleaning policy: KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS.",
                        _CLEAN, aliases=("hoodie.clean.policy",), type=Enum(CLEAN_POLICIES, what="a cleaning policy"))
CLEANER_COMMITS_RETAINED = define("hoodie.cleaner.commits.retained", 10,
                                  "KEEP_LATEST_COMMITS: number of newest commits whose file versions stay queryable.",
                                  _CLEAN, aliases=("hoodie.clean.commits.retained",), type=Int(minimum=1))
CLEANER_FILE_VERSIONS_RETAINED = define("hoodie.cleaner.fileversions.retained", 3,
                                        "KEEP_LATEST_FILE_VERSIONS: number of newest file slices kept per file group.",
                                        _CLEAN, aliases=("hoodie.clean.fileversions.retained",), type=Int(minimum=1))
# 0 hours is allowed: only the state after the newest commit must stay readable.
CLEANER_HOURS_RETAINED = define("hoodie.cleaner.hours.retained", 24,
                                "KEEP_LATEST_BY_HOURS: file versions needed by queries over the last N hours stay.",
                                _CLEAN, aliases=("hoodie.clean.hours.retained",), type=Int(minimum=0))
CLEAN_AUTOMATIC = define("hoodie.clean.automatic", True,
                         "Run the cleaner after each commit (maybe_clean_after_commit).", _CLEAN, type=BOOLEAN)
CLEAN_MAX_COMMITS = define("hoodie.clean.max.commits", 1,
                           "Automatic clean runs once at least this many commits completed since the last clean.",
                           _CLEAN, type=Int(minimum=1))
