"""Named fault points for crash testing.

``fault_point("write.after_files")`` kills the current process with SIGKILL when the environment
variable ``HOODIE_FAULT_POINTS`` lists that name (comma-separated). It costs one dictionary lookup
otherwise. The crash harness (tests) uses it to stop writers and services at exact places.
"""

from __future__ import annotations

import os
import signal

ENV = "HOODIE_FAULT_POINTS"


def fault_point(name: str) -> None:
    """Die here (SIGKILL, no cleanup) if ``name`` is enabled in ``HOODIE_FAULT_POINTS``."""
    spec = os.environ.get(ENV)
    if spec and name in {s.strip() for s in spec.split(",")}:
        os.kill(os.getpid(), signal.SIGKILL)
