"""Scale benchmark ("Prove it"): a 10M-row, 365-partition MERGE_ON_READ table, every measurement
beside its reference in the same run, written to BENCHMARKS.md.

Builds the table with ``hoodie.spark.write`` and measures, each next to the reference the project's
issues name (same data, same run, same Spark session):

* **write**: bulk_insert of N rows vs Spark's ``df.write.parquet`` of the same rows; two upserts of
  U rows each vs Spark's native Parquet append of the same rows;
* **snapshot read**: ``hoodie.read_table`` (pure Python) and the Spark data source vs hudi-rs;
* **read-optimized read**: the Spark data source and ``hoodie.spark.read`` (all columns, one column,
  ``count(*)``) vs ``spark.read.parquet`` on the same base files; the merge-on-read snapshot of one
  column through ``hoodie.spark.read`` vs hudi-rs; after the full compaction, the snapshot of
  base-file-only slices (a copy-on-write snapshot's path) vs ``spark.read.parquet``;
* **compaction**: event-time planning from write stats (and from block headers) vs decoding the
  event-time column of every log file (bench/compaction_planning.py's functions on this table);
  execution on Spark (the compaction runner with the Spark executor), an event-time (partial)
  compaction and then a full one, vs Spark reading the same base files and updated rows, merging
  them by key and writing Parquet;
* **TTL**: ``run_ttl`` over the 365 partitions, second run (incremental statistics) vs first run
  (full scan), and the dry run (planning) with incremental statistics vs with a full scan.

Row counts are checked along the way (hoodie vs hudi-rs, read-optimized vs base files, N rows after
each compaction, N minus the expired partitions' rows after TTL); a mismatch stops the run.

    python bench/report.py [--rows 10000000] [--partitions 365] [--updates 1000000] [--master local[2]]
                           [--out BENCHMARKS.md] [--json PATH] [--keep]

Develop with e.g. ``--rows 300000 --updates 30000 --out /tmp/BENCHMARKS.small.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import glob
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import hoodie
from hoodie.format.timeline.compaction_plan import CompactionPlan
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import plan_compaction, run_compaction, schedule_compaction_result
from hoodie.services.ttl import run_ttl
from hoodie.services.ttl import strategies as TTLS
from hoodie.services.ttl.stats import forget

from _common import best_of, call_timer, machine_info, timed, utc_now
from compaction_planning import decode_min_event_times, header_min_event_times, table_log_files

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRST_DAY = _dt.date(2025, 1, 1)
# Event times of the two update batches: batch 1 in the hour after BATCH_EVENT_START, batch 2 two
# hours later. The event-time compaction threshold T sits between them, so every file group touched
# by both batches gets a partial operation (batch 1's log compacted, batch 2's kept as a link).
BATCH_EVENT_START = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
HOUR_US = 3_600_000_000
DATA_COLUMNS = ["id", "day", "ts", "event_time", "user_id", "amount", "qty", "status", "country", "note"]
META_COLUMNS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name"]


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------

@dataclass
class Measurement:
    """One row of the results table: hoodie's time beside its reference's, from the same run."""

    group: str
    what: str
    hoodie_s: float
    reference: str
    reference_s: float
    detail: str = ""

    @property
    def ratio(self) -> float:
        """hoodie / reference (below 1: hoodie is faster)."""
        return self.hoodie_s / self.reference_s if self.reference_s > 0 else float("inf")


@dataclass
class Report:
    """Everything BENCHMARKS.md shows: measurements, facts about the table and run, reductions."""

    args: dict[str, Any]
    started: float = field(default_factory=time.perf_counter)
    date: str = field(default_factory=utc_now)
    measurements: list[Measurement] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    def progress(self, msg: str) -> None:
        """Print a progress line with the elapsed time (the full-size run takes a while)."""
        print(f"[{time.perf_counter() - self.started:8.1f}s] {msg}", flush=True)

    def add(self, m: Measurement) -> Measurement:
        """Record a measurement and print it."""
        self.measurements.append(m)
        self.progress(f"  {m.group} | {m.what}: {m.hoodie_s:.2f} s vs {m.reference}: {m.reference_s:.2f} s "
                      f"-> ratio {m.ratio:.2f}")
        return m

    def check(self, ok: bool, msg: str) -> None:
        """A correctness check: recorded when it holds, fatal when it does not."""
        if not ok:
            raise AssertionError(f"check failed: {msg}")
        self.checks.append(msg)
        self.progress(f"  check ok: {msg}")


# --------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------

def partition_days(partitions: int) -> list[str]:
    """The daily partition values, ``FIRST_DAY`` + i."""
    return [(FIRST_DAY + _dt.timedelta(days=i)).isoformat() for i in range(partitions)]


def first_row_of(partition: int, rows: int, partitions: int) -> int:
    """Rows are assigned to days in id order (row i is in day ``i * partitions // rows``): the first id
    of a day. Contiguous ranges make "the rows of the oldest E days" a prefix of the ids."""
    return -(-partition * rows // partitions)  # ceil(partition * rows / partitions)


def generate_base(rows: int, partitions: int, seed: int) -> pa.Table:
    """N rows (~100 bytes each in Arrow) over ``partitions`` daily partitions, vectorized.

    Columns: ``id`` (record key), ``day`` (partition), ``ts`` (ordering field), ``event_time``
    (timestamp within the row's day: the event-time field) and payload columns.
    """
    rng = np.random.default_rng(seed)
    ids = np.arange(rows, dtype=np.int64)
    day_idx = (ids * partitions // rows).astype(np.int32)
    days = partition_days(partitions)
    day_start_us = np.array([(_dt.datetime.combine(_dt.date.fromisoformat(d), _dt.time(), _dt.timezone.utc)
                              .timestamp()) * 1_000_000 for d in days], dtype=np.int64)
    # Strings come from small vocabularies through ``take``: no per-row Python work.
    notes = pa.array([f"note {i:04d} " + "abcdefghijklmnopqrstuvwxyz"[i % 26:] + "0123456789"[: i % 10]
                      for i in range(1000)])
    statuses = pa.array(["created", "paid", "shipped", "delivered", "returned"])
    countries = pa.array(["DE", "FR", "US", "BR", "IN", "JP", "NG", "AU"])
    return pa.table({
        "id": pa.array(ids),
        "day": pa.array(days).take(pa.array(day_idx)),
        "ts": pa.array(np.ones(rows, dtype=np.int64)),
        # Microseconds, as Spark timestamps have them (event times round down to milliseconds).
        "event_time": pa.array(day_start_us[day_idx] + rng.integers(0, 86_400_000_000, rows),
                               pa.timestamp("us", tz="UTC")),
        "user_id": pa.array(rng.integers(0, 5_000_000, rows, dtype=np.int64)),
        "amount": pa.array(np.round(rng.random(rows) * 1000, 2)),
        "qty": pa.array(rng.integers(1, 20, rows, dtype=np.int32)),
        "status": statuses.take(pa.array(rng.integers(0, len(statuses), rows))),
        "country": countries.take(pa.array(rng.integers(0, len(countries), rows))),
        "note": notes.take(pa.array(rng.integers(0, len(notes), rows))),
    })


def generate_updates(base: pa.Table, lo: int, count: int, ts: int, event_start_us: int, seed: int) -> pa.Table:
    """``count`` distinct rows of ``base`` with ids >= ``lo`` (the days after the ones TTL expires),
    with a new ordering value ``ts``, event times in the hour after ``event_start_us``, a new status
    and amount (what an order update changes)."""
    rng = np.random.default_rng(seed)
    ids = np.sort(lo + rng.choice(base.num_rows - lo, size=count, replace=False)).astype(np.int64)
    upd = base.take(pa.array(ids))
    statuses = pa.array(["paid", "shipped", "delivered", "returned"])
    cols = {
        "ts": pa.array(np.full(count, ts, dtype=np.int64)),
        "event_time": pa.array(event_start_us + rng.integers(0, HOUR_US, count),
                               pa.timestamp("us", tz="UTC")),
        "amount": pa.array(np.round(rng.random(count) * 1000, 2)),
        "status": statuses.take(pa.array(rng.integers(0, len(statuses), count))),
    }
    for name, col in cols.items():
        upd = upd.set_column(upd.schema.get_field_index(name), name, col)
    return upd


def write_source(table: pa.Table, directory: str, files: int) -> str:
    """Write ``table`` as ``files`` Parquet files (Spark reads them in parallel); returns the folder."""
    os.makedirs(directory, exist_ok=True)
    step = -(-table.num_rows // max(1, files))
    for i, off in enumerate(range(0, table.num_rows, step)):
        pq.write_table(table.slice(off, step), os.path.join(directory, f"part-{i:03d}.parquet"),
                       row_group_size=256 * 1024)
    return directory


# --------------------------------------------------------------------------------------------------
# Table helpers
# --------------------------------------------------------------------------------------------------

def write_options(table_name: str, operation: str) -> dict[str, str]:
    """Hudi datasource options of the benchmark table."""
    return {
        "hoodie.table.name": table_name,
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.payload.event.time.field": "event_time",
    }


def layout(path: str) -> dict[str, int]:
    """File groups, base files, log files and bytes of the latest slices (for the report)."""
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    out = {"partitions": 0, "file_groups": 0, "base_files": 0, "log_files": 0, "base_bytes": 0, "log_bytes": 0}
    for p in view.partitions():
        slices = view.latest_file_slices(p)
        out["partitions"] += 1 if slices else 0
        for sl in slices:
            out["file_groups"] += 1
            if sl.base_file is not None:
                out["base_files"] += 1
                out["base_bytes"] += sl.base_file.size
            out["log_files"] += len(sl.log_files)
            out["log_bytes"] += sl.total_log_size
    return out


def latest_base_files(path: str) -> list[str]:
    """Absolute paths of the latest base file of every file group (what a read-optimized query reads)."""
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    return [os.path.join(path, sl.base_file.path) for p in view.partitions() for sl in view.latest_file_slices(p)
            if sl.base_file is not None]


def plan_base_files(path: str, plan: CompactionPlan) -> list[str]:
    """Absolute paths of the base files a compaction plan's operations read."""
    return [os.path.join(path, op.path_of(op.data_file_name)) for op in plan.operations if op.data_file_name]


def instant_ms(table: HoodieTable, instant: str) -> int:
    """Epoch milliseconds of an instant in the table's timeline zone."""
    from hoodie.format.timeline import instant as I

    return I.instant_to_epoch_ms(I.fix_instant_compatibility(instant), table.timeline_timezone)


def hudi_rs_read(path: str) -> pa.Table:
    """Snapshot read with hudi-rs (as tests/hudi_rs.py calls it): every column of every row."""
    from hudi import HudiReadOptions, HudiTableBuilder

    batches = HudiTableBuilder.from_base_uri(os.path.abspath(path)).build().read(HudiReadOptions())
    return pa.Table.from_batches(batches)


def digest(t: pa.Table) -> tuple[int, int, float]:
    """(rows, sum of ts, sum of amount): cheap evidence that two reads merged the same versions."""
    ts_sum = int(pc.sum(t.column("ts")).as_py() or 0)
    return t.num_rows, ts_sum, round(float(pc.sum(t.column("amount")).as_py() or 0), 2)


# --------------------------------------------------------------------------------------------------
# Spark helpers
# --------------------------------------------------------------------------------------------------

def materialize(df) -> None:
    """Run ``df`` to the end with every column produced, writing nothing (Spark's ``noop`` sink)."""
    df.write.format("noop").mode("overwrite").save()


def native_merge(spark, base_files: list[str], updates_src: str, out_dir: str, instant: str) -> int:
    """The native Spark reference of a compaction: read the base files and the updated rows, merge
    them by record key (the update wins; its commit time is stamped, as a compaction keeps the
    merged record's), write Parquet. Returns the rows written (untimed count of the output)."""
    from pyspark.sql import functions as F

    base = spark.read.parquet(*base_files)
    upd = spark.read.parquet(updates_src).select(*[F.col(c).alias(f"_u_{c}") for c in DATA_COLUMNS])
    joined = base.join(upd, base["id"] == upd["_u_id"], "left")
    hit = F.col("_u_id").isNotNull()
    cols = [F.when(hit, F.lit(instant)).otherwise(F.col("_hoodie_commit_time")).alias("_hoodie_commit_time")]
    cols += [F.col(c) for c in META_COLUMNS[1:]]
    cols += [F.when(hit, F.col(f"_u_{c}")).otherwise(F.col(c)).alias(c) for c in DATA_COLUMNS]
    joined.select(*cols).write.mode("overwrite").parquet(out_dir)
    return spark.read.parquet(out_dir).count()


def empty_python_tasks(spark, tasks: int) -> float:
    """Seconds of a Spark job shaped like the compaction executor's (``spark.range`` with one
    partition per operation, then ``mapInArrow``) whose tasks do nothing."""
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("id", LongType(), False)])

    def passthrough(batches):
        yield from batches

    return timed(lambda: spark.range(0, tasks, 1, tasks).mapInArrow(passthrough, schema).collect())[0]


# --------------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------------

def warm_up(spark, work: str, report: Report) -> None:
    """Exercise every code path once on a tiny table (JVM class loading and JIT, Python worker start,
    the data source registration) so that no measured step pays start-up costs the other side of
    its comparison does not."""
    import hoodie.spark as hs

    small = generate_base(2000, 4, seed=99)
    src = write_source(small, os.path.join(work, "warm_src"), 1)
    df = spark.read.parquet(src)
    path = os.path.join(work, "warm_table")
    hs.write(df, path, write_options("warm", "bulk_insert"))
    upd = generate_updates(small, 0, 200, 2, int(BATCH_EVENT_START.timestamp() * 1e6), seed=98)
    udf = spark.read.parquet(write_source(upd, os.path.join(work, "warm_upd"), 1))
    hs.write(udf, path, write_options("warm", "upsert"))
    df.write.mode("overwrite").parquet(os.path.join(work, "warm_native"))
    udf.write.mode("append").parquet(os.path.join(work, "warm_native"))
    materialize(spark.read.format("hoodie").load(path))
    materialize(spark.read.format("hoodie").option("hoodie.datasource.query.type", "read_optimized").load(path))
    materialize(spark.read.parquet(*latest_base_files(path)))
    hoodie.read_table(path)
    hudi_rs_read(path)
    from hoodie.engine.compaction import spark_executor

    run_compaction(path, None, {}, spark_executor(spark), schedule_if_none=True)
    native_merge(spark, latest_base_files(path), os.path.join(work, "warm_upd"), os.path.join(work, "warm_merge"), "0")
    report.progress("warm-up done")


def run(args: argparse.Namespace, work: str, report: Report) -> None:
    """Generate the data, start Spark, warm up, then take every measurement (module docstring)."""
    n, parts, u = args.rows, args.partitions, args.updates
    expire = min(args.ttl_expire, parts - 1)
    lo = first_row_of(expire, n, parts)
    if u > n - lo:
        report.notes.append(f"--updates {u} exceeds the {n - lo} rows outside the {expire} TTL-expired days; "
                            f"each update batch was reduced to {n - lo} rows.")
        u = n - lo

    gen_s, base = timed(lambda: generate_base(n, parts, args.seed))
    ev1 = int(BATCH_EVENT_START.timestamp() * 1_000_000)
    upd1 = generate_updates(base, lo, u, 2, ev1, args.seed + 1)
    upd2 = generate_updates(base, lo, u, 3, ev1 + 2 * HOUR_US, args.seed + 2)
    base_src = write_source(base, os.path.join(work, "src_base"), 8)
    upd_src = [write_source(upd, os.path.join(work, f"src_upd{i}"), 2) for i, upd in enumerate((upd1, upd2), 1)]
    report.facts.update({
        "arrow_bytes_per_row": round(base.nbytes / n, 1),
        "source_parquet_mb": round(sum(os.path.getsize(f) for f in glob.glob(f"{base_src}/*.parquet")) / 2**20, 1),
        "expired_rows": lo, "updates_per_batch": u, "ttl_expire_partitions": expire,
        "updated_partitions": parts - expire,
    })
    report.progress(f"generated {n:,} rows ({report.facts['arrow_bytes_per_row']} bytes/row in Arrow) and "
                    f"2 x {u:,} updates in {gen_s:.1f} s")
    del base, upd1, upd2  # Spark reads the Parquet sources; free the memory for the reads below

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from hoodie.engine.session import get_session

    conf = {"spark.driver.memory": args.driver_memory,
            # Native Parquet writes must write int64 micros, as hoodie's Spark conf says (no INT96).
            "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
            # The Parquet references read a few hundred explicit files: listing them on the driver is
            # faster than Spark's default distributed listing job (above 32 paths), so the reference
            # gets the faster setting. hoodie's data source does its own listing and ignores it.
            "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000"}
    if args.shuffle_partitions:
        conf["spark.sql.shuffle.partitions"] = str(args.shuffle_partitions)
    spark = get_session(args.master, app_name="hoodie-bench-report", conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    report.facts["spark_conf"] = {k: spark.conf.get(k) for k in (
        "spark.master", "spark.driver.memory", "spark.sql.shuffle.partitions",
        "spark.sql.parquet.outputTimestampType", "spark.sql.execution.arrow.pyspark.enabled",
        "spark.sql.sources.parallelPartitionDiscovery.threshold")}
    try:
        warm_up(spark, work, report)
        bench = Bench(spark, report, args.repeat, os.path.join(work, "table"), os.path.join(work, "native"),
                      base_src, upd_src, n, parts, u, lo, expire)
        bench.writes()
        bench.snapshot_reads()
        bench.read_optimized_read()
        bench.compaction(full=not args.skip_full_compaction)
        if args.skip_full_compaction:
            report.notes.append("Full compaction was skipped (--skip-full-compaction).")
        bench.ttl()
    finally:
        spark.stop()


@dataclass
class Bench:
    """The measurements on one table, in the order they must run (each step changes the table)."""

    spark: Any
    report: Report
    repeat: int
    path: str          # the hoodie table
    native: str        # where the native Spark references write
    base_src: str      # Parquet source of the N rows
    upd_src: list[str]  # Parquet sources of the two update batches
    n: int
    parts: int
    u: int
    lo: int            # first id after the days TTL expires (= rows of those days)
    expire: int        # days TTL expires
    insert_instant: str = ""
    upsert_instants: list[str] = field(default_factory=list)

    def writes(self) -> None:
        """bulk_insert vs ``df.write.parquet``; two upserts vs native appends of the same rows."""
        import hoodie.spark as hs

        spark, report, n = self.spark, self.report, self.n
        src_df = spark.read.parquet(self.base_src)
        materialize(src_df)  # page cache warm for both sides
        report.progress(f"write: bulk_insert of {n:,} rows")
        native_s, _ = timed(lambda: src_df.write.mode("overwrite").parquet(os.path.join(self.native, "base")))
        # The bulk_insert is stamped two hours in the past: TTL refuses retentions under PT1H, and the
        # TTL step needs a retention between the ages of the insert and of the first upsert.
        past = (_dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(hours=2)).strftime("%Y%m%d%H%M%S%f")[:17]
        insert_s, self.insert_instant = timed(lambda: hs.write(src_df, self.path, {
            **write_options("bench_report", "bulk_insert"), "hoodie.write.instant": past}))
        report.add(Measurement("write", f"bulk_insert of {n:,} rows into a new MOR table (hoodie.spark.write)",
                               insert_s, "df.write.parquet of the same rows", native_s))
        report.facts["layout_after_insert"] = layout(self.path)
        up_opts = write_options("bench_report", "upsert")
        for i, src in enumerate(self.upd_src, 1):
            df = spark.read.parquet(src).cache()
            df.count()  # both sides read the updates from memory: the comparison is about the write
            report.progress(f"write: upsert #{i} of {self.u:,} rows")
            native_s, _ = timed(lambda: df.write.mode("append").parquet(os.path.join(self.native, "updates")))
            up_s, inst = timed(lambda: hs.write(df, self.path, up_opts))
            self.upsert_instants.append(inst)
            report.add(Measurement("write", f"upsert #{i} of {self.u:,} rows into the {n:,}-row table "
                                            "(hoodie.spark.write)",
                                   up_s, "df.write.mode('append').parquet of the same rows", native_s,
                                   detail=f"{i} log file(s) per updated file group after it"))
            df.unpersist()
        report.facts["layout_before_compaction"] = layout(self.path)

    def snapshot_reads(self) -> None:
        """``hoodie.read_table`` and the Spark data source vs hudi-rs, with the row counts checked."""
        spark, report, path, n = self.spark, self.report, self.path, self.n
        report.progress("snapshot read")
        rs_s, rs_table = best_of(lambda: hudi_rs_read(path), self.repeat)
        rs_digest = digest(rs_table)
        del rs_table
        py_s, py_table = best_of(lambda: hoodie.read_table(path), self.repeat)
        py_digest = digest(py_table)
        del py_table
        report.check(py_digest[0] == rs_digest[0] == n,
                     f"snapshot rows: hoodie.read_table {py_digest[0]:,} = hudi-rs {rs_digest[0]:,} = N {n:,}")
        report.check(py_digest == rs_digest, f"snapshot sums of ts and amount agree with hudi-rs: {py_digest[1:]}")
        # DataFrame creation is inside every timed Spark read: for the hoodie source it plans the read
        # (listing, timeline), for Parquet it lists the files and reads a footer; a query pays both.
        ds_s, _ = best_of(lambda: materialize(spark.read.format("hoodie").load(path)), self.repeat)
        ds_rows = spark.read.format("hoodie").load(path).count()
        report.check(ds_rows == n, f"snapshot rows through the Spark data source: {ds_rows:,} = N")
        ref = "hudi-rs read (HudiTable.read, Arrow batches)"
        report.add(Measurement("snapshot read", "hoodie.read_table (pure Python, to one Arrow table)", py_s, ref, rs_s))
        report.add(Measurement("snapshot read", "Spark data source, all columns (write.format('noop'))", ds_s,
                               ref, rs_s))

    def read_optimized_read(self) -> None:
        """The data source's read-optimized query vs ``spark.read.parquet`` of the same base files."""
        spark, report, path = self.spark, self.report, self.path
        report.progress("read-optimized read")
        base_files = latest_base_files(path)

        def ro():
            return spark.read.format("hoodie").option("hoodie.datasource.query.type", "read_optimized").load(path)

        ro_s, _ = best_of(lambda: materialize(ro()), self.repeat)
        pq_s, _ = best_of(lambda: materialize(spark.read.parquet(*base_files)), self.repeat)
        ro_rows = ro().count()
        base_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in base_files)
        report.check(ro_rows == base_rows == self.n, f"read-optimized rows {ro_rows:,} = rows of the "
                                                     f"{len(base_files)} latest base files {base_rows:,} = N")
        report.add(Measurement("read-optimized read", "Spark data source, query.type=read_optimized, all columns",
                               ro_s, f"spark.read.parquet of the same {len(base_files)} base files", pq_s))
        self.native_reads("read-optimized read", {"hoodie.datasource.query.type": "read_optimized"}, base_files)
        self.mor_one_column_vs_hudi_rs()

    def native_reads(self, kind: str, options: dict[str, str], base_files: list[str]) -> None:
        """``hoodie.spark.read`` (base files through Spark's Parquet scan) vs ``spark.read.parquet`` of
        the same files: all columns, the sum of one column, ``count(*)``."""
        import hoodie.spark as hs
        from pyspark.sql import functions as F

        spark, report, path = self.spark, self.report, self.path
        ref = f"spark.read.parquet of the same {len(base_files)} base files"
        rows = hs.read(spark, path, options).count()
        report.check(rows == self.n, f"{kind} rows through hoodie.spark.read: {rows:,} = N")
        cases = [
            ("all columns (write.format('noop'))", lambda df: materialize(df)),
            ("sum of one column", lambda df: df.agg(F.sum("amount")).collect()),
            ("count(*)", lambda df: df.count()),
        ]
        for what, action in cases:
            ours_s, _ = best_of(lambda: action(hs.read(spark, path, options)), self.repeat)
            ref_s, _ = best_of(lambda: action(spark.read.parquet(*base_files)), self.repeat)
            report.add(Measurement(kind, f"hoodie.spark.read, {what}", ours_s, ref, ref_s))

    def mor_one_column_vs_hudi_rs(self) -> None:
        """A merge-on-read snapshot of one column: ``hoodie.spark.read`` (log slices merged by hoodie)
        vs hudi-rs reading the snapshot and summing the same column."""
        import hoodie.spark as hs
        from pyspark.sql import functions as F

        spark, report, path = self.spark, self.report, self.path
        ours_s, ours = best_of(lambda: hs.read(spark, path, columns=["amount"]).agg(F.sum("amount")).collect()[0][0],
                               self.repeat)
        rs_s, theirs = best_of(lambda: pc.sum(hudi_rs_read(path).column("amount")).as_py(), self.repeat)
        report.check(round(float(ours), 2) == round(float(theirs), 2),
                     f"snapshot sum(amount): hoodie.spark.read {ours} = hudi-rs {theirs}")
        report.add(Measurement("snapshot read", "hoodie.spark.read(columns=[one]), merge-on-read snapshot, sum of it",
                               ours_s, "hudi-rs snapshot read, then the sum of the same column", rs_s))

    def compaction(self, full: bool = True) -> None:
        """Event-time planning vs decoding event times; event-time (partial) compaction and, with
        ``full``, a full compaction on Spark vs the native merge of the same data."""
        spark, report, path = self.spark, self.report, self.path
        threshold_ms = int(BATCH_EVENT_START.timestamp() * 1000) + 90 * 60_000  # between batch 1 and batch 2
        et_opts = {
            "hoodie.compaction.strategy":
                "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy",
            "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER",
            "hoodie.compaction.event.time.threshold": str(threshold_ms),
            "hoodie.payload.event.time.field": "event_time",
        }
        report.progress("compaction planning")
        logs = table_log_files(HoodieTable(path))
        decode_s, decoded = timed(lambda: decode_min_event_times(HoodieTable(path), logs, "event_time"))
        headers_s, from_headers = timed(lambda: header_min_event_times(HoodieTable(path), logs))
        report.check(decoded == from_headers, f"event times of {len(logs)} log files: block headers = decoded column")
        plan_only_s, _ = timed(lambda: plan_compaction(HoodieTable(path), et_opts))
        sched_s, sched = timed(lambda: schedule_compaction_result(path, et_opts))
        report.check(sched.instant is not None and sched.plan is not None,
                     f"event-time compaction scheduled: {sched.reason}")
        ops = sched.plan.operations
        partial = len(sched.plan.partial_operations())
        report.check(partial > 0, f"event-time plan has partial operations: {partial} of {len(ops)}")
        ref = f"decoding the event_time column of all {len(logs)} log files"
        report.add(Measurement("planning", "event-time compaction scheduling (write stats; plan written)", sched_s,
                               ref, decode_s, detail=f"{len(ops)} operations, {partial} partial; planning "
                                                     f"without writing the plan: {plan_only_s:.3f} s"))
        report.add(Measurement("planning", "event times from log block headers (the planner's fallback)",
                               headers_s, ref, decode_s))

        report.progress(f"compaction #1 (event time, partial): {len(ops)} operations")
        comp_s, native_s, m = self._compact_beside_native(1, sched, et_opts)
        report.add(Measurement("compaction", "event-time compaction on Spark (partial: batch 1 merged, batch 2 "
                                             "linked)", comp_s,
                               "Spark: read base files + batch-1 rows, merge by key (join), write Parquet", native_s,
                               detail=f"{m['operations']} operations, {m['partialOperations']} partial, "
                                      f"{m['recordsWritten']:,} records written, {m['remainingLogFiles']} log files "
                                      "linked"))
        report.facts["compaction_threshold_ms"] = threshold_ms
        report.facts["compaction_1_metrics"] = {k: m[k] for k in (
            "operations", "partialOperations", "logFilesCompacted", "recordsWritten", "bytesRead", "bytesWritten",
            "remainingLogFiles", "durationMs", "linkMode")}
        # Context for the ratio: what a Spark job with one (empty) Python task per operation costs
        # here, the floor of the one-task-per-operation executor whatever the data.
        empty_s = round(empty_python_tasks(spark, len(ops)), 2)
        report.facts["empty_python_tasks"] = {"tasks": len(ops), "seconds": empty_s}
        report.progress(f"  an empty Spark job of {len(ops)} Python tasks: {empty_s} s")
        if not full:
            return

        report.progress("compaction #2 (full)")
        full_opts = {"hoodie.compaction.strategy": "UnBoundedCompactionStrategy"}
        sched2_s, sched2 = timed(lambda: schedule_compaction_result(path, full_opts, check_trigger=False))
        report.check(sched2.instant is not None and sched2.plan is not None,
                     f"full compaction scheduled: {sched2.reason}")
        comp_s, native_s, m = self._compact_beside_native(2, sched2, full_opts)
        report.check(m["tableLogFiles"] == 0, "no log file left after the full compaction")
        report.add(Measurement("compaction", "full compaction on Spark (the linked batch-2 logs)", comp_s,
                               "Spark: read base files + batch-2 rows, merge by key (join), write Parquet", native_s,
                               detail=f"{m['operations']} operations, {m['recordsWritten']:,} records written; "
                                      f"scheduling took {sched2_s:.3f} s"))
        report.facts["compaction_2_metrics"] = {k: m[k] for k in (
            "operations", "logFilesCompacted", "recordsWritten", "bytesRead", "bytesWritten", "durationMs")}
        # Every slice is a base file now: the snapshot takes the path of a copy-on-write snapshot.
        self.native_reads("snapshot read (base files only, as copy-on-write)", {}, latest_base_files(path))

    def _compact_beside_native(self, number: int, sched: Any, opts: dict[str, str]) -> tuple[float, float, dict]:
        """Run scheduled compaction ``number`` on Spark and its native reference (the same base files
        merged with update batch ``number``); check both wrote the same rows and no row was lost.
        Returns (compaction seconds, reference seconds, the compaction's metrics)."""
        from hoodie.engine.compaction import spark_executor

        spark, report, path = self.spark, self.report, self.path
        native_s, native_rows = timed(lambda: native_merge(
            spark, plan_base_files(path, sched.plan), self.upd_src[number - 1],
            os.path.join(self.native, f"compaction{number}"), sched.instant))
        comp_s, results = timed(lambda: run_compaction(path, sched.instant, opts, spark_executor(spark)))
        m = results[0].metrics
        report.check(native_rows == m["recordsWritten"],
                     f"native reference wrote as many rows as compaction #{number}: {native_rows:,}")
        rows_after = hoodie.read_table(path, columns=["id"]).num_rows
        report.check(rows_after == self.n, f"snapshot rows after compaction #{number}: {rows_after:,} = N")
        return comp_s, native_s, m

    def ttl(self) -> None:
        """TTL dry runs (full scan vs incremental statistics), then run #1 (full scan, expires the
        oldest days) and run #2 (incremental, nothing left to expire)."""
        report, path, parts, expire = self.report, self.path, self.parts, self.expire
        # KEEP_BY_TIME: the upserts touched only the newest days, so the oldest ``expire`` days were
        # last written by the bulk_insert. A retention between the ages of the insert and of the first
        # upsert expires exactly those days; it is recomputed before each run as the clock moves on.
        report.progress("TTL")
        table = HoodieTable(path)
        insert_ms, upsert_ms = instant_ms(table, self.insert_instant), instant_ms(table, self.upsert_instants[0])

        def options(incremental: bool = True) -> dict[str, str]:
            now_ms = instant_ms(table, HoodieTable(path).new_instant_time())
            retention_s = max(1, (now_ms - (insert_ms + upsert_ms) // 2) // 1000)
            return {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_TIME",
                    "hoodie.partition.ttl.strategy.retention": f"PT{retention_s}S",
                    "hoodie.partition.ttl.strategy.stats.incremental": str(incremental).lower()}

        # The strategy's own call of the statistics stage is timed where the strategy looks it up.
        with call_timer(TTLS, "partition_last_modified") as stats_s:
            forget()
            dry_full_s, dry_full = timed(lambda: run_ttl(path, options(incremental=False), dry_run=True))
            dry_inc_s, dry_inc = timed(lambda: run_ttl(path, options(), dry_run=True))
            forget()  # the first real run starts from nothing, as a fresh process would
            first_s, first = timed(lambda: run_ttl(path, options()))
            second_s, second = timed(lambda: run_ttl(path, options()))
        report.check(len(dry_full.expired_partitions) == len(dry_inc.expired_partitions) == expire,
                     f"TTL dry runs would expire {expire} partitions (full scan and incremental agree)")
        report.check(dry_inc.stats_incremental is True and dry_full.stats_incremental is not True,
                     "second dry run used incremental statistics, the first a full scan")
        report.check(first.instant is not None and len(first.expired_partitions) == expire,
                     f"TTL run #1 expired {len(first.expired_partitions)} partitions (instant {first.instant})")
        report.check(second.instant is None and not second.expired_partitions and second.stats_incremental is True,
                     f"TTL run #2: incremental statistics ({second.stats_scanned_instants} instant(s) read vs "
                     f"{first.stats_scanned_instants}), nothing more to expire")
        rows_after = hoodie.read_table(path, columns=["id"]).num_rows
        report.check(rows_after == self.n - self.lo,
                     f"snapshot rows after TTL: {rows_after:,} = N - rows of the expired days ({self.lo:,})")
        report.add(Measurement("TTL", f"TTL run #2 over {parts} partitions (incremental statistics, nothing to "
                                      "expire)", second_s,
                               f"TTL run #1 (full scan of commit metadata, expires {expire} partitions)", first_s,
                               detail=f"{second.stats_scanned_instants} vs {first.stats_scanned_instants} "
                                      "instants read"))
        report.add(Measurement("TTL", "TTL statistics stage, run #2 (incremental)", stats_s[3],
                               "statistics stage, run #1 (full scan)", stats_s[2]))
        report.add(Measurement("planning", f"TTL planning: dry run over {parts} partitions (incremental "
                                           "statistics)", dry_inc_s,
                               "the same dry run with a full scan of commit metadata", dry_full_s,
                               detail=f"{len(dry_inc.expired_partitions)} partitions would expire"))
        report.facts["ttl"] = {"expired_partitions": len(first.expired_partitions), "instant": first.instant,
                               "first_scanned_instants": first.stats_scanned_instants,
                               "second_scanned_instants": second.stats_scanned_instants}
        report.facts["layout_final"] = layout(path)


# --------------------------------------------------------------------------------------------------
# BENCHMARKS.md
# --------------------------------------------------------------------------------------------------

def _para(text: str) -> str:
    """One Markdown paragraph from an indented triple-quoted string."""
    return " ".join(text.split())


GROUP_NOTES = {
    "write": _para("""
        **Reference:** Spark's native Parquet writer on the same DataFrame in the same session:
        `df.write.parquet` for the initial load, `df.write.mode('append').parquet` for the updates (with
        `spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS`). An append is the floor for any table
        format: it neither looks up keys nor writes metadata. **Where hoodie pays more than the
        reference:** an upsert must find where each key lives: hoodie reads the record-key column of the
        latest slices of every partition it touches (a simple index; Hudi's bloom or record-level index
        would read less), and the whole write runs as one grouped stage whose rows travel JVM → Python
        worker (Arrow) and back; merge-on-read updates are encoded as Avro log blocks in Python (hoodie's
        columnar encoder), slower than Spark's vectorized Parquet encoder. The bulk_insert pays the same
        Python round trip plus meta columns (`_hoodie_*`, five strings per row) that the plain Parquet
        files do not have, a marker per file, and the bloom filter of each base file's keys that Java
        Hudi's BLOOM index needs in the footer (about 0.4 s of CPU per million keys). The two upserts
        differ in the state they meet: the second one's index lookup also reads the first one's log files.
    """),
    "snapshot read": _para("""
        **Reference:** hudi-rs (PyPI `hudi`), the Rust reader, reading the same table as Arrow batches.
        Both hoodie paths merge each base file with its log files. **Where hoodie pays more than the
        reference:** the log files are Avro blocks, decoded in Python (fastavro, then Arrow); hudi-rs
        decodes Avro in Rust on all cores. Through Spark the Python Data Source API adds an Arrow
        hand-over from the Python worker to the JVM for every batch, and Spark 4.3's Python data sources
        cannot prune columns, so every column is produced even when a query needs one.
    """),
    "read-optimized read": _para("""
        **Reference:** `spark.read.parquet` of exactly the base files the read-optimized query reads (the
        latest base file of each file group), so both read the same bytes; DataFrame creation (listing,
        planning) is inside both timings. **Where hoodie pays more than the reference:** Spark's own
        Parquet scan is vectorized in the JVM; hoodie's data source reads the files with pyarrow in a
        Python worker and hands Arrow batches to the JVM (the Python Data Source API), without column
        pruning. With small files, Spark's per-file costs can make the reference the slower one. The
        `hoodie.spark.read` rows hand the same base files to Spark's own scan after planning on the driver.
    """),
    "snapshot read (base files only, as copy-on-write)": _para("""
        **Reference:** `spark.read.parquet` of exactly the base files the snapshot reads, after the full
        compaction left no log file: every slice takes the path of a copy-on-write snapshot. `hoodie.spark.read`
        plans on the driver (listing, timeline, the writer schema of each base file's commit) and then hands
        the files to the same Parquet scan; the difference is that planning.
    """),
    "compaction": _para("""
        **Reference:** Spark doing the same data work natively: read the base files the plan rewrites and
        the updated rows (from the Parquet source of that update batch, since Spark cannot read Hudi log
        files), merge them by record key (a left outer join; the update wins) and write Parquet. This is
        the closest native equivalent: Spark has no notion of file groups, so it must shuffle both sides
        for the join, while the compactor merges each file group in its own task without a shuffle.
        Compaction #1 is event-time based (`EventTimeBasedCompactionStrategy`, threshold T between the
        event times of the two update batches): every updated file group compacts batch 1's log file and
        keeps batch 2's as a symlink (partial compaction). Compaction #2 (`UnBoundedCompactionStrategy`,
        trigger not checked) compacts what remains. **Where hoodie pays more than the reference:** each
        compaction task decodes Avro log blocks in Python, merges with Arrow and writes Parquet with
        pyarrow; task results come back through a pickled round trip; the driver creates the links of
        partial operations, checks the slices for late log files and computes the watermark before
        committing.
    """),
    "planning": _para("""
        **Compaction planning reference:** decoding the event-time column of every log file (what a
        planner without write stats or header ranges must do), with `bench/compaction_planning.py`'s
        functions on this table's log files. hoodie plans from the event-time ranges in the
        deltacommits' write stats and opens no log file (the time includes listing the partitions and
        writing the Avro plan); the header fallback opens each file but decodes no record. **TTL
        planning reference:** the same dry run with
        `hoodie.partition.ttl.strategy.stats.incremental=false`, i.e. reading every completed commit's
        metadata. Both dry runs list every partition folder; on a short timeline like this one, that
        listing dominates and the statistics save little.
    """),
    "TTL": _para("""
        **Reference:** the TTL issue's own: the first run (no recorded statistics: it reads the metadata
        of every completed commit to find each partition's last write) against the second run, which
        starts from the statistics the first run's replacecommit recorded and reads only newer instants.
        The first run also writes the delete_partition replacecommit; the second has nothing left to
        expire. Retention: KEEP_BY_TIME with a retention between the age of the bulk_insert and the age
        of the first upsert, so the days the upserts did not touch (the oldest ones) expire. **Where the
        gain is limited:** with a handful of commits the statistics stage is already cheap; listing the
        partition folders and building the file-system view (the same for both runs) is most of each run.
    """),
}

GROUP_ORDER = ["write", "snapshot read", "read-optimized read", "compaction", "snapshot read (base files only, as copy-on-write)",
               "planning", "TTL"]


def _fmt_s(s: float) -> str:
    return f"{s:.3f}" if s < 10 else f"{s:.1f}"


def render(report: Report, machine: dict[str, str], total_s: float) -> str:
    """The Markdown of BENCHMARKS.md."""
    a = report.args
    f = report.facts
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `python bench/report.py` on {report.date}; the whole run took {total_s / 60:.1f} minutes.",
        "Every ratio is hoodie's time divided by its reference's time, both measured in this run, on the "
        "same data, in the same Spark session (below 1: hoodie is faster). Each number is one run "
        f"(reads: the best of {a['repeat']}), after a warm-up on a small table.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in machine.items()],
        "",
        "## Parameters",
        "",
        "| | |",
        "|---|---|",
        f"| rows (N) | {a['rows']:,} |",
        f"| partitions | {a['partitions']} daily partitions (`day` = 2025-01-01 + i; rows assigned to days in "
        "key order) |",
        f"| updates (U) | 2 batches of {f['updates_per_batch']:,} distinct keys, each over the newest "
        f"{f['updated_partitions']} days |",
        f"| row | `id` long (record key), `day` string (partition), `ts` long (ordering field), `event_time` "
        f"timestamp (`hoodie.payload.event.time.field`), 6 payload columns: {f['arrow_bytes_per_row']} bytes/row "
        f"in Arrow; the source is {f['source_parquet_mb']} MiB of Parquet |",
        f"| Spark | {', '.join(f'{k}={v}' for k, v in f['spark_conf'].items())} |",
        f"| table after the upserts | {_layout_text(f['layout_before_compaction'])} |",
        f"| table at the end | {_layout_text(f['layout_final'])} |",
        "",
        "## Results",
        "",
        "| group | what | hoodie (s) | reference | reference (s) | ratio |",
        "|---|---|---:|---|---:|---:|",
    ]
    ordered = sorted(report.measurements, key=lambda m: GROUP_ORDER.index(m.group))
    for m in ordered:
        what = m.what + (f" ({m.detail})" if m.detail else "")
        lines.append(f"| {m.group} | {what} | {_fmt_s(m.hoodie_s)} | {m.reference} | {_fmt_s(m.reference_s)} | "
                     f"**{m.ratio:.2f}** |")
    lines += ["", "## What each reference is, and what stands in the way", ""]
    for g in GROUP_ORDER:
        ms = [m for m in ordered if m.group == g]
        if not ms:
            continue
        ratios = ", ".join(f"{m.ratio:.2f}" for m in ms)
        lines += [f"### {g} (ratios {ratios})", "", " ".join([GROUP_NOTES[g], *_measured_context(g, f)]), ""]
    lines += ["## Checks passed in this run", "", *[f"* {c}" for c in report.checks], ""]
    if report.notes:
        lines += ["## Reductions and notes", "", *[f"* {n}" for n in report.notes], ""]
    lines += [
        "## Reproduce",
        "",
        "```bash",
        f"python bench/report.py --rows {a['rows']} --partitions {a['partitions']} --updates {a['updates']} "
        f"--master '{a['master']}'" + (f" --repeat {a['repeat']}" if a['repeat'] != 1 else "")
        + (" --skip-full-compaction" if a['skip_full_compaction'] else ""),
        "```",
        "",
    ]
    return "\n".join(lines)


def _measured_context(group: str, f: dict[str, Any]) -> list[str]:
    """Sentences with numbers from this run that explain a group's ratios."""
    out = []
    if group == "compaction" and "empty_python_tasks" in f:
        e = f["empty_python_tasks"]
        out.append(f"The executor runs one Spark task per operation, and each Python task has a fixed cost: in this "
                   f"run a Spark job shaped like the executor's ({e['tasks']} Python tasks doing nothing) took "
                   f"{e['seconds']} s, which is a floor for the compaction whatever the data size.")
    if group == "TTL" and "ttl" in f:
        t = f["ttl"]
        out.append(f"Run #1 read the metadata of {t['first_scanned_instants']} completed instants, run #2 of "
                   f"{t['second_scanned_instants']}.")
    return out


def _layout_text(lay: dict[str, int]) -> str:
    return (f"{lay['partitions']} partitions, {lay['file_groups']} file groups, {lay['base_files']} base files "
            f"({lay['base_bytes'] / 2**20:.1f} MiB), {lay['log_files']} log files ({lay['log_bytes'] / 2**20:.1f} MiB)")


def main(argv: Optional[list[str]] = None) -> int:
    """Parse arguments, run the benchmark in a temporary directory and write the report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--partitions", type=int, default=365)
    ap.add_argument("--updates", type=int, default=1_000_000, help="rows per update batch (two batches)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--shuffle-partitions", type=int, default=0, help="default: the project's session setting")
    ap.add_argument("--ttl-expire", type=int, default=65, help="oldest days the upserts leave alone (TTL expires them)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per read measurement (best is kept)")
    ap.add_argument("--skip-full-compaction", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(REPO, "BENCHMARKS.md"))
    ap.add_argument("--json", help="also write the raw numbers here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (table, sources)")
    ap.add_argument("--workdir", help="parent of the temporary directory (default: the system temp dir)")
    args = ap.parse_args(argv)
    if args.partitions < 2 or args.rows < args.partitions * 10 or args.updates < 1:
        ap.error("need at least 2 partitions, 10 rows per partition and 1 update")
    work = tempfile.mkdtemp(prefix="hoodie_bench_report_", dir=args.workdir)
    if os.path.abspath(work).startswith(REPO + os.sep):
        shutil.rmtree(work, ignore_errors=True)
        ap.error("the work directory must be outside the repository")
    report = Report(args=vars(args))
    report.progress(f"work directory {work}")
    try:
        machine = machine_info()
        run(args, work, report)
        total_s = time.perf_counter() - report.started
        text = render(report, machine, total_s)
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        report.progress(f"wrote {args.out}")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump({"date": report.date, "machine": machine, "args": report.args, "total_seconds": total_s,
                           "facts": report.facts, "checks": report.checks, "notes": report.notes,
                           "measurements": [{**asdict(m), "ratio": m.ratio} for m in report.measurements]},
                          fh, indent=2, default=str)
            report.progress(f"wrote {args.json}")
        print(text)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
