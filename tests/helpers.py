"""Small comparison helpers shared by tests."""

from __future__ import annotations

import datetime as _dt
import decimal
from typing import Any, Iterable, Sequence

import pyarrow as pa


# The default run ("ci") draws half of each test's count (at least one): its budget is 8 minutes on
# 2 cores, and the long run (-m slow) draws 10 times the full count with new random examples each time.
CI_SHARE = (1, 2)


def examples(n: int) -> int:
    """Hypothesis ``max_examples`` for a test whose count is ``n``: ``n`` x CI_SHARE under the default
    "ci" profile (at least 1), 10 n under "long" (the profile's max_examples / 100; tests/conftest.py).
    Evaluated when the test module is imported, after the profile is loaded."""
    from hypothesis import settings

    scale = settings().max_examples
    if scale <= 100:
        return max(1, n * scale * CI_SHARE[0] // (100 * CI_SHARE[1]))
    return max(1, n * scale // 100)


def normalize(v: Any) -> Any:
    """A hashable, order-comparable form of a value: naive UTC timestamps, tuples for lists/maps."""
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return ("ts", v.isoformat())
    if isinstance(v, (_dt.date, _dt.time)):
        return ("d", v.isoformat())
    if isinstance(v, decimal.Decimal):
        return ("dec", str(v))
    if isinstance(v, dict):
        return ("map", tuple(sorted((str(k), repr(normalize(x))) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return ("list", tuple(repr(normalize(x)) for x in v))
    if isinstance(v, float):
        return ("f", repr(v))
    if isinstance(v, bytes):
        return ("b", v.hex())
    if v is None:
        return ("null",)
    return (type(v).__name__, v)


def rows_of(table: pa.Table, columns: Sequence[str]) -> list[tuple]:
    """Rows of selected columns as tuples of normalized values (sortable)."""
    sub = table.select(list(columns))
    return [tuple(repr(normalize(r[c])) for c in columns) for r in sub.to_pylist()]


def same_rows(a: pa.Table, b: pa.Table, columns: Iterable[str]) -> bool:
    """Order-insensitive equality of two tables over ``columns``."""
    cols = list(columns)
    return sorted(rows_of(a, cols)) == sorted(rows_of(b, cols))


# Prefix of a ``python -c`` program that makes importing pyspark or py4j fail (for "never starts a
# JVM" checks run in a fresh interpreter).
PYSPARK_BLOCKER = (
    "import sys\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'pyspark' or name.startswith('pyspark.') or name == 'py4j':\n"
    "            raise ImportError('pyspark is blocked in this test')\n"
    "sys.meta_path.insert(0, Block())\n"
)


def keyed_rows(part: str, keys: range, ts: int, v: int) -> pa.Table:
    """Rows ``k`` (``<part>-<i>``), ``part``, ``ts``, ``v`` (``v + i``) for ``i`` in ``keys``."""
    return pa.table({"k": [f"{part}-{i}" for i in keys], "part": [part] * len(keys),
                     "ts": pa.array([ts] * len(keys), pa.int64()), "v": pa.array([v + i for i in keys], pa.int64())})
