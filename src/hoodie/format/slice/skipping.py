"""Data skipping: the file slices a read may skip by the column statistics of the metadata table.

Hudi's data skipping (``hoodie.enable.data.skipping``; ``HoodieFileIndex`` with the column stats
index): for filters ``(column, op, value)`` on any column, a file whose ``column_stats`` record
proves that no row of it passes a filter is not read. hoodie skips a whole **file slice**, and only
when **every** file of it (base file and log files) is proven empty of matches: a file without a
record for the column, or with values but no bounds, might match; a slice is kept if any of its
files might. Merging only ever returns values some file of the slice holds (an update's values are
in its log file's records, a kept older value in the base file), so a slice none of whose files holds
a matching value yields no matching row.

Per filter, against ``[min, max]``, the null count and the value count of one file (nulls never pass
a comparison; ``not in`` and ``!=`` are decided only when every value is the same):

* ``=`` / ``in``: some value within ``[min, max]``; ``<``, ``<=``, ``>``, ``>=``: the bound allows it;
* ``!=`` / ``not in``: kept unless ``min == max`` equals (one of) the value(s) and no value is null
  (a null passes ``not in`` in Arrow's semantics);
* a file with no values (all null, or a log file of deletes only) passes nothing but ``not in``.

Filter values are cast to the column's Arrow type exactly as the row filter casts them, then
compared in the statistics' domain (dates as days; timestamps as their integer in the file's unit,
which only table version 9 records, so timestamp filters skip nothing on 6 and 8). Anything that does
not compare (a column whose type changed) keeps the file.

When the statistics are not usable (no ``column_stats`` partition, a metadata table behind the data
timeline, a table whose schema evolved on read: renamed columns would be looked up under their new
names), nothing is skipped; if skipping was asked for explicitly, a warning says why.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import warnings
from typing import Any, Mapping, Optional, Sequence

import pyarrow as pa

from hoodie.configs import read
from hoodie.configs.reads import ENABLE_DATA_SKIPPING
from hoodie.format.file_group.fsview import FileSlice
from hoodie.format.metadata.column_stats import VT_TIMESTAMP_MICROS, VT_TIMESTAMP_MILLIS, ColumnStats
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.index_reader import (
    column_stats_available, partition_stats_available, read_column_stats, read_partition_stats, stats_by_file,
)
from hoodie.format.metadata.table import MetadataTable
from hoodie.format.schema_on_read import schema_files
from hoodie.format.slice.filters import Filter, ReadError
from hoodie.format.table import HoodieTable



def data_skipping_enabled(table: HoodieTable, options: Optional[Mapping[str, Any]]) -> Optional[bool]:
    """The read option (None when unset) resolved: True/False as given, else by table version."""
    given = read(options, ReadError).get(ENABLE_DATA_SKIPPING)
    return given


def _usable(table: HoodieTable) -> Optional[str]:
    """Why the column statistics cannot be used, or None."""
    if not column_stats_available(table.props):
        return "the table's metadata table has no column_stats partition"
    if schema_files(table.storage):
        return "the table's schema evolved on read (.hoodie/.schema): statistics are kept by column name"
    return None


class _NoStats(Exception):
    pass


def _domain(value: Any, typ: pa.DataType, stats: ColumnStats) -> Any:
    """A filter value (already of the column's type) in the statistics' domain."""
    if value is None:
        raise _NoStats()
    if pa.types.is_timestamp(typ):
        vt = stats.value_type[0] if stats.value_type else None
        unit = {VT_TIMESTAMP_MICROS: "us", VT_TIMESTAMP_MILLIS: "ms"}.get(vt)
        if unit is None:
            raise _NoStats()  # the file's unit is not recorded
        return pa.scalar(value, typ).cast(pa.timestamp(unit, typ.tz)).cast(pa.int64()).as_py()
    if pa.types.is_date32(typ):
        return (value - _dt.date(1970, 1, 1)).days
    if pa.types.is_decimal(typ):
        return decimal.Decimal(value)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_boolean(typ) \
            or pa.types.is_integer(typ) or pa.types.is_floating(typ):
        return value
    raise _NoStats()


def _cast(val: Any, typ: pa.DataType) -> Any:
    return (val if isinstance(val, pa.Scalar) else pa.scalar(val)).cast(typ).as_py()


def file_might_match(stats: Optional[ColumnStats], op: str, val: Any, typ: pa.DataType) -> bool:
    """Whether a file with ``stats`` for the filter's column may hold a row passing ``(op, val)``."""
    if stats is None:
        return True
    if stats.value_count <= stats.null_count:  # no non-null value at all
        return op == "not in" and stats.value_count > 0
    lo, hi = stats.python_min(), stats.python_max()
    if lo is None or hi is None:
        return True
    try:
        if op in ("in", "not in"):
            vals = [_domain(_cast(v, typ), typ, stats) for v in val]
            if op == "in":
                return any(lo <= v <= hi for v in vals)
            return not (stats.null_count == 0 and lo == hi and any(v == lo for v in vals))
        v = _domain(_cast(val, typ), typ, stats)
        if op in ("=", "=="):
            return lo <= v <= hi
        if op in ("!=", "<>"):
            return not (lo == hi == v)
        if op == "<":
            return lo < v
        if op == "<=":
            return lo <= v
        if op == ">":
            return hi > v
        if op == ">=":
            return hi >= v
    except (_NoStats, TypeError, ValueError, ArithmeticError, pa.ArrowException):
        return True
    return True


# Filters a partition's statistics may decide: its null count is not kept exact enough for "not in"/"!=".
_PARTITION_OPS = ("=", "==", "in", "<", "<=", ">", ">=")


def prune_by_partition_stats(table: HoodieTable, slices: Sequence[FileSlice], cols: Sequence[tuple]) -> list[FileSlice]:
    """The slices of partitions whose ``partition_stats`` do not prove that no row passes a filter.

    Used only for reads of the latest snapshot (the statistics describe the partitions' latest slices)
    and when no compaction is pending (Java computes them without the slice a pending compaction
    merges in). Partitions without statistics are kept."""
    if not partition_stats_available(table.props) or table.timeline.pending_compactions().instants:
        return list(slices)
    try:
        pstats = read_partition_stats(MetadataTable(table))
    except MetadataTableError:
        return list(slices)
    by_part: dict[str, dict[str, ColumnStats]] = {}
    for s in pstats.values():
        by_part.setdefault(s.partition, {})[s.column_name] = s
    out = []
    for sl in slices:
        got = by_part.get(sl.partition)
        if got and any(op in _PARTITION_OPS and c in got and not file_might_match(got[c], op, v, t)
                       for c, op, v, t in cols):
            continue
        out.append(sl)
    return out


def skip_slices(table: HoodieTable, slices: Sequence[FileSlice], filters: Sequence[Filter], schema: pa.Schema,
                options: Optional[Mapping[str, Any]], read_optimized: bool = False,
                latest: bool = False) -> list[FileSlice]:
    """The slices of ``slices`` that may hold a row passing every filter (module doc); all of them
    when data skipping is off or the statistics are not usable. ``latest``: the read is of the latest
    snapshot, so partitions may be pruned by ``partition_stats`` first."""
    given = data_skipping_enabled(table, options)
    enabled = bool(given)  # off unless asked for: see ENABLE_DATA_SKIPPING's doc
    if not enabled or not filters or not slices:
        return list(slices)
    if latest and not schema_files(table.storage):
        slices = prune_by_partition_stats(table, slices, [(c, op, v, schema.field(c).type) for c, op, v in filters
                                                           if c in schema.names])
    why = _usable(table)
    stats: dict[str, dict[str, ColumnStats]] = {}
    if why is None:
        try:
            stats = stats_by_file(read_column_stats(MetadataTable(table)))
        except MetadataTableError as e:
            why = f"its column statistics cannot be read ({e})"
    if why is not None:
        if given:
            warnings.warn(f"hoodie.enable.data.skipping=true on {table.storage.uri()}: no file is skipped, {why}",
                          UserWarning, stacklevel=4)
        return list(slices)
    cols = [(c, op, v, schema.field(c).type) for c, op, v in filters if c in schema.names]
    out = []
    for sl in slices:
        files = ([sl.base_file.name] if sl.base_file else []) + ([] if read_optimized else
                                                                 [lf.name for lf in sl.log_files])
        if not files or all(any(not file_might_match(stats.get(f, {}).get(c), op, v, t) for c, op, v, t in cols)
                            for f in files):
            if files:
                continue
        out.append(sl)
    return out


__all__ = ["ENABLE_DATA_SKIPPING", "data_skipping_enabled", "file_might_match", "skip_slices",
           "prune_by_partition_stats"]
