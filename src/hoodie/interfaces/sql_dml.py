"""Hudi's Spark SQL DML and DDL for hoodie tables, through ``hoodie.sql(spark, text)``.

Spark 4.3 has no hook for Python-defined DML, so ``hoodie.sql`` parses the statement (sqlglot,
Spark dialect) and runs the statements below on hoodie tables itself; anything else, and any
statement on a table that is not a hoodie table, goes to ``spark.sql`` unchanged. Expressions
(``SET``, ``WHERE``, ``ON``, ``VALUES``, ``SELECT``) are evaluated by Spark. Every statement commits
through hoodie's one commit path as one instant (``hoodie.spark.write``), so a statement is atomic.

* ``INSERT INTO t [PARTITION (p = v, ...)] [(cols)] SELECT ... | VALUES ...``: operation
  ``hoodie.spark.sql.insert.into.operation`` (Hudi's key; default ``insert``, as Hudi 0.14+). Columns are
  taken by position, except that a query whose output names are exactly the expected columns in another
  order is aligned by name (as Hudi's tests expect: ``PARTITION (dt = 'x') SELECT 20 AS price, 2 AS id ...``);
* ``INSERT OVERWRITE [TABLE] t [PARTITION (...)] ...``, Hudi's rules: ``hoodie.datasource.overwrite.mode``
  (session conf or table property), else ``spark.sql.sources.partitionOverwriteMode`` (default STATIC).
  A non-partitioned table, or STATIC without a partition spec, replaces the whole table
  (``insert_overwrite_table``, also with no row). STATIC with a spec replaces every existing partition
  its static values name (``PARTITION (yr = 2024, mo)``: every ``yr=2024`` partition; a spec without
  static values: all), also when the query returns no row. DYNAMIC replaces only the partitions the rows
  go to (``insert_overwrite``);
* ``UPDATE t SET col = expr, ... [WHERE cond]``: the matching rows, changed, as one upsert;
* ``DELETE FROM t [WHERE cond]``: the matching keys, as one delete;
* ``MERGE INTO t USING s ON cond WHEN MATCHED [AND c] THEN UPDATE SET ... | UPDATE SET * | DELETE
  WHEN NOT MATCHED [AND c] THEN INSERT (cols) VALUES (...) | INSERT *``: clauses apply in order, the
  first whose condition holds wins; updates, inserts and deletes commit as one upsert (deletes as
  ``_hoodie_is_deleted`` markers that are not added to the table schema). Hudi's rules: ``ON`` is a
  conjunction of equalities ``t.k = s.col`` (a source column, possibly cast) covering every record key
  field, partition fields optional; anything else (``t.id = s.id + 1``, ``t.name = s.name``, ``t.x > 1``)
  is refused. An update (``SET *`` or explicit) that really changes a matched row's record key or
  partition is refused; an assignment equal to the matched value (``SET id = s.id``) is not a change;
* column names resolve case-insensitively unless ``spark.sql.caseSensitive=true`` (``SET *``/``INSERT *``
  take each table column from the source column of that name; a source lacking one is refused);
* ``CREATE TABLE t (cols) USING hudi|hoodie [PARTITIONED BY (cols)] TBLPROPERTIES | OPTIONS (primaryKey =
  'id', preCombineField | orderingFields = 'ts', type = 'cow' | 'mor', hoodie.* = ...) [LOCATION 'path']``
  and ``CREATE TABLE t USING hudi ... AS SELECT ...``: a new table (under the warehouse folder without
  LOCATION), registered in the catalog. Without ``primaryKey`` the table has no record key fields and
  its keys are generated per row, as Hudi 1.x does: INSERT INTO and DELETE FROM (by the stored keys)
  work, UPDATE and MERGE are refused (Hudi runs them as an upsert by the stored keys, which hoodie
  does not do);
* ``ALTER TABLE t DROP [IF EXISTS] PARTITION (p = v, ...)``: a delete_partition replacecommit;
* ``SHOW PARTITIONS t``: the table's partition paths;
* ``SELECT ... FROM t TIMESTAMP AS OF 'instant'`` (or ``VERSION AS OF``): time travel (by completion time
  on table versions 8/9, as Hudi 1.x defines it), also as the source of INSERT and MERGE
  (``INSERT INTO t2 SELECT ... FROM t1 TIMESTAMP AS OF '<instant>'``).

A name in a statement is bound to the table afresh for each statement, so a read by catalog name sees
every commit made before it, by any entry point (``write_arrow``, ``hoodie.spark.write``, procedures).
A catalog table that plain ``spark.sql("CREATE TABLE t (cols) USING hudi")`` made (Spark 4.3 accepts it
without calling the data source and keeps no location or properties) is named with the fix
(``DROP TABLE``, then create it through ``hoodie.sql``).

``t`` is a catalog name registered as a hoodie table, or ``hoodie.`/path/to/table``` (also
``hudi.`...```). Each statement returns one row: the instant committed (null when nothing changed),
the operation, the rows written and a note saying what happened.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Optional

from hoodie.interfaces.catalog import CatalogError, quote_name, register_table, resolve_table_path, rewrite_names
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


def _parse(text: str) -> Any:
    import sqlglot
    from sqlglot.errors import ParseError

    try:
        return sqlglot.parse_one(text, read="spark")
    except ParseError:
        return None


def _target(spark: Any, table_exp: Any) -> Optional[Target]:
    """The hoodie table a Table expression names, or None for any other table (left to Spark)."""
    from hoodie.format.table import HoodieTable

    name, db = table_exp.name, table_exp.db
    alias = table_exp.alias or None
    if db and db.lower() in PATH_DATABASES and "/" in name:
        return Target(name, None, HoodieTable(name, read_only=True), alias)
    full = f"{db}.{name}" if db else name
    try:
        base = resolve_table_path(spark, full)
    except CatalogError:
        refuse_plain_spark_table(spark, full)
        return None
    return Target(base, full, HoodieTable(base, read_only=True), alias)


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


def _write(df: Any, t: Target, operation: str, extra: Optional[dict[str, str]] = None) -> str:
    from hoodie.engine.write import write

    opts = {"hoodie.table.name": t.table.name, "hoodie.datasource.write.operation": operation, **(extra or {})}
    instant = write(df, t.base_path, opts)
    _refresh(df.sparkSession, t)
    return instant


def _refresh(spark: Any, t: Target) -> None:
    """Re-create the session views of a catalog table, so that queries after the commit do not
    reuse a plan listed before it."""
    if t.name:
        from hoodie.interfaces.catalog import _split, attach

        attach(spark, _split(t.name, spark)[0])


def _read_target(spark: Any, t: Target):
    from hoodie.engine.read import read

    cols = [c for c, _ in _data_columns(t)]
    df = read(spark, t.base_path).select(*cols)
    return df.alias(t.alias) if t.alias else df.alias(t.table.name)


def _sql(e: Any) -> str:
    return e.sql(dialect="spark")


def _refuse_key_updates(t: Target, columns: list[str], what: str) -> None:
    fixed = set(t.table.record_key_fields) | set(t.table.partition_fields)
    bad = [c for c in columns if c in fixed]
    if bad:
        raise SqlError(f"{what} sets {', '.join(bad)}, a record key or partition column of {t.name or t.base_path}; "
                       "Hudi refuses that (the row would move to another key or partition). Delete the row and "
                       "insert it anew instead")


# -- INSERT ----------------------------------------------------------------------------------------------

def _insert(spark: Any, stmt: Any, t: Target):
    from pyspark.sql import functions as F
    from sqlglot import exp

    target_exp = stmt.this
    columns: Optional[list[str]] = None
    if isinstance(target_exp, exp.Schema):
        columns = [c.name for c in target_exp.expressions]
        target_exp = target_exp.this
    static: dict[str, Any] = {}
    dynamic: list[str] = []
    partition = target_exp.args.get("partition")
    for eq in (partition.expressions if partition is not None else []):
        if isinstance(eq, exp.EQ):
            static[eq.this.name] = eq.expression
        else:
            dynamic.append(eq.name)
    source = stmt.expression
    if any(x.args.get("version") is not None for x in source.find_all(exp.Table)) and not _as_of_views(spark, source):
        raise SqlError("INSERT ... SELECT ... TIMESTAMP AS OF reads a table that is not a hoodie table; hoodie.sql "
                       "time travels hoodie tables only")
    src = spark.sql(rewrite_names(spark, _sql(source))) if not isinstance(source, exp.Values) else \
        spark.sql(f"SELECT * FROM {_sql(source)}")
    cols = _data_columns(t)
    names = [c for c, _ in cols]
    tcol = resolver(names, case_sensitive(spark))
    if columns:
        columns = [tcol(c) or c for c in columns]
    static = {(tcol(k) or k): v for k, v in static.items()}
    unknown = [c for c in list(static) + (columns or []) if c not in names]
    if unknown:
        raise SqlError(f"INSERT names column(s) {unknown} that {t.name or t.base_path} does not have "
                       f"(columns: {', '.join(names)})")
    by_position = columns or [c for c in names if c not in static]
    if not columns and len(src.columns) == len(by_position):
        # Hudi aligns the query by name when its output names are exactly the expected columns in another
        # order (its tests: PARTITION (dt = '...') SELECT 20 AS price, 2000 AS ts, 2 AS id, 'a2' AS name);
        # any other query is taken by position, as Spark does.
        try:
            named = [tcol(c) for c in src.columns]
        except SqlError:
            named = []
        if sorted(n for n in named if n) == sorted(by_position) and len(set(named)) == len(named) \
                and named != by_position:
            by_position = named
    if len(src.columns) != len(by_position):
        raise SqlError(f"INSERT into {t.name or t.base_path}: the query gives {len(src.columns)} column(s) but "
                       f"{len(by_position)} are expected ({', '.join(by_position)})")
    given = {c: F.col(f"`{s}`") for c, s in zip(by_position, src.columns)}
    given.update({c: F.expr(_sql(v)) for c, v in static.items()})
    missing = [c for c in names if c not in given]
    if missing and not t.table.props.get("hoodie.write.set.null.for.missing.columns"):
        given.update({c: F.lit(None) for c in missing})
    df = src.select(*[given[c].cast(typ).alias(c) for c, typ in cols])
    overwrite = bool(stmt.args.get("overwrite"))
    extra: dict[str, str] = {}
    commit_empty = False
    if overwrite:
        dynamic_mode = overwrite_mode(spark, t) == "DYNAMIC"
        # Hudi's rule (and Spark's): a non-partitioned table, or static mode without a partition spec,
        # replaces the whole table; otherwise only partitions are replaced: in dynamic mode those the rows
        # go to, in static mode also every existing partition the spec's static values name (all of them
        # for a spec without static values), whether or not the query writes to it.
        if not t.table.is_partitioned or (not dynamic_mode and not (static or dynamic)):
            op, commit_empty = "insert_overwrite_table", True
        else:
            op = "insert_overwrite"
            if not dynamic_mode:
                from hoodie.format.file_group.fsview import FileSystemView

                existing = set(FileSystemView(t.table.storage, t.table.timeline).partitions())
                named = sorted(_matching_partitions(t.table, existing, static))
                extra["hoodie.write.static.overwrite.partitions"] = ",".join(named)
                commit_empty = bool(named)
    else:
        op = (spark.conf.get(INSERT_INTO_OPERATION, None) or "insert").lower()
    return _commit_rows(spark, df, t, op, "nothing to insert: the query returned no row" if not overwrite else
                        "nothing to overwrite: the query returned no row and no existing partition matches",
                        lambda n: f"{op} of {n} row(s) into {t.name or t.base_path}", commit_empty=commit_empty,
                        extra=extra)


def overwrite_mode(spark: Any, t: Target) -> str:
    """STATIC or DYNAMIC: ``hoodie.datasource.overwrite.mode`` (session conf, then the table's properties),
    else ``spark.sql.sources.partitionOverwriteMode``, as Hudi's SQL resolves it."""
    mode = spark.conf.get(OVERWRITE_MODE, None) or t.table.props.get(OVERWRITE_MODE) \
        or spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
    mode = str(mode).strip().upper()
    if mode not in ("STATIC", "DYNAMIC"):
        raise SqlError(f"{OVERWRITE_MODE} (or spark.sql.sources.partitionOverwriteMode) is {mode!r}: use STATIC or "
                       "DYNAMIC. Nothing was written")
    return mode


# -- UPDATE / DELETE ---------------------------------------------------------------------------------------

def _update(spark: Any, stmt: Any, t: Target):
    from pyspark.sql import functions as F

    refuse_keyless(t, "UPDATE")

    cols = _data_columns(t)
    names = [c for c, _ in cols]
    tcol = resolver(names, case_sensitive(spark))
    unknown = [eq.this.name for eq in stmt.expressions if tcol(eq.this.name) is None]
    if unknown:
        raise SqlError(f"UPDATE sets column(s) {unknown} that {t.name or t.base_path} does not have "
                       f"(columns: {', '.join(names)})")
    assign = {tcol(eq.this.name): eq.expression for eq in stmt.expressions}
    _refuse_key_updates(t, list(assign), "UPDATE")
    mode = t.table.merge_mode
    if mode.use_ordering and mode.ordering_field in assign:
        # Under EVENT_TIME_ORDERING the stored record outranks a lower ordering value: the update would
        # be lost on read (Hudi's copy-on-write UPDATE overwrites, its merge-on-read reads do not), so
        # it is refused rather than reported done.
        o = mode.ordering_field
        lowered = _matching(spark, stmt, t).where(F.expr(f"({_sql(assign[o])}) < `{o}`")).limit(1).count()
        if lowered:
            raise SqlError(f"UPDATE sets the ordering field {o} below its stored value; under EVENT_TIME_ORDERING "
                           f"the stored record would still win on read, so the update would be lost. Set {o} to "
                           f"a value at least the stored one (e.g. greatest(<value>, {o})). Nothing was written")
    out = _matching(spark, stmt, t).select(
        *[(F.expr(_sql(assign[c])).cast(typ) if c in assign else F.col(f"`{c}`")).alias(c) for c, typ in cols])
    return _commit_rows(spark, out, t, "upsert", "nothing to update: no row matches", lambda n: f"updated {n} row(s)")


def _delete(spark: Any, stmt: Any, t: Target):
    rows = _matching(spark, stmt, t)
    if not t.table.record_key_fields:
        # A table without record key fields: the delete takes each row's stored key (Hudi's delete prepped).
        from pyspark.sql import functions as F

        from hoodie.engine.read import read

        keys = read(spark, t.base_path).select("_hoodie_record_key", "_hoodie_partition_path",
                                               *[c for c, _ in _data_columns(t)])
        where = stmt.args.get("where")
        rows = keys.where(F.expr(_sql(where.this))) if where is not None else keys
    return _commit_rows(spark, rows, t, "delete", "nothing to delete: no row matches",
                        lambda n: f"deleted {n} row(s)")


def refuse_keyless(t: Target, what: str) -> None:
    """UPDATE and MERGE need a record key: on a table without one Hudi rewrites the stored records by
    their generated keys (upsert prepped), which hoodie does not do."""
    if not t.table.record_key_fields:
        raise SqlError(f"{what} on {t.name or t.base_path}, a table without record key fields (auto-generated keys): "
                       "Hudi runs it as an upsert of the stored records by their generated keys (upsert prepped), "
                       "which hoodie does not do. DELETE FROM and INSERT INTO work on this table; to change rows, "
                       "DELETE them and INSERT the new values, or create the table with TBLPROPERTIES (primaryKey = "
                       "'col'). Nothing was written")


def _matching(spark: Any, stmt: Any, t: Target):
    """The target's rows that the statement's WHERE keeps (all rows without one)."""
    from pyspark.sql import functions as F

    df = _read_target(spark, t)
    where = stmt.args.get("where")
    return df.where(F.expr(_sql(where.this))) if where is not None else df


def _commit_rows(spark: Any, df: Any, t: Target, operation: str, empty: str, done: Callable[[int], str],
                 commit_empty: bool = False, extra: Optional[dict[str, str]] = None):
    """Write ``df`` as one ``operation`` commit and say what happened; no rows commit nothing (unless
    ``commit_empty``: an overwrite with no rows still replaces)."""
    df = df.cache()
    try:
        n = df.count()
        if n == 0 and not commit_empty:
            return _result(spark, None, operation, 0, empty)
        instant = _write(df, t, operation, extra)
    finally:
        df.unpersist()
    return _result(spark, instant, operation, n, done(n))


# -- MERGE INTO ----------------------------------------------------------------------------------------------

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


def _conjuncts(e: Any) -> list[Any]:
    from sqlglot import exp

    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    return [e]


def _merge_keys(stmt: Any, t: Target, t_alias: str, s_alias: str, tcol: Callable, scol: Callable) -> dict[str, Any]:
    """The ON condition as Hudi accepts it on a table with a record key: equalities only, each record key
    field ``t.k = s.col`` (a source column, possibly cast), partition fields optionally the same way, and
    nothing else (Hudi matches rows by record key; it would ignore any other condition). Returns
    target column -> source column expression."""
    from sqlglot import exp

    on = stmt.args["on"]
    where = t.name or t.base_path

    def side(e: Any) -> Optional[str]:
        """The target column ``e`` is (a column of the target, possibly cast), or None."""
        while isinstance(e, (exp.Cast, exp.Paren)):
            e = e.this
        if not isinstance(e, exp.Column):
            return None
        q = e.table
        if q and q.lower() != t_alias.lower():
            return None
        if not q and scol(e.name) is not None:
            return None  # an unqualified name of a source column is the source's (Spark resolves it so)
        return tcol(e.name)

    def refs_target(e: Any) -> bool:
        return any(side(c) is not None for c in e.find_all(exp.Column))

    keys: dict[str, Any] = {}
    for c in _conjuncts(on):
        if not isinstance(c, exp.EQ):
            raise SqlError(f"MERGE INTO {where}: only equality predicates on the record key are supported in the "
                           f"ON condition of a table with a record key (provided {_sql(on)}), as in Hudi; put "
                           "other conditions in WHEN MATCHED AND ... / WHEN NOT MATCHED AND ...")
        left, right = side(c.this), side(c.expression)
        if left is not None and not refs_target(c.expression):
            col, other = left, c.expression
        elif right is not None and not refs_target(c.this):
            col, other = right, c.this
        else:
            raise SqlError(f"MERGE INTO {where}: invalid matching condition `{_sql(c)}`: expected "
                           "'target.key = <source column>', e.g. `t.id = s.id` or `t.id = cast(s.id AS ...)`")
        if col not in t.table.record_key_fields and col not in t.table.partition_fields:
            raise SqlError(f"MERGE INTO {where}: the ON condition `{_sql(c)}` is on {col}, not on the record key "
                           f"({', '.join(t.table.record_key_fields)}) or a partition field; Hudi matches rows by "
                           "record key only and would ignore it. Move it into WHEN MATCHED AND ...")
        inner = other
        while isinstance(inner, (exp.Cast, exp.Paren)):
            inner = inner.this
        if not (isinstance(inner, exp.Column) and (not inner.table or inner.table.lower() == s_alias.lower())
                and scol(inner.name) is not None):
            raise SqlError(f"MERGE INTO {where}: Only simple conditions of the form `t.id = s.id` are allowed on "
                           f"the primary-key and partition path column. Found `{_sql(c)}` (Hudi's rule: the key "
                           "would otherwise change on update)")
        keys[col] = other
    absent = [k for k in t.table.record_key_fields if k not in keys]
    if absent:
        raise SqlError(f"MERGE INTO {where}: Hudi tables with record key are required to match on all record key "
                       f"columns; the ON condition `{_sql(on)}` has no `t.{absent[0]} = s.<column>`. Match on the "
                       "record key and put other conditions in WHEN MATCHED AND ...")
    return keys


def _merge(spark: Any, stmt: Any, t: Target):
    from pyspark.sql import functions as F
    from sqlglot import exp

    refuse_keyless(t, "MERGE INTO")
    cols = _data_columns(t)
    names = [c for c, _ in cols]
    sensitive = case_sensitive(spark)
    tcol = resolver(names, sensitive)
    t_alias = t.alias or t.table.name
    using = stmt.args["using"]
    s_alias = using.alias_or_name
    if any(x.args.get("version") is not None for x in using.find_all(exp.Table)) and not _as_of_views(spark, using):
        raise SqlError("MERGE INTO ... USING ... TIMESTAMP AS OF reads a table that is not a hoodie table; hoodie.sql "
                       "time travels hoodie tables only")
    if isinstance(using, exp.Subquery):
        source = spark.sql(rewrite_names(spark, _sql(using.this)))
    else:
        source = spark.sql(rewrite_names(spark, f"SELECT * FROM {_sql(exp.table_(using.name, db=using.db or None))}"))
    src_cols = source.columns
    scol = resolver(src_cols, sensitive)
    where = t.name or t.base_path
    _merge_keys(stmt, t, t_alias, s_alias, tcol, scol)
    fixed = list(dict.fromkeys(list(t.table.record_key_fields) + list(t.table.partition_fields)))
    whens = stmt.args["whens"].expressions

    def star(what: str) -> dict[str, Any]:
        """``*``: each table column from the source column of its name (Spark's case rule)."""
        out = {}
        for c in names:
            s = scol(c)
            if s is None:
                raise SqlError(f"MERGE INTO {where} ... {what}: the source has no column {c!r} "
                               f"(source columns: {', '.join(src_cols)}; spark.sql.caseSensitive="
                               f"{str(sensitive).lower()}); name the columns instead of *")
            out[c] = exp.column(s, table=s_alias, quoted=True)
        return out

    def target_names(targets: list[Any], what: str) -> list[str]:
        out = []
        for e in targets:
            if isinstance(e, exp.Column) and e.table and e.table.lower() != t_alias.lower():
                raise SqlError(f"MERGE INTO {where} ... {what} names {_sql(e)}, not a column of the target {t_alias}")
            c = tcol(e.name)
            if c is None:
                raise SqlError(f"MERGE INTO {where} ... {what} names column {e.name!r} that the table does not "
                               f"have (columns: {', '.join(names)})")
            out.append(c)
        return out

    plans = []  # per clause: (kind, values) resolved before any Spark job runs
    for w in whens:
        then = w.args.get("then")
        if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
            plans.append(("delete", None))
        elif isinstance(then, exp.Update):
            if len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star):
                plans.append(("update", star("UPDATE SET *")))
            else:
                targets = target_names([eq.this for eq in then.expressions], "UPDATE SET")
                plans.append(("update", dict(zip(targets, [eq.expression for eq in then.expressions]))))
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star):
                values = star("INSERT *")
            else:
                targets = target_names(list(then.this.expressions), "INSERT")
                values = dict(zip(targets, then.expression.expressions))
            absent = [k for k in t.table.record_key_fields if k not in values]
            if absent:
                raise SqlError(f"MERGE INTO ... INSERT gives no value for the record key {', '.join(absent)}")
            plans.append(("insert", values))
        else:
            raise SqlError(f"MERGE INTO: unsupported clause {_sql(w)}")

    tgt = _read_target(spark, t).withColumn("__hoodie_matched", F.lit(True)).alias(t_alias)
    src = source.withColumn("__hoodie_src_row", F.monotonically_increasing_id()).alias(s_alias)
    joined = src.join(tgt, F.expr(_sql(stmt.args["on"])), "left")
    matched = F.col(f"`{t_alias}`.`__hoodie_matched`").isNotNull()
    # The first clause whose condition holds decides a row's action (its index), as Hudi and Spark do.
    action = F.lit(None).cast("int")
    for i in reversed(range(len(whens))):
        w = whens[i]
        cond = matched if w.args.get("matched") else ~matched
        if w.args.get("condition") is not None:
            cond = cond & F.coalesce(F.expr(_sql(w.args["condition"])), F.lit(False))
        action = F.when(cond, F.lit(i)).otherwise(action)
    joined = joined.withColumn("__hoodie_action", action).where(F.col("__hoodie_action").isNotNull()).cache()
    try:
        dup = (joined.where(matched).groupBy(*[F.col(f"`{t_alias}`.`{k}`") for k in t.table.record_key_fields])
               .count().where("count > 1").limit(1).collect())
        if dup:
            raise SqlError(f"MERGE INTO {where}: several source rows match one target row "
                           f"({dict(dup[0].asDict())}); Hudi refuses an ambiguous merge. Make the ON condition match "
                           "each target row at most once")
        has_delete = any(kind == "delete" for kind, _ in plans)
        rows_by_clause = []
        for i, (kind, values) in enumerate(plans):
            part = joined.where(F.col("__hoodie_action") == i)
            if kind == "delete":
                sel = [F.col(f"`{t_alias}`.`{c}`").cast(typ).alias(c) for c, typ in cols]
                sel.append(F.lit(True).alias("_hoodie_is_deleted"))
            elif kind == "update":
                new = {c: (F.expr(_sql(values[c])) if c in values else F.col(f"`{t_alias}`.`{c}`")).cast(typ)
                       for c, typ in cols}
                # Only a real change of record key or partition is refused (Hudi's rule): an assignment
                # equal to the matched value (SET id = s.id under ON t.id = s.id) changes nothing.
                moved = [c for c in fixed if c in values]
                if moved:
                    change = None
                    for c in moved:
                        ne = ~new[c].eqNullSafe(F.col(f"`{t_alias}`.`{c}`"))
                        change = ne if change is None else change | ne
                    bad = part.where(change).select(*[F.col(f"`{t_alias}`.`{c}`").alias(f"old {c}") for c in moved],
                                                     *[new[c].alias(f"new {c}") for c in moved]).limit(1).collect()
                    if bad:
                        raise SqlError(
                            f"MERGE INTO {where} ... UPDATE changes the record key or partition of a matched row "
                            f"({dict(bad[0].asDict())}); Hudi refuses that (the row would be stored twice, under "
                            "its old and new key or partition). Delete the row and insert it anew instead. "
                            "Nothing was written")
                sel = [new[c].alias(c) for c, _ in cols]
                if has_delete:
                    sel.append(F.lit(False).alias("_hoodie_is_deleted"))
            else:
                sel = [(F.expr(_sql(values[c])) if c in values else F.lit(None)).cast(typ).alias(c) for c, typ in cols]
                if has_delete:
                    sel.append(F.lit(False).alias("_hoodie_is_deleted"))
            rows_by_clause.append(part.select(*sel))
        out = rows_by_clause[0]
        for more in rows_by_clause[1:]:
            out = out.unionByName(more)
        out = out.cache()
        counts = {k: 0 for k in ("updated", "deleted", "inserted")}
        for r in joined.groupBy("__hoodie_action").count().collect():
            counts[{"delete": "deleted", "update": "updated", "insert": "inserted"}[plans[r[0]][0]]] += r[1]
        n = sum(counts.values())
        if n == 0:
            return _result(spark, None, "upsert", 0, "nothing to merge: no clause applies to any row")
        extra = {"hoodie.write.delete.marker.transient": "true"} if has_delete else {}
        instant = _write(out, t, "upsert", extra)
        out.unpersist()
    finally:
        joined.unpersist()
    note = ", ".join(f"{v} {k}" for k, v in counts.items())
    return _result(spark, instant, "upsert", n, f"merged: {note}")


# -- DDL -------------------------------------------------------------------------------------------------

def _drop_partition(spark: Any, stmt: Any, t: Target):
    from sqlglot import exp

    from hoodie.format.file_group.fsview import FileSystemView

    tbl = t.table
    if not tbl.is_partitioned:
        raise SqlError(f"{t.name or t.base_path} is not partitioned")
    view = FileSystemView(tbl.storage, tbl.timeline)
    existing = set(view.partitions())
    wanted: list[str] = []
    for action in stmt.args.get("actions") or []:
        for part in action.expressions:
            spec = {eq.this.name: eq.expression for eq in part.expressions if isinstance(eq, exp.EQ)}
            unknown = [k for k in spec if k not in tbl.partition_fields]
            if unknown:
                raise SqlError(f"DROP PARTITION names {unknown}, not partition fields of the table "
                               f"({', '.join(tbl.partition_fields)})")
            wanted.extend(_matching_partitions(tbl, existing, spec))
    if_exists = any(a.args.get("exists") for a in stmt.args.get("actions") or [])
    if not wanted:
        if if_exists:
            return _result(spark, None, "delete_partition", 0, "no such partition (IF EXISTS)")
        raise SqlError(f"no partition of {t.name or t.base_path} matches; existing: {sorted(existing)[:10]}")
    empty = spark.createDataFrame([], "x string")
    from hoodie.engine.write import write

    instant = write(empty, t.base_path, {"hoodie.table.name": tbl.name,
                                         "hoodie.datasource.write.operation": "delete_partition",
                                         "hoodie.datasource.write.partitions.to.delete": ",".join(sorted(set(wanted)))})
    _refresh(spark, t)
    return _result(spark, instant, "delete_partition", 0, f"dropped partition(s) {', '.join(sorted(set(wanted)))}")


def _matching_partitions(tbl: Any, existing: set[str], spec: dict[str, Any]) -> list[str]:
    """Partition paths whose values equal ``spec`` (SQL literals) on the given fields."""
    from hoodie.format.keys.paths import partition_values

    want = {k: (v.name if getattr(v, "is_string", False) else v.sql(dialect="spark")) for k, v in spec.items()}
    out = []
    for p in existing:
        values = partition_values(p, tbl.partition_fields, tbl.hive_style, tbl.url_encode)
        if all(str(values.get(k)) == str(v) for k, v in want.items()):
            out.append(p)
    return out


def _show_partitions(spark: Any, t: Target):
    from hoodie.format.file_group.fsview import FileSystemView

    view = FileSystemView(t.table.storage, t.table.timeline)
    parts = sorted(p for p in view.partitions() if any(True for _ in view.latest_file_slices(p)))
    return spark.createDataFrame([(p,) for p in parts], "partition string")


_TYPES = {"cow": "COPY_ON_WRITE", "copy_on_write": "COPY_ON_WRITE", "mor": "MERGE_ON_READ",
          "merge_on_read": "MERGE_ON_READ"}


def _create(spark: Any, stmt: Any):
    """CREATE TABLE ... USING hudi|hoodie with columns or AS SELECT (a new table)."""
    from sqlglot import exp

    from hoodie.engine.datasource import arrow_schema_for
    from hoodie.services.write.configs import WriteConfig
    from hoodie.services.write.prepare import avro_schema_for
    from hoodie.format.table import create_table

    props = {}
    location = None
    partitioned: list[str] = []
    using = None
    given = []
    for p in (stmt.args.get("properties").expressions if stmt.args.get("properties") else []):
        # OPTIONS (...) carries the same keys as TBLPROPERTIES in Hudi's CREATE TABLE (its tests use both).
        given.extend(p.expressions if isinstance(p, exp.OptionsProperty) else [p])
    for p in given:
        if isinstance(p, exp.FileFormatProperty):
            using = p.this.name if hasattr(p.this, "name") else str(p.this)
        elif isinstance(p, exp.LocationProperty):
            location = p.this.name
        elif isinstance(p, exp.PartitionedByProperty):
            partitioned = [c.name for c in p.this.expressions]
        elif isinstance(p, exp.Property) and p.args.get("value") is not None:
            key = p.name if isinstance(p.this, str) else (p.this.name if hasattr(p.this, "name") else str(p.this))
            value = p.args["value"]
            props[key] = value.name if isinstance(value, (exp.Literal, exp.Identifier, exp.Var)) else _sql(value)
    if (using or "").lower() not in PATH_DATABASES:
        return None
    schema_exp = stmt.this
    query = stmt.expression
    has_columns = isinstance(schema_exp, exp.Schema) and any(isinstance(c, exp.ColumnDef)
                                                              for c in schema_exp.expressions)
    if not has_columns and query is None:
        return None  # registering an existing table (or a clause refused there): hoodie.interfaces.sql
    table_exp = schema_exp.this if isinstance(schema_exp, exp.Schema) else schema_exp
    name = f"{table_exp.db}.{table_exp.name}" if table_exp.db else table_exp.name
    key = props.pop("primaryKey", None) or props.pop("hoodie.datasource.write.recordkey.field", None)
    ordering = (props.pop("preCombineField", None) or props.pop("orderingFields", None)
                or props.pop("hoodie.datasource.write.precombine.field", None))
    ttype = _TYPES.get((props.pop("type", None) or "cow").lower())
    if ttype is None:
        raise SqlError("TBLPROPERTIES type must be 'cow' or 'mor'")
    from hoodie.interfaces.catalog import _split

    from hoodie.format.storage import Storage
    from hoodie.format.table import table_exists

    db, tbl = _split(name, spark)
    refuse_plain_spark_table(spark, f"{db}.{tbl}")
    if spark.catalog.tableExists(tbl, db):
        if stmt.args.get("exists"):
            return _result(spark, None, "create", 0, f"{db}.{tbl} already exists (IF NOT EXISTS): nothing done")
        raise SqlError(f"{db}.{tbl} already exists; use CREATE TABLE IF NOT EXISTS to keep it, or DROP it first")
    if location is None:
        warehouse = spark.conf.get("spark.sql.warehouse.dir").replace("file:", "")
        location = os.path.join(warehouse, f"{db}.db" if db != "default" else "", tbl)
    if table_exists(Storage(location)):
        raise SqlError(f"LOCATION {location} already holds a hoodie table: CREATE TABLE with "
                       f"{'AS SELECT' if query is not None else 'a column list'} makes a new one. Register the "
                       f"existing table with CREATE TABLE {db}.{tbl} USING hoodie LOCATION '{location}' (no column "
                       "list, no AS SELECT), write into it with INSERT INTO, or DROP it (delete the folder) first")
    # Without primaryKey the table has no record key fields: Hudi 1.x generates a key per row (auto keys).
    opts = {"hoodie.table.name": tbl, **({"hoodie.datasource.write.recordkey.field": key} if key else {}),
            "hoodie.datasource.write.table.type": ttype,
            "hoodie.datasource.write.partitionpath.field": ",".join(partitioned),
            "hoodie.datasource.write.hive_style_partitioning": "true", **props}
    if ordering:
        opts["hoodie.datasource.write.precombine.field"] = ordering
    if query is not None:
        from hoodie.engine.write import write

        df = spark.sql(rewrite_names(spark, _sql(query)))
        instant = write(df, location, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
        register_table(spark, quote_name(db, tbl), location)
        return _result(spark, instant, "bulk_insert", df.count(), f"created {db}.{tbl} at {location}")
    cols = [(c.name, c.args["kind"].sql(dialect="spark")) for c in schema_exp.expressions
            if isinstance(c, exp.ColumnDef)]
    ddl = ", ".join(f"`{c}` {t}" for c, t in cols)
    arrow = arrow_schema_for(spark.createDataFrame([], ddl).schema)
    cfg = WriteConfig.from_options({**opts, "hoodie.datasource.write.operation": "insert"})
    avro = avro_schema_for(arrow, cfg, None)
    from hoodie.format.keys.generators import key_generator_from_config

    create_table(location, table_name=tbl, table_type=ttype, record_key_fields=cfg.record_key_fields,
                 partition_fields=cfg.partition_fields, precombine_field=cfg.precombine_field,
                 keygen_class=key_generator_from_config(cfg.keygen_props,
                                                        allow_auto_record_keys=not key).java_class_name,
                 hive_style=cfg.hive_style, avro_schema=avro, timeline_timezone=cfg.timeline_timezone,
                 database=db, table_version=cfg.table_version, auto_record_keys=not key)
    register_table(spark, quote_name(db, tbl), location)
    return _result(spark, None, "create", 0, f"created {db}.{tbl} at {location}: {json.dumps(dict(cols))}")


def _time_travel(spark: Any, stmt: Any):
    """``SELECT ... FROM t TIMESTAMP AS OF 'instant'`` (or ``VERSION AS OF``) on hoodie tables: each such
    table becomes the table as of that instant (completion time on table versions 8/9), as Hudi's SQL
    time travel reads it."""
    if not _as_of_views(spark, stmt):
        return None  # not a hoodie table: Spark's own time travel (or its error)
    return spark.sql(rewrite_names(spark, _sql(stmt)))


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


# -- entry ---------------------------------------------------------------------------------------------------

def run(spark: Any, text: str):
    """Run ``text`` if it is a statement of the module doc on a hoodie table; None otherwise (the
    caller hands it to ``spark.sql``)."""
    from sqlglot import exp

    stmt = _parse(text)
    if stmt is None:
        return None
    if isinstance(stmt, exp.Create) and str(stmt.args.get("kind", "")).upper() == "TABLE":
        return _create(spark, stmt)
    if isinstance(stmt, exp.Command) and str(stmt.this).upper() == "SHOW":
        rest = str(stmt.expression.name if hasattr(stmt.expression, "name") else stmt.expression).strip()
        if rest.upper().startswith("PARTITIONS "):
            import sqlglot

            t = _target(spark, sqlglot.parse_one(rest[len("PARTITIONS "):], into=exp.Table, read="spark"))
            return _show_partitions(spark, t) if t is not None else None
        return None
    if isinstance(stmt, (exp.Select, exp.Union)) and any(t.args.get("version") for t in stmt.find_all(exp.Table)):
        return _time_travel(spark, stmt)
    if isinstance(stmt, exp.Query):
        for table in stmt.find_all(exp.Table):
            if table.name and "/" not in table.name:
                refuse_plain_spark_table(spark, f"{table.db}.{table.name}" if table.db else table.name)
    table_exp = stmt.this
    if isinstance(stmt, exp.Insert) and isinstance(table_exp, exp.Schema):
        table_exp = table_exp.this
    if not isinstance(table_exp, exp.Table):
        return None
    handlers = {exp.Insert: _insert, exp.Update: _update, exp.Delete: _delete, exp.Merge: _merge}
    if isinstance(stmt, exp.Alter) and any(isinstance(a, exp.DropPartition) for a in stmt.args.get("actions") or []):
        handler = _drop_partition
    else:
        handler = next((h for k, h in handlers.items() if isinstance(stmt, k)), None)
    if handler is None:
        return None
    t = _target(spark, table_exp)
    if t is None:
        return None
    return handler(spark, stmt, t)


__all__ = ["run", "RESULT_SCHEMA", "INSERT_INTO_OPERATION"]
