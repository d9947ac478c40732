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
"""

from __future__ import annotations

import abc
import contextlib
import json
import logging
import os
import random
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional

from hoodie.configs import Enum, Int, define, read
from hoodie.errors import HoodieError
from hoodie.format.storage import Storage, _s3_options

log = logging.getLogger("hoodie.lock")

FILESYSTEM = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
IN_PROCESS = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
LOCK_FILE = "lock"
MIN_RENEWALS_PER_LEASE = 3
GUARD_STALE_SECS = 30  # a take-over holds its guard for milliseconds
RELEASE_RETRY_SECS = 10  # how long a release retries an unavailable store before leaving the lease to expire


class LockError(HoodieError):
    """The table lock could not be taken (held by another writer too long) or was lost."""


class LockUnavailableError(LockError):
    """The store holding the lock did not answer (HTTP 5xx, throttling, a timeout, a lost connection):
    the outcome of the request is unknown, and trying again may succeed."""


_G = "Concurrency"
PROVIDER = define("hoodie.write.lock.provider", FILESYSTEM,
                  "Lock provider: Hudi's FileSystemBasedLockProvider (a lock file; a conditional put on S3) or "
                  "InProcessLockProvider (threads of one process only); also filesystem / in_process. Other Hudi "
                  "providers (ZooKeeper, DynamoDB, Hive metastore) are refused.", _G,
                  type=Enum((FILESYSTEM, IN_PROCESS), what="available in hoodie",
                            synonyms={"filesystem": FILESYSTEM, "inprocess": IN_PROCESS, "in_process": IN_PROCESS},
                            hint="(the first takes a lock file, or a conditional put on S3; the second serves one "
                                 "process only)"))
LOCK_PATH = define("hoodie.write.lock.filesystem.path", None,
                   "Folder of the lock file `lock` (default: the table's .hoodie folder).", _G)
EXPIRE_MINUTES = define("hoodie.write.lock.filesystem.expire", 0,
                        "A lock file older than this many minutes is stale and taken over (0: only a dead owner's "
                        "lock on the same host is).", _G, type=Int(minimum=0))
WAIT_MS = define("hoodie.write.lock.wait_time_ms", 60_000, "How long to wait for the table lock before failing, ms.",
                 _G, type=Int(minimum=0, bits=64))
RETRY_MS = define("hoodie.write.lock.wait_time_ms_between_retry", 100,
                  "Pause between attempts to take the lock, ms (randomized).", _G, type=Int(minimum=0, bits=64))
# Hudi's StorageBasedLockProvider uses 300/30 s. hoodie takes a crashed holder's lock over at once
# when it ran on this host, and otherwise waits for its lease: a minute keeps that wait short, and a
# renewal every 5 s leaves room for a dozen failed renewals before the lease runs out.
VALIDITY_SECS = define("hoodie.write.lock.storage.validity.timeout.secs", 60,
                       "Object stores: the lock's lease. A lease not renewed for this long has expired and is taken "
                       "over (a holder on this host whose process is gone at once).", _G, type=Int(minimum=0))
HEARTBEAT_SECS = define("hoodie.write.lock.storage.heartbeat.poll.secs", 5,
                        f"Object stores: how often the holder renews its lease; at most 1/{MIN_RENEWALS_PER_LEASE} of "
                        f"{VALIDITY_SECS}.", _G, type=Int(minimum=0))
CONCURRENCY_MODE = define("hoodie.write.concurrency.mode", "single_writer",
                          "Accepted for Hudi compatibility; hoodie takes the table lock in every mode "
                          "(docs/concurrency.md).", _G)
DEFAULT_WAIT_MS: int = WAIT_MS.default
DEFAULT_RETRY_MS: int = RETRY_MS.default
DEFAULT_VALIDITY_SECS: int = VALIDITY_SECS.default
DEFAULT_HEARTBEAT_SECS: int = HEARTBEAT_SECS.default


def _proc_start(pid: int) -> Optional[str]:
    """The start time of process ``pid`` (Linux: /proc), to tell a reused pid from the owner."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # Field 22 (starttime) counts after the ")" that closes the command name.
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _read_id(path: str, link: bool = False) -> Optional[str]:
    try:
        if link:
            return os.readlink(path)
        with open(path) as f:
            return f.read().strip() or None
    except OSError:
        return None


# Two containers can share a host name; a pid means the same process only within one kernel boot
# and one pid namespace, so the lock records both where Linux tells them.
_BOOT_ID = _read_id("/proc/sys/kernel/random/boot_id")
_PID_NS = _read_id("/proc/self/ns/pid", link=True)


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
    lease_ms: int = 0  # the holder's hoodie.write.lock.storage.validity.timeout.secs, for messages
    boot: Optional[str] = None
    pidns: Optional[str] = None

    @classmethod
    def me(cls, what: str, lease_ms: int = 0) -> "_Owner":
        now = int(time.time() * 1000)
        return cls(socket.gethostname(), os.getpid(), _proc_start(os.getpid()), uuid.uuid4().hex, what, now,
                   now + lease_ms if lease_ms else 0, lease_ms, _BOOT_ID, _PID_NS)

    def to_bytes(self) -> bytes:
        return json.dumps({"host": self.host, "pid": self.pid, "start": self.start, "nonce": self.nonce,
                           "what": self.what, "acquired_ms": self.acquired_ms, "expires_ms": self.expires_ms,
                           "lease_ms": self.lease_ms, "boot": self.boot, "pidns": self.pidns,
                           "writer": "hoodie"}).encode()

    @classmethod
    def parse(cls, data: bytes) -> Optional["_Owner"]:
        """None for a lock file hoodie did not write (Hudi's own, or damaged)."""
        try:
            d = json.loads(data)
            return cls(str(d["host"]), int(d["pid"]), d.get("start"), str(d["nonce"]), str(d.get("what", "")),
                       int(d.get("acquired_ms", 0)), int(d.get("expires_ms", 0)), int(d.get("lease_ms") or 0),
                       d.get("boot"), d.get("pidns"))
        except (ValueError, KeyError, TypeError):
            return None

    def on_this_host(self) -> bool:
        """Whether the owner ran under this kernel and pid namespace, where its pid can be checked."""
        if self.host != socket.gethostname():
            return False
        return all(theirs is None or ours is None or theirs == ours
                   for theirs, ours in ((self.boot, _BOOT_ID), (self.pidns, _PID_NS)))

    def is_this_process(self) -> bool:
        return self.on_this_host() and self.pid == os.getpid() and self.start == _proc_start(os.getpid())

    def describe(self) -> str:
        age = max(0, int(time.time() * 1000) - self.acquired_ms) // 1000
        return f"{self.what or 'an operation'} (pid {self.pid} on {self.host}, for {age} s)"


def _sleep(stop: Optional[threading.Event], seconds: float) -> None:
    """Pause between attempts; a set ``stop`` (the lock was released) ends the pause early."""
    if stop is None:
        time.sleep(seconds)
    else:
        stop.wait(seconds)


class _Backend(abc.ABC):
    """One lock file: try to create it, read it, remove it, take a stale one over.

    Failures of the store that may pass raise :class:`LockUnavailableError`; its callers retry.
    """

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
    def release(self, owner: _Owner) -> str:
        """Remove the lock file if ``owner`` still holds it: ``"released"``; ``"gone"`` if there was no
        lock file, ``"taken"`` if it was another's."""

    @abc.abstractmethod
    def take_over(self, stale: Any, owner: _Owner) -> bool:
        """Replace the stale lock file (version token ``stale``) by ``owner``; False if another won."""

    def adopt(self, token: Any) -> None:
        """The lock file (version ``token``) turned out to be ``owner``'s own (a create whose answer was lost)."""

    def still_held(self, owner: _Owner) -> bool:
        """Whether the lock file is ``owner``'s, extending its lease where it has one."""
        data, _, _ = self.holder()
        held = _Owner.parse(data) if data is not None else None
        return held is not None and held.nonce == owner.nonce

    @property
    def leased(self) -> bool:
        """Whether the holder renews a lease (object stores)."""
        return False


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

    def release(self, owner: _Owner) -> str:
        data, _, _ = self.holder()
        held = _Owner.parse(data) if data is not None else None
        if data is None:
            return "gone"
        if held is None or held.nonce != owner.nonce:
            return "taken"
        os.unlink(self.path)
        return "released"

    def take_over(self, stale: Any, owner: _Owner) -> bool:
        # Under a guard only one process takes over at a time, so the content checked is the content
        # removed: nobody else deletes the stale lock between the check and the unlink.
        guard = _LocalFile(self.path + ".takeover")
        me = _Owner.me("lock take-over")
        if not guard.try_create(me):
            gdata, gage, _ = guard.holder()
            g = _Owner.parse(gdata) if gdata else None
            if gage is not None and (gage > GUARD_STALE_SECS or (g and g.on_this_host()
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


class _ConditionalObject(_Backend):
    """A lock object on an object store, written with conditional requests: create only if absent,
    replace or delete only at the version (ETag, generation) this holder last wrote.

    Subclasses provide the three requests for their store. Every request is a single attempt with
    short timeouts: the lock's own loops retry within the lease, and a request whose answer was lost
    is resolved by reading the object (the nonce tells the holder's own body from another's).
    """

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.etag: Optional[Any] = None  # the version this holder last wrote
        self.mutex = threading.Lock()

    @abc.abstractmethod
    def _put_if(self, body: bytes, version: Optional[Any]) -> Optional[Any]:
        """Write ``body`` if the object is absent (``version`` None) or at ``version``; the new version,
        or None when the condition failed (another's object, or none at all)."""

    @abc.abstractmethod
    def _get(self) -> Optional[tuple[bytes, float, Any]]:
        """(body, age in seconds, version) of the object, or None when there is none."""

    @abc.abstractmethod
    def _delete_if(self, version: Any) -> str:
        """Delete the object at ``version``: ``"released"``, ``"gone"`` (none), or ``"other"`` (another version)."""

    @property
    def leased(self) -> bool:
        return True

    def _put(self, owner: _Owner, version: Optional[Any]) -> bool:
        token = self._put_if(owner.to_bytes(), version)
        if token is None:
            return False
        self.etag = token
        return True

    def _adopt_if_own(self, owner: _Owner) -> bool:
        """After a failed condition: is the object ``owner``'s body under a version this process did not
        see (an earlier request of ours that landed though its answer was lost)? Then take that version."""
        data, _, token = self.holder()
        held = _Owner.parse(data) if data is not None else None
        if held is None or held.nonce != owner.nonce:
            return False
        self.etag = token
        return True

    def try_create(self, owner: _Owner) -> bool:
        return self._put(owner, None)

    def holder(self) -> tuple[Optional[bytes], Optional[float], Any]:
        got = self._get()
        return (None, None, None) if got is None else got

    def adopt(self, token: Any) -> None:
        self.etag = token

    def still_held(self, owner: _Owner) -> bool:
        """Renew the lease (a put conditional on the holder's version): succeeding proves that nobody
        else held the lock since this holder last wrote it."""
        for _ in range(3):  # an own earlier renewal may have landed unseen; each adoption retries once
            if self.etag is not None and self._put(owner, self.etag):
                return True
            if not self._adopt_if_own(owner):
                return False
        return False

    def release(self, owner: _Owner) -> str:
        for _ in range(3):
            if self.etag is None:
                outcome = "gone" if self._get() is None else "other"
            else:
                outcome = self._delete_if(self.etag)
            if outcome in ("released", "gone"):
                return outcome
            if not self._adopt_if_own(owner):
                return "taken"
        return "taken"

    def take_over(self, stale: Any, owner: _Owner) -> bool:
        return self._put(owner, stale)


# S3 error codes after which the lock object is known not to be the caller's version.
_PRECONDITION = ("PreconditionFailed", "412")
_MISSING = ("NoSuchKey", "404")


class _S3Object(_ConditionalObject):
    """The lock on S3: conditional puts (If-None-Match / If-Match on the ETag) through boto3, as pyarrow's
    S3 file system has no conditional writes."""

    def __init__(self, storage: Storage, key: str, timeout_s: float = 10.0) -> None:
        super().__init__(storage.uri(key))
        try:
            import boto3
            import botocore.config
            import botocore.exceptions
        except ImportError:
            raise LockError(
                f"the table lock on {storage.uri(key)} needs conditional puts, which pyarrow's S3 file system "
                "lacks; install boto3 (pip install 'hoodie[s3]'), or for a single writer with no other process "
                f"set {PROVIDER}={IN_PROCESS}") from None
        self._client_error = botocore.exceptions.ClientError
        # Failures after which trying again may succeed; anything else (access denied, no such bucket)
        # is reported at once.
        self._transport_errors = (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError)
        o = _s3_options(storage.storage_options)
        kw: dict[str, Any] = {"region_name": o.get("region")}
        if o.get("access_key"):
            kw.update(aws_access_key_id=o["access_key"], aws_secret_access_key=o.get("secret_key"),
                      aws_session_token=o.get("session_token"))
        if o.get("endpoint_override"):
            kw["endpoint_url"] = f"{o.get('scheme', 'https')}://{o['endpoint_override']}"
        kw["config"] = botocore.config.Config(connect_timeout=timeout_s, read_timeout=timeout_s,
                                              retries={"mode": "standard", "total_max_attempts": 1})
        self.client = boto3.client("s3", **kw)
        full = storage.full(key)
        self.bucket, _, self.key = full.partition("/")

    def _code(self, e: Exception) -> str:
        return str(getattr(e, "response", {}).get("Error", {}).get("Code", ""))

    def _status(self, e: Exception) -> int:
        return int(getattr(e, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)

    def _call(self, op: str, **kw: Any) -> Any:
        """One request; a retryable failure becomes :class:`LockUnavailableError`."""
        try:
            return getattr(self.client, op)(Bucket=self.bucket, Key=self.key, **kw)
        except self._client_error as e:
            code = self._code(e)
            if self._status(e) >= 500 or code in ("SlowDown", "Throttling", "ThrottlingException", "RequestTimeout",
                                                  "InternalError", "ServiceUnavailable", "OperationAborted",
                                                  "ConditionalRequestConflict", "409"):
                raise LockUnavailableError(f"{op} on {self.uri} failed: {code or self._status(e)}") from e
            raise
        except self._transport_errors as e:
            raise LockUnavailableError(f"{op} on {self.uri} failed: {e}") from e

    def _put_if(self, body: bytes, version: Optional[Any]) -> Optional[Any]:
        cond = {"IfNoneMatch": "*"} if version is None else {"IfMatch": version}
        try:
            r = self._call("put_object", Body=body, **cond)
        except self._client_error as e:
            if self._code(e) in _PRECONDITION + _MISSING:
                return None
            raise
        return r["ETag"]

    def _get(self) -> Optional[tuple[bytes, float, Any]]:
        try:
            r = self._call("get_object")
        except self._client_error as e:
            if self._code(e) in _MISSING:
                return None
            raise
        return r["Body"].read(), time.time() - r["LastModified"].timestamp(), r["ETag"]

    def _delete_if(self, version: Any) -> str:
        try:
            self._call("delete_object", IfMatch=version)
            return "released"
        except self._client_error as e:
            if self._code(e) in _MISSING:
                return "gone"
            if self._code(e) in _PRECONDITION:
                return "other"
            raise


class _HttpObject(_ConditionalObject):
    """A lock object reached over a store's REST API with urllib (no SDK needed)."""

    def __init__(self, uri: str, timeout_s: float) -> None:
        super().__init__(uri)
        self.timeout_s = timeout_s

    def _request(self, method: str, url: str, headers: dict[str, str], body: Optional[bytes] = None,
                 ok_missing: tuple[int, ...] = ()) -> tuple[int, dict[str, str], bytes]:
        """One request: (status, headers, body). 5xx, 429, 408, timeouts and lost connections become
        :class:`LockUnavailableError`; statuses in ``ok_missing`` are returned; other errors raise :class:`LockError`."""
        import urllib.error
        import urllib.request

        req = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except urllib.error.HTTPError as e:
            text = e.read()[:500].decode(errors="replace")
            if e.code in ok_missing:
                return e.code, {k.lower(): v for k, v in e.headers.items()}, b""
            if e.code >= 500 or e.code in (408, 429):
                raise LockUnavailableError(f"{method} on {self.uri} failed: HTTP {e.code}") from e
            raise LockError(f"{method} on the lock {self.uri} failed: HTTP {e.code} {text}") from e
        except (urllib.error.URLError, OSError) as e:
            raise LockUnavailableError(f"{method} on {self.uri} failed: {e}") from e


def _http_age(last_modified: Optional[str]) -> float:
    from email.utils import parsedate_to_datetime

    if not last_modified:
        return 0.0
    return max(0.0, time.time() - parsedate_to_datetime(last_modified).timestamp())


class _AzureBlob(_HttpObject):
    """The lock on Azure: Put Blob with ``If-None-Match: *`` / ``If-Match: <ETag>`` and a conditional delete,
    over the Blob REST API with Shared Key (``account_key``) or SAS (``sas_token``) authentication."""

    API_VERSION = "2021-08-06"

    def __init__(self, storage: Storage, key: str, timeout_s: float = 10.0) -> None:
        super().__init__(storage.uri(key), timeout_s)
        o = storage.azure
        self.account = o["account_name"]
        self.key_bytes = None
        self.sas = (o.get("sas_token") or "").lstrip("?")
        if o.get("account_key"):
            import base64

            self.key_bytes = base64.b64decode(o["account_key"])
        elif not self.sas:
            raise LockError(f"the table lock on {self.uri} is a blob written with conditional requests, which needs "
                            "the storage option account_key or sas_token (Azure AD credentials reach the data only); "
                            f"for a single writer with no other process set {PROVIDER}={IN_PROCESS}")
        authority = o.get("blob_storage_authority")
        scheme = o.get("blob_storage_scheme") or "https"
        from urllib.parse import quote

        # A custom authority (an emulator) is addressed path-style with the account first, as pyarrow does.
        self.path = ("/" + self.account if authority else "") + "/" + quote(storage.full(key))
        self.url = f"{scheme}://{authority or self.account + '.blob.core.windows.net'}{self.path}"

    def _send(self, method: str, headers: dict[str, str], body: Optional[bytes] = None,
              query: str = "", ok: tuple[int, ...] = ()) -> tuple[int, dict[str, str], bytes]:
        from email.utils import formatdate

        h = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": self.API_VERSION, **headers}
        if body is not None:
            h["Content-Length"] = str(len(body))
        url = self.url + ("?" + query if query else "")
        if self.key_bytes is not None:
            h["Authorization"] = self._shared_key(method, h, query)
        elif self.sas:
            url += ("&" if query else "?") + self.sas
        return self._request(method, url, h, body, ok)

    def _shared_key(self, method: str, h: dict[str, str], query: str) -> str:
        import base64
        import hashlib
        import hmac

        get = {k.lower(): v for k, v in h.items()}
        length = get.get("content-length", "")
        fields = [method, get.get("content-encoding", ""), get.get("content-language", ""),
                  "" if length == "0" else length, get.get("content-md5", ""), get.get("content-type", ""), "",
                  get.get("if-modified-since", ""), get.get("if-match", ""), get.get("if-none-match", ""),
                  get.get("if-unmodified-since", ""), get.get("range", "")]
        canon_headers = "".join(f"{k}:{v.strip()}\n" for k, v in sorted(get.items()) if k.startswith("x-ms-"))
        resource = f"/{self.account}{self.path}"
        for part in sorted(p for p in query.split("&") if p):
            name, _, value = part.partition("=")
            resource += f"\n{name.lower()}:{value}"
        sig = hmac.new(self.key_bytes or b"", ("\n".join(fields) + "\n" + canon_headers + resource).encode(),
                       hashlib.sha256).digest()
        return f"SharedKey {self.account}:{base64.b64encode(sig).decode()}"

    def _put_if(self, body: bytes, version: Optional[Any]) -> Optional[Any]:
        cond = {"If-None-Match": "*"} if version is None else {"If-Match": str(version)}
        status, headers, _ = self._send("PUT", {"x-ms-blob-type": "BlockBlob", "Content-Type": "application/json",
                                                **cond}, body, ok=(404, 409, 412))
        return None if status in (404, 409, 412) else headers.get("etag")

    def _get(self) -> Optional[tuple[bytes, float, Any]]:
        status, headers, data = self._send("GET", {}, ok=(404,))
        if status == 404:
            return None
        return data, _http_age(headers.get("last-modified")), headers.get("etag")

    def _delete_if(self, version: Any) -> str:
        status, _, _ = self._send("DELETE", {"If-Match": str(version)}, ok=(404, 412))
        if status == 412 and self._get() is None:
            return "gone"  # a failed condition on an object that is not there (Azure answers so)
        return {404: "gone", 412: "other"}.get(status, "released")


class _GcsObject(_HttpObject):
    """The lock on GCS: uploads conditional on ``ifGenerationMatch=0`` (create) or on the holder's generation
    (renew, take over) and a conditional delete, over the JSON API (``access_token`` or anonymous)."""

    def __init__(self, storage: Storage, key: str, timeout_s: float = 10.0) -> None:
        super().__init__(storage.uri(key), timeout_s)
        from urllib.parse import quote

        o = storage.gcs
        endpoint = o.get("endpoint_override") or "storage.googleapis.com"
        self.base = f"{o.get('scheme') or 'https'}://{endpoint}"
        self.bucket, _, name = storage.full(key).partition("/")
        self.name = quote(name, safe="")
        token = o.get("access_token")
        if token:
            self.auth = {"Authorization": f"Bearer {token}"}
        elif o.get("anonymous"):
            self.auth = {}
        else:
            raise LockError(f"the table lock on {self.uri} is an object written with conditional requests, which needs "
                            "the storage option access_token (or anonymous=true against an emulator); default "
                            f"credentials reach the data only. For a single writer set {PROVIDER}={IN_PROCESS}")

    def _put_if(self, body: bytes, version: Optional[Any]) -> Optional[Any]:
        # A multipart upload (metadata + body in one request), where emulators honour the precondition too.
        boundary = uuid.uuid4().hex
        from urllib.parse import unquote

        meta = json.dumps({"name": unquote(self.name), "contentType": "application/json"})
        payload = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{meta}\r\n--{boundary}\r\n"
                   f"Content-Type: application/json\r\n\r\n").encode() + body + f"\r\n--{boundary}--\r\n".encode()
        url = (f"{self.base}/upload/storage/v1/b/{self.bucket}/o?uploadType=multipart"
               f"&ifGenerationMatch={0 if version is None else version}")
        status, _, data = self._request("POST", url, {**self.auth, "Content-Type": f"multipart/related; boundary={boundary}"},
                                        payload, (404, 412))
        return None if status in (404, 412) else json.loads(data)["generation"]

    def _get(self) -> Optional[tuple[bytes, float, Any]]:
        for _ in range(3):  # the object may be replaced between its metadata and its body
            status, _, meta = self._request("GET", f"{self.base}/storage/v1/b/{self.bucket}/o/{self.name}", self.auth,
                                            ok_missing=(404,))
            if status == 404:
                return None
            m = json.loads(meta)
            gen = m["generation"]
            status, _, data = self._request(
                "GET", f"{self.base}/storage/v1/b/{self.bucket}/o/{self.name}?alt=media&ifGenerationMatch={gen}",
                self.auth, ok_missing=(404, 412))
            if status == 200:
                from datetime import datetime

                updated = datetime.fromisoformat(m["updated"].replace("Z", "+00:00")).timestamp()
                return data, max(0.0, time.time() - updated), gen
        raise LockUnavailableError(f"the lock {self.uri} kept changing while it was read")

    def _delete_if(self, version: Any) -> str:
        # GCS honours the conditions of the delete below; fake-gcs-server ignores them, so the generation is
        # also checked first (which leaves only a race of one round trip where the store ignores them).
        status, _, meta = self._request("GET", f"{self.base}/storage/v1/b/{self.bucket}/o/{self.name}", self.auth,
                                        ok_missing=(404,))
        if status == 404:
            return "gone"
        if str(json.loads(meta)["generation"]) != str(version):
            return "other"
        status, _, _ = self._request(
            # generation= names the one version to delete (404 once replaced), ifGenerationMatch= conditions it.
            "DELETE", f"{self.base}/storage/v1/b/{self.bucket}/o/{self.name}?generation={version}"
                      f"&ifGenerationMatch={version}", self.auth,
            ok_missing=(404, 412))
        if status == 412 and self._get() is None:
            return "gone"  # a failed condition on an object that is not there (Azure answers so)
        return {404: "gone", 412: "other"}.get(status, "released")


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
