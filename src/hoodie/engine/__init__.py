"""Spark engine: executors run the format core per file group; the driver commits."""
