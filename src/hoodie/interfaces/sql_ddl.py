"""DDL on hoodie tables registered in the catalog, through ``hoodie.sql(spark, text)``: Hudi's
``DROP TABLE``, ``ALTER TABLE ... RENAME TO``, ``ADD COLUMNS`` and ``SET | UNSET TBLPROPERTIES`` (and, in
:func:`table_changes`, the ``hudi_table_changes`` table-valued function).

* ``DROP TABLE [IF EXISTS] t [PURGE]``: the catalog entries ``t`` and ``t_ro`` go. Spark's and Hudi's rule
  for the data: a managed table (created by ``CREATE TABLE`` without ``LOCATION``, in the warehouse
  folder) is dropped with its data folder; an external one (``LOCATION`` given, or an existing table
  registered) keeps it, unless ``PURGE``, which deletes it as Hudi does. Only the table's own base path is
  deleted, and only when it holds the table (``.hoodie/hoodie.properties``) and is neither the warehouse
  folder nor a root.
* ``ALTER TABLE t RENAME TO t2``: ``hoodie.table.name`` becomes ``t2`` (as Hudi writes it) and the catalog
  entries move; a managed table's folder moves to the new name's warehouse folder (local storage),
  an external one stays where it is.
* ``ALTER TABLE t ADD COLUMNS (c type [COMMENT '...'], ...)``: new nullable columns at the end, recorded as
  Hudi records a schema change: a commit (copy-on-write; ``deltacommit`` on merge-on-read) without records,
  operationType ``ALTER_SCHEMA``, whose metadata carries the new schema (hudi-rs and Hudi read it from
  there); rows written before read null in them. A column the table has, ``NOT NULL`` and ``FIRST``/``AFTER`` are refused.
* ``ALTER TABLE t SET TBLPROPERTIES ('k' = 'v', ...)`` / ``UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)``:
  the table-level SQL options hoodie's statements read from the table (``hoodie.datasource.overwrite.mode``,
  ``hoodie.write.set.null.for.missing.columns``) are written to ``hoodie.properties`` under the table lock;
  keys without a ``hoodie.`` prefix (``team``, ``description``...) are kept on the catalog entries (Spark
  refuses its reserved ones, ``owner``, ``location``...). The table's
  own configuration (keys, partitioning, type, version, ``primaryKey``...) is refused: changing it needs a
  new table (``CREATE TABLE ... AS SELECT``); so is any other ``hoodie.*`` key, which hoodie's writes take
  as write options, not from the table.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

from hoodie.interfaces.catalog import (BASE_PATH_PROP, MANAGED_PROP, QUERY_TYPE_PROP, RO_SUFFIX, CatalogError,
                                       _split, quote_name, register_table, table_properties)
from hoodie.interfaces.sql_call import SqlError
from hoodie.interfaces.sql_common import OVERWRITE_MODE, RESULT_SCHEMA, _parse
from hoodie.services.write import WriteOperation

# Table-level SQL options hoodie's statements read from hoodie.properties (sql_dml).
TABLE_SQL_KEYS = (OVERWRITE_MODE, "hoodie.write.set.null.for.missing.columns")
# Hudi's CREATE TABLE aliases for the table's own configuration.
_CONFIG_ALIASES = ("primarykey", "type", "precombinefield", "orderingfields", "recordkey", "payloadclass")


def _row(spark: Any, operation: str, note: str):
    return spark.createDataFrame([(None, operation, 0, note)], RESULT_SCHEMA)


def _registration(spark: Any, name: str) -> Optional[tuple[str, str, dict[str, str]]]:
    """(db, table, snapshot view properties) when ``name`` is a hoodie registration; None otherwise."""
    try:
        db, tbl = _split(name, spark)
        if not spark.catalog.databaseExists(db) or not spark.catalog.tableExists(quote_name(db, tbl)):
            return None
        props = table_properties(spark, quote_name(db, tbl))
    except CatalogError:
        return None
    if not props.get(BASE_PATH_PROP):
        return None
    if props.get(QUERY_TYPE_PROP) == "read_optimized" and tbl.endswith(RO_SUFFIX):
        raise SqlError(f"{db}.{tbl} is the read-optimized entry of {db}.{tbl[:-len(RO_SUFFIX)]}; name that table "
                       "(its entries go together). Nothing was changed")
    return db, tbl, props


def _drop_entries(spark: Any, db: str, tbl: str) -> None:
    for view in (tbl, tbl + RO_SUFFIX):
        spark.sql(f"DROP VIEW IF EXISTS {quote_name(db, view)}")
        if db.lower() == spark.catalog.currentDatabase().lower():
            spark.catalog.dropTempView(view)
        spark.catalog.dropTempView(f"__hoodie_{db}_{view}")
    from hoodie.interfaces import catalog

    for m in (catalog._ATTACHED, catalog._SOURCES):
        for key in [(db.lower(), tbl.lower()), (db.lower(), (tbl + RO_SUFFIX).lower())]:
            m.get(id(spark), {}).pop(key, None)


def _warehouse(spark: Any) -> str:
    return spark.conf.get("spark.sql.warehouse.dir").replace("file:", "").rstrip("/")


def managed_location(spark: Any, db: str, tbl: str) -> str:
    """Where ``CREATE TABLE db.tbl`` without LOCATION puts the table (Spark's default table path)."""
    return os.path.join(_warehouse(spark), f"{db}.db" if db != "default" else "", tbl)


def _safe_to_delete(spark: Any, base: str) -> Optional[str]:
    """Why ``base`` must not be deleted (None when it may): only a table's own folder goes."""
    from hoodie.format.storage import Storage
    from hoodie.format.table import table_exists

    norm = base.replace("file:", "").rstrip("/")
    if not norm or norm in ("/", _warehouse(spark)) or re.fullmatch(r"[a-z0-9]+://[^/]*", norm):
        return f"{base} is a root or the warehouse folder"
    if not table_exists(Storage(base)):
        return f"{base} holds no hoodie table (no .hoodie/hoodie.properties)"
    return None


def drop_table(spark: Any, stmt: Any):
    """``DROP TABLE`` of a hoodie registration (None for any other table: Spark's)."""
    from hoodie.format.table import HoodieTable

    t = stmt.this if stmt.args.get("this") is not None else (stmt.args.get("tables") or [None])[0]
    name = f"{t.db}.{t.name}" if t.db else t.name
    found = _registration(spark, name)
    if found is None:
        return None
    db, tbl, props = found
    base = props[BASE_PATH_PROP]
    managed = props.get(MANAGED_PROP) == "true"
    purge = bool(stmt.args.get("purge"))
    delete = managed or purge
    if delete:
        why = _safe_to_delete(spark, base)
        if why:
            raise SqlError(f"DROP TABLE {db}.{tbl}{' PURGE' if purge else ''}: its data folder is not deleted: {why}. "
                           f"Drop only the catalog entries with DROP VIEW {db}.{tbl} and DROP VIEW "
                           f"{db}.{tbl}{RO_SUFFIX}. Nothing was changed")
    _drop_entries(spark, db, tbl)
    if not delete:
        return _row(spark, "drop", f"dropped {db}.{tbl} and {db}.{tbl}{RO_SUFFIX}; its data stays at {base} (an "
                                   "external table; DROP TABLE ... PURGE deletes it)")
    HoodieTable(base).storage.delete_dir("")
    return _row(spark, "drop", f"dropped {db}.{tbl} and {db}.{tbl}{RO_SUFFIX} and deleted its data folder {base} "
                               f"({'a managed table' if managed else 'PURGE'})")


def rename_table(spark: Any, stmt: Any, rename: Any):
    """``ALTER TABLE t RENAME TO t2`` of a hoodie registration (None for any other table)."""
    from hoodie.format.lock import TableLock
    from hoodie.format.table import HoodieTable, update_table_properties

    old = stmt.this
    found = _registration(spark, f"{old.db}.{old.name}" if old.db else old.name)
    if found is None:
        return None
    db, tbl, props = found
    new = rename.this
    ndb, ntbl = (new.db or db), new.name
    for view in (ntbl, ntbl + RO_SUFFIX):
        if spark.catalog.databaseExists(ndb) and spark.catalog.tableExists(quote_name(ndb, view)):
            raise SqlError(f"ALTER TABLE {db}.{tbl} RENAME TO {ndb}.{ntbl}: {ndb}.{view} exists already; choose "
                           "another name or drop it first. Nothing was changed")
    base = props[BASE_PATH_PROP]
    managed = props.get(MANAGED_PROP) == "true"
    table = HoodieTable(base)
    if managed:
        target = managed_location(spark, ndb, ntbl)
        if not table.storage.is_local:
            raise SqlError(f"ALTER TABLE {db}.{tbl} RENAME TO {ndb}.{ntbl}: a managed table's folder moves with its "
                           f"name, and hoodie moves folders on local storage only; {base} is not. Nothing was changed")
        if os.path.exists(target):
            raise SqlError(f"ALTER TABLE {db}.{tbl} RENAME TO {ndb}.{ntbl}: the new name's folder {target} exists; "
                           "remove it or choose another name. Nothing was changed")
        with TableLock(table.storage, {}, "rename"):
            update_table_properties(table, {"hoodie.table.name": ntbl})
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.rename(base.replace("file:", ""), target)
        base = target
    else:
        with TableLock(table.storage, {}, "rename"):
            update_table_properties(table, {"hoodie.table.name": ntbl})
    extra = {k: v for k, v in props.items() if not k.startswith(("hoodie.", "spark.", "view."))
             and k != "transient_lastDdlTime"}
    _drop_entries(spark, db, tbl)
    register_table(spark, quote_name(ndb, ntbl), base, managed=managed, extra=extra)
    return _row(spark, "rename", f"renamed {db}.{tbl} to {ndb}.{ntbl}; hoodie.table.name is {ntbl}"
                                 + (f"; its folder moved to {base}" if managed else f"; its data stays at {base}"))


def add_columns(spark: Any, db: str, tbl: str, base: str, columns: list[Any]):
    """``ALTER TABLE t ADD COLUMNS (c type [COMMENT '...'], ...)``: new nullable columns at the end of the
    schema, recorded as Hudi records a schema change: a commit without records whose metadata carries the
    new schema (later writes and every reader take the table schema from there; rows written before read
    null in the new columns). Refused, before anything is written: a column the table has, NOT NULL, and
    FIRST/AFTER positions (hoodie adds columns at the end only)."""
    import pyarrow as pa
    from pyspark.sql.types import _parse_datatype_string
    from sqlglot import exp

    from hoodie.engine.datasource import arrow_schema_for
    from hoodie.format.table import HoodieTable

    table = HoodieTable(base)
    current = table.arrow_schema(with_meta=False)
    have = {n.lower() for n in current.names}
    where = f"ALTER TABLE {db}.{tbl} ADD COLUMNS"
    defs = []
    for c in columns:
        name = c.name
        if name.lower() in have or name.lower() in {d[0].lower() for d in defs}:
            raise SqlError(f"{where}: {db}.{tbl} has a column {name!r} already (columns: {', '.join(current.names)}). "
                           "Nothing was changed")
        if c.args.get("position") is not None:
            raise SqlError(f"{where}: {c.args['position'].sql(dialect='spark')} is not supported; hoodie adds "
                           f"columns at the end: ALTER TABLE {db}.{tbl} ADD COLUMNS ({name} "
                           f"{c.args['kind'].sql(dialect='spark')}). Nothing was changed")
        for con in c.args.get("constraints") or []:
            if not isinstance(con.args.get("kind"), exp.CommentColumnConstraint):
                raise SqlError(f"{where}: {name} {con.sql(dialect='spark')}: a new column must be nullable (rows "
                               f"written before read null in it); drop the constraint. Nothing was changed")
        defs.append((name, c.args["kind"].sql(dialect="spark")))
    added = arrow_schema_for(_parse_datatype_string(", ".join(f"`{n}` {t}" for n, t in defs)))
    schema = pa.schema(list(current) + [f.with_nullable(True) for f in added])
    instant = commit_schema(base, table.name, schema)
    from hoodie.interfaces.catalog import attach

    attach(spark, db)  # the session views read the new schema
    return spark.createDataFrame([(instant, "add columns", 0, f"added {', '.join(n for n, _ in defs)} to "
                                  f"{db}.{tbl}: an ALTER_SCHEMA commit without records whose metadata records the "
                                  "new schema")], RESULT_SCHEMA)


class AlterSchemaOperation(WriteOperation):
    """A write of no records whose commit carries the table's new schema, as Hudi's ALTER TABLE commits it
    (``AlterHoodieTableAddColumnsCommand.commitWithSchema``): operationType ``ALTER_SCHEMA``, action ``commit``
    (copy-on-write) or ``deltacommit`` (merge-on-read), no write stats."""

    @property
    def operation_type(self) -> str:
        return "ALTER_SCHEMA"


def commit_schema(base: str, table_name: str, schema: Any) -> str:
    """Commit ``schema`` (Arrow, without meta columns) as the table's schema: one ALTER_SCHEMA commit without
    records, through the one commit path (table lock, rollback of failed writes, metadata table). As Hudi's,
    it runs no clean or archival after it. Returns the committed instant."""
    from hoodie.format.storage import Storage
    from hoodie.services.transaction import Transaction
    from hoodie.services.write import ArrowWriteExecutor

    options = {"hoodie.table.name": table_name, "hoodie.datasource.write.operation": "insert"}
    op = AlterSchemaOperation(Storage(base), options, ArrowWriteExecutor(schema.empty_table(), options),
                                   what="ALTER TABLE")
    txn = Transaction(op, op, storage=op.storage, options=options, post_commit=[op.metrics_hook()]).run()
    assert txn.completed is not None
    return txn.completed.timestamp


def _refusal(db: str, tbl: str, key: str) -> Optional[str]:
    k = key.lower()
    if k in _CONFIG_ALIASES or k.startswith(("hoodie.table.", "hoodie.timeline.", "hoodie.populate.",
                                             "hoodie.archivelog.", "hoodie.database.", "hoodie.record.merge.",
                                             "hoodie.compaction.payload", "hoodie.bootstrap.", "hoodie.catalog.",
                                             "hoodie.datasource.write.hive_style", "hoodie.datasource.write.partition",
                                             "hoodie.datasource.write.recordkey", "hoodie.datasource.write.precombine",
                                             "hoodie.datasource.write.keygenerator", "hoodie.datasource.write.table",
                                             "hoodie.base.path", "hoodie.partition.fields", "hoodie.query.type",
                                             "hoodie.ro.freshness")):
        return (f"{key} is part of the table's own configuration (keys, partitioning, type, layout), which a "
                f"table keeps for life: make a new table with it, CREATE TABLE new_name USING hudi TBLPROPERTIES "
                f"(...) AS SELECT * FROM {db}.{tbl}")
    if k.startswith("hoodie.") and key not in TABLE_SQL_KEYS:
        return (f"hoodie's writes do not read {key} from the table: pass it as a write option "
                f"(hoodie.spark.write(df, path, {{'{key}': ...}}), or options => '{key}=...' in CALL procedures). "
                f"Table properties hoodie.sql reads: {', '.join(TABLE_SQL_KEYS)}")
    return None


def set_properties(spark: Any, db: str, tbl: str, props: dict[str, str], values: dict[str, Optional[str]],
                   if_exists: bool = True):
    """SET (value) or UNSET (None) table properties of a hoodie registration."""
    from hoodie.format.lock import TableLock
    from hoodie.format.table import HoodieTable, update_table_properties

    what = "SET" if any(v is not None for v in values.values()) else "UNSET"
    bad = [(k, r) for k in values for r in [_refusal(db, tbl, k)] if r]
    if bad:
        raise SqlError(f"ALTER TABLE {db}.{tbl} {what} TBLPROPERTIES: " + "; ".join(r for _, r in bad)
                       + ". Nothing was changed")
    table = HoodieTable(props[BASE_PATH_PROP])
    hoodie_keys = {k: v for k, v in values.items() if k in TABLE_SQL_KEYS}
    catalog_keys = {k: v for k, v in values.items() if k not in TABLE_SQL_KEYS}
    if what == "UNSET" and not if_exists:
        missing = [k for k in hoodie_keys if k not in table.props] + [k for k in catalog_keys if k not in props]
        if missing:
            raise SqlError(f"ALTER TABLE {db}.{tbl} UNSET TBLPROPERTIES: {', '.join(missing)} not set; use UNSET "
                           "TBLPROPERTIES IF EXISTS to ignore that. Nothing was changed")
    views = [tbl, tbl + RO_SUFFIX]
    for view in views:
        if not catalog_keys:
            break
        q = quote_name(db, view)
        sets = {k: v for k, v in catalog_keys.items() if v is not None}
        unsets = [k for k, v in catalog_keys.items() if v is None]
        if sets:
            plist = ", ".join(f"{_lit(k)} = {_lit(v)}" for k, v in sets.items())
            spark.sql(f"ALTER VIEW {q} SET TBLPROPERTIES ({plist})")
        if unsets:
            spark.sql(f"ALTER VIEW {q} UNSET TBLPROPERTIES IF EXISTS ({', '.join(_lit(k) for k in unsets)})")
    # The catalog first: Spark refuses its reserved keys (owner, location...) before hoodie.properties changes.
    if hoodie_keys:
        with TableLock(table.storage, {}, "set table properties"):
            update_table_properties(table, hoodie_keys)
    return _row(spark, "set properties" if what == "SET" else "unset properties",
                f"{what} {', '.join(values)} on {db}.{tbl}"
                + (" (hoodie.properties)" if hoodie_keys else "") + (" (catalog)" if catalog_keys else ""))


def _lit(v: str) -> str:
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


_UNSET = re.compile(r"^\s*alter\s+table\s+(?P<name>[\w.`]+)\s+unset\s+tblproperties\s+(?P<ie>if\s+exists\s+)?"
                    r"\((?P<keys>.*)\)\s*;?\s*$", re.IGNORECASE | re.DOTALL)


def run(spark: Any, text: str):
    """Run ``text`` if it is a statement of the module doc on a hoodie registration; None otherwise."""
    from sqlglot import exp

    m = _UNSET.match(text)
    if m:
        found = _registration(spark, m.group("name").replace("`", ""))
        if found is None:
            return None
        keys = [k.strip().strip("'\"") for k in m.group("keys").split(",") if k.strip()]
        return set_properties(spark, found[0], found[1], found[2], {k: None for k in keys}, bool(m.group("ie")))
    if not re.match(r"^\s*(drop|alter)\b", text, re.IGNORECASE):
        return None
    stmt = _parse(text)
    if isinstance(stmt, exp.Drop) and str(stmt.args.get("kind", "")).upper() == "TABLE":
        return drop_table(spark, stmt)
    if not isinstance(stmt, exp.Alter) or not isinstance(stmt.this, exp.Table):
        return None
    actions = stmt.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
        return rename_table(spark, stmt, actions[0])
    if actions and all(isinstance(a, exp.Schema) for a in actions):  # ADD COLUMNS
        t = stmt.this
        found = _registration(spark, f"{t.db}.{t.name}" if t.db else t.name)
        if found is None:
            return None
        return add_columns(spark, found[0], found[1], found[2][BASE_PATH_PROP],
                           [c for a in actions for c in a.expressions])
    if len(actions) == 1 and isinstance(actions[0], exp.AlterSet):
        t = stmt.this
        found = _registration(spark, f"{t.db}.{t.name}" if t.db else t.name)
        if found is None:
            return None
        values: dict[str, Optional[str]] = {}
        for props in actions[0].expressions:
            for p in getattr(props, "expressions", []):
                key = p.this.name if hasattr(p.this, "name") else str(p.this)
                values[key] = p.args["value"].name if hasattr(p.args["value"], "name") else str(p.args["value"])
        if not values:
            return None
        return set_properties(spark, found[0], found[1], found[2], values)
    return None


# -- hudi_table_changes ---------------------------------------------------------------------------------------

def table_changes(spark: Any, text: str):
    """A query over Hudi's ``hudi_table_changes('t', 'latest_state', begin[, end])`` table-valued function: the
    incremental read of the table (a catalog name or a path) after ``begin`` (exclusive; ``earliest`` for
    every commit) up to ``end`` (inclusive), as ``hoodie.datasource.query.type=incremental`` reads it. The
    ``cdc`` form is refused: hoodie writes no change-data logs. None for any other statement."""
    import uuid

    from sqlglot import exp

    from hoodie.engine.read import read
    from hoodie.interfaces.catalog import resolve_table_path, rewrite_names

    if "hudi_table_changes" not in text.lower():
        return None
    stmt = _parse(text)
    if stmt is None:
        return None
    calls = [t for t in stmt.find_all(exp.Table) if isinstance(t.this, exp.Anonymous)
             and str(t.this.this).lower() == "hudi_table_changes"]
    if not calls:
        return None
    for n, t in enumerate(calls):
        args = [a.name if isinstance(a, exp.Literal) else a.sql(dialect="spark") for a in t.this.expressions]
        if len(args) not in (3, 4):
            raise SqlError("hudi_table_changes takes ('table or path', 'latest_state', 'begin instant' [, 'end "
                           f"instant']); got {len(args)} argument(s)")
        name, kind, begin = args[0], args[1].lower(), args[2]
        if kind == "cdc":
            raise SqlError(f"hudi_table_changes('{name}', 'cdc', ...): hoodie writes no change-data (CDC) logs, so it "
                           f"has no before/after images to answer with. Use hudi_table_changes('{name}', "
                           f"'latest_state', '{begin}'{', ' + repr(args[3]) if len(args) == 4 else ''}): the latest "
                           "state of every record changed after begin")
        if kind != "latest_state":
            raise SqlError(f"hudi_table_changes: the second argument is 'latest_state' (or 'cdc', which hoodie does "
                           f"not support), not {args[1]!r}")
        base = name if "/" in name else resolve_table_path(spark, name)
        opts = {"hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": "0" if begin.lower() == "earliest" else begin}
        if len(args) == 4:
            opts["hoodie.datasource.read.end.instanttime"] = args[3]
        view = f"__hoodie_changes_{uuid.uuid4().hex[:8]}_{n}"
        read(spark, base, opts).createOrReplaceTempView(view)
        t.replace(exp.Table(this=exp.to_identifier(view), alias=t.args.get("alias")))
    return spark.sql(rewrite_names(spark, stmt.sql(dialect="spark")))


__all__ = ["run", "table_changes", "drop_table", "rename_table", "set_properties", "MANAGED_PROP", "managed_location"]
