"""Named fault points for crash testing.

``fault_point("write.after_files")`` kills the current process with SIGKILL when the environment
variable ``HOODIE_FAULT_POINTS`` lists that name (comma-separated). ``name@n`` kills at the n-th time
the point is reached in this process instead of the first (a point inside a loop, such as
``compaction.after_operation@2``, then stops the process midway through the loop). It costs one
dictionary lookup when the variable is unset. The crash harness (tests/prove) uses it to stop writers
and services at exact places.
"""

from __future__ import annotations

import os
import signal

ENV = "HOODIE_FAULT_POINTS"

_hits: dict[str, int] = {}


def _wanted(spec: str, name: str) -> int:
    """The hit number at which ``name`` kills (0: never)."""
    for item in spec.split(","):
        point, _, nth = item.strip().partition("@")
        if point == name:
            return int(nth) if nth else 1
    return 0


def fault_point(name: str) -> None:
    """Die here (SIGKILL, no cleanup) if ``name`` is enabled in ``HOODIE_FAULT_POINTS``."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    nth = _wanted(spec, name)
    if not nth:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] >= nth:
        os.kill(os.getpid(), signal.SIGKILL)
