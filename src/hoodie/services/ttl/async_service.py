"""Asynchronous TTL (``hoodie.ttl.async.enabled``): a background service per table that runs partition
TTL and record TTL whenever enough commits completed since their last runs (RFC-65's async mode;
docs/ttl.md "Modes"), and the hook writers call after each commit. Each run is the standalone run of
:mod:`hoodie.services.ttl.service` (partition TTL) or :mod:`hoodie.services.ttl.record_ttl` (record TTL).
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any, Callable, Mapping, Optional

from hoodie.format.table import HoodieTable
from hoodie.services.ttl.config import (
    TTLConfig,
    TTLConfigError,
)
from hoodie.services.ttl import record_ttl as RT
from hoodie.services.ttl.service import (
    TTLResult, _check_table, _cfg, _open, check_async_options, commits_since, last_ttl_instant,
    run_ttl,
)

log = logging.getLogger("hoodie.services.ttl.service")  # the logger this service always used


# One async TTL run at a time per table in this process, even across services (a service replaced
# by maybe_run_async_ttl while its run is still going, or one started by hand next to the hook's).
_run_locks_guard = threading.Lock()
_run_locks: dict[str, threading.Lock] = {}


def _run_lock(table: HoodieTable) -> threading.Lock:
    uri = table.storage.uri()
    with _run_locks_guard:
        return _run_locks.setdefault(uri, threading.Lock())


class TTLAsyncService:
    """Runs partition TTL and record TTL in a background thread whenever at least
    ``hoodie.ttl.async.max.commits`` commits completed since the last run of each (RFC-65's async
    mode; docs/ttl.md "Modes").

    Partition TTL runs when it is configured; record TTL (:func:`~hoodie.services.ttl.record_ttl.run_record_ttl`,
    the code path of every other mode) when ``hoodie.record.ttl.retention`` is set. Each has its own
    count: partition TTL counts commits and deltacommits since the last TTL replacecommit, record TTL
    completed writes since the last record TTL commit; a run that expires nothing also resets its count,
    and commits of this service do not count for the other. Runs are serial (one thread, and one run at
    a time per table in the process), partition TTL first.

    Writers call :meth:`notify_commit` after each commit; the thread also polls every
    ``hoodie.ttl.async.poll.interval.ms``. Errors are logged and kept in :attr:`errors`; a
    configuration error stops the service.
    """

    def __init__(self, base_path: str | HoodieTable, options: Optional[Mapping[str, Any]] = None, *,
                 storage_options: Optional[dict[str, Any]] = None,
                 on_result: Optional[Callable[[TTLResult], None]] = None,
                 on_record_result: Optional[Callable[["RT.RecordTTLResult"], None]] = None) -> None:
        self.table = _open(base_path, storage_options)
        self.options = dict(options or {})
        self.config = TTLConfig.from_options(self.options)
        self.partition_ttl, self.record_config = check_async_options(self.options, self.table.props)
        if self.partition_ttl:
            _check_table(self.table)  # record TTL alone also serves unpartitioned tables
        self.on_result = on_result
        self.on_record_result = on_record_result
        self.results: list[TTLResult] = []
        self.record_results: list[RT.RecordTTLResult] = []
        self.errors: list[BaseException] = []
        self._watermark: Optional[str] = None
        self._record_watermark: Optional[str] = None
        # Instants this service committed, so that one TTL kind's commit does not count for the other.
        self._own: set[str] = set()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: Optional[threading.Thread] = None
        self._mutex = threading.Lock()

    @property
    def running(self) -> bool:
        """Whether the background thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> "TTLAsyncService":
        """Start the background thread (idempotent)."""
        with self._mutex:
            if self.running:
                return self
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name=f"hoodie-ttl-{self.table.name}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the thread after the run in progress, if any."""
        self._stop.set()
        self._wake.set()
        t = self._thread
        if t is not None:
            t.join(timeout)

    def notify_commit(self) -> None:
        """Tell the service a commit completed (it checks the trigger soon)."""
        self._idle.clear()
        self._wake.set()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until every notification so far has been handled; False on timeout."""
        return self._idle.wait(timeout)

    def __enter__(self) -> "TTLAsyncService":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def partition_due(self) -> bool:
        """Whether partition TTL is configured and enough commits completed since its last run."""
        if not self.partition_ttl:
            return False
        # A poll: the table as other writers left it since the last one (a new snapshot).
        self.table = self.table.latest()
        marker = max((x for x in (last_ttl_instant(self.table), self._watermark) if x), default=None)
        return commits_since(self.table, marker, self._own) >= self.config.async_max_commits

    def record_due(self) -> bool:
        """Whether record TTL is configured and enough writes completed since its last run."""
        if self.record_config is None:
            return False
        self.table = self.table.latest()  # a poll, as in partition_due
        need = self.config.async_max_commits
        return RT.writes_since_last_run(self.table, need, after=self._record_watermark,
                                        exclude=self._own) >= need

    def due(self) -> bool:
        """Whether either TTL kind is due."""
        return self.partition_due() or self.record_due()

    def run_once(self) -> Optional[TTLResult]:
        """Check the triggers and run what is due (also usable without the thread); returns partition
        TTL's result (record TTL's are in :attr:`record_results`). An error of one kind does not keep
        the other from running; the first is raised after both."""
        with _run_lock(self.table):
            self.table = self.table.latest()  # the commits up to this run
            # Commits up to here are accounted for by a run, whether or not it expires anything.
            newest = self.table.timeline.completed_writes().last()
            res: Optional[TTLResult] = None
            error: Optional[BaseException] = None
            try:
                if self.partition_due():
                    res = run_ttl(self.table, self.config)
                    if res.instant:
                        self._own.add(res.instant)
                    if newest is not None:
                        self._watermark = newest.timestamp
                    self.results.append(res)
                    if self.on_result is not None:
                        self.on_result(res)
            except Exception as e:  # record TTL still gets its turn
                error = e
            try:
                if self.record_due():
                    rres = RT.run_record_ttl(self.table, self.options)
                    if rres.instant:
                        self._own.add(rres.instant)
                    if newest is not None:
                        self._record_watermark = newest.timestamp
                    self.record_results.append(rres)
                    if self.on_record_result is not None:
                        self.on_record_result(rres)
            except Exception as e:
                error = error or e
            if error is not None:
                raise error
            return res

    def _loop(self) -> None:
        poll = self.config.async_poll_ms / 1000.0
        while not self._stop.is_set():
            self._wake.wait(poll)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self.run_once()
            except TTLConfigError as e:
                log.error("async TTL on %s stopped: %s", self.table.base_path, e)
                self.errors.append(e)
                self._idle.set()
                break
            except Exception as e:  # keep serving: storage hiccups and races resolve on the next run
                log.exception("async TTL on %s failed; retrying on the next commit", self.table.base_path)
                self.errors.append(e)
            if not self._wake.is_set():
                self._idle.set()


def _ttl_keys(options: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in options.items()
            if str(k).startswith(("hoodie.partition.ttl.", "hoodie.ttl.", "hoodie.record.ttl.",
                                  "hoodie.payload.event.time."))}


_services_guard = threading.Lock()
_services: dict[str, TTLAsyncService] = {}


def maybe_run_async_ttl(table: HoodieTable, options: Optional[Mapping[str, Any]] = None) -> Optional[TTLAsyncService]:
    """Async TTL hook for writers: with ``hoodie.ttl.async.enabled=true``, make sure this process runs
    a :class:`TTLAsyncService` for the table and notify it of the commit. Returns the service."""
    cfg = _cfg(options)
    if not cfg.async_enabled:
        return None
    uri = table.storage.uri()
    with _services_guard:
        svc = _services.get(uri)
        # Writers pass all their options; only a change of TTL settings restarts the service.
        if svc is not None and _ttl_keys(svc.options) != _ttl_keys(options or {}):
            svc.stop()
            svc = None
        if svc is None or not svc.running:
            svc = TTLAsyncService(HoodieTable(table.base_path, storage=table.storage), options).start()
            _services[uri] = svc
    svc.notify_commit()
    return svc


def stop_async_services(timeout: float = 30.0) -> None:
    """Stop every async TTL service this process started."""
    with _services_guard:
        svcs = list(_services.values())
        _services.clear()
    for s in svcs:
        s.stop(timeout)


# Let a TTL run in progress finish its commit (and stash) when the interpreter exits.
atexit.register(stop_async_services)
