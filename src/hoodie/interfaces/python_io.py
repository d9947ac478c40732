"""The Python API's writes and lazy reads of Arrow-compatible data, without Spark or a JVM.

    hoodie.write_table("/data/events", df, {"hoodie.table.name": "events",
                                           "hoodie.datasource.write.recordkey.field": "event_id"})
    t = hoodie.open("/data/events")
    t.upsert(changes); t.insert(more); t.delete(filters=[("day", "<", "2024-01-01")]); t.overwrite(df)
    reader = t.to_arrow_reader(columns=["day", "amount"], filters=[("day", ">=", "2024-05-01")])
    duckdb.sql("SELECT day, sum(amount) FROM reader GROUP BY day")   # streams slice by slice
    t.to_polars().filter(pl.col("amount") > 10).collect()             # a polars LazyFrame

Every write is one commit through the services' write operation (the same transaction as
``hoodie.spark.write``): options and data are checked before anything is written, and inline
services run after the commit as the options say. Input is anything Arrow can take: a pyarrow
``Table``/``RecordBatch``/``RecordBatchReader``, a pandas or polars ``DataFrame``, any object with the
Arrow PyCapsule interface (``__arrow_c_stream__`` / ``__arrow_c_array__``), a dict of columns or a
list of row dicts. Arrow's large and view types (polars exports ``string_view``, ``large_list``) are
written as the plain types Hudi's Avro schemas have (same values).
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, Literal, Mapping, Optional, Sequence

import pyarrow as pa

from hoodie.configs import warn_unknown_keys
from hoodie.errors import HoodieError, WriteError
from hoodie.format.slice.reader import iter_plan, plan_read
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.services import inline
from hoodie.services.write import ArrowWriteExecutor, run_write

WriteMode = Literal["append", "overwrite"]
OPERATION = "hoodie.datasource.write.operation"


def write_arrow(base_path: str, data: pa.Table, options: Mapping[str, Any],
                storage_options: Optional[dict[str, Any]] = None, instant: Optional[str] = None,
                mode: str = "append") -> str:
    """Write Arrow data as one commit, in this process (no Spark). Returns the instant time.

    ``options`` are Hudi datasource keys (``hoodie.table.name``, ``hoodie.datasource.write.*``...);
    without ``hoodie.datasource.write.recordkey.field`` keys are generated as Hudi 0.14+ does
    (``<instant>_0_<row>``, insert-only: see docs/spark.md). ``mode="overwrite"`` replaces an existing
    table's data with the batch (an insert_overwrite_table replacecommit,
    :func:`~hoodie.services.write.configs.overwrite_config`);
    ``"append"`` writes into it. Both create the table when absent. Options and data are checked
    before anything is written. The write holds the table lock (``hoodie.format.lock``) from its
    rollback of failed writes to its commit; the inline services it enables run after it, each
    under the lock again. A failure after the commit raises :class:`~hoodie.errors.PostCommitError`.
    """
    if mode not in ("append", "overwrite"):
        raise WriteError(f"mode={mode!r}: use 'append' or 'overwrite'")
    warn_unknown_keys(options)
    st = Storage(base_path, storage_options)
    op = str(options.get("hoodie.datasource.write.operation") or "upsert")
    # The inline services the options enable run after the commit, with the settings their check parsed
    # before anything was written.
    services = inline.InlineServices(options)
    return run_write(st, options, ArrowWriteExecutor(data, options), mode=mode, instant=instant,
                     storage_options=storage_options, what=f"write ({op})",
                     checks=[services.check], post_commit=services.hooks())


def _plain_type(t: pa.DataType) -> pa.DataType:
    """The type Hudi stores for ``t``: large and view variants become the plain ones, recursively."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        item = t.value_field
        return pa.list_(item.with_type(_plain_type(item.type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_plain_type(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_plain_type(t.key_type), t.item_field.with_type(_plain_type(t.item_type)))
    if pa.types.is_dictionary(t):
        return _plain_type(t.value_type)
    return t


def as_arrow_table(data: Any) -> pa.Table:
    """Any Arrow-compatible input as one ``pyarrow.Table`` with the plain types Hudi stores.

    Raises :class:`WriteError` for input Arrow cannot read, naming what to pass instead.
    """
    if isinstance(data, pa.Table):
        table = data
    elif isinstance(data, pa.RecordBatch):
        table = pa.Table.from_batches([data])
    elif isinstance(data, pa.RecordBatchReader):
        table = data.read_all()
    elif "pandas" in sys.modules and isinstance(data, sys.modules["pandas"].DataFrame):
        # The index is not data: a Hudi table has no row index (write it as a column yourself).
        table = pa.Table.from_pandas(data, preserve_index=False)
    elif hasattr(data, "__arrow_c_stream__"):
        table = pa.table(data)
    elif hasattr(data, "__arrow_c_array__"):
        table = pa.Table.from_batches([pa.record_batch(data)])
    elif isinstance(data, Mapping):
        table = pa.table(dict(data))
    elif isinstance(data, list) and all(isinstance(r, Mapping) for r in data):
        table = pa.Table.from_pylist(data)
    else:
        raise WriteError(f"cannot write a {type(data).__module__}.{type(data).__qualname__}: pass a pyarrow Table, "
                         "RecordBatch or RecordBatchReader, a pandas or polars DataFrame, an object with the "
                         "Arrow PyCapsule interface (__arrow_c_stream__), a dict of columns or a list of row dicts")
    plain = pa.schema([f.with_type(_plain_type(f.type)) for f in table.schema], metadata=table.schema.metadata)
    return table if plain == table.schema else table.cast(plain)


def write_table(base_path: str, data: Any, options: Optional[Mapping[str, Any]] = None, *,
                mode: WriteMode = "append", storage_options: Optional[dict[str, Any]] = None) -> str:
    """Write ``data`` to the Hudi table at ``base_path`` as one commit; returns the instant time.

    ``options`` are Hudi's datasource keys (``hoodie.table.name``, ``hoodie.datasource.write.*``,
    ``hoodie.datasource.write.operation``: default ``upsert``); a new table needs at least
    ``hoodie.table.name``, an existing one takes its key, partition and ordering fields from
    ``hoodie.properties``. ``mode="append"`` writes into the table (creating it when absent);
    ``"overwrite"`` replaces the whole table's data with ``data`` (insert_overwrite_table).
    """
    if mode not in ("append", "overwrite"):
        raise WriteError(f"mode={mode!r}: use 'append' (write into the table) or 'overwrite' (replace its data)")
    return write_arrow(base_path, as_arrow_table(data), dict(options or {}), storage_options=storage_options,
                       mode=mode)


def write_operation(base_path: str, data: Any, operation: str, options: Optional[Mapping[str, Any]],
                    storage_options: Optional[dict[str, Any]]) -> str:
    """One write with ``operation``; refused when ``options`` names another operation."""
    opts = dict(options or {})
    given = opts.get(OPERATION)
    if given is not None and str(given).strip().lower() != operation:
        raise WriteError(f"{OPERATION}={given!r} contradicts the method called ({operation}): drop the key, "
                         f"or call the method for {given!r}")
    opts[OPERATION] = operation
    return write_arrow(base_path, as_arrow_table(data), opts, storage_options=storage_options)


def delete_where(base_path: str, filters: Sequence[Any], options: Optional[Mapping[str, Any]],
                 storage_options: Optional[dict[str, Any]]) -> Optional[str]:
    """Delete every row the snapshot read with ``filters`` returns (one delete commit carrying their
    record keys and partition paths); ``None`` when no row matches, and nothing is written."""
    if not filters:
        raise WriteError("delete(filters=[]) would delete every row: pass filters, or use overwrite() with an "
                         "empty table to empty it")
    table = HoodieTable(base_path, storage_options, read_only=True)
    plan = plan_read(table, filters=filters)
    parts = [t for t in iter_plan(plan) if t.num_rows]
    if not parts:
        return None
    # The rows carry their meta columns: the record key and partition path the delete needs, also
    # on tables whose keys hoodie generated (no key field to recompute them from).
    return write_operation(base_path, pa.concat_tables(parts), "delete", options, storage_options)


def arrow_reader(base_path: str, *, query_type: str = "snapshot", as_of: Optional[str] = None,
                 begin: Optional[str] = None, end: Optional[str] = None,
                 columns: Optional[Sequence[str]] = None, filters: Optional[Sequence[Any]] = None,
                 storage_options: Optional[dict[str, Any]] = None,
                 options: Optional[dict[str, Any]] = None) -> pa.RecordBatchReader:
    """A ``RecordBatchReader`` over the query :func:`hoodie.read_table` answers (same arguments and
    rows), planned now and read one file slice at a time as it is consumed: memory holds one slice,
    not the table. The plan pins the timeline it was made on."""
    table = HoodieTable(base_path, storage_options, read_only=True)
    plan = plan_read(table, query_type=query_type, as_of=as_of, begin=begin, end=end, columns=columns,
                     filters=filters, options=options)
    schema = pa.schema([plan.schema.field(c) if c in plan.schema.names else pa.field(c, pa.string())
                        for c in plan.out_columns])

    def batches() -> Iterator[pa.RecordBatch]:
        for part in iter_plan(plan):
            if part.num_rows:
                yield from (part if part.schema == schema else part.cast(schema)).to_batches()

    return pa.RecordBatchReader.from_batches(schema, batches())


def polars_scan(base_path: str, *, query_type: str = "snapshot", as_of: Optional[str] = None,
                filters: Optional[Sequence[Any]] = None, storage_options: Optional[dict[str, Any]] = None,
                options: Optional[dict[str, Any]] = None) -> Any:
    """A polars ``LazyFrame`` over the table: polars pushes its projection (and the columns its
    predicate needs) into each scan, which reads slice by slice; ``filters`` (hoodie's form) also
    prune partitions. Needs polars (``pip install polars``)."""
    try:
        import polars as pl
        from polars.io.plugins import register_io_source
    except ImportError as e:
        raise HoodieError("to_polars() needs polars: pip install polars") from e
    probe = arrow_reader(base_path, query_type=query_type, as_of=as_of, filters=filters,
                         storage_options=storage_options, options=options)
    schema = pl.from_arrow(probe.schema.empty_table()).schema
    probe.close()

    def source(with_columns: Optional[list[str]], predicate: Any, n_rows: Optional[int],
               batch_size: Optional[int]) -> Iterator[Any]:
        needed = None
        if with_columns is not None:
            needed = list(dict.fromkeys([*with_columns, *(predicate.meta.root_names() if predicate is not None else [])]))
        reader = arrow_reader(base_path, query_type=query_type, as_of=as_of, columns=needed, filters=filters,
                              storage_options=storage_options, options=options)
        left = n_rows
        for batch in reader:
            df = pl.from_arrow(batch)
            assert isinstance(df, pl.DataFrame)
            if predicate is not None:
                df = df.filter(predicate)
            if with_columns is not None:
                df = df.select(with_columns)
            if left is not None:
                df = df.head(left)
                left -= df.height
            yield df
            if left is not None and left <= 0:
                return

    return register_io_source(source, schema=schema, explain_name="hoodie", explain_detail=base_path)


__all__ = ["as_arrow_table", "write_arrow", "write_table", "write_operation", "delete_where", "arrow_reader", "polars_scan",
           "WriteMode"]
