"""User-facing interfaces: Python API, Spark data source, SQL CALL procedures and the CLI."""
