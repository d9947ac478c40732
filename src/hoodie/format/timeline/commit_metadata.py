"""Commit metadata JSON (``HoodieCommitMetadata``, ``HoodieReplaceCommitMetadata``, write stats).

Reference: ``hudi-v6-format.md`` §3.3. Field names and order follow what Hudi 0.14/0.15 writes;
readers (Java's Jackson, hudi-rs) ignore unknown properties, so extra ``extraMetadata`` keys are safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional
from hoodie.format.timeline.plans import write_avro_metadata

NULL_COMMIT = "null"  # prevCommit of a new file group is the *string* "null"
AVRO_MAGIC = b"Obj\x01"  # Avro object container files (timeline layout 2 writes commit metadata so)


def _avro_record(data: bytes) -> dict[str, Any]:
    """The one record of an Avro container file, decoded with its writer schema."""
    import io

    import fastavro

    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as e:  # fastavro raises assorted types on damaged files
        raise ValueError(f"commit metadata is not a readable Avro file: {type(e).__name__}: {e}") from e
    if len(records) != 1:
        raise ValueError(f"commit metadata holds {len(records)} Avro records, not 1")
    return records[0]


@dataclass
class WriteStat:
    """One ``HoodieWriteStat`` (or ``HoodieDeltaWriteStat`` when ``log_files`` is set)."""

    file_id: str
    path: Optional[str]
    partition_path: Optional[str]
    prev_commit: str = NULL_COMMIT
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    file_size_in_bytes: int = 0
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    min_event_time: Optional[int] = None
    max_event_time: Optional[int] = None
    runtime_stats: Optional[dict[str, int]] = None
    # Delta (MOR log) fields; present only when ``is_delta``.
    is_delta: bool = False
    log_version: int = 0
    log_offset: int = 0
    base_file: str = ""
    log_files: list[str] = field(default_factory=list)
    # Table versions 8/9: the base file a compaction replaced (``prevBaseFile``).
    prev_base_file: Optional[str] = None

    def to_avro(self) -> dict[str, Any]:
        """The ``HoodieWriteStat`` Avro record (table versions 8/9): the delta-only fields are null
        for base files, as Hudi 1.x writes them."""
        d: dict[str, Any] = {
            "fileId": self.file_id, "path": self.path, "prevCommit": self.prev_commit,
            "numWrites": self.num_writes, "numDeletes": self.num_deletes,
            "numUpdateWrites": self.num_update_writes, "totalWriteBytes": self.total_write_bytes,
            "totalWriteErrors": self.total_write_errors, "partitionPath": self.partition_path,
            "totalLogRecords": self.total_log_records, "totalLogFiles": None,
            "totalUpdatedRecordsCompacted": self.total_updated_records_compacted,
            "numInserts": self.num_inserts, "totalLogBlocks": self.total_log_blocks,
            "totalCorruptLogBlock": self.total_corrupt_log_block,
            "totalRollbackBlocks": self.total_rollback_blocks, "fileSizeInBytes": self.file_size_in_bytes,
            "prevBaseFile": self.prev_base_file, "minEventTime": self.min_event_time,
            "maxEventTime": self.max_event_time,
            "runtimeStats": dict(self.runtime_stats) if self.runtime_stats is not None else None,
            "totalLogFilesCompacted": self.total_log_files_compacted, "totalLogReadTimeMs": 0,
            "totalLogSizeCompacted": self.total_log_size_compacted, "numUpdates": 0,
        }
        if self.is_delta:
            d.update({"logVersion": self.log_version, "logOffset": self.log_offset,
                      "baseFile": self.base_file, "logFiles": list(self.log_files)})
        return d

    def to_json(self) -> dict[str, Any]:
        """The JSON object in Hudi's field order."""
        d: dict[str, Any] = {
            "fileId": self.file_id,
            "path": self.path,
            "cdcStats": None,
            "prevCommit": self.prev_commit,
            "numWrites": self.num_writes,
            "numDeletes": self.num_deletes,
            "numUpdateWrites": self.num_update_writes,
            "numInserts": self.num_inserts,
            "totalWriteBytes": self.total_write_bytes,
            "totalWriteErrors": self.total_write_errors,
            "tempPath": None,
            "partitionPath": self.partition_path,
            "totalLogRecords": self.total_log_records,
            "totalLogFilesCompacted": self.total_log_files_compacted,
            "totalLogSizeCompacted": self.total_log_size_compacted,
            "totalUpdatedRecordsCompacted": self.total_updated_records_compacted,
            "totalLogBlocks": self.total_log_blocks,
            "totalCorruptLogBlock": self.total_corrupt_log_block,
            "totalRollbackBlocks": self.total_rollback_blocks,
            "fileSizeInBytes": self.file_size_in_bytes,
            "minEventTime": self.min_event_time,
            "maxEventTime": self.max_event_time,
            "runtimeStats": self.runtime_stats,
        }
        if self.is_delta:
            d.update(
                {
                    "logVersion": self.log_version,
                    "logOffset": self.log_offset,
                    "baseFile": self.base_file,
                    "logFiles": list(self.log_files),
                    "recordsStats": {"val": None},
                }
            )
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "WriteStat":
        """Parse a write stat object; unknown fields are ignored, as Jackson does."""
        return cls(
            file_id=d.get("fileId") or "",
            path=d.get("path"),
            partition_path=d.get("partitionPath"),
            prev_commit=d.get("prevCommit") or NULL_COMMIT,
            num_writes=int(d.get("numWrites") or 0),
            num_deletes=int(d.get("numDeletes") or 0),
            num_update_writes=int(d.get("numUpdateWrites") or 0),
            num_inserts=int(d.get("numInserts") or 0),
            total_write_bytes=int(d.get("totalWriteBytes") or 0),
            total_write_errors=int(d.get("totalWriteErrors") or 0),
            file_size_in_bytes=int(d.get("fileSizeInBytes") or 0),
            total_log_records=int(d.get("totalLogRecords") or 0),
            total_log_files_compacted=int(d.get("totalLogFilesCompacted") or 0),
            total_log_size_compacted=int(d.get("totalLogSizeCompacted") or 0),
            total_updated_records_compacted=int(d.get("totalUpdatedRecordsCompacted") or 0),
            total_log_blocks=int(d.get("totalLogBlocks") or 0),
            total_corrupt_log_block=int(d.get("totalCorruptLogBlock") or 0),
            total_rollback_blocks=int(d.get("totalRollbackBlocks") or 0),
            min_event_time=d.get("minEventTime"),
            max_event_time=d.get("maxEventTime"),
            runtime_stats=d.get("runtimeStats"),
            is_delta=d.get("logFiles") is not None or d.get("logVersion") is not None,
            log_version=int(d.get("logVersion") or 0),
            log_offset=int(d.get("logOffset") or 0),
            base_file=d.get("baseFile") or "",
            log_files=list(d.get("logFiles") or []),
            prev_base_file=d.get("prevBaseFile") or None,
        )

    @property
    def file_name(self) -> Optional[str]:
        """The file this stat wrote (last path segment), if any."""
        if not self.path:
            return None
        return self.path.rsplit("/", 1)[-1]


@dataclass
class CommitMetadata:
    """``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata``."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    partition_to_replace_file_ids: Optional[dict[str, list[str]]] = None  # replacecommit only

    def add_write_stat(self, partition: str, stat: WriteStat) -> None:
        """Append a write stat under its partition."""
        self.partition_to_write_stats.setdefault(partition, []).append(stat)

    def all_write_stats(self) -> Iterable[WriteStat]:
        """Every write stat across partitions."""
        for stats in self.partition_to_write_stats.values():
            yield from stats

    @property
    def schema(self) -> Optional[str]:
        """The table schema (Avro JSON, without meta fields) recorded by the write."""
        return self.extra_metadata.get("schema") or None

    def to_json_bytes(self) -> bytes:
        """Pretty-printed UTF-8 JSON, field order as Hudi writes it."""
        d: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_json() for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
        }
        if self.partition_to_replace_file_ids is not None:
            d["partitionToReplaceFileIds"] = {
                p: list(ids) for p, ids in self.partition_to_replace_file_ids.items()
            }
        d["compacted"] = self.compacted
        d["extraMetadata"] = dict(self.extra_metadata)
        d["operationType"] = self.operation_type
        return json.dumps(d, indent=2, separators=(",", " : ")).encode("utf-8")

    def to_avro_bytes(self, replace: Optional[bool] = None) -> bytes:
        """The Avro container file of table versions 8/9: ``HoodieReplaceCommitMetadata`` when
        ``replace`` (default: when replaced file ids are set), else ``HoodieCommitMetadata``;
        ``version`` is null, as Hudi 1.x writes it."""
        if replace is None:
            replace = self.partition_to_replace_file_ids is not None
        record: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_avro() for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "version": None,
            "operationType": self.operation_type,
        }
        if replace:
            record["partitionToReplaceFileIds"] = {
                p: list(ids) for p, ids in (self.partition_to_replace_file_ids or {}).items()
            }
            return write_avro_metadata("HoodieReplaceCommitMetadata", record)
        return write_avro_metadata("HoodieCommitMetadata", record)

    @classmethod
    def from_json_bytes(cls, data: bytes) -> "CommitMetadata":
        """Parse commit metadata: JSON (table version 6) or the Avro container file of table versions
        8/9 (same field names); an empty file is empty metadata (as Hudi treats it)."""
        if data[:4] == AVRO_MAGIC:
            d = _avro_record(data)
        else:
            text = data.decode("utf-8").strip() if data else ""
            if not text:
                return cls()
            try:
                d = json.loads(text)
            except json.JSONDecodeError as e:
                raise ValueError(f"commit metadata is not valid JSON: {e}") from e
        p2ws: dict[str, list[WriteStat]] = {}
        for p, stats in (d.get("partitionToWriteStats") or {}).items():
            p2ws[p] = [WriteStat.from_json(s) for s in (stats or [])]
        p2r = d.get("partitionToReplaceFileIds")
        return cls(
            partition_to_write_stats=p2ws,
            compacted=bool(d.get("compacted", False)),
            extra_metadata={k: v for k, v in (d.get("extraMetadata") or {}).items()},
            operation_type=d.get("operationType") or "UNKNOWN",
            partition_to_replace_file_ids=(
                {p: list(ids or []) for p, ids in p2r.items()} if p2r is not None else None
            ),
        )
