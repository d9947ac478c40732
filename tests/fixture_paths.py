"""Where the tests find the Java-written fixtures: inside the repository (``tests/fixtures/``), so a
fresh clone's test run reads nothing beside the checkout. Each folder's README says where its files
came from and their licence. An environment variable overrides a folder (to try other tables)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


def _folder(env: str, name: str) -> Path:
    """``$env`` when set, else ``tests/fixtures/<name>``; refused when it holds no fixture."""
    path = Path(os.environ[env]) if os.environ.get(env) else FIXTURES / name
    if not path.is_dir() or not any(path.iterdir()):
        raise RuntimeError(f"no fixtures in {path}: the repository ships them in tests/fixtures/{name}; "
                           f"unset {env} or point it at a folder of fixtures")
    return path


V6_DIR = _folder("HOODIE_FIXTURES", "hudi-v6")
V89_DIR = _folder("HOODIE_V8V9_FIXTURES", "hudi-v8-v9")
HFILE_DIR = _folder("HOODIE_HFILE_FIXTURES", "hfile")
