"""``CREATE TABLE ... USING hudi|hoodie`` with a column list or ``AS SELECT``: a new hoodie table, registered
in the catalog (:mod:`hoodie.interfaces.sql_dml` routes the statement here; a registration of an existing
table by ``LOCATION`` alone is :func:`hoodie.interfaces.sql.create_table`).

The table's configuration comes from ``TBLPROPERTIES`` or ``OPTIONS`` as Hudi's SQL reads them
(``HoodieOptionConfig``): the aliases ``primaryKey``, ``preCombineField`` / ``orderingFields``, ``type`` and
``payloadClass`` in any letter case, or Hudi's own keys (``hoodie.table.recordkey.fields``,
``hoodie.table.type``, ``hoodie.table.precombine.field``, ``hoodie.datasource.write.*``). As Hudi does,
the table is named by the statement (``hoodie.table.name`` and ``hoodie.database.name`` given as
properties are dropped: the catalog database and table name are written) and
``hoodie.datasource.write.operation`` is not kept. Refused before anything is created, with Hudi's
wording: a key or ordering field that is not a column, a type other than cow/mor, and inline compaction
on a copy-on-write table.

A column list over a LOCATION that already holds a hoodie table registers that table when the list and
the given configuration are the table's own (Hudi's "create table over an existing hoodie.properties");
anything else there is refused.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from hoodie.interfaces.catalog import _split, quote_name, register_table, rewrite_names
from hoodie.interfaces.sql_call import SqlError
from hoodie.interfaces.sql_common import PATH_DATABASES, _result, _sql, refuse_plain_spark_table

_TYPES = {"cow": "COPY_ON_WRITE", "copy_on_write": "COPY_ON_WRITE", "mor": "MERGE_ON_READ",
          "merge_on_read": "MERGE_ON_READ"}
# Hudi's SQL option names (HoodieOptionConfig), matched in any case, and the keys that mean the same.
_KEY_ALIASES = ("primarykey", "hoodie.table.recordkey.fields", "hoodie.datasource.write.recordkey.field")
_ORDERING_ALIASES = ("precombinefield", "orderingfields", "hoodie.table.precombine.field",
                     "hoodie.table.ordering.fields", "hoodie.datasource.write.precombine.field")
_TYPE_ALIASES = ("type", "hoodie.table.type", "hoodie.datasource.write.table.type")
_PAYLOAD_ALIASES = ("payloadclass",)
_MERGE_MODE_ALIASES = ("recordmergemode", "hoodie.record.merge.mode")
# Given as properties, dropped as Hudi drops them: the statement names the table; the operation is a write's.
_FILTERED = ("hoodie.table.name", "hoodie.database.name", "hoodie.datasource.write.operation")
_INLINE_COMPACTION = ("hoodie.compact.inline", "hoodie.compact.schedule.inline")


def _take(props: dict[str, str], aliases: tuple[str, ...]) -> Optional[str]:
    """The value of the first of ``aliases`` (any case) in ``props``, all of them removed."""
    found = None
    for k in [k for k in props if k.lower() in aliases]:
        v = props.pop(k)
        found = found if found is not None else v
    return found


def table_config(props: dict[str, str]) -> tuple[Optional[str], Optional[str], str, dict[str, str]]:
    """(record key fields, ordering fields, table type, other properties) of CREATE TABLE's properties."""
    props = dict(props)
    key = _take(props, _KEY_ALIASES)
    ordering = _take(props, _ORDERING_ALIASES)
    given_type = _take(props, _TYPE_ALIASES)
    ttype = _TYPES.get((given_type or "cow").lower())
    if ttype is None:
        raise SqlError(f"'type' must be 'cow' or 'mor' (or hoodie.table.type COPY_ON_WRITE | MERGE_ON_READ), got "
                       f"{given_type!r}. Nothing was created")
    payload = _take(props, _PAYLOAD_ALIASES)
    mode = _take(props, _MERGE_MODE_ALIASES)
    if mode:
        payload = _payload_of_merge_mode(mode.strip().upper(), payload or props.get(
            "hoodie.datasource.write.payload.class"))
    if payload:
        props["hoodie.datasource.write.payload.class"] = payload
    for k in [k for k in props if k.lower() in _FILTERED]:
        props.pop(k)
    if ttype == "COPY_ON_WRITE" and any(str(v).lower() == "true" for k, v in props.items()
                                       if k.lower() in _INLINE_COMPACTION):
        raise SqlError("Compaction is not supported on a CopyOnWrite table: hoodie.compact.inline applies to "
                       "merge-on-read tables (type = 'mor'). Nothing was created")
    return key, ordering, ttype, props


def _payload_of_merge_mode(mode: str, payload: Optional[str]) -> str:
    """The payload class that gives a new table Hudi's ``recordMergeMode`` (HoodieOptionConfig's
    ``hoodie.record.merge.mode``): hoodie derives a table's merge mode from its payload class. Before, the
    option was ignored: a table asked for COMMIT_TIME_ORDERING merged by event time, silently."""
    from hoodie.format.table import COMMIT_TIME_PAYLOADS, DEFAULT_PAYLOAD, ORDERING_PAYLOADS, OVERWRITE_WITH_LATEST_PAYLOAD

    wanted = {"COMMIT_TIME_ORDERING": (OVERWRITE_WITH_LATEST_PAYLOAD, COMMIT_TIME_PAYLOADS),
              "EVENT_TIME_ORDERING": (DEFAULT_PAYLOAD, ORDERING_PAYLOADS)}.get(mode)
    if wanted is None:
        raise SqlError(f"recordMergeMode = {mode!r}: hoodie creates COMMIT_TIME_ORDERING or EVENT_TIME_ORDERING "
                       "tables (CUSTOM merging needs a merger class hoodie does not run). Nothing was created")
    if payload and payload not in wanted[1]:
        raise SqlError(f"recordMergeMode = {mode!r} and payloadClass = {payload!r} disagree; give one of them. "
                       "Nothing was created")
    return payload or wanted[0]


def _resolve_fields(given: Optional[str], columns: list[str], what: str, hudi_name: str) -> list[str]:
    """The columns ``given`` names (comma-separated, any case), as the columns spell them."""
    if not given:
        return []
    lower = {c.lower(): c for c in columns}
    out = []
    for f in (x.strip() for x in given.split(",") if x.strip()):
        if f.lower() not in lower:
            raise SqlError(f"Can't find {hudi_name} `{f}` in the columns ({', '.join(columns)}): {what} must name "
                           "columns of the table. Nothing was created")
        out.append(lower[f.lower()])
    return out


def statement_properties(stmt: Any) -> tuple[dict[str, str], Optional[str], list[str], Optional[str]]:
    """(TBLPROPERTIES and OPTIONS, LOCATION, PARTITIONED BY columns, USING format) of a parsed CREATE TABLE."""
    from sqlglot import exp

    props: dict[str, str] = {}
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
            # A dotted key (hoodie.table.type) parses as a Dot, whose .name is its last part only.
            key = (p.this if isinstance(p.this, str) else p.this.sql(dialect="spark").replace("`", "")
                   if isinstance(p.this, exp.Dot) else p.this.name if hasattr(p.this, "name") else str(p.this))
            value = p.args["value"]
            props[key] = value.name if isinstance(value, (exp.Literal, exp.Identifier, exp.Var)) else _sql(value)
    return props, location, partitioned, using


def create(spark: Any, stmt: Any):
    """CREATE TABLE ... USING hudi|hoodie with columns or AS SELECT (a new table); None for any other
    CREATE TABLE (a registration, or not a hoodie table)."""
    from sqlglot import exp

    from hoodie.format.storage import Storage
    from hoodie.format.table import table_exists

    props, location, partitioned, using = statement_properties(stmt)
    if (using or "").lower() not in PATH_DATABASES:
        return None
    schema_exp = stmt.this
    query = stmt.expression
    has_columns = isinstance(schema_exp, exp.Schema) and any(isinstance(c, exp.ColumnDef)
                                                              for c in schema_exp.expressions)
    if not has_columns and query is None:
        if partitioned:
            raise SqlError("It is not allowed to specify partition columns when the table schema is not defined. "
                           "Registering an existing table takes its partitioning from the table: CREATE TABLE name "
                           "USING hudi LOCATION '/path/to/table'. Nothing was registered")
        return None  # registering an existing table (or a clause refused there): hoodie.interfaces.sql
    table_exp = schema_exp.this if isinstance(schema_exp, exp.Schema) else schema_exp
    name = f"{table_exp.db}.{table_exp.name}" if table_exp.db else table_exp.name
    key, ordering, ttype, props = table_config(props)
    db, tbl = _split(name, spark)
    refuse_plain_spark_table(spark, f"{db}.{tbl}")
    if spark.catalog.tableExists(f"`{db}`.`{tbl}`"):
        if stmt.args.get("exists"):
            return _result(spark, None, "create", 0, f"{db}.{tbl} already exists (IF NOT EXISTS): nothing done")
        raise SqlError(f"{db}.{tbl} already exists; use CREATE TABLE IF NOT EXISTS to keep it, or DROP it first")
    managed = location is None  # in the warehouse folder: DROP TABLE deletes the data (interfaces/sql_ddl.py)
    if location is None:
        warehouse = spark.conf.get("spark.sql.warehouse.dir").replace("file:", "")
        location = os.path.join(warehouse, f"{db}.db" if db != "default" else "", tbl)
    if query is not None:
        return _create_as_select(spark, query, db, tbl, location, managed, key, ordering, ttype, props,
                                 partitioned)
    cols = [(c.name, c.args["kind"].sql(dialect="spark")) for c in schema_exp.expressions
            if isinstance(c, exp.ColumnDef)]
    kinds = dict(cols)
    cols = [(c, kinds[c]) for c in _partition_columns_last(list(kinds), partitioned, "the column list")]
    names = [c for c, _ in cols]
    keys = _resolve_fields(key, names, "primaryKey", "primaryKey")
    orderings = _resolve_fields(ordering, names, "preCombineField", "preCombineKey")
    ddl = ", ".join(f"`{c}` {t}" for c, t in cols)
    if table_exists(Storage(location)):
        _refuse_other_table(spark, location, db, tbl, ddl, keys, orderings, ttype, partitioned)
        register_table(spark, quote_name(db, tbl), location, managed=managed)
        return _result(spark, None, "create", 0, f"registered the existing table at {location} as {db}.{tbl} (its "
                                                 "schema and configuration are the column list's and properties')")
    _create_empty(spark, location, db, tbl, ddl, keys, orderings, ttype, partitioned, props)
    register_table(spark, quote_name(db, tbl), location, managed=managed)
    return _result(spark, None, "create", 0, f"created {db}.{tbl} at {location}: {json.dumps(dict(cols))}")


def _write_options(tbl: str, db: str, keys: list[str], orderings: list[str], ttype: str, partitioned: list[str],
                   props: dict[str, str]) -> dict[str, str]:
    # Without primaryKey the table has no record key fields: Hudi 1.x generates a key per row (auto keys).
    opts = {**props, "hoodie.table.name": tbl, "hoodie.database.name": db,
            "hoodie.datasource.write.table.type": ttype,
            "hoodie.datasource.write.partitionpath.field": ",".join(partitioned)}
    opts.setdefault("hoodie.datasource.write.hive_style_partitioning", "true")
    if keys:
        opts["hoodie.datasource.write.recordkey.field"] = ",".join(keys)
    if orderings:
        opts["hoodie.datasource.write.precombine.field"] = ",".join(orderings)
    return opts


def _create_empty(spark: Any, location: str, db: str, tbl: str, ddl: str, keys: list[str], orderings: list[str],
                  ttype: str, partitioned: list[str], props: dict[str, str]) -> None:
    from hoodie.engine.datasource import arrow_schema_for
    from hoodie.format.keys.generators import key_generator_from_config
    from hoodie.format.table import create_table
    from hoodie.services.write.configs import WriteConfig
    from hoodie.services.write.prepare import avro_schema_for

    opts = _write_options(tbl, db, keys, orderings, ttype, partitioned, props)
    arrow = arrow_schema_for(spark.createDataFrame([], ddl).schema)
    cfg = WriteConfig.from_options({**opts, "hoodie.datasource.write.operation": "insert"})
    avro = avro_schema_for(arrow, cfg, None)
    create_table(location, table_name=tbl, table_type=ttype, record_key_fields=cfg.record_key_fields,
                 partition_fields=cfg.partition_fields, precombine_field=cfg.precombine_field,
                 keygen_class=key_generator_from_config(cfg.keygen_props,
                                                        allow_auto_record_keys=not keys).java_class_name,
                 hive_style=cfg.hive_style, avro_schema=avro, timeline_timezone=cfg.timeline_timezone,
                 # The payload class (payloadClass, or recordMergeMode's) decides the merge mode: before, an
                 # empty table was created with the default one whatever CREATE TABLE said.
                 payload_class=cfg.payload_class,
                 database=db, table_version=cfg.table_version, auto_record_keys=not keys)


def _refuse_other_table(spark: Any, location: str, db: str, tbl: str, ddl: str, keys: list[str],
                        orderings: list[str], ttype: str, partitioned: list[str]) -> None:
    """Refuse a column list and configuration that are not the existing table's at ``location``."""
    from hoodie.engine.datasource import spark_schema_for
    from hoodie.format.table import HoodieTable

    t = HoodieTable(location, read_only=True)
    have = [(f.name.lower(), f.dataType.simpleString()) for f in spark_schema_for(t.arrow_schema(with_meta=False)).fields]
    want = [(f.name.lower(), f.dataType.simpleString()) for f in spark.createDataFrame([], ddl).schema.fields]
    diffs = []
    if have != want:
        diffs.append(f"its columns are ({', '.join(f'{n} {k}' for n, k in have)}), the column list gives "
                     f"({', '.join(f'{n} {k}' for n, k in want)})")
    if [k.lower() for k in t.record_key_fields] != [k.lower() for k in keys]:
        diffs.append(f"its record key is {t.record_key_fields}, primaryKey gives {keys}")
    if t.table_type != ttype:
        diffs.append(f"its type is {t.table_type}, the statement gives {ttype}")
    if [p.lower() for p in t.partition_fields] != [p.lower() for p in partitioned]:
        diffs.append(f"it is partitioned by {t.partition_fields}, PARTITIONED BY gives {partitioned}")
    if orderings and [o.lower() for o in orderings] != [(t.precombine_field or "").lower()]:
        diffs.append(f"its ordering field is {t.precombine_field!r}, preCombineField gives {orderings}")
    if diffs:
        raise SqlError(f"LOCATION {location} already holds a hoodie table, and not this one: {'; '.join(diffs)}. "
                       f"Register the existing table with CREATE TABLE {db}.{tbl} USING hoodie LOCATION '{location}' "
                       "(no column list, no AS SELECT), write into it with INSERT INTO, or DROP it (delete the "
                       "folder) first")


def _create_as_select(spark: Any, query: Any, db: str, tbl: str, location: str, managed: bool, key: Optional[str],
                      ordering: Optional[str], ttype: str, props: dict[str, str], partitioned: list[str]):
    from hoodie.engine.write import write
    from hoodie.format.storage import Storage
    from hoodie.format.table import table_exists

    if table_exists(Storage(location)):
        raise SqlError(f"Can not create the managed table {db}.{tbl}: LOCATION {location} already holds a hoodie "
                       f"table, and CREATE TABLE ... AS SELECT makes a new one. Register the existing table with "
                       f"CREATE TABLE {db}.{tbl} USING hoodie LOCATION '{location}' (no column list, no AS SELECT), "
                       "write into it with INSERT INTO, or DROP it (delete the folder) first"
                       if managed else
                       f"LOCATION {location} already holds a hoodie table: CREATE TABLE with AS SELECT makes a new "
                       f"one. Register the existing table with CREATE TABLE {db}.{tbl} USING hoodie LOCATION "
                       f"'{location}' (no column list, no AS SELECT), write into it with INSERT INTO, or DROP it "
                       "(delete the folder) first")
    df = spark.sql(rewrite_names(spark, _sql(query)))
    df = df.select(*_partition_columns_last(list(df.columns), partitioned, "AS SELECT"))
    keys = _resolve_fields(key, list(df.columns), "primaryKey", "primaryKey")
    orderings = _resolve_fields(ordering, list(df.columns), "preCombineField", "preCombineKey")
    opts = _write_options(tbl, db, keys, orderings, ttype, partitioned, props)
    instant = write(df, location, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
    register_table(spark, quote_name(db, tbl), location, managed=managed)
    return _result(spark, instant, "bulk_insert", df.count(), f"created {db}.{tbl} at {location}")


def _partition_columns_last(columns: list[str], partitioned: list[str], what: str) -> list[str]:
    """``columns`` with the PARTITIONED BY columns moved to the end, in their PARTITIONED BY order: the
    table schema Spark and Hudi give a partitioned table (an INSERT by position then fills the partition
    columns from the query's last columns, as Hudi's tests write them). A partition column that is not
    in ``columns`` is refused."""
    lower = {c.lower(): c for c in columns}
    missing = [p for p in partitioned if p.lower() not in lower]
    if missing:
        raise SqlError(f"CREATE TABLE ... PARTITIONED BY ({', '.join(partitioned)}): {', '.join(missing)} is not in "
                       f"{what} ({', '.join(columns)}). Nothing was created")
    parts = [lower[p.lower()] for p in partitioned]
    return [c for c in columns if c not in parts] + parts


__all__ = ["create", "table_config"]
