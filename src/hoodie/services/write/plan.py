"""Planning and executing one write (insert / upsert / delete) over Arrow data, in pure Python.

A write is split the way Hudi splits it: key generation, de-duplication by key, tagging against
the existing records (a simple index: the keys of the latest slices of the affected partitions),
then one unit of work per file group. ``plan_write`` and ``execute_file_group`` are what the Spark
engine distributes (one task per file group); :func:`hoodie.services.write.write_arrow` runs them in
this process, which is what the demo, the tests and small jobs use. Every write commits through the
transaction of :mod:`hoodie.services.write`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie import configs as C
from hoodie.configs import read
from hoodie.errors import WriteError
from hoodie.faults import fault_point
from hoodie.format.phases import phase
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.slice.bloom import BloomSpec
from hoodie.format.slice.merge import comparable_order_keys, java_order_key
from hoodie.format.timeline.commit_metadata import NULL_COMMIT, WriteStat
from hoodie.format.slice.eventtime import DEFAULT_UNIT, EventTimeError, event_time_millis
from hoodie.format.file_group.fsview import FileSlice, FileSystemView
from hoodie.format.storage import Storage
from hoodie.format.table import META_COLUMNS, HoodieTable, TableError, check_payload_class, create_table, table_exists
from hoodie.format.slice import writer as W
from hoodie.format.avro.schema import arrow_to_avro_schema, avro_to_arrow_schema
from hoodie.format.keys.generators import auto_record_keys, key_generator_from_config
from hoodie.format.keys.paths import check_partition_paths
from hoodie.format.slice.reader import _conform, read_base_file, read_file_slice, slice_record_keys
from hoodie.format.timeline import plans

OPERATIONS = ("insert", "bulk_insert", "upsert", "delete", "insert_overwrite", "insert_overwrite_table",
              "delete_partition")
# Operations that replace file groups and commit as a replacecommit.
OVERWRITE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table")
OPERATION_TYPES = {"insert": "INSERT", "bulk_insert": "BULK_INSERT", "upsert": "UPSERT", "delete": "DELETE",
                   "insert_overwrite": "INSERT_OVERWRITE", "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
                   "delete_partition": "DELETE_PARTITION"}
PARTITIONS_TO_DELETE = "hoodie.datasource.write.partitions.to.delete"
# Write options that fall back to a hoodie.properties key when the write does not set them.
WRITE_TABLE_VERSIONS = (6, 8, 9)
_TABLE_FALLBACKS = (
    (C.RECORD_KEY_FIELD, "hoodie.table.recordkey.fields"),
    (C.PARTITION_PATH_FIELD, "hoodie.table.partition.fields"),
    (C.TABLE_NAME, "hoodie.table.name"),
    (C.TABLE_TYPE, "hoodie.table.type"),
    (C.HIVE_STYLE_PARTITIONING, "hoodie.datasource.write.hive_style_partitioning"),
    (C.URL_ENCODE_PARTITIONING, "hoodie.datasource.write.partitionpath.urlencode"),
    (C.PRECOMBINE_FIELD, "hoodie.table.precombine.field"),
    (C.PAYLOAD_CLASS, "hoodie.compaction.payload.class"),
    (C.TIMELINE_TIMEZONE, "hoodie.table.timeline.timezone"),
)
SET_NULL_FOR_MISSING_COLUMNS = C.SET_NULL_FOR_MISSING_COLUMNS
# Hudi's soft-delete marker column: a row with true is a delete (HoodieRecordPayload.isDeleteRecord).
IS_DELETED = "_hoodie_is_deleted"


@dataclass
class WriteConfig:
    """The subset of Hudi's write options this layer needs, parsed from Hudi's own keys."""

    table_name: str
    table_type: str
    operation: str
    record_key_fields: list[str]
    partition_fields: list[str]
    precombine_field: Optional[str]
    keygen_props: dict[str, str]
    hive_style: bool
    url_encode: bool
    payload_class: Optional[str]
    event_time_field: Optional[str]
    block_format: str
    max_file_size: int
    small_file_limit: int
    record_size_estimate: int
    parquet_codec: str
    timeline_timezone: str
    combine_before_insert: bool
    bloom: BloomSpec = BloomSpec()
    event_time_unit: str = DEFAULT_UNIT
    set_null_for_missing_columns: bool = False
    table_version: int = 6  # of a table this write creates (hoodie.write.table.version)
    transient_delete_marker: bool = False  # _hoodie_is_deleted marks deletes only (not a table column)
    # No record key field: keys are generated per write as Hudi 0.14+ does (:func:`with_auto_keys`).
    auto_record_keys: bool = False
    bulk_insert_sort_mode: str = "NONE"  # hoodie.bulkinsert.sort.mode (the Spark engine's layout)

    @classmethod
    def from_options(cls, options: Mapping[str, Any], table: Optional[HoodieTable] = None,
                     overwrite: bool = False) -> "WriteConfig":
        """Parse Hudi datasource options; table properties fill what the options leave out.

        An option that contradicts the table's configuration (table type, record key, partition
        fields, key generator, precombine field, partition path style) is refused, as Hudi
        refuses it: the records would get other keys or paths than the stored ones. ``overwrite``
        (``mode='overwrite'``) only changes the advice: the table's data is replaced, its
        configuration kept.
        """
        o = {str(k): str(v) for k, v in options.items() if v is not None}
        tp = table.props if table is not None else {}
        # Table properties fill what the options leave out: merged first, then read through the typed
        # properties (one parsing rule per type; a boolean that is not true/false is refused).
        merged = {write_key: tp[table_key] for write_key, table_key in _TABLE_FALLBACKS if table_key in tp}
        if table is not None and table.precombine_field and str(C.PRECOMBINE_FIELD) not in merged:
            merged[str(C.PRECOMBINE_FIELD)] = table.precombine_field  # Hudi 1.1: hoodie.table.ordering.fields
        merged.update(o)
        cfg = read(merged, WriteError)

        op = cfg.get(C.OPERATION)
        # Only checked: hoodie's one index behaves as Hudi's BLOOM/SIMPLE; any other type is refused here.
        cfg.get(C.INDEX_TYPE)
        version = cfg.get(C.WRITE_TABLE_VERSION)
        if version not in WRITE_TABLE_VERSIONS:
            raise WriteError(
                f"hoodie.write.table.version={version}: hoodie writes table versions 6 (Hudi 0.14/0.15), 8 (Hudi 1.0) "
                "and 9 (Hudi 1.1). Nothing was written")
        if table is not None and cfg.is_set(C.WRITE_TABLE_VERSION) and version != table.table_version:
            raise WriteError(
                f"hoodie.write.table.version={version} but the table at {table.base_path} is table version "
                f"{table.table_version}; hoodie neither upgrades nor downgrades tables (Hudi's upgrade does). Drop the "
                "option to write the table in its own version. Nothing was written")
        rk = cfg.get(C.RECORD_KEY_FIELD) or []
        if table is not None and rk and not table.record_key_fields:
            raise WriteError(
                f"hoodie.datasource.write.recordkey.field={o.get(str(C.RECORD_KEY_FIELD), '')!r} but the table at "
                f"{table.base_path} has no record key fields (no hoodie.table.recordkey.fields): its record keys are "
                "auto-generated (Hudi 0.14+), so no column can match its stored records. Drop the option to add rows "
                "with generated keys, or write the data to a new table with this record key. Nothing was written")
        auto = not rk
        if auto:
            op = _auto_key_operation(cfg, table)
        pf = cfg.get(C.PARTITION_PATH_FIELD) or []
        name = cfg.get(C.TABLE_NAME)
        if not name:
            raise WriteError("set hoodie.table.name")
        ttype = cfg.get(C.TABLE_TYPE)
        if table is not None:
            _refuse_config_conflicts(o, table, overwrite)
        keygen = {k: v for k, v in o.items() if k.startswith(("hoodie.datasource.write.", "hoodie.keygen."))}
        for k, wk in (("hoodie.table.keygenerator.class", "hoodie.datasource.write.keygenerator.class"),
                      ("hoodie.table.keygenerator.type", "hoodie.datasource.write.keygenerator.type")):
            if k in tp and wk not in keygen and "hoodie.datasource.write.keygenerator.class" not in keygen:
                keygen[wk] = tp[k]
        keygen["hoodie.datasource.write.recordkey.field"] = ",".join(rk)
        keygen["hoodie.datasource.write.partitionpath.field"] = ",".join(pf)
        hive = bool(cfg.get(C.HIVE_STYLE_PARTITIONING))
        urlenc = bool(cfg.get(C.URL_ENCODE_PARTITIONING))
        keygen["hoodie.datasource.write.hive_style_partitioning"] = str(hive).lower()
        keygen["hoodie.datasource.write.partitionpath.urlencode"] = str(urlenc).lower()
        codec = W.parquet_codec(cfg.get(C.PARQUET_CODEC))
        try:
            bloom = BloomSpec.from_options(o)
        except ValueError as e:
            raise WriteError(str(e)) from None
        # A table without the timeline-zone key is LOCAL (Hudi's default); new tables default to UTC
        # (docs/ttl.md).
        zone = cfg.get(C.TIMELINE_TIMEZONE) if cfg.is_set(C.TIMELINE_TIMEZONE) else (
            "UTC" if table is None else "LOCAL")

        return cls(
            table_name=name,
            table_type=ttype,
            operation=op,
            record_key_fields=rk,
            partition_fields=pf,
            precombine_field=cfg.get(C.PRECOMBINE_FIELD),
            keygen_props=keygen,
            hive_style=hive,
            url_encode=urlenc,
            payload_class=_checked_payload(cfg.get(C.PAYLOAD_CLASS)),
            event_time_field=cfg.get(C.EVENT_TIME_FIELD),
            block_format=cfg.get(C.LOG_BLOCK_FORMAT),
            max_file_size=cfg.get(C.PARQUET_MAX_FILE_SIZE),
            small_file_limit=cfg.get(C.PARQUET_SMALL_FILE_LIMIT),
            record_size_estimate=cfg.get(C.RECORD_SIZE_ESTIMATE),
            parquet_codec=codec,
            timeline_timezone=zone,
            combine_before_insert=bool(cfg.get(C.COMBINE_BEFORE_INSERT)),
            bloom=bloom,
            event_time_unit=cfg.get(C.EVENT_TIME_UNIT),
            set_null_for_missing_columns=bool(cfg.get(C.SET_NULL_FOR_MISSING_COLUMNS)),
            table_version=version,
            transient_delete_marker=bool(cfg.get(C.TRANSIENT_DELETE_MARKER)),
            auto_record_keys=auto,
            bulk_insert_sort_mode=cfg.get(C.BULK_INSERT_SORT_MODE),
        )


# What a write without record key fields may do: add rows with generated keys (insert, bulk_insert and
# the overwrites, which replace file groups without matching keys), delete rows by the keys they were
# read with, drop partitions. An upsert must find stored records by key: refused.
AUTO_KEY_OPERATIONS = ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table", "delete",
                       "delete_partition")


def _auto_key_operation(cfg: Any, table: Optional[HoodieTable]) -> str:
    """The operation of a write without record key fields, whose keys are generated as Hudi 0.14+
    generates them (``AutoRecordKeyGenerationUtils``, ``HoodieSparkSqlWriter.deduceOperation``): an unset
    operation is bulk_insert (Hudi's choice); upsert and ``hoodie.combine.before.insert=true`` are refused
    before anything is written."""
    where = (f"the table at {table.base_path} has no record key fields (its keys are auto-generated)"
             if table is not None else "hoodie.datasource.write.recordkey.field is not set")
    if not cfg.is_set(C.OPERATION):
        return "bulk_insert"
    op = cfg.get(C.OPERATION)
    if op not in AUTO_KEY_OPERATIONS:
        raise WriteError(
            f"hoodie.datasource.write.operation={op} matches incoming rows to stored records by record key, and "
            f"this write has none: {where}. Without a record key field Hudi 0.14+ generates a new key for every "
            "row (<instant>_<partition id>_<row id>), so such a write can only add rows: use operation insert or "
            "bulk_insert (a delete takes the keys from the input's _hoodie_record_key and _hoodie_partition_path "
            "columns). To upsert, give the table a record key: set hoodie.datasource.write.recordkey.field when "
            "the table is created. Nothing was written")
    if cfg.get(C.COMBINE_BEFORE_INSERT):
        raise WriteError(
            f"hoodie.combine.before.insert=true de-duplicates rows by record key, and {where}: every row gets a "
            "new generated key, so there is nothing to de-duplicate (Hudi refuses the combination too). Drop the "
            "option, or set hoodie.datasource.write.recordkey.field. Nothing was written")
    return op


def _checked_payload(payload: Optional[str]) -> Optional[str]:
    """The payload class of a write; one hoodie does not merge Hudi's way is refused before anything
    is written (see :func:`hoodie.format.table.check_payload_class`)."""
    if payload:
        try:
            check_payload_class(payload, "this write (hoodie.datasource.write.payload.class)")
        except TableError as e:
            raise WriteError(str(e)) from None
    return payload


def check_event_times(data: pa.Table, cfg: WriteConfig) -> None:
    """Convert the event-time column once before anything is written: a type that is no time, a
    number in another unit than ``hoodie.payload.event.time.unit`` or a value beyond year 9999
    stops the write here (:mod:`hoodie.format.slice.eventtime`)."""
    field = cfg.event_time_field
    if not field or cfg.operation == "delete_partition" or field not in data.column_names:
        return  # a missing column is reported by the writer, which knows whether it is needed
    try:
        event_time_millis(data.column(field), field, cfg.event_time_unit)
    except EventTimeError as e:
        raise WriteError(f"{e} (nothing was written)") from None


def _fields(v: str) -> list[str]:
    return [x.split(":")[0].strip() for x in v.split(",") if x.strip()]


def _keygen_kind(v: str) -> str:
    return v.strip().rsplit(".", 1)[-1]


# (write option, table property, normalizer): settings a write cannot change on an existing table.
_TABLE_CONFIG = (
    ("hoodie.datasource.write.table.type", "hoodie.table.type", lambda v: v.strip().upper()),
    ("hoodie.datasource.write.recordkey.field", "hoodie.table.recordkey.fields", _fields),
    ("hoodie.datasource.write.partitionpath.field", "hoodie.table.partition.fields", _fields),
    ("hoodie.datasource.write.keygenerator.class", "hoodie.table.keygenerator.class", _keygen_kind),
    ("hoodie.datasource.write.precombine.field", "hoodie.table.precombine.field", lambda v: v.strip()),
    ("hoodie.datasource.write.hive_style_partitioning", "hoodie.datasource.write.hive_style_partitioning",
     lambda v: v.strip().lower()),
    ("hoodie.datasource.write.partitionpath.urlencode", "hoodie.datasource.write.partitionpath.urlencode",
     lambda v: v.strip().lower()),
)


_TABLE_CONFIG_DEFAULTS = {
    "hoodie.table.partition.fields": "",
    "hoodie.datasource.write.hive_style_partitioning": "false",
    "hoodie.datasource.write.partitionpath.urlencode": "false",
}


def _refuse_config_conflicts(options: Mapping[str, str], table: HoodieTable, overwrite: bool) -> None:
    """WriteError listing every option that contradicts ``table``'s hoodie.properties."""
    tp = table.props
    diffs = []
    for key, table_key, norm in _TABLE_CONFIG:
        if key not in options:
            continue
        # Absent folder-naming keys mean Hudi's default, false: a table without them is named plainly.
        stored = tp.get(table_key, _TABLE_CONFIG_DEFAULTS.get(table_key))
        if stored is None:
            continue
        if norm(options[key]) == norm(stored):
            continue
        if table_key == "hoodie.table.type":
            diffs.append(f"{key}={norm(options[key])} but the table at {table.base_path} is {stored}")
        else:
            diffs.append(f"{key}={options[key]!r} but the table has {table_key}={stored!r}")
    if not diffs:
        return
    advice = ("mode='overwrite' replaces the table's data but keeps its configuration; to change the "
              "configuration, delete the table first (all its data and history) and write it anew"
              if overwrite else "drop the option(s) or make them match .hoodie/hoodie.properties")
    raise WriteError(f"{'; '.join(diffs)}. A write cannot change the configuration of the table at "
                     f"{table.base_path} (Hudi refuses it too: records would get other keys, locations or "
                     f"merging than the stored ones): {advice}")


def overwrite_config(cfg: WriteConfig) -> WriteConfig:
    """The write config of ``mode='overwrite'`` on an existing table: an insert_overwrite_table
    replacecommit, as Hudi's SaveMode.Overwrite replaces the table's data.

    The old file groups stay readable until the replacecommit completes, so a failure at any
    point leaves the old table as it was. The batch is de-duplicated as the requested operation
    would de-duplicate it on an empty table (upsert: always; insert: with
    hoodie.combine.before.insert)."""
    if cfg.operation in ("delete", "delete_partition"):
        raise WriteError(f"mode='overwrite' replaces the table's data with the batch; it does not combine with "
                         f"hoodie.datasource.write.operation={cfg.operation}: use mode='append'")
    combine = cfg.combine_before_insert or cfg.operation == "upsert"
    return dataclasses.replace(cfg, operation="insert_overwrite_table", combine_before_insert=combine)


def prepare_records(data: pa.Table, cfg: WriteConfig,
                    auto_keys: Optional[tuple[str, int, int]] = None) -> pa.Table:
    """Drop incoming meta columns, add ``_hoodie_record_key``/``_hoodie_partition_path``.

    Without record key fields (``cfg.auto_record_keys``) the keys are generated: ``auto_keys`` is
    ``(instant, partition id, row id of the first row)`` (:func:`~hoodie.format.keys.generators.auto_record_keys`);
    without it the key column is null until :func:`with_auto_keys` fills it. A delete takes the keys and
    partition paths from the input's ``_hoodie_record_key`` and ``_hoodie_partition_path``, as Hudi does.
    """
    body = data.drop_columns([c for c in data.column_names if c in META_COLUMNS or c == "_hoodie_operation"])
    check_event_times(body, cfg)
    kg = key_generator_from_config(cfg.keygen_props, allow_auto_record_keys=cfg.auto_record_keys)
    if cfg.auto_record_keys and cfg.operation == "delete":
        keys, parts = _keys_to_delete(data)
    else:
        if not cfg.auto_record_keys:
            keys = kg.record_keys(body)
        elif auto_keys is None:
            keys = pa.nulls(body.num_rows, pa.string())
        else:
            keys = auto_record_keys(auto_keys[0], auto_keys[1], auto_keys[2], body.num_rows)
        parts = kg.partition_paths(body)
        check_partition_paths(kg, body, parts)
    if IS_DELETED in body.column_names:
        typ = body.schema.field(IS_DELETED).type
        if not (pa.types.is_boolean(typ) or pa.types.is_null(typ)):
            raise WriteError(f"column {IS_DELETED!r} has type {typ}; Hudi reads it as a boolean delete marker "
                             "(true deletes the record): cast it to boolean, or rename it")
    if cfg.precombine_field and cfg.operation not in ("delete", "delete_partition"):
        if cfg.precombine_field not in body.column_names:
            raise WriteError(
                f"precombine field {cfg.precombine_field!r} is not a column of the data "
                f"(columns: {', '.join(body.column_names)}); set hoodie.datasource.write.precombine.field"
            )
        nulls = body.column(cfg.precombine_field).null_count
        if nulls:
            raise WriteError(f"{nulls} record(s) have a null precombine field {cfg.precombine_field!r}; "
                             "Hudi cannot order them: fill the column or choose another precombine field")
    return body.append_column("_hoodie_record_key", keys).append_column("_hoodie_partition_path", parts)


def _keys_to_delete(data: pa.Table) -> tuple[pa.Array, pa.Array]:
    """The record keys and partition paths of a delete from a table without record key fields: the input's
    meta columns (rows read from the table carry them), as Hudi's delete takes them when it has no key
    generator (``HoodieCreateRecordUtils.getHoodieKeyAndMaybeLocationFromAvroRecord``)."""
    missing = [c for c in ("_hoodie_record_key", "_hoodie_partition_path") if c not in data.column_names]
    if missing:
        raise WriteError(
            f"a delete from a table without record key fields (auto-generated keys) takes each row's key from its "
            f"_hoodie_record_key and _hoodie_partition_path columns, as Hudi does, and the input lacks "
            f"{', '.join(missing)}: read the rows to delete from the table (hoodie.read_table and "
            "spark.read.format('hoodie') return both columns) and write those with operation=delete. Nothing was "
            "written")
    cols = []
    for c in ("_hoodie_record_key", "_hoodie_partition_path"):
        col = data.column(c)
        if col.null_count:
            raise WriteError(f"{col.null_count} row(s) to delete have a null {c}; a delete from a table without "
                             "record key fields needs the keys the rows were read with. Nothing was written")
        cols.append(pc.cast(col, pa.string()).combine_chunks())
    return cols[0], cols[1]


def with_auto_keys(records: pa.Table, cfg: WriteConfig, instant: str, partition_id: int = 0,
                   first_row: int = 0) -> pa.Table:
    """``records`` (from :func:`prepare_records`) with their generated record keys when the write has no
    record key field (Hudi 0.14+'s ``<instant>_<partition id>_<row id>``, rows numbered from ``first_row``
    in input order); unchanged otherwise, and for a delete (its keys come from the input)."""
    if not cfg.auto_record_keys or cfg.operation in ("delete", "delete_partition"):
        return records
    i = records.schema.get_field_index("_hoodie_record_key")
    keys = auto_record_keys(instant, partition_id, first_row, records.num_rows)
    return records.set_column(i, "_hoodie_record_key", keys)


def dedupe(records: pa.Table, precombine: Optional[str]) -> pa.Table:
    """One record per key: the greatest precombine value wins (ties: the later row)."""
    n = records.num_rows
    if n == 0:
        return records
    pos = pa.array(np.arange(n, dtype=np.int64))
    work = pa.table({"k": records.column("_hoodie_record_key"), "p": pos})
    if precombine:
        work = work.append_column("o", java_order_key(records.column(precombine)))
        idx = pc.sort_indices(work, [("k", "ascending"), ("o", "descending"), ("p", "descending")])
    else:
        idx = pc.sort_indices(work, [("k", "ascending"), ("p", "descending")])
    ks = work.column("k").take(idx).combine_chunks()
    first = np.ones(n, dtype=bool)
    if n > 1:
        first[1:] = ~pc.equal(ks.slice(1), ks.slice(0, n - 1)).fill_null(False).to_numpy(zero_copy_only=False)
    keep = np.sort(idx.to_numpy()[first])
    return records.take(pa.array(keep))


@dataclass
class FileGroupWork:
    """All the changes one file group receives in a write (what one Spark task executes)."""

    partition: str
    file_id: str
    kind: str  # "insert" (new file group), "merge" (COW rewrite), "append" (MOR log)
    base_instant: Optional[str] = None
    base_file: Optional[str] = None
    log_files: list[str] = field(default_factory=list)
    upserts: Optional[pa.Table] = None  # records with _hoodie_record_key/_hoodie_partition_path
    deletes: Optional[pa.Table] = None  # record_key, partition_path, ordering_value
    num_inserts: int = 0
    reserved_log_version: int = 0


def avro_schema_for(schema: pa.Schema, cfg: WriteConfig, table: Optional[HoodieTable]) -> dict:
    """The table schema after writing data of ``schema`` (meta columns ignored): the new table's,
    or the existing table's evolved by it (:func:`evolve_schema`)."""
    body = pa.schema([f for f in schema if f.name not in META_COLUMNS and f.name != "_hoodie_operation"])
    if cfg.transient_delete_marker and table is not None and IS_DELETED not in _table_fields(table):
        body = pa.schema([f for f in body if f.name != IS_DELETED])
    new = arrow_to_avro_schema(body, f"{cfg.table_name}_record", f"hoodie.{cfg.table_name}")
    if table is None:
        return new
    try:
        old = table.avro_schema()
    except TableError:
        return new
    return evolve_schema(old, new, allow_missing=cfg.set_null_for_missing_columns)


def _table_fields(table: HoodieTable) -> set[str]:
    try:
        return {f["name"] for f in table.avro_schema().get("fields", [])}
    except TableError:
        return set()


def evolve_schema(old: dict, new: dict, allow_missing: bool = False) -> dict:
    """The schema after a write: the old fields (in order) plus new nullable fields.

    A field that changes type incompatibly, or a new non-nullable field, is refused with an error
    naming the column. A table field the new data lacks is refused as Hudi refuses it
    (MissingSchemaFieldException) unless ``allow_missing``
    (``hoodie.write.set.null.for.missing.columns=true``): it then stays, written as null.
    """
    old_arrow = avro_to_arrow_schema(old)
    new_arrow = avro_to_arrow_schema(new)
    old_fields = {f["name"]: f for f in old.get("fields", [])}
    skip = set(META_COLUMNS) | {"_hoodie_operation"}
    missing = [n for n in old_arrow.names if n not in new_arrow.names and n not in skip]
    if missing and not allow_missing:
        raise WriteError(
            f"the batch lacks the table column(s) {missing} (table columns: "
            f"{', '.join(n for n in old_arrow.names if n not in skip)}); Hudi refuses such a write "
            f"(MissingSchemaFieldException): updated records would lose those values. Add the column(s) "
            f"to the batch, or set {SET_NULL_FOR_MISSING_COLUMNS}=true to write them as null"
        )
    non_nullable = [n for n in missing if not _nullable(old_fields.get(n, {}).get("type"))]
    if non_nullable:
        raise WriteError(f"the batch lacks the non-nullable table column(s) {non_nullable}, which cannot be "
                         "written as null: add them to the batch")
    for nf in new_arrow:
        if nf.name in old_arrow.names:
            of = old_arrow.field(nf.name)
            # A batch may widen a column (int->long, float->double); a batch narrower than the
            # table is cast up to the table's type (the table never narrows).
            if not of.type.equals(nf.type) and not _widening(of.type, nf.type) and not _widening(nf.type, of.type):
                raise WriteError(
                    f"column {nf.name!r} has type {nf.type} in the new data but {of.type} in the table; "
                    "cast it to the table's type (only int->long and float->double widen)"
                )
    merged = dict(old)
    fields = list(old.get("fields", []))
    for f in new.get("fields", []):
        if f["name"] not in old_fields:
            t = f["type"]
            if not (isinstance(t, list) and "null" in t):
                raise WriteError(f"new column {f['name']!r} must be nullable to be added to an existing table")
            fields.append(f)
    for i, f in enumerate(fields):
        nf = next((x for x in new.get("fields", []) if x["name"] == f["name"]), None)
        if nf is not None and _widening(avro_to_arrow_schema({"type": "record", "name": "r", "fields": [f]}).field(0).type,
                                        avro_to_arrow_schema({"type": "record", "name": "r", "fields": [nf]}).field(0).type):
            # The widened field keeps the old one's nullability: old rows may hold nulls.
            old_nullable = isinstance(f["type"], list) and "null" in f["type"]
            new_nullable = isinstance(nf["type"], list) and "null" in nf["type"]
            fields[i] = nf if new_nullable or not old_nullable else {**nf, "type": ["null", nf["type"]],
                                                                     "default": None}
    merged["fields"] = fields
    return merged


def _nullable(avro_type: Any) -> bool:
    return isinstance(avro_type, list) and "null" in avro_type


def _widening(old: pa.DataType, new: pa.DataType) -> bool:
    return (pa.types.is_int32(old) and pa.types.is_int64(new)) or (
        pa.types.is_float32(old) and pa.types.is_float64(new))


@dataclass
class WritePlan:
    """A write split into per-file-group work, ready to execute and commit."""

    table: HoodieTable
    cfg: WriteConfig
    instant: str
    avro_schema: dict
    work: list[FileGroupWork]
    operation_type: str


def _existing_slices(view: FileSystemView, partitions: Sequence[str]) -> dict[str, list[FileSlice]]:
    return {p: view.latest_file_slices(p) for p in partitions}


def _slice_keys(table: HoodieTable, sl: FileSlice) -> pa.Array:
    """The record keys live in a slice, for tagging (a simple index).

    Keys deleted in a log do not count: a later upsert of such a key is a new insert, which gives
    the expected row in every reader (routing it to the old file group would let the older base
    version outrank it on ordering and resurrect or drop it). Only key columns are read unless a
    log block deletes keys (:func:`~hoodie.format.slice.reader.slice_record_keys`).
    """
    return slice_record_keys(table, sl)


def check_compaction_plans(table: HoodieTable) -> None:
    """Read every pending compaction plan of a MERGE_ON_READ table before a write starts: updates are
    routed by them, so a damaged plan file stops the write before anything is written (the error
    names the file and how to remove the plan)."""
    if table.is_mor:
        FileSystemView(table.storage, table.reload().timeline).pending_compaction_file_groups()


def split_by_partition(records: pa.Table) -> dict[str, pa.Table]:
    """The records of each partition path, in input order within each (one stable sort: a task of a
    bulk_insert holds rows of many partitions, and a filter per partition would scan all rows each time)."""
    col = records.column("_hoodie_partition_path")
    if records.num_rows == 0:
        return {}
    if col.null_count:  # key generation always yields a path ("" when non-partitioned)
        raise WriteError("internal error: records without a partition path reached planning; nothing was written")
    enc = pc.dictionary_encode(col).combine_chunks()
    values = enc.dictionary.to_pylist()
    if len(values) == 1:
        return {values[0]: records}
    codes = enc.indices.to_numpy(zero_copy_only=False)
    counts = np.bincount(codes, minlength=len(values))
    # Codes number partitions by first appearance: rows that arrive grouped (time-partitioned data
    # usually does) have non-decreasing codes and are sliced without copying.
    grouped = codes.size < 2 or bool((codes[1:] >= codes[:-1]).all())
    ordered = records if grouped else records.take(pa.array(np.argsort(codes, kind="stable")))
    out: dict[str, pa.Table] = {}
    start = 0
    for code, n in enumerate(counts):
        if n:
            out[values[code]] = ordered.slice(start, int(n))
        start += int(n)
    return out


def plan_write(table: HoodieTable, records: pa.Table, cfg: WriteConfig, instant: str,
               avro_schema: dict) -> WritePlan:
    """Tag records against the table and group them into per-file-group work."""
    op = cfg.operation
    is_delete = op == "delete"
    if cfg.auto_record_keys and records.column("_hoodie_record_key").null_count:
        raise WriteError("internal error: the write's record keys were not generated (with_auto_keys) before "
                         "planning; nothing was written")
    # Inserts and overwrites de-duplicate only with hoodie.combine.before.insert, as in Hudi.
    if op not in ("insert", "bulk_insert") + OVERWRITE_OPERATIONS or cfg.combine_before_insert:
        with phase("dedupe"):
            records = dedupe(records, None if is_delete else cfg.precombine_field)
    by_partition = split_by_partition(records)
    view = FileSystemView(table.storage, table.timeline)
    pending_fg = view.pending_compaction_file_groups()
    # Log versions a pending partial compaction reserves for its links (docs/compaction.md).
    reserved = view.reserved_log_versions()
    work: list[FileGroupWork] = []
    to_insert: dict[str, pa.Table] = {}
    # insert skips the index as Hudi's does; overwrites replace the old file groups wholesale.
    tag_index = op not in ("insert", "bulk_insert") + OVERWRITE_OPERATIONS
    for p in sorted(by_partition):
        prec = by_partition[p]
        matched = np.zeros(prec.num_rows, dtype=bool)
        if tag_index:
            keys = prec.column("_hoodie_record_key")
            for sl in view.latest_file_slices(p):
                with phase("index.read"):
                    existing = _slice_keys(table, sl)
                if len(existing) == 0:
                    continue
                # A key held by several file groups (duplicates an insert wrote) updates each copy,
                # as Hudi's index tags every location it finds for the key.
                with phase("index.match"):
                    hit = pc.is_in(keys, value_set=existing).to_numpy(zero_copy_only=False)
                if not hit.any():
                    continue
                matched |= hit
                hits = prec.filter(pa.array(hit))
                if table.is_mor:
                    base_instant = pending_fg.get((p, sl.file_id), sl.base_instant)
                    logs = [lf.name for lf in sl.log_files if lf.parsed.base_instant == base_instant]
                    w = FileGroupWork(p, sl.file_id, "append", base_instant,
                                      sl.base_file.name if sl.base_file and sl.base_instant == base_instant else "",
                                      logs)
                    pending_c, top = reserved.get((p, sl.file_id), (None, 0))
                    if pending_c == base_instant:
                        w.reserved_log_version = top
                else:
                    w = FileGroupWork(p, sl.file_id, "merge", sl.base_instant,
                                      sl.base_file.name if sl.base_file else None, [])
                if is_delete:
                    # The delete operation writes natural-order deletes (ordering value 0), as
                    # Hudi's delete API does: they win over every earlier version of the key.
                    w.deletes = _delete_table(hits, cfg.event_time_field)
                elif table.is_mor:
                    w.deletes, w.upserts = _split_soft_deletes(table, sl, hits, cfg)
                    if w.deletes is None and w.upserts is None:
                        continue
                else:
                    w.upserts = hits  # the merge applies soft deletes (execute_file_group)
                work.append(w)
        if not is_delete:
            # A soft-deleted row of a key the table does not hold is not written (Hudi's
            # getInsertValue is empty for it): inserts, overwrites and upserts of new keys.
            new = _drop_soft_deleted(prec.filter(pa.array(~matched)) if matched.any() else prec)
            if new.num_rows:
                to_insert[p] = new
    per_file = max(1, cfg.max_file_size // max(1, cfg.record_size_estimate))
    for p, recs in to_insert.items():
        offset = 0
        if not table.is_mor and op not in OVERWRITE_OPERATIONS + ("bulk_insert",):
            # Copy-on-write small-file handling: fill base files below the small-file limit first
            # (not for bulk_insert, as in Hudi: its tasks write new file groups only, so tasks that
            # hold rows of one partition never rewrite the same file).
            by_fid = {w.file_id: w for w in work if w.partition == p}
            for sl in view.latest_file_slices(p):
                if offset >= recs.num_rows or sl.base_file is None or sl.base_file.size >= cfg.small_file_limit:
                    continue
                cap = (cfg.max_file_size - sl.base_file.size) // max(1, cfg.record_size_estimate)
                if cap <= 0:
                    continue
                chunk = recs.slice(offset, cap)
                offset += chunk.num_rows
                w = by_fid.get(sl.file_id)
                if w is None:
                    w = FileGroupWork(p, sl.file_id, "merge", sl.base_instant, sl.base_file.name, [])
                    work.append(w)
                    by_fid[sl.file_id] = w
                if w.deletes is None:
                    w.upserts = chunk if w.upserts is None else pa.concat_tables([w.upserts, chunk])
                    w.num_inserts += chunk.num_rows
        rest = recs.slice(offset)
        if rest.num_rows == 0:
            continue
        n_files = max(1, math.ceil(rest.num_rows / per_file))
        size = math.ceil(rest.num_rows / n_files)
        for i in range(n_files):
            chunk = rest.slice(i * size, size)
            if chunk.num_rows:
                work.append(FileGroupWork(p, N.new_file_id(0), "insert", instant, None, [], chunk,
                                          num_inserts=chunk.num_rows))
    op_type = OPERATION_TYPES[op]
    return WritePlan(table, cfg, instant, avro_schema, work, op_type)


def _soft_deleted(records: pa.Table) -> Optional[np.ndarray]:
    """Which rows have ``_hoodie_is_deleted = true`` (null is false), or None when none has."""
    if IS_DELETED not in records.column_names or records.num_rows == 0:
        return None
    col = records.column(IS_DELETED)
    if pa.types.is_null(col.type):
        return None
    mask = pc.fill_null(col, False).to_numpy(zero_copy_only=False)
    return mask if mask.any() else None


def _drop_soft_deleted(records: pa.Table) -> pa.Table:
    gone = _soft_deleted(records)
    return records if gone is None else records.filter(pa.array(~gone))


def _split_soft_deletes(table: HoodieTable, sl: FileSlice, hits: pa.Table,
                        cfg: WriteConfig) -> tuple[Optional[pa.Table], Optional[pa.Table]]:
    """(deletes, upserts) for a merge-on-read slice: soft-deleted rows become a delete block, as
    Hudi's append handle writes them, carrying the precombine value as their ordering value.

    With an ordering field, a soft delete older than the stored version is dropped here, as
    DefaultHoodieRecordPayload ignores it. Writing it would leave the outcome to each reader's
    delete rule (Java's Spark reader applies log deletes unconditionally)."""
    gone = _soft_deleted(hits)
    if gone is None:
        return None, (hits if hits.num_rows else None)
    dels = hits.filter(pa.array(gone))
    ups = hits.filter(pa.array(~gone))
    if table.merge_mode.use_ordering and cfg.precombine_field:
        schema = table.arrow_schema()
        cols = ["_hoodie_record_key", "_hoodie_commit_time", cfg.precombine_field]
        if IS_DELETED in schema.names:
            cols.append(IS_DELETED)
        stored = read_file_slice(table, sl, pa.schema([schema.field(c) for c in cols if c in schema.names]))
        if cfg.precombine_field in stored.column_names:
            dels = _drop_stale_updates(stored, dels, cfg.precombine_field)
    deletes = _delete_table(dels, cfg.event_time_field, cfg.precombine_field) if dels.num_rows else None
    return deletes, (ups if ups.num_rows else None)


def _delete_table(hits: pa.Table, event_time_field: Optional[str] = None,
                  ordering_field: Optional[str] = None) -> pa.Table:
    cols = {
        "record_key": hits.column("_hoodie_record_key"),
        "partition_path": hits.column("_hoodie_partition_path"),
    }
    if ordering_field and ordering_field in hits.column_names:
        cols["ordering_value"] = hits.column(ordering_field)
    # The deletes' event times (when the input carries the event-time field) let the delete block
    # record its range; without them the block's event time is unknown (docs/compaction.md).
    if event_time_field and event_time_field in hits.column_names:
        cols["event_time"] = hits.column(event_time_field)
    return pa.table(cols)


def _full_records(recs: pa.Table, schema: pa.Schema) -> pa.Table:
    """Data columns in table-schema order (missing nullable columns become nulls)."""
    data_schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
    return _conform(recs, data_schema)


def execute_file_group(table: HoodieTable, w: FileGroupWork, *, instant: str, avro_schema: dict,
                       cfg: WriteConfig, token: str, task_partition_id: int = 0) -> WriteStat:
    """Write the files of one file group (base file or log file) and return its write stat."""
    storage = table.storage
    data_schema = avro_to_arrow_schema(avro_schema)
    if w.kind == "insert":
        with phase("meta"):
            body = _full_records(w.upserts, data_schema)
            name = N.base_file_name(w.file_id, token, instant)
            recs = W.add_meta_columns(body, instant=instant, record_keys=w.upserts.column("_hoodie_record_key"),
                                      partition_paths=w.partition, file_name=name,
                                      task_partition_id=task_partition_id)
        return W.write_base_file(storage, partition=w.partition, file_id=w.file_id, instant=instant, token=token,
                                 records=recs, num_inserts=recs.num_rows, event_time_field=cfg.event_time_field,
                                 event_time_unit=cfg.event_time_unit,
                                 codec=cfg.parquet_codec, bloom=cfg.bloom)
    if w.kind == "append":
        write = W.LogWrite()
        n_up = 0
        if w.upserts is not None and w.upserts.num_rows:
            with phase("meta"):
                body = _full_records(w.upserts, data_schema)
                write.data = W.add_meta_columns(body, instant=instant,
                                                record_keys=w.upserts.column("_hoodie_record_key"),
                                                partition_paths=w.partition, file_name=w.file_id,
                                                task_partition_id=task_partition_id)
            n_up = w.upserts.num_rows
        if w.deletes is not None and w.deletes.num_rows:
            write.deletes = w.deletes
        if table.timeline_layout == 2:
            # Hudi 1.x names a log file by the deltacommit writing it (a new file each time; the
            # slice it joins follows from its completion time), and its write stat says so.
            stat = W.write_log_file(storage, partition=w.partition, file_id=w.file_id, base_instant=instant,
                                    instant=instant, token=token, write=write, avro_schema=avro_schema,
                                    block_format=cfg.block_format, event_time_field=cfg.event_time_field,
                                    event_time_unit=cfg.event_time_unit)
        else:
            stat = W.write_log_file(storage, partition=w.partition, file_id=w.file_id,
                                    base_instant=w.base_instant or instant, instant=instant, token=token,
                                    write=write, avro_schema=avro_schema, base_file_name=w.base_file or "",
                                    slice_log_files=w.log_files, block_format=cfg.block_format,
                                    event_time_field=cfg.event_time_field, event_time_unit=cfg.event_time_unit,
                                    reserved_up_to=w.reserved_log_version)
        stat.num_update_writes = n_up
        return stat
    # COW merge: rewrite the file group's latest base file with updates applied and deletes removed.
    # The rewritten file takes this write's schema (the table's, evolved): the old base file is read
    # through it, so a widened column (int->long, float->double) is cast up, never narrowed.
    full = pa.schema([pa.field(c, pa.string(), nullable=True) for c in META_COLUMNS]
                     + [f for f in data_schema if f.name not in META_COLUMNS])
    # The work item names the base file it rewrites, so executors need no listing.
    old_footer: dict[bytes, bytes] = {}
    if w.base_file:
        # Rewritten records widen float to double as Hudi's merge handle does (Float.toString).
        with phase("merge.read"):
            old = read_base_file(storage, f"{w.partition}/{w.base_file}" if w.partition else w.base_file, full,
                                 java_floats=True, footer=old_footer)
    else:
        old = full.empty_table()
    keep = old
    n_del = n_up = replaced = 0
    if w.deletes is not None and w.deletes.num_rows:
        dmask = pc.is_in(old.column("_hoodie_record_key"), value_set=w.deletes.column("record_key").combine_chunks())
        n_del = int(pc.sum(dmask).as_py() or 0)
        keep = old.filter(pc.invert(dmask))
    name = N.base_file_name(w.file_id, token, instant)
    pieces = [keep.select(full.names)]
    unmatched = 0
    if w.upserts is not None and w.upserts.num_rows:
        # Hudi's merge handle: every stored row whose key is updated merges with the incoming record on
        # its own (a key an insert stored twice has each copy merged); incoming records of keys the
        # file does not hold are inserts (small-file handling).
        ups = w.upserts
        ukeys = ups.column("_hoodie_record_key").combine_chunks()
        # A key twice in the incoming rows (an insert without de-duplication) merges its last row, as
        # the handle's key map keeps the last one put.
        n_in = len(ukeys)
        at = pc.subtract(pa.scalar(n_in - 1, pa.int32()),
                         pc.index_in(keep.column("_hoodie_record_key"), value_set=ukeys[::-1]))
        matched = at.is_valid().to_numpy(zero_copy_only=False)
        replace = matched.copy()
        if table.merge_mode.use_ordering and cfg.precombine_field:
            # DefaultHoodieRecordPayload: an incoming record older than the stored one keeps the stored one.
            new_key, old_key = comparable_order_keys(ups.column(cfg.precombine_field), keep.column(cfg.precombine_field))
            stale = pc.fill_null(pc.less(pc.take(new_key, at), old_key), False).to_numpy(zero_copy_only=False)
            replace &= ~stale
        gone = _soft_deleted(ups)
        src = pc.filter(at, pa.array(replace))  # the incoming row each replaced copy becomes
        at_rows = np.flatnonzero(replace)  # where each replacement goes: the merge handle keeps file order
        if gone is not None:
            # _hoodie_is_deleted = true: the merge handle drops the stored record.
            dropped = gone[src.to_numpy(zero_copy_only=False)] if len(src) else np.zeros(0, dtype=bool)
            n_del += int(dropped.sum())
            src = src.filter(pa.array(~dropped))
            at_rows = at_rows[~dropped]
        replaced = len(src)
        held = pc.is_in(ukeys, value_set=keep.column("_hoodie_record_key").combine_chunks()).to_numpy(zero_copy_only=False)
        fresh = ~held if gone is None else ~held & ~gone
        unmatched = int(fresh.sum())
        ups = pa.concat_tables([ups.take(src), ups.filter(pa.array(fresh))]) if unmatched else ups.take(src)
        body = _full_records(ups, pa.schema([f for f in full if f.name not in META_COLUMNS]))
        newrecs = pc_cast(W.add_meta_columns(body, instant=instant, record_keys=ups.column("_hoodie_record_key"),
                                             partition_paths=w.partition, file_name=name,
                                             task_partition_id=task_partition_id), full)
        # Replacements take their copies' places, inserts go last (Hudi's merge handle): the file keeps
        # its key order, so an unchanged key set keeps its bloom filter's bytes too.
        in_place = _replace_rows(pc_cast(keep, full), replace, at_rows, newrecs.slice(0, replaced))
        pieces = [in_place, newrecs.slice(replaced)]
        n_up = ups.num_rows
    merged = pa.concat_tables([pc_cast(t, full) for t in pieces])
    # Rewritten rows keep their commit time but point at the new file name.
    fn_idx = merged.schema.get_field_index("_hoodie_file_name")
    merged = merged.set_column(fn_idx, "_hoodie_file_name", pa.repeat(pa.scalar(name, pa.string()), merged.num_rows))
    return W.write_base_file(storage, partition=w.partition, file_id=w.file_id, instant=instant, token=token,
                             records=merged, prev_commit=w.base_instant or NULL_COMMIT,
                             num_updates=replaced, num_inserts=w.num_inserts,
                             num_deletes=n_del, event_time_field=cfg.event_time_field,
                             event_time_unit=cfg.event_time_unit,
                             codec=cfg.parquet_codec, bloom=cfg.bloom,
                             # Updates only (each new row replaced one old row, nothing deleted or added):
                             # the record keys are the old file's, and so may its bloom filter be.
                             same_keys_footer=old_footer if (n_del == 0 and unmatched == 0
                                                             and merged.num_rows == old.num_rows) else None)


def write_file_groups(table: HoodieTable, records: pa.Table, cfg: WriteConfig, instant: str, avro_schema: dict,
                      fault: str) -> list[WriteStat]:
    """Plan a write in this process and write its file groups one after another (the pure-Python
    executor's data work); ``fault`` names the fault point hit after each file group."""
    plan = plan_write(table, records, cfg, instant, avro_schema)
    stats = []
    # Base files are flushed to disk together once all are written, before the stats are returned.
    with table.storage.deferred_syncs():
        for i, w in enumerate(plan.work):
            stats.append(execute_file_group(table, w, instant=instant, avro_schema=avro_schema, cfg=cfg,
                                            token=N.write_token(i, 1, i), task_partition_id=i))
            fault_point(fault)
    return stats


def _replace_rows(rows: pa.Table, replace: np.ndarray, at: np.ndarray, new: pa.Table) -> pa.Table:
    """``rows`` with row ``at[i]`` replaced by row ``i`` of ``new`` (``at`` ascending, same schema), and the
    other rows flagged in ``replace`` removed (copies a soft delete drops)."""
    if not replace.any():
        return rows
    n = rows.num_rows
    # One take over both tables (joined without a copy): 2-3x faster than replace_with_mask per column,
    # and it takes nested columns too.
    pos = np.arange(n, dtype=np.int64)
    pos[at] = n + np.arange(len(at), dtype=np.int64)
    gone = replace.copy()
    gone[at] = False
    if gone.any():
        pos = pos[~gone]
    return pa.concat_tables([rows, new]).take(pa.array(pos))


def pc_cast(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """Cast a table to ``schema`` (same column names)."""
    return t.select(schema.names).cast(schema)


def _drop_stale_updates(existing: pa.Table, ups: pa.Table, ordering: str) -> pa.Table:
    """``ups`` without the rows older (by ``ordering``) than the stored version of their key in ``existing``.

    A key stored more than once (an insert without de-duplication writes copies) is compared with its
    greatest copy, so an update replaces every copy or none."""
    # Compared as Java compares them (NaN above every value, -0.0 below 0.0).
    new_key, old_key = comparable_order_keys(ups.column(ordering), existing.column(ordering))
    stored = existing.column("_hoodie_record_key")
    if pc.count_distinct(stored).as_py() < existing.num_rows:
        # Greatest copy first (nulls last), so index_in's first match is the one to compare with.
        order = pc.sort_indices(old_key, sort_keys=[("", "descending")])
        stored, old_key = stored.take(order), old_key.take(order)
    at = pc.index_in(ups.column("_hoodie_record_key"), value_set=stored.combine_chunks()
                     if isinstance(stored, pa.ChunkedArray) else stored)
    stale = pc.fill_null(pc.less(new_key, pc.take(old_key, at)), False)
    return ups.filter(pc.invert(stale))


def commit_write(plan: WritePlan, stats: Sequence[WriteStat], extra: Optional[dict[str, str]] = None,
                 replaced: Optional[dict[str, list[str]]] = None) -> I.Instant:
    """Complete the write's instant with its write stats (the commit point).

    ``replaced`` (partition -> file ids) makes it a replacecommit (insert_overwrite[_table])."""
    table = plan.table
    action = I.REPLACE_COMMIT if replaced is not None else W.write_action_for(table)
    inflight = I.Instant(plan.instant, action, I.State.INFLIGHT)
    meta = W.commit_metadata_for(stats, avro_schema=plan.avro_schema, operation_type=plan.operation_type,
                                 extra=extra, replaced=replaced)
    return W.complete_commit(table, inflight, meta)


def action_for(table: HoodieTable, operation: str) -> str:
    """The timeline action a write operation commits as."""
    if operation in OVERWRITE_OPERATIONS or operation == "delete_partition":
        return I.REPLACE_COMMIT
    return W.write_action_for(table)


def requested_content(operation: str) -> bytes:
    """What the ``.requested`` file holds: empty for commits, Avro for overwrite replacecommits."""
    if operation in OVERWRITE_OPERATIONS:
        # Spark's insert_overwrite writes an all-null HoodieRequestedReplaceMetadata.
        return plans.write_avro_metadata("HoodieRequestedReplaceMetadata", plans.requested_replace_metadata(None))
    # delete_partition replacecommits are written by hoodie.services.delete_partition alone.
    return b""


def replaced_file_groups(table: HoodieTable, partitions: Sequence[str]) -> dict[str, list[str]]:
    """The live file groups of ``partitions`` (what an overwrite or delete_partition replaces)."""
    view = FileSystemView(table.storage, table.timeline)
    out: dict[str, list[str]] = {}
    for p in partitions:
        ids = sorted({sl.file_id for sl in view.latest_file_slices(p)})
        if ids:
            out[p] = ids
    return out


def partitions_to_delete(options: Mapping[str, Any], records: Optional[pa.Table]) -> list[str]:
    """Partitions for delete_partition: ``hoodie.datasource.write.partitions.to.delete`` or the
    partition paths of the input records."""
    listed = [p.strip() for p in str(options.get(PARTITIONS_TO_DELETE) or "").split(",") if p.strip()]
    if listed:
        return listed
    if records is None or records.num_rows == 0:
        raise WriteError(f"delete_partition needs {PARTITIONS_TO_DELETE} or input rows naming the partitions")
    return sorted(pc.unique(records.column("_hoodie_partition_path")).to_pylist())


def open_or_create(base_path: str, cfg: WriteConfig, avro_schema: Optional[dict],
                   storage_options: Optional[dict[str, Any]] = None, database: Optional[str] = None,
                   extra_props: Optional[dict[str, str]] = None) -> HoodieTable:
    """Open the table at ``base_path``, creating it from the write config when absent."""
    st = Storage(base_path, storage_options)
    if table_exists(st):
        return HoodieTable(base_path, storage=st)
    kg = key_generator_from_config(cfg.keygen_props, allow_auto_record_keys=cfg.auto_record_keys)
    return create_table(
        base_path, table_name=cfg.table_name, table_type=cfg.table_type,
        record_key_fields=cfg.record_key_fields, partition_fields=cfg.partition_fields,
        precombine_field=cfg.precombine_field, keygen_class=kg.java_class_name,
        hive_style=cfg.hive_style, url_encode=cfg.url_encode, avro_schema=avro_schema,
        payload_class=cfg.payload_class, timeline_timezone=cfg.timeline_timezone,
        database=database, extra_props=extra_props, storage=st, table_version=cfg.table_version,
        auto_record_keys=cfg.auto_record_keys,
    )


__all__ = ["WriteConfig", "check_compaction_plans", "plan_write", "execute_file_group",
           "with_auto_keys",
           "commit_write", "avro_schema_for", "prepare_records", "dedupe", "evolve_schema", "open_or_create", "overwrite_config", "FileGroupWork",
           "WritePlan"]
