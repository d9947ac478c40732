"""What every lock backend shares: the provider keys (``hoodie.write.lock.*``), the errors, the
owner record a lock file holds (who, where, since when; whether its process is provably gone) and the
:class:`_Backend` interface (create, read, release, take over one lock file)."""

from __future__ import annotations

import abc
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Optional

from hoodie.configs.lock import HEARTBEAT_SECS, RETRY_MS, VALIDITY_SECS, WAIT_MS
from hoodie.errors import HoodieError


LOCK_FILE = "lock"
GUARD_STALE_SECS = 30  # a take-over holds its guard for milliseconds
RELEASE_RETRY_SECS = 10  # how long a release retries an unavailable store before leaving the lease to expire


class LockError(HoodieError):
    """The table lock could not be taken (held by another writer too long) or was lost."""


class LockUnavailableError(LockError):
    """The store holding the lock did not answer (HTTP 5xx, throttling, a timeout, a lost connection):
    the outcome of the request is unknown, and trying again may succeed."""


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
