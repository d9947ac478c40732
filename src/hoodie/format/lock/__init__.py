"""The table lock: mutual exclusion between processes that write a table.

Every operation that changes a table takes it: writes (from their eager rollback of failed writes to
their commit), TTL runs, cleans, rollbacks, compaction scheduling, and the start and commit of a
compaction (its execution runs unlocked, protected by its own lock, see :func:`compaction_lock`).
Under the lock a pending write instant can only belong to a dead process, which is what makes the
eager rollback of failed writes safe with writers and services in separate processes.

Providers (``hoodie.write.lock.provider``, Hudi's class names accepted):

* **file system** (default, Hudi's ``FileSystemBasedLockProvider``): the file ``.hoodie/lock``
  (``hoodie.write.lock.filesystem.path`` moves it), the place Hudi's provider uses by default.
  Local storage creates it with create-only semantics (a hard link that fails with EEXIST, as
  ``O_EXCL``); object stores with a conditional put (``If-None-Match: *``, through boto3, since
  pyarrow's S3 file system has no conditional writes).
* **in-process** (Hudi's ``InProcessLockProvider``): threads of one process only.

A holder that dies leaves the file behind. It is taken over when it is provably stale: its owner ran
on this host (same host name, boot and pid namespace) and its process is gone (pid and start time),
on local storage and on object stores alike; or the file is older than
``hoodie.write.lock.filesystem.expire`` minutes (Hudi's key; 0, the default, never); or, on object
stores, its lease expired: the holder renews it every ``hoodie.write.lock.storage.heartbeat.poll.secs``
and a lease not renewed for ``hoodie.write.lock.storage.validity.timeout.secs`` expires. The take-over
is atomic: locally under a short-lived guard file, on S3 by a put conditional on the stale lock's ETag.

A holder that lost its lock never commits: the completing write of every instant first checks that
each lock this process holds on the table is still its own (:func:`check_still_held`; a read of the
lock file locally, a lease renewal conditional on the holder's ETag on S3). Renewals retry failures
of the store (HTTP 5xx, throttling, timeouts, lost connections) with backoff; only a lock object that
is no longer the holder's (taken over or removed) counts as lost, which the heartbeat logs as an error.

The lock is re-entrant within a process (a thread that holds it can take it again); other threads
of the process wait as other processes do.

This module holds the lock and its lease (:class:`TableLock`, the heartbeat, the checks before a
commit, ``hoodie lock``'s status and release); one module per backend writes the lock file:
:mod:`~hoodie.format.lock.local`, :mod:`~hoodie.format.lock.s3`, :mod:`~hoodie.format.lock.azure`,
:mod:`~hoodie.format.lock.gcs` (:mod:`~hoodie.format.lock.conditional`: what the object stores
share); :mod:`~hoodie.format.lock.base` holds the keys, the errors and the owner record.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sys
import threading
import time
from typing import Any, Iterator, Mapping, Optional

from hoodie.configs import read
from hoodie.configs.lock import (
    EXPIRE_MINUTES, FILESYSTEM, HEARTBEAT_SECS, IN_PROCESS, LOCK_PATH, MIN_RENEWALS_PER_LEASE, PROVIDER, RETRY_MS,
    VALIDITY_SECS, WAIT_MS,
)
from hoodie.format.storage import Storage
from hoodie.format.lock.azure import _AzureBlob
from hoodie.format.lock.base import (
    DEFAULT_HEARTBEAT_SECS, DEFAULT_VALIDITY_SECS, LOCK_FILE, LockError, LockUnavailableError, RELEASE_RETRY_SECS,
    _Backend, _Owner, _alive,
)
from hoodie.format.lock.conditional import _ConditionalObject
from hoodie.format.lock.gcs import _GcsObject
from hoodie.format.lock.local import _LocalFile
from hoodie.format.lock.s3 import _S3Object

log = logging.getLogger("hoodie.lock")


def _sleep(stop: Optional[threading.Event], seconds: float) -> None:
    """Pause between attempts; a set ``stop`` (the lock was released) ends the pause early."""
    if stop is None:
        time.sleep(seconds)
    else:
        stop.wait(seconds)


NOT_COMMITTED = ("Nothing was committed: the instant stays pending, as after a crash, and is handled the same way "
                 "(the next write rolls a pending write back; the next clean or compaction run finishes its own)")


class _Holding:
    """This process's hold on one lock file: renewed by a heartbeat where it has a lease, checked
    before every commit (:func:`check_still_held`), released once."""

    def __init__(self, backend: _Backend, owner: _Owner, table_uri: str, validity_ms: int,
                 heartbeat_s: float) -> None:
        self.backend = backend
        self.owner = owner
        self.table_uri = table_uri
        self.validity_ms = validity_ms
        self.heartbeat_s = heartbeat_s
        self.confirmed_ms = owner.expires_ms  # the lease end last confirmed written by the store
        self.lost: Optional[str] = None
        self.committed = False  # a commit was checked under this hold
        self.stop = threading.Event()
        self.thread: Optional[threading.Thread] = None

    def start_heartbeat(self) -> None:
        """Renew the lease every ``heartbeat_s`` in a daemon thread until :meth:`release`."""
        def beat() -> None:
            try:
                while not self.stop.wait(self.heartbeat_s):
                    if not self.renew() and self.lost:
                        return
            except BaseException as e:  # never silently: a holder without a heartbeat must not commit
                self.lost = f"its heartbeat failed ({type(e).__name__}: {e})"
                log.error("the table lock %s: %s", self.backend.uri, self.lost)

        self.thread = threading.Thread(target=beat, name=f"hoodie-lock-{self.backend.uri}", daemon=True)
        self.thread.start()

    def renew(self, give_up_at: Optional[float] = None) -> bool:
        """Extend the lease, retrying while the store does not answer (with backoff), until the
        lock is released or ``give_up_at`` (``time.monotonic()``) passes. Returns whether it was
        renewed; a lock that is not this holder's any more is marked :attr:`lost`."""
        delay = 0.2
        failures = 0
        while True:
            with self.backend.mutex:
                if self.stop.is_set() or self.lost:
                    return False
                self.owner.expires_ms = int(time.time() * 1000) + self.validity_ms
                try:
                    ours = self.backend.still_held(self.owner)
                except LockUnavailableError as e:
                    error: Optional[LockUnavailableError] = e
                else:
                    error = None
                    if ours:
                        self.confirmed_ms = self.owner.expires_ms
                        if failures:
                            log.warning("renewed the lease of the table lock %s after %d failed attempt(s)",
                                        self.backend.uri, failures)
                        return True
                    self.lost = self._lost_reason()
            if error is None:
                log.error("lost the table lock %s: %s; this process will not commit under it",
                          self.backend.uri, self.lost)
                return False
            failures += 1
            left_s = (self.confirmed_ms - time.time() * 1000) / 1000
            if left_s > 0:
                log.warning("could not renew the lease of the table lock %s (%s); retrying, the lease has %.1f s "
                            "left", self.backend.uri, error, left_s)
            else:
                log.error("could not renew the lease of the table lock %s (%s), which expired %.1f s ago: another "
                          "process may take the lock over, and then this one will not commit; retrying",
                          self.backend.uri, error, -left_s)
            if give_up_at is not None and time.monotonic() >= give_up_at:
                return False
            _sleep(self.stop, delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, max(self.heartbeat_s, 0.2))

    def _lost_reason(self) -> str:
        try:
            data, _, _ = self.backend.holder()
        except LockError:
            return "it is not this process's any more"
        held = _Owner.parse(data) if data is not None else None
        if data is None:
            return "it was removed (hoodie lock release, or taken over and released by another process)"
        return f"it was taken over by {held.describe() if held else 'a writer that is not hoodie'}"

    def verify(self) -> None:
        """Raise :class:`LockError` unless the lock is still this holder's (before a commit)."""
        if self.lost is None:
            if not self.backend.leased:
                with self.backend.mutex:
                    if not self.backend.still_held(self.owner):
                        self.lost = self._lost_reason()
            else:
                # A renewal now proves that nobody held the lock since the last one and leaves a whole
                # lease for the completing write that follows.
                give_up = time.monotonic() + max(self.validity_ms / 1000, 1.0)
                try:
                    renewed = self.renew(give_up_at=give_up)
                except LockError:
                    raise
                except Exception as e:  # e.g. access denied: the lock cannot be confirmed
                    raise LockError(f"could not confirm the table lock {self.backend.uri} before committing "
                                    f"({type(e).__name__}: {e}). {NOT_COMMITTED}") from e
                if not renewed and self.lost is None:
                    raise LockError(f"could not confirm the table lock {self.backend.uri} before committing: the "
                                    f"store did not answer in time. {NOT_COMMITTED}")
        if self.lost is not None:
            raise LockError(self.lost_message())
        self.committed = True

    def lost_message(self) -> str:
        how = (f"its lease ({VALIDITY_SECS}={self.validity_ms // 1000}) was not renewed in time or was released "
               "by hand, and " if self.backend.leased else "")
        return (f"the table lock {self.backend.uri} was lost while {self.owner.what or 'an operation'} held it: "
                f"{self.lost} ({how}another process may have written the table meanwhile). {NOT_COMMITTED}")

    def release(self) -> bool:
        """Stop the heartbeat and remove the lock file; returns False if it was not this holder's any more."""
        self.stop.set()
        # Wait for the heartbeat to end (it may be inside a store call): a daemon thread still running
        # storage code while the interpreter shuts down can abort the process after its work is done.
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout=max(self.heartbeat_s, 1.0))
        deadline = time.monotonic() + RELEASE_RETRY_SECS
        unknown = False  # an earlier attempt may have removed the file though its answer was lost
        while True:
            with self.backend.mutex:  # after a renewal in flight, with its new ETag
                try:
                    outcome = self.backend.release(self.owner)
                    return self.lost is None and (outcome == "released" or (outcome == "gone" and unknown))
                except LockUnavailableError as e:
                    error = e
                    unknown = True
            if time.monotonic() >= deadline:
                log.error("could not remove the table lock %s (%s); it expires with its lease (%s), or run "
                          "`hoodie lock release`", self.backend.uri, error, VALIDITY_SECS)
                return True
            _sleep(None, 0.2 * random.uniform(0.5, 1.5))


# Per process: lock uri -> (thread lock, owning thread, depth, holding, folders made for it).
_held: dict[str, dict[str, Any]] = {}
_held_guard = threading.Lock()


def _forget_after_fork() -> None:
    # A forked child does not hold its parent's locks (its thread may even have the holder's ident).
    global _held_guard
    _held.clear()
    _held_guard = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


class TableLock:
    """The lock of one table (or of one compaction, see :func:`compaction_lock`).

    Use as a context manager: ``with TableLock(storage, options, "upsert"): ...``.
    """

    def __init__(self, storage: Storage, options: Optional[Mapping[str, Any]] = None, what: str = "",
                 name: str = LOCK_FILE) -> None:
        opts = dict(options or {})
        r = read(opts, LockError)
        self.provider = r.get(PROVIDER)
        self.what = what
        self.wait_ms = r.get(WAIT_MS)
        self.retry_ms = max(1, r.get(RETRY_MS))
        self.expire_s = r.get(EXPIRE_MINUTES) * 60
        self.validity_ms = r.get(VALIDITY_SECS) * 1000
        self.heartbeat_s = r.get(HEARTBEAT_SECS)
        folder = r.get(LOCK_PATH)
        if folder:
            lock_storage, rel = Storage(str(folder), storage.storage_options), name
        else:
            lock_storage, rel = storage, f".hoodie/{name}"
        if not lock_storage.is_local and self.provider == FILESYSTEM and (
                self.heartbeat_s < 1 or self.heartbeat_s * MIN_RENEWALS_PER_LEASE * 1000 > self.validity_ms):
            raise LockError(f"{HEARTBEAT_SECS}={self.heartbeat_s} with {VALIDITY_SECS}={self.validity_ms // 1000}: "
                            f"the lease must last at least {MIN_RENEWALS_PER_LEASE} renewal intervals (and renewals "
                            "come at least every second), so that a failed renewal is retried before it runs out; "
                            f"e.g. {VALIDITY_SECS}={DEFAULT_VALIDITY_SECS} with {HEARTBEAT_SECS}={DEFAULT_HEARTBEAT_SECS}")
        self.storage = lock_storage
        self.rel = rel
        self.uri = lock_storage.uri(rel)
        self.table_uri = storage.uri()
        self.lock_path_option = str(folder) if folder else None

    def _backend(self) -> Optional[_Backend]:
        if self.provider == IN_PROCESS:
            return None
        if self.storage.is_local:
            folder = os.path.dirname(self.storage.full(self.rel))
            # Folders made only for the lock file (a table being created) go again on release if
            # nothing else was put in them: a write refused for bad options leaves no trace.
            missing = []
            d = folder
            while not os.path.isdir(d):
                missing.append(d)
                d = os.path.dirname(d)
            os.makedirs(folder, exist_ok=True)
            self._made_dirs = missing
            return _LocalFile(self.storage.full(self.rel))
        # Requests time out well inside the lease, so that a hung one leaves time for retries.
        timeout = max(1.0, min(10.0, self.validity_ms / 1000 / (2 * MIN_RENEWALS_PER_LEASE)))
        backend = {"s3": _S3Object, "azure": _AzureBlob, "gcs": _GcsObject}.get(self.storage.kind)
        if backend is None:
            raise LockError(f"no table lock on {self.uri}: {self.storage.kind} storage has no create-only or conditional "
                            f"write that pyarrow exposes. Put the lock on another store with {LOCK_PATH} (a local "
                            f"folder shared by every writer, or an s3://, gs:// or abfs:// folder), or for a single "
                            f"writer with no other process set {PROVIDER}={IN_PROCESS}")
        return backend(self.storage, self.rel, timeout)

    def _backend_for_inspection(self) -> Optional[_Backend]:
        """The backend, without creating folders (inspection must not change the table)."""
        if self.provider == IN_PROCESS:
            return None
        if self.storage.is_local:
            return _LocalFile(self.storage.full(self.rel))
        return self._backend()

    def _stale(self, data: bytes, age: Optional[float]) -> Optional[str]:
        """Why the lock file ``data`` is stale, or None while its holder may be alive."""
        owner = _Owner.parse(data)
        if self.expire_s and age is not None and age > self.expire_s:
            return f"older than {EXPIRE_MINUTES}={self.expire_s // 60} minute(s)"
        if owner is None:
            return None
        if owner.on_this_host() and not _alive(owner.pid, owner.start):
            return f"its owner (pid {owner.pid} on this host) is gone"
        entry = _held.get(self.uri)
        if owner.is_this_process() and not (entry and entry.get("holding")):
            # This process holds no lock here, yet the file names it: an attempt whose answer was lost
            # (or a release that could not reach the store) left it.
            return "it was left by an earlier attempt of this process"
        if owner.expires_ms and owner.expires_ms < time.time() * 1000:
            return f"its lease expired {(time.time() * 1000 - owner.expires_ms) / 1000:.0f} s ago"
        return None

    def acquire(self) -> None:
        """Take the lock, waiting up to ``hoodie.write.lock.wait_time_ms``; raises :class:`LockError`."""
        me = threading.get_ident()
        with _held_guard:
            entry = _held.setdefault(self.uri, {"lock": threading.RLock(), "thread": None, "depth": 0})
        if entry["thread"] == me:
            holding = entry.get("holding")
            if holding is not None and holding.lost is not None:
                raise LockError(holding.lost_message())
            entry["depth"] += 1
            return
        if not entry["lock"].acquire(timeout=self.wait_ms / 1000):
            raise LockError(f"timed out after {self.wait_ms} ms waiting for {self.uri}, held by another thread "
                            f"of this process; raise {WAIT_MS}")
        try:
            backend = self._backend()
            holding = None
            if backend is not None:
                owner = _Owner.me(self.what, self.validity_ms if backend.leased else 0)
                self._take(backend, owner)
                holding = _Holding(backend, owner, self.table_uri, self.validity_ms, self.heartbeat_s)
        except BaseException:
            entry["lock"].release()
            raise
        entry.update(thread=me, depth=1, holding=holding, made_dirs=getattr(self, "_made_dirs", None))
        if holding is not None and backend is not None and backend.leased:
            holding.start_heartbeat()

    def _take(self, backend: _Backend, owner: _Owner) -> None:
        deadline = time.monotonic() + self.wait_ms / 1000
        waited = False
        error: Optional[LockUnavailableError] = None
        while True:
            try:
                if self._try_once(backend, owner):
                    if waited:
                        log.info("took the table lock %s for %s", backend.uri, self.what)
                    return
                error = None
            except LockUnavailableError as e:
                error = e
            if time.monotonic() >= deadline:
                raise LockError(self._timeout_message(backend, error))
            waited = True
            time.sleep(self.retry_ms / 1000 * random.uniform(0.5, 1.5))

    def _try_once(self, backend: _Backend, owner: _Owner) -> bool:
        """One attempt: create the lock file, or take a stale one over."""
        if backend.try_create(owner):
            return True
        data, age, token = backend.holder()
        if data is None:
            return False
        held = _Owner.parse(data)
        if held is not None and held.nonce == owner.nonce:
            backend.adopt(token)  # an earlier attempt of ours landed, though its answer was lost
            return True
        why = self._stale(data, age)
        if why is None:
            return False
        log.warning("taking over the lock %s: %s (%s)", backend.uri, why,
                    held.describe() if held else "a lock file hoodie did not write")
        return backend.take_over(token, owner)

    def _timeout_message(self, backend: _Backend, error: Optional[LockUnavailableError]) -> str:
        head = f"timed out after {self.wait_ms} ms waiting for the table lock {backend.uri}"
        if error is not None:
            return (f"{head}: the store did not answer ({error}). Retry later, or raise {WAIT_MS}")
        try:
            data, _, _ = backend.holder()
        except LockError:
            data = None
        held = _Owner.parse(data) if data else None
        release = f"`hoodie lock release {self.table_uri}" + (
            f" --set {LOCK_PATH}={self.lock_path_option}`" if self.lock_path_option else "`")
        if held is None:
            return (f"{head}, held by a writer that is not hoodie (Hudi's own lock file?). Wait for it to finish or "
                    f"raise {WAIT_MS}; if no process holds it any more, run {release} --force, or set "
                    f"{EXPIRE_MINUTES} (minutes) to take over lock files older than that")
        text = f"{head}, held by {held.describe()}"
        if held.expires_ms:
            left = (held.expires_ms - time.time() * 1000) / 1000
            lease = f"{VALIDITY_SECS}={held.lease_ms // 1000}" if held.lease_ms else VALIDITY_SECS
            return (f"{text}; its lease ({lease} in that process) expires in {max(0.0, left):.0f} s unless renewed. "
                    f"If that process is still running, wait for it or raise {WAIT_MS}; if it is gone, run {release} "
                    f"(--force if it ran on another host), or lower {VALIDITY_SECS} so that dead holders' leases "
                    "expire sooner")
        return (f"{text}. If that process is still running, wait for it or raise {WAIT_MS}; if it is gone, run "
                f"{release} (--force if it ran on another host), or set {EXPIRE_MINUTES} (minutes) longer than "
                "your longest write to take older lock files over")

    def release(self) -> None:
        """Release one level of the lock (the file goes when the outermost holder releases).

        Raises :class:`LockError` if the lock was lost (taken over, or removed by hand) and nothing
        was committed under it, so that the caller learns it; after a commit (which checked the
        lock) or while another exception propagates, a lost lock is logged instead.
        """
        entry = _held.get(self.uri)
        if entry is None or entry["thread"] != threading.get_ident():
            raise LockError(f"{self.uri} is not held by this thread")
        entry["depth"] -= 1
        if entry["depth"]:
            return
        holding: Optional[_Holding] = entry.get("holding")
        still_ours = True
        try:
            if holding is not None:
                still_ours = holding.release()
        finally:
            for d in entry.get("made_dirs") or []:
                with contextlib.suppress(OSError):  # not empty: the table now exists
                    os.rmdir(d)
            entry.update(thread=None, holding=None, made_dirs=None)
            entry["lock"].release()
        if not still_ours and holding is not None:
            message = holding.lost_message() if holding.lost else (
                f"the table lock {holding.backend.uri} was taken from this process while it held it")
            if holding.committed or sys.exc_info()[1] is not None:
                log.warning("%s; every commit under it had checked the lock before completing", message)
            else:
                raise LockError(message)

    def __enter__(self) -> "TableLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def table_lock(storage: Storage, options: Optional[Mapping[str, Any]] = None, what: str = "") -> Iterator[None]:
    """Hold the table lock of ``storage``'s table for the block (re-entrant)."""
    with TableLock(storage, options, what):
        yield


def compaction_lock(storage: Storage, instant: str, options: Optional[Mapping[str, Any]] = None) -> TableLock:
    """The lock a compaction holds while it executes (``.hoodie/.aux/.locks/compaction_<instant>``).

    Compaction runs outside the table lock (writers go on meanwhile); this lock keeps a second
    runner from rolling back a compaction that a live process is executing.
    """
    opts = {k: v for k, v in (options or {}).items() if k != LOCK_PATH}
    opts[WAIT_MS] = "0"
    return TableLock(storage, opts, f"compaction {instant}", name=f".aux/.locks/compaction_{instant}")


def check_still_held(storage: Storage) -> None:
    """Raise :class:`LockError` if a lock this process holds on ``storage``'s table was lost.

    Called right before the completing write of an instant: a holder whose lock was taken over (its
    lease expired) or removed by hand must not commit. Locally this reads the lock file; on S3 it
    renews the lease with a put conditional on the holder's ETag. A table this process holds no
    lock on is not checked.
    """
    table = storage.uri()
    with _held_guard:
        holdings = [e["holding"] for e in _held.values()
                    if e.get("holding") is not None and e["holding"].table_uri == table]
    for holding in holdings:
        holding.verify()


def lock_status(storage: Storage, options: Optional[Mapping[str, Any]] = None) -> Optional[dict[str, Any]]:
    """Who holds the table lock of ``storage``: None when free, else a dict with ``path``, ``holder``
    (None for a lock file hoodie did not write), ``age_seconds`` and ``stale`` (why the next process
    would take it over, or None)."""
    lock = TableLock(storage, options)
    backend = lock._backend_for_inspection()
    if backend is None:
        return None
    data, age, _ = backend.holder()
    if data is None:
        return None
    owner = _Owner.parse(data)
    return {"path": backend.uri, "holder": None if owner is None else {
        "operation": owner.what, "host": owner.host, "pid": owner.pid, "acquired_ms": owner.acquired_ms,
        "lease_expires_ms": owner.expires_ms or None},
        "age_seconds": None if age is None else round(age, 1), "stale": lock._stale(data, age)}


def break_lock(storage: Storage, options: Optional[Mapping[str, Any]] = None, force: bool = False) -> bool:
    """Remove the table lock left by a process that is gone; returns whether a lock was removed.

    Refuses (``LockError``) while the holder may be alive, unless ``force``: removing the lock of a
    live writer lets another writer in beside it (that writer then fails at its commit).
    """
    status = lock_status(storage, options)
    if status is None:
        return False
    if status["stale"] is None and not force:
        who = status["holder"]
        by = (f"{who['operation']} (pid {who['pid']} on {who['host']})" if who
              else "a writer that is not hoodie")
        raise LockError(f"{status['path']} is held by {by} for {status['age_seconds']} s and may still be in use; "
                        "stop that process first, or pass --force if you are sure it is gone")
    lock = TableLock(storage, options)
    backend = lock._backend_for_inspection()
    assert backend is not None
    data, _, token = backend.holder()
    if data is None:
        return False
    if isinstance(backend, _ConditionalObject):
        backend.etag = token
        if backend.release(_Owner.me("break")) != "released":
            raise LockError(f"{status['path']} changed while it was being removed (another process took it); "
                            "run `hoodie lock show` again")
    else:
        os.unlink(backend.path)  # type: ignore[attr-defined]
    log.warning("removed the table lock %s (%s)", status["path"], status["stale"] or "forced")
    return True


def holds_lock(storage: Storage, options: Optional[Mapping[str, Any]] = None) -> bool:
    """Whether this thread holds the table lock of ``storage`` (for assertions in services)."""
    entry = _held.get(TableLock(storage, options).uri)
    return bool(entry and entry["thread"] == threading.get_ident())


__all__ = ["TableLock", "LockError", "LockUnavailableError", "table_lock", "compaction_lock", "holds_lock",
           "check_still_held", "lock_status", "break_lock"]
