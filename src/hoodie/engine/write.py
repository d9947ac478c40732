"""Writing a Spark DataFrame into a Hudi v6 table: ``hoodie.spark.write``.

The pipeline mirrors Hudi's Spark write path, with the per-file-group work done by the format core
inside Spark tasks and the commit done on the driver:

1. key generation on executors (``mapInArrow``);
2. one shuffle of the input by table partition (``repartition(partition columns).mapInArrow``: all
   rows of a table partition in one task); each task de-duplicates by record key (greatest
   precombine value wins), tags its records against the keys of the partition's latest slices (a
   simple index, vectorized), sizes inserts into file groups (``hoodie.parquet.max.file.size``;
   copy-on-write small files are filled first) and writes every file group of its partitions with
   the format core: base files for inserts and COW merges, new log files for MOR updates and
   deletes, each behind a marker. A bulk_insert follows ``hoodie.bulkinsert.sort.mode``: with
   Hudi's default (NONE) there is no shuffle, each task writes the rows it read;
3. the driver reconciles markers against the write stats and completes the instant.

Partitioning by table partition rather than by file group means the existing table is never
shuffled (only its key columns are read, inside the task that needs them) and the input is shuffled
once. ``last_write_profile()`` says where the last write spent its time (bench/write_profile.py).
"""

from __future__ import annotations

import functools
import importlib
import json
import time
from typing import Any, Mapping, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.engine.compaction import spark_executor
from hoodie.errors import HoodieError, PostCommitError, WriteError
from hoodie.format import phases
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import check_partition_nesting
from hoodie.format.keys.generators import (
    ComplexKeyGenerator, NonpartitionedKeyGenerator, SimpleKeyGenerator, key_generator_from_config,
)
from hoodie.format.keys.paths import PartitionPathError, check_partition_paths
from hoodie.format.slice.eventtime import all_plausible
from hoodie.format.timeline.commit_metadata import WriteStat
from hoodie.format.storage import Storage
from hoodie.format.table import META_COLUMNS, HoodieTable, read_partition_metadata
from hoodie.format.slice import writer as W
from hoodie.configs import warn_unknown_keys
from hoodie.faults import fault_point
from hoodie.services import inline
from hoodie.services.rollback.operation import rollback
from hoodie.services.transaction import Transaction
from hoodie.services.write import WriteOperation, WriteOutcome, run_write
from hoodie.services.write.configs import IS_DELETED, PARTITIONS_TO_DELETE, WriteConfig
from hoodie.services.write.execution import execute_file_group
from hoodie.services.write.plan import plan_write, record_index_groups, record_locations
from hoodie.services.write.prepare import check_event_times, prepare_records

KEY = "_hoodie_record_key"
PART = "_hoodie_partition_path"

# The phase timings of the last Spark write in this process (see last_write_profile).
_LAST_PROFILE: dict[str, Any] = {}


def last_write_profile() -> dict[str, Any]:
    """Where the last ``hoodie.spark.write`` of this process spent its time, for profiling.

    ``driver`` holds wall seconds on the driver: ``total`` (the whole call), ``check`` (the record-check
    job), ``stage`` (the write stage: shuffle, JVM/Python transfer and the tasks) and ``reconcile``
    (markers); the rest of ``total`` is starting and completing the commit (timeline, metadata
    table, lock, inline services). ``tasks`` sums the tasks' exclusive phases (CPU-side seconds
    across all tasks, so up to the number of cores times the stage's wall time): ``keys`` (key
    generation and checks), ``dedupe``, ``index.read``/``index.match`` (the simple index), ``meta``
    (meta columns), ``merge.read`` (a copy-on-write merge reading the old base file), ``bloom``,
    ``parquet`` (encoding and writing base files), ``encode``/``io`` (log blocks), ``markers``,
    ``plan``/``write``/``other`` (what the named phases leave).
    """
    return json.loads(json.dumps(_LAST_PROFILE))


def _arrow_schema_of(df) -> pa.Schema:
    # pyspark is imported where used, as in the rest of the engine: hoodie's core runs without it.
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema, timezone="UTC", prefers_large_types=False)


def write(df, base_path: str, options: Mapping[str, Any], mode: str = "append",
          storage_options: Optional[dict[str, Any]] = None) -> str:
    """Write a DataFrame to a Hudi table as one commit; returns the instant time.

    ``options`` are Hudi's datasource keys as they are (``hoodie.table.name``,
    ``hoodie.datasource.write.operation`` = insert | bulk_insert | upsert | delete | insert_overwrite |
    insert_overwrite_table | delete_partition (``hoodie.datasource.write.partitions.to.delete``),
    ``hoodie.datasource.write.recordkey.field``, ``.partitionpath.field``, ``.precombine.field``,
    ``hoodie.datasource.write.table.type``, ``hoodie.payload.event.time.field``, file sizing keys...).
    ``mode="overwrite"`` replaces an existing table's data with the DataFrame: an
    insert_overwrite_table replacecommit, as Hudi's SaveMode.Overwrite; the table's configuration
    (type, keys, partitioning) is kept, and until the commit completes every reader sees the old
    table. ``"append"`` writes into the table. Both create the table when absent.

    Without ``hoodie.datasource.write.recordkey.field`` the record keys are generated as Hudi 0.14+
    generates them (``<instant>_<Spark partition id>_<row id>``): such a table only gains rows (insert,
    bulk_insert, the default) or loses them by the keys they were read with (delete); upsert is refused.

    Options and data (record keys, partition paths, precombine values, schema) are checked, in
    one Spark job over the key columns, before anything is written. A failure after the commit
    (an inline service, metrics, the lock release) raises
    :class:`~hoodie.errors.PostCommitError` naming the committed instant.
    """
    if mode not in ("append", "overwrite"):
        raise WriteError(f"mode={mode!r}: use 'append' or 'overwrite'")
    opts = {str(k): str(v) for k, v in options.items() if v is not None}
    warn_unknown_keys(opts)
    st = Storage(base_path, storage_options)
    op = opts.get("hoodie.datasource.write.operation", "upsert")
    _LAST_PROFILE.clear()
    _LAST_PROFILE["driver"] = driver = {}
    started = time.perf_counter()
    try:
        return _run(st, opts, df, mode, storage_options, op)
    finally:
        driver["total"] = round(time.perf_counter() - started, 6)


def _run(st: Storage, opts: dict[str, str], df: Any, mode: str, storage_options: Optional[dict[str, Any]],
         op: str) -> str:
    # The table lock covers the whole write (docs/concurrency.md); inline services take it again.
    # The inline services the options enable run after the commit (their options checked first);
    # inline compaction runs its operations on Spark, through an executor built when it runs, so
    # options are validated before Spark is touched.
    services = inline.InlineServices(opts, lambda tasks: spark_executor(df.sparkSession)(tasks))
    return run_write(st, opts, SparkWriteExecutor(df, opts), mode=mode, instant=opts.get("hoodie.write.instant"),
                     storage_options=storage_options, what=f"Spark write ({op})",
                     checks=[services.check], post_commit=services.hooks())


class SparkWriteExecutor:
    """The write executor of the Spark engine (:class:`hoodie.services.write.WriteExecutor`):
    record checks in one Spark job over the key columns, then one task per table partition."""

    def __init__(self, df: Any, opts: dict[str, str]) -> None:
        self.df = df
        self.opts = opts

    @functools.cached_property
    def schema(self) -> pa.Schema:
        """The input's Arrow schema without meta columns (read from Spark on first use, after the
        options were validated)."""
        return pa.schema([f for f in _arrow_schema_of(self.df)
                          if f.name not in META_COLUMNS and f.name != "_hoodie_operation"])

    def input_columns(self) -> list[str]:
        """The input's column names, meta columns included."""
        return list(self.df.columns)

    @functools.cached_property
    def small(self) -> bool:
        """Whether the input is small enough to be checked and written without a shuffle
        (:func:`_small_input`), decided once so the check and the write agree."""
        return _small_input(self.df)

    def body(self) -> Any:
        """The input without meta columns."""
        return self.df.select(*self.schema.names)

    def body_schema(self) -> pa.Schema:
        """The input's schema without meta columns."""
        return self.schema

    def _input(self, cfg: WriteConfig) -> Any:
        """What the write reads: the input without meta columns, except the keys a delete from a table
        without record key fields takes from the input (``_hoodie_record_key``, ``_hoodie_partition_path``)."""
        if cfg.keys_from_input:
            return self.df.select(*self.schema.names, *[c for c in (KEY, PART) if c in self.df.columns])
        return self.body()

    def check(self, op: WriteOperation, existing: Optional[HoodieTable]) -> None:
        """Every record check, in one Spark job, before anything is written."""
        from hoodie.engine.datasource import ensure_registered

        # Options are valid by now: the reads after a write need the source on this session.
        ensure_registered(self.df.sparkSession)
        if op.config.operation != "delete_partition" or not self.opts.get(PARTITIONS_TO_DELETE):
            started = time.perf_counter()
            _check_records(self._input(op.config), op.config, self.small)
            _LAST_PROFILE.setdefault("driver", {})["check"] = round(time.perf_counter() - started, 6)

    def partitions_to_delete(self, op: WriteOperation) -> list[str]:
        """``hoodie.datasource.write.partitions.to.delete``, or the partitions of the input rows."""
        parts = [p.strip() for p in self.opts.get(PARTITIONS_TO_DELETE, "").split(",") if p.strip()]
        if parts:
            return parts
        try:
            return sorted(r[0] for r in _with_keys(self.body(), op.config, self.schema)
                          .select(PART).distinct().collect())
        except Exception as e:
            refused = _partition_error_from_task(e)
            if refused is None:
                raise
            raise PartitionPathError(refused) from e

    def execute(self, txn: Transaction) -> WriteOutcome:
        """Write every file group on Spark; reconcile markers on the driver."""
        op = txn.operation
        assert isinstance(op, WriteOperation) and txn.table is not None and txn.instant is not None
        table, cfg, instant = txn.table, op.config, txn.instant.timestamp
        driver = _LAST_PROFILE.setdefault("driver", {})
        started = time.perf_counter()
        stats = _write_partitions(self._input(cfg), table, cfg, instant, op.avro_schema, self.small)
        driver["stage"] = round(time.perf_counter() - started, 6)
        if cfg.operation not in ("delete", "delete_partition"):
            check_partition_nesting(table.storage, {s.partition_path or "" for s in stats}, table.timeline)
        fault_point("write.after_files")
        started = time.perf_counter()
        _reconcile_markers(table, instant, stats)
        driver["reconcile"] = round(time.perf_counter() - started, 6)
        return WriteOutcome(stats, sorted({s.partition_path or "" for s in stats}))

    def abort(self, txn: Transaction, error: BaseException) -> None:
        """A failed Spark write is rolled back at once (see :func:`_roll_back_refused`)."""
        assert txn.table is not None and txn.instant is not None
        if isinstance(error, Exception):
            _roll_back_refused(txn.table, txn.instant.timestamp, error)


# An input Spark estimates at most this size (its optimizer's sizeInBytes, no job) is checked and written by
# one task without a shuffle (see _small_input). Why 2 MiB: Spark's adaptive execution coalesces a shuffle
# into partitions of at least 1 MiB (spark.sql.adaptive.coalescePartitions.minPartitionSize), so an input of
# this size ends in one or two write tasks anyway, and the shuffle's map stage (a Spark job of its own under
# adaptive execution, 0.1-0.3 s) is pure overhead. A 10,000-row micro-batch of bench/streaming.py is 0.3 MiB.
SMALL_INPUT_BYTES = 2 << 20


def _small_input(df) -> bool:
    """Whether Spark's optimizer estimates ``df`` at most :data:`SMALL_INPUT_BYTES` (a small micro-batch, a
    handful of rows): its record checks and its write then run in one task each, without a shuffle.

    The estimate needs no job (file sizes, local data); a source without one (Spark's default estimate is
    huge) takes the shuffle. One task holds all rows, so every table partition's rows are in one task, as
    the shuffle would put them."""
    try:
        size = int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # noqa: BLE001 - no estimate (a Spark Connect DataFrame, an odd plan): the general path
        return False
    return 0 <= size <= SMALL_INPUT_BYTES


def _key_columns(cfg: WriteConfig, columns: list[str]) -> list[str]:
    """The input columns key generation and the record checks read (top-level names)."""
    wanted = set(cfg.record_key_fields) | {f.split(":")[0] for f in cfg.partition_fields}
    if cfg.precombine_field:
        wanted.add(cfg.precombine_field)
    if cfg.event_time_field:  # its values are checked too (wrong unit, beyond year 9999)
        wanted.add(cfg.event_time_field)
    wanted.add(IS_DELETED)
    if cfg.keys_from_input:
        wanted |= {KEY, PART}  # the keys of a delete from a table without record key fields
    top = {w.split(".")[0] for w in wanted}
    return [c for c in columns if c in top]


def _check_records(df, cfg: WriteConfig, small: bool = False) -> None:
    """Run the writer's record checks (:func:`~hoodie.services.write.prepare.prepare_records`: record
    keys, partition paths, precombine values, ``_hoodie_is_deleted``) over the whole input before
    anything is written; raise the first error found, as the pure-Python writer raises it.

    One Spark job reading only the key columns. Without it, a bad row would fail a task after
    the commit had started, with files already written (rolled back later, but not refused)."""
    from pyspark.sql.types import StringType, StructField, StructType

    cols = _key_columns(cfg, list(df.columns))
    if not cols:  # every key column is missing: key generation names them
        prepare_records(_arrow_schema_of(df).empty_table(), cfg)
        return
    if _proven_valid(df.select(*cols), cfg, small):
        return

    def check(batches):
        for b in batches:
            try:
                prepare_records(pa.Table.from_batches([b]), cfg)
            except (WriteError, ValueError) as e:
                kind = f"{type(e).__module__}:{type(e).__qualname__}"
                yield pa.RecordBatch.from_pydict({"error": [f"{kind}\t{e}"]})
                return

    # At most one row per task; collect() scans every partition in one job (a limit would not).
    found = df.select(*cols).mapInArrow(check, StructType([StructField("error", StringType(), True)])).collect()
    if found:
        kind, _, message = found[0][0].partition("\t")
        raise _task_error_class(kind)(message)


def _column(name: str) -> Any:
    """A top-level column by its exact name (dots and backticks in it are not syntax)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _proven_valid(df, cfg: WriteConfig, small: bool = False) -> bool:
    """True when one native Spark aggregation proves that :func:`prepare_records` accepts every row,
    so the Python check job (every key column through a Python worker) can be skipped.

    Only for the common shape whose checks are all decidable from aggregates: a simple, complex or
    non-partitioned key generator with one top-level record key of string or integer type (a row is
    refused only for a null or empty key), a precombine field (refused only when null), an event-time
    field of timestamp or date type (valid values form one interval, so its minimum and maximum decide)
    or of number type whose minimum and maximum are both plausible times in its unit, and partition paths (a function of the partition field values: checked by hoodie's own code on the
    distinct values). Any doubt answers False, and the Python job then names the first bad row exactly
    as the writer would. ``small`` (:func:`_small_input`): aggregate in one task, without a shuffle."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    kg = key_generator_from_config(cfg.keygen_props, allow_auto_record_keys=cfg.auto_record_keys)
    if cfg.auto_record_keys or type(kg) not in (SimpleKeyGenerator, ComplexKeyGenerator, NonpartitionedKeyGenerator):
        return False
    types = {f.name: f.dataType for f in df.schema.fields}
    keys, parts = list(kg.record_key_fields), list(kg.partition_path_fields)
    if len(keys) != 1 or any(c not in types for c in keys + parts):
        return False
    try:  # schema-level checks (missing fields, _hoodie_is_deleted's type, the event-time type)
        prepare_records(_arrow_schema_of(df).empty_table(), cfg)
    except (WriteError, ValueError):
        return False
    key = _column(keys[0])
    if isinstance(types[keys[0]], T.StringType):
        bad_key = key.isNull() | (F.length(key) == 0)
    elif isinstance(types[keys[0]], (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        bad_key = key.isNull()
    else:
        return False
    aggs = [F.sum(F.when(bad_key, 1).otherwise(0)).alias("__bad")]
    pre = cfg.precombine_field
    if pre and cfg.operation not in ("delete", "delete_partition"):
        if pre not in types:
            return False
        aggs.append(F.sum(F.when(_column(pre).isNull(), 1).otherwise(0)).alias("__bad_pre"))
    ev = cfg.event_time_field
    numeric_ev = False
    if ev and ev in types:
        numeric_ev = isinstance(types[ev], (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType,
                                            T.DoubleType))
        if not numeric_ev and not isinstance(types[ev], (T.TimestampType, T.TimestampNTZType, T.DateType)):
            return False
        aggs += [F.min(_column(ev)).alias("__ev_min"), F.max(_column(ev)).alias("__ev_max")]
    # A small input in one partition: the aggregation needs no exchange (one stage, one Spark job).
    source = df.coalesce(1) if small else df
    grouped = source.groupBy(*[_column(p) for p in parts]).agg(*aggs) if parts else source.agg(*aggs)
    found = grouped.toArrow()
    if found.num_rows == 0:
        return True
    for c in ("__bad", "__bad_pre"):
        if c in found.column_names and (pc.sum(found.column(c)).as_py() or 0):
            return False
    try:
        if parts:
            distinct = found.select(parts)
            check_partition_paths(kg, distinct, kg.partition_paths(distinct))
        if "__ev_min" in found.column_names:
            ends = pa.concat_arrays([found.column("__ev_min").combine_chunks(),
                                     found.column("__ev_max").combine_chunks()])
            # Times: valid values form one interval, so the extremes decide. Numbers: the writer also
            # refuses values plausible only in another unit, so only all-plausible extremes prove it.
            if numeric_ev and not all_plausible(ends, cfg.event_time_unit):
                return False
            check_event_times(pa.table({ev: ends}), cfg)
    except (WriteError, ValueError):
        return False
    return True


def _task_error_class(kind: str) -> type[Exception]:
    """The class of an error a check task reported (``module:qualname``), so the driver raises what
    the pure-Python writer raises (``PartitionPathError``, ``WriteError``...); ValueError for
    anything that is not a hoodie error taking one message."""
    module, _, name = kind.partition(":")
    if module.startswith("hoodie."):
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            cls = None
        if isinstance(cls, type) and issubclass(cls, HoodieError) and not issubclass(cls, PostCommitError):
            return cls
    return ValueError


def _roll_back_refused(table: HoodieTable, instant: str, error: Exception) -> None:
    """Undo a write that failed before its commit: roll the instant back now, under the lock this
    write holds (rather than leave it to the next writer), and remove the partition metafiles it
    created in partitions it leaves empty, so a refused partition path leaves no folder behind.

    A partition path refused in a task is raised again on the driver as a ``PartitionPathError``
    with the task's message; other errors get a note saying the instant was rolled back.
    """
    storage = table.storage
    created = {path.rpartition("/")[0] for path, _ in W.marker_files(storage, instant)}
    try:
        rollback(table, instant)  # it opens the table as it is now
    except Exception as rb:  # the original error matters more; the next write rolls back again
        error.add_note(f"hoodie: rolling back the failed instant {instant} failed too ({rb}); the next write "
                       "or `hoodie rollback` retries it")
        return
    for part in sorted(created, key=lambda p: -p.count("/")):
        entries = storage.list_dir(part)
        if part and [e.name for e in entries] == [N.PARTITION_METAFILE] and _metafile_instant(storage, part) == instant:
            storage.delete(entries[0].path)
            # Folders this write created and left empty (local storage; S3 has no folders).
            while part and not storage.list_dir(part):
                storage.delete_dir(part)
                part = part.rpartition("/")[0]
    refused = _partition_error_from_task(error)
    if refused is None:
        error.add_note(f"hoodie: the write's instant {instant} was rolled back; nothing was committed")
        return
    raise PartitionPathError(f"{refused} (A Spark task refused it; the write's instant {instant} was rolled "
                             "back.)") from error


def _partition_error_from_task(error: Exception) -> Optional[str]:
    """The message of a ``PartitionPathError`` raised in a Spark task (Spark wraps it in its own
    exception, with the Python traceback as text), or None."""
    marker = f"{PartitionPathError.__name__}: "
    text = str(error)
    if isinstance(error, PartitionPathError) or marker not in text:
        return None
    return text[text.index(marker) + len(marker):].splitlines()[0]


def _metafile_instant(storage: Storage, partition: str) -> Optional[str]:
    meta = read_partition_metadata(storage, partition)
    return meta.get("commitTime") if meta else None


def _with_keys(df, cfg: WriteConfig, body_schema: pa.Schema, instant: Optional[str] = None):
    """Add ``_hoodie_record_key`` and ``_hoodie_partition_path`` on executors with the key generator.

    Without record key fields the keys are generated with the write's ``instant`` as Hudi's
    ``AutoRecordGenWrapperKeyGenerator`` generates them: ``<instant>_<Spark partition id>_<row id>``, the
    row id counting the rows of this (input) partition from 0, so keys are unique across tasks. A retried
    task renumbers the same rows the same way when its input partition is deterministic, as in Hudi."""
    from pyspark.sql.types import StringType, StructField, StructType

    body_cols = [f.name for f in body_schema]
    df = df.select(*body_cols)
    kept = [f for f in df.schema.fields if f.name not in META_COLUMNS and f.name != "_hoodie_operation"]
    out_schema = StructType(kept + [StructField(KEY, StringType(), True), StructField(PART, StringType(), True)])
    generate = cfg.auto_record_keys and instant is not None and cfg.operation not in ("delete", "delete_partition")

    def add_keys(batches):
        from pyspark import TaskContext

        tc = TaskContext.get()
        partition_id = tc.partitionId() if tc else 0
        row = 0
        for b in batches:
            t = pa.Table.from_batches([b])
            ids = (instant, partition_id, row) if generate else None
            row += t.num_rows
            yield from prepare_records(t, cfg, auto_keys=ids).to_batches()

    return df.mapInArrow(add_keys, out_schema)


def _by_partition(df, cfg: WriteConfig, instant: Optional[str] = None, small: bool = False):
    """The input hash-partitioned so that all rows of one table partition are in one Spark task (a task
    may hold several table partitions; it splits them itself).

    With a simple, complex or non-partitioned key generator the partition path is an injective
    function of the partition columns once empty strings are folded into null (both become the
    default partition), so partitioning by those columns needs no Python stage before the shuffle and
    keys are generated inside the task. Other key generators (timestamp-based, custom) map many
    values to one path: their partition path is computed first (a ``mapInArrow`` stage). So are
    generated keys (no record key field): they number the rows of each input partition, which the
    shuffle would mix.

    A repartition rather than ``groupBy().applyInArrow``: one Python call per task instead of one per
    table partition (measured: a quarter of the stage's fixed cost on 100 partitions). Sorted within
    each task by the same columns, so the task meets each table partition's rows as one run and holds
    one partition in memory at a time, as the grouped stage did (:func:`_partition_runs`).

    ``small`` (:func:`_small_input`): with a simple, complex or non-partitioned key generator, the input
    is read by one task (``coalesce(1)``, no shuffle) and sorted there: every table partition's rows are
    in that task, as the shuffle would have put them, and the write is one Spark stage instead of two.
    Not for generated record keys (their row ids number the rows of each input partition, which one task
    reading several would repeat) nor for the other key generators.
    """
    from pyspark.sql import functions as F

    kg = key_generator_from_config(cfg.keygen_props, allow_auto_record_keys=cfg.auto_record_keys)
    if cfg.auto_record_keys:
        return _with_keys(df, cfg, _arrow_schema_of(df), instant).repartition(PART).sortWithinPartitions(PART)
    if type(kg) in (SimpleKeyGenerator, ComplexKeyGenerator, NonpartitionedKeyGenerator):
        fields = list(kg.partition_path_fields)
        missing = [f for f in fields if f not in df.columns]
        if missing:
            raise WriteError(f"partition field(s) {missing} are not columns of the data "
                             f"(columns: {', '.join(df.columns)})")
        if not fields:
            return df.coalesce(1) if small else df.repartition(1)
        cols = []
        for f in fields:
            c = _column(f)
            if dict(df.dtypes)[f] == "string":
                c = F.when(c == "", F.lit(None)).otherwise(c)
            cols.append(c)
        if small:
            return df.coalesce(1).sortWithinPartitions(*cols)
        return df.repartition(*cols).sortWithinPartitions(*cols)
    return _with_keys(df, cfg, _arrow_schema_of(df)).repartition(PART).sortWithinPartitions(PART)


GROUP = "_hoodie_record_index_group"


def _by_record_index_group(df, table: HoodieTable, cfg: WriteConfig, instant: str,
                           located: Optional[dict[str, tuple[str, str]]]):
    """A global index (RECORD_INDEX, GLOBAL_BLOOM, GLOBAL_SIMPLE): the keyed input shuffled by group of
    partitions, one group's rows in one task, sorted by group
    (:func:`~hoodie.services.write.plan.record_index_groups`: a record's file group follows from the index,
    not from its incoming partition, and a record moving partitions touches two). The driver looks the keys
    up once to group them; ``located`` (GLOBAL_BLOOM/GLOBAL_SIMPLE) receives what it found, which the tasks
    tag with, since their lookup is a scan of every file of the table; RECORD_INDEX tasks look up their own
    keys again in the index (only theirs: the driver's answer for every key is not shipped to each task)."""
    from pyspark.sql.types import StringType, StructField, StructType

    keyed = _with_keys(df, cfg, _arrow_schema_of(df), instant)
    pairs = keyed.select(KEY, PART).toArrow()
    keys = pairs.column(KEY).to_pylist()
    found = record_locations(table, cfg, keys)
    if located is not None:
        located.update(found)
    group_of = record_index_groups(table, cfg, keys, pairs.column(PART).to_pylist(), found)
    out_schema = StructType(list(keyed.schema.fields) + [StructField(GROUP, StringType(), True)])

    def add_group(batches):
        for b in batches:
            t = pa.Table.from_batches([b])
            groups = [group_of.get(k, p) for k, p in zip(t.column(KEY).to_pylist(), t.column(PART).to_pylist())]
            yield from t.append_column(GROUP, pa.array(groups, pa.string())).to_batches()

    return keyed.mapInArrow(add_group, out_schema).repartition(GROUP).sortWithinPartitions(GROUP)


def _runs_of(batches: Any, column: str) -> Any:
    """The rows of a task sorted by ``column``, one table per value, each as soon as its run ends."""
    current: Optional[str] = None
    pending: list[pa.Table] = []
    for b in batches:
        t = pa.Table.from_batches([b])
        if t.num_rows == 0:
            continue
        values = t.column(column).to_pylist()
        starts = [0] + [i for i in range(1, len(values)) if values[i] != values[i - 1]]
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else t.num_rows
            if values[start] != current and pending:
                yield pa.concat_tables(pending)
                pending = []
            current = values[start]
            pending.append(t.slice(start, end - start))
    if pending:
        yield pa.concat_tables(pending)


def _partition_runs(batches: Any, cfg: WriteConfig) -> Any:
    """The rows of a task sorted by table partition (:func:`_by_partition`), one table per partition
    path, each as soon as its run ends (keys generated where the input lacks them).

    A partition path meeting again after its run ended would have two writers of its file groups in
    one task (a copy-on-write rewrite would lose the first one's rows): refused, never written.
    """
    done: set[str] = set()
    current: Optional[str] = None
    pending: list[pa.Table] = []
    for b in batches:
        t = pa.Table.from_batches([b])
        if t.num_rows == 0:
            continue
        if KEY not in t.column_names:
            with phases.phase("keys"):
                t = prepare_records(t, cfg)
        enc = pc.dictionary_encode(t.column(PART)).combine_chunks()
        codes = enc.indices.to_numpy(zero_copy_only=False)
        values = enc.dictionary.to_pylist()
        starts = [0, *(np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist()]
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else t.num_rows
            path = values[codes[start]]
            if path != current:
                if pending:
                    yield pa.concat_tables(pending)
                    pending = []
                    done.add(current)  # type: ignore[arg-type]
                if path in done:
                    raise WriteError(f"internal error: the rows of partition {path!r} reached a write task in two "
                                     "runs; nothing of this write is committed")
                current = path
            pending.append(t.slice(start, end - start))
    if pending:
        yield pa.concat_tables(pending)


def _bulk_insert_layout(df, cfg: WriteConfig, instant: str) -> Optional[Any]:
    """The input of a bulk_insert laid out by ``hoodie.bulkinsert.sort.mode`` for tasks that write their
    input partition as it is (no grouping by table partition), or None when the write groups by table
    partition: any other operation, the PARTITION_PATH_REPARTITION modes, and
    ``hoodie.combine.before.insert`` (de-duplication needs every copy of a key in one task).

    NONE (Hudi's default) adds no stage at all; the sorts order rows by partition path and record key,
    which needs the keys first (a key-generation stage, as Hudi's sort partitioners do)."""
    mode = cfg.bulk_insert_sort_mode
    if cfg.operation != "bulk_insert" or cfg.combine_before_insert or mode not in ("NONE", "GLOBAL_SORT",
                                                                                     "PARTITION_SORT"):
        return None
    if mode == "NONE":
        return df
    keyed = _with_keys(df, cfg, _arrow_schema_of(df), instant)
    return keyed.sort(PART, KEY) if mode == "GLOBAL_SORT" else keyed.sortWithinPartitions(PART, KEY)


def _write_partitions(keyed, table: HoodieTable, cfg: WriteConfig, instant: str,
                      avro_schema: dict, small: bool = False) -> list[WriteStat]:
    """One shuffle of the input by table partition; each task tags, de-duplicates and writes the
    file groups of its partition with the format core, and returns their write stats.

    Tagging inside the task reads only the keys of that partition's latest slices (vectorized
    ``is_in``), so the existing table is never shuffled; inserts are sized into file groups with
    the partition's full insert count at hand, and copy-on-write small files are filled first.
    """
    from pyspark.sql.types import StringType, StructField, StructType

    base_path = table.base_path
    storage_options = table.storage.storage_options
    timeline = table.timeline
    out_schema = StructType([StructField("stat", StringType(), True)])
    # GLOBAL_BLOOM/GLOBAL_SIMPLE: key -> (partition, file id), scanned once by the driver
    # (_by_record_index_group fills it before the tasks' function is serialized with it); None: each task
    # tags its own rows (by its partition's slices, or its keys' record-index lookup).
    located: Optional[dict[str, tuple[str, str]]] = (
        {} if cfg.tags_globally and cfg.index_type != "RECORD_INDEX" else None)

    def write_rows(t: pa.Table, auto_keys: Optional[tuple[str, int, int]] = None) -> pa.Table:
        from pyspark import TaskContext

        if t.num_rows == 0:
            return pa.table({"stat": pa.array([], pa.string())})
        tc = TaskContext.get()
        with phases.recording() as prof:
            if KEY not in t.column_names:
                with phases.phase("keys"):
                    t = prepare_records(t, cfg, auto_keys=auto_keys)
            if cfg.operation == "bulk_insert" and cfg.bulk_insert_sort_mode == "PARTITION_PATH_REPARTITION_AND_SORT":
                with phases.phase("sort"):
                    t = t.sort_by(KEY)
            # The driver's listing: every task sees the same timeline.
            tbl = HoodieTable(base_path, storage_options).with_timeline(timeline)
            with phases.phase("plan"):
                plan = plan_write(tbl, t, cfg, instant, avro_schema, located)
            stats = []
            # The task's base files are flushed to disk together once all are written, before their stats
            # leave the task (half the cost of flushing each as it closes).
            with phases.phase("sync"), tbl.storage.deferred_syncs():
                for i, w in enumerate(plan.work):
                    # Task attempt in the token: a retried attempt writes new names, reconciled by markers.
                    token = (N.write_token(tc.partitionId(), tc.stageId(), tc.taskAttemptId()) if tc
                             else N.DEFAULT_WRITE_TOKEN)
                    with phases.phase("write"):
                        stat = execute_file_group(tbl, w, instant=instant, avro_schema=avro_schema, cfg=cfg,
                                                  token=token, task_partition_id=tc.partitionId() if tc else i)
                    stats.append(json.dumps(stat.to_json()))
        # One more row carries the task's phase timings (``stat`` starts with "P" instead of "{").
        stats.append("P" + json.dumps(prof.as_dict()))
        return pa.table({"stat": pa.array(stats, pa.string())})

    def run_input_partition(batches):
        # All of this Spark partition's rows: every row of the table partitions it holds after the
        # repartition, or (bulk_insert without a shuffle) whatever it read, written as it is (one file
        # group per table partition, sized by hoodie.parquet.max.file.size).
        from pyspark import TaskContext

        received = list(batches)
        if not received:  # a Spark partition without rows
            return
        t = pa.Table.from_batches(received)
        tc = TaskContext.get()
        ids = (instant, tc.partitionId() if tc else 0, 0) if cfg.auto_record_keys else None
        yield from write_rows(t, ids).to_batches()

    def run_groups(batches):
        # Rows sorted by record-index group (_by_record_index_group): plan and write each group's rows.
        for run in _runs_of(batches, GROUP):
            yield from write_rows(run.drop_columns([GROUP])).to_batches()

    def run_partitions(batches):
        # Rows sorted by table partition: write each partition's run as soon as it ends.
        for run in _partition_runs(batches, cfg):
            yield from write_rows(run).to_batches()

    layout = _bulk_insert_layout(keyed, cfg, instant)
    if cfg.tags_globally:
        grouped = _by_record_index_group(keyed, table, cfg, instant, located)
        rows = grouped.mapInArrow(run_groups, out_schema).collect()
    elif layout is not None:
        rows = layout.mapInArrow(run_input_partition, out_schema).collect()
    else:
        rows = _by_partition(keyed, cfg, instant, small).mapInArrow(run_partitions, out_schema).collect()
    task_phases: dict[str, float] = {}
    out = []
    for (r,) in rows:
        if r.startswith("P"):
            phases.add(task_phases, json.loads(r[1:]))
        else:
            out.append(WriteStat.from_json(json.loads(r)))
    _LAST_PROFILE["tasks"] = task_phases
    return out


def _reconcile_markers(table: HoodieTable, instant: str, stats: list[WriteStat]) -> None:
    """Delete data files a failed task attempt left behind (marked but not in the write stats)."""
    written = {s.path for s in stats if s.path}
    for path, _io in W.marker_files(table.storage, instant):
        if path not in written:
            table.storage.delete(path)
