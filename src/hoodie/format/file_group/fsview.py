"""The file-system view: partitions, file groups, file slices, as Hudi v6 sees them.

Reference: ``hudi-v6-format.md`` §3.8. Rules implemented here:

* Files group by (partition, fileId); slices by base instant (a log file carries the base instant of
  the slice it belongs to in its name).
* Visible instants are completed commit/deltacommit/replacecommit/compaction instants plus pending
  compactions. A slice counts only if its base instant is visible (or older than the active
  timeline) and at or before the query instant; this hides base files of failed writes.
* Table versions 8/9 read as of a completion time (``completion_cut``): the timeline holds the instants
  completed by then, and an archived instant counts only if the LSM timeline says it completed by then
  too (two writers: an instant requested before the first active one may have completed after it).
* A pending compaction at C opens an empty slice at C; partial base files in it are ignored, and merged
  reads combine the C-slice's logs with the previous slice.
* File groups replaced by a completed replacecommit at or before the query instant are dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Protocol

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
# RESERVED_LOG_VERSION_METRIC is re-exported: the plan format moved to compaction_plan, importers stay.
from hoodie.format.timeline.compaction_plan import RESERVED_LOG_VERSION_METRIC, CompactionOperation
from hoodie.format.storage import FileStatus, Storage
from hoodie.format.timeline.active import METAFOLDER, TIMELINE_FOLDER_V2, DamagedTimelineFileError, Timeline
from hoodie.format.keys.common import URL_ENCODE_PARTITIONING
from hoodie.format.keys.paths import PartitionPathError
from hoodie.format.table import read_partition_metadata
from hoodie.format.timeline.archived import ArchivedTimeline

log = logging.getLogger(__name__)
# Damaged plan files already warned about in this process (one warning each, not one per view).
_WARNED_DAMAGED: set[str] = set()


@dataclass(frozen=True)
class BaseFile:
    """A base (Parquet) file of a slice."""

    partition: str
    name: str
    file_id: str
    instant: str
    size: int

    @property
    def path(self) -> str:
        """Path relative to the table base path."""
        return f"{self.partition}/{self.name}" if self.partition else self.name


@dataclass(frozen=True)
class LogFile:
    """A log file of a slice."""

    partition: str
    name: str
    parsed: N.LogFileName
    size: int

    @property
    def path(self) -> str:
        """Path relative to the table base path."""
        return f"{self.partition}/{self.name}" if self.partition else self.name

    @property
    def version(self) -> int:
        """The log version."""
        return self.parsed.version

    def sort_key(self) -> tuple:
        """Hudi's log file order."""
        return self.parsed.sort_key()


@dataclass
class FileSlice:
    """A base file (optional) plus the log files written on top of it."""

    partition: str
    file_id: str
    base_instant: str
    base_file: Optional[BaseFile] = None
    log_files: list[LogFile] = field(default_factory=list)

    def sorted_logs(self) -> list[LogFile]:
        """Log files in Hudi's comparator order."""
        return sorted(self.log_files, key=LogFile.sort_key)

    @property
    def total_log_size(self) -> int:
        """Total bytes of the slice's log files."""
        return sum(lf.size for lf in self.log_files)

    def is_empty(self) -> bool:
        """Neither base file nor log files."""
        return self.base_file is None and not self.log_files


@dataclass
class FileGroup:
    """All slices of one file id in one partition."""

    partition: str
    file_id: str
    slices: dict[str, FileSlice] = field(default_factory=dict)

    def slice_for(self, base_instant: str) -> FileSlice:
        """The slice at a base instant, created on first use."""
        sl = self.slices.get(base_instant)
        if sl is None:
            sl = FileSlice(self.partition, self.file_id, base_instant)
            self.slices[base_instant] = sl
        return sl

    def ordered_slices(self) -> list[FileSlice]:
        """Slices from newest to oldest base instant."""
        return [self.slices[k] for k in sorted(self.slices, reverse=True)]


class FileListing(Protocol):
    """Where a view gets partitions and files from instead of storage (the metadata table's
    ``files`` partition: :class:`hoodie.format.metadata.MetadataFileListing`)."""

    def partitions(self) -> list[str]:
        """Partition paths (``""`` for a non-partitioned table)."""
        ...

    def list_files(self, partition: str) -> list[FileStatus]:
        """The files of one partition."""
        ...


def list_partitions(storage: Storage, listings: Optional[dict[str, list[FileStatus]]] = None) -> list[str]:
    """All partition paths: directories holding ``.hoodie_partition_metadata`` (or its base-format
    variant ``.hoodie_partition_metadata.parquet``/``.orc``; ``""`` for the root
    of a non-partitioned table), as Hudi's file-listing fallback finds them.

    Only folders named ``.hoodie`` are skipped, as in Hudi's ``FileSystemBackedTableMetadata``: a
    partition value may start with a dot (``.NET``, ``2024/.late``), and Java Hudi and hudi-rs read
    such partitions. hoodie's other hidden names are files (log files, the partition metafile) or
    live under ``.hoodie`` (markers, the TTL stash).

    ``listings``, when given, receives each partition's files (what the walk listed anyway), so a
    file-system view does not list the partition a second time.
    """
    found: list[str] = []

    def walk(rel: str) -> None:
        entries = storage.list_dir(rel)
        if any(e.name in N.PARTITION_METAFILES and not e.is_dir for e in entries):
            found.append(rel)
            if listings is not None:
                listings[rel] = [e for e in entries if not e.is_dir]
        for e in entries:
            if e.is_dir and e.name != METAFOLDER:
                walk(e.path)

    walk("")
    return sorted(found)


# HoodieTableMetadata.RECORDKEY_PARTITION_LIST, and where the metadata table lives.
_MDT_PARTITION_LIST_KEY = "__all_partitions__"
_MDT_FOLDER = ".hoodie/metadata"


def check_partition_nesting(storage: Storage, partitions: Iterable[str], timeline: Optional[Timeline]) -> None:
    """Refuse a write whose partitions would put one partition folder inside another.

    Java Hudi's listing does not look inside a partition folder, and hudi-rs reads only the
    innermost one, so with partitions ``a`` and ``a/b`` one of them loses its rows for every
    reader but hoodie. Checked: the written partitions among themselves, and each new one against
    the partitions of the table above and below it. A partition is new unless its metafile was
    written by a completed (or archived) instant of ``timeline``: a metafile left behind by a
    failed or rolled-back write does not make a partition. Existing partitions were checked when
    they were created.

    Also refuses the partition path ``__all_partitions__`` on a table with a metadata table (it is
    the key of the metadata table's partition list).

    Raises:
        PartitionPathError: naming both partitions and the fix; raised before anything is written.
    """
    parts = sorted({p for p in partitions if p})

    def refuse(inner: str, outer: str, where: str) -> None:
        raise PartitionPathError(
            f"partition path {inner!r} would be a partition inside partition {outer!r} ({where}). Java Hudi does "
            f"not look inside a partition folder and hudi-rs reads only the innermost one, so rows would "
            f"disappear for them. Nothing was committed. Partition values containing '/' make nested folders: "
            f"keep every value at the same depth (e.g. 'a/_' next to 'a/b' instead of 'a'), or create the "
            f"table with {URL_ENCODE_PARTITIONING}=true, which writes '/' as %2F (one folder per value).")

    if _MDT_PARTITION_LIST_KEY in parts and storage.exists(_MDT_FOLDER):
        raise PartitionPathError(
            f"partition path {_MDT_PARTITION_LIST_KEY!r} is the key of the metadata table's partition list: the table's "
            f"metadata table cannot record it, and Java readers listing through it would lose partitions. Nothing "
            f"was committed. Change the value, or drop the metadata table first (hoodie.metadata.enable=false)")
    in_batch = set(parts)
    for p in parts:
        for outer in _parent_paths(p):
            if outer in in_batch:
                refuse(p, outer, "both in this write")
    if not parts or not storage.exists(""):
        return
    committed = {i.timestamp for i in timeline.completed().instants} if timeline is not None else set()
    first = timeline.first() if timeline is not None else None

    def is_partition(rel: str) -> bool:
        t = _partition_commit_time(storage, rel)
        return t is not None and (t in committed or (first is not None and t < first.timestamp))

    for p in parts:
        if is_partition(p):
            continue
        for outer in _parent_paths(p):
            if is_partition(outer):
                refuse(p, outer, "already in the table")
        if storage.exists(p):
            for q in list_partitions(storage.child(p)):
                if q and is_partition(f"{p}/{q}"):
                    refuse(f"{p}/{q}", p, "already in the table")


def _parent_paths(partition: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b"]``."""
    segs = partition.split("/")
    return ["/".join(segs[:i]) for i in range(1, len(segs))]


def _partition_commit_time(storage: Storage, partition: str) -> Optional[str]:
    """``commitTime`` of a partition's metafile, None without one. A metafile without a commit
    time (written elsewhere) reads as ``"0"``: older than any instant, so an existing partition."""
    meta = read_partition_metadata(storage, partition)
    if meta is None:
        return None
    return meta.get("commitTime") or "0"


class FileSystemView:
    """Slices of a table as of an instant, built from one listing per partition."""

    def __init__(self, storage: Storage, timeline: Timeline,
                 listing: Optional[dict[str, list[FileStatus]]] = None,
                 file_listing: Optional[FileListing] = None, *,
                 completion_cut: Optional[str] = None,
                 archived_completion: Optional[Mapping[str, str]] = None) -> None:
        """A view over ``timeline`` (files listed from storage, from ``listing``, or through
        ``file_listing``).

        ``completion_cut`` (timeline layout 2 only, ignored otherwise): the view is the table as of this
        completion time; ``timeline`` must already hold only the instants completed by then (and pending
        ones requested by then). Archived instants then count only if they completed by the cut.
        ``archived_completion``: the LSM timeline's requested -> completion times, when the caller has
        already read them (else they are read on first need).
        """
        self.storage = storage
        self.timeline = timeline
        # Lists through the metadata table instead of storage when given (hoodie.format.metadata).
        self.file_listing = file_listing
        self._listing: dict[str, list[FileStatus]] = dict(listing or {})
        self._groups: dict[str, dict[str, FileGroup]] = {}
        self._partitions: Optional[list[str]] = None
        completed = timeline.completed()
        self._visible = {
            i.timestamp
            for i in completed.instants
            if i.action in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT)
        } | {i.timestamp for i in timeline.pending_compactions().instants}
        self._pending_compaction = {
            i.timestamp for i in timeline.pending_compactions().instants
        }
        # Instants older than the listed timeline were archived (completed); a filter does not move it.
        self._timeline_start = timeline.start
        # Timeline layout 2 (table versions 8/9): log files are named by the deltacommit that wrote
        # them, and belong to the slice with the largest base instant <= that deltacommit's
        # completion time (Hudi 1.x CompletionTimeQueryView, hudi-rs FileGroup::add_log_file).
        self._layout2 = timeline.folder == TIMELINE_FOLDER_V2
        self._completion = {i.timestamp: i.completion or i.timestamp for i in completed.instants}
        # Layout 2 time travel: the completion time the view is as of (None: now, every archived
        # instant completed before it).
        self._cut = completion_cut if self._layout2 else None
        # Completion times of instants archived into Hudi 1.x's LSM timeline (layout 2 only), read
        # once per view, on the first log file older than the active timeline or, with a cut, the first
        # file: views that need neither never read them (see _archived_done).
        self._archived_completion: Optional[dict[str, str]] = (
            dict(archived_completion) if archived_completion is not None else None)
        # Completed replacecommits: (instant, partition -> replaced file ids).
        self._replaced: list[tuple[str, dict[str, list[str]]]] = []
        for inst in completed.by_actions(I.REPLACE_COMMIT).instants:
            meta = timeline.commit_metadata(inst)
            self._replaced.append((inst.timestamp, meta.partition_to_replace_file_ids or {}))
        # Pending clustering / replace: their base files must stay hidden (they are not visible
        # anyway because the instant is not completed).

    # -- partitions --------------------------------------------------------------------------
    def partitions(self) -> list[str]:
        """All partition paths of the table (listed once)."""
        if self._partitions is None:
            self._partitions = (self.file_listing.partitions() if self.file_listing is not None
                                else list_partitions(self.storage, self._listing))
        return self._partitions

    def _list(self, partition: str) -> list[FileStatus]:
        if partition not in self._listing:
            entries = (self.file_listing.list_files(partition) if self.file_listing is not None
                       else self.storage.list_dir(partition))
            self._listing[partition] = [e for e in entries if not e.is_dir]
        return self._listing[partition]

    def file_groups(self, partition: str) -> dict[str, FileGroup]:
        """All file groups of a partition, every slice included (nothing filtered)."""
        if partition in self._groups:
            return self._groups[partition]
        groups: dict[str, FileGroup] = {}
        for st in self._list(partition):
            name = st.name
            if N.is_base_file(name):
                try:
                    b = N.parse_base_file(name)
                except ValueError:
                    continue
                fg = groups.setdefault(b.file_id, FileGroup(partition, b.file_id))
                fg.slice_for(b.instant).base_file = BaseFile(partition, name, b.file_id, b.instant, st.size)
            elif N.is_log_file(name):
                lp = N.parse_log_file(name)
                if lp.suffix or lp.kind != "log":
                    continue  # CDC logs carry no table data
                fg = groups.setdefault(lp.file_id, FileGroup(partition, lp.file_id))
                fg.slice_for(lp.base_instant).log_files.append(LogFile(partition, name, lp, st.size))
        # A pending compaction opens a new (possibly empty) slice in each planned group. Without its
        # plan (damaged file) only the slices holding files are known: an empty one changes no read
        # (a merged read of it is the previous slice, and the read-optimized view skips it).
        for c in sorted(self._pending_compaction):
            for op in self._compaction_ops(c, required=False):
                if op.partition != partition:
                    continue
                fid = op.file_id
                if fid:
                    groups.setdefault(fid, FileGroup(partition, fid)).slice_for(c)
        if self._layout2:
            for fg in groups.values():
                self._slice_by_completion(fg)
        self._groups[partition] = groups
        return groups

    def _slice_by_completion(self, fg: FileGroup) -> None:
        """Re-key a layout-2 file group's logs from their deltacommit instants to their slices. Logs of
        deltacommits that did not complete (pending, failed) belong to no slice and are dropped."""
        logs = [lf for sl in fg.slices.values() for lf in sl.log_files]
        for sl in fg.slices.values():
            sl.log_files = []
        keys = {k for k, sl in fg.slices.items()
                if (sl.base_file is not None and self._is_visible(k, None)) or k in self._pending_compaction}
        placed: list[tuple[str, LogFile]] = []
        for lf in logs:
            written = lf.parsed.base_instant  # the deltacommit's requested time, in layout 2
            done = self._completion.get(written)
            if done is None:
                if self._timeline_start is None or written >= self._timeline_start:
                    continue
                # Archived: its completion time is in the LSM timeline. A deltacommit requested
                # before a compaction but completed after it belongs to the compaction's slice, so
                # its requested time is not enough.
                done = self._archived_done(written)
                if self._cut is not None and done > self._cut:
                    continue  # completed after the time the view is as of
            placed.append((done, lf))
        # In completion order: a log with no base file before it opens a slice keyed by its own
        # instant, which later logs then join.
        for done, lf in sorted(placed, key=lambda x: (x[0], x[1].sort_key())):
            owner = max((k for k in keys if k <= done), default=None)
            if owner is None:
                owner = lf.parsed.base_instant
                keys.add(owner)
            fg.slice_for(owner).log_files.append(lf)
        for k in [k for k, sl in fg.slices.items() if sl.is_empty() and k not in self._pending_compaction]:
            del fg.slices[k]

    def _archived_done(self, instant: str) -> str:
        """The completion time of an archived (layout 2) instant, from the LSM timeline, read once per
        view. An instant the archived timeline lacks completed long ago: its requested time stands in.
        A damaged LSM timeline raises ArchivedTimelineError (naming the file) rather than misplacing files."""
        if self._archived_completion is None:
            self._archived_completion = ArchivedTimeline.load(self.storage).completion_times()
        return self._archived_completion.get(instant, instant)

    def _compaction_ops(self, instant: str, *, required: bool = True) -> tuple[CompactionOperation, ...]:
        """The operations of pending compaction ``instant``'s plan.

        A damaged plan file raises :class:`~hoodie.format.timeline.active.DamagedTimelineFileError` when
        ``required``; otherwise it counts as no operations, with a warning naming the file. Callers
        pass ``required=False`` only where that is still exact (see :meth:`file_groups`).
        """
        cache = self.__dict__.setdefault("_plan_cache", {})
        if instant not in cache:
            try:
                cache[instant] = self.timeline.compaction_plan(instant).operations
            except DamagedTimelineFileError as e:
                cache[instant] = e
        got = cache[instant]
        if isinstance(got, DamagedTimelineFileError):
            if required:
                raise got
            if got.path not in _WARNED_DAMAGED:
                _WARNED_DAMAGED.add(got.path)
                log.warning("%s is damaged (%s); reading without it: it has not run, so its file slices hold only "
                            "log files writers added. %s", got.path, got.problem, got.fix)
            return ()
        return got

    def _never_ran(self, instant: str) -> bool:
        return not self.timeline.has_file(I.instant_file_name(instant, I.COMPACTION, I.State.INFLIGHT))

    def pending_compaction_file_groups(self) -> dict[tuple[str, str], str]:
        """(partition, fileId) -> pending compaction instant (writers route updates by it, so a
        damaged plan raises)."""
        out: dict[tuple[str, str], str] = {}
        for c in sorted(self._pending_compaction):
            for op in self._compaction_ops(c):
                out[op.file_group] = c
        return out

    def reserved_log_versions(self) -> dict[tuple[str, str], tuple[str, int]]:
        """(partition, fileId) -> (pending compaction instant C, highest log version its plan
        reserves in the slice at C). See :func:`reserved_log_version`.

        A damaged plan of a compaction that never ran (no inflight file) reserves nothing that
        exists yet and is skipped; one that ran may have left outputs only its plan identifies, so
        it raises.
        """
        out: dict[tuple[str, str], tuple[str, int]] = {}
        for c in sorted(self._pending_compaction):
            for op in self._compaction_ops(c, required=not self._never_ran(c)):
                v = op.reserved_log_version
                if v:
                    out[op.file_group] = (c, v)
        return out

    # -- visibility ---------------------------------------------------------------------------
    def _is_visible(self, base_instant: str, as_of: Optional[str]) -> bool:
        if as_of is not None and base_instant > as_of:
            return False
        if base_instant in self._visible:
            return True
        # Instants older than the active timeline were archived: they completed. As of a completion
        # time (layout 2), only those the LSM timeline says completed by then: Hudi archives by
        # requested time, so an archived write may have completed after the first active one.
        if self._timeline_start is None or base_instant >= self._timeline_start:
            return False
        return self._cut is None or self._archived_done(base_instant) <= self._cut

    def is_replaced(self, partition: str, file_id: str, as_of: Optional[str] = None) -> bool:
        """Whether a completed replacecommit at or before ``as_of`` replaced this file group."""
        for ts, p2r in self._replaced:
            if as_of is not None and ts > as_of:
                continue
            if file_id in (p2r.get(partition) or ()):
                return True
        return False

    def latest_file_slices(self, partition: str, as_of: Optional[str] = None, *,
                           merge_pending_compaction: bool = True) -> list[FileSlice]:
        """The latest visible slice of every live file group at ``as_of`` (default: now).

        With ``merge_pending_compaction`` (snapshot reads), a slice opened by a pending compaction is
        merged with the previous slice: its base file and logs come first, the new logs after.
        Without it (Hudi's ``getLatestFileSlices``), the pending slice is returned on its own.
        """
        out: list[FileSlice] = []
        for fid, fg in sorted(self.file_groups(partition).items()):
            if self.is_replaced(partition, fid, as_of):
                continue
            sl = self._latest_slice(fg, as_of, merge_pending_compaction)
            if sl is not None and not sl.is_empty():
                out.append(sl)
        return out

    def _latest_slice(self, fg: FileGroup, as_of: Optional[str], merge: bool) -> Optional[FileSlice]:
        visible = [s for s in fg.ordered_slices() if self._is_visible(s.base_instant, as_of)]
        if not visible:
            return None
        latest = visible[0]
        # Base files only count when their own instant is completed (drop partial compaction
        # output and base files of the pending compaction).
        if latest.base_instant in self._pending_compaction:
            pending = FileSlice(latest.partition, latest.file_id, latest.base_instant, None,
                                list(latest.log_files))
            if not merge or len(visible) < 2:
                return pending
            prev = visible[1]
            return FileSlice(prev.partition, prev.file_id, prev.base_instant, prev.base_file,
                             prev.sorted_logs() + pending.sorted_logs())
        return FileSlice(latest.partition, latest.file_id, latest.base_instant, latest.base_file,
                         latest.sorted_logs())

    def latest_base_files(self, partition: str, as_of: Optional[str] = None) -> list[BaseFile]:
        """The read-optimized view: the newest committed base file of each live file group."""
        out: list[BaseFile] = []
        for fid, fg in sorted(self.file_groups(partition).items()):
            if self.is_replaced(partition, fid, as_of):
                continue
            for sl in fg.ordered_slices():
                if sl.base_file is None or sl.base_instant in self._pending_compaction:
                    continue
                if self._is_visible(sl.base_instant, as_of):
                    out.append(sl.base_file)
                    break
        return out

    def all_latest_file_slices(self, as_of: Optional[str] = None,
                               partitions: Optional[Iterable[str]] = None) -> list[FileSlice]:
        """Latest merged slices across partitions."""
        parts = self.partitions() if partitions is None else list(partitions)
        out: list[FileSlice] = []
        for p in parts:
            out.extend(self.latest_file_slices(p, as_of))
        return out


def reserved_log_version(op: CompactionOperation) -> int:
    """The highest log version a compaction operation reserves in the slice at its instant
    (:attr:`CompactionOperation.reserved_log_version`, where the plan format lives now)."""
    return op.reserved_log_version


def table_view(storage: Storage, timeline: Optional[Timeline] = None) -> FileSystemView:
    """A file-system view over the table at ``storage`` (lists the timeline when not given)."""
    return FileSystemView(storage, timeline or Timeline.load(storage))


__all__ = [
    "BaseFile", "LogFile", "FileSlice", "FileGroup", "FileSystemView", "FileListing", "list_partitions", "table_view",
    "check_partition_nesting",
    "METAFOLDER", "RESERVED_LOG_VERSION_METRIC", "reserved_log_version",
]
