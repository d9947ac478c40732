"""The Avro schemas of Hudi's timeline metadata files (compaction, clean, rollback, replace, savepoint,
restore and the Avro commit metadata), built as Java's generated ``SCHEMA$`` defines them.

The schemas follow the 0.14/0.15 ``hudi-common/src/main/avro/*.avsc`` files (and, for the clustering
plan and the rollback files, the writer schemas found in real 0.14/0.15 timeline files); see
:mod:`hoodie.format.timeline.plans` (which reads and writes the files and re-exports
:func:`avro_schema` and :data:`KINDS`) for our one extension, ``symlinkOperations``.
"""

from __future__ import annotations

from typing import Any

NAMESPACE = "org.apache.hudi.avro.model"


# --------------------------------------------------------------------------------------------
# Schema building blocks. Every top-level schema is self-contained: a named type is defined
# inline at its first use and referenced by full name afterwards, as the Java SCHEMA$ does.
# --------------------------------------------------------------------------------------------

def _opt(t: Any) -> list:
    return ["null", t]


def _field(name: str, t: Any, **kw: Any) -> dict:
    f = {"name": name, "type": t}
    f.update(kw)
    return f


def _nullable(name: str, t: Any) -> dict:
    return {"name": name, "type": ["null", t], "default": None}


def _version_field() -> dict:
    return {"name": "version", "type": ["int", "null"], "default": 1}


def _string_map() -> dict:
    return {"type": "map", "values": "string"}


def _string_array() -> dict:
    return {"type": "array", "items": "string"}


def _instant_info() -> dict:
    return {
        "type": "record", "name": "HoodieInstantInfo", "namespace": NAMESPACE,
        "fields": [_field("commitTime", "string"), _field("action", "string")],
    }


def _symlink_operation() -> dict:
    return {
        "type": "record", "name": "HoodieSymlinkOperation", "namespace": NAMESPACE,
        "fields": [_nullable("symlink", "string"), _nullable("target", "string")],
    }


def _compaction_operation(with_extension: bool) -> dict:
    fields = [
        _field("baseInstantTime", ["null", "string"]),
        _nullable("deltaFilePaths", _string_array()),
        _nullable("dataFilePath", "string"),
        _field("fileId", ["null", "string"]),
        _nullable("partitionPath", "string"),
        _nullable("metrics", {"type": "map", "values": "double"}),
        _nullable("bootstrapFilePath", "string"),
    ]
    if with_extension:
        fields.append(_nullable("symlinkOperations", {"type": "array", "items": _symlink_operation()}))
    return {"type": "record", "name": "HoodieCompactionOperation", "namespace": NAMESPACE, "fields": fields}


def _compaction_plan(with_extension: bool) -> dict:
    strategy = {
        "type": "record", "name": "HoodieCompactionStrategy", "namespace": NAMESPACE,
        "fields": [
            _nullable("compactorClassName", "string"),
            _nullable("strategyParams", _string_map()),
            _version_field(),
        ],
    }
    return {
        "type": "record", "name": "HoodieCompactionPlan", "namespace": NAMESPACE,
        "fields": [
            _nullable("operations", {"type": "array", "items": _compaction_operation(with_extension)}),
            _nullable("extraMetadata", _string_map()),
            _version_field(),
            _nullable("strategy", strategy),
            _nullable("preserveHoodieMetadata", "boolean"),
        ],
    }


def _cleaner_plan() -> dict:
    action_instant = {
        "type": "record", "name": "HoodieActionInstant", "namespace": NAMESPACE,
        "fields": [_field("timestamp", "string"), _field("action", "string"), _field("state", "string")],
    }
    clean_file_info = {
        "type": "record", "name": "HoodieCleanFileInfo", "namespace": NAMESPACE,
        "fields": [_nullable("filePath", "string"), _nullable("isBootstrapBaseFile", "boolean")],
    }
    return {
        "type": "record", "name": "HoodieCleanerPlan", "namespace": NAMESPACE,
        "fields": [
            _nullable("earliestInstantToRetain", action_instant),
            _field("lastCompletedCommitTimestamp", "string", default=""),
            _field("policy", "string"),
            # Deprecated by filePathsToBeDeletedPerPartition (plan version 2).
            _nullable("filesToBeDeletedPerPartition", {"type": "map", "values": _string_array()}),
            _version_field(),
            _nullable("filePathsToBeDeletedPerPartition",
                      {"type": "map", "values": {"type": "array", "items": clean_file_info}}),
            _nullable("partitionsToBeDeleted", _string_array()),
            _nullable("extraMetadata", _string_map()),
        ],
    }


def _clean_partition_metadata() -> dict:
    return {
        "type": "record", "name": "HoodieCleanPartitionMetadata", "namespace": NAMESPACE,
        "fields": [
            _field("partitionPath", "string"),
            _field("policy", "string"),
            _field("deletePathPatterns", _string_array()),
            _field("successDeleteFiles", _string_array()),
            _field("failedDeleteFiles", _string_array()),
            _nullable("isPartitionDeleted", "boolean"),
        ],
    }


def _clean_metadata() -> dict:
    return {
        "type": "record", "name": "HoodieCleanMetadata", "namespace": NAMESPACE,
        "fields": [
            _field("startCleanTime", "string"),
            _field("timeTakenInMillis", "long"),
            _field("totalFilesDeleted", "int"),
            _field("earliestCommitToRetain", "string"),
            _field("lastCompletedCommitTimestamp", "string", default=""),
            _field("partitionMetadata", {"type": "map", "values": _clean_partition_metadata()}),
            _version_field(),
            _nullable("bootstrapPartitionMetadata",
                      {"type": "map", "values": f"{NAMESPACE}.HoodieCleanPartitionMetadata"}),
            _nullable("extraMetadata", _string_map()),
        ],
    }


def _rollback_plan() -> dict:
    request = {
        "type": "record", "name": "HoodieRollbackRequest", "namespace": NAMESPACE,
        "fields": [
            _field("partitionPath", "string"),
            _nullable("fileId", "string"),
            _nullable("latestBaseInstant", "string"),
            _field("filesToBeDeleted", _string_array(), default=[]),
            _nullable("logBlocksToBeDeleted", {"type": "map", "values": "long"}),
        ],
    }
    return {
        "type": "record", "name": "HoodieRollbackPlan", "namespace": NAMESPACE,
        "fields": [
            _nullable("instantToRollback", _instant_info()),
            _nullable("RollbackRequests", {"type": "array", "items": request}),
            _version_field(),
        ],
    }


def _rollback_metadata() -> dict:
    partition = {
        "type": "record", "name": "HoodieRollbackPartitionMetadata", "namespace": NAMESPACE,
        "fields": [
            _field("partitionPath", "string"),
            _field("successDeleteFiles", _string_array()),
            _field("failedDeleteFiles", _string_array()),
            _nullable("rollbackLogFiles", {"type": "map", "values": "long"}),
            _nullable("logFilesFromFailedCommit", {"type": "map", "values": "long"}),
        ],
    }
    return {
        "type": "record", "name": "HoodieRollbackMetadata", "namespace": NAMESPACE,
        "fields": [
            _field("startRollbackTime", "string"),
            _field("timeTakenInMillis", "long"),
            _field("totalFilesDeleted", "int"),
            _field("commitsRollback", _string_array()),
            _field("partitionMetadata", {"type": "map", "values": partition}),
            _version_field(),
            _field("instantsRollback",
                   {"type": "array", "items": _instant_info()},
                   default=[]),
        ],
    }


def _clustering_plan() -> dict:
    # As found in the writer schema of a real 0.14/0.15 .replacecommit.requested file.
    slice_info = {
        "type": "record", "name": "HoodieSliceInfo", "namespace": NAMESPACE,
        "fields": [
            _nullable("dataFilePath", "string"),
            _nullable("deltaFilePaths", _string_array()),
            _field("fileId", ["null", "string"]),
            _nullable("partitionPath", "string"),
            _nullable("bootstrapFilePath", "string"),
            _version_field(),
        ],
    }
    group = {
        "type": "record", "name": "HoodieClusteringGroup", "namespace": NAMESPACE,
        "fields": [
            _nullable("slices", {"type": "array", "items": slice_info}),
            _nullable("metrics", {"type": "map", "values": "double"}),
            _field("numOutputFileGroups", ["int", "null"], default=1),
            _nullable("extraMetadata", _string_map()),
            _version_field(),
        ],
    }
    strategy = {
        "type": "record", "name": "HoodieClusteringStrategy", "namespace": NAMESPACE,
        "fields": [
            _nullable("strategyClassName", "string"),
            _nullable("strategyParams", _string_map()),
            _version_field(),
        ],
    }
    return {
        "type": "record", "name": "HoodieClusteringPlan", "namespace": NAMESPACE,
        "fields": [
            _nullable("inputGroups", {"type": "array", "items": group}),
            _nullable("strategy", strategy),
            _nullable("extraMetadata", _string_map()),
            _version_field(),
            _nullable("preserveHoodieMetadata", "boolean"),
        ],
    }


def _requested_replace_metadata() -> dict:
    return {
        "type": "record", "name": "HoodieRequestedReplaceMetadata", "namespace": NAMESPACE,
        "fields": [
            _nullable("operationType", "string"),
            # Only set for clustering.
            _nullable("clusteringPlan", _clustering_plan()),
            _nullable("extraMetadata", _string_map()),
            _version_field(),
        ],
    }


def _savepoint_metadata() -> dict:
    partition = {
        "type": "record", "name": "HoodieSavepointPartitionMetadata", "namespace": NAMESPACE,
        "fields": [_field("partitionPath", "string"), _field("savepointDataFile", _string_array())],
    }
    return {
        "type": "record", "name": "HoodieSavepointMetadata", "namespace": NAMESPACE,
        "fields": [
            _field("savepointedBy", "string"),
            _field("savepointedAt", "long"),
            _field("comments", "string"),
            _field("partitionMetadata", {"type": "map", "values": partition}),
            _version_field(),
        ],
    }


def _restore_plan() -> dict:
    return {
        "type": "record", "name": "HoodieRestorePlan", "namespace": NAMESPACE,
        "fields": [
            _field("instantsToRollback", {"type": "array", "items": _instant_info()}, default=[]),
            _version_field(),
            # Since Hudi 0.13: the savepoint the restore goes back to (its metadata-table restore reads it).
            _nullable("savepointToRestoreTimestamp", "string"),
        ],
    }


def _restore_metadata() -> dict:
    # HoodieInstantInfo is defined inside the nested rollback metadata, then referenced by name.
    rollback = _rollback_metadata()
    return {
        "type": "record", "name": "HoodieRestoreMetadata", "namespace": NAMESPACE,
        "fields": [
            _field("startRestoreTime", "string"),
            _field("timeTakenInMillis", "long"),
            _field("instantsToRollback", _string_array()),
            _field("hoodieRestoreMetadata",
                   {"type": "map", "values": {"type": "array", "items": ["null", rollback]}}),
            _version_field(),
            _field("restoreInstantInfo", {"type": "array", "items": f"{NAMESPACE}.HoodieInstantInfo"},
                   default=[]),
        ],
    }


# Table versions 8/9 (timeline layout 2) store commit metadata as Avro too. Field order and
# nullability as in the writer schemas of Hudi 1.0/1.1 files (``hudi-v8-v9-format.md`` §3.2).
_WRITE_STAT_LONGS_1 = ("numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors")
_WRITE_STAT_LONGS_2 = ("totalLogRecords", "totalLogFiles", "totalUpdatedRecordsCompacted", "numInserts",
                       "totalLogBlocks", "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes")


def _write_stat() -> dict:
    runtime = {
        "type": "record", "name": "HoodieRuntimeStats", "namespace": NAMESPACE,
        "fields": [_nullable(n, "long") for n in ("totalScanTime", "totalCreateTime", "totalUpsertTime")],
    }
    fields = [_nullable("fileId", "string"), _nullable("path", "string"), _nullable("prevCommit", "string")]
    fields += [_nullable(n, "long") for n in _WRITE_STAT_LONGS_1]
    fields.append(_nullable("partitionPath", "string"))
    fields += [_nullable(n, "long") for n in _WRITE_STAT_LONGS_2]
    fields += [
        _nullable("logVersion", "int"),
        _nullable("logOffset", "long"),
        _nullable("baseFile", "string"),
        _nullable("logFiles", _string_array()),
        _nullable("cdcStats", {"type": "map", "values": "long"}),
        _nullable("prevBaseFile", "string"),
        _nullable("minEventTime", "long"),
        _nullable("maxEventTime", "long"),
        _nullable("runtimeStats", runtime),
        _nullable("totalLogFilesCompacted", "long"),
        _nullable("totalLogReadTimeMs", "long"),
        _nullable("totalLogSizeCompacted", "long"),
        _nullable("tempPath", "string"),
        _nullable("numUpdates", "long"),
    ]
    return {"type": "record", "name": "HoodieWriteStat", "namespace": NAMESPACE, "fields": fields}


def _commit_metadata(replace: bool) -> dict:
    fields = [
        _nullable("partitionToWriteStats", {"type": "map", "values": {"type": "array", "items": _write_stat()}}),
        _nullable("compacted", "boolean"),
        _nullable("extraMetadata", _string_map()),
        _version_field(),
        _nullable("operationType", "string"),
    ]
    if replace:
        fields.append(_nullable("partitionToReplaceFileIds", {"type": "map", "values": _string_array()}))
    name = "HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata"
    return {"type": "record", "name": name, "namespace": NAMESPACE, "fields": fields}


def _merge_archive_file_plan() -> dict:
    # HoodieMergeArchiveFilePlan.avsc (0.11+): the plan of a merge of small version 6 archive files.
    return {"type": "record", "name": "HoodieMergeArchiveFilePlan", "namespace": NAMESPACE,
            "fields": [_nullable("candidate", {"type": "array", "items": "string"}),
                       _nullable("mergedArchiveFileName", "string")]}


_BUILDERS = {
    "HoodieCompactionPlan": lambda ext: _compaction_plan(ext),
    "HoodieCleanerPlan": lambda ext: _cleaner_plan(),
    "HoodieCleanMetadata": lambda ext: _clean_metadata(),
    "HoodieRollbackPlan": lambda ext: _rollback_plan(),
    "HoodieRollbackMetadata": lambda ext: _rollback_metadata(),
    "HoodieRequestedReplaceMetadata": lambda ext: _requested_replace_metadata(),
    "HoodieSavepointMetadata": lambda ext: _savepoint_metadata(),
    "HoodieRestorePlan": lambda ext: _restore_plan(),
    "HoodieRestoreMetadata": lambda ext: _restore_metadata(),
    "HoodieCommitMetadata": lambda ext: _commit_metadata(False),
    "HoodieReplaceCommitMetadata": lambda ext: _commit_metadata(True),
    "HoodieMergeArchiveFilePlan": lambda ext: _merge_archive_file_plan(),
}

KINDS: tuple[str, ...] = tuple(_BUILDERS)


def avro_schema(kind: str, *, extensions: bool = True) -> dict:
    """The Avro schema (a fresh dict) of one timeline metadata kind, e.g. ``"HoodieCompactionPlan"``.

    With ``extensions=False`` the schema is Hudi's own, without our ``symlinkOperations`` field:
    that is what a stock Java reader resolves against.
    """
    try:
        builder = _BUILDERS[kind]
    except KeyError:
        raise ValueError(f"unknown Avro metadata kind {kind!r}; expected one of {', '.join(KINDS)}") from None
    return builder(extensions)
