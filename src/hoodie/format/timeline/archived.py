"""The archived timeline of timeline layout 2 (table versions 8 and 9): Hudi 1.x's LSM timeline.

Reference: ``hudi-v8-v9-format.md`` §3.3. Hudi 1.x moves old completed instants out of the active
timeline (``.hoodie/timeline/``) into ``.hoodie/timeline/history/``:

* ``<minInstant>_<maxInstant>_<level>.parquet``: one row per archived instant, written by
  ``LSMTimelineWriter`` with the Avro schema ``HoodieLSMTimelineInstant``: ``instantTime``,
  ``completionTime``, ``action`` (nullable strings), ``metadata``, ``plan`` (nullable bytes: the
  completed instant file's content and the plan), ``version`` (int, 1).
* ``manifest_<N>``: JSON (``HoodieLSMTimelineManifest``, serialised field by field by Jackson)
  listing the files of snapshot N: ``{"files": [{"fileName": ..., "fileLen": ...}, ...]}``.
* ``_version_``: the latest N as text.

Files in the folder that the latest manifest does not list are not part of the timeline: they are
left over from an archival or an LSM compaction that did not commit, or wait for cleaning. Readers
therefore read ``_version_``, then that manifest, then only the files it lists (Java's
``LSMTimeline`` / ``ArchivedTimelineLoaderV2``).

A table that never archived has no such folder or an empty one: its archived timeline is empty. A
damaged snapshot (unreadable manifest, a listed file missing or not Parquet) raises
:class:`ArchivedTimelineError`; it never reads as empty, since an empty archived timeline would
silently change which file slice old log files belong to.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from hoodie.errors import HoodieError
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.instant import Instant, State

if TYPE_CHECKING:  # pyarrow is imported where used: most timelines never archive
    from hoodie.format.storage import Storage

log = logging.getLogger(__name__)

# Where Hudi 1.x keeps the LSM timeline: ``hoodie.timeline.path`` / ``hoodie.timeline.history.path``
# (defaults ``timeline`` / ``history``). hoodie's active timeline uses the default timeline path too.
HISTORY_FOLDER = ".hoodie/timeline/history"
VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_MANIFEST_RE = re.compile(r"^manifest_(\d+)$")
# LSMTimeline.ARCHIVE_FILE_PATTERN: the level is one digit.
_DATA_FILE_RE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")

# HoodieLSMTimelineInstant's field names (the Parquet column names, as parquet-avro writes them).
INSTANT_TIME = "instantTime"
COMPLETION_TIME = "completionTime"
ACTION = "action"
METADATA = "metadata"
PLAN = "plan"
_REQUIRED_COLUMNS = (INSTANT_TIME, COMPLETION_TIME, ACTION)

# What to do when the snapshot is damaged: Hudi keeps the files of the last 3 snapshots, so an
# older manifest usually still works.
_FIX_SNAPSHOT = ("restore it from a backup, or write the number N of an older manifest_N whose listed files all "
                 f"exist into {VERSION_FILE} (Hudi keeps the files of the last 3 snapshots)")


class ArchivedTimelineError(HoodieError):
    """The archived (LSM) timeline of a table version 8/9 table is damaged: a manifest that is not
    valid JSON or lists no files, or a listed Parquet file that is missing or unreadable. The
    message names the file and what to do."""


@dataclass(frozen=True)
class ArchivedFile:
    """One Parquet file of the LSM timeline, as the manifest lists it."""

    name: str
    size: int  # ``fileLen`` from the manifest

    @property
    def min_instant(self) -> str:
        """The smallest instant time in the file (from its name)."""
        return _parse_data_file_name(self.name)[0]

    @property
    def max_instant(self) -> str:
        """The largest instant time in the file (from its name)."""
        return _parse_data_file_name(self.name)[1]

    @property
    def level(self) -> int:
        """The LSM level of the file (0: written by an archival; higher: merged by LSM compaction)."""
        return _parse_data_file_name(self.name)[2]


def _parse_data_file_name(name: str) -> tuple[str, str, int]:
    m = _DATA_FILE_RE.match(name)
    if m is None:
        raise ValueError(f"{name!r} is not an LSM timeline file name (<minInstant>_<maxInstant>_<level>.parquet)")
    return m.group(1), m.group(2), int(m.group(3))


class ArchivedTimeline(I.InstantSequence):
    """Completed instants that Hudi 1.x archived into the LSM timeline, in timeline order.

    Load it with :meth:`load`. Instants are completed, carry their completion time and use their
    completed action (a compaction is a ``commit``, a log compaction a ``deltacommit``, a
    clustering a ``replacecommit``), as on the active timeline. Commit metadata and plans stay in
    the Parquet files until asked for (:meth:`metadata_bytes`, :meth:`plan_bytes`).
    """

    def __init__(self, instants: Sequence[Instant], files: Sequence[ArchivedFile] = (),
                 storage: Optional["Storage"] = None, folder: str = HISTORY_FOLDER,
                 snapshot: Optional[int] = None) -> None:
        self.instants: list[Instant] = sorted(instants, key=Instant.sort_key)
        self.files: list[ArchivedFile] = list(files)
        self.folder = folder
        self.snapshot = snapshot  # the manifest version read; None when there is none
        self._storage = storage
        self._by_time: dict[str, Instant] = {}
        for inst in self.instants:
            self._by_time.setdefault(inst.timestamp, inst)
        # (file name, column) -> {instantTime: bytes or None}, read on first use.
        self._blobs: dict[tuple[str, str], dict[str, Optional[bytes]]] = {}

    # -- loading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, storage: "Storage", folder: str = HISTORY_FOLDER) -> "ArchivedTimeline":
        """Read the latest snapshot of the LSM timeline under ``folder`` of the table at ``storage``.

        ``_version_`` names the snapshot; without it (or when it does not hold a number, as after a
        crash between writing a manifest and the version file) the largest ``manifest_<N>`` is the
        latest, as in Java's ``LSMTimeline.latestSnapshotVersion``. Only the Parquet files that
        manifest lists are read, and of them only the instant time, completion time and action.

        Returns:
            The archived timeline; empty when the folder is absent or holds no manifest.

        Raises:
            ArchivedTimelineError: the manifest is missing (named by ``_version_``), not the JSON Hudi
                writes, or lists a file that is missing, misnamed or not a readable LSM timeline file.
        """
        version = _latest_version(storage, folder)
        if version is None:
            return cls([], (), storage, folder)
        files = _read_manifest(storage, folder, version)
        instants: list[Instant] = []
        seen: set[str] = set()
        for f in files:
            for inst in _read_instants(storage, folder, f"{MANIFEST_PREFIX}{version}", f):
                # Java keeps the first row it meets per instant time (putIfAbsent); a valid snapshot
                # lists every instant once.
                if inst.timestamp not in seen:
                    seen.add(inst.timestamp)
                    instants.append(inst)
        return cls(instants, files, storage, folder, version)

    # -- access -------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"ArchivedTimeline(snapshot={self.snapshot}, {len(self.instants)} instants)"

    def get(self, timestamp: str) -> Optional[Instant]:
        """The archived instant requested at ``timestamp``, if any."""
        return self._by_time.get(timestamp)

    def completion_times(self) -> dict[str, str]:
        """Requested time -> completion time of every archived instant that recorded one."""
        return {i.timestamp: i.completion for i in self.instants if i.completion is not None}

    def metadata_bytes(self, timestamp: str) -> Optional[bytes]:
        """The content of the archived instant's completed file (for commit-like actions the Avro
        ``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata``, as in the active timeline), or
        None when the instant is not archived or its row holds none (Java stores none for an
        empty completed file).

        Raises:
            ArchivedTimelineError: the Parquet file holding the instant became unreadable.
        """
        return self._blob(timestamp, METADATA)

    def commit_metadata(self, timestamp: str) -> Optional[CommitMetadata]:
        """The archived commit metadata of a completed commit-like instant, or None (the same call as
        :meth:`hoodie.format.timeline.archive_v1.ArchivedTimelineV1.commit_metadata`)."""
        blob = self.metadata_bytes(timestamp)
        return CommitMetadata.from_json_bytes(blob) if blob else None

    def plan_bytes(self, timestamp: str) -> Optional[bytes]:
        """The archived instant's plan (compaction or clean plan, requested/inflight replacecommit
        content), or None when the instant is not archived or its row holds none.

        Raises:
            ArchivedTimelineError: the Parquet file holding the instant became unreadable.
        """
        return self._blob(timestamp, PLAN)

    def _blob(self, timestamp: str, column: str) -> Optional[bytes]:
        if timestamp not in self._by_time or self._storage is None:
            return None
        # The file names bound their instants: only files whose range holds the instant are read.
        for f in self.files:
            if not (f.min_instant <= timestamp <= f.max_instant):
                continue
            key = (f.name, column)
            if key not in self._blobs:
                manifest = f"{MANIFEST_PREFIX}{self.snapshot}"
                self._blobs[key] = _read_column(self._storage, self.folder, manifest, f, column)
            got = self._blobs[key]
            if timestamp in got:
                return got[timestamp]
        return None


# -- snapshot files ----------------------------------------------------------------------------------

def _latest_version(storage: "Storage", folder: str) -> Optional[int]:
    """The snapshot version to read, or None when there is no manifest at all."""
    listing = storage.list_dir(folder)  # an absent folder lists as empty
    names = {s.name for s in listing if not s.is_dir}
    if VERSION_FILE in names:
        raw = storage.read_bytes(f"{folder}/{VERSION_FILE}")
        try:
            return int(raw.decode("utf-8").strip())
        except (UnicodeDecodeError, ValueError):
            # Java falls back to the manifest listing too: the version file is rewritten (delete,
            # then create) after each manifest, so a crash can leave it empty or missing.
            log.warning("%s holds %r, not a snapshot number; reading the largest manifest_<N> instead",
                        storage.uri(f"{folder}/{VERSION_FILE}"), raw[:40])
    versions = [int(m.group(1)) for m in (_MANIFEST_RE.match(n) for n in names) if m]
    if not versions:
        if any(_DATA_FILE_RE.match(n) for n in names):
            # Java reads this as an empty timeline as well: no archival committed a snapshot.
            log.debug("%s has LSM timeline files but no manifest: no archived instant is committed",
                      storage.uri(folder))
        return None
    return max(versions)


def _read_manifest(storage: "Storage", folder: str, version: int) -> list[ArchivedFile]:
    rel = f"{folder}/{MANIFEST_PREFIX}{version}"
    uri = storage.uri(rel)
    try:
        raw = storage.read_bytes(rel)
    except FileNotFoundError:
        raise ArchivedTimelineError(
            f"{uri} is missing, but {storage.uri(f'{folder}/{VERSION_FILE}')} names snapshot {version}: the archived "
            f"timeline cannot be read. {_FIX_SNAPSHOT}") from None

    def damaged(problem: str) -> ArchivedTimelineError:
        return ArchivedTimelineError(f"{uri} is damaged ({problem}): the archived timeline cannot be read. "
                                     f"{_FIX_SNAPSHOT}")

    # Java reads an empty manifest as an empty snapshot; here it is damage, since reading an empty
    # archived timeline instead of the real one would silently misplace old log files.
    try:
        doc: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise damaged(f"not JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise damaged('no "files" list')
    out: list[ArchivedFile] = []
    for entry in doc["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("fileName"), str):
            raise damaged(f'a file entry without "fileName": {entry!r}')
        name = entry["fileName"]
        if _DATA_FILE_RE.match(name) is None:
            raise damaged(f"it lists {name!r}, which is not named <minInstant>_<maxInstant>_<level>.parquet")
        size = entry.get("fileLen")
        out.append(ArchivedFile(name, int(size) if isinstance(size, int) else -1))
    return out


# -- Parquet files -------------------------------------------------------------------------------------

def _columns(storage: "Storage", folder: str, manifest: str, f: ArchivedFile,
             columns: Sequence[str]) -> dict[str, list[Any]]:
    """The given columns of a listed file, or a clear error. Only those columns' chunks are read:
    files merged into higher LSM levels can be large, and the metadata column holds most of it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rel = f"{folder}/{f.name}"
    uri = storage.uri(rel)

    def damaged(problem: str) -> ArchivedTimelineError:
        return ArchivedTimelineError(f"{uri} is damaged ({problem}): the archived timeline cannot be read. "
                                     f"{_FIX_SNAPSHOT}")

    if not storage.is_file(rel):
        raise ArchivedTimelineError(
            f"{uri} is listed by {manifest} of the archived timeline but is missing: the archived timeline cannot be "
            f"read. {_FIX_SNAPSHOT}")
    try:
        with storage.open_input(rel) as source:
            pf = pq.ParquetFile(source)
            names = set(pf.schema_arrow.names)
            missing = [c for c in columns if c not in names]
            if missing:
                raise damaged(f"not an LSM timeline file: no column {', '.join(missing)}, only {sorted(names)}")
            table = pf.read(columns=list(columns))
    except FileNotFoundError:
        raise ArchivedTimelineError(
            f"{uri} is listed by {manifest} of the archived timeline but is missing: the archived timeline cannot be "
            f"read. {_FIX_SNAPSHOT}") from None
    except (pa.ArrowException, OSError, ValueError) as e:
        raise damaged(f"not readable as Parquet: {e}") from None
    return {c: table.column(c).to_pylist() for c in columns}


def _completed_action(action: str) -> str:
    """The action an instant completes as: rows normally hold it already (Java stores the completed
    instant's action), but a row holding the pending action maps like the active timeline does."""
    if action == I.CLUSTERING:
        return I.REPLACE_COMMIT  # a clustering completes as a replacecommit (§3.1)
    return Instant("0", action, State.REQUESTED).with_state(State.COMPLETED).action


def _read_instants(storage: "Storage", folder: str, manifest: str, f: ArchivedFile) -> list[Instant]:
    cols = _columns(storage, folder, manifest, f, _REQUIRED_COLUMNS)
    out: list[Instant] = []
    for ts, done, action in zip(cols[INSTANT_TIME], cols[COMPLETION_TIME], cols[ACTION]):
        if not ts or not action:
            raise ArchivedTimelineError(
                f"{storage.uri(f'{folder}/{f.name}')} is damaged (a row without {INSTANT_TIME} or {ACTION}): the "
                f"archived timeline cannot be read. {_FIX_SNAPSHOT}")
        out.append(Instant(str(ts), _completed_action(str(action)), State.COMPLETED, str(done) if done else None))
    return out


def _read_column(storage: "Storage", folder: str, manifest: str, f: ArchivedFile,
                 column: str) -> dict[str, Optional[bytes]]:
    cols = _columns(storage, folder, manifest, f, (INSTANT_TIME, column))
    out: dict[str, Optional[bytes]] = {}
    for ts, blob in zip(cols[INSTANT_TIME], cols[column]):
        out.setdefault(str(ts), bytes(blob) if blob is not None else None)
    return out


__all__ = ["ArchivedTimeline", "ArchivedTimelineError", "ArchivedFile", "HISTORY_FOLDER"]
