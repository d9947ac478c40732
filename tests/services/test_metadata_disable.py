"""A table with a Hudi metadata table: hoodie does not maintain it yet, so every commit disables it
first, as Hudi does for a writer without it (docs/metadata-table.md). A stale metadata table would
make Java readers that list through it miss hoodie's files, silently."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.transaction import METADATA_FOLDER
from hoodie.services.ttl import restore, run_ttl
from hoodie.services.write import write_arrow
from tests.format.metadata_builder import MdtBuilder, commit_listing
from tests.hudi_rs import read_hudi_rs

OPTS = {"hoodie.table.name": "md", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.clean.automatic": "false"}


def _rows(ids: list[int], p: str, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids), "ts": pa.array([ts] * len(ids), pa.int64())})


def _with_mdt(path: str) -> None:
    """A v6 metadata table over the table's commits so far, laid out as Hudi 0.14/0.15 writes it."""
    table = HoodieTable(path)
    listing: dict[str, dict[str, int]] = {}
    for inst in table.timeline.completed_writes().instants:
        for p, files in commit_listing(table, inst.timestamp).items():
            listing.setdefault(p, {}).update(files)
    MdtBuilder(path).bootstrap(table.timeline.completed_writes().last().timestamp + "010", listing)
    assert HoodieTable(path).has_metadata_table and (Path(path) / METADATA_FOLDER).is_dir()


def _disabled(path: str) -> bool:
    table = HoodieTable(path)
    return not table.has_metadata_table and not (Path(path) / METADATA_FOLDER).exists()


def _ids(path: str) -> list[int]:
    return sorted(hoodie.read_table(path).column("id").to_pylist())


def test_every_action_disables_the_metadata_table_before_it_commits(tmp_path: Path) -> None:
    """Write, compaction, clean, TTL and restore each run on a table with a metadata table (they were
    refused, or left it stale); each disables it before committing, and the rows stay as the model says."""
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1, 2], "2020-01-01", 1), {**OPTS, "hoodie.datasource.write.operation": "insert"},
                instant="20200101000000000")
    write_arrow(path, _rows([3, 4], "a", 1), OPTS)
    model = {1, 2, 3, 4}

    def step(action, expect: set[int]) -> None:
        _with_mdt(path)
        with pytest.warns(UserWarning, match="had a Hudi metadata table.*rebuilds it"):
            action()
        assert _disabled(path)
        assert _ids(path) == sorted(expect)
        assert sorted(read_hudi_rs(path).column("id").to_pylist()) == sorted(expect)

    import hoodie.services.transaction as txn
    txn._warned_metadata.clear()
    step(lambda: write_arrow(path, _rows([3], "a", 2), OPTS), model)
    for action in (lambda: run_compaction(path, schedule_compaction(path, check_trigger=False)),
                   lambda: run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                            "hoodie.cleaner.fileversions.retained": "1"})):
        txn._warned_metadata.clear()
        step(action, model)
    txn._warned_metadata.clear()
    ttl = []
    step(lambda: ttl.append(run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10",
                                           "hoodie.partition.ttl.stash.enabled": "true"}).instant), {3, 4})
    txn._warned_metadata.clear()
    step(lambda: restore(path, ttl[0]), model)


def test_a_dry_run_leaves_the_metadata_table(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1], "2020-01-01", 1), OPTS, instant="20200101000000000")
    _with_mdt(path)
    assert run_clean(path, dry_run=True).instant is None
    run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10"}, dry_run=True)
    assert HoodieTable(path).has_metadata_table and (Path(path) / METADATA_FOLDER).is_dir()


def test_a_crash_after_the_property_is_cleared_is_repaired_by_the_next_commit(tmp_path: Path) -> None:
    """Killed between clearing the property and deleting the folder: readers list storage (the
    property says no metadata table), and the next commit deletes the unreferenced folder."""
    path = str(tmp_path / "t")
    write_arrow(path, _rows([1, 2], "a", 1), OPTS)
    _with_mdt(path)
    code = ("import pyarrow as pa, sys; from hoodie.services.write import write_arrow; "
            f"write_arrow(sys.argv[1], pa.table({{'id': pa.array([9], pa.int64()), 'p': ['a'], "
            f"'ts': pa.array([2], pa.int64())}}), {OPTS!r})")
    env = {**os.environ, "HOODIE_FAULT_POINTS": "metadata.after_disable_properties"}
    out = subprocess.run([sys.executable, "-c", code, path], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    table = HoodieTable(path)
    assert not table.has_metadata_table and (Path(path) / METADATA_FOLDER).is_dir()
    assert _ids(path) == [1, 2]  # the killed write committed nothing
    with pytest.warns(UserWarning, match="had a Hudi metadata table"):
        write_arrow(path, _rows([5], "a", 3), OPTS)
    assert _disabled(path) and _ids(path) == [1, 2, 5]
