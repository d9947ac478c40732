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


def enable_option(options: Optional[Mapping[str, Any]]) -> Optional[bool]:
    """``hoodie.metadata.enable`` from write options: True, False, or None when unset.

    Raises:
        ConfigValueError: a value other than true/false.
    """
    return read(options).get(ENABLE)


def max_delta_commits(options: Optional[Mapping[str, Any]]) -> int:
    """``hoodie.metadata.compact.max.delta.commits`` (default 10)."""
    return int(read(options).get(COMPACT_MAX_DELTA_COMMITS))


__all__ = ["ENABLE", "COMPACT_MAX_DELTA_COMMITS", "enable_option", "max_delta_commits"]
