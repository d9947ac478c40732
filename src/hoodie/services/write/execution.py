"""Executing a write's plan: the files of one file group (a new base file, a copy-on-write merge of the
latest base file, or a merge-on-read log file), which the Spark engine runs as one task per file
group, and the in-process loop over a whole plan. The file-level primitives (one base file, one log
file, meta columns, bloom filters) are the format layer's (:mod:`hoodie.format.slice.writer`)."""

from __future__ import annotations


import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.faults import fault_point
from hoodie.format.avro.schema import avro_to_arrow_schema
from hoodie.format.file_group import naming as N
from hoodie.format.phases import phase
from hoodie.format.slice import writer as W
from hoodie.format.slice.merge import comparable_order_keys
from hoodie.format.slice.slice_reader import _conform, read_base_file
from hoodie.format.table import META_COLUMNS, HoodieTable
from hoodie.format.timeline.commit_metadata import NULL_COMMIT, WriteStat
from hoodie.services.write import prepare as R
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.plan import FileGroupWork, plan_write


def _full_records(recs: pa.Table, schema: pa.Schema) -> pa.Table:
    """Data columns in table-schema order (missing nullable columns become nulls)."""
    data_schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
    return _conform(recs, data_schema)



def execute_file_group(table: HoodieTable, w: FileGroupWork, *, instant: str, avro_schema: dict,
                       cfg: WriteConfig, token: str, task_partition_id: int = 0) -> WriteStat:
    """Write the files of one file group (base file or log file) and return its write stat."""
    storage = table.storage
    data_schema = avro_to_arrow_schema(avro_schema)
    if w.kind == "insert":
        with phase("meta"):
            body = _full_records(w.upserts, data_schema)
            name = N.base_file_name(w.file_id, token, instant)
            recs = W.add_meta_columns(body, instant=instant, record_keys=w.upserts.column("_hoodie_record_key"),
                                      partition_paths=w.partition, file_name=name,
                                      task_partition_id=task_partition_id)
        return W.write_base_file(storage, partition=w.partition, file_id=w.file_id, instant=instant, token=token,
                                 records=recs, num_inserts=recs.num_rows, event_time_field=cfg.event_time_field,
                                 event_time_unit=cfg.event_time_unit,
                                 codec=cfg.parquet_codec, bloom=cfg.bloom)
    if w.kind == "append":
        write = W.LogWrite()
        n_up = 0
        if w.upserts is not None and w.upserts.num_rows:
            with phase("meta"):
                body = _full_records(w.upserts, data_schema)
                write.data = W.add_meta_columns(body, instant=instant,
                                                record_keys=w.upserts.column("_hoodie_record_key"),
                                                partition_paths=w.partition, file_name=w.file_id,
                                                task_partition_id=task_partition_id)
            n_up = w.upserts.num_rows
        if w.deletes is not None and w.deletes.num_rows:
            write.deletes = w.deletes
        if table.timeline_layout == 2:
            # Hudi 1.x names a log file by the deltacommit writing it (a new file each time; the
            # slice it joins follows from its completion time), and its write stat says so.
            stat = W.write_log_file(storage, partition=w.partition, file_id=w.file_id, base_instant=instant,
                                    instant=instant, token=token, write=write, avro_schema=avro_schema,
                                    block_format=cfg.block_format, event_time_field=cfg.event_time_field,
                                    event_time_unit=cfg.event_time_unit)
        else:
            stat = W.write_log_file(storage, partition=w.partition, file_id=w.file_id,
                                    base_instant=w.base_instant or instant, instant=instant, token=token,
                                    write=write, avro_schema=avro_schema, base_file_name=w.base_file or "",
                                    slice_log_files=w.log_files, block_format=cfg.block_format,
                                    event_time_field=cfg.event_time_field, event_time_unit=cfg.event_time_unit,
                                    reserved_up_to=w.reserved_log_version)
        stat.num_update_writes = n_up
        return stat
    # COW merge: rewrite the file group's latest base file with updates applied and deletes removed.
    # The rewritten file takes this write's schema (the table's, evolved): the old base file is read
    # through it, so a widened column (int->long, float->double) is cast up, never narrowed.
    full = pa.schema([pa.field(c, pa.string(), nullable=True) for c in META_COLUMNS]
                     + [f for f in data_schema if f.name not in META_COLUMNS])
    # The work item names the base file it rewrites, so executors need no listing.
    old_footer: dict[bytes, bytes] = {}
    if w.base_file:
        # Rewritten records widen float to double as Hudi's merge handle does (Float.toString).
        with phase("merge.read"):
            old = read_base_file(storage, f"{w.partition}/{w.base_file}" if w.partition else w.base_file, full,
                                 java_floats=True, footer=old_footer)
    else:
        old = full.empty_table()
    keep = old
    n_del = n_up = replaced = 0
    if w.deletes is not None and w.deletes.num_rows:
        dmask = pc.is_in(old.column("_hoodie_record_key"), value_set=w.deletes.column("record_key").combine_chunks())
        n_del = int(pc.sum(dmask).as_py() or 0)
        keep = old.filter(pc.invert(dmask))
    name = N.base_file_name(w.file_id, token, instant)
    pieces = [keep.select(full.names)]
    unmatched = 0
    if w.upserts is not None and w.upserts.num_rows:
        # Hudi's merge handle: every stored row whose key is updated merges with the incoming record on
        # its own (a key an insert stored twice has each copy merged); incoming records of keys the
        # file does not hold are inserts (small-file handling).
        ups = w.upserts
        ukeys = ups.column("_hoodie_record_key").combine_chunks()
        # A key twice in the incoming rows (an insert without de-duplication) merges its last row, as
        # the handle's key map keeps the last one put.
        n_in = len(ukeys)
        at = pc.subtract(pa.scalar(n_in - 1, pa.int32()),
                         pc.index_in(keep.column("_hoodie_record_key"), value_set=ukeys[::-1]))
        if cfg.operation == "insert" and cfg.allow_duplicate_on_inserts:
            # hoodie.merge.allow.duplicate.on.inserts=true (Hudi 1.x's default): Hudi's concat handle keeps
            # every stored record as it is and adds the inserts after them, duplicate keys included.
            at = pa.nulls(len(at), pa.int32())
        matched = at.is_valid().to_numpy(zero_copy_only=False)
        replace = matched.copy()
        if table.merge_mode.use_ordering and cfg.precombine_field:
            # DefaultHoodieRecordPayload: an incoming record older than the stored one keeps the stored one.
            new_key, old_key = comparable_order_keys(ups.column(cfg.precombine_field), keep.column(cfg.precombine_field))
            stale = pc.fill_null(pc.less(pc.take(new_key, at), old_key), False).to_numpy(zero_copy_only=False)
            replace &= ~stale
        gone = R.soft_deleted(ups)
        src = pc.filter(at, pa.array(replace))  # the incoming row each replaced copy becomes
        at_rows = np.flatnonzero(replace)  # where each replacement goes: the merge handle keeps file order
        if gone is not None:
            # _hoodie_is_deleted = true: the merge handle drops the stored record.
            dropped = gone[src.to_numpy(zero_copy_only=False)] if len(src) else np.zeros(0, dtype=bool)
            n_del += int(dropped.sum())
            src = src.filter(pa.array(~dropped))
            at_rows = at_rows[~dropped]
        replaced = len(src)
        held = pc.is_in(ukeys, value_set=keep.column("_hoodie_record_key").combine_chunks()).to_numpy(zero_copy_only=False)
        if cfg.operation == "insert" and cfg.allow_duplicate_on_inserts:
            held = np.zeros(len(ukeys), dtype=bool)
        fresh = ~held if gone is None else ~held & ~gone
        unmatched = int(fresh.sum())
        ups = pa.concat_tables([ups.take(src), ups.filter(pa.array(fresh))]) if unmatched else ups.take(src)
        body = _full_records(ups, pa.schema([f for f in full if f.name not in META_COLUMNS]))
        newrecs = pc_cast(W.add_meta_columns(body, instant=instant, record_keys=ups.column("_hoodie_record_key"),
                                             partition_paths=w.partition, file_name=name,
                                             task_partition_id=task_partition_id), full)
        # Replacements take their copies' places, inserts go last (Hudi's merge handle): the file keeps
        # its key order, so an unchanged key set keeps its bloom filter's bytes too.
        in_place = _replace_rows(pc_cast(keep, full), replace, at_rows, newrecs.slice(0, replaced))
        pieces = [in_place, newrecs.slice(replaced)]
        n_up = ups.num_rows
    merged = pa.concat_tables([pc_cast(t, full) for t in pieces])
    # Rewritten rows keep their commit time but point at the new file name.
    fn_idx = merged.schema.get_field_index("_hoodie_file_name")
    merged = merged.set_column(fn_idx, "_hoodie_file_name", pa.repeat(pa.scalar(name, pa.string()), merged.num_rows))
    return W.write_base_file(storage, partition=w.partition, file_id=w.file_id, instant=instant, token=token,
                             records=merged, prev_commit=w.base_instant or NULL_COMMIT,
                             num_updates=replaced, num_inserts=w.num_inserts,
                             num_deletes=n_del, event_time_field=cfg.event_time_field,
                             event_time_unit=cfg.event_time_unit,
                             codec=cfg.parquet_codec, bloom=cfg.bloom,
                             # Updates only (each new row replaced one old row, nothing deleted or added):
                             # the record keys are the old file's, and so may its bloom filter be.
                             same_keys_footer=old_footer if (n_del == 0 and unmatched == 0
                                                             and merged.num_rows == old.num_rows) else None)



def write_file_groups(table: HoodieTable, records: pa.Table, cfg: WriteConfig, instant: str, avro_schema: dict,
                      fault: str) -> list[WriteStat]:
    """Plan a write in this process and write its file groups one after another (the pure-Python
    executor's data work); ``fault`` names the fault point hit after each file group."""
    plan = plan_write(table, records, cfg, instant, avro_schema)
    stats = []
    # Base files are flushed to disk together once all are written, before the stats are returned.
    with table.storage.deferred_syncs():
        for i, w in enumerate(plan.work):
            stats.append(execute_file_group(table, w, instant=instant, avro_schema=avro_schema, cfg=cfg,
                                            token=N.write_token(i, 1, i), task_partition_id=i))
            fault_point(fault)
    return stats



def _replace_rows(rows: pa.Table, replace: np.ndarray, at: np.ndarray, new: pa.Table) -> pa.Table:
    """``rows`` with row ``at[i]`` replaced by row ``i`` of ``new`` (``at`` ascending, same schema), and the
    other rows flagged in ``replace`` removed (copies a soft delete drops)."""
    if not replace.any():
        return rows
    n = rows.num_rows
    # One take over both tables (joined without a copy): 2-3x faster than replace_with_mask per column,
    # and it takes nested columns too.
    pos = np.arange(n, dtype=np.int64)
    pos[at] = n + np.arange(len(at), dtype=np.int64)
    gone = replace.copy()
    gone[at] = False
    if gone.any():
        pos = pos[~gone]
    return pa.concat_tables([rows, new]).take(pa.array(pos))



def pc_cast(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """Cast a table to ``schema`` (same column names)."""
    return t.select(schema.names).cast(schema)
