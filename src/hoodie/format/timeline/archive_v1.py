"""The archived timeline of timeline layout 1 (table version 6): Hudi 0.x's archive log files.

Reference: ``hudi-v6-format.md`` §3.1/§3.5/§3.6, Hudi's ``HoodieTimelineArchiver`` (0.14/0.15,
``TimelineArchiverV1`` in 1.x), ``MetadataConversionUtils.createMetaWrapper`` and
``HoodieArchivedTimeline`` (``ArchivedTimelineV1``).

* Files: ``.hoodie/archived/.commits_.archive.<N>_1-0-1``, Hudi log files (file id ``commits``,
  empty base instant, extension ``archive``, the default write token). Hudi 0.14+ never appends on
  object stores: every archival rolls over to version N+1. hoodie writes one file per archival.
* ``.hoodie/archived/mergeArchivePlan``: present only while small archive files are being merged
  (``hoodie.archive.merge.enable``, :mod:`hoodie.services.archive.merge`): an Avro container file of
  one ``HoodieMergeArchiveFilePlan`` (``candidate``: the paths of the files being merged,
  ``mergedArchiveFileName``: the name of the file that replaces them). Readers never read it as an
  archive file; while it exists an instant may be in both the merged file and a candidate (readers
  keep one), and a merged file that does not decode is skipped (its candidates still hold everything).
* Blocks: ``AVRO_DATA`` blocks whose header holds only the writer ``SCHEMA``; each holds up to
  ``hoodie.commits.archival.batch`` records of ``HoodieArchivedMetaEntry``.
* One record per *instant file* (requested, inflight and completed files each): ``commitTime``,
  ``actionType``, ``actionState`` (``REQUESTED``/``INFLIGHT``/``COMPLETED``), ``stateTransitionTime``
  and, by action, the file's content as Avro: ``hoodieCommitMetadata`` (commit and deltacommit, JSON
  converted to Avro, ``ROLLING_STAT_METADATA`` blanked), ``hoodieReplaceCommitMetadata`` /
  ``HoodieInflightReplaceMetadata`` / ``hoodieRequestedReplaceMetadata``, ``hoodieCleanMetadata`` /
  ``hoodieCleanerPlan``, ``hoodieRollbackMetadata``, ``hoodieCompactionPlan``.

The writer schema is ``HoodieArchivedMetaEntry`` without the deprecated ``hoodieCompactionMetadata`` and
without ``hoodieIndexCommitMetadata`` (hoodie writes neither): Java resolves it against its own
schema, the missing fields taking their null defaults. Readers use the schema in each block header.
"""

from __future__ import annotations

import copy
import io
import json
import re
import struct
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

import fastavro

from hoodie.errors import HoodieError
from hoodie.format.log.logformat import BlockType, HeaderKey, LogBlock, encode_block, read_log_file
from hoodie.format.storage import Storage
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.archived import ArchivedTimeline
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.instant import Instant, State

ARCHIVE_FOLDER = ".hoodie/archived"  # hoodie.archivelog.folder=archived
FILE_ID = "commits"
WRITE_TOKEN = "1-0-1"  # HoodieLogFormat.UNKNOWN_WRITE_TOKEN
# ``.commits_.archive.<version>_<token>``: the log file name pattern with the ``archive`` extension.
_FILE_RE = re.compile(r"^\.commits_\.archive\.(\d+)(?:_(\d+-\d+-\d+))?$")
_CONTENT_VERSION = 3  # HoodieAvroDataBlock content version
# HoodieRollingStatMetadata.ROLLING_STAT_METADATA_KEY: blanked in archived commit metadata, as Java does.
ROLLING_STAT_METADATA_KEY = "ROLLING_STAT_METADATA"
# HoodieArchivedTimeline.MERGE_ARCHIVE_PLAN_NAME: the plan of a merge of small archive files in progress.
MERGE_PLAN_NAME = "mergeArchivePlan"
MERGE_PLAN_KIND = "HoodieMergeArchiveFilePlan"


class ArchiveV1Error(HoodieError):
    """An archive file of a version 6 table cannot be read or written; the message names the file."""


def archive_file_name(version: int) -> str:
    """The name of archive file ``version`` (from 1)."""
    return f".{FILE_ID}_.archive.{version}_{WRITE_TOKEN}"


def archive_file_version(name: str) -> Optional[int]:
    """The version of an archive file name, or None when ``name`` is not one."""
    m = _FILE_RE.match(name)
    return int(m.group(1)) if m else None


# -- the schema ---------------------------------------------------------------------------------------

def _dedupe(schema: Any, seen: set[str]) -> Any:
    """Avro defines each named type once: later occurrences become references by full name."""
    if isinstance(schema, list):
        return [_dedupe(s, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    t = schema.get("type")
    if t == "record":
        full = f"{schema.get('namespace', plans.NAMESPACE)}.{schema['name']}"
        if full in seen:
            return full
        seen.add(full)
        out = dict(schema)
        out["fields"] = [dict(f, type=_dedupe(f["type"], seen)) for f in schema["fields"]]
        return out
    if t == "array":
        return dict(schema, items=_dedupe(schema["items"], seen))
    if t == "map":
        return dict(schema, values=_dedupe(schema["values"], seen))
    return schema


def _nullable(name: str, t: Any) -> dict:
    return {"name": name, "type": ["null", t], "default": None}


def archived_meta_entry_schema() -> dict:
    """``HoodieArchivedMetaEntry`` (fields in Java's order, less the two hoodie never writes)."""
    s = plans.avro_schema
    fields = [
        _nullable("hoodieCommitMetadata", s("HoodieCommitMetadata")),
        _nullable("hoodieCleanMetadata", s("HoodieCleanMetadata")),
        _nullable("hoodieRollbackMetadata", s("HoodieRollbackMetadata")),
        _nullable("hoodieSavePointMetadata", s("HoodieSavepointMetadata")),
        _nullable("commitTime", "string"),
        _nullable("actionType", "string"),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _nullable("hoodieCompactionPlan", s("HoodieCompactionPlan")),
        _nullable("hoodieCleanerPlan", s("HoodieCleanerPlan")),
        _nullable("actionState", "string"),
        _nullable("hoodieReplaceCommitMetadata", s("HoodieReplaceCommitMetadata")),
        _nullable("hoodieRequestedReplaceMetadata", s("HoodieRequestedReplaceMetadata")),
        _nullable("HoodieInflightReplaceMetadata", s("HoodieCommitMetadata")),
        _nullable("stateTransitionTime", "string"),
    ]
    return _dedupe({"type": "record", "name": "HoodieArchivedMetaEntry", "namespace": plans.NAMESPACE,
                    "fields": fields}, set())


_SCHEMA: Optional[dict] = None
_PARSED: Any = None


def _schema() -> tuple[dict, Any]:
    global _SCHEMA, _PARSED
    if _SCHEMA is None:
        _SCHEMA = archived_meta_entry_schema()
        _PARSED = fastavro.parse_schema(copy.deepcopy(_SCHEMA))
    return _SCHEMA, _PARSED


# -- entries ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class InstantFile:
    """One file of the active timeline to archive: its instant (in the file's state) and content."""

    instant: Instant
    content: bytes
    mtime_ms: Optional[int] = None


def _commit_avro(content: bytes, replace: bool) -> dict:
    meta = CommitMetadata.from_json_bytes(content)
    record: dict[str, Any] = {
        "partitionToWriteStats": {p: [s.to_avro() for s in stats] for p, stats in meta.partition_to_write_stats.items()},
        "compacted": meta.compacted,
        "extraMetadata": {**meta.extra_metadata, ROLLING_STAT_METADATA_KEY: ""},
        "version": 1,
        "operationType": "COMPACT" if meta.compacted else meta.operation_type,
    }
    if replace:
        record["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in
                                               (meta.partition_to_replace_file_ids or {}).items()}
    return plans.fill_defaults("HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata", record)


def _avro(content: bytes, kind: str) -> Optional[dict]:
    if not content:
        return None
    return plans.fill_defaults(kind, plans.read_avro_metadata(content))


def meta_entry(f: InstantFile, timezone: str = "UTC") -> dict:
    """The ``HoodieArchivedMetaEntry`` of one instant file (``createMetaWrapper``)."""
    inst, data = f.instant, f.content
    entry: dict[str, Any] = {"commitTime": inst.timestamp, "actionState": inst.state.name, "version": 1,
                             "actionType": inst.action}
    if f.mtime_ms is not None:
        entry["stateTransitionTime"] = I.epoch_ms_to_instant(f.mtime_ms, timezone)
    a = inst.action
    if a in (I.COMMIT, I.DELTA_COMMIT):
        if data:
            entry["hoodieCommitMetadata"] = _commit_avro(data, replace=False)
    elif a == I.REPLACE_COMMIT:
        if inst.is_completed:
            entry["hoodieReplaceCommitMetadata"] = _commit_avro(data, replace=True) if data else None
        elif inst.is_inflight:
            entry["HoodieInflightReplaceMetadata"] = _commit_avro(data, replace=False) if data else None
        else:
            entry["hoodieRequestedReplaceMetadata"] = _avro(data, "HoodieRequestedReplaceMetadata")
    elif a == I.CLEAN:
        if inst.is_completed:
            entry["hoodieCleanMetadata"] = _avro(data, "HoodieCleanMetadata")
        else:
            entry["hoodieCleanerPlan"] = _avro(data, "HoodieCleanerPlan")
    elif a == I.ROLLBACK:
        if inst.is_completed:
            entry["hoodieRollbackMetadata"] = _avro(data, "HoodieRollbackMetadata")
    elif a == I.SAVEPOINT:
        if inst.is_completed:
            entry["hoodieSavePointMetadata"] = _avro(data, "HoodieSavepointMetadata")
    elif a in (I.COMPACTION, I.LOG_COMPACTION):
        entry["hoodieCompactionPlan"] = _avro(data, "HoodieCompactionPlan")
    return entry


_PARSED_BY_JSON: dict[str, Any] = {}


def _parsed_schema(schema_json: str) -> Any:
    """A writer schema of an archive block, parsed once per distinct schema text."""
    parsed = _PARSED_BY_JSON.get(schema_json)
    if parsed is None:
        parsed = _PARSED_BY_JSON[schema_json] = fastavro.parse_schema(json.loads(schema_json))
    return parsed


def encode_archive_block(entries: Sequence[dict], schema_json: Optional[str] = None) -> bytes:
    """One ``AVRO_DATA`` block of ``HoodieArchivedMetaEntry`` records, header ``{SCHEMA}`` only.

    ``schema_json``: the writer schema to encode with (default: hoodie's). Merging archive files passes
    the schema the records were read with, so that records Java wrote (with fields hoodie's schema
    leaves out) are copied without loss."""
    if schema_json is None:
        schema, parsed = _schema()
        schema_json = json.dumps(schema, separators=(",", ":"))
    else:
        parsed = _parsed_schema(schema_json)
    parts = [struct.pack(">ii", _CONTENT_VERSION, len(entries))]
    for e in entries:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, e)
        datum = buf.getvalue()
        parts.append(struct.pack(">i", len(datum)))
        parts.append(datum)
    header = {HeaderKey.SCHEMA: schema_json}
    return encode_block(BlockType.AVRO_DATA, header, b"".join(parts))


def write_archive_file(storage: Storage, files: Sequence[InstantFile], batch: int, *,
                       folder: str = ARCHIVE_FOLDER, timezone: str = "UTC", version: Optional[int] = None) -> str:
    """Write ``files`` (in order) into a new archive file of ``folder``, ``batch`` records per block; returns
    its path relative to the table. ``version``: the file's version when the caller listed the folder already
    (one above the highest there); by default the folder is listed for it. Create-only: never overwrites (a
    version taken meanwhile fails the write)."""
    if not files:
        raise ValueError("nothing to archive")
    entries = [meta_entry(f, timezone) for f in files]
    blocks = [encode_archive_block(entries[i:i + batch]) for i in range(0, len(entries), batch)]
    name = archive_file_name(version) if version is not None else next_archive_file_name(storage, folder)
    rel = f"{folder}/{name}"
    storage.create_new(rel, b"".join(blocks))
    return rel


def next_archive_file_name(storage: Storage, folder: str = ARCHIVE_FOLDER) -> str:
    """The name of the next archive file of ``folder``: one version above the highest there (Java's writer
    rolls over from the latest log version on storage that cannot append)."""
    names = [s.name for s in storage.list_dir(folder) if not s.is_dir]
    version = max((v for v in (archive_file_version(n) for n in names) if v is not None), default=0) + 1
    return archive_file_name(version)


# -- reading ------------------------------------------------------------------------------------------

def read_archive_entries(storage: Storage, rel: str) -> list[dict]:
    """The ``HoodieArchivedMetaEntry`` records of one archive file, in file order. Corrupt blocks (a
    crash while writing) are skipped, as Java's reader skips them.

    Raises:
        ArchiveV1Error: a data block cannot be decoded with its own schema.
    """
    return [e for _, records in read_archive_blocks(storage, rel) for e in records]


def read_archive_blocks(storage: Storage, rel: str) -> list[tuple[str, list[dict]]]:
    """The data blocks of one archive file, in file order: (writer schema JSON, records). Corrupt blocks
    are skipped as in :func:`read_archive_entries`.

    Raises:
        ArchiveV1Error: a data block cannot be decoded with its own schema.
    """
    return [(schema_json, decode_archive_block(storage, block, schema_json))
            for block, schema_json, _ in archive_data_blocks(storage, rel)]


def archive_data_blocks(storage: Storage, rel: str) -> list[tuple[LogBlock, str, int]]:
    """The ``AVRO_DATA`` blocks of one archive file, in file order, undecoded: (block, writer schema JSON,
    record count). Corrupt blocks are skipped. The count is checked against the block's record framing (each
    record's length prefix), so a block whose content does not frame is refused without decoding a record.

    Raises:
        ArchiveV1Error: a data block has no SCHEMA header or its content does not frame.
    """
    out: list[tuple[LogBlock, str, int]] = []
    # Every block's records are read: one request for the whole file on an object store (a merged archive
    # file holds hundreds of blocks, each otherwise four ranged reads).
    for block in read_log_file(storage, rel, warn=False, read_whole=True):
        if block.block_type != BlockType.AVRO_DATA:
            continue
        schema_json = block.schema_json
        if not schema_json:
            raise ArchiveV1Error(f"{storage.uri(rel)}: an archive block without a SCHEMA header")
        content = block.read_content()
        try:
            _, count = struct.unpack_from(">ii", content, 0)
            pos = 8
            for _ in range(count):
                (n,) = struct.unpack_from(">i", content, pos)
                if n < 0:
                    raise ValueError(f"a record length of {n}")
                pos += 4 + n
            if pos != len(content):
                raise ValueError(f"{len(content) - pos} bytes after the last record")
        except (ValueError, struct.error) as e:
            raise ArchiveV1Error(f"{storage.uri(rel)} holds an archive block that does not decode ({e}); restore "
                                 "the file from a backup") from None
        out.append((block, schema_json, count))
    return out


def decode_archive_block(storage: Storage, block: LogBlock, schema_json: str) -> list[dict]:
    """The ``HoodieArchivedMetaEntry`` records of one data block (from :func:`archive_data_blocks`).

    Raises:
        ArchiveV1Error: a record does not decode with the block's schema.
    """
    try:
        parsed = _parsed_schema(schema_json)
        content = block.read_content()
        _, count = struct.unpack_from(">ii", content, 0)
        pos = 8
        records = []
        for _ in range(count):
            (n,) = struct.unpack_from(">i", content, pos)
            pos += 4
            records.append(fastavro.schemaless_reader(io.BytesIO(content[pos:pos + n]), parsed))
            pos += n
        return records
    except (ValueError, struct.error, EOFError, KeyError) as e:
        raise ArchiveV1Error(f"{storage.uri(block.log_file)} holds an archive block that does not decode ({e}); "
                             "restore the file from a backup") from None


def block_bytes(block: LogBlock) -> bytes:
    """A block's bytes as stored (magic to reverse pointer), to copy it into another archive file unchanged."""
    try:
        return block.stored_bytes()
    except ValueError as e:  # the file shrank under the reader: the archive's own error, as its decoding raises
        raise ArchiveV1Error(f"{e}; restore the file from a backup") from None


def archive_files(storage: Storage, folder: str = ARCHIVE_FOLDER) -> list[str]:
    """The archive files of ``folder``, oldest (lowest version) first, as relative paths."""
    found = []
    for s in storage.list_dir(folder):
        v = archive_file_version(s.name) if not s.is_dir else None
        if v is not None:
            found.append((v, f"{folder}/{s.name}"))
    return [p for _, p in sorted(found)]


class ArchivedTimelineV1(I.InstantSequence):
    """The archived instants of a version 6 table, in timeline order: completed instants (one per
    time and action), with their archived entries. Load it with :meth:`load`."""

    def __init__(self, entries: Iterable[dict], files: Sequence[str] = ()) -> None:
        self.files = list(files)
        self._entries: dict[tuple[str, str, str], dict] = {}
        for e in entries:
            key = (str(e.get("commitTime")), str(e.get("actionType")), str(e.get("actionState") or "COMPLETED"))
            self._entries.setdefault(key, e)  # a re-run after a crash may archive an instant twice
        done = {(ts, a) for ts, a, st in self._entries if st == "COMPLETED"}
        self.instants: list[Instant] = sorted((Instant(ts, a, State.COMPLETED) for ts, a in done),
                                              key=Instant.sort_key)

    @classmethod
    def load(cls, storage: Storage, folder: str = ARCHIVE_FOLDER) -> "ArchivedTimelineV1":
        """Read every archive file of ``folder`` (absent or empty: an empty timeline)."""
        files = archive_files(storage, folder)
        entries: list[dict] = []
        read: list[str] = []
        for rel in files:
            try:
                entries.extend(read_archive_entries(storage, rel))
            except (ArchiveV1Error, OSError):
                # Java's reader skips a file that does not read only when it is the merged file of an
                # unfinished merge (its candidates are all still there then); anything else is damage.
                plan = read_merge_plan(storage, folder, missing_ok=True, raise_errors=False)
                if plan is None or plan.merged_file_name.lower() != rel.rsplit("/", 1)[-1].lower():
                    raise
                continue
            read.append(rel)
        return cls(entries, read)

    def entries(self) -> list[dict]:
        """Every archived entry (one per instant file), in timeline order."""
        return [self._entries[k] for k in sorted(self._entries)]

    def entry(self, timestamp: str, action: str, state: str = "COMPLETED") -> Optional[dict]:
        """The archived entry of one instant file, or None."""
        return self._entries.get((timestamp, action, state))

    def commit_metadata(self, timestamp: str) -> Optional[CommitMetadata]:
        """The archived commit metadata of a completed commit, deltacommit or replacecommit, or None."""
        for action, key in ((I.COMMIT, "hoodieCommitMetadata"), (I.DELTA_COMMIT, "hoodieCommitMetadata"),
                            (I.REPLACE_COMMIT, "hoodieReplaceCommitMetadata")):
            e = self.entry(timestamp, action)
            if e is not None and e.get(key) is not None:
                meta = dict(e[key])
                return CommitMetadata.from_json_bytes(json.dumps(meta).encode("utf-8"))
        return None


def archived_keys(storage: Storage, rel: str) -> set[tuple[str, str, str]]:
    """(time, action, state) of every entry of one archive file (used to make a re-run idempotent)."""
    return {(str(e.get("commitTime")), str(e.get("actionType")), str(e.get("actionState")))
            for e in read_archive_entries(storage, rel)}


# -- merging small archive files: the plan -----------------------------------------------------------------

@dataclass(frozen=True)
class MergePlan:
    """``HoodieMergeArchiveFilePlan``: the archive files being merged (``candidates``: paths as written,
    Java writes full paths) and the name of the file replacing them."""

    candidates: tuple[str, ...]
    merged_file_name: str

    def candidate_names(self) -> list[str]:
        """The candidates' file names (they are always files of the archive folder)."""
        return [c.rstrip("/").rsplit("/", 1)[-1] for c in self.candidates]


def encode_merge_plan(candidates: Sequence[str], merged_file_name: str) -> bytes:
    """The content of the ``mergeArchivePlan`` file (an Avro container file, as Java serialises plans)."""
    return plans.write_avro_metadata(MERGE_PLAN_KIND, {"candidate": list(candidates),
                                                       "mergedArchiveFileName": merged_file_name})


def decode_merge_plan(data: bytes) -> MergePlan:
    """Parse a ``mergeArchivePlan`` file.

    Raises:
        ValueError: the content is not a complete ``HoodieMergeArchiveFilePlan`` (a crash while writing it).
    """
    rec = plans.read_avro_metadata(data)
    cands, merged = rec.get("candidate"), rec.get("mergedArchiveFileName")
    if cands is None or not merged:
        raise ValueError("the merge plan names no candidates or no merged file")
    return MergePlan(tuple(str(c) for c in cands), str(merged))


def read_merge_plan(storage: Storage, folder: str = ARCHIVE_FOLDER, *, missing_ok: bool = True,
                    raise_errors: bool = True) -> Optional[MergePlan]:
    """The merge plan of ``folder``, or None when there is none (or, with ``raise_errors=False``, when it
    does not parse)."""
    rel = f"{folder}/{MERGE_PLAN_NAME}"
    try:
        return decode_merge_plan(storage.read_bytes(rel))
    except FileNotFoundError:
        if missing_ok:
            return None
        raise
    except ValueError:
        if raise_errors:
            raise
        return None


def load_archived(storage: Storage, layout: int) -> "ArchivedTimelineV1 | ArchivedTimeline":
    """The archived timeline of the table at ``storage`` in its layout's format (1: ``.hoodie/archived``,
    2: the LSM history), completed instants oldest first; both answer ``instants`` and
    ``commit_metadata(timestamp)``."""
    return ArchivedTimeline.load(storage) if layout == 2 else ArchivedTimelineV1.load(storage)


__all__ = ["load_archived", "ARCHIVE_FOLDER", "ArchivedTimelineV1", "ArchiveV1Error", "InstantFile", "archive_file_name",
           "archive_file_version", "archive_files", "archived_meta_entry_schema", "encode_archive_block",
           "archive_data_blocks", "decode_archive_block", "block_bytes",
           "meta_entry", "read_archive_entries", "write_archive_file", "archived_keys", "read_archive_blocks",
           "next_archive_file_name", "MERGE_PLAN_NAME", "MergePlan", "encode_merge_plan", "decode_merge_plan",
           "read_merge_plan"]

