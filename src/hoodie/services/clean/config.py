"""Cleaner settings: Hudi's keys (``hoodie.cleaner.*``, ``hoodie.clean.*``), parsed into :class:`CleanConfig`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie import configs as C
from hoodie.configs import read
from hoodie.errors import HoodieError

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)

# One typed definition per key, in hoodie.configs (the constants are those properties: str subclasses).
POLICY_KEY = C.CLEANER_POLICY
COMMITS_RETAINED_KEY = C.CLEANER_COMMITS_RETAINED
FILE_VERSIONS_RETAINED_KEY = C.CLEANER_FILE_VERSIONS_RETAINED
HOURS_RETAINED_KEY = C.CLEANER_HOURS_RETAINED
AUTOMATIC_KEY = C.CLEAN_AUTOMATIC
MAX_COMMITS_KEY = C.CLEAN_MAX_COMMITS


class CleanError(HoodieError):
    """A clean cannot be planned or executed; the message says why and what to do."""


@dataclass(frozen=True)
class CleanConfig:
    """Cleaner settings, parsed from Hudi's keys (``hoodie.cleaner.*``, ``hoodie.clean.*``)."""

    policy: str = C.CLEANER_POLICY.default
    commits_retained: int = C.CLEANER_COMMITS_RETAINED.default
    file_versions_retained: int = C.CLEANER_FILE_VERSIONS_RETAINED.default
    hours_retained: int = C.CLEANER_HOURS_RETAINED.default
    automatic: bool = C.CLEAN_AUTOMATIC.default
    max_commits: int = C.CLEAN_MAX_COMMITS.default
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None) -> "CleanConfig":
        """Parse options; errors name the key and the accepted values."""
        o = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
        cfg = read(o, CleanError)
        return cls(
            policy=cfg.get(POLICY_KEY),
            commits_retained=cfg.get(COMMITS_RETAINED_KEY),
            file_versions_retained=cfg.get(FILE_VERSIONS_RETAINED_KEY),
            hours_retained=cfg.get(HOURS_RETAINED_KEY),
            automatic=cfg.get(AUTOMATIC_KEY),
            max_commits=cfg.get(MAX_COMMITS_KEY),
            options=o,
        )


def _config(config: Optional[Mapping[str, Any] | CleanConfig]) -> CleanConfig:
    return config if isinstance(config, CleanConfig) else CleanConfig.from_options(config)
