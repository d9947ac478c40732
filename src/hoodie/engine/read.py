"""``hoodie.spark.read``: Spark-native reads of the file slices that need no merging.

A query is planned once on the driver by the pure-Python format core (:func:`plan_read`: one listing,
the file-system view, no data read). Then:

* every slice that needs no merging (read-optimized queries, copy-on-write snapshots, merge-on-read
  slices without log files, base-file-only slices of time-travel and incremental reads) is read by
  Spark's own Parquet scan of exactly the files the view selected: column pruning, filter pushdown
  and the vectorized reader apply, and ``count(*)`` reads footers only;
* the slices with log files go through hoodie's Python merging (the ``hoodie`` data source, given the
  driver's plan for those slices, so the two halves read the same snapshot);
* the two are unioned by column name, in the table's column order.

A base file goes through the Python path instead when Spark's scan could read it differently from
hoodie: its writer schema differs from the table schema (older files lacking newer columns, widened
types: hoodie's reader fills and widens them as Hudi does), the table does not store meta or partition
columns in its files, or the table is not on a file system Spark's JVM reads (object stores here:
the JVM has no S3 connector, pyarrow does the I/O in Python workers).

The DataFrame holds the plan made when it was created, like any DataFrame over files: a later commit
is seen by calling :func:`read` again. Catalog views therefore stay on ``format("hoodie")``, which
plans at each query (docs/spark.md).
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import functools
import json
import pickle
from typing import Any, Mapping, Optional, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.engine.datasource import (
    PLAN_KEY, ReadTask, _read_args, _storage_options, ensure_registered, spark_schema_for,
)
from hoodie.format.avro.schema import avro_to_arrow_schema
from hoodie.format.table import META_COLUMNS, OPERATION_COLUMN
from hoodie.format.slice.filters import normalize_filters
from hoodie.format.slice.reader import plan_read
from hoodie.format.table import HoodieTable

# Schemes Spark's JVM reads here (local files); others keep the Python path (no Hadoop S3A/GCS/ABFS).
NATIVE_SCHEMES = ("", "file")
NATIVE_KEY = "hoodie.spark.read.native"


@dataclasses.dataclass
class ReadSplit:
    """How one read divides: base files Spark scans, slices hoodie merges, and why files went where."""

    native_files: list[str]
    python_slices: list[Any]
    reasons: dict[str, int]


def _scheme(uri: str) -> str:
    head, sep, _ = uri.partition("://")
    return head.lower() if sep else ""


@functools.lru_cache(maxsize=256)
def _data_types_of_avro(schema_json: str) -> tuple[tuple[str, pa.DataType], ...]:
    """The data columns (name, Arrow type) of a writer schema, meta and operation columns left out. Cached:
    the commits of a table share a handful of writer schemas, and a read compares each of them."""
    return tuple((f.name, f.type) for f in avro_to_arrow_schema(json.loads(schema_json))
                 if f.name not in META_COLUMNS and f.name != OPERATION_COLUMN)


def _same_data_schema(got: Sequence[tuple[str, pa.DataType]], want: Mapping[str, pa.DataType]) -> bool:
    """Whether a file written with the data columns ``got`` reads as the table schema ``want``: every table
    column present with the table's type (columns the table no longer has do not matter)."""
    have = dict(got)
    return set(want) <= set(have) and all(have[k] == t for k, t in want.items())


def _writer_schemas_match(table: Any, schema: pa.Schema, instants: Optional[set[str]] = None) -> dict[str, bool]:
    """instant -> whether the base files that instant wrote have the table's data schema ``schema``
    (the ``extraMetadata.schema`` of the write, compared as Arrow types), for the completed writes of the
    active timeline (``instants``: only those). Instants not in the answer (archived writes) are decided
    by their files' footers (:func:`_footer_schema_matches`)."""
    want = {f.name: f.type for f in schema if f.name not in META_COLUMNS}
    out: dict[str, bool] = {}
    for inst in table.timeline.completed().instants:
        if inst.action not in ("commit", "deltacommit", "replacecommit"):
            continue
        if instants is not None and inst.timestamp not in instants:
            continue
        try:
            written = table.timeline.commit_metadata(inst).schema
        except ValueError:
            out[inst.timestamp] = False
            continue
        out[inst.timestamp] = bool(written) and _same_data_schema(_data_types_of_avro(written), want)
    return out


# (file uri, size) -> the file's data columns: base files are never rewritten in place (a new write makes a new
# file name), so a footer read once answers for the life of the process. Bounded: a table of many files reads
# the footers of its archived writes' files again once they fall out.
_FOOTER_SCHEMAS: "collections.OrderedDict[tuple[str, int], Optional[tuple[tuple[str, pa.DataType], ...]]]" = \
    collections.OrderedDict()
_FOOTER_CACHE_SIZE = 4096


def _footer_data_types(table: Any, path: str, size: int) -> Optional[tuple[tuple[str, pa.DataType], ...]]:
    """The data columns of one base file from its footer: the writer's Avro schema where Java's writer left it
    (``parquet.avro.schema``), else the file's Arrow schema; None when the footer does not read."""
    key = (table.storage.uri(path), int(size))
    if key in _FOOTER_SCHEMAS:
        _FOOTER_SCHEMAS.move_to_end(key)
        return _FOOTER_SCHEMAS[key]
    try:
        pf = pq.ParquetFile(table.storage.full(path), filesystem=table.storage.fs)
        avro = (pf.metadata.metadata or {}).get(b"parquet.avro.schema")
        got: Optional[tuple[tuple[str, pa.DataType], ...]]
        if avro:
            got = _data_types_of_avro(avro.decode("utf-8"))
        else:
            got = tuple((f.name, f.type) for f in pf.schema_arrow
                        if f.name not in META_COLUMNS and f.name != OPERATION_COLUMN)
    except (OSError, ValueError, pa.ArrowException):
        got = None  # the Python path reads it and reports what is wrong with it
    _FOOTER_SCHEMAS[key] = got
    while len(_FOOTER_SCHEMAS) > _FOOTER_CACHE_SIZE:
        _FOOTER_SCHEMAS.popitem(last=False)
    return got


def _footer_schema_matches(table: Any, schema: pa.Schema, base_file: Any) -> bool:
    """Whether a base file whose write is not in the active timeline (archived) has the table's data schema,
    judged by its footer: what the file holds, whatever the age of the commit that wrote it."""
    got = _footer_data_types(table, base_file.path, base_file.size)
    return got is not None and _same_data_schema(got, {f.name: f.type for f in schema if f.name not in META_COLUMNS})


def _file_schema(plan: Any) -> pa.Schema:
    """The table schema (meta columns first) of the snapshot the plan reads."""
    return plan.table.arrow_schema(plan.as_of)


def split_plan(plan: Any) -> ReadSplit:
    """Divide a read plan between Spark's Parquet scan and hoodie's merging (see the module doc)."""
    table = plan.table
    reasons: dict[str, int] = {}

    def python(sl: Any, why: str) -> None:
        python_slices.append(sl)
        reasons[why] = reasons.get(why, 0) + 1

    native: list[str] = []
    python_slices: list[Any] = []
    whole_table = None
    if _scheme(table.storage.uri()) not in NATIVE_SCHEMES:
        whole_table = "object store (Spark's JVM has no connector here)"
    elif not table.populate_meta_fields:
        whole_table = "meta columns not stored in files"
    elif getattr(plan, "schema_on_read", None) is not None:
        # Spark's scan matches columns by name; a renamed, or dropped and re-added, column must be matched
        # by field id (hoodie.format.schema_on_read), or old files would read null or another column's values.
        whole_table = "schema evolved on read (columns matched by field id)"
    file_schema = _file_schema(plan) if whole_table is None else None
    schemas: dict[str, bool] = {}
    if file_schema is not None:
        wanted = {sl.base_file.instant for sl in plan.slices if sl.base_file is not None}
        schemas = _writer_schemas_match(table, file_schema, wanted)
    for sl in plan.slices:
        if plan.query_type == "read_optimized":
            if sl.base_file is None:
                continue
        elif any(lf.path not in plan.skip_log_files for lf in sl.log_files) or sl.base_file is None:
            python(sl, "log files to merge")
            continue
        if whole_table is not None:
            python(sl, whole_table)
        elif not (schemas[sl.base_file.instant] if sl.base_file.instant in schemas
                  else _footer_schema_matches(table, file_schema, sl.base_file)):
            python(sl, "file schema differs from the table's (evolved, or an unreadable footer)")
        else:
            native.append(table.storage.uri(sl.base_file.path))
    return ReadSplit(native, python_slices, reasons)


def _python_frame(spark: Any, plan: Any, slices: list[Any], options: Mapping[str, str]):
    """The ``hoodie`` data source reading exactly ``slices`` of the driver's plan."""
    task = ReadTask(dataclasses.replace(plan, slices=[]), list(slices))
    blob = base64.b64encode(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")
    reader = spark.read.format("hoodie").option(PLAN_KEY, blob)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(plan.table.base_path)


def _parquet_frame(spark: Any, schema: Any, files: Sequence[str]):  # type: ignore[no-untyped-def]
    """``spark.read.schema(schema).parquet(*files)``, handing the paths to the JVM in a few calls: PySpark
    converts a list element by element (one Py4J round trip per path), which was most of the planning time.
    The JVM gets the same ``DataFrameReader.parquet(Seq[String])`` call. Spark Connect sessions have no JVM
    here and take PySpark's own path."""
    jvm = getattr(getattr(spark, "_sc", None), "_jvm", None) if hasattr(spark, "_jsparkSession") else None
    if jvm is None or len(files) < 4 or any("\n" in f for f in files):
        return spark.read.schema(schema).parquet(*files)
    from pyspark.sql import DataFrame

    reader = spark._jsparkSession.read().schema(spark._jsparkSession.parseDataType(schema.json()))
    # One string across, split into a java.util.List in the JVM (Spark 4 runs on Java 17: Stream.toList).
    parts = jvm.java.util.regex.Pattern.compile("\n").splitAsStream("\n".join(files)).toList()
    paths = jvm.PythonUtils.toSeq(parts)
    return DataFrame(reader.parquet(paths), spark)


def _spark_condition(filters: Sequence[Any]) -> Any:
    """The read's ``(column, op, value)`` filters as one Spark condition, with the rows Arrow's
    :func:`~hoodie.format.slice.filters.filter_expression` keeps (a null passes ``not in`` only)."""
    from pyspark.sql import functions as F

    cond = None
    for col, op, val in normalize_filters(filters):
        c = F.col(f"`{col}`")
        if op in ("in", "not in"):
            e = c.isin(list(val))
            if op == "not in":
                e = ~e | c.isNull()
        else:
            v = F.lit(val)
            e = {"=": c == v, "==": c == v, "!=": c != v, "<>": c != v,
                 "<": c < v, "<=": c <= v, ">": c > v, ">=": c >= v}[op]
        cond = e if cond is None else cond & e
    return cond


def read(spark: Any, path: str, options: Optional[Mapping[str, Any]] = None,
         columns: Optional[Sequence[str]] = None, filters: Optional[Sequence[Any]] = None):
    """Read a Hudi table into a Spark DataFrame: base files through Spark's Parquet scan, merged
    slices through hoodie (see the module doc).

    ``columns`` projects the read up front: Spark prunes its Parquet scan by itself, but hoodie's
    merging of slices with log files only learns the projection here, and then decodes just those
    columns plus the key, ordering and partition columns a merge needs.

    ``filters`` (``[(column, op, value), ...]``, AND-ed, as :func:`hoodie.read_table` takes them) keep
    only the rows passing them, and let the plan prune partitions and, with
    ``hoodie.enable.data.skipping=true``, skip the file slices the metadata table's column statistics
    prove hold no such row, before Spark opens a file. (A ``where`` on the DataFrame filters rows but
    skips nothing: the plan is made here, before Spark sees the condition.)

    ``options`` are Hudi's read keys (``hoodie.datasource.query.type`` = snapshot, read_optimized or
    incremental; ``hoodie.datasource.read.begin.instanttime`` / ``end.instanttime``;
    ``as.of.instant``; ``hoodie.metadata.enable``), plus ``hoodie.storage.*`` for object stores and
    ``hoodie.spark.read.native=false`` to read every slice through hoodie's Python reader.
    """
    from pyspark.sql import functions as F

    ensure_registered(spark)
    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    table = HoodieTable(path, _storage_options(opts), read_only=True)
    plan = plan_read(table, **_read_args(opts), columns=columns, filters=filters)
    out_schema = pa.schema([plan.schema.field(c) if c in plan.schema.names else pa.field(c, pa.string())
                            for c in plan.out_columns])
    spark_schema = spark_schema_for(out_schema)
    if opts.get(NATIVE_KEY, "true").lower() == "false":
        split = ReadSplit([], list(plan.slices), {"hoodie.spark.read.native=false": len(plan.slices)})
    else:
        split = split_plan(plan)
    frames = []
    if split.native_files:
        file_spark_schema = spark_schema_for(_file_schema(plan))
        df = _parquet_frame(spark, file_spark_schema, split.native_files)
        if plan.query_type == "incremental":
            ct = F.col("_hoodie_commit_time")
            if plan.commit_times is not None:
                df = df.where(ct.isin(sorted(plan.commit_times)))
            else:
                cond = ct > F.lit(plan.begin)
                if plan.end is not None:
                    cond = cond & (ct <= F.lit(plan.end))
                df = df.where(cond)
        if filters:
            df = df.where(_spark_condition(filters))  # the Python frames' reader filters its own rows
        if file_spark_schema != spark_schema:
            # A projection (or another column order): select it. Without one the relation is returned as it is,
            # so the plan is spark.read.parquet's own (each column and cast is a round trip to the JVM).
            df = df.select(*[F.col(f.name).cast(f.dataType) for f in spark_schema.fields])
        frames.append(df)
    if split.python_slices:
        frames.append(_python_frame(spark, plan, split.python_slices,
                                    {k: v for k, v in opts.items() if k.startswith("hoodie.storage.")}))
    if not frames:
        return spark.createDataFrame([], spark_schema)
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    return df


__all__ = ["read", "split_plan", "ReadSplit"]
