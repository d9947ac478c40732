"""Composite record keys (issue 12 item 12): Java's encoding ``f1:v1,f2:v2`` is kept, so values
that would make two records share a key are refused; every other value tuple keeps a key of
its own."""

from __future__ import annotations

from typing import Optional

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.keys.generators import (
    ComplexKeyGenerator, GlobalDeleteKeyGenerator, NonpartitionedKeyGenerator,
)
from tests.helpers import examples

# Values built from the characters that matter to the encoding, plus the null/empty placeholders.
value = st.one_of(st.none(), st.sampled_from(["", "__null__", "__empty__", "a:b", "x,b:y", "2024-01-01 10:00:00"]),
                  st.text(alphabet="ab,:_ ", max_size=6))
rows = st.lists(st.tuples(value, value, value), min_size=1, max_size=12)


def _ambiguous(v: Optional[str]) -> bool:
    return v is not None and ("," in v or v in ("__null__", "__empty__"))


@settings(max_examples=examples(300), deadline=None)
@given(rows, st.sampled_from([ComplexKeyGenerator, NonpartitionedKeyGenerator, GlobalDeleteKeyGenerator]),
       st.sampled_from([["a", "b"], ["a", "b", "c"]]))
def test_composite_keys_are_unique_or_refused(data: list[tuple], cls: type, fields: list[str]) -> None:
    table = pa.table({"a": [r[0] for r in data], "b": [r[1] for r in data], "c": [r[2] for r in data]},
                     schema=pa.schema([("a", pa.string()), ("b", pa.string()), ("c", pa.string())]))
    kg = cls(fields, []) if cls is ComplexKeyGenerator else cls(fields)
    tuples = [tuple(r[:len(fields)]) for r in data]
    bad = [(f, r[i]) for r in tuples for i, f in enumerate(fields) if _ambiguous(r[i])]
    all_missing = any(all(v is None or v == "" for v in r) for r in tuples)
    try:
        keys = kg.record_keys(table).to_pylist()
    except ValueError as e:
        msg = str(e)
        if bad and "record key field" in msg and "has the value" in msg:
            field, val = next((f, v) for f, v in bad if f"field {f!r} has the value {v!r}" in msg)
            assert "Fix:" in msg and (("," in val and "contains ','" in msg) or "is encoded" in msg), msg
            return
        assert all_missing and "all null or empty" in msg, msg
        return
    assert not bad, f"ambiguous values {bad} were accepted"
    # Distinct value tuples get distinct keys, equal tuples equal keys.
    by_key: dict[str, tuple] = {}
    for k, t in zip(keys, tuples):
        assert by_key.setdefault(k, t) == t, f"{t} and {by_key[k]} share the key {k!r}"


def test_single_field_complex_key_keeps_commas() -> None:
    """One field cannot collide: its value is the whole key (Java writes it as ``id:x,y``)."""
    kg = ComplexKeyGenerator(["id"], [])
    assert kg.record_keys(pa.table({"id": ["x,y", "__null__"]})).to_pylist() == ["id:x,y", "id:__null__"]


def test_the_issue_example_is_refused_naming_field_value_and_fix() -> None:
    kg = ComplexKeyGenerator(["a", "b"], [])
    with pytest.raises(ValueError, match=r"record key field 'a' has the value 'x,b:y' \(row 0.*contains ','.*"
                                         r"Fix: replace the ',' in 'a'"):
        kg.record_keys(pa.table({"a": ["x,b:y", "x"], "b": ["z", "y,b:z"]}))
    # Timestamps (with ':') in composite keys stay as Java writes them.
    assert kg.record_keys(pa.table({"a": ["1"], "b": ["2024-01-01 10:00:00"]})).to_pylist() == [
        "a:1,b:2024-01-01 10:00:00"]
