"""What hoodie.sql's statements share (:mod:`hoodie.interfaces.sql_dml`, :mod:`hoodie.interfaces.sql_merge`):
the target table of a statement, the result row, the write of one statement as one commit, Spark's
column-name resolution, and time travel in a statement's sources."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Optional

from hoodie.interfaces.catalog import CatalogError, resolve_table_path
from hoodie.interfaces.sql_call import SqlError

RESULT_SCHEMA = "instant string, operation string, rows long, note string"
INSERT_INTO_OPERATION = "hoodie.spark.sql.insert.into.operation"
OVERWRITE_MODE = "hoodie.datasource.overwrite.mode"
PATH_DATABASES = ("hoodie", "hudi")


@dataclass
class Target:
    """A hoodie table a statement writes: its base path, catalog name (if any) and the table."""

    base_path: str
    name: Optional[str]
    table: Any
    alias: Optional[str]
    # Spark's identifier of the catalog table (``spark_catalog.db.name``), as Hudi's messages name it.
    catalog_id: Optional[str] = None


def _parse(text: str) -> Any:
    import sqlglot
    from sqlglot.errors import ParseError

    # sqlglot logs a warning ("unsupported syntax, falling back to parsing as a Command") for every
    # statement it does not model (CALL, SET, ...); hoodie handles those itself, so the warning is noise.
    sqlglot_log = logging.getLogger("sqlglot")
    level = sqlglot_log.level
    sqlglot_log.setLevel(logging.ERROR)
    try:
        return sqlglot.parse_one(text, read="spark")
    except ParseError:
        return None
    finally:
        sqlglot_log.setLevel(level)


def _target(spark: Any, table_exp: Any) -> Optional[Target]:
    """The hoodie table a Table expression names, or None for any other table (left to Spark)."""
    from hoodie.format.table import HoodieTable

    from hoodie.interfaces.catalog import SESSION_CATALOG

    name, db = table_exp.name, table_exp.db
    alias = table_exp.alias or None
    if table_exp.catalog and table_exp.catalog.lower() != SESSION_CATALOG:
        return None  # another catalog's table (hoodie registers its tables in Spark's session catalog)
    if db and db.lower() in PATH_DATABASES and "/" in name:
        return Target(name, None, HoodieTable(name, read_only=True), alias)
    full = f"{db}.{name}" if db else name
    try:
        base = resolve_table_path(spark, full)
    except CatalogError:
        refuse_plain_spark_table(spark, full)
        return None
    from hoodie.interfaces.catalog import _split

    cdb, ctbl = _split(full, spark)
    return Target(base, full, HoodieTable(base, read_only=True), alias, f"{SESSION_CATALOG}.{cdb}.{ctbl}")


def refuse_plain_spark_table(spark: Any, name: str) -> None:
    """Refuse a catalog table that plain ``spark.sql("CREATE TABLE ... USING hudi|hoodie")`` made: Spark 4.3
    accepts that statement without calling the data source and keeps neither LOCATION nor properties, so
    the name reads and writes nothing. Named with the fix rather than left to fail inside Spark."""
    from hoodie.interfaces.catalog import _split

    try:
        db, tbl = _split(name, spark)
        if not spark.catalog.databaseExists(db) or not spark.catalog.tableExists(f"`{db}`.`{tbl}`"):
            return
        # DESCRIBE leaves the provider of a Python data source table out; SHOW TABLE EXTENDED has it.
        found = [r for r in spark.sql(f"SHOW TABLE EXTENDED IN `{db}` LIKE '{tbl}'").collect()
                 if not r.isTemporary and r.tableName.lower() == tbl.lower()]
        info = {k.strip().lower(): v.strip() for k, _, v in
                (line.partition(":") for line in (found[0].information if found else "").splitlines()) if v}
    except Exception:  # a name Spark cannot describe: not such a table
        return
    if info.get("provider", "").lower() in PATH_DATABASES and info.get("type", "").upper() != "VIEW":
        raise SqlError(
            f"{db}.{tbl} was made by plain spark.sql(\"CREATE TABLE ... USING {info['provider']}\"), which Spark 4.3 "
            "accepts without the data source and keeps no LOCATION, keys or properties for: nothing can read or "
            f"write it. DROP TABLE {db}.{tbl}, then create the table through hoodie.sql (CREATE TABLE ... USING "
            "hudi [TBLPROPERTIES (primaryKey = ...)] [LOCATION '/path']) or register an existing one "
            f"(CREATE TABLE {db}.{tbl} USING hudi LOCATION '/path/to/table')")


def _result(spark: Any, instant: Optional[str], operation: str, rows: int, note: str):
    return spark.createDataFrame([(instant, operation, int(rows), note)], RESULT_SCHEMA)


def _data_columns(t: Target) -> list[Any]:
    """(name, spark type) of the table's data columns, in table order."""
    from hoodie.engine.datasource import spark_schema_for

    return [(f.name, f.dataType) for f in spark_schema_for(t.table.arrow_schema(with_meta=False)).fields]


# Write configs a statement takes from the session (``SET key = value``), as Hudi's SQL passes the
# session's hoodie.* configs to the write it runs.
SESSION_WRITE_KEYS = ("hoodie.merge.allow.duplicate.on.inserts", "hoodie.combine.before.insert")
WRITE_OPERATION = "hoodie.datasource.write.operation"


COMMIT_METADATA_PREFIX = "hoodie.datasource.write.commitmeta.key.prefix"


def session_write_options(spark: Any) -> dict[str, str]:
    """The :data:`SESSION_WRITE_KEYS` set in the Spark session, and, when the session sets
    ``hoodie.datasource.write.commitmeta.key.prefix``, the prefix and every session conf whose key begins with
    it: Hudi's SQL writes pass them, and the writer stores them in the commit's extraMetadata (TestInsertTable
    "Test Insert Into with extraMetadata"). Before, they were left out and the commit had none of them."""
    out = {}
    for k in SESSION_WRITE_KEYS:
        v = spark.conf.get(k, None)
        if v is not None:
            out[k] = str(v)
    prefix = spark.conf.get(COMMIT_METADATA_PREFIX, None)
    if prefix:
        out[COMMIT_METADATA_PREFIX] = str(prefix)
        for k, v in spark.sql("SET").collect():  # every conf the session set (a local command, no job)
            if k.startswith(prefix) and v is not None:
                out[k] = str(v)
    return out


def _write(df: Any, t: Target, operation: str, extra: Optional[dict[str, str]] = None) -> str:
    from hoodie.engine.write import write

    opts = {"hoodie.table.name": t.table.name, **session_write_options(df.sparkSession),
            "hoodie.datasource.write.operation": operation, **(extra or {})}
    instant = write(df, t.base_path, opts)
    _refresh(df.sparkSession, t)
    return instant


def _refresh(spark: Any, t: Target) -> None:
    """Re-create the session views of a catalog table, so that queries after the commit do not
    reuse a plan listed before it."""
    if t.name:
        from hoodie.interfaces.catalog import rebind

        rebind(spark, t.name)


PREPPED_META = ("_hoodie_record_key", "_hoodie_partition_path")


def _read_target(spark: Any, t: Target, meta: bool = False):
    """The target's rows (data columns; with ``meta`` also the stored keys :data:`PREPPED_META` a prepped
    write on a table without record key fields takes), aliased as the statement names the table."""
    from hoodie.engine.read import read

    cols = [*(PREPPED_META if meta else ()), *[c for c, _ in _data_columns(t)]]
    df = read(spark, t.base_path).select(*cols)
    return df.alias(t.alias) if t.alias else df.alias(t.table.name)


def _sql(e: Any) -> str:
    return e.sql(dialect="spark")


def _refuse_key_updates(t: Target, columns: list[str], what: str) -> None:
    fixed = set(t.table.record_key_fields) | set(t.table.partition_fields)
    bad = [c for c in columns if c in fixed]
    if bad:
        kind = "record key field" if bad[0] in t.table.record_key_fields else "partition field"
        # Hudi's message first (its tests match it), then why and the fix.
        raise SqlError(f"Detected disallowed assignment clause in {what} statement for {kind} `{bad[0]}` for table "
                       f"`{t.catalog_id or t.base_path}`. Please remove the assignment clause to avoid the error. "
                       f"{what} sets {', '.join(bad)}, a record key or partition column of {t.name or t.base_path}; "
                       "Hudi refuses that (the row would move to another key or partition). Delete the row and "
                       "insert it anew instead")


def prepped_options(t: Target) -> dict[str, str]:
    """The write options of an UPDATE or MERGE: on a table without record key fields the rows carry the keys
    they were read with and the write takes them (Hudi's upsert prepped, ``_hoodie.datasource.write.prepped``)."""
    from hoodie.services.write.configs import PREPPED

    return {} if t.table.record_key_fields else {PREPPED: "true"}


def case_sensitive(spark: Any) -> bool:
    """``spark.sql.caseSensitive``: column names resolve case-insensitively unless it is true (Spark's rule)."""
    return str(spark.conf.get("spark.sql.caseSensitive", "false")).strip().lower() == "true"


def resolver(names: list[str], sensitive: bool) -> Callable[[str], Optional[str]]:
    """A function mapping a column name as written to the one of ``names`` it means (None when none),
    with Spark's case rule; a name two columns share under that rule is refused as ambiguous."""
    if sensitive:
        exact = set(names)
        return lambda n: n if n in exact else None
    folded: dict[str, list[str]] = {}
    for n in names:
        folded.setdefault(n.lower(), []).append(n)

    def resolve(n: str) -> Optional[str]:
        hits = folded.get(n.lower(), [])
        if len(hits) > 1:
            raise SqlError(f"column {n!r} is ambiguous: {hits} differ only in case (spark.sql.caseSensitive is "
                           "false); rename one of them, or set spark.sql.caseSensitive=true")
        return hits[0] if hits else None

    return resolve


def _as_of_views(spark: Any, stmt: Any) -> bool:
    """Replace each ``t TIMESTAMP AS OF 'instant'`` (or ``VERSION AS OF``) of a hoodie table in ``stmt``
    (a query, or the source of an INSERT or MERGE) with a session view of the table as of that instant.
    False when a versioned table is not a hoodie table (left to Spark)."""
    import uuid

    from sqlglot import exp

    from hoodie.engine.read import read

    for n, table in enumerate(list(stmt.find_all(exp.Table))):
        version = table.args.get("version")
        if version is None:
            continue
        t = _target(spark, table)
        if t is None:
            return False
        when = version.args["expression"]
        instant = when.name if getattr(when, "is_string", False) else _sql(when)
        view = f"__hoodie_as_of_{uuid.uuid4().hex[:8]}_{n}"
        read(spark, t.base_path, {"as.of.instant": instant}).createOrReplaceTempView(view)
        # Column references qualified by the table's name keep resolving through an alias.
        alias = table.alias or table.name
        table.set("version", None)
        table.set("db", None)
        table.set("catalog", None)
        table.set("this", exp.to_identifier(view))
        table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return True
