"""Merging small archive files of a version 6 table (``hoodie.archive.merge.*``), as Hudi 0.14/0.15's
``HoodieTimelineArchiver`` does.

Every archival writes one archive file (``.hoodie/archived/.commits_.archive.<N>_1-0-1``), so a table
that lives for years accumulates thousands of them, and every reader of the archived timeline lists
and reads them all. With ``hoodie.archive.merge.enable=true``, archival (after writing its own file,
under the table lock) merges them:

* **Candidates** (``getMergeCandidates``): the archive files sorted by version, newest first
  (``ArchiveFileVersionComparator``); candidates are the newest files up to, not including, the first
  one larger than ``hoodie.archive.merge.small.file.limit.bytes``. Older small files behind a large one
  are never merged: merging only a run of consecutive newest files keeps the archive files' order,
  which readers filtering by time rely on.
* **When**: at least ``hoodie.archive.merge.files.batch.size`` candidates; then *all* candidates are
  merged (the batch size is a threshold, not a cap).
* **Steps** (``mergeArchiveFilesIfNecessary``): 1. write the plan ``.hoodie/archived/mergeArchivePlan``
  (``HoodieMergeArchiveFilePlan``: the candidates' paths and the merged file's name, the next archive
  file version); 2. write the merged file: the candidates' records, newest file first, in blocks of at
  least ``hoodie.commits.archival.batch`` records; 3. delete the candidates; 4. delete the plan.
* **Recovery** (``verifyLastMergeArchiveFilesIfNecessary``), at the start of the next archival, when a
  plan is there: a plan that does not parse was being written (nothing else happened): it is deleted.
  If every candidate still exists, the merge is reverted (the merged file, complete or not, is
  deleted); otherwise the merged file was complete when deletion started, so the remaining candidates
  are deleted. Then the plan is deleted.

Readers (:meth:`hoodie.format.timeline.archive_v1.ArchivedTimelineV1.load`) ignore the plan file, keep
one entry per (instant, action, state) when a merge left an instant in two files, and skip a merged
file that does not decode while the plan names it: at every point of a crash, every archived instant
reads exactly once.

One deliberate difference from Java: Java recovers only while merging is enabled; hoodie recovers
whenever a plan is left, whatever the setting. Otherwise, after merging is switched off, a plan whose
merged file was never written would name the *next* archive file that archival writes, and switching
merging back on would delete that file (and the instants in it) as a half-written merge.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional, Sequence

from hoodie.faults import fault_point
from hoodie.format.storage import Storage
from hoodie.format.timeline import archive_v1 as A1

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArchiveFile:
    """One archive file as listed: its version, name and size in bytes."""

    version: int
    name: str
    size: int


@dataclass
class MergeResult:
    """What one merge did: the candidates merged (newest first) and the merged file (relative path)."""

    candidates: list[str] = field(default_factory=list)
    merged_file: Optional[str] = None
    entries: int = 0


def list_archive_files(storage: Storage, folder: str = A1.ARCHIVE_FOLDER) -> list[ArchiveFile]:
    """The archive files of ``folder``, newest (highest version) first, as ``ArchiveFileVersionComparator``
    sorts them."""
    out = []
    for s in storage.list_dir(folder):
        v = A1.archive_file_version(s.name) if not s.is_dir else None
        if v is not None:
            out.append(ArchiveFile(v, s.name, int(s.size)))
    return sorted(out, key=lambda f: f.version, reverse=True)


def merge_candidates(files_newest_first: Sequence[ArchiveFile], small_file_limit_bytes: int) -> list[ArchiveFile]:
    """``getMergeCandidates``: the newest files up to, not including, the first one larger than the limit."""
    out = []
    for f in files_newest_first:
        if f.size > small_file_limit_bytes:
            break
        out.append(f)
    return out


@dataclass
class MergeDecision:
    """What merging would do with a listing of archive files: the candidates (newest first) and the merged
    file's name when at least the batch size of them are small, else why not (``reason``)."""

    candidates: list[ArchiveFile]
    merged_name: Optional[str]
    reason: Optional[str] = None


def decide_merge(files_newest_first: Sequence[ArchiveFile], *, batch_size: int,
                 small_file_limit_bytes: int) -> MergeDecision:
    """Java's rule (the module docstring's *Candidates* and *When*) on a listing, newest first."""
    candidates = merge_candidates(files_newest_first, small_file_limit_bytes)
    if len(candidates) < batch_size:
        stop = files_newest_first[len(candidates)] if len(candidates) < len(files_newest_first) else None
        why = (f"{len(candidates)} small archive file(s), fewer than hoodie.archive.merge.files.batch.size="
               f"{batch_size}")
        if stop is not None:
            why += (f" (the newer files up to {stop.name}, {stop.size} bytes, over "
                    f"hoodie.archive.merge.small.file.limit.bytes={small_file_limit_bytes})")
        return MergeDecision(candidates, None, why)
    return MergeDecision(candidates, A1.archive_file_name(files_newest_first[0].version + 1))


def recovery_preview(storage: Storage, folder: str = A1.ARCHIVE_FOLDER) -> tuple[Optional[str], set[str]]:
    """What :func:`recover_merge` would do now, without doing it: (``"reverted"``, ``"completed"``,
    ``"plan removed"`` or None) and the names of the archive files it would delete."""
    plan_rel = f"{folder}/{A1.MERGE_PLAN_NAME}"
    if not storage.exists(plan_rel):
        return None, set()
    try:
        plan = A1.decode_merge_plan(storage.read_bytes(plan_rel))
    except ValueError:
        return "plan removed", set()
    names = plan.candidate_names()
    if all(storage.exists(f"{folder}/{n}") for n in names):
        return "reverted", {plan.merged_file_name}
    if storage.exists(f"{folder}/{plan.merged_file_name}"):
        return "completed", set(names)
    return "completed", set()


def _delete_candidates(storage: Storage, folder: str, names: Sequence[str]) -> None:
    for name in names:
        storage.delete(f"{folder}/{name}")  # a file already gone is no error (Java checks exists first)
        fault_point("archive.merge.while_deleting")


def recover_merge(storage: Storage, folder: str = A1.ARCHIVE_FOLDER) -> Optional[str]:
    """Revert or complete a merge a crash interrupted (the module docstring's recovery). Returns what was
    done (``"reverted"``, ``"completed"``, ``"plan removed"``) or None when there was no plan."""
    plan_rel = f"{folder}/{A1.MERGE_PLAN_NAME}"
    if not storage.exists(plan_rel):
        return None
    try:
        plan = A1.decode_merge_plan(storage.read_bytes(plan_rel))
    except ValueError as e:
        # The crash came while the plan was written: no merged file was started, no candidate deleted.
        log.warning("archival: %s does not parse (%s); removing it (the merge it began never started)",
                    storage.uri(plan_rel), e)
        storage.delete(plan_rel)
        return "plan removed"
    merged = f"{folder}/{plan.merged_file_name}"
    names = plan.candidate_names()
    if all(storage.exists(f"{folder}/{n}") for n in names):
        # Interrupted before any candidate was deleted: the merged file, if any, may be partial. Revert.
        storage.delete(merged)
        done = "reverted"
    else:
        # Deletion had started, so the merged file was complete: finish the deletion.
        if storage.exists(merged):
            _delete_candidates(storage, folder, names)
        done = "completed"
    storage.delete(plan_rel)
    log.info("archival: %s the interrupted merge of %d archive file(s) into %s", done, len(names),
             plan.merged_file_name)
    return done


def merge_archive_files_if_necessary(storage: Storage, *, batch_size: int, small_file_limit_bytes: int,
                                     records_per_block: int, folder: str = A1.ARCHIVE_FOLDER) -> Optional[MergeResult]:
    """Merge the small archive files of ``folder`` when there are at least ``batch_size`` candidates (the
    module docstring's steps). Returns what was merged, or None. The caller holds the table lock."""
    decision = decide_merge(list_archive_files(storage, folder), batch_size=batch_size,
                            small_file_limit_bytes=small_file_limit_bytes)
    return run_merge(storage, decision, records_per_block=records_per_block, folder=folder)


def run_merge(storage: Storage, decision: MergeDecision, *, records_per_block: int,
              folder: str = A1.ARCHIVE_FOLDER, remember: bool = False) -> Optional[MergeResult]:
    """Carry out a :func:`decide_merge` decision (the module docstring's steps); None when it merges nothing.
    ``remember``: the caller knows no archive file holds an instant still in the active timeline (its archival
    checked the newest file and deleted what it held): the merged file is remembered as such
    (:func:`merged_here`). The caller holds the table lock."""
    if decision.merged_name is None:
        return None
    candidates = decision.candidates
    merged_name = decision.merged_name
    merged_rel = f"{folder}/{merged_name}"
    plan_rel = f"{folder}/{A1.MERGE_PLAN_NAME}"
    storage.create_new(plan_rel, A1.encode_merge_plan([storage.uri(f"{folder}/{c.name}") for c in candidates],
                                                       merged_name))
    fault_point("archive.merge.after_plan")
    blocks: list[bytes] = []
    pending: list[dict] = []
    pending_schema: Optional[str] = None
    total = 0

    def flush() -> None:
        nonlocal pending
        if pending:
            blocks.append(A1.encode_archive_block(pending, pending_schema))
            pending = []

    # Java reads the candidates newest first and writes a block once at least hoodie.commits.archival.batch
    # records have gathered. Records keep the writer schema they were read with (a block is flushed early
    # when the next one has another schema), so that entries Java wrote lose no field. A block that already
    # holds a full batch (every block but the last of an earlier merged file) is copied as it is, after what
    # is pending: the same records in the same order, without decoding and re-encoding the growing merged
    # file at every merge (0.4 s for 12.5 MB).
    for c in candidates:
        for block, schema_json, count in A1.archive_data_blocks(storage, f"{folder}/{c.name}"):
            if count >= records_per_block:
                flush()
                blocks.append(A1.block_bytes(block))
                total += count
                continue
            records = A1.decode_archive_block(storage, block, schema_json)
            if pending and schema_json != pending_schema:
                flush()
            pending_schema = schema_json
            pending.extend(records)
            total += len(records)
            if len(pending) >= records_per_block:
                flush()
    flush()
    data = b"".join(blocks)
    storage.create_new(merged_rel, data)
    fault_point("archive.merge.after_merged_file")
    _delete_candidates(storage, folder, [c.name for c in candidates])
    storage.delete(plan_rel)
    if remember:
        _remember_merged(storage.uri(merged_rel), len(data))
    log.info("archival: merged %d small archive file(s) (%d entries) into %s", len(candidates), total, merged_name)
    return MergeResult([c.name for c in candidates], merged_rel, total)


# Merged files this process completed (uri -> size) after an archival that left no active instant in the archive
# (it read the newest file, where a crashed run leaves them, and deleted them): such a merged file holds none, so
# the next archival, which reads the newest archive file for a crashed run's instants, can skip reading it (up to
# 20 MiB, every record decoded). Only files this process merged and saw complete are here; any other is read.
_MERGED_HERE: "dict[str, int]" = {}


def _remember_merged(uri: str, size: int) -> None:
    _MERGED_HERE[uri] = size
    while len(_MERGED_HERE) > 64:
        _MERGED_HERE.pop(next(iter(_MERGED_HERE)))


def merged_here(storage: Storage, rel: str, size: int) -> bool:
    """Whether ``rel`` is a merged archive file this process completed (same size) when no archive file held an
    instant of the active timeline, which therefore holds none."""
    return _MERGED_HERE.get(storage.uri(rel)) == size


__all__ = ["ArchiveFile", "MergeDecision", "MergeResult", "decide_merge", "list_archive_files", "merge_candidates",
           "merged_here", "recover_merge", "recovery_preview", "run_merge",
           "merge_archive_files_if_necessary"]
