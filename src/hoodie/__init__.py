"""hoodie: read and write Apache Hudi tables (table versions 6, 8 and 9) from Python and PySpark.

``hoodie.open(path)`` opens a table whose methods read, write and service it (``.read()``,
``.to_arrow_reader()``, ``.upsert(data)``, ``.insert``, ``.delete``, ``.overwrite``,
``.compaction.run()``, ``.ttl.run()``, ``.clean()``, ``.rollback(instant)``);
``hoodie.write_table(path, data, options)`` writes any Arrow-compatible data and
``hoodie.read_table`` is the pure-Python reader. None of them starts a JVM or imports pyspark.

This module re-exports the layers below it (the top of the import order, see tests/test_layering.py);
nothing inside hoodie imports it.
"""

from __future__ import annotations

from hoodie.errors import HoodieError

__version__ = "0.1.0"

__all__ = ["HoodieError", "Table", "open", "read_table", "rollback", "sql", "write_table", "write_arrow", "__version__"]


def __getattr__(name: str):  # lazy, so ``import hoodie`` stays cheap
    if name == "open":
        from hoodie.interfaces.table import open

        return open
    if name == "Table":
        from hoodie.interfaces.table import Table

        return Table
    if name == "write_table":
        from hoodie.interfaces.python_io import write_table

        return write_table
    if name == "write_arrow":
        from hoodie.interfaces.python_io import write_arrow

        return write_arrow
    if name == "read_table":
        from hoodie.format.slice.reader import read_table

        return read_table
    if name == "sql":
        from hoodie.interfaces.sql import sql

        return sql
    if name == "rollback":
        from hoodie.services.rollback.operation import rollback

        return rollback
    raise AttributeError(name)
