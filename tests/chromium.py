"""Headless Chromium for tests: Debian's ``chromium`` driven through ``chromedriver`` over the W3C
WebDriver protocol (plain HTTP on 127.0.0.1, no selenium), plus a PNG decoder for screenshots.

``Browser`` starts chromedriver on a free local port with a fresh user-data dir and the flags that
keep Chromium off the network (no background networking, component updates or sync), and stops it
when closed. ``decode_png`` turns a screenshot into rows of RGB(A) tuples (numpy array).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from typing import Any, Optional

import numpy as np

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def missing_reason() -> Optional[str]:
    """Why the browser tests cannot run here (None when they can)."""
    for exe, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.path.exists(exe):
            return f"{exe} not found: install Debian's {pkg} (apt-get install -y chromium chromium-driver)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Browser:
    """One chromedriver process and one browser session."""

    def __init__(self, width: int = 1000, height: int = 1400) -> None:
        self.port = _free_port()
        self.profile = tempfile.mkdtemp(prefix="hoodie-chromium-")
        self.proc = subprocess.Popen([CHROMEDRIVER, f"--port={self.port}", "--allowed-ips=127.0.0.1"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        self.sid: Optional[str] = None
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    self._call("GET", "/status")
                    break
                except (urllib.error.URLError, ConnectionError):
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        raise RuntimeError("chromedriver did not start")
                    time.sleep(0.1)
            caps = {"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": CHROMIUM, "args": FLAGS + [f"--user-data-dir={self.profile}",
                                                                           f"--window-size={width},{height}"]},
                "goog:loggingPrefs": {"browser": "ALL"}}}}
            self.sid = self._call("POST", "/session", caps)["sessionId"]
        except BaseException:
            self.close()
            raise

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"webdriver {method} {path}: {e.read()[:500]!r}") from None

    def s(self, method: str, path: str, body: Any = None) -> Any:
        """A call on the session."""
        return self._call(method, f"/session/{self.sid}{path}", body)

    def open(self, url: str) -> None:
        self.s("POST", "/url", {"url": url})

    def run(self, script: str, *args: Any) -> Any:
        """Run JavaScript in the page (a function body; ``return`` gives the result)."""
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def elements(self, css: str) -> list[str]:
        return [e[ELEMENT] for e in self.s("POST", "/elements", {"using": "css selector", "value": css})]

    def element_png(self, element: str) -> bytes:
        """A screenshot of one element, scrolled into view first (else it is clipped to the window)."""
        self.run("arguments[0].scrollIntoView({block: 'start'});", {ELEMENT: element})
        return base64.b64decode(self.s("GET", f"/element/{element}/screenshot"))

    def page_png(self) -> bytes:
        return base64.b64decode(self.s("GET", "/screenshot"))

    def console(self) -> list[dict]:
        """The browser's console and error log since the last call (level, message)."""
        return self.s("POST", "/se/log", {"type": "browser"}) or []

    def close(self) -> None:
        try:
            if self.sid is not None:
                self.s("DELETE", "")
        except Exception:  # the driver is stopped below either way
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def screenshot_cli(url: str, out_png: str, width: int = 1000, height: int = 3000) -> None:
    """``chromium --screenshot``: a whole-window PNG of ``url`` (fresh profile, no network)."""
    profile = tempfile.mkdtemp(prefix="hoodie-chromium-")
    try:
        subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={out_png}",
                        f"--window-size={width},{height}", "--hide-scrollbars", url],
                       check=True, timeout=120, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


def decode_png(data: bytes) -> np.ndarray:
    """An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) as an array (h, w, channels)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or color not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, color type {color}, interlace {interlace})")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 0xFF
        elif f == 1:  # Sub: a running sum along each channel
            cur = np.cumsum(line.reshape(width, channels), axis=0).reshape(stride) & 0xFF
        elif f in (3, 4):
            cur = np.zeros(stride, dtype=np.int32)
            for x in range(stride):
                a = cur[x - channels] if x >= channels else 0
                b = prev[x]
                if f == 3:
                    pred = (a + b) // 2
                else:
                    c = prev[x - channels] if x >= channels else 0
                    p = a + b - c
                    pa_, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa_ <= pb and pa_ <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + pred) & 0xFF
        else:
            raise ValueError(f"bad PNG filter {f}")
        out[y] = cur
        prev = cur
    return out.reshape(height, width, channels).astype(np.uint8)
