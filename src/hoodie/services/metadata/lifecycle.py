"""When a transaction keeps, creates, rebuilds or drops the metadata table; and its inspection
(``hoodie metadata show|validate|create|drop``).

Rules (run under the table lock before anything is committed, :func:`prepare_metadata_table`):

* ``hoodie.metadata.enable=false``: drop it (Hudi's behaviour for a writer without it; readers list);
* otherwise index partitions hoodie does not maintain are dropped (warned once);
* a ``files`` partition that is ready (listed in ``hoodie.table.metadata.partitions``, its folder
  there, in step with the data timeline) is kept and updated by every commit;
* one that is broken (half initialised, folder missing, behind the data timeline, unreadable) is
  dropped and created again from a listing, as Java re-initialises it;
* none: created when ``hoodie.metadata.enable=true``, else the table stays without one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.configs import table as TC
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.index_reader import read_column_stats, stats_by_file
from hoodie.format.metadata.table import METADATA_FOLDER, MetadataTable
from hoodie.format.table import HoodieTable
from hoodie.format.timeline.active import Timeline
from hoodie.services.metadata.column_stats import ColumnStatsWriter, column_stats_listed
from hoodie.services.metadata.config import RECORD_INDEX_ENABLE, enable_option, index_option
from hoodie.services.metadata.storage_listing import storage_listing
from hoodie.services.metadata.writer import (
    drop_index_partitions, drop_metadata_table, metadata_table_state, warn_once,
)
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.lock import TableLock
from hoodie.services.metadata.writer import MetadataWriter, drop_index_partition
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.metadata.index_reader import read_partition_stats, read_record_index
from hoodie.services.metadata.column_stats import PARTITION as COLUMN_STATS, partitions_prop
from hoodie.services.metadata.indexes import PARTITION_STATS, RECORD_INDEX, RecordIndexWriter, partition_stats_of
from hoodie.services.rollback.failed_writes import pending_failed_writes

def prepare_metadata_table(table: HoodieTable, options: Optional[Mapping[str, Any]] = None
                           ) -> tuple[HoodieTable, bool]:
    """Apply the module's rules to ``table``; returns the table as they left it (a new snapshot when
    its properties changed) and whether the caller must create the metadata table (after rolling back
    failed writes, before its instant starts)."""
    enable = enable_option(options)
    if enable is False:
        dropped = drop_metadata_table(table, "hoodie.metadata.enable=false")
        if dropped is not None:
            warn_once(table, "disabled",
                       f"{table.base_path}: dropped its metadata table because hoodie.metadata.enable=false, as Hudi "
                       "does (hoodie.table.metadata.partitions cleared, .hoodie/metadata deleted); readers list files")
            table = dropped
        return table, False
    if index_option(options, RECORD_INDEX_ENABLE) and not table.populate_meta_fields:
        raise MetadataTableError(
            f"hoodie.metadata.record.index.enable=true on {table.base_path}, which has virtual keys "
            "(hoodie.populate.meta.fields=false): the record index is built from _hoodie_record_key, which such a "
            "table does not store. Drop the option; nothing was written")
    table, _ = drop_index_partitions(table, options)
    state = metadata_table_state(table)
    if state == "none":
        return table, enable is True
    if state == "ready":
        return table, False
    table = drop_metadata_table(table, state) or table
    warn_once(table, "rebuilt",
               f"{table.base_path}: its metadata table was unusable ({state[len('broken: '):]}); it was dropped and is "
               "created again from a listing of the table's files, as Hudi re-initialises it")
    return table, True


@dataclass
class MetadataStatus:
    """What ``hoodie metadata show`` prints."""

    state: str
    partitions: list[str] = field(default_factory=list)
    latest_instant: Optional[str] = None
    data_latest_instant: Optional[str] = None
    deltacommits_since_compaction: int = 0
    data_partitions: int = 0
    data_files: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON output)."""
        return dict(self.__dict__)


def metadata_status(table: HoodieTable) -> MetadataStatus:
    """The metadata table's state, latest instant and lag behind the data timeline."""
    state = metadata_table_state(table)
    data_done = table.timeline.completed().last()
    status = MetadataStatus(state, data_latest_instant=data_done.timestamp if data_done else None)
    status.partitions = list(table.prop(TC.METADATA_PARTITIONS) or ())
    if state != "ready":
        return status
    mdt = MetadataTable(table)
    tl = Timeline.load(mdt.storage, int(mdt.props.get("hoodie.timeline.layout.version") or "1"))
    done = tl.completed()
    status.latest_instant = done.last().timestamp if done.last() else None
    last_compaction = done.by_actions(I.COMMIT).last()
    since = last_compaction.timestamp if last_compaction else ""
    status.deltacommits_since_compaction = len([i for i in done.by_actions(I.DELTA_COMMIT) if i.timestamp > since])
    listing = mdt.listing()
    status.data_partitions = len(listing)
    status.data_files = sum(len(f) for f in listing.values())
    return status


@dataclass
class ValidationResult:
    """Metadata listing against storage: equal, or the differences."""

    equal: bool
    missing_partitions: list[str] = field(default_factory=list)  # on storage, not in the metadata table
    extra_partitions: list[str] = field(default_factory=list)  # in the metadata table, not on storage
    missing_files: list[str] = field(default_factory=list)  # partition/name on storage only
    extra_files: list[str] = field(default_factory=list)  # partition/name in the metadata table only
    size_mismatches: list[str] = field(default_factory=list)  # "partition/name: metadata X, storage Y"
    # column_stats against statistics recomputed from the files: "partition/name column: what differs"
    column_stats_mismatches: list[str] = field(default_factory=list)
    # partition_stats against the partitions' latest slices' recomputed statistics; record_index against a key scan
    partition_stats_mismatches: list[str] = field(default_factory=list)
    record_index_mismatches: list[str] = field(default_factory=list)
    error: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON output)."""
        return dict(self.__dict__)


def listings(table: HoodieTable) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """(metadata listing, storage listing), each partition -> {file name: size}, of a table whose
    metadata table is ready. Storage files of instants after the latest completed data instant (a
    pending write's) are left out, and partitions without files are dropped from both (a rolled-back
    first write can leave an empty partition folder that Java does not list either).

    Raises:
        MetadataTableError: the metadata table cannot be read.
    """
    meta = MetadataTable(table).listing()
    done = table.timeline.completed().last()
    store = storage_listing(table.storage, done.timestamp if done else "00000000000000")
    completed = {i.timestamp for i in table.timeline.completed()}
    first = table.timeline.first()
    start = first.timestamp if first else ""
    layout2 = table.timeline_layout == 2
    store = {p: {n: size for n, size in f.items() if _committed_file(n, completed, start, layout2)}
             for p, f in store.items()}
    return {p: f for p, f in meta.items() if f}, {p: f for p, f in store.items() if f}


def validate_metadata_table(table: HoodieTable) -> ValidationResult:
    """Compare the ``files`` partition's listing with a listing of storage (Java's
    ``HoodieMetadataTableValidator`` for files): partitions, file names and sizes (see :func:`listings`).
    """
    state = metadata_table_state(table)
    if state == "none":
        return ValidationResult(False, error="the table has no metadata table (hoodie.table.metadata.partitions does "
                                             "not name files)")
    if state != "ready":
        return ValidationResult(False, error=state[len("broken: "):])
    try:
        meta, store = listings(table)
    except MetadataTableError as e:
        return ValidationResult(False, error=str(e))
    res = ValidationResult(True)
    res.missing_partitions = sorted(set(store) - set(meta))
    res.extra_partitions = sorted(set(meta) - set(store))
    for p in sorted(set(store) | set(meta)):
        s, m = store.get(p, {}), meta.get(p, {})
        res.missing_files += [f"{p}/{n}" for n in sorted(set(s) - set(m))]
        res.extra_files += [f"{p}/{n}" for n in sorted(set(m) - set(s))]
        res.size_mismatches += [f"{p}/{n}: metadata {m[n]}, storage {s[n]}" for n in sorted(set(s) & set(m))
                                if m[n] != s[n]]
    if column_stats_listed(table.props):
        try:
            res.column_stats_mismatches = validate_column_stats(table, meta)
        except MetadataTableError as e:
            res.column_stats_mismatches = [f"column_stats cannot be read: {e}"]
    listed = set(partitions_prop(table.props))
    if PARTITION_STATS in listed:
        try:
            res.partition_stats_mismatches = validate_partition_stats(table)
        except MetadataTableError as e:
            res.partition_stats_mismatches = [f"partition_stats cannot be read: {e}"]
    if RECORD_INDEX in listed:
        try:
            res.record_index_mismatches = validate_record_index(table)
        except MetadataTableError as e:
            res.record_index_mismatches = [f"record_index cannot be read: {e}"]
    res.equal = not (res.missing_partitions or res.extra_partitions or res.missing_files or res.extra_files
                     or res.size_mismatches or res.column_stats_mismatches or res.partition_stats_mismatches
                     or res.record_index_mismatches)
    return res


def expected_partition_stats(table: HoodieTable) -> dict[str, Any]:
    """key -> the ``partition_stats`` records recomputed from the table's files: each partition's latest
    slices, each file's statistics from its own footer or log blocks (not from column_stats)."""
    writer = ColumnStatsWriter(table, table.storage.child(METADATA_FOLDER), table.table_version, {})
    view = FileSystemView(table.storage, table.timeline)
    out: dict[str, Any] = {}
    for part in view.partitions():
        if not part:
            continue
        slices = view.latest_file_slices(part)
        files: dict[str, dict[str, Any]] = {}
        for sl in slices:
            names = ([sl.base_file.name] if sl.base_file else []) + [lf.name for lf in sl.log_files]
            for n in names:
                got = {st.column_name: st for st in writer.file_stats(part, n, None)}
                if got:
                    files[n] = got
        for rec in partition_stats_of(part, slices, files):
            out[rec.key] = rec
    return out


def validate_partition_stats(table: HoodieTable) -> list[str]:
    """``partition_stats`` against :func:`expected_partition_stats`: the same partitions and columns, and
    per record min, max, value count and null count equal."""
    want = expected_partition_stats(table)
    got = read_partition_stats(MetadataTable(table))
    out = []
    for k in sorted(set(want) | set(got)):
        w, g = want.get(k), got.get(k)
        if g is None:
            out.append(f"{w.partition} {w.column_name}: no partition statistics recorded")
        elif w is None:
            out.append(f"{g.partition} {g.column_name}: statistics of a partition column with no live file")
        else:
            a = (w.python_min(), w.python_max(), w.value_count, w.null_count)
            b = (g.python_min(), g.python_max(), g.value_count, g.null_count)
            if a != b:
                out.append(f"{w.partition} {w.column_name}: recorded (min, max, values, nulls) {b}, the files have {a}")
    return out


def validate_record_index(table: HoodieTable) -> list[str]:
    """``record_index`` against a scan of the record keys of every latest file slice: every live key
    recorded at its partition and file group, and no other key."""
    w = RecordIndexWriter(table, table.storage.child(METADATA_FOLDER), table.table_version, {})
    scan = w.scan_locations(FileSystemView(table.storage, table.timeline))
    got = read_record_index(MetadataTable(table))
    out = []
    for k, locs in sorted(scan.items()):
        if len(locs) > 1:
            out.append(f"{k}: in {len(locs)} file groups ({', '.join(f'{x.partition!r} {x.file_id}' for x in locs)}); "
                       "the record index maps a key to one")
    want = {k: locs[-1] for k, locs in scan.items()}
    for k in sorted(set(want) | set(got)):
        a, b = want.get(k), got.get(k)
        if b is None:
            out.append(f"{k}: in {a.partition!r} file group {a.file_id}, not in the record index")
        elif a is None:
            out.append(f"{k}: recorded in {b.partition!r} file group {b.file_id}, but no file holds it")
        elif (a.partition, a.file_id) != (b.partition, b.file_id):
            out.append(f"{k}: recorded in {b.partition!r} file group {b.file_id}, the files have it in "
                       f"{a.partition!r} file group {a.file_id}")
    return out


INDEX_NAMES = (COLUMN_STATS, PARTITION_STATS, RECORD_INDEX)


def create_index(table: HoodieTable, index: str, options: Optional[Mapping[str, Any]] = None) -> str:
    """``hoodie metadata create-index``: build ``index`` (column_stats, partition_stats or record_index)
    from the table's committed files, replacing one the table has; returns its initialisation instant.
    Runs under the table lock; the table needs a ready metadata table and no pending write.

    Raises:
        MetadataTableError: an unknown index, no metadata table, pending writes, or an index that cannot be
            built (keys in two file groups for the record index; partition_stats without column_stats, on
            table version 6 or a non-partitioned table).
    """
    if index not in INDEX_NAMES:
        raise MetadataTableError(f"unknown index {index!r}: hoodie builds {', '.join(INDEX_NAMES)}")
    with TableLock(table.storage, options, "metadata create-index"):
        # Under the lock: the table as the last writer left it (the one load of this step).
        table = table.latest()
        state = metadata_table_state(table)
        if state != "ready":
            raise MetadataTableError(
                f"{table.base_path} has no usable metadata table ({state}); create it first (`hoodie metadata create`)")
        failed = pending_failed_writes(table)
        if failed:
            raise MetadataTableError(
                f"{table.base_path} has pending write(s) {', '.join(str(i) for i in failed[:3])}; indexes are built "
                f"from committed files only. Roll them back first (hoodie rollback, or any write), then run "
                f"create-index again")
        writer = MetadataWriter(table, options)
        if index == PARTITION_STATS and not writer._partition_stats_possible(warn=False):
            return writer.bootstrap_index(PARTITION_STATS)  # raises, naming why
        if index == RECORD_INDEX:
            # Refuse before dropping the old one: keys in two file groups, virtual keys.
            writer.rec_index.table_locations(FileSystemView(table.storage, table.timeline))
        rebuild_partition_stats = False
        if index in partitions_prop(table.props):
            table = drop_index_partition(table, index)
            if index == COLUMN_STATS and PARTITION_STATS in partitions_prop(table.props):
                table = drop_index_partition(table, PARTITION_STATS)  # built from column_stats: rebuilt below
                rebuild_partition_stats = True
        writer = MetadataWriter(table, options)
        if index == COLUMN_STATS:
            init = writer.bootstrap_column_stats()
            if rebuild_partition_stats:
                MetadataWriter(writer.table, options).bootstrap_index(PARTITION_STATS)
            return init
        return writer.bootstrap_index(index)


def _show(v: Any) -> str:
    return "none" if v is None else repr(v)


def validate_column_stats(table: HoodieTable, listing: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The ``column_stats`` partition against statistics recomputed from the files ``listing`` names
    (Java's validator for column stats): a base file's min, max, counts and sizes must be equal for
    every column both have; a log file's range must cover its records' (a rolled-back block's records
    may stay in a version-6 log file's range, which is safe); a base file with statistics recomputed
    but none recorded, and statistics of files the table does not list, are reported too."""
    writer = ColumnStatsWriter(table, table.storage.child(METADATA_FOLDER), table.table_version, {})
    recorded = stats_by_file(read_column_stats(MetadataTable(table)))
    out: list[str] = []
    listed: set[str] = set()
    for part, names in sorted(listing.items()):
        for name in sorted(names):
            listed.add(name)
            where = f"{part}/{name}" if part else name
            mine = {s.column_name: s for s in writer.file_stats(part, name, None)}
            theirs = recorded.get(name, {})
            # A base file, or a 1.x log file (written whole by one instant), with records must have statistics.
            if mine and not theirs and (N.is_base_file(name) or table.timeline_layout == 2):
                out.append(f"{where}: no statistics recorded")
                continue
            for col in sorted(set(mine) & set(theirs)):
                m, t = mine[col], theirs[col]
                if N.is_base_file(name):
                    a = (m.python_min(), m.python_max(), m.value_count, m.null_count, m.total_size,
                         m.total_uncompressed_size)
                    b = (t.python_min(), t.python_max(), t.value_count, t.null_count, t.total_size,
                         t.total_uncompressed_size)
                    if a != b:
                        out.append(f"{where} {col}: recorded (min, max, values, nulls, size, uncompressed) {b}, "
                                   f"the file has {a}")
                elif not _covers(t, m):
                    out.append(f"{where} {col}: recorded range [{_show(t.python_min())}, {_show(t.python_max())}] "
                               f"does not cover the records' [{_show(m.python_min())}, {_show(m.python_max())}]")
    for name in sorted(set(recorded) - listed):
        out.append(f"{name}: statistics of a file the table does not list")
    return out


def _covers(recorded: Any, actual: Any) -> bool:
    """Whether a recorded range is no narrower than the actual one (an unknown bound covers all)."""
    if actual.value_count <= actual.null_count:
        return True
    lo, hi = recorded.python_min(), recorded.python_max()
    if recorded.value_count > recorded.null_count and (lo is None or hi is None):
        return True
    try:
        return lo is not None and hi is not None and lo <= actual.python_min() and hi >= actual.python_max()
    except TypeError:
        return False


def _committed_file(name: str, completed: set[str], start: str, layout2: bool) -> bool:
    """Whether a data file belongs to a completed instant (or one older than the active timeline,
    archived): a base file's instant, and on layout 2 a log file's deltacommit (a layout-1 log file
    names its slice, not its writer, so it is kept)."""
    if N.is_base_file(name):
        inst = N.parse_base_file(name).instant
    elif layout2 and N.is_log_file(name):
        inst = N.parse_log_file(name).base_instant
    else:
        return True
    return inst in completed or inst < start


def create_metadata_table(table: HoodieTable, options: Optional[Mapping[str, Any]] = None) -> str:
    """``hoodie metadata create``: build the metadata table from a listing (dropping an existing
    one); returns the initialisation instant. Runs as a transaction-free step under the table lock."""
    with TableLock(table.storage, options, "metadata create"):
        table = table.latest()  # under the lock: the one load of this step
        failed = pending_failed_writes(table)
        if failed:
            raise MetadataTableError(
                f"{table.base_path} has pending write(s) {', '.join(str(i) for i in failed[:3])}; the metadata table "
                f"is built from committed files only. Roll them back first (hoodie rollback, or any write), then "
                f"run create again")
        table = drop_metadata_table(table, "hoodie metadata create") or table
        return MetadataWriter(table).bootstrap()


def drop_table_metadata(table: HoodieTable, options: Optional[Mapping[str, Any]] = None) -> bool:
    """``hoodie metadata drop``: delete the metadata table under the table lock (readers list)."""
    with TableLock(table.storage, options, "metadata drop"):
        return drop_metadata_table(table.latest(), "hoodie metadata drop") is not None


__all__ = ["create_index", "validate_partition_stats", "validate_record_index", "expected_partition_stats",
           "INDEX_NAMES", "prepare_metadata_table", "metadata_status", "MetadataStatus", "validate_metadata_table", "listings",
           "ValidationResult", "create_metadata_table", "drop_table_metadata"]
