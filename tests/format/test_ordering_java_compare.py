"""Ordering (precombine) values merge as Java compares them.

Hudi's payloads compare ordering values with ``compareTo``. For doubles, -0.0 is below 0.0 and NaN
(every NaN equal) is above +Infinity; Arrow compares -0.0 equal to 0.0 and sorts NaN last in both
directions, so hoodie let a NaN ordering value always lose and treated -0.0 and 0.0 as a tie, in its
reads (merge-on-read), its copy-on-write merges and its in-batch dedupe. For strings Java compares
UTF-16 code units and Arrow UTF-8 bytes (code points): they differ for characters above U+FFFF. The
models below order by ``Double.compare`` and by UTF-16; hoodie and hudi-rs must equal them.
"""

from __future__ import annotations

import math
import shutil
import struct
import tempfile

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.slice.merge import java_order_key
from hoodie import write_arrow
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

SPECIAL = [float("nan"), -0.0, 0.0, float("inf"), float("-inf"), 1.5, -1.5, 5e-324, -5e-324]
# Strings whose UTF-16 order (Java's String.compareTo) differs from their code-point order (Arrow's).
TEXTS = ["a", "\uffff", "\U00010000", "\U0001f600", "\ue000", "", "ab"]


def java_compare_key(x: float) -> tuple[int, int]:
    """``Double.compare`` as a sort key: NaN greatest (all NaNs one value), then the IEEE total order."""
    if math.isnan(x):
        return (1, 0)
    bits = struct.unpack(">q", struct.pack(">d", x))[0]
    return (0, bits ^ 0x7FFFFFFFFFFFFFFF if bits < 0 else bits)


def test_java_order_key_sorts_as_double_compare() -> None:
    values = SPECIAL + [float("nan"), -2.0, 2.0, 1e300, -1e300]
    keys = java_order_key(pa.array(values, pa.float64())).to_pylist()
    by_key = [java_compare_key(values[i]) for i in sorted(range(len(values)), key=lambda i: keys[i])]
    assert by_key == sorted(java_compare_key(v) for v in values)
    assert len(set(keys)) == len({java_compare_key(v) for v in values})  # equal exactly when Java says so
    # float32 values order the same way; nulls stay null; other types are untouched.
    assert java_order_key(pa.array([float("nan"), -0.0, 0.0, None], pa.float32())).to_pylist()[3] is None
    ints = pa.array([3, 1])
    assert java_order_key(ints) is ints


def java_string_key(x: str) -> bytes:
    """``String.compareTo`` as a sort key: UTF-16 code units."""
    return x.encode("utf-16-be")


def _opts(table_type: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "o",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": "upsert",
            "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload"}


def _rows(t: pa.Table) -> dict[str, str]:
    return dict(zip(t.column("k").to_pylist(), t.column("v").to_pylist()))


float_batches = st.lists(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(SPECIAL)),
                                  min_size=1, max_size=5), min_size=1, max_size=4)
text_batches = st.lists(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(TEXTS)),
                                 min_size=1, max_size=5), min_size=1, max_size=4)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]),
       st.one_of(st.tuples(st.just("double"), float_batches), st.tuples(st.just("string"), text_batches)))
def test_ordering_values_merge_as_java_compares_them(table_type: str, typed: tuple) -> None:
    """Each key's winner: the greatest ordering value by Double.compare (doubles) or String.compareTo
    (strings), ties to the later write (and the later row of a batch); read by hoodie and hudi-rs."""
    kind, batches = typed
    order_key = java_compare_key if kind == "double" else java_string_key
    otype = pa.float64() if kind == "double" else pa.string()
    d = tempfile.mkdtemp(prefix="hoodie_float_order_")
    try:
        path = f"{d}/t"
        best: dict[str, tuple] = {}
        seq = 0
        for n, batch in enumerate(batches):
            vals = [f"{n}.{i}" for i in range(len(batch))]
            data = pa.table({"k": [k for k, _ in batch], "p": ["x"] * len(batch),
                             "o": pa.array([o for _, o in batch], otype), "v": vals})
            write_arrow(path, data, _opts(table_type))
            for (k, o), v in zip(batch, vals):
                seq += 1
                cand = (order_key(o), seq, v)
                if k not in best or cand[:2] >= best[k][:2]:
                    best[k] = cand
        want = {k: v for k, (_, _, v) in best.items()}
        assert _rows(hoodie.read_table(path)) == want
        assert _rows(read_hudi_rs(path)) == want
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_nan_and_signed_zero_ordering_values(tmp_path, table_type: str) -> None:
    """Stored NaN outranks an incoming 5.0; an incoming NaN outranks 1.0; -0.0 is below 0.0 both ways."""
    path = str(tmp_path / "t")
    nan = float("nan")
    write_arrow(path, pa.table({"k": ["a", "b", "c", "d"], "p": ["x"] * 4, "o": [1.0, nan, 0.0, -0.0],
                                "v": ["a1", "b1", "c1", "d1"]}), _opts(table_type))
    write_arrow(path, pa.table({"k": ["a", "b", "c", "d"], "p": ["x"] * 4, "o": [nan, 5.0, -0.0, 0.0],
                                "v": ["a2", "b2", "c2", "d2"]}), _opts(table_type))
    assert _rows(hoodie.read_table(path)) == {"a": "a2", "b": "b1", "c": "c1", "d": "d2"}
