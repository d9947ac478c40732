"""The lock object on S3 (boto3: conditional puts, ``If-None-Match: *`` and ``If-Match`` on the ETag,
since pyarrow's S3 file system has no conditional writes)."""

from __future__ import annotations

import logging
import time
from typing import Any, Optional

from hoodie.format.storage import Storage, _s3_options
from hoodie.configs.lock import IN_PROCESS, PROVIDER
from hoodie.format.lock.base import LockError, LockUnavailableError
from hoodie.format.lock.conditional import _ConditionalObject, _MISSING, _PRECONDITION

log = logging.getLogger("hoodie.lock")


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
