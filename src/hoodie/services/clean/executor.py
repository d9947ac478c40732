"""Executing a clean through the transaction: finish interrupted cleans, settle TTL stashes, plan,
write ``<t>.clean.requested``/``.inflight`` (the plan), delete the files and emptied partitions,
complete ``<t>.clean`` (``HoodieCleanMetadata``); and the automatic clean writers run after commits."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from hoodie.configs import warn_unknown_keys
from hoodie.faults import fault_point
from hoodie.format.file_group import naming as N
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, open_table, write_partition_metadata
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.instant import Instant, State
from hoodie.metrics import publish
from hoodie.services.clean.config import CleanConfig, CleanError, _config
from hoodie.services.clean.planner import CleanPlan, plan_clean
from hoodie.services.commit import Commit
from hoodie.services.transaction import Operation, Transaction
from hoodie.services.ttl.stash import finish_pending_stashes, purge_expired_stashes, stash_retain_ms

log = logging.getLogger(__name__)

PARTITION_METAFILE = N.PARTITION_METAFILE

@dataclass
class CleanResult:
    """What a clean did (or, in a dry run, would do)."""

    instant: Optional[str]
    plan: CleanPlan
    dry_run: bool = False
    deleted: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, list[str]] = field(default_factory=dict)
    deleted_partitions: list[str] = field(default_factory=list)
    recovered: list["CleanResult"] = field(default_factory=list)
    stash_purged: list[str] = field(default_factory=list)

    @property
    def total_deleted(self) -> int:
        """Files deleted by this clean (recovered cleans not counted)."""
        return sum(len(v) for v in self.deleted.values())

    @property
    def reason(self) -> str:
        """What the clean did (would do, in a dry run), or why it deleted nothing."""
        notes = "; ".join(self.plan.notes)
        if self.dry_run:
            text = (f"would delete {self.plan.total_files} file(s) and {len(self.plan.partitions_to_delete)} "
                    f"partition(s) ({self.plan.policy})")
        elif self.instant is None:
            text = f"nothing to clean ({self.plan.policy}): " + (notes or "no file version is outside the retention")
            notes = ""
        else:
            text = f"deleted {self.total_deleted} file(s) in clean {self.instant} ({self.plan.policy})"
        if notes:
            text += f"; {notes}"
        if self.recovered:
            text += f"; finished {len(self.recovered)} interrupted clean(s)"
        return text

    def to_json(self) -> dict:
        """A JSON-friendly summary (what ``hoodie clean --json`` prints)."""
        return {
            "instant": self.instant,
            "dry_run": self.dry_run,
            "plan": self.plan.to_json(),
            "deleted_files": {p: list(v) for p, v in sorted(self.deleted.items())},
            "total_deleted": self.total_deleted,
            "failed_files": {p: list(v) for p, v in sorted(self.failed.items()) if v},
            "deleted_partitions": list(self.deleted_partitions),
            "recovered_cleans": [r.to_json() for r in self.recovered],
            "stash_purged": list(self.stash_purged),
            "reason": self.reason,
        }


def _remove_empty_dir(storage: Storage, rel: str) -> bool:
    """Remove a directory only if it is empty (never recursively: a concurrent writer's new file
    must not be swept away)."""
    if storage.is_local:
        try:
            os.rmdir(storage.full(rel))
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
    if storage.list_dir(rel):
        return False
    try:
        storage.fs.delete_dir(storage.full(rel))
    except (FileNotFoundError, OSError):
        # Object stores have no real folders: an empty prefix may have no marker object to delete.
        log.debug("no folder object to delete at %s", storage.uri(rel))
    return True


def _delete_partition_folder(storage: Storage, partition: str) -> bool:
    """Delete an emptied partition: its metafile, its folder and emptied parent folders."""
    entries = storage.list_dir(partition)
    if any(e.name != PARTITION_METAFILE for e in entries):
        log.warning("partition %s was not deleted: new files appeared in it", partition)
        return False
    meta = storage.read_bytes(f"{partition}/{PARTITION_METAFILE}") if entries else None
    storage.delete(f"{partition}/{PARTITION_METAFILE}")
    if not _remove_empty_dir(storage, partition):
        # A writer added a file between the check and the delete: give the partition its metafile
        # back, or the new file would be invisible (readers find partitions by their metafile).
        if meta is not None:
            try:
                storage.create_new(f"{partition}/{PARTITION_METAFILE}", meta)
            except FileExistsError:
                log.debug("the writer already re-created %s/%s", partition, PARTITION_METAFILE)
        else:
            write_partition_metadata(storage, partition, "00000000000000")
        log.warning("partition %s was not deleted: a file appeared while deleting it", partition)
        return False
    parent = partition.rpartition("/")[0]
    while parent:
        if storage.list_dir(parent) or not _remove_empty_dir(storage, parent):
            break
        parent = parent.rpartition("/")[0]
    return True


def _delete(table: HoodieTable, instant: Instant, plan: CleanPlan, started: float) -> tuple[CleanResult, bytes]:
    """Delete the plan's files and partitions (idempotent); returns the result and the clean
    instant's completed content (Avro ``HoodieCleanMetadata``)."""
    storage = table.storage
    res = CleanResult(instant.timestamp, plan)
    policy = plan.policy
    part_meta: dict[str, dict] = {}
    for p, files in sorted(plan.files_to_delete.items()):
        ok: list[str] = []
        bad: list[str] = []
        for f in files:
            try:
                storage.delete(f)
                # Already gone (a re-executed plan) counts as deleted: the file no longer exists.
                ok.append(f)
                fault_point("clean.after_file")
            except OSError as e:
                log.warning("clean %s could not delete %s: %s", instant.timestamp, f, e)
                bad.append(f)
        res.deleted[p] = ok
        res.failed[p] = bad
        fault_point("clean.after_partition_files")
    for p in sorted(plan.partitions_to_delete):
        if _delete_partition_folder(storage, p):
            res.deleted_partitions.append(p)
    names = lambda fs: [f.rsplit("/", 1)[-1] for f in fs]  # noqa: E731 - Hudi records file names
    for p in sorted(set(plan.files_to_delete) | set(plan.partitions_to_delete)):
        files = plan.files_to_delete.get(p, [])
        part_meta[p] = plans.clean_partition_metadata(
            p, policy, names(files), names(res.deleted.get(p, [])), names(res.failed.get(p, [])),
            p in res.deleted_partitions)
    e = plan.earliest_instant_to_retain
    md = plans.clean_metadata(instant.timestamp, int((time.monotonic() - started) * 1000),
                              e.timestamp if e else "", plan.last_completed_commit, part_meta)
    return res, plans.write_avro_metadata("HoodieCleanMetadata", md)


def _log_done(instant: Instant, res: CleanResult) -> None:
    log.info("clean %s deleted %d files and %d partitions", instant.timestamp, res.total_deleted,
             len(res.deleted_partitions))


def _execute(table: HoodieTable, instant: Instant, plan: CleanPlan, started: float, commit: Commit) -> CleanResult:
    """Delete the plan's files and partitions, then complete the clean instant with ``commit``
    (idempotent)."""
    res, content = _delete(table, instant, plan, started)
    fault_point("clean.before_complete")
    commit(Instant(instant.timestamp, I.CLEAN, State.INFLIGHT), content)
    _log_done(instant, res)
    return res


def _finish_pending_cleans(table: HoodieTable, commit: Commit) -> list[CleanResult]:
    """Re-execute cleans left requested or inflight by a crash, from their own plans; ``commit``
    completes each (the clean's transaction's)."""
    out = []
    for inst in table.timeline.pending().by_actions(I.CLEAN).instants:
        started = time.monotonic()
        data = table.timeline.read_file(inst.requested_file_name)
        try:
            plan = CleanPlan.from_avro(table.timeline.read_avro(I.Instant(inst.timestamp, I.CLEAN, I.State.REQUESTED)),
                                       table.storage)
        except T.DamagedTimelineFileError as e:
            # A clean deletes only files no read needs and its instant holds no data; under the lock
            # a pending one is a crashed run. Its plan is lost: drop it, the next plan covers the rest.
            log.warning("%s is damaged (%s): dropping that interrupted clean %s; the new clean plan covers "
                        "what it had not deleted", e.path, e.problem, inst.timestamp)
            table.delete_instant(inst.timestamp, I.CLEAN, [State.INFLIGHT, State.REQUESTED])
            continue
        except ValueError as e:
            raise CleanError(f"the pending clean {inst.timestamp} has an unreadable plan "
                             f"{table.storage.uri(T.instant_file_path(table.storage, I.Instant(inst.timestamp, I.CLEAN, I.State.REQUESTED)))} ({e}); "
                             + T.damaged_file_fix(table.storage.uri(), inst)) from None
        if inst.is_requested:
            table.wrote(T.transition_to_inflight(table.storage, inst, data))
        log.warning("re-executing clean %s left %s by an earlier run", inst.timestamp, inst.state.name.lower())
        out.append(_execute(table, inst, plan, started, commit))
    return out


def run_clean(base_path: str | HoodieTable, config: Optional[Mapping[str, Any] | CleanConfig] = None,
              dry_run: bool = False, *, storage_options: Optional[dict[str, Any]] = None) -> CleanResult:
    """Clean a table: finish any interrupted clean, then plan and execute a new one.

    Publishes Prometheus metrics when configured (``hoodie.metrics.prometheus.file``); otherwise as
    :func:`_run_clean_once`.
    """
    started = time.monotonic()
    if isinstance(config, Mapping):
        warn_unknown_keys(config)
    res = _run_clean_once(base_path, config, dry_run, storage_options=storage_options)
    if not dry_run:
        table = base_path if isinstance(base_path, HoodieTable) else HoodieTable(base_path, storage_options)
        publish("clean", {
            "files_deleted": (sum(len(v) for v in res.deleted.values()), "Files the last clean deleted"),
            "files_failed": (sum(len(v) for v in res.failed.values()), "Files the last clean failed to delete"),
            "partitions_deleted": (len(res.deleted_partitions), "Partitions the last clean deleted"),
            "duration_ms": (int((time.monotonic() - started) * 1000), "Duration of the last clean, ms"),
        }, {"table": table.name, "base_path": table.base_path}, config if isinstance(config, Mapping) else {})
    return res


def _run_clean_once(base_path: str | HoodieTable, config: Optional[Mapping[str, Any] | CleanConfig] = None,
                    dry_run: bool = False, *, storage_options: Optional[dict[str, Any]] = None) -> CleanResult:
    """Clean a table: finish any interrupted clean, then plan and execute a new one.

    A plan that deletes nothing creates no instant (``result.instant is None``). With ``dry_run``
    nothing is written or deleted; the result holds the plan.
    """
    table = open_table(base_path, storage_options)  # listed by the dry run, or under the transaction's lock
    cfg = _config(config)
    if dry_run:
        plan = plan_clean(table, cfg)
        pending = [i.timestamp for i in table.timeline.pending().by_actions(I.CLEAN).instants]
        if pending:
            plan.notes.append(f"pending clean(s) {', '.join(pending)} would be re-executed first")
        return CleanResult(None, plan, dry_run=True)
    op = CleanOperation(cfg)
    Transaction(op, op, table=table, options=cfg.options).run()
    assert op.outcome is not None
    return op.outcome


class CleanOperation(Operation):
    """A clean as a transaction's operation (and its own in-process executor): interrupted cleans
    are finished and stashes settled first, then a plan is made; an empty plan commits nothing."""

    what = "clean"
    table_versions = (6, 8, 9)
    schema_on_read_safe = True  # removes files / records instants only

    def __init__(self, cfg: CleanConfig) -> None:
        self.cfg = cfg
        self.plan: Optional[CleanPlan] = None
        self.recovered: list[CleanResult] = []
        self.purged: list[str] = []
        self.started = time.monotonic()
        self.now = ""
        self.outcome: Optional[CleanResult] = None

    def prepare(self, txn: Transaction) -> bool:
        """Finish interrupted cleans, settle TTL stashes, plan; False when nothing is to delete."""
        table = txn.open_table()
        self.recovered = _finish_pending_cleans(table, txn.commit)
        finished, self.purged = _stash_housekeeping(table, self.cfg)
        # The finished cleans completed through the transaction's commit point, which added them to its
        # snapshot; settling stashes moves data files only: the listing of the lock stands.
        table = txn.table
        self.started = time.monotonic()
        self.now = table.new_instant_time()
        self.plan = plan_clean(table, self.cfg, self.now)
        if self.plan.is_empty():
            self.outcome = CleanResult(None, self.plan, recovered=self.recovered, stash_purged=self.purged)
            return False
        return True

    def start(self, txn: Transaction) -> Instant:
        """``.clean.requested`` and ``.clean.inflight``, both holding the plan."""
        assert txn.table is not None and self.plan is not None
        data = plans.write_avro_metadata("HoodieCleanerPlan", self.plan.to_avro(txn.table.storage))
        req = T.create_requested(txn.table.storage, self.now, I.CLEAN, data)
        inflight = T.transition_to_inflight(txn.table.storage, req, data)
        txn.table.wrote(req, inflight)
        fault_point("clean.after_inflight")
        return inflight

    def execute(self, txn: Transaction) -> tuple[CleanResult, bytes]:
        """Delete the planned files and partitions."""
        assert txn.table is not None and txn.instant is not None and self.plan is not None
        return _delete(txn.table, txn.instant, self.plan, self.started)

    def complete(self, txn: Transaction, result: tuple[CleanResult, bytes]) -> bytes:
        """What the completed clean instant holds (``HoodieCleanMetadata``)."""
        assert txn.table is not None and txn.instant is not None
        res, content = result
        res.recovered = self.recovered
        res.stash_purged = self.purged
        self.outcome = res
        fault_point("clean.before_complete")
        return content

    def finalize(self, txn: Transaction) -> None:
        """Log what the clean deleted."""
        assert txn.instant is not None and self.outcome is not None
        _log_done(txn.instant, self.outcome)


def _stash_housekeeping(table: HoodieTable, cfg: CleanConfig) -> tuple[list[str], list[str]]:
    """Finish interrupted TTL stashes (before their files could be cleaned) and drop expired ones;
    returns (stashes finished, stashes purged)."""
    retain = stash_retain_ms(cfg.options)
    return finish_pending_stashes(table, retain), purge_expired_stashes(table, retain)


def commits_since_last_clean(table: HoodieTable) -> int:
    """Completed commits-timeline instants after the newest completed clean."""
    tl = table.timeline
    last_clean = tl.completed().by_actions(I.CLEAN).last()
    commits = tl.commits().completed()
    if last_clean is not None:
        commits = commits.after(last_clean.timestamp)
    return len(commits)


def maybe_clean_after_commit(table: HoodieTable, config: Optional[Mapping[str, Any] | CleanConfig] = None
                             ) -> Optional[CleanResult]:
    """The automatic clean writers run after each commit (``hoodie.clean.automatic``, default true).

    Runs when at least ``hoodie.clean.max.commits`` (default 1) commits completed since the last
    clean; returns the result, or None when it did not run.
    """
    cfg = _config(config)
    if not cfg.automatic:
        return None
    table = table.latest()  # the trigger counts what is committed now (the writer released the lock)
    if commits_since_last_clean(table) < cfg.max_commits:
        return None
    return run_clean(table, cfg)
