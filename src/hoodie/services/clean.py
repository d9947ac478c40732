"""The cleaner: remove file versions no query needs any more, the way Hudi 0.14/0.15 does it.

Pure Python, no Spark. A clean is planned from the timeline and a listing of the table, written as
``<t>.clean.requested`` (Avro ``HoodieCleanerPlan`` version 2), moved to ``<t>.clean.inflight`` (the
same plan), executed (files deleted, empty partitions removed) and completed as ``<t>.clean`` (Avro
``HoodieCleanMetadata``). References: ``table-services-upstream.md`` §1.6, ``hudi-v6-format.md``
§3.2/§3.4/§3.8.6, Hudi's ``CleanPlanner``/``CleanActionExecutor``.

Policies (``hoodie.cleaner.policy``):

* ``KEEP_LATEST_COMMITS`` (default, ``hoodie.cleaner.commits.retained`` = 10): the earliest commit to
  retain (ECTR) is the ``retained``-th newest completed commit. Every slice based at or after ECTR
  stays, plus, per file group, the newest slice before ECTR (a query as of any instant >= ECTR reads
  it) and the latest slice.
* ``KEEP_LATEST_BY_HOURS`` (``hoodie.cleaner.hours.retained`` = 24): ECTR is the first completed
  commit inside the window; the same retention rules apply.
* ``KEEP_LATEST_FILE_VERSIONS`` (``hoodie.cleaner.fileversions.retained`` = 3): the newest N slices
  of every file group stay.

Safety rules, whatever the policy:

* ECTR never passes the earliest pending instant of the commits timeline, so a running write (or a
  pending compaction/clustering) still finds every slice it started from.
* Slices whose base instant is not committed (files of running or failed writes) are never touched;
  rollback owns them.
* A slice a pending compaction or log compaction needs (base instant >= the operation's base
  instant) stays, and so does every file group in a pending clustering plan.
* Savepointed slices stay.
* Replaced file groups (completed replacecommits) are removed entirely once the replacecommit is
  before ECTR, or at once under KEEP_LATEST_FILE_VERSIONS.
* A log file that a live partial-compaction *symlink* targets is never deleted (``hoodie.format.file_group.links``);
  links and copies go with the slice they belong to.
* A partition folder is deleted only when, after the clean, nothing but ``.hoodie_partition_metadata``
  would remain in it (no live file group, no uncommitted file, no pending write touching it).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.errors import HoodieError
from hoodie.configs import define, warn_unknown_keys
from hoodie.faults import fault_point
from hoodie.metrics import publish
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie.format.file_group.fsview import FileSlice, FileSystemView, list_partitions
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.file_group.links import Link, all_links
from hoodie.format.storage import Storage
from hoodie.format.slice.writer import marker_files
from hoodie.format.table import HoodieTable, write_partition_metadata
from hoodie.format.timeline.active import Timeline
from hoodie.services.delete_partition import is_delete_partition
from hoodie.services.transaction import Operation, Transaction
from hoodie.services.transaction import refuse_metadata_table as _refuse_metadata_table

log = logging.getLogger(__name__)

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)

POLICY_KEY = "hoodie.cleaner.policy"
COMMITS_RETAINED_KEY = "hoodie.cleaner.commits.retained"
FILE_VERSIONS_RETAINED_KEY = "hoodie.cleaner.fileversions.retained"
HOURS_RETAINED_KEY = "hoodie.cleaner.hours.retained"
AUTOMATIC_KEY = "hoodie.clean.automatic"
MAX_COMMITS_KEY = "hoodie.clean.max.commits"

_GROUP = "clean"
define(POLICY_KEY, KEEP_LATEST_COMMITS,
       "Cleaning policy: KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS.",
       _GROUP, aliases=("hoodie.clean.policy",))
define(COMMITS_RETAINED_KEY, "10",
       "KEEP_LATEST_COMMITS: number of newest commits whose file versions stay queryable.",
       _GROUP, aliases=("hoodie.clean.commits.retained",))
define(FILE_VERSIONS_RETAINED_KEY, "3",
       "KEEP_LATEST_FILE_VERSIONS: number of newest file slices kept per file group.",
       _GROUP, aliases=("hoodie.clean.fileversions.retained",))
define(HOURS_RETAINED_KEY, "24",
       "KEEP_LATEST_BY_HOURS: file versions needed by queries over the last N hours stay.",
       _GROUP, aliases=("hoodie.clean.hours.retained",))
define(AUTOMATIC_KEY, "true", "Run the cleaner after each commit (maybe_clean_after_commit).", _GROUP)
define(MAX_COMMITS_KEY, "1",
       "Automatic clean runs once at least this many commits completed since the last clean.", _GROUP)

PARTITION_METAFILE = N.PARTITION_METAFILE
# The partitions a TTL delete_partition replacecommit removes, recorded in its inflight file so
# that pending-operation checks know what a pending TTL instant touches (readers ignore the key).
TTL_PARTITIONS_KEY = "hoodie.partition.ttl.partitions"


class CleanError(HoodieError):
    """A clean cannot be planned or executed; the message says why and what to do."""


# -- config ------------------------------------------------------------------------------------

def _get(options: Mapping[str, Any], key: str, *aliases: str) -> Optional[str]:
    for k in (key, *aliases):
        v = options.get(k)
        if v is not None and str(v).strip() != "":
            return str(v).strip()
    return None


def _int(options: Mapping[str, Any], key: str, default: int, minimum: int, *aliases: str) -> int:
    raw = _get(options, key, *aliases)
    if raw is None:
        return default
    try:
        v = int(raw)
    except ValueError:
        raise CleanError(f"{key}={raw!r} is not an integer") from None
    if v < minimum:
        raise CleanError(f"{key}={v} must be at least {minimum}")
    return v


def _bool(options: Mapping[str, Any], key: str, default: bool) -> bool:
    raw = _get(options, key)
    if raw is None:
        return default
    if raw.lower() not in ("true", "false"):
        raise CleanError(f"{key}={raw!r}: use true or false")
    return raw.lower() == "true"


@dataclass(frozen=True)
class CleanConfig:
    """Cleaner settings, parsed from Hudi's keys (``hoodie.cleaner.*``, ``hoodie.clean.*``)."""

    policy: str = KEEP_LATEST_COMMITS
    commits_retained: int = 10
    file_versions_retained: int = 3
    hours_retained: int = 24
    automatic: bool = True
    max_commits: int = 1
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None) -> "CleanConfig":
        """Parse options; errors name the key and the accepted values."""
        o = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
        policy = (_get(o, POLICY_KEY, "hoodie.clean.policy") or KEEP_LATEST_COMMITS).upper()
        if policy not in POLICIES:
            raise CleanError(f"{POLICY_KEY}={policy!r} is not a cleaning policy; use one of {', '.join(POLICIES)}")
        return cls(
            policy=policy,
            commits_retained=_int(o, COMMITS_RETAINED_KEY, 10, 1, "hoodie.clean.commits.retained"),
            file_versions_retained=_int(o, FILE_VERSIONS_RETAINED_KEY, 3, 1, "hoodie.clean.fileversions.retained"),
            # 0 hours is allowed: only the state after the newest commit must stay readable.
            hours_retained=_int(o, HOURS_RETAINED_KEY, 24, 0, "hoodie.clean.hours.retained"),
            automatic=_bool(o, AUTOMATIC_KEY, True),
            max_commits=_int(o, MAX_COMMITS_KEY, 1, 1),
            options=o,
        )


def _config(config: Optional[Mapping[str, Any] | CleanConfig]) -> CleanConfig:
    return config if isinstance(config, CleanConfig) else CleanConfig.from_options(config)


# -- pending operations (shared with the TTL service) ------------------------------------------

@dataclass
class PendingOperations:
    """What the pending instants of a table touch.

    ``write_partitions`` maps a partition to the pending writes (commit, deltacommit, non-clustering
    replacecommit) that touch it, found from their inflight metadata and markers. ``unknown_writes``
    are pending writes whose partitions cannot be known yet (requested only, no markers; a pending
    delete_partition, labelled ``delete_partition <instant>``, never names them, as in Hudi).
    ``service_partitions`` maps a partition to pending compaction / log compaction / clustering
    instants; ``file_groups`` maps (partition, fileId) to the pending table service holding it and
    ``compaction_base`` to the smallest base instant a pending (log) compaction operation reads.
    """

    write_partitions: dict[str, list[str]] = field(default_factory=dict)
    unknown_writes: list[str] = field(default_factory=list)
    service_partitions: dict[str, list[str]] = field(default_factory=dict)
    file_groups: dict[tuple[str, str], str] = field(default_factory=dict)
    compaction_base: dict[tuple[str, str], str] = field(default_factory=dict)

    def reasons(self, partition: str) -> list[str]:
        """Why a table service must leave ``partition`` alone now (empty: it may proceed)."""
        out = [f"pending write {w} touches it" for w in self.write_partitions.get(partition, [])]
        out += [f"pending {s}" for s in self.service_partitions.get(partition, [])]
        out += [f"pending {w} does not name its partitions; let it finish or roll it back (hoodie rollback)"
                if w.startswith("delete_partition ") else
                f"pending write {w} has not recorded its partitions yet (no markers); "
                "let it finish or roll it back (hoodie rollback)" for w in self.unknown_writes]
        return out


def _requested_avro(tl: Timeline, inst: Instant) -> Optional[dict]:
    try:
        data = tl.read_file(inst.requested_file_name)
    except FileNotFoundError:
        return None
    if not data:
        return None
    try:
        return plans.read_avro_metadata(data)
    except ValueError:
        return None


def pending_operations(table: HoodieTable) -> PendingOperations:
    """Collect what pending instants touch (see :class:`PendingOperations`)."""
    tl = table.timeline
    out = PendingOperations()
    for inst in tl.pending().instants:
        ts = inst.timestamp
        if inst.action in (I.COMPACTION, I.LOG_COMPACTION):
            # Not skipped when damaged: the slices the plan reads must survive until it is removed
            # (hoodie rollback moves logs back into them), so a service must stop here.
            try:
                plan = (tl.compaction_plan(ts) if inst.action == I.COMPACTION else tl.log_compaction_plan(ts))
            except FileNotFoundError:
                plan = None
            label = f"{inst.action} {ts}"
            for op in plan.operations if plan is not None else ():
                p, fid = op.file_group
                out.service_partitions.setdefault(p, [])
                if label not in out.service_partitions[p]:
                    out.service_partitions[p].append(label)
                out.file_groups[(p, fid)] = label
                base = op.base_instant_time or ts
                cur = out.compaction_base.get((p, fid))
                out.compaction_base[(p, fid)] = base if cur is None else min(cur, base)
            continue
        if inst.action not in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT):
            continue
        label = f"{inst.action} {ts}"
        if inst.action == I.REPLACE_COMMIT:
            req = _requested_avro(tl, inst)
            if is_delete_partition(req):
                label = f"delete_partition {ts}"
            cplan = (req or {}).get("clusteringPlan")
            if cplan:
                label = f"clustering {ts}"
                for group in cplan.get("inputGroups") or []:
                    for sl in group.get("slices") or []:
                        p = sl.get("partitionPath") or ""
                        out.service_partitions.setdefault(p, [])
                        if label not in out.service_partitions[p]:
                            out.service_partitions[p].append(label)
                        out.file_groups[(p, sl.get("fileId") or "")] = label
                continue
        parts: set[str] = set()
        if inst.is_inflight:
            try:
                meta = tl.commit_metadata(inst)
            except (FileNotFoundError, ValueError):
                meta = None
            if meta is not None:
                parts.update(p for p, stats in meta.partition_to_write_stats.items() if stats)
                parts.update((meta.partition_to_replace_file_ids or {}).keys())
                raw = meta.extra_metadata.get(TTL_PARTITIONS_KEY)
                if raw:
                    try:
                        parts.update(json.loads(raw))
                    except json.JSONDecodeError:
                        # An unreadable hint adds nothing; with no other source the write counts as
                        # touching unknown partitions, which is the safe side.
                        log.warning("pending %s has an unreadable %s", inst, TTL_PARTITIONS_KEY)
        for path, _ in marker_files(table.storage, ts):
            parts.add(path.rpartition("/")[0])
        if not parts:
            out.unknown_writes.append(label)
        for p in parts:
            out.write_partitions.setdefault(p, []).append(label)
    return out


# -- plan ---------------------------------------------------------------------------------------

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
    out: set[str] = set()
    for inst in tl.completed().by_actions(I.SAVEPOINT).instants:
        try:
            md = tl.avro_metadata(inst)
        except (FileNotFoundError, ValueError):
            continue
        for pm in (md.get("partitionMetadata") or {}).values():
            out.update(pm.get("savepointDataFile") or [])
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


# -- execution ------------------------------------------------------------------------------------

@dataclass
class CleanResult:
    """What a clean did (or, in a dry run, would do)."""

    instant: Optional[str]
    plan: CleanPlan
    dry_run: bool = False
    deleted: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, list[str]] = field(default_factory=dict)
    deleted_partitions: list[str] = field(default_factory=list)
    recovered: list["CleanResult"] = field(default_factory=list)
    stash_purged: list[str] = field(default_factory=list)

    @property
    def total_deleted(self) -> int:
        """Files deleted by this clean (recovered cleans not counted)."""
        return sum(len(v) for v in self.deleted.values())

    def to_json(self) -> dict:
        """A JSON-friendly summary (what ``hoodie clean --json`` prints)."""
        return {
            "instant": self.instant,
            "dry_run": self.dry_run,
            "plan": self.plan.to_json(),
            "deleted_files": {p: list(v) for p, v in sorted(self.deleted.items())},
            "total_deleted": self.total_deleted,
            "failed_files": {p: list(v) for p, v in sorted(self.failed.items()) if v},
            "deleted_partitions": list(self.deleted_partitions),
            "recovered_cleans": [r.to_json() for r in self.recovered],
            "stash_purged": list(self.stash_purged),
        }


def _remove_empty_dir(storage: Storage, rel: str) -> bool:
    """Remove a directory only if it is empty (never recursively: a concurrent writer's new file
    must not be swept away)."""
    if storage.is_local:
        try:
            os.rmdir(storage.full(rel))
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
    if storage.list_dir(rel):
        return False
    try:
        storage.fs.delete_dir(storage.full(rel))
    except (FileNotFoundError, OSError):
        # Object stores have no real folders: an empty prefix may have no marker object to delete.
        log.debug("no folder object to delete at %s", storage.uri(rel))
    return True


def _delete_partition_folder(storage: Storage, partition: str) -> bool:
    """Delete an emptied partition: its metafile, its folder and emptied parent folders."""
    entries = storage.list_dir(partition)
    if any(e.name != PARTITION_METAFILE for e in entries):
        log.warning("partition %s was not deleted: new files appeared in it", partition)
        return False
    meta = storage.read_bytes(f"{partition}/{PARTITION_METAFILE}") if entries else None
    storage.delete(f"{partition}/{PARTITION_METAFILE}")
    if not _remove_empty_dir(storage, partition):
        # A writer added a file between the check and the delete: give the partition its metafile
        # back, or the new file would be invisible (readers find partitions by their metafile).
        if meta is not None:
            try:
                storage.create_new(f"{partition}/{PARTITION_METAFILE}", meta)
            except FileExistsError:
                log.debug("the writer already re-created %s/%s", partition, PARTITION_METAFILE)
        else:
            write_partition_metadata(storage, partition, "00000000000000")
        log.warning("partition %s was not deleted: a file appeared while deleting it", partition)
        return False
    parent = partition.rpartition("/")[0]
    while parent:
        if storage.list_dir(parent) or not _remove_empty_dir(storage, parent):
            break
        parent = parent.rpartition("/")[0]
    return True


def _delete(table: HoodieTable, instant: Instant, plan: CleanPlan, started: float) -> tuple[CleanResult, bytes]:
    """Delete the plan's files and partitions (idempotent); returns the result and the clean
    instant's completed content (Avro ``HoodieCleanMetadata``)."""
    storage = table.storage
    res = CleanResult(instant.timestamp, plan)
    policy = plan.policy
    part_meta: dict[str, dict] = {}
    for p, files in sorted(plan.files_to_delete.items()):
        ok: list[str] = []
        bad: list[str] = []
        for f in files:
            try:
                storage.delete(f)
                # Already gone (a re-executed plan) counts as deleted: the file no longer exists.
                ok.append(f)
                fault_point("clean.after_file")
            except OSError as e:
                log.warning("clean %s could not delete %s: %s", instant.timestamp, f, e)
                bad.append(f)
        res.deleted[p] = ok
        res.failed[p] = bad
        fault_point("clean.after_partition_files")
    for p in sorted(plan.partitions_to_delete):
        if _delete_partition_folder(storage, p):
            res.deleted_partitions.append(p)
    names = lambda fs: [f.rsplit("/", 1)[-1] for f in fs]  # noqa: E731 - Hudi records file names
    for p in sorted(set(plan.files_to_delete) | set(plan.partitions_to_delete)):
        files = plan.files_to_delete.get(p, [])
        part_meta[p] = plans.clean_partition_metadata(
            p, policy, names(files), names(res.deleted.get(p, [])), names(res.failed.get(p, [])),
            p in res.deleted_partitions)
    e = plan.earliest_instant_to_retain
    md = plans.clean_metadata(instant.timestamp, int((time.monotonic() - started) * 1000),
                              e.timestamp if e else "", plan.last_completed_commit, part_meta)
    return res, plans.write_avro_metadata("HoodieCleanMetadata", md)


def _complete(table: HoodieTable, instant: Instant, res: CleanResult, content: bytes) -> Instant:
    """Complete the clean instant (its commit point)."""
    fault_point("clean.before_complete")
    inflight = Instant(instant.timestamp, I.CLEAN, State.INFLIGHT)
    done = T.transition_to_complete(table.storage, inflight, content)
    table.reload()
    log.info("clean %s deleted %d files and %d partitions", instant.timestamp, res.total_deleted,
             len(res.deleted_partitions))
    return done


def _execute(table: HoodieTable, instant: Instant, plan: CleanPlan, started: float) -> CleanResult:
    """Delete the plan's files and partitions, then complete the clean instant (idempotent)."""
    res, content = _delete(table, instant, plan, started)
    _complete(table, instant, res, content)
    return res


def _finish_pending_cleans(table: HoodieTable) -> list[CleanResult]:
    """Re-execute cleans left requested or inflight by a crash, from their own plans."""
    out = []
    for inst in table.timeline.pending().by_actions(I.CLEAN).instants:
        started = time.monotonic()
        data = table.timeline.read_file(inst.requested_file_name)
        try:
            plan = CleanPlan.from_avro(table.timeline.read_avro(I.Instant(inst.timestamp, I.CLEAN, I.State.REQUESTED)),
                                       table.storage)
        except T.DamagedTimelineFileError as e:
            # A clean deletes only files no read needs and its instant holds no data; under the lock
            # a pending one is a crashed run. Its plan is lost: drop it, the next plan covers the rest.
            log.warning("%s is damaged (%s): dropping that interrupted clean %s; the new clean plan covers "
                        "what it had not deleted", e.path, e.problem, inst.timestamp)
            T.delete_instant_files(table.storage, inst.timestamp, I.CLEAN, [State.INFLIGHT, State.REQUESTED])
            continue
        except ValueError as e:
            raise CleanError(f"the pending clean {inst.timestamp} has an unreadable plan "
                             f"{table.storage.uri(T.METAFOLDER + '/' + inst.requested_file_name)} ({e}); "
                             + T.damaged_file_fix(table.storage.uri(), inst)) from None
        if inst.is_requested:
            T.transition_to_inflight(table.storage, inst, data)
        log.warning("re-executing clean %s left %s by an earlier run", inst.timestamp, inst.state.name.lower())
        out.append(_execute(table, inst, plan, started))
    return out


def run_clean(base_path: str | HoodieTable, config: Optional[Mapping[str, Any] | CleanConfig] = None,
              dry_run: bool = False, *, storage_options: Optional[dict[str, Any]] = None) -> CleanResult:
    """Clean a table: finish any interrupted clean, then plan and execute a new one.

    Publishes Prometheus metrics when configured (``hoodie.metrics.prometheus.file``); otherwise as
    :func:`_run_clean_once`.
    """
    started = time.monotonic()
    if isinstance(config, Mapping):
        warn_unknown_keys(config)
    res = _run_clean_once(base_path, config, dry_run, storage_options=storage_options)
    if not dry_run:
        table = base_path if isinstance(base_path, HoodieTable) else HoodieTable(base_path, storage_options)
        publish("clean", {
            "files_deleted": (sum(len(v) for v in res.deleted.values()), "Files the last clean deleted"),
            "files_failed": (sum(len(v) for v in res.failed.values()), "Files the last clean failed to delete"),
            "partitions_deleted": (len(res.deleted_partitions), "Partitions the last clean deleted"),
            "duration_ms": (int((time.monotonic() - started) * 1000), "Duration of the last clean, ms"),
        }, {"table": table.name, "base_path": table.base_path}, config if isinstance(config, Mapping) else {})
    return res


def _run_clean_once(base_path: str | HoodieTable, config: Optional[Mapping[str, Any] | CleanConfig] = None,
                    dry_run: bool = False, *, storage_options: Optional[dict[str, Any]] = None) -> CleanResult:
    """Clean a table: finish any interrupted clean, then plan and execute a new one.

    A plan that deletes nothing creates no instant (``result.instant is None``). With ``dry_run``
    nothing is written or deleted; the result holds the plan.
    """
    table = base_path if isinstance(base_path, HoodieTable) else HoodieTable(base_path, storage_options)
    cfg = _config(config)
    table.reload()
    if dry_run:
        plan = plan_clean(table, cfg)
        pending = [i.timestamp for i in table.timeline.pending().by_actions(I.CLEAN).instants]
        if pending:
            plan.notes.append(f"pending clean(s) {', '.join(pending)} would be re-executed first")
        return CleanResult(None, plan, dry_run=True)
    op = CleanOperation(cfg)
    Transaction(op, op, table=table, options=cfg.options).run()
    assert op.outcome is not None
    return op.outcome


class CleanOperation(Operation):
    """A clean as a transaction's operation (and its own in-process executor): interrupted cleans
    are finished and stashes settled first, then a plan is made; an empty plan commits nothing."""

    what = "clean"

    def __init__(self, cfg: CleanConfig) -> None:
        self.cfg = cfg
        self.plan: Optional[CleanPlan] = None
        self.recovered: list[CleanResult] = []
        self.purged: list[str] = []
        self.started = time.monotonic()
        self.now = ""
        self.outcome: Optional[CleanResult] = None

    def prepare(self, txn: Transaction) -> bool:
        """Finish interrupted cleans, settle TTL stashes, plan; False when nothing is to delete."""
        table = txn.open_table()
        refuse_metadata_table(table, "a clean")
        self.recovered = _finish_pending_cleans(table)
        self.purged = _stash_housekeeping(table, self.cfg)
        table.reload()
        self.started = time.monotonic()
        self.now = table.new_instant_time()
        self.plan = plan_clean(table, self.cfg, self.now)
        if self.plan.is_empty():
            self.outcome = CleanResult(None, self.plan, recovered=self.recovered, stash_purged=self.purged)
            return False
        return True

    def start(self, txn: Transaction) -> Instant:
        """``.clean.requested`` and ``.clean.inflight``, both holding the plan."""
        assert txn.table is not None and self.plan is not None
        data = plans.write_avro_metadata("HoodieCleanerPlan", self.plan.to_avro(txn.table.storage))
        req = T.create_requested(txn.table.storage, self.now, I.CLEAN, data)
        inflight = T.transition_to_inflight(txn.table.storage, req, data)
        fault_point("clean.after_inflight")
        return inflight

    def execute(self, txn: Transaction) -> tuple[CleanResult, bytes]:
        """Delete the planned files and partitions."""
        assert txn.table is not None and txn.instant is not None and self.plan is not None
        return _delete(txn.table, txn.instant, self.plan, self.started)

    def complete(self, txn: Transaction, result: tuple[CleanResult, bytes]) -> Instant:
        """The completed clean instant (``HoodieCleanMetadata``)."""
        assert txn.table is not None and txn.instant is not None
        res, content = result
        res.recovered = self.recovered
        res.stash_purged = self.purged
        self.outcome = res
        return _complete(txn.table, txn.instant, res, content)


def refuse_metadata_table(table: HoodieTable, what: str) -> None:
    """Table services here do not maintain a metadata table; refuse to make one stale."""
    _refuse_metadata_table(table, what, CleanError)


def _stash_housekeeping(table: HoodieTable, cfg: CleanConfig) -> list[str]:
    """Finish interrupted TTL stashes (before their files could be cleaned) and drop expired ones."""
    from hoodie.services.ttl.stash import finish_pending_stashes, purge_expired_stashes, stash_retain_ms

    retain = stash_retain_ms(cfg.options)
    finish_pending_stashes(table, retain)
    return purge_expired_stashes(table, retain)


def commits_since_last_clean(table: HoodieTable) -> int:
    """Completed commits-timeline instants after the newest completed clean."""
    tl = table.timeline
    last_clean = tl.completed().by_actions(I.CLEAN).last()
    commits = tl.commits().completed()
    if last_clean is not None:
        commits = commits.after(last_clean.timestamp)
    return len(commits)


def maybe_clean_after_commit(table: HoodieTable, config: Optional[Mapping[str, Any] | CleanConfig] = None
                             ) -> Optional[CleanResult]:
    """The automatic clean writers run after each commit (``hoodie.clean.automatic``, default true).

    Runs when at least ``hoodie.clean.max.commits`` (default 1) commits completed since the last
    clean; returns the result, or None when it did not run.
    """
    cfg = _config(config)
    if not cfg.automatic:
        return None
    table.reload()
    if commits_since_last_clean(table) < cfg.max_commits:
        return None
    return run_clean(table, cfg)


__all__ = [
    "CleanConfig", "CleanPlan", "CleanResult", "CleanError", "PendingOperations", "POLICIES",
    "plan_clean", "run_clean", "maybe_clean_after_commit", "pending_operations", "commits_since_last_clean",
    "refuse_metadata_table",
    "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS",
]
