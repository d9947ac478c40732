"""Timeline archival end to end (issue 33): reads after archival equal reads before (hoodie's and
hudi-rs'), Java's guards on real tables, the archived timeline's formats, crash safety and bad settings.
The planner's rule itself is checked against a model of Java's code in test_archival_model.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.log.logformat import BlockType, HeaderKey, read_log_file
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import archive_v1 as A1
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.archived import HISTORY_FOLDER, ArchivedTimeline
from hoodie.format.slice.reader import ReadError
from hoodie.services.archive import ArchivalConfigError, run_archival, wait_for_async_archival
from hoodie.services.clean import run_clean
from hoodie.services.savepoint import create_savepoint
from hoodie import write_arrow
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

COLS = ["k", "part", "ts", "v"]


def _opts(version: int, **extra: Any) -> dict[str, str]:
    o = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
         "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": str(version),
         "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3",
         "hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "6",
         "hoodie.archive.automatic": "false"}
    o.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    return o


def _batch(n: int) -> pa.Table:
    """Commit ``n``: updates 4 keys of p1 and p2 (a rolling window) and inserts one new key in p1."""
    keys = [f"p1-{(n + i) % 6}" for i in range(2)] + [f"p2-{(n + i) % 5}" for i in range(2)] + [f"p1-new{n}"]
    return pa.table({"k": keys, "part": [k.split("-")[0] for k in keys],
                     "ts": pa.array([n] * len(keys), pa.int64()), "v": pa.array([100 * n + i for i in range(5)],
                                                                              pa.int64())})


def _history(base: str, version: int, n: int, opts: Optional[dict[str, str]] = None) -> list[str]:
    opts = opts or _opts(version)
    return [write_arrow(base, _batch(i), opts) for i in range(n)]


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(rows_of(t, COLS))


def _active(base: str) -> list[str]:
    t = HoodieTable(base)
    return [i.timestamp for i in t.timeline.completed_writes()]


def _reads(base: str, points: list[str], begins: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"snapshot": _rows(hoodie.read_table(base))}
    for p in points:
        out[f"as_of {p}"] = _rows(hoodie.read_table(base, as_of=p))
    for b in begins:
        out[f"incremental {b}"] = _rows(hoodie.read_table(base, query_type="incremental", begin=b))
    return out


@pytest.mark.parametrize("version", [6, 9])
def test_reads_after_archival_equal_reads_before_and_hudi_rs_agrees(tmp_path: Path, version: int) -> None:
    base = str(tmp_path / "t")
    writes = _history(base, version, 16)
    before_active = _active(base)
    # Points inside what stays active, and (version 6) before it: hoodie reads v6 history by instant time.
    keep = before_active[-4:]
    if version == 9:  # versions 8/9 travel by completion time
        done = {i.timestamp: i.completion for i in HoodieTable(base).timeline.completed_writes()}
        keep = [done[k] for k in keep]
    points = keep[:2] + ([writes[2], writes[5]] if version == 6 else [])
    begins = [writes[0], writes[3], keep[0]]
    before = _reads(base, points, begins)
    rs_before = _rows(read_hudi_rs(base))
    rs_as_of = {p: _rows(read_hudi_rs(base, as_of=p)) for p in keep[:2]}

    res = run_archival(base, _opts(version))
    assert res.archived, res.plan.notes
    after_active = _active(base)
    assert len(after_active) < len(before_active)
    assert set(after_active) <= set(before_active)
    assert max(res.archived) < min(after_active)
    assert _reads(base, points, begins) == before
    assert _rows(read_hudi_rs(base)) == rs_before == before["snapshot"]
    for p in keep[:2]:
        assert _rows(read_hudi_rs(base, as_of=p)) == rs_as_of[p]
    if version == 9:
        # Table versions 8/9 travel by completion time within the active timeline only: refused, not empty.
        with pytest.raises(ReadError, match="archived"):
            hoodie.read_table(base, as_of=writes[2])
        archived = ArchivedTimeline.load(Storage(base))
        assert {i.timestamp for i in archived} >= set(res.archived) - {i.timestamp for i in res.plan.instants
                                                                       if i.action in (I.CLEAN, I.ROLLBACK)}
    else:
        archived = A1.ArchivedTimelineV1.load(Storage(base))
        assert {i.timestamp for i in archived} == set(res.archived)
    # Every completed instant is in exactly one of the active and archived timelines.
    active = {i.timestamp for i in HoodieTable(base).timeline.completed()}
    assert not active & {i.timestamp for i in archived}


@pytest.mark.parametrize("version", [6, pytest.param(9, marks=pytest.mark.slow)])
def test_automatic_archival_bounds_the_active_timeline(tmp_path: Path, version: int) -> None:
    base = str(tmp_path / "t")
    opts = _opts(version, hoodie_archive_automatic="true", hoodie_keep_min_commits="3",
                 hoodie_keep_max_commits="4")
    writes = _history(base, version, 14, opts)
    t = HoodieTable(base)
    completed = t.timeline.completed_writes()
    assert len(completed) <= 4
    assert writes[0] not in {i.timestamp for i in t.timeline}
    assert _rows(hoodie.read_table(base)) == _rows(read_hudi_rs(base))


def test_a_pending_compaction_holds_archival_back(tmp_path: Path) -> None:
    """Java's first guard: nothing at or after the earliest pending instant of the write timeline, and the
    last completed commit before it stays too."""
    base = str(tmp_path / "t")
    opts = _opts(6)
    _history(base, 6, 4, opts)
    sched = {**opts, "hoodie.compact.inline": "false", "hoodie.compact.schedule.inline": "true"}
    _history(base, 6, 3, sched)
    t = HoodieTable(base)
    pending = t.timeline.pending_compactions().first()
    assert pending is not None
    no_compaction = {**opts, "hoodie.compact.inline": "false"}
    for i in range(10):
        write_arrow(base, _batch(20 + i), no_compaction)
    res = run_archival(base, no_compaction)
    before = [c.timestamp for c in t.timeline.completed_writes() if c.timestamp < pending.timestamp]
    assert all(ts < before[-1] for ts in res.archived)
    assert before[-1] in _active(base)
    assert res.plan.bounds[0].timestamp == before[-1] and "compaction" in res.plan.bounds[0].reason


def test_a_failed_write_holds_archival_back_until_it_is_rolled_back(tmp_path: Path) -> None:
    """A writer that died leaves its deltacommit requested/inflight: archival (which rolls nothing back)
    keeps it and everything after it, and the last completed commit before it."""
    from hoodie.format.timeline import active as T

    base = str(tmp_path / "t")
    opts = {**_opts(6), "hoodie.compact.inline": "false"}
    writes = _history(base, 6, 14, opts)
    failed = writes[5] + "5"  # an instant between writes 5 and 6 (Hudi compares instant times as text)
    assert writes[5] < failed < writes[6]
    T.transition_to_inflight(Storage(base), T.create_requested(Storage(base), failed, I.DELTA_COMMIT))
    res = run_archival(base, opts)
    assert res.archived and max(res.archived) < writes[5]
    assert writes[5] in _active(base)
    assert res.plan.bounds[0].timestamp == writes[5] and "inflight" in res.plan.bounds[0].reason
    assert HoodieTable(base).timeline.get(failed) is not None


def test_a_savepoint_holds_archival_back(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    writes = _history(base, 6, 5)
    create_savepoint(base, _active(base)[-1])
    sp = _active(base)[-1]
    _history(base, 6, 14)
    res = run_archival(base, _opts(6))
    assert all(ts < sp for ts in res.archived)
    assert sp in _active(base)
    assert any("savepoint" in n for n in res.plan.notes)
    assert writes[0] in res.archived or not res.archived


def test_a_replacecommit_is_kept_until_a_clean_passes_it_hudi_7779(tmp_path: Path) -> None:
    """A delete_partition (TTL's replacecommit) with no clean ever run: its replaced file groups are still on
    storage, and archiving it would bring them back for readers. Archival stops at it; once a clean's earliest
    commit to retain passes it (and the replaced files are gone), it may go."""
    base = str(tmp_path / "t")
    opts = _opts(6, hoodie_clean_automatic="false")
    _history(base, 6, 3, opts)
    write_arrow(base, _batch(0).filter(pa.compute.equal(_batch(0)["part"], "p2")),
                {**opts, "hoodie.datasource.write.operation": "delete_partition",
                 "hoodie.datasource.write.partitions.to.delete": "p2"})
    replace = HoodieTable(base).timeline.completed().by_actions(I.REPLACE_COMMIT).last()
    assert replace is not None
    for i in range(12):
        write_arrow(base, _batch(30 + i).filter(pa.compute.equal(_batch(30 + i)["part"], "p1")), opts)
    snapshot = _rows(hoodie.read_table(base))
    res = run_archival(base, opts)
    assert replace.timestamp in _active(base)
    assert all(ts < replace.timestamp for ts in res.archived)
    assert any("no clean has run" in b.reason for b in res.plan.bounds)
    assert _rows(hoodie.read_table(base)) == snapshot
    run_clean(base, opts)
    for i in range(4):
        write_arrow(base, _batch(50 + i).filter(pa.compute.equal(_batch(50 + i)["part"], "p1")), opts)
    run_clean(base, opts)
    res = run_archival(base, opts)
    assert replace.timestamp in res.archived
    assert _rows(hoodie.read_table(base)) == _rows(read_hudi_rs(base))
    assert not [r for r in _rows(hoodie.read_table(base)) if r[1] == "p2"]


@pytest.mark.parametrize("version", [6, pytest.param(9, marks=pytest.mark.slow)])
def test_the_metadata_table_bounds_archival_and_is_archived_by_its_own_rules(tmp_path: Path, version: int) -> None:
    base = str(tmp_path / "t")
    opts = _opts(version, hoodie_metadata_enable="true", hoodie_metadata_compact_max_delta_commits="6")
    writes = _history(base, version, 5, opts)
    # More than keep.max commits, but the metadata table has not compacted yet: nothing may go.
    write_arrow(base, _batch(40), {**opts, "hoodie.compact.inline": "false"})
    write_arrow(base, _batch(41), {**opts, "hoodie.compact.inline": "false"})
    res = run_archival(base, opts)
    mdt = Storage(base).child(".hoodie/metadata")
    from hoodie.format.timeline.active import Timeline

    layout = 1 if version == 6 else 2
    first_compaction = Timeline.load(mdt, layout).completed().by_actions(I.COMMIT).first()
    if first_compaction is None:
        assert not res.archived and any("metadata table has not compacted" in n for n in res.plan.notes)
    else:
        assert all(ts < first_compaction.timestamp for ts in res.archived)
    archived = set(res.archived)
    _history(base, version, 12, opts)
    snapshot = _rows(hoodie.read_table(base, options={"hoodie.metadata.enable": "true"}))
    last_compaction = Timeline.load(mdt, layout).completed().by_actions(I.COMMIT).last()
    assert last_compaction is not None
    res = run_archival(base, opts)
    assert res.archived
    assert all(ts < last_compaction.timestamp for ts in res.archived)
    assert writes[0] in archived | set(res.archived)
    data_tl = HoodieTable(base).timeline
    data_start = min([i.timestamp for i in data_tl.commits()] + [i.timestamp for i in data_tl.pending()])
    assert res.metadata_table is not None
    assert all(ts < data_start for ts in res.metadata_table.archived)
    assert res.metadata_table.archived, res.metadata_table.plan.notes
    assert _rows(hoodie.read_table(base, options={"hoodie.metadata.enable": "true"})) == snapshot
    assert _rows(hoodie.read_table(base)) == snapshot
    from hoodie.services.metadata.lifecycle import validate_metadata_table

    assert validate_metadata_table(HoodieTable(base)).equal
    if version == 9:
        assert _rows(read_hudi_rs(base)) == snapshot


# -- the version 6 archive format ------------------------------------------------------------------------------

def test_version_6_archive_files_are_hudis_log_files_of_archived_meta_entries(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    _history(base, 6, 12)
    t = HoodieTable(base)
    files = {n for n in t.timeline.file_names}
    res = run_archival(base, {**_opts(6), "hoodie.commits.archival.batch": "4"})
    assert res.archive_file == ".hoodie/archived/.commits_.archive.1_1-0-1"
    blocks = list(read_log_file(Storage(base), res.archive_file))
    assert blocks and all(b.block_type == BlockType.AVRO_DATA for b in blocks)
    assert all(set(b.header) == {HeaderKey.SCHEMA} for b in blocks)
    entries = A1.read_archive_entries(Storage(base), res.archive_file)
    assert all(len(A1.read_archive_entries(Storage(base), res.archive_file)) for _ in [0])
    # One entry per archived instant file: requested, inflight and completed.
    archived_files = {n for n in files if n.split(".")[0] in set(res.archived)}
    assert len(entries) == len(archived_files) == res.deleted_files
    assert {(e["commitTime"], e["actionType"], e["actionState"]) for e in entries} == {
        (i.timestamp, i.action, i.state.name) for i in map(I.parse_instant_file_name, archived_files)}
    assert len(blocks) == -(-len(entries) // 4)
    tl = A1.ArchivedTimelineV1.load(Storage(base))
    first = res.plan.commits[0]
    meta = tl.commit_metadata(first.timestamp)
    original = HoodieTable(base).timeline  # the file is gone from the active timeline now
    assert first.timestamp not in {i.timestamp for i in original}
    assert meta is not None and meta.partition_to_write_stats
    entry = tl.entry(first.timestamp, first.action)
    assert entry["hoodieCommitMetadata"]["extraMetadata"]["ROLLING_STAT_METADATA"] == ""
    clean = next(e for e in entries if e["actionType"] == "clean" and e["actionState"] == "COMPLETED")
    assert clean["hoodieCleanMetadata"]["earliestCommitToRetain"]
    req = next(e for e in entries if e["actionType"] == "clean" and e["actionState"] == "REQUESTED")
    assert req["hoodieCleanerPlan"]["policy"] == "KEEP_LATEST_COMMITS"
    # A second archival rolls over to the next file version.
    _history(base, 6, 6)
    assert run_archival(base, _opts(6)).archive_file == ".hoodie/archived/.commits_.archive.2_1-0-1"


def test_lsm_timeline_compacts_levels_and_keeps_three_manifests(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    opts = _opts(9, hoodie_archive_automatic="true", hoodie_timeline_compaction_batch_size="2",
                 hoodie_keep_min_commits="2", hoodie_keep_max_commits="3", hoodie_cleaner_commits_retained="1")
    # Version 6's merging of archive files does not apply: the LSM timeline compacts its own levels.
    opts.update({"hoodie.archive.merge.enable": "true", "hoodie.archive.merge.files.batch.size": "2"})
    _history(base, 9, 16, opts)
    assert not (Path(base) / A1.ARCHIVE_FOLDER).exists()
    hist = Path(base) / HISTORY_FOLDER
    manifests = sorted(p.name for p in hist.glob("manifest_*"))
    assert 1 <= len(manifests) <= 4
    archived = ArchivedTimeline.load(Storage(base))
    assert any(f.level >= 1 for f in archived.files)
    assert len([f for f in archived.files if f.level == 0]) < 2
    listed = {f.name for f in archived.files}
    # Files no kept manifest lists are cleaned.
    assert len(list(hist.glob("*.parquet"))) <= len(listed) + 2 * 3
    active = {i.timestamp for i in HoodieTable(base).timeline.completed()}
    assert not active & {i.timestamp for i in archived}
    assert _rows(hoodie.read_table(base)) == _rows(read_hudi_rs(base))


# -- crash safety -----------------------------------------------------------------------------------------------

_CRASH = """
import sys
from hoodie.services.archive import run_archival
run_archival(sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:]))
"""


@pytest.mark.parametrize("version,point", [
    (6, "archive.after_archive_file"), (9, "archive.after_manifest"),
    pytest.param(6, "archive.while_deleting@3", marks=pytest.mark.slow),
    pytest.param(9, "archive.lsm.after_data_file", marks=pytest.mark.slow),
    pytest.param(9, "archive.while_deleting@2", marks=pytest.mark.slow)])
def test_a_killed_archival_loses_nothing_and_the_next_one_finishes_it(tmp_path: Path, version: int,
                                                                      point: str) -> None:
    base = str(tmp_path / "t")
    _history(base, version, 10)
    snapshot = _rows(hoodie.read_table(base))
    completed = {i.timestamp for i in HoodieTable(base).timeline.completed()}
    env = {**os.environ, "HOODIE_FAULT_POINTS": point}
    args = [f"{k}={v}" for k, v in _opts(version).items()]
    p = subprocess.run([sys.executable, "-c", _CRASH, base, *args], env=env, capture_output=True, timeout=120)
    assert p.returncode == -9, p.stderr.decode()[-2000:]
    assert _rows(hoodie.read_table(base)) == snapshot
    res = run_archival(base, _opts(version))
    assert _rows(hoodie.read_table(base)) == snapshot == _rows(read_hudi_rs(base))

    def archived_set() -> set[str]:
        if version == 6:
            tl = A1.ArchivedTimelineV1.load(Storage(base))
            entries = tl.entries()
            keys = [(e["commitTime"], e["actionType"], e["actionState"]) for e in entries]
            assert len(keys) == len(set(keys))
            return {i.timestamp for i in tl}
        return {i.timestamp for i in ArchivedTimeline.load(Storage(base))}

    archived = archived_set()
    active = {i.timestamp for i in HoodieTable(base).timeline.completed()}
    assert archived and not archived & active
    assert archived | active == completed
    if version == 6:
        # The re-run found the whole batch in the newest archive file: no second file, no duplicate entry.
        assert len(A1.archive_files(Storage(base))) == 1
        assert res.archive_file is None


# -- settings -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("extra,rule", [
    ({"hoodie.keep.min.commits": "30", "hoodie.keep.max.commits": "30"}, "must be greater than the minimum"),
    ({"hoodie.keep.min.commits": "5", "hoodie.cleaner.commits.retained": "5"}, "not above hoodie.cleaner.commits"),
    ({"hoodie.archive.beyond.savepoint": "true"}, "holes in the active timeline"),
    ({"hoodie.keep.max.commits": "many"}, "hoodie.keep.max.commits"),
    ({"hoodie.archive.merge.files.batch.size": "1"}, "hoodie.archive.merge.files.batch.size"),
])
def test_settings_that_would_break_readers_are_refused_before_the_write(tmp_path: Path, extra: dict,
                                                                        rule: str) -> None:
    base = str(tmp_path / "t")
    _history(base, 6, 1)
    before = sorted(os.listdir(Path(base) / ".hoodie"))
    opts = {**_opts(6), "hoodie.archive.automatic": "true", **extra}
    with pytest.raises(ArchivalConfigError, match=rule):
        write_arrow(base, _batch(7), opts)
    assert sorted(os.listdir(Path(base) / ".hoodie")) == before
    with pytest.raises(ArchivalConfigError, match=rule):
        run_archival(base, opts)


def test_defaults_widen_to_a_cleaner_that_retains_more(tmp_path: Path) -> None:
    """Unset keep.* under a cleaner retaining 25 commits: Hudi widens the window (HUDI-6370), so does hoodie."""
    from hoodie.services.archive import ArchivalConfig

    cfg = ArchivalConfig.from_options({"hoodie.cleaner.commits.retained": "25"})
    assert (cfg.min_commits, cfg.max_commits) == (26, 36)


def test_async_archival_runs_after_the_commit_returns(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    opts = _opts(6, hoodie_archive_automatic="true", hoodie_archive_async="true")
    writes = _history(base, 6, 14, opts)
    wait_for_async_archival(base)
    write_arrow(base, _batch(99), opts)
    wait_for_async_archival(base)
    assert writes[0] not in _active(base)
    assert len(_active(base)) <= 6 + 1
    assert A1.archive_files(Storage(base))


# -- operating it: hoodie archive, CALL archive_commits, hoodie show timeline --archived ----------------------

def test_cli_dry_run_says_what_and_why_then_archives(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from hoodie.interfaces.cli import main

    base = str(tmp_path / "t")
    _history(base, 6, 9)
    sets = ["--set", "hoodie.keep.min.commits=4", "--set", "hoodie.keep.max.commits=6",
            "--set", "hoodie.cleaner.commits.retained=2"]
    before = sorted(os.listdir(Path(base) / ".hoodie"))
    assert main(["archive", base, "--dry-run", *sets]) == 0
    out = capsys.readouterr().out
    assert "would archive" in out and "why not more:" in out and "hoodie.keep.min.commits=4" in out
    assert sorted(os.listdir(Path(base) / ".hoodie")) == before
    assert main(["archive", base, "--json", *sets]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["archived"] and doc["archive_file"].endswith(".commits_.archive.1_1-0-1")
    assert main(["show", "timeline", base, "--archived", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    archived = [r["instant"] for r in rows if r.get("archived")]
    assert set(archived) == set(doc["archived"])
    assert [r["instant"] for r in rows] == sorted(r["instant"] for r in rows)


def test_call_archive_commits(tmp_path: Path) -> None:
    import hoodie.interfaces.procedures  # noqa: F401  (registers the procedures)
    from hoodie.interfaces.sql_call import PROCEDURES, bind

    base = str(tmp_path / "t")
    _history(base, 9, 9)
    proc = PROCEDURES["archive_commits"]

    def call(**kw: Any) -> dict[str, Any]:
        rows = proc.fn(None, bind(proc, [], {"basePath": base, **kw}))
        cols = [c.strip().split(" ")[0] for c in proc.output.split(",")]
        assert len(rows) == 1
        return dict(zip(cols, rows[0]))

    dry = call(min_commits=4, max_commits=6, retain_commits=2, dry_run=True)
    assert dry["result"] == 0 and dry["archived"] > 0 and not ArchivedTimeline.load(Storage(base)).instants
    done = call(min_commits=4, max_commits=6, retain_commits=2)
    assert done["archived"] == dry["archived"] and done["first_archived"] == dry["first_archived"]
    assert {i.timestamp for i in ArchivedTimeline.load(Storage(base))} >= {done["first_archived"]}
    again = call(min_commits=4, max_commits=6, retain_commits=2)
    assert again["archived"] == 0 and "not more than hoodie.keep.max.commits" in again["message"]


@pytest.mark.parametrize("stale", [I.CLEAN, pytest.param(I.ROLLBACK, marks=pytest.mark.slow)])
def test_a_stale_pending_service_instant_older_than_archived_writes_does_not_hide_them(tmp_path: Path,
                                                                                     stale: str) -> None:
    """Java archives commits past a pending clean or rollback (they are not write-timeline instants). Readers
    take writes older than the first active *commits-timeline* instant as archived (Java's
    isBeforeTimelineStarts); dating the start by the stale pending instant instead made every archived write
    after it look uncommitted and dropped its files from reads, in silence."""
    from hoodie.format.timeline import active as T

    base = str(tmp_path / "t")
    writes = _history(base, 6, 14, {**_opts(6), "hoodie.compact.inline": "false"})
    run_archival(base, _opts(6))
    snapshot = _rows(hoodie.read_table(base))
    stale_ts = writes[0][:-1] + ("0" if writes[0][-1] != "0" else "1")
    stale_ts = min(stale_ts, writes[0])[:-3] + "000"
    assert stale_ts < writes[0]
    T.create_requested(Storage(base), stale_ts, stale)
    assert HoodieTable(base).timeline.start > stale_ts
    assert _rows(hoodie.read_table(base)) == snapshot
    assert _rows(hoodie.read_table(base, as_of=_active(base)[0])) == _rows(read_hudi_rs(base, as_of=_active(base)[0]))


def test_a_compaction_completing_after_later_writes_is_never_archived_out_of_the_metadata_tables_sight(
        tmp_path: Path) -> None:
    """Version 6 names the metadata table's compaction after its latest deltacommit; a data compaction that
    completes after later writes (it runs without the table lock) records its deltacommit below that name.
    Had the metadata table compacted just before recording it, archival (guard 4: nothing at or after the
    metadata table's latest compaction) could archive the data compaction while its record sat only in a
    log file, where readers no longer count it: its base files vanished from the listing (seen with a
    writer, compaction and cleaner in separate processes)."""
    from hoodie.services.compaction import run_compaction, schedule_compaction
    from hoodie.services.metadata.lifecycle import validate_metadata_table

    base = str(tmp_path / "t")
    opts = _opts(6, hoodie_metadata_enable="true", hoodie_metadata_compact_max_delta_commits="4",
                 hoodie_compact_inline="false", hoodie_keep_min_commits="2", hoodie_keep_max_commits="3",
                 hoodie_cleaner_commits_retained="1")
    opts["hoodie.compact.inline.trigger.strategy"] = "TIME_ELAPSED"  # no deltacommit-count guard
    _history(base, 6, 3, opts)
    c = schedule_compaction(base, opts, check_trigger=False)
    assert c is not None
    for i in range(5):  # later writes: metadata-table deltacommits above c; its compaction waits for c
        write_arrow(base, _batch(10 + i), opts)
    run_compaction(base, c, opts)
    for i in range(2):
        write_arrow(base, _batch(20 + i), opts)
    run_clean(base, opts)
    res = run_archival(base, opts)
    expected = _rows(hoodie.read_table(base, options={"hoodie.metadata.enable": "false"}))
    assert _rows(hoodie.read_table(base, options={"hoodie.metadata.enable": "true"})) == expected
    check = validate_metadata_table(HoodieTable(base))
    assert check.equal, (res.archived, check.to_dict())
    assert _rows(read_hudi_rs(base)) == expected
