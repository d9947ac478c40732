"""A copy-on-write rewrite keeps the old file's row order (Hudi's merge handle writes each stored record,
merged or not, where it was, and inserts after them): ``_replace_rows`` against a list model, on flat and
nested columns (pyarrow has no in-place kernel for nested types, so those take the other path), and a
written file read back in order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.services.write.execution import _replace_rows
from hoodie import write_arrow
from tests.helpers import examples


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["stay", "replace", "drop"]), min_size=1, max_size=30), st.booleans())
def test_replacements_take_their_rows_places(fate: list[str], nested: bool) -> None:
    n = len(fate)
    col = pa.array([[i] for i in range(n)]) if nested else pa.array([f"old{i}" for i in range(n)])
    rows = pa.table({"k": pa.array(range(n), pa.int64()), "v": col})
    replace = np.array([f != "stay" for f in fate])
    at = np.array([i for i, f in enumerate(fate) if f == "replace"], dtype=np.int64)
    new_v = pa.array([[100 + i] for i in at]) if nested else pa.array([f"new{i}" for i in at])
    new = pa.table({"k": pa.array(at, pa.int64()), "v": new_v.cast(col.type)})
    got = _replace_rows(rows, replace, at, new).to_pylist()
    want = []
    for i, f in enumerate(fate):
        if f == "stay":
            want.append({"k": i, "v": [i] if nested else f"old{i}"})
        elif f == "replace":
            want.append({"k": i, "v": [100 + i] if nested else f"new{i}"})
    assert got == want


def test_a_rewritten_file_keeps_its_order_and_appends_inserts(tmp_path: Path) -> None:
    opts = {"hoodie.table.name": "o", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.datasource.write.operation": "upsert"}
    base = str(tmp_path / "t")
    ids = [f"k{i:02d}" for i in (5, 3, 9, 1, 7)]
    write_arrow(base, pa.table({"id": ids, "p": ["a"] * 5, "ts": [1] * 5, "v": list(range(5))}), opts)
    # Updates of k09 and k05 (given in another order) and an insert of k00, routed into the small file.
    write_arrow(base, pa.table({"id": ["k09", "k00", "k05"], "p": ["a"] * 3, "ts": [2] * 3, "v": [90, 0, 50]}), opts)
    newest = max((tmp_path / "t" / "a").glob("*.parquet"), key=lambda f: f.name.rsplit("_", 1)[1])
    t = pq.read_table(newest, columns=["id", "v"])
    assert t.column("id").to_pylist() == ["k05", "k03", "k09", "k01", "k07", "k00"]
    assert t.column("v").to_pylist() == [50, 1, 90, 3, 4, 0]
