"""The lock object on Google Cloud Storage (conditional requests on the object's generation, over HTTP)."""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any, Optional

from hoodie.format.storage import Storage
from hoodie.configs.lock import IN_PROCESS, PROVIDER
from hoodie.format.lock.base import LockError, LockUnavailableError
from hoodie.format.lock.conditional import _HttpObject

log = logging.getLogger("hoodie.lock")


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
