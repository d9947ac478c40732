"""hoodie tables in Spark's session catalog (a Hive metastore: embedded Derby or a metastore URI).

Spark 4.3 drops ``OPTIONS``, ``LOCATION`` and ``TBLPROPERTIES`` of ``CREATE TABLE ... USING`` a
Python data source, and a persistent view may not reference a temporary view or function. So a
hoodie table is registered as two **persistent views** that carry everything in TBLPROPERTIES:

* ``db.name`` (snapshot) and ``db.name_ro`` (read-optimized), each with ``hoodie.base.path``,
  ``hoodie.query.type``, the table type and partition fields; the ``_ro`` view also carries the
  freshness threshold and watermark (``hoodie.ro.freshness.*``), updated after compactions;
* their body fails with a message naming the fix, so plain Spark SQL never returns wrong rows.

``hoodie.sql(spark, "CREATE TABLE IF NOT EXISTS analytics.events USING hoodie LOCATION '/data/events'")``
registers a table the same way (see :func:`hoodie.interfaces.sql.create_table`); through plain
``spark.sql`` that statement fails at CREATE, naming this way. Procedures look names up as
``db.name`` (:func:`resolve_table_path`), so the session views below never hide a registered table.

:func:`attach` (run by :func:`session`, which users call as ``hoodie.spark.session(metastore=...)``) registers, for the session, a
temporary view per registered view reading the table through the ``hoodie`` data source:
``events`` and ``events_ro`` after ``USE analytics``, and the qualified names ``analytics.events``
inside :func:`hoodie.sql`, which maps them to those temporary views.
"""

from __future__ import annotations

import re
from typing import Any, Optional
from hoodie.engine.session import get_session, metastore_of
from hoodie.errors import HoodieError

BASE_PATH_PROP = "hoodie.base.path"
QUERY_TYPE_PROP = "hoodie.query.type"
THRESHOLD_PROP = "hoodie.ro.freshness.threshold"
WATERMARK_PROP = "hoodie.ro.freshness.watermark"
RO_SUFFIX = "_ro"
# Spark's name of its session catalog, which holds the views hoodie registers (``spark_catalog.db.name``).
SESSION_CATALOG = "spark_catalog"
MANAGED_PROP = "hoodie.catalog.managed"  # "true": created in the warehouse folder (DROP TABLE deletes the data)

# Per-session map: (db, view) -> temp view name, filled by attach().
_ATTACHED: dict[int, dict[tuple[str, str], str]] = {}
# Per-session map: (db, view) -> (base path, query type) of each attached view, to plan it again.
_SOURCES: dict[int, dict[tuple[str, str], tuple[str, str]]] = {}


class CatalogError(HoodieError, LookupError):
    """A table name does not resolve to a hoodie table; the message says how to register it."""


_NAME_PART = re.compile(r"`((?:[^`]|``)*)`|([^.`]+)")


def name_parts(name: str) -> list[str]:
    """The dot-separated parts of a table name; a part may be quoted in backticks (`` `a.b` ``)."""
    text, parts, pos = name.strip(), [], 0
    while True:
        m = _NAME_PART.match(text, pos)
        if not m or not (m.group(1) if m.group(1) is not None else m.group(2).strip()):
            raise CatalogError(f"table name {name!r} must be 'name' or 'db.name'")
        parts.append(m.group(1).replace("``", "`") if m.group(1) is not None else m.group(2).strip())
        pos = m.end()
        if pos == len(text):
            return parts
        if text[pos] != ".":
            raise CatalogError(f"table name {name!r} must be 'name' or 'db.name'")
        pos += 1


def _split(name: str, spark: Any) -> tuple[str, str]:
    """(database, table) of a name; an unqualified name is in the current database."""
    parts = name_parts(name)
    if len(parts) == 1:
        return spark.catalog.currentDatabase(), parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise CatalogError(f"table name {name!r} must be 'name' or 'db.name'")


def quote_name(db: str, table: str) -> str:
    """`` `db`.`table` ``: a qualified name that never resolves to a session (temporary) view."""
    return ".".join("`" + p.replace("`", "``") + "`" for p in (db, table))


def table_properties(spark: Any, name: str) -> dict[str, str]:
    """TBLPROPERTIES of a catalog table or view ({} when it has none)."""
    try:
        rows = spark.sql(f"SHOW TBLPROPERTIES {name}").collect()
    except Exception as e:  # AnalysisException: the name does not exist
        raise CatalogError(f"table {name} is not in the catalog: {str(e).splitlines()[0]}") from None
    return {r[0]: r[1] for r in rows}


def resolve_table_path(spark: Any, name: str) -> str:
    """The base path of the hoodie table registered under ``name`` (or its ``_ro`` view).

    An unqualified name is looked up in the current database, as ``db.name``: the session views
    that :func:`attach` makes under the same name carry no table properties and must not hide it.
    """
    db, tbl = _split(name, spark)
    fix = (f"register it with hoodie.catalog.register_table(spark, '{db}.{tbl}', '/path/to/table') or "
           f"hoodie.sql(spark, \"CREATE TABLE {db}.{tbl} USING hoodie LOCATION '/path/to/table'\"), "
           "or pass basePath => '/path/to/table'")
    try:
        props = table_properties(spark, quote_name(db, tbl))
    except CatalogError as e:
        raise CatalogError(f"{e}; {fix}") from None
    path = props.get(BASE_PATH_PROP)
    if not path:
        # Hudi's wording first ("<name> is not a Hudi table"), then what hoodie found.
        raise CatalogError(f"{name} is not a Hudi table: {db}.{tbl} is in the catalog but is not a hoodie table "
                           f"(no {BASE_PATH_PROP} property); {fix}")
    return path


def _q(v: str) -> str:
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


def register_table(spark: Any, name: str, base_path: str, storage_options: Optional[dict] = None, *,
                   managed: bool = False, extra: Optional[dict[str, str]] = None) -> list[str]:
    """Register a hoodie table as ``db.name`` (snapshot) and ``db.name_ro`` (read-optimized).

    ``managed`` marks a table ``CREATE TABLE`` made in the warehouse folder (``DROP TABLE`` deletes its data,
    as Spark does for managed tables); ``extra`` are further catalog properties (``ALTER TABLE ... SET
    TBLPROPERTIES`` of non-hoodie keys). Returns the registered view names. Re-registering replaces the views.
    """
    from hoodie.engine.datasource import ensure_registered
    from hoodie.format.table import HoodieTable

    ensure_registered(spark)
    t = HoodieTable(base_path, storage_options)
    db, tbl = _split(name, spark)
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{db}`")
    common = {
        BASE_PATH_PROP: t.base_path, "hoodie.table.name": t.name, "hoodie.table.type": t.table_type,
        "hoodie.partition.fields": ",".join(t.partition_fields),
        "hoodie.datasource.write.hive_style_partitioning": str(t.hive_style).lower(),
        **({MANAGED_PROP: "true"} if managed else {}), **(extra or {}),
    }
    out = []
    for view, qt in ((tbl, "snapshot"), (tbl + RO_SUFFIX, "read_optimized")):
        props = {**common, QUERY_TYPE_PROP: qt}
        full = f"`{db}`.`{view}`"
        msg = (f"{db}.{view} is a hoodie table: query it through hoodie (hoodie.spark.session(metastore=...) "
               f"then USE {db}, or hoodie.sql), or spark.read.format('hoodie').load('{t.base_path}')")
        plist = ", ".join(f"{_q(k)} = {_q(v)}" for k, v in props.items())
        # The filter makes every query fail, count(*) included (a projection alone can be pruned).
        spark.sql(f"CREATE OR REPLACE VIEW {full} TBLPROPERTIES ({plist}) AS "
                  f"SELECT CAST(NULL AS STRING) AS x WHERE raise_error({_q(msg)}) IS NULL")
        out.append(f"{db}.{view}")
    sync_freshness(spark, f"{db}.{tbl}")
    attach(spark, db)
    return out


def sync_freshness(spark: Any, name: str) -> dict[str, Optional[str]]:
    """Copy the table's read-optimized freshness (threshold T, watermark W) into the ``_ro`` view's
    table properties; returns what was set."""
    from hoodie.services.compaction import freshness

    db, tbl = _split(name, spark)
    view = tbl if tbl.endswith(RO_SUFFIX) else tbl + RO_SUFFIX
    path = resolve_table_path(spark, quote_name(db, view))
    f = freshness(path)
    th, wm = f.get("threshold") or {}, f.get("watermark") or {}
    props = {THRESHOLD_PROP: th.get("iso") or "", THRESHOLD_PROP + ".epoch.ms": str(th.get("epoch_ms") or ""),
             WATERMARK_PROP: wm.get("iso") or "", WATERMARK_PROP + ".epoch.ms": str(wm.get("epoch_ms") or ""),
             WATERMARK_PROP + ".status": str(wm.get("status") or "")}
    plist = ", ".join(f"{_q(k)} = {_q(v)}" for k, v in props.items())
    spark.sql(f"ALTER VIEW {quote_name(db, view)} SET TBLPROPERTIES ({plist})")
    return props


def attach(spark: Any, database: Optional[str] = None) -> dict[tuple[str, str], str]:
    """Create session views for every registered hoodie view (of one database, or all)."""
    dbs = [database] if database else [r[0] for r in spark.sql("SHOW DATABASES").collect()]
    attached = _ATTACHED.setdefault(id(spark), {})
    for db in dbs:
        for row in spark.sql(f"SHOW VIEWS IN `{db}`").collect():
            view = row["viewName"]
            if row["isTemporary"]:
                continue
            props = table_properties(spark, f"`{db}`.`{view}`")
            path = props.get(BASE_PATH_PROP)
            if not path:
                continue
            temp = f"__hoodie_{db}_{view}"
            qt = props.get(QUERY_TYPE_PROP, "snapshot")
            _bind(spark, path, qt, [temp] + ([view] if db == spark.catalog.currentDatabase() else []))
            attached[(db.lower(), view.lower())] = temp
            _SOURCES.setdefault(id(spark), {})[(db.lower(), view.lower())] = (path, qt)
    return dict(attached)


def rebind(spark: Any, name: str) -> None:
    """Re-create the session views of one attached table (``db.name``: its snapshot and ``_ro`` views)
    after a commit, from what :func:`attach` recorded: no catalog query, the other tables' views
    untouched. A table not attached in this session yet is attached with its database."""
    db, tbl = _split(name, spark)
    base = tbl[: -len(RO_SUFFIX)] if tbl.lower().endswith(RO_SUFFIX) else tbl
    attached = _ATTACHED.get(id(spark), {})
    sources = _SOURCES.get(id(spark), {})
    keys = [(db.lower(), v.lower()) for v in (base, base + RO_SUFFIX)]
    if not all(k in attached and k in sources for k in keys):
        attach(spark, db)
        return
    current = spark.catalog.currentDatabase().lower()
    for key in keys:
        path, qt = sources[key]
        _bind(spark, path, qt, [attached[key]] + ([key[1]] if key[0] == current else []))


def _bind(spark: Any, path: str, query_type: str, views: list[str]) -> None:
    """(Re)create session views reading the table now. Spark keeps a Python data source's read plan
    (its partitions) with the DataFrame a temporary view holds, so a view made once would answer
    every later query with the files of its first plan: hoodie.sql binds the views a statement names
    again before running it (:func:`rewrite_names`)."""
    df = spark.read.format("hoodie").option("hoodie.datasource.query.type", query_type).load(path)
    for v in views:
        df.createOrReplaceTempView(v)


def session(master: Optional[str] = None, app_name: str = "hoodie", conf: Optional[dict[str, Any]] = None,
            metastore: Optional[str] = None, remote: Optional[str] = None):
    """Get or create a SparkSession for hoodie (``hoodie.spark.session``): the engine's session
    (:func:`hoodie.engine.session.get_session`, with the ``hoodie`` data source registered; a Spark
    Connect session with ``remote="sc://host:15002"`` or ``remote="local[2]"``) and, when
    ``metastore`` (or ``HOODIE_METASTORE``) names a session catalog, every hoodie table registered
    there attached by name (:func:`attach`)."""
    metastore = metastore_of(metastore)
    spark = get_session(master, app_name, conf, metastore, remote=remote)
    if metastore:
        attach(spark)
    return spark


def rewrite_names(spark: Any, text: str) -> str:
    """Replace qualified names of attached hoodie views (outside string literals) with their
    session views, so ``SELECT ... FROM analytics.events_ro`` reads the table."""
    attached = _ATTACHED.get(id(spark))
    if not attached:
        return text
    sources = _SOURCES.get(id(spark), {})
    current = None
    parts = re.split(r"('(?:[^'\\]|\\.|'')*')", text)
    used: dict[tuple[str, str], list[str]] = {}
    for i in range(0, len(parts), 2):
        for (db, view), temp in attached.items():
            # Also under the session catalog's own name (spark_catalog.db.view, as Hudi's tests write it):
            # left as it was, the name reached the catalog's placeholder view and failed to resolve.
            pat = re.compile(rf"(?<![\w.`])(?:`?{SESSION_CATALOG}`?\.)?`?{re.escape(db)}`?\.`?{re.escape(view)}`?(?![\w`])",
                             re.IGNORECASE)
            parts[i], n = pat.subn(temp, parts[i])
            if n:
                used.setdefault((db, view), []).append(temp)
            # An unqualified name of the current database's view (attach made it too).
            if re.search(rf"(?<![\w.`])`?{re.escape(view)}`?(?![\w`.])", parts[i], re.IGNORECASE):
                current = current or spark.catalog.currentDatabase().lower()
                if db == current:
                    used.setdefault((db, view), []).extend([temp, view])
    # Catalog reads are planned at each statement: bind every view the statement names afresh.
    for key, views in used.items():
        if key in sources:
            _bind(spark, *sources[key], sorted(set(views)))
    return "".join(parts)


def drop_partitions(spark: Any, name: str, partitions: list[str]) -> list[str]:
    """Keep the catalog in step after TTL deleted partitions; returns what was dropped.

    Views have no catalog partitions; the session views read the table itself, so expired
    partitions disappear from them at once. Refresh the session views so cached plans do not
    keep the old file listing.
    """
    db, tbl = _split(name, spark)
    base = tbl[: -len(RO_SUFFIX)] if tbl.endswith(RO_SUFFIX) else tbl
    if (db.lower(), base.lower()) in _ATTACHED.get(id(spark), {}):
        attach(spark, db)
    return []
