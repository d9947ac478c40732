"""Reading the ``files`` partition of a Hudi metadata table (MDT) as a partition and file listing.

The MDT is a merge-on-read Hudi table at ``<base>/.hoodie/metadata`` with its own ``hoodie.properties``
and timeline (layout 1 for table version 6, layout 2 for 8/9). Its ``files`` partition has one file
group, ``files-0000-0``: an HFile base file plus log files whose data blocks are HFiles
(``HFILE_DATA_BLOCK``). Reference: ``metadata-table.md``; the rules and their Java sources are listed
in ``docs/metadata-table.md``. In short:

1. **Which file slice** (``HoodieTableMetadataUtil.getPartitionLatestMergedFileSlices``): the latest
   merged slice of ``files-0000-0`` on the MDT's own timeline. Layout 1: log files belong to the slice
   named in them, base files count when their instant completed, a pending MDT compaction's slice is
   merged with the previous one (hoodie's :class:`~hoodie.format.file_group.fsview.FileSystemView` rules).
   Layout 2: a log file belongs to the slice with the largest base instant <= its deltacommit's
   completion time; logs of uncommitted deltacommits belong to no slice (``CompletionTimeQueryView``).
2. **Which log blocks** (``HoodieTableMetadataUtil.getValidInstantTimestamps`` and the log scanner
   ``AbstractHoodieLogRecordReader``): a data/delete block is read only if its instant is in the
   valid set (below) and not after the latest completed MDT instant; on table version 6 it must also
   be a completed instant of the MDT's commits timeline (or older than its start) and not inflight.
   ROLLBACK command blocks remove the earlier queued blocks of their target instant (and corrupt
   blocks). The valid set: every completed data-table instant; completed MDT deltacommits of the
   MDT's own operations (v6: 20-digit instants with an operation suffix 001-006 or an index-init
   suffix >= 010; 1.x: every completed MDT deltacommit whose instant is not pending on the data
   table); the instants undone by completed data-table rollbacks and restores after the earliest
   valid instant; completed MDT rollbacks and restores; completed MDT deltacommits starting with
   ``00000000000000`` (initialisation).
3. **Merging** (``HoodieMetadataPayload``): :mod:`hoodie.format.metadata.records` (base records
   first, then each log block's in log order).

hoodie adds two checks of its own, because Java would return a silently wrong listing in both
cases: the MDT must have an entry for every completed data-table write, clean (and, on v6, rollback)
after its initialisation (an MDT left behind by a writer that does not maintain it is refused), and
a corrupt log block is tolerated only when every valid deltacommit of the slice is still readable.
Every refusal is a :class:`MetadataTableError` naming the file or instant and the fix.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format import properties as P
from hoodie.format.hfile import HFileError, HFileReader
from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError
from hoodie.format.metadata.records import (
    ALL_PARTITIONS_KEY, FilesRecord, RecordDecoder, deleted_record, fold, partition_name,
)
from hoodie.format.metadata.timelines import layout_of, load_timeline, rolled_back_instants
from hoodie.format.storage import FileStatus, Storage
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.timeline.active import Timeline
from hoodie.format.log.logformat import BlockType, LogFormatError, read_log_file


METADATA_FOLDER = ".hoodie/metadata"
FILES_PARTITION = "files"
FILES_FILE_GROUP_PREFIX = "files-"
PARTITIONS_PROP = "hoodie.table.metadata.partitions"
PARTITIONS_INFLIGHT_PROP = "hoodie.table.metadata.partitions.inflight"
ENABLE_KEY = "hoodie.metadata.enable"
SOLO_COMMIT_TIMESTAMP = "00000000000000"  # HoodieTableMetadata.SOLO_COMMIT_TIMESTAMP
MILLIS_INSTANT_ID_LENGTH = 17
# HoodieTableMetadataUtil.OperationSuffix: compaction, clean, restore, indexer, log compaction, rollback.
OPERATION_SUFFIXES = frozenset({"001", "002", "003", "004", "005", "006"})
PARTITION_INITIALIZATION_TIME_SUFFIX = 10
# Data-table actions whose completion Java always mirrors in the MDT (at the same instant, possibly
# with a suffix). Rollbacks only on table version 6: 1.x adds an MDT rollback only when the failed
# commit had reached the MDT. Restores are left out (how they reach the MDT is unconfirmed).
_SYNCED_ACTIONS = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.CLEAN)
_COMMITS_ACTIONS = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION, I.LOG_COMPACTION)


class MetadataTableNotFoundError(MetadataTableError):
    """``hoodie.properties`` of the metadata table is missing although the data table's properties
    name metadata partitions. Java's readers then list storage (with a warning); so does the
    file-system view hook."""


def files_partition_available(props: dict[str, str]) -> bool:
    """Whether ``files`` is a fully initialised MDT partition (``hoodie.table.metadata.partitions``;
    Java's ``isFilesPartitionAvailable``)."""
    parts = {p.strip() for p in (props.get(PARTITIONS_PROP) or "").split(",") if p.strip()}
    return FILES_PARTITION in parts


@dataclass
class LogScan:
    """The blocks of the ``files`` slice's logs that survive the scan rules, plus what was skipped."""

    blocks: list[Any] = field(default_factory=list)
    skipped_invalid: list[tuple[str, str]] = field(default_factory=list)  # (log file, instant)
    rolled_back: int = 0
    corrupt: list[Any] = field(default_factory=list)  # corrupt regions no rollback removed
    seen_instants: set[str] = field(default_factory=set)  # instants of every readable data/delete block


@dataclass
class FilesSlice:
    """The latest merged file slice of the ``files`` partition (paths relative to the MDT root)."""

    base_file: Optional[str]
    log_files: list[str]
    base_instant: str


class MetadataTable:
    """The ``files`` partition of a data table's metadata table, validated against the data timeline.

    ``table`` is a :class:`~hoodie.format.table.HoodieTable`, a :class:`~hoodie.format.storage.Storage`
    rooted at the data table, or a base path (``storage_options`` as for ``Storage``). Tables of
    version 8 and 9 are accepted here (their MDTs are read with timeline layout 2) although hoodie
    refuses them as data tables.

    Nothing is read until asked; results are cached (make a new object to see new commits).

    Raises (from the accessors):
        MetadataTableNotFoundError: ``.hoodie/metadata/.hoodie/hoodie.properties`` is missing.
        MetadataTableError: anything else that would make the listing untrustworthy.
    """

    def __init__(self, table: Union["Any", Storage, str], storage_options: Optional[dict[str, Any]] = None) -> None:
        self._data_source: Optional[Any] = None  # a HoodieTable whose timeline snapshot is the data timeline
        if isinstance(table, str):
            self.data_storage = Storage(table, storage_options)
            self.data_props = self._read_props(self.data_storage, "data table")
        elif isinstance(table, Storage):
            self.data_storage = table
            self.data_props = self._read_props(self.data_storage, "data table")
        else:  # a HoodieTable: reuse its parsed properties and its timeline (a snapshot: one listing)
            self.data_storage = table.storage
            self.data_props = dict(table.props)
            self._data_source = table
        self.storage = self.data_storage.child(METADATA_FOLDER)
        self.table_version = int(self.data_props.get("hoodie.table.version") or "6")
        # Hudi 1.x keeps a tombstone deleted twice; 0.14/0.15 drop it (see records.combine).
        self.keep_repeated_tombstones = self.table_version >= 8
        self._props: Optional[dict[str, str]] = None
        self._timeline: Optional[Timeline] = None
        self._data_timeline: Optional[Timeline] = None
        self._records: Optional[dict[str, FilesRecord]] = None
        self.scan: Optional[LogScan] = None

    # -- loading -------------------------------------------------------------------------------
    @staticmethod
    def _read_props(storage: Storage, what: str) -> dict[str, str]:
        rel = ".hoodie/hoodie.properties"
        try:
            return P.parse_properties(storage.read_bytes(rel).decode("utf-8", errors="replace"))
        except FileNotFoundError:
            if what == "metadata table":
                raise MetadataTableNotFoundError(
                    f"{storage.uri(rel)} is missing: the data table's {PARTITIONS_PROP} names a metadata table "
                    f"that is not there. {LIST_THROUGH_STORAGE}, or let Java Hudi rebuild it "
                    f"(a write with hoodie.metadata.enable=true)") from None
            raise MetadataTableError(f"{storage.uri(rel)} is missing: {storage.uri()} is not a Hudi table") from None

    @property
    def props(self) -> dict[str, str]:
        """The MDT's own ``hoodie.properties``."""
        if self._props is None:
            props = self._read_props(self.storage, "metadata table")
            fmt = (props.get("hoodie.table.base.file.format") or "HFILE").upper()
            typ = (props.get("hoodie.table.type") or "").upper()
            if fmt != "HFILE" or typ != "MERGE_ON_READ":
                raise MetadataTableError(
                    f"{self.storage.uri('.hoodie/hoodie.properties')} says table type {typ or '?'} with base file "
                    f"format {fmt}; a Hudi metadata table is MERGE_ON_READ with HFILE base files. "
                    f"{LIST_THROUGH_STORAGE}")
            self._props = props
        return self._props

    @property
    def timeline(self) -> Timeline:
        """The MDT's active timeline."""
        if self._timeline is None:
            self._timeline = load_timeline(self.storage, self.props)
        return self._timeline

    @property
    def data_timeline(self) -> Timeline:
        """The data table's active timeline: the given :class:`~hoodie.format.table.HoodieTable`'s snapshot,
        else listed once."""
        if self._data_timeline is None:
            self._data_timeline = (self._data_source.timeline if self._data_source is not None
                                   else load_timeline(self.data_storage, self.data_props))
        return self._data_timeline

    # -- rule 2: valid instants ----------------------------------------------------------------
    def valid_instants(self) -> set[str]:
        """``getValidInstantTimestamps``: the instants whose MDT log blocks may be read."""
        data = self.data_timeline
        mdt = self.timeline
        valid = {i.timestamp for i in data.completed()}
        mdt_completed = mdt.completed()
        if self.table_version >= 8:
            data_pending = {i.timestamp for i in data.pending()}
            valid |= {i.timestamp for i in mdt_completed
                      if i.action == I.DELTA_COMMIT and i.timestamp not in data_pending}
        else:
            valid |= {i.timestamp for i in mdt_completed if i.action == I.DELTA_COMMIT and _is_mdt_operation(i.timestamp)}
        earliest = min(valid) if valid else SOLO_COMMIT_TIMESTAMP
        for inst in data.completed().by_actions(I.ROLLBACK, I.RESTORE):
            if inst.timestamp > earliest:
                valid.update(rolled_back_instants(data, inst))
        valid |= {i.timestamp for i in mdt_completed.by_actions(I.ROLLBACK, I.RESTORE)}
        valid |= {i.timestamp for i in mdt_completed
                  if i.action == I.DELTA_COMMIT and i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP)}
        return valid

    def latest_instant(self) -> Optional[str]:
        """The latest completed MDT instant (blocks after it are not read)."""
        last = self.timeline.completed().last()
        return last.timestamp if last is not None else None

    # -- hoodie's staleness check --------------------------------------------------------------
    def check_in_sync(self) -> None:
        """Refuse an MDT that misses completed data-table instants (see the module doc).

        A data instant needs an MDT entry when it is a completed commit, deltacommit, replacecommit or
        clean (or rollback, on table version 6) that is newer than the MDT's initialisation and not
        older than the MDT's active timeline; the entry is any completed MDT instant at that time
        (possibly with an operation suffix).

        Raises:
            MetadataTableError: naming the first missing instants and the fix.
        """
        mdt_done = self.timeline.completed()
        if not mdt_done:
            raise MetadataTableError(
                f"{self.storage.uri()} has no completed instant: the metadata table was never initialised. "
                f"{LIST_THROUGH_STORAGE}")
        present = {i.timestamp for i in mdt_done}
        present_prefix = {t[:MILLIS_INSTANT_ID_LENGTH] for t in present}
        first_active = min(t[:MILLIS_INSTANT_ID_LENGTH] for t in present)
        inits = [i for i in mdt_done if i.action == I.DELTA_COMMIT and _is_init_instant(i.timestamp)]
        actions = _SYNCED_ACTIONS + ((I.ROLLBACK,) if self.table_version < 8 else ())
        missing: list[str] = []
        for d in self.data_timeline.completed().by_actions(*actions):
            ts = d.timestamp
            if ts < first_active or not _after_init(d, inits):
                continue
            if ts not in present and ts not in present_prefix:
                missing.append(f"{ts}.{d.action}")
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise MetadataTableError(
                f"the metadata table {self.storage.uri()} is behind the data timeline: completed instant(s) {shown} "
                f"have no entry in it (written by a writer that did not update it), so listing through it would "
                f"miss their files. {LIST_THROUGH_STORAGE}; Java Hudi rebuilds the metadata table when it is "
                f"deleted (remove {self.storage.uri()} and clear {PARTITIONS_PROP} in .hoodie/hoodie.properties)")

    # -- rule 1: the file slice ----------------------------------------------------------------
    def files_slice(self, timeline: Optional[Timeline] = None, listing: Optional[list[FileStatus]] = None
                    ) -> FilesSlice:
        """The latest merged file slice of ``files-0000-0``.

        ``timeline`` (the MDT's, timeline layout 1) and ``listing`` (of the ``files`` folder) are what the
        caller already listed: the metadata-table writer passes its own, so that recording one commit does
        not list the same folders again.

        Raises:
            MetadataTableError: the ``files`` folder is missing or empty, or holds other file groups.
        """
        if listing is None:
            listing = self.storage.list_dir(FILES_PARTITION)
        names = [s for s in listing if not s.is_dir]
        groups: set[str] = set()
        for s in names:
            if N.is_base_file(s.name):
                groups.add(N.parse_base_file(s.name).file_id)
            elif N.is_log_file(s.name):
                groups.add(N.parse_log_file(s.name).file_id)
        if not groups:
            raise MetadataTableError(
                f"{self.storage.uri(FILES_PARTITION)} holds no base or log file, but {PARTITIONS_PROP} of the data "
                f"table says the files partition is initialised; listing through it would show an empty table. "
                f"{LIST_THROUGH_STORAGE}")
        if len(groups) != 1:
            raise MetadataTableError(
                f"{self.storage.uri(FILES_PARTITION)} holds file groups {sorted(groups)}; the files partition has "
                f"exactly one. {LIST_THROUGH_STORAGE}")
        if self.layout == 1:
            return self._slice_layout1(timeline, names)
        return self._slice_layout2(names)

    @property
    def layout(self) -> int:
        """The MDT's timeline layout (1 or 2), from its properties (no listing)."""
        if self._timeline is not None:
            return self._timeline.layout
        return layout_of(self.storage, self.props)

    def _slice_layout1(self, timeline: Optional[Timeline], names: list[FileStatus]) -> FilesSlice:
        view = FileSystemView(self.storage, timeline if timeline is not None else Timeline.load(self.storage),
                              listing={FILES_PARTITION: list(names)})
        slices = view.latest_file_slices(FILES_PARTITION)
        if len(slices) != 1:
            raise MetadataTableError(
                f"{self.storage.uri(FILES_PARTITION)} has no committed file slice (no completed metadata instant "
                f"wrote its files). {LIST_THROUGH_STORAGE}")
        sl = slices[0]
        # The log files are put in Hudi's LogFileComparator order (base instant, version, write
        # token) here rather than taken in the view's order: a merged slice (a pending MDT compaction
        # read with the slice before it) must apply the older slice's records first, or a later
        # tombstone is applied before the records it removes and a deleted partition comes back
        # (issue 31 item 13).
        logs = sorted(sl.log_files, key=lambda lf: lf.parsed.sort_key())
        return FilesSlice(sl.base_file.path if sl.base_file else None, [lf.path for lf in logs], sl.base_instant)

    def _slice_layout2(self, names: Sequence[Any], partition: str = FILES_PARTITION) -> FilesSlice:
        tl = self.timeline
        completed = {i.timestamp: i for i in tl.completed().by_actions(*_COMMITS_ACTIONS)}
        first_done = tl.completed().first()
        first = first_done.timestamp if first_done is not None else None
        pending_compactions = {i.timestamp for i in tl.pending().by_actions(I.COMPACTION)}

        def archived(ts: str) -> bool:  # older than the active timeline: completed long ago
            return first is not None and ts < first and ts not in {i.timestamp for i in tl.instants}

        bases: dict[str, str] = {}
        for s in names:
            if N.is_base_file(s.name):
                b = N.parse_base_file(s.name)
                if b.instant in completed or archived(b.instant):
                    bases[b.instant] = s.path
        keys = sorted(set(bases) | pending_compactions)
        slice_logs: dict[str, list[Any]] = {}
        for s in names:
            if not N.is_log_file(s.name):
                continue
            lf = N.parse_log_file(s.name)
            if lf.suffix or lf.kind != "log":
                continue
            inst = completed.get(lf.base_instant)
            if inst is not None and inst.action == I.DELTA_COMMIT:
                when = inst.completion or inst.timestamp
            elif archived(lf.base_instant):
                when = lf.base_instant
            else:
                continue  # an uncommitted deltacommit's log belongs to no slice
            owner = max((k for k in keys if k <= when), default=None)
            if owner is None:
                owner = lf.base_instant
                keys = sorted(set(keys) | {owner})
            slice_logs.setdefault(owner, []).append((lf, s.path))
        if not keys:
            raise MetadataTableError(
                f"{self.storage.uri(partition)} has no committed file slice. {LIST_THROUGH_STORAGE}")
        latest = keys[-1]
        logs = sorted(slice_logs.get(latest, []), key=lambda x: x[0].sort_key())
        base = bases.get(latest)
        base_instant = latest
        if latest in pending_compactions and len(keys) > 1:
            # A pending compaction's slice is read merged with the previous one.
            prev = keys[-2]
            logs = sorted(slice_logs.get(prev, []), key=lambda x: x[0].sort_key()) + logs
            base, base_instant = bases.get(prev), prev
        return FilesSlice(base, [p for _, p in logs], base_instant)

    def partition_slices(self, partition: str) -> list[FilesSlice]:
        """The latest merged slice of every file group of an index partition (``column_stats``...),
        chosen by the same rules as the ``files`` slice.

        Raises:
            MetadataTableError: the partition's folder holds no file group.
        """
        names = [s for s in self.storage.list_dir(partition) if not s.is_dir]
        groups: dict[str, list[Any]] = {}
        for s in names:
            if N.is_base_file(s.name):
                groups.setdefault(N.parse_base_file(s.name).file_id, []).append(s)
            elif N.is_log_file(s.name):
                groups.setdefault(N.parse_log_file(s.name).file_id, []).append(s)
        if not groups:
            raise MetadataTableError(
                f"{self.storage.uri(partition)} holds no base or log file, but {PARTITIONS_PROP} of the data table "
                f"says the {partition} partition is initialised. {LIST_THROUGH_STORAGE}")
        if self.timeline.layout == 1:
            view = FileSystemView(self.storage, Timeline.load(self.storage))
            return [FilesSlice(sl.base_file.path if sl.base_file else None, [lf.path for lf in sl.log_files],
                               sl.base_instant) for sl in view.latest_file_slices(partition)]
        return [self._slice_layout2(members, partition) for _, members in sorted(groups.items())]

    def index_blocks(self, partition: str) -> list[tuple[FilesSlice, Any]]:
        """(slice, surviving log scan) of every file group of ``partition``, validated as the ``files``
        slice is (stale MDT, valid instants, corrupt blocks)."""
        self.check_in_sync()
        out = []
        for sl in self.partition_slices(partition):
            scan = self._scan_logs(sl.log_files)
            self._check_corrupt(sl, scan)
            out.append((sl, scan))
        return out

    # -- scanning and merging --------------------------------------------------------------------
    def _scan_logs(self, logs: Sequence[str]) -> LogScan:
        valid = self.valid_instants()
        latest = self.latest_instant()
        tl = self.timeline
        check_mdt_state = self.table_version < 8
        commits = tl.by_actions(*_COMMITS_ACTIONS)
        completed = {i.timestamp for i in commits if i.is_completed}
        inflight = {i.timestamp for i in commits if not i.is_completed}
        first_completed = min(completed) if completed else None
        res = LogScan()
        queue: list[Any] = []
        for path in logs:
            for block in read_log_file(self.storage, path, warn=False):
                if block.block_type == BlockType.CORRUPT:
                    queue.append(block)
                    continue
                inst = block.instant_time or ""
                if latest is not None and inst > latest:
                    res.skipped_invalid.append((path, inst))
                    continue
                if block.block_type == BlockType.COMMAND:
                    if block.is_rollback:
                        res.rolled_back += 1
                        target = block.target_instant_time
                        queue = [b for b in queue
                                 if b.block_type != BlockType.CORRUPT and b.instant_time != target]
                    continue
                if block.block_type not in (BlockType.HFILE_DATA, BlockType.DELETE):
                    raise MetadataTableError(
                        f"{self.storage.uri(path)} (block at offset {block.offset}): a {block.block_type.name} block "
                        f"in the metadata table's files partition, which holds HFile data blocks and delete "
                        f"blocks only. {LIST_THROUGH_STORAGE}")
                res.seen_instants.add(inst)
                if check_mdt_state and (inst in inflight or not (
                        inst in completed or (first_completed is not None and inst < first_completed))):
                    res.skipped_invalid.append((path, inst))
                    continue
                if inst not in valid:
                    res.skipped_invalid.append((path, inst))
                    continue
                queue.append(block)
        res.blocks = [b for b in queue if b.block_type != BlockType.CORRUPT]
        res.corrupt = [b for b in queue if b.block_type == BlockType.CORRUPT]
        return res

    def _check_corrupt(self, sl: FilesSlice, scan: LogScan) -> None:
        """A corrupt block is tolerated (skipped, as Hudi does) only when every valid data-table
        deltacommit that belongs to the slice still has a readable block; else it may have held
        that commit's entries, and the listing would silently miss them."""
        if not scan.corrupt:
            return
        where = ", ".join(f"{self.storage.uri(b.log_file)} at offset {b.offset} ({b.size} bytes)"
                          for b in scan.corrupt[:3])
        data_done = {i.timestamp for i in self.data_timeline.completed()}
        # Deltacommits of data instants that wrote into this slice: after its base instant (layout 1),
        # or completed after it (layout 2 slices logs by completion time).
        expected = {i.timestamp for i in self.timeline.completed()
                    if i.action == I.DELTA_COMMIT and i.timestamp in data_done
                    and (i.completion or i.timestamp) > sl.base_instant}
        lost = sorted(expected - scan.seen_instants)
        if lost:
            raise MetadataTableError(
                f"the metadata table's log has unreadable data ({where}) and completed instant(s) "
                f"{', '.join(lost[:5])} have no readable entry in it: the listing would miss their files. "
                f"{LIST_THROUGH_STORAGE}; restore the log file from a backup, or delete {self.storage.uri()} "
                f"and clear {PARTITIONS_PROP} so that Java Hudi rebuilds it")
        warnings.warn(
            f"skipped corrupt metadata-table log data ({where}): every committed instant's entries are readable, "
            "so it is the remains of a failed write (Hudi skips it too)", stacklevel=3)

    def _block_records(self, block: Any) -> list[FilesRecord]:
        where = f"{self.storage.uri(block.log_file)} (block at offset {block.offset})"
        if block.block_type == BlockType.DELETE:
            try:
                keys = block.delete_records().column("record_key").to_pylist()
            except LogFormatError as e:
                raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None
            return [deleted_record(str(k)) for k in keys]
        content = block.read_content()
        try:
            reader = HFileReader(content, name=where)
            schema = block.schema_json or reader.schema
            if not schema:
                raise MetadataTableError(f"{where}: HFile data block without a schema. {LIST_THROUGH_STORAGE}")
            dec = RecordDecoder(schema, where)
            return [dec.decode(k, v) for k, v in reader.items()]
        except HFileError as e:
            raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None

    def _base_records(self, rel: str) -> dict[str, FilesRecord]:
        uri = self.storage.uri(rel)
        try:
            with HFileReader.from_storage(self.storage, rel) as reader:
                if not reader.schema:
                    raise MetadataTableError(f"HFile {uri} has no 'schema' file info entry. {LIST_THROUGH_STORAGE}")
                dec = RecordDecoder(reader.schema, uri)
                out: dict[str, FilesRecord] = {}
                for k, v in reader.items():
                    rec = dec.decode(k, v)
                    out[rec.key] = rec  # HBase files never repeat a key; the last one wins if they do
                return out
        except HFileError as e:
            raise MetadataTableError(f"{e}. {LIST_THROUGH_STORAGE}") from None

    def records(self) -> dict[str, FilesRecord]:
        """Every merged record of the ``files`` partition (key -> record), validated (cached)."""
        if self._records is None:
            self.check_in_sync()
            sl = self.files_slice()
            base = self._base_records(sl.base_file) if sl.base_file else {}
            scan = self._scan_logs(sl.log_files)
            self._check_corrupt(sl, scan)
            self._records = fold(base, (self._block_records(b) for b in scan.blocks),
                                 keep_repeated_tombstones=self.keep_repeated_tombstones,
                                 where=self.storage.uri(FILES_PARTITION))
            self.scan = scan
        return self._records

    # -- the listing ---------------------------------------------------------------------------
    def partitions(self) -> list[str]:
        """Data partition paths (``""`` for a non-partitioned table), from ``__all_partitions__``."""
        rec = self.records().get(ALL_PARTITIONS_KEY)
        return sorted(partition_name(p) for p in (rec.live() if rec else {}))

    def files(self, partition: str) -> dict[str, int]:
        """File name -> size of one data partition (empty when the MDT has no record for it)."""
        key = partition if partition else "."
        rec = self.records().get(key)
        return dict(sorted(rec.live().items())) if rec else {}

    def listing(self) -> dict[str, dict[str, int]]:
        """Every partition of :meth:`partitions` -> :meth:`files`."""
        return {p: self.files(p) for p in self.partitions()}


def _is_mdt_operation(ts: str) -> bool:
    """``HoodieTableMetadataUtil.isValidInstant`` (0.14/0.15): a 20-digit instant whose suffix is an
    operation suffix (001-006) or an index-initialisation suffix (>= 010)."""
    if len(ts) != MILLIS_INSTANT_ID_LENGTH + 3:
        return False
    suffix = ts[-3:]
    return suffix in OPERATION_SUFFIXES or suffix >= f"{PARTITION_INITIALIZATION_TIME_SUFFIX:03d}"


def _is_init_instant(ts: str) -> bool:
    """An MDT partition-initialisation deltacommit: v8/v9 ``000...0N`` (17 digits, SOLO prefix), v6
    ``<t>010``-style (index-init suffix; ``t`` may be the 14-digit SOLO time)."""
    if ts.startswith(SOLO_COMMIT_TIMESTAMP):
        return True
    return len(ts) == MILLIS_INSTANT_ID_LENGTH + 3 and ts[-3:] >= f"{PARTITION_INITIALIZATION_TIME_SUFFIX:03d}"


def _after_init(d: I.Instant, inits: Sequence[I.Instant]) -> bool:
    """Whether data instant ``d`` came after the MDT's initialisation, i.e. is not in its bootstrap
    listing. Layout 2 compares completion times (the init completed before ``d`` did); layout 1
    compares the instant with the init instant without its suffix (Java bootstraps every instant up
    to the latest completed one, ``t`` of ``<t>010``)."""
    if not inits:
        return True
    init = inits[0]
    if init.completion is not None and d.completion is not None:
        return d.completion > init.completion
    boundary = init.timestamp[:-3] if len(init.timestamp) > MILLIS_INSTANT_ID_LENGTH or init.timestamp.startswith(
        SOLO_COMMIT_TIMESTAMP) else init.timestamp
    return d.timestamp > boundary


__all__ = [
    "MetadataTable", "MetadataTableNotFoundError", "FilesSlice", "LogScan", "files_partition_available",
    "METADATA_FOLDER", "FILES_PARTITION", "PARTITIONS_PROP", "ENABLE_KEY",
]
