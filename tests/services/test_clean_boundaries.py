"""Deterministic tests at the cleaner's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): what `hoodie clean --json` prints, dropped partition folders and their checksum files,
files it could not delete, the clean instant's files, resumed cleans, metrics and fault points."""

from __future__ import annotations

from pathlib import Path

import pytest


from hoodie.format.table import HoodieTable
from tests.services.boundaries_support import _Stopped, _stop_at


def test_clean_result_json_for_a_recovered_and_a_new_clean(tmp_path: Path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as TL
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    hist = _history(path, 3)
    table = HoodieTable(path)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"}
    plan = plan_clean(table, cfg)
    doomed = {p: sorted(fs) for p, fs in plan.files_to_delete.items() if fs}
    assert sorted(doomed) == ["p0", "p1"] and plan.total_files == 2
    ts = table.new_instant_time()  # an interrupted clean: planned, requested, nothing deleted yet
    TL.create_requested(table.storage, ts, I.CLEAN,
                        plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage)))
    dry = run_clean(path, cfg, dry_run=True).to_json()
    assert dry["dry_run"] is True and dry["instant"] is None and dry["total_deleted"] == 0
    assert dry["plan"]["notes"] == [f"pending clean(s) {ts} would be re-executed first"]
    res = run_clean(path, {**cfg, "hoodie.cleaner.fileversions.retained": "1"})
    out = res.to_json()
    assert sorted(out) == ["deleted_files", "deleted_partitions", "dry_run", "failed_files", "instant", "plan",
                           "reason", "recovered_cleans", "stash_purged", "total_deleted"]
    assert out["reason"] == f"deleted {res.total_deleted} file(s) in clean {res.instant} (KEEP_LATEST_FILE_VERSIONS); " \
        "finished 1 interrupted clean(s)"
    (rec,) = out["recovered_cleans"]
    assert rec == {
        "instant": ts, "dry_run": False,
        "plan": {"policy": "KEEP_LATEST_FILE_VERSIONS", "earliest_instant_to_retain": None,
                 "last_completed_commit": hist[-1][0], "files_to_delete": doomed, "total_files": 2,
                 "partitions_to_delete": [], "notes": []},
        "deleted_files": doomed, "total_deleted": 2, "failed_files": {}, "deleted_partitions": [],
        "recovered_cleans": [], "stash_purged": [],
        "reason": f"deleted 2 file(s) in clean {ts} (KEEP_LATEST_FILE_VERSIONS)"}
    assert out["instant"] == res.instant and out["instant"] > ts and out["dry_run"] is False
    assert out["total_deleted"] == 2 == sum(len(v) for v in out["deleted_files"].values())
    assert out["plan"]["total_files"] == 2 and sorted(out["plan"]["files_to_delete"]) == ["p0", "p1"]
    assert out["failed_files"] == {} and out["deleted_partitions"] == [] and out["stash_purged"] == []


def test_clean_deletes_a_dropped_partition_with_its_checksum_files_only(tmp_path: Path) -> None:
    """Hadoop writes ``.<name>.crc`` beside files: those of doomed files and of the partition
    metafile go with the partition; any other file (a foreign checksum too) keeps it."""
    from hoodie import write_arrow
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1), (2, "b", 2), (3, "c", 3)]), options())
    base_of = {}
    for part in ("a", "c"):
        drop_partition(path, part)
        folder = tmp_path / "t" / part
        (base,) = [p.name for p in folder.iterdir() if p.name.endswith(".parquet")]
        base_of[part] = base
        (folder / f".{base}.crc").write_bytes(b"crc")
        (folder / "..hoodie_partition_metadata.crc").write_bytes(b"crc")
    (tmp_path / "t" / "c" / ".foreign.parquet.crc").write_bytes(b"crc")  # no such file: not ours
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}
    plan = plan_clean(HoodieTable(path), cfg)
    assert plan.partitions_to_delete == ["a"]
    assert plan.partitions_to_delete == ["a"]
    # Both groups were replaced: their files and checksums go. The kept partition keeps the checksum
    # of its metafile, which stays.
    assert sorted(f.rsplit("/", 1)[1] for f in plan.files_to_delete["a"]) == sorted(
        [base_of["a"], f".{base_of['a']}.crc", "..hoodie_partition_metadata.crc"])
    assert sorted(f.rsplit("/", 1)[1] for f in plan.files_to_delete["c"]) == sorted(
        [base_of["c"], f".{base_of['c']}.crc"])
    res = run_clean(path, cfg)
    assert res.deleted_partitions == ["a"] and not (tmp_path / "t" / "a").exists()
    assert sorted(p.name for p in (tmp_path / "t" / "c").iterdir()) == [
        "..hoodie_partition_metadata.crc", ".foreign.parquet.crc", ".hoodie_partition_metadata"]
    assert any("partition c is kept: .foreign.parquet.crc is not part of any cleanable file group" in n
               for n in res.plan.notes)


def _partition_with_metafile(root: Path, partition: str) -> bytes:
    from hoodie.format.storage import Storage
    from hoodie.format.table import write_partition_metadata

    write_partition_metadata(Storage(str(root)), partition, "20240101000000000")
    return (root / partition / ".hoodie_partition_metadata").read_bytes()


def test_delete_partition_folder_removes_emptied_parents_only(tmp_path: Path) -> None:
    from hoodie.format.storage import Storage
    from hoodie.services.clean import executor as C

    root = tmp_path / "t"
    _partition_with_metafile(root, "y=2024/m=01/d=01")
    _partition_with_metafile(root, "y=2024/m=02/d=01")
    st = Storage(str(root))
    assert C._delete_partition_folder(st, "y=2024/m=01/d=01")
    assert sorted(p.name for p in (root / "y=2024").iterdir()) == ["m=02"]  # m=01 emptied: gone
    assert C._delete_partition_folder(st, "y=2024/m=02/d=01") and not (root / "y=2024").exists()


def test_delete_partition_folder_keeps_a_partition_a_writer_adds_to(tmp_path: Path, monkeypatch, caplog) -> None:
    """New files in the partition: nothing is deleted. A file appearing between the check and the
    folder removal: the metafile comes back (with its content, or a fresh one), so the new file
    stays visible; a metafile the writer re-created first is left as it is."""
    import logging

    from hoodie.format.storage import Storage
    from hoodie.services.clean import executor as C

    root = tmp_path / "t"
    st = Storage(str(root))
    meta = _partition_with_metafile(root, "p")
    (root / "p" / "new.parquet").write_bytes(b"x")
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean"):
        assert not C._delete_partition_folder(st, "p")
    assert (root / "p" / ".hoodie_partition_metadata").read_bytes() == meta
    assert "partition p was not deleted: new files appeared in it" in [r.getMessage() for r in caplog.records]
    (root / "p" / "new.parquet").unlink()

    real = C._remove_empty_dir

    def writer_arrives(storage: Storage, rel: str, recreate: bool = False) -> bool:
        (root / rel / "late.parquet").write_bytes(b"x")
        if recreate:
            (root / rel / ".hoodie_partition_metadata").write_bytes(b"writer's own")
        return real(storage, rel)

    monkeypatch.setattr(C, "_remove_empty_dir", writer_arrives)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean"):
        assert not C._delete_partition_folder(st, "p")
    assert (root / "p" / ".hoodie_partition_metadata").read_bytes() == meta
    assert "partition p was not deleted: a file appeared while deleting it" in [r.getMessage() for r in caplog.records]
    (root / "p" / "late.parquet").unlink()
    monkeypatch.setattr(C, "_remove_empty_dir", lambda s, rel: writer_arrives(s, rel, recreate=True))
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="hoodie.services.clean"):
        assert not C._delete_partition_folder(st, "p")
    assert (root / "p" / ".hoodie_partition_metadata").read_bytes() == b"writer's own"
    assert "the writer already re-created p/.hoodie_partition_metadata" in [r.getMessage() for r in caplog.records]
    # A folder whose metafile was already gone gets a fresh one.
    (root / "p" / "late.parquet").unlink()
    (root / "p" / ".hoodie_partition_metadata").unlink()
    monkeypatch.setattr(C, "_remove_empty_dir", writer_arrives)
    assert not C._delete_partition_folder(st, "p")
    fresh = (root / "p" / ".hoodie_partition_metadata").read_text()
    assert "commitTime=00000000000000" in fresh and "partitionDepth=1" in fresh


def test_remove_empty_dir_local_and_object_store(tmp_path: Path, caplog) -> None:
    import logging
    from types import SimpleNamespace

    from hoodie.format.storage import Storage
    from hoodie.services.clean import executor as C

    root = tmp_path / "t"
    (root / "full").mkdir(parents=True)
    (root / "full" / "f").write_bytes(b"x")
    (root / "empty").mkdir()
    st = Storage(str(root))
    assert C._remove_empty_dir(st, "empty") and not (root / "empty").exists()
    assert C._remove_empty_dir(st, "missing")
    assert not C._remove_empty_dir(st, "full") and (root / "full" / "f").exists()
    deleted: list[str] = []

    def object_store(listing: list, fail: bool = False) -> SimpleNamespace:
        def delete_dir(path: str) -> None:
            if fail:
                raise FileNotFoundError(path)
            deleted.append(path)

        return SimpleNamespace(is_local=False, list_dir=lambda rel: listing if rel == "p" else ["?"],
                               full=lambda rel: f"bucket/t/{rel}", uri=lambda rel: f"s3://bucket/t/{rel}",
                               fs=SimpleNamespace(delete_dir=delete_dir))

    assert not C._remove_empty_dir(object_store(["a file"]), "p") and deleted == []
    assert C._remove_empty_dir(object_store([]), "p") and deleted == ["bucket/t/p"]
    with caplog.at_level(logging.DEBUG, logger="hoodie.services.clean"):
        assert C._remove_empty_dir(object_store([], fail=True), "p")  # no folder marker object: fine
    assert "no folder object to delete at s3://bucket/t/p" in [r.getMessage() for r in caplog.records]


def test_clean_metadata_records_file_names_per_nested_partition(tmp_path: Path) -> None:
    """What Java reads back from ``<t>.clean``: per partition the policy, the planned and deleted
    file names (names, not paths, also for nested partitions) and whether the partition went."""
    from hoodie.format.timeline import instant as I
    from hoodie import write_arrow
    from hoodie.services.clean import run_clean
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a/x", 1), (2, "b/y", 2)]), options())
    c2 = write_arrow(path, batch([(2, "b/y", 3)]), options())
    drop_partition(path, "a/x")
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                           "hoodie.cleaner.fileversions.retained": "1"})
    assert res.deleted_partitions == ["a/x"]
    t = HoodieTable(path)
    md = t.timeline.avro_metadata(I.Instant(res.instant, I.CLEAN))
    assert md["startCleanTime"] == res.instant and md["totalFilesDeleted"] == 2
    assert md["earliestCommitToRetain"] == "" and md["lastCompletedCommitTimestamp"] == res.plan.last_completed_commit
    assert 0 <= md["timeTakenInMillis"] < 600_000
    pm = md["partitionMetadata"]
    assert sorted(pm) == ["a/x", "b/y"]
    (old_b,) = res.deleted["b/y"]
    assert pm["b/y"] == {"partitionPath": "b/y", "policy": "KEEP_LATEST_FILE_VERSIONS",
                         "deletePathPatterns": [old_b.rsplit("/", 1)[1]],
                         "successDeleteFiles": [old_b.rsplit("/", 1)[1]], "failedDeleteFiles": [],
                         "isPartitionDeleted": False}
    (gone,) = res.deleted["a/x"]
    assert pm["a/x"]["deletePathPatterns"] == pm["a/x"]["successDeleteFiles"] == [gone.rsplit("/", 1)[1]]
    assert pm["a/x"]["isPartitionDeleted"] is True and c2 < res.instant


def test_clean_records_a_file_it_could_not_delete(tmp_path: Path, monkeypatch, caplog) -> None:
    """A delete that fails is logged, reported in the result and in the clean metadata
    (failedDeleteFiles), and the clean still completes with the other files deleted."""
    import logging

    from hoodie.format.storage import Storage
    from hoodie.format.timeline import plans
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    doomed = plan_clean(HoodieTable(path), cfg).files_to_delete
    (stuck,) = doomed["p0"][:1]
    real = Storage.delete

    def delete(self: Storage, rel: str, missing_ok: bool = True) -> bool:
        if rel == stuck:
            raise PermissionError(13, "Permission denied", rel)
        return real(self, rel, missing_ok)

    monkeypatch.setattr(Storage, "delete", delete)
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean.executor"):
        res = run_clean(path, cfg)
    assert res.failed["p0"] == [stuck] and stuck not in res.deleted["p0"]
    assert res.to_json()["failed_files"] == {"p0": [stuck]} and (tmp_path / "t" / stuck).exists()
    assert res.total_deleted == sum(len(v) for v in doomed.values()) - 1
    assert any(r.getMessage().startswith(f"clean {res.instant} could not delete {stuck}: ")
               and "Permission denied" in r.getMessage() for r in caplog.records)
    t = HoodieTable(path)
    meta = plans.read_avro_metadata(t.timeline.read_file(t.timeline.get(res.instant).file_name))
    pm = meta["partitionMetadata"]["p0"]
    assert pm["failedDeleteFiles"] == [stuck.rsplit("/", 1)[1]]
    assert stuck.rsplit("/", 1)[1] not in pm["successDeleteFiles"] and pm["successDeleteFiles"]


@pytest.mark.parametrize("point", ["clean.after_inflight", "clean.after_file", "clean.after_partition_files",
                                   "clean.before_complete"])
def test_clean_reaches_its_fault_points(tmp_path: Path, monkeypatch, point: str) -> None:
    """Each named point stops the clean before it completes (the next clean re-executes it)."""
    from hoodie.format.timeline import instant as I
    from hoodie.services.clean import run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    _stop_at(monkeypatch, point)
    with pytest.raises(_Stopped):
        run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    (c,) = HoodieTable(path).timeline.by_actions(I.CLEAN).instants
    assert c.is_inflight


def test_automatic_clean_runs_when_the_commits_since_the_last_clean_reach_the_maximum(tmp_path: Path) -> None:
    """hoodie.clean.max.commits=N: the automatic clean runs once N commits completed since the last
    clean (not only after more), and counts from the newest completed clean."""
    from hoodie.services.clean import maybe_clean_after_commit, run_clean
    from hoodie.services.clean.executor import commits_since_last_clean
    from hoodie import write_arrow
    from tests.services.test_clean import _history, batch, options

    path = str(tmp_path / "t")
    _history(path, 2)
    table = HoodieTable(path)
    keep_one = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    assert commits_since_last_clean(table) == 2
    assert run_clean(table, keep_one).instant is not None
    assert commits_since_last_clean(table.reload()) == 0
    write_arrow(path, batch([(0, "p0", 7)]), options())
    assert maybe_clean_after_commit(table, {**keep_one, "hoodie.clean.max.commits": "2"}) is None
    write_arrow(path, batch([(0, "p0", 8)]), options())
    assert commits_since_last_clean(table.reload()) == 2
    res = maybe_clean_after_commit(table, {**keep_one, "hoodie.clean.max.commits": "2"})
    assert res is not None and res.instant is not None


def test_interrupted_cleans_resumed_with_their_plan_or_dropped_when_it_is_damaged(tmp_path: Path, caplog) -> None:
    """A requested-only clean gets its inflight file (holding the same plan) and is re-executed; one
    whose plan is damaged is dropped with a warning naming the file, and the new plan covers its
    files."""
    import logging

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as TL
    from hoodie.services.clean import plan_clean, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    table = HoodieTable(path)
    cfg = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    plan = plan_clean(table, cfg)
    data = plans.write_avro_metadata("HoodieCleanerPlan", plan.to_avro(table.storage))
    damaged = TL.create_requested(table.storage, table.new_instant_time(), I.CLEAN, b"garbage")
    requested = TL.create_requested(table.storage, table.new_instant_time(), I.CLEAN, data)
    with caplog.at_level(logging.WARNING, logger="hoodie.services.clean.executor"):
        res = run_clean(path, cfg)
    assert [r.instant for r in res.recovered] == [requested.timestamp] and res.instant is None
    assert res.recovered[0].total_deleted == plan.total_files
    t = HoodieTable(path)
    assert t.timeline.get(damaged.timestamp) is None and t.timeline.get(requested.timestamp).is_completed
    inflight = I.instant_file_name(requested.timestamp, I.CLEAN, I.State.INFLIGHT)
    assert t.storage.read_bytes(f".hoodie/{inflight}") == data
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.startswith(f"{t.storage.uri('.hoodie/' + damaged.file_name)} is damaged (") and
               m.endswith(f"): dropping that interrupted clean {damaged.timestamp}; the new clean plan covers "
                          "what it had not deleted") for m in msgs)
    assert f"re-executing clean {requested.timestamp} left requested by an earlier run" in msgs


def test_a_hidden_file_that_is_no_checksum_keeps_a_dropped_partition(tmp_path: Path) -> None:
    """Only ``.<name>.crc`` is a Hadoop checksum: ``.<name>.bak`` (same length of suffix) beside a
    doomed file is foreign data, so the partition stays and the file with it."""
    from hoodie import write_arrow
    from hoodie.services.clean import plan_clean
    from tests.services.test_clean import batch, drop_partition, options

    path = str(tmp_path / "t")
    write_arrow(path, batch([(1, "a", 1)]), options())
    drop_partition(path, "a")
    folder = tmp_path / "t" / "a"
    (base,) = [p.name for p in folder.iterdir() if p.name.endswith(".parquet")]
    (folder / f".{base}.bak").write_bytes(b"not a checksum")
    plan = plan_clean(HoodieTable(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert plan.partitions_to_delete == [] and plan.files_to_delete == {"a": [f"a/{base}"]}
    assert f"partition a is kept: .{base}.bak is not part of any cleanable file group" in plan.notes


def test_run_clean_publishes_its_metrics_and_warns_about_unknown_keys(tmp_path: Path, monkeypatch) -> None:
    """What ``run_clean`` hands the metrics publisher (not for a dry run), with the table's labels and
    the caller's options; a misspelled option key is warned about."""
    from hoodie.services.clean import CleanConfig, executor, run_clean
    from tests.services.test_clean import _history

    path = str(tmp_path / "t")
    _history(path, 3)
    sent: list[tuple] = []
    monkeypatch.setattr(executor, "publish", lambda *a: sent.append(a))
    keep_one = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    run_clean(path, keep_one, dry_run=True)
    assert sent == []
    with pytest.warns(UserWarning, match="hoodie.cleaner.polcy"):
        res = run_clean(path, {**keep_one, "hoodie.cleaner.polcy": "x"})
    ((job, metrics, labels, options),) = sent
    assert job == "clean" and options == {**keep_one, "hoodie.cleaner.polcy": "x"}
    assert labels == {"table": HoodieTable(path).name, "base_path": HoodieTable(path).base_path}
    assert {k: v[0] for k, v in metrics.items() if k != "duration_ms"} == {
        "files_deleted": res.total_deleted, "files_failed": 0, "partitions_deleted": 0}
    assert res.total_deleted == 4 and 0 <= metrics["duration_ms"][0] < 600_000
    assert [v[1] for v in metrics.values()] == [
        "Files the last clean deleted", "Files the last clean failed to delete", "Partitions the last clean deleted",
        "Duration of the last clean, ms"]
    sent.clear()
    run_clean(HoodieTable(path), CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS", file_versions_retained=1))
    assert sent[0][3] == {}  # a CleanConfig carries no metrics options


def test_a_clean_instant_holds_its_plan_twice_and_logs_what_it_did(tmp_path: Path, caplog) -> None:
    """``.clean.requested`` and ``.clean.inflight`` both hold the HoodieCleanerPlan (as Hudi writes
    them); the completion is logged with the counts."""
    import logging

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.services.clean import run_clean
    from tests.services.test_clean import _history, batch, drop_partition, options
    from hoodie import write_arrow

    path = str(tmp_path / "t")
    _history(path, 2)
    write_arrow(path, batch([(9, "z", 1)]), options())
    drop_partition(path, "z")
    with caplog.at_level(logging.INFO, logger="hoodie.services.clean.executor"):
        res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                               "hoodie.cleaner.fileversions.retained": "1"})
    t = HoodieTable(path)
    req = t.storage.read_bytes(f".hoodie/{I.instant_file_name(res.instant, I.CLEAN, I.State.REQUESTED)}")
    inflight = t.storage.read_bytes(f".hoodie/{I.instant_file_name(res.instant, I.CLEAN, I.State.INFLIGHT)}")
    assert plans.read_avro_metadata(req) == plans.read_avro_metadata(inflight) == res.plan.to_avro(t.storage)
    assert res.deleted_partitions == ["z"] and res.total_deleted == 3
    assert f"clean {res.instant} deleted 3 files and 1 partitions" in [r.getMessage() for r in caplog.records]
    meta = plans.read_avro_metadata(t.timeline.read_file(t.timeline.get(res.instant).file_name))
    z = meta["partitionMetadata"]["z"]
    assert z["isPartitionDeleted"] is True and len(z["deletePathPatterns"]) == 1 == len(z["successDeleteFiles"])
    assert meta["partitionMetadata"]["p0"]["isPartitionDeleted"] is False
    assert meta["totalFilesDeleted"] == 3 and meta["earliestCommitToRetain"] == ""
