"""Storage access for Hudi tables through ``pyarrow.fs``.

A :class:`Storage` is rooted at a table's base path and speaks in paths relative to it.
Local files, S3-compatible object stores (``s3://``), Google Cloud Storage (``gs://``), Azure
(``abfs://`` / ``abfss://``) and HDFS (``hdfs://``, where libhdfs loads) are supported (docs/storage.md).
Two capabilities differ between them and are exposed as flags instead of being papered over:

* ``supports_symlinks``: only local (POSIX) storage can create symbolic links; object stores
  get copies instead (partial compaction relies on this flag).
* create-only writes (:meth:`Storage.create_new`): local storage uses ``O_EXCL`` so two writers can
  never both create one instant file; object stores check for existence first (best effort
  without conditional puts, which pyarrow does not expose).

Nothing here relies on appending to a file: Hudi 0.14+ never appends to log files either.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import datetime
import os
import posixpath
import shutil
import threading
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


def _split_endpoint(out: dict[str, Any], key: str, scheme_key: str) -> None:
    """``http://host:port`` in option ``key`` -> ``host:port`` plus ``scheme_key=http``."""
    ep = out.get(key)
    if isinstance(ep, str) and ep.startswith(("http://", "https://")):
        parsed = urlparse(ep)
        out[key] = parsed.netloc
        out.setdefault(scheme_key, parsed.scheme)


def _refuse_unknown(store: str, out: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(out) - known)
    if unknown:
        raise StorageError(f"unknown {store} storage option(s) {unknown}; use one of {sorted(known)}")


def _true(value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1", "yes")


AZURE_OPTIONS = {"account_name", "account_key", "sas_token", "blob_storage_authority", "blob_storage_scheme",
                 "dfs_storage_authority", "dfs_storage_scheme", "client_id", "client_secret", "tenant_id"}
GCS_OPTIONS = {"anonymous", "access_token", "target_service_account", "credential_token_expiration",
               "default_bucket_location", "scheme", "endpoint_override", "default_metadata", "retry_time_limit",
               "project_id"}
HDFS_OPTIONS = {"user", "replication", "buffer_size", "default_block_size", "kerb_ticket", "extra_conf"}


def _azure_options(options: dict[str, Any], account: str) -> dict[str, Any]:
    """``AzureFileSystem`` kwargs from storage options (named as pyarrow names them). The account
    comes from the URI (``container@account.dfs.core.windows.net``) unless ``account_name`` is given;
    an authority given as ``http://host:port`` sets its scheme too (Azurite)."""
    out = {k.lower(): v for k, v in options.items()}
    _refuse_unknown("Azure", out, AZURE_OPTIONS)
    out.setdefault("account_name", account)
    if not out["account_name"]:
        raise StorageError("no Azure storage account: use abfs://container@ACCOUNT.dfs.core.windows.net/path "
                           "or set the storage option account_name")
    _split_endpoint(out, "blob_storage_authority", "blob_storage_scheme")
    _split_endpoint(out, "dfs_storage_authority", "dfs_storage_scheme")
    return out


def _gcs_options(options: dict[str, Any]) -> dict[str, Any]:
    """``GcsFileSystem`` kwargs from storage options (named as pyarrow names them; ``endpoint_override``
    may carry its scheme, ``http://127.0.0.1:4443``; ``retry_time_limit`` in seconds)."""
    out = {k.lower(): v for k, v in options.items()}
    _refuse_unknown("GCS", out, GCS_OPTIONS)
    _split_endpoint(out, "endpoint_override", "scheme")
    if "anonymous" in out:
        out["anonymous"] = _true(out["anonymous"])
    if "retry_time_limit" in out and not isinstance(out["retry_time_limit"], datetime.timedelta):
        out["retry_time_limit"] = datetime.timedelta(seconds=float(out["retry_time_limit"]))
    return out


def _hdfs_filesystem(host: str, port: int, options: dict[str, Any]) -> pafs.FileSystem:
    """A ``HadoopFileSystem``, or a :class:`StorageError` naming what libhdfs needs when it does not load."""
    out = {k.lower(): v for k, v in options.items()}
    _refuse_unknown("HDFS", out, HDFS_OPTIONS)
    try:
        return pafs.HadoopFileSystem(host or "default", port, **out)
    except (OSError, RuntimeError) as e:
        env = {k: os.environ.get(k) or "unset" for k in ("JAVA_HOME", "HADOOP_HOME", "ARROW_LIBHDFS_DIR")}
        classpath = "set" if os.environ.get("CLASSPATH") else "unset"
        raise StorageError(
            f"cannot open hdfs://{host}{':' + str(port) if port else ''}: {e}. HDFS goes through libhdfs, which needs "
            f"a Java runtime (JAVA_HOME={env['JAVA_HOME']}), a Hadoop installation (HADOOP_HOME={env['HADOOP_HOME']}; "
            f"libhdfs.so in $HADOOP_HOME/lib/native or ARROW_LIBHDFS_DIR={env['ARROW_LIBHDFS_DIR']}) and Hadoop's "
            f"jars on the CLASSPATH ({classpath}; export CLASSPATH=$(hadoop classpath --glob))") from e


# Whether pyarrow may decode one file on its own thread pool. A reader that already reads many files on a pool of
# its own (``read_plan_parallel``) turns it off inside its workers: nested pools on a few cpus cost more than they
# gain on small files (the quickstart table's 36 slices: 83 -> 66 ms on 2 cpus).
_ARROW_THREADS: contextvars.ContextVar[bool] = contextvars.ContextVar("hoodie_arrow_threads", default=True)


def arrow_threads() -> bool:
    """``use_threads`` for a pyarrow read of one file in this thread (see :func:`without_arrow_threads`)."""
    return _ARROW_THREADS.get()


@contextlib.contextmanager
def without_arrow_threads() -> Iterator[None]:
    """Within the block, this thread's Parquet reads decode on the calling thread only."""
    token = _ARROW_THREADS.set(False)
    try:
        yield
    finally:
        _ARROW_THREADS.reset(token)


# Parquet footers of local files, kept across reads in this process (see :func:`open_parquet`). A Hudi base
# file's footer carries the writer's bloom filter (about 431 KB for Hudi's defaults) in its key-value metadata;
# decoding it again on every read cost the quickstart table's read of its 36 base files about 20 ms of CPU.
# One entry per absolute path: (the file's signature when its footer was read, the footer).
_FOOTER_LOCK = threading.Lock()
_FOOTERS: "collections.OrderedDict[str, tuple[tuple[int, int, int, int], Any]]" = collections.OrderedDict()
_FOOTER_BYTES = [0]


def footer_cache_bytes() -> int:
    """The footer cache's budget in bytes: ``HOODIE_PARQUET_FOOTER_CACHE_MB`` (default 64; 0 turns it off)."""
    raw = os.environ.get("HOODIE_PARQUET_FOOTER_CACHE_MB", "64").strip()
    try:
        mb = float(raw)
    except ValueError:
        raise StorageError(f"HOODIE_PARQUET_FOOTER_CACHE_MB={raw!r} is not a number of megabytes; set it to a "
                           "number such as 64, or 0 to turn the Parquet footer cache off") from None
    return max(0, int(mb * 1024 * 1024))


def clear_footer_cache() -> None:
    """Forget every cached Parquet footer (tests; a process that wants the memory back)."""
    with _FOOTER_LOCK:
        _FOOTERS.clear()
        _FOOTER_BYTES[0] = 0


def _signature(full: str) -> tuple[int, int, int, int]:
    """What tells two files under one name apart without reading them: size, modification and status-change
    times (ns) and inode. The status-change time is the kernel's clock at the inode's last write, rename or
    ``utime``, which no writer can set back; an inode freed by a delete and reused gets a new one."""
    st = os.stat(full)  # a missing file raises FileNotFoundError here, as opening it would
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _cached_footer(full: str, sig: tuple[int, int, int, int]) -> Any:
    with _FOOTER_LOCK:
        entry = _FOOTERS.get(full)
        if entry is None or entry[0] != sig:
            return None
        _FOOTERS.move_to_end(full)
        return entry[1]


def _remember_footer(full: str, sig: tuple[int, int, int, int], md: Any) -> None:
    budget = footer_cache_bytes()
    size = int(md.serialized_size)
    with _FOOTER_LOCK:
        old = _FOOTERS.pop(full, None)  # another version of the file under this name: never served again
        if old is not None:
            _FOOTER_BYTES[0] -= int(old[1].serialized_size)
        if size > budget:
            return
        _FOOTERS[full] = (sig, md)
        _FOOTER_BYTES[0] += size
        while _FOOTER_BYTES[0] > budget and _FOOTERS:
            _, (_, dropped) = _FOOTERS.popitem(last=False)
            _FOOTER_BYTES[0] -= int(dropped.serialized_size)


def _cache_path(storage: "Storage", rel: str) -> "str | None":
    """The absolute path keying ``rel``'s cached footer, or ``None`` when its footer is not cached (an object
    store: the signature would cost a request per file; or the cache is off)."""
    if not storage.is_local or footer_cache_bytes() <= 0:
        return None
    return os.path.abspath(storage.full(rel))


def parquet_footer(storage: "Storage", rel: str) -> Any:
    """The ``pyarrow.parquet.FileMetaData`` of the local Parquet file at ``rel`` through the cache of
    :func:`open_parquet` (read and kept on a miss), or ``None`` when its footer is not cached."""
    full = _cache_path(storage, rel)
    if full is None:
        return None
    sig = _signature(full)
    md = _cached_footer(full, sig)
    if md is None:
        import pyarrow.parquet as pq

        md = pq.read_metadata(full)
        _remember_footer(full, sig, md)
    return md


def open_parquet(storage: "Storage", rel: str) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` for ``rel``, its footer from a process-wide LRU cache for local files.

    Hudi never rewrites a data file in place, but a retried or rolled-back-and-redone write can create a file
    under a name used before. The cache keeps one footer per absolute path with the file's signature
    (:func:`_signature`: size, mtime, ctime, inode) from one ``stat`` per open; a file whose signature changed
    is read afresh and replaces the entry. Object stores are not cached (the signature would cost a request
    per file). The cache holds at most :func:`footer_cache_bytes` of serialized footers, least recently used
    dropped first.
    """
    import pyarrow.parquet as pq

    full = _cache_path(storage, rel)
    md = sig = None
    if full is not None:
        sig = _signature(full)
        md = _cached_footer(full, sig)
    # On a miss the file is opened as without a cache (its footer read once) and the footer kept after.
    pf = pq.ParquetFile(storage.full(rel), filesystem=storage.fs, metadata=md)
    if full is not None and md is None:
        _remember_footer(full, sig, pf.metadata)
    return pf


def fsync_enabled() -> bool:
    """Whether local writes are flushed to stable storage (the default). ``HOODIE_FSYNC=false`` turns the
    flush off for runs where only a process can die, never the machine (hoodie's own test suite: a killed
    process loses nothing the page cache holds), as database test suites run with fsync off."""
    return os.environ.get("HOODIE_FSYNC", "true").strip().lower() not in ("false", "0", "off")


def _synced_temp(full: str, data: bytes) -> str:
    """Write ``data`` to a unique, fsynced temp file next to ``full``; returns its path."""
    os.makedirs(os.path.dirname(full), exist_ok=True)
    tmp = f"{full}.tmp-{os.getpid()}-{uuid.uuid4().hex}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        if fsync_enabled():
            os.fsync(f.fileno())
    return tmp


class Storage:
    """File access rooted at a table base path: a local directory, ``s3://bucket/prefix``,
    ``gs://bucket/prefix``, ``abfs[s]://container@account.dfs.core.windows.net/prefix`` or
    ``hdfs://host:port/path``."""

    def __init__(self, base_uri: str, storage_options: dict[str, Any] | None = None) -> None:
        self.base_uri = base_uri.rstrip("/") if base_uri not in ("/",) else base_uri
        opts = dict(storage_options or {})
        parsed = urlparse(base_uri)
        scheme = parsed.scheme.lower()
        self.is_local = False
        # uri(rel) == self._uri_head + full(rel)[len(self._uri_cut):]
        self._uri_cut = ""
        if scheme in ("s3", "s3a"):
            self.kind = "s3"
            self.fs: pafs.FileSystem = pafs.S3FileSystem(**_s3_options(opts))
            self.root = (parsed.netloc + parsed.path).rstrip("/")
            self._uri_head = "s3://"
        elif scheme == "gs":
            self.kind = "gcs"
            self.gcs = _gcs_options(opts)
            self.fs = pafs.GcsFileSystem(**self.gcs)
            self.root = (parsed.netloc + parsed.path).rstrip("/")
            self._uri_head = "gs://"
        elif scheme in ("abfs", "abfss"):
            self.kind = "azure"
            container, at, host = parsed.netloc.partition("@")
            if not at or not container:
                raise StorageError(f"{base_uri!r}: an Azure URI names its container and account, "
                                   "abfs[s]://CONTAINER@ACCOUNT.dfs.core.windows.net/path")
            self.azure = _azure_options(opts, host.split(".")[0])
            self.fs = pafs.AzureFileSystem(**self.azure)
            self.root = (container + parsed.path).rstrip("/")
            self._uri_head = f"{scheme}://{container}@{host}"
            self._uri_cut = container
        elif scheme == "hdfs":
            self.kind = "hdfs"
            self.fs = _hdfs_filesystem(parsed.hostname or "", parsed.port or 0, opts)
            self.root = parsed.path.rstrip("/") or "/"
            self._uri_head = f"hdfs://{parsed.netloc}"
        elif scheme in ("", "file"):
            path = parsed.path if scheme == "file" else base_uri
            self.kind = "local"
            self.fs = pafs.LocalFileSystem()
            self.root = os.path.abspath(path).rstrip("/") or "/"
            self.is_local = True
            self._uri_head = ""
            if scheme == "":
                # Resolved once, where the table is opened (the driver): executors and other
                # processes run in other working directories, so a relative path must not travel.
                self.base_uri = self.root
        else:
            raise StorageError(
                f"unsupported storage scheme {parsed.scheme!r} in {base_uri!r}; "
                "use a local path, file://, s3://, gs://, abfs:// (abfss://) or hdfs://"
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
        """A URI for ``rel`` that other tools understand (absolute local path, s3://, gs://, abfs://...)."""
        return self._uri_head + self.full(rel)[len(self._uri_cut):]

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
        prefix = rel.strip("/")
        if self.kind == "gcs":
            return self._list_dir_gcs(rel, prefix)
        sel = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=False)
        out: list[FileStatus] = []
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

    def _list_dir_gcs(self, rel: str, prefix: str) -> list[FileStatus]:
        """pyarrow's GCS listing shows a sub-directory only where a directory marker object exists,
        which tables written by other tools (and by hoodie) do not have: list recursively and derive
        the entries directly under ``rel`` from the objects' names."""
        sel = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=True)
        base_len = len(self.full(rel)) + 1
        files: dict[str, FileStatus] = {}
        dirs: set[str] = set()
        for info in self.fs.get_file_info(sel):
            name, slash, _ = info.path[base_len:].partition("/")
            if not name:
                continue
            path = f"{prefix}/{name}" if prefix else name
            if slash or info.type == pafs.FileType.Directory:
                dirs.add(name)
            else:
                mtime = None if info.mtime_ns is None else info.mtime_ns // 1_000_000
                files[name] = FileStatus(name=name, path=path, size=int(info.size or 0), is_dir=False, mtime_ms=mtime)
        out = list(files.values()) + [FileStatus(name=d, path=f"{prefix}/{d}" if prefix else d, size=0, is_dir=True)
                                      for d in sorted(dirs - set(files))]
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
        if self.is_local and not data:
            # An empty file (a marker) cannot be seen half-written: O_EXCL creates it atomically,
            # without the temp file, fsync and link that content needs.
            os.makedirs(os.path.dirname(full), exist_ok=True)
            try:
                os.close(os.open(full, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            except FileExistsError:
                raise FileExistsError(f"{self.uri(rel)} already exists") from None
            return
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

    def sync(self, rel: str) -> None:
        """Flush a file written through :meth:`open_output` to stable storage (local files; an object
        store's completed upload is already durable), so that a commit written after it never names
        a file a power loss could empty. Inside :meth:`deferred_syncs` the flush happens when that
        block ends."""
        if not self.is_local:
            return
        pending = getattr(self, "_deferred_syncs", None)
        if pending is not None:
            pending.append(rel)
            return
        self._fsync(rel)

    def _fsync(self, rel: str) -> None:
        if not fsync_enabled():
            return
        fd = os.open(self.full(rel), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def deferred_syncs(self) -> Iterator[None]:
        """Within the block, :meth:`sync` only records the file; every recorded file is flushed when the
        block ends normally, before its caller returns what it wrote (measured: flushing a task's files
        together costs half of flushing each as it is closed). On an error nothing is flushed: those
        files are never committed. Nested blocks leave the flush to the outermost."""
        if getattr(self, "_deferred_syncs", None) is not None:
            yield
            return
        self._deferred_syncs: list[str] | None = []
        try:
            yield
            pending = self._deferred_syncs
        finally:
            self._deferred_syncs = None
        for rel in pending:
            self._fsync(rel)

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
        if missing_ok and self.kind == "azure" and self.fs.get_file_info(full).type == pafs.FileType.NotFound:
            # pyarrow's Azure delete of a missing blob under a missing "directory" probes the
            # account's hierarchical namespace first, which takes seconds of retries where the DFS
            # API does not answer (Azurite); one HEAD settles it.
            return False
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
