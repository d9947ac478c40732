"""Helpers shared by the benchmarks in this folder (timing, call timers, machine description).

The benchmarks are scripts (``python bench/<name>.py``): Python puts this folder on ``sys.path``, so
they import this module as ``_common``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Run ``fn()`` once; returns (wall-clock seconds, its result)."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def best_of(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    """The fastest of ``repeat`` runs of ``fn()`` (at least one) and the last result."""
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        s, out = timed(fn)
        best = min(best, s)
    return best, out  # type: ignore[return-value]


@contextlib.contextmanager
def call_timer(owner: Any, attr: str) -> Iterator[list[float]]:
    """Time every call of ``owner.attr`` while the context is open.

    Yields the list the durations are appended to (one per call). Patch the attribute where the
    caller looks it up (e.g. the module that did ``from x import f``), not where it is defined.
    """
    real = getattr(owner, attr)
    durations: list[float] = []

    def wrapper(*a: Any, **k: Any) -> Any:
        s = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            durations.append(time.perf_counter() - s)

    setattr(owner, attr, wrapper)
    try:
        yield durations
    finally:
        setattr(owner, attr, real)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_commit(repo: str) -> str:
    try:
        head = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{' (with uncommitted changes)' if dirty else ''}" if head else "unknown"


def machine_info(java: bool = True) -> dict[str, str]:
    """The machine and software a benchmark ran on: CPU model and count, RAM, OS and the versions of
    Python, Java, pyspark, pyarrow, hudi-rs and hoodie (with its git commit)."""
    cpuinfo = _read("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")]
    mem_kb = next((int(line.split()[1]) for line in _read("/proc/meminfo").splitlines()
                   if line.startswith("MemTotal:")), 0)
    os_name = next((line.split("=", 1)[1].strip().strip('"') for line in _read("/etc/os-release").splitlines()
                    if line.startswith("PRETTY_NAME=")), platform.system())
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    info = {
        "cpu": f"{models[0] if models else platform.processor() or 'unknown'} x {len(models) or os.cpu_count()}",
        "cpus_usable": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "ram": f"{mem_kb / 1024 / 1024:.1f} GiB" if mem_kb else "unknown",
        "os": f"{os_name}, kernel {platform.release()} ({platform.machine()})",
        "python": sys.version.split()[0],
        "java": "not checked",
        "pyspark": _version("pyspark"),
        "pyarrow": _version("pyarrow"),
        "hudi-rs (PyPI hudi)": _version("hudi"),
        "numpy": _version("numpy"),
        "fastavro": _version("fastavro"),
        "hoodie": f"{_version('hoodie')}, commit {_git_commit(repo)}",
    }
    if java:
        try:
            from hoodie.engine.session import check_java

            info["java"] = check_java()
        except Exception as e:  # the report still says what it could find
            info["java"] = f"unavailable ({e})"
    return info


def utc_now() -> str:
    """The current time in UTC, ISO-8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
