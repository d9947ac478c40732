"""Write-side keys of the metadata table (Hudi's ``HoodieMetadataConfig`` names)."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from hoodie.configs import BOOLEAN, Int, define, read

_GROUP = "metadata table"

ENABLE = define(
    "hoodie.metadata.enable", None,
    "Writes: true keeps (or creates) the table's metadata table and updates it on every commit; false deletes "
    "it and clears hoodie.table.metadata.partitions, as Hudi does; unset keeps what the table has (maintained "
    "when present, not created). New tables have none unless true. Reads: list files through it (default false "
    "for table version 6, true for 8/9).", _GROUP, type=BOOLEAN)
COMPACT_MAX_DELTA_COMMITS = define(
    "hoodie.metadata.compact.max.delta.commits", 10,
    "Compact the metadata table after this many deltacommits since its last compaction (Hudi's default 10).",
    _GROUP, type=Int(minimum=1))


COLUMN_STATS_ENABLE = define(
    "hoodie.metadata.index.column.stats.enable", None,
    "Writes: true keeps (or creates, on a table with a metadata table) the column_stats partition and updates it "
    "on every commit; false drops it; unset keeps what the table has (maintained when present).", _GROUP,
    type=BOOLEAN)
COLUMN_STATS_COLUMNS = define(
    "hoodie.metadata.index.column.stats.column.list", None,
    "Comma-separated columns to keep statistics of; unset: Hudi's default (table version 6: every top-level "
    "column; 8/9: _hoodie_commit_time, _hoodie_record_key, _hoodie_partition_path and the first "
    "hoodie.metadata.index.column.stats.max.columns.to.index data columns).", _GROUP)
COLUMN_STATS_MAX_COLUMNS = define(
    "hoodie.metadata.index.column.stats.max.columns.to.index", 32,
    "Table versions 8/9 without a column list: index this many data columns (Hudi's default 32).", _GROUP,
    type=Int(minimum=1))
COLUMN_STATS_FILE_GROUPS = define(
    "hoodie.metadata.index.column.stats.file.group.count", 2,
    "File groups of a column_stats partition hoodie creates (Hudi's default 2); an existing partition keeps its "
    "own count.", _GROUP, type=Int(minimum=1))


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
           "max_delta_commits"]
