"""Record-level TTL: delete the records whose event time is older than a retention (docs/ttl.md,
"Record-level TTL"; issue 19).

A run

1. lists the latest file slice of every file group (the snapshot a query reads) and finds the
   **candidates** without reading data: the minimum of the TTL field in a base file comes from its
   Parquet footer (column statistics of every row group), the minimum of a log file from the write
   stats of the deltacommit that wrote it or its block headers
   (:class:`~hoodie.format.slice.event_ranges.EventTimeIndex`; usable only when the TTL field
   is the field those record, ``hoodie.payload.event.time.field``). A slice whose minimum is before
   the cutoff (``now - retention``), or cannot be known, is a candidate; every other file group is
   left alone;
2. reads the candidate slices merged (base file + log files, as a snapshot query) and keeps the rows
   whose event time is before the cutoff (a null event time never expires);
3. deletes those keys with one ``delete`` write through the one commit path (a
   :class:`~hoodie.services.transaction.Transaction`, with the format core's write steps): on COPY_ON_WRITE the file groups holding them
   are rewritten, on MERGE_ON_READ delete blocks are appended to their log files (compaction removes
   the rows physically later). Steps 1-3 run under the table lock, so a concurrent writer cannot
   update a row between the decision and the delete.

Nothing expired means no instant; a dry run reports the candidates and their expired record counts
and writes nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Optional

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie import configs as C
from hoodie.configs import format_duration, warn_unknown_keys
from hoodie.faults import fault_point
from hoodie.services import write as B
from hoodie.format.slice.event_ranges import EventTimeIndex
from hoodie.format.file_group.fsview import FileSlice
from hoodie.format.slice.reader import iter_plan, plan_read
from hoodie.format.slice.eventtime import EventTimeError, event_time_millis, millis_to_iso
from hoodie.format.storage import Storage
from hoodie.format.slice import writer as W
from hoodie.format.table import META_COLUMNS, HoodieTable, table_exists
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.instant import Instant
from hoodie.metrics import publish
from hoodie.services.transaction import Operation, Transaction
from hoodie.services.ttl.keys import TTLConfigError

# extraMetadata of a record TTL commit (audits; the inline trigger finds the last run by them).
FIELD_KEY = "hoodie.record.ttl.field"
CUTOFF_KEY = "hoodie.record.ttl.cutoff"
RETENTION_KEY = "hoodie.record.ttl.retention"
EXPIRED_KEY = "hoodie.record.ttl.expired.records"

# The services a write can run inline; record TTL's own delete write runs none of them (no recursion,
# and the writer that triggered record TTL runs its own clean right after).
_INLINE_OFF = ("hoodie.compact.inline", "hoodie.compact.schedule.inline", "hoodie.partition.ttl.inline",
               "hoodie.ttl.async.enabled", str(C.RECORD_TTL_INLINE), str(C.CLEAN_AUTOMATIC))


class RecordTTLConfigError(TTLConfigError):
    """Record-level TTL is misconfigured; the message names the key and the fix."""


@dataclass(frozen=True)
class RecordTTLConfig:
    """The parsed ``hoodie.record.ttl.*`` settings."""

    field: str
    retention_ms: int
    unit: str
    # The field the write stats and log block headers record (hoodie.payload.event.time.field).
    stats_field: Optional[str]

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]],
                     table_props: Optional[Mapping[str, str]] = None) -> "RecordTTLConfig":
        """Read the keys from ``options`` (table properties fill ``hoodie.payload.event.time.field``);
        raises :class:`RecordTTLConfigError` naming the key when one is missing or malformed."""
        opts = dict(options or {})
        props = dict(table_props or {})
        r = C.read(opts, RecordTTLConfigError)
        retention = r.get(C.RECORD_TTL_RETENTION)
        stats_field = r.get(C.EVENT_TIME_FIELD) or C.EVENT_TIME_FIELD.get(
            {C.EVENT_TIME_FIELD: props.get(str(C.EVENT_TIME_FIELD))})
        fld = r.get(C.RECORD_TTL_FIELD) or stats_field
        unit = r.get(C.EVENT_TIME_UNIT)
        if retention is None:
            raise RecordTTLConfigError(f"record TTL needs {C.RECORD_TTL_RETENTION} (e.g. "
                                       f"{C.RECORD_TTL_RETENTION}=P30D): how long a record is kept after its event time")
        if not fld:
            raise RecordTTLConfigError(f"record TTL needs {C.RECORD_TTL_FIELD} (or {C.EVENT_TIME_FIELD}): the "
                                       "event-time column whose age expires a record")
        r.get(C.RECORD_TTL_INLINE_MAX_COMMITS)  # a malformed trigger is refused with the rest
        return cls(fld, int(retention), unit, stats_field)

    def check_table(self, table: HoodieTable) -> None:
        """The field must be a column of the table with a type event times can have."""
        schema = table.arrow_schema()
        if self.field not in schema.names:
            cols = ", ".join(n for n in schema.names if n not in META_COLUMNS)
            raise RecordTTLConfigError(f"{C.RECORD_TTL_FIELD}={self.field!r} is not a column of {table.base_path} "
                                       f"(columns: {cols})")
        t = schema.field(self.field).type
        ok = (pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_integer(t) or pa.types.is_floating(t)
              or pa.types.is_decimal(t) or pa.types.is_string(t) or pa.types.is_large_string(t))
        if not ok:
            raise RecordTTLConfigError(f"{C.RECORD_TTL_FIELD}={self.field!r} has type {t}; an event time is a "
                                       "timestamp, date, number (epoch time in hoodie.payload.event.time.unit) or "
                                       "ISO-8601 string column")


@dataclass
class FileGroupTTL:
    """One file group a run looked into: why it is a candidate and how many of its records expired."""

    partition: str
    file_id: str
    base_instant: str
    min_event_time: Optional[int]  # epoch ms; None when unknown
    source: str  # where the minimum came from, or why it is unknown
    expired_records: int = 0
    records: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON form (dry runs and the CLI)."""
        return {"partition": self.partition, "file_id": self.file_id, "base_instant": self.base_instant,
                "min_event_time": _iso(self.min_event_time), "source": self.source,
                "records": self.records, "expired_records": self.expired_records}


@dataclass
class RecordTTLResult:
    """What a record TTL run found and did."""

    instant: Optional[str]
    dry_run: bool
    field: str
    retention_ms: int
    now_ms: int
    cutoff_ms: int
    file_groups_examined: int = 0
    candidates: list[FileGroupTTL] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    duration_ms: int = 0

    @property
    def expired_records(self) -> int:
        """Records expired (a dry run: that would be)."""
        return sum(c.expired_records for c in self.candidates)

    @property
    def file_groups(self) -> list[FileGroupTTL]:
        """The candidates that hold expired records (the file groups the delete touches)."""
        return [c for c in self.candidates if c.expired_records]

    def to_json(self) -> dict[str, Any]:
        """JSON form (the CLI's ``--json``)."""
        return {"instant": self.instant, "dry_run": self.dry_run, "field": self.field,
                "retention": format_duration(self.retention_ms), "now": _iso(self.now_ms),
                "cutoff": _iso(self.cutoff_ms), "file_groups_examined": self.file_groups_examined,
                "candidate_file_groups": len(self.candidates), "file_groups_with_expired_records":
                len(self.file_groups), "expired_records": self.expired_records,
                "file_groups": [c.to_json() for c in self.candidates], "warnings": list(self.warnings)}


def _iso(ms: Optional[int]) -> Optional[str]:
    try:
        return millis_to_iso(ms)
    except EventTimeError:
        return str(ms)


# -- candidates, from metadata only ------------------------------------------------------------------

def base_file_min(storage: Storage, path: str, fld: str, unit: str) -> tuple[Optional[int], str, bool]:
    """(min epoch ms, source, has values) of ``fld`` in a base file, from its Parquet footer alone.

    ``min`` is None with ``has values`` True when the statistics cannot bound the column: a row
    group without statistics, INT96 timestamps (no usable order), or string columns (ISO text with
    offsets and digit strings do not sort by time). A file without the column, or with nulls only,
    has no values: nothing in it can expire.
    """
    pf = pq.ParquetFile(storage.full(path), filesystem=storage.fs)
    md = pf.metadata
    if fld not in pf.schema_arrow.names:
        return None, "column absent from the base file (null event times never expire)", False
    arrow_type = pf.schema_arrow.field(fld).type
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return None, "string event times: Parquet statistics do not order them by time", True
    idx = next((i for i in range(md.num_columns) if md.schema.column(i).path == fld), None)
    if idx is None:
        return None, "column not found in the Parquet footer", True
    lo: Optional[int] = None
    any_values = False
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        if rg.num_rows == 0:
            continue
        col = rg.column(idx)
        if col.physical_type == "INT96":
            return None, "INT96 timestamps have no usable statistics", True
        st = col.statistics
        if st is None:
            return None, f"row group {g} has no statistics", True
        if st.has_null_count and st.null_count == rg.num_rows:
            continue
        if not st.has_min_max:
            return None, f"row group {g} has no min/max statistics", True
        try:
            # Both bounds are converted: a value the conversion refuses (digits that read as a
            # compact date, issue 31 item 11) must stop the run, not make the file look young.
            ms = event_time_millis(pa.array([st.min, st.max], arrow_type), fld, unit)[0].as_py()
        except (pa.ArrowException, TypeError, ValueError) as e:
            if isinstance(e, EventTimeError):
                raise
            return None, f"statistics not convertible ({e})", True
        any_values = True
        lo = ms if lo is None else min(lo, ms)
    if not any_values:
        return None, "null event times only (they never expire)", False
    return lo, "parquet statistics", True


def _slice_min(table: HoodieTable, sl: FileSlice, cfg: RecordTTLConfig, index: Any,
               skip: frozenset[str]) -> tuple[Optional[int], str, bool]:
    """(min epoch ms, source, may hold records) over a slice's base file and log files."""
    lo: Optional[int] = None
    sources: list[str] = []
    has = False
    if sl.base_file is not None:
        m, src, vals = base_file_min(table.storage, sl.base_file.path, cfg.field, cfg.unit)
        if vals:
            has = True
            if m is None:
                return None, f"base file: {src}", True
            lo = m
            sources.append(src)
    logs = [lf for lf in sl.log_files if lf.path not in skip]
    if logs:
        if index is None:
            return None, (f"log files: write stats record {C.EVENT_TIME_FIELD}={cfg.stats_field!r}, not the TTL "
                          f"field {cfg.field!r}" if cfg.stats_field else
                          f"log files: {C.EVENT_TIME_FIELD} is not set, so the field their write stats describe is unknown"), True
        for lf in logs:
            r = index.for_log(lf)
            if not r.has_data:
                continue
            has = True
            if r.unknown:
                return None, f"log file {lf.name}: event time range unknown", True
            lo = r.min_ms if lo is None else min(lo, r.min_ms)
            sources.append(f"log {r.source}")
    return lo, " + ".join(dict.fromkeys(sources)) or "empty", has


def find_candidates(table: HoodieTable, cfg: RecordTTLConfig, cutoff_ms: int) -> tuple[list[FileSlice], int,
                                                                                         list[FileGroupTTL], Any]:
    """(all snapshot slices, number examined, candidates, read plan): the file groups whose latest
    slice can hold a record older than ``cutoff_ms``, decided from metadata only."""
    plan = plan_read(table)
    slices = plan.slices
    index = None
    if table.is_mor and cfg.stats_field == cfg.field and any(sl.log_files for sl in slices):
        index = EventTimeIndex(table)
    out: list[FileGroupTTL] = []
    by_id: dict[tuple[str, str], FileSlice] = {}
    for sl in slices:
        lo, src, has = _slice_min(table, sl, cfg, index, plan.skip_log_files)
        if not has or (lo is not None and lo >= cutoff_ms):
            continue
        out.append(FileGroupTTL(sl.partition, sl.file_id, sl.base_instant, lo, src))
        by_id[(sl.partition, sl.file_id)] = sl
    return [by_id[(c.partition, c.file_id)] for c in out], len(slices), out, plan


def expired_rows(table: HoodieTable, cfg: RecordTTLConfig, cutoff_ms: int,
                 result: RecordTTLResult) -> pa.Table:
    """Fill ``result`` with the candidates and their counts; returns the expired rows (merged, all
    columns) of every candidate."""
    slices, result.file_groups_examined, cands, plan = find_candidates(table, cfg, cutoff_ms)
    result.candidates = cands
    parts: list[pa.Table] = []
    for sl, c in zip(slices, cands):
        for t in iter_plan(plan, [sl]):
            c.records += t.num_rows
            if t.num_rows == 0 or cfg.field not in t.column_names:
                continue
            ms = event_time_millis(t.column(cfg.field), cfg.field, cfg.unit)
            hit = t.filter(pc.fill_null(pc.less(ms, pa.scalar(cutoff_ms, pa.int64())), False))
            c.expired_records += hit.num_rows
            if hit.num_rows:
                parts.append(hit)
    return pa.concat_tables(parts) if parts else plan.schema.empty_table()


# -- the run --------------------------------------------------------------------------------------------

def delete_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of record TTL's delete write: the caller's (lock, metrics, storage...), as a
    delete, at its own instant, running no inline service."""
    out = {k: v for k, v in options.items() if k not in (str(C.WRITE_INSTANT), str(C.OPERATION))}
    out[str(C.OPERATION)] = "delete"
    for k in _INLINE_OFF:
        out[k] = "false"
    return out


class RecordTTLOperation(Operation):
    """A record TTL run as a transaction's operation and executor: :meth:`prepare` decides (under the
    lock), then a ``delete`` write goes through the format core's write steps (the ones
    :class:`~hoodie.services.write.WriteOperation` runs; that module runs inline services, record TTL
    among them, so it is not imported here)."""

    what = "record TTL"
    table_versions = (6, 8, 9)
    rollback_failed_writes = True  # it writes data, as any writer

    def __init__(self, options: Mapping[str, Any], cfg: RecordTTLConfig, result: RecordTTLResult,
                 instant: Optional[str] = None) -> None:
        self.options = delete_options(options)
        self.cfg = cfg
        self.result = result
        self.instant_time = instant
        self.records: Optional[pa.Table] = None
        self.wcfg: Any = None
        self.avro_schema: dict = {}

    def prepare(self, txn: Transaction) -> bool:
        """Find the expired rows; False (no instant) when there are none or for a dry run."""
        table = txn.open_table()
        self.cfg.check_table(table)
        try:
            rows = expired_rows(table, self.cfg, self.result.cutoff_ms, self.result)
        except EventTimeError as e:
            # The field's values cannot be trusted as times (another unit, compact-date digits...):
            # refused before the instant, as a configuration error the CLI prints in one line.
            raise RecordTTLConfigError(f"record TTL: {e} (nothing was written)") from None
        if self.result.dry_run or rows.num_rows == 0:
            return False
        self.wcfg = B.WriteConfig.from_options(self.options, table)
        self.avro_schema = table.avro_schema()
        body = rows.drop_columns([c for c in rows.column_names if c in META_COLUMNS or c == "_hoodie_operation"])
        # The keys and partition paths the rows are stored under (any key generator, generated keys).
        self.records = body.append_column(
            "_hoodie_record_key", pc.cast(rows.column("_hoodie_record_key"), pa.string()).combine_chunks()
        ).append_column(
            "_hoodie_partition_path", pc.cast(rows.column("_hoodie_partition_path"), pa.string()).combine_chunks())
        return True

    def check(self, txn: Transaction) -> None:
        """Pending compaction plans must be readable (deletes are routed by them)."""
        assert txn.table is not None
        B.check_compaction_plans(txn.table)

    def start(self, txn: Transaction) -> Instant:
        """The requested and inflight instant of a delete (commit or deltacommit)."""
        assert txn.table is not None
        return W.start_commit(txn.table, B.action_for(txn.table, "delete"), self.instant_time,
                              operation_type=B.OPERATION_TYPES["delete"], requested_content=B.requested_content("delete"))

    def execute(self, txn: Transaction) -> list[Any]:
        """Write the deletes of every file group holding expired keys."""
        assert txn.table is not None and txn.instant is not None and self.records is not None
        instant = txn.instant.timestamp
        return B.write_file_groups(txn.table, self.records, self.wcfg, instant, self.avro_schema,
                                   "record_ttl.after_file_group")

    def complete(self, txn: Transaction, result: Any) -> CommitMetadata:
        """The commit's metadata, with the run's settings and count in extraMetadata."""
        assert txn.table is not None and txn.instant is not None
        fault_point("record_ttl.before_complete")
        extra = {FIELD_KEY: self.cfg.field, RETENTION_KEY: format_duration(self.cfg.retention_ms) or "",
                 CUTOFF_KEY: str(self.result.cutoff_ms), EXPIRED_KEY: str(self.result.expired_records)}
        return W.commit_metadata_for(result, avro_schema=self.avro_schema, operation_type=B.OPERATION_TYPES["delete"],
                                     extra=extra)


def run_record_ttl(base_path: str | HoodieTable, options: Optional[Mapping[str, Any]] = None, *,
                   dry_run: bool = False, now_ms: Optional[int] = None, instant: Optional[str] = None,
                   storage_options: Optional[dict[str, Any]] = None) -> RecordTTLResult:
    """Delete the records whose ``hoodie.record.ttl.field`` is older than ``now - hoodie.record.ttl.retention``
    (see the module docstring). ``now_ms`` (epoch ms, default the clock) is for tests and backfills.

    Raises :class:`RecordTTLConfigError` for missing or malformed settings before anything is
    written. Publishes the ``record_ttl`` metrics when metrics are configured (not for dry runs).
    """
    started = time.monotonic()
    opts = dict(options or {})
    warn_unknown_keys(opts)
    if isinstance(base_path, HoodieTable):
        storage = base_path.storage
    else:
        storage = Storage(base_path, storage_options)
    if not table_exists(storage):
        raise RecordTTLConfigError(f"record TTL: no Hudi table at {storage.base_uri}")
    table = HoodieTable(storage.base_uri, storage=storage)
    cfg = RecordTTLConfig.from_options(opts, table.props)
    cfg.check_table(table)
    now = int(time.time() * 1000) if now_ms is None else int(now_ms)
    result = RecordTTLResult(None, dry_run, cfg.field, cfg.retention_ms, now, now - cfg.retention_ms)
    op = RecordTTLOperation(opts, cfg, result, instant)
    # A dry run writes nothing and takes no lock (as partition TTL's).
    txn = Transaction(op, op, storage=storage, options=op.options, lock=not dry_run).run()
    result.instant = txn.committed_instant
    result.duration_ms = int((time.monotonic() - started) * 1000)
    if not dry_run:
        publish("record_ttl", {
            "expired_records": (result.expired_records, "Records the last record TTL run deleted"),
            "file_groups_rewritten": (len(result.file_groups), "File groups the last record TTL run deleted from"),
            "candidate_file_groups": (len(result.candidates), "File groups whose metadata allowed expired records"),
            "file_groups_examined": (result.file_groups_examined, "File groups the last record TTL run examined"),
            "duration_ms": (result.duration_ms, "Duration of the last record TTL run, ms"),
        }, {"table": table.name, "base_path": table.base_path}, opts)
    return result


# -- inline ---------------------------------------------------------------------------------------------

def writes_since_last_run(table: HoodieTable, limit: Optional[int] = None, *, after: Optional[str] = None,
                          exclude: Collection[str] = ()) -> int:
    """Completed writes after the newest record TTL commit (all of them when there is none), counting
    at most ``limit`` (the trigger needs no more, and each counted write is a metadata read).

    The async service also passes ``after`` (the newest write its last run accounted for, a run that
    deleted nothing has no commit) and ``exclude`` (its own partition TTL commits)."""
    writes = table.timeline.completed_writes().instants
    n = 0
    for inst in reversed(writes):
        if limit is not None and n >= limit:
            break
        if after is not None and inst.timestamp <= after:
            break
        if inst.timestamp in exclude:
            continue
        meta = table.timeline.commit_metadata(inst)
        if CUTOFF_KEY in (meta.extra_metadata or {}):
            break
        n += 1
    return n


def maybe_run_inline_record_ttl(table: HoodieTable, options: Mapping[str, Any]) -> Optional[RecordTTLResult]:
    """Run record TTL after a commit when ``hoodie.record.ttl.inline`` is set and at least
    ``hoodie.record.ttl.inline.max.commits`` writes completed since the last run."""
    if not C.RECORD_TTL_INLINE.get(options):
        return None
    need = C.read(options, RecordTTLConfigError).get(C.RECORD_TTL_INLINE_MAX_COMMITS)
    table = table.latest()  # the trigger counts what is committed now (the writer released the lock)
    if need > 1 and writes_since_last_run(table, need) < need:
        return None
    return run_record_ttl(table, options)


def call_run_record_ttl(base_path: str, retention: Optional[str] = None, field_name: Optional[str] = None,
                        options: str = "", dry_run: bool = False) -> RecordTTLResult:
    """``CALL run_record_ttl``: ``options`` is ``k1=v1,k2=v2`` (as ``run_ttl``'s); ``retention`` and
    ``field_name`` override their keys."""
    opts: dict[str, Any] = {}
    for item in (options or "").split(","):
        if item.strip():
            k, sep, v = item.partition("=")
            if not sep:
                raise RecordTTLConfigError(f"options item {item!r} is not key=value")
            opts[k.strip()] = v.strip()
    if retention is not None:
        opts[str(C.RECORD_TTL_RETENTION)] = retention
    if field_name is not None:
        opts[str(C.RECORD_TTL_FIELD)] = field_name
    return run_record_ttl(base_path, opts, dry_run=dry_run)


def result_rows(res: RecordTTLResult) -> list[tuple]:
    """CALL output: one row per file group with expired records, or one row saying why none."""
    if not res.file_groups:
        return [(None, None, 0, res.instant, "dry run" if res.dry_run else "nothing expired",
                 f"no record of {res.field} before {_iso(res.cutoff_ms)} in {res.file_groups_examined} file group(s)")]
    status = "would delete" if res.dry_run else "deleted"
    return [(c.partition, c.file_id, c.expired_records, res.instant, status,
             f"{c.expired_records} of {c.records} record(s) before {_iso(res.cutoff_ms)} (candidate by {c.source})")
            for c in res.file_groups]


__all__ = ["RecordTTLConfig", "RecordTTLConfigError", "RecordTTLResult", "FileGroupTTL", "run_record_ttl",
           "maybe_run_inline_record_ttl", "call_run_record_ttl", "find_candidates", "base_file_min",
           "result_rows", "writes_since_last_run"]
