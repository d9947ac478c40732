"""Cleaner settings: Hudi's keys (``hoodie.cleaner.*``, ``hoodie.clean.*``), parsed into :class:`CleanConfig`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.configs import define
from hoodie.errors import HoodieError

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)

POLICY_KEY = "hoodie.cleaner.policy"
COMMITS_RETAINED_KEY = "hoodie.cleaner.commits.retained"
FILE_VERSIONS_RETAINED_KEY = "hoodie.cleaner.fileversions.retained"
HOURS_RETAINED_KEY = "hoodie.cleaner.hours.retained"
AUTOMATIC_KEY = "hoodie.clean.automatic"
MAX_COMMITS_KEY = "hoodie.clean.max.commits"

_GROUP = "clean"
define(POLICY_KEY, KEEP_LATEST_COMMITS,
       "Cleaning policy: KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS.",
       _GROUP, aliases=("hoodie.clean.policy",))
define(COMMITS_RETAINED_KEY, "10",
       "KEEP_LATEST_COMMITS: number of newest commits whose file versions stay queryable.",
       _GROUP, aliases=("hoodie.clean.commits.retained",))
define(FILE_VERSIONS_RETAINED_KEY, "3",
       "KEEP_LATEST_FILE_VERSIONS: number of newest file slices kept per file group.",
       _GROUP, aliases=("hoodie.clean.fileversions.retained",))
define(HOURS_RETAINED_KEY, "24",
       "KEEP_LATEST_BY_HOURS: file versions needed by queries over the last N hours stay.",
       _GROUP, aliases=("hoodie.clean.hours.retained",))
define(AUTOMATIC_KEY, "true", "Run the cleaner after each commit (maybe_clean_after_commit).", _GROUP)
define(MAX_COMMITS_KEY, "1",
       "Automatic clean runs once at least this many commits completed since the last clean.", _GROUP)


class CleanError(HoodieError):
    """A clean cannot be planned or executed; the message says why and what to do."""


def _get(options: Mapping[str, Any], key: str, *aliases: str) -> Optional[str]:
    for k in (key, *aliases):
        v = options.get(k)
        if v is not None and str(v).strip() != "":
            return str(v).strip()
    return None


def _int(options: Mapping[str, Any], key: str, default: int, minimum: int, *aliases: str) -> int:
    raw = _get(options, key, *aliases)
    if raw is None:
        return default
    try:
        v = int(raw)
    except ValueError:
        raise CleanError(f"{key}={raw!r} is not an integer") from None
    if v < minimum:
        raise CleanError(f"{key}={v} must be at least {minimum}")
    return v


def _bool(options: Mapping[str, Any], key: str, default: bool) -> bool:
    raw = _get(options, key)
    if raw is None:
        return default
    if raw.lower() not in ("true", "false"):
        raise CleanError(f"{key}={raw!r}: use true or false")
    return raw.lower() == "true"


@dataclass(frozen=True)
class CleanConfig:
    """Cleaner settings, parsed from Hudi's keys (``hoodie.cleaner.*``, ``hoodie.clean.*``)."""

    policy: str = KEEP_LATEST_COMMITS
    commits_retained: int = 10
    file_versions_retained: int = 3
    hours_retained: int = 24
    automatic: bool = True
    max_commits: int = 1
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None) -> "CleanConfig":
        """Parse options; errors name the key and the accepted values."""
        o = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
        policy = (_get(o, POLICY_KEY, "hoodie.clean.policy") or KEEP_LATEST_COMMITS).upper()
        if policy not in POLICIES:
            raise CleanError(f"{POLICY_KEY}={policy!r} is not a cleaning policy; use one of {', '.join(POLICIES)}")
        return cls(
            policy=policy,
            commits_retained=_int(o, COMMITS_RETAINED_KEY, 10, 1, "hoodie.clean.commits.retained"),
            file_versions_retained=_int(o, FILE_VERSIONS_RETAINED_KEY, 3, 1, "hoodie.clean.fileversions.retained"),
            # 0 hours is allowed: only the state after the newest commit must stay readable.
            hours_retained=_int(o, HOURS_RETAINED_KEY, 24, 0, "hoodie.clean.hours.retained"),
            automatic=_bool(o, AUTOMATIC_KEY, True),
            max_commits=_int(o, MAX_COMMITS_KEY, 1, 1),
            options=o,
        )


def _config(config: Optional[Mapping[str, Any] | CleanConfig]) -> CleanConfig:
    return config if isinstance(config, CleanConfig) else CleanConfig.from_options(config)
