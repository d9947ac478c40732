"""Arrow -> Avro binary datums, columnar.

Encoding builds each field's Avro bytes for all rows at once with numpy/Arrow kernels (zig-zag
varints, fixed-width floats, length-prefixed strings, union tags, array/map blocks) and joins
them per row.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hoodie.format.avro.schema import (
    resolve_named,
    _Names, _PRIMITIVES, _as_array, _decimal_to_bytes, _decimal_to_fixed, _json_key, _loads_cached,
    _schemas_cached, conform_table,
)


# ----------------------------------------------------------------------------------------------
# encoding (columnar: each field is encoded for all rows at once, then rows are joined)
# ----------------------------------------------------------------------------------------------
_Encoder = Callable[[pa.Array], pa.Array]


def _binary_from_numpy(data: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A binary array whose row ``i`` is the next ``lengths[i]`` bytes of ``data``."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        return pa.Array.from_buffers(pa.large_binary(), len(lengths),
                                     [None, pa.py_buffer(offsets), pa.py_buffer(data)]).cast(pa.binary())
    return pa.Array.from_buffers(pa.binary(), len(lengths),
                                 [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def varint_array(values: np.ndarray) -> pa.Array:
    """Avro ``long`` encodings (zig-zag varints) of an int64 numpy array, as a binary array."""
    v = np.asarray(values, dtype=np.int64)
    n = len(v)
    if n == 0:
        return pa.array([], pa.binary())
    z = ((v << np.int64(1)) ^ (v >> np.int64(63))).view(np.uint64)
    nbytes = np.ones(n, dtype=np.int64)
    for k in range(1, 10):
        nbytes += z >= np.uint64(1 << (7 * k))
    width = int(nbytes.max())
    mat = np.empty((n, width), dtype=np.uint8)
    for k in range(width):
        low7 = ((z >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        mat[:, k] = low7 | ((nbytes > k + 1).astype(np.uint8) << 7)
    data = mat[np.arange(width) < nbytes[:, None]]  # row-major: each row's first nbytes bytes
    return _binary_from_numpy(data, nbytes)


def _fixed_width(data: bytes, width: int, n: int) -> pa.Array:
    return _binary_from_numpy(np.frombuffer(data, dtype=np.uint8), np.full(n, width, dtype=np.int64))


def _join(*parts: pa.Array | pa.Scalar) -> pa.Array:
    return pc.binary_join_element_wise(*parts, b"")


def _const(piece: bytes, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(piece, pa.binary()), n)


def _no_nulls(arr: pa.Array, path: str) -> None:
    if arr.null_count:
        raise ValueError(f"field {path!r}: null value where the Avro schema does not allow null")


def _length_prefixed(b: pa.Array) -> pa.Array:
    lengths = pc.binary_length(b).to_numpy(zero_copy_only=False)
    return _join(varint_array(lengths), b)


def _blocks(counts: np.ndarray, item_pieces: pa.Array) -> pa.Array:
    """Avro array/map framing: ``count items... 0`` per row (just ``0`` for empty rows)."""
    n = len(counts)
    lists = pa.ListArray.from_arrays(
        pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)), item_pieces)
    joined = pc.binary_join(lists, b"")
    prefix = pc.if_else(pa.array(counts > 0), varint_array(counts), pa.scalar(b"", pa.binary()))
    return _join(prefix, joined, pa.scalar(b"\x00", pa.binary())) if n else pa.array([], pa.binary())


def _compile(t: Any, ns: str | None, named: dict[str, _Encoder | None], path: str) -> _Encoder:
    """An encoder turning a (logical) Arrow array into one Avro binary piece per row."""
    if isinstance(t, list):
        return _compile_union(t, ns, named, path)
    if isinstance(t, str):
        if t in _PRIMITIVES:
            return _compile_primitive(t, {}, path)
        return resolve_named(t, ns, named, path)
    kind = t.get("type")
    if isinstance(kind, (dict, list)):
        return _compile(kind, ns, named, path)
    if kind in ("record", "error"):
        full, rec_ns = _Names.fullname(t["name"], t.get("namespace", ns))
        named[full] = None
        fields = [(f["name"], _compile(f["type"], rec_ns, named, f"{path}.{f['name']}" if path else f["name"]))
                  for f in t.get("fields", [])]

        def enc_record(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            if not fields:
                return _const(b"", len(arr))
            return _join(*[enc(arr.field(name)) for name, enc in fields])

        named[full] = enc_record
        return enc_record
    if kind == "enum":
        full, _ = _Names.fullname(t["name"], t.get("namespace", ns))
        symbols = pa.array(t["symbols"], pa.string())

        def enc_enum(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            idx = pc.index_in(arr.cast(pa.string()), value_set=symbols)
            if idx.null_count:
                bad = arr.filter(idx.is_null())[0].as_py()
                raise ValueError(f"field {path!r}: {bad!r} is not a symbol of enum {t['name']!r}")
            return varint_array(idx.to_numpy(zero_copy_only=False))

        named[full] = enc_enum
        return enc_enum
    if kind == "fixed":
        full, _ = _Names.fullname(t["name"], t.get("namespace", ns))
        size = int(t["size"])
        is_decimal = t.get("logicalType") == "decimal"

        def enc_fixed(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            if pa.types.is_decimal(arr.type):
                if not is_decimal:
                    raise ValueError(f"field {path!r}: decimal value for a plain fixed({size})")
                arr = _decimal_to_fixed(arr, pa.binary(size))
            elif not (pa.types.is_fixed_size_binary(arr.type) and arr.type.byte_width == size):
                raise ValueError(f"field {path!r}: expected fixed_size_binary({size}), got {arr.type}")
            return arr.cast(pa.binary())

        named[full] = enc_fixed
        return enc_fixed
    if kind == "array":
        items = _compile(t["items"], ns, named, f"{path}[]")

        def enc_array(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            counts = pc.list_value_length(arr).to_numpy(zero_copy_only=False).astype(np.int64)
            return _blocks(counts, items(arr.flatten()))

        return enc_array
    if kind == "map":
        values = _compile(t["values"], ns, named, f"{path}{{}}")
        key_enc = _compile_primitive("string", {}, f"{path}{{key}}")

        def enc_map(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            offsets = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
            start, stop = int(offsets[0]), int(offsets[-1])
            keys = arr.keys.slice(start, stop - start)
            vals = arr.items.slice(start, stop - start)
            entries = _join(key_enc(keys), values(vals)) if stop > start else pa.array([], pa.binary())
            return _blocks(np.diff(offsets), entries)

        return enc_map
    if kind in _PRIMITIVES:
        return _compile_primitive(kind, t, path)
    raise ValueError(f"field {path!r}: unsupported Avro type {kind!r}")


def _compile_union(branches: list, ns: str | None, named: dict[str, _Encoder | None], path: str) -> _Encoder:
    null_idx = next((i for i, b in enumerate(branches)
                     if b == "null" or (isinstance(b, dict) and b.get("type") == "null")), None)
    others = [i for i in range(len(branches)) if i != null_idx]
    if len(others) > 1:
        raise ValueError(f"field {path!r}: Avro union {json.dumps(branches)} has {len(others)} "
                         "non-null branches; only [null, X] unions are supported")
    if not others:
        return lambda arr: _const(zigzag_long(null_idx or 0), len(arr))
    value_idx = others[0]
    inner = _compile(branches[value_idx], ns, named, path)
    tag = pa.scalar(zigzag_long(value_idx), pa.binary())

    def enc_union(arr: pa.Array) -> pa.Array:
        if arr.null_count == 0:
            return _join(tag, inner(arr))
        if null_idx is None:
            _no_nulls(arr, path)
        null_piece = _const(zigzag_long(null_idx), len(arr))  # type: ignore[arg-type]
        if arr.null_count == len(arr):
            return null_piece
        valid = arr.is_valid()
        # encode only the non-null rows (children of null structs/lists may hold anything)
        return pc.replace_with_mask(null_piece, valid, _join(tag, inner(arr.filter(valid))))

    return enc_union


def _compile_primitive(kind: str, t: dict, path: str) -> _Encoder:
    logical = t.get("logicalType")
    if kind == "null":
        return lambda arr: _const(b"", len(arr))
    if kind == "boolean":
        def enc_bool(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            return _fixed_width(arr.cast(pa.uint8()).to_numpy(zero_copy_only=False).tobytes(), 1, len(arr))
        return enc_bool
    if kind in ("int", "long"):
        phys = pa.int32() if kind == "int" else pa.int64()

        def enc_int(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            try:
                ints = arr.cast(phys) if not pa.types.is_integer(arr.type) else arr.cast(phys, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise ValueError(f"field {path!r}: cannot write {arr.type} as Avro {kind}: {e}") from e
            return varint_array(ints.to_numpy(zero_copy_only=False).astype(np.int64))
        return enc_int
    if kind in ("float", "double"):
        dtype, width, arrow_t = ("<f4", 4, pa.float32()) if kind == "float" else ("<f8", 8, pa.float64())

        def enc_float(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            vals = arr.cast(arrow_t).to_numpy(zero_copy_only=False).astype(dtype)
            return _fixed_width(vals.tobytes(), width, len(arr))
        return enc_float
    if kind == "bytes" and logical == "decimal":
        def enc_bytes_decimal(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            if not pa.types.is_decimal(arr.type):
                raise ValueError(f"field {path!r}: expected a decimal, got {arr.type}")
            return _length_prefixed(_decimal_to_bytes(arr))
        return enc_bytes_decimal
    if kind in ("string", "bytes"):
        def enc_bytes(arr: pa.Array) -> pa.Array:
            _no_nulls(arr, path)
            return _length_prefixed(arr.cast(pa.binary()))
        return enc_bytes
    raise ValueError(f"field {path!r}: unsupported Avro type {kind!r}")


@lru_cache(maxsize=256)
def _encoder_cached(key: str) -> _Encoder:
    return _compile(_loads_cached(key), None, {}, "")


def encode_records_array(table: pa.Table, avro_schema: dict | str) -> pa.Array:
    """Like :func:`encode_records`, returning the datums as one Arrow binary array (no copies
    into Python objects; used to build log block content)."""
    key = _json_key(avro_schema)
    logical, _ = _schemas_cached(key)
    extra = [c for c in table.column_names if c not in logical.names]
    if extra:
        raise ValueError(f"table columns {extra} are not in the Avro schema {logical.names}")
    if table.num_rows == 0:
        return pa.array([], pa.binary())
    table = conform_table(table, logical)
    struct = pa.StructArray.from_arrays([_as_array(c) for c in table.columns], fields=list(logical))
    return _encoder_cached(key)(struct)


def encode_records(table: pa.Table, avro_schema: dict | str) -> list[bytes]:
    """Encode each row of ``table`` as one Avro binary datum of ``avro_schema``.

    Columns are matched by name and converted to the schema's Arrow types first (absent columns
    are written as nulls). The output is byte-identical to Avro's Java ``GenericDatumWriter`` and
    fastavro, and round-trips exactly through :func:`decode_records`. Encoding is columnar
    (numpy/Arrow kernels per field), so it needs no per-row Python work.

    Raises:
        ValueError: if the table has columns the schema lacks, or a value cannot be encoded
            (null in a non-nullable field, decimal out of range, unknown enum symbol...).
    """
    return encode_records_array(table, avro_schema).to_pylist()
def zigzag_long(n: int) -> bytes:
    """Avro long encoding (zig-zag varint) of one int."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z & ~0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)

