"""Write-side options of the metadata table: its keys (Hudi's ``HoodieMetadataConfig`` names, defined in
:mod:`hoodie.configs.metadata`) read from a write's options."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from hoodie.configs import read
from hoodie.configs.metadata import (
    COLUMN_STATS_COLUMNS, COLUMN_STATS_ENABLE, COLUMN_STATS_FILE_GROUPS, COLUMN_STATS_MAX_COLUMNS,
    COMPACT_MAX_DELTA_COMMITS, ENABLE, PARTITION_STATS_ENABLE, PARTITION_STATS_FILE_GROUPS, RECORD_INDEX_ENABLE,
    RECORD_INDEX_GROWTH, RECORD_INDEX_MAX_GROUPS, RECORD_INDEX_MAX_SIZE, RECORD_INDEX_MIN_GROUPS,
)



def index_option(options: Optional[Mapping[str, Any]], key: Any) -> Optional[bool]:
    """An index's ``...enable`` write option: True, False, or None when unset.

    Raises:
        ConfigValueError: a value other than true/false.
    """
    return read(options).get(key)


def column_stats_option(options: Optional[Mapping[str, Any]]) -> Optional[bool]:
    """``hoodie.metadata.index.column.stats.enable``: True, False, or None when unset.

    Raises:
        ConfigValueError: a value other than true/false.
    """
    return read(options).get(COLUMN_STATS_ENABLE)


def enable_option(options: Optional[Mapping[str, Any]]) -> Optional[bool]:
    """``hoodie.metadata.enable`` from write options: True, False, or None when unset.

    Raises:
        ConfigValueError: a value other than true/false.
    """
    return read(options).get(ENABLE)


def max_delta_commits(options: Optional[Mapping[str, Any]]) -> int:
    """``hoodie.metadata.compact.max.delta.commits`` (default 10)."""
    return int(read(options).get(COMPACT_MAX_DELTA_COMMITS))


__all__ = ["ENABLE", "COMPACT_MAX_DELTA_COMMITS", "COLUMN_STATS_ENABLE", "COLUMN_STATS_COLUMNS",
           "COLUMN_STATS_MAX_COLUMNS", "COLUMN_STATS_FILE_GROUPS", "column_stats_option", "enable_option",
           "max_delta_commits", "PARTITION_STATS_ENABLE", "PARTITION_STATS_FILE_GROUPS", "RECORD_INDEX_ENABLE",
           "RECORD_INDEX_MIN_GROUPS", "RECORD_INDEX_MAX_GROUPS", "RECORD_INDEX_MAX_SIZE", "RECORD_INDEX_GROWTH",
           "index_option"]
