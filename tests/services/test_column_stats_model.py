"""Model test of column_stats: the metadata table model test's random histories (writes, deletes,
compactions, cleans, TTL runs and restores, rollbacks of completed and crashed writes, the metadata
table switched off and on again; table versions 6, 8 and 9) with ``hoodie.metadata.index.column.stats.enable``
on every write; after every step the merged column_stats equal the statistics recomputed from the
files the table lists (a version-6 log file's range may be wider: a rolled-back block's records stay in
it) and ``validate`` finds nothing, besides the model test's own checks."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.table import HoodieTable
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs
from tests.prove.crash_harness import Model, Setup, _rows, check_metadata_table, check_state
from tests.services.history_model import run_history
from tests.services.test_column_stats_write import check_column_stats


class ColumnStatsSetup(Setup):
    """The crash harness's setup, with column_stats kept by every write."""

    def write_options(self, kind: str) -> dict[str, str]:
        return {**super().write_options(kind), "hoodie.metadata.index.column.stats.enable": "true"}


def _check(path: str, model: Model, what: str) -> None:
    check_state(path, {"model": model.snapshot()}, what)  # also through the metadata table
    check_metadata_table(path, what)  # validate: column_stats against the files' own statistics too
    if "column_stats" in HoodieTable(path).props.get("hoodie.table.metadata.partitions", ""):
        check_column_stats(path, exact_logs=False)
    if not HoodieTable(path).timeline.pending_compactions().instants:
        got = _rows(read_hudi_rs(path))
        assert got == model.snapshot(), f"{what}: hudi-rs reads {got}"


def _fewer_columns(rng: random.Random, opts: dict) -> None:
    if rng.random() < 0.5:  # a clean naming fewer columns still removes every recorded one
        opts["hoodie.metadata.index.column.stats.column.list"] = "k"


@settings(max_examples=examples(4), deadline=None)
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), ordering=st.booleans(),
       seed=st.integers(0, 2**31), version=st.sampled_from([6, 8, 9]))
def test_random_histories_keep_column_stats_equal_to_the_files(table_type: str, ordering: bool, seed: int,
                                                                    version: int) -> None:
    rng = random.Random(seed)
    setup = ColumnStatsSetup(table_type, ordering=ordering, block_format=rng.choice(["avro", "parquet"]),
                             commits_retained=2, metadata=True, table_version=version)
    run_history(setup, table_type, ordering, seed, version, _check, _fewer_columns)
