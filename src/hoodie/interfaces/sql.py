"""``hoodie.sql(spark, text)``: Hudi-style ``CALL`` procedures, everything else to ``spark.sql``.

    hoodie.sql(spark, "CALL run_ttl(table => 'analytics.events', retain_days => 30)")
    hoodie.sql(spark, "CALL show_compaction(table => 'events')")  # in the current database
    hoodie.sql(spark, "CALL managePartitionTTL(basePath => '/data/t', strategy => 'KEEP_BY_TIME', daysRetain => '10', predicate => 'productid = 1')")
    hoodie.sql(spark, "CALL show_commits('/data/t', 5)")        # positional: table, limit
    hoodie.sql(spark, "CREATE TABLE analytics.clicks USING hoodie LOCATION '/data/clicks'")

Arguments are named (``name => value``) or positional (in the procedure's parameter order, Hudi's
for Hudi's procedures, before any named one). Values are SQL literals: quoted strings (``''``
escapes a quote), integers, decimals, ``true``/``false`` and ``null``. Each argument is
type-checked and a wrong one is named in the error. ``table`` is a catalog name (``name`` in the
current database, or ``db.name``) or a base path (any value with a ``/``); ``basePath``/``path``
takes a path. Procedures return DataFrames. ``CREATE TABLE name USING hoodie LOCATION 'path'``
registers an existing hoodie table in the catalog (see :func:`create_table`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

# The procedures register themselves in PROCEDURES on import; the CALL machinery lives in sql_call.
import hoodie.interfaces.procedures  # noqa: F401
from hoodie.engine.spark_errors import unwrapping
from hoodie.interfaces.catalog import (BASE_PATH_PROP, RO_SUFFIX, _split, quote_name, register_table,
                                       rewrite_names, table_properties)
from hoodie.interfaces.sql_call import (  # noqa: F401  (re-exported: hoodie.interfaces.sql is where users look)
    PROCEDURES, Param, Procedure, SqlError, TableRef, bind, is_path, parse_call, parse_options, procedure,
    resolve_table,
)


# -- CREATE TABLE ... USING hoodie ---------------------------------------------------------------

_IDENT = r"(?:`(?:[^`]|``)*`|\w+)"
_CREATE = re.compile(
    r"^\s*create\s+(?P<replace>or\s+replace\s+)?(?:external\s+)?table\s+(?P<ine>if\s+not\s+exists\s+)?"
    rf"(?P<name>{_IDENT}(?:\s*\.\s*{_IDENT})?)(?P<rest>.*?)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_LITERAL = re.compile(r"'(?:[^'\\]|\\.|'')*'")
_USING = re.compile(r"\busing\s+(?P<fmt>hoodie|hudi)\b", re.IGNORECASE)
_LOCATION = re.compile(r"\blocation\s+(?P<lit>'(?:[^'\\]|\\.|'')*')", re.IGNORECASE)
_CLAUSES = [(re.compile(r"^\s*\("), "a column list"), (re.compile(r"\bas\s+select\b|\bas\s*\(", re.I), "AS SELECT"),
            (re.compile(r"\boptions\b", re.I), "OPTIONS"), (re.compile(r"\btblproperties\b", re.I), "TBLPROPERTIES"),
            (re.compile(r"\bpartitioned\s+by\b", re.I), "PARTITIONED BY"),
            (re.compile(r"\bclustered\s+by\b", re.I), "CLUSTERED BY"), (re.compile(r"\bcomment\b", re.I), "COMMENT")]


@dataclass(frozen=True)
class CreateTable:
    """A parsed ``CREATE TABLE name USING hoodie|hudi LOCATION 'path'``."""

    name: str
    location: Optional[str]
    if_not_exists: bool
    replace: bool
    using: str
    refused: Optional[str] = None  # the first clause hoodie cannot honour


def parse_create_table(text: str) -> Optional[CreateTable]:
    """The statement as a :class:`CreateTable` when it creates a table ``USING hoodie`` (or
    ``hudi``); None for any other statement."""
    m = _CREATE.match(text)
    if not m:
        return None
    rest = m.group("rest")
    masked = _LITERAL.sub(lambda x: "'" + " " * (len(x.group(0)) - 2) + "'", rest)  # keywords outside literals
    using = _USING.search(masked)
    if not using:
        return None
    loc = _LOCATION.search(masked)
    location = None
    left = masked[: using.start()] + " " * (using.end() - using.start()) + masked[using.end():]
    if loc:
        lit = rest[loc.start("lit"): loc.end("lit")]
        location = re.sub(r"\\(.)", r"\1", lit[1:-1].replace("''", "'"))
        left = left[: loc.start()] + " " * (loc.end() - loc.start()) + left[loc.end():]
    refused = next((what for pat, what in _CLAUSES if pat.search(left)), None)
    if refused is None and left.strip():
        refused = repr(" ".join(left.split()))
    return CreateTable(m.group("name"), location, bool(m.group("ine")), bool(m.group("replace")),
                       using.group("fmt"), refused)


def create_table(spark: Any, stmt: CreateTable):
    """Register the existing hoodie table at ``stmt.location`` under ``stmt.name`` (snapshot) and
    ``name_ro`` (read-optimized), as :func:`hoodie.catalog.register_table` does, since Spark 4.3
    keeps no LOCATION for a Python data source table. Returns the registered view names.

    Refused before anything is registered: clauses hoodie cannot honour (a column list, OPTIONS,
    TBLPROPERTIES, PARTITIONED BY, AS SELECT: the schema, keys and partitioning are the table's own),
    a missing LOCATION, a location without a hoodie table, and a name already in use (unless
    ``IF NOT EXISTS``, which then does nothing, or ``OR REPLACE`` of a hoodie registration).
    """
    from hoodie.format.table import HoodieTable

    how = (f"hoodie.sql registers an existing hoodie table: CREATE TABLE [IF NOT EXISTS] name USING {stmt.using} "
           "LOCATION '/path/to/table' (its schema, keys, partitioning and properties are the table's own); "
           "create a new table by writing it with hoodie.spark.write(df, path, options), then register it")
    if stmt.refused:
        raise SqlError(f"CREATE TABLE {stmt.name} USING {stmt.using}: {stmt.refused} is not accepted. {how}")
    if not stmt.location:
        raise SqlError(f"CREATE TABLE {stmt.name} USING {stmt.using} needs LOCATION '/path/to/table'. {how}")
    db, tbl = _split(stmt.name, spark)
    existing = []
    if spark.catalog.databaseExists(db):
        for view in (tbl, tbl + RO_SUFFIX):
            if spark.catalog.tableExists(f"`{db}`.`{view}`"):
                hoodie_view = BASE_PATH_PROP in table_properties(spark, quote_name(db, view))
                if not hoodie_view:
                    raise SqlError(f"{db}.{view} already exists and is not a hoodie registration; drop it first "
                                   f"(DROP TABLE or DROP VIEW {db}.{view}) or choose another name")
                existing.append(f"{db}.{view}")
    if existing and stmt.if_not_exists:
        return existing
    if existing and not stmt.replace:
        raise SqlError(f"{', '.join(existing)} already exists; use CREATE TABLE IF NOT EXISTS to keep it or "
                       "CREATE OR REPLACE TABLE to point it at this LOCATION")
    try:
        HoodieTable(stmt.location)
    except Exception as e:  # TableError, OSError: nothing usable there
        raise SqlError(f"no hoodie table at {stmt.location!r} ({e}). {how}") from None
    return register_table(spark, quote_name(db, tbl), stmt.location)


# SET key = 'value': Spark 4.3 keeps the quotes as part of the value; Hudi's docs quote values.
_SET = re.compile(r"^\s*set\s+(?P<key>[^\s=;]+)\s*=\s*(?P<val>'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\")"
                  r"\s*;?\s*$", re.IGNORECASE | re.DOTALL)


def parse_set(text: str) -> Optional[tuple[str, str]]:
    """(key, value without its quotes) of ``SET key = 'value'`` (or ``"value"``; a doubled quote or a
    backslash escapes one); None for any other statement, an unquoted value included (Spark's as written)."""
    m = _SET.match(text)
    if not m:
        return None
    lit = m.group("val")
    q = lit[0]
    return m.group("key"), re.sub(r"\\(.)|" + q + q, lambda x: x.group(1) if x.group(1) is not None else q, lit[1:-1])


def set_quoted(spark: Any, text: str):
    """``SET key = 'value'`` sets ``value`` without its quotes, as Hudi's SQL docs mean it
    (``SET hoodie.spark.sql.insert.into.operation = 'bulk_insert'``); None for any other statement."""
    parsed = parse_set(text)
    if parsed is None:
        return None
    spark.conf.set(*parsed)
    return local_frame(spark, [parsed], "key string, value string")


def local_frame(spark: Any, rows: list[tuple], ddl: str):
    """A DataFrame of ``rows`` (schema ``ddl``) built from Arrow in the driver: collecting it runs no Spark job
    (``createDataFrame`` of a Python list does one, through an RDD), so the procedures that read metadata
    cost no job."""
    import pyarrow as pa
    from pyspark.sql.types import _parse_datatype_string

    from hoodie.engine.datasource import arrow_schema_for

    schema = _parse_datatype_string(ddl)
    arrow = arrow_schema_for(schema)
    data = pa.table([pa.array([r[i] for r in rows], type=f.type) for i, f in enumerate(arrow)], schema=arrow)
    return spark.createDataFrame(data, schema=schema)


@unwrapping
def sql(spark: Any, text: str):
    """Run ``CALL procedure(...)`` (returns a DataFrame), register a table with ``CREATE TABLE name
    USING hoodie LOCATION 'path'`` (returns the registered views), or pass any other statement to
    ``spark.sql``. An error hoodie raised inside Spark (its data source, a Python worker) is raised with
    hoodie's own message, not wrapped in Spark's (:mod:`hoodie.engine.spark_errors`)."""
    from hoodie.engine.datasource import ensure_registered

    ensure_registered(spark)
    done = set_quoted(spark, text)
    if done is not None:
        return done
    create = parse_create_table(text)
    if create is not None and create.refused is None:
        return spark.createDataFrame([(v,) for v in create_table(spark, create)], "view string")
    from hoodie.interfaces import sql_ddl, sql_dml

    done = sql_ddl.run(spark, text)
    if done is None:
        done = sql_ddl.table_changes(spark, text)
    if done is not None:
        return done
    done = sql_dml.run(spark, text)
    if done is not None:
        return done
    if create is not None:
        return spark.createDataFrame([(v,) for v in create_table(spark, create)], "view string")
    parsed = parse_call(text)
    if parsed is None:
        return spark.sql(rewrite_names(spark, text))
    name, positional, named = parsed
    # Hudi's docs write CALL system.procedure_name(...): "system" has no meaning there, nor here.
    if name.lower().startswith("system."):
        name = name[len("system."):]
    proc = PROCEDURES.get(name.lower())
    if proc is None:
        from hoodie.interfaces.procedures_unsupported import UNSUPPORTED, refusal

        if name.lower() in UNSUPPORTED:
            raise SqlError(refusal(name.lower()))
        raise SqlError(f"unknown procedure {name!r}; available: {', '.join(sorted({p.name for p in PROCEDURES.values()}))}"
                       " (CALL help() lists them)")
    # Hudi 1.x procedures take filter => "<predicate over the output columns>": the rows it keeps.
    fkey = next((k for k in named if k.lower() == "filter"), None)
    where = named.pop(fkey) if fkey is not None else None
    if where is not None and not isinstance(where, str):
        raise SqlError(f"filter => must be a SQL predicate string over {proc.name}'s output columns, got {where!r}")
    args = bind(proc, positional, named)
    where = where or args.pop("filter", None) or None  # a procedure with Hudi's positional filter parameter
    rows = proc.fn(spark, args)
    out = local_frame(spark, rows, proc.output)
    if where:
        try:
            out = out.where(where)
            out.schema  # analyze now: an unknown column is named here, not at collect
        except Exception as e:
            raise SqlError(f"filter => {where!r} is not a predicate over {proc.name}'s output columns "
                           f"({proc.output}): {str(e).splitlines()[0]}") from None
    return out


__all__ = ["sql", "create_table", "parse_create_table", "CreateTable", "SqlError", "Param", "Procedure",
           "PROCEDURES", "procedure", "parse_call", "bind", "TableRef", "is_path", "resolve_table", "parse_options"]
