"""Rollback of pending and completed writes (ours and Java-written), checked with both readers."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie.format.log import logformat as L
from hoodie.format.file_group import naming as N
from hoodie import write_arrow
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable
from hoodie.services.rollback.operation import rollback
from hoodie.services.rollback.failed_writes import rollback_failed_writes
from hoodie.services.rollback.instant import RollbackError
from tests.format.test_fsview import _uncommitted_write
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

OPTS = {
    "hoodie.table.name": "rb", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
}


def _data(ids, ts, tag) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [f"p{i % 2}" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"{tag}{i}" for i in ids]})


def _vals(t: pa.Table) -> dict:
    return dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_latest_completed_restores_previous_state(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    write_arrow(path, _data(range(10), 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    before = _vals(hoodie.read_table(path))
    c2 = write_arrow(path, pa.concat_tables([_data([1, 2], 2, "b"), _data([20], 2, "n")]),
                     {**o, "hoodie.datasource.write.operation": "upsert"})
    assert _vals(hoodie.read_table(path)) != before
    res = hoodie.rollback(path, c2)
    assert res.rolled_back == c2 and res.deleted_files
    assert _vals(hoodie.read_table(path)) == before
    assert _vals(read_hudi_rs(path)) == before
    t = HoodieTable(path)
    assert t.timeline.get(c2) is None
    rb = t.timeline.by_actions(I.ROLLBACK).completed().last()
    meta = t.timeline.avro_metadata(rb)
    assert meta["commitsRollback"] == [c2]
    # The table keeps working.
    write_arrow(path, _data([3], 5, "c"), {**o, "hoodie.datasource.write.operation": "upsert"})
    assert _vals(hoodie.read_table(path))[3] == "c3"


def test_only_latest_completed_can_be_rolled_back(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1 = write_arrow(path, _data(range(4), 1, "a"), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, _data([1], 2, "b"), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    with pytest.raises(RollbackError, match="later writes exist"):
        rollback(path, c1)
    with pytest.raises(RollbackError, match="no instant"):
        rollback(path, "20000101000000000")


def test_failed_write_rolled_back_before_next_write(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_arrow(path, _data(range(6), 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    failed = _uncommitted_write(path, pa.concat_tables([_data([1], 9, "bad"), _data([50], 9, "bad")]), opts=o)
    marker_dir = tmp_path / "t" / ".hoodie" / ".temp" / failed
    assert marker_dir.is_dir()
    created = [p for p in (tmp_path / "t").rglob("*") if p.is_file() and failed in p.name and ".hoodie" not in str(p)]
    results = rollback_failed_writes(HoodieTable(path))
    assert [r.rolled_back for r in results] == [failed]
    assert not marker_dir.exists()
    assert all(not p.exists() for p in created)
    assert not any(failed in p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    assert _vals(hoodie.read_table(path)) == {i: f"a{i}" for i in range(6)}


def test_mixed_instant_log_gets_command_block(tmp_path: Path) -> None:
    """A Java log file holding blocks of two instants: the rollback appends a command block in a
    new log file instead of deleting data of the other instant."""
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_arrow(path, _data([0, 2], 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([0], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    c3 = write_arrow(path, _data([2], 3, "c"), {**o, "hoodie.datasource.write.operation": "upsert"})
    t = HoodieTable(path)
    (sl,) = FileSystemView(t.storage, t.timeline).latest_file_slices("p0")
    logs = sl.sorted_logs()
    # Merge both log files into one (as pre-0.14 appends would), then drop the second.
    merged = (tmp_path / "t" / logs[0].path).read_bytes() + (tmp_path / "t" / logs[1].path).read_bytes()
    (tmp_path / "t" / logs[0].path).write_bytes(merged)
    (tmp_path / "t" / logs[1].path).unlink()
    import shutil
    shutil.rmtree(tmp_path / "t" / ".hoodie" / ".temp", ignore_errors=True)  # no markers: listing path
    assert _vals(hoodie.read_table(path)) == {0: "b0", 2: "c2"}
    res = rollback(path, c3)
    assert res.command_blocks and not res.deleted_files
    assert _vals(hoodie.read_table(path)) == {0: "b0", 2: "a2"}
    assert _vals(read_hudi_rs(path)) == {0: "b0", 2: "a2"}
    (cb,) = list(L.read_log_file(HoodieTable(path).storage, res.command_blocks[0]))
    assert cb.block_type == L.BlockType.COMMAND and cb.target_instant_time == c3
    assert N.parse_log_file(res.command_blocks[0].rsplit("/", 1)[-1]).write_token == N.UNKNOWN_WRITE_TOKEN


def test_rollback_on_java_fixture(fixture_copy) -> None:
    path = str(fixture_copy("sample_table_mor_parquet_v6_nonpartitioned_rollback"))
    before = hoodie.read_table(path, as_of="20250126040823628", columns=["id", "name", "longField"])
    rollback(path, "20250126060846931")
    after = hoodie.read_table(path, columns=["id", "name", "longField"])
    assert sorted(rows_of(after, ["id", "name", "longField"])) == sorted(rows_of(before, ["id", "name", "longField"]))
    assert sorted(rows_of(read_hudi_rs(path), ["id", "name", "longField"])) == sorted(
        rows_of(before, ["id", "name", "longField"]))
