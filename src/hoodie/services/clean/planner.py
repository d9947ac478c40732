"""Planning a clean: which file versions no query needs any more (policies and safety rules:
:mod:`hoodie.services.clean`), as a :class:`CleanPlan` (Hudi's ``HoodieCleanerPlan``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import FileSlice, FileSystemView, list_partitions
from hoodie.format.file_group.links import Link, all_links
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.active import Timeline
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.timeline.savepoints import completed_savepoints
from hoodie.services.clean.config import (
    KEEP_LATEST_BY_HOURS, KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, CleanConfig, CleanError, _config,
)
from hoodie.services.clean.pending import pending_operations

PARTITION_METAFILE = N.PARTITION_METAFILE

@dataclass
class CleanPlan:
    """What one clean removes. Paths are relative to the table base path."""

    policy: str
    earliest_instant_to_retain: Optional[Instant]
    last_completed_commit: str
    files_to_delete: dict[str, list[str]] = field(default_factory=dict)
    partitions_to_delete: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        """Whether the plan deletes nothing (no clean instant is written for it)."""
        return not any(self.files_to_delete.values()) and not self.partitions_to_delete

    @property
    def total_files(self) -> int:
        """Number of files the plan deletes."""
        return sum(len(v) for v in self.files_to_delete.values())

    def to_avro(self, storage: Storage) -> dict:
        """The ``HoodieCleanerPlan`` record (full paths, as Hudi writes them)."""
        ectr = None
        if self.earliest_instant_to_retain is not None:
            e = self.earliest_instant_to_retain
            ectr = (e.timestamp, e.action, "COMPLETED")
        return plans.cleaner_plan(
            ectr, self.last_completed_commit, self.policy,
            {p: [storage.uri(f) for f in files] for p, files in sorted(self.files_to_delete.items()) if files},
            sorted(self.partitions_to_delete),
        )

    @classmethod
    def from_avro(cls, record: Mapping[str, Any], storage: Storage) -> "CleanPlan":
        """Read a plan written by us or by Hudi (version 1 relative names or version 2 paths)."""
        e = record.get("earliestInstantToRetain")
        ectr = Instant(e["timestamp"], e.get("action") or I.COMMIT, State.COMPLETED) if e else None
        files: dict[str, list[str]] = {}
        for p, infos in (record.get("filePathsToBeDeletedPerPartition") or {}).items():
            files[p] = [_relativize(storage, i["filePath"]) for i in infos or [] if i.get("filePath")]
        for p, names in (record.get("filesToBeDeletedPerPartition") or {}).items():
            if p not in files:
                files[p] = [f"{p}/{n}" if p else n for n in names or []]
        return cls(
            policy=record.get("policy") or KEEP_LATEST_COMMITS,
            earliest_instant_to_retain=ectr,
            last_completed_commit=record.get("lastCompletedCommitTimestamp") or "",
            files_to_delete=files,
            partitions_to_delete=list(record.get("partitionsToBeDeleted") or []),
        )

    def to_json(self) -> dict:
        """A JSON-friendly summary."""
        e = self.earliest_instant_to_retain
        return {
            "policy": self.policy,
            "earliest_instant_to_retain": e.timestamp if e else None,
            "last_completed_commit": self.last_completed_commit,
            "files_to_delete": {p: list(v) for p, v in sorted(self.files_to_delete.items()) if v},
            "total_files": self.total_files,
            "partitions_to_delete": sorted(self.partitions_to_delete),
            "notes": list(self.notes),
        }


def _relativize(storage: Storage, path: str) -> str:
    """A plan path (``file:/...``, ``s3a://...``, absolute or relative) relative to the base path."""
    p = path
    if p.startswith("file://"):
        p = p[len("file://"):]
    elif p.startswith("file:"):
        p = p[len("file:"):]
    elif p.startswith("s3a://"):
        p = "s3://" + p[len("s3a://"):]
    base = storage.uri("").rstrip("/")
    if p.startswith(base + "/"):
        return p[len(base) + 1:]
    if "://" not in p and not p.startswith("/"):
        return p
    raise CleanError(f"clean plan path {path} is outside the table at {base}; the plan belongs to "
                     "another table (or the table was moved): delete the pending clean instant files")


def _ectr(tl: Timeline, cfg: CleanConfig, now_instant: str, tz: str) -> Optional[Instant]:
    """Earliest commit to retain (``CleanerUtils.getEarliestCommitToRetain``), capped so that it
    never passes the earliest pending instant of the commits timeline."""
    commits = tl.commits()
    completed = commits.completed().instants
    if not completed:
        return None
    ectr: Optional[Instant] = None
    if cfg.policy == KEEP_LATEST_COMMITS:
        if len(completed) <= cfg.commits_retained:
            return None
        ectr = completed[len(completed) - cfg.commits_retained]
    elif cfg.policy == KEEP_LATEST_BY_HOURS:
        cutoff_ms = I.instant_to_epoch_ms(now_instant, tz) - cfg.hours_retained * 3_600_000
        cutoff = I.epoch_ms_to_instant(cutoff_ms, tz)
        inside = [c for c in completed if I.fix_instant_compatibility(c.timestamp) >= cutoff]
        # No commit inside the window: the state after the newest commit is all queries need.
        ectr = inside[0] if inside else completed[-1]
    else:
        return None
    pending = commits.pending().first()
    if pending is not None and ectr.timestamp > pending.timestamp:
        before = [c for c in completed if c.timestamp < pending.timestamp]
        ectr = before[-1] if before else None
    return ectr


def _savepointed_files(tl: Timeline) -> set[str]:
    """Every file a completed savepoint holds. A savepoint whose metadata cannot be read holds
    files nobody can name: the clean is refused rather than risk deleting them."""
    out: set[str] = set()
    for sp in completed_savepoints(tl):
        if sp.damaged is not None:
            raise CleanError(
                f"cannot clean: savepoint {sp.instant} cannot be read ({sp.damaged}), so the files it holds are "
                f"unknown and any of them could be deleted. Delete the savepoint (CALL delete_savepoint(instant_time "
                f"=> '{sp.instant}')) or restore its file from a backup, then clean")
        out.update(sp.files)
    return out


def _slice_files(sl: FileSlice) -> list[str]:
    out = [sl.base_file.path] if sl.base_file else []
    out += [lf.path for lf in sl.log_files]
    return out


def _slice_savepointed(sl: FileSlice, savepointed: set[str]) -> bool:
    if sl.base_file and sl.base_file.name in savepointed:
        return True
    return any(lf.name in savepointed for lf in sl.log_files)


class _Planner:
    """Builds a clean plan from one timeline snapshot and one listing per partition."""

    def __init__(self, table: HoodieTable, cfg: CleanConfig, now_instant: str) -> None:
        self.table = table
        self.cfg = cfg
        self.tl = table.timeline
        self.storage = table.storage
        self.view = FileSystemView(self.storage, self.tl)
        self.ectr = _ectr(self.tl, cfg, now_instant, table.timeline_timezone)
        completed = self.tl.completed()
        self.visible = {i.timestamp for i in completed.instants
                        if i.action in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT)}
        self.visible |= {i.timestamp for i in self.tl.pending_compactions().instants}
        first = self.tl.first()
        self.timeline_start = first.timestamp if first else None
        self.pending = pending_operations(table)
        self.savepointed = _savepointed_files(self.tl)
        self.savepoint_kept: list[str] = []  # files a policy would delete that savepoints keep
        self.links = all_links(self.tl)
        # (partition, fileId) -> instant of the first completed replacecommit that replaced it.
        self.replaced: dict[tuple[str, str], str] = {}
        for inst in completed.by_actions(I.REPLACE_COMMIT).instants:
            meta = self.tl.commit_metadata(inst)
            for p, fids in (meta.partition_to_replace_file_ids or {}).items():
                for fid in fids:
                    self.replaced.setdefault((p, fid), inst.timestamp)
        self.notes: list[str] = []

    def committed(self, base_instant: str) -> bool:
        if base_instant in self.visible:
            return True
        return self.timeline_start is not None and base_instant < self.timeline_start

    def plan(self) -> CleanPlan:
        last = self.tl.commits().completed().last()
        plan = CleanPlan(self.cfg.policy, self.ectr, last.timestamp if last else "", notes=self.notes)
        if self.cfg.policy != KEEP_LATEST_FILE_VERSIONS and self.ectr is None:
            self.notes.append("nothing to clean: not enough completed commits to pass the retention "
                              "window (or the earliest pending instant is the oldest commit)")
            return plan
        partitioned = self.table.is_partitioned
        for p in list_partitions(self.storage):
            files, deletable = self._partition(p)
            if files:
                plan.files_to_delete[p] = files
            if partitioned and p and deletable:
                plan.partitions_to_delete.append(p)
        self._protect_link_targets(plan)
        if self.savepoint_kept:
            sps = ", ".join(sp.instant for sp in completed_savepoints(self.tl))
            self.notes.append(f"kept {len(self.savepoint_kept)} file(s) of savepointed file slices (savepoint(s) "
                              f"{sps}); they go once the savepoint is deleted")
        return plan

    def _partition(self, partition: str) -> tuple[list[str], bool]:
        """(files to delete, whether the partition is left empty and may be removed)."""
        groups = self.view.file_groups(partition)
        delete: list[str] = []
        live_groups = 0
        leftovers = False  # files that stay (uncommitted, protected or retained)
        policy = self.cfg.policy
        for fid, fg in sorted(groups.items()):
            key = (partition, fid)
            ordered = fg.ordered_slices()
            committed = [s for s in ordered if self.committed(s.base_instant)]
            if len(committed) != len(ordered):
                leftovers = True  # files of running or failed writes: rollback's business
            if not committed:
                continue
            in_service = key in self.pending.file_groups
            replaced_at = self.replaced.get(key)
            if replaced_at is not None:
                eligible = policy == KEEP_LATEST_FILE_VERSIONS or (
                    self.ectr is not None and replaced_at < self.ectr.timestamp)
                if not eligible or in_service:
                    leftovers = True
                    continue
                for sl in committed:
                    if _slice_savepointed(sl, self.savepointed):
                        self.savepoint_kept += _slice_files(sl)
                        leftovers = True
                        continue
                    delete += _slice_files(sl)
                continue
            live_groups += 1
            if in_service and key not in self.pending.compaction_base:
                continue  # pending clustering reads this group: leave every slice
            need_from = self.pending.compaction_base.get(key)
            if policy == KEEP_LATEST_FILE_VERSIONS:
                delete += self._versions(committed, need_from)
            else:
                delete += self._commits(committed, need_from)
        if live_groups or leftovers:
            return delete, False
        return delete, self._only_metafile_left(partition, delete)

    def _versions(self, committed: list[FileSlice], need_from: Optional[str]) -> list[str]:
        keep = self.cfg.file_versions_retained
        candidates = committed
        if need_from is not None:
            # The pending compaction keeps its slices; they count as one retained version.
            candidates = [s for s in committed if s.base_instant < need_from]
            keep -= 1
        out: list[str] = []
        for sl in candidates[max(0, keep):]:
            if _slice_savepointed(sl, self.savepointed):
                self.savepoint_kept += _slice_files(sl)
                continue
            out += _slice_files(sl)
        return out

    def _commits(self, committed: list[FileSlice], need_from: Optional[str]) -> list[str]:
        assert self.ectr is not None
        ectr = self.ectr.timestamp
        latest = committed[0].base_instant
        before = next((s.base_instant for s in committed if s.base_instant < ectr), None)
        out: list[str] = []
        for sl in committed:
            b = sl.base_instant
            if b == latest or b == before or b >= ectr:
                continue
            if need_from is not None and b >= need_from:
                continue
            if _slice_savepointed(sl, self.savepointed):
                self.savepoint_kept += _slice_files(sl)
                continue
            out += _slice_files(sl)
        return out

    def _only_metafile_left(self, partition: str, delete: list[str]) -> bool:
        if self.pending.reasons(partition):
            return False
        doomed = set(delete)
        checksums: list[str] = []
        for st in self.storage.list_dir(partition):
            if st.is_dir:
                return False  # a nested folder (another partition level or foreign data)
            if st.name == PARTITION_METAFILE or st.path in doomed:
                continue
            companion = _crc_companion(st.name)
            if companion == PARTITION_METAFILE:
                checksums.append(st.path)  # goes only with the partition (the metafile stays otherwise)
                continue
            if companion is not None and f"{partition}/{companion}" in doomed:
                delete.append(st.path)  # Hadoop checksum file of a file that goes
                continue
            self.notes.append(f"partition {partition} is kept: {st.name} is not part of any "
                              "cleanable file group")
            return False
        delete.extend(checksums)
        return True

    def _protect_link_targets(self, plan: CleanPlan) -> None:
        doomed = {f for files in plan.files_to_delete.values() for f in files}
        # A link recorded by a compaction goes with the slice it belongs to.
        for link in self.links:
            lp = link.link_path
            if lp in doomed or not self.storage.exists(lp):
                continue
            slice_doomed = self._slice_of_link_doomed(link, doomed)
            if slice_doomed:
                plan.files_to_delete.setdefault(link.partition, []).append(lp)
                doomed.add(lp)
        # Until nothing changes: a kept target may itself be a link (a chain left by a partial
        # compaction of an earlier version), whose own target must then stay too.
        changed = True
        while changed:
            changed = False
            for link in self.links:
                if link.link_path in doomed:
                    continue
                if link.mode != "symlink" and not self.storage.is_symlink(link.link_path):
                    continue  # a copy does not need its source
                if link.target_path in doomed and self.storage.is_symlink(link.link_path):
                    plan.files_to_delete[link.partition].remove(link.target_path)
                    doomed.discard(link.target_path)
                    changed = True
                    if link.partition in plan.partitions_to_delete:
                        plan.partitions_to_delete.remove(link.partition)
                    self.notes.append(f"kept {link.target_path}: the live link {link.link_path} targets it")
        for p in list(plan.files_to_delete):
            if not plan.files_to_delete[p]:
                del plan.files_to_delete[p]

    @staticmethod
    def _slice_of_link_doomed(link: Link, doomed: set[str]) -> bool:
        try:
            lp = N.parse_log_file(link.link)
        except ValueError:
            return False
        prefix = f"{link.partition}/" if link.partition else ""
        for f in doomed:
            name = f[len(prefix):] if f.startswith(prefix) else None
            if not name or "/" in name:
                continue
            if N.is_base_file(name):
                b = N.parse_base_file(name)
                if b.file_id == lp.file_id and b.instant == lp.base_instant:
                    return True
            elif N.is_log_file(name):
                o = N.parse_log_file(name)
                if o.file_id == lp.file_id and o.base_instant == lp.base_instant:
                    return True
        return False


def _crc_companion(name: str) -> Optional[str]:
    if name.startswith(".") and name.endswith(".crc"):
        return name[1:-4]
    return None


def plan_clean(table: HoodieTable, config: Optional[Mapping[str, Any] | CleanConfig] = None,
               now_instant: Optional[str] = None) -> CleanPlan:
    """Plan a clean of ``table`` (nothing is written). ``now_instant`` (default: a fresh instant)
    anchors the KEEP_LATEST_BY_HOURS window."""
    cfg = _config(config)
    now = now_instant or table.new_instant_time()
    return _Planner(table, cfg, now).plan()
