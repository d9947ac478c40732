"""Hudi 1.x's LSM archived timeline (``.hoodie/timeline/history/``, table versions 8 and 9).

No fixture table has archived instants (their history folders are empty), so :class:`JavaLSMWriter`
below writes the folder as Java's ``LSMTimelineWriter`` does, from these Apache Hudi sources:

* ``hudi-common/src/main/avro/HoodieLSMTimelineInstant.avsc``: the row schema (:data:`LSM_AVSC`).
* ``hudi-common/.../common/model/HoodieLSMTimelineManifest.java`` serialised by ``JsonUtils``'s
  mapper (fields only, default pretty printer): ``{"files": [{"fileName", "fileLen"}]}``.
* ``hudi-client-common/.../timeline/versioning/v2/LSMTimelineWriter.java``: file names
  ``<min>_<max>_<level>.parquet``, manifest ``N+1`` then ``_version_`` = ``"N+1"``, LSM compaction.
* ``MetadataConversionUtils.createLSMTimelineInstant`` and ``ActiveAction``: one row per instant with
  the completed action, the completed file's bytes as ``metadata`` (none when empty) and the plan.
* ``TimelineArchiverV2``: archived instants' active files are deleted after the manifest is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.execution import execute_file_group
from hoodie.services.write.plan import plan_write
from hoodie.services.write.prepare import prepare_records
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.slice import writer as W
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.archived import HISTORY_FOLDER, ArchivedTimeline, ArchivedTimelineError
from hoodie.errors import HoodieError
from hoodie.services.compaction import run_compaction
from hoodie import write_arrow
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

# HoodieLSMTimelineInstant.avsc, field for field.
LSM_AVSC = {
    "type": "record", "name": "HoodieLSMTimelineInstant", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "instantTime", "type": ["null", "string"], "default": None},
        {"name": "completionTime", "type": ["null", "string"], "default": None},
        {"name": "action", "type": ["null", "string"], "default": None},
        {"name": "metadata", "type": ["null", "bytes"], "default": None},
        {"name": "plan", "type": ["null", "bytes"], "default": None},
        {"name": "version", "type": "int", "default": 1},
    ],
}
# What parquet-avro makes of it: nullable unions become optional columns, the int a required one.
LSM_ARROW = pa.schema(
    [pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()), pa.field("action", pa.string()),
     pa.field("metadata", pa.binary()), pa.field("plan", pa.binary()),
     pa.field("version", pa.int32(), nullable=False)],
    metadata={"parquet.avro.schema": json.dumps(LSM_AVSC), "writer.model.name": "avro"})


def _jackson_pretty(files: Sequence[tuple[str, int]]) -> str:
    """A manifest as Jackson's default pretty printer writes ``HoodieLSMTimelineManifest``."""
    if not files:
        return '{\n  "files" : [ ]\n}'
    entries = "}, {".join(f'\n    "fileName" : "{n}",\n    "fileLen" : {size}\n  ' for n, size in files)
    return '{\n  "files" : [ {' + entries + '} ]\n}'


class JavaLSMWriter:
    """Writes ``.hoodie/timeline/history`` of a table the way Java's ``LSMTimelineWriter`` does."""

    def __init__(self, base: Path) -> None:
        self.dir = base / HISTORY_FOLDER
        self.dir.mkdir(parents=True, exist_ok=True)

    def latest(self) -> tuple[int, list[tuple[str, int]]]:
        """(latest snapshot version or -1, its files), as ``LSMTimeline.latestSnapshotManifest``."""
        vf = self.dir / "_version_"
        if vf.exists():
            version = int(vf.read_text())
        else:
            found = [int(p.name[len("manifest_"):]) for p in self.dir.glob("manifest_*")]
            version = max(found, default=-1)
        if version < 0:
            return -1, []
        doc = json.loads((self.dir / f"manifest_{version}").read_text())
        return version, [(f["fileName"], f["fileLen"]) for f in doc["files"]]

    def write_file(self, rows: Sequence[dict[str, Any]], level: int = 0, name: Optional[str] = None) -> str:
        """One LSM file (rows in instant order), named after its first and last instant."""
        name = name or f"{rows[0]['instantTime']}_{rows[-1]['instantTime']}_{level}.parquet"
        cols = {f.name: [r.get(f.name, 1 if f.name == "version" else None) for r in rows] for f in LSM_ARROW}
        pq.write_table(pa.table(cols, schema=LSM_ARROW), self.dir / name, compression="gzip")
        return name

    def update_manifest(self, add: str, remove: Sequence[str] = ()) -> int:
        """Manifest ``N+1`` = files of ``N`` minus ``remove`` plus ``add``; then ``_version_``."""
        version, files = self.latest()
        files = [f for f in files if f[0] not in remove] + [(add, (self.dir / add).stat().st_size)]
        new = 1 if version < 0 else version + 1
        (self.dir / f"manifest_{new}").write_text(_jackson_pretty(files))
        (self.dir / "_version_").write_text(str(new))
        return new

    def append(self, rows: Sequence[dict[str, Any]]) -> str:
        """An archival batch: a level-0 file committed by a new snapshot."""
        name = self.write_file(rows)
        self.update_manifest(name)
        return name

    def compact(self, names: Sequence[str]) -> str:
        """LSM compaction of ``names`` into one file of the next level (the sources stay on storage until
        cleaning, which keeps 3 snapshots, but leave the manifest)."""
        rows = [r for n in names for r in pq.read_table(self.dir / n).to_pylist()]
        lo = min(n.split("_")[0] for n in names)
        hi = max(n.split("_")[1] for n in names)
        level = int(names[0].split("_")[2].split(".")[0]) + 1
        name = self.write_file(rows, name=f"{lo}_{hi}_{level}.parquet")
        self.update_manifest(name, remove=names)
        return name

    def archive(self, base: Path, timestamps: Sequence[str]) -> None:
        """Move completed instants from ``.hoodie/timeline`` into the LSM timeline (TimelineArchiverV2):
        one row each (``createLSMTimelineInstant``), then the active files are deleted."""
        folder = base / ".hoodie" / "timeline"
        rows, moved = [], []
        for ts in sorted(timestamps):
            files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.split(".")[0].split("_")[0] == ts)
            done = [p for p in files if "_" in p.name.split(".")[0]]
            assert len(done) == 1, f"{ts} is not completed: {[p.name for p in files]}"
            completion, action = done[0].name.split(".")[0].split("_")[1], done[0].name.split(".")[1]
            pending = [p for p in files if p not in done]
            requested = next((p for p in pending if p.name.endswith(".requested")), None)
            inflight = next((p for p in pending if p.name.endswith(".inflight")), None)
            pending_action = requested.name.split(".")[1] if requested else action
            row: dict[str, Any] = {"instantTime": ts, "completionTime": completion, "action": action,
                                   "metadata": done[0].read_bytes() or None, "version": 1}
            if pending_action in (I.COMPACTION, I.LOG_COMPACTION, I.CLEAN) and requested is not None:
                row["plan"] = requested.read_bytes() or None
            elif pending_action in (I.REPLACE_COMMIT, I.CLUSTERING):
                row["plan"] = (inflight.read_bytes() if inflight else b"") or (
                    requested.read_bytes() if requested else b"") or None
            rows.append(row)
            moved.extend(files)
        self.append(rows)
        for p in moved:
            p.unlink()


def _row(ts: str, done: str, action: str, meta: Optional[bytes] = None, plan: Optional[bytes] = None) -> dict:
    return {"instantTime": ts, "completionTime": done, "action": action, "metadata": meta, "plan": plan}


def _storage(base: Path) -> Storage:
    return Storage(str(base))


# -- reading ------------------------------------------------------------------------------------------

def test_reads_the_latest_snapshot_and_only_its_files(tmp_path: Path) -> None:
    w = JavaLSMWriter(tmp_path)
    a = w.append([_row("20250101000000001", "20250101000000002", "deltacommit", b"meta-1"),
                  _row("20250101000000003", "20250101000000009", "commit", b"meta-3", b"plan-3"),
                  _row("20250101000000005", "20250101000000006", "clean", b"clean-5", b"cplan-5")])
    b = w.append([_row("20250101000000010", "20250101000000011", "replacecommit", b"meta-10", b"req-10"),
                  _row("20250101000000012", "20250101000000013", "deltacommit")])
    assert w.compact([a, b]) == "20250101000000001_20250101000000012_1.parquet"
    c = w.append([_row("20250101000000020", "20250101000000021", "deltacommit", b"meta-20")])
    # A file of an archival that crashed before its manifest: not part of the timeline.
    w.write_file([_row("20250101000000030", "20250101000000031", "deltacommit")])
    assert (w.dir / "_version_").read_text() == "4"
    assert json.loads((w.dir / "manifest_4").read_text()) == {"files": [
        {"fileName": "20250101000000001_20250101000000012_1.parquet",
         "fileLen": (w.dir / "20250101000000001_20250101000000012_1.parquet").stat().st_size},
        {"fileName": c, "fileLen": (w.dir / c).stat().st_size}]}

    tl = ArchivedTimeline.load(_storage(tmp_path))
    assert tl.snapshot == 4 and [f.name for f in tl.files] == ["20250101000000001_20250101000000012_1.parquet", c]
    assert [f.level for f in tl.files] == [1, 0]
    assert [(i.timestamp, i.action, i.state, i.completion) for i in tl] == [
        ("20250101000000001", "deltacommit", I.State.COMPLETED, "20250101000000002"),
        ("20250101000000003", "commit", I.State.COMPLETED, "20250101000000009"),
        ("20250101000000005", "clean", I.State.COMPLETED, "20250101000000006"),
        ("20250101000000010", "replacecommit", I.State.COMPLETED, "20250101000000011"),
        ("20250101000000012", "deltacommit", I.State.COMPLETED, "20250101000000013"),
        ("20250101000000020", "deltacommit", I.State.COMPLETED, "20250101000000021"),
    ]
    assert tl.completion_times()["20250101000000003"] == "20250101000000009"
    assert "20250101000000030" not in tl.completion_times()
    assert tl.metadata_bytes("20250101000000003") == b"meta-3" and tl.plan_bytes("20250101000000003") == b"plan-3"
    assert tl.metadata_bytes("20250101000000020") == b"meta-20"
    assert tl.metadata_bytes("20250101000000012") is None  # an empty completed file
    assert tl.metadata_bytes("20250101000000030") is None and tl.get("20250101000000030") is None


def test_pending_actions_map_to_their_completed_actions(tmp_path: Path) -> None:
    """Java stores the completed action; a row holding the pending one reads as the active timeline would."""
    JavaLSMWriter(tmp_path).append([_row("20250101000000001", "20250101000000004", "compaction"),
                                    _row("20250101000000002", "20250101000000005", "logcompaction"),
                                    _row("20250101000000003", "20250101000000006", "clustering")])
    assert [i.action for i in ArchivedTimeline.load(_storage(tmp_path))] == ["commit", "deltacommit", "replacecommit"]


def test_no_history_folder_or_an_empty_one_is_an_empty_timeline(tmp_path: Path) -> None:
    assert not ArchivedTimeline.load(_storage(tmp_path)) and ArchivedTimeline.load(_storage(tmp_path)).snapshot is None
    (tmp_path / HISTORY_FOLDER).mkdir(parents=True)
    assert ArchivedTimeline.load(_storage(tmp_path)).completion_times() == {}


@pytest.mark.parametrize("version_file", [None, "", "not a number"])
def test_without_a_usable_version_file_the_largest_manifest_is_read(tmp_path: Path,
                                                                    version_file: Optional[str]) -> None:
    w = JavaLSMWriter(tmp_path)
    w.append([_row("20250101000000001", "20250101000000002", "deltacommit")])
    w.append([_row("20250101000000003", "20250101000000004", "deltacommit")])
    w.append([_row("20250101000000005", "20250101000000006", "deltacommit")])
    (w.dir / "manifest_3").unlink()
    (w.dir / "manifest_10").write_text((w.dir / "manifest_2").read_text())  # 10 > 2 numerically, not as text
    if version_file is None:
        (w.dir / "_version_").unlink()
    else:
        (w.dir / "_version_").write_text(version_file)
    tl = ArchivedTimeline.load(_storage(tmp_path))
    assert tl.snapshot == 10
    assert [i.timestamp for i in tl] == ["20250101000000001", "20250101000000003"]


def test_a_manifest_listing_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    w = JavaLSMWriter(tmp_path)
    name = w.append([_row("20250101000000001", "20250101000000002", "deltacommit")])
    (w.dir / name).unlink()
    with pytest.raises(ArchivedTimelineError, match=rf"{name} is listed by manifest_1 .* but is missing.*_version_"):
        ArchivedTimeline.load(_storage(tmp_path))
    assert issubclass(ArchivedTimelineError, HoodieError)


@pytest.mark.parametrize("damage", ["manifest", "empty manifest", "no files", "version names a missing manifest",
                                    "parquet", "columns"])
def test_damage_is_a_clear_error_never_an_empty_timeline(tmp_path: Path, damage: str) -> None:
    w = JavaLSMWriter(tmp_path)
    name = w.append([_row("20250101000000001", "20250101000000002", "deltacommit")])
    culprit = {"manifest": "manifest_1", "empty manifest": "manifest_1", "no files": "manifest_1",
               "version names a missing manifest": "manifest_7", "parquet": name, "columns": name}[damage]
    if damage == "manifest":
        (w.dir / "manifest_1").write_text('{\n  "files" : [ {\n    "fileNa')
    elif damage == "empty manifest":
        (w.dir / "manifest_1").write_text("")
    elif damage == "no files":
        (w.dir / "manifest_1").write_text('{"entries": []}')
    elif damage == "version names a missing manifest":
        (w.dir / "_version_").write_text("7")
    elif damage == "parquet":
        (w.dir / name).write_bytes((w.dir / name).read_bytes()[:40])
    else:
        pq.write_table(pa.table({"instant_time": ["20250101000000001"]}), w.dir / name)
    with pytest.raises(ArchivedTimelineError, match=rf"{culprit} is (damaged|missing).*(backup|_version_)"):
        ArchivedTimeline.load(_storage(tmp_path))


# -- file slicing by archived completion times -------------------------------------------------------

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.write.table.version": "9", "hoodie.datasource.write.operation": "upsert"}
COLS = ["_hoodie_commit_time", "_hoodie_record_key", "k", "p", "v"]


def _data(keys: list[str], tag: str) -> pa.Table:
    return pa.table({"k": keys, "p": ["x"] * len(keys), "v": [f"{tag}{k}" for k in keys]})


def _late_deltacommit_table(path: str) -> tuple[str, str]:
    """A version-9 MOR table where deltacommit D was requested before compaction C was scheduled and
    completed after it (as with Java writers that do not block on compaction scheduling), C then ran.
    Returns (D, C)."""
    write_arrow(path, _data(["a", "b", "c"], "0"), OPTS)
    write_arrow(path, _data(["a"], "1"), OPTS)
    table = HoodieTable(path)
    cfg = WriteConfig.from_options(OPTS, table)
    d = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT")
    work = plan_write(table, prepare_records(_data(["b"], "D"), cfg), cfg, d.timestamp, table.avro_schema()).work
    stats = [execute_file_group(table, w, instant=d.timestamp, avro_schema=table.avro_schema(), cfg=cfg,
                                token=N.write_token(i, 9, i)) for i, w in enumerate(work)]
    # C is planned while D is inflight: its plan holds the slice without D's log.
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("x")
    c = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.sorted_logs()],
                                    sl.file_id, "x", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    done = W.complete_commit(HoodieTable(path), d,
                             W.commit_metadata_for(stats, avro_schema=table.avro_schema(), operation_type="UPSERT"))
    assert d.timestamp < c < done.completion
    run_compaction(path, instant=c)
    return d.timestamp, c


def test_archived_completion_times_place_logs_in_their_file_slices(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    d, c = _late_deltacommit_table(path)
    before = hoodie.read_table(path)
    assert dict(zip(before.column("k").to_pylist(), before.column("v").to_pylist())) == {
        "a": "1a", "b": "Db", "c": "0c"}
    assert sorted(rows_of(read_hudi_rs(path), COLS)) == sorted(rows_of(before, COLS))
    table = HoodieTable(path)
    completion = table.timeline.get(d).completion

    # Archive every instant before C, as Java's archival does, keeping C on the active timeline.
    older = [i.timestamp for i in table.timeline.completed().instants if i.timestamp < c]
    assert d in older and len(older) == 3
    JavaLSMWriter(Path(path)).archive(Path(path), older)
    table = HoodieTable(path)
    assert table.timeline.first().timestamp == c and not table.timeline.contains(d)
    assert ArchivedTimeline.load(table.storage).completion_times()[d] == completion

    after = hoodie.read_table(path)
    assert sorted(rows_of(after, COLS)) == sorted(rows_of(before, COLS))
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("x")
    assert sl.base_instant == c and [lf.parsed.base_instant for lf in sl.log_files] == [d]
    # The hudi-rs comparison is made before archiving only: hudi-rs does not read the LSM timeline
    # (0.5, and main at 0910ca7, whose TimelineLoader V2Archived branch is not implemented: "Implement
    # v2 LSM history reader"), and on layout 2 it drops files whose instant has no completion time on the
    # active timeline, so it reads b as "0b" here: D's archived update is lost to it.

    # Without the archived completion times, D's log would fall back to its requested time, before C,
    # and its update would be lost: the case above is the one the LSM timeline decides.
    monkeypatch.setattr(ArchivedTimeline, "load", classmethod(lambda cls, storage, folder=HISTORY_FOLDER: cls([])))
    lost = hoodie.read_table(path)
    assert dict(zip(lost.column("k").to_pylist(), lost.column("v").to_pylist()))["b"] == "0b"


def test_view_reads_the_archived_timeline_once_and_only_for_logs_older_than_the_active_timeline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    d, c = _late_deltacommit_table(path)
    loads: list[str] = []
    real = ArchivedTimeline.load.__func__  # type: ignore[attr-defined]

    def counting(cls: type, storage: Storage, folder: str = HISTORY_FOLDER) -> ArchivedTimeline:
        loads.append(storage.uri())
        return real(cls, storage, folder)

    monkeypatch.setattr(ArchivedTimeline, "load", classmethod(counting))
    table = HoodieTable(path)
    FileSystemView(table.storage, table.timeline).latest_file_slices("x")
    assert loads == []  # every log's deltacommit is on the active timeline
    JavaLSMWriter(Path(path)).archive(Path(path), [i.timestamp for i in table.timeline.completed().instants
                                                   if i.timestamp < c])
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    view.latest_file_slices("x")
    view.latest_file_slices("x", as_of=c)
    assert loads == [table.storage.uri()]
    # A damaged LSM timeline fails the read, naming the file, instead of misplacing D's log.
    monkeypatch.undo()
    (Path(path) / HISTORY_FOLDER / "manifest_1").write_text("{")
    with pytest.raises(ArchivedTimelineError, match="manifest_1 is damaged"):
        hoodie.read_table(path)
