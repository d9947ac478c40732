"""Row filters of a read: ``(column, op, value)`` triples, checked and turned into one Arrow expression.

The reader filters rows with :func:`filter_expression` and partition pruning
(:mod:`hoodie.format.slice.pruning`) evaluates the same expression on decoded partition values, so both
sit below the two of them here. :class:`ReadError` lives here too because checking a read
request's filters is where the first of them is raised; ``hoodie.format.slice.reader`` re-exports it.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import HoodieError

Filter = tuple[str, str, Any]
OPS = frozenset({"=", "==", "!=", "<>", "<", "<=", ">", ">=", "in", "not in"})


class ReadError(HoodieError):
    """A read request cannot be served; the message names the argument and the fix."""


def normalize_filters(filters: Optional[Sequence[Any]]) -> list[Filter]:
    """The filters as ``(column, lower-case op, value)`` triples; a malformed one raises :class:`ReadError`."""
    out: list[Filter] = []
    for f in filters or []:
        if not isinstance(f, (tuple, list)) or len(f) != 3:
            raise ReadError(f"filter {f!r} must be a (column, op, value) triple, e.g. ('city', '=', 'sf')")
        col, op, val = f
        op = str(op).lower().strip()
        if op not in OPS:
            raise ReadError(f"filter {f!r} uses unknown operator {op!r}; use one of {sorted(OPS)}")
        out.append((str(col), op, val))
    return out


def filter_expression(filters: Sequence[Filter], schema: pa.Schema) -> Optional[pc.Expression]:
    """A pyarrow compute expression for simple (column, op, value) filters (AND-ed)."""
    expr: Optional[pc.Expression] = None
    for col, op, val in filters:
        if col not in schema.names:
            raise ReadError(f"filter column {col!r} is not in the table (columns: {', '.join(schema.names)})")
        typ = schema.field(col).type
        field_ = pc.field(col)
        if op in ("in", "not in"):
            vals = pa.array(list(val)).cast(typ)
            e = field_.isin(vals)
            if op == "not in":
                e = ~e
        else:
            v = pa.scalar(val).cast(typ) if not isinstance(val, pa.Scalar) else val
            e = {
                "=": field_ == v, "==": field_ == v, "!=": field_ != v, "<>": field_ != v,
                "<": field_ < v, "<=": field_ <= v, ">": field_ > v, ">=": field_ >= v,
            }[op]
        expr = e if expr is None else expr & e
    return expr


__all__ = ["Filter", "OPS", "ReadError", "normalize_filters", "filter_expression"]
