"""Model test of column_stats: the metadata table model test's random histories (writes, deletes,
compactions, cleans, TTL runs and restores, rollbacks of completed and crashed writes, the metadata
table switched off and on again; table versions 6, 8 and 9) with ``hoodie.metadata.index.column.stats.enable``
on every write; after every step the merged column_stats equal the statistics recomputed from the
files the table lists (a version-6 log file's range may be wider: a rolled-back block's records stay in
it) and ``validate`` finds nothing, besides the model test's own checks."""

from __future__ import annotations

import random
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.table import HoodieTable
from hoodie.services.rollback import rollback
from tests.format.test_fsview import _uncommitted_write
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs
from tests.prove import crash_child
from tests.prove.crash_harness import (
    KEYS, OLD_PARTS, Model, Setup, _rows, check_metadata_table, check_state, clean_options,
    compaction_options, do_write, random_rows, ttl_options, write_batch,
)
from tests.services.test_column_stats_write import check_column_stats

STEPS = ("upsert", "upsert", "insert", "delete", "compaction", "clean", "ttl", "restore", "rollback",
         "crashed write", "off and on")


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


@settings(max_examples=examples(4), deadline=None)
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), ordering=st.booleans(),
       seed=st.integers(0, 2**31), version=st.sampled_from([6, 8, 9]))
def test_random_histories_keep_column_stats_equal_to_the_files(table_type: str, ordering: bool, seed: int,
                                                                    version: int) -> None:
    # The history comes from the seed, not from Hypothesis lists: derandomized runs start from the
    # smallest lists (a few upserts), and every example here should exercise a varied history.
    rng = random.Random(seed)
    steps = [rng.choice(STEPS) for _ in range(rng.randint(6, 12))]
    setup = ColumnStatsSetup(table_type, ordering=ordering, block_format=rng.choice(["avro", "parquet"]), commits_retained=2,
                  metadata=True, table_version=version)
    path = tempfile.mkdtemp(prefix="mdt_model_") + "/t"
    model = Model(ordering)
    do_write(path, setup, model, "insert", random_rows(rng, sorted({0, 1, 2, 3, *rng.sample(KEYS, 4)})))
    _check(path, model, "the first write")
    history: list[tuple[str, Model]] = []  # (write instant, model before it)
    stash_ttl = None
    for n, step in enumerate(steps):
        what = f"step {n} ({step}) of {steps}"
        if step in ("upsert", "insert", "delete"):
            before = model.copy()
            history.append((do_write(path, setup, model, step, write_batch(rng, step, model) or
                                     random_rows(rng, [KEYS[-1]])), before))
        elif step == "compaction":
            if table_type != "MERGE_ON_READ":
                continue
            crash_child.perform({"op": "compaction", "path": path, "options": compaction_options(rng, version)})
        elif step == "clean":
            opts = clean_options(rng)
            if rng.random() < 0.5:  # a clean naming fewer columns still removes every recorded one
                opts["hoodie.metadata.index.column.stats.column.list"] = "k"
            crash_child.perform({"op": "clean", "path": path, "options": opts})
        elif step == "ttl":
            opts = ttl_options(rng)
            before = model.copy()
            instant = crash_child.perform({"op": "ttl", "path": path, "options": opts})
            model.expire(OLD_PARTS)
            stash = instant is not None and opts.get("hoodie.partition.ttl.stash.enabled") == "true"
            stash_ttl = (instant, before) if stash else None
        elif step == "restore":
            if stash_ttl is None:
                continue
            crash_child.perform({"op": "restore", "path": path, "ttl_instant": stash_ttl[0]})
            model = Model(ordering, {**stash_ttl[1].rows, **model.rows})
            stash_ttl = None
        elif step == "rollback":
            table = HoodieTable(path)
            last = table.timeline.completed().last()
            if not history or last is None or last.timestamp != history[-1][0]:
                continue  # only the latest completed write can be rolled back
            instant, before = history.pop()
            try:
                rollback(path, instant)
            except MetadataTableError as e:
                # Hudi 1.x cannot take a compacted commit out of its metadata table: refused, nothing written.
                assert version >= 8 and "compacted that commit already" in str(e), e
                continue
            model = before
        elif step == "crashed write":
            rows = write_batch(rng, "upsert", model)
            _uncommitted_write(path, crash_child.batch(rows), opts=setup.write_options("upsert"))
            before = model.copy()
            history.append((do_write(path, setup, model, "upsert", random_rows(rng, [KEYS[0]])), before))
        elif step == "off and on":
            off = {**setup.write_options("upsert"), "hoodie.metadata.enable": "false"}
            rows = random_rows(rng, [KEYS[1]])
            crash_child.perform({"op": "write", "path": path, "rows": rows, "options": off})
            model.apply("upsert", rows)
            assert not HoodieTable(path).has_metadata_table
            history.clear()
            do_write(path, setup, model, "upsert", random_rows(rng, [KEYS[2]]))  # created again
        _check(path, model, what)
        if step != "ttl":
            # A restore is drawn right after its TTL run only: later writes to the expired partitions
            # follow restore's own rules (tests/services/test_ttl_restore_model.py), not this model's.
            stash_ttl = None
