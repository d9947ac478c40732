"""The lock blob on Azure Blob Storage (conditional requests on the blob's ETag, over HTTP)."""

from __future__ import annotations

import logging
from typing import Any, Optional

from hoodie.format.storage import Storage
from hoodie.configs.lock import IN_PROCESS, PROVIDER
from hoodie.format.lock.base import LockError
from hoodie.format.lock.conditional import _HttpObject, _http_age

log = logging.getLogger("hoodie.lock")


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
