"""Planning one write (insert / upsert / delete / overwrite) over Arrow data, in pure Python.

A write is planned the way Hudi plans it: de-duplication by key, tagging against the existing
records (a simple index: the keys of the latest slices of the affected partitions; with
``hoodie.index.type=RECORD_INDEX`` Hudi's global record index, looked up in the metadata table;
``GLOBAL_BLOOM``/``GLOBAL_SIMPLE`` a scan of every latest slice's keys, with the same global tagging), small-file
handling and file sizing, then one unit of work per file group (:class:`FileGroupWork`), which
:mod:`hoodie.services.write.execution` writes. The flow that runs these steps in a transaction is
:mod:`hoodie.services.write`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import WriteError
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import FileSlice, FileSystemView
from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.index_reader import lookup_record_index, record_index_available
from hoodie.format.metadata.table import MetadataTable
from hoodie.format.phases import phase
from hoodie.format.slice import writer as W
from hoodie.format.slice.merge import comparable_order_keys, java_order_key
from hoodie.format.slice.reader import read_file_slice, slice_record_keys
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.services.write import prepare as R
from hoodie.services.write.configs import IS_DELETED, OPERATION_TYPES, OVERWRITE_OPERATIONS, PARTITIONS_TO_DELETE, WriteConfig


def dedupe(records: pa.Table, precombine: Optional[str]) -> pa.Table:
    """One record per key: the greatest precombine value wins (ties: the later row)."""
    n = records.num_rows
    if n == 0:
        return records
    pos = pa.array(np.arange(n, dtype=np.int64))
    work = pa.table({"k": records.column("_hoodie_record_key"), "p": pos})
    if precombine:
        work = work.append_column("o", java_order_key(records.column(precombine)))
        idx = pc.sort_indices(work, [("k", "ascending"), ("o", "descending"), ("p", "descending")])
    else:
        idx = pc.sort_indices(work, [("k", "ascending"), ("p", "descending")])
    ks = work.column("k").take(idx).combine_chunks()
    first = np.ones(n, dtype=bool)
    if n > 1:
        first[1:] = ~pc.equal(ks.slice(1), ks.slice(0, n - 1)).fill_null(False).to_numpy(zero_copy_only=False)
    keep = np.sort(idx.to_numpy()[first])
    return records.take(pa.array(keep))



@dataclass
class FileGroupWork:
    """All the changes one file group receives in a write (what one Spark task executes)."""

    partition: str
    file_id: str
    kind: str  # "insert" (new file group), "merge" (COW rewrite), "append" (MOR log)
    base_instant: Optional[str] = None
    base_file: Optional[str] = None
    log_files: list[str] = field(default_factory=list)
    upserts: Optional[pa.Table] = None  # records with _hoodie_record_key/_hoodie_partition_path
    deletes: Optional[pa.Table] = None  # record_key, partition_path, ordering_value
    num_inserts: int = 0
    reserved_log_version: int = 0



@dataclass
class WritePlan:
    """A write split into per-file-group work, ready to execute and commit."""

    table: HoodieTable
    cfg: WriteConfig
    instant: str
    avro_schema: dict
    work: list[FileGroupWork]
    operation_type: str



def _slice_keys(table: HoodieTable, sl: FileSlice) -> pa.Array:
    """The record keys live in a slice, for tagging (a simple index).

    Keys deleted in a log do not count: a later upsert of such a key is a new insert, which gives
    the expected row in every reader (routing it to the old file group would let the older base
    version outrank it on ordering and resurrect or drop it). Only key columns are read unless a
    log block deletes keys (:func:`~hoodie.format.slice.reader.slice_record_keys`).
    """
    return slice_record_keys(table, sl)



def check_compaction_plans(table: HoodieTable) -> None:
    """Read every pending compaction plan of a MERGE_ON_READ table before a write starts: updates are
    routed by them, so a damaged plan file stops the write before anything is written (the error
    names the file and how to remove the plan)."""
    if table.is_mor:
        FileSystemView(table.storage, table.timeline).pending_compaction_file_groups()



def split_by_partition(records: pa.Table) -> dict[str, pa.Table]:
    """The records of each partition path, in input order within each (one stable sort: a task of a
    bulk_insert holds rows of many partitions, and a filter per partition would scan all rows each time)."""
    col = records.column("_hoodie_partition_path")
    if records.num_rows == 0:
        return {}
    if col.null_count:  # key generation always yields a path ("" when non-partitioned)
        raise WriteError("internal error: records without a partition path reached planning; nothing was written")
    enc = pc.dictionary_encode(col).combine_chunks()
    values = enc.dictionary.to_pylist()
    if len(values) == 1:
        return {values[0]: records}
    codes = enc.indices.to_numpy(zero_copy_only=False)
    counts = np.bincount(codes, minlength=len(values))
    # Codes number partitions by first appearance: rows that arrive grouped (time-partitioned data
    # usually does) have non-decreasing codes and are sliced without copying.
    grouped = codes.size < 2 or bool((codes[1:] >= codes[:-1]).all())
    ordered = records if grouped else records.take(pa.array(np.argsort(codes, kind="stable")))
    out: dict[str, pa.Table] = {}
    start = 0
    for code, n in enumerate(counts):
        if n:
            out[values[code]] = ordered.slice(start, int(n))
        start += int(n)
    return out



def plan_write(table: HoodieTable, records: pa.Table, cfg: WriteConfig, instant: str,
               avro_schema: dict, locations: Optional[Mapping[str, tuple[str, str]]] = None) -> WritePlan:
    """Tag records against the table and group them into per-file-group work.

    ``locations``: for a write with a global index, key -> (partition, file id) of the records' keys the table
    holds, as :func:`record_locations` found them (a Spark task gets the driver's lookup, made once for all
    tasks); None looks them up here."""
    op = cfg.operation
    is_delete = op == "delete"
    if cfg.auto_record_keys and records.column("_hoodie_record_key").null_count:
        raise WriteError("internal error: the write's record keys were not generated (with_auto_keys) before "
                         "planning; nothing was written")
    # Inserts and overwrites de-duplicate only with hoodie.combine.before.insert, as in Hudi.
    if op not in ("insert", "bulk_insert") + OVERWRITE_OPERATIONS or cfg.combine_before_insert:
        with phase("dedupe"):
            records = dedupe(records, None if is_delete else cfg.precombine_field)
    by_partition = split_by_partition(records)
    view = FileSystemView(table.storage, table.timeline)
    pending_fg = view.pending_compaction_file_groups()
    # Log versions a pending partial compaction reserves for its links (docs/compaction.md).
    reserved = view.reserved_log_versions()
    work: list[FileGroupWork] = []
    to_insert: dict[str, pa.Table] = {}
    # insert skips the index as Hudi's does; overwrites replace the old file groups wholesale. An insert
    # with hoodie.merge.allow.duplicate.on.inserts=false merges a key the table holds with the stored
    # record (Hudi routes it to the small file holding the key and merges there): it is tagged like an upsert.
    tag_index = op not in ("insert", "bulk_insert") + OVERWRITE_OPERATIONS or (
        op == "insert" and not cfg.allow_duplicate_on_inserts)
    if tag_index and cfg.tags_globally:
        with phase("index.record_index" if cfg.index_type == "RECORD_INDEX" else "index.global"):
            work, to_insert = _tag_globally(table, records, cfg, view, pending_fg, reserved, locations)
    else:
        for p in sorted(by_partition):
            prec = by_partition[p]
            matched = np.zeros(prec.num_rows, dtype=bool)
            if tag_index:
                keys = prec.column("_hoodie_record_key")
                for sl in view.latest_file_slices(p):
                    with phase("index.read"):
                        existing = _slice_keys(table, sl)
                    if len(existing) == 0:
                        continue
                    # A key held by several file groups (duplicates an insert wrote) updates each copy,
                    # as Hudi's index tags every location it finds for the key.
                    with phase("index.match"):
                        hit = pc.is_in(keys, value_set=existing).to_numpy(zero_copy_only=False)
                    if not hit.any():
                        continue
                    matched |= hit
                    w = _slice_work(table, cfg, sl, prec.filter(pa.array(hit)), pending_fg, reserved)
                    if w is not None:
                        work.append(w)
            if not is_delete:
                # A soft-deleted row of a key the table does not hold is not written (Hudi's
                # getInsertValue is empty for it): inserts, overwrites and upserts of new keys.
                new = R.drop_soft_deleted(prec.filter(pa.array(~matched)) if matched.any() else prec)
                if new.num_rows:
                    to_insert[p] = new
    if to_insert and record_index_available(table.props) and not (tag_index and cfg.tags_globally):
        with phase("index.record_index"):
            _check_new_keys_are_new(table, to_insert, op)
    per_file = max(1, cfg.max_file_size // max(1, cfg.record_size_estimate))
    for p, recs in to_insert.items():
        offset = 0
        if not table.is_mor and op not in OVERWRITE_OPERATIONS + ("bulk_insert",):
            # Copy-on-write small-file handling: fill base files below the small-file limit first
            # (not for bulk_insert, as in Hudi: its tasks write new file groups only, so tasks that
            # hold rows of one partition never rewrite the same file).
            by_fid = {w.file_id: w for w in work if w.partition == p}
            for sl in view.latest_file_slices(p):
                if offset >= recs.num_rows or sl.base_file is None or sl.base_file.size >= cfg.small_file_limit:
                    continue
                cap = (cfg.max_file_size - sl.base_file.size) // max(1, cfg.record_size_estimate)
                if cap <= 0:
                    continue
                chunk = recs.slice(offset, cap)
                offset += chunk.num_rows
                w = by_fid.get(sl.file_id)
                if w is None:
                    w = FileGroupWork(p, sl.file_id, "merge", sl.base_instant, sl.base_file.name, [])
                    work.append(w)
                    by_fid[sl.file_id] = w
                # The merge applies the work's deletes (records a RECORD_INDEX write moves out) before its
                # upserts, so new keys may join a file group that loses others.
                w.upserts = chunk if w.upserts is None else pa.concat_tables([w.upserts, chunk])
                w.num_inserts += chunk.num_rows
        rest = recs.slice(offset)
        if rest.num_rows == 0:
            continue
        n_files = max(1, math.ceil(rest.num_rows / per_file))
        size = math.ceil(rest.num_rows / n_files)
        for i in range(n_files):
            chunk = rest.slice(i * size, size)
            if chunk.num_rows:
                work.append(FileGroupWork(p, N.new_file_id(0), "insert", instant, None, [], chunk,
                                          num_inserts=chunk.num_rows))
    op_type = OPERATION_TYPES[op]
    return WritePlan(table, cfg, instant, avro_schema, work, op_type)



def _slice_work(table: HoodieTable, cfg: WriteConfig, sl: FileSlice, hits: pa.Table, pending_fg: Mapping[Any, str],
                reserved: Mapping[Any, tuple[Optional[str], int]]) -> Optional[FileGroupWork]:
    """The work of the records ``hits`` tagged to the file group of slice ``sl`` (None: nothing to write)."""
    p = sl.partition
    if table.is_mor:
        base_instant = pending_fg.get((p, sl.file_id), sl.base_instant)
        logs = [lf.name for lf in sl.log_files if lf.parsed.base_instant == base_instant]
        w = FileGroupWork(p, sl.file_id, "append", base_instant,
                          sl.base_file.name if sl.base_file and sl.base_instant == base_instant else "", logs)
        pending_c, top = reserved.get((p, sl.file_id), (None, 0))
        if pending_c == base_instant:
            w.reserved_log_version = top
    else:
        w = FileGroupWork(p, sl.file_id, "merge", sl.base_instant, sl.base_file.name if sl.base_file else None, [])
    if hits.num_rows == 0:
        return w
    if cfg.operation == "delete":
        # The delete operation writes natural-order deletes (ordering value 0), as Hudi's delete API
        # does: they win over every earlier version of the key.
        w.deletes = _delete_table(hits, cfg.event_time_field)
    elif table.is_mor:
        w.deletes, w.upserts = _split_soft_deletes(table, sl, hits, cfg)
        if w.deletes is None and w.upserts is None:
            return None
    else:
        w.upserts = hits  # the merge applies soft deletes (execute_file_group)
    return w


def record_locations(table: HoodieTable, cfg: WriteConfig, keys: Sequence[str],
                     view: Optional[FileSystemView] = None) -> dict[str, tuple[str, str]]:
    """key -> (partition, file id) of the ``keys`` the table holds, found by the write's global index.

    RECORD_INDEX looks them up in the metadata table's record_index (batched: each record_index file group
    reads the keys hashed to it, in one pass over its HFile and log blocks). GLOBAL_BLOOM and GLOBAL_SIMPLE,
    and a RECORD_INDEX write on a table whose record index this write's commit creates
    (hoodie.metadata.record.index.enable=true, not built yet), scan the keys of every latest file slice of the
    table: what the index will hold, as Hudi tags with the index it builds first, and what Hudi's global bloom
    and simple indexes find (their bloom-filter pruning only skips files that cannot hold a key)."""
    view = view if view is not None else FileSystemView(table.storage, table.timeline)
    if cfg.index_type == "RECORD_INDEX":
        if record_index_available(table.props):
            found = lookup_record_index(MetadataTable(table), keys)
            return {k: (loc.partition, loc.file_id) for k, loc in found.items()}
        if not cfg.build_record_index:
            raise RecordIndexOutOfSync(
                f"hoodie.index.type=RECORD_INDEX: the metadata table of {table.base_path} has no record_index "
                "partition (hoodie.table.metadata.partitions) at this write. Set hoodie.metadata.record.index.enable=true "
                "(the write builds it from the table's files), or use hoodie.index.type=BLOOM. Nothing was written")
    return _scan_locations(table, cfg, keys, view)


def _scan_locations(table: HoodieTable, cfg: WriteConfig, keys: Sequence[str],
                    view: FileSystemView) -> dict[str, tuple[str, str]]:
    """A global index by a scan: the live keys of every latest slice of the table, matched against ``keys``
    with Arrow (one ``is_in`` per slice). A key found in two file groups is refused: a global index maps each
    key to one place, and updating one copy would leave the other visible."""
    wanted = pa.array(sorted(set(keys)), pa.string())
    out: dict[str, tuple[str, str]] = {}
    if len(wanted) == 0:
        return out
    for part in view.partitions():
        for sl in view.latest_file_slices(part):
            with phase("index.read"):
                existing = slice_record_keys(table, sl)
            if len(existing) == 0:
                continue
            with phase("index.match"):
                hit = pc.is_in(existing, value_set=wanted)
                found = pc.unique(existing.filter(hit)).to_pylist() if pc.any(hit).as_py() else []
            for k in found:
                prev = out.setdefault(k, (part, sl.file_id))
                if prev != (part, sl.file_id):
                    raise RecordIndexConflict(
                        f"record key {k!r} is in partition {prev[0]!r} file group {prev[1]} and in partition {part!r} "
                        f"file group {sl.file_id}; hoodie.index.type={cfg.index_type} maps each key to one place (Hudi's "
                        "global index). Delete one copy first (a delete with hoodie.index.type=BLOOM in the partition "
                        "of the copy to drop). Nothing was written")
    return out


def record_index_groups(table: HoodieTable, cfg: WriteConfig, keys: Sequence[str],
                        partitions: Sequence[str],
                        found: Optional[Mapping[str, tuple[str, str]]] = None) -> dict[str, str]:
    """For a write spread over tasks (Spark) that tags by the record index: key -> the table partition
    naming the group of partitions whose task must plan its rows, for the keys whose group is not simply
    their incoming partition path.

    A record touches the partition the index stores its key in (an update, a delete) or its incoming
    partition (an insert), and both when it may move (hoodie.record.index.update.partition.path=true);
    every row of one key touches the partitions of all of them (de-duplication is global). Partitions
    touched together form one group, named by its least partition path, so no two tasks write one file
    group or fill one small file, and every task sees every row of its keys."""
    if found is None:
        found = record_locations(table, cfg, keys)
    move = cfg.update_partition_path and table.is_partitioned
    parent: dict[str, str] = {}

    def find(p: str) -> str:
        while parent.setdefault(p, p) != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    first: dict[str, str] = {}  # key -> a partition it touches
    for k, p_in in zip(keys, partitions):
        loc = found.get(k)
        touched = p_in if loc is None or move else loc[0]
        if loc is not None and move:
            union(p_in, loc[0])
        prev = first.setdefault(k, touched)
        union(prev, touched)
    out: dict[str, str] = {}
    for k, p_in in zip(keys, partitions):
        group = find(first[k])
        if group != p_in:
            out[k] = group
    return out


def _with_partition(rows: pa.Table, partition: str) -> pa.Table:
    """``rows`` with ``_hoodie_partition_path`` set to ``partition`` (Hudi re-keys a record tagged to its stored
    location with the stored partition path; the data columns stay as they came)."""
    i = rows.schema.get_field_index("_hoodie_partition_path")
    return rows.set_column(i, "_hoodie_partition_path", pa.repeat(pa.scalar(partition, pa.string()), rows.num_rows))


def _tag_globally(table: HoodieTable, records: pa.Table, cfg: WriteConfig, view: FileSystemView,
                  pending_fg: Mapping[Any, str], reserved: Mapping[Any, tuple[Optional[str], int]],
                  locations: Optional[Mapping[str, tuple[str, str]]] = None
                  ) -> tuple[list[FileGroupWork], dict[str, pa.Table]]:
    """Hudi's global tagging (``tagGlobalLocationBackToRecords``) for RECORD_INDEX, GLOBAL_BLOOM and
    GLOBAL_SIMPLE: (the work of the records found in the table, the new records per partition).

    A key the index holds goes to its stored file group, whatever its incoming partition value, unless the
    index type's update.partition.path setting is true on a partitioned table and the value differs: then it is
    merged with the stored record, and a result in the new partition deletes the stored record (a
    natural-order delete) and is inserted there. A delete (the operation, or ``_hoodie_is_deleted``) and a
    record older than the stored one by the ordering field (the merge keeps the stored record) stay in the
    old partition. A key the index does not hold is an insert in its incoming partition."""
    keys = records.column("_hoodie_record_key").to_pylist()
    parts = records.column("_hoodie_partition_path").to_pylist()
    found = record_locations(table, cfg, keys, view) if locations is None else locations
    is_delete = cfg.operation == "delete"
    move = cfg.update_partition_path and table.is_partitioned
    gone = R.soft_deleted(records)
    tagged: dict[tuple[str, str], list[int]] = {}
    moving: dict[tuple[str, str], list[int]] = {}
    new: dict[str, list[int]] = {}
    for i, (k, p_in) in enumerate(zip(keys, parts)):
        loc = found.get(k)
        if loc is None:
            if not is_delete:
                new.setdefault(p_in, []).append(i)
        elif move and p_in != loc[0] and not is_delete and not (gone is not None and gone[i]):
            moving.setdefault(loc, []).append(i)
        else:
            tagged.setdefault(loc, []).append(i)
    slices: dict[tuple[str, str], FileSlice] = {}
    for p in sorted({loc[0] for loc in list(tagged) + list(moving)}):
        for sl in view.latest_file_slices(p):
            slices[(p, sl.file_id)] = sl
    for loc in sorted(set(tagged) | set(moving)):
        if loc not in slices:
            raise RecordIndexOutOfSync(
                f"the record index of {table.base_path} places key {keys[(tagged.get(loc) or moving[loc])[0]]!r} in "
                f"partition {loc[0]!r} file group {loc[1]}, which the table does not have: the index is out of sync "
                "(hoodie metadata validate shows it; hoodie.metadata.record.index.enable=false then true rebuilds "
                "it). Nothing was written")
    moved_out: dict[tuple[str, str], list[int]] = {}
    for loc, idx in sorted(moving.items()):
        rows = records.take(pa.array(idx, pa.int64()))
        if table.merge_mode.use_ordering and cfg.precombine_field and cfg.precombine_field in rows.column_names:
            # The merge keeps the stored record when the incoming one is older: it stays where it is.
            schema = table.arrow_schema()
            cols = [c for c in ("_hoodie_record_key", "_hoodie_commit_time", cfg.precombine_field, IS_DELETED)
                    if c in schema.names]
            stored = read_file_slice(table, slices[loc], pa.schema([schema.field(c) for c in cols]))
            if cfg.precombine_field in stored.column_names:
                fresh = set(_drop_stale_updates(stored, rows, cfg.precombine_field)
                            .column("_hoodie_record_key").to_pylist())
                for i in idx:
                    if keys[i] not in fresh:
                        tagged.setdefault(loc, []).append(i)
                idx = [i for i in idx if keys[i] in fresh]
        for i in idx:
            moved_out.setdefault(loc, []).append(i)
            new.setdefault(parts[i], []).append(i)
    work: list[FileGroupWork] = []
    for loc in sorted(set(tagged) | set(moved_out)):
        sl = slices[loc]
        hits = _with_partition(records.take(pa.array(sorted(tagged.get(loc, [])), pa.int64())), loc[0])
        w = _slice_work(table, cfg, sl, hits, pending_fg, reserved)
        if loc in moved_out:
            gone_rows = _with_partition(records.take(pa.array(moved_out[loc], pa.int64())), loc[0])
            if w is None:
                w = _slice_work(table, cfg, sl, hits.slice(0, 0), pending_fg, reserved)
            assert w is not None
            if w.deletes is not None and "ordering_value" in w.deletes.column_names:
                # One delete block: the moved records' deletes carry their incoming ordering values (not
                # older than the stored ones), as the soft deletes beside them do.
                extra = _delete_table(gone_rows, cfg.event_time_field, cfg.precombine_field)
            else:
                extra = _delete_table(gone_rows, cfg.event_time_field)
            w.deletes = extra if w.deletes is None else pa.concat_tables(
                [w.deletes, extra.select(w.deletes.column_names).cast(w.deletes.schema)])
        if w is not None:
            work.append(w)
    to_insert: dict[str, pa.Table] = {}
    for p in sorted(new):
        # A soft-deleted row of a key the table does not hold is not written (Hudi's getInsertValue is
        # empty for it).
        rows = R.drop_soft_deleted(records.take(pa.array(sorted(new[p]), pa.int64())))
        if rows.num_rows:
            to_insert[p] = rows
    return work, to_insert



def _split_soft_deletes(table: HoodieTable, sl: FileSlice, hits: pa.Table,
                        cfg: WriteConfig) -> tuple[Optional[pa.Table], Optional[pa.Table]]:
    """(deletes, upserts) for a merge-on-read slice: soft-deleted rows become a delete block, as
    Hudi's append handle writes them, carrying the precombine value as their ordering value.

    With an ordering field, a soft delete older than the stored version is dropped here, as
    DefaultHoodieRecordPayload ignores it. Writing it would leave the outcome to each reader's
    delete rule (Java's Spark reader applies log deletes unconditionally)."""
    gone = R.soft_deleted(hits)
    if gone is None:
        return None, (hits if hits.num_rows else None)
    dels = hits.filter(pa.array(gone))
    ups = hits.filter(pa.array(~gone))
    if table.merge_mode.use_ordering and cfg.precombine_field:
        schema = table.arrow_schema()
        cols = ["_hoodie_record_key", "_hoodie_commit_time", cfg.precombine_field]
        if IS_DELETED in schema.names:
            cols.append(IS_DELETED)
        stored = read_file_slice(table, sl, pa.schema([schema.field(c) for c in cols if c in schema.names]))
        if cfg.precombine_field in stored.column_names:
            dels = _drop_stale_updates(stored, dels, cfg.precombine_field)
    deletes = _delete_table(dels, cfg.event_time_field, cfg.precombine_field) if dels.num_rows else None
    return deletes, (ups if ups.num_rows else None)



def _delete_table(hits: pa.Table, event_time_field: Optional[str] = None,
                  ordering_field: Optional[str] = None) -> pa.Table:
    cols = {
        "record_key": hits.column("_hoodie_record_key"),
        "partition_path": hits.column("_hoodie_partition_path"),
    }
    if ordering_field and ordering_field in hits.column_names:
        cols["ordering_value"] = hits.column(ordering_field)
    # The deletes' event times (when the input carries the event-time field) let the delete block
    # record its range; without them the block's event time is unknown (docs/compaction.md).
    if event_time_field and event_time_field in hits.column_names:
        cols["event_time"] = hits.column(event_time_field)
    return pa.table(cols)



def _drop_stale_updates(existing: pa.Table, ups: pa.Table, ordering: str) -> pa.Table:
    """``ups`` without the rows older (by ``ordering``) than the stored version of their key in ``existing``.

    A key stored more than once (an insert without de-duplication writes copies) is compared with its
    greatest copy, so an update replaces every copy or none."""
    # Compared as Java compares them (NaN above every value, -0.0 below 0.0).
    new_key, old_key = comparable_order_keys(ups.column(ordering), existing.column(ordering))
    stored = existing.column("_hoodie_record_key")
    if pc.count_distinct(stored).as_py() < existing.num_rows:
        # Greatest copy first (nulls last), so index_in's first match is the one to compare with.
        order = pc.sort_indices(old_key, sort_keys=[("", "descending")])
        stored, old_key = stored.take(order), old_key.take(order)
    at = pc.index_in(ups.column("_hoodie_record_key"), value_set=stored.combine_chunks()
                     if isinstance(stored, pa.ChunkedArray) else stored)
    stale = pc.fill_null(pc.less(new_key, pc.take(old_key, at)), False)
    return ups.filter(pc.invert(stale))



class RecordIndexConflict(WriteError):
    """A write that would put a key the record index places elsewhere: refused during planning, before
    any file is written (the write's instant files are removed at once)."""


class RecordIndexOutOfSync(RecordIndexConflict):
    """hoodie.index.type=RECORD_INDEX found no usable record index at planning (none, or one placing a key in
    a file group the table does not have): refused before any file is written, the write's instant files
    removed at once."""


def _check_new_keys_are_new(table: HoodieTable, to_insert: Mapping[str, pa.Table], op: str) -> None:
    """With a record index, keys are unique across the table (Hudi's global semantics): a record this
    write would add as new whose key the index already places elsewhere (an insert of a live key, a key
    moved to another partition by a non-global index), or that it adds in two partitions, is refused
    before anything is written. Keys in partitions an overwrite replaces do not count."""
    if op == "insert_overwrite_table":
        return
    replaced = set(to_insert) if op in OVERWRITE_OPERATIONS else set()
    where: dict[str, str] = {}
    for p, recs in to_insert.items():
        for k in recs.column("_hoodie_record_key").to_pylist():
            if where.setdefault(k, p) != p:
                raise RecordIndexConflict(f"record key {k!r} is written to partitions {where[k]!r} and {p!r}; the table has a "
                                 "record index (hoodie.metadata.record.index.enable), which maps each key to one place. "
                                 "Nothing was written")
    try:
        found = lookup_record_index(MetadataTable(table), where)
    except MetadataTableError:
        return  # an unreadable record index is dropped or rebuilt by the commit; it cannot tell here
    for k, loc in sorted(found.items()):
        if loc.partition in replaced:
            continue
        raise RecordIndexConflict(
            f"record key {k!r} is already in partition {loc.partition!r} (file group {loc.file_id}), and this {op} "
            f"would add it again in {where[k]!r}: the table's record index (hoodie.metadata.record.index.enable) "
            "maps each key to one place, as Hudi's global index does. Upsert it in its partition, delete it there "
            "first, or turn the record index off (hoodie.metadata.record.index.enable=false). Nothing was written")


def action_for(table: HoodieTable, operation: str) -> str:
    """The timeline action a write operation commits as."""
    if operation in OVERWRITE_OPERATIONS or operation == "delete_partition":
        return I.REPLACE_COMMIT
    return W.write_action_for(table)



def requested_content(operation: str) -> bytes:
    """What the ``.requested`` file holds: empty for commits, Avro for overwrite replacecommits."""
    if operation in OVERWRITE_OPERATIONS:
        # Spark's insert_overwrite writes an all-null HoodieRequestedReplaceMetadata.
        return plans.write_avro_metadata("HoodieRequestedReplaceMetadata", plans.requested_replace_metadata(None))
    # delete_partition replacecommits are written by hoodie.services.delete_partition alone.
    return b""



def replaced_file_groups(table: HoodieTable, partitions: Sequence[str]) -> dict[str, list[str]]:
    """The live file groups of ``partitions`` (what an overwrite or delete_partition replaces)."""
    view = FileSystemView(table.storage, table.timeline)
    out: dict[str, list[str]] = {}
    for p in partitions:
        ids = sorted({sl.file_id for sl in view.latest_file_slices(p)})
        if ids:
            out[p] = ids
    return out



def partitions_to_delete(options: Mapping[str, Any], records: Optional[pa.Table]) -> list[str]:
    """Partitions for delete_partition: ``hoodie.datasource.write.partitions.to.delete`` or the
    partition paths of the input records."""
    listed = [p.strip() for p in str(options.get(PARTITIONS_TO_DELETE) or "").split(",") if p.strip()]
    if listed:
        return listed
    if records is None or records.num_rows == 0:
        raise WriteError(f"delete_partition needs {PARTITIONS_TO_DELETE} or input rows naming the partitions")
    return sorted(pc.unique(records.column("_hoodie_partition_path")).to_pylist())
