"""Merging small version 6 archive files (``hoodie.archive.merge.*``, issue 33), against Hudi 0.14/0.15's
``HoodieTimelineArchiver``: when it merges (candidates, batch size, small-file limit), that the archived
timeline reads back the same (hoodie and hudi-rs), crash safety at each fault point with the next
archival's recovery, and a Hypothesis model of ``getMergeCandidates`` over many archivals."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hoodie
import hoodie.format.log.logformat as LF
from hoodie.format.log.logformat import BlockType, HeaderKey, encode_block
from hoodie.format.storage import Storage
from hoodie.format.timeline import archive_v1 as A1
from hoodie.format.timeline.instant import Instant, State
from hoodie.services.archive import run_archival
from hoodie.services.archive import merge as M
from hoodie.services.archive.config import ArchivalConfig
from hoodie.interfaces.cli_archive import _describe
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs
from tests.services.test_archival import _history, _opts, _rows

MERGE = {"hoodie.archive.merge.enable": "true"}


def _table_opts(**extra: Any) -> dict[str, str]:
    return {**_opts(6, hoodie_keep_min_commits="3", hoodie_keep_max_commits="4", hoodie_cleaner_commits_retained="2"),
            **extra}


@pytest.fixture(scope="module")
def long_lived(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A version 6 merge-on-read table archived after each commit (merging off, the default): 11 archive files."""
    base = str(tmp_path_factory.mktemp("merge") / "t")
    _history(base, 6, 20, _table_opts(**{"hoodie.archive.automatic": "true"}))
    return base


def _copy(src: str, tmp_path: Path) -> str:
    dst = str(tmp_path / "t")
    shutil.copytree(src, dst)
    return dst


def _archived_view(base: str) -> dict[str, Any]:
    """What readers of the archived timeline see: instants, commit metadata, one entry per instant file."""
    tl = A1.load_archived(Storage(base), 1)
    entries = tl.entries()
    keys = [(e["commitTime"], e["actionType"], e["actionState"]) for e in entries]
    assert len(keys) == len(set(keys))
    metas = {}
    for i in tl.instants:
        m = tl.commit_metadata(i.timestamp)
        metas[i.timestamp] = None if m is None else json.dumps(
            {p: [s.to_avro() for s in ss] for p, ss in m.partition_to_write_stats.items()}, sort_keys=True, default=str)
    return {"instants": [(i.timestamp, i.action) for i in tl.instants], "metadata": metas,
            "entries": sorted(json.dumps(e, sort_keys=True, default=str) for e in entries)}


def _raw_keys(base: str) -> list[tuple[str, str, str]]:
    """Every entry of every archive file on storage (duplicates included)."""
    st_ = Storage(base)
    return [(e["commitTime"], e["actionType"], e["actionState"])
            for rel in A1.archive_files(st_) for e in A1.read_archive_entries(st_, rel)]


def test_merging_is_off_by_default_and_the_keys_carry_hudis_defaults(long_lived: str) -> None:
    cfg = ArchivalConfig.from_options({})
    assert (cfg.merge_enable, cfg.merge_files_batch_size, cfg.merge_small_file_limit_bytes) == (False, 10, 20971520)
    # 20 commits archived one file per archival: 11 files, none merged although 10 are small.
    assert len(A1.archive_files(Storage(long_lived))) == 11


def test_a_merge_keeps_the_archived_timeline_and_reads_identical(long_lived: str, tmp_path: Path) -> None:
    base = _copy(long_lived, tmp_path)
    before = _archived_view(base)
    reads = _rows(hoodie.read_table(base))
    first = before["instants"][0][0]
    as_of = _rows(hoodie.read_table(base, as_of=before["instants"][2][0]))
    incr = _rows(hoodie.read_table(base, query_type="incremental", begin=first))
    # Batch size 12 > 11 candidates: nothing merged.
    res = run_archival(base, _table_opts(**MERGE, **{"hoodie.archive.merge.files.batch.size": "12"}))
    assert res.merged_into is None and len(A1.archive_files(Storage(base))) == 11
    res = run_archival(base, _table_opts(**MERGE, **{"hoodie.archive.merge.files.batch.size": "11"}))
    # All 11 candidates (newest first) merged into the next version; the plan is gone.
    assert res.merged_files == [A1.archive_file_name(v) for v in range(11, 0, -1)]
    assert res.merged_into == f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(12)}"
    assert A1.archive_files(Storage(base)) == [res.merged_into]
    assert not (Path(base) / A1.ARCHIVE_FOLDER / A1.MERGE_PLAN_NAME).exists()
    assert _archived_view(base) == before
    assert _rows(hoodie.read_table(base)) == reads == _rows(read_hudi_rs(base))
    assert _rows(hoodie.read_table(base, as_of=before["instants"][2][0])) == as_of
    assert _rows(hoodie.read_table(base, query_type="incremental", begin=first)) == incr
    # Blocks of at least hoodie.commits.archival.batch (10) records, except the last.
    blocks = A1.read_archive_blocks(Storage(base), res.merged_into)
    assert all(len(r) >= 10 for _, r in blocks[:-1])


def test_a_large_file_stops_the_candidate_run(long_lived: str, tmp_path: Path) -> None:
    base = _copy(long_lived, tmp_path)
    files = M.list_archive_files(Storage(base))
    # A limit below the size of file 8 (and above the newest three): candidates are 11, 10, 9 only.
    sizes = {f.version: f.size for f in files}
    limit = max(sizes[v] for v in (11, 10, 9))
    pad_to = limit + 1
    # Make archive file 8 larger than the limit by re-writing it with more blocks (same entries, re-encoded).
    rel8 = f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(8)}"
    blocks = A1.read_archive_blocks(Storage(base), rel8)
    data = b"".join(A1.encode_archive_block(r, s) for s, r in blocks)
    while len(data) < pad_to:
        data += b"".join(A1.encode_archive_block(r, s) for s, r in blocks)
    (Path(base) / rel8).write_bytes(data)
    before = _archived_view(base)
    opts = _table_opts(**MERGE, **{"hoodie.archive.merge.files.batch.size": "3",
                                   "hoodie.archive.merge.small.file.limit.bytes": str(limit)})
    res = run_archival(base, opts)
    assert res.merged_files == [A1.archive_file_name(v) for v in (11, 10, 9)]
    left = [A1.archive_file_version(p.rsplit("/", 1)[-1]) for p in A1.archive_files(Storage(base))]
    assert left == [1, 2, 3, 4, 5, 6, 7, 8, 12]
    assert _archived_view(base) == before
    # The merged file is the newest now: at most one candidate, below the batch size, so nothing more merges.
    assert run_archival(base, opts).merged_into is None


def test_a_merged_file_is_merged_again_without_decoding_its_full_blocks(long_lived: str, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    base = _copy(long_lived, tmp_path)
    st_ = Storage(base)
    first = M.merge_archive_files_if_necessary(st_, batch_size=11, small_file_limit_bytes=1 << 30, records_per_block=10)
    assert first is not None
    full = [A1.block_bytes(b) for b, _, n in A1.archive_data_blocks(st_, first.merged_file) if n >= 10]
    partial = sum(1 for _, _, n in A1.archive_data_blocks(st_, first.merged_file) if n < 10)
    assert len(full) >= 3
    for i in range(2):
        A1.write_archive_file(st_, [_commit_file(f"2099010100{i:07d}", 10)], 10)
    before = _archived_view(base)
    decoded: list[str] = []
    real = A1.decode_archive_block

    def counting(storage: Storage, block: Any, schema_json: str) -> list[dict]:
        decoded.append(block.log_file)
        return real(storage, block, schema_json)

    monkeypatch.setattr(A1, "decode_archive_block", counting)
    res = M.merge_archive_files_if_necessary(st_, batch_size=3, small_file_limit_bytes=1 << 30, records_per_block=10)
    assert res is not None and res.candidates[-1] == first.merged_file.rsplit("/", 1)[-1]
    # The two new small files' blocks were decoded, and of the merged file only its last, partial block; its full
    # blocks are in the new file as they were.
    assert sorted(set(decoded)) == sorted(f"{A1.ARCHIVE_FOLDER}/{c}" for c in res.candidates)
    assert decoded.count(first.merged_file) == partial == 1
    data = (Path(base) / str(res.merged_file)).read_bytes()
    assert all(b in data for b in full)
    monkeypatch.undo()
    assert _archived_view(base) == before
    assert all(len(r) >= 1 for _, r in A1.read_archive_blocks(st_, str(res.merged_file)))


def test_a_block_whose_records_do_not_frame_is_refused_before_merging(long_lived: str, tmp_path: Path) -> None:
    base = _copy(long_lived, tmp_path)
    st_ = Storage(base)
    rel = A1.archive_files(st_)[-1]
    # A block claiming one record more than it holds: refused by the framing check, nothing merged or deleted.
    schema_json, records = A1.read_archive_blocks(st_, rel)[0]
    block = A1.encode_archive_block(records, schema_json)
    payload = A1.archive_data_blocks(st_, rel)[0][0].read_content()
    bad = encode_block(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: schema_json},
                       struct.pack(">ii", 3, len(records) + 1) + payload[8:])
    assert block != bad
    A1.write_archive_file(st_, [_commit_file("20990101000000000", 10)], 10)
    newest = A1.archive_files(st_)[-1]
    (Path(base) / newest).write_bytes(bad)
    listing = sorted(os.listdir(Path(base) / A1.ARCHIVE_FOLDER))
    # records_per_block=1: every block is a full one, copied without decoding: the framing check still refuses it.
    with pytest.raises(A1.ArchiveV1Error, match="does not decode"):
        M.merge_archive_files_if_necessary(st_, batch_size=2, small_file_limit_bytes=1 << 30, records_per_block=1)
    # The plan was written before the candidates were read: the next archival reverts it, every file kept.
    assert M.recover_merge(st_) == "reverted"
    assert sorted(os.listdir(Path(base) / A1.ARCHIVE_FOLDER)) == listing


def test_the_dry_run_shows_what_merging_would_do_and_the_run_does_it(long_lived: str, tmp_path: Path) -> None:
    base = _copy(long_lived, tmp_path)
    # Two more commits without archival: the next archival archives something and writes file 12.
    _history_more = [hoodie.write_arrow(base, _b, _table_opts()) for _b in (_one_row(100), _one_row(101))]
    assert _history_more
    listing = sorted(os.listdir(Path(base) / A1.ARCHIVE_FOLDER))
    few = run_archival(base, _table_opts(**MERGE, **{"hoodie.archive.merge.files.batch.size": "13"}), dry_run=True)
    assert few.plan.instants and few.merged_into is None
    assert few.merge_note == ("no merge: 12 small archive file(s), fewer than hoodie.archive.merge.files.batch.size=13")
    opts = _table_opts(**MERGE, **{"hoodie.archive.merge.files.batch.size": "12"})
    dry = run_archival(base, opts, dry_run=True)
    assert sorted(os.listdir(Path(base) / A1.ARCHIVE_FOLDER)) == listing  # nothing written
    assert dry.merged_files[0] == A1.archive_file_name(12) + " (this archival's file)"
    assert dry.merged_into == f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(13)}"
    out = "\n".join(_describe(dry))
    assert f"would merge 12 small archive file(s) into {dry.merged_into}" in out
    real = run_archival(base, opts)
    assert real.archive_file == f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(12)}"
    assert real.merged_files == [dry.merged_files[0].split(" ")[0], *dry.merged_files[1:]]
    assert real.merged_into == dry.merged_into
    # A plan left by a killed merge: the dry run says the recovery comes first.
    (Path(base) / A1.ARCHIVE_FOLDER / A1.MERGE_PLAN_NAME).write_bytes(b"not avro")
    again = run_archival(base, opts, dry_run=True)
    assert again.merge_recovery == "plan removed" and again.merge_note is not None
    assert "an interrupted merge would be dropped (its plan did not parse) first" in "\n".join(_describe(again))


@pytest.mark.parametrize("merge", [False, True])
def test_one_archival_lists_the_archive_folder_once(long_lived: str, tmp_path: Path, merge: bool,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive folder grows by one file per archival on version 6 (unless merged), so each listing costs
    more as the table ages: one archival lists it once, for the newest file, the next version and the merge."""
    base = _copy(long_lived, tmp_path)
    for n in (200, 201):
        hoodie.write_arrow(base, _one_row(n), _table_opts())
    listed: list[str] = []
    real = Storage.list_dir

    def counting(self: Storage, rel: str = "") -> Any:
        listed.append(rel.strip("/"))
        return real(self, rel)

    monkeypatch.setattr(Storage, "list_dir", counting)
    opts = _table_opts(**(MERGE if merge else {}), **{"hoodie.archive.merge.files.batch.size": "12"})
    res = run_archival(base, opts)
    assert res.archive_file == f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(12)}"
    assert listed.count(A1.ARCHIVE_FOLDER) == 1, listed
    assert res.merged_into == (f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(13)}" if merge else None)


def test_the_archival_after_a_merge_does_not_read_the_merged_file(long_lived: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The merged file (up to 20 MiB) holds no active instant: the next archival in the process that merged it
    does not decode it to look for a crashed run's instants; a file this process did not merge is read."""
    base = _copy(long_lived, tmp_path)
    opts = _table_opts(**MERGE, **{"hoodie.archive.merge.files.batch.size": "12"})
    for n in (200, 201):
        hoodie.write_arrow(base, _one_row(n), _table_opts())
    first = run_archival(base, opts)  # archives (file 12, after reading file 11), then merges 12 files into 13
    merged = first.merged_into
    assert first.archived and merged == f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(13)}"
    twin = str(tmp_path / "twin")
    shutil.copytree(base, twin)  # the same merged file, which this process did not write there
    before = _archived_view(base)
    decoded: list[str] = []
    real = A1.decode_archive_block

    def counting(storage: Storage, block: Any, schema_json: str) -> list[dict]:
        decoded.append(storage.uri(block.log_file))
        return real(storage, block, schema_json)

    monkeypatch.setattr(A1, "decode_archive_block", counting)
    for path in (base, twin):
        for n in (300, 301):
            hoodie.write_arrow(path, _one_row(n), _table_opts())
        res = run_archival(path, opts)
        assert res.archive_file == f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(14)}" and res.archived
    assert Storage(base).uri(merged) not in decoded and Storage(twin).uri(merged) in decoded
    monkeypatch.undo()
    view = _archived_view(base)
    assert set(before["instants"]) < set(view["instants"]) and view == _archived_view(twin)


def test_instants_a_crashed_run_left_in_the_archive_keep_its_merge_from_being_trusted(
        long_lived: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An archival that leaves a crashed run's instants active (its plan covers only some of them) reports the
    archive as not clean, so a merge after it is not remembered and the next archival reads the merged file."""
    import dataclasses

    from hoodie.format.table import HoodieTable
    from hoodie.services.archive import action as AC

    base = _copy(long_lived, tmp_path)
    for n in (200, 201, 202):
        hoodie.write_arrow(base, _one_row(n), _table_opts())
    real_delete = Storage.delete

    def failing(self: Storage, rel: str, missing_ok: bool = True) -> bool:
        if rel.startswith(".hoodie/") and rel.count("/") == 1 and rel.split("/")[1][:1].isdigit():
            raise OSError("killed while deleting the archived instants")
        return real_delete(self, rel, missing_ok)

    with monkeypatch.context() as mp:
        mp.setattr(Storage, "delete", failing)
        with pytest.raises(OSError, match="killed"):
            run_archival(base, _table_opts())
    t = HoodieTable(base)
    st_ = t.storage
    cfg = ArchivalConfig.from_options(_table_opts())
    files, tl = AC._instant_files(st_, 1)
    plan = AC._plan(st_, tl, cfg, is_mor=True, tz="UTC", layout=1, props=dict(t.props))
    assert len(plan.instants) > 1  # the crashed run's instants are all still active
    listing = M.list_archive_files(st_)
    part = dataclasses.replace(plan, instants=plan.instants[:1])
    res = AC.ArchivalResult(base, part)
    assert AC._archive_one(st_, cfg, part, files, 1, "UTC", res, listing) is False
    assert res.archive_file is None  # the instant was in the crashed run's file already: not written twice
    files, tl = AC._instant_files(st_, 1)
    rest = AC._plan(st_, tl, cfg, is_mor=True, tz="UTC", layout=1, props=dict(t.props))
    assert AC._archive_one(st_, cfg, rest, files, 1, "UTC", AC.ArchivalResult(base, rest),
                           M.list_archive_files(st_)) is True


def _one_row(n: int) -> Any:
    import pyarrow as pa

    return pa.table({"k": ["p1-0"], "part": ["p1"], "ts": pa.array([n], pa.int64()), "v": pa.array([n], pa.int64())})


# -- crash safety -----------------------------------------------------------------------------------------------

_CRASH = """
import sys
from hoodie.services.archive import run_archival
run_archival(sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:]))
"""


@pytest.mark.parametrize("point,expect,merge_next", [
    ("archive.merge.after_merged_file", "reverted", True),
    ("archive.merge.while_deleting@1", "completed", False),
    *[pytest.param(p, e, m, marks=pytest.mark.slow) for p, e, m in [
        ("archive.merge.after_plan", "reverted", True), ("archive.merge.after_plan", "reverted", False),
        ("archive.merge.after_merged_file", "reverted", False), ("archive.merge.while_deleting@1", "completed", True),
        ("archive.merge.while_deleting@10", "completed", True),
        ("archive.merge.while_deleting@10", "completed", False)]],
])
def test_a_killed_merge_reads_every_instant_once_and_the_next_archival_recovers(
        long_lived: str, tmp_path: Path, point: str, expect: str, merge_next: bool) -> None:
    base = _copy(long_lived, tmp_path)
    before = _archived_view(base)
    snapshot = _rows(hoodie.read_table(base))
    opts = _table_opts(**MERGE, **{"hoodie.archive.merge.files.batch.size": "10"})
    env = {**os.environ, "HOODIE_FAULT_POINTS": point}
    p = subprocess.run([sys.executable, "-c", _CRASH, base, *[f"{k}={v}" for k, v in opts.items()]], env=env,
                       capture_output=True, timeout=120)
    assert p.returncode == -9, p.stderr.decode()[-2000:]
    plan = A1.read_merge_plan(Storage(base))
    assert plan is not None and plan.merged_file_name == A1.archive_file_name(12)
    # Readers while the merge is unfinished: every archived instant exactly once, nothing lost.
    assert _archived_view(base) == before
    assert _rows(hoodie.read_table(base)) == snapshot
    nxt = _table_opts(**(MERGE if merge_next else {}), **{"hoodie.archive.merge.files.batch.size": "10"})
    run_archival(base, nxt)
    assert A1.read_merge_plan(Storage(base)) is None
    assert _archived_view(base) == before
    raw = _raw_keys(base)
    assert len(raw) == len(set(raw))  # the recovery left no instant in two files
    names = [p.rsplit("/", 1)[-1] for p in A1.archive_files(Storage(base))]
    if expect == "completed" or merge_next:
        # Completed by the recovery, or reverted by it and merged again by this archival (version 12 again).
        assert names == [A1.archive_file_name(12)]
    else:
        # Reverted, and merging is now off (hoodie recovers whatever the setting: see merge.py).
        assert names == [A1.archive_file_name(v) for v in range(1, 12)]
    assert _rows(hoodie.read_table(base)) == snapshot == _rows(read_hudi_rs(base))


def _undecodable_block() -> bytes:
    """A well-framed archive block whose records do not decode (5 announced, none there)."""
    header = {HeaderKey.SCHEMA: json.dumps(A1.archived_meta_entry_schema())}
    return encode_block(BlockType.AVRO_DATA, header, struct.pack(">ii", 3, 5) + b"\x01")


def test_recovery_reverts_or_completes_as_java_does(long_lived: str, tmp_path: Path) -> None:
    base = _copy(long_lived, tmp_path)
    st_ = Storage(base)
    folder = A1.ARCHIVE_FOLDER
    plan_rel = f"{folder}/{A1.MERGE_PLAN_NAME}"
    # A plan that does not parse (the crash came while writing it): removed, nothing else touched.
    st_.write_bytes(plan_rel, b"Obj\x01garbage")
    assert M.recover_merge(st_) == "plan removed" and not st_.exists(plan_rel)
    assert len(A1.archive_files(st_)) == 11
    # All candidates there, a partial merged file: reverted (the merged file is deleted).
    cands = [A1.archive_file_name(v) for v in (11, 10)]
    st_.write_bytes(plan_rel, A1.encode_merge_plan([st_.uri(f"{folder}/{c}") for c in cands], A1.archive_file_name(12)))
    st_.write_bytes(f"{folder}/{A1.archive_file_name(12)}", _undecodable_block())
    before = _archived_view(base)  # the undecodable merged file named by the plan is skipped, as Java does
    assert M.recover_merge(st_) == "reverted"
    assert not st_.exists(f"{folder}/{A1.archive_file_name(12)}") and not st_.exists(plan_rel)
    assert _archived_view(base) == before
    # The same undecodable file without a plan naming it is damage: the reader says so.
    st_.write_bytes(f"{folder}/{A1.archive_file_name(12)}", _undecodable_block())
    with pytest.raises(A1.ArchiveV1Error, match="does not decode"):
        A1.load_archived(st_, 1)


class _CountingStorage(Storage):
    """A local storage that behaves as an object store (``is_local`` False: whole-file reads of small log
    files) and counts the files opened for reading (each open is a request on an object store)."""

    def __init__(self, base: str) -> None:
        super().__init__(base)
        self.is_local = False
        self.opened: list[str] = []

    def open_input(self, rel: str) -> Any:
        self.opened.append(rel)
        return super().open_input(rel)


def test_a_large_archive_file_is_read_in_one_request_on_object_stores(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A merged archive file holds hundreds of blocks; read block by block it cost four ranged reads and one
    open per block (17.6 s for a 9 MB file on a loopback S3, 0.15 s read whole)."""
    import hoodie.format.log.logformat as LF

    monkeypatch.setattr(LF, "WHOLE_FILE_READ_BYTES", 64)  # every archive file here is "large"
    A1.write_archive_file(Storage(str(tmp_path)), [_commit_file(f"2025010100{i:07d}", 10) for i in range(30)], 2)
    reader = _CountingStorage(str(tmp_path))
    tl = A1.load_archived(reader, 1)
    assert len(tl.instants) == 30
    assert reader.opened == [f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(1)}"]


# -- a model of getMergeCandidates over many archivals ---------------------------------------------------------

def _commit_file(ts: str, pad: int) -> A1.InstantFile:
    meta = {"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {"pad": "x" * pad},
            "operationType": "UPSERT"}
    return A1.InstantFile(Instant(ts, "commit", State.COMPLETED), json.dumps(meta).encode())


@settings(max_examples=examples(25), deadline=None)
@given(batch=st.integers(2, 5), limit=st.integers(600, 4000), commits_per_block=st.integers(1, 4),
       archivals=st.lists(st.tuples(st.integers(1, 3), st.integers(0, 2500)), min_size=1, max_size=14))
def test_merges_follow_a_model_of_get_merge_candidates(tmp_path_factory: pytest.TempPathFactory, batch: int,
                                                       limit: int, commits_per_block: int,
                                                       archivals: list[tuple[int, int]]) -> None:
    base = tmp_path_factory.mktemp("model")
    st_ = Storage(str(base))
    # Read as from an object store, with every file over the whole-read size: each load opens each file once.
    reader = _CountingStorage(str(base))
    model: dict[int, set[str]] = {}  # version -> instants in that file
    n = 0
    for count, pad in archivals:
        ts = [f"2025010100{n + i:07d}" for i in range(count)]
        n += count
        rel = A1.write_archive_file(st_, [_commit_file(t, pad) for t in ts], commits_per_block)
        model[A1.archive_file_version(rel.rsplit("/", 1)[-1])] = set(ts)
        # The model: newest first, stop at the first file over the limit, merge all if at least `batch`.
        sizes = {f.version: f.size for f in M.list_archive_files(st_)}
        run: list[int] = []
        for v in sorted(model, reverse=True):
            if sizes[v] > limit:
                break
            run.append(v)
        res = M.merge_archive_files_if_necessary(st_, batch_size=batch, small_file_limit_bytes=limit,
                                                 records_per_block=commits_per_block)
        if len(run) >= batch:
            new = max(model) + 1
            model[new] = set().union(*(model.pop(v) for v in run))
            assert res is not None and res.candidates == [A1.archive_file_name(v) for v in run]
        else:
            assert res is None
        on_disk = {f.version: {e["commitTime"] for e in A1.read_archive_entries(st_, f"{A1.ARCHIVE_FOLDER}/{f.name}")}
                   for f in M.list_archive_files(st_)}
        assert on_disk == model
        reader.opened.clear()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(LF, "WHOLE_FILE_READ_BYTES", 64)
            tl = A1.load_archived(reader, 1)
        assert [i.timestamp for i in tl.instants] == [f"2025010100{i:07d}" for i in range(n)]
        assert sorted(reader.opened) == sorted(f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(v)}" for v in model)
