"""Running compaction plans: standalone, inline after writes, or as an async service.

:func:`run_compaction` executes a requested plan end to end:

1. an inflight plan (an earlier run died) is rolled back first, as Hudi does;
2. ``<C>.compaction.inflight`` is created (empty);
3. the plan's links (symlinks, or copies on object stores) are created, highest version first;
4. the operations run, in this process or through ``executor`` (the Spark engine's hook);
5. leftovers of failed task attempts are removed, and the slices the plan rewrote are checked for log
   files that appeared in them after scheduling (a concurrent writer): committing would hide those,
   so the run stops instead;
6. ``<C>.commit`` is written with ``compacted: true``, ``operationType: COMPACT``, the table schema,
   the links, the event-time threshold and watermark, and the metrics.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from hoodie.configs import warn_unknown_keys

from hoodie.faults import fault_point
from hoodie.format.lock import LockError, compaction_lock
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import links as LK
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.format.timeline.compaction_plan import CompactionOperation
from hoodie.format.table import HoodieTable, open_table

import hoodie.services.compaction.keys as K
import hoodie.services.compaction.partial as P
from hoodie.services.compaction.config import CompactionConfig, CompactionError, as_config
from hoodie.services.compaction.execute import CompactionTask, compacted_log_names, execute_operation
from hoodie.services.compaction.freshness import compute_watermark
from hoodie.services.compaction.metrics import push_prometheus, write_prometheus
from hoodie.services.compaction.rollback import is_split_file, rollback_compaction
from hoodie.services.compaction.schedule import schedule_compaction_result
from hoodie.services.compaction.strategies import resolve_strategy
from hoodie.services.transaction import Hook, Operation, Transaction
from hoodie import progress

log = logging.getLogger("hoodie.compaction")

Executor = Callable[[list[CompactionTask]], Sequence[WriteStat]]


@dataclass
class CompactionResult:
    """A completed compaction: its instant, write stats, links, split files and metrics."""

    instant: str
    stats: list[WriteStat]
    links: list[LK.Link]
    split_files: list[dict]
    metrics: dict[str, Any]
    threshold_ms: Optional[int] = None
    watermark_ms: Optional[int] = None
    watermark_status: str = "unknown"
    rolled_back_first: bool = False


class CompactionRuns(list):
    """The :class:`CompactionResult` of each plan a run completed (a list), and ``reason``: what the
    run did, or why it did nothing (no plan pending, the trigger, no log files...)."""

    def __init__(self, results: Sequence[CompactionResult] = (), reason: str = "") -> None:
        super().__init__(results)
        self.reason = reason


def _pending_instants(table: HoodieTable) -> list[str]:
    return sorted({i.timestamp for i in table.timeline.pending_compactions().instants})


def _in_process_executor(table: HoodieTable, cfg: CompactionConfig) -> Executor:
    def run(tasks: list[CompactionTask]) -> list[WriteStat]:
        stats = []
        with progress.task(f"compacting {len(tasks)} file group(s) of {table.name}", len(tasks)) as bar:
            for t in tasks:
                stats.append(execute_operation(table, t.instant, t.operation, cfg,
                                               token=N.write_token(t.task_id, 0, t.task_id),
                                               task_partition_id=t.task_id, plan_extra=t.plan_extra))
                fault_point("compaction.after_operation")
                bar.advance()
        return stats
    return run


def _listing(table: HoodieTable, partitions: set[str]) -> dict[str, list[tuple[str, int]]]:
    return {p: [(s.name, s.size) for s in table.storage.list_dir(p) if not s.is_dir] for p in partitions}


def _reconcile(table: HoodieTable, instant: str, ops: Sequence[CompactionOperation],
               stats: Sequence[WriteStat]) -> list[str]:
    """Delete base files and split files at ``instant`` that no returned stat claims (left by failed
    or speculative task attempts); returns what was deleted.

    The attempt that produced a stat is known by its write token (the base file name's): its split
    file carries the same token, so nothing here depends on the executor returning anything but the
    stats' paths.
    """
    storage = table.storage
    claimed: dict[tuple[str, str], str] = {}
    for s in stats:
        name = (s.path or "").rsplit("/", 1)[-1]
        if N.is_base_file(name):
            claimed[(s.partition_path or "", s.file_id)] = N.parse_base_file(name).write_token
    listing = _listing(table, {op.partition for op in ops})
    deleted = []
    for op in ops:
        part, fid = op.file_group
        token = claimed.get((part, fid))
        links = {l.link for l in P.operation_links(op)}
        top = op.reserved_log_version
        for name, _ in listing[part]:
            rel = f"{part}/{name}" if part else name
            stray = False
            if N.is_base_file(name):
                try:
                    b = N.parse_base_file(name)
                except ValueError:
                    continue
                stray = b.file_id == fid and b.instant == instant and b.write_token != token
            elif N.is_log_file(name) and name not in links:
                lp = N.parse_log_file(name)
                stray = (lp.file_id == fid and lp.base_instant == instant and lp.version <= top
                         and lp.write_token != token and is_split_file(storage, rel, instant))
            if stray and storage.delete(rel):
                deleted.append(rel)
    return deleted


def _check_no_pending_writes_before(table: HoodieTable, instant: str) -> None:
    """Refuse while a write older than the compaction is pending: it may still add a log file to a
    slice the compaction rewrites (scheduling refuses the same state; this catches a write that
    raced with scheduling). ``table`` is the transaction's snapshot, loaded under the lock held now."""
    pending = [i.timestamp for i in table.timeline.pending().by_actions(I.DELTA_COMMIT, I.COMMIT).instants
               if i.timestamp < instant]
    if pending:
        raise CompactionError(
            f"write {min(pending)} is still pending and older than compaction {instant}: it may add log files to "
            "the slices the compaction rewrites. Let it complete or roll it back, then run the compaction again")


def _check_no_late_logs(table: HoodieTable, instant: str, ops: Sequence[CompactionOperation]) -> None:
    """Refuse to commit when a slice this plan rewrites received a log file after scheduling.

    Such a file (a writer that planned its write before the compaction was requested) sits in the
    old slice, which the commit makes invisible: its data would be lost. Files holding no block of a
    committed or still pending instant (failed writes, rollback command blocks) do not count.
    ``table`` is the transaction's snapshot loaded when it took the lock again to commit.
    """
    tl = table.timeline
    live = {i.timestamp for i in tl.commits().instants}
    first = tl.first()
    listing = _listing(table, {op.partition for op in ops})
    for op in ops:
        part, fid = op.file_group
        base_instant = op.base_instant_time or ""
        known = set(compacted_log_names(op, instant)) | {l.target for l in P.operation_links(op)}
        for name, _ in listing[part]:
            if not N.is_log_file(name) or name in known:
                continue
            lp = N.parse_log_file(name)
            if lp.file_id != fid or lp.base_instant != base_instant or lp.suffix:
                continue
            rel = f"{part}/{name}" if part else name
            for block in read_log_file(table.storage, rel, warn=False):
                if block.block_type not in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE):
                    continue
                inst = block.instant_time
                if inst in live or (first is not None and inst is not None and inst < first.timestamp):
                    raise CompactionError(
                        f"log file {rel} (instant {inst}) was added to file slice {fid}@{base_instant} after "
                        f"compaction {instant} was scheduled; committing would hide it. The compaction is left "
                        "inflight: roll it back (hoodie compaction rollback); a writer that does not take the "
                        "table lock (docs/concurrency.md), such as a Java Hudi writer, was writing meanwhile")


def _metrics(cfg: CompactionConfig, instant: str, ops: Sequence[CompactionOperation], stats: Sequence[WriteStat],
             links: list[LK.Link], link_sizes: int, duration_ms: int, wm, threshold: Optional[int],
             mode: str) -> dict[str, Any]:
    partial_ops = [op for op in ops if op.is_partial]
    return {
        "instant": instant,
        "durationMs": duration_ms,
        "bytesRead": sum(getattr(s, "bytes_read", 0) for s in stats),
        "bytesWritten": sum(getattr(s, "bytes_written", s.total_write_bytes) for s in stats)
        + (link_sizes if mode == "copy" else 0),
        "operations": len(ops),
        "partialOperations": len(partial_ops),
        "logFilesCompacted": sum(s.total_log_files_compacted for s in stats),
        "logBytesCompacted": sum(s.total_log_size_compacted for s in stats),
        "recordsWritten": sum(s.num_writes for s in stats),
        "splitRecords": sum(getattr(s, "split_records", 0) for s in stats),
        "remainingSlices": len(partial_ops),
        "remainingLogFiles": len(links),
        "remainingLogBytes": link_sizes,
        "linkMode": mode if links else None,
        "tableSlicesWithLogs": wm.slices_with_logs,
        "tableLogFiles": wm.log_files,
        "tableLogBytes": wm.log_bytes,
        "minLogEventTimeMs": wm.min_ms,
        "watermarkStatus": wm.status,
        "thresholdMs": threshold,
    }


def _publish(cfg: CompactionConfig, table: HoodieTable, metrics: dict[str, Any]) -> None:
    labels = {"table": table.name}
    if cfg.prometheus_file:
        write_prometheus(cfg.prometheus_file, metrics, labels)
    if cfg.pushgateway_url:
        try:
            push_prometheus(cfg.pushgateway_url, metrics, labels)
        except OSError as e:
            # The compaction is committed; a monitoring outage must not turn it into a failure.
            log.warning("could not push compaction metrics to %s: %s", cfg.pushgateway_url, e)


def _run_one(table: HoodieTable, instant: str, cfg: CompactionConfig, executor: Optional[Executor],
             post_commit: Sequence[Hook] = ()) -> CompactionResult:
    try:
        own = compaction_lock(table.storage, instant, cfg.options)
        own.acquire()
    except LockError as e:
        raise CompactionError(f"compaction {instant} is being executed by another process ({e}); run it again "
                              "once that process ends, or remove its lock file if it is gone") from None
    try:
        return _run_one_locked(table, instant, cfg, executor, post_commit)
    finally:
        own.release()


def _run_one_locked(table: HoodieTable, instant: str, cfg: CompactionConfig,
                    executor: Optional[Executor], post_commit: Sequence[Hook] = ()) -> CompactionResult:
    # The start and the commit hold the table lock; the execution between them does not (writers
    # go on, adding log files to the slices the plan opens), so it holds this compaction's own lock.
    op = CompactionCommit(instant, cfg)
    Transaction(op, _TaskExecutor(executor), table=table, options=cfg.options,
                post_commit=[Hook("publishing the compaction's metrics", op.publish), *post_commit]).run()
    assert op.outcome is not None
    return op.outcome


class _TaskExecutor:
    """The transaction's executor of a compaction: hands the plan's tasks to ``run`` (the engine's Spark
    executor; None: in this process, on the transaction's snapshot of the table) and checks it returned a
    stat per operation."""

    def __init__(self, run: Optional[Executor]) -> None:
        self.run = run

    def execute(self, txn: Transaction) -> list[WriteStat]:
        """Run every operation of the plan; returns their write stats."""
        op = txn.operation
        assert isinstance(op, CompactionCommit) and txn.table is not None
        table, instant, ops = txn.table, op.instant, op.ops
        tasks = [CompactionTask(table.base_path, instant, o, dict(op.cfg.options), op.extra, i,
                                table.storage.storage_options or None) for i, o in enumerate(ops)]
        run = self.run or _in_process_executor(table, op.cfg)
        stats = list(run(tasks))
        got = {(s.partition_path or "", s.file_id) for s in stats}
        missing = [(o.partition, o.file_id) for o in ops if (o.partition, o.file_id) not in got]
        if missing or len(stats) != len(ops):
            raise CompactionError(f"compaction {instant}: the executor returned {len(stats)} stat(s) for {len(ops)} "
                                  f"operation(s) (missing {missing[:3]}); nothing was committed, the compaction is "
                                  "left inflight")
        return stats


class CompactionCommit(Operation):
    """Executing and committing one compaction plan as a transaction's operation. Its work runs
    without the table lock (``execute_unlocked``); a failure leaves the compaction inflight, and
    the next run rolls it back first."""

    execute_unlocked = True
    table_versions = (6, 8, 9)

    def __init__(self, instant: str, cfg: CompactionConfig) -> None:
        self.instant = instant
        self.cfg = cfg
        self.what = f"compaction {instant} (start)"
        self.commit_what = f"compaction {instant} (commit)"
        self.ops: list[CompactionOperation] = []
        self.extra: dict[str, str] = {}
        self.mode = ""
        self.links: list[LK.Link] = []
        self.link_sizes = 0
        self.rolled_back = False
        self.started = time.monotonic()
        self.committing: Optional[tuple[CompactionResult, int]] = None
        self.outcome: Optional[CompactionResult] = None

    def prepare(self, txn: Transaction) -> bool:
        """Check the plan; an inflight one (an earlier run died) is rolled back first."""
        instant = self.instant
        table = txn.open_table()
        tl = table.timeline
        done = tl.get(instant)
        if done is not None and done.is_completed:
            raise CompactionError(f"compaction {instant} is already completed")
        requested = I.Instant(instant, I.COMPACTION, I.State.REQUESTED)
        if not tl.has_file(requested.file_name):
            raise CompactionError(f"there is no compaction plan {instant}")
        if tl.has_file(I.instant_file_name(instant, I.COMPACTION, I.State.INFLIGHT)):
            log.info("compaction %s is inflight from an earlier run: rolling it back first", instant)
            rollback_compaction(table, instant)
            self.rolled_back = True
            # That rollback committed through a transaction of its own: this one loads the table again
            # (only after an interrupted run).
            table = txn.table = table.latest()
            tl = table.timeline
        plan = tl.compaction_plan(instant)
        self.ops = list(plan.operations)
        self.extra = dict(plan.extra_metadata)
        for op in self.ops:
            if op.is_partial and self.extra.get(K.PARTIAL_PLAN_KEY) != "true":
                raise CompactionError(f"compaction {instant}: partial operations without the {K.PARTIAL_PLAN_KEY} "
                                      "marker; refusing an inconsistent plan")
        self.mode = P.resolve_link_mode(table.storage, self.cfg.link_mode)
        _check_no_pending_writes_before(table, instant)
        return True

    def start(self, txn: Transaction) -> I.Instant:
        """``<C>.compaction.inflight`` (empty), then the plan's links, highest version first."""
        assert txn.table is not None
        storage = txn.table.storage
        self.started = time.monotonic()
        inflight = T.transition_to_inflight(storage, I.Instant(self.instant, I.COMPACTION, I.State.REQUESTED), b"")
        fault_point("compaction.after_inflight")
        txn.table.wrote(inflight)
        for op in self.ops:
            planned = P.operation_links(op)
            P.materialize_links(storage, planned, self.mode)
            for l in planned:
                self.links.append(LK.Link(l.partition, l.file_id, l.link, l.target, self.mode))
                self.link_sizes += storage.size(l.target_path)
        fault_point("compaction.after_links")
        return inflight

    def complete(self, txn: Transaction, result: list[WriteStat]) -> CommitMetadata:
        """Remove failed attempts' files, refuse late log files; the metadata of ``<C>.commit``."""
        assert txn.table is not None and txn.instant is not None
        table, instant, ops, stats, extra, links = txn.table, self.instant, self.ops, result, self.extra, self.links
        stray = _reconcile(table, instant, ops, stats)
        if stray:
            log.info("compaction %s: removed %d file(s) of failed task attempts", instant, len(stray))
        _check_no_late_logs(table, instant, ops)
        _check_no_pending_writes_before(table, instant)
        split_files = [{"partition": s.partition_path or "", "fileId": s.file_id, "path": s.split_file,
                        "records": getattr(s, "split_records", 0), "deletes": getattr(s, "split_deletes", 0),
                        "minEventTime": getattr(s, "split_min_event_time", None),
                        "maxEventTime": getattr(s, "split_max_event_time", None)}
                       for s in stats if getattr(s, "split_file", None)]
        wm = compute_watermark(
            table, assume_completed=[instant],
            extra_links={l.link_path: l.target_path for l in links},
            completing=(instant, {op.file_group for op in ops}))
        threshold = int(extra[K.THRESHOLD_KEY]) if extra.get(K.THRESHOLD_KEY) else None
        duration = int((time.monotonic() - self.started) * 1000)
        metrics = _metrics(self.cfg, instant, ops, stats, links, self.link_sizes, duration, wm, threshold, self.mode)
        commit_extra = {K.STRATEGY_KEY: extra.get(K.STRATEGY_KEY, ""), K.METRICS_KEY: json.dumps(metrics, separators=(",", ":")),
                        K.WATERMARK_STATUS_KEY: wm.status}
        if wm.min_ms is not None:
            commit_extra[K.WATERMARK_KEY] = str(wm.min_ms)
        if links:
            commit_extra[LK.LINKS_KEY] = LK.encode_links(links)
            commit_extra[LK.PARTIAL_PLAN_KEY] = "true"
        if threshold is not None:
            commit_extra[K.THRESHOLD_KEY] = str(threshold)
            commit_extra[K.THRESHOLD_COMPLETE_KEY] = extra.get(K.THRESHOLD_COMPLETE_KEY, "false")
        if split_files:
            commit_extra[K.SPLIT_FILES_KEY] = json.dumps(split_files, separators=(",", ":"))
        # hudi-rs takes the table schema from the newest completed commit: the compaction carries it.
        meta = W.commit_metadata_for(stats, avro_schema=table.avro_schema(instant), operation_type="COMPACT",
                                     compacted=True, extra=commit_extra)
        fault_point("compaction.before_commit")
        # The outcome once the commit point has passed (finalize).
        self.committing = (CompactionResult(instant, list(stats), links, split_files, metrics, threshold, wm.min_ms,
                                            wm.status, self.rolled_back), duration)
        return meta

    def finalize(self, txn: Transaction) -> None:
        """The committed compaction's outcome."""
        assert txn.table is not None and self.committing is not None
        self.outcome, duration = self.committing
        log.info("completed compaction %s on %s: %d operation(s), %d link(s), %d ms", self.instant,
                 txn.table.base_path, len(self.ops), len(self.outcome.links), duration)

    def publish(self, txn: Transaction) -> None:
        """Publish the committed compaction's metrics (a post-commit hook)."""
        assert txn.table is not None and self.outcome is not None
        _publish(self.cfg, txn.table, self.outcome.metrics)


def run_compaction(table_or_path: Union[str, HoodieTable], instant: Optional[str] = None, config: Any = None,
                   executor: Optional[Executor] = None, *, storage_options: Optional[dict[str, Any]] = None,
                   schedule_if_none: bool = False, post_commit: Sequence[Hook] = ()) -> CompactionRuns:
    """Execute pending compaction plans and commit them.

    Args:
        table_or_path: a MERGE_ON_READ table or its base path.
        instant: the plan to run; default: every pending plan, oldest first (event-time plans must
            complete in order).
        config: a :class:`CompactionConfig` or options (link mode, codec, metrics outputs; with
            ``schedule_if_none`` also the scheduling options).
        executor: runs the operations: a callable taking the list of :class:`CompactionTask` (one per
            operation, picklable, each runnable with ``execute_task(task, token)``) and returning their
            write stats (any order). Default: in this process, one after another.
        schedule_if_none: when no plan is pending, schedule one first (the CLI's ``run``).
        post_commit: hooks run after each compaction commits (e.g. the catalog's freshness
            properties); a failing hook raises ``PostCommitError`` naming the committed instant.

    Returns:
        One :class:`CompactionResult` per completed plan, as a :class:`CompactionRuns` list whose
        ``reason`` says what was done, or why nothing was.
    """
    if isinstance(config, Mapping):
        warn_unknown_keys(config)
    table = open_table(table_or_path, storage_options)
    cfg = as_config(config, table.props)
    if not table.is_mor:
        raise CompactionError(f"{table.base_path} is {table.table_type}; compaction applies to MERGE_ON_READ tables")
    if instant is not None:
        return CompactionRuns([_run_one(table, instant, cfg, executor, post_commit)], f"ran compaction {instant}")
    pending = _pending_instants(table)
    reason = f"ran the {len(pending)} pending compaction plan(s)"
    if not pending and schedule_if_none:
        res = schedule_compaction_result(table, cfg)
        if res.instant is None:
            log.info("nothing to compact on %s: %s", table.base_path, res.reason)
            return CompactionRuns([], f"nothing to compact: {res.reason}")
        pending, reason = [res.instant], f"scheduled and ran compaction {res.instant}: {res.reason}"
    elif not pending:
        return CompactionRuns([], "no compaction plan is pending: schedule one first (Table.compaction.schedule(), "
                                  "`hoodie compaction schedule`), or pass schedule_if_none=True to schedule and run")
    return CompactionRuns([_run_one(table, c, cfg, executor, post_commit) for c in pending], reason)


def maybe_compact_inline(table_or_path: Union[str, HoodieTable], options: Any,
                         executor: Optional[Executor] = None) -> Optional[str]:
    """What a writer calls after each commit (Hudi's inline table services).

    * ``hoodie.compact.inline=true``: run plans left pending by an earlier inline run, then schedule
      (trigger permitting) and run a new one; returns the newest compacted instant;
    * ``hoodie.compact.schedule.inline=true``: only schedule (an async service or a later ``run``
      executes it); returns the scheduled instant;
    * otherwise, or on copy-on-write tables: nothing; returns None.
    """
    table = open_table(table_or_path)
    if not table.is_mor:
        return None
    cfg = as_config(options, table.props)
    if cfg.inline:
        done = run_compaction(table, None, cfg, executor)
        c = schedule_compaction_result(table, cfg).instant
        if c is not None:
            done += run_compaction(table, c, cfg, executor)
        return done[-1].instant if done else None
    if cfg.schedule_inline:
        return schedule_compaction_result(table, cfg).instant
    return None


def _service_loop(base_path: str, options: dict[str, str], interval: float, schedule: bool,
                  storage_options: Optional[dict[str, Any]], stop: Any,
                  on_result: Optional[Callable[[list[CompactionResult]], None]] = None,
                  on_error: Optional[Callable[[BaseException], None]] = None,
                  executor: Optional[Executor] = None, wake: Optional[threading.Event] = None) -> None:
    while not stop.is_set():
        try:
            results = run_compaction(base_path, None, options, executor, storage_options=storage_options,
                                     schedule_if_none=schedule)
            if on_result is not None and results:
                on_result(results)
        except Exception as e:  # keep serving: one failed round must not stop the service
            log.exception("async compaction round on %s failed", base_path)
            if on_error is not None:
                on_error(e)
        if wake is None:
            stop.wait(interval)
        else:  # a thread's loop also wakes early when asked (a writer just scheduled a plan)
            wake.wait(interval)
            wake.clear()


def _process_main(base_path: str, options: dict[str, str], interval: float, schedule: bool,
                  storage_options: Optional[dict[str, Any]], stop: Any) -> None:
    logging.basicConfig(level=logging.INFO)
    _service_loop(base_path, options, interval, schedule, storage_options, stop)


class CompactionAsyncService:
    """Runs pending compaction plans in the background (a thread, or a separate process).

    Each round runs every pending plan, oldest first; with ``schedule=True`` it also schedules a new
    plan (subject to the trigger) when none is pending. Scheduling while another process writes to
    the table is unsafe (a write that planned before the compaction was requested adds its log file
    to the old slice; the run then stops rather than hide it), so by default the writer schedules
    (``hoodie.compact.schedule.inline=true``) and the service only executes.
    """

    def __init__(self, base_path: str, config: Optional[dict[str, Any]] = None, *,
                 interval_seconds: Optional[float] = None, schedule: bool = False,
                 executor: Optional[Executor] = None, storage_options: Optional[dict[str, Any]] = None,
                 mode: str = "thread") -> None:
        if mode not in ("thread", "process"):
            raise ValueError(f"mode={mode!r}: use 'thread' or 'process'")
        if mode == "process" and executor is not None:
            raise ValueError("a custom executor cannot be sent to another process; use mode='thread'")
        if isinstance(config, CompactionConfig):
            self.options = dict(config.options)
        else:
            self.options = {str(k): str(v) for k, v in (config or {}).items()}
        cfg = CompactionConfig.from_options(self.options)
        if schedule:
            resolve_strategy(cfg)  # a misconfigured strategy fails here, not in every round
        self.base_path = base_path
        self.interval = cfg.async_interval_seconds if interval_seconds is None else float(interval_seconds)
        self.schedule = schedule
        self.executor = executor
        self.storage_options = storage_options
        self.mode = mode
        self.results: list[CompactionResult] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._process: Optional[Any] = None
        self._stop: Any = None
        self._wake: Optional[threading.Event] = None

    def _record(self, results: list[CompactionResult]) -> None:
        with self._lock:
            self.results.extend(results)

    def _error(self, e: BaseException) -> None:
        with self._lock:
            self.errors.append(e)

    def errors_after(self, seen: int) -> list[BaseException]:
        """The errors of failed rounds after the first ``seen`` (a caller reporting each failure once)."""
        with self._lock:
            return list(self.errors[seen:])

    def run_once(self) -> list[CompactionResult]:
        """One round in the calling thread."""
        results = run_compaction(self.base_path, None, self.options, self.executor,
                                 storage_options=self.storage_options, schedule_if_none=self.schedule)
        self._record(results)
        return results

    def start(self) -> "CompactionAsyncService":
        """Start the background loop (idempotent while running)."""
        if self.is_alive():
            return self
        if self.mode == "thread":
            self._stop = threading.Event()
            self._wake = threading.Event()
            self._thread = threading.Thread(
                target=_service_loop, name=f"hoodie-compaction-{self.base_path}", daemon=True,
                args=(self.base_path, self.options, self.interval, self.schedule, self.storage_options, self._stop,
                      self._record, self._error, self.executor, self._wake))
            self._thread.start()
        else:
            ctx = multiprocessing.get_context("spawn")
            self._stop = ctx.Event()
            self._process = ctx.Process(target=_process_main, name="hoodie-compaction", daemon=True,
                                        args=(self.base_path, self.options, self.interval, self.schedule,
                                              self.storage_options, self._stop))
            self._process.start()
        return self

    def is_alive(self) -> bool:
        """Whether the background loop runs."""
        if self._thread is not None:
            return self._thread.is_alive()
        if self._process is not None:
            return self._process.is_alive()
        return False

    def wake(self) -> None:
        """Start the next round now rather than after the interval (thread mode; a no-op otherwise)."""
        if self._wake is not None:
            self._wake.set()

    def stop(self, timeout: float = 60.0) -> None:
        """Ask the loop to stop after its current round and wait for it (up to ``timeout`` s)."""
        if self._stop is not None:
            self._stop.set()
        if self._wake is not None:
            self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._process is not None:
            self._process.join(timeout)
            if self._process.is_alive():
                # Only our own child, by handle: it holds no lock a terminate could leave behind,
                # and an unfinished compaction stays inflight and is rolled back by the next run.
                self._process.terminate()
                self._process.join(5)
            self._process = None

    def __enter__(self) -> "CompactionAsyncService":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


__all__ = ["run_compaction", "maybe_compact_inline", "CompactionAsyncService", "CompactionResult", "CompactionRuns", "Executor"]
