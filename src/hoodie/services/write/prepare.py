"""The write's input, prepared and checked before anything is written: meta columns dropped, record
keys and partition paths generated (or Hudi 0.14+'s auto keys), event times, precombine values and
soft-delete markers checked, and the table schema the write leaves (evolution by the batch)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import WriteError
from hoodie.format.avro.schema import arrow_to_avro_schema, avro_to_arrow_schema
from hoodie.format.keys.generators import auto_record_keys, key_generator_from_config
from hoodie.format.keys.paths import check_partition_paths
from hoodie.format.slice.eventtime import EventTimeError, check_sub_microsecond, event_time_millis
from hoodie.format.table import META_COLUMNS, HoodieTable, TableError
from hoodie.services.write.configs import IS_DELETED, SET_NULL_FOR_MISSING_COLUMNS, WriteConfig


def _generated_keys(auto_keys: Optional[tuple[str, int, int]], n: int) -> pa.Array:
    """Hudi's auto-generated record keys for ``n`` rows, or nulls until the instant time is known
    (``auto_keys`` None: the keys are generated when the write starts)."""
    if auto_keys is None:
        return pa.nulls(n, pa.string())
    return auto_record_keys(auto_keys[0], auto_keys[1], auto_keys[2], n)


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
    if cfg.operation not in ("delete", "delete_partition"):
        try:
            check_sub_microsecond(body)  # issue 31 item 12: refused here, before an instant starts
        except EventTimeError as e:
            raise WriteError(f"{e} (nothing was written)") from None
    kg = key_generator_from_config(cfg.keygen_props, allow_auto_record_keys=cfg.auto_record_keys)
    if cfg.keys_from_input and cfg.operation == "upsert":
        keys, parts = _prepped_keys(data, body, cfg, kg, auto_keys)
    elif cfg.keys_from_input:
        keys, parts = _keys_to_delete(data, cfg.operation)
    else:
        keys = kg.record_keys(body) if not cfg.auto_record_keys else _generated_keys(auto_keys, body.num_rows)
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



def _prepped_keys(data: pa.Table, body: pa.Table, cfg: WriteConfig, kg: Any,
                  auto_keys: Optional[tuple[str, int, int]]) -> tuple[pa.Array, pa.Array]:
    """The keys of a prepped upsert on a table without record key fields (Hudi's SQL UPDATE and MERGE): a row
    read from the table keeps the ``_hoodie_record_key`` and ``_hoodie_partition_path`` it was read with (it
    updates that record); a row without them (a MERGE insert) is a new record: its key is generated as an
    insert's (null until :func:`with_auto_keys` fills it when ``auto_keys`` is not given), its partition path
    computed from its partition fields."""
    missing = [c for c in ("_hoodie_record_key", "_hoodie_partition_path") if c not in data.column_names]
    if missing:
        return _keys_to_delete(data, "upsert")  # names what is missing
    stored = pc.cast(data.column("_hoodie_record_key"), pa.string()).combine_chunks()
    stored_parts = pc.cast(data.column("_hoodie_partition_path"), pa.string()).combine_chunks()
    new = stored.is_null()
    if not pc.any(new).as_py():
        return stored, stored_parts
    generated = _generated_keys(auto_keys, body.num_rows)
    parts = kg.partition_paths(body)
    check_partition_paths(kg, body, parts)
    return pc.if_else(new, generated, stored), pc.if_else(new, pc.cast(parts, pa.string()), stored_parts)



def _keys_to_delete(data: pa.Table, operation: str = "delete") -> tuple[pa.Array, pa.Array]:
    """The record keys and partition paths of a delete (or prepped upsert) on a table without record key
    fields: the input's meta columns (rows read from the table carry them), as Hudi's delete and upsert
    prepped take them when there is no key generator
    (``HoodieCreateRecordUtils.getHoodieKeyAndMaybeLocationFromAvroRecord``)."""
    what = "a delete from" if operation == "delete" else "a prepped upsert of"
    missing = [c for c in ("_hoodie_record_key", "_hoodie_partition_path") if c not in data.column_names]
    if missing:
        raise WriteError(
            f"{what} a table without record key fields (auto-generated keys) takes each row's key from its "
            f"_hoodie_record_key and _hoodie_partition_path columns, as Hudi does, and the input lacks "
            f"{', '.join(missing)}: read the rows from the table (hoodie.read_table and "
            f"spark.read.format('hoodie') return both columns) and write those with operation={operation}. Nothing "
            "was written")
    cols = []
    for c in ("_hoodie_record_key", "_hoodie_partition_path"):
        col = data.column(c)
        if col.null_count:
            raise WriteError(f"{col.null_count} row(s) of {what} a table without record key fields have a null "
                             f"{c}; such a write needs the keys the rows were read with. Nothing was written")
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
    if cfg.keys_from_input:  # a prepped upsert: only its new rows (null keys) get generated keys
        stored = records.column(i).combine_chunks()
        keys = pc.if_else(stored.is_null(), keys, stored)
    return records.set_column(i, "_hoodie_record_key", keys)



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



def soft_deleted(records: pa.Table) -> Optional[np.ndarray]:
    """Which rows have ``_hoodie_is_deleted = true`` (null is false), or None when none has."""
    if IS_DELETED not in records.column_names or records.num_rows == 0:
        return None
    col = records.column(IS_DELETED)
    if pa.types.is_null(col.type):
        return None
    mask = pc.fill_null(col, False).to_numpy(zero_copy_only=False)
    return mask if mask.any() else None



def drop_soft_deleted(records: pa.Table) -> pa.Table:
    gone = soft_deleted(records)
    return records if gone is None else records.filter(pa.array(~gone))
