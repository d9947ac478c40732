"""Avro timeline metadata: compaction, clean, rollback, replace, savepoint and restore files.

Hudi stores these timeline files as an Avro *Object Container File* holding exactly one record,
without a codec (``TimelineMetadataUtils.serializeAvroMetadata``). Java readers resolve the
record with the writer schema stored in the file against the reader schema of the generated
class, so extra writer fields are skipped and missing *defaulted* fields are filled in.

Reference: ``hudi-v6-format.md`` §3.2 and §3.4; the schemas (:mod:`hoodie.format.timeline.plan_schemas`,
re-exported here) follow the 0.14/0.15 ``hudi-common/src/main/avro/*.avsc`` files (and, for the
clustering plan and the rollback files, the writer schemas found in real 0.14/0.15 timeline files).

Our extension: ``HoodieCompactionOperation.symlinkOperations`` (nullable, default null, last
field) lists the log files that a *partial* compaction re-materialises under the compaction
instant (``table-services-upstream.md`` §2.2/§2.3). Stock Hudi readers ignore the field.
"""

from __future__ import annotations

import copy
import io
import json
import os
from typing import Any, Iterable, Mapping, Optional, Sequence

import fastavro
import fastavro.validation

from hoodie.format.avro.encode import zigzag_long
from hoodie.format.timeline.plan_schemas import KINDS, NAMESPACE, avro_schema  # noqa: F401  (re-exported: the schemas)

AVRO_MAGIC = b"Obj\x01"

# Plan/metadata versions Hudi 0.14/0.15 writes.
COMPACTION_PLAN_VERSION = 2  # CompactionUtils.LATEST_COMPACTION_METADATA_VERSION
CLEAN_PLAN_VERSION = 2  # CleanPlanner.LATEST_CLEAN_PLAN_VERSION
CLEAN_METADATA_VERSION = 2  # CleanerUtils.CLEAN_METADATA_VERSION_2
ROLLBACK_PLAN_VERSION = 1  # BaseRollbackPlanActionExecutor.LATEST_ROLLBACK_PLAN_VERSION
ROLLBACK_METADATA_VERSION = 1
REPLACE_METADATA_VERSION = 1
SAVEPOINT_METADATA_VERSION = 1
RESTORE_PLAN_VERSION = 2  # RestorePlanActionExecutor.LATEST_RESTORE_PLAN_VERSION
RESTORE_METADATA_VERSION = 1

# Operation types that go through the replacecommit action without a clustering plan.
NON_CLUSTERING_REPLACE_OPERATIONS = ("DELETE_PARTITION", "INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE")


_PARSED: dict[str, Any] = {}


def _parsed(kind: str) -> Any:
    if kind not in _PARSED:
        _PARSED[kind] = fastavro.parse_schema(avro_schema(kind))
    return _PARSED[kind]


# --------------------------------------------------------------------------------------------
# Default filling and validation
# --------------------------------------------------------------------------------------------

def _named_types(schema: Any, out: dict[str, dict]) -> None:
    """Collect the record definitions of a schema by short and full name."""
    if isinstance(schema, list):
        for s in schema:
            _named_types(s, out)
    elif isinstance(schema, dict):
        t = schema.get("type")
        if t == "record":
            ns = schema.get("namespace", NAMESPACE)
            out[schema["name"]] = schema
            out[f"{ns}.{schema['name']}"] = schema
            for f in schema["fields"]:
                _named_types(f["type"], out)
        elif t == "array":
            _named_types(schema["items"], out)
        elif t == "map":
            _named_types(schema["values"], out)


def _fill(schema: Any, value: Any, names: dict[str, dict], where: str) -> Any:
    """Return ``value`` with defaults filled into every (nested) record; reject unknown keys."""
    if isinstance(schema, str):
        if schema in names:
            return _fill(names[schema], value, names, where)
        return value
    if isinstance(schema, list):
        if value is None:
            return None
        # Our unions are [null, X] or [X, null]: fill against the non-null branch.
        branches = [s for s in schema if s != "null"]
        return _fill(branches[0], value, names, where) if len(branches) == 1 else value
    t = schema.get("type")
    if t == "record":
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: expected a record ({schema['name']}) as a dict, got {type(value).__name__}")
        known = {f["name"] for f in schema["fields"]}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(
                f"{where}: unknown field(s) {unknown} for {schema['name']}; known fields: {sorted(known)}"
            )
        out: dict[str, Any] = {}
        for f in schema["fields"]:
            name = f["name"]
            if name in value:
                out[name] = _fill(f["type"], value[name], names, f"{where}.{name}")
            elif "default" in f:
                out[name] = copy.deepcopy(f["default"])
            else:
                raise ValueError(f"{where}: missing required field {name!r} of {schema['name']} (it has no default)")
        return out
    if t == "array" and isinstance(value, (list, tuple)):
        return [_fill(schema["items"], v, names, f"{where}[{i}]") for i, v in enumerate(value)]
    if t == "map" and isinstance(value, Mapping):
        return {k: _fill(schema["values"], v, names, f"{where}[{k!r}]") for k, v in value.items()}
    return value


def fill_defaults(kind: str, record: Mapping[str, Any]) -> dict:
    """A copy of ``record`` with every missing defaulted field (also in nested records) filled in.

    Raises ValueError for unknown fields and for missing fields that have no default.
    """
    schema = avro_schema(kind)
    names: dict[str, dict] = {}
    _named_types(schema, names)
    return _fill(schema, record, names, kind)


# --------------------------------------------------------------------------------------------
# Reading and writing
# --------------------------------------------------------------------------------------------

def write_avro_metadata(kind: str, record: Mapping[str, Any], *, sync_marker: Optional[bytes] = None) -> bytes:
    """Serialise one timeline metadata record as Hudi does: an Avro container file, codec null.

    Missing fields with defaults are filled in; the record is validated against the schema
    of ``kind`` (ValueError naming the problem when it does not conform). ``sync_marker`` (16
    bytes) replaces the random one, so that a file can be re-encoded byte for byte.
    """
    if sync_marker is not None and len(sync_marker) != 16:
        raise ValueError(f"an Avro sync marker is 16 bytes, got {len(sync_marker)}")
    full = fill_defaults(kind, record)
    parsed = _parsed(kind)
    try:
        fastavro.validation.validate(full, parsed, raise_errors=True)
    except fastavro.validation.ValidationError as e:
        raise ValueError(f"{kind} record does not match its Avro schema: {e}") from None
    datum = io.BytesIO()
    fastavro.schemaless_writer(datum, parsed, full)
    body = datum.getvalue()
    # Written by hand rather than with fastavro.writer so that the header matches Java's
    # DataFileWriter byte layout: only "avro.schema" in the file metadata, no "avro.codec".
    schema_json = json.dumps(avro_schema(kind), separators=(",", ":")).encode("utf-8")
    sync = os.urandom(16) if sync_marker is None else bytes(sync_marker)
    out = io.BytesIO()
    out.write(AVRO_MAGIC)
    out.write(zigzag_long(1))
    out.write(_avro_bytes(b"avro.schema"))
    out.write(_avro_bytes(schema_json))
    out.write(zigzag_long(0))
    out.write(sync)
    out.write(zigzag_long(1))  # one record in the block
    out.write(zigzag_long(len(body)))
    out.write(body)
    out.write(sync)
    return out.getvalue()


def _avro_bytes(b: bytes) -> bytes:
    return zigzag_long(len(b)) + b


def read_avro_metadata(data: bytes) -> dict:
    """Read the single record of an Avro timeline file using the writer schema stored in it.

    Raises ValueError if ``data`` is empty (e.g. an ``.inflight`` rollback or compaction file,
    which Hudi writes empty), is not an Avro container file, or holds no record.
    """
    if not data:
        raise ValueError("the timeline file is empty (0 bytes): it holds no Avro metadata record")
    if not data.startswith(AVRO_MAGIC):
        raise ValueError(
            f"not an Avro object container file: starts with {bytes(data[:4])!r}, expected {AVRO_MAGIC!r}"
        )
    try:
        reader = fastavro.reader(io.BytesIO(data))
        for rec in reader:
            return rec
    except Exception as e:  # fastavro raises assorted types on truncated or garbled input
        raise ValueError(f"corrupt Avro timeline file: {type(e).__name__}: {e}") from None
    raise ValueError("the Avro timeline file holds no record")


def read_avro_metadata_kind(data: bytes) -> str:
    """The short record name (e.g. ``HoodieCleanerPlan``) of the writer schema of an Avro timeline file."""
    if not data:
        raise ValueError("the timeline file is empty (0 bytes): it holds no Avro metadata record")
    reader = fastavro.reader(io.BytesIO(data))
    name = reader.writer_schema.get("name", "")
    return name.rsplit(".", 1)[-1]


# --------------------------------------------------------------------------------------------
# Convenience constructors (plain dicts in schema shape)
# --------------------------------------------------------------------------------------------

def compaction_operation(
    base_instant: str,
    data_file_name: Optional[str],
    delta_file_names: Sequence[str],
    file_id: str,
    partition_path: str,
    metrics: Mapping[str, float],
    symlink_operations: Optional[Sequence[tuple[str, str]]] = None,
) -> dict:
    """One ``HoodieCompactionOperation`` for plan version 2 (file *names*, not paths).

    ``symlink_operations`` are ``(symlink, target)`` pairs of log file names for a partial
    compaction: ``symlink`` is the new name under the compaction instant, ``target`` the
    original log file. ``None`` means a full (stock Hudi) operation.
    """
    return {
        "baseInstantTime": base_instant,
        "deltaFilePaths": list(delta_file_names),
        "dataFilePath": data_file_name,
        "fileId": file_id,
        "partitionPath": partition_path,
        "metrics": {k: float(v) for k, v in metrics.items()},
        "bootstrapFilePath": None,
        "symlinkOperations": None if symlink_operations is None
        else [{"symlink": s, "target": t} for s, t in symlink_operations],
    }


def compaction_plan(
    operations: Sequence[Mapping[str, Any]],
    extra_metadata: Optional[Mapping[str, str]] = None,
    version: int = COMPACTION_PLAN_VERSION,
) -> dict:
    """A ``HoodieCompactionPlan`` (version 2 by default, as 0.14/0.15 write it)."""
    return {
        "operations": [dict(op) for op in operations],
        "extraMetadata": None if extra_metadata is None else dict(extra_metadata),
        "version": version,
        "strategy": None,
        "preserveHoodieMetadata": None,
    }


def cleaner_plan(
    earliest_instant_to_retain: Optional[tuple[str, str, str]],
    last_completed_commit_timestamp: str,
    policy: str,
    file_paths_to_delete: Mapping[str, Iterable[str | tuple[str, bool]]],
    partitions_to_delete: Optional[Sequence[str]] = None,
    extra_metadata: Optional[Mapping[str, str]] = None,
    version: int = CLEAN_PLAN_VERSION,
) -> dict:
    """A ``HoodieCleanerPlan`` as ``CleanPlanActionExecutor`` builds it (plan version 2).

    ``earliest_instant_to_retain`` is ``(timestamp, action, state)``, e.g.
    ``("20240101000000000", "commit", "COMPLETED")``, or None. ``file_paths_to_delete`` maps a
    partition path to full file paths, each optionally ``(path, is_bootstrap_base_file)``.
    The deprecated ``filesToBeDeletedPerPartition`` is written as an empty map, like Hudi does.
    """
    eitr = None
    if earliest_instant_to_retain is not None:
        ts, action, state = earliest_instant_to_retain
        eitr = {"timestamp": ts, "action": action, "state": state}
    per_partition: dict[str, list[dict]] = {}
    for partition, files in file_paths_to_delete.items():
        infos = []
        for f in files:
            path, boot = (f, False) if isinstance(f, str) else (f[0], bool(f[1]))
            infos.append({"filePath": path, "isBootstrapBaseFile": boot})
        per_partition[partition] = infos
    return {
        "earliestInstantToRetain": eitr,
        "lastCompletedCommitTimestamp": last_completed_commit_timestamp,
        "policy": policy,
        "filesToBeDeletedPerPartition": {},
        "version": version,
        "filePathsToBeDeletedPerPartition": per_partition,
        "partitionsToBeDeleted": list(partitions_to_delete or []),
        "extraMetadata": None if extra_metadata is None else dict(extra_metadata),
    }


def clean_partition_metadata(
    partition_path: str,
    policy: str,
    delete_path_patterns: Sequence[str],
    success_delete_files: Sequence[str],
    failed_delete_files: Sequence[str] = (),
    is_partition_deleted: Optional[bool] = False,
) -> dict:
    """One ``HoodieCleanPartitionMetadata`` entry of a clean metadata record."""
    return {
        "partitionPath": partition_path,
        "policy": policy,
        "deletePathPatterns": list(delete_path_patterns),
        "successDeleteFiles": list(success_delete_files),
        "failedDeleteFiles": list(failed_delete_files),
        "isPartitionDeleted": is_partition_deleted,
    }


def clean_metadata(
    start_clean_time: str,
    time_taken_ms: int,
    earliest_commit_to_retain: str,
    last_completed_commit_timestamp: str,
    partition_metadata: Mapping[str, Mapping[str, Any]],
    bootstrap_partition_metadata: Optional[Mapping[str, Mapping[str, Any]]] = None,
    extra_metadata: Optional[Mapping[str, str]] = None,
    version: int = CLEAN_METADATA_VERSION,
) -> dict:
    """A ``HoodieCleanMetadata`` as ``CleanerUtils.convertCleanMetadata`` builds it.

    ``totalFilesDeleted`` is the number of successfully deleted files over all partitions
    (bootstrap base files not counted, as in Hudi).
    """
    total = sum(len(pm["successDeleteFiles"]) for pm in partition_metadata.values())
    return {
        "startCleanTime": start_clean_time,
        "timeTakenInMillis": int(time_taken_ms),
        "totalFilesDeleted": total,
        "earliestCommitToRetain": earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": last_completed_commit_timestamp,
        "partitionMetadata": {k: dict(v) for k, v in partition_metadata.items()},
        "version": version,
        "bootstrapPartitionMetadata": {k: dict(v) for k, v in (bootstrap_partition_metadata or {}).items()},
        "extraMetadata": None if extra_metadata is None else dict(extra_metadata),
    }


def rollback_request(
    partition_path: str,
    file_id: str = "",
    latest_base_instant: str = "",
    files_to_delete: Sequence[str] = (),
    log_blocks_to_delete: Optional[Mapping[str, int]] = None,
) -> dict:
    """One ``HoodieRollbackRequest``. Hudi writes ``""`` (not null) for an unknown file id/base
    instant and an empty map for no log blocks, as seen in real rollback plans."""
    return {
        "partitionPath": partition_path,
        "fileId": file_id,
        "latestBaseInstant": latest_base_instant,
        "filesToBeDeleted": list(files_to_delete),
        "logBlocksToBeDeleted": dict(log_blocks_to_delete or {}),
    }


def rollback_plan(
    instant_to_rollback: tuple[str, str],
    requests: Sequence[Mapping[str, Any]],
    version: int = ROLLBACK_PLAN_VERSION,
) -> dict:
    """A ``HoodieRollbackPlan``; ``instant_to_rollback`` is ``(commit_time, action)``."""
    commit_time, action = instant_to_rollback
    return {
        "instantToRollback": {"commitTime": commit_time, "action": action},
        "RollbackRequests": [dict(r) for r in requests],
        "version": version,
    }


def rollback_partition_metadata(
    partition_path: str,
    success_delete_files: Sequence[str] = (),
    failed_delete_files: Sequence[str] = (),
    rollback_log_files: Optional[Mapping[str, int]] = None,
    log_files_from_failed_commit: Optional[Mapping[str, int]] = None,
) -> dict:
    """One ``HoodieRollbackPartitionMetadata``: deleted files, and for MOR the log files that
    received a rollback command block and the failed commit's log files (path -> size)."""
    return {
        "partitionPath": partition_path,
        "successDeleteFiles": list(success_delete_files),
        "failedDeleteFiles": list(failed_delete_files),
        "rollbackLogFiles": dict(rollback_log_files or {}),
        "logFilesFromFailedCommit": dict(log_files_from_failed_commit or {}),
    }


def rollback_metadata(
    start_rollback_time: str,
    time_taken_ms: int,
    instants_rollback: Sequence[tuple[str, str]],
    partition_metadata: Mapping[str, Mapping[str, Any]],
    version: int = ROLLBACK_METADATA_VERSION,
) -> dict:
    """A ``HoodieRollbackMetadata`` as ``TimelineMetadataUtils.convertRollbackMetadata`` builds it.

    ``instants_rollback`` are ``(commit_time, action)`` pairs; ``commitsRollback`` holds their
    times, and ``totalFilesDeleted`` counts the successfully deleted files.
    """
    total = sum(len(pm["successDeleteFiles"]) for pm in partition_metadata.values())
    return {
        "startRollbackTime": start_rollback_time,
        "timeTakenInMillis": int(time_taken_ms),
        "totalFilesDeleted": total,
        "commitsRollback": [t for t, _ in instants_rollback],
        "partitionMetadata": {k: dict(v) for k, v in partition_metadata.items()},
        "version": version,
        "instantsRollback": [{"commitTime": t, "action": a} for t, a in instants_rollback],
    }


def requested_replace_metadata(
    operation_type: Optional[str],
    extra_metadata: Optional[Mapping[str, str]] = None,
    clustering_plan: Optional[Mapping[str, Any]] = None,
) -> dict:
    """A ``HoodieRequestedReplaceMetadata`` for ``<t>.replacecommit.requested``.

    DELETE_PARTITION / INSERT_OVERWRITE(_TABLE) carry no clustering plan and version 1, with
    ``extraMetadata`` ``{}`` when not given (``SparkDeletePartitionCommitActionExecutor``).
    ``operation_type=None`` gives the all-null record that Spark datasource insert_overwrite
    writes (``HoodieActiveTimeline.createRequestedReplaceCommit`` uses the no-arg constructor,
    so even ``version`` is null).
    """
    if operation_type is None:
        return {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
    if operation_type in NON_CLUSTERING_REPLACE_OPERATIONS and clustering_plan is not None:
        raise ValueError(f"{operation_type} replacecommits carry no clustering plan; pass clustering_plan=None")
    return {
        "operationType": operation_type,
        "clusteringPlan": None if clustering_plan is None else dict(clustering_plan),
        "extraMetadata": dict(extra_metadata or {}),
        "version": REPLACE_METADATA_VERSION,
    }


def savepoint_metadata(
    savepointed_by: str,
    savepointed_at: int,
    comments: str,
    partition_files: Mapping[str, Sequence[str]],
    version: int = SAVEPOINT_METADATA_VERSION,
) -> dict:
    """A ``HoodieSavepointMetadata``: ``partition_files`` maps a partition to its savepointed base file names."""
    return {
        "savepointedBy": savepointed_by,
        "savepointedAt": int(savepointed_at),
        "comments": comments,
        "partitionMetadata": {
            p: {"partitionPath": p, "savepointDataFile": list(files)} for p, files in partition_files.items()
        },
        "version": version,
    }


def restore_plan(
    instants_to_rollback: Sequence[tuple[str, str]],
    savepoint_to_restore: Optional[str],
    version: int = RESTORE_PLAN_VERSION,
) -> dict:
    """A ``HoodieRestorePlan`` (``<r>.restore.requested``): the ``(commit_time, action)`` instants
    the restore rolls back, newest first, and the savepoint it goes back to."""
    return {
        "instantsToRollback": [{"commitTime": t, "action": a} for t, a in instants_to_rollback],
        "version": version,
        "savepointToRestoreTimestamp": savepoint_to_restore,
    }


def restore_metadata(
    start_restore_time: str,
    time_taken_ms: int,
    instants_rolled_back: Sequence[tuple[str, str]],
    rollbacks: Mapping[str, Sequence[Mapping[str, Any]]],
    version: int = RESTORE_METADATA_VERSION,
) -> dict:
    """A ``HoodieRestoreMetadata`` as ``TimelineMetadataUtils.convertRestoreMetadata`` builds it:
    the rolled-back ``(commit_time, action)`` instants and, per instant time, its
    ``HoodieRollbackMetadata`` records (:func:`rollback_metadata`)."""
    return {
        "startRestoreTime": start_restore_time,
        "timeTakenInMillis": int(time_taken_ms),
        "instantsToRollback": [t for t, _ in instants_rolled_back],
        "hoodieRestoreMetadata": {k: [dict(r) for r in v] for k, v in rollbacks.items()},
        "version": version,
        "restoreInstantInfo": [{"commitTime": t, "action": a} for t, a in instants_rolled_back],
    }
