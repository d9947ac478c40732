"""Record merging for file slices, vectorized with pyarrow (no per-record Python loop).

Two modes, chosen from the payload class (reference §3.10):

* **Commit-time ordering** (``OverwriteWithLatestAvroPayload``): per record key, the version written
  last wins: the base file first, then log blocks in log order, rows of one block in block order.
  A delete that comes later than every version removes the key.
* **Ordering-field ordering** (``DefaultHoodieRecordPayload``, ``EventTimeAvroPayload``): per key
  the version with the greatest (ordering value, commit time, position) wins; ties on the
  ordering value go to the later commit. Deletes carry an ordering value: a key is removed when
  the greatest delete is greater than the winning version, comparing (ordering value, commit time);
  a delete whose ordering value is integer 0 is "natural order" and compares by commit time
  only. This is the rule hudi-rs applies, so both readers agree on every table.

Null ordering values sort below every other value.

A winning version from a log data block whose ``_hoodie_is_deleted`` is true removes the key, as
Hudi's payloads (``isDeleteRecord``) and hudi-rs do. Base-file rows are returned as they are.

A base file may hold a key more than once (Hudi's ``insert`` does not de-duplicate a batch):
:func:`merge_copies` gives such files Java's two rules, the readers' (the key's log record merges
into its first copy in file order, the other copies are read as stored; hudi-rs does the same) and
the merge handle's (copy-on-write upserts and compaction merge every copy on its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEY = "_hoodie_record_key"
COMMIT_TIME = "_hoodie_commit_time"
IS_DELETED = "_hoodie_is_deleted"


@dataclass
class DeleteBatch:
    """Deletes from one delete block: keys, ordering values (may be null) and the block's instant."""

    keys: pa.Array
    ordering: Optional[pa.Array]
    instant: str


@dataclass
class LogBatch:
    """One item of the merged log stream: either data rows or deletes, in log order."""

    data: Optional[pa.Table] = None
    deletes: Optional[DeleteBatch] = None


def _not_soft_deleted(data: pa.Table, rows: np.ndarray, n_base: int) -> np.ndarray:
    """``rows`` (positions in ``data``) without log rows whose ``_hoodie_is_deleted`` is true."""
    if IS_DELETED not in data.column_names or not len(rows):
        return rows
    col = data.column(IS_DELETED)
    if not pa.types.is_boolean(col.type):
        return rows
    flag = pc.fill_null(col, False).to_numpy(zero_copy_only=False)
    return rows[~(flag[rows] & (rows >= n_base))]


def _concat_data(tables: Sequence[pa.Table], schema: pa.Schema) -> pa.Table:
    if not tables:
        return schema.empty_table()
    return pa.concat_tables([t.select(schema.names).cast(schema) for t in tables])


def merge_commit_time(base: Optional[pa.Table], log: Sequence[LogBatch], schema: pa.Schema, *,
                      each_copy: bool = False) -> pa.Table:
    """Merge by arrival order: the last version of each key (base, then logs in order) wins.

    A base file holding a key more than once is merged by :func:`merge_copies` (``each_copy``)."""
    tables: list[pa.Table] = []
    key_parts: list[pa.Array] = []
    is_data_parts: list[np.ndarray] = []
    if base is not None and base.num_rows:
        tables.append(base)
        key_parts.append(base.column(KEY).combine_chunks())
        is_data_parts.append(np.ones(base.num_rows, dtype=bool))
    for item in log:
        if item.data is not None and item.data.num_rows:
            tables.append(item.data)
            key_parts.append(item.data.column(KEY).combine_chunks())
            is_data_parts.append(np.ones(item.data.num_rows, dtype=bool))
        elif item.deletes is not None and len(item.deletes.keys):
            key_parts.append(item.deletes.keys.cast(pa.string()))
            is_data_parts.append(np.zeros(len(item.deletes.keys), dtype=bool))
    if not key_parts:
        return schema.empty_table()
    keys = pa.chunked_array(key_parts, type=pa.string()).combine_chunks()
    is_data = np.concatenate(is_data_parts)
    pos = np.arange(len(keys), dtype=np.int64)
    n_base = base.num_rows if base is not None else 0
    winners, base_copies = _last_position_per_key(keys, pos, n_base)
    if base_copies:
        return merge_copies(base, lambda b: merge_commit_time(b, log, schema), each_copy=each_copy)
    winners = winners[is_data[winners]]
    # Map global positions (over data+deletes) to positions in the concatenated data rows.
    data_index = np.cumsum(is_data) - 1
    data = _concat_data(tables, schema)
    return data.take(pa.array(_not_soft_deleted(data, np.sort(data_index[winners]), n_base)))


def _last_position_per_key(keys: pa.Array, pos: np.ndarray, n_base: int = 0) -> tuple[np.ndarray, bool]:
    """The last position of each key, and whether a key occurs more than once among the first
    ``n_base`` positions (the base file's rows), counted in the same pass."""
    t = pa.table({"k": keys, "p": pa.array(pos)})
    # min_max is one pass, as cheap as max alone: the keys whose first position is a base row are the
    # base file's distinct keys, fewer than its rows when one is held twice.
    g = t.group_by("k", use_threads=False).aggregate([("p", "min_max")])
    mm = g.column("p_min_max")
    copies = n_base > 1 and (pc.sum(pc.less(pc.struct_field(mm, "min"), n_base)).as_py() or 0) < n_base
    return pc.struct_field(mm, "max").to_numpy(), bool(copies)


def java_order_key(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Ordering values as keys that Arrow sorts and compares in the order of Java's ``compareTo``
    (what Hudi's payloads and record mergers use); non-floating values are returned as they are.

    Floating values differ: ``Double.compareTo`` puts -0.0 below 0.0 and every NaN (all equal) above
    +Infinity, while Arrow compares -0.0 equal to 0.0 and sorts NaN last in both directions, so a NaN
    ordering value always lost. Each float becomes the int64 of its bits in IEEE total order (NaNs made
    one positive NaN first); nulls stay null.
    """
    if _is_text(values.type):
        return _java_string_order(values)
    if not pa.types.is_floating(values.type):
        return values
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
    f = pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
    f[np.isnan(f)] = np.nan  # numpy's NaN is the canonical positive quiet NaN, as Double.doubleToLongBits
    bits = f.view(np.int64)
    # Negative floats: flip the 63 value bits so that a larger magnitude sorts lower (-0.0 -> -1 < 0).
    key = np.where(bits < 0, bits ^ np.int64(0x7FFFFFFFFFFFFFFF), bits)
    return pa.array(key, pa.int64(), mask=~valid)


def _java_string_order(values: pa.Array | pa.ChunkedArray, force: bool = False) -> pa.Array | pa.ChunkedArray:
    """Strings as ``String.compareTo`` orders them: by UTF-16 code units. Arrow orders UTF-8 bytes (code
    points), which differs only when a value holds a character above U+FFFF (a surrogate pair, below
    U+E000..U+FFFF in UTF-16): then (or with ``force``) the values become their UTF-16-BE bytes, which
    sort as Java does."""
    if not force and not pc.any(pc.match_substring_regex(values, "[\U00010000-\U0010FFFF]")).as_py():
        return values
    return pa.array([None if v is None else v.encode("utf-16-be") for v in values.to_pylist()], pa.binary())


def comparable_order_keys(a: pa.Array | pa.ChunkedArray,
                          b: pa.Array | pa.ChunkedArray) -> tuple[pa.Array | pa.ChunkedArray, pa.Array | pa.ChunkedArray]:
    """:func:`java_order_key` of two columns of one ordering field, comparable with each other: when only
    one side's strings needed UTF-16 keys, the other side's get them too."""
    ka, kb = java_order_key(a), java_order_key(b)
    if pa.types.is_binary(ka.type) and not pa.types.is_binary(kb.type) and _is_text(b.type):
        kb = _java_string_order(b, force=True)
    elif pa.types.is_binary(kb.type) and not pa.types.is_binary(ka.type) and _is_text(a.type):
        ka = _java_string_order(a, force=True)
    return ka, kb


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _ordering_as(values: pa.Array, typ: pa.DataType) -> pa.Array:
    if values.type.equals(typ):
        return values
    try:
        return values.cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ValueError(
            f"delete ordering values of type {values.type} cannot be compared with the ordering "
            f"field of type {typ}: {e}"
        ) from e


def merge_ordering(base: Optional[pa.Table], log: Sequence[LogBatch], schema: pa.Schema,
                   ordering_field: str, *, each_copy: bool = False) -> pa.Table:
    """Merge by (ordering value, commit time, position); deletes as ordered tombstones.

    A base file holding a key more than once is merged by :func:`merge_copies` (``each_copy``)."""
    tables: list[pa.Table] = []
    if base is not None and base.num_rows:
        tables.append(base)
    deletes: list[DeleteBatch] = []
    for item in log:
        if item.data is not None and item.data.num_rows:
            tables.append(item.data)
        elif item.deletes is not None and len(item.deletes.keys):
            deletes.append(item.deletes)
    data = _concat_data(tables, schema)
    if data.num_rows == 0:
        return data
    if ordering_field not in data.column_names:
        raise ValueError(
            f"ordering field {ordering_field!r} is not a column of the table "
            f"(columns: {', '.join(data.column_names)})"
        )
    ord_type = data.schema.field(ordering_field).type
    n = data.num_rows
    # Keys of the records' and the deletes' ordering values computed together, so that both sides get
    # the same kind of key (see java_order_key) and compare with each other.
    del_values = [_delete_ordering(d, ord_type) for d in deletes]
    keys = java_order_key(pa.chunked_array([*data.column(ordering_field).chunks, *del_values], type=ord_type))
    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    offsets = np.cumsum([n] + [len(v) for v in del_values])
    del_keys = [keys.slice(int(offsets[i]), len(v)) for i, v in enumerate(del_values)]
    work = pa.table(
        {
            "k": data.column(KEY),
            "o": keys.slice(0, n),
            "c": data.column(COMMIT_TIME),
            "p": pa.array(np.arange(n, dtype=np.int64)),
        }
    )
    idx = pc.sort_indices(
        work,
        sort_keys=[("k", "ascending"), ("o", "descending"), ("c", "descending"), ("p", "descending")],
    )
    sorted_keys = work.column("k").take(idx).combine_chunks()
    first = np.ones(n, dtype=bool)
    if n > 1:
        same = pc.equal(sorted_keys.slice(1), sorted_keys.slice(0, n - 1))
        first[1:] = ~same.fill_null(False).to_numpy(zero_copy_only=False)
    order = idx.to_numpy()
    n_base = base.num_rows if base is not None else 0
    if n_base > 1:
        # Base rows of one key fall in one run of the sort: two in a run are copies.
        run = np.cumsum(first) - 1
        if (np.bincount(run[order < n_base], minlength=int(run[-1]) + 1) > 1).any():
            return merge_copies(base, lambda b: merge_ordering(b, log, schema, ordering_field), each_copy=each_copy)
    win_idx = order[first]
    if deletes:
        keep = _survives_deletes(work.take(pa.array(win_idx)), deletes, del_keys)
        win_idx = win_idx[keep]
    return data.take(pa.array(_not_soft_deleted(data, np.sort(win_idx), n_base)))


def _delete_ordering(d: DeleteBatch, ord_type: pa.DataType) -> pa.Array:
    """A delete batch's ordering values as the ordering field's type (nulls when it has none)."""
    m = len(d.keys)
    ordv = d.ordering if d.ordering is not None else pa.nulls(m, ord_type)
    return pa.nulls(m, ord_type) if pa.types.is_null(ordv.type) else _ordering_as(ordv, ord_type)


def _survives_deletes(winners: pa.Table, deletes: Sequence[DeleteBatch], del_keys: Sequence[pa.Array]) -> np.ndarray:
    """For each winning row, whether no delete outranks it (hudi-rs rule, see module doc); ``del_keys``:
    each delete batch's ordering keys (:func:`java_order_key`, computed with the winners')."""
    parts = []
    for d, o in zip(deletes, del_keys):
        m = len(d.keys)
        ordv = d.ordering if d.ordering is not None else pa.nulls(m, pa.null())
        is_zero = _is_integer_zero(ordv)
        parts.append(
            pa.table(
                {
                    "k": d.keys.cast(pa.string()),
                    "o": o,
                    "z": pa.array(is_zero, pa.bool_()),
                    "c": pa.array([d.instant] * m, pa.string()),
                }
            )
        )
    dels = pa.concat_tables(parts)
    # Max ordering per key (with its zero flag) and, separately, max commit time per key.
    od = pc.sort_indices(dels, sort_keys=[("k", "ascending"), ("o", "descending")])
    dk = dels.column("k").take(od).combine_chunks()
    m = len(dk)
    firsts = np.ones(m, dtype=bool)
    if m > 1:
        firsts[1:] = ~pc.equal(dk.slice(1), dk.slice(0, m - 1)).fill_null(False).to_numpy(zero_copy_only=False)
    top = dels.take(pa.array(od.to_numpy()[firsts]))
    cmax = dels.group_by("k", use_threads=False).aggregate([("c", "max")])
    # Both sides hold one row per key, so the left outer joins are lookups by position (index_in): the winners'
    # order is kept without a join and a sort (a join's fixed cost was most of this step on small slices).
    top_k = top.column("k").combine_chunks()
    c_of_top = cmax.column("c_max").take(pc.index_in(top_k, value_set=cmax.column("k").combine_chunks()))
    at = pc.index_in(winners.column("k"), value_set=top_k)
    d_order = top.column("o").take(at)
    d_zero = top.column("z").take(at)
    d_commit = c_of_top.take(at)
    has_del = pc.is_valid(at)
    later_commit = pc.greater(d_commit, winners.column("c"))
    o_rec = winners.column("o")
    o_del = d_order
    del_greater = _null_low_greater(o_del, o_rec)
    del_equal = _null_low_equal(o_del, o_rec)
    by_order = pc.or_(del_greater, pc.and_(del_equal, later_commit))
    wins = pc.if_else(pc.fill_null(d_zero, False), later_commit, by_order)
    removed = pc.and_(has_del, pc.fill_null(wins, False))
    return ~removed.to_numpy(zero_copy_only=False)


def _is_integer_zero(values: pa.Array) -> np.ndarray:
    if pa.types.is_integer(values.type):
        return pc.fill_null(pc.equal(values, 0), False).to_numpy(zero_copy_only=False)
    return np.zeros(len(values), dtype=bool)


def _null_low_greater(a: pa.ChunkedArray, b: pa.ChunkedArray) -> pa.ChunkedArray:
    """a > b where null is below every value (null > x is false; x > null is true)."""
    gt = pc.greater(a, b)
    a_valid = pc.is_valid(a)
    b_valid = pc.is_valid(b)
    return pc.if_else(pc.and_(a_valid, b_valid), gt, pc.and_(a_valid, pc.invert(b_valid)))


def _null_low_equal(a: pa.ChunkedArray, b: pa.ChunkedArray) -> pa.ChunkedArray:
    """a == b where two nulls are equal."""
    eq = pc.equal(a, b)
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return pc.or_(pc.fill_null(eq, False), both_null)


def copy_ranks(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """For each row, how many rows before it hold the same key (0 for a key's first copy)."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    enc = pc.dictionary_encode(keys)
    codes = (enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc).indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    idx = np.arange(n)
    run_start = np.maximum.accumulate(np.where(np.r_[True, ordered[1:] != ordered[:-1]], idx, 0))
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = idx - run_start
    return ranks


def merge_copies(base: Optional[pa.Table], merge: Callable[[Optional[pa.Table]], pa.Table], *,
                 each_copy: bool) -> pa.Table:
    """``merge(base)`` (base rows with a slice's log records) for a base file holding a key more than once
    (the merges detect that while grouping keys and call this; each layer of copies has no repeats).

    ``each_copy=False`` is Java's readers' rule (Spark's merge-on-read iterator, hudi-rs): a key's log
    record is consumed by its first copy in file order; later copies are read as stored.
    ``each_copy=True`` is Java's merge handle's (copy-on-write upserts, compaction): every copy merges
    with the log record on its own, so an update replaces each copy and a delete removes each. Base
    files without repeated keys go straight to ``merge``.
    """
    if base is None or base.num_rows < 2:
        return merge(base)
    ranks = copy_ranks(base.column(KEY))
    if not ranks.any():
        return merge(base)
    first = merge(base.filter(pa.array(ranks == 0)))
    out = [first]
    if not each_copy:
        out.append(base.filter(pa.array(ranks > 0)).select(first.column_names).cast(first.schema))
    else:
        for r in range(1, int(ranks.max()) + 1):
            layer = base.filter(pa.array(ranks == r))
            merged = merge(layer)
            # Keys only the logs hold came out of the first layer already.
            held = pc.is_in(merged.column(KEY), value_set=layer.column(KEY).combine_chunks())
            out.append(merged.filter(held).cast(first.schema))
    return pa.concat_tables(out)
