"""Partition pruning: the partitions a read may skip for ``(column, op, value)`` filters.

A partition is skipped only when its folder provably holds no row that passes the filters. The
folder name is decoded back to the partition column's values the way the table wrote it (hive
style ``field=value``, ``%XX`` escapes with ``hoodie.datasource.write.partitionpath.urlencode``,
``__HIVE_DEFAULT_PARTITION__`` for null and the empty string), parsed to the column's type and
rendered again with the key generator's rendering (``keygen.java_strings``): only a value that
renders to exactly the folder name counts as decoded. The filters are then evaluated on those
values with the same Arrow expression the row filter uses (``filters.filter_expression``), so
pruning can only agree with the row filter. Anything undecidable keeps the partition: folders
of timestamp-formatted fields (their name is a date format of the value, not the value), NaN,
a folder name that is not the rendering of any value, a filter value that does not cast.
"""

from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Optional, Sequence

import pyarrow as pa

from hoodie.format.keys.common import DEFAULT_PARTITION_PATH
from hoodie.format.keys.java_text import escape_path_name, java_strings, unescape_path_name
from hoodie.format.keys.generators import key_generator_from_config
from hoodie.format.keys.paths import partition_values, value_partition_fields
from hoodie.format.slice.filters import ReadError, filter_expression
from hoodie.format.table import HoodieTable

Filter = tuple[str, str, Any]
_INT = re.compile(r"-?[0-9]+")
_JAVA_DOUBLE = re.compile(r"-?(Infinity|[0-9]+\.[0-9]+(E-?[0-9]+)?)")


def value_fields(table: HoodieTable) -> tuple[list[str], list[str]]:
    """``(partition fields, the ones whose folder names hold the field's value)``: a timestamp
    field's folder is a formatted date, and a key generator that cannot be built from the table's
    properties (a custom class) gives none, so nothing is pruned."""
    if not table.partition_fields:
        return [], []
    try:
        # A table without record key fields (auto-generated keys) still names its partition fields.
        kg = key_generator_from_config(table.props, allow_auto_record_keys=True)
    except ValueError:
        return [], []
    return list(kg.partition_path_fields), value_partition_fields(kg)


def prune_partitions(table: HoodieTable, schema: pa.Schema, partitions: Sequence[str],
                     filters: Sequence[Filter]) -> list[str]:
    """The partitions of ``partitions`` that may hold rows passing every filter (AND-ed).

    ``schema`` is the table's Arrow schema (the partition columns' types). Filters on other
    columns, and filters that cannot be evaluated, prune nothing.
    """
    fields, simple = value_fields(table)
    by_col: dict[str, list[Filter]] = {}
    for f in filters:
        if f[0] in simple and f[0] in schema.names:
            by_col.setdefault(f[0], []).append(f)
    if not by_col or not partitions:
        return list(partitions)
    raw: list[Optional[dict[str, Optional[str]]]] = []
    for p in partitions:
        try:
            raw.append(partition_values(p, fields, table.hive_style))
        except ValueError:
            raw.append(None)  # not a folder this table's key generator writes: keep it
    excluded: set[int] = set()
    for col, col_filters in by_col.items():
        typ = schema.field(col).type
        values: list[Any] = []
        owner: list[int] = []
        for i, r in enumerate(raw):
            cands = None if r is None else candidates(r[col], typ, table.url_encode)
            if cands is None:
                continue  # undecidable: this column cannot exclude the partition
            values.extend(cands)
            owner.extend([i] * len(cands))
        if not owner:
            continue
        try:
            expr = filter_expression(col_filters, pa.schema([schema.field(col)]))
            probe = pa.table({col: pa.array(values, typ), "__owner": pa.array(owner, pa.int64())})
            passing = set(probe.filter(expr).column("__owner").to_pylist())
        except (ReadError, pa.ArrowException, ValueError, TypeError, OverflowError):
            # A filter value that does not cast to the column's type: the row filter decides
            # (and raises for the caller).
            continue
        excluded.update(set(owner) - passing)
    return [p for i, p in enumerate(partitions) if i not in excluded]


def candidates(segment: Optional[str], typ: pa.DataType, url_encoded: bool) -> Optional[list[Any]]:
    """Every value of type ``typ`` whose folder name is ``segment`` (None: the default partition),
    or None when that cannot be told.

    The default partition holds null and, for strings, the empty string and the literal
    ``__HIVE_DEFAULT_PARTITION__`` (which renders to the same folder).
    """
    is_string = pa.types.is_string(typ) or pa.types.is_large_string(typ)
    if segment is None:
        return [None, "", DEFAULT_PARTITION_PATH] if is_string else [None]
    text = segment
    if url_encoded:
        text = unescape_path_name(segment)
        if escape_path_name(text) != segment:
            return None  # not what url encoding writes for any value
    if is_string:
        return [text]
    parsed = _parse(text, typ)
    if parsed is None:
        return None
    out = []
    for v, t in parsed:
        try:
            arr = pa.array([v], t)
            if java_strings(arr)[0].as_py() != text:
                continue
            out.append(arr.cast(typ)[0].as_py())
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            continue
    return out or None


def _parse(text: str, typ: pa.DataType) -> Optional[list[tuple[Any, pa.DataType]]]:
    """Values the folder name may be the rendering of, each with the type it was rendered from."""
    if pa.types.is_integer(typ):
        return [(int(text), typ)] if _INT.fullmatch(text) else None
    if pa.types.is_boolean(typ):
        return [({"true": True, "false": False}[text], typ)] if text in ("true", "false") else None
    if pa.types.is_floating(typ):
        if not _JAVA_DOUBLE.fullmatch(text):
            return None  # NaN among them: Spark orders NaN above every number, Arrow does not
        v = float(text.replace("Infinity", "inf"))
        out: list[tuple[Any, pa.DataType]] = [(v, typ)]
        if pa.types.is_float64(typ):
            # A float column widened to double keeps the folders written from float values.
            out.append((v, pa.float32()))
        return out
    if pa.types.is_decimal(typ):
        try:
            return [(Decimal(text), typ)]
        except InvalidOperation:
            return None
    if pa.types.is_date(typ):
        try:
            return [(_dt.date.fromisoformat(text), pa.date32())]
        except ValueError:
            return None
    if pa.types.is_timestamp(typ):
        if not _INT.fullmatch(text):
            return None  # written with consistent logical timestamps (a formatted time): undecidable
        try:
            micros = pa.array([int(text)], pa.int64()).cast(pa.timestamp("us", tz=typ.tz))
            return [(micros.cast(typ)[0].as_py(), typ)]
        except (pa.ArrowInvalid, ValueError, OverflowError):
            return None  # not a whole number of the column's unit, or beyond Python's datetime
    return None


__all__ = ["prune_partitions", "candidates", "value_fields"]
