"""``hoodie quickstart --streaming``: the quickstart's event stream through Structured Streaming.

The same events as the batch quickstart (:func:`hoodie.interfaces.quickstart.generate_batches`: days of
click/order events, late arrivals, status updates, deletes as rows with ``_hoodie_is_deleted=true``)
are written as one Parquet file per arrival into a folder, which a Spark file source reads one file per
micro-batch; ``hoodie.spark.write_stream`` writes each micro-batch into a merge-on-read table, exactly
once, with the services inline beside the stream: event-time compaction (strategy and trigger, threshold
T = the compaction's instant minus one day of latency) and partition TTL after each micro-batch. After
each micro-batch the run prints the commit and the read-optimized view's freshness (threshold T,
watermark W).

Everything the run writes stays inside the base path it claimed (the source files and Spark's
checkpoint under ``.hoodie/.aux/quickstart-stream/``), so a later run replaces it like the batch
quickstart's table.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, table_exists
from hoodie.services.compaction import freshness
from hoodie.interfaces.quickstart import (
    EVENT_TIME_STRATEGY, SCHEMA, TABLE_OPTIONS, QuickstartResult, _watermark_text, claim_base_path, start_run,
)

AUX = ".hoodie/.aux/quickstart-stream"
DELETED = "_hoodie_is_deleted"


def event_files(stream: list[tuple[str, list[dict[str, Any]]]]) -> list[pa.Table]:
    """One table per arrival: an upsert batch with the deletes that follow it as ``_hoodie_is_deleted`` rows
    (Hudi's soft-delete column: a stream carries deletes as rows)."""
    out: list[pa.Table] = []
    schema = SCHEMA.append(pa.field(DELETED, pa.bool_()))
    newest = 0
    for op, recs in stream:
        if op == "delete":
            # A delete row carries a newer ordering value than any row before it: one micro-batch may hold
            # a key's insert and its delete, and with equal ordering values which one survives the batch's
            # de-duplication is arbitrary (in Hudi as here: precombine keeps either on a tie).
            rows = [{**r, "updated_at": newest + 1, DELETED: True} for r in recs]
        else:
            rows = [{**r, DELETED: False} for r in recs]
        newest = max([newest] + [r["updated_at"] for r in rows])
        if op == "delete" and out:
            out[-1] = pa.concat_tables([out[-1], pa.Table.from_pylist(rows, schema=schema)])
        else:
            out.append(pa.Table.from_pylist(rows, schema=schema))
    return out


def run_stream_quickstart(base_path: str, rows: int = 20000, days: int = 10, batches: int = 10,
                          retain_days: int = 7, spark: Any = None, log: Callable[[str], None] = print,
                          overwrite: Optional[bool] = None) -> QuickstartResult:
    """Run the streaming pipeline (see the module doc) and return what it did."""
    claim = claim_base_path(base_path, "hoodie quickstart", overwrite)
    from hoodie.engine.session import require_pyspark

    require_pyspark()
    from hoodie.engine import stream as hs
    from hoodie.format.slice.reader import read_table
    from hoodie.interfaces.catalog import session

    t0 = time.monotonic()
    spark, res, stream = start_run(claim, spark or session, base_path, rows, days, batches)
    files = event_files(stream)
    source = f"{base_path.rstrip('/')}/{AUX}/events"
    checkpoint = f"{base_path.rstrip('/')}/{AUX}/checkpoint"
    started = time.time()
    for n, t in enumerate(files):
        rel = f"{AUX}/events/arrival-{n:04d}.parquet"
        claim.storage.write_bytes(rel, _parquet_bytes(t))
        # Spark's file source takes files in modification-time order, ties in listing order: arrivals written
        # within one millisecond could be read out of order. A second apart each (object stores keep whole
        # seconds), so the stream replays them as they arrived.
        if claim.storage.is_local:
            os.utime(claim.storage.full(rel), (started + n, started + n))
        elif n + 1 < len(files):
            time.sleep(1.0)
    opts = {
        **TABLE_OPTIONS,
        "hoodie.datasource.write.operation": "upsert",
        # The services inline, after each micro-batch's commit (the stream's own thread).
        "hoodie.compact.inline": "true",
        "hoodie.compaction.strategy": EVENT_TIME_STRATEGY,
        "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER",
        "hoodie.compaction.event.time.data.latency.ms": str(24 * 3600 * 1000),
        "hoodie.partition.ttl.inline": "true",
        "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
        "hoodie.partition.ttl.strategy.days.retain": str(retain_days),
        "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd",
    }
    log(f"streaming {len(files)} arrivals ({rows} events over {days} days) from {source} into {base_path}")
    log("  sink: hoodie.spark.write_stream, one micro-batch per arrival, exactly once (checkpoint " + checkpoint + ")")
    log("  services inline after each micro-batch: event-time compaction (T = compaction instant - 1 day), "
        f"partition TTL (KEEP_BY_EVENT_TIME, {retain_days} days)")
    df = (spark.readStream.schema("event_id string, user_id string, event_ts timestamp, day string, status string, "
                                  f"amount double, updated_at long, {DELETED} boolean")
          .option("maxFilesPerTrigger", 1).parquet(source))
    seen: set[str] = set()
    query = hs.write_stream(df, base_path, opts, checkpoint_location=checkpoint, trigger={"availableNow": True},
                            query_name="hoodie_quickstart_stream")
    try:
        while query.isActive:  # availableNow: the query ends once every arrival is written
            _report_progress(base_path, seen, res, log)
            time.sleep(0.5)
        query.awaitTermination()  # raises the query's error, if it failed
        _report_progress(base_path, seen, res, log)
    finally:
        if query.isActive:
            query.stop()
        hs.stop_services(query)
    failures = hs.service_failures(query)
    for f in failures:
        log(f"  service failure after micro-batch {f.batch_id}: {f.service}: {f.error}")
    after = read_table(base_path, columns=["day"])
    res.rows_after = after.num_rows
    res.partitions_after = len(set(after.column("day").to_pylist()))
    res.seconds = round(time.monotonic() - t0, 1)
    log("")
    log(f"  {len(res.commits)} micro-batches committed, {sum(len(c['instants']) for c in res.compactions)} "
        f"compactions, {len(res.ttl_expired)} partitions expired; {res.rows_after} rows in "
        f"{res.partitions_after} partitions in {res.seconds} s")
    log(f"explore it: python -c \"import hoodie; print(hoodie.read_table('{base_path}').num_rows)\"")
    return res


def _parquet_bytes(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink)
    return sink.getvalue().to_pybytes()


def _report_progress(base_path: str, seen: set[str], res: QuickstartResult, log: Callable[[str], None]) -> None:
    """Print what the stream committed since the last look: micro-batches, compactions, TTL runs, and the
    read-optimized view's freshness after them."""
    if not table_exists(Storage(base_path)):
        return
    tl = HoodieTable(base_path).timeline
    new = [i for i in tl.completed().instants if i.timestamp not in seen]
    if not new:
        return
    for inst in new:
        seen.add(inst.timestamp)
        if inst.action == "deltacommit":
            res.commits.append(inst.timestamp)
            fr = freshness(base_path)
            log(f"  micro-batch -> {inst.timestamp}  T={(fr.get('threshold') or {}).get('iso')}  "
                f"W={_watermark_text(fr)}")
        elif inst.action == "commit" and tl.is_compaction_commit(inst):
            res.compactions.append({"instants": [inst.timestamp]})
            log(f"  event-time compaction {inst.timestamp}")
        elif inst.action == "replacecommit":
            meta = tl.commit_metadata(inst)
            if meta.operation_type == "DELETE_PARTITION":
                parts = sorted((meta.partition_to_replace_file_ids or {}).keys())
                # Late events recreate an expired day; the next TTL run expires it again.
                res.ttl_expired = sorted(set(res.ttl_expired) | set(parts))
                log(f"  partition TTL {inst.timestamp}: expired {parts}")


__all__ = ["run_stream_quickstart", "event_files"]

