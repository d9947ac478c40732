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

A holder that dies leaves the file behind. It is taken over when it is provably stale: on local
storage the owner ran on this host and its process is gone (pid and start time), or the file is
older than ``hoodie.write.lock.filesystem.expire`` minutes (Hudi's key; 0, the default, never);
on object stores the holder renews a lease (every ``...storage.heartbeat.poll.secs``) and a lease
not renewed for ``...storage.validity.timeout.secs`` expires. The take-over is atomic: locally
under a short-lived guard file, on S3 by a put conditional on the stale lock's ETag.

The lock is re-entrant within a process (a thread that holds it can take it again); other threads
of the process wait as other processes do.
"""

from __future__ import annotations

import abc
import contextlib
import json
import logging
import os
import random
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional
from urllib.parse import urlparse

from hoodie.format.storage import Storage, _s3_options

log = logging.getLogger("hoodie.lock")

PROVIDER = "hoodie.write.lock.provider"
LOCK_PATH = "hoodie.write.lock.filesystem.path"
EXPIRE_MINUTES = "hoodie.write.lock.filesystem.expire"
WAIT_MS = "hoodie.write.lock.wait_time_ms"
RETRY_MS = "hoodie.write.lock.wait_time_ms_between_retry"
VALIDITY_SECS = "hoodie.write.lock.storage.validity.timeout.secs"
HEARTBEAT_SECS = "hoodie.write.lock.storage.heartbeat.poll.secs"

FILESYSTEM = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
IN_PROCESS = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
_PROVIDERS = {
    "": FILESYSTEM, "filesystem": FILESYSTEM, FILESYSTEM: FILESYSTEM,
    "inprocess": IN_PROCESS, "in_process": IN_PROCESS, IN_PROCESS: IN_PROCESS,
}
LOCK_FILE = "lock"
DEFAULT_WAIT_MS = 60_000
DEFAULT_RETRY_MS = 100
DEFAULT_VALIDITY_SECS = 300
DEFAULT_HEARTBEAT_SECS = 30
GUARD_STALE_SECS = 30  # a take-over holds its guard for milliseconds


class LockError(Exception):
    """The table lock could not be taken (held by another writer too long) or was lost."""


def _register() -> None:
    from hoodie.configs import define

    g = "Concurrency"
    define(PROVIDER, FILESYSTEM, "Lock provider: Hudi's FileSystemBasedLockProvider (a lock file; a conditional "
           "put on S3) or InProcessLockProvider (threads of one process only). Other Hudi providers "
           "(ZooKeeper, DynamoDB, Hive metastore) are refused.", g)
    define(LOCK_PATH, None, "Folder of the lock file `lock` (default: the table's .hoodie folder).", g)
    define(EXPIRE_MINUTES, "0", "A lock file older than this many minutes is stale and taken over (0: only a "
           "dead owner's lock on the same host is).", g)
    define(WAIT_MS, str(DEFAULT_WAIT_MS), "How long to wait for the table lock before failing, ms.", g)
    define(RETRY_MS, str(DEFAULT_RETRY_MS), "Pause between attempts to take the lock, ms (randomized).", g)
    define(VALIDITY_SECS, str(DEFAULT_VALIDITY_SECS), "Object stores: a lock lease not renewed for this long "
           "has expired and is taken over.", g)
    define(HEARTBEAT_SECS, str(DEFAULT_HEARTBEAT_SECS), "Object stores: how often the holder renews its "
           "lease.", g)
    define("hoodie.write.concurrency.mode", "single_writer", "Accepted for Hudi compatibility; hoodie takes "
           "the table lock in every mode (docs/concurrency.md).", g)


_register()


def _int(options: Mapping[str, Any], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None or str(raw).strip() == "":
        return default
    try:
        v = int(str(raw).strip())
    except ValueError:
        raise LockError(f"{key}={raw!r} is not an integer") from None
    if v < 0:
        raise LockError(f"{key}={raw!r} must not be negative")
    return v


def _proc_start(pid: int) -> Optional[str]:
    """The start time of process ``pid`` (Linux: /proc), to tell a reused pid from the owner."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # Field 22 (starttime) counts after the ")" that closes the command name.
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _alive(pid: int, start: Optional[str]) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return start is None or _proc_start(pid) in (None, start)


@dataclass
class _Owner:
    """What a lock file says about its holder."""

    host: str
    pid: int
    start: Optional[str]
    nonce: str
    what: str
    acquired_ms: int
    expires_ms: int = 0  # object stores: the lease

    @classmethod
    def me(cls, what: str, lease_ms: int = 0) -> "_Owner":
        now = int(time.time() * 1000)
        return cls(socket.gethostname(), os.getpid(), _proc_start(os.getpid()), uuid.uuid4().hex, what, now,
                   now + lease_ms if lease_ms else 0)

    def to_bytes(self) -> bytes:
        return json.dumps({"host": self.host, "pid": self.pid, "start": self.start, "nonce": self.nonce,
                           "what": self.what, "acquired_ms": self.acquired_ms, "expires_ms": self.expires_ms,
                           "writer": "hoodie"}).encode()

    @classmethod
    def parse(cls, data: bytes) -> Optional["_Owner"]:
        """None for a lock file hoodie did not write (Hudi's own, or damaged)."""
        try:
            d = json.loads(data)
            return cls(str(d["host"]), int(d["pid"]), d.get("start"), str(d["nonce"]), str(d.get("what", "")),
                       int(d.get("acquired_ms", 0)), int(d.get("expires_ms", 0)))
        except (ValueError, KeyError, TypeError):
            return None

    def describe(self) -> str:
        age = max(0, int(time.time() * 1000) - self.acquired_ms) // 1000
        return f"{self.what or 'an operation'} (pid {self.pid} on {self.host}, for {age} s)"


class _Backend(abc.ABC):
    """One lock file: try to create it, read it, remove it, take a stale one over."""

    uri: str
    # Serializes the holder's own writes to the lock (lease renewals against the release).
    mutex: threading.Lock

    @abc.abstractmethod
    def try_create(self, owner: _Owner) -> bool:
        """Create the lock file holding ``owner``; False if it exists already."""

    @abc.abstractmethod
    def holder(self) -> tuple[Optional[bytes], Optional[float], Any]:
        """(content, age in seconds, version token) of the lock file, or (None, None, None)."""

    @abc.abstractmethod
    def release(self, owner: _Owner) -> None:
        """Remove the lock file if ``owner`` still holds it."""

    @abc.abstractmethod
    def take_over(self, stale: Any, owner: _Owner) -> bool:
        """Replace the stale lock file (version token ``stale``) by ``owner``; False if another won."""

    def renew(self, owner: _Owner) -> bool:
        """Extend the holder's lease; local lock files have none, so there is nothing to do."""
        return True


class _LocalFile(_Backend):
    def __init__(self, path: str) -> None:
        self.path = path
        self.uri = path
        self.mutex = threading.Lock()

    def try_create(self, owner: _Owner) -> bool:
        st = Storage(os.path.dirname(self.path))
        try:
            st.create_new(os.path.basename(self.path), owner.to_bytes())
            return True
        except FileExistsError:
            return False

    def holder(self) -> tuple[Optional[bytes], Optional[float], Any]:
        try:
            with open(self.path, "rb") as f:
                data = f.read()
                age = time.time() - os.fstat(f.fileno()).st_mtime
        except FileNotFoundError:
            return None, None, None
        return data, age, data

    def release(self, owner: _Owner) -> None:
        data, _, _ = self.holder()
        if data is None or _Owner.parse(data) is None or _Owner.parse(data).nonce != owner.nonce:
            raise LockError(f"{self.uri} was taken from this process while it held it (it was considered "
                            "stale); check hoodie.write.lock.filesystem.expire against how long operations run")
        os.unlink(self.path)

    def take_over(self, stale: Any, owner: _Owner) -> bool:
        # Under a guard only one process takes over at a time, so the content checked is the content
        # removed: nobody else deletes the stale lock between the check and the unlink.
        guard = _LocalFile(self.path + ".takeover")
        me = _Owner.me("lock take-over")
        if not guard.try_create(me):
            gdata, gage, _ = guard.holder()
            g = _Owner.parse(gdata) if gdata else None
            if gage is not None and (gage > GUARD_STALE_SECS or (g and g.host == me.host
                                                                 and not _alive(g.pid, g.start))):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(guard.path)
            return False
        try:
            data, _, _ = self.holder()
            if data != stale:
                return False
            os.unlink(self.path)
            return self.try_create(owner)
        finally:
            os.unlink(guard.path)


class _S3Object(_Backend):
    """A lock object written with conditional puts (If-None-Match / If-Match on the ETag)."""

    def __init__(self, storage: Storage, key: str) -> None:
        try:
            import boto3
            import botocore.exceptions
        except ImportError:
            raise LockError(
                f"the table lock on {storage.uri(key)} needs conditional puts, which pyarrow's S3 file system "
                "lacks; install boto3 (pip install 'hoodie[s3]'), or for a single writer with no other process "
                f"set {PROVIDER}={IN_PROCESS}") from None
        self._errors = botocore.exceptions.ClientError
        o = _s3_options(storage.storage_options)
        kw: dict[str, Any] = {"region_name": o.get("region")}
        if o.get("access_key"):
            kw.update(aws_access_key_id=o["access_key"], aws_secret_access_key=o.get("secret_key"),
                      aws_session_token=o.get("session_token"))
        if o.get("endpoint_override"):
            kw["endpoint_url"] = f"{o.get('scheme', 'https')}://{o['endpoint_override']}"
        self.client = boto3.client("s3", **kw)
        full = storage.full(key)
        self.bucket, _, self.key = full.partition("/")
        self.uri = storage.uri(key)
        self.etag: Optional[str] = None
        self.mutex = threading.Lock()

    def _code(self, e: Exception) -> str:
        return str(getattr(e, "response", {}).get("Error", {}).get("Code", ""))

    def _put(self, owner: _Owner, **cond: str) -> bool:
        try:
            r = self.client.put_object(Bucket=self.bucket, Key=self.key, Body=owner.to_bytes(), **cond)
        except self._errors as e:
            if self._code(e) in ("PreconditionFailed", "ConditionalRequestConflict", "412", "409"):
                return False
            raise
        self.etag = r["ETag"]
        return True

    def try_create(self, owner: _Owner) -> bool:
        return self._put(owner, IfNoneMatch="*")

    def holder(self) -> tuple[Optional[bytes], Optional[float], Any]:
        try:
            r = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except self._errors as e:
            if self._code(e) in ("NoSuchKey", "404"):
                return None, None, None
            raise
        data = r["Body"].read()
        age = time.time() - r["LastModified"].timestamp()
        return data, age, r["ETag"]

    def renew(self, owner: _Owner) -> bool:
        return self._put(owner, IfMatch=self.etag or "")

    def release(self, owner: _Owner) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self.key, IfMatch=self.etag or "")
        except self._errors as e:
            if self._code(e) in ("PreconditionFailed", "412", "NoSuchKey", "404"):
                raise LockError(f"{self.uri} was taken from this process while it held it (its lease expired)") from e
            raise

    def take_over(self, stale: Any, owner: _Owner) -> bool:
        return self._put(owner, IfMatch=stale)


# Per process: lock uri -> (thread lock, owning thread, depth, backend, owner, heartbeat stop event).
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
        provider = str(opts.get(PROVIDER) or "").strip()
        if provider not in _PROVIDERS:
            raise LockError(f"{PROVIDER}={provider!r} is not available in hoodie; use {FILESYSTEM} (a lock file, "
                            f"or a conditional put on S3) or {IN_PROCESS} (one process only)")
        self.provider = _PROVIDERS[provider]
        self.what = what
        self.wait_ms = _int(opts, WAIT_MS, DEFAULT_WAIT_MS)
        self.retry_ms = max(1, _int(opts, RETRY_MS, DEFAULT_RETRY_MS))
        self.expire_s = _int(opts, EXPIRE_MINUTES, 0) * 60
        self.validity_ms = _int(opts, VALIDITY_SECS, DEFAULT_VALIDITY_SECS) * 1000
        self.heartbeat_s = max(1, _int(opts, HEARTBEAT_SECS, DEFAULT_HEARTBEAT_SECS))
        folder = opts.get(LOCK_PATH)
        if folder:
            lock_storage, rel = Storage(str(folder), storage.storage_options), name
        else:
            lock_storage, rel = storage, f".hoodie/{name}"
        self.storage = lock_storage
        self.rel = rel
        self.uri = lock_storage.uri(rel)

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
        if urlparse(self.storage.base_uri).scheme in ("s3", "s3a"):
            return _S3Object(self.storage, self.rel)
        raise LockError(f"no lock for {self.uri}: unsupported storage")

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
        if owner.expires_ms and owner.expires_ms < time.time() * 1000:
            return "its lease expired"
        if owner.host == socket.gethostname() and not owner.expires_ms and not _alive(owner.pid, owner.start):
            return f"its owner (pid {owner.pid}) is gone"
        return None

    def acquire(self) -> None:
        """Take the lock, waiting up to ``hoodie.write.lock.wait_time_ms``; raises :class:`LockError`."""
        me = threading.get_ident()
        with _held_guard:
            entry = _held.setdefault(self.uri, {"lock": threading.RLock(), "thread": None, "depth": 0})
        if entry["thread"] == me:
            entry["depth"] += 1
            return
        if not entry["lock"].acquire(timeout=self.wait_ms / 1000):
            raise LockError(f"timed out after {self.wait_ms} ms waiting for {self.uri}, held by another thread "
                            f"of this process; raise {WAIT_MS}")
        try:
            backend = self._backend()
            owner = _Owner.me(self.what, self.validity_ms if isinstance(backend, _S3Object) else 0)
            if backend is not None:
                self._take(backend, owner)
        except BaseException:
            entry["lock"].release()
            raise
        entry.update(thread=me, depth=1, backend=backend, owner=owner, stop=None,
                     made_dirs=getattr(self, "_made_dirs", None))
        if isinstance(backend, _S3Object):
            entry["stop"] = self._heartbeat(backend, owner)

    def _take(self, backend: _Backend, owner: _Owner) -> None:
        deadline = time.monotonic() + self.wait_ms / 1000
        waited = False
        while True:
            if backend.try_create(owner):
                if waited:
                    log.info("took the table lock %s for %s", backend.uri, self.what)
                return
            data, age, token = backend.holder()
            if data is not None:
                why = self._stale(data, age)
                if why is not None:
                    log.warning("taking over the lock %s: %s (%s)", backend.uri, why,
                                (_Owner.parse(data) or _Owner("?", 0, None, "", "unknown", 0)).describe())
                    if backend.take_over(token, owner):
                        return
            if time.monotonic() >= deadline:
                held = _Owner.parse(data) if data else None
                by = held.describe() if held else "a writer that is not hoodie (Hudi's own lock file?)"
                raise LockError(f"timed out after {self.wait_ms} ms waiting for the table lock {backend.uri}, held "
                                f"by {by}. Wait for it to finish or raise {WAIT_MS}; if no process holds it any "
                                f"more, delete the file (or set {EXPIRE_MINUTES})")
            waited = True
            time.sleep(self.retry_ms / 1000 * random.uniform(0.5, 1.5))

    def _heartbeat(self, backend: _Backend, owner: _Owner) -> threading.Event:
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.heartbeat_s):
                with backend.mutex:
                    if stop.is_set():  # released meanwhile: a renewal now would re-create nothing
                        return
                    owner.expires_ms = int(time.time() * 1000) + self.validity_ms
                    renewed = backend.renew(owner)
                if not renewed:
                    log.error("lost the table lock %s: its lease could not be renewed", backend.uri)
                    return

        threading.Thread(target=beat, name=f"hoodie-lock-{self.rel}", daemon=True).start()
        return stop

    def release(self) -> None:
        """Release one level of the lock (the file goes when the outermost holder releases)."""
        entry = _held.get(self.uri)
        if entry is None or entry["thread"] != threading.get_ident():
            raise LockError(f"{self.uri} is not held by this thread")
        entry["depth"] -= 1
        if entry["depth"]:
            return
        try:
            if entry.get("stop") is not None:
                entry["stop"].set()
            if entry.get("backend") is not None:
                with entry["backend"].mutex:  # after a renewal in flight, with its new ETag
                    entry["backend"].release(entry["owner"])
        finally:
            for d in entry.get("made_dirs") or []:
                with contextlib.suppress(OSError):  # not empty: the table now exists
                    os.rmdir(d)
            entry.update(thread=None, backend=None, owner=None, stop=None, made_dirs=None)
            entry["lock"].release()

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
    live writer lets another writer in beside it.
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
    if isinstance(backend, _S3Object):
        backend.etag = token
        backend.release(_Owner.me("break"))
    else:
        os.unlink(backend.path)  # type: ignore[attr-defined]
    log.warning("removed the table lock %s (%s)", status["path"], status["stale"] or "forced")
    return True


def holds_lock(storage: Storage, options: Optional[Mapping[str, Any]] = None) -> bool:
    """Whether this thread holds the table lock of ``storage`` (for assertions in services)."""
    entry = _held.get(TableLock(storage, options).uri)
    return bool(entry and entry["thread"] == threading.get_ident())


__all__ = ["TableLock", "LockError", "table_lock", "compaction_lock", "holds_lock", "lock_status", "break_lock"]
