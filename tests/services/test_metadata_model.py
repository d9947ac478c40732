"""Model test of the metadata table's write side: random histories of writes, compactions, cleans,
TTL runs and restores, rollbacks of completed and crashed writes, and the metadata table switched
off and on again; after every step the metadata table lists exactly what storage holds, and reads
through it, through storage and by hudi-rs all equal the model."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.table import HoodieTable
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs
from tests.prove.crash_harness import Model, Setup, _rows, check_metadata_table, check_state
from tests.services.history_model import run_history


def _check(path: str, model: Model, what: str) -> None:
    check_state(path, {"model": model.snapshot()}, what)  # also through the metadata table
    check_metadata_table(path, what)
    if not HoodieTable(path).timeline.pending_compactions().instants:
        got = _rows(read_hudi_rs(path))
        assert got == model.snapshot(), f"{what}: hudi-rs reads {got}"


@settings(max_examples=examples(6), deadline=None)
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), ordering=st.booleans(),
       seed=st.integers(0, 2**31), version=st.sampled_from([6, 8, 9]))
def test_random_histories_keep_the_metadata_table_equal_to_storage(table_type: str, ordering: bool, seed: int,
                                                                    version: int) -> None:
    rng = random.Random(seed)
    setup = Setup(table_type, ordering=ordering, block_format=rng.choice(["avro", "parquet"]), commits_retained=2,
                  metadata=True, table_version=version)
    run_history(setup, table_type, ordering, seed, version, _check)
