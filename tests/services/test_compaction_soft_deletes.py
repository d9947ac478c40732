"""Compaction over the write classes of issue 12 (items 6 and 8): random merge-on-read histories
with ``_hoodie_is_deleted`` rows and int->long / float->double widenings, compacted at a random
point, read the same as the model before and after, in hoodie and in hudi-rs (snapshot and
read-optimized)."""

from __future__ import annotations

import shutil
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from hoodie.services.compaction import run_compaction
from tests.format.test_model_hudi_rs import Model, Op, Setup, _batch, _options, _rows, op_strategy
from tests.hudi_rs import read_hudi_rs
from tests.helpers import examples


def _check(path: str, expected: list, what: str) -> None:
    assert _rows(hoodie.read_table(path)) == expected, f"our snapshot differs from the model {what}"
    assert _rows(read_hudi_rs(path)) == expected, f"hudi-rs snapshot differs from the model {what}"


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans(), st.sampled_from(["avro", "parquet"]), st.lists(op_strategy, min_size=2, max_size=5),
       st.integers(1, 4), st.integers(0, 4))
def test_compaction_keeps_soft_deletes_and_widenings(ordering: bool, block_format: str, ops: list,
                                                    compact_after: int, widen_at: int) -> None:
    setup = Setup("MERGE_ON_READ", True, ordering, block_format, widen_at=widen_at)
    d = tempfile.mkdtemp(prefix="hoodie_compact_sd_")
    try:
        path = f"{d}/t"
        model = Model(ordering)
        written = 0
        for n_op, (kind, rows, wide) in enumerate(ops):
            if kind == "insert":  # insert skips the index: new, distinct keys only
                seen: set[int] = set()
                rows = [r for r in rows if r[0] not in model.rows and not (r[0] in seen or seen.add(r[0]))]
            if not rows or (kind == "delete" and not written):
                continue
            op = Op(kind, rows, wide and n_op >= widen_at)
            opts = {**_options(setup, kind), "hoodie.clean.automatic": "false"}
            model.apply(op, write_arrow(path, _batch(op, setup), opts))
            written += 1
            expected = model.table(setup)
            _check(path, expected, f"after {kind}")
            if written == compact_after:
                # (nothing to compact when no slice has log files yet)
                run_compaction(path, config={"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
                _check(path, expected, "after compaction")
                ro = hoodie.read_table(path, query_type="read_optimized")
                assert _rows(ro) == _rows(read_hudi_rs(path, query_type="read_optimized"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
