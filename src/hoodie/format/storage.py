"""Storage access for Hudi tables through ``pyarrow.fs``.

A :class:`Storage` is rooted at a table's base path and speaks in paths relative to it.
Local files and S3-compatible object stores are supported. Two capabilities differ between
them and are exposed as flags instead of being papered over:

* ``supports_symlinks``: only local (POSIX) storage can create symbolic links; object stores
  get copies instead (partial compaction relies on this flag).
* create-only writes (:meth:`Storage.create_new`): local storage uses ``O_EXCL`` so two writers can
  never both create one instant file; object stores check for existence first (best effort
  without conditional puts, which pyarrow does not expose).

Nothing here relies on appending to a file: Hudi 0.14+ never appends to log files either.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import uuid
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator
from urllib.parse import urlparse

import pyarrow.fs as pafs
from hoodie.errors import HoodieError


class StorageError(HoodieError):
    """A storage operation failed; the message names the path and the cause."""


@dataclass(frozen=True)
class FileStatus:
    """One entry of a directory listing."""

    name: str  # base name
    path: str  # relative to the table base path, '/'-separated
    size: int
    is_dir: bool
    mtime_ms: int | None = None


def _s3_options(options: dict[str, Any]) -> dict[str, Any]:
    """Map user-facing storage options (boto-ish names accepted) to ``S3FileSystem`` kwargs."""
    aliases = {
        "aws_access_key_id": "access_key",
        "access_key_id": "access_key",
        "aws_secret_access_key": "secret_key",
        "secret_access_key": "secret_key",
        "aws_session_token": "session_token",
        "aws_region": "region",
        "region_name": "region",
        "endpoint_url": "endpoint_override",
        "aws_endpoint_url": "endpoint_override",
        "endpoint": "endpoint_override",
    }
    out: dict[str, Any] = {}
    for key, value in options.items():
        k = aliases.get(key.lower(), key.lower())
        out[k] = value
    ep = out.get("endpoint_override")
    if isinstance(ep, str) and ep.startswith(("http://", "https://")):
        parsed = urlparse(ep)
        out["endpoint_override"] = parsed.netloc
        out.setdefault("scheme", parsed.scheme)
    if "allow_http" in out:
        if str(out.pop("allow_http")).lower() == "true":
            out.setdefault("scheme", "http")
    out.setdefault("region", "us-east-1")
    known = {
        "access_key", "secret_key", "session_token", "region", "scheme", "endpoint_override",
        "anonymous", "force_virtual_addressing", "request_timeout", "connect_timeout",
    }
    unknown = sorted(set(out) - known)
    if unknown:
        raise StorageError(
            f"unknown S3 storage option(s) {unknown}; use one of {sorted(known | set(aliases))}"
        )
    return out


def _synced_temp(full: str, data: bytes) -> str:
    """Write ``data`` to a unique, fsynced temp file next to ``full``; returns its path."""
    os.makedirs(os.path.dirname(full), exist_ok=True)
    tmp = f"{full}.tmp-{os.getpid()}-{uuid.uuid4().hex}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return tmp


class Storage:
    """File access rooted at a table base path (local directory or ``s3://bucket/prefix``)."""

    def __init__(self, base_uri: str, storage_options: dict[str, Any] | None = None) -> None:
        self.base_uri = base_uri.rstrip("/") if base_uri not in ("/",) else base_uri
        opts = dict(storage_options or {})
        parsed = urlparse(base_uri)
        if parsed.scheme in ("s3", "s3a"):
            self.fs: pafs.FileSystem = pafs.S3FileSystem(**_s3_options(opts))
            self.root = (parsed.netloc + parsed.path).rstrip("/")
            self.is_local = False
        elif parsed.scheme in ("", "file"):
            path = parsed.path if parsed.scheme == "file" else base_uri
            self.fs = pafs.LocalFileSystem()
            self.root = os.path.abspath(path).rstrip("/") or "/"
            self.is_local = True
        else:
            raise StorageError(
                f"unsupported storage scheme {parsed.scheme!r} in {base_uri!r}; "
                "use a local path, file:// or s3://"
            )
        self.storage_options = opts

    # -- capabilities -------------------------------------------------------------------------
    @property
    def supports_symlinks(self) -> bool:
        """True where symbolic links can be created (local POSIX storage only)."""
        return self.is_local and hasattr(os, "symlink")

    # -- paths ---------------------------------------------------------------------------------
    def full(self, rel: str) -> str:
        """Absolute path of ``rel`` inside the filesystem (no scheme)."""
        rel = rel.lstrip("/")
        return self.root if not rel else f"{self.root}/{rel}"

    def uri(self, rel: str = "") -> str:
        """A URI for ``rel`` that other tools understand (absolute local path or s3://...)."""
        return self.full(rel) if self.is_local else "s3://" + self.full(rel)

    def child(self, rel: str) -> "Storage":
        """A storage rooted at a sub-directory, sharing the same filesystem."""
        st = object.__new__(Storage)
        st.__dict__.update(self.__dict__)
        st.root = self.full(rel)
        st.base_uri = self.uri(rel)
        return st

    # -- reading -------------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        """Whether a file or directory exists at ``rel``."""
        info = self.fs.get_file_info(self.full(rel))
        return info.type != pafs.FileType.NotFound

    def is_file(self, rel: str) -> bool:
        """Whether ``rel`` is an existing regular file (a symlink to a file counts)."""
        return self.fs.get_file_info(self.full(rel)).type == pafs.FileType.File

    def size(self, rel: str) -> int:
        """Size in bytes of the file at ``rel``."""
        info = self.fs.get_file_info(self.full(rel))
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(self.uri(rel))
        return int(info.size or 0)

    def read_bytes(self, rel: str) -> bytes:
        """The whole content of a (small) file."""
        try:
            with self.fs.open_input_stream(self.full(rel)) as f:
                return f.read()
        except FileNotFoundError:
            raise
        except OSError as e:
            if "not found" in str(e).lower() or "no such file" in str(e).lower():
                raise FileNotFoundError(self.uri(rel)) from e
            raise StorageError(f"cannot read {self.uri(rel)}: {e}") from e

    def open_input(self, rel: str) -> Any:
        """A seekable random-access file for ``rel`` (used for streaming log reads)."""
        try:
            return self.fs.open_input_file(self.full(rel))
        except FileNotFoundError:
            raise
        except OSError as e:
            if "not found" in str(e).lower() or "no such file" in str(e).lower():
                raise FileNotFoundError(self.uri(rel)) from e
            raise StorageError(f"cannot open {self.uri(rel)}: {e}") from e

    def list_dir(self, rel: str = "") -> list[FileStatus]:
        """Entries directly under ``rel``; an absent directory lists as empty."""
        sel = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=False)
        out: list[FileStatus] = []
        prefix = rel.strip("/")
        for info in self.fs.get_file_info(sel):
            name = info.base_name
            path = f"{prefix}/{name}" if prefix else name
            mtime = None
            if info.mtime_ns is not None:
                mtime = info.mtime_ns // 1_000_000
            out.append(
                FileStatus(
                    name=name,
                    path=path,
                    size=int(info.size or 0),
                    is_dir=info.type == pafs.FileType.Directory,
                    mtime_ms=mtime,
                )
            )
        if self.is_local:
            out.extend(self._dangling_links(rel, prefix, {s.name for s in out}))
        out.sort(key=lambda s: s.name)
        return out

    def _dangling_links(self, rel: str, prefix: str, listed: set[str]) -> list[FileStatus]:
        """Symlinks whose target is gone, which pyarrow's listing leaves out without a word.

        Listed (size 0) so that a reader that needs one fails naming it, and the cleaner can remove
        one with its slice, instead of a log file silently dropping out of a file slice.
        """
        try:
            entries = list(os.scandir(self.full(rel)))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [FileStatus(name=e.name, path=f"{prefix}/{e.name}" if prefix else e.name, size=0, is_dir=False)
                for e in entries if e.name not in listed and e.is_symlink() and not os.path.exists(e.path)]

    def walk_files(self, rel: str = "") -> Iterator[FileStatus]:
        """All files below ``rel`` (recursive)."""
        sel = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=True)
        root_len = len(self.root) + 1
        for info in self.fs.get_file_info(sel):
            if info.type == pafs.FileType.File:
                path = info.path[root_len:]
                yield FileStatus(info.base_name, path, int(info.size or 0), False)

    # -- writing -------------------------------------------------------------------------------
    def mkdirs(self, rel: str) -> None:
        """Create a directory and its parents (a no-op on object stores)."""
        self.fs.create_dir(self.full(rel), recursive=True)

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write (or replace) a whole file. Local writes go through a temp file and rename,
        so a reader never sees a half-written file."""
        full = self.full(rel)
        if self.is_local:
            os.replace(_synced_temp(full, data), full)
            return
        with self.fs.open_output_stream(full) as f:
            f.write(data)

    def create_new(self, rel: str, data: bytes = b"") -> None:
        """Create a file that must not exist yet (create-only semantics).

        Raises :class:`FileExistsError` if it does. Local storage makes this atomic (a hard link
        fails with EEXIST); object stores check existence before the put.
        """
        full = self.full(rel)
        if self.is_local:
            # Write to a temp file then hard-link it into place: link() fails atomically if the
            # name exists, and readers never see a partially written instant file.
            tmp = _synced_temp(full, data)
            try:
                os.link(tmp, full)
            except FileExistsError:
                raise FileExistsError(f"{self.uri(rel)} already exists") from None
            finally:
                os.unlink(tmp)
            return
        if self.exists(rel):
            raise FileExistsError(f"{self.uri(rel)} already exists")
        with self.fs.open_output_stream(full) as f:
            f.write(data)

    def open_output(self, rel: str) -> BinaryIO:
        """A writable stream for a new file (used to stream large base/log files)."""
        full = self.full(rel)
        if self.is_local:
            os.makedirs(os.path.dirname(full), exist_ok=True)
        return self.fs.open_output_stream(full)  # type: ignore[return-value]

    def delete(self, rel: str, missing_ok: bool = True) -> bool:
        """Delete one file (or symlink); returns whether something was deleted."""
        full = self.full(rel)
        if self.is_local:
            try:
                os.unlink(full)
                return True
            except FileNotFoundError:
                if missing_ok:
                    return False
                raise
        try:
            self.fs.delete_file(full)
            return True
        except FileNotFoundError:
            if missing_ok:
                return False
            raise
        except OSError as e:
            if "not found" in str(e).lower() or "no such" in str(e).lower():
                if missing_ok:
                    return False
                raise FileNotFoundError(self.uri(rel)) from e
            raise

    def delete_dir(self, rel: str) -> None:
        """Delete a directory and everything in it; absent directories are fine."""
        full = self.full(rel)
        if self.is_local:
            shutil.rmtree(full, ignore_errors=True)
            return
        try:
            self.fs.delete_dir(full)
        except (FileNotFoundError, OSError):
            pass

    def move(self, src: str, dst: str) -> None:
        """Move a file (rename locally; copy+delete on object stores)."""
        if self.is_local:
            os.makedirs(os.path.dirname(self.full(dst)), exist_ok=True)
            os.replace(self.full(src), self.full(dst))
        else:
            self.fs.copy_file(self.full(src), self.full(dst))
            self.fs.delete_file(self.full(src))

    def copy(self, src: str, dst: str) -> None:
        """Copy a file to a new name."""
        if self.is_local:
            os.makedirs(os.path.dirname(self.full(dst)), exist_ok=True)
        self.fs.copy_file(self.full(src), self.full(dst))

    def symlink(self, target: str, link: str) -> None:
        """Create ``link`` pointing at ``target`` (both relative to the base path).

        The link stores a path relative to the link's directory so the table can be moved.
        """
        if not self.supports_symlinks:
            raise StorageError(
                f"{self.base_uri} does not support symlinks; copy {target} instead"
            )
        link_full = self.full(link)
        rel_target = posixpath.relpath(self.full(target), posixpath.dirname(link_full))
        os.symlink(rel_target, link_full)

    def is_symlink(self, rel: str) -> bool:
        """Whether ``rel`` is a symbolic link (always False on object stores)."""
        return self.is_local and os.path.islink(self.full(rel))

    def __repr__(self) -> str:
        return f"Storage({self.base_uri!r})"
