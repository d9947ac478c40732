"""PySpark entry points: ``hoodie.spark.write``, ``hoodie.spark.register`` and ``hoodie.spark.session``.

Importing this module imports pyspark; the rest of ``hoodie`` does not.
"""

from __future__ import annotations

try:
    import pyspark  # noqa: F401
except ModuleNotFoundError as e:
    if e.name != "pyspark":
        raise
    # The base install is pure Python (reads, TTL, clean and compaction planning need no Spark).
    raise ModuleNotFoundError("hoodie's Spark engine needs pyspark 4.3, which the base install leaves out: "
                              "pip install 'hoodie[spark]' (Spark also needs Java 17 or 21)", name="pyspark") from None

from hoodie.engine.datasource import HoodieDataSource, register
from hoodie.engine.session import get_session as session
from hoodie.engine.write import write

__all__ = ["write", "register", "session", "HoodieDataSource"]
