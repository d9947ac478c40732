"""Format core: Hudi table version 6 on-disk format in pure Python (no pyspark, no JVM)."""
