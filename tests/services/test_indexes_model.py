"""Model test of partition_stats and record_index: the shared random histories
(:mod:`tests.services.history_model`: writes, deletes, compactions, cleans, TTL runs and restores,
rollbacks of completed and crashed writes, the metadata table switched off and on again) with
column_stats, partition_stats and the record index kept by every write; after every step each index
equals its recomputation from the files (validate: partition statistics from the latest slices' own
footers and log blocks, the record index against a key scan) and hudi-rs reads what hoodie reads."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.table import HoodieTable
from hoodie.services.metadata.lifecycle import validate_partition_stats, validate_record_index
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs
from tests.prove.crash_harness import Model, Setup, _rows, check_metadata_table, check_state
from tests.services.history_model import run_history


class IndexSetup(Setup):
    """The crash harness's setup, with every index hoodie keeps asked for by every write."""

    def write_options(self, kind: str) -> dict[str, str]:
        return {**super().write_options(kind), "hoodie.metadata.index.column.stats.enable": "true",
                "hoodie.metadata.index.partition.stats.enable": "true",
                "hoodie.metadata.record.index.enable": "true",
                "hoodie.metadata.record.index.min.filegroup.count": "3"}


def _check(path: str, model: Model, what: str) -> None:
    check_state(path, {"model": model.snapshot()}, what)
    check_metadata_table(path, what)  # validate: every index against the files
    table = HoodieTable(path)
    listed = table.props.get("hoodie.table.metadata.partitions", "").split(",")
    if "files" in listed:
        assert "record_index" in listed, (what, listed)
        assert ("partition_stats" in listed) == (table.table_version >= 8), (what, listed)
        assert validate_record_index(table) == [], what
        if "partition_stats" in listed:
            assert validate_partition_stats(table) == [], what
    if not table.timeline.pending_compactions().instants:
        assert _rows(read_hudi_rs(path)) == model.snapshot(), what


def _history(table_type: str, ordering: bool, seed: int, version: int) -> None:
    rng = random.Random(seed)
    setup = IndexSetup(table_type, ordering=ordering, block_format=rng.choice(["avro", "parquet"]),
                       commits_retained=2, metadata=True, table_version=version)
    run_history(setup, table_type, ordering, seed, version, _check, refuse_live_inserts=True)


@settings(max_examples=examples(1), deadline=None)
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), ordering=st.booleans(),
       seed=st.integers(0, 2**31), version=st.sampled_from([6, 8, 9]))
def test_random_histories_keep_every_index_equal_to_the_files(table_type: str, ordering: bool, seed: int,
                                                              version: int) -> None:
    _history(table_type, ordering, seed, version)


@pytest.mark.slow
@settings(max_examples=examples(12), deadline=None)
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), ordering=st.booleans(),
       seed=st.integers(0, 2**31), version=st.sampled_from([6, 8, 9]))
def test_random_histories_keep_every_index_equal_to_the_files_long(table_type: str, ordering: bool, seed: int,
                                                                   version: int) -> None:
    _history(table_type, ordering, seed, version)
