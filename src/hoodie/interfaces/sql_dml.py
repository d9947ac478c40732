"""Hudi's Spark SQL DML and DDL for hoodie tables, through ``hoodie.sql(spark, text)``.

Spark 4.3 has no hook for Python-defined DML, so ``hoodie.sql`` parses the statement (sqlglot,
Spark dialect) and runs the statements below on hoodie tables itself; anything else, and any
statement on a table that is not a hoodie table, goes to ``spark.sql`` unchanged. Expressions
(``SET``, ``WHERE``, ``ON``, ``VALUES``, ``SELECT``) are evaluated by Spark. Every statement commits
through hoodie's one commit path as one instant (``hoodie.spark.write``), so a statement is atomic.

* ``INSERT INTO t [PARTITION (p = v, ...)] [(cols)] SELECT ... | VALUES ...``: operation
  ``hoodie.datasource.write.operation`` when the session sets it, else ``hoodie.spark.sql.insert.into.operation``
  (Hudi's key; default ``insert``, as Hudi 0.14+). Columns are taken by position (a partitioned table's
  partition columns are its last ones), except that a query whose output names are exactly the expected
  columns in another order is aligned by name (as Hudi's tests expect: ``PARTITION (dt = 'x') SELECT 20 AS
  price, 2 AS id ...``). Operation ``insert`` keeps a key the table already holds as a second row, as Hudi 1.x
  does (``hoodie.merge.allow.duplicate.on.inserts``, default true, also on copy-on-write where the row lands
  in the small file holding the key); with ``SET hoodie.merge.allow.duplicate.on.inserts = false`` such a
  row updates the stored record (merged by the ordering field), on both table types; operation ``upsert``
  keeps one row per key, also within the statement. ``hoodie.datasource.insert.dup.policy`` (session or
  table property) applies to operation ``insert`` on a table with a record key: ``none`` (default), ``drop``
  (rows of keys the table holds are left out; also ``hoodie.datasource.write.insert.drop.duplicates=true``)
  or ``fail`` (the statement is refused, ``Duplicate key found for insert statement``, nothing written).
  The deprecated ``hoodie.sql.insert.mode`` is read when the operation keys are not set: ``upsert``,
  ``strict`` (insert with dup policy fail) or ``non-strict`` (insert; bulk_insert with
  ``hoodie.sql.bulk.insert.enable=true``). With ``hoodie.merge.allow.duplicate.on.inserts=false`` on a table
  with an ordering field, an insert or overwrite combines its own rows of one key (the greatest ordering
  value kept), as Hudi's SQL does;
* ``INSERT OVERWRITE [TABLE] t [PARTITION (...)] ...``, Hudi's rules: ``hoodie.datasource.overwrite.mode``
  (session conf or table property), else ``spark.sql.sources.partitionOverwriteMode`` (default STATIC).
  A non-partitioned table, or STATIC without a partition spec, replaces the whole table
  (``insert_overwrite_table``, also with no row). STATIC with a spec replaces every existing partition
  its static values name (``PARTITION (yr = 2024, mo)``: every ``yr=2024`` partition; a spec without
  static values: all), also when the query returns no row. DYNAMIC replaces only the partitions the rows
  go to (``insert_overwrite``). ``hoodie.datasource.write.operation = insert_overwrite | insert_overwrite_table``
  in the session takes precedence (Hudi's order);
* ``UPDATE t SET col = expr, ... [WHERE cond]``: the matching rows, changed, as one upsert; setting a record
  key or partition column is refused with Hudi's message (``Detected disallowed assignment clause ...``);
* ``DELETE FROM t [WHERE cond]``: the matching keys, as one delete;
* ``MERGE INTO t USING s ON cond WHEN MATCHED [AND c] THEN UPDATE SET ... | UPDATE SET * | DELETE
  WHEN NOT MATCHED [AND c] THEN INSERT (cols) VALUES (...) | INSERT *``: clauses apply in order, the
  first whose condition holds wins; updates, inserts and deletes commit as one upsert (deletes as
  ``_hoodie_is_deleted`` markers that are not added to the table schema). Hudi's rules: ``ON`` is a
  conjunction of equalities ``t.k = s.col`` (a source column, possibly cast) covering every record key
  field, partition fields optional; anything else (``t.id = s.id + 1``, ``t.name = s.name``, ``t.x > 1``)
  is refused. An update (``SET *`` or explicit) that really changes a matched row's record key or
  partition is refused; an assignment equal to the matched value (``SET id = s.id``) is not a change;
* on a table without record key fields (created without ``primaryKey``) UPDATE and MERGE run as Hudi runs
  them, an upsert prepped: the rows are read with their stored ``_hoodie_record_key`` and
  ``_hoodie_partition_path`` and written back under them (``_hoodie.datasource.write.prepped``), so each
  changed record stays one row. MERGE's ``ON`` may then be any condition (``t.price < s.price AND t.id >=
  s.id``); rows it inserts get generated keys; several source rows matching one target row are combined by
  the ordering field (the later source row without one);
* column names resolve case-insensitively unless ``spark.sql.caseSensitive=true`` (``SET *``/``INSERT *``
  take each table column from the source column of that name; a source lacking one is refused);
* ``CREATE TABLE t (cols) USING hudi|hoodie [PARTITIONED BY (cols)] TBLPROPERTIES | OPTIONS (primaryKey =
  'id', preCombineField | orderingFields = 'ts', type = 'cow' | 'mor', hoodie.* = ...) [LOCATION 'path']``
  and ``CREATE TABLE t USING hudi ... AS SELECT ...``: a new table (under the warehouse folder without
  LOCATION), registered in the catalog. The PARTITIONED BY columns become the table's last columns (in
  PARTITIONED BY order), as Spark and Hudi order them. Without ``primaryKey`` the table has no record key
  fields and its keys are generated per row, as Hudi 1.x does: INSERT INTO, UPDATE, MERGE and DELETE FROM
  (the last three by the stored keys) work. The properties are read as Hudi reads them (aliases in any case,
  Hudi's ``hoodie.table.*`` keys, the table named by the statement): :mod:`hoodie.interfaces.sql_create`;
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

from typing import Any, Callable, Optional

from hoodie.interfaces.catalog import rewrite_names
from hoodie.interfaces.sql_call import SqlError
from hoodie.interfaces.sql_common import (  # noqa: F401  (RESULT_SCHEMA and the keys: this module's names too)
    INSERT_INTO_OPERATION, OVERWRITE_MODE, PATH_DATABASES, PREPPED_META, RESULT_SCHEMA, WRITE_OPERATION, Target, _as_of_views, _data_columns,
    _parse, _read_target, _refresh, _refuse_key_updates, _result, _sql, _target, _write, case_sensitive,
    prepped_options, refuse_plain_spark_table, resolver)
from hoodie.interfaces.sql_create import create as _create
from hoodie.interfaces.sql_merge import _merge

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
        # Spark's own message (Hudi's TestInsertTable "Test Insert Exception" expects it), then hoodie's.
        reason = "too many" if len(src.columns) > len(by_position) else "not enough"
        if t.name:
            from hoodie.interfaces.catalog import _split

            db, tbl = _split(t.name, spark)
            where = f"`spark_catalog`.`{db}`.`{tbl}`"
        else:
            where = f"`{t.base_path}`"
        raise SqlError(f"[INSERT_COLUMN_ARITY_MISMATCH.{reason.upper().replace(' ', '_')}_DATA_COLUMNS] Cannot write to "
                       f"{where}, the reason is {reason} data columns:\nTable columns: "
                       f"{', '.join(f'`{c}`' for c in by_position)}.\nData columns: "
                       f"{', '.join(f'`{c}`' for c in src.columns)}.\n(the query gives {len(src.columns)} column(s), "
                       f"{len(by_position)} are expected). Nothing was written")
    # Columns are taken by position: renamed first, so that a query with two outputs of one name
    # (SELECT 1, 'a1', 1, ...) is not ambiguous.
    src = src.toDF(*[f"__hoodie_c{i}" for i in range(len(src.columns))])
    given = {c: F.col(f"__hoodie_c{i}") for i, c in enumerate(by_position)}
    given.update({c: F.expr(_sql(v)) for c, v in static.items()})
    missing = [c for c in names if c not in given]
    if missing and not t.table.props.get("hoodie.write.set.null.for.missing.columns"):
        given.update({c: F.lit(None) for c in missing})
    df = src.select(*[given[c].cast(typ).alias(c) for c, typ in cols])
    overwrite = bool(stmt.args.get("overwrite"))
    extra: dict[str, str] = {}
    commit_empty = False
    # hoodie.datasource.write.operation in the session takes precedence over the statement's own rules, as in
    # Hudi's SQL (its TestInsertTable: "Config hoodie.datasource.write.operation always takes precedence").
    forced = (spark.conf.get(WRITE_OPERATION, None) or "").strip().lower() or None
    if overwrite and forced in ("insert_overwrite", "insert_overwrite_table"):
        op, commit_empty = forced, forced == "insert_overwrite_table"
    elif overwrite:
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
        op, policy = _insert_operation(spark, t, forced)
        if op == "insert":
            df = _apply_dup_policy(spark, df, t, policy)
        elif op == "bulk_insert" and t.table.record_key_fields:
            _refuse_bulk_insert_dup_policy(spark, t, policy)
    if op in ("insert", "insert_overwrite", "insert_overwrite_table") and t.table.record_key_fields \
            and t.table.precombine_field and str(spark.conf.get(ALLOW_DUPS, "true")).strip().lower() == "false":
        # Hudi's SQL combines a statement's rows of one key (the greatest ordering value kept) when duplicates
        # on insert are not allowed (TestInsertTable "Test combine before insert").
        extra["hoodie.combine.before.insert"] = "true"
    return _commit_rows(spark, df, t, op, "nothing to insert: the query returned no row" if not overwrite else
                        "nothing to overwrite: the query returned no row and no existing partition matches",
                        lambda n: f"{op} of {n} row(s) into {t.name or t.base_path}", commit_empty=commit_empty,
                        extra=extra)


INSERT_DUP_POLICY = "hoodie.datasource.insert.dup.policy"
INSERT_DROP_DUPS = "hoodie.datasource.write.insert.drop.duplicates"


INSERT_MODE = "hoodie.sql.insert.mode"
BULK_INSERT_ENABLE = "hoodie.sql.bulk.insert.enable"
ALLOW_DUPS = "hoodie.merge.allow.duplicate.on.inserts"


def _insert_operation(spark: Any, t: Target, forced: Optional[str]) -> tuple[str, Optional[str]]:
    """INSERT INTO's operation and the dup policy it implies, as Hudi's SQL deduces them: the session's
    hoodie.datasource.write.operation, else hoodie.spark.sql.insert.into.operation, else the deprecated
    hoodie.sql.insert.mode (``upsert``: upsert; ``strict``: insert refusing stored keys; ``non-strict``: insert,
    bulk_insert with hoodie.sql.bulk.insert.enable=true), else insert."""
    if forced:
        return forced, None
    op = spark.conf.get(INSERT_INTO_OPERATION, None)
    if op:
        return op.strip().lower(), None
    mode = (spark.conf.get(INSERT_MODE, None) or "").strip().lower()
    bulk = str(spark.conf.get(BULK_INSERT_ENABLE, "false")).strip().lower() == "true"
    if mode and mode not in ("upsert", "strict", "non-strict"):
        raise SqlError(f"{INSERT_MODE}={mode!r}: use upsert, strict or non-strict. Nothing was written")
    if mode == "strict" and bulk and t.table.record_key_fields:
        raise SqlError(f"Table with primaryKey can not use bulk insert in strict mode. ({INSERT_MODE}=strict with "
                       f"{BULK_INSERT_ENABLE}=true; nothing was written)")
    if mode == "upsert":
        return "upsert", None
    if mode == "strict":
        return "insert", "fail"
    if mode == "non-strict" and bulk:
        return "bulk_insert", None
    return "insert", None


def _dup_policy(spark: Any, t: Target, policy: Optional[str] = None) -> str:
    """The effective ``hoodie.datasource.insert.dup.policy``: ``policy`` (what the insert mode implies), else
    the session conf, else the table's properties, else none; ``hoodie.datasource.write.insert.drop.duplicates
    =true`` makes none drop."""
    policy = (policy or spark.conf.get(INSERT_DUP_POLICY, None) or t.table.props.get(INSERT_DUP_POLICY)
              or "none").strip().lower()
    if policy == "none" and str(spark.conf.get(INSERT_DROP_DUPS, "false")).strip().lower() == "true":
        policy = "drop"
    if policy not in ("none", "drop", "fail"):
        raise SqlError(f"{INSERT_DUP_POLICY}={policy!r}: use none, drop or fail. Nothing was written")
    return policy


def _refuse_bulk_insert_dup_policy(spark: Any, t: Target, policy: Optional[str]) -> None:
    """bulk_insert does not look up stored keys: a dup policy other than none is refused before anything is
    written (Hudi: "Dropping duplicates with bulk_insert in row writer path is not supported yet" for drop).
    Before, the policy was ignored and the statement stored the duplicates it was told to drop or refuse."""
    policy = _dup_policy(spark, t, policy)
    if policy == "none":
        return
    raise SqlError(f"Dropping duplicates with bulk_insert in row writer path is not supported yet "
                   f"({INSERT_DUP_POLICY}={policy} or {INSERT_DROP_DUPS}=true needs a lookup of the stored keys, which "
                   "bulk_insert does not do): use operation insert (hoodie.spark.sql.insert.into.operation=insert) "
                   f"or set {INSERT_DUP_POLICY}=none. Nothing was written")


def _apply_dup_policy(spark: Any, df: Any, t: Target, policy: Optional[str] = None):
    """Hudi's ``hoodie.datasource.insert.dup.policy`` for operation insert on a table with a record key
    (session conf, then the table's properties): ``none`` (default) writes every row; ``drop`` leaves out the
    rows whose key the table holds (also ``hoodie.datasource.write.insert.drop.duplicates=true``); ``fail``
    refuses the statement when one does, before anything is written."""
    keys = list(t.table.record_key_fields)
    policy = _dup_policy(spark, t, policy)
    if policy == "none" or not keys:
        return df
    stored = _read_target(spark, t).select(*keys).distinct()
    if policy == "drop":
        return df.join(stored, on=keys, how="left_anti")
    hit = df.join(stored, on=keys, how="left_semi").limit(1).collect()
    if hit:
        key = ",".join(f"{k}:{hit[0][k]}" for k in keys) if len(keys) > 1 else str(hit[0][keys[0]])
        raise SqlError(f"Duplicate key found for insert statement, key is: {key} ({INSERT_DUP_POLICY}=fail: "
                       f"{t.name or t.base_path} already holds this record key; set the policy to drop to leave such "
                       "rows out, or none to store them again). Nothing was written")
    return df


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
    # A table without record key fields: each row keeps the key it was read with (Hudi's upsert prepped).
    keyless = not t.table.record_key_fields
    out = _matching(spark, stmt, t, meta=keyless).select(
        *[F.col(c) for c in (PREPPED_META if keyless else ())],
        *[(F.expr(_sql(assign[c])).cast(typ) if c in assign else F.col(f"`{c}`")).alias(c) for c, typ in cols])
    return _commit_rows(spark, out, t, "upsert", "nothing to update: no row matches", lambda n: f"updated {n} row(s)",
                        extra=prepped_options(t))


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


def _matching(spark: Any, stmt: Any, t: Target, meta: bool = False):
    """The target's rows that the statement's WHERE keeps (all rows without one); ``meta`` adds the stored
    keys (:data:`PREPPED_META`)."""
    from pyspark.sql import functions as F

    df = _read_target(spark, t, meta=meta)
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


def _time_travel(spark: Any, stmt: Any):
    """``SELECT ... FROM t TIMESTAMP AS OF 'instant'`` (or ``VERSION AS OF``) on hoodie tables: each such
    table becomes the table as of that instant (completion time on table versions 8/9), as Hudi's SQL
    time travel reads it."""
    if not _as_of_views(spark, stmt):
        return None  # not a hoodie table: Spark's own time travel (or its error)
    return spark.sql(rewrite_names(spark, _sql(stmt)))


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
