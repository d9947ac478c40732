"""A moto S3 server on 127.0.0.1 for object-store tests (started and stopped by the fixture)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def moto_server(bucket: str) -> Iterator[dict]:
    """Start moto's server (``python -m moto.server``) on a free loopback port with ``bucket`` created;
    yields storage options for pyarrow and stops the server on exit (tests and benchmarks share it)."""
    port = _free_port()
    # The interpreter running the tests, never the first ``moto_server`` on the PATH: another Python's
    # (a pyenv shim) may carry a moto whose multipart uploads fail with pyarrow's S3 client.
    cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(url, timeout=1)
                break
            except Exception:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("moto_server did not start")
                time.sleep(0.2)
        opts = {"endpoint_url": url, "access_key": "testing", "secret_key": "testing", "region": "us-east-1"}
        import pyarrow.fs as pafs

        fs = pafs.S3FileSystem(access_key="testing", secret_key="testing", region="us-east-1",
                               endpoint_override=f"127.0.0.1:{port}", scheme="http",
                               allow_bucket_creation=True)
        fs.create_dir(bucket)
        yield opts
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def moto_s3() -> Iterator[dict]:
    """A moto S3 server for the module's tests, bucket ``hoodie-test`` (see :func:`moto_server`)."""
    with moto_server("hoodie-test") as opts:
        yield opts
