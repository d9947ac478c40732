"""Writing Hudi 1.x's LSM archived timeline (table versions 8 and 9, ``.hoodie/timeline/history``).

Reference: ``hudi-v8-v9-format.md`` §3.3 and :mod:`hoodie.format.timeline.archived` (the reader);
Hudi's ``LSMTimelineWriter``, ``MetadataConversionUtils.createLSMTimelineInstant`` and ``ActiveAction``.

* :func:`write_level0`: one Parquet file ``<minInstant>_<maxInstant>_0.parquet`` of
  ``HoodieLSMTimelineInstant`` rows (one per archived instant: instant time, completion time,
  completed action, the completed file's bytes as ``metadata`` (null when empty), the plan as
  ``plan``, version 1), then manifest ``N+1`` (manifest ``N``'s files plus the new one), then
  ``_version_``. A file of the same name that the latest manifest already lists means an earlier run
  committed this batch and crashed before deleting the active files: nothing is written again. An
  unlisted one is a crash's leftover and is replaced.
* :func:`compact_and_clean`: once a level holds ``batch`` files, the oldest ``batch`` of them are
  merged into one file of the next level (``<min>_<max>_<level+1>.parquet``, a new manifest without
  them), level by level; then manifests beyond the newest ``retained`` (+ one per level compacted) and
  the files none of the kept manifests lists are deleted.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Optional, Sequence

from hoodie.faults import fault_point
from hoodie.format.storage import Storage
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.archived import (
    _DATA_FILE_RE, _MANIFEST_RE, HISTORY_FOLDER, MANIFEST_PREFIX, VERSION_FILE, ArchivedFile, _latest_version,
    _read_manifest,
)

# HoodieLSMTimelineInstant.avsc, field for field (parquet-avro stores it in the file's key-value metadata).
LSM_AVRO_SCHEMA = {
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


@dataclass(frozen=True)
class LSMRow:
    """One archived instant, as ``createLSMTimelineInstant`` makes it from the instant's active files."""

    instant_time: str
    completion_time: Optional[str]
    action: str  # the completed action (a compaction's commit, a clustering's replacecommit)
    metadata: Optional[bytes]
    plan: Optional[bytes]


def lsm_row(completed: I.Instant, completed_bytes: bytes, requested: Optional[tuple[str, bytes]],
            inflight: Optional[bytes]) -> LSMRow:
    """The row of one completed instant: ``requested`` is (its pending action, the requested file's bytes)
    when that file exists, ``inflight`` the inflight file's bytes. The plan is the requested file of a
    compaction, log compaction or clean, and the inflight (else requested) file of a replacecommit or
    clustering, as ``ActiveAction.getPlan`` picks it."""
    pending_action = requested[0] if requested is not None else completed.action
    plan: Optional[bytes] = None
    if pending_action in (I.COMPACTION, I.LOG_COMPACTION, I.CLEAN) and requested is not None:
        plan = requested[1] or None
    elif pending_action in (I.REPLACE_COMMIT, I.CLUSTERING):
        plan = (inflight or b"") or (requested[1] if requested is not None else b"") or None
    return LSMRow(completed.timestamp, completed.completion, completed.action, completed_bytes or None, plan)


def _arrow_schema():  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.schema(
        [pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()),
         pa.field("action", pa.string()), pa.field("metadata", pa.binary()), pa.field("plan", pa.binary()),
         pa.field("version", pa.int32(), nullable=False)],
        metadata={"parquet.avro.schema": json.dumps(LSM_AVRO_SCHEMA), "writer.model.name": "avro"})


def _parquet_bytes(rows: Sequence[LSMRow]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({
        "instantTime": [r.instant_time for r in rows], "completionTime": [r.completion_time for r in rows],
        "action": [r.action for r in rows], "metadata": [r.metadata for r in rows],
        "plan": [r.plan for r in rows], "version": [1] * len(rows)}, schema=_arrow_schema())
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="gzip")
    return buf.getvalue()


def data_file_name(min_instant: str, max_instant: str, level: int) -> str:
    """``<minInstant>_<maxInstant>_<level>.parquet``."""
    return f"{min_instant}_{max_instant}_{level}.parquet"


def _manifest_json(files: Sequence[ArchivedFile]) -> str:
    """``HoodieLSMTimelineManifest`` as Jackson's default pretty printer writes it."""
    if not files:
        return '{\n  "files" : [ ]\n}'
    entries = "}, {".join(f'\n    "fileName" : "{f.name}",\n    "fileLen" : {f.size}\n  ' for f in files)
    return '{\n  "files" : [ {' + entries + '} ]\n}'


def latest_files(storage: Storage, folder: str = HISTORY_FOLDER) -> tuple[int, list[ArchivedFile]]:
    """(latest snapshot version or -1, the files its manifest lists)."""
    version = _latest_version(storage, folder)
    if version is None:
        return -1, []
    return version, _read_manifest(storage, folder, version)


def _new_manifest(storage: Storage, folder: str, remove: Sequence[str], add: ArchivedFile) -> int:
    version, files = latest_files(storage, folder)
    files = [f for f in files if f.name not in set(remove)] + [add]
    new = 1 if version < 0 else version + 1
    rel = f"{folder}/{MANIFEST_PREFIX}{new}"
    # A crash between a manifest and the version file leaves manifest N+1 unreferenced: rewrite it.
    storage.delete(rel)
    storage.create_new(rel, _manifest_json(files).encode("utf-8"))
    vrel = f"{folder}/{VERSION_FILE}"
    storage.delete(vrel)
    storage.create_new(vrel, str(new).encode("utf-8"))
    return new


def write_level0(storage: Storage, rows: Sequence[LSMRow], folder: str = HISTORY_FOLDER) -> Optional[str]:
    """Commit ``rows`` (in instant order) as a new level-0 file and snapshot; returns the file name, or None
    when the latest snapshot already lists it (a re-run after a crash that came after the commit)."""
    if not rows:
        raise ValueError("nothing to archive")
    name = data_file_name(rows[0].instant_time, rows[-1].instant_time, 0)
    rel = f"{folder}/{name}"
    if storage.exists(rel):
        _, files = latest_files(storage, folder)
        if any(f.name == name for f in files):
            return None
        storage.delete(rel)  # a crash's leftover, never listed: readers ignore it
    data = _parquet_bytes(rows)
    storage.create_new(rel, data)
    fault_point("archive.lsm.after_data_file")
    _new_manifest(storage, folder, (), ArchivedFile(name, len(data)))
    return name


def _read_rows(storage: Storage, folder: str, name: str) -> list[LSMRow]:
    import pyarrow.parquet as pq

    with storage.open_input(f"{folder}/{name}") as f:
        t = pq.ParquetFile(f).read(columns=["instantTime", "completionTime", "action", "metadata", "plan"])
    cols = {c: t.column(c).to_pylist() for c in t.column_names}
    return [LSMRow(ts, done, a, m, p) for ts, done, a, m, p in
            zip(cols["instantTime"], cols["completionTime"], cols["action"], cols["metadata"], cols["plan"])]


def compact_and_clean(storage: Storage, batch: int, retained: int, folder: str = HISTORY_FOLDER) -> list[str]:
    """LSM compaction level by level, then cleaning (module docstring); returns the files written."""
    written: list[str] = []
    level = 0
    while True:
        _, files = latest_files(storage, folder)
        at_level = sorted((f for f in files if f.level == level), key=lambda f: (f.min_instant, f.max_instant))
        if len(at_level) < batch:
            break
        sources = at_level[:batch]
        rows = [r for f in sources for r in _read_rows(storage, folder, f.name)]
        rows.sort(key=lambda r: r.instant_time)
        name = data_file_name(min(f.min_instant for f in sources), max(f.max_instant for f in sources), level + 1)
        rel = f"{folder}/{name}"
        storage.delete(rel)  # a crash's leftover of the same compaction
        data = _parquet_bytes(rows)
        storage.create_new(rel, data)
        _new_manifest(storage, folder, [f.name for f in sources], ArchivedFile(name, len(data)))
        written.append(name)
        level += 1
    _clean(storage, retained + level, folder)
    return written


def _clean(storage: Storage, keep_versions: int, folder: str) -> None:
    listing = [s for s in storage.list_dir(folder) if not s.is_dir]
    versions = sorted((int(m.group(1)) for m in (_MANIFEST_RE.match(s.name) for s in listing) if m), reverse=True)
    if len(versions) <= keep_versions:
        return
    keep = versions[:keep_versions]
    needed: set[str] = set()
    for v in keep:
        needed.update(f.name for f in _read_manifest(storage, folder, v))
    for s in listing:
        m = _MANIFEST_RE.match(s.name)
        if m and int(m.group(1)) not in keep:
            storage.delete(f"{folder}/{s.name}")
    for s in listing:
        if _DATA_FILE_RE.match(s.name) and s.name not in needed:
            storage.delete(f"{folder}/{s.name}")


__all__ = ["LSMRow", "lsm_row", "write_level0", "compact_and_clean", "latest_files", "data_file_name",
           "LSM_AVRO_SCHEMA"]
