"""Avro schemas <-> Arrow schemas, and conforming Arrow data to a schema.

Hudi log blocks carry records as Avro binary datums described by the Avro schema in the block
header, and commit metadata carries the writer's Avro schema.

* :func:`avro_to_arrow_schema` maps an Avro record schema to the Arrow schema pyarrow reports
  when reading Hudi's Parquet base files (every field nullable).
* :func:`arrow_to_avro_schema` is the inverse, naming nested records and decimal ``fixed`` types
  the way Spark's ``SchemaConverters`` / Hudi's ``AvroConversionUtils`` do, so the JSON matches what
  Java writers put into commit metadata and log block headers.
* the physical (fastavro) view of a schema, and the physical <-> logical Arrow conversions the
  decoder and encoder share (decimals, timestamps).
* :func:`conform_table` / :func:`conform_array` project data onto a target schema (schema
  evolution: missing columns as nulls, widened types).
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
# Meta columns Hudi adds with ``doc: ""`` (HoodieAvroUtils.addMetadataFields).
_META_FIELDS = (
    "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
    "_hoodie_partition_path", "_hoodie_file_name", "_hoodie_operation",
)


# ----------------------------------------------------------------------------------------------
# schema loading helpers
# ----------------------------------------------------------------------------------------------
def load_avro_schema(avro_schema: dict | str) -> dict:
    """Return an Avro record schema as a dict (parsing JSON text if needed).

    The returned object may be shared with caches: treat it as read-only.
    """
    if isinstance(avro_schema, str):
        return _loads_cached(avro_schema)
    if isinstance(avro_schema, dict):
        return avro_schema
    raise TypeError(f"Avro schema must be a dict or JSON string, got {type(avro_schema).__name__}")


@lru_cache(maxsize=256)
def _loads_cached(text: str) -> dict:
    obj = json.loads(text)
    if not isinstance(obj, dict):
        raise ValueError("top-level Avro schema must be a record (a JSON object)")
    return obj


def schema_to_json(avro_schema: dict | str) -> str:
    """Compact JSON text of a schema, as Avro's Java ``Schema.toString()`` writes it.

    Strings are returned unchanged so schemas copied from Java-written headers stay byte-identical.
    """
    if isinstance(avro_schema, str):
        return avro_schema
    return json.dumps(avro_schema, separators=(",", ":"), ensure_ascii=False)


def _json_key(avro_schema: dict | str) -> str:
    """A hashable cache key for a schema (its JSON text)."""
    if isinstance(avro_schema, str):
        return avro_schema
    if isinstance(avro_schema, dict):
        return schema_to_json(avro_schema)
    raise TypeError(f"Avro schema must be a dict or JSON string, got {type(avro_schema).__name__}")


# ----------------------------------------------------------------------------------------------
# Avro -> Arrow
# ----------------------------------------------------------------------------------------------
class _Names:
    """Registry of named Avro types (full name -> (logical arrow type, physical arrow type))."""

    def __init__(self) -> None:
        self.types: dict[str, tuple[pa.DataType, pa.DataType] | None] = {}

    @staticmethod
    def fullname(name: str, namespace: str | None) -> tuple[str, str | None]:
        if "." in name:
            return name, name.rpartition(".")[0]
        return (f"{namespace}.{name}" if namespace else name), namespace

    def lookup(self, ref: str, namespace: str | None, path: str) -> tuple[pa.DataType, pa.DataType]:
        candidates = [ref] if "." in ref else ([f"{namespace}.{ref}"] if namespace else []) + [ref]
        for cand in candidates:
            if cand in self.types:
                found = self.types[cand]
                if found is None:
                    raise ValueError(f"field {path!r}: recursive Avro type {cand!r} has no Arrow equivalent")
                return found
        raise ValueError(f"field {path!r}: unknown Avro type {ref!r}")


def _nullable_branch(union: list, path: str) -> Any:
    """The single non-null branch of a union, or raise naming the field."""
    non_null = [b for b in union if b != "null" and not (isinstance(b, dict) and b.get("type") == "null")]
    if len(non_null) == 1:
        return non_null[0]
    if not non_null:
        return "null"
    raise ValueError(
        f"field {path!r}: Avro union {json.dumps(union)} has {len(non_null)} non-null branches; "
        "only [null, X] unions map to Arrow"
    )


def _decimal_arrow(precision: int, scale: int) -> pa.DataType:
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def _avro_type(t: Any, ns: str | None, names: _Names, path: str) -> tuple[pa.DataType, pa.DataType]:
    """(logical Arrow type, physical Arrow type) of one Avro type.

    The physical type is what fastavro yields once logical types are stripped (ints for dates and
    timestamps, fixed/bytes for decimals); the logical type is what readers get.
    """
    if isinstance(t, list):
        return _avro_type(_nullable_branch(t, path), ns, names, path)
    if isinstance(t, str):
        prim = _primitive(t)
        if prim is not None:
            return prim, prim
        return names.lookup(t, ns, path)
    if not isinstance(t, dict):
        raise ValueError(f"field {path!r}: invalid Avro type {t!r}")
    kind = t.get("type")
    if isinstance(kind, (dict, list)):
        return _avro_type(kind, ns, names, path)
    logical = t.get("logicalType")
    if kind in ("record", "error"):
        full, rec_ns = names.fullname(t["name"], t.get("namespace", ns))
        names.types[full] = None  # marks "being defined" to detect recursion
        lfields, pfields = [], []
        for f in t.get("fields", []):
            lt, pt = _avro_type(f["type"], rec_ns, names, f"{path}.{f['name']}" if path else f["name"])
            lfields.append(pa.field(f["name"], lt, nullable=True))
            pfields.append(pa.field(f["name"], pt, nullable=True))
        result = (pa.struct(lfields), pa.struct(pfields))
        names.types[full] = result
        return result
    if kind == "enum":
        full, _ = names.fullname(t["name"], t.get("namespace", ns))
        names.types[full] = (pa.string(), pa.string())
        return pa.string(), pa.string()
    if kind == "fixed":
        full, _ = names.fullname(t["name"], t.get("namespace", ns))
        phys = pa.binary(int(t["size"]))
        result = (phys, phys)
        if logical == "decimal":
            result = (_decimal_arrow(int(t["precision"]), int(t.get("scale", 0))), phys)
        names.types[full] = result
        return result
    if kind == "array":
        lt, pt = _avro_type(t["items"], ns, names, f"{path}[]")
        return pa.list_(pa.field("element", lt)), pa.list_(pa.field("element", pt))
    if kind == "map":
        lt, pt = _avro_type(t["values"], ns, names, f"{path}{{}}")
        return pa.map_(pa.string(), lt), pa.map_(pa.string(), pt)
    if kind in _PRIMITIVES:
        phys = _primitive(kind)
        assert phys is not None
        if logical is None:
            return phys, phys
        mapped = _logical_primitive(kind, logical, t)
        return (mapped if mapped is not None else phys), phys
    raise ValueError(f"field {path!r}: unsupported Avro type {kind!r}")


def _primitive(name: str) -> pa.DataType | None:
    return {
        "null": pa.null(),
        "boolean": pa.bool_(),
        "int": pa.int32(),
        "long": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "bytes": pa.binary(),
        "string": pa.string(),
    }.get(name)


def _logical_primitive(kind: str, logical: str, t: dict) -> pa.DataType | None:
    """Arrow type for a primitive carrying a logical type (None = ignore the logical type)."""
    if kind == "int":
        return {"date": pa.date32(), "time-millis": pa.time32("ms")}.get(logical)
    if kind == "long":
        return {
            "time-micros": pa.time64("us"),
            "timestamp-millis": pa.timestamp("ms", tz="UTC"),
            "timestamp-micros": pa.timestamp("us", tz="UTC"),
            "timestamp-nanos": pa.timestamp("ns", tz="UTC"),
            "local-timestamp-millis": pa.timestamp("ms"),
            "local-timestamp-micros": pa.timestamp("us"),
            "local-timestamp-nanos": pa.timestamp("ns"),
        }.get(logical)
    if kind == "bytes" and logical == "decimal":
        return _decimal_arrow(int(t["precision"]), int(t.get("scale", 0)))
    return None  # e.g. string/uuid stays a string; unknown logical types are ignored (Avro spec)


@lru_cache(maxsize=256)
def _schemas_cached(key: str) -> tuple[pa.Schema, pa.Schema]:
    return _build_schemas(_loads_cached(key))


def _build_schemas(schema: dict) -> tuple[pa.Schema, pa.Schema]:
    if schema.get("type") not in ("record", "error"):
        raise ValueError(f"top-level Avro schema must be a record, got {schema.get('type')!r}")
    logical, physical = _avro_type(schema, None, _Names(), "")
    return pa.schema(list(logical)), pa.schema(list(physical))


def _schemas(avro_schema: dict | str) -> tuple[pa.Schema, pa.Schema]:
    return _schemas_cached(_json_key(avro_schema))


def avro_to_arrow_schema(avro_schema: dict | str) -> pa.Schema:
    """Arrow schema for an Avro record schema; every field is nullable.

    Types follow what pyarrow reports for Hudi's Parquet base files: int->int32, long->int64,
    float->float32, double->float64, boolean->bool, string/enum->string, bytes->binary,
    fixed(n)->fixed_size_binary(n), decimal->decimal128(p, s) (decimal256 above 38 digits),
    date->date32, timestamp-micros/millis->timestamp(us/ms, UTC), local-timestamp-*->naive
    timestamp, time-micros->time64(us), time-millis->time32(ms), array->list<element>,
    map->map<string, V>, record->struct and ``[null, X]`` -> nullable X.

    Raises:
        ValueError: for unions with more than one non-null branch (naming the field), recursive
            records and unknown named types.
    """
    return _schemas(avro_schema)[0]


# ----------------------------------------------------------------------------------------------
# Arrow -> Avro
# ----------------------------------------------------------------------------------------------
def decimal_fixed_size(precision: int) -> int:
    """Minimal bytes of a two's-complement fixed holding ``precision`` digits (Spark's rule)."""
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


def _arrow_to_avro_type(t: pa.DataType, record_name: str, namespace: str, path: str) -> Any:
    """Avro type for a non-null Arrow type, after Spark's ``SchemaConverters.toAvroType``."""
    if pa.types.is_dictionary(t):
        return _arrow_to_avro_type(t.value_type, record_name, namespace, path)
    if pa.types.is_boolean(t):
        return "boolean"
    if t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        return "int"
    if t in (pa.int64(), pa.uint32()):
        return "long"
    if t == pa.uint64():
        raise ValueError(f"field {path!r}: uint64 has no Avro equivalent; cast it to int64 or decimal")
    if t in (pa.float16(), pa.float32()):
        return "float"
    if t == pa.float64():
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "bytes"
    if pa.types.is_null(t):
        return "null"
    fixed_name = f"{namespace}.{record_name}" if namespace else record_name
    if pa.types.is_decimal(t):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": fixed_name,
            "size": decimal_fixed_size(t.precision),
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    if pa.types.is_fixed_size_binary(t):
        return {"type": "fixed", "name": "fixed", "namespace": fixed_name, "size": t.byte_width}
    if pa.types.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(t):
        unit = "millis" if t.unit in ("s", "ms") else "micros"
        prefix = "timestamp" if t.tz is not None else "local-timestamp"
        return {"type": "long", "logicalType": f"{prefix}-{unit}"}
    if pa.types.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_time64(t):
        return {"type": "long", "logicalType": "time-micros"}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        vf = t.value_field
        items = _arrow_to_avro_type(vf.type, record_name, namespace, f"{path}[]")
        return {"type": "array", "items": ["null", items] if vf.nullable else items}
    if pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
            raise ValueError(f"field {path!r}: Avro maps need string keys, got {t.key_type}")
        it = t.item_field
        values = _arrow_to_avro_type(it.type, record_name, namespace, f"{path}{{}}")
        return {"type": "map", "values": ["null", values] if it.nullable else values}
    if pa.types.is_struct(t):
        return _struct_to_record(list(t), record_name, namespace, path)
    raise ValueError(f"field {path!r}: Arrow type {t} has no Avro equivalent")


def _struct_to_record(fields: list[pa.Field], record_name: str, namespace: str, path: str,
                      top_level: bool = False) -> dict:
    child_ns = f"{namespace}.{record_name}" if namespace else record_name
    out_fields = []
    for f in fields:
        fpath = f"{path}.{f.name}" if path else f.name
        ftype = _arrow_to_avro_type(f.type, f.name, child_ns, fpath)
        entry: dict[str, Any] = {"name": f.name}
        if f.nullable and ftype != "null":
            entry["type"] = ["null", ftype]
            if top_level and f.name in _META_FIELDS:
                entry["doc"] = ""
            entry["default"] = None
        else:
            entry["type"] = ftype
            if ftype == "null":
                entry["default"] = None
        out_fields.append(entry)
    rec: dict[str, Any] = {"type": "record", "name": record_name}
    if namespace:
        rec["namespace"] = namespace
    rec["fields"] = out_fields
    return rec


def arrow_to_avro_schema(schema: pa.Schema, record_name: str, namespace: str) -> dict:
    """Avro record schema for an Arrow schema, named the way Hudi's Spark writer names it.

    Nullable fields become ``["null", T]`` with ``"default": null``; nested structs become records
    named after their field in namespace ``<namespace>.<record_name>[.<parent field>...]``;
    decimals become ``fixed`` named ``fixed`` in namespace ``<that namespace>.<field>`` with the
    minimal byte size for the precision; tz-aware timestamps become ``timestamp-micros``
    (``timestamp-millis`` for s/ms units), naive ones ``local-timestamp-*``; date32 -> date.
    Hudi's meta columns get ``"doc": ""`` like ``HoodieAvroUtils.addMetadataFields``.

    Raises:
        ValueError: for Arrow types without an Avro equivalent (uint64, non-string map keys, ...).
    """
    return _struct_to_record(list(schema), record_name, namespace, "", top_level=True)


# ----------------------------------------------------------------------------------------------
# physical schemas handed to fastavro
# ----------------------------------------------------------------------------------------------
def _strip_logical(t: Any) -> Any:
    """Copy of an Avro type without logical types or field defaults (fastavro then yields plain
    ints/bytes, converted column-wise in Arrow; defaults only matter for schema resolution)."""
    if isinstance(t, list):
        return [_strip_logical(b) for b in t]
    if not isinstance(t, dict):
        return t
    out = {k: v for k, v in t.items() if k not in ("logicalType", "precision", "scale", "default")}
    kind = out.get("type")
    if isinstance(kind, (dict, list)):
        out["type"] = _strip_logical(kind)
    if kind in ("record", "error"):
        out["fields"] = [
            {k: (_strip_logical(v) if k == "type" else v) for k, v in f.items() if k != "default"}
            for f in t.get("fields", [])
        ]
    elif kind == "array":
        out["items"] = _strip_logical(t["items"])
    elif kind == "map":
        out["values"] = _strip_logical(t["values"])
    if kind in _PRIMITIVES and set(out) == {"type"}:
        return kind
    return out


@lru_cache(maxsize=256)
def _physical_json(key: str) -> str:
    """JSON of the schema without logical types, for the fastavro fallback reader."""
    return schema_to_json(_strip_logical(copy.deepcopy(_loads_cached(key))))


# ----------------------------------------------------------------------------------------------
# physical <-> logical Arrow conversion
# ----------------------------------------------------------------------------------------------
def _as_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _decimal_width(t: pa.DataType) -> int:
    return 16 if isinstance(t, pa.Decimal128Type) else 32


def _fixed_to_decimal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """Big-endian two's-complement fixed(n) -> decimal128/256, vectorised with numpy."""
    n = arr.type.byte_width
    width = _decimal_width(target)
    length = len(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8) if arr.buffers()[1] is not None else np.zeros(0, np.uint8)
    raw = raw[arr.offset * n:(arr.offset + length) * n].reshape(length, n)
    if n > width:
        # wider fixed than the decimal storage: the extra leading bytes must be sign extension
        head, raw = raw[:, : n - width], raw[:, n - width:]
        sign = np.where(raw[:, :1] & 0x80, 0xFF, 0x00).astype(np.uint8)
        if not np.all((head == sign) | ~arr.is_valid().to_numpy(zero_copy_only=False)[:, None]):
            raise ValueError(f"decimal value does not fit {target}")
        n = width
    out = np.empty((length, width), dtype=np.uint8)
    out[:, :n] = raw[:, ::-1]
    out[:, n:] = np.where(raw[:, :1] & 0x80, 0xFF, 0x00).astype(np.uint8) if length else 0
    return _decimal_from_bytes(out, arr, target)


def _decimal_from_bytes(out: np.ndarray, arr: pa.Array, target: pa.DataType) -> pa.Array:
    validity = None
    if arr.null_count:
        validity = pc.is_valid(arr).buffers()[1]
    return pa.Array.from_buffers(target, len(arr), [validity, pa.py_buffer(out.tobytes())], arr.null_count)


def _bytes_to_decimal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """Variable-length big-endian two's-complement bytes -> decimal128/256."""
    width = _decimal_width(target)
    parts = []
    for b in arr.to_pylist():
        v = int.from_bytes(b, "big", signed=True) if b else 0
        parts.append(v.to_bytes(width, "little", signed=True))
    out = np.frombuffer(b"".join(parts), dtype=np.uint8).reshape(len(arr), width)
    return _decimal_from_bytes(out, arr, target)


def _decimal_le_rows(arr: pa.Array) -> np.ndarray:
    width = _decimal_width(arr.type)
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    return raw[arr.offset * width:(arr.offset + len(arr)) * width].reshape(len(arr), width)


def _decimal_to_fixed(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """decimal128/256 -> big-endian two's-complement fixed(n); raises if a value does not fit."""
    n = target.byte_width
    rows = _decimal_le_rows(arr)
    width = rows.shape[1]
    if n >= width:
        sign = np.where(rows[:, -1:] & 0x80, 0xFF, 0x00).astype(np.uint8)
        be = np.concatenate([np.repeat(sign, n - width, axis=1), rows[:, ::-1]], axis=1)
    else:
        low, high = rows[:, :n], rows[:, n:]
        sign = np.where(low[:, -1:] & 0x80, 0xFF, 0x00).astype(np.uint8)
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        if not np.all((high == sign) | ~valid[:, None]):
            raise ValueError(f"decimal value out of range for Avro fixed({n}) of {arr.type}")
        be = low[:, ::-1]
    validity = pc.is_valid(arr).buffers()[1] if arr.null_count else None
    return pa.Array.from_buffers(target, len(arr), [validity, pa.py_buffer(np.ascontiguousarray(be).tobytes())],
                                 arr.null_count)


def java_decimal_bytes(unscaled: int) -> bytes:
    """Minimal big-endian two's complement, as Java's ``BigInteger.toByteArray`` writes it."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _decimal_to_bytes(arr: pa.Array) -> pa.Array:
    rows = _decimal_le_rows(arr)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    values = [
        java_decimal_bytes(int.from_bytes(rows[i].tobytes(), "little", signed=True)) if valid[i] else None
        for i in range(len(arr))
    ]
    return pa.array(values, pa.binary())


def _to_logical(arr: pa.Array, phys: pa.DataType, logical: pa.DataType) -> pa.Array:
    """Convert an array decoded with the physical type into the logical type."""
    if phys.equals(logical) and str(phys) == str(logical):
        return arr
    if pa.types.is_struct(logical):
        children = [_to_logical(arr.field(i), phys.field(i).type, logical.field(i).type)
                    for i in range(logical.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(logical), mask=_null_mask(arr))
    if pa.types.is_list(logical):
        values = _to_logical(arr.values, phys.value_type, logical.value_type)
        return pa.ListArray.from_arrays(arr.offsets, values, type=logical, mask=_null_mask(arr))
    if pa.types.is_map(logical):
        items = _to_logical(arr.items, phys.item_type, logical.item_type)
        return pa.MapArray.from_arrays(arr.offsets, arr.keys, items, type=logical, mask=_null_mask(arr))
    if pa.types.is_decimal(logical):
        if pa.types.is_fixed_size_binary(phys):
            return _fixed_to_decimal(arr, logical)
        return _bytes_to_decimal(arr, logical)
    return arr.cast(logical)


def _null_mask(arr: pa.Array) -> pa.Array | None:
    # ListArray/MapArray/StructArray.from_arrays rebuild validity from this mask; children
    # (.values/.keys/.items with .offsets, or .field(i)) are taken consistently with slicing.
    return arr.is_null() if arr.null_count else None



# ----------------------------------------------------------------------------------------------
# conforming tables to a target schema (projection / schema evolution)
# ----------------------------------------------------------------------------------------------
def conform_array(arr: pa.Array | pa.ChunkedArray, target: pa.DataType, path: str = "") -> pa.Array:
    """Convert ``arr`` to ``target``: structs matched by field name (absent fields -> nulls,
    extra fields dropped), lists/maps recursively, other types by a safe cast (e.g. int->long).

    Raises:
        ValueError: naming the column when a value cannot be converted safely.
    """
    arr = _as_array(arr)
    src = arr.type
    if src.equals(target) and str(src) == str(target):
        return arr
    if pa.types.is_null(src):
        return pa.nulls(len(arr), target)
    try:
        if pa.types.is_struct(target) and pa.types.is_struct(src):
            names = [src.field(i).name for i in range(src.num_fields)]
            children = []
            for f in target:
                if f.name in names:
                    child = arr.field(names.index(f.name))
                    children.append(conform_array(child, f.type, f"{path}.{f.name}" if path else f.name))
                else:
                    children.append(pa.nulls(len(arr), f.type))
            return pa.StructArray.from_arrays(children, fields=list(target), mask=_null_mask(arr))
        if pa.types.is_list(target) and (pa.types.is_list(src) or pa.types.is_large_list(src)):
            if pa.types.is_large_list(src):
                arr = arr.cast(pa.list_(src.value_field))
            values = conform_array(arr.values, target.value_type, f"{path}[]")
            return pa.ListArray.from_arrays(arr.offsets, values, type=target, mask=_null_mask(arr))
        if pa.types.is_map(target) and pa.types.is_map(src):
            keys = conform_array(arr.keys, target.key_type, f"{path}{{key}}")
            items = conform_array(arr.items, target.item_type, f"{path}{{}}")
            return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=_null_mask(arr))
        return arr.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise ValueError(f"column {path!r}: cannot convert {src} to {target}: {e}") from e


def conform_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Project ``table`` onto ``schema``: columns in schema order, absent columns filled with
    nulls, extra columns dropped, types converted with :func:`conform_array`."""
    cols = []
    names = table.column_names
    for f in schema:
        if f.name in names:
            cols.append(conform_array(table.column(f.name), f.type, f.name))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def resolve_named(name: str, ns: str | None, named: dict[str, Any], path: str) -> Any:
    """What ``named`` holds for a reference to the named Avro type ``name`` (tried as written, then
    in the enclosing namespace ``ns``, as Avro's name resolution does). Raises ValueError for an
    unknown name, or one still being compiled (``None``: a recursive type)."""
    for cand in ([name] if "." in name else ([f"{ns}.{name}"] if ns else []) + [name]):
        if cand in named:
            found = named[cand]
            if found is None:
                raise ValueError(f"field {path!r}: recursive Avro type {cand!r} is not supported")
            return found
    raise ValueError(f"field {path!r}: unknown Avro type {name!r}")
