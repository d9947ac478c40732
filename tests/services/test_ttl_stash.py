"""Stash and restore: expired partitions' files move to .hoodie/.stashedForDeletion/<instant>/ after
the TTL commit; ``restore`` brings the rows back identical (ours and hudi-rs) as a new commit; stashes
survive crashes and the cleaner, and expire after their own retention."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie import write_arrow
from tests.helpers import keyed_rows
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.ttl import PartitionTTLStrategy, StashError, list_stashes, restore, run_ttl
from hoodie.services.ttl.service import TTL_STASH_KEY, delete_partitions
from hoodie.services.ttl.stash import STASH_DIR, read_manifest
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs
from tests.s3 import moto_s3  # noqa: F401  (fixture)

STASH = {"hoodie.partition.ttl.strategy.days.retain": "10", "hoodie.partition.ttl.stash.enabled": "true"}
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path"]
DATA = ["k", "part", "ts", "v"]


def opts(table_type: str, op: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "stash_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
    }


data = keyed_rows


def at(ms: int) -> str:
    return I.epoch_ms_to_instant(ms)


def build(path: str, table_type: str) -> None:
    """p0 and p1 last written in 1970 (inserts, updates and deletes), p2 now."""
    write_arrow(path, data("p0", range(6), 1, 0), opts(table_type, "insert"), instant=at(0))
    write_arrow(path, data("p1", range(4), 1, 100), opts(table_type, "insert"), instant=at(1000))
    write_arrow(path, data("p0", range(2), 2, 50), opts(table_type, "upsert"), instant=at(2000))
    write_arrow(path, data("p0", range(5, 6), 3, 0), opts(table_type, "delete"), instant=at(3000))
    write_arrow(path, data("p2", range(3), 1, 200), opts(table_type, "insert"))


class ExpireSelected(PartitionTTLStrategy):
    """A TTL strategy expiring exactly the partitions named by partition.selected (tests choose
    what expires without waiting for time to pass)."""

    def get_expired_partition_paths(self) -> list[str]:
        """The selected partitions."""
        return list(self.config.selected)


def expire(*partitions: str) -> dict[str, str]:
    """TTL options expiring ``partitions`` now, with the stash on."""
    return {"hoodie.partition.ttl.strategy.class": f"{__name__}.ExpireSelected",
            "hoodie.partition.ttl.strategy.partition.selected": ",".join(partitions),
            "hoodie.partition.ttl.stash.enabled": "true"}


def snapshot(t: pa.Table, cols: list[str]) -> list[tuple]:
    return sorted(rows_of(t, cols)) if t.num_rows else []


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_stash_and_restore_round_trip(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    base = tmp_path / "t"
    build(path, table_type)
    before_ours = hoodie.read_table(path)
    before_rs = read_hudi_rs(path)
    assert snapshot(before_ours, DATA + META) == snapshot(before_rs, DATA + META)
    res = run_ttl(path, STASH)
    assert res.expired_partitions == ["p0", "p1"] and res.stashed
    stash = base / STASH_DIR / res.instant
    assert sorted(p.name for p in (stash / "p0").iterdir())  # files moved
    for p in ("p0", "p1"):
        assert [f.name for f in (base / p).iterdir()] == [".hoodie_partition_metadata"]
    assert read_manifest(HoodieTable(path).storage, res.instant)["state"] == "complete"
    only_p2 = before_ours.filter(pa.compute.equal(before_ours.column("part"), "p2"))
    assert snapshot(hoodie.read_table(path), DATA) == snapshot(only_p2, DATA) == snapshot(read_hudi_rs(path), DATA)
    # The cleaner removes the emptied partition folders; the stash stays.
    clean = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert sorted(clean.deleted_partitions) == ["p0", "p1"] and not (base / "p0").exists()
    assert (stash / "p0").is_dir()
    back = restore(path, res.instant)
    assert back.rows == {"p0": 5, "p1": 4} and back.superseded_rows == {"p0": 0, "p1": 0}
    after_ours = hoodie.read_table(path)
    after_rs = read_hudi_rs(path)
    # Identical rows, meta columns included (commit time and sequence number are preserved); only
    # _hoodie_file_name points at the new base files.
    assert snapshot(after_ours, DATA + META) == snapshot(before_ours, DATA + META)
    assert snapshot(after_rs, DATA + META) == snapshot(before_rs, DATA + META)
    tl = HoodieTable(path).timeline
    assert tl.get(back.instant).is_completed and tl.get(back.instant).action in (I.COMMIT, I.DELTA_COMMIT)
    # The stashed files stay until the stash retention (a rollback of the restore reopens the stash).
    assert (stash / "p0").is_dir()
    assert [s.state for s in list_stashes(path)] == ["restored"]
    with pytest.raises(StashError, match="already restored"):
        restore(path, res.instant)
    # The restored partitions count as just written: KEEP_BY_TIME keeps them.
    assert run_ttl(path, STASH, dry_run=True).expired_partitions == []


def test_restore_keeps_newer_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "MERGE_ON_READ")
    res = run_ttl(path, STASH)
    # After TTL, key p1-0 is written again: the newer version wins over the stashed one.
    write_arrow(path, data("p1", range(1), 9, 999), opts("MERGE_ON_READ", "upsert"))
    back = restore(path, res.instant)
    assert back.superseded_rows["p1"] == 1 and back.rows["p1"] == 3
    got = {r["k"]: r["v"] for r in hoodie.read_table(path).to_pylist()}
    assert got["p1-0"] == 999 and got["p1-1"] == 101 and len(got) == 3 + 5 + 4
    assert {r["k"]: r["v"] for r in read_hudi_rs(path).to_pylist()} == got


def test_interrupted_stash_is_finished_before_the_cleaner_deletes(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    before = hoodie.read_table(path)
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    p2r = {"p0": sorted({s.file_id for s in view.latest_file_slices("p0")})}
    # The TTL commit completed, then the process died before moving anything.
    inst = delete_partitions(table, p2r, extra_metadata={TTL_STASH_KEY: "true"}).timestamp
    assert read_manifest(table.storage, inst) is None
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert read_manifest(table.storage, inst)["state"] == "complete"
    assert not (tmp_path / "t" / "p0").exists()
    restore(path, inst)
    assert snapshot(hoodie.read_table(path), DATA + META) == snapshot(before, DATA + META)


def test_restore_is_idempotent_after_a_crash(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    res = run_ttl(path, STASH)
    back = restore(path, res.instant)
    storage = HoodieTable(path).storage
    doc = read_manifest(storage, res.instant)
    doc["state"] = "complete"  # as if the process died after the commit, before the manifest update
    storage.write_bytes(f"{STASH_DIR}/{res.instant}/stash.json", json.dumps(doc).encode())
    again = restore(path, res.instant)
    assert again.already_restored and again.instant == back.instant
    assert hoodie.read_table(path).num_rows == 5 + 4 + 3


def test_stash_retention(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    res = run_ttl(path, STASH)
    kept = run_clean(path, {"hoodie.partition.ttl.stash.retain.days": "1"})
    assert kept.stash_purged == [] and (tmp_path / "t" / STASH_DIR / res.instant).is_dir()
    purged = run_clean(path, {"hoodie.partition.ttl.stash.retain.days": "PT0S"})
    assert purged.stash_purged == [res.instant] and not (tmp_path / "t" / STASH_DIR / res.instant).exists()
    with pytest.raises(StashError, match="no TTL stash"):
        restore(path, res.instant)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_cli_stashes_and_restore(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "MERGE_ON_READ")
    before = hoodie.read_table(path)
    out = _cli("ttl", "run", path, "--json", *[a for k, v in STASH.items() for a in ("--set", f"{k}={v}")])
    assert out.returncode == 0, out.stderr
    inst = json.loads(out.stdout)["instant"]
    ls = _cli("ttl", "stashes", path, "--json")
    assert json.loads(ls.stdout) == [{"instant": inst, "state": "complete", "partitions": {"p0": 3, "p1": 1},
                                      "restored_by": None, "rolled_back_by": None}]
    back = _cli("ttl", "restore", path, inst)
    assert back.returncode == 0, back.stderr
    assert "restored 9 row(s) of 2 partition(s)" in back.stdout
    assert snapshot(hoodie.read_table(path), DATA + META) == snapshot(before, DATA + META)
    bad = _cli("ttl", "restore", path, "20000101000000000")
    assert bad.returncode == 2 and "StashError" in bad.stderr


def test_ttl_stash_clean_restore_on_object_store(moto_s3: dict) -> None:
    """On S3 a stash move is a copy plus a delete and partition folders are prefixes."""
    from hoodie.format.storage import Storage

    base = "s3://hoodie-test/ttl_stash"
    o = opts("COPY_ON_WRITE", "insert")
    write_arrow(base, data("p0", range(3), 1, 0), o, storage_options=moto_s3, instant=at(0))
    write_arrow(base, data("p1", range(2), 1, 10), o, storage_options=moto_s3)
    before = hoodie.read_table(base, storage_options=moto_s3)
    table = HoodieTable(base, moto_s3)
    res = run_ttl(table, STASH)
    assert res.expired_partitions == ["p0"] and res.stashed
    st = Storage(base, moto_s3)
    assert [e.name for e in st.list_dir("p0")] == [".hoodie_partition_metadata"]
    assert any(e.name.endswith(".parquet") for e in st.list_dir(f"{STASH_DIR}/{res.instant}/p0"))
    clean = run_clean(HoodieTable(base, moto_s3), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert clean.deleted_partitions == ["p0"] and st.list_dir("p0") == []
    restore(HoodieTable(base, moto_s3), res.instant)
    after = hoodie.read_table(base, storage_options=moto_s3)
    assert snapshot(after, DATA + META) == snapshot(before, DATA + META)


def test_restore_interrupted_before_its_commit_is_redone(tmp_path: Path) -> None:
    from hoodie.format.file_group import naming as N
    from hoodie.format.slice import writer as W
    from hoodie.format.timeline.commit_metadata import CommitMetadata
    from hoodie.services.ttl.stash import RESTORED_FROM_KEY

    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    before = hoodie.read_table(path)
    res = run_ttl(path, STASH)
    table = HoodieTable(path)
    # A restore that died after writing one base file, before its commit.
    inflight = W.start_commit(table, I.COMMIT, operation_type="INSERT", inflight=CommitMetadata(
        operation_type="INSERT", extra_metadata={RESTORED_FROM_KEY: res.instant}))
    partial = data("p0", range(1), 1, 0)
    schema = table.arrow_schema()
    recs = W.add_meta_columns(partial, instant=inflight.timestamp, record_keys=partial.column("k"),
                              partition_paths="p0", file_name="x")
    recs = recs.select(schema.names).cast(schema)
    W.write_base_file(table.storage, partition="p0", file_id=N.new_file_id(0), instant=inflight.timestamp,
                      token="0-1-0", records=recs)
    back = restore(path, res.instant)
    assert HoodieTable(path).timeline.get(inflight.timestamp) is None  # rolled back
    assert back.rows == {"p0": 5, "p1": 4}
    assert snapshot(hoodie.read_table(path), DATA + META) == snapshot(before, DATA + META)


# -- rolling back a stashed TTL commit (issue 12 item 16) ------------------------------------------

@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_of_a_stashed_ttl_commit_brings_the_rows_back(tmp_path: Path, table_type: str) -> None:
    from hoodie.format.table import read_partition_metadata
    from hoodie.services.rollback.operation import rollback

    path = str(tmp_path / "t")
    build(path, table_type)
    before_ours, before_rs = hoodie.read_table(path), read_hudi_rs(path)
    created = read_partition_metadata(HoodieTable(path).storage, "p0")["commitTime"]
    res = run_ttl(path, STASH)
    # The cleaner removes the emptied partition folders, metafiles included.
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert not (tmp_path / "t" / "p0").exists()
    rb = rollback(path, res.instant)
    # Used to report success with the stashed rows still gone (12 rows before, 3 after).
    assert snapshot(hoodie.read_table(path), DATA + META) == snapshot(before_ours, DATA + META)
    assert snapshot(read_hudi_rs(path), DATA + META) == snapshot(before_rs, DATA + META)
    assert sorted(rb.unstashed_files) and all(f.startswith(("p0/", "p1/")) for f in rb.unstashed_files)
    table = HoodieTable(path)
    assert table.timeline.get(res.instant) is None
    # The partition keeps its creation time (KEEP_BY_CREATION_TIME reads it).
    assert read_partition_metadata(table.storage, "p0")["commitTime"] == created
    assert [(s.instant, s.state, s.rolled_back_by) for s in list_stashes(path)] == \
        [(res.instant, "rolled_back", rb.rollback_instant)]
    assert not (tmp_path / "t" / STASH_DIR / res.instant / "p0").exists()
    with pytest.raises(StashError, match="rolled back"):
        restore(path, res.instant)
    # Clean and TTL leave the rows alone afterwards (nothing is stashed or replaced any more).
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert hoodie.read_table(path).num_rows == before_ours.num_rows


def test_rollback_of_a_ttl_commit_whose_stash_is_gone_is_refused(tmp_path: Path) -> None:
    from hoodie.services.rollback.operation import rollback
    from hoodie.services.rollback.instant import RollbackError

    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    res = run_ttl(path, STASH)
    assert run_clean(path, {"hoodie.partition.ttl.stash.retain.days": "PT0S"}).stash_purged == [res.instant]
    timeline = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    with pytest.raises(RollbackError, match=rf"{res.instant}.*stash.*(deleted|gone)") as e:
        rollback(path, res.instant)
    assert "hoodie.partition.ttl.stash.retain.days" in str(e.value)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == timeline
    assert HoodieTable(path).timeline.get(res.instant).is_completed


_ROLLBACK_CHILD = """
import sys
from hoodie.services.rollback.operation import rollback
rollback(sys.argv[1], sys.argv[2])
"""


@pytest.mark.parametrize("fault", ["ttl.unstash.after_manifest", "ttl.unstash.after_move@2",
                                   "rollback.after_complete"])
def test_interrupted_rollback_of_a_stashed_ttl_commit_loses_nothing(tmp_path: Path, fault: str) -> None:
    from hoodie.services.rollback.operation import rollback

    path = str(tmp_path / "t")
    build(path, "MERGE_ON_READ")
    before = hoodie.read_table(path)
    res = run_ttl(path, STASH)
    after_ttl = snapshot(hoodie.read_table(path), DATA + META)
    env = {**__import__("os").environ, "HOODIE_FAULT_POINTS": fault}
    proc = subprocess.run([sys.executable, "-c", _ROLLBACK_CHILD, path, res.instant], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    # Killed with the TTL commit still in effect: readers see the TTL state, nothing more or less.
    if HoodieTable(path).timeline.get(res.instant) is not None:
        assert snapshot(hoodie.read_table(path), DATA + META) == after_ttl
    # The cleaner runs before anyone retries: it must not delete the files moved back so far.
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    if HoodieTable(path).timeline.get(res.instant) is not None:
        assert [s.state for s in list_stashes(path)] == ["complete"]
        rollback(path, res.instant)
    assert snapshot(hoodie.read_table(path), DATA + META) == snapshot(before, DATA + META)
    assert snapshot(read_hudi_rs(path), DATA + META) == snapshot(before, DATA + META)
    assert [s.state for s in list_stashes(path)] == ["rolled_back"]


# -- a restore never undoes later writes (issue 12 item 7) -----------------------------------------

@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_restore_never_undoes_a_later_delete_or_update(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    build(path, table_type)
    res = run_ttl(path, STASH)
    # After the TTL run, p1-0 and p1-1 are written again; then p1-0 is deleted and p1-1 updated.
    write_arrow(path, data("p1", range(2), 9, 900), opts(table_type, "upsert"))
    write_arrow(path, data("p1", range(1), 10, 0), opts(table_type, "delete"))
    write_arrow(path, data("p1", range(1, 2), 11, 700), opts(table_type, "upsert"))
    back = restore(path, res.instant)
    got = {r["k"]: r["v"] for r in hoodie.read_table(path).to_pylist()}
    # The restore used to bring the deleted p1-0 back with its stashed version.
    assert "p1-0" not in got
    assert got["p1-1"] == 701 and got["p1-2"] == 102 and got["p1-3"] == 103
    assert back.rows["p1"] == 2 and back.superseded_rows["p1"] == 2
    assert {r["k"]: r["v"] for r in read_hudi_rs(path).to_pylist()} == got


def test_restore_after_a_later_ttl_run_keeps_the_later_rows_apart(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "MERGE_ON_READ")
    first = run_ttl(path, STASH)
    # p1 is written again, then expired again by a second TTL run (rows now in the second stash).
    write_arrow(path, data("p1", range(2), 9, 900), opts("MERGE_ON_READ", "upsert"))
    write_arrow(path, data("p1", range(1), 10, 0), opts("MERGE_ON_READ", "delete"))
    second = run_ttl(path, expire("p1"))
    assert second.expired_partitions == ["p1"]
    restore(path, first.instant)
    got = {r["k"]: r["v"] for r in hoodie.read_table(path).to_pylist()}
    # p1-0 and p1-1 were written after the first run: their fate belongs to the second stash.
    assert {k: v for k, v in got.items() if k.startswith("p1")} == {"p1-2": 102, "p1-3": 103}
    restore(path, second.instant)
    got = {r["k"]: r["v"] for r in hoodie.read_table(path).to_pylist()}
    assert {k: v for k, v in got.items() if k.startswith("p1")} == {"p1-1": 901, "p1-2": 102, "p1-3": 103}
    assert {r["k"]: r["v"] for r in read_hudi_rs(path).to_pylist()} == got


def test_restore_refuses_when_cleaned_files_hide_later_deletes(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    res = run_ttl(path, STASH)
    w1 = write_arrow(path, data("p1", range(2), 9, 900), opts("COPY_ON_WRITE", "upsert"))
    d1 = write_arrow(path, data("p1", range(1), 10, 0), opts("COPY_ON_WRITE", "delete"))
    # The cleaner removes the base file of w1, the only file that showed p1-0 was written again.
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    timeline = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    rows = hoodie.read_table(path).num_rows
    with pytest.raises(StashError, match=rf"{d1} deleted rows after the TTL run.*{w1}.*--force"):
        restore(path, res.instant)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == timeline
    assert hoodie.read_table(path).num_rows == rows
    assert [s.state for s in list_stashes(path)] == ["complete"]
    refused = _cli("ttl", "restore", path, res.instant)
    assert refused.returncode == 2 and "--force" in refused.stderr
    # --force: what the remaining files show wins; p1-0 comes back, as the error warned.
    forced = _cli("ttl", "restore", path, res.instant, "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    back = json.loads(forced.stdout)
    got = {r["k"]: r["v"] for r in hoodie.read_table(path).to_pylist()}
    assert got["p1-1"] == 901 and got["p1-0"] == 100 and back["superseded_rows"]["p1"] == 1
    assert any(d1 in w for w in back["warnings"])  # the delete that may have been undone is named


def test_restore_refuses_after_a_user_overwrite_of_the_partition(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    build(path, "COPY_ON_WRITE")
    res = run_ttl(path, STASH)
    ow = write_arrow(path, data("p1", range(7, 8), 9, 0), opts("COPY_ON_WRITE", "insert_overwrite"))
    with pytest.raises(StashError, match=rf"partition p1 was replaced after the TTL run by {ow} \(INSERT_OVERWRITE\)"):
        restore(path, res.instant)
    assert sorted(r["k"] for r in hoodie.read_table(path).to_pylist() if r["part"] == "p1") == ["p1-7"]
