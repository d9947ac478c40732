"""hoodie: read and write Apache Hudi (table version 6) tables from Python and PySpark.

``hoodie.read_table`` is the pure-Python reader; it never starts a JVM.
"""

from __future__ import annotations

from hoodie.errors import HoodieError

__version__ = "0.1.0"

__all__ = ["HoodieError", "read_table", "rollback", "sql", "__version__"]


def __getattr__(name: str):  # lazy, so ``import hoodie`` stays cheap
    if name == "read_table":
        from hoodie.format.slice.reader import read_table

        return read_table
    if name == "sql":
        from hoodie.interfaces.sql import sql

        return sql
    if name == "rollback":
        from hoodie.services.rollback import rollback

        return rollback
    raise AttributeError(name)
