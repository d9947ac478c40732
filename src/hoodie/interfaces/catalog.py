"""Resolving table names to base paths through the Spark session catalog.

A name resolves when the catalog object (a table or view in the session catalog, which may be
backed by a Hive metastore) carries the table property ``hoodie.base.path``. Spark 4.3 keeps
TBLPROPERTIES on views but drops them (and OPTIONS/LOCATION) on ``CREATE TABLE ... USING`` a
Python data source, so hoodie records its tables as views with that property.
"""

from __future__ import annotations

from typing import Any

BASE_PATH_PROP = "hoodie.base.path"


class CatalogError(LookupError):
    """A table name does not resolve to a hoodie table; the message says how to register it."""


def table_properties(spark: Any, name: str) -> dict[str, str]:
    """TBLPROPERTIES of a catalog table or view ({} when it has none)."""
    try:
        rows = spark.sql(f"SHOW TBLPROPERTIES {name}").collect()
    except Exception as e:  # AnalysisException: the name does not exist
        raise CatalogError(f"table {name!r} is not in the catalog: {str(e).splitlines()[0]}") from None
    return {r[0]: r[1] for r in rows}


def resolve_table_path(spark: Any, name: str) -> str:
    """The base path of the hoodie table registered under ``name``."""
    props = table_properties(spark, name)
    path = props.get(BASE_PATH_PROP)
    if not path:
        raise CatalogError(
            f"{name!r} is in the catalog but is not a hoodie table (no {BASE_PATH_PROP} property); "
            "register it with hoodie.catalog.register_table or pass basePath => '/path/to/table'"
        )
    return path


def drop_partitions(spark: Any, name: str, partitions: list[str]) -> list[str]:
    """Drop catalog partitions of a registered table after TTL deleted them; returns the specs
    dropped. A name registered as a view has no catalog partitions, so there is nothing to drop."""
    props = table_properties(spark, name)
    fields = [f for f in props.get("hoodie.partition.fields", "").split(",") if f]
    if not fields:
        return []
    try:
        spark.sql(f"SHOW PARTITIONS {name}").collect()
    except Exception:
        return []  # not a partitioned catalog table (a view): no catalog partitions exist
    from hoodie.format.keygen import partition_values

    hive = props.get("hoodie.datasource.write.hive_style_partitioning", "false") == "true"
    dropped = []
    for p in partitions:
        vals = partition_values(p, fields, hive)
        spec = ", ".join(f"{k} = '{str(v).replace(chr(39), chr(39) * 2)}'" for k, v in vals.items())
        spark.sql(f"ALTER TABLE {name} DROP IF EXISTS PARTITION ({spec})")
        dropped.append(spec)
    return dropped
