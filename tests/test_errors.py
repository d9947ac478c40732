"""One error root: every exception class hoodie defines derives from hoodie.HoodieError, keeping
the builtin base users may already catch."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import hoodie
from hoodie.errors import HoodieError


def _modules() -> list:
    out = []
    for info in pkgutil.walk_packages(hoodie.__path__, "hoodie."):
        out.append(importlib.import_module(info.name))
    return out


def test_every_hoodie_exception_derives_from_hoodie_error() -> None:
    found = {}
    for mod in _modules():
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == mod.__name__
                    and not name.startswith("_") and not issubclass(obj, Warning)):
                found[f"{mod.__name__}.{name}"] = obj
    assert len(found) >= 20, sorted(found)
    strays = sorted(n for n, c in found.items() if not issubclass(c, HoodieError))
    assert strays == [], f"exception classes outside the HoodieError root: {strays}"
    assert hoodie.HoodieError is HoodieError


def test_builtin_bases_are_kept() -> None:
    """Code that catches ValueError / LookupError keeps catching the same errors."""
    from hoodie.errors import PostCommitError, WriteError
    from hoodie.format.keys.paths import PartitionPathError
    from hoodie.format.timeline.active import DamagedTimelineFileError
    from hoodie.interfaces.catalog import CatalogError
    from hoodie.services.compaction import CompactionConfigError
    from hoodie.services.ttl import TTLConfigError

    for cls in (PartitionPathError, DamagedTimelineFileError, CompactionConfigError, TTLConfigError):
        assert issubclass(cls, ValueError) and issubclass(cls, HoodieError)
    assert issubclass(CatalogError, LookupError)
    assert issubclass(PostCommitError, WriteError)
