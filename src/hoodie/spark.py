"""PySpark entry points: ``hoodie.spark.write``, ``hoodie.spark.register`` and ``hoodie.spark.session``.

Importing this module imports pyspark; the rest of ``hoodie`` does not.
"""

from __future__ import annotations

from hoodie.engine.datasource import HoodieDataSource, register
from hoodie.engine.session import get_session as session
from hoodie.engine.write import write

__all__ = ["write", "register", "session", "HoodieDataSource"]
