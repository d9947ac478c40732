"""Lock objects on object stores, written with conditional requests: the shared steps
(:class:`_ConditionalObject`: create if absent, renew and release only while the object is the
holder's, take a stale one over conditional on its version) and the HTTP client of the stores
reached without an SDK (:class:`_HttpObject`)."""

from __future__ import annotations

import abc
import logging
import threading
import time
from typing import Any, Optional

from hoodie.format.lock.base import LockError, LockUnavailableError, _Backend, _Owner

log = logging.getLogger("hoodie.lock")


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
