"""Avro binary datums -> Arrow, columnar.

Decoding reads each field for all records in lockstep (vectorised varints, string ranges copied
by Arrow's ``take``), so it needs no Python call per value. Measured on a 2-core VM: ~1M
records/s for an 11-column trips schema and ~400k records/s for the 27-column nested sample
schema, against ~0.1M and ~0.03M with fastavro over an in-memory object container. That
container path is kept as a fallback for batches where lockstep decoding is slow (a few records
holding very long arrays or maps).
"""

from __future__ import annotations

import io
import json
import os
from functools import lru_cache
from typing import Any, Callable, Iterable
import fastavro
import numpy as np
import pyarrow as pa
from hoodie.format.avro.encode import zigzag_long
from hoodie.format.avro.schema import (
    resolve_named,
    _Names, _PRIMITIVES, _json_key, _loads_cached, _physical_json, _schemas_cached, _to_logical,
    conform_table, load_avro_schema,
)


# ----------------------------------------------------------------------------------------------
# decoding
# ----------------------------------------------------------------------------------------------
# Records are decoded column-wise in "lockstep": every field is read for all records at once
# with numpy (varints, fixed widths, string views into the buffer), so the per-record cost is a
# few array operations instead of a Python or fastavro call per value. Arrays and maps are read
# in rounds (item j of every record that has one). Deep-but-narrow data (a few records holding
# very long arrays) would need many rounds; those batches fall back to fastavro.

_MAX_NARROW_ROUNDS = 256  # rounds with < _NARROW_ROWS active records before falling back
_NARROW_ROWS = 32


class _FallBack(Exception):
    """Raised inside the columnar decoder when fastavro would be faster for this batch."""


class _Input:
    """The byte buffer being decoded, padded so short over-reads of varints stay in bounds."""

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.size = len(data)
        self.buf = np.frombuffer(bytes(data) + b"\x00" * 16, dtype=np.uint8)
        self.arrow_buf = pa.py_buffer(self.buf)
        self.narrow_rounds = 0

    def check(self, pos: np.ndarray, what: str) -> None:
        if len(pos) and (pos.min() < 0 or pos.max() >= self.size):
            raise ValueError(f"malformed Avro data: {what} runs past the end of the buffer")


_Decoder = Callable[[_Input, np.ndarray], "tuple[pa.Array, np.ndarray]"]


def _read_varints(inp: _Input, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zig-zag varints at ``pos`` -> (int64 values, positions after them)."""
    n = len(pos)
    if n == 0:
        return np.zeros(0, dtype=np.int64), pos
    inp.check(pos, "a varint")
    buf = inp.buf
    b = buf[pos]
    val = (b & 0x7F).astype(np.uint64)
    cont = b >= 0x80
    nbytes = np.ones(n, dtype=np.int64)
    k = 1
    while cont.any():
        if k >= 10:
            raise ValueError("malformed Avro data: varint longer than 10 bytes")
        idx = np.nonzero(cont)[0]
        b = buf[pos[idx] + k]
        val[idx] |= (b & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        nbytes[idx] += 1
        cont[idx] = b >= 0x80
        k += 1
    out = (val >> np.uint64(1)).astype(np.int64) ^ -((val & np.uint64(1)).astype(np.int64))
    return out, pos + nbytes


def _views(inp: _Input, starts: np.ndarray, lengths: np.ndarray, view_type: pa.DataType) -> pa.Array:
    """A binary/string view array pointing into the input buffer (no per-value copies).

    Arrow views are 16 bytes: int32 length, then either the value inline (<= 12 bytes) or a
    4-byte prefix, buffer index 0 and int32 offset. Bytes past a short value's length are left
    as found (only ``length`` bytes are ever read; the array is cast to a plain one right away).
    """
    n = len(starts)
    views = np.empty((n, 16), dtype=np.uint8)
    views[:, 0:4] = lengths.astype("<i4").view(np.uint8).reshape(n, 4)
    # rows of 12 bytes starting at each offset, gathered from a sliding-window view (the buffer
    # is padded by 16 bytes, so a window starting at any in-range offset is in bounds)
    window = np.lib.stride_tricks.as_strided(inp.buf, shape=(len(inp.buf) - 11, 12), strides=(1, 1))
    views[:, 4:16] = window[starts]
    long_ = lengths > 12
    if long_.any():
        views[long_, 8:12] = 0
        views[long_, 12:16] = starts[long_].astype("<i4").view(np.uint8).reshape(-1, 4)
    return pa.Array.from_buffers(view_type, n, [None, pa.py_buffer(views), inp.arrow_buf])


def _slices(inp: _Input, starts: np.ndarray, lengths: np.ndarray, out_type: pa.DataType,
            view_type: pa.DataType) -> pa.Array:
    """Copy the byte ranges ``[starts, starts + lengths)`` of the input into a binary/string array.

    Values of one field appear in buffer order, so the ranges interleaved with the gaps between
    them form valid Arrow offsets over the whole buffer; taking every other element lets Arrow's
    C++ ``take`` do the copying. Out-of-order ranges (not produced by the decoder) use views.
    """
    n = len(starts)
    if n == 0:
        return pa.array([], out_type)
    offsets = np.empty(2 * n + 1, dtype=np.int64)
    offsets[0:2 * n:2] = starts
    offsets[1:2 * n:2] = starts + lengths
    offsets[2 * n] = offsets[2 * n - 1]
    if not np.all(offsets[1:] >= offsets[:-1]):
        return _views(inp, starts, lengths, view_type).cast(out_type)
    if inp.size < 2**31 - 1:
        ranges = pa.Array.from_buffers(out_type, 2 * n, [None, pa.py_buffer(offsets.astype(np.int32)), inp.arrow_buf])
    else:
        large = pa.large_string() if pa.types.is_string(out_type) else pa.large_binary()
        ranges = pa.Array.from_buffers(large, 2 * n, [None, pa.py_buffer(offsets), inp.arrow_buf])
    out = ranges.take(pa.array(np.arange(0, 2 * n, 2)))
    return out if out.type == out_type else out.cast(out_type)


def _dec_primitive(kind: str, path: str) -> tuple[_Decoder, pa.DataType]:
    if kind == "null":
        return (lambda inp, pos: (pa.nulls(len(pos)), pos)), pa.null()
    if kind == "boolean":
        def dec_bool(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            inp.check(pos, f"field {path!r}")
            raw = inp.buf[pos]
            if (raw > 1).any():
                raise ValueError(f"malformed Avro data in field {path!r}: boolean byte not 0/1")
            return pa.array(raw.astype(bool)), pos + 1
        return dec_bool, pa.bool_()
    if kind in ("int", "long"):
        def dec_int(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            vals, new = _read_varints(inp, pos)
            if kind == "int":
                if len(vals) and (vals.min() < -(2**31) or vals.max() >= 2**31):
                    raise ValueError(f"malformed Avro data in field {path!r}: int out of range")
                return pa.array(vals.astype(np.int32)), new
            return pa.array(vals), new
        return dec_int, (pa.int32() if kind == "int" else pa.int64())
    if kind in ("float", "double"):
        width, dtype, arrow_t = (4, "<f4", pa.float32()) if kind == "float" else (8, "<f8", pa.float64())

        def dec_float(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            inp.check(pos + (width - 1), f"field {path!r}")
            raw = inp.buf[pos[:, None] + np.arange(width)]
            return pa.array(np.ascontiguousarray(raw).view(dtype).reshape(-1)), pos + width
        return dec_float, arrow_t
    if kind in ("string", "bytes"):
        view_t, out_t = (pa.string_view(), pa.string()) if kind == "string" else (pa.binary_view(), pa.binary())

        def dec_bytes(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            lengths, start = _read_varints(inp, pos)
            end = start + lengths
            if len(pos) and (lengths.min() < 0 or end.max() > inp.size):
                raise ValueError(f"malformed Avro data in field {path!r}: bad {kind} length")
            arr = _slices(inp, start, lengths, out_t, view_t)
            if kind == "string":
                try:
                    arr.validate(full=True)
                except pa.ArrowInvalid as e:
                    raise ValueError(f"malformed Avro data in field {path!r}: {e}") from e
            return arr, end
        return dec_bytes, out_t
    raise ValueError(f"field {path!r}: unsupported Avro type {kind!r}")


def _expand(sub: pa.Array, sel: np.ndarray, n: int) -> pa.Array:
    """Place ``sub`` (values of rows ``sel``) into an ``n``-row array, null elsewhere."""
    indices = np.full(n, -1, dtype=np.int64)
    indices[sel] = np.arange(len(sel))
    return sub.take(pa.array(indices, mask=indices < 0))


def _compile_dec(t: Any, ns: str | None, named: dict[str, tuple[_Decoder, pa.DataType] | None],
                 path: str) -> tuple[_Decoder, pa.DataType]:
    """A columnar decoder for an Avro type, and the (physical) Arrow type it produces."""
    if isinstance(t, list):
        return _compile_dec_union(t, ns, named, path)
    if isinstance(t, str):
        if t in _PRIMITIVES:
            return _dec_primitive(t, path)
        return resolve_named(t, ns, named, path)
    kind = t.get("type")
    if isinstance(kind, (dict, list)):
        return _compile_dec(kind, ns, named, path)
    if kind in ("record", "error"):
        full, rec_ns = _Names.fullname(t["name"], t.get("namespace", ns))
        named[full] = None
        fields = [(f["name"], *_compile_dec(f["type"], rec_ns, named, f"{path}.{f['name']}" if path else f["name"]))
                  for f in t.get("fields", [])]
        struct_t = pa.struct([pa.field(name, ft) for name, _, ft in fields])

        def dec_record(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            if not fields:
                return pa.array([{}] * len(pos), struct_t), pos
            children = []
            for _, dec, _ft in fields:
                arr, pos = dec(inp, pos)
                children.append(arr)
            return pa.StructArray.from_arrays(children, fields=list(struct_t)), pos

        named[full] = (dec_record, struct_t)
        return dec_record, struct_t
    if kind == "enum":
        full, _ = _Names.fullname(t["name"], t.get("namespace", ns))
        symbols = pa.array(t["symbols"], pa.string())

        def dec_enum(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            idx, new = _read_varints(inp, pos)
            if len(idx) and (idx.min() < 0 or idx.max() >= len(symbols)):
                raise ValueError(f"malformed Avro data in field {path!r}: enum index out of range")
            return symbols.take(pa.array(idx)), new

        named[full] = (dec_enum, pa.string())
        return dec_enum, pa.string()
    if kind == "fixed":
        full, _ = _Names.fullname(t["name"], t.get("namespace", ns))
        size = int(t["size"])
        fixed_t = pa.binary(size)

        def dec_fixed(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            if size and len(pos):
                inp.check(pos + (size - 1), f"field {path!r}")
            raw = inp.buf[pos[:, None] + np.arange(size)] if size else np.zeros((len(pos), 0), np.uint8)
            data = pa.py_buffer(np.ascontiguousarray(raw))
            return pa.Array.from_buffers(fixed_t, len(pos), [None, data]), pos + size

        named[full] = (dec_fixed, fixed_t)
        return dec_fixed, fixed_t
    if kind in ("array", "map"):
        if kind == "array":
            item_dec, item_t = _compile_dec(t["items"], ns, named, f"{path}[]")
            out_t = pa.list_(pa.field("element", item_t))
        else:
            key_dec, _ = _dec_primitive("string", f"{path}{{key}}")
            val_dec, val_t = _compile_dec(t["values"], ns, named, f"{path}{{}}")
            item_t = pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", val_t)])
            out_t = pa.map_(pa.string(), val_t)

            def item_dec(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
                keys, pos = key_dec(inp, pos)
                vals, pos = val_dec(inp, pos)
                return pa.StructArray.from_arrays([keys, vals], fields=list(item_t)), pos

        def dec_blocks(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            n = len(pos)
            pos = pos.copy()
            pieces: list[pa.Array] = []
            piece_rows: list[np.ndarray] = []
            piece_ord: list[np.ndarray] = []
            counts = np.zeros(n, dtype=np.int64)
            active = np.arange(n)
            while active.size:
                cnt, p = _read_varints(inp, pos[active])
                neg = cnt < 0
                if neg.any():  # negative count: a byte size follows (Avro block framing)
                    cnt = np.abs(cnt)
                    _, p[neg] = _read_varints(inp, p[neg])
                if len(cnt) and cnt.max() > inp.size:
                    raise ValueError(f"malformed Avro data in field {path!r}: implausible item count")
                pos[active] = p
                has = cnt > 0
                rows, remaining = active[has], cnt[has]
                while rows.size:
                    if rows.size < _NARROW_ROWS:
                        inp.narrow_rounds += 1
                        if inp.narrow_rounds > _MAX_NARROW_ROUNDS and remaining.max() > 1:
                            raise _FallBack()
                    arr, pos[rows] = item_dec(inp, pos[rows])
                    pieces.append(arr)
                    piece_rows.append(rows)
                    piece_ord.append(counts[rows])
                    counts[rows] += 1
                    remaining = remaining - 1
                    keep = remaining > 0
                    rows, remaining = rows[keep], remaining[keep]
                active = active[has]
            offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
            if pieces:
                values = pa.concat_arrays(pieces)
                if len(pieces) > 1:
                    order = np.lexsort((np.concatenate(piece_ord), np.concatenate(piece_rows)))
                    values = values.take(pa.array(order))
            else:
                values = pa.array([], item_t)
            if kind == "array":
                return pa.ListArray.from_arrays(offsets, values, type=out_t), pos
            return pa.MapArray.from_arrays(offsets, values.field(0), values.field(1), type=out_t), pos

        return dec_blocks, out_t
    if kind in _PRIMITIVES:
        return _dec_primitive(kind, path)
    raise ValueError(f"field {path!r}: unsupported Avro type {kind!r}")


def _compile_dec_union(branches: list, ns: str | None,
                       named: dict[str, tuple[_Decoder, pa.DataType] | None],
                       path: str) -> tuple[_Decoder, pa.DataType]:
    null_idx = next((i for i, b in enumerate(branches)
                     if b == "null" or (isinstance(b, dict) and b.get("type") == "null")), None)
    others = [i for i in range(len(branches)) if i != null_idx]
    if len(others) > 1:
        raise ValueError(f"field {path!r}: Avro union {json.dumps(branches)} has {len(others)} "
                         "non-null branches; only [null, X] unions are supported")
    if not others:
        def dec_null_union(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
            idx, new = _read_varints(inp, pos)
            if len(idx) and (idx != null_idx).any():
                raise ValueError(f"malformed Avro data in field {path!r}: bad union index")
            return pa.nulls(len(pos)), new
        return dec_null_union, pa.null()
    value_idx = others[0]
    inner, inner_t = _compile_dec(branches[value_idx], ns, named, path)

    def dec_union(inp: _Input, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
        idx, new = _read_varints(inp, pos)
        is_val = idx == value_idx
        if is_val.all():
            return inner(inp, new)
        if null_idx is None or not np.all(is_val | (idx == null_idx)):
            raise ValueError(f"malformed Avro data in field {path!r}: bad union index")
        sel = np.nonzero(is_val)[0]
        if not len(sel):
            return pa.nulls(len(pos), inner_t), new
        sub, new[sel] = inner(inp, new[sel])
        return _expand(sub, sel, len(pos)), new

    return dec_union, inner_t


@lru_cache(maxsize=256)
def _decoder_cached(key: str) -> _Decoder:
    dec, _ = _compile_dec(_loads_cached(key), None, {}, "")
    return dec



def _container_header(schema_json: str, sync: bytes) -> bytes:
    meta = [(b"avro.schema", schema_json.encode("utf-8")), (b"avro.codec", b"null")]
    parts = [b"Obj\x01", zigzag_long(len(meta))]
    for k, v in meta:
        parts += [zigzag_long(len(k)), k, zigzag_long(len(v)), v]
    parts += [b"\x00", sync]
    return b"".join(parts)


def _decode_fastavro(body: bytes, count: int, key: str, physical: pa.Schema) -> pa.StructArray:
    """Decode concatenated datums by wrapping them in a one-block in-memory Avro container and
    iterating fastavro's compiled reader (fallback for deep-but-narrow batches)."""
    phys_json = _physical_json(key)
    sync = os.urandom(16)
    buf = b"".join([_container_header(phys_json, sync), zigzag_long(count), zigzag_long(len(body)), body, sync])
    try:
        rows = list(fastavro.reader(io.BytesIO(buf)))
    except (EOFError, StopIteration, IndexError, UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"malformed Avro data: {e!r}") from e
    if len(rows) != count:
        raise ValueError(f"malformed Avro data: expected {count} records, decoded {len(rows)}")
    # one C++ conversion of the row dicts (3x faster than a comprehension per column)
    return pa.array(rows, type=pa.struct(list(physical)))


def decode_buffer(data: bytes | bytearray | memoryview, starts: np.ndarray | list[int],
                  ends: np.ndarray | list[int], writer_schema: dict | str,
                  arrow_schema: pa.Schema | None = None) -> pa.Table:
    """Decode the Avro binary datums ``data[starts[i]:ends[i]]`` (see :func:`decode_records`).

    Lets callers decode datums in place (e.g. inside a log block's content) without slicing them
    out first. Every datum must be consumed exactly; anything else is reported as malformed.
    """
    key = _json_key(writer_schema)
    logical, physical = _schemas_cached(key)
    starts_a = np.asarray(starts, dtype=np.int64)
    ends_a = np.asarray(ends, dtype=np.int64)
    count = len(starts_a)
    if count:
        inp = _Input(data)
        try:
            struct, final = _decoder_cached(key)(inp, starts_a.copy())
            if not np.array_equal(final, ends_a):
                bad = int(np.nonzero(final != ends_a)[0][0])
                raise ValueError(
                    f"malformed Avro data: record {bad} decodes to {int(final[bad] - starts_a[bad])} "
                    f"bytes but its datum has {int(ends_a[bad] - starts_a[bad])}")
        except _FallBack:
            view = memoryview(data)
            body = b"".join(view[s:e] for s, e in zip(starts_a.tolist(), ends_a.tolist()))
            struct = _decode_fastavro(body, count, key, physical)
        except IndexError as e:  # defensive: numpy indexing past the buffer
            raise ValueError(f"malformed Avro data: {e}") from e
        arrays = [_to_logical(struct.field(i), pf.type, lf.type)
                  for i, (lf, pf) in enumerate(zip(logical, physical))]
        table = pa.Table.from_arrays(arrays, schema=logical)
    else:
        table = logical.empty_table()
    if arrow_schema is not None:
        table = conform_table(table, arrow_schema)
    return table


def decode_leading_field(data: bytes | bytearray | memoryview, starts: np.ndarray | list[int],
                         ends: np.ndarray | list[int], writer_schema: dict | str, field: str) -> pa.Array:
    """Decode one top-level field of each datum, reading only the fields before it.

    Avro binary datums are the fields in order, so a field near the front (Hudi's
    ``_hoodie_record_key`` is the third) is found without touching the rest of the record: the
    datum is decoded with the writer schema cut after ``field``. Each datum must be at least that
    long; the rest of it is not checked (callers that need every field use :func:`decode_buffer`).

    Raises:
        KeyError: the schema has no top-level field ``field``.
        ValueError: a datum is malformed.
    """
    schema = load_avro_schema(writer_schema)
    names = [f.get("name") for f in schema.get("fields", [])]
    if field not in names:
        raise KeyError(f"Avro schema has no field {field!r}")
    idx = names.index(field)
    cut = dict(schema)
    cut["fields"] = schema["fields"][:idx + 1]
    key = _json_key(cut)
    logical, physical = _schemas_cached(key)
    starts_a = np.asarray(starts, dtype=np.int64)
    ends_a = np.asarray(ends, dtype=np.int64)
    if not len(starts_a):
        return pa.array([], type=logical.field(idx).type)
    try:
        struct, final = _decoder_cached(key)(_Input(data), starts_a.copy())
    except _FallBack:
        return decode_buffer(data, starts_a, ends_a, writer_schema).column(field).combine_chunks()
    except IndexError as e:  # defensive: numpy indexing past the buffer
        raise ValueError(f"malformed Avro data: {e}") from e
    if (final > ends_a).any():
        bad = int(np.nonzero(final > ends_a)[0][0])
        raise ValueError(f"malformed Avro data: record {bad} is shorter than its first {idx + 1} fields")
    return _to_logical(struct.field(idx), physical.field(idx).type, logical.field(idx).type)


def decode_records(datums: Iterable[bytes], writer_schema: dict | str,
                   arrow_schema: pa.Schema | None = None) -> pa.Table:
    """Decode Avro binary datums (no container) written with ``writer_schema`` into a table.

    Without ``arrow_schema`` the result has :func:`avro_to_arrow_schema` (writer schema). With it
    (a reader schema) columns are projected and reordered to it, absent columns are filled with
    nulls and types are converted where safe (int->long, float->double, added struct fields...).

    Decoding is columnar (numpy over all records at once); batches of a few records with very
    long arrays/maps fall back to fastavro.

    Raises:
        ValueError: on malformed datums or unsafe conversions to ``arrow_schema``.
    """
    items = datums if isinstance(datums, list) else list(datums)
    lengths = np.fromiter((len(d) for d in items), dtype=np.int64, count=len(items))
    ends = np.cumsum(lengths)
    return decode_buffer(b"".join(items), ends - lengths, ends, writer_schema, arrow_schema)


