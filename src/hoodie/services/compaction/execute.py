"""Executing one compaction operation: merge the base file with exactly the listed log files and
write ``<fileId>_<token>_<C>.parquet``.

This is the unit of work the Spark engine distributes (one task per operation): it touches only
the files of its file group and returns a :class:`CompactionWriteStat`. Links, the commit and
everything else that concerns the whole plan happen in :mod:`hoodie.services.compaction.runner`.

Merging reuses the format core's log scan and record mergers, so a compacted base file holds
exactly what a snapshot read of (base + listed logs) returns, with each record's meta columns
preserved (``_hoodie_commit_time``, ``_hoodie_commit_seqno``, key, partition) except
``_hoodie_file_name``, which names the new base file.

**Exact split** (event-time plans with ``hoodie.compaction.event.time.exact.split``): records whose
event time is after the plan's threshold T are kept out of the base file and written, under the
compaction instant, into the log file with the version the plan reserved below its links (so it sorts
after the base file and before the remaining files):

* commit-time ordering: the base file is the merge of base + the records at or before T + all
  deletes; the split file holds each key's final version when that version is after T;
* ordering-field merging: the base file is the same merge; the split file holds each key's greatest
  version after T, plus (in delete blocks keeping their original instants and ordering values) the
  compacted deletes of those keys, so every delete still meets every version it met before.

Delete records carry no per-record event time in the log format, so deletes always apply to the base
file. The split file's data block has the compaction instant as INSTANT_TIME: readers ignore it until
the compaction commits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.format.log import logformat as L
from hoodie.format.file_group import naming as N
from hoodie.format.slice import writer as W
from hoodie.format.timeline.commit_metadata import WriteStat
from hoodie.format.timeline.compaction_plan import CompactionOperation
from hoodie.format.slice.eventtime import event_time_millis
from hoodie.format.file_group.fsview import LogFile
from hoodie.format.slice.merge import (
    IS_DELETED, DeleteBatch, LogBatch, merge_commit_time, merge_ordering,
)
from hoodie.format.slice.reader import (
    block_data, is_partial, merge_partial_blocks, read_base_file, scan_log_blocks, with_operation_deletes,
)
from hoodie.format.table import HoodieTable

import hoodie.services.compaction.keys as K
import hoodie.services.compaction.partial as P
from hoodie.services.compaction.config import CompactionConfig, CompactionError, as_config

SRC = "__hoodie_compaction_src"  # 0: base file row, 1: log row (dropped before writing)
SPLIT_VERSION = 1


@dataclass
class CompactionWriteStat(WriteStat):
    """A compaction write stat plus what the commit and metrics need. Serialises exactly like a
    :class:`WriteStat` (the extra fields never reach the commit JSON)."""

    split_file: Optional[str] = None  # path of the exact-split log file, if one was written
    split_records: int = 0
    split_deletes: int = 0
    split_min_event_time: Optional[int] = None
    split_max_event_time: Optional[int] = None
    bytes_read: int = 0
    bytes_written: int = 0
    duration_ms: int = 0


@dataclass
class CompactionTask:
    """Everything one operation needs, picklable, for an executor on another process or machine."""

    base_path: str
    instant: str
    operation: CompactionOperation
    options: dict[str, str] = field(default_factory=dict)
    plan_extra: dict[str, str] = field(default_factory=dict)
    task_id: int = 0
    storage_options: Optional[dict[str, Any]] = None

    def run(self, token: Optional[str] = None) -> "CompactionWriteStat":
        """Execute this task (see :func:`execute_task`)."""
        return execute_task(self, token)


def execute_task(task: CompactionTask, token: Optional[str] = None) -> CompactionWriteStat:
    """Run one :class:`CompactionTask`. ``token`` is the write token (``<partition>-<stage>-<attempt>``
    on Spark); default ``<task_id>-0-<task_id>``."""
    table = HoodieTable(task.base_path, task.storage_options)
    cfg = CompactionConfig.from_options(task.options, table.props)
    return execute_operation(table, task.instant, task.operation, cfg,
                             token=token or N.write_token(task.task_id, 0, task.task_id),
                             task_partition_id=task.task_id, plan_extra=task.plan_extra)


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def compacted_log_names(op: CompactionOperation, instant: str) -> list[str]:
    """The delta files an operation compacts (its sentinel left out)."""
    fid = op.file_id or ""
    return [n for n in op.delta_file_names if not P.is_sentinel(n, fid, instant)]


def _with_src(t: pa.Table, src: int) -> pa.Table:
    return t.append_column(SRC, pa.array(np.full(t.num_rows, src, dtype=np.int8)))


@dataclass
class _Scanned:
    batches: list[LogBatch]
    deletes: list[tuple[str, pa.Table, Optional[tuple[int, int]]]]  # (instant, delete records, block range)
    total_blocks: int
    corrupt: int
    rollback: int
    log_records: int
    blocks: tuple = ()  # the committed blocks, when one is a partial update (merged as a read does)


def _scan(table: HoodieTable, logs: list[LogFile], instant: str, schema: pa.Schema) -> _Scanned:
    """The committed blocks of ``logs`` (log order) as merge batches tagged as log rows; ``schema``
    is the table schema (with meta columns, without the origin tag)."""
    scan = scan_log_blocks(table.storage, [lf.path for lf in logs], table.timeline, as_of=instant)
    batches: list[LogBatch] = []
    deletes: list[tuple[str, pa.Table, Optional[tuple[int, int]]]] = []
    n = 0
    for b in scan.blocks:
        if b.block_type == L.BlockType.DELETE:
            d = b.delete_records()
            ordering = d.column("ordering_value").combine_chunks()
            batches.append(LogBatch(deletes=DeleteBatch(d.column("record_key").combine_chunks(), ordering,
                                                        b.instant_time)))
            deletes.append((b.instant_time, d, b.event_time_range))
            n += d.num_rows
        else:
            data = with_operation_deletes(b, block_data(b, schema, java_floats=True))
            batches.append(LogBatch(data=_with_src(data, 1)))
            n += data.num_rows
    partial = tuple(scan.blocks) if any(is_partial(b) for b in scan.blocks) else ()
    return _Scanned(batches, deletes, scan.total_blocks, scan.corrupt_blocks, scan.rollback_blocks, n, partial)


def _merge(table: HoodieTable, base: Optional[pa.Table], batches: list[LogBatch], schema: pa.Schema) -> pa.Table:
    # Compaction is Java's merge handle: a key held twice in the base file merges each copy on its own.
    mode = table.merge_mode
    if mode.use_ordering and mode.ordering_field:
        return merge_ordering(base, batches, schema, mode.ordering_field, each_copy=True)
    return merge_commit_time(base, batches, schema, each_copy=True)


def _deferred_mask(t: pa.Table, field_name: str, threshold: int, unit: str) -> np.ndarray:
    """Rows whose event time is known and after the threshold (null event times stay in the base)."""
    if t.num_rows == 0:
        return np.zeros(0, dtype=bool)
    ms = event_time_millis(t.column(field_name), field_name, unit)
    return pc.fill_null(pc.greater(ms, threshold), False).to_numpy(zero_copy_only=False)


def _split(table: HoodieTable, base: Optional[pa.Table], scanned: _Scanned, schema: pa.Schema,
           field_name: str, threshold: int,
           unit: str) -> tuple[pa.Table, pa.Table, list[tuple[str, pa.Table, Optional[tuple[int, int]]]]]:
    """(base rows, split-off rows, carried delete blocks) for an exact split (see module doc)."""
    applied: list[LogBatch] = []
    deferred: list[pa.Table] = []
    for b in scanned.batches:
        if b.data is None:
            applied.append(b)
            continue
        late = _deferred_mask(b.data, field_name, threshold, unit)
        applied.append(LogBatch(data=b.data.filter(pa.array(~late))))
        if late.any():
            deferred.append(b.data.filter(pa.array(late)))
    new_base = _merge(table, base, applied, schema)
    mode = table.merge_mode
    if mode.use_ordering and mode.ordering_field:
        split = merge_ordering(None, [LogBatch(data=t) for t in deferred], schema, mode.ordering_field) \
            if deferred else schema.empty_table()
        keys = split.column("_hoodie_record_key").combine_chunks()
        carried = []
        for inst, d, rng in scanned.deletes:
            hit = pc.is_in(d.column("record_key"), value_set=keys)
            if pc.any(hit).as_py():
                carried.append((inst, d.filter(hit), rng))
        return new_base, split, carried
    # Only the winning log rows are taken from it: once each (the readers' rule), however many copies.
    full = merge_commit_time(base, scanned.batches, schema)
    from_log = pc.equal(full.column(SRC), 1).to_numpy(zero_copy_only=False)
    late = _deferred_mask(full, field_name, threshold, unit)
    return new_base, full.filter(pa.array(from_log & late)), []


def _write_split(table: HoodieTable, *, partition: str, file_id: str, instant: str, token: str,
                 rows: pa.Table, carried, avro_schema: dict, field_name: str, block_format: str,
                 unit: str) -> tuple[str, int, Optional[tuple[int, int]]]:
    writer_schema = W.avro_schema_with_meta(avro_schema)
    blocks: list[bytes] = []
    rng = None
    if rows.num_rows:
        ms = event_time_millis(rows.column(field_name), field_name, unit)
        mm = pc.min_max(ms)
        rng = (int(mm["min"].as_py()), int(mm["max"].as_py()))
        enc = L.encode_parquet_data_block if block_format == "parquet" else L.encode_avro_data_block
        blocks.append(enc(rows, instant=instant, avro_schema=writer_schema, event_time_range=rng))
    for inst, d, drng in carried:
        keys = d.select(["record_key", "partition_path", "ordering_value"])
        blocks.append(L.encode_delete_block(keys, instant=inst, avro_schema=writer_schema, event_time_range=drng))
    rel = _rel(partition, N.log_file_name(file_id, instant, SPLIT_VERSION, token))
    table.storage.delete(rel)  # a leftover of an earlier attempt with this token
    size = L.write_log_file(table.storage, rel, blocks)
    return rel, size, rng


def execute_operation(table: HoodieTable, plan_instant: str,
                      operation: Union[CompactionOperation, Mapping[str, Any]], config: Any = None, *,
                      token: Optional[str] = None, task_partition_id: int = 0,
                      plan_extra: Optional[dict[str, str]] = None) -> CompactionWriteStat:
    """Compact one operation of the plan at ``plan_instant`` and return its write stat.

    Merges the operation's base file with exactly its listed log files (the sentinel of a partial
    operation excluded) through the format core, and writes ``<fileId>_<token>_<C>.parquet`` (an
    empty one when every record was deleted: the new slice must exist, or the old one would show
    again). With an exact-split plan, also writes the split-off log file (module doc).

    Args:
        table: the table (its timeline decides which log blocks are committed).
        plan_instant: the compaction instant C.
        operation: one operation of C's plan (or its ``HoodieCompactionOperation`` Avro record).
        config: a :class:`CompactionConfig` or options (codec, log block format).
        token: the write token (default ``<task_partition_id>-0-<task_partition_id>``).
        plan_extra: the plan's ``extraMetadata`` (read from the timeline when omitted).

    Raises:
        CompactionError: a listed file is missing, or the operation is partial but its plan lacks
            the partial-plan marker.
    """
    started = time.monotonic()
    cfg = as_config(config, table.props)
    storage = table.storage
    token = token or N.write_token(task_partition_id, 0, task_partition_id)
    if plan_extra is None:
        plan_extra = table.timeline.compaction_plan(plan_instant).extra_metadata
    op = operation if isinstance(operation, CompactionOperation) else CompactionOperation.from_avro(operation)
    partition, file_id = op.file_group
    base_instant = op.base_instant_time or ""
    if not file_id:
        raise CompactionError(f"compaction {plan_instant}: an operation has no fileId")
    if op.is_partial and plan_extra.get(K.PARTIAL_PLAN_KEY) != "true":
        raise CompactionError(
            f"compaction {plan_instant}: operation {file_id} has symlinkOperations but the plan lacks the "
            f"{K.PARTIAL_PLAN_KEY} marker; refusing an inconsistent plan")
    logs: list[LogFile] = []
    for name in compacted_log_names(op, plan_instant):
        rel = _rel(partition, name)
        try:
            size = storage.size(rel)
        except FileNotFoundError:
            raise CompactionError(
                f"compaction {plan_instant}: log file {rel} listed in the plan is missing (was it cleaned?); "
                "nothing was committed") from None
        logs.append(LogFile(partition, name, N.parse_log_file(name), size))
    logs.sort(key=LogFile.sort_key)
    base_name = op.data_file_name
    schema = table.arrow_schema(plan_instant)
    avro_schema = table.avro_schema(plan_instant)
    # Hudi's operation field (Flink changelog mode): a winning log row whose _hoodie_operation is "D" is a
    # delete, as in a read; the flag column rides along for the merge only.
    op_flag = bool(logs) and IS_DELETED not in schema.names and table.has_operation_field
    if op_flag:
        if plan_extra.get(K.EXACT_SPLIT_KEY) == "true":
            raise CompactionError(
                f"compaction {plan_instant}: an exact event-time split of a table with Hudi's operation field "
                "(_hoodie_operation) would carry deleted rows into the split log without their operation; hoodie "
                "does not split such tables. Schedule without the exact split, or compact with Java Hudi")
        schema = schema.append(pa.field(IS_DELETED, pa.bool_()))
    work_schema = schema.append(pa.field(SRC, pa.int8()))
    base = None
    base_bytes = 0
    if base_name:
        base_rel = _rel(partition, base_name)
        if not storage.is_file(base_rel):
            raise CompactionError(f"compaction {plan_instant}: base file {base_rel} is missing; nothing was committed")
        # Compaction rewrites records: float widens to double as Hudi's compactor does it.
        base = _with_src(read_base_file(storage, base_rel, schema, java_floats=True), 0)
        base_bytes = storage.size(base_rel)
    scanned = _scan(table, logs, plan_instant, schema)
    split_rows = work_schema.empty_table()
    carried: list = []
    split_field = plan_extra.get(K.EVENT_FIELD_KEY) or cfg.event_time_field
    # The unit the plan was made with (an exact split must read numbers as scheduling did).
    unit = plan_extra.get(K.EVENT_UNIT_KEY) or cfg.event_time_unit
    if plan_extra.get(K.EXACT_SPLIT_KEY) == "true":
        if not split_field or K.THRESHOLD_KEY not in plan_extra:
            raise CompactionError(f"compaction {plan_instant}: exact-split plan without event-time field or threshold")
        merged, split_rows, carried = _split(table, base, scanned, work_schema, split_field,
                                             int(plan_extra[K.THRESHOLD_KEY]), unit)
    elif scanned.blocks:
        # Hudi 1.x partial updates: laid over the older record as a read lays them; a row comes from
        # the log when a block touched its key.
        plain = merge_partial_blocks(table, base.drop_columns([SRC]) if base is not None else None,
                                     scanned.blocks, schema)
        touched = pa.concat_arrays([b.data.column("_hoodie_record_key").combine_chunks().cast(pa.string())
                                    for b in scanned.batches if b.data is not None] or [pa.array([], pa.string())])
        src = pc.cast(pc.is_in(plain.column("_hoodie_record_key").cast(pa.string()), value_set=touched), pa.int8())
        merged = plain.append_column(pa.field(SRC, pa.int8()), src)
    else:
        merged = _merge(table, base, scanned.batches, work_schema)
    base_keys = base.column("_hoodie_record_key").combine_chunks() if base is not None else pa.array([], pa.string())
    from_log = pc.equal(merged.column(SRC), 1).to_numpy(zero_copy_only=False) if merged.num_rows else np.zeros(0, bool)
    in_base = (pc.is_in(merged.column("_hoodie_record_key"), value_set=base_keys).to_numpy(zero_copy_only=False)
               if merged.num_rows else np.zeros(0, bool))
    n_updates = int((from_log & in_base).sum())
    n_inserts = int((from_log & ~in_base).sum())
    out_keys = merged.column("_hoodie_record_key").combine_chunks()
    n_deleted = int(len(base_keys) - pc.sum(pc.is_in(base_keys, value_set=out_keys)).as_py()) if len(base_keys) else 0
    new_name = N.base_file_name(file_id, token, plan_instant)
    records = merged.drop_columns([SRC, IS_DELETED] if op_flag else [SRC])
    fn = records.schema.get_field_index("_hoodie_file_name")
    records = records.set_column(fn, "_hoodie_file_name", pa.repeat(pa.scalar(new_name, pa.string()), records.num_rows))
    storage.delete(_rel(partition, new_name))  # a leftover of an earlier attempt with this token
    ev_field = cfg.event_time_field if cfg.event_time_field in records.column_names else None
    stat = W.write_base_file(storage, partition=partition, file_id=file_id, instant=plan_instant, token=token,
                             records=records, prev_commit=base_instant or "null", num_inserts=n_inserts,
                             num_updates=n_updates, num_deletes=n_deleted, event_time_field=ev_field,
                             codec=cfg.parquet_codec, bloom=cfg.bloom, event_time_unit=unit)
    out = CompactionWriteStat(**{f: getattr(stat, f) for f in WriteStat.__dataclass_fields__})
    out.prev_base_file = base_name or None  # Hudi 1.x records the compacted base file (prevBaseFile)
    out.total_log_records = scanned.log_records
    out.total_log_files_compacted = len(logs)
    out.total_log_size_compacted = sum(lf.size for lf in logs)
    out.total_updated_records_compacted = n_updates
    out.total_log_blocks = scanned.total_blocks
    out.total_corrupt_log_block = scanned.corrupt
    out.total_rollback_blocks = scanned.rollback
    out.bytes_read = base_bytes + out.total_log_size_compacted
    out.bytes_written = stat.total_write_bytes
    if split_rows.num_rows or carried:
        rows = split_rows.drop_columns([SRC])
        rel, size, rng = _write_split(table, partition=partition, file_id=file_id, instant=plan_instant, token=token,
                                      rows=rows, carried=carried, avro_schema=avro_schema, field_name=split_field,
                                      block_format=cfg.log_block_format, unit=unit)
        out.split_file = rel
        out.split_records = rows.num_rows
        out.split_deletes = sum(d.num_rows for _, d, _ in carried)
        if rng is not None:
            out.split_min_event_time, out.split_max_event_time = rng
        out.bytes_written += size
    elapsed = int((time.monotonic() - started) * 1000)
    out.duration_ms = elapsed
    out.runtime_stats = {"totalScanTime": elapsed, "totalUpsertTime": elapsed if base_name else 0,
                         "totalCreateTime": 0 if base_name else elapsed}
    return out


__all__ = ["execute_operation", "execute_task", "CompactionTask", "CompactionWriteStat", "compacted_log_names"]
