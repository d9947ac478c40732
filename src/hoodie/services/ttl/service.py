"""Running partition TTL: standalone, inline after a write, or as SQL procedures (the asynchronous
service that runs it in the background is :mod:`hoodie.services.ttl.async_service`).

A TTL run picks the expired partitions with the configured strategy, skips those a pending write or
table service touches (with the reason), applies ``max.delete.partitions`` (oldest first) and, if any
partition is left, commits a ``delete_partition`` replacecommit exactly as Hudi does
(table-services-upstream.md §1.5): ``<t>.replacecommit.requested`` (Avro, operationType
DELETE_PARTITION), ``<t>.replacecommit.inflight`` (JSON, empty stats), ``<t>.replacecommit`` (JSON with
``partitionToReplaceFileIds``). No data file is touched: readers stop seeing the partitions at once,
and the cleaner deletes their files and folders later. Nothing expired means no instant at all.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
import logging
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie import configs as C
from hoodie.configs import warn_unknown_keys
from hoodie.faults import fault_point
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.timeline.savepoints import completed_savepoints
from hoodie.format.table import HoodieTable
from hoodie.metrics import publish
from hoodie.services import delete_partition as DP
from hoodie.services.clean.pending import TTL_PARTITIONS_KEY, pending_operations
from hoodie.services.rollback.failed_writes import live_instants
from hoodie.services.transaction import Operation, Transaction
from hoodie.services.ttl.config import (
    DAYS_RETAIN, LOCAL_SKEW, MAX_DELETE, PREDICATE, RETENTION, STRATEGY_TYPE, TIMELINE_TIMEZONE, TTLConfig,
    TTLConfigError, format_duration, parse_options_string,
)
from hoodie.services.ttl.stash import TTL_MARKER_KEY, TTL_STASH_KEY, finish_pending_stashes, purge_expired_stashes, \
    stash_partitions
from hoodie.services.ttl.stats import STATS_KEY, remember
from hoodie.services.ttl import move as MV
from hoodie.services.ttl import outcome
from hoodie.services.ttl.outcome import result_rows
from hoodie.services.ttl import record_ttl as RT
from hoodie.services.ttl.strategies import EXPIRED, KEPT, SKIPPED, PartitionDecision, create_strategy

log = logging.getLogger(__name__)

DELETE_PARTITION = DP.DELETE_PARTITION
TTL_REASONS_KEY = "hoodie.partition.ttl.reasons"
TTL_STRATEGY_KEY = "hoodie.partition.ttl.strategy.name"


def active_instants(base_uri: Optional[str] = None) -> set[str]:
    """Instants this process is committing right now, TTL runs included (writers' eager rollback
    leaves them alone; :func:`hoodie.services.rollback.failed_writes.live_instants`)."""
    return live_instants(base_uri)


@dataclass
class TTLResult:
    """What a TTL run did (or, in a dry run, would do)."""

    instant: Optional[str]
    now_instant: str
    strategy: str
    dry_run: bool
    decisions: list[PartitionDecision] = field(default_factory=list)
    partition_to_replace_file_ids: dict[str, list[str]] = field(default_factory=dict)
    stashed: bool = False
    stats_scanned_instants: Optional[int] = None
    stats_incremental: Optional[bool] = None
    aborted: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # hoodie.partition.ttl.action: "delete", or "move" (tiering: services/ttl/move.py).
    action: str = MV.DELETE
    move_target: Optional[str] = None
    # action=move: partition -> what was copied to the cold table (rows, digest, cold instant).
    moved: dict[str, dict] = field(default_factory=dict)

    @property
    def expired_partitions(self) -> list[str]:
        """Partitions deleted by this run (would be deleted, in a dry run)."""
        return [d.partition for d in self.decisions if d.status == EXPIRED]

    @property
    def skipped(self) -> dict[str, str]:
        """Expired partitions left alone this time, with the reason."""
        return {d.partition: d.reason for d in self.decisions if d.status == SKIPPED}

    def to_json(self) -> dict:
        """What ``hoodie ttl run --json`` prints."""
        return {
            "instant": self.instant,
            "now": self.now_instant,
            "dry_run": self.dry_run,
            "strategy": self.strategy,
            "expired_partitions": self.expired_partitions,
            "skipped_partitions": self.skipped,
            "reasons": {d.partition: d.to_json() for d in self.decisions},
            "partition_to_replace_file_ids": self.partition_to_replace_file_ids,
            "stashed": self.stashed,
            "stats": {"scanned_instants": self.stats_scanned_instants, "incremental": self.stats_incremental},
            "aborted_pending_ttl_instants": self.aborted,
            "warnings": self.warnings,
            "action": self.action,
            **({"move_target": self.move_target, "moves": self.move_plan, "moved": self.moved}
               if self.action == MV.MOVE else {}),
        }

    @property
    def reason(self) -> str:
        """What the run did, or why it did nothing: :func:`hoodie.services.ttl.outcome.reason`."""
        return outcome.reason(self)

    @property
    def move_plan(self) -> dict[str, str]:
        """action=move: where each expired partition goes (went), as a URI in the cold table."""
        if self.action != MV.MOVE or not self.move_target:
            return {}
        return {p: f"{self.move_target.rstrip('/')}/{p}" for p in self.expired_partitions}


def _open(table_or_path: str | HoodieTable, storage_options: Optional[dict[str, Any]]) -> HoodieTable:
    if isinstance(table_or_path, HoodieTable):
        return table_or_path
    return HoodieTable(table_or_path, storage_options)


def _cfg(options: Optional[Mapping[str, Any] | TTLConfig]) -> TTLConfig:
    return options if isinstance(options, TTLConfig) else TTLConfig.from_options(options)


def delete_partitions(table: HoodieTable, partition_to_replace_file_ids: Mapping[str, list[str]], *,
                      instant: Optional[str] = None, extra_metadata: Optional[Mapping[str, str]] = None) -> Instant:
    """Commit a ``delete_partition`` replacecommit removing the given file groups (Hudi's format,
    :mod:`hoodie.services.delete_partition`), in its own transaction; returns the completed instant.

    The completed metadata carries the table schema (readers such as hudi-rs take the schema from the
    newest commit).
    """
    if not partition_to_replace_file_ids:
        raise TTLConfigError("delete_partitions needs at least one partition with file groups")
    return DP.delete_partitions(table, partition_to_replace_file_ids, instant=instant, extra_metadata=extra_metadata)


def _abort_stale_ttl_instants(table: HoodieTable) -> list[str]:
    """Remove pending delete_partition replacecommits left by a crashed TTL run.

    Such an instant wrote no data file, so deleting its timeline files (inflight, then requested)
    is a complete rollback. Instants another thread of this process is writing are left alone.
    """
    tl = table.timeline
    mine = live_instants(table.storage.uri())
    aborted = []
    for inst in tl.pending().by_actions(I.REPLACE_COMMIT).instants:
        if inst.timestamp in mine:
            continue
        if not _is_delete_partition(tl, inst):
            continue
        table.delete_instant(inst.timestamp, I.REPLACE_COMMIT, [State.INFLIGHT, State.REQUESTED])
        log.warning("aborted the pending TTL delete_partition instant %s left by an interrupted run "
                    "(it wrote no data files)", inst.timestamp)
        aborted.append(inst.timestamp)
    return aborted


def _is_delete_partition(tl: T.Timeline, inst: Instant) -> bool:
    """Whether the pending replacecommit ``inst`` is a delete_partition (no clustering plan)."""
    try:
        req = plans.read_avro_metadata(tl.read_file(inst.requested_file_name))
        if req.get("operationType") == DELETE_PARTITION and not req.get("clusteringPlan"):
            return True
    except (FileNotFoundError, ValueError):
        pass
    if not inst.is_inflight:
        return False
    try:
        # Before the one delete_partition writer, TTL runs named their partitions in the inflight file.
        meta = tl.commit_metadata(inst)
        return meta.operation_type == DELETE_PARTITION and TTL_PARTITIONS_KEY in meta.extra_metadata
    except (FileNotFoundError, ValueError):
        return False


def _check_table(table: HoodieTable) -> None:
    if not table.is_partitioned:
        raise TTLConfigError(
            f"{table.base_path} is not partitioned (hoodie.table.partition.fields is not set): partition TTL "
            "has nothing to expire; use a delete or a record-level expiry instead")


def run_ttl(table_or_path: str | HoodieTable, options: Optional[Mapping[str, Any] | TTLConfig] = None, *,
            dry_run: bool = False, instant_time: Optional[str] = None,
            storage_options: Optional[dict[str, Any]] = None) -> TTLResult:
    """Run partition TTL once; returns the decisions and, unless nothing expired or ``dry_run``,
    the delete_partition instant.

    ``instant_time`` sets the TTL instant ("now"); by default a fresh instant of the table's
    timeline zone. It must be newer than every instant on the timeline unless ``dry_run``.
    Raises :class:`TTLConfigError` for misconfiguration (see docs/ttl.md).
    Publishes Prometheus metrics when configured (``hoodie.metrics.prometheus.file``).
    """
    started = time.monotonic()
    if isinstance(options, Mapping):
        warn_unknown_keys(options)
    result = _run_ttl_once(table_or_path, options, dry_run=dry_run, instant_time=instant_time,
                           storage_options=storage_options)
    if not dry_run:
        opts = options if isinstance(options, Mapping) else {}
        table = _open(table_or_path, storage_options)
        moved = {"moved_rows": (sum(int(m.get("rows", 0)) for m in result.moved.values()),
                                "Rows the last TTL run moved to the cold table (action=move)")} if result.moved else {}
        publish("ttl", {
            **moved,
            "expired_partitions": (len(result.expired_partitions), "Partitions the last TTL run expired"),
            "skipped_partitions": (len(result.skipped), "Expired partitions the last TTL run had to skip"),
            "evaluated_partitions": (len(result.decisions), "Partitions the last TTL run evaluated"),
            "duration_ms": (int((time.monotonic() - started) * 1000), "Duration of the last TTL run, ms"),
        }, {"table": table.name, "base_path": table.base_path}, opts)
    return result


def _run_ttl_once(table_or_path: str | HoodieTable, options: Optional[Mapping[str, Any] | TTLConfig] = None, *,
                  dry_run: bool = False, instant_time: Optional[str] = None,
                  storage_options: Optional[dict[str, Any]] = None) -> TTLResult:
    table = _open(table_or_path, storage_options)
    cfg = _cfg(options)
    _check_table(table)
    op = TTLOperation(cfg, dry_run=dry_run, instant_time=instant_time)
    # A dry run writes nothing and takes no lock.
    Transaction(op, table=table, options=options if isinstance(options, Mapping) else None, lock=not dry_run).run()
    assert op.result is not None
    return op.result


class TTLOperation(Operation):
    """A partition TTL run as a transaction's operation: :meth:`prepare` decides (under the lock)
    which partitions expire; when any does, their delete_partition replacecommit is committed
    (:class:`~hoodie.services.delete_partition.DeletePartitionOperation`) and, with the stash
    enabled, :meth:`finalize` moves their files aside."""

    what = "partition TTL"
    table_versions = (6, 8, 9)

    def __init__(self, cfg: TTLConfig, *, dry_run: bool = False, instant_time: Optional[str] = None) -> None:
        self.cfg = cfg
        self.dry_run = dry_run
        self.instant_time = instant_time
        self.result: Optional[TTLResult] = None
        self.delete: Optional[DP.DeletePartitionOperation] = None
        self.stats: Any = None
        self.move: Optional[MV.MoveConfig] = None

    def prepare(self, txn: Transaction) -> bool:
        """Housekeeping (stale TTL instants, stashes), then the strategy's decisions; True when
        partitions expire (and this is no dry run)."""
        cfg, dry_run = self.cfg, self.dry_run
        table = txn.open_table()
        # The move action's target is checked before anything is written, in dry runs too.
        action = MV.action_of(cfg.options)
        if action == MV.MOVE:
            self.move = MV.move_config(cfg.options, table)
        aborted: list[str] = []
        if not dry_run:
            aborted = _abort_stale_ttl_instants(table)
            finish_pending_stashes(table, cfg.stash_retain_ms)  # moves data files: the timeline stands
            purge_expired_stashes(table, cfg.stash_retain_ms,
                                  margin_ms=cfg.local_skew_ms if table.timeline_timezone == "LOCAL" else 0)
        tl = table.timeline
        last = tl.last()
        instant_time = self.instant_time
        if instant_time is not None:
            instant_time = I.fix_instant_compatibility(instant_time) if len(instant_time) == 14 else instant_time
            if not dry_run and last is not None and instant_time <= last.timestamp:
                raise TTLConfigError(f"TTL instant {instant_time} is not newer than the newest instant "
                                     f"{last.timestamp}; leave instant_time unset")
        now = instant_time or table.new_instant_time()
        reference, clock_warning = _age_reference(table, now, cfg) if instant_time is None else (now, None)
        strategy = create_strategy(table, reference, cfg)
        result = TTLResult(None, now, strategy.name, dry_run, aborted=aborted, action=action,
                           move_target=self.move.target if self.move is not None else None)
        self.result = result
        if clock_warning:
            result.warnings.append(clock_warning)
        if not tl.completed_writes():
            log.warning("partition TTL on %s: the table has no completed commit yet; nothing to expire",
                        table.base_path)
            return False
        decisions = strategy.decisions()
        stats = strategy.stats
        self.stats = stats
        if stats is not None:
            result.stats_scanned_instants = stats.scanned_instants
            result.stats_incremental = stats.incremental
        view = strategy.file_system_view()
        live = _live_file_groups(strategy, view, decisions)
        _apply_pending_and_cap(table, decisions, cfg)
        result.decisions = decisions
        uncertain = [d.partition for d in decisions if d.zone_uncertain]
        if uncertain:
            margin = format_duration(cfg.local_skew_ms)
            names = ", ".join(uncertain[:5]) + (", ..." if len(uncertain) > 5 else "")
            msg = (f"kept {len(uncertain)} partition(s) ({names}) "
                   f"whose age exceeds the retention by less than {margin}: the timeline of {table.base_path} is LOCAL "
                   f"({TIMELINE_TIMEZONE}=LOCAL), so instants are each writer's wall-clock time and writers in other "
                   f"zones make ages uncertain by up to {margin}. Create tables with {TIMELINE_TIMEZONE}=UTC (hoodie's "
                   f"default); if every writer and TTL run share one zone, set {LOCAL_SKEW}=PT0S")
            result.warnings.append(msg)
            log.warning("partition TTL %s", msg)
        for d in decisions:
            if d.status == SKIPPED:
                # Pending operations can block a partition for long: make that visible.
                level = logging.INFO if "over the cap" in d.reason else logging.WARNING
                log.log(level, "partition TTL skips %s: %s", d.partition, d.reason)
        p2r = {p: live[p] for p in result.expired_partitions}
        if dry_run or not p2r:
            return False
        extra = {
            TTL_MARKER_KEY: now,
            TTL_STRATEGY_KEY: strategy.name,
            TTL_REASONS_KEY: json.dumps({d.partition: {k: v for k, v in d.to_json().items()
                                                       if k in ("reason", "reference", "age", "retention", "rule")}
                                         for d in decisions if d.partition in p2r},
                                        separators=(",", ":")),
        }
        if stats is not None:
            extra[STATS_KEY] = stats.encode()
        if cfg.stash_enabled:
            extra[TTL_STASH_KEY] = "true"
        if self.move is not None:
            # Copied and verified in the cold table before the hot table's delete is even requested;
            # still under the hot table's lock, so no writer changes these partitions meanwhile.
            copies = MV.copy_to_cold(table, sorted(p2r), self.move)
            result.moved = {p: c.to_json() for p, c in sorted(copies.items())}
            extra.update(MV.moved_metadata(self.move, copies))
        self.delete = DP.DeletePartitionOperation(p2r, instant=now, extra_metadata=extra, fault="ttl.after_inflight")
        return True

    def start(self, txn: Transaction) -> Instant:
        """The delete_partition replacecommit's requested and inflight files."""
        assert self.delete is not None
        return self.delete.start(txn)

    def complete(self, txn: Transaction, result: Any) -> CommitMetadata:
        """The delete_partition replacecommit's metadata."""
        assert self.delete is not None
        return self.delete.complete(txn, None)

    def finalize(self, txn: Transaction) -> None:
        """Remember the partition stats; stash the expired files when asked to."""
        assert self.delete is not None and self.result is not None and txn.table is not None
        assert txn.completed is not None
        result, table = self.result, txn.table
        p2r = self.delete.partition_to_replace_file_ids
        result.instant = txn.completed.timestamp
        result.partition_to_replace_file_ids = p2r
        if self.stats is not None:
            remember(table, self.stats)
        log.info("partition TTL %s deleted %d partition(s): %s", result.instant, len(p2r), ", ".join(sorted(p2r)))
        if self.cfg.stash_enabled:
            fault_point("ttl.before_stash")
            stash_partitions(table, result.instant, p2r)
            result.stashed = True


def _age_reference(table: HoodieTable, ttl_instant: str, cfg: TTLConfig) -> tuple[str, Optional[str]]:
    """The "now" partition ages are measured from (the TTL instant, or the clock when the instant had
    to be pushed past it), and a warning when it had to be.

    A TTL instant must be newer than every instant on the timeline. If a writer with a clock far
    ahead left an instant from the future, the new instant lands after it, and measuring ages from
    there would expire partitions that are live today (with the instant in year 2999, all of them).
    On a LOCAL timeline the usual cause is a writer in a zone ahead of this process's.
    """
    clock = table.instant_generator().now()
    tz = table.timeline_timezone
    ahead_ms = (I.instant_to_epoch_ms(I.fix_instant_compatibility(ttl_instant), tz)
                - I.instant_to_epoch_ms(I.fix_instant_compatibility(clock), tz))
    if ahead_ms <= 60_000:  # instants issued in the same millisecond push it a few ms ahead: noise
        return ttl_instant, None
    newest = table.timeline.last()
    where = f"the timeline of {table.base_path} holds an instant from the future ({newest.timestamp if newest else '?'}" \
            f" is about {format_duration(ahead_ms // 60_000 * 60_000)} ahead of the clock, {clock})"
    if tz == "LOCAL":
        zone = _dt.datetime.now().astimezone()
        msg = (f"{where} read in this process's zone ({zone.tzname()}, UTC{zone.strftime('%z')}). The timeline is "
               f"LOCAL ({TIMELINE_TIMEZONE}=LOCAL): instants are each writer's wall-clock time, so a writer runs in a "
               f"zone ahead of this one (or its clock is wrong). Partition ages are measured from the clock, and "
               f"partitions less than {format_duration(cfg.local_skew_ms)} past their retention are kept. Create "
               f"tables with {TIMELINE_TIMEZONE}=UTC (hoodie's default), or run TTL in the writers' zone")
    else:
        msg = f"{where}: partition ages are measured from the clock"
    log.warning("partition TTL: %s", msg)
    return clock, msg


def _live_file_groups(strategy: Any, view: Any, decisions: list[PartitionDecision]) -> dict[str, list[str]]:
    """File ids of the live file groups of each expired partition; expired partitions that do not
    exist or hold no live data (possible with user strategies) are kept instead."""
    existing = set(strategy.all_partitions())
    live: dict[str, list[str]] = {}
    for d in decisions:
        if d.status != EXPIRED:
            continue
        if d.partition not in existing:
            d.status = KEPT
            d.reason = f"{strategy.name} returned it, but no such partition exists"
            continue
        fids = sorted({s.file_id for s in view.latest_file_slices(d.partition)})
        if not fids:
            d.status = KEPT
            d.reason = "expired, but the partition holds no live data (nothing to delete)"
            continue
        live[d.partition] = fids
    return live


def _apply_pending_and_cap(table: HoodieTable, decisions: list[PartitionDecision], cfg: TTLConfig) -> None:
    """Turn expired partitions that pending operations touch, or beyond the cap, into skips."""
    expired = [d for d in decisions if d.status == EXPIRED]
    if not expired:
        return
    pending = pending_operations(table)
    for d in expired:
        why = pending.reasons(d.partition)
        if why:
            d.status = SKIPPED
            d.reason = f"expired ({d.reason}) but skipped this run: {'; '.join(why)}"
    _skip_savepointed(table, [d for d in expired if d.status == EXPIRED])
    still = [d for d in decisions if d.status == EXPIRED]
    still.sort(key=lambda d: (d.reference_ms if d.reference_ms is not None else -(1 << 62), d.partition))
    for d in still[cfg.max_delete_partitions:]:
        d.status = SKIPPED
        d.reason = (f"expired ({d.reason}) but over the cap {MAX_DELETE}={cfg.max_delete_partitions}; "
                    "a later run deletes it")


def _skip_savepointed(table: HoodieTable, expired: list[PartitionDecision]) -> None:
    """Expired partitions in which a savepoint holds files are skipped: deleting them would take the
    savepoint's data out of the table (and a stash would move its files away). A savepoint whose
    metadata cannot be read may hold any partition, so it keeps them all."""
    holders: dict[str, list[str]] = {}
    damaged: list[str] = []
    for sp in completed_savepoints(table.timeline):
        if sp.damaged is not None:
            damaged.append(sp.instant)
            continue
        for p in sp.partitions:
            holders.setdefault(p, []).append(sp.instant)
    for d in expired:
        held = holders.get(d.partition) or damaged
        if not held:
            continue
        d.status = SKIPPED
        what = "savepoint(s) " + ", ".join(held)
        why = (f"{what} cannot be read and may hold its files" if not holders.get(d.partition)
               else f"{what} hold its files")
        d.reason = (f"expired ({d.reason}) but kept: {why}; a restore to the savepoint needs them. Delete the "
                    f"savepoint (CALL delete_savepoint) to let TTL delete the partition")


# -- inline and async modes ---------------------------------------------------------------------

def maybe_run_inline_ttl(table: HoodieTable, options: Optional[Mapping[str, Any] | TTLConfig] = None
                         ) -> Optional[TTLResult]:
    """Inline TTL, called by writers after a commit: runs when ``hoodie.partition.ttl.inline=true``.
    ``options``: the writer's options, or the :class:`TTLConfig` it parsed from them before writing.

    Misconfiguration raises :class:`TTLConfigError` (the write itself has committed by then).
    """
    cfg = _cfg(options)
    if not cfg.inline:
        return None
    return run_ttl(table, cfg)


def _is_ttl_commit(tl: T.Timeline, inst: Instant) -> bool:
    if inst.action != I.REPLACE_COMMIT:
        return False
    try:
        return TTL_MARKER_KEY in tl.commit_metadata(inst).extra_metadata
    except (FileNotFoundError, ValueError):
        return False


def last_ttl_instant(table: HoodieTable) -> Optional[str]:
    """The newest completed TTL replacecommit, if any."""
    tl = table.timeline
    for inst in reversed(tl.completed().by_actions(I.REPLACE_COMMIT).instants):
        if _is_ttl_commit(tl, inst):
            return inst.timestamp
    return None


def commits_since(table: HoodieTable, after: Optional[str], exclude: frozenset[str] | set[str] = frozenset()) -> int:
    """Completed commits and deltacommits (compactions excluded) after ``after``; ``exclude`` names
    instants not to count (the async service's own record TTL commits)."""
    tl = table.timeline
    n = 0
    for inst in tl.completed().by_actions(I.COMMIT, I.DELTA_COMMIT).instants:
        if after is not None and inst.timestamp <= after:
            continue
        if inst.timestamp in exclude:
            continue
        if inst.action == I.COMMIT and tl.is_compaction_commit(inst):
            continue
        n += 1
    return n


def partition_ttl_configured(cfg: TTLConfig) -> bool:
    """Whether the options set partition TTL up (a strategy class, a retention or rules); a retention
    that keeps nothing counts as set, so that :meth:`TTLConfig.require_retention` refuses it."""
    return bool(cfg.strategy_class) or cfg.retention_ms is not None or bool(cfg.rules)


def record_ttl_configured(options: Optional[Mapping[str, Any]]) -> bool:
    """Whether the options set record TTL up (``hoodie.record.ttl.retention``): the async service then
    runs record TTL too."""
    return (options or {}).get(str(C.RECORD_TTL_RETENTION)) not in (None, "")


def check_async_options(options: Mapping[str, Any], table_props: Optional[Mapping[str, str]] = None
                        ) -> tuple[bool, Optional["RT.RecordTTLConfig"]]:
    """(run partition TTL, record TTL settings or None) of an async TTL service with ``options``.

    Partition TTL runs when it is configured, record TTL when ``hoodie.record.ttl.retention`` is set;
    with neither the partition TTL error (no retention) is raised, as before record TTL existed.
    Raises :class:`TTLConfigError` (:class:`~hoodie.services.ttl.record_ttl.RecordTTLConfigError` for
    record TTL keys) before a writer commits anything.
    """
    cfg = TTLConfig.from_options(options)
    record = RT.RecordTTLConfig.from_options(options, table_props) if record_ttl_configured(options) else None
    partition = partition_ttl_configured(cfg) or record is None
    if partition and not cfg.strategy_class:
        cfg.require_retention()
    return partition, record


# -- SQL procedures -------------------------------------------------------------------------------

def _days_argument(value: Any, name: str) -> str:
    """A procedure's days argument as the days.retain text: an int (or its text); a float, inf or
    nan is refused here instead of being truncated (``int(1e-7)`` is 0) or raising OverflowError."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TTLConfigError(f"{name}={value!r} is not a whole number of days; pass an integer such as 30 "
                             f"(for other retentions set {RETENTION} in options, e.g. {RETENTION}=PT36H)")
    return str(value)


def call_run_ttl_result(base_path: str, ttl_policy: Optional[str] = None, retain_days: Optional[int] = None,
                        options: str = "", *, storage_options: Optional[dict[str, Any]] = None,
                        action: Optional[str] = None, target: Optional[str] = None,
                        dry_run: bool = False) -> TTLResult:
    """``CALL run_ttl(table, ttl_policy, retain_days, options, action, target, dry_run)`` (Hudi 1.x's
    first four; ``action``/``target`` set ``hoodie.partition.ttl.action`` and ``.move.target``): the
    run's :class:`TTLResult`. ``options`` is ``"k1=v1,k2=v2"``."""
    opts = parse_options_string(options)
    if ttl_policy:
        opts[STRATEGY_TYPE] = ttl_policy
    if retain_days is not None:
        opts[DAYS_RETAIN] = _days_argument(retain_days, "retain_days")
    if action:
        opts[str(MV.ACTION)] = action
    if target:
        opts[str(MV.TARGET)] = target
    return run_ttl(base_path, opts, storage_options=storage_options, dry_run=dry_run)


def call_run_ttl(base_path: str, ttl_policy: Optional[str] = None, retain_days: Optional[int] = None,
                 options: str = "", *, storage_options: Optional[dict[str, Any]] = None) -> list[str]:
    """``CALL run_ttl(...)`` as Hudi returns it: the deleted partitions (see :func:`call_run_ttl_result`)."""
    res = call_run_ttl_result(base_path, ttl_policy, retain_days, options, storage_options=storage_options)
    return sorted(res.partition_to_replace_file_ids)


def call_manage_partition_ttl_result(base_path: str, strategy: str = "KEEP_BY_TIME",
                                     days_retain: Optional[int] = None, predicate: Optional[str] = None, *,
                                     storage_options: Optional[dict[str, Any]] = None) -> TTLResult:
    """RFC-65's ``CALL managePartitionTTL(basePath, strategy, daysRetain, predicate)``: the run's
    :class:`TTLResult`. ``predicate`` selects partitions, e.g. ``"productid = 1"``."""
    opts: dict[str, str] = {STRATEGY_TYPE: strategy}
    if days_retain is not None:
        opts[DAYS_RETAIN] = _days_argument(days_retain, "daysRetain")
    if predicate:
        opts[PREDICATE] = predicate
    return run_ttl(base_path, opts, storage_options=storage_options)


def call_manage_partition_ttl(base_path: str, strategy: str = "KEEP_BY_TIME", days_retain: Optional[int] = None,
                              predicate: Optional[str] = None, *,
                              storage_options: Optional[dict[str, Any]] = None) -> list[str]:
    """RFC-65's ``managePartitionTTL``: the deleted partitions (see :func:`call_manage_partition_ttl_result`)."""
    res = call_manage_partition_ttl_result(base_path, strategy, days_retain, predicate,
                                           storage_options=storage_options)
    return sorted(res.partition_to_replace_file_ids)


__all__ = [
    "TTLResult", "run_ttl", "delete_partitions", "maybe_run_inline_ttl", "check_async_options", "call_run_ttl", "call_manage_partition_ttl", "call_run_ttl_result",
    "call_manage_partition_ttl_result", "result_rows", "last_ttl_instant", "commits_since",
    "active_instants", "KEPT",
]
