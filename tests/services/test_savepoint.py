"""Savepoints (create, show, delete) and restores to them (rollback_to_savepoint): the timeline files
as Hudi writes them, clean and partition TTL holding savepointed files back, restores on COW and MOR,
table versions 6 and 9, with and without a metadata table (checked with hoodie's reader, hudi-rs and
the metadata table's validation), and the refusals, before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.metadata.lifecycle import validate_metadata_table
from hoodie.services.rollback.operation import rollback
from hoodie.services.rollback.instant import RollbackError
from hoodie.services.savepoint import (
    SavepointError, create_savepoint, delete_savepoint, rollback_to_savepoint, show_savepoints,
)
from hoodie import write_arrow
from tests.hudi_rs import read_hudi_rs

OPTS = {
    "hoodie.table.name": "sp", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.clean.automatic": "false",
}
KEEP_ONE = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def _data(ids, ts: int, tag: str) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "p": [f"p{i % 2}" for i in ids],
                     "ts": pa.array([ts] * len(list(ids)), pa.int64()), "v": [f"{tag}{i}" for i in ids]})


def _opts(table_type: str = "COPY_ON_WRITE", version: int = 6, mdt: bool = False) -> tuple[dict, dict]:
    """(options of every write, options of the first write)."""
    o = {**OPTS, "hoodie.datasource.write.table.type": table_type, "hoodie.metadata.enable": str(mdt).lower()}
    return o, ({**o, "hoodie.write.table.version": str(version)} if version != 6 else o)


def _rows(path: str) -> list[tuple]:
    return sorted((r["id"], r["v"]) for r in hoodie.read_table(path, columns=["id", "v"]).to_pylist())


def _rs_rows(path: str) -> list[tuple]:
    return sorted((r["id"], r["v"]) for r in read_hudi_rs(path).select(["id", "v"]).to_pylist())


def _folder(path: str) -> str:
    t = HoodieTable(path)
    return os.path.join(path, ".hoodie/timeline" if t.timeline_layout == 2 else ".hoodie")


def _snapshot(path: str) -> dict[str, int]:
    """Every file of the table (timeline and data) with its size: what a refusal must leave alone."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            if ".lock" in f or "/.locks" in root:
                continue
            full = os.path.join(root, f)
            out[os.path.relpath(full, path)] = os.path.getsize(full)
    return out


@pytest.mark.parametrize("version", [6, 9])
def test_create_show_delete_as_hudi_writes_them(tmp_path: Path, version: int) -> None:
    path = str(tmp_path / "t")
    o, first = _opts(version=version)
    c1 = write_arrow(path, _data(range(6), 1, "a"), {**first, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([1, 2], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    res = create_savepoint(path, c1, "alice", "before the upsert")
    assert res.instant == c1 and res.files == 2 and "savepointed" in res.message
    names = sorted(os.listdir(_folder(path)))
    assert f"{c1}.savepoint.inflight" in names and f"{c1}.savepoint.requested" not in names
    done = [n for n in names if n.endswith(".savepoint")]
    if version == 6:
        assert done == [f"{c1}.savepoint"]
    else:  # layout 2: the completed file carries the completion time
        assert len(done) == 1 and done[0].startswith(f"{c1}_") and done[0] > f"{c1}_{c1}"
    md = plans.read_avro_metadata(open(os.path.join(_folder(path), done[0]), "rb").read())
    assert md["savepointedBy"] == "alice" and md["comments"] == "before the upsert"
    assert sorted(md["partitionMetadata"]) == ["p0", "p1"]
    for p, pm in md["partitionMetadata"].items():
        assert pm["partitionPath"] == p and all(c1 in f and f.endswith(".parquet") for f in pm["savepointDataFile"])
    assert [s.instant for s in show_savepoints(path)] == [c1]
    assert _rows(path) == _rs_rows(path)  # readers skip the savepoint instant
    with pytest.raises(SavepointError, match="savepointed already"):
        create_savepoint(path, c1)
    with pytest.raises(SavepointError, match="only completed commits can be savepointed"):
        create_savepoint(path, "20000101000000000")
    # A savepointed commit cannot be rolled back (Hudi's validateSavepointRollbacks).
    create_savepoint(path, c2)
    with pytest.raises(RollbackError, match="savepointed"):
        rollback(path, c2)
    assert "deleted savepoint" in delete_savepoint(path, c2)
    assert [s.instant for s in show_savepoints(path)] == [c1]
    assert not [n for n in os.listdir(_folder(path)) if n.startswith(c2) and "savepoint" in n]
    with pytest.raises(SavepointError, match="no savepoint at"):
        delete_savepoint(path, c2)
    assert rollback(path, c2).rolled_back == c2  # no savepoint holds it any more


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_clean_keeps_every_file_of_savepointed_slices(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    o, _ = _opts(table_type)
    write_arrow(path, _data(range(4), 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data(range(4), 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    if table_type == "MERGE_ON_READ":  # slice c1 now holds a base file and log files: compact, then add logs
        c = schedule_compaction(path, {"hoodie.compact.inline.max.delta.commits": "1"})
        run_compaction(path, c)
    write_arrow(path, _data(range(4), 3, "c"), {**o, "hoodie.datasource.write.operation": "upsert"})
    create_savepoint(path, c2)
    held = {f for sp in show_savepoints(path) for f in sp.files}
    assert held and (table_type == "COPY_ON_WRITE" or any(".log." in f for f in held))
    res = run_clean(path, KEEP_ONE)
    on_disk = {f for _, _, fs in os.walk(path) for f in fs}
    assert held <= on_disk, "clean deleted savepointed files"
    assert any("savepoint" in n for n in res.plan.notes)
    deleted = {f.rsplit("/", 1)[-1] for fs in res.deleted.values() for f in fs}
    assert not deleted & held
    delete_savepoint(path, c2)
    res = run_clean(path, KEEP_ONE)
    gone = {f.rsplit("/", 1)[-1] for fs in res.deleted.values() for f in fs}
    assert held <= gone, "once the savepoint is deleted its files are cleaned"
    assert _rows(path) == [(i, f"c{i}") for i in range(4)] == _rs_rows(path)


def test_ttl_skips_partitions_holding_savepointed_files(tmp_path: Path) -> None:
    from hoodie.services.ttl import run_ttl
    from hoodie.services.ttl.service import result_rows

    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    for i, instant in enumerate(["19700101000000000", "19700101000001000", None]):
        data = pa.table({"id": pa.array([i * 10 + k for k in range(3)], pa.int64()), "p": [f"p{i}"] * 3,
                         "ts": pa.array([1] * 3, pa.int64()), "v": ["x"] * 3})
        write_arrow(path, data, {**o, "hoodie.datasource.write.operation": "insert"}, instant=instant)
    create_savepoint(path, "19700101000000000")  # holds p0 only: p1 did not exist yet
    res = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10"})
    assert res.expired_partitions == ["p1"]
    assert set(res.skipped) == {"p0"} and "savepoint(s) 19700101000000000 hold its files" in res.skipped["p0"]
    rows = result_rows(res)
    assert ("p1", "p1", "deleted") == rows[0][:3]
    assert rows[1][:3] == (None, "p0", "skipped") and "delete_savepoint" in rows[1][3]
    assert hoodie.read_table(path).num_rows == 6 == read_hudi_rs(path).num_rows
    # Deleting the savepoint lets the next run delete it.
    delete_savepoint(path, "19700101000000000")
    assert run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10"}).expired_partitions == ["p0"]


def _history(path: str, o: dict, first: dict, table_type: str) -> tuple[str, list[tuple]]:
    """Writes, a savepoint, then every kind of write the restore must undo; returns (savepoint, its rows)."""
    write_arrow(path, _data(range(6), 1, "a"), {**first, "hoodie.datasource.write.operation": "insert"})
    sp = write_arrow(path, _data([1, 2], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    rows = _rows(path)
    create_savepoint(path, sp, "ops", "before the backfill")
    write_arrow(path, _data([2, 3, 10], 3, "c"), {**o, "hoodie.datasource.write.operation": "upsert"})
    if table_type == "MERGE_ON_READ":
        c = schedule_compaction(path, {"hoodie.compact.inline.max.delta.commits": "1"})
        run_compaction(path, c)  # a completed compaction after the savepoint
        write_arrow(path, _data([4, 11], 4, "d"), {**o, "hoodie.datasource.write.operation": "upsert"})
        schedule_compaction(path, {"hoodie.compact.inline.max.delta.commits": "1"})  # left pending
        write_arrow(path, _data([0, 12], 5, "e"), {**o, "hoodie.datasource.write.operation": "upsert"})
    else:
        write_arrow(path, _data([20, 22], 4, "o"), {**o, "hoodie.datasource.write.operation": "insert_overwrite"})
        write_arrow(path, _data([5], 5, "e"), {**o, "hoodie.datasource.write.operation": "upsert"})
    run_clean(path, KEEP_ONE)  # may delete nothing the savepoint holds
    assert _rows(path) != rows
    return sp, rows


@pytest.mark.parametrize("mdt", [False, True], ids=["no-mdt", "mdt"])
@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_to_savepoint_returns_the_savepoints_rows(tmp_path: Path, table_type: str, version: int,
                                                           mdt: bool) -> None:
    path = str(tmp_path / "t")
    o, first = _opts(table_type, version, mdt)
    sp, rows = _history(path, o, first, table_type)
    t = HoodieTable(path)
    after = [i for i in t.timeline.instants if i.timestamp > sp and I.comparable_action(i.action) in I.WRITE_ACTIONS]
    res = rollback_to_savepoint(path, sp)
    assert res.savepoint == sp and [x for x, _ in res.rolled_back] == [i.timestamp for i in reversed(after)]
    assert _rows(path) == rows == _rs_rows(path)
    t = HoodieTable(path)
    tl = t.timeline
    assert tl.completed_writes().last().timestamp == sp
    assert not [i for i in tl.instants if i.timestamp > sp and I.comparable_action(i.action) in I.WRITE_ACTIONS]
    assert not tl.pending() and not [i for i in tl.by_actions(I.ROLLBACK).instants if i.timestamp > sp]
    restore = tl.completed().by_actions(I.RESTORE).last()
    assert restore.timestamp == res.restore_instant
    md = tl.read_avro(restore)
    assert md["instantsToRollback"] == [x for x, _ in res.rolled_back]
    assert set(md["hoodieRestoreMetadata"]) == set(md["instantsToRollback"])
    plan = tl.read_avro(I.Instant(restore.timestamp, I.RESTORE, I.State.REQUESTED))
    assert plan["savepointToRestoreTimestamp"] == sp and plan["version"] == 2
    if mdt:
        assert validate_metadata_table(t).equal
    assert [s.instant for s in show_savepoints(path)] == [sp]  # the savepoint stays
    # The table goes on.
    write_arrow(path, _data([1, 30], 9, "z"), {**o, "hoodie.datasource.write.operation": "upsert"})
    want = sorted({**dict(rows), 1: "z1", 30: "z30"}.items())
    assert _rows(path) == want == _rs_rows(path)
    if mdt:
        assert validate_metadata_table(HoodieTable(path)).equal
    again = rollback_to_savepoint(path, sp)
    assert _rows(path) == rows and len(again.rolled_back) == 1


def test_restore_refused_after_a_clean_removed_files_it_needs(tmp_path: Path) -> None:
    """A savepoint made after a clean took its commit's files is refused (Hudi's own check lets it through
    under KEEP_LATEST_FILE_VERSIONS, whose cleans retain no commit); one written anyway, as Java Hudi
    would, cannot be restored to: the restore names the clean and writes nothing."""
    path = str(tmp_path / "t")
    o, _ = _opts()
    c1 = write_arrow(path, _data(range(4), 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, _data(range(4), 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    write_arrow(path, _data(range(4), 3, "c"), {**o, "hoodie.datasource.write.operation": "upsert"})
    c1_files = {p: [f for f in os.listdir(os.path.join(path, p)) if c1 in f] for p in ("p0", "p1")}
    clean = run_clean(path, KEEP_ONE)
    assert clean.instant and clean.total_deleted >= 4
    with pytest.raises(SavepointError, match=f"clean {clean.instant} deleted"):
        create_savepoint(path, c1)
    # Java Hudi's savepoint of c1: its own files listed, written without hoodie's checks.
    storage = HoodieTable(path).storage
    inflight = T.create_inflight(storage, c1, I.SAVEPOINT)
    T.transition_to_complete(storage, inflight, plans.write_avro_metadata(
        "HoodieSavepointMetadata", plans.savepoint_metadata("java", 0, "", c1_files)))
    before = _snapshot(path)
    rows = _rows(path)
    with pytest.raises(SavepointError, match=f"clean {clean.instant} deleted .* its state needs"):
        rollback_to_savepoint(path, c1)
    assert _snapshot(path) == before and _rows(path) == rows


def test_restore_refusals_name_why(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o, _ = _opts()
    c1 = write_arrow(path, _data(range(4), 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([1], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    with pytest.raises(SavepointError, match="no savepoint at .*savepoints: none"):
        rollback_to_savepoint(path, c1)
    create_savepoint(path, c1)
    create_savepoint(path, c2)
    before = _snapshot(path)
    with pytest.raises(SavepointError, match=f"savepoint\\(s\\) {c2} are later"):
        rollback_to_savepoint(path, c1)
    assert _snapshot(path) == before
    res = rollback_to_savepoint(path, c2)
    assert res.rolled_back == [] and "nothing to restore" in res.message and _snapshot(path) == before


def test_restore_refused_when_the_1x_metadata_table_compacted_a_commit(tmp_path: Path) -> None:
    """Table version 9: the metadata table takes a rolled-back commit out by deleting its log file, which
    an MDT compaction merged already (Hudi 1.x refuses too)."""
    path = str(tmp_path / "t")
    o, first = _opts("COPY_ON_WRITE", 9, True)
    o = {**o, "hoodie.metadata.compact.max.delta.commits": "1"}
    write_arrow(path, _data(range(4), 1, "a"), {**first, "hoodie.datasource.write.operation": "insert",
                                                 "hoodie.metadata.compact.max.delta.commits": "1"})
    sp = write_arrow(path, _data([1], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    create_savepoint(path, sp)
    for k in range(3):
        write_arrow(path, _data([2], 3 + k, f"c{k}"), {**o, "hoodie.datasource.write.operation": "upsert"})
    before = _snapshot(path)
    with pytest.raises(SavepointError, match="metadata table compacted"):
        rollback_to_savepoint(path, sp)
    assert _snapshot(path) == before


def test_an_interrupted_restore_is_finished_by_calling_it_again(tmp_path: Path, monkeypatch) -> None:
    import hoodie.services.savepoint as SP

    path = str(tmp_path / "t")
    o, _ = _opts("MERGE_ON_READ", 6, True)
    write_arrow(path, _data(range(6), 1, "a"), {**o, "hoodie.datasource.write.operation": "insert"})
    sp = write_arrow(path, _data([1], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    rows = _rows(path)
    create_savepoint(path, sp)
    for k in range(3):
        write_arrow(path, _data([2, 20 + k], 3 + k, f"c{k}"), {**o, "hoodie.datasource.write.operation": "upsert"})
    real = SP._WriteUndo.execute
    calls = []

    def dies_on_the_second(self, inflight):
        calls.append(self.target.timestamp)
        if len(calls) == 2:
            raise OSError("the process died")
        real(self, inflight)

    monkeypatch.setattr(SP._WriteUndo, "execute", dies_on_the_second)
    with pytest.raises(OSError):
        rollback_to_savepoint(path, sp)
    pending = HoodieTable(path).timeline.pending().by_actions(I.RESTORE).instants
    assert len(pending) == 1
    monkeypatch.setattr(SP._WriteUndo, "execute", real)
    with pytest.raises(SavepointError, match="is pending"):
        create_savepoint(path, sorted(i.timestamp for i in HoodieTable(path).timeline.completed_writes())[0])
    res = rollback_to_savepoint(path, sp)
    assert res.resumed and res.restore_instant == pending[0].timestamp and len(res.rolled_back) == 3
    assert _rows(path) == rows == _rs_rows(path)
    assert validate_metadata_table(HoodieTable(path)).equal


@pytest.mark.parametrize("version,mdt", [(6, False), (6, True), (9, True)])
def test_restore_over_a_ttl_commit_that_stashed_its_files(tmp_path: Path, version: int, mdt: bool) -> None:
    """A TTL run after the savepoint stashed a partition written after it: the restore moves the files
    back (rolling the TTL commit back), then removes the write that made them."""
    from hoodie.services.ttl import run_ttl
    from hoodie.services.ttl.stash import read_manifest
    from tests.services.test_ttl_stash import expire

    path = str(tmp_path / "t")
    o, first = _opts("MERGE_ON_READ", version, mdt)
    write_arrow(path, _data(range(4), 1, "a"), {**first, "hoodie.datasource.write.operation": "insert"})
    sp = write_arrow(path, _data([1], 2, "b"), {**o, "hoodie.datasource.write.operation": "upsert"})
    rows = _rows(path)
    create_savepoint(path, sp)
    extra = pa.table({"id": pa.array([40, 41], pa.int64()), "p": ["p9", "p9"], "ts": pa.array([3, 3], pa.int64()),
                      "v": ["n40", "n41"]})
    write_arrow(path, extra, {**o, "hoodie.datasource.write.operation": "insert"})
    ttl = run_ttl(path, expire("p9", "p0"))
    assert ttl.expired_partitions == ["p9"] and "savepoint" in ttl.skipped["p0"] and ttl.stashed
    res = rollback_to_savepoint(path, sp)
    assert [x for x, _ in res.rolled_back][0] == ttl.instant
    assert _rows(path) == rows == _rs_rows(path)
    assert read_manifest(HoodieTable(path).storage, ttl.instant)["state"] == "rolled_back"
    if mdt:
        assert validate_metadata_table(HoodieTable(path)).equal
