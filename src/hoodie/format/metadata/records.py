"""Records of the metadata table's ``files`` partition and how Hudi merges them.

A ``files`` record is an Avro ``HoodieMetadataRecord`` (reference ``metadata-table.md`` §4):
``type`` 1 is the partition list (key ``__all_partitions__``), type 2 the file list of one data
partition (key = the partition path, ``.`` for a non-partitioned table), both carrying
``filesystemMetadata``: file (or partition) name -> ``{size, isDeleted}``. The record key is the
HFile cell's row; the value's ``key`` field is written empty by Hudi 1.x and is ignored here.

Merging follows ``HoodieMetadataPayload.preCombine`` / ``combineFileSystemMetadata`` (Hudi 0.14/0.15
and 1.x), newer over older:

* an empty payload (the key was in a DELETE block) wins over anything older, and anything newer
  wins over it;
* otherwise both records must have the same type and key; their maps are combined: a name only in
  one of them keeps its entry (a tombstone only in the newer record is kept, so that it can still
  remove the name from an older base file); a name in both is removed when the newer entry is a
  tombstone, else it is live with the larger of the two sizes (log files only grow);
* a name deleted by both records: Hudi 0.14/0.15 drop it (``Map.merge`` with ``null``), Hudi 1.x
  keeps the newer tombstone and warns; ``keep_repeated_tombstones`` picks the 1.x rule (table
  version 8 and up);
* a live entry of a type-2 record with size <= 0 is refused (``validatePayload``: "Existing files
  should have size > 0").

Order: hoodie folds the records into the base file's records one by one, oldest first (as hudi-rs
does: base records, then each log record in log order). Hudi's Java readers merge in two stages
instead (the log records among themselves, then the result over the base record), and that order
brings a base file's entry back in three cases: a file listed again in the logs (a log file that
grew) and then deleted in the logs; a file deleted twice in the logs (0.14/0.15 drop the repeated
tombstone); a key deleted in the logs and written again. Storage no longer holds such a file, so
the one-stage order is the one whose listing matches storage; it equals Java's wherever Java's is
consistent. See ``docs/metadata-table.md``.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import fastavro

from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError

ALL_PARTITIONS_KEY = "__all_partitions__"  # HoodieTableMetadata.RECORDKEY_PARTITION_LIST
NON_PARTITIONED_NAME = "."  # HoodieTableMetadata.NON_PARTITIONED_NAME
TYPE_PARTITION_LIST = 1
TYPE_FILE_LIST = 2


@dataclass(frozen=True)
class FileInfo:
    """One ``HoodieMetadataFileInfo``: a size in bytes and the tombstone flag."""

    size: int
    is_deleted: bool = False


@dataclass
class FilesRecord:
    """One merged-or-raw record of the ``files`` partition.

    ``deleted`` marks an empty payload (the key appeared in a DELETE block): it hides every older
    version of the key.
    """

    key: str
    type: int
    files: dict[str, FileInfo] = field(default_factory=dict)
    deleted: bool = False

    def live(self) -> dict[str, int]:
        """Names that are not tombstones -> size (``HoodieMetadataPayload.getFilenames``)."""
        return {n: fi.size for n, fi in self.files.items() if not fi.is_deleted}


def deleted_record(key: str) -> FilesRecord:
    """The empty payload a DELETE block puts in place of ``key``."""
    return FilesRecord(key, 0, {}, deleted=True)


def combine(newer: FilesRecord, older: FilesRecord, *, keep_repeated_tombstones: bool = False,
            where: str = "") -> FilesRecord:
    """``newer.preCombine(older)`` for the ``files`` partition (see the module doc).

    Raises:
        MetadataTableError: records of different types or keys, a type other than 1 or 2, or a
            live file of size <= 0 in the newer type-2 record.
    """
    if newer.deleted or older.deleted:
        return newer
    if newer.type != older.type or newer.key != older.key:
        raise MetadataTableError(
            f"{where}: cannot combine metadata record {older.key!r} (type {older.type}) with {newer.key!r} "
            f"(type {newer.type}); the files partition is inconsistent. {LIST_THROUGH_STORAGE}")
    if newer.type not in (TYPE_PARTITION_LIST, TYPE_FILE_LIST):
        raise MetadataTableError(
            f"{where}: record {newer.key!r} has type {newer.type}, which does not belong in the files partition. "
            f"{LIST_THROUGH_STORAGE}")
    merged = dict(older.files)
    for name, fi in newer.files.items():
        if newer.type == TYPE_FILE_LIST and not fi.is_deleted and fi.size <= 0:
            raise MetadataTableError(
                f"{where}: record {newer.key!r} lists {name!r} with size {fi.size}; Hudi refuses this "
                f"(\"Existing files should have size > 0\"). {LIST_THROUGH_STORAGE}")
        old = merged.get(name)
        if old is None:
            merged[name] = fi
        elif fi.is_deleted:
            if old.is_deleted and keep_repeated_tombstones:
                merged[name] = fi
            else:
                del merged[name]
        else:
            merged[name] = FileInfo(max(fi.size, old.size), False)
    return FilesRecord(newer.key, newer.type, merged)


def merge_into(acc: dict[str, FilesRecord], records: Iterable[FilesRecord], *,
               keep_repeated_tombstones: bool = False, where: str = "") -> None:
    """Fold ``records`` (oldest first) into ``acc`` key by key, newer over older."""
    for rec in records:
        prev = acc.get(rec.key)
        acc[rec.key] = rec if prev is None else combine(
            rec, prev, keep_repeated_tombstones=keep_repeated_tombstones, where=where)


def fold(base: Mapping[str, FilesRecord], batches: Iterable[Iterable[FilesRecord]], *,
         keep_repeated_tombstones: bool = False, where: str = "") -> dict[str, FilesRecord]:
    """The final records: the base file's records, then every batch (log block) in log order merged
    over them key by key; keys whose final record is an empty payload are dropped."""
    acc = dict(base)
    for batch in batches:
        merge_into(acc, batch, keep_repeated_tombstones=keep_repeated_tombstones, where=where)
    return {k: r for k, r in acc.items() if not r.deleted}


class RecordDecoder:
    """Decodes ``HoodieMetadataRecord`` values written with one Avro schema (the HFile's ``schema``
    file info or the log block's ``SCHEMA`` header)."""

    def __init__(self, schema_json: str, where: str) -> None:
        self.where = where
        try:
            self._schema = fastavro.parse_schema(json.loads(schema_json))
        except Exception as e:  # json / fastavro raise assorted types on a damaged schema
            raise MetadataTableError(
                f"{where}: unreadable HoodieMetadataRecord schema ({type(e).__name__}: {e}). {LIST_THROUGH_STORAGE}"
            ) from None

    def decode(self, key: bytes, value: bytes) -> FilesRecord:
        """One record; its key is the HFile cell row."""
        try:
            k = key.decode("utf-8")
            buf = io.BytesIO(value)
            rec: dict[str, Any] = fastavro.schemaless_reader(buf, self._schema, None)
            if buf.tell() != len(value):
                raise ValueError(f"{len(value) - buf.tell()} bytes after the record")
            typ = int(rec["type"])
            fsm = rec.get("filesystemMetadata") or {}
            files = {str(n): FileInfo(int(v["size"]), bool(v["isDeleted"])) for n, v in fsm.items()}
        except Exception as e:  # malformed datums surface as assorted decoding errors
            raise MetadataTableError(
                f"{self.where}: undecodable metadata record for key {key[:200]!r} ({type(e).__name__}: {e}). "
                f"{LIST_THROUGH_STORAGE}") from None
        return FilesRecord(k, typ, files)


def partition_name(key: str) -> str:
    """A data partition path from a ``files`` key (``.`` is the non-partitioned table's ``""``)."""
    return "" if key == NON_PARTITIONED_NAME else key


__all__ = [
    "ALL_PARTITIONS_KEY", "NON_PARTITIONED_NAME", "TYPE_PARTITION_LIST", "TYPE_FILE_LIST",
    "FileInfo", "FilesRecord", "RecordDecoder", "combine", "merge_into", "fold",
    "deleted_record", "partition_name",
]
