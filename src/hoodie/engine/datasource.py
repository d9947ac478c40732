"""The ``hoodie`` Spark data source (Python Data Source API, Spark 4.x): reads only. It is registered
as ``hudi`` too, unless the JVM has Hudi's own ``hudi`` source (which it then leaves alone).

``spark.read.format("hoodie").option(...).load(base_path)`` plans the read on the driver with the
pure-Python format core (one listing, no data read), then each Spark task reads a group of file
slices with the same code and yields Arrow batches. The plan (pinned timeline, schema, filters) travels
to the executors inside each input partition (:class:`ReadTask`): tasks never list or plan again.

The reader does not prune partitions with filters Spark pushes down (``pushFilters``): in PySpark
4.3 the partitions and read function planned after a pushdown are stored on the relation, which
every scan of the same DataFrame shares (``PythonDataSourceV2.setReadInfo``). Pruned that way, a
later query on the DataFrame (``df.where("p = 'a'").count()`` then ``df.count()``), or the other
side of a union or self-join with a different filter, read only the partitions of the last
pushdown: rows vanished without an error. Spark evaluates every ``WHERE`` itself; partition
pruning is in :func:`hoodie.read_table` (``filters=``), which plans per call.

Writes go through :func:`hoodie.spark.write`: an upsert needs a shuffle by file group and an index
lookup across the whole input, which the Python ``DataSourceWriter`` API (each task sees an
arbitrary slice of the input, no shuffle control) cannot express correctly, so
``df.write.format("hoodie")`` is deliberately not offered (see docs/spark.md): its ``writer`` raises a
:class:`WriteError` naming ``hoodie.spark.write`` and ``hoodie.sql``, which Spark shows for ``save``,
``saveAsTable``, ``insertInto``, ``writeTo`` and SQL ``INSERT INTO`` alike.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator, Optional

import pyarrow as pa

from hoodie import configs as C
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType
from hoodie.errors import WriteError
from hoodie.format.slice.reader import check_read_options
from hoodie.format.table import HoodieTable
from hoodie.format.slice.reader import plan_read
from hoodie.format.slice.reader import iter_plan
from hoodie.format.slice.reader import _normalize_instant
from hoodie.format.timeline import instant as I
from hoodie.services.clean.planner import CleanPlan
from hoodie.configs.streaming import START_OFFSET
from hoodie.configs.reads import ENABLE_DATA_SKIPPING
from hoodie.services.streaming import StreamingError

QUERY_TYPE_KEY = "hoodie.datasource.query.type"
BEGIN_KEY = "hoodie.datasource.read.begin.instanttime"
END_KEY = "hoodie.datasource.read.end.instanttime"
AS_OF_KEY = "as.of.instant"
SPLIT_BYTES_KEY = "hoodie.datasource.read.split.target.bytes"
# hoodie.spark.read hands the slices it does not scan natively to this source as the driver's plan
# (base64 pickle of a ReadTask), so both halves of one read see the same snapshot.
PLAN_KEY = "__hoodie.read.plan"
# The streaming source's start (Hudi's key; hoodie.services.streaming.START_OFFSET). Spark hands Python data
# sources their option keys in lower case, so it is looked up case-insensitively.
STREAM_START_KEY = "hoodie.datasource.streaming.startOffset"
STORAGE_PREFIX = "hoodie.storage."
READ_KEYS = (QUERY_TYPE_KEY, BEGIN_KEY, END_KEY, AS_OF_KEY, SPLIT_BYTES_KEY, "path")
_QUERY_ALIASES = {"snapshot": "snapshot", "read_optimized": "read_optimized", "incremental": "incremental",
                  "realtime": "snapshot"}


def _no_path_error(what: str) -> ValueError:
    return ValueError(
        f"{what}: no table base path reached the hoodie data source. Read a table with "
        "spark.read.format('hoodie').load('/path/to/table'). A catalog table made by plain "
        "spark.sql(\"CREATE TABLE ... USING hoodie LOCATION '...'\") keeps no LOCATION (Spark 4.3 drops the "
        "options of Python data source tables): DROP TABLE it and register the table with "
        "hoodie.sql(spark, \"CREATE TABLE name USING hoodie LOCATION '/path/to/table'\") or "
        "hoodie.catalog.register_table(spark, 'db.name', '/path/to/table')"
    )


def _catalog_create_error(options: Any) -> ValueError:
    where = options.get("location") or options.get("path") or "(no LOCATION)"
    return ValueError(
        f"CREATE TABLE ... USING hoodie through spark.sql cannot work: Spark 4.3 keeps neither the "
        f"LOCATION ({where}) nor the OPTIONS of a Python data source table, so the table could never be "
        "read. Run the statement through hoodie.sql(spark, \"CREATE TABLE name USING hoodie LOCATION "
        "'/path/to/table'\"), which registers the table as hoodie views, or call "
        "hoodie.catalog.register_table(spark, 'db.name', '/path/to/table')"
    )


def _no_writer_error(name: str, options: Any) -> Exception:
    """Why ``df.write.format("hoodie"|"hudi")`` does not write, and what does."""
    path = options.get("path") if options is not None else None
    target = repr(path) if path else "path"
    return WriteError(
        f"df.write.format({name!r}) (save, saveAsTable, insertInto, writeTo, INSERT INTO a {name} view) does not "
        f"write: write with hoodie.spark.write(df, {target}, options) (import hoodie.spark; options are Hudi's "
        "hoodie.datasource.write.* keys), or in SQL with hoodie.sql(spark, \"INSERT INTO <table> SELECT ...\"). "
        "Spark's Python data source writer gives each task an arbitrary slice of the input and no shuffle, and a "
        "correct upsert needs one writer per file group and every version of a key in one place (docs/spark.md, "
        "\"Why there is no df.write.format('hoodie')\"). Nothing was written")


def _no_stream_writer_error(name: str, options: Any) -> Exception:
    """Why ``df.writeStream.format("hoodie"|"hudi")`` does not write, and what does."""
    path = options.get("path") if options is not None else None
    target = repr(path) if path else "path"
    return WriteError(
        f"df.writeStream.format({name!r}) does not write: stream into a hoodie table with "
        f"hoodie.spark.write_stream(df, {target}, options, checkpoint_location=...) (import hoodie.spark), which "
        "writes each micro-batch as one hoodie.spark.write, exactly once across restarts (docs/streaming.md). "
        "Spark's Python stream writer gives each task an arbitrary slice of the batch and no shuffle, and a "
        "correct upsert needs every version of a key in one place. The query stopped before its first "
        "micro-batch; nothing was written")


def _storage_options(options: Any) -> Optional[dict[str, str]]:
    so = {k[len(STORAGE_PREFIX):]: v for k, v in options.items() if k.lower().startswith(STORAGE_PREFIX)}
    return so or None


# The hollow-commit policy under its key and Hudi's older alias (hoodie.configs defines both).
HOLLOW_POLICY_KEYS = (C.HOLLOW_COMMIT_POLICY.key, *C.HOLLOW_COMMIT_POLICY.aliases)


def _read_args(options: Any) -> dict[str, Any]:
    # Every Spark read option, before it is narrowed to what planning takes: unknown keys warn, and
    # options hoodie cannot honour (a CDC query, incremental path filters) are refused.
    check_read_options({str(k): v for k, v in dict(options).items()
                        if str(k) not in (PLAN_KEY, "path") and str(k).lower() != STREAM_START_KEY.lower()})
    qt = str(options.get(QUERY_TYPE_KEY, "snapshot")).lower()
    if qt not in _QUERY_ALIASES:
        raise ValueError(f"{QUERY_TYPE_KEY}={qt!r}: use snapshot, read_optimized or incremental")
    args: dict[str, Any] = {"query_type": _QUERY_ALIASES[qt]}
    if args["query_type"] == "incremental":
        begin = options.get(BEGIN_KEY)
        if begin is None:
            raise ValueError(f"incremental reads need option {BEGIN_KEY} (exclusive start instant)")
        args["begin"] = begin
        if options.get(END_KEY) is not None:
            args["end"] = options.get(END_KEY)
    if options.get(AS_OF_KEY) is not None:
        args["as_of"] = options.get(AS_OF_KEY)
    # Read options plan_read takes as Hudi keys: metadata-table listing, the hollow-commit policy and data
    # skipping (which needs filters: hoodie.spark.read's filters=).
    passed = {str(k): str(v) for k, v in dict(options).items()
              if v is not None and (str(k).startswith("hoodie.metadata.") or str(k) in HOLLOW_POLICY_KEYS
                                    or str(k) == ENABLE_DATA_SKIPPING.key)}
    if passed:
        args["options"] = passed
    return args


def spark_schema_for(arrow_schema: pa.Schema) -> StructType:
    """The Spark schema for an Arrow schema (all fields nullable)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    nullable = pa.schema([f.with_nullable(True) for f in arrow_schema])
    return from_arrow_schema(nullable)


def arrow_schema_for(spark_schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects batches in (timestamps as us, UTC)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema, timezone="UTC", prefers_large_types=False)


class HoodieDataSource(DataSource):
    """``spark.read.format("hoodie")``: snapshot, read-optimized, incremental and time-travel reads."""

    @classmethod
    def name(cls) -> str:
        return "hoodie"

    def _table(self):
        path = self.options.get("path")
        if not path:
            raise _no_path_error("give the table base path")
        return HoodieTable(path, _storage_options(self.options), read_only=True)

    def schema(self) -> StructType:
        given = _given_plan(self.options)
        if given is not None:
            plan = given.plan
            return spark_schema_for(pa.schema([plan.schema.field(c) if c in plan.schema.names else
                                               pa.field(c, pa.string()) for c in plan.out_columns]))
        if "provider" in self.options:
            # Only a catalog CREATE TABLE passes the provider: refuse it here, at CREATE, rather than
            # leave a table whose every read fails.
            raise _catalog_create_error(self.options)
        plan = plan_read(self._table(), **_read_args(self.options))
        return spark_schema_for(pa.schema([plan.schema.field(c) if c in plan.schema.names else
                                           pa.field(c, pa.string()) for c in plan.out_columns]))

    def reader(self, schema: StructType) -> "HoodieReader":
        if not self.options.get("path"):
            raise _no_path_error("cannot read this hoodie table")
        # No pushFilters (see the module docstring), so reads also work on a session with
        # spark.sql.python.filterPushdown.enabled=false (Spark refuses a reader with pushFilters then).
        return HoodieReader(dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        """Refused with the way to write (the base class's ``NOT_IMPLEMENTED`` named none): Spark calls
        this on the driver before any task runs, so nothing is written or created."""
        raise _no_writer_error(self.name(), self.options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        """``df.writeStream.format("hoodie")``: refused, naming ``hoodie.spark.write_stream``. Spark calls this
        when the query initializes, before its first micro-batch: the query stops with this error and
        nothing is written (``awaitTermination`` / ``exception()`` show it)."""
        raise _no_stream_writer_error(self.name(), self.options)

    def streamReader(self, schema: StructType) -> "HoodieStreamReader":
        """``spark.readStream.format("hoodie")``: each micro-batch an incremental read between two
        completed instants (:class:`HoodieStreamReader`)."""
        if not self.options.get("path"):
            raise _no_path_error("cannot stream this hoodie table")
        return HoodieStreamReader(dict(self.options), schema)


class HudiDataSource(HoodieDataSource):
    """The same source under Hudi's name: ``spark.read.format("hudi")`` and ``USING hudi`` read with hoodie
    where no JVM ``hudi`` source exists (:func:`register` checks)."""

    @classmethod
    def name(cls) -> str:
        return "hudi"


@dataclasses.dataclass
class ReadTask:
    """What one Spark task reads: the driver's plan (its pinned timeline, schema, filters and the
    log files to skip; without the slice list) and the task's own group of file slices. Executors
    never plan again, so every task of one read sees the snapshot the driver planned, however many
    commits land meanwhile."""

    plan: Any
    slices: list


class HoodieReader(DataSourceReader):
    """Plans on the driver, reads slice groups on executors."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.options = options
        self.spark_schema = schema

    def _plan(self):
        given = _given_plan(self.options)
        if given is not None:
            plan = dataclasses.replace(given.plan, slices=list(given.slices))
            plan.out_columns = [f.name for f in self.spark_schema.fields]
            return plan
        table = HoodieTable(self.options["path"], _storage_options(self.options), read_only=True)
        plan = plan_read(table, **_read_args(self.options))
        plan.out_columns = [f.name for f in self.spark_schema.fields]
        return plan

    def partitions(self) -> list[InputPartition]:
        plan = self._plan()
        target = int(self.options.get(SPLIT_BYTES_KEY, str(128 * 1024 * 1024)))
        groups: list[list] = []
        cur: list = []
        size = 0
        for sl in plan.slices:
            s = (sl.base_file.size if sl.base_file else 0) + sum(lf.size for lf in sl.log_files)
            if cur and size + s > target:
                groups.append(cur)
                cur, size = [], 0
            cur.append(sl)
            size += s
        if cur:
            groups.append(cur)
        # The plan travels with each partition (pickled once per task), minus the other tasks' slices.
        shared = dataclasses.replace(plan, slices=[])
        return [InputPartition(ReadTask(shared, g)) for g in groups] or [InputPartition(ReadTask(shared, []))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        task: ReadTask = partition.value
        target = arrow_schema_for(self.spark_schema)
        for t in iter_plan(task.plan, task.slices):
            if t.num_rows == 0:
                continue
            yield from t.cast(target).to_batches()


OFFSET_KEY = "instant"  # a stream offset: {"instant": <the last completed instant read>}


class HoodieStreamReader(DataSourceStreamReader):
    """``spark.readStream.format("hoodie")``: offsets are completed instants of the table (completion times
    on table versions 8/9, instant times on version 6), and each micro-batch is the incremental read of
    the writes completed in ``(start, end]`` (the latest version, as of ``end``, of every record they
    changed), planned on the driver and read by Spark tasks as a batch read is.

    ``hoodie.datasource.streaming.startOffset`` (Hudi's key) says where a new query starts: ``earliest``
    (every record), ``latest`` (writes completed after the query starts) or an instant time. A start
    before the active timeline (archived writes) reads every latest slice and keeps the records
    committed after it (Hudi's full-scan fallback). Spark keeps the offsets in its checkpoint, so a
    restarted query reads each range once: the replayed range is the same range, and its rows the same.

    On version 6, where a write's records carry its requested instant time, an offset never passes a
    write still pending: the stream waits for it (its rows would otherwise fall behind the offset). A
    pending write left by a killed writer is rolled back by the next write."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.options = options
        self.spark_schema = schema

    def _table(self):
        return HoodieTable(self.options["path"], _storage_options(self.options), read_only=True)

    def _latest(self) -> Optional[str]:
        """The newest offset a micro-batch can end at now, or None (no completed write)."""
        table = self._table()
        writes = [i for i in table.timeline.instants if i.action in I.WRITE_ACTIONS]
        done = [i for i in writes if i.is_completed]
        if table.timeline_layout == 2:  # versions 8/9: completion times order incremental reads
            return max((i.completion or i.timestamp for i in done), default=None)
        pending = [i.timestamp for i in writes if not i.is_completed]
        cap = min(pending, default=None)
        return max((i.timestamp for i in done if cap is None or i.timestamp < cap), default=None)

    def initialOffset(self) -> dict:
        """Where a new query starts (``hoodie.datasource.streaming.startOffset``)."""
        given = {k: v for k, v in self.options.items() if str(k).lower() == STREAM_START_KEY.lower()}
        start = str(START_OFFSET.get({START_OFFSET.key: next(iter(given.values()), None)})).strip()
        if start.lower() == "earliest":
            return {OFFSET_KEY: "0"}
        if start.lower() == "latest":
            return {OFFSET_KEY: self._latest() or "0"}
        try:
            return {OFFSET_KEY: _normalize_instant(start, START_OFFSET.key)}
        except ValueError as e:
            raise StreamingError(f"{START_OFFSET.key}={start!r}: use earliest, latest or an instant time "
                                 f"(yyyyMMddHHmmss[SSS]) ({e})") from e

    def latestOffset(self, start: Optional[dict] = None, limit: Any = None) -> dict:
        """The newest completed instant (or ``start`` when nothing completed since)."""
        latest = self._latest()
        begin = (start or {}).get(OFFSET_KEY, "0")
        if latest is None or latest <= begin:
            return {OFFSET_KEY: begin}
        return {OFFSET_KEY: latest}

    def _refuse_cleaned(self, end: str) -> None:
        """A range is read as of its end; once the cleaner retains file versions only from a later commit
        (the last clean's earliest commit to retain, KEEP_LATEST_COMMITS), versions that end needs may be
        deleted and the read would come back short. Refused instead (a replayed range after a long stop).
        Other clean policies record no such commit and are not checked."""
        table = self._table()
        tl = table.timeline
        cleans = [i for i in tl.instants if i.action == I.CLEAN]
        if not cleans:
            return
        last = max(cleans, key=lambda i: i.timestamp)
        plan = CleanPlan.from_avro(tl.read_avro(I.Instant(last.timestamp, I.CLEAN, I.State.REQUESTED)), table.storage)
        ectr = plan.earliest_instant_to_retain
        if ectr is None:
            return
        # The newest write the range's end includes, by requested time (an end is a completion time on 8/9).
        ends = [i.timestamp for i in tl.instants if i.is_completed and i.action in I.WRITE_ACTIONS
                and (i.completion or i.timestamp) <= end]
        if ends and max(ends) < ectr.timestamp:
            raise StreamingError(
                f"streaming from {table.storage.uri()}: the micro-batch reads the commits up to {end} as of {end}, "
                f"but clean {last.timestamp} keeps file versions only for commits from {ectr.timestamp} on, so rows of "
                "the range may be gone. Restart the query from a new checkpoint location with "
                f"hoodie.datasource.streaming.startOffset={ectr.timestamp} (or earliest), and retain more commits "
                "(hoodie.cleaner.commits.retained) than a stopped query may fall behind")

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        """The incremental read of ``(start, end]``, split as a batch read is."""
        if start[OFFSET_KEY] == end[OFFSET_KEY]:
            return []
        self._refuse_cleaned(end[OFFSET_KEY])
        opts = dict(self.options)
        opts.update({QUERY_TYPE_KEY: "incremental", BEGIN_KEY: start[OFFSET_KEY], END_KEY: end[OFFSET_KEY]})
        return [p for p in HoodieReader(opts, self.spark_schema).partitions() if p.value.slices]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """One task's slices of the range."""
        return HoodieReader(self.options, self.spark_schema).read(partition)

    def commit(self, end: dict) -> None:
        """Nothing to release: a range is read again from the table (Spark keeps the offsets)."""


def _given_plan(options: Any) -> Optional[ReadTask]:
    """The driver's plan handed over by :func:`hoodie.spark.read` (None for an ordinary read)."""
    import base64
    import pickle

    blob = options.get(PLAN_KEY)
    if not blob:
        return None
    task = pickle.loads(base64.b64decode(blob))
    if not isinstance(task, ReadTask):
        raise ValueError(f"{PLAN_KEY} is set by hoodie.spark.read only; it does not hold a read plan")
    return task


# What DataSource.lookupDataSource answers for a name a Python data source holds.
_PYTHON_SOURCE_CLASS = "org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2"


def jvm_hudi_source(spark) -> Optional[str]:
    """The class of the JVM data source named ``hudi`` (Hudi's ``org.apache.hudi.Spark3DefaultSource`` when its
    bundle is on the classpath), or None: none, a Spark Connect session (no JVM here: the server refuses to
    register a name it has), or the name held by a Python data source (ours, registered before)."""
    try:
        jsession = spark._jsparkSession
        jvm = spark._jvm
    except Exception:  # Spark Connect: no JVM on this side
        return None
    if jsession is None or jvm is None:
        return None
    try:
        found = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            "hudi", jsession.sessionState().conf())
    except Exception:  # DATA_SOURCE_NOT_FOUND
        return None
    name = str(found.getName())
    return None if name == _PYTHON_SOURCE_CLASS else name


def register(spark) -> None:
    """Register the ``hoodie`` data source with a Spark session (classic or Spark Connect), and the same
    source as ``hudi`` unless the JVM has Hudi's own ``hudi`` source: registering over it would make
    ``format("hudi")`` fail in Spark (two sources of one name), so Hudi keeps its name there."""
    spark.dataSource.register(HoodieDataSource)
    if jvm_hudi_source(spark) is None:
        try:
            spark.dataSource.register(HudiDataSource)
        except Exception as e:  # the server (Spark Connect) has a JVM hudi source: leave it
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(e):
                raise
    try:
        spark._hoodie_source_registered = True
    except AttributeError:  # a session class with __slots__: register again next time, harmlessly
        pass


def ensure_registered(spark) -> None:
    """Register the data source unless this session object already has it: hoodie's entry points call
    this, so a session hoodie did not build (``SparkSession.builder.remote(...)``, a platform's own)
    reads ``format("hoodie")`` and runs ``USING hoodie`` without a separate registration step.

    A streaming micro-batch's DataFrame comes with a new Python session object around a clone of the
    query's session, which has the source already: asking the JVM session (one call) spares registering
    it again on every micro-batch."""
    if getattr(spark, "_hoodie_source_registered", False):
        return
    if _registered_in_jvm(spark):
        try:
            spark._hoodie_source_registered = True
        except AttributeError:
            pass
        return
    register(spark)


def _registered_in_jvm(spark) -> bool:
    """Whether the (classic) session's JVM side has the ``hoodie`` source registered; False when unknown."""
    try:
        return bool(spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists("hoodie"))
    except Exception:  # noqa: BLE001 - Spark Connect (no JVM session here), another Spark: register
        return False
