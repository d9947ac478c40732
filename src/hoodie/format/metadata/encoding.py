"""Writing the metadata table's ``files`` partition: records, HFile log blocks, base files, layout.

Pure encoding, no policy: :mod:`hoodie.services.metadata` decides what to write and when. Reference
``metadata-table.md`` (§4 records, §5 per-action records, §6 bootstrap, §8 HFile) and the Java writer
(``HoodieBackedTableMetadataWriter``, ``HoodieTableMetadataUtil``, ``HoodieHFileDataBlock``):

* a record is an Avro ``HoodieMetadataRecord`` whose ``key`` field is written empty (the key is the
  HFile cell's row) and whose other index fields are null;
* a log data block is an ``HFILE_DATA`` block: header ``{INSTANT_TIME, SCHEMA}``, content a whole
  HFile of the block's records sorted by key bytes;
* a base file is an HFile of every merged record (``files-0000-0_<token>_<instant>.hfile``).
"""

from __future__ import annotations

import io
import json
from typing import Iterable, Mapping

import fastavro

from hoodie.format import properties as P
from hoodie.format.file_group import naming as N
from hoodie.format.hfile import HFileWriter
from hoodie.format.log.logformat import BlockType, HeaderKey, encode_block
from hoodie.format.metadata.records import (
    ALL_PARTITIONS_KEY, NON_PARTITIONED_NAME, TYPE_FILE_LIST, TYPE_PARTITION_LIST, FileInfo, FilesRecord,
)
from hoodie.format.metadata.schema_v6 import SCHEMA_JSON_V6, SCHEMA_JSON_V8, SCHEMA_JSON_V9

FILES_FILE_ID = "files-0000-0"  # HoodieTableMetadataUtil.getFileIDForFileGroup(FILES, 0)
# Java's bootstrap token for the empty log file of each new MDT file group.
BOOTSTRAP_LOG_TOKEN = "0-0-0"
_PARSED = {v: fastavro.parse_schema(json.loads(j)) for v, j in ((6, SCHEMA_JSON_V6), (8, SCHEMA_JSON_V8), (9, SCHEMA_JSON_V9))}
# A DELETE block with no keys (content version 3, an empty Avro array): Java's bootstrap log block.
EMPTY_DELETE_CONTENT = b"\x00\x00\x00\x03\x00\x00\x00\x01\x00"


def partition_key(partition: str) -> str:
    """The ``files`` record key of a data partition (``.`` for the non-partitioned table's ``""``)."""
    return partition if partition else NON_PARTITIONED_NAME


def partition_list_record(added: Iterable[str] = (), deleted: Iterable[str] = ()) -> FilesRecord:
    """The ``__all_partitions__`` record: partitions added (size 0) and deleted (tombstones)."""
    files = {partition_key(p): FileInfo(0, False) for p in added}
    files.update({partition_key(p): FileInfo(0, True) for p in deleted})
    return FilesRecord(ALL_PARTITIONS_KEY, TYPE_PARTITION_LIST, files)


def file_list_record(partition: str, added: Mapping[str, int] | None = None,
                     deleted: Iterable[str] = ()) -> FilesRecord:
    """A type-2 record of one partition: file names added (name -> size, > 0) and deleted.

    Raises:
        ValueError: a name with a directory part, or an added size <= 0 (Hudi refuses those).
    """
    if partition == ALL_PARTITIONS_KEY:
        raise ValueError(f"partition path {ALL_PARTITIONS_KEY!r} is the key of the partition list; the metadata "
                         f"table cannot record it")
    files: dict[str, FileInfo] = {}
    for name, size in (added or {}).items():
        if "/" in name or not name:
            raise ValueError(f"metadata file entries are file names, not paths: {name!r}")
        if int(size) <= 0:
            raise ValueError(f"file {partition}/{name} has size {size}; the metadata table lists files of size > 0")
        files[name] = FileInfo(int(size), False)
    for name in deleted:
        if name not in files:
            files[name] = FileInfo(0, True)
    return FilesRecord(partition_key(partition), TYPE_FILE_LIST, files)


def encode_value(rec: FilesRecord, version: int = 6) -> bytes:
    """One record's Avro value in the schema of table ``version``, ``key`` empty as Hudi writes it
    (and, on versions 8/9, the meta fields null)."""
    if rec.deleted:
        raise ValueError(f"record {rec.key!r} is an empty payload; write it in a DELETE block")
    buf = io.BytesIO()
    fsm = {n: {"size": fi.size, "isDeleted": fi.is_deleted} for n, fi in rec.files.items()}
    fastavro.schemaless_writer(buf, _PARSED[_schema_version(version)], {
        "key": "", "type": rec.type, "filesystemMetadata": fsm, "BloomFilterMetadata": None,
        "ColumnStatsMetadata": None, "recordIndexMetadata": None})
    return buf.getvalue()


def sorted_records(records: Iterable[FilesRecord]) -> list[FilesRecord]:
    """Records in HFile order (key bytes, unsigned); one record per key.

    Raises:
        ValueError: two records with the same key (merge them first).
    """
    out = sorted(records, key=lambda r: r.key.encode("utf-8"))
    for a, b in zip(out, out[1:]):
        if a.key == b.key:
            raise ValueError(f"two metadata records with key {a.key!r} in one file")
    return out


def hfile_bytes(records: Iterable[FilesRecord], *, bloom_keys: bool = False, version: int = 6) -> bytes:
    """A whole HFile (GZ, CRC32C checksums, full index keys: what HBase writes for Hudi 0.14/0.15).

    ``bloom_keys`` adds ``minRecordKey``/``maxRecordKey`` file info, as Java's base HFiles carry.
    """
    recs = sorted_records(records)
    w = HFileWriter(schema=schema_json(version))
    for r in recs:
        w.append(r.key, encode_value(r, version))
    if bloom_keys and recs:
        w.add_file_info("minRecordKey", recs[0].key)
        w.add_file_info("maxRecordKey", recs[-1].key)
    return w.getvalue()


def hfile_data_block(records: Iterable[FilesRecord], instant: str, version: int = 6) -> bytes:
    """An ``HFILE_DATA`` log block at ``instant`` holding ``records`` (schema of table ``version``)."""
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json(version)}
    return encode_block(BlockType.HFILE_DATA, header, hfile_bytes(records, version=version))


def empty_delete_block(instant: str) -> bytes:
    """The empty DELETE block Java writes into each new MDT file group's first log file."""
    return encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant}, EMPTY_DELETE_CONTENT)


def base_file_name(instant: str, token: str = BOOTSTRAP_LOG_TOKEN) -> str:
    """``files-0000-0_<token>_<instant>.hfile``."""
    return N.base_file_name(FILES_FILE_ID, token, instant, ".hfile")


def metadata_table_properties(data_props: Mapping[str, str]) -> dict[str, str]:
    """``hoodie.properties`` of a new metadata table for a data table with ``data_props``, in the data
    table's version (reference §1.1: a MERGE_ON_READ table with HFile base files keyed by ``key``)."""
    name = f"{data_props.get('hoodie.table.name') or 'table'}_metadata"
    version = data_props.get("hoodie.table.version", "6")
    props = {
        "hoodie.table.name": name,
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
        "hoodie.table.recordkey.fields": "key",
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.populate.meta.fields": "false",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.partition.metafile.use.base.format": "false",
    }
    if version in ("8", "9"):
        del props["hoodie.table.keygenerator.class"]
        props.update({
            "hoodie.table.version": version,
            "hoodie.table.initial.version": version,
            "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.path": "timeline",
            "hoodie.timeline.history.path": "history",
            "hoodie.archivelog.folder": "history",
            "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
            "hoodie.record.merge.mode": "CUSTOM",
            "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
        })
        if data_props.get("hoodie.table.timeline.timezone"):
            props["hoodie.table.timeline.timezone"] = data_props["hoodie.table.timeline.timezone"]
    return props


def metadata_table_properties_text(data_props: Mapping[str, str]) -> bytes:
    """The properties file bytes, with Hudi's table checksum."""
    return P.format_table_properties(metadata_table_properties(data_props)).encode("utf-8")


def partition_metadata_bytes(instant: str) -> bytes:
    """``files/.hoodie_partition_metadata`` (``partitionDepth=1``)."""
    return f"#partition metadata\ncommitTime={instant}\npartitionDepth=1\n".encode("utf-8")


def _schema_version(version: int) -> int:
    if version not in (6, 8, 9):
        raise ValueError(f"hoodie writes metadata tables of table versions 6, 8 and 9, not {version}")
    return version


def schema_json(version: int = 6) -> str:
    """The ``HoodieMetadataRecord`` schema hoodie writes for table ``version`` (Hudi 0.14's, 1.0's or
    1.1's).

    Raises:
        ValueError: versions other than 6, 8 and 9.
    """
    return {6: SCHEMA_JSON_V6, 8: SCHEMA_JSON_V8, 9: SCHEMA_JSON_V9}[_schema_version(version)]


__all__ = [
    "FILES_FILE_ID", "BOOTSTRAP_LOG_TOKEN", "partition_key", "partition_list_record", "file_list_record",
    "encode_value", "sorted_records", "hfile_bytes", "hfile_data_block", "empty_delete_block",
    "base_file_name", "metadata_table_properties", "metadata_table_properties_text",
    "partition_metadata_bytes", "schema_json",
]
