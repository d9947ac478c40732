"""Deterministic boundaries of the ordering keys that make hoodie compare ordering values as Java's
``compareTo`` does (``hoodie.format.slice.merge.java_order_key`` and friends); the random comparison
against a Java model and hudi-rs is ``tests/format/test_ordering_java_compare.py``."""

from __future__ import annotations

import math
import struct

import pyarrow as pa
import pytest

from hoodie.format.slice.merge import (
    DeleteBatch,
    LogBatch,
    comparable_order_keys,
    java_order_key,
    merge_ordering,
)

NAN = float("nan")


def _bits(x: float) -> int:
    """The expected key: the double's bits in IEEE total order (NaN: the canonical positive NaN)."""
    if math.isnan(x):
        x = NAN
    b = struct.unpack(">q", struct.pack(">d", x))[0]
    return b ^ 0x7FFFFFFFFFFFFFFF if b < 0 else b


def test_double_keys_are_exact_and_nulls_stay_null() -> None:
    values = [1.5, -1.5, 0.0, -0.0, NAN, -NAN, float("inf"), float("-inf"), None, 5e-324]
    got = java_order_key(pa.array(values, pa.float64()))
    assert got.type == pa.int64()
    assert got.to_pylist() == [None if v is None else _bits(v) for v in values]
    assert got.to_pylist()[2] == 0 and got.to_pylist()[3] == -1  # -0.0 just below 0.0
    assert got.to_pylist()[4] == got.to_pylist()[5] == 0x7FF8000000000000  # every NaN one value, above +inf


def test_float32_and_chunked_inputs_give_one_int64_array() -> None:
    chunked = pa.chunked_array([pa.array([NAN, -0.0], pa.float32()), pa.array([None, 2.5], pa.float32())])
    got = java_order_key(chunked)
    assert isinstance(got, pa.Array) and got.type == pa.int64()
    assert got.to_pylist() == [_bits(NAN), _bits(-0.0), None, _bits(2.5)]


def test_other_types_and_plain_strings_are_returned_as_they_are() -> None:
    for values in (pa.array([3, 1]), pa.array(["b", "a", None]), pa.chunked_array([pa.array(["\uffff"])]),
                   pa.array([True, False])):
        assert java_order_key(values) is values


@pytest.mark.parametrize("typ", [pa.string(), pa.large_string()])
def test_strings_above_u_ffff_become_utf16_keys(typ: pa.DataType) -> None:
    values = pa.array(["\uffff", "\U00010000", "a", None], typ)
    got = java_order_key(values)
    assert got.type == pa.binary()
    assert got.to_pylist() == ["\uffff".encode("utf-16-be"), b"\xd8\x00\xdc\x00", b"\x00a", None]
    # Java's order: U+10000 (a surrogate pair, D800 DC00) sorts below U+FFFF.
    assert got[1].as_py() < got[0].as_py()


def test_comparable_keys_give_both_sides_the_same_kind() -> None:
    plain, wide = pa.array(["\uffff", None]), pa.array(["\U00010000"])
    a, b = comparable_order_keys(plain, wide)
    assert (a.type, b.type) == (pa.binary(), pa.binary())
    assert a.to_pylist() == ["\uffff".encode("utf-16-be"), None] and b.to_pylist() == [b"\xd8\x00\xdc\x00"]
    b2, a2 = comparable_order_keys(wide, plain)
    assert (a2.to_pylist(), b2.to_pylist()) == (a.to_pylist(), b.to_pylist())
    # A side of nulls only still gets binary keys (not Arrow's null type, which compares with nothing).
    n, w = comparable_order_keys(pa.array([None], pa.string()), wide)
    assert (n.type, n.to_pylist(), w.type) == (pa.binary(), [None], pa.binary())
    x, y = comparable_order_keys(pa.array(["b"]), pa.array(["a"]))
    assert (x.to_pylist(), y.to_pylist()) == (["b"], ["a"])
    f, g = comparable_order_keys(pa.array([NAN]), pa.array([1.0]))
    assert (f.to_pylist(), g.to_pylist()) == ([_bits(NAN)], [_bits(1.0)])
    i, j = comparable_order_keys(pa.array([2]), pa.array([1]))
    assert (i.to_pylist(), j.to_pylist()) == ([2], [1])


def _table(keys: list[str], order: pa.Array, commit: str) -> pa.Table:
    n = len(keys)
    return pa.table({"_hoodie_commit_time": [commit] * n, "_hoodie_record_key": keys, "o": order,
                     "v": [f"{commit}-{k}" for k in keys]})


def _merged(base: pa.Table, log: list[LogBatch]) -> dict[str, str]:
    out = merge_ordering(base, log, base.schema, "o")
    return dict(zip(out.column("_hoodie_record_key").to_pylist(), out.column("v").to_pylist()))


def test_deletes_outrank_records_by_java_order() -> None:
    """A delete with ordering NaN removes a record with 1e300; one with -0.0 does not remove 0.0; a
    delete without ordering values (natural order, null) never outranks by value."""
    base = _table(["a", "b", "c"], pa.array([1e300, 0.0, 2.0]), "001")
    dels = DeleteBatch(pa.array(["a", "b"]), pa.array([NAN, -0.0]), "002")
    assert _merged(base, [LogBatch(deletes=dels)]) == {"b": "001-b", "c": "001-c"}
    # Delete ordering values of another numeric type are cast to the field's type first.
    dels32 = DeleteBatch(pa.array(["a"]), pa.array([NAN], pa.float32()), "002")
    assert _merged(base, [LogBatch(deletes=dels32)]) == {"b": "001-b", "c": "001-c"}
    none = DeleteBatch(pa.array(["c"]), None, "000")
    assert _merged(base, [LogBatch(deletes=none)]) == {"a": "001-a", "b": "001-b", "c": "001-c"}
    nulls = DeleteBatch(pa.array(["c"]), pa.nulls(1), "000")
    assert _merged(base, [LogBatch(deletes=nulls)]) == {"a": "001-a", "b": "001-b", "c": "001-c"}


def test_string_records_and_deletes_compare_in_utf16_order() -> None:
    """The record's U+10000 is below the delete's U+FFFF in Java's order: the delete wins (in code-point
    order it would lose); keys are computed over records and deletes together."""
    base = _table(["a", "b"], pa.array(["\U00010000", "z"]), "001")
    dels = DeleteBatch(pa.array(["a", "b"]), pa.array(["\uffff", "a"]), "000")
    assert _merged(base, [LogBatch(deletes=dels)]) == {"b": "001-b"}
    later = _table(["a"], pa.array(["\uffff"]), "002")
    assert _merged(_table(["a"], pa.array(["\U00010000"]), "001"), [LogBatch(data=later)]) == {"a": "002-a"}
