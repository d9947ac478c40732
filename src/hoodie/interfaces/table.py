"""``hoodie.open(path)``: one table, with its reads and table services as methods.

    t = hoodie.open("/data/events")
    t.read(filters=[("day", "=", "2024-05-01")])        # hoodie.read_table
    t.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
    t.compaction.run()                                  # or .run(spark=spark): one Spark task per operation
    t.compaction.show()                                 # pending and completed compactions
    t.ttl.dry_run({"hoodie.partition.ttl.strategy.days.retain": "30"})
    t.ttl.run({"hoodie.partition.ttl.strategy.days.retain": "30"})
    t.clean({"hoodie.cleaner.commits.retained": "5"})
    t.rollback("20240501000000000")
    t.upsert(df); t.insert(df); t.delete(filters=[("day", "<", "2024-01-01")]); t.overwrite(df)
    t.to_arrow_reader(columns=["day"]); t.to_polars()  # lazy: one file slice at a time
    t.report("events.html")                             # health report: figures, and the HTML page

Writes take any Arrow-compatible data (:mod:`hoodie.interfaces.python_io`). Every method is a
thin call of the module function named in its docstring (the same arguments,
the same result, the same errors), on this table's base path and storage options, so the two
ways never differ. Each call reads the table's current state: a :class:`Table` caches nothing but
the path. Nothing here imports pyspark; only ``compaction.run(spark=...)`` uses Spark, through
the session it is given.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import pyarrow as pa

from hoodie.format.slice.reader import read_table
from hoodie.format.table import HoodieTable
from hoodie.format.timeline.active import Timeline
from hoodie.interfaces.python_io import arrow_reader, delete_where, polars_scan, write_operation
from hoodie.services.clean import CleanConfig, CleanResult, run_clean
from hoodie.services.compaction import (
    CompactionConfig, CompactionRuns, CompactionSummary, freshness, rollback_compaction, run_compaction,
    schedule_compaction, show_compactions,
)
from hoodie.services.compaction.rollback import CompactionRollbackResult
from hoodie.services.rollback.operation import rollback
from hoodie.services.rollback.instant import RollbackResult
from hoodie.services.ttl import RestoreResult, TTLConfig, TTLResult, list_stashes, restore, run_ttl
from hoodie.services.ttl.stash import StashInfo

Options = Optional[Mapping[str, Any]]


class Table:
    """A Hudi table opened by :func:`open`: reads, timeline and table services as methods.

    ``compaction`` and ``ttl`` group their operations (``t.compaction.run()``, ``t.ttl.dry_run()``);
    ``clean`` and ``rollback`` are single calls.
    """

    def __init__(self, base_path: str, storage_options: Optional[dict[str, Any]] = None) -> None:
        # Opening reads hoodie.properties, so a path without a table fails here, naming the fix.
        # Tables of versions 8/9 open for reads; their services refuse (they write table version 6).
        HoodieTable(base_path, storage_options, read_only=True)
        self.base_path = base_path
        self.storage_options = storage_options

    def __repr__(self) -> str:
        return f"hoodie.open({self.base_path!r})"

    # -- metadata ------------------------------------------------------------------------------

    @property
    def hoodie_table(self) -> HoodieTable:
        """The format layer's view of the table, read now (properties, timeline, storage)."""
        return HoodieTable(self.base_path, self.storage_options, read_only=True)

    @property
    def name(self) -> str:
        """``hoodie.table.name``."""
        return self.hoodie_table.name

    @property
    def table_type(self) -> str:
        """``COPY_ON_WRITE`` or ``MERGE_ON_READ``."""
        return self.hoodie_table.table_type

    @property
    def partition_fields(self) -> list[str]:
        """The partition path fields (``hoodie.table.partition.fields``)."""
        return list(self.hoodie_table.partition_fields)

    @property
    def timeline(self) -> Timeline:
        """The active timeline as it is now (every instant, in every state)."""
        return self.hoodie_table.timeline

    def show_compactions(self, limit: Optional[int] = None) -> list[CompactionSummary]:
        """Same as :meth:`Compaction.show`."""
        return self.compaction.show(limit)

    def freshness(self) -> dict:
        """The read-optimized view's freshness: :func:`hoodie.services.compaction.freshness`."""
        return freshness(self.base_path, self.storage_options)

    def report(self, out: Optional[str] = None, options: Options = None) -> dict:
        """The health report's figures (:func:`hoodie.services.report.gather_report`, metadata only);
        with ``out``, also the self-contained HTML page written there (as ``hoodie report --out``)."""
        from hoodie.interfaces.cli_report import check_out_path, write_report_file
        from hoodie.interfaces.report_html import render_html
        from hoodie.services.report import gather_report

        target = check_out_path(out, self.base_path) if out is not None else None
        figures = gather_report(self.base_path, options, storage_options=self.storage_options)
        if target is not None:
            write_report_file(render_html(figures), target)
        return figures

    # -- reads ---------------------------------------------------------------------------------

    def read(self, *, query_type: str = "snapshot", as_of: Optional[str] = None, begin: Optional[str] = None,
             end: Optional[str] = None, columns: Optional[Sequence[str]] = None,
             filters: Optional[Sequence[Any]] = None) -> pa.Table:
        """Read the table into Arrow without Spark: :func:`hoodie.read_table` (same arguments)."""
        return read_table(self.base_path, query_type=query_type, as_of=as_of, begin=begin, end=end,
                          columns=columns, filters=filters, storage_options=self.storage_options)

    def to_arrow_reader(self, *, query_type: str = "snapshot", as_of: Optional[str] = None,
                        begin: Optional[str] = None, end: Optional[str] = None,
                        columns: Optional[Sequence[str]] = None,
                        filters: Optional[Sequence[Any]] = None) -> pa.RecordBatchReader:
        """The rows :meth:`read` returns, as a ``RecordBatchReader`` read one file slice at a time
        (DuckDB scans it as a table): :func:`hoodie.interfaces.python_io.arrow_reader`."""
        return arrow_reader(self.base_path, query_type=query_type, as_of=as_of, begin=begin, end=end,
                            columns=columns, filters=filters, storage_options=self.storage_options)

    def to_polars(self, *, query_type: str = "snapshot", as_of: Optional[str] = None,
                  filters: Optional[Sequence[Any]] = None) -> Any:
        """A polars ``LazyFrame`` with projection pushdown: :func:`hoodie.interfaces.python_io.polars_scan`."""
        return polars_scan(self.base_path, query_type=query_type, as_of=as_of, filters=filters,
                           storage_options=self.storage_options)

    # -- writes ----------------------------------------------------------------------------------

    def upsert(self, data: Any, options: Options = None) -> str:
        """Insert new keys and update existing ones (Hudi's ``upsert``; the ordering field, when the
        table has one, decides between versions of a key). Returns the commit's instant."""
        return write_operation(self.base_path, data, "upsert", options, self.storage_options)

    def insert(self, data: Any, options: Options = None) -> str:
        """Hudi's ``insert``: write rows without looking up existing keys (a key already stored is
        stored again unless ``hoodie.combine.before.insert``/the table's rules say otherwise)."""
        return write_operation(self.base_path, data, "insert", options, self.storage_options)

    def delete(self, data: Any = None, options: Options = None, *,
               filters: Optional[Sequence[Any]] = None) -> Optional[str]:
        """Delete records: those of ``data`` (rows carrying the record key and partition fields, or
        the meta columns), or every row the snapshot read with ``filters`` returns. Returns the
        instant, or ``None`` when ``filters`` matched nothing (then nothing is written)."""
        if (data is None) == (filters is None):
            raise TypeError("delete() takes the rows to delete or filters=[...], not both and not neither")
        if filters is not None:
            return delete_where(self.base_path, filters, options, self.storage_options)
        return write_operation(self.base_path, data, "delete", options, self.storage_options)

    def overwrite(self, data: Any, options: Options = None, *, partitions: str = "table") -> str:
        """Replace data with ``data``: the whole table (``partitions="table"``, Hudi's
        insert_overwrite_table), or only the partitions ``data`` has rows in (``"written"``,
        insert_overwrite)."""
        if partitions == "table":
            return write_operation(self.base_path, data, "insert_overwrite_table", options, self.storage_options)
        if partitions == "written":
            return write_operation(self.base_path, data, "insert_overwrite", options, self.storage_options)
        raise ValueError(f"partitions={partitions!r}: use 'table' (replace everything) or 'written' "
                         "(replace the partitions the data has rows in)")

    # -- services ------------------------------------------------------------------------------

    @property
    def compaction(self) -> "Compaction":
        """Schedule, run, show and roll back compactions (MERGE_ON_READ tables)."""
        return Compaction(self)

    @property
    def ttl(self) -> "TTL":
        """Partition TTL: run, dry run, stashes and restore."""
        return TTL(self)

    def clean(self, options: Options | CleanConfig = None, *, dry_run: bool = False) -> CleanResult:
        """Clean old file versions and replaced file groups: :func:`hoodie.services.clean.run_clean`."""
        return run_clean(self.base_path, options, dry_run, storage_options=self.storage_options)

    def rollback(self, instant: str) -> RollbackResult:
        """Roll back a pending or the latest completed write, or remove a pending compaction plan:
        :func:`hoodie.services.rollback.operation.rollback`."""
        return rollback(self.base_path, instant, storage_options=self.storage_options)


class Compaction:
    """``table.compaction``: :mod:`hoodie.services.compaction` on one table."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def schedule(self, options: Options | CompactionConfig = None, *, instant: Optional[str] = None,
                 check_trigger: bool = True) -> Optional[str]:
        """Plan a compaction; the instant, or None when nothing was scheduled:
        :func:`hoodie.services.compaction.schedule_compaction`."""
        t = self._table
        return schedule_compaction(t.base_path, options, instant=instant, check_trigger=check_trigger,
                                   storage_options=t.storage_options)

    def run(self, instant: Optional[str] = None, options: Options | CompactionConfig = None, *,
            spark: Any = None, schedule_if_none: bool = False) -> CompactionRuns:
        """Execute pending plans (or ``instant``) and commit them:
        :func:`hoodie.services.compaction.run_compaction`. With ``spark`` (a SparkSession) each
        operation runs in its own Spark task; without it, in this process. The result lists the
        completed compactions; its ``reason`` says why the list is empty when it is."""
        t = self._table
        executor = None
        if spark is not None:
            # Only here: the engine's executor, for a session the caller already has.
            from hoodie.engine.compaction import spark_executor

            executor = spark_executor(spark)
        return run_compaction(t.base_path, instant, options, executor, storage_options=t.storage_options,
                              schedule_if_none=schedule_if_none)

    def show(self, limit: Optional[int] = None) -> list[CompactionSummary]:
        """Pending and completed compactions, oldest first:
        :func:`hoodie.services.compaction.show_compactions`."""
        return show_compactions(self._table.base_path, limit=limit, storage_options=self._table.storage_options)

    def rollback(self, instant: str) -> CompactionRollbackResult:
        """Undo a pending compaction's files and return it to requested:
        :func:`hoodie.services.compaction.rollback_compaction` (``table.rollback`` removes the plan)."""
        return rollback_compaction(self._table.base_path, instant, storage_options=self._table.storage_options)


class TTL:
    """``table.ttl``: :mod:`hoodie.services.ttl` on one table."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def run(self, options: Options | TTLConfig = None, *, instant_time: Optional[str] = None) -> TTLResult:
        """Delete expired partitions with a delete_partition replacecommit:
        :func:`hoodie.services.ttl.run_ttl`."""
        t = self._table
        return run_ttl(t.base_path, options, instant_time=instant_time, storage_options=t.storage_options)

    def dry_run(self, options: Options | TTLConfig = None, *, instant_time: Optional[str] = None) -> TTLResult:
        """What :meth:`run` would delete, and why, writing nothing: ``run_ttl(..., dry_run=True)``."""
        t = self._table
        return run_ttl(t.base_path, options, dry_run=True, instant_time=instant_time,
                       storage_options=t.storage_options)

    def stashes(self) -> list[StashInfo]:
        """The table's TTL stashes, oldest first: :func:`hoodie.services.ttl.list_stashes`."""
        return list_stashes(self._table.base_path, storage_options=self._table.storage_options)

    def restore(self, ttl_instant: str, *, force: bool = False) -> RestoreResult:
        """Bring back the partitions the TTL run ``ttl_instant`` stashed: :func:`hoodie.services.ttl.restore`."""
        return restore(self._table.base_path, ttl_instant, force=force, storage_options=self._table.storage_options)


def open(base_path: str, storage_options: Optional[dict[str, Any]] = None) -> Table:  # noqa: A001
    """Open the Hudi table at ``base_path`` (a local path, ``file://`` or ``s3://bucket/prefix``).

    Raises ``TableError`` when no table is there. The result's methods read and service the table;
    see :class:`Table`.
    """
    return Table(base_path, storage_options)


__all__ = ["open", "Table", "Compaction", "TTL"]
