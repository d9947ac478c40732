"""``hoodie.catalog``: register hoodie tables in Spark's session catalog (see interfaces/catalog.py)."""

from hoodie.interfaces.catalog import (  # noqa: F401
    CatalogError, attach, register_table, resolve_table_path, sync_freshness,
)

__all__ = ["register_table", "attach", "sync_freshness", "resolve_table_path", "CatalogError"]
