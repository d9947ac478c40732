"""Maintaining the metadata table's ``files`` partition (table version 6), the way Hudi 0.14/0.15 do.

Every completed data-table instant is first written to the metadata table (MDT) as a deltacommit at
the same instant time (:meth:`MetadataWriter.update`, called by the commit path right before the
data instant's completed file is written); the data commit is what makes it visible to readers
(they read only blocks of completed data instants). Reference ``metadata-table.md`` §3, §5, §6 and
Java's ``HoodieBackedTableMetadataWriter``:

* a deltacommit writes one new log file in the current slice of ``files-0000-0`` holding one
  ``HFILE_DATA`` block (a new file rather than an append: object stores cannot append, and Java
  reads either);
* before writing, the MDT's own table services run when due: compaction after
  ``hoodie.metadata.compact.max.delta.commits`` deltacommits (instant ``<latest deltacommit>001``,
  only when no data instant up to that deltacommit is pending), then a clean (``...002``) that keeps
  the two latest file slices;
* a data rollback writes its deltacommit, then rolls back the failed instant's MDT deltacommit at
  ``<rollback>006`` with a ROLLBACK command block (the failed instant's blocks would otherwise
  become valid, since readers treat the instants rolled back on the data table as valid);
* a re-attempted instant (a resumed rollback or clean, a retried compaction) whose MDT deltacommit
  completed in an earlier attempt: the old completed file is removed and a new block written at the
  same instant, as Java does;
* interrupted MDT actions are repaired first: a pending MDT compaction is rolled back, a pending MDT
  clean or rollback is finished.

Everything runs under the data table's lock, so the MDT never has two writers.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from hoodie.faults import fault_point
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.log import logformat as L
from hoodie.format.metadata import encoding as MW
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.records import FilesRecord
from hoodie.format.metadata.table import (
    FILES_PARTITION, METADATA_FOLDER, PARTITIONS_INFLIGHT_PROP, PARTITIONS_PROP, SOLO_COMMIT_TIMESTAMP,
    MetadataTable,
)
from hoodie.format.storage import FileStatus, Storage
from hoodie.format.table import HoodieTable, update_table_properties
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.active import Timeline
from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.format.timeline.instant import Instant, InstantGenerator, State
from hoodie.services.commit import commit
from hoodie.services.metadata.column_stats import (
    PARTITION as COLUMN_STATS, ColumnStatsWriter, column_stats_listed, mark_listed,
)
from hoodie.services.metadata.config import (
    PARTITION_STATS_ENABLE, RECORD_INDEX_ENABLE, column_stats_option, index_option, max_delta_commits,
)
from hoodie.services.metadata.indexes import (
    PARTITION_STATS, RECORD_INDEX, AfterView, PartitionStatsWriter, RecordIndexUnusable, RecordIndexWriter,
    file_stats_after,
)
from hoodie.services.metadata.dropping import (  # noqa: F401  (re-exported: callers import them from here)
    INDEXES, _warned, drop_index_partition, drop_index_partitions, drop_metadata_table, metadata_table_state,
    warn_once,
)
from hoodie.services.metadata.action_records import action_records
from hoodie.services.metadata.index_compaction import COMPACTED, IndexCompaction
from hoodie.services.metadata.storage_listing import storage_listing

log = logging.getLogger("hoodie.services.metadata")

COMPACTION_SUFFIX = "001"
CLEAN_SUFFIX = "002"
ROLLBACK_SUFFIX = "006"
INIT_SUFFIX = "010"
V8_INIT_INSTANT = "0" * 17
TOKEN = "0-0-0"
# extraMetadata marker of a TTL replacecommit whose replaced files are moved to the stash.
TTL_STASH_KEY = "hoodie.partition.ttl.stash"
# Metadata-table partitions hoodie maintains; the others (indexes) are dropped on write.
MAINTAINED = (FILES_PARTITION, COLUMN_STATS, PARTITION_STATS, RECORD_INDEX)
SLICES_RETAINED = 2


@dataclass
class UpdateResult:
    """What one :meth:`MetadataWriter.update` wrote: the deltacommit, and any compaction, clean or
    rollback of the metadata table."""

    instant: str
    records: int
    log_file: str
    compaction: Optional[str] = None
    clean: Optional[str] = None
    rollbacks: tuple[str, ...] = ()


def _partitions_prop(props: Mapping[str, str], key: str = PARTITIONS_PROP) -> list[str]:
    return [p.strip() for p in (props.get(key) or "").split(",") if p.strip()]


class MetadataWriter:
    """Writes the ``files`` partition of ``table``'s metadata table, in the table's version: 6 (layout 1,
    instants of its own services by suffix, MOR rollback by command block) or 8/9 (layout 2, log files
    named by their deltacommit, fresh instants for its services, rollback by deleting log files).

    ``options`` are the operation's options (``hoodie.metadata.compact.max.delta.commits``).
    """

    def __init__(self, table: HoodieTable, options: Optional[Mapping[str, Any]] = None) -> None:
        version = table.table_version
        if version not in (6, 8, 9):
            raise MetadataTableError(
                f"{table.base_path} is table version {version}; hoodie maintains metadata tables of table versions "
                "6, 8 and 9")
        self.version = version
        self.layout = 2 if version >= 8 else 1
        self.table = table
        self.data = table.storage
        self.storage: Storage = table.storage.child(METADATA_FOLDER)
        self.max_delta_commits = max_delta_commits(options)
        self.col_stats = ColumnStatsWriter(table, self.storage, version, options)
        self.col_stats_wanted = column_stats_option(options)
        self.part_stats = PartitionStatsWriter(table, self.storage, version, options)
        self.part_stats_wanted = index_option(options, PARTITION_STATS_ENABLE)
        self.rec_index = RecordIndexWriter(table, self.storage, version, options)
        self.rec_index_wanted = index_option(options, RECORD_INDEX_ENABLE)
        self._pending: Optional[tuple[str, str, bytes]] = None  # (instant, action, content) being recorded

    # -- state -----------------------------------------------------------------------------------
    def _use(self, table: HoodieTable) -> None:
        """Go on with ``table``, the new snapshot a change of the data table's properties returned (the
        transaction takes it from :attr:`table` after the update)."""
        self.table = table
        for w in (self.col_stats, self.part_stats, self.rec_index):
            w.table = table

    def _set_properties(self, updates: Mapping[str, Optional[str]]) -> None:
        """Write ``updates`` to the data table's ``hoodie.properties`` and go on with the new snapshot."""
        self._use(update_table_properties(self.table, updates))

    def timeline(self) -> Timeline:
        """The MDT's active timeline, freshly listed."""
        return Timeline.load(self.storage, self.layout)

    def _data_timeline(self) -> Timeline:
        """The data table's timeline: the snapshot of :attr:`table` (the transaction's, with the instant
        being recorded in it), not a listing of its own."""
        return self.table.timeline

    def _latest_slice(self, tl: Optional[Timeline] = None, listing: Optional[list[FileStatus]] = None
                      ) -> tuple[str, Optional[str], list[str]]:
        """(base instant, base file name, log file names) of the latest slice of ``files-0000-0``,
        as readers pick it (from the MDT timeline ``tl`` and the ``files`` listing when given)."""
        sl = MetadataTable(self.table).files_slice(tl, listing)

        def name(path: str) -> str:
            return path.rsplit("/", 1)[-1]

        return sl.base_instant, name(sl.base_file) if sl.base_file else None, [name(p) for p in sl.log_files]

    def _file_id(self) -> str:
        """The ``files`` file group's id (``files-0000-0``, or an older writer's ``files-0000``)."""
        return self._next_log(None)[0]

    def _next_log(self, base_instant: Optional[str], listing: Optional[list[FileStatus]] = None
                  ) -> tuple[str, int]:
        """(file id, next log version in the slice at ``base_instant``) from one listing of ``files/``
        (``listing`` when the caller has it)."""
        fid, top = None, 0
        for s in self.storage.list_dir(FILES_PARTITION) if listing is None else listing:
            if N.is_base_file(s.name):
                fid = fid or N.parse_base_file(s.name).file_id
            elif N.is_log_file(s.name):
                lp = N.parse_log_file(s.name)
                fid = fid or lp.file_id
                if lp.base_instant == base_instant and lp.file_id == fid:
                    top = max(top, lp.version)
        return fid or MW.FILES_FILE_ID, top + 1

    def _fresh_instant(self, tl: Timeline) -> str:
        last = max([max(i.timestamp, i.completion or "") for i in tl]
                   + [max(i.timestamp, i.completion or "") for i in self._data_timeline()] or [""])
        return InstantGenerator(self.table.timeline_timezone).now(floor=last[:17] or None)

    # -- the update of one data instant --------------------------------------------------------
    def update(self, inflight: Instant, content: bytes) -> UpdateResult:
        """Record the data instant ``inflight`` (about to complete with ``content``) in the MDT.

        Raises:
            MetadataTableError: the MDT cannot be updated (the data commit must not complete then).
        """
        ts = inflight.timestamp
        action = I.COMMIT if inflight.action == I.COMPACTION else inflight.action
        if action == I.SAVEPOINT:
            # A savepoint changes no file: Hudi writes nothing to the metadata table for it.
            return UpdateResult(ts, 0, "")
        if action in (I.ROLLBACK, I.RESTORE) and self.layout == 2:
            return self._rollback_v8(ts, _rolled_back(action, content))
        records = self._records(action, ts, content)
        tl = self._recover()
        done = tl.get(ts)
        if done is not None and done.action == I.DELTA_COMMIT and done.is_completed:
            # A re-attempt of an instant recorded by an earlier attempt (Java: delete the completed
            # file, write again at the same instant; both blocks are read, the later one last).
            self.storage.delete(T.instant_file_path(self.storage, done))
            tl = self.timeline()
        compaction = clean = None
        if tl.get(ts) is None:
            compaction, clean = self._maybe_compact(tl, ts)
            if compaction or clean:
                tl = self.timeline()
        if self.col_stats_wanted and not column_stats_listed(self.table.props):
            self.bootstrap_column_stats(skip=ts)
            tl = self.timeline()
        if self._create_wanted_indexes(skip=ts):
            tl = self.timeline()
        self._pending = (ts, inflight.action, content)
        log_file = self._deltacommit(tl, ts, records, "UPSERT_PREPPED")
        rollbacks: list[str] = []
        if action in (I.ROLLBACK, I.RESTORE):
            # The rolled-back instants' own deltacommits go too (a restore's: newest first).
            targets = _rolled_back(action, content)
            for n, target in enumerate(targets):
                rb = self._rollback_deltacommit(target, f"{ts}{ROLLBACK_SUFFIX}" if n == 0 else None)
                if rb:
                    rollbacks.append(rb)
        return UpdateResult(ts, len(records), log_file, compaction, clean, tuple(rollbacks))

    def _size_of(self, rel: str) -> int:
        return self.data.size(rel)

    def _records(self, action: str, ts: str, content: bytes) -> list[FilesRecord]:
        try:
            records = action_records(action, content, self._size_of)
        except (ValueError, KeyError) as e:
            raise MetadataTableError(f"cannot record {ts}.{action} in the metadata table: {e}") from e
        extra = self._stash_records(action, content)
        return _merge(records + extra)

    def _stash_records(self, action: str, content: bytes) -> list[FilesRecord]:
        """Files hoodie moves out of (TTL stash) or back into (its rollback) partitions beside the
        write stats: tombstones for a stashing TTL replacecommit, entries for its rollback."""
        if action == I.REPLACE_COMMIT:
            meta = CommitMetadata.from_json_bytes(content)
            if meta.extra_metadata.get(TTL_STASH_KEY) != "true":
                return []
            out = []
            for part, fids in (meta.partition_to_replace_file_ids or {}).items():
                names = self._group_files(part, fids)
                out.append(MW.file_list_record(part, {}, names))
            return out
        if action in (I.ROLLBACK, I.RESTORE):
            out = []
            tl = self._data_timeline()
            for target in _rolled_back(action, content):
                inst = tl.get(target)
                if inst is None or not inst.is_completed or inst.action != I.REPLACE_COMMIT:
                    continue
                meta = tl.commit_metadata(inst)
                if meta.extra_metadata.get(TTL_STASH_KEY) != "true":
                    continue
                for part, fids in (meta.partition_to_replace_file_ids or {}).items():
                    sizes = {n: self.data.size(f"{part}/{n}" if part else n) for n in self._group_files(part, fids)}
                    out.append(MW.file_list_record(part, sizes))
                    out.append(MW.partition_list_record([part]))
            return out
        return []

    def _group_files(self, partition: str, file_ids: Iterable[str]) -> list[str]:
        fids = set(file_ids)
        names = []
        for s in self.data.list_dir(partition):
            if s.is_dir:
                continue
            if N.is_base_file(s.name) and N.parse_base_file(s.name).file_id in fids:
                names.append(s.name)
            elif N.is_log_file(s.name) and N.parse_log_file(s.name).file_id in fids:
                names.append(s.name)
        return names

    # -- deltacommit -----------------------------------------------------------------------------
    def _deltacommit(self, tl: Timeline, ts: str, records: list[FilesRecord], operation: str) -> str:
        """One MDT deltacommit at ``ts``: requested, inflight, a new log file, completed."""
        existing = tl.get(ts)
        if existing is None:
            req = T.create_requested(self.storage, ts, I.DELTA_COMMIT)
            inflight = T.transition_to_inflight(self.storage, req)
        elif existing.is_requested:
            inflight = T.transition_to_inflight(self.storage, existing)
        else:
            inflight = existing
        files = self.storage.list_dir(FILES_PARTITION)
        base_instant, base_name, _ = self._latest_slice(tl, files)  # also checks the files partition is sound
        if self.layout == 2:
            # 1.x: a new log file named by this deltacommit; the slice follows from its completion time.
            base_instant, base_name = ts, None
        fid, version = self._next_log(base_instant, files)
        name = N.log_file_name(fid, base_instant, version, TOKEN)
        rel = f"{FILES_PARTITION}/{name}"
        size = L.write_log_file(self.storage, rel, [MW.hfile_data_block(records, ts, self.version)])
        fault_point("metadata.deltacommit.after_log")
        meta = CommitMetadata(operation_type=operation, extra_metadata={"schema": MW.schema_json(self.version)})
        meta.add_write_stat(FILES_PARTITION, WriteStat(
            file_id=fid, path=rel, partition_path=FILES_PARTITION, prev_commit=base_instant,
            num_writes=len(records), num_update_writes=len(records), total_write_bytes=size, file_size_in_bytes=size,
            total_log_blocks=1, is_delta=True, log_version=version, base_file=base_name or "", log_files=[name]))
        new_stats = []
        if column_stats_listed(self.table.props):
            new_stats = self.col_stats.records(records, ts)
            for part, stat in self.col_stats.write(new_stats, ts):
                meta.add_write_stat(part, stat)
            fault_point("metadata.column_stats.after_log")
        for part, stat in self._index_writes(records, new_stats, ts):
            meta.add_write_stat(part, stat)
        commit(self.storage, inflight, meta)
        fault_point("metadata.after_deltacommit")
        return rel

    def _index_writes(self, records: list[FilesRecord], new_stats: list[Any], ts: str) -> list[tuple[str, WriteStat]]:
        """partition_stats and record_index changes of the instant being recorded (module
        :mod:`hoodie.services.metadata.indexes`)."""
        listed = _partitions_prop(self.table.props)
        if self._pending is None or self._pending[0] != ts or not ({PARTITION_STATS, RECORD_INDEX} & set(listed)):
            return []
        _, action, content = self._pending
        if action == I.CLEAN:
            # A clean deletes older slices only: the latest slices, which both indexes describe, stay
            # (a partition a TTL run emptied lost its statistics at that replacecommit).
            return []
        action = I.COMMIT if action == I.COMPACTION and self.layout == 1 else action
        after = AfterView(self.table, ts, action, content)
        out: list[tuple[str, WriteStat]] = []
        if PARTITION_STATS in listed:
            stats = self.part_stats.records(after, records, file_stats_after(self.table, new_stats))
            out += self.part_stats.write(stats, ts)
        if RECORD_INDEX in listed:
            try:
                puts, deletes = self.rec_index.changes(after, records)
            except RecordIndexUnusable as e:
                if self.rec_index_wanted:
                    raise
                # Kept only because the table had one (a Java writer's): the table's keys are not unique
                # (or not stored), so no record index can be right for it; it goes, as an index hoodie
                # cannot keep does.
                self._use(drop_index_partition(self.table, RECORD_INDEX))
                warn_once(self.table, "record_index", f"dropped the record index: {e}")
            else:
                out += self.rec_index.write(puts, deletes, ts)
        if out:
            fault_point("metadata.indexes.after_log")
        return out

    def _create_wanted_indexes(self, skip: Optional[str] = None) -> bool:
        """Create the record index and partition stats the options ask for and the table lacks;
        returns whether any was created."""
        listed = set(_partitions_prop(self.table.props))
        made = False
        if self.rec_index_wanted and RECORD_INDEX not in listed:
            self.bootstrap_index(RECORD_INDEX)
            made = True
        if self.part_stats_wanted and PARTITION_STATS not in listed and self._partition_stats_possible(warn=True):
            self.bootstrap_index(PARTITION_STATS)
            made = True
        return made

    def _partition_stats_possible(self, warn: bool) -> bool:
        why = None
        if self.version < 8:
            why = "table version 6 has no partition_stats (Hudi 1.x's)"
        elif not self.table.is_partitioned:
            why = "the table is not partitioned"
        elif not column_stats_listed(self.table.props):
            why = ("partition_stats is built from column_stats, which the table lacks "
                   "(hoodie.metadata.index.column.stats.enable=true creates it)")
        if why is not None and warn:
            warn_once(self.table, "partition_stats", f"{self.table.base_path}: hoodie.metadata.index.partition.stats."
                      f"enable=true, but no partition_stats is kept: {why}")
        return why is None

    # -- the MDT's own services ------------------------------------------------------------------
    def _maybe_compact(self, tl: Timeline, current: str) -> tuple[Optional[str], Optional[str]]:
        """Compact (then clean) the MDT when due; returns (compaction, clean) instants or Nones."""
        if tl.pending_compactions():
            return None, None
        last_compaction = tl.completed().by_actions(I.COMMIT).last()
        since = last_compaction.timestamp if last_compaction else ""
        deltas = [i for i in tl.completed().by_actions(I.DELTA_COMMIT) if i.timestamp > since]
        if len(deltas) < self.max_delta_commits:
            return None, None
        latest = max(i.timestamp for i in deltas)
        data_tl = self._data_timeline()
        # Layout 1 names the compaction after ``latest``; a data instant at or before it (the current one
        # too: a long compaction completing after later writes) would land its block in the new slice
        # under a time below the compaction's, and archival (guard 4) could then archive it while its
        # block is still only in a log file, where readers no longer count it as valid (Java:
        # validateTimelineBeforeSchedulingCompaction). Layout 2 orders slices by completion time.
        blocking = [i for i in data_tl.pending() if i.timestamp[:17] <= latest[:17]
                    and (i.timestamp != current or self.layout == 1)]
        if blocking:
            log.info("metadata table compaction waits: data instant(s) %s pending", [str(i) for i in blocking[:3]])
            return None, None
        # Version 6 names the MDT's own services by suffix; 1.x takes fresh instants (reference §3.2).
        compaction = f"{latest}{COMPACTION_SUFFIX}" if self.layout == 1 else self._fresh_instant(tl)
        if tl.get(compaction) is not None:
            return None, None
        self._compact(compaction)
        clean = self._clean(f"{latest}{CLEAN_SUFFIX}" if self.layout == 1 else self._fresh_instant(self.timeline()))
        return compaction, clean

    def _compact(self, instant: str) -> None:
        base_instant, base_name, logs = self._latest_slice()
        fid = self._file_id()
        records = MetadataTable(self.table).records()
        merged = [FilesRecord(r.key, r.type, {n: fi for n, fi in r.files.items() if not fi.is_deleted})
                  for r in records.values()]
        op = plans.compaction_operation(base_instant, base_name, logs, fid, FILES_PARTITION, {})
        indexes = IndexCompaction(self.table, self.storage, self.version, self.layout)  # as Java: every partition
        plan = plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op] + indexes.operations()))
        req = T.create_requested(self.storage, instant, I.COMPACTION, plan)
        inflight = T.transition_to_inflight(self.storage, req)
        rel = f"{FILES_PARTITION}/{N.base_file_name(fid, TOKEN, instant, '.hfile')}"
        data = MW.hfile_bytes(merged, bloom_keys=True, version=self.version)
        self.storage.create_new(rel, data)
        index_stats = indexes.execute(instant)
        fault_point("metadata.compaction.after_base_file")  # a kill here leaves every new base file behind
        meta = CommitMetadata(operation_type="COMPACT", compacted=True,
                              extra_metadata={"schema": MW.schema_json(self.version)})
        meta.add_write_stat(FILES_PARTITION, WriteStat(
            file_id=fid, path=rel, partition_path=FILES_PARTITION, prev_commit=base_instant,
            num_writes=len(merged), total_write_bytes=len(data), file_size_in_bytes=len(data),
            total_log_files_compacted=len(logs), prev_base_file=base_name if self.layout == 2 else None))
        for part, stat in index_stats:
            meta.add_write_stat(part, stat)
        commit(self.storage, inflight, meta)
        log.info("compacted the metadata table of %s at %s (%d records, %d log files)", self.table.base_path,
                 instant, len(merged), len(logs))

    def _clean(self, instant: str) -> Optional[str]:
        """Delete the file slices older than the :data:`SLICES_RETAINED` latest ones."""
        tl = self.timeline()
        view = FileSystemView(self.storage, tl)
        doomed: dict[str, list[str]] = {}
        keep_from = ""
        # Every partition a compaction folds: files, and the index partitions (IndexCompaction).
        for part in (FILES_PARTITION, *(p for p in COMPACTED if self.storage.exists(p))):
            for fg in view.file_groups(part).values():
                slices = fg.ordered_slices()
                if len(slices) > SLICES_RETAINED:
                    keep_from = max(keep_from, slices[SLICES_RETAINED - 1].base_instant)
                for sl in slices[SLICES_RETAINED:]:
                    if sl.base_file is not None:
                        doomed.setdefault(part, []).append(sl.base_file.name)
                    doomed.setdefault(part, []).extend(lf.name for lf in sl.log_files)
        if not any(doomed.values()):
            return None
        paths = {part: [self.storage.uri(f"{part}/{n}") for n in names] for part, names in doomed.items() if names}
        plan = plans.cleaner_plan((keep_from, I.COMMIT, "COMPLETED"), keep_from, "KEEP_LATEST_FILE_VERSIONS", paths)
        req = T.create_requested(self.storage, instant, I.CLEAN, plans.write_avro_metadata("HoodieCleanerPlan", plan))
        inflight = T.transition_to_inflight(self.storage, req)
        self._finish_clean(inflight, plan)
        return instant

    def _finish_clean(self, inflight: Instant, plan: Mapping[str, Any]) -> None:
        started = time.monotonic()
        per_part: dict[str, dict] = {}
        for part, infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
            names, ok, failed = [], [], []
            for info in infos:
                name = info["filePath"].rsplit("/", 1)[-1]
                rel = f"{part}/{name}"
                names.append(name)
                (ok if self.storage.delete(rel) or not self.storage.exists(rel) else failed).append(name)
            per_part[part] = plans.clean_partition_metadata(part, plan.get("policy") or "", names, ok, failed)
        eitr = (plan.get("earliestInstantToRetain") or {}).get("timestamp") or ""
        meta = plans.clean_metadata(inflight.timestamp, int((time.monotonic() - started) * 1000), eitr,
                                    plan.get("lastCompletedCommitTimestamp") or "", per_part)
        commit(self.storage, inflight, plans.write_avro_metadata("HoodieCleanMetadata", meta))

    # -- rollback of an MDT deltacommit ----------------------------------------------------------
    def _rollback_deltacommit(self, target: str, instant: Optional[str]) -> Optional[str]:
        """Roll back the MDT deltacommit of data instant ``target`` (if the MDT has it after its last
        compaction) at ``instant`` (a fresh one when None); returns the rollback instant or None."""
        tl = self.timeline()
        inst = tl.get(target)
        if inst is None or inst.action != I.DELTA_COMMIT:
            return None
        last_compaction = tl.completed().by_actions(I.COMMIT).last()
        if last_compaction is not None and target <= last_compaction.timestamp:
            # Compacted into the base file; the data rollback's own records removed its files.
            return None
        instant = instant or self._fresh_instant(tl)
        plan = plans.rollback_plan((target, I.DELTA_COMMIT), [])
        req = T.create_requested(self.storage, instant, I.ROLLBACK,
                                 plans.write_avro_metadata("HoodieRollbackPlan", plan))
        inflight = T.transition_to_inflight(self.storage, req)
        self._finish_rollback(inflight, target)
        return instant

    def _finish_rollback(self, inflight: Instant, target: str) -> None:
        started = time.monotonic()
        base_instant, _, _ = self._latest_slice()
        fid, version = self._next_log(base_instant)
        rel = f"{FILES_PARTITION}/{N.log_file_name(fid, base_instant, version, TOKEN)}"
        size = L.write_log_file(self.storage, rel, [L.encode_command_block(inflight.timestamp, target)])
        per_part = {FILES_PARTITION: plans.rollback_partition_metadata(FILES_PARTITION, [], [],
                                                                      {self.storage.uri(rel): size})}
        listed = _partitions_prop(self.table.props)
        for ipart, groups in ((COLUMN_STATS, self.col_stats), (PARTITION_STATS, self.part_stats.groups),
                              (RECORD_INDEX, self.rec_index.groups)):
            if ipart not in listed or not self.storage.exists(ipart):
                continue
            # The failed instant's index blocks go too: a command block in every file group.
            file_groups = groups.file_groups() if ipart == COLUMN_STATS else groups.groups()
            next_version = groups._next_version if ipart == COLUMN_STATS else groups.next_version
            written: dict[str, int] = {}
            for cfid, (cbase, _) in sorted(file_groups.items()):
                crel = f"{ipart}/{N.log_file_name(cfid, cbase, next_version(cfid, cbase), TOKEN)}"
                written[self.storage.uri(crel)] = L.write_log_file(
                    self.storage, crel, [L.encode_command_block(inflight.timestamp, target)])
            per_part[ipart] = plans.rollback_partition_metadata(ipart, [], [], written)
        fault_point("metadata.rollback.after_command_block")
        meta = plans.rollback_metadata(
            inflight.timestamp, int((time.monotonic() - started) * 1000), [(target, I.DELTA_COMMIT)], per_part)
        commit(self.storage, inflight, plans.write_avro_metadata("HoodieRollbackMetadata", meta))
        T.delete_instant_files(self.storage, target, I.DELTA_COMMIT, (State.COMPLETED, State.INFLIGHT, State.REQUESTED))

    # -- rollback on table versions 8/9 ------------------------------------------------------------
    def _rollback_v8(self, ts: str, targets: list[str]) -> UpdateResult:
        """A data rollback (or restore) at ``ts`` on 1.x: no files records; an MDT rollback at ``ts``
        of the rolled-back instants' deltacommits, deleting their log files (reference §3.1, §5)."""
        self._recover()
        tl = self.timeline()
        done = [t for t in targets if (i := tl.get(t)) is not None and i.action == I.DELTA_COMMIT]
        if not done:
            return UpdateResult(ts, 0, "")
        compacted = [t for t in done if self._compacted(tl, t)]
        if compacted:
            # Its records are in the MDT's base file now; deleting log files cannot take them out.
            raise MetadataTableError(
                f"cannot roll back {', '.join(compacted)} in the metadata table of {self.table.base_path}: the "
                "metadata table compacted it already. Drop the metadata table (`hoodie metadata drop`) and create "
                "it again after the rollback")
        existing = tl.get(ts)
        if existing is not None and existing.action == I.ROLLBACK:
            if existing.is_completed:
                return UpdateResult(ts, 0, "", rollbacks=(ts,))
            req = Instant(ts, I.ROLLBACK, State.REQUESTED)
            plan = plans.read_avro_metadata(self.storage.read_bytes(T.instant_file_path(self.storage, req)))
            inflight = existing if existing.is_inflight else T.transition_to_inflight(self.storage, existing)
        else:
            paths = [self.storage.uri(f"{FILES_PARTITION}/{n}") for n in self._logs_of(done)]
            plan = plans.rollback_plan((done[0], I.DELTA_COMMIT), [plans.rollback_request(FILES_PARTITION, MW.FILES_FILE_ID,
                                                                                          "", paths)])
            req = T.create_requested(self.storage, ts, I.ROLLBACK, plans.write_avro_metadata("HoodieRollbackPlan", plan))
            inflight = T.transition_to_inflight(self.storage, req)
        self._finish_rollback_v8(inflight, plan, done)
        return UpdateResult(ts, 0, "", rollbacks=(ts,))

    def check_rollback(self, target: str) -> None:
        """Refuse (before anything is written) a rollback of ``target`` the metadata table cannot follow:
        on 1.x an MDT rollback deletes the rolled-back deltacommit's log files, which does not work once
        an MDT compaction took them into a base file (Java refuses this rollback too)."""
        if self.layout == 1:
            return
        tl = self.timeline()
        if self._compacted(tl, target):
            raise MetadataTableError(
                f"cannot roll back {target} on {self.table.base_path}: its metadata table compacted that commit "
                "already, so its files cannot be taken out of "
                "it, as in Hudi 1.x. Drop the metadata table first (`hoodie metadata drop`), roll back, then "
                "create it again (`hoodie metadata create`). Nothing was written")

    def _compacted(self, tl: Timeline, target: str) -> bool:
        """Whether the MDT deltacommit ``target`` is in a base file: a compaction took every log file
        that completed before the compaction's instant (layout 2 slices logs by completion time)."""
        inst = tl.get(target)
        if inst is None or not inst.is_completed or inst.action != I.DELTA_COMMIT:
            return False
        done = inst.completion or inst.timestamp
        return any(c.timestamp > done for c in tl.completed().by_actions(I.COMMIT))

    def _logs_of(self, instants: Iterable[str], partition: str = FILES_PARTITION) -> list[str]:
        """The MDT log files written by the deltacommits ``instants`` (1.x names them by instant)."""
        wanted = set(instants)
        if partition != FILES_PARTITION and not self.storage.exists(partition):
            return []
        return sorted(s.name for s in self.storage.list_dir(partition)
                      if N.is_log_file(s.name) and N.parse_log_file(s.name).base_instant in wanted)

    def _finish_rollback_v8(self, inflight: Instant, plan: Mapping[str, Any],
                            targets: Optional[list[str]] = None) -> None:
        started = time.monotonic()
        if targets is None:
            # Resumed from its plan: the first instant, and those of every planned log file (a
            # restore rolls back several deltacommits in one MDT rollback; 1.x names logs by instant).
            targets = [(plan.get("instantToRollback") or {})["commitTime"]]
            for req in plan.get("RollbackRequests") or []:
                for path in req.get("filesToBeDeleted") or []:
                    name = path.rsplit("/", 1)[-1]
                    if N.is_log_file(name) and N.parse_log_file(name).base_instant not in targets:
                        targets.append(N.parse_log_file(name).base_instant)
        per_part = {}
        for part in (FILES_PARTITION, *INDEXES):
            names = self._logs_of(targets, part)
            for n in names:
                self.storage.delete(f"{part}/{n}")
            if names or part == FILES_PARTITION:
                uris = [self.storage.uri(f"{part}/{n}") for n in names]
                per_part[part] = plans.rollback_partition_metadata(part, uris, [], {})
        fault_point("metadata.rollback.after_command_block")
        meta = plans.rollback_metadata(
            inflight.timestamp, int((time.monotonic() - started) * 1000), [(t, I.DELTA_COMMIT) for t in targets],
            per_part)
        commit(self.storage, inflight, plans.write_avro_metadata("HoodieRollbackMetadata", meta))
        for t in targets:
            T.delete_instant_files(self.storage, t, I.DELTA_COMMIT, (State.COMPLETED, State.INFLIGHT, State.REQUESTED))

    # -- repair ------------------------------------------------------------------------------------
    def _recover(self) -> Timeline:
        """Repair interrupted MDT actions: roll back a pending compaction (its partial base file and
        its instant), finish a pending clean or rollback from its plan. Returns the MDT timeline after
        the repairs (listed once when there was nothing to repair)."""
        tl = self.timeline()
        if not tl.pending():
            return tl
        for inst in tl.pending():
            if inst.action == I.COMPACTION:
                for part in (FILES_PARTITION, *(p for p in COMPACTED if self.storage.exists(p))):
                    for s in self.storage.list_dir(part):
                        if N.is_base_file(s.name) and N.parse_base_file(s.name).instant == inst.timestamp:
                            self.storage.delete(s.path)
                T.delete_instant_files(self.storage, inst.timestamp, I.COMPACTION, (State.INFLIGHT, State.REQUESTED))
                log.info("rolled back the interrupted metadata-table compaction %s", inst.timestamp)
            elif inst.action in (I.CLEAN, I.ROLLBACK):
                req = Instant(inst.timestamp, inst.action, State.REQUESTED)
                plan = plans.read_avro_metadata(self.storage.read_bytes(T.instant_file_path(self.storage, req)))
                inflight = inst if inst.is_inflight else T.transition_to_inflight(self.storage, inst)
                if inst.action == I.CLEAN:
                    self._finish_clean(inflight, plan)
                elif self.layout == 2:
                    self._finish_rollback_v8(inflight, plan)
                else:
                    self._finish_rollback(inflight, (plan.get("instantToRollback") or {})["commitTime"])
                log.info("finished the interrupted metadata-table %s %s", inst.action, inst.timestamp)
        return self.timeline()

    # -- bootstrap -------------------------------------------------------------------------------
    def bootstrap(self) -> str:
        """Create the MDT with its ``files`` partition from a listing of storage (Java's
        initialisation, reference §6); returns the initialisation instant.

        Call with no pending data write (after rolling back failed writes): files of instants after
        the latest completed one (a pending compaction's) are left out, as Java does.
        """
        data_tl = self._data_timeline()
        done = data_tl.completed().last()
        upto = done.timestamp if done is not None else SOLO_COMMIT_TIMESTAMP
        # 1.x initialises the files partition at 17 zeros (reference §3.2).
        init = f"{upto}{INIT_SUFFIX}" if self.layout == 1 else V8_INIT_INSTANT
        if self.storage.exists(""):
            self.storage.delete_dir("")
        listing = storage_listing(self.data, upto)
        records = [MW.partition_list_record(listing)]
        records += [MW.file_list_record(p, files) for p, files in listing.items()]
        self.storage.write_bytes(".hoodie/hoodie.properties", MW.metadata_table_properties_text(self.table.props))
        self.storage.write_bytes(f"{FILES_PARTITION}/{N.PARTITION_METAFILE}", MW.partition_metadata_bytes(init))
        req = T.create_requested(self.storage, init, I.DELTA_COMMIT)
        inflight = T.transition_to_inflight(self.storage, req)
        fid = MW.FILES_FILE_ID
        log_name = N.log_file_name(fid, init, 1, MW.BOOTSTRAP_LOG_TOKEN)
        L.write_log_file(self.storage, f"{FILES_PARTITION}/{log_name}", [MW.empty_delete_block(init)])
        base_rel = f"{FILES_PARTITION}/{MW.base_file_name(init)}"
        data = MW.hfile_bytes(records, bloom_keys=True, version=self.version)
        self.storage.create_new(base_rel, data)
        meta = CommitMetadata(operation_type="BULK_INSERT", extra_metadata={"schema": MW.schema_json(self.version)})
        meta.add_write_stat(FILES_PARTITION, WriteStat(
            file_id=fid, path=base_rel, partition_path=FILES_PARTITION, num_writes=len(records),
            num_inserts=len(records), total_write_bytes=len(data), file_size_in_bytes=len(data)))
        commit(self.storage, inflight, meta)
        fault_point("metadata.bootstrap.before_property")
        parts = sorted(set(_partitions_prop(self.table.props)) | {FILES_PARTITION})
        self._set_properties({PARTITIONS_PROP: ",".join(parts), PARTITIONS_INFLIGHT_PROP: ""})
        if self.col_stats_wanted:
            self.bootstrap_column_stats()
        self._create_wanted_indexes()
        log.info("created the metadata table of %s at %s (%d partitions, %d files)", self.table.base_path, init,
                 len(listing), sum(len(f) for f in listing.values()))
        return init


    def bootstrap_column_stats(self, skip: Optional[str] = None) -> str:
        """Create the ``column_stats`` partition from the ``files`` listing (module doc of
        :mod:`hoodie.services.metadata.column_stats`); returns its initialisation instant. Log
        blocks of ``skip`` (the instant being recorded) are left to that instant's deltacommit."""
        tl = self.timeline()
        done = self._data_timeline().completed().last()
        upto = done.timestamp if done is not None else SOLO_COMMIT_TIMESTAMP
        init = self.col_stats.init_instant({i.timestamp for i in tl}, upto)
        listing = MetadataTable(self.table).listing()
        self._set_properties({PARTITIONS_INFLIGHT_PROP: ",".join(
            sorted(set(_partitions_prop(self.table.props, PARTITIONS_INFLIGHT_PROP)) | {COLUMN_STATS}))})
        req = T.create_requested(self.storage, init, I.DELTA_COMMIT)
        inflight = T.transition_to_inflight(self.storage, req)
        stats, count = self.col_stats.bootstrap_files(init, listing, skip)
        meta = CommitMetadata(operation_type="BULK_INSERT", extra_metadata={"schema": MW.schema_json(self.version)})
        for part, stat in stats:
            meta.add_write_stat(part, stat)
        commit(self.storage, inflight, meta)
        self._use(mark_listed(self.table, update_table_properties))
        log.info("created column_stats in the metadata table of %s at %s (%d records)", self.table.base_path, init,
                 count)
        return init


    def bootstrap_index(self, partition: str) -> str:
        """Create ``record_index`` or ``partition_stats`` from the table's latest file slices (committed
        files only: call with no write in flight but the one being recorded, whose files are invisible
        to the view until it completes); returns its initialisation instant.

        Raises:
            MetadataTableError: the index cannot be built (partition_stats without column_stats, keys in
                two file groups for the record index...).
        """
        if partition == PARTITION_STATS and not self._partition_stats_possible(warn=False):
            self._partition_stats_possible(warn=True)
            raise MetadataTableError(f"cannot create partition_stats for {self.table.base_path}: table version "
                                     f"{self.version}, partitioned={self.table.is_partitioned}, column_stats "
                                     f"{'present' if column_stats_listed(self.table.props) else 'missing'}; it needs "
                                     "table version 8 or 9, a partitioned table and column_stats")
        tl = self.timeline()
        done = self._data_timeline().completed().last()
        upto = done.timestamp if done is not None else SOLO_COMMIT_TIMESTAMP
        init = self.col_stats.init_instant({i.timestamp for i in tl}, upto)
        view = FileSystemView(self.data, self._data_timeline())
        # Everything that can refuse (keys in two file groups, virtual keys) runs before anything is written.
        if partition == RECORD_INDEX:
            locations = self.rec_index.table_locations(view)
        else:
            file_stats = file_stats_after(self.table, [])
        self._set_properties({PARTITIONS_INFLIGHT_PROP: ",".join(
            sorted(set(_partitions_prop(self.table.props, PARTITIONS_INFLIGHT_PROP)) | {partition}))})
        req = T.create_requested(self.storage, init, I.DELTA_COMMIT)
        inflight = T.transition_to_inflight(self.storage, req)
        if partition == RECORD_INDEX:
            stats, count = self.rec_index.bootstrap(init, locations)
        else:
            stats, count = self.part_stats.bootstrap(init, view, file_stats)
        meta = CommitMetadata(operation_type="BULK_INSERT", extra_metadata={"schema": MW.schema_json(self.version)})
        for part, stat in stats:
            meta.add_write_stat(part, stat)
        commit(self.storage, inflight, meta)
        parts = sorted(set(_partitions_prop(self.table.props)) | {partition})
        inflight_parts = [p for p in _partitions_prop(self.table.props, PARTITIONS_INFLIGHT_PROP) if p != partition]
        self._set_properties({PARTITIONS_PROP: ",".join(parts), PARTITIONS_INFLIGHT_PROP: ",".join(inflight_parts)})
        log.info("created %s in the metadata table of %s at %s (%d records)", partition, self.table.base_path, init,
                 count)
        return init


def _rolled_back(action: str, content: bytes) -> list[str]:
    """The instants a completed rollback (``commitsRollback``) or restore (every rollback it made,
    newest first) undid."""
    md = plans.read_avro_metadata(content)
    if action == I.ROLLBACK:
        return [str(t) for t in md.get("commitsRollback") or []]
    out: list[str] = []
    for t in md.get("instantsToRollback") or []:
        for rm in (md.get("hoodieRestoreMetadata") or {}).get(t) or []:
            out.extend(str(c) for c in (rm or {}).get("commitsRollback") or [] if str(c) not in out)
        if t not in out:
            out.append(str(t))
    return out


def _merge(records: list[FilesRecord]) -> list[FilesRecord]:
    """One record per key (entries of later records win; a live entry beats a tombstone)."""
    out: dict[str, FilesRecord] = {}
    for r in records:
        prev = out.get(r.key)
        if prev is None:
            out[r.key] = FilesRecord(r.key, r.type, dict(r.files))
            continue
        for n, fi in r.files.items():
            old = prev.files.get(n)
            if old is None or old.is_deleted or not fi.is_deleted:
                prev.files[n] = fi
    return list(out.values())


__all__ = [
    "MetadataWriter", "UpdateResult", "drop_metadata_table", "drop_index_partitions",
    "metadata_table_state", "warn_once",
]
