"""PySpark entry points: ``hoodie.spark.read``, ``hoodie.spark.write``, ``hoodie.spark.write_stream``
(Structured Streaming, exactly once; ``service_failures``), ``hoodie.spark.register`` and
``hoodie.spark.session``.

Importing this module imports pyspark; the rest of ``hoodie`` does not.
"""

from __future__ import annotations

from hoodie.engine.session import require_pyspark

require_pyspark()  # before the imports below, which fail on a missing pyspark less helpfully

from hoodie.engine.datasource import HoodieDataSource, register  # noqa: E402
from hoodie.engine.read import read  # noqa: E402
from hoodie.engine.stream import service_failures, stop_services, write_stream  # noqa: E402
from hoodie.engine.write import write  # noqa: E402
from hoodie.interfaces.catalog import session  # noqa: E402
from hoodie.engine.spark_errors import SparkSideError, unwrapping  # noqa: E402

# Errors hoodie raises inside Spark (the data source, Python workers) come back wrapped in Spark's
# exceptions; these entry points raise them with hoodie's own message.
read = unwrapping(read)
write = unwrapping(write)

__all__ = ["SparkSideError", "read", "write", "write_stream", "service_failures", "stop_services", "register", "session", "HoodieDataSource"]
