"""Builds table-version-6 metadata tables (layout 1) for the metadata reader's tests.

No fixture holds a v6 metadata table, so tests write one the way Hudi 0.14/0.15 lays it out
(reference ``metadata-table.md``): ``.hoodie/metadata/.hoodie/hoodie.properties`` and timeline, a
``files/`` partition with one file group ``files-0000-0``: a base HFile per compaction and one log file
per slice, appended with an HFILE_DATA block (header INSTANT_TIME + SCHEMA, content a whole HFile) per
deltacommit. Records follow ``HoodieTableMetadataUtil``: a type-1 ``__all_partitions__`` record and a
type-2 record per partition, file name -> (size, isDeleted).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Iterable, Mapping, Optional

import fastavro

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format import properties as P
from hoodie.format.hfile import HFileWriter
from hoodie.format.log.logformat import BlockType, HeaderKey, encode_block, encode_command_block
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable

FILE_INFO = {"type": "record", "name": "HoodieMetadataFileInfo", "namespace": "org.apache.hudi.avro.model",
             "fields": [{"name": "size", "type": "long"}, {"name": "isDeleted", "type": "boolean"}]}
# The fields of the 0.14 HoodieMetadataRecord that the files partition uses (the others are null unions).
SCHEMA = {
    "type": "record", "name": "HoodieMetadataRecord", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "key", "type": {"type": "string", "avro.java.string": "String"}},
        {"name": "type", "type": "int"},
        {"name": "filesystemMetadata", "type": ["null", {"type": "map", "values": FILE_INFO,
                                                          "avro.java.string": "String"}], "default": None},
        {"name": "BloomFilterMetadata", "type": ["null", "string"], "default": None},
        {"name": "ColumnStatsMetadata", "type": ["null", "string"], "default": None},
        {"name": "recordIndexMetadata", "type": ["null", "string"], "default": None},
    ],
}
SCHEMA_JSON = json.dumps(SCHEMA)
_PARSED = fastavro.parse_schema(SCHEMA)
FILE_ID = "files-0000-0"

Files = Mapping[str, tuple[int, bool]]  # name -> (size, isDeleted)
Records = Mapping[str, tuple[int, Files]]  # key -> (type, files)


def encode_value(typ: int, files: Optional[Files]) -> bytes:
    """One record's Avro value, with ``key`` empty as Hudi writes it."""
    buf = io.BytesIO()
    fsm = None if files is None else {n: {"size": s, "isDeleted": d} for n, (s, d) in files.items()}
    fastavro.schemaless_writer(buf, _PARSED, {"key": "", "type": typ, "filesystemMetadata": fsm,
                                              "BloomFilterMetadata": None, "ColumnStatsMetadata": None,
                                              "recordIndexMetadata": None})
    return buf.getvalue()


def hfile_bytes(records: Records) -> bytes:
    """A whole HFile of ``records``, sorted by key bytes."""
    w = HFileWriter(schema=SCHEMA_JSON)
    for key in sorted(records, key=lambda k: k.encode()):
        typ, files = records[key]
        w.append(key, encode_value(typ, files))
    return w.getvalue()


def listing_records(listing: Mapping[str, Mapping[str, int]], deleted: Mapping[str, Iterable[str]] = {},
                    ) -> dict[str, tuple[int, Files]]:
    """Records for partitions -> {file: size} added and partitions -> [file] deleted (one commit)."""
    recs: dict[str, tuple[int, Files]] = {}
    parts = set(listing) | set(deleted)
    recs["__all_partitions__"] = (1, {(p or "."): (0, False) for p in parts})
    for p in parts:
        files: dict[str, tuple[int, bool]] = {n: (s, False) for n, s in listing.get(p, {}).items()}
        files.update({n: (0, True) for n in deleted.get(p, ())})
        recs[p or "."] = (2, files)
    return recs


def commit_listing(table: HoodieTable, instant: str) -> dict[str, dict[str, int]]:
    """partition -> {file name: size} written by a completed data instant (its write stats)."""
    inst = table.timeline.get(instant)
    meta = table.timeline.commit_metadata(inst)
    out: dict[str, dict[str, int]] = {}
    for part, stats in meta.partition_to_write_stats.items():
        for s in stats:
            if s.path:
                name = s.path.rsplit("/", 1)[-1]
                files = out.setdefault(s.partition_path if s.partition_path is not None else part, {})
                files[name] = max(files.get(name, 0), s.file_size_in_bytes)
    return out


class MdtBuilder:
    """Writes a v6 metadata table for the data table at ``base``."""

    def __init__(self, base: str | Path, *, properties: bool = True) -> None:
        self.base_path = str(base)
        self.data = Storage(self.base_path)
        self.mdt = self.data.child(".hoodie/metadata")
        self.base_instant: Optional[str] = None
        self.log_version = 1
        if properties:
            props = {"hoodie.table.name": "t_metadata", "hoodie.table.type": "MERGE_ON_READ",
                     "hoodie.table.version": "6", "hoodie.timeline.layout.version": "1",
                     "hoodie.archivelog.folder": "archived",
                     "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
                     "hoodie.table.recordkey.fields": "key", "hoodie.table.base.file.format": "HFILE",
                     "hoodie.populate.meta.fields": "false",
                     "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload"}
            self.mdt.write_bytes(".hoodie/hoodie.properties", P.format_properties(props).encode())
        self.mdt.write_bytes("files/.hoodie_partition_metadata", b"commitTime=0\npartitionDepth=1\n")

    # -- data table property -------------------------------------------------------------------
    def set_partitions(self, value: str = "files") -> None:
        """Set the data table's ``hoodie.table.metadata.partitions``."""
        raw = self.data.read_bytes(".hoodie/hoodie.properties").decode()
        props = P.parse_properties(raw)
        props["hoodie.table.metadata.partitions"] = value
        self.data.write_bytes(".hoodie/hoodie.properties", P.format_table_properties(props).encode())

    # -- timeline ------------------------------------------------------------------------------
    def instant(self, ts: str, action: str = I.DELTA_COMMIT, state: I.State = I.State.COMPLETED) -> None:
        """Timeline files of an MDT instant up to ``state``."""
        self.mdt.write_bytes(f".hoodie/{I.instant_file_name(ts, action, I.State.REQUESTED)}", b"")
        if state >= I.State.INFLIGHT:
            self.mdt.write_bytes(f".hoodie/{I.instant_file_name(ts, action, I.State.INFLIGHT)}", b"")
        if state == I.State.COMPLETED:
            done = I.COMMIT if action == I.COMPACTION else action
            body = json.dumps({"partitionToWriteStats": {}, "compacted": action == I.COMPACTION,
                               "extraMetadata": {"schema": SCHEMA_JSON}, "operationType": "UPSERT_PREPPED"})
            self.mdt.write_bytes(f".hoodie/{I.instant_file_name(ts, done, I.State.COMPLETED)}", body.encode())

    # -- files ---------------------------------------------------------------------------------
    def log_path(self) -> str:
        """The current slice's log file."""
        return f"files/{N.log_file_name(FILE_ID, self.base_instant, self.log_version, '0-0-0')}"

    def append(self, block: bytes) -> None:
        """Append a framed block to the current slice's log file."""
        path = self.log_path()
        old = self.mdt.read_bytes(path) if self.mdt.exists(path) else b""
        self.mdt.write_bytes(path, old + block)

    def base(self, ts: str, records: Records) -> str:
        """A base HFile at ``ts`` (opens a new slice); returns its path."""
        path = f"files/{N.base_file_name(FILE_ID, '0-1-2', ts, '.hfile')}"
        self.mdt.write_bytes(path, hfile_bytes(records))
        self.base_instant = ts
        return path

    def bootstrap(self, ts: str, listing: Mapping[str, Mapping[str, int]], *, set_property: bool = True) -> None:
        """Initialise ``files`` at ``ts`` (``<t>010``): base HFile of ``listing`` plus the empty
        DELETE log block, a completed deltacommit, and the data table's property."""
        self.base(ts, listing_records(listing) if listing else {"__all_partitions__": (1, {})})
        empty_delete = b"\x00\x00\x00\x03\x00\x00\x00\x01\x00"
        self.append(encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: ts}, empty_delete))
        self.instant(ts)
        if set_property:
            self.set_partitions()

    def deltacommit(self, ts: str, records: Records, *, state: I.State = I.State.COMPLETED) -> bytes:
        """Append one HFILE_DATA block at ``ts`` and write the instant up to ``state``; returns the block."""
        block = encode_block(BlockType.HFILE_DATA, {HeaderKey.INSTANT_TIME: ts, HeaderKey.SCHEMA: SCHEMA_JSON},
                             hfile_bytes(records))
        self.append(block)
        self.instant(ts, state=state)
        return block

    def rollback(self, ts: str, target: str) -> None:
        """An MDT rollback of ``target`` at ``ts``: a ROLLBACK command block and a completed rollback."""
        self.append(encode_command_block(ts, target))
        self.instant(ts, I.ROLLBACK)

    def compact(self, ts: str, records: Records) -> None:
        """A completed MDT compaction at ``ts`` writing ``records`` as the new base file."""
        self.base(ts, records)
        self.log_version = 1
        self.instant(ts, I.COMPACTION)

    def sync(self, table: HoodieTable, instant: str) -> None:
        """Mirror a completed data commit as Java does: an MDT deltacommit at the same instant."""
        self.deltacommit(instant, listing_records(commit_listing(table.reload(), instant)))
