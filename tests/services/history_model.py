"""The random metadata-table histories the index model tests share (writes, deletes, compactions,
cleans, TTL runs and restores, rollbacks of completed and crashed writes, the metadata table switched
off and on again): :func:`run_history` drives one from a seed and calls a check after every step."""

from __future__ import annotations

import random
import shutil
import tempfile
from typing import Callable, Optional

import pytest

from hoodie.errors import WriteError
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.table import HoodieTable
from hoodie.services.rollback.operation import rollback
from tests.format.test_fsview import _uncommitted_write
from tests.prove import crash_child
from tests.prove.crash_harness import (
    KEYS, OLD_PARTS, Model, Setup, clean_options, compaction_options, do_write, random_rows, ttl_options,
    write_batch,
)

STEPS = ("upsert", "upsert", "insert", "delete", "compaction", "clean", "ttl", "restore", "rollback",
         "crashed write", "off and on")

Check = Callable[[str, Model, str], None]


def run_history(setup: Setup, table_type: str, ordering: bool, seed: int, version: int, check: Check,
                tune_clean: Optional[Callable[[random.Random, dict], None]] = None,
                refuse_live_inserts: bool = False) -> None:
    """See :func:`_run_history`; the table lives in a temporary folder removed afterwards."""
    root = tempfile.mkdtemp(prefix="mdt_model_")
    try:
        _run_history(root + "/t", setup, table_type, ordering, seed, version, check, tune_clean, refuse_live_inserts)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run_history(path: str, setup: Setup, table_type: str, ordering: bool, seed: int, version: int, check: Check,
                 tune_clean: Optional[Callable[[random.Random, dict], None]],
                 refuse_live_inserts: bool) -> None:
    """Run one random history on a new table written with ``setup``; ``check(path, model, what)`` after
    the first write and every step. ``tune_clean(rng, options)`` may change a clean's options;
    ``refuse_live_inserts``: an insert of a live key must be refused (a table with a record index)."""
    rng = random.Random(seed)
    # The history comes from the seed, not from Hypothesis lists: derandomized runs start from the
    # smallest lists (a few upserts), and every example here should exercise a varied history.
    steps = [rng.choice(STEPS) for _ in range(rng.randint(6, 12))]
    model = Model(ordering)
    do_write(path, setup, model, "insert", random_rows(rng, sorted({0, 1, 2, 3, *rng.sample(KEYS, 4)})))
    check(path, model, "the first write")
    history: list[tuple[str, Model]] = []  # (write instant, model before it)
    stash_ttl = None
    for n, step in enumerate(steps):
        what = f"step {n} ({step}) of {steps}"
        if step in ("upsert", "insert", "delete"):
            before = model.copy()
            rows = write_batch(rng, step, model) or random_rows(rng, [KEYS[-1]])
            if refuse_live_inserts and step == "insert" and any(r[0] in model.rows for r in rows):
                # An insert of a live key (a second copy, as Hudi's insert writes one) is refused by a table
                # with a record index, before anything is written.
                done = HoodieTable(path).timeline.instants
                with pytest.raises(WriteError, match="is already in partition"):
                    do_write(path, setup, model, step, rows)
                assert HoodieTable(path).timeline.instants == done, what  # not even an instant stays
                model = before
            else:
                history.append((do_write(path, setup, model, step, rows), before))
        elif step == "compaction":
            if table_type != "MERGE_ON_READ":
                continue
            crash_child.perform({"op": "compaction", "path": path, "options": compaction_options(rng, version)})
        elif step == "clean":
            opts = clean_options(rng)
            if tune_clean is not None:
                tune_clean(rng, opts)
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
        check(path, model, what)
        if step != "ttl":
            # A restore is drawn right after its TTL run only: later writes to the expired partitions
            # follow restore's own rules (tests/services/test_ttl_restore_model.py), not this model's.
            stash_ttl = None
