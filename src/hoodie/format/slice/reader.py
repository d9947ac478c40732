"""Reading Hudi tables into Arrow: the table read, planned (:func:`plan_read`) and run slice by slice.

``read_table`` is the public entry point (its signature is relied on by other tools). Snapshot
reads merge each slice's base file with its log blocks; read-optimized reads take base files only;
incremental reads return the latest version (as of ``end``) of records changed in ``(begin, end]``.
Reading one file slice (its base file and log blocks, merged) is :mod:`hoodie.format.slice.slice_reader`,
whose public names this module re-exports.
"""

from __future__ import annotations

import copy
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.format.slice.filters import ReadError, filter_expression, normalize_filters
from hoodie.format.file_group.fsview import FileSlice, FileSystemView
from hoodie.format.slice.merge import IS_DELETED
from hoodie.format.slice.pruning import prune_partitions
from hoodie.format.slice.skipping import skip_slices
from hoodie.format.schema_on_read import SchemaOnRead
from hoodie.format.table import (META_COLUMNS, METADATA_BOOTSTRAP_INSTANT, HoodieTable,
                                 refuse_dropped_partition_columns, refuse_foreign_base_format)
from hoodie import configs as C
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.archived import ArchivedTimeline
from hoodie.format.metadata.listing import metadata_listing
from hoodie.format.file_group.links import all_links
from hoodie.format.storage import without_arrow_threads
from hoodie.format.slice.slice_reader import (  # one file slice; re-exported for this module's users
    IS_PARTIAL_HEADER, ScanResult, block_data, is_partial, java_float_to_double, merge_partial_blocks,
    read_base_file, read_file_slice, scan_log_blocks, slice_record_keys, with_operation_deletes,
)

QUERY_TYPES = ("snapshot", "read_optimized", "incremental")


@dataclass
class ReadPlan:
    """What a query reads: the schema, the slices (or base files) and the row filter."""

    table: HoodieTable
    query_type: str
    schema: pa.Schema  # full read schema (projection applied at the end)
    out_columns: list[str]
    slices: list[FileSlice]
    as_of: Optional[str]
    begin: Optional[str] = None
    end: Optional[str] = None
    row_filter: Optional[pc.Expression] = None
    skip_log_files: frozenset[str] = frozenset()
    # Incremental reads of table versions 8/9: the requested times of the instants that completed in
    # (begin, end] (records carry requested times in _hoodie_commit_time).
    commit_times: Optional[frozenset[str]] = None
    # The table evolves its schema on read: files are read by field id (None: by name).
    schema_on_read: Optional[SchemaOnRead] = None


def _archived_commit_times(archived: ArchivedTimeline, begin: str, cut: Optional[str]) -> frozenset[str]:
    """Requested times of the archived instants of a version 8/9 table (its LSM timeline, ``archived``)
    that completed in ``(begin, cut]`` (``cut`` None: after ``begin``): their records carry those times in
    ``_hoodie_commit_time``."""
    return frozenset(i.timestamp for i in archived.instants
                     if i.completion is not None and begin < i.completion and (cut is None or i.completion <= cut))


# Hudi read options that narrow or reshape a result and that hoodie does not implement: ignoring them
# would return other rows than asked for, so a read naming them is refused.
_UNSUPPORTED_READ_OPTIONS = {
    "hoodie.datasource.read.incr.path.glob": "filters an incremental read by file path",
    "hoodie.datasource.read.incr.filters": "filters an incremental read by expressions",
    "hoodie.datasource.read.paths": "reads only the listed files",
}


def check_read_options(options: Optional[Mapping[str, Any]]) -> None:
    """Warn about unknown ``hoodie.*`` read keys (a misspelled query type would read a snapshot in
    silence) and refuse options that change what a read returns and that hoodie does not honour."""
    if not options:
        return
    for key, what in _UNSUPPORTED_READ_OPTIONS.items():
        value = options.get(key)
        if value not in (None, ""):
            raise ReadError(f"{key}={value!r}: this option {what}, which hoodie does not support; without it the "
                            "read would return other rows than asked for. Filter the result instead")
    if str(options.get(C.INCREMENTAL_FORMAT.key) or "latest_state").lower() == "cdc":
        raise ReadError(f"{C.INCREMENTAL_FORMAT.key}=cdc: hoodie does not read Hudi's CDC log files (change "
                        "records with before/after images); an incremental read returns the latest state of "
                        "each record changed in the range (latest_state)")
    C.read(options, ReadError).get(C.INCREMENTAL_FORMAT)  # refuses values that are neither
    C.warn_unknown_keys({k: v for k, v in options.items() if k not in _UNSUPPORTED_READ_OPTIONS
                         and not str(k).startswith(("hoodie.storage.", "__hoodie."))}, stacklevel=4)


def _is_clustering(table: HoodieTable, inst: Any) -> bool:
    """Whether a pending replacecommit is a clustering (its requested file holds a clustering plan): a
    clustering rewrites records under their old commit times, so it opens no hole in incremental ranges."""
    try:
        data = table.timeline.read_file(I.instant_file_name(inst.timestamp, I.REPLACE_COMMIT, I.State.REQUESTED))
        meta = plans.read_avro_metadata(data) if data else {}
    except Exception:  # unreadable: counted as a write, so the read is refused rather than risked
        return False
    return bool(meta.get("clusteringPlan")) or str(meta.get("operationType") or "").upper() == "CLUSTER"


def _first_pending_write(table: HoodieTable) -> Optional[Any]:
    """The oldest requested or inflight write (commit, deltacommit, replacecommit other than a clustering):
    Hudi's first incomplete commit (``TimelineUtils``)."""
    return next((i for i in table.timeline.pending().instants if i.action in I.WRITE_ACTIONS
                 and not (i.action == I.REPLACE_COMMIT and _is_clustering(table, i))), None)


def _refuse_time_travel_past_a_pending_write(table: HoodieTable, as_of: str) -> None:
    """Version 6: the table as of ``as_of`` changes when a write requested at or before it completes, so
    such a read could not be repeated; Hudi refuses it (``TimelineUtils.validateTimestampAsOf``), and so
    does hoodie. (Versions 8/9 travel by completion time: a later completion is after ``as_of``.)"""
    hole = _first_pending_write(table)
    if hole is not None and as_of >= hole.timestamp:
        raise ReadError(
            f"time travel to {as_of} on {table.storage.uri()}: write {hole.timestamp} ({hole.action}) is still "
            f"{hole.state.name.lower()}; once it completes it belongs to the table as of {as_of}, so this read "
            f"could not be repeated. As in Hudi, time travel must be earlier than the first pending write: use "
            f"as_of < {hole.timestamp}, wait for it to complete, or roll it back (`hoodie rollback "
            f"{table.storage.uri()} {hole.timestamp}` if its writer died)")


def _hollow_commit_end(table: HoodieTable, begin: str, end: Optional[str],
                       options: Optional[dict[str, Any]]) -> Optional[str]:
    """The end of a version-6 incremental range under ``hoodie.read.timeline.holes.resolution.policy``.

    A write still pending (requested or inflight) while a later one completed is a hollow commit: when it
    completes, its records carry its (older) instant time, inside ranges a reader may already have read
    past, and are never returned to that reader. Hudi 0.14+ refuses such reads by default (FAIL) or stops
    the range before the hole (BLOCK); so does hoodie, for a range that reaches the hole."""
    policy = C.read(options, ReadError).get(C.HOLLOW_COMMIT_POLICY)
    tl = table.timeline
    hole = _first_pending_write(table)
    if hole is None or not tl.completed_writes().after(hole.timestamp):
        return end  # nothing pending, or only the newest write: no completed write lies beyond it
    if end is not None and end < hole.timestamp:
        return end  # the range ends before the hole: its answer cannot change
    if policy == "USE_TRANSITION_TIME":
        raise ReadError(f"{C.HOLLOW_COMMIT_POLICY.key}=USE_TRANSITION_TIME: hoodie does not order version-6 "
                        "instants by completion time; use FAIL or BLOCK (table versions 8/9 order incremental "
                        "ranges by completion time always)")
    if policy == "BLOCK":
        before = tl.completed_writes().before_or_on(hole.timestamp)
        last = before.last()
        return last.timestamp if last is not None and last.timestamp > begin else begin
    raise ReadError(
        f"incremental read of {table.storage.uri()}: write {hole.timestamp} ({hole.action}) is still "
        f"{hole.state.name.lower()} while later writes completed (a hollow commit): when it completes, its "
        f"records carry commit time {hole.timestamp}, inside this range, and a reader that moved past it would "
        f"never see them. Wait for it to complete, roll it back (`hoodie rollback {table.storage.uri()} "
        f"{hole.timestamp}` if its writer died), end the range before it (end < {hole.timestamp}), or set "
        f"{C.HOLLOW_COMMIT_POLICY.key}=BLOCK to read up to the last write completed before it")


def _refuse_archived_point(table: HoodieTable, point: str, first: str, what: str, archived: ArchivedTimeline) -> None:
    """A version 8/9 read as of ``point``, before the first active write completed (at ``first``), when
    writes were archived: the table then was made of archived writes alone, and slicing forms slices from
    the active instants completed by ``point`` (none), so the read would come back empty. Refused instead.
    ``archived``: the table's LSM timeline."""
    if not archived.instants:
        return  # nothing archived: before the first write the table was empty, and the read says so
    raise ReadError(f"{what}={point} is before the first write on the active timeline of {table.storage.uri()} "
                    f"(completed {first}); the writes before it are archived (.hoodie/timeline/history) and "
                    f"hoodie reads a version 8/9 table as of a time only within its active timeline. Use "
                    f"{what} at or after {first}" + (", or begin alone for every change since begin"
                                                     if what == "end" else ""))


def plan_read(table: HoodieTable, *, query_type: str = "snapshot", as_of: Optional[str] = None,
              begin: Optional[str] = None, end: Optional[str] = None,
              columns: Optional[Sequence[str]] = None, filters: Optional[Sequence[Any]] = None,
              options: Optional[dict[str, Any]] = None) -> ReadPlan:
    """Resolve a query into the file slices to read (pure metadata work, no data read).

    ``filters`` filter rows, prune partitions (:mod:`~hoodie.format.slice.pruning`) and slices by column stats
    (:mod:`~hoodie.format.slice.skipping`), only where no row can pass. ``options``: Hudi read options
    (``hoodie.metadata.enable=true`` lists through the metadata table, :mod:`hoodie.format.metadata.listing`)."""
    if query_type not in QUERY_TYPES:
        raise ReadError(f"query_type {query_type!r} is not one of {', '.join(QUERY_TYPES)}")
    check_read_options(options)
    # Tables whose files hoodie cannot read into the right rows: refused before any file is read.
    refuse_foreign_base_format(table, "read")
    refuse_dropped_partition_columns(table, "read")
    if not table.populate_meta_fields and query_type == "incremental":
        raise ReadError(
            f"incremental read of {table.storage.uri()}: the table has virtual keys (hoodie.populate.meta.fields="
            "false), so its files store no _hoodie_commit_time to select the range's records by (the read "
            "would be empty). Use a snapshot read, or time travel (as_of) to compare two points in time")
    tl = table.timeline
    writes = tl.completed_writes()
    if as_of is not None:
        as_of = _normalize_instant(as_of, "as_of")
        if query_type == "incremental":
            raise ReadError("as_of does not apply to incremental queries; use begin and end")
    if query_type == "incremental":
        if begin is None:
            raise ReadError("incremental queries need begin (exclusive), e.g. begin='00000000000000'")
        begin = _normalize_instant(begin, "begin")
        end = _normalize_instant(end, "end") if end is not None else None
    elif begin is not None or end is not None:
        raise ReadError("begin/end apply only to query_type='incremental'")

    if query_type == "incremental" and table.timeline_layout == 1:
        end = _hollow_commit_end(table, begin, end, options)
    read_as_of = end if query_type == "incremental" else as_of
    commit_times: Optional[frozenset[str]] = None
    # An incremental range that may hold archived writes, whose commit metadata (the file groups they
    # touched) the active timeline no longer has: every latest slice is read and the range filter on each
    # record's commit time decides (Hudi's fallback to a full table scan). Reading only the groups active
    # commits touched dropped the records of archived commits in the range without a word.
    archived_start = False
    # The view of a version 8/9 read as of a completion time, and the LSM timeline once read.
    completion_cut: Optional[str] = None
    archived: Optional[ArchivedTimeline] = None
    if table.timeline_layout == 1:
        if as_of is not None:
            _refuse_time_travel_past_a_pending_write(table, as_of)
        first_write = writes.first()
        archived_start = query_type == "incremental" and first_write is not None and begin < first_write.timestamp
    else:
        # Table versions 8/9 (Hudi 1.x): time travel and incremental ranges are completion times, and
        # writes complete out of requested order (two writers). Hudi archives by requested time, so an
        # archived write may have completed after active ones: its completion time, which only the LSM
        # timeline holds, decides whether a read sees it, as Java's CompletionTimeQueryView does.
        first_done = min(((i.completion or i.timestamp) for i in writes.instants), default=None)
        if read_as_of is not None and first_done is not None and read_as_of < first_done:
            archived = ArchivedTimeline.load(table.storage)
            _refuse_archived_point(table, read_as_of, first_done, "end" if query_type == "incremental" else "as_of",
                                   archived)
        if query_type == "incremental":
            # (begin, end] holds exactly the writes that completed in it. Whether an archived one did is
            # known only from the LSM timeline, so it is read for every range (a listing when nothing
            # was ever archived); end=None is an open range (begin, now].
            def done_in_range(done: str) -> bool:
                return begin < done and (read_as_of is None or done <= read_as_of)

            archived = archived if archived is not None else ArchivedTimeline.load(table.storage)
            late = _archived_commit_times(archived, begin, read_as_of)
            commit_times = frozenset(i.timestamp for i in writes if done_in_range(i.completion or i.timestamp)) | late
            archived_start = bool(late) or (first_done is not None and begin < first_done)
        if read_as_of is not None:
            # Read the table as it was when ``read_as_of`` completed: instants completed by then, and
            # nothing else; slices are then formed from those instants alone (completion-time slicing),
            # and archived instants count only if they completed by then (the view's completion cut).
            cut = completion_cut = read_as_of
            table = copy.copy(table).with_timeline(tl.filter(
                lambda i: (i.completion or i.timestamp) <= cut if i.is_completed else i.timestamp <= cut))
            tl = table.timeline
            writes = tl.completed_writes()
            read_as_of = None
            as_of = None
            end = None
    if not writes:
        schema = _try_schema(table)
        return ReadPlan(table, query_type, schema, _out_columns(schema, columns), [], read_as_of, begin, end)
    full_schema = table.arrow_schema(read_as_of)
    out_cols = _out_columns(full_schema, columns)
    flt = normalize_filters(filters)
    row_filter = filter_expression(flt, full_schema) if flt else None

    view = FileSystemView(table.storage, tl, file_listing=metadata_listing(table, options),
                          completion_cut=completion_cut,
                          archived_completion=archived.completion_times() if archived is not None else None)
    partitions = prune_partitions(table, full_schema, view.partitions(), flt) if flt else view.partitions()
    slices: list[FileSlice] = []
    if query_type == "read_optimized":
        for p in partitions:
            for bf in view.latest_base_files(p, as_of):
                slices.append(FileSlice(p, bf.file_id, bf.instant, bf, []))
    elif query_type == "snapshot":
        for p in partitions:
            slices.extend(view.latest_file_slices(p, as_of))
    elif archived_start:
        for p in partitions:
            slices.extend(view.latest_file_slices(p, end))
    else:
        in_range = (writes.filter(lambda i: i.timestamp in commit_times) if commit_times is not None
                    else writes.between(begin, end or "99999999999999999"))
        touched: set[tuple[str, str]] = set()
        for inst in in_range.instants:
            meta = tl.commit_metadata(inst)
            for part, stats in meta.partition_to_write_stats.items():
                for s in stats:
                    if s.file_id:
                        touched.add((s.partition_path if s.partition_path is not None else part, s.file_id))
        for p in partitions:
            for sl in view.latest_file_slices(p, end):
                if (p, sl.file_id) in touched:
                    slices.append(sl)
    if flt:  # partition_stats describe the latest snapshot only: not for time travel nor incremental reads
        slices = skip_slices(table, slices, flt, full_schema, options, query_type == "read_optimized",
                             query_type != "incremental" and as_of is None and completion_cut is None)
    skeleton = next((sl for sl in slices if sl.base_file is not None
                     and sl.base_file.instant == METADATA_BOOTSTRAP_INSTANT), None)
    if skeleton is not None:
        raise ReadError(
            f"{table.storage.uri()} is a bootstrapped table (hoodie.bootstrap.base.path="
            f"{table.bootstrap_base_path}): {skeleton.base_file.path} is a metadata-only bootstrap file holding "
            "Hudi's meta columns only, its data stays in the source file, which hoodie does not read (reading it "
            "alone would return nulls). Read this table with Java Hudi, or re-create it with a full-record "
            "bootstrap (hoodie.bootstrap.mode.selector=FULL_RECORD) or a bulk_insert of the source data")
    if not table.populate_meta_fields and query_type != "read_optimized":
        merged = next((sl for sl in slices if sl.log_files), None)
        if merged is not None:
            raise ReadError(
                f"{table.storage.uri()} has virtual keys (hoodie.populate.meta.fields=false): {merged.partition}/"
                f"{merged.file_id} has log files, whose records are merged with its base file by record key, which "
                "the table's files do not store and hoodie does not compute (the merge would be wrong). Read it "
                "with query_type='read_optimized' (base files only, as of the last compaction), or with Java Hudi")
    skip = _compaction_skips(table, view, slices) if query_type != "read_optimized" else frozenset()
    # Columns needed to merge and filter, on top of what the caller asked for.
    need = set(out_cols) | {"_hoodie_record_key", "_hoodie_commit_time"}
    mode = table.merge_mode
    if mode.ordering_field and mode.ordering_field in full_schema.names:
        need.add(mode.ordering_field)
    if table.is_mor and IS_DELETED in full_schema.names:
        need.add(IS_DELETED)  # a log row with _hoodie_is_deleted = true deletes its key
    for col, _, _ in flt:
        need.add(col)
    read_schema = pa.schema([f for f in full_schema if f.name in need])
    # Schema-on-read tables: every version of the schema history is mapped onto the read columns now, so a
    # change hoodie cannot read exactly is refused before any row is read.
    sor = SchemaOnRead.load(table, read_schema.names, read_as_of)
    return ReadPlan(table, query_type, read_schema, out_cols, slices, read_as_of, begin, end, row_filter, skip,
                    commit_times, sor)


def _compaction_skips(table: HoodieTable, view: FileSystemView, slices: Sequence[FileSlice]) -> frozenset[str]:
    """Log files a merged read must skip because their records are already read from another file.

    Partial compaction re-materializes log files under the compaction instant (links or copies,
    plus exact-split output; see ``hoodie.format.file_group.links`` and docs/compaction.md). Those are not new
    data, and must never be read next to the files they duplicate:

    * while the compaction is pending, a merged slice holds the previous slice's logs *and* the
      compaction's own outputs (log versions its plan reserves): the outputs are skipped;
    * a link or copy recorded by a completed compaction (``links.all_links``) is skipped when its
      target is read in the same slice.

    Snapshot, time-travel and incremental reads all go through this, so linked or copied records are
    never returned twice, nor as changes of the compaction instant (they keep their original
    ``_hoodie_commit_time``, which the incremental range filter checks).
    """
    # A file and its link (or a compaction's output) only share a slice when the view merges a
    # pending compaction's slice with the previous one; ordinary slices need no work here.
    merged = [sl for sl in slices if len({lf.parsed.base_instant for lf in sl.log_files}) > 1]
    if not merged:
        return frozenset()
    reserved = view.reserved_log_versions()
    linked = {l.link_path: l.target_path for l in all_links(table.timeline)}
    out: set[str] = set()
    for sl in merged:
        res = reserved.get((sl.partition, sl.file_id))
        paths = {lf.path for lf in sl.log_files}
        for lf in sl.log_files:
            if res is not None and lf.parsed.base_instant == res[0] and lf.version <= res[1]:
                out.add(lf.path)
            elif linked.get(lf.path) in paths:
                out.add(lf.path)
    return frozenset(out)


def _try_schema(table: HoodieTable) -> pa.Schema:
    try:
        return table.arrow_schema()
    except Exception:
        return pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS])


def _out_columns(schema: pa.Schema, columns: Optional[Sequence[str]]) -> list[str]:
    if columns is None:
        return list(schema.names)
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise ReadError(f"column(s) {missing} are not in the table (columns: {', '.join(schema.names)})")
    return list(columns)


def _normalize_instant(value: Any, name: str) -> str:
    s = str(value).strip()
    digits = s.replace("-", "").replace(":", "").replace(" ", "").replace("T", "").replace(".", "")
    # "0", "000": before every instant; as_of 'yyyy-MM-dd' is that day's 00:00:00 (Hudi's formatQueryInstant).
    day = name == "as_of" and len(s) == 10 and s[4] == s[7] == "-" and len(digits) == 8 and digits.isdigit()
    if not digits.isdigit() or (len(digits) < 14 and not day and set(digits) != {"0"}):
        raise ReadError(f"{name}={value!r} is not an instant time; use yyyyMMddHHmmss[SSS], e.g. 20240101000000")
    return digits if set(digits) == {"0"} else (digits + "000000000" if day else digits)[:17]


def iter_plan(plan: ReadPlan, slices: Optional[Sequence[FileSlice]] = None) -> Iterator[pa.Table]:
    """Read a plan slice by slice (each table already filtered and projected); ``slices`` reads a
    part of the plan's slices (one Spark task's), with the plan's pinned timeline and schema."""
    for sl in plan.slices if slices is None else slices:
        yield read_slice(plan, sl)


def read_slice(plan: ReadPlan, sl: FileSlice) -> pa.Table:
    """One of the plan's slices, filtered and projected."""
    table = plan.table
    if plan.query_type == "read_optimized":
        # Merge-on-read base files widen floats as Hudi's merging readers do, also here.
        t = (read_base_file(table.storage, sl.base_file.path, plan.schema, java_floats=table.is_mor,
                            schema_on_read=plan.schema_on_read)
             if sl.base_file else plan.schema.empty_table())
    else:
        t = read_file_slice(table, sl, plan.schema, as_of=plan.as_of, skip_log_files=plan.skip_log_files,
                            schema_on_read=plan.schema_on_read)
    return finish(plan, t)


def read_plan_parallel(plan: ReadPlan, threads: Optional[int] = None) -> list[pa.Table]:
    """Every slice of the plan, read by a pool of threads (Parquet decoding and storage reads release the
    GIL: on an object store the requests overlap), in the plan's order. ``threads`` defaults to the cpu
    count, at most 8."""
    slices = list(plan.slices)
    workers = min(len(slices), threads or min(8, os.cpu_count() or 1))
    if workers <= 1:
        return [read_slice(plan, sl) for sl in slices]

    def one(sl: FileSlice) -> pa.Table:
        with without_arrow_threads():  # the pool is the parallelism: no nested pyarrow pool per file
            return read_slice(plan, sl)

    # Slices with log files first: their merging is Python work holding the GIL, which the base-file-only
    # reads (Parquet decoding without the GIL) can overlap; queued last, the merges would run one after another
    # at the end. The result keeps the plan's order.
    order = sorted(range(len(slices)), key=lambda i: not slices[i].log_files)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hoodie-read") as pool:
        futures = {i: pool.submit(one, slices[i]) for i in order}
        return [futures[i].result() for i in range(len(slices))]


def finish(plan: ReadPlan, t: pa.Table) -> pa.Table:
    """Apply the incremental range, the row filter and the projection to one slice's rows."""
    if plan.query_type == "incremental":
        ct = t.column("_hoodie_commit_time")
        if plan.commit_times is not None:
            mask = pc.is_in(ct, value_set=pa.array(sorted(plan.commit_times), ct.type))
        else:
            mask = pc.greater(ct, plan.begin)
            if plan.end is not None:
                mask = pc.and_(mask, pc.less_equal(ct, plan.end))
        t = t.filter(mask)
    if plan.row_filter is not None and t.num_rows:
        t = t.filter(plan.row_filter)
    return t.select(plan.out_columns)


def read_table(base_path: str, *, query_type: str = "snapshot", as_of: Optional[str] = None,
               begin: Optional[str] = None, end: Optional[str] = None,
               columns: Optional[Sequence[str]] = None, filters: Optional[Sequence[Any]] = None,
               storage_options: Optional[dict[str, Any]] = None,
               options: Optional[dict[str, Any]] = None) -> pa.Table:
    """Read a Hudi table-version-6 table into one Arrow table, without Spark or a JVM.

    Args:
        base_path: table base path (local path, ``file://`` or ``s3://bucket/prefix``).
        query_type: ``"snapshot"`` (merged view), ``"read_optimized"`` (base files only) or
            ``"incremental"`` (records changed in ``(begin, end]``).
        as_of: time travel for snapshot/read-optimized reads (an instant, ``yyyyMMddHHmmss[SSS]``).
        begin: incremental start, exclusive. end: incremental end, inclusive (default: latest).
        columns: columns to return (default: all, meta columns first).
        filters: ``[(column, op, value), ...]`` AND-ed; ops ``= != < <= > >= in, not in``.
            Filters on partition columns prune partitions.
        storage_options: credentials/endpoint for object stores (``endpoint_url``, ``access_key``...).
        options: Hudi read options; ``{"hoodie.metadata.enable": "true"}`` lists files through the
            metadata table (default false, as Hudi 0.14/0.15 readers; see docs/metadata-table.md).
    """
    table = HoodieTable(base_path, storage_options, read_only=True)
    plan = plan_read(table, query_type=query_type, as_of=as_of, begin=begin, end=end,
                     columns=columns, filters=filters, options=options)
    parts = read_plan_parallel(plan)
    if not parts:
        return pa.schema([plan.schema.field(c) if c in plan.schema.names else pa.field(c, pa.string())
                          for c in plan.out_columns]).empty_table()
    return pa.concat_tables(parts)


__all__ = ["read_table", "read_file_slice", "scan_log_blocks", "plan_read", "iter_plan", "ReadError",
           "read_base_file", "filter_expression"]


__all__ = [
    "QUERY_TYPES", "ReadError", "ReadPlan", "check_read_options", "iter_plan", "finish", "plan_read", "read_table",
    # one file slice (hoodie.format.slice.slice_reader)
    "IS_PARTIAL_HEADER", "ScanResult", "block_data", "is_partial", "java_float_to_double", "merge_partial_blocks",
    "read_base_file", "read_file_slice", "scan_log_blocks", "slice_record_keys", "with_operation_deletes",
]
