"""Writing a Spark DataFrame into a Hudi v6 table: ``hoodie.spark.write``.

The pipeline mirrors Hudi's Spark write path, with the per-file-group work done by the format core
inside Spark tasks and the commit done on the driver:

1. key generation on executors (``mapInArrow``);
2. de-duplication by record key, keeping the greatest precombine value (shuffle by key);
3. tagging against the table (a simple index: the keys of the latest slices of the affected
   partitions, read by Spark tasks, joined with the input);
4. inserts assigned to file groups (new ones sized by ``hoodie.parquet.max.file.size``; on COW
   tables small existing base files are filled first);
5. a shuffle by file group, one ``applyInArrow`` task per file group writing a base file (inserts,
   COW merges) or a new log file (MOR updates and deletes), with markers;
6. the driver reconciles markers against the write stats and completes the instant.
"""

from __future__ import annotations

import difflib
import json
import math
import warnings
from typing import Any, Mapping, Optional

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.format import naming as N
from hoodie.format.batch_write import (
    FileGroupWork,
    WriteConfig,
    WriteError,
    _avro_schema_for,
    commit_write,
    dedupe,
    execute_file_group,
    open_or_create,
    WritePlan,
)
from hoodie.format.commit_metadata import WriteStat
from hoodie.format.fsview import FileSystemView
from hoodie.format.storage import Storage
from hoodie.format.table import META_COLUMNS, HoodieTable, table_exists
from hoodie.format import writer as W
from hoodie.faults import fault_point

KEY = "_hoodie_record_key"
PART = "_hoodie_partition_path"
FID = "_hoodie_fg"


def _warn_unknown_keys(options: Mapping[str, Any]) -> None:
    from hoodie.configs import known_keys

    known = known_keys()
    for k in options:
        if k.startswith("hoodie.") and k not in known:
            close = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.75)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            warnings.warn(f"unknown option {k!r} is ignored{hint}", UserWarning, stacklevel=3)


def _arrow_schema_of(df) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema, timezone="UTC", prefers_large_types=False)


def write(df, base_path: str, options: Mapping[str, Any], mode: str = "append",
          storage_options: Optional[dict[str, Any]] = None) -> str:
    """Write a DataFrame to a Hudi table as one commit; returns the instant time.

    ``options`` are Hudi's datasource keys as they are (``hoodie.table.name``,
    ``hoodie.datasource.write.operation`` = insert | bulk_insert | upsert | delete,
    ``hoodie.datasource.write.recordkey.field``, ``.partitionpath.field``, ``.precombine.field``,
    ``hoodie.datasource.write.table.type``, ``hoodie.payload.event.time.field``, file sizing keys...).
    ``mode="overwrite"`` deletes the table first; ``"append"`` creates it when absent.
    """
    if mode not in ("append", "overwrite"):
        raise WriteError(f"mode={mode!r}: use 'append' or 'overwrite'")
    opts = {str(k): str(v) for k, v in options.items() if v is not None}
    _warn_unknown_keys(opts)
    st = Storage(base_path, storage_options)
    if mode == "overwrite" and table_exists(st):
        st.delete_dir("")
    existing = HoodieTable(base_path, storage=st) if table_exists(st) else None
    cfg = WriteConfig.from_options(opts, existing)
    arrow_schema = _arrow_schema_of(df)
    body_schema = pa.schema([f for f in arrow_schema if f.name not in META_COLUMNS and f.name != "_hoodie_operation"])
    if cfg.operation == "delete" and existing is not None:
        avro_schema = existing.avro_schema()
    else:
        avro_schema = _avro_schema_for(body_schema.empty_table(), cfg, existing)
    table = existing or open_or_create(base_path, cfg, avro_schema, storage_options)
    from hoodie.services.rollback import rollback_failed_writes

    rollback_failed_writes(table)
    table.reload()
    action = W.write_action_for(table)
    inflight = W.start_commit(table, action, opts.get("hoodie.write.instant"),
                              operation_type=cfg.operation.upper())
    instant = inflight.timestamp
    spark = df.sparkSession
    keyed = _with_keys(df, cfg, body_schema)
    if cfg.operation not in ("insert", "bulk_insert") or cfg.combine_before_insert:
        keyed = _dedupe(keyed, cfg)
    keyed = keyed.persist()
    try:
        assigned, work = _tag_and_assign(spark, keyed, table, cfg, instant)
        stats = _execute(assigned, work, table, cfg, instant, avro_schema)
    finally:
        keyed.unpersist()
    fault_point("write.after_files")
    _reconcile_markers(table, instant, stats)
    op_type = {"insert": "INSERT", "bulk_insert": "BULK_INSERT", "upsert": "UPSERT", "delete": "DELETE"}[cfg.operation]
    plan = WritePlan(table, cfg, instant, avro_schema, [], op_type)
    fault_point("write.before_complete")
    commit_write(plan, stats)
    fault_point("write.after_complete")
    from hoodie.services.inline import run_inline_services

    run_inline_services(table.reload(), opts, spark=spark)
    return instant


def _with_keys(df, cfg: WriteConfig, body_schema: pa.Schema):
    """Add ``_hoodie_record_key`` and ``_hoodie_partition_path`` on executors with the key generator."""
    from pyspark.sql.types import StringType, StructField, StructType

    from hoodie.format.batch_write import prepare_records

    body_cols = [f.name for f in body_schema]
    df = df.select(*body_cols)
    out_schema = StructType(list(df.schema.fields) + [StructField(KEY, StringType(), True),
                                                       StructField(PART, StringType(), True)])

    def add_keys(batches):
        for b in batches:
            t = pa.Table.from_batches([b])
            yield from prepare_records(t, cfg).to_batches()

    return df.mapInArrow(add_keys, out_schema)


def _dedupe(keyed, cfg: WriteConfig):
    precombine = None if cfg.operation == "delete" else cfg.precombine_field
    schema = keyed.schema

    def dedupe_partition(batches):
        tables = [pa.Table.from_batches([b]) for b in batches]
        if not tables:
            return
        yield from dedupe(pa.concat_tables(tables), precombine).to_batches()

    n = keyed.sparkSession.sparkContext.defaultParallelism
    return keyed.repartition(max(1, n), KEY).mapInArrow(dedupe_partition, schema)


def _slice_descriptors(table: HoodieTable, partitions: list[str]) -> tuple[list[dict], dict]:
    view = FileSystemView(table.storage, table.timeline)
    pending = view.pending_compaction_file_groups()
    out = []
    for p in partitions:
        for sl in view.latest_file_slices(p):
            base_instant = pending.get((p, sl.file_id), sl.base_instant)
            out.append({
                "partition": p, "file_id": sl.file_id, "slice_base_instant": sl.base_instant,
                "base_instant": base_instant,
                "base_file": sl.base_file.name if sl.base_file else None,
                "base_size": sl.base_file.size if sl.base_file else 0,
                "log_files": [lf.name for lf in sl.sorted_logs()],
                "logs_at_base": [lf.name for lf in sl.log_files if lf.parsed.base_instant == base_instant],
            })
    return out, pending


def _existing_keys(spark, table: HoodieTable, descriptors: list[dict]):
    """A DataFrame (key, partition, file id) of the records in the given slices, read by Spark tasks."""
    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType([StructField("_ek", StringType(), True), StructField("_ep", StringType(), True),
                         StructField(FID, StringType(), True)])
    if not descriptors:
        return spark.createDataFrame([], schema)
    base_path = table.base_path
    storage_options = table.storage.storage_options

    def read_keys(batches):
        from hoodie.format.fsview import BaseFile, FileSlice, LogFile
        from hoodie.format.reader import read_file_slice

        t = HoodieTable(base_path, storage_options)
        full = t.arrow_schema()
        cols = [KEY, "_hoodie_commit_time"]
        mode = t.merge_mode
        if mode.ordering_field and mode.ordering_field in full.names:
            cols.append(mode.ordering_field)
        rs = pa.schema([full.field(c) for c in cols])
        for b in batches:
            for d in (json.loads(x) for x in b.column(0).to_pylist()):
                sl = FileSlice(d["partition"], d["file_id"], d["slice_base_instant"])
                if d["base_file"]:
                    bf = N.parse_base_file(d["base_file"])
                    sl.base_file = BaseFile(d["partition"], d["base_file"], bf.file_id, bf.instant, d["base_size"])
                sl.log_files = [LogFile(d["partition"], n, N.parse_log_file(n), 0) for n in d["log_files"]]
                keys = read_file_slice(t, sl, rs).column(KEY)
                n = len(keys)
                yield pa.RecordBatch.from_arrays(
                    [keys.combine_chunks(), pa.array([d["partition"]] * n, pa.string()),
                     pa.array([d["file_id"]] * n, pa.string())], names=["_ek", "_ep", FID])

    rows = [(json.dumps(d),) for d in descriptors]
    src = spark.createDataFrame(rows, "d string")
    n = max(1, min(len(rows), spark.sparkContext.defaultParallelism * 2))
    return src.repartition(n).mapInArrow(read_keys, schema)


def _tag_and_assign(spark, keyed, table: HoodieTable, cfg: WriteConfig, instant: str):
    """Return (DataFrame with a file-group column, {file group id: FileGroupWork without rows})."""
    from pyspark.sql import functions as F

    op = cfg.operation
    parts = [r[0] for r in keyed.select(PART).distinct().collect()]
    descriptors, _pending = _slice_descriptors(table, parts) if table.timeline.completed_writes() else ([], {})
    work: dict[str, FileGroupWork] = {}
    for d in descriptors:
        if table.is_mor:
            work[d["file_id"]] = FileGroupWork(
                d["partition"], d["file_id"], "append", d["base_instant"],
                d["base_file"] if d["base_instant"] == d["slice_base_instant"] else "", d["logs_at_base"])
        else:
            work[d["file_id"]] = FileGroupWork(d["partition"], d["file_id"], "merge", d["base_instant"],
                                               d["base_file"], [])
    tag = op not in ("insert", "bulk_insert") and bool(descriptors)
    if tag:
        existing = _existing_keys(spark, table, descriptors)
        tagged = keyed.join(existing, (keyed[KEY] == existing["_ek"]) & (keyed[PART] == existing["_ep"]), "left") \
            .drop("_ek", "_ep")
    else:
        tagged = keyed.withColumn(FID, F.lit(None).cast("string"))
    if op == "delete":
        return tagged.filter(F.col(FID).isNotNull()), work
    # Inserts: count per partition, then spread over new (and, on COW, small existing) file groups.
    counts = {r[0]: r[1] for r in tagged.filter(F.col(FID).isNull()).groupBy(PART).count().collect()}
    per_file = max(1, cfg.max_file_size // max(1, cfg.record_size_estimate))
    buckets: dict[str, list[str]] = {}
    for p, n in sorted(counts.items()):
        ids: list[str] = []
        remaining = n
        if not table.is_mor:
            for d in descriptors:
                if d["partition"] == p and d["base_file"] and d["base_size"] < cfg.small_file_limit and remaining > 0:
                    cap = max(0, (cfg.max_file_size - d["base_size"]) // max(1, cfg.record_size_estimate))
                    if cap:
                        ids.append(d["file_id"])
                        remaining -= cap
        for _ in range(max(0, math.ceil(remaining / per_file)) if remaining > 0 else 0):
            fid = N.new_file_id(0)
            ids.append(fid)
            work[fid] = FileGroupWork(p, fid, "insert", instant, None, [])
        if not ids:  # every insert fits nowhere else: one new file group
            fid = N.new_file_id(0)
            ids.append(fid)
            work[fid] = FileGroupWork(p, fid, "insert", instant, None, [])
        buckets[p] = ids
    if not buckets:
        return tagged.filter(F.col(FID).isNotNull()), work
    bcast = spark.sparkContext.broadcast(buckets)
    schema = tagged.schema

    def assign(batches):
        import numpy as np

        b = bcast.value
        for batch in batches:
            t = pa.Table.from_batches([batch])
            fids = t.column(FID).to_pylist()
            parts_ = t.column(PART).to_pylist()
            hashes = t.column("_h").to_numpy(zero_copy_only=False)
            out = [f if f is not None else b[p][int(h % len(b[p]))] for f, p, h in zip(fids, parts_, hashes)]
            t = t.set_column(t.schema.get_field_index(FID), FID, pa.array(out, pa.string()))
            yield from t.drop_columns(["_h"]).to_batches()

    hashed = tagged.withColumn("_h", F.abs(F.xxhash64(F.col(KEY))))
    return hashed.mapInArrow(assign, schema), work


def _execute(assigned, work: dict[str, FileGroupWork], table: HoodieTable, cfg: WriteConfig,
             instant: str, avro_schema: dict) -> list[WriteStat]:
    from pyspark.sql.types import StringType, StructField, StructType

    spark = assigned.sparkSession
    base_path = table.base_path
    storage_options = table.storage.storage_options
    work_meta = {fid: (w.partition, w.kind, w.base_instant, w.base_file, w.log_files, w.reserved_log_version)
                 for fid, w in work.items()}
    bcast = spark.sparkContext.broadcast(work_meta)
    op = cfg.operation
    out_schema = StructType([StructField("stat", StringType(), True)])

    def run_group(t: pa.Table) -> pa.Table:
        from pyspark import TaskContext

        if t.num_rows == 0:
            return pa.table({"stat": pa.array([], pa.string())})
        fid = t.column(FID)[0].as_py()
        partition, kind, base_instant, base_file, log_files, reserved = bcast.value[fid]
        tc = TaskContext.get()
        token = N.write_token(tc.partitionId(), tc.stageId(), tc.taskAttemptId()) if tc else N.DEFAULT_WRITE_TOKEN
        rows = t.drop_columns([FID])
        w = FileGroupWork(partition, fid, kind, base_instant, base_file, list(log_files),
                          reserved_log_version=reserved)
        if op == "delete":
            w.deletes = pa.table({"record_key": rows.column(KEY), "partition_path": rows.column(PART)})
        else:
            w.upserts = rows
            if kind == "insert":
                w.num_inserts = rows.num_rows
        tbl = HoodieTable(base_path, storage_options)
        stat = execute_file_group(tbl, w, instant=instant, avro_schema=avro_schema, cfg=cfg, token=token,
                                  task_partition_id=tc.partitionId() if tc else 0)
        return pa.table({"stat": [json.dumps(stat.to_json())]})

    n_groups = max(1, len(work))
    result = assigned.repartition(n_groups, FID).groupBy(FID).applyInArrow(run_group, out_schema).collect()
    return [WriteStat.from_json(json.loads(r[0])) for r in result]


def _reconcile_markers(table: HoodieTable, instant: str, stats: list[WriteStat]) -> None:
    """Delete data files a failed task attempt left behind (marked but not in the write stats)."""
    written = {s.path for s in stats if s.path}
    for path, _io in W.marker_files(table.storage, instant):
        if path not in written:
            table.storage.delete(path)
