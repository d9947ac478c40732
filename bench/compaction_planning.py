"""Event-time compaction planning vs decoding event times, on the same table in the same run.

Builds a MERGE_ON_READ table with ``--log-files`` log files (default 10 000: ``--partitions`` x
file groups x ``--logs-per-group``), each log file written by the format core with its event-time
range in the block header and in its deltacommit write stat. Then times:

1. **planning**: ``plan_compaction`` with the EventTimeBasedCompactionStrategy (lists partitions,
   builds the file-system view, reads event times from the timeline's write stats: no log file is
   opened);
2. **planning from headers**: the same event times read from every log file's block headers (the
   fallback for files without stats; opens each file, never decodes records);
3. **decoding**: reading the event-time column of every log file (what a planner without stats or
   headers would have to do).

Prints the three timings and the ratios. Usage::

    python bench/compaction_planning.py [--log-files 10000] [--logs-per-group 10] [--partitions 10]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time

from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.slice import writer as W
from hoodie.format.slice.eventtime import event_time_millis
from hoodie.format.file_group.fsview import FileSystemView, LogFile
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.table import MOR, HoodieTable, create_table
from hoodie.services.compaction import plan_compaction
from hoodie.format.slice.event_ranges import EventTimeIndex

SCHEMA = {"type": "record", "name": "bench_record", "namespace": "hoodie.bench", "fields": [
    {"name": "k", "type": "long"}, {"name": "part", "type": "string"},
    {"name": "ts", "type": "long"}, {"name": "v", "type": ["null", "double"], "default": None}]}
HOUR = 3_600_000
START = 1_714_521_600_000  # 2024-05-01T00:00:00Z


def build(path: str, n_logs: int, logs_per_group: int, partitions: int, rows: int, block_format: str) -> HoodieTable:
    """Create the table: one insert commit (base files), then ``logs_per_group`` deltacommits, each
    adding one log file (with ``rows`` records an hour later than the previous one) per file group."""
    table = create_table(path, table_name="bench", table_type=MOR, record_key_fields=["k"], partition_fields=["part"],
                         precombine_field="ts", avro_schema=SCHEMA)
    groups = max(1, n_logs // logs_per_group)
    parts = [f"p{i:03d}" for i in range(partitions)]
    fids = [(parts[g % partitions], N.new_file_id(0)) for g in range(groups)]
    keys = np.arange(rows, dtype=np.int64)

    def records(g: int, ts: int, instant: str, file_name: str) -> pa.Table:
        body = pa.table({"k": pa.array(keys + g * rows), "part": pa.array([fids[g][0]] * rows),
                         "ts": pa.array(np.full(rows, ts, dtype=np.int64)), "v": pa.array(np.ones(rows))})
        return W.add_meta_columns(body, instant=instant, record_keys=pa.array((keys + g * rows).astype(str)),
                                  partition_paths=fids[g][0], file_name=file_name)

    inflight = W.start_commit(table, I.DELTA_COMMIT, operation_type="INSERT")
    stats, base_names = [], {}
    for g, (p, fid) in enumerate(fids):
        name = N.base_file_name(fid, "0-1-0", inflight.timestamp)
        st = W.write_base_file(table.storage, partition=p, file_id=fid, instant=inflight.timestamp, token="0-1-0",
                               records=records(g, START, inflight.timestamp, name), num_inserts=rows,
                               event_time_field="ts")
        stats.append(st)
        base_names[g] = (inflight.timestamp, name)
    W.complete_commit(table, inflight, W.commit_metadata_for(stats, avro_schema=SCHEMA, operation_type="INSERT"))
    for r in range(logs_per_group):
        inflight = W.start_commit(table, I.DELTA_COMMIT, operation_type="UPSERT")
        stats = []
        for g, (p, fid) in enumerate(fids):
            base_instant, base_name = base_names[g]
            st = W.write_log_file(table.storage, partition=p, file_id=fid, base_instant=base_instant,
                                  instant=inflight.timestamp, token=f"{g % 97}-2-{r}",
                                  write=W.LogWrite(data=records(g, START + (r + 1) * HOUR, inflight.timestamp, fid)),
                                  avro_schema=SCHEMA, base_file_name=base_name, version=r + 1,
                                  block_format=block_format, event_time_field="ts")
            stats.append(st)
        W.complete_commit(table, inflight, W.commit_metadata_for(stats, avro_schema=SCHEMA, operation_type="UPSERT"))
    return table.reload()


def table_log_files(table: HoodieTable) -> list[LogFile]:
    """Every log file of the latest file slices of ``table`` (what an event-time planner looks at)."""
    view = FileSystemView(table.storage, table.timeline)
    return [lf for p in view.partitions() for sl in view.latest_file_slices(p) for lf in sl.log_files]


def header_min_event_times(table: HoodieTable, logs: list[LogFile]) -> list[Optional[int]]:
    """Minimum event time (epoch ms) of each log file from its block headers: the planner's fallback
    for files without a usable write stat, forced here for every file (opens each file, decodes no
    record)."""
    index = EventTimeIndex(table)
    return [index._from_headers(lf.path).min_ms for lf in logs]


def decode_min_event_times(table: HoodieTable, logs: list[LogFile], field: str) -> list[Optional[int]]:
    """Minimum event time (epoch ms) of each log file by decoding the ``field`` column of every data
    block: what a planner with neither write stats nor header ranges would have to do."""
    schema = pa.schema([table.arrow_schema().field(field)])
    out: list[Optional[int]] = []
    for lf in logs:
        lo = None
        for block in read_log_file(table.storage, lf.path, warn=False):
            if block.block_type not in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
                continue
            # Converted like the writers convert it (timestamps, dates, epoch-ms integers).
            m = pc.min(event_time_millis(block.data_table(schema).column(field), field)).as_py()
            if m is not None:
                lo = m if lo is None else min(lo, m)
        out.append(lo)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log-files", type=int, default=10_000)
    ap.add_argument("--logs-per-group", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--rows-per-log", type=int, default=50)
    ap.add_argument("--block-format", choices=["avro", "parquet"], default="avro")
    ap.add_argument("--base-path", help="build the table here (default: a temporary directory, removed after)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = None if args.base_path else tempfile.mkdtemp(prefix="hoodie_bench_compaction_")
    path = args.base_path or f"{tmp}/t"
    try:
        t0 = time.perf_counter()
        table = build(path, args.log_files, args.logs_per_group, args.partitions, args.rows_per_log, args.block_format)
        build_s = time.perf_counter() - t0
        threshold = START + (args.logs_per_group // 2) * HOUR
        opts = {"hoodie.compaction.strategy": "EventTimeBased", "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER",
                "hoodie.compaction.event.time.threshold": str(threshold)}

        t0 = time.perf_counter()
        res = plan_compaction(HoodieTable(path), opts)
        plan_s = time.perf_counter() - t0
        n_logs = sum(len(op.to_compact) + len(op.to_remain) for op in res.operations)

        table = HoodieTable(path)
        logs = table_log_files(table)
        t0 = time.perf_counter()
        from_headers = header_min_event_times(table, logs)
        headers_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        decoded = decode_min_event_times(table, logs, "ts")
        decode_s = time.perf_counter() - t0
        assert from_headers == decoded, "header event times differ from decoded ones"

        out = {
            "log_files": len(logs), "planned_log_files": n_logs, "operations": len(res.operations),
            "partial_operations": sum(1 for op in res.operations if op.is_partial),
            "build_seconds": round(build_s, 2), "planning_seconds": round(plan_s, 3),
            "planning_from_headers_seconds": round(headers_s, 3), "decoding_seconds": round(decode_s, 3),
            "decode_vs_planning_ratio": round(decode_s / plan_s, 1),
            "decode_vs_header_planning_ratio": round(decode_s / headers_s, 1),
        }
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print(f"table: {len(logs)} log files in {len(res.operations)} file groups ({args.block_format} blocks, "
                  f"{args.rows_per_log} rows each), built in {build_s:.1f} s")
            print(f"planning (write stats)        : {plan_s:8.3f} s  ({out['partial_operations']} partial operations)")
            print(f"event times from block headers: {headers_s:8.3f} s")
            print(f"decoding the event-time column: {decode_s:8.3f} s")
            print(f"ratio decoding / planning     : {out['decode_vs_planning_ratio']}x")
            print(f"ratio decoding / header reads : {out['decode_vs_header_planning_ratio']}x")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
