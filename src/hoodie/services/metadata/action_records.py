"""The ``files`` records a completed data-table action adds to the metadata table.

``HoodieTableMetadataUtil.convertMetadataToRecords`` (Hudi 0.14/0.15), reference
``metadata-table.md`` §5, with two deliberate choices where Java's records would leave the listing
different from storage:

* commit, deltacommit, replacecommit and compaction: the partitions written, and per partition the
  names and sizes of the files in the write stats (the larger size when a file appears twice).
  Replaced files stay listed (the cleaner removes them). A partial compaction's links and split
  files are files too (hoodie records them in ``extraMetadata``, not in write stats): they are added
  with their sizes on storage, since readers must see them;
* clean: the deleted names as tombstones; partitions the clean deleted as partition tombstones;
* rollback: tombstones for every file the rollback deleted, and the log files it appended to (or
  left in place) with their sizes. Java 0.14 adds only the latter and relies on rolling back the
  failed instant's metadata deltacommit; hoodie does both, so a rollback of an instant whose entries
  were already compacted into the metadata base file still removes its files.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable, Mapping

from hoodie.format.file_group import links as LK
from hoodie.format.metadata.records import FilesRecord
from hoodie.format.metadata.encoding import file_list_record, partition_list_record
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.plans import read_avro_metadata

# extraMetadata key of a partial compaction's split files (hoodie.services.compaction.keys).
SPLIT_FILES_KEY = "hoodie.compaction.split.files"

SizeOf = Callable[[str], int]  # a path relative to the base path -> its size on storage


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _merge_add(acc: dict[str, dict[str, int]], partition: str, name: str, size: int) -> None:
    files = acc.setdefault(partition, {})
    files[name] = max(files.get(name, 0), int(size))


def _records(added: Mapping[str, Mapping[str, int]], deleted: Mapping[str, Iterable[str]],
             partitions_added: Iterable[str], partitions_deleted: Iterable[str] = ()) -> list[FilesRecord]:
    out = [partition_list_record(partitions_added, partitions_deleted)]
    for p in sorted(set(added) | set(deleted)):
        out.append(file_list_record(p, added.get(p, {}), deleted.get(p, ())))
    return out


def commit_records(meta: CommitMetadata, size_of: SizeOf) -> list[FilesRecord]:
    """Records of a completed commit, deltacommit, replacecommit or compaction commit.

    ``size_of`` gives the size on storage of files the write stats do not size (links, split files,
    a stat with size 0).
    """
    added: dict[str, dict[str, int]] = {}
    for partition, stats in meta.partition_to_write_stats.items():
        added.setdefault(partition, {})
        for s in stats:
            if not s.path:
                continue
            part = s.partition_path if s.partition_path is not None else partition
            size = s.file_size_in_bytes or size_of(s.path)
            _merge_add(added, part, _name(s.path), size)
    for link in LK.links_from_metadata(meta):
        _merge_add(added, link.partition, link.link, size_of(link.link_path))
    raw_split = meta.extra_metadata.get(SPLIT_FILES_KEY)
    if raw_split:
        for sf in json.loads(raw_split):
            path = sf["path"]
            _merge_add(added, sf.get("partition") or "", _name(path), size_of(path))
    return _records(added, {}, added)


def clean_records(clean: Mapping) -> list[FilesRecord]:
    """Records of a completed clean (its ``HoodieCleanMetadata``)."""
    deleted: dict[str, list[str]] = {}
    gone: list[str] = []
    for partition, pm in (clean.get("partitionMetadata") or {}).items():
        part = pm.get("partitionPath", partition) or ""
        names = [_name(p) for p in (pm.get("deletePathPatterns") or [])]
        names += [_name(p) for p in (pm.get("successDeleteFiles") or []) if _name(p) not in names]
        deleted[part] = names
        if pm.get("isPartitionDeleted"):
            gone.append(part)
    return _records({}, deleted, (), gone)


def rollback_records(rollback: Mapping, size_of: SizeOf) -> list[FilesRecord]:
    """Records of a completed rollback (its ``HoodieRollbackMetadata``)."""
    added: dict[str, dict[str, int]] = {}
    deleted: dict[str, list[str]] = {}
    for partition, pm in (rollback.get("partitionMetadata") or {}).items():
        part = pm.get("partitionPath", partition) or ""
        gone = [_name(p) for p in (pm.get("successDeleteFiles") or [])]
        deleted[part] = gone
        for field in ("rollbackLogFiles", "logFilesFromFailedCommit"):
            for path, size in (pm.get(field) or {}).items():
                name = _name(path)
                if name in gone:
                    continue
                rel = f"{part}/{name}" if part else name
                _merge_add(added, part, name, int(size) if int(size) > 0 else size_of(rel))
    # Only partitions that keep files are (re)listed; a rollback never creates a partition.
    return _records(added, deleted, [p for p, files in added.items() if files])


def restore_records(restore: Mapping, size_of: SizeOf) -> list[FilesRecord]:
    """The records of a completed restore: those of every rollback it made (``HoodieRestoreMetadata``)."""
    out: list[FilesRecord] = []
    for rms in (restore.get("hoodieRestoreMetadata") or {}).values():
        for rm in rms or []:
            if rm:
                out += rollback_records(rm, size_of)
    return out


def action_records(action: str, content: bytes, size_of: SizeOf) -> list[FilesRecord]:
    """The records of a completed data-table instant of ``action`` whose completed file holds ``content``.

    Raises:
        ValueError: an action the metadata table does not record (savepoint, indexing...), or
            unreadable content.
    """
    if action in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT):
        return commit_records(CommitMetadata.from_json_bytes(content), size_of)
    if action == I.CLEAN:
        return clean_records(read_avro_metadata(content))
    if action == I.ROLLBACK:
        return rollback_records(read_avro_metadata(content), size_of)
    if action == I.RESTORE:
        return restore_records(read_avro_metadata(content), size_of)
    raise ValueError(f"hoodie does not record {action} instants in the metadata table")


__all__ = ["commit_records", "clean_records", "rollback_records", "restore_records", "action_records", "SizeOf"]
