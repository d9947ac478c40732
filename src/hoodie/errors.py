"""The root of hoodie's errors.

Every error hoodie raises on purpose derives from :class:`HoodieError`, so ``except
hoodie.HoodieError`` catches all of them. The classes keep their older bases too (``ValueError`` for
bad input, ``LookupError`` for a name not found, ``RuntimeError`` for a missing runtime) so code that
catches those still works. This module imports nothing from hoodie: every layer may import it.
"""

from __future__ import annotations


class HoodieError(Exception):
    """Base class of every error hoodie raises on purpose."""


__all__ = ["HoodieError"]
