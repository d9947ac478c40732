"""Dropping the metadata table or some of its index partitions, and its state, the way Hudi does when
a writer turns them off (:mod:`hoodie.services.metadata.writer` keeps them up to date)."""

from __future__ import annotations

import logging
import warnings
from typing import Any, Mapping, Optional

from hoodie.faults import fault_point
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.table import (
    FILES_PARTITION, METADATA_FOLDER, PARTITIONS_INFLIGHT_PROP, PARTITIONS_PROP, MetadataTable,
    files_partition_available,
)
from hoodie.format.table import HoodieTable, update_table_properties
from hoodie.format.timeline.active import METAFOLDER
from hoodie.services.metadata.column_stats import PARTITION as COLUMN_STATS
from hoodie.services.metadata.column_stats import partitions_prop as _partitions_prop
from hoodie.services.metadata.config import (
    PARTITION_STATS_ENABLE, RECORD_INDEX_ENABLE, column_stats_option, index_option,
)
from hoodie.services.metadata.indexes import PARTITION_STATS, RECORD_INDEX

log = logging.getLogger("hoodie.services.metadata")

# The index partitions hoodie keeps, in Java's initialisation order.
INDEXES = (COLUMN_STATS, RECORD_INDEX, PARTITION_STATS)


# -- enabling, disabling, dropping --------------------------------------------------------------------
_warned: set[tuple[str, str]] = set()


def warn_once(table: HoodieTable, what: str, text: str) -> None:
    """Warn ``text`` once per table and topic ``what`` in this process."""
    key = (table.storage.uri(), what)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(text, UserWarning, stacklevel=4)


def drop_metadata_table(table: HoodieTable, reason: str = "") -> Optional[HoodieTable]:
    """Delete the metadata table the way Hudi does for a writer with ``hoodie.metadata.enable=false``:
    clear ``hoodie.table.metadata.partitions`` (and ``.inflight``) first, then delete
    ``.hoodie/metadata``. Readers then list storage. Returns the table as left (a new snapshot when
    its properties changed), or None when there was nothing to drop.

    The property goes first: a crash between the two steps leaves an unreferenced folder, which
    readers ignore and the next transaction deletes.
    """
    storage = table.storage
    props_set = any(table.props.get(k) for k in (PARTITIONS_PROP, PARTITIONS_INFLIGHT_PROP))
    folder = storage.exists(METADATA_FOLDER)
    if not props_set and not folder:
        return None
    if props_set:
        table = update_table_properties(table, {k: "" for k in (PARTITIONS_PROP, PARTITIONS_INFLIGHT_PROP)
                                                if k in table.props})
        fault_point("metadata.after_disable_properties")
    if folder:
        storage.delete_dir(METADATA_FOLDER)
    log.info("dropped the metadata table of %s%s", table.base_path, f": {reason}" if reason else "")
    return table


def drop_index_partitions(table: HoodieTable, options: Optional[Mapping[str, Any]] = None
                          ) -> tuple[HoodieTable, list[str]]:
    """Drop the MDT partitions hoodie does not maintain (bloom_filters, secondary and expression indexes),
    and each of column_stats, partition_stats and record_index when its ``...enable`` option is false or
    it is not fully there (only inflight, or its folder missing or unreadable), as Java does when an index
    is disabled; partition_stats goes with column_stats (it is built from it) and on table version 6.
    Removes them from the data table's properties, then deletes their folders. Returns the table as left
    (a new snapshot when its properties changed) and the partitions dropped."""
    props = table.props
    listed = _partitions_prop(props)
    inflight = _partitions_prop(props, PARTITIONS_INFLIGHT_PROP)
    mdt = table.storage.child(METADATA_FOLDER)
    folders = [s.name for s in mdt.list_dir("") if s.is_dir and s.name != METAFOLDER] if mdt.exists("") else []
    keep = {FILES_PARTITION}
    disabled = {COLUMN_STATS: column_stats_option(options) is False,
                PARTITION_STATS: index_option(options, PARTITION_STATS_ENABLE) is False,
                RECORD_INDEX: index_option(options, RECORD_INDEX_ENABLE) is False}
    for part in INDEXES:
        if (not disabled[part] and part in listed and part not in inflight and part in folders
                and _index_readable(table, part)):
            keep.add(part)
    if PARTITION_STATS in keep and (COLUMN_STATS not in keep or table.table_version < 8):
        keep.discard(PARTITION_STATS)
    others = sorted({p for p in listed + inflight + folders if p not in keep})
    if not others:
        return table, []
    table = update_table_properties(table, {
        PARTITIONS_PROP: ",".join(p for p in listed if p in keep),
        PARTITIONS_INFLIGHT_PROP: ",".join(p for p in inflight if p in keep)})
    for p in others:
        if mdt.exists(p):
            mdt.delete_dir(p)
    asked = [p for p in others if disabled.get(p)]
    if asked:
        warn_once(table, "disabled-indexes", f"{table.base_path}: dropped the metadata table's {', '.join(asked)} "
                  "partition(s) because their hoodie.metadata.*.enable option is false, as Hudi does")
    rest = [p for p in others if not disabled.get(p)]
    if rest:
        warn_once(table, "indexes",
                  f"{table.base_path}: dropped the metadata-table partitions {', '.join(rest)}, which hoodie does not "
                  "maintain (it keeps files, column_stats, partition_stats and record_index up to date) or which were "
                  "not fully built; Java Hudi rebuilds them on its next write with the index enabled "
                  "(docs/metadata-table.md)")
    return table, others


def drop_index_partition(table: HoodieTable, partition: str) -> HoodieTable:
    """Drop one index partition: out of the data table's properties first, then its folder. Returns the
    new snapshot of the table."""
    new = update_table_properties(table, {
        PARTITIONS_PROP: ",".join(p for p in _partitions_prop(table.props) if p != partition),
        PARTITIONS_INFLIGHT_PROP: ",".join(p for p in _partitions_prop(table.props, PARTITIONS_INFLIGHT_PROP)
                                           if p != partition)})
    mdt = table.storage.child(METADATA_FOLDER)
    if mdt.exists(partition):
        mdt.delete_dir(partition)
    return new


def _index_readable(table: HoodieTable, partition: str) -> bool:
    """Whether an index partition's folder holds file groups hoodie can write into (else it is dropped
    rather than failing the commit)."""
    try:
        return bool(MetadataTable(table).partition_slices(partition))
    except (MetadataTableError, ValueError, OSError):
        return False


def metadata_table_state(table: HoodieTable) -> str:
    """``none`` (no MDT), ``ready`` (``files`` listed and in sync with the data timeline) or
    ``broken: <why>`` (partially initialised, missing, stale or unreadable)."""
    props = table.props
    folder = table.storage.exists(f"{METADATA_FOLDER}/.hoodie/hoodie.properties")
    if not files_partition_available(props):
        if folder or table.storage.exists(METADATA_FOLDER) or props.get(PARTITIONS_INFLIGHT_PROP):
            return "broken: not initialised (files is not in hoodie.table.metadata.partitions)"
        return "none"
    if not folder:
        return "broken: .hoodie/metadata is missing"
    try:
        MetadataTable(table).check_in_sync()
    except MetadataTableError as e:
        return f"broken: {e}"
    return "ready"


__all__ = ["INDEXES", "warn_once", "drop_metadata_table", "drop_index_partitions", "drop_index_partition",
           "metadata_table_state"]
