"""Deterministic tests at the boundaries mutation testing found unguarded (issue 21, MUTATION.md).

Each test pins one edge a flipped comparison, an off-by-one or a dropped condition would move:
equal ordering values in the merge, exact instants in the file-system view and the timeline.
"""

from __future__ import annotations

from typing import Optional, Sequence

import pyarrow as pa
import pytest

from hoodie.format.slice.merge import (
    COMMIT_TIME, IS_DELETED, KEY, DeleteBatch, LogBatch, merge_commit_time, merge_ordering,
)

SCHEMA = pa.schema([(COMMIT_TIME, pa.string()), (KEY, pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def _rows(rows: Sequence[tuple[str, str, Optional[int], str]]) -> pa.Table:
    """Data rows as (commit time, key, ordering value, payload)."""
    cols = list(zip(*rows)) if rows else [[], [], [], []]
    return pa.table({COMMIT_TIME: pa.array(cols[0], pa.string()), KEY: pa.array(cols[1], pa.string()),
                     "ts": pa.array(cols[2], pa.int64()), "v": pa.array(cols[3], pa.string())})


def _deletes(instant: str, keys: Sequence[str], ordering: Optional[Sequence[object]],
             typ: pa.DataType = pa.int64()) -> LogBatch:
    order = None if ordering is None else pa.array(list(ordering), typ)
    return LogBatch(deletes=DeleteBatch(pa.array(list(keys), pa.string()), order, instant))


def _merged(base: Optional[pa.Table], log: Sequence[LogBatch]) -> dict[str, str]:
    out = merge_ordering(base, log, SCHEMA, "ts")
    return dict(zip(out.column(KEY).to_pylist(), out.column("v").to_pylist()))


# -- merge: ordering-field merging ----------------------------------------------------------------

def test_equal_ordering_value_later_commit_wins_whatever_the_log_order() -> None:
    """Hudi (DefaultHoodieRecordPayload / EVENT_TIME_ORDERING): on equal ordering values the record
    processed later wins; hudi-rs and hoodie take the later commit, then the later position."""
    early, late = _rows([("002", "k", 5, "late")]), _rows([("001", "k", 5, "early")])
    # The later commit wins even when its row comes first in the stream.
    assert _merged(None, [LogBatch(data=early), LogBatch(data=late)]) == {"k": "late"}
    assert _merged(_rows([("001", "k", 5, "base")]), [LogBatch(data=_rows([("002", "k", 5, "log")]))]) == {"k": "log"}
    # Same commit and ordering value: the later position wins.
    same = _rows([("001", "k", 5, "first"), ("001", "k", 5, "second")])
    assert _merged(None, [LogBatch(data=same)]) == {"k": "second"}
    # A greater ordering value beats a later commit.
    assert _merged(None, [LogBatch(data=_rows([("001", "k", 6, "big"), ("002", "k", 5, "small")]))]) == {"k": "big"}


def test_null_ordering_value_sorts_below_every_value() -> None:
    rows = _rows([("001", "k", 1, "one"), ("002", "k", None, "null")])
    assert _merged(None, [LogBatch(data=rows)]) == {"k": "one"}
    both_null = _rows([("001", "k", None, "a"), ("002", "k", None, "b")])
    assert _merged(None, [LogBatch(data=both_null)]) == {"k": "b"}


@pytest.mark.parametrize(
    ("delete_instant", "delete_ordering", "kept"),
    [
        ("003", 5, False),  # equal ordering, later commit: the delete wins
        ("001", 5, True),   # equal ordering, earlier commit: the record stays (hudi-rs rule)
        ("002", 5, True),   # equal ordering, same commit: not strictly later, the record stays
        ("001", 6, False),  # greater ordering wins whatever the commit
        ("003", 4, True),   # smaller ordering loses whatever the commit
    ],
)
def test_delete_against_record_at_the_ordering_boundary(delete_instant: str, delete_ordering: int,
                                                        kept: bool) -> None:
    record = LogBatch(data=_rows([("002", "k", 5, "rec"), ("002", "other", 5, "o")]))
    delete = _deletes(delete_instant, ["k"], [delete_ordering])
    for log in ([record, delete], [delete, record]):  # log position does not matter, only the order
        got = _merged(None, log)
        assert ("k" in got) is kept
        assert got["other"] == "o"


@pytest.mark.parametrize(("delete_instant", "kept"), [("001", True), ("002", True), ("003", False)])
def test_natural_order_delete_compares_commit_time_only(delete_instant: str, kept: bool) -> None:
    """An integer-0 ordering value (a SQL DELETE, hoodie's own deletes) means "natural order": the
    delete applies to versions of strictly earlier commits, whatever their ordering value."""
    record = LogBatch(data=_rows([("002", "k", 9, "rec")]))
    assert ("k" in _merged(None, [record, _deletes(delete_instant, ["k"], [0])])) is kept


def test_natural_order_needs_an_integer_zero() -> None:
    """A 0.0 float or '0' string is an ordinary ordering value, not natural order."""
    record = LogBatch(data=_rows([("002", "k", 9, "rec")]))
    assert _merged(None, [record, _deletes("003", ["k"], [0.0], pa.float64())]) == {"k": "rec"}
    assert _merged(None, [record, _deletes("003", ["k"], ["0"], pa.string())]) == {"k": "rec"}
    # A record whose ordering value is below the float delete's still loses to it.
    low = LogBatch(data=_rows([("002", "k", -1, "rec")]))
    assert _merged(None, [low, _deletes("001", ["k"], [0.0], pa.float64())]) == {}


def test_delete_greatest_ordering_and_latest_commit_are_taken_per_key_separately() -> None:
    """Of several deletes of a key, the greatest ordering value and the latest commit both count
    (hudi-rs keeps a per-key maximum of each), and the greatest's zero flag decides the rule."""
    record = LogBatch(data=_rows([("005", "k", 7, "rec"), ("005", "j", 7, "j")]))
    # ordering 7 from an early delete, a later commit from a delete with a lower ordering value:
    # (7, 009) > (7, 005): removed.
    log = [record, _deletes("001", ["k"], [7]), _deletes("009", ["k"], [3])]
    assert _merged(None, log) == {"j": "j"}
    # Only a delete with ordering 3 at 009: (3, 009) < (7, 005): kept.
    assert _merged(None, [record, _deletes("009", ["k", "j"], [3, 8])]) == {"k": "rec"}


def test_null_delete_ordering_vs_record_ordering() -> None:
    """A delete without ordering values (null) sorts below any record ordering value, and equals a
    null record ordering value (then the later commit decides)."""
    rec = LogBatch(data=_rows([("002", "k", 5, "rec"), ("002", "n", None, "n")]))
    assert _merged(None, [rec, _deletes("003", ["k", "n"], None)]) == {"k": "rec"}
    assert _merged(None, [rec, _deletes("001", ["k", "n"], None)]) == {"k": "rec", "n": "n"}


def test_a_null_integer_delete_ordering_value_is_not_natural_order() -> None:
    """An integer ordering column of a delete block may hold nulls (Java writes a null ordering value for
    a delete record without one): null is not the natural-order 0, so the delete ranks below the record's
    value 5 and keeps it, while a 0 in the same column deletes by commit time."""
    rec = LogBatch(data=_rows([("002", "k", 5, "rec"), ("002", "z", 5, "z")]))
    assert _merged(None, [rec, _deletes("003", ["k", "z"], [None, 0])]) == {"k": "rec"}


def test_delete_ordering_of_another_type_is_cast_or_refused() -> None:
    rec = LogBatch(data=_rows([("002", "k", 5, "rec")]))
    assert _merged(None, [rec, _deletes("003", ["k"], [5], pa.int32())]) == {}
    with pytest.raises(ValueError, match="cannot be compared with the ordering field"):
        _merged(None, [rec, _deletes("003", ["k"], ["not a number"], pa.string())])


def test_ordering_merge_without_the_ordering_column_names_the_columns() -> None:
    with pytest.raises(ValueError, match=r"ordering field 'nope' is not a column of the table "
                                         r"\(columns: _hoodie_commit_time, _hoodie_record_key, ts, v\)"):
        merge_ordering(_rows([("001", "k", 1, "a")]), [], SCHEMA, "nope")


def test_delete_block_whose_ordering_values_are_all_null() -> None:
    """A delete block whose records carry no ordering value decodes to a null-typed column; it
    compares as null (below every value) and mixes with typed delete blocks."""
    rec = LogBatch(data=_rows([("002", "k", 5, "rec"), ("002", "n", None, "n"), ("002", "j", 1, "j")]))
    null_typed = LogBatch(deletes=DeleteBatch(pa.array(["k", "n"], pa.string()), pa.nulls(2), "003"))
    assert _merged(None, [rec, null_typed]) == {"k": "rec", "j": "j"}
    typed = _deletes("003", ["j"], [2])
    assert _merged(None, [rec, null_typed, typed]) == {"k": "rec"}
    assert _merged(None, [rec, typed, null_typed]) == {"k": "rec"}


def test_empty_items_in_the_log_stream_are_skipped() -> None:
    """Empty data blocks and delete blocks without keys change nothing (both merge modes)."""
    empty_data = LogBatch(data=_rows([]))
    no_keys = _deletes("009", [], [])
    log = [empty_data, LogBatch(data=_rows([("002", "k", 1, "x")])), no_keys, empty_data]
    assert _merged(None, log) == {"k": "x"}
    out = merge_commit_time(None, log, SCHEMA)
    assert out.column("v").to_pylist() == ["x"]
    assert merge_commit_time(_rows([]), [empty_data], SCHEMA).num_rows == 0


def test_ordering_merge_of_nothing_is_empty_with_the_schema() -> None:
    out = merge_ordering(None, [_deletes("001", ["k"], [1])], SCHEMA, "ts")
    assert out.num_rows == 0 and out.schema == SCHEMA


def test_ordering_merge_keeps_the_stream_order_of_winners() -> None:
    """Winners come out in stream order (base, then logs), so reads are deterministic."""
    base = _rows([("001", "a", 1, "a1"), ("001", "b", 1, "b1"), ("001", "c", 1, "c1")])
    out = merge_ordering(base, [LogBatch(data=_rows([("002", "a", 2, "a2")]))], SCHEMA, "ts")
    assert out.column("v").to_pylist() == ["b1", "c1", "a2"]


# -- merge: commit-time ordering ------------------------------------------------------------------

def test_commit_time_merge_without_a_base_file() -> None:
    """A log-only file group (no base file): the last version in log order wins, deletes apply
    to what came before them, and a later insert brings a deleted key back."""
    log = [LogBatch(data=_rows([("001", "a", 9, "a1"), ("001", "b", 9, "b1")])),
           _deletes("002", ["a", "b"], None),
           LogBatch(data=_rows([("003", "b", 0, "b3"), ("003", "c", 0, "c3")]))]
    out = merge_commit_time(None, log, SCHEMA)
    assert out.column("v").to_pylist() == ["b3", "c3"]


def test_commit_time_merge_ignores_ordering_values_and_keeps_stream_order() -> None:
    base = _rows([("001", "a", 9, "a1"), ("001", "b", 9, "b1"), ("001", "c", 9, "c1")])
    log = [LogBatch(data=_rows([("002", "a", 1, "a2")])), _deletes("003", ["c"], [0])]
    out = merge_commit_time(base, log, SCHEMA)
    assert out.column("v").to_pylist() == ["b1", "a2"]


# -- merge: soft deletes (_hoodie_is_deleted) ------------------------------------------------------

SOFT_SCHEMA = SCHEMA.append(pa.field(IS_DELETED, pa.bool_()))


def _soft_rows(rows: Sequence[tuple[str, str, int, str, Optional[bool]]]) -> pa.Table:
    """Data rows as (commit time, key, ordering value, payload, _hoodie_is_deleted)."""
    t = _rows([r[:4] for r in rows])
    return t.append_column(IS_DELETED, pa.array([r[4] for r in rows], pa.bool_()))


@pytest.mark.parametrize("mode", ["commit_time", "ordering"])
@pytest.mark.parametrize("with_base", [True, False], ids=["base", "log_only"])
def test_soft_deleted_log_row_removes_its_key_and_base_rows_stay(mode: str, with_base: bool) -> None:
    """A winning log row whose _hoodie_is_deleted is true removes the key, the first log row (the
    row right after the base rows, or row 0 without a base) included; a null or false flag keeps
    the row; a base row is returned as it is, whatever its flag (module doc of merge.py)."""
    base = _soft_rows([("001", "b", 1, "base-flagged", True)]) if with_base else None
    log = [LogBatch(data=_soft_rows([("002", "gone", 2, "x", True), ("002", "null", 2, "n", None),
                                     ("002", "false", 2, "f", False)]))]
    if mode == "commit_time":
        out = merge_commit_time(base, log, SOFT_SCHEMA)
    else:
        out = merge_ordering(base, log, SOFT_SCHEMA, "ts")
    got = dict(zip(out.column(KEY).to_pylist(), out.column("v").to_pylist()))
    assert got == {"null": "n", "false": "f", **({"b": "base-flagged"} if with_base else {})}


def test_soft_delete_flag_that_is_not_a_boolean_is_ignored() -> None:
    """Only a boolean _hoodie_is_deleted column marks deletes (a string one is plain data)."""
    log = [LogBatch(data=_rows([("002", "k", 2, "x")]).append_column(IS_DELETED, pa.array(["true"])))]
    schema = SCHEMA.append(pa.field(IS_DELETED, pa.string()))
    assert merge_commit_time(None, log, schema).column("v").to_pylist() == ["x"]
    assert merge_ordering(None, log, schema, "ts").column("v").to_pylist() == ["x"]


# -- read filters -----------------------------------------------------------------------------------

def test_filters_are_checked_and_every_operator_spelling_works() -> None:
    """Malformed filters, unknown operators and unknown columns are refused with messages naming
    them; '==' and '<>' mean '=' and '!='; a pyarrow scalar is compared as it is (not cast)."""
    import re

    from hoodie.format.slice.filters import OPS, ReadError, filter_expression, normalize_filters

    for bad in [("a", "="), "abc"]:
        with pytest.raises(ReadError, match=re.escape(f"filter {bad!r} must be a (column, op, value) triple, "
                                                      "e.g. ('city', '=', 'sf')")):
            normalize_filters([bad])
    with pytest.raises(ReadError, match=re.escape(f"filter ('a', '~', 1) uses unknown operator '~'; use one of "
                                                  f"{sorted(OPS)}")):
        normalize_filters([("a", "~", 1)])
    t = pa.table({"a": pa.array([1, 2, 3], pa.int64()), "b": ["x", "y", "z"]})
    with pytest.raises(ReadError, match=re.escape("filter column 'zz' is not in the table (columns: a, b)")):
        filter_expression([("zz", "=", 1)], t.schema)

    def rows(*filters) -> list[int]:
        return t.filter(filter_expression(normalize_filters(filters), t.schema)).column("a").to_pylist()

    assert rows(("a", "==", 2)) == rows(("a", "=", 2)) == [2]
    assert rows(("a", "<>", 2)) == rows(("a", "!=", 2)) == [1, 3]
    assert rows(("a", "<", pa.scalar(2.5))) == [1, 2]  # 2.5 cast to int64 would fail
    assert rows(("a", "NOT IN", [1]), ("b", "in", ["y"])) == [2]


# -- partition pruning ------------------------------------------------------------------------------

def test_pruning_goes_on_past_undecidable_partitions_columns_and_filters(tmp_path) -> None:
    """An undecidable folder (not a value of the column's type, or not a folder the key generator
    writes) is kept and does not stop the pruning of the partitions and columns after it; neither
    does a filter whose value does not cast to its column (the row filter refuses that one)."""
    from hoodie import write_arrow
    from hoodie.format.slice.pruning import candidates, prune_partitions
    from hoodie.format.table import HoodieTable

    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["k1", "k2"], "a": [1, 2], "b": [1, 2]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "a,b",
                 "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
                 "hoodie.datasource.write.operation": "insert"})
    table = HoodieTable(path)
    schema = pa.schema([("k", pa.string()), ("a", pa.int64()), ("b", pa.int64())])

    def prune(parts: list[str], *filters) -> list[str]:
        return prune_partitions(table, schema, parts, list(filters))

    assert prune(["x/1", "odd", "1/1", "2/2", "1/y"], ("a", "=", 1)) == ["x/1", "odd", "1/1", "1/y"]
    assert prune(["x/1", "x/2"], ("a", "=", 1), ("b", "=", 1)) == ["x/1"]
    assert prune(["1/1", "2/2"], ("a", "=", "not a number"), ("b", "=", 1)) == ["1/1"]
    assert prune(["1/1", "2/2"], ("k", "=", "k1")) == ["1/1", "2/2"]  # not a partition column
    assert candidates("x", pa.int64(), False) is None
    # A table without record key fields (auto-generated keys) still prunes by its partition fields.
    auto = str(tmp_path / "auto")
    write_arrow(auto, pa.table({"day": ["d1", "d2"], "v": [1, 2]}),
                {"hoodie.table.name": "auto", "hoodie.datasource.write.partitionpath.field": "day"})
    auto_schema = pa.schema([("day", pa.string()), ("v", pa.int64())])
    assert prune_partitions(HoodieTable(auto), auto_schema, ["d1", "d2"], [("day", "=", "d2")]) == ["d2"]
    assert candidates("false", pa.bool_(), False) == [False]
    assert candidates("true", pa.bool_(), False) == [True]
    assert candidates("TRUE", pa.bool_(), False) is None


# -- the same rule, end to end, against hudi-rs ---------------------------------------------------

MOR = {
    "hoodie.table.name": "b", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _table_rows(ids: list[int], ts: int, tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": ["a"] * len(ids),
                     "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"{tag}{i}" for i in ids]})


def _log_commit(path: str, *, deletes: Optional[tuple[list[int], int]] = None,
                data: Optional[pa.Table] = None) -> str:
    """A deltacommit writing one log file into the table's only file group: a delete block whose
    records carry an ordering value (as Java writes for a delete with a precombine value; hoodie's
    own deletes carry IntWrapper(0)) or a data block (an update of that file group)."""
    from hoodie.format.file_group import naming as N
    from hoodie.format.slice import writer as W
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable

    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    inflight = W.start_commit(table, "deltacommit", operation_type="DELETE" if deletes else "UPSERT")
    write = W.LogWrite()
    if deletes is not None:
        ids, ordering = deletes
        write.deletes = pa.table({"record_key": [str(i) for i in ids], "partition_path": ["a"] * len(ids),
                                  "ordering_value": pa.array([ordering] * len(ids), pa.int64())})
    if data is not None:
        write.data = W.add_meta_columns(data, instant=inflight.timestamp, record_keys=data.column("id"),
                                        partition_paths="a", file_name=sl.file_id)
    stat = W.write_log_file(table.storage, partition="a", file_id=sl.file_id, base_instant=sl.base_instant,
                            instant=inflight.timestamp, token=N.write_token(0, 1, 1), write=write,
                            avro_schema=table.avro_schema(),
                            base_file_name=sl.base_file.name if sl.base_file else "")
    W.complete_commit(table, inflight, W.commit_metadata_for([stat], avro_schema=table.avro_schema(),
                                                             operation_type="DELETE" if deletes else "UPSERT"))
    return inflight.timestamp


@pytest.mark.parametrize(("late_ts", "kept"), [(4, False), (5, True), (6, True)])
def test_delete_with_equal_ordering_value_agrees_with_hudi_rs(tmp_path, late_ts: int, kept: bool) -> None:
    """c1 inserts 1 (ts 1) and 2 (ts 5); c2 deletes both with ordering value 5 (2: equal value, later
    commit: deleted; 1: greater value: deleted); c3 writes 1 again into the same file group with
    ts 4, 5 or 6: below the delete's value it stays deleted; equal to it, the record's later commit
    wins (hudi-rs's rule); above it, the record wins. hoodie and hudi-rs agree on every step."""
    import hoodie
    from hoodie import write_arrow
    from tests.hudi_rs import read_hudi_rs

    def values(t: pa.Table) -> dict[int, str]:
        return dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist())) if t.num_rows else {}

    path = str(tmp_path / "t")
    write_arrow(path, pa.concat_tables([_table_rows([1], 1, "a"), _table_rows([2], 5, "a")]),
                {**MOR, "hoodie.datasource.write.operation": "insert"})
    _log_commit(path, deletes=([1, 2], 5))
    assert values(hoodie.read_table(path)) == {} == values(read_hudi_rs(path))
    _log_commit(path, data=_table_rows([1], late_ts, "c"))
    expected = {1: "c1"} if kept else {}
    assert values(hoodie.read_table(path)) == expected == values(read_hudi_rs(path))


# -- file-system view -----------------------------------------------------------------------------

def _pending_compaction_with_partial_base(tmp_path) -> tuple[str, str]:
    """insert 1,2,3 (a*); update 1 (b1) in a log; schedule a compaction C and leave a half-written
    base file at C whose rows differ from every committed version; then update 2 (c2) into C's slice."""
    import pyarrow.parquet as pq

    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _write

    path = str(tmp_path / "t")
    _write(path, _data([1, 2, 3], 1, "a"), "insert")
    _write(path, _data([1], 2, "b"), "upsert")
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    c = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.sorted_logs()],
                                    sl.file_id, "a", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    base = pq.read_table(tmp_path / "t" / "a" / sl.base_file.name)
    half = base.set_column(base.schema.get_field_index("v"), "v", pa.array(["HALF"] * base.num_rows))
    pq.write_table(half, tmp_path / "t" / "a" / N.base_file_name(sl.file_id, "0-1-1", c))
    _write(path, _data([2], 3, "c"), "upsert")
    return path, c


def test_read_optimized_view_skips_the_base_file_of_a_pending_compaction(tmp_path) -> None:
    import hoodie
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _vals
    from tests.hudi_rs import read_hudi_rs

    path, c = _pending_compaction_with_partial_base(tmp_path)
    assert _vals(hoodie.read_table(path, query_type="read_optimized")) == {1: "a1", 2: "a2", 3: "a3"}
    assert _vals(read_hudi_rs(path, query_type="read_optimized")) == {1: "a1", 2: "a2", 3: "a3"}
    assert _vals(hoodie.read_table(path)) == {1: "b1", 2: "c2", 3: "a3"}
    t = HoodieTable(path)
    view = FileSystemView(t.storage, t.timeline)
    (bf,) = view.latest_base_files("a")
    assert bf.instant < c
    # Without merging, the pending slice stands alone: no base file, only the log written during C.
    (pending,) = view.latest_file_slices("a", merge_pending_compaction=False)
    assert pending.base_instant == c and pending.base_file is None and len(pending.log_files) == 1
    assert pending.partition == "a"


def test_time_travel_to_exactly_a_replacecommit_sees_the_replacement(tmp_path) -> None:
    """as_of is inclusive: at the replacecommit's own instant the replaced group is gone; one
    instant earlier it is there. A commit at exactly as_of is visible."""
    import json

    import hoodie
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline.commit_metadata import CommitMetadata
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _vals, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    c2 = _write(path, _data([1], 2, "b"), "upsert")
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    r = table.new_instant_time()
    T.create_requested(table.storage, r, I.REPLACE_COMMIT,
                       plans.write_avro_metadata("HoodieRequestedReplaceMetadata",
                                                 plans.requested_replace_metadata("DELETE_PARTITION")))
    inf = T.transition_to_inflight(table.storage, I.Instant(r, I.REPLACE_COMMIT, I.State.REQUESTED),
                                   CommitMetadata(operation_type="DELETE_PARTITION").to_json_bytes())
    meta = CommitMetadata(operation_type="DELETE_PARTITION", partition_to_replace_file_ids={"a": [sl.file_id]},
                          extra_metadata={"schema": json.dumps(table.avro_schema())})
    T.transition_to_complete(table.storage, inf, meta.to_json_bytes())
    assert hoodie.read_table(path, as_of=r).num_rows == 0
    assert _vals(hoodie.read_table(path, as_of=c2)) == {1: "b1", 2: "a2"}
    assert _vals(hoodie.read_table(path, as_of=c1)) == {1: "a1", 2: "a2"}
    view = FileSystemView(table.storage, T.Timeline.load(table.storage))
    assert view.is_replaced("a", sl.file_id, as_of=r) and not view.is_replaced("a", sl.file_id, as_of=c2)
    assert view.is_replaced("a", sl.file_id) and not view.is_replaced("a", "another-file-id")
    assert not view.is_replaced("b", sl.file_id)


def test_requested_only_instant_is_not_completed(tmp_path) -> None:
    """A write that only got as far as ``.requested`` (or ``.inflight``) is pending: its files are
    invisible to reads and views, and the timeline filters agree."""
    import hoodie
    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline import active as T
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _uncommitted_write, _vals, _write
    from tests.hudi_rs import read_hudi_rs

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    failed = _uncommitted_write(path, _data([1], 5, "bad"))
    # Leave only the requested file of the failed write.
    (tmp_path / "t" / ".hoodie" / I.instant_file_name(failed, I.DELTA_COMMIT, I.State.INFLIGHT)).unlink()
    table = HoodieTable(path)
    tl = table.timeline
    inst = tl.get(failed)
    assert inst is not None and inst.is_requested and not inst.is_completed and not inst.is_inflight
    assert tl.completed().timestamps == [c1] and tl.pending().timestamps == [failed]
    assert tl.completed_writes().timestamps == [c1]
    assert _vals(hoodie.read_table(path)) == {1: "a1", 2: "a2"} == _vals(read_hudi_rs(path))
    view = FileSystemView(table.storage, tl)
    (sl,) = view.latest_file_slices("a")
    assert sl.base_instant == c1
    assert not any(lf.parsed.base_instant == failed for lf in sl.log_files)
    assert all(N.parse_base_file(bf.name).instant == c1 for bf in view.latest_base_files("a"))
    # Moving it to inflight (a slow writer going on) keeps it pending and its files hidden.
    T.transition_to_inflight(table.storage, inst, b"")
    assert T.Timeline.load(table.storage).get(failed).is_inflight
    assert _vals(hoodie.read_table(path)) == {1: "a1", 2: "a2"}


def test_reserved_log_version_takes_the_highest_of_metric_and_links() -> None:
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline.compaction_plan import CompactionOperation
    from hoodie.format.file_group.fsview import RESERVED_LOG_VERSION_METRIC
    from hoodie.format.file_group.fsview import reserved_log_version as _reserved

    def reserved_log_version(record: dict) -> int:
        return _reserved(CompactionOperation.from_avro(record))

    def link(v: int) -> dict:
        return {"symlink": N.log_file_name("f", "002", v, "1-0-1"), "target": N.log_file_name("f", "001", v, "1-0-1")}

    assert reserved_log_version({}) == 0
    assert reserved_log_version({"metrics": None, "symlinkOperations": None}) == 0
    assert reserved_log_version({"metrics": {RESERVED_LOG_VERSION_METRIC: 3.0}}) == 3
    assert reserved_log_version({"symlinkOperations": [link(1), link(2)]}) == 2
    assert reserved_log_version({"metrics": {RESERVED_LOG_VERSION_METRIC: 1.0},
                                 "symlinkOperations": [link(1), link(4)]}) == 4
    assert reserved_log_version({"metrics": {RESERVED_LOG_VERSION_METRIC: 5.0},
                                 "symlinkOperations": [link(2)]}) == 5
    # Entries that name no log file reserve nothing.
    assert reserved_log_version({"symlinkOperations": [{"symlink": None}, {"symlink": "x.parquet"},
                                                       {"target": link(7)["target"]}]}) == 0


def test_partitions_are_folders_with_partition_metadata_outside_the_metafolder(tmp_path) -> None:
    """A folder is a partition only when it holds a ``.hoodie_partition_metadata`` file; folders
    with other files are not, and the metafolder (where the metadata table keeps partitions of its
    own) is never walked."""
    from hoodie.format.file_group import naming as N
    from hoodie.format.file_group.fsview import list_partitions
    from hoodie.format.storage import Storage

    root = tmp_path / "t"
    for rel in ("a", "b/c", ".hoodie/metadata/files"):
        (root / rel).mkdir(parents=True)
        (root / rel / N.PARTITION_METAFILE).write_text("#partition metadata\n")
    (root / "notes").mkdir()
    (root / "notes" / "readme.txt").write_text("not a partition")
    (root / "b" / N.PARTITION_METAFILE).mkdir()  # a folder of that name is no metadata file
    assert list_partitions(Storage(str(root))) == ["a", "b/c"]
    (root / N.PARTITION_METAFILE).write_text("#partition metadata\n")  # non-partitioned layout
    assert list_partitions(Storage(str(root))) == ["", "a", "b/c"]


def test_views_of_a_non_partitioned_table_key_groups_by_the_empty_partition(tmp_path) -> None:
    """Pending compactions of a non-partitioned table (partitionPath "") are keyed by ("", fileId)."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group import naming as N
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie import write_arrow
    from hoodie.format.file_group.fsview import RESERVED_LOG_VERSION_METRIC, FileSystemView, table_view
    from hoodie.format.table import HoodieTable

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "n", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts"}
    data = pa.table({"id": pa.array([1], pa.int64()), "ts": pa.array([1], pa.int64())})
    write_arrow(path, data, {**opts, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, data, {**opts, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable(path)
    view = table_view(table.storage)
    assert view.partitions() == [""]
    (sl,) = view.all_latest_file_slices()
    c = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.sorted_logs()],
                                    sl.file_id, "", {RESERVED_LOG_VERSION_METRIC: 2.0})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    table.reload()
    view = table_view(table.storage, table.timeline)
    assert view.pending_compaction_file_groups() == {("", sl.file_id): c}
    assert view.reserved_log_versions() == {("", sl.file_id): (c, 2)}
    assert sorted(view.file_groups("")[sl.file_id].slices) == [sl.base_instant, c]
    assert FileSystemView(table.storage, table.timeline).all_latest_file_slices(partitions=[""])[0].file_id \
        == sl.file_id
    assert N.parse_log_file(sl.sorted_logs()[0].name).file_id == sl.file_id


def test_read_optimized_view_with_replaced_groups_and_time_travel(tmp_path) -> None:
    """latest_base_files drops replaced groups (as of the query instant) and keeps looking at the
    other groups; time travel returns the base file that was newest then."""
    import json

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie import write_arrow
    from hoodie.format.timeline.commit_metadata import CommitMetadata
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import OPTS, _data

    path = str(tmp_path / "t")
    cow = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.parquet.small.file.limit": "0"}
    c1 = write_arrow(path, _data([1], 1, "a"), {**cow, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([2], 1, "a"), {**cow, "hoodie.datasource.write.operation": "insert"})
    c3 = write_arrow(path, _data([1, 2], 2, "b"), {**cow, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    groups = sorted(view.file_groups("a"))
    assert len(groups) == 2
    assert {b.instant for b in view.latest_base_files("a")} == {c3}
    assert {b.instant for b in view.latest_base_files("a", as_of=c2)} == {c1, c2}
    assert {b.instant for b in view.latest_base_files("a", as_of=c1)} == {c1}
    assert {sl.base_instant for sl in view.latest_file_slices("a", as_of=c2)} == {c1, c2}
    assert {sl.base_instant for sl in view.latest_file_slices("a")} == {c3}
    # Replace the group that sorts first: the other one must still be listed.
    r = table.new_instant_time()
    T.create_requested(table.storage, r, I.REPLACE_COMMIT,
                       plans.write_avro_metadata("HoodieRequestedReplaceMetadata",
                                                 plans.requested_replace_metadata("DELETE_PARTITION")))
    inf = T.transition_to_inflight(table.storage, I.Instant(r, I.REPLACE_COMMIT, I.State.REQUESTED),
                                   CommitMetadata(operation_type="DELETE_PARTITION").to_json_bytes())
    meta = CommitMetadata(operation_type="DELETE_PARTITION", partition_to_replace_file_ids={"a": [groups[0]]},
                          extra_metadata={"schema": json.dumps(table.avro_schema())})
    T.transition_to_complete(table.storage, inf, meta.to_json_bytes())
    table.reload()
    view = FileSystemView(table.storage, table.timeline)
    assert [b.file_id for b in view.latest_base_files("a")] == [groups[1]]
    assert sorted(b.file_id for b in view.latest_base_files("a", as_of=c3)) == groups
    assert [sl.file_id for sl in view.latest_file_slices("a")] == [groups[1]]
    assert sorted(sl.file_id for sl in view.all_latest_file_slices(as_of=c3)) == groups


def test_view_lists_through_the_file_listing_it_is_given(tmp_path) -> None:
    """With a file listing (the metadata table's), partitions and files come from it, not storage."""
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from hoodie import write_arrow

    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["k1"], "p": ["p0"]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert"})
    table = HoodieTable(path)

    class Listing:
        def partitions(self) -> list[str]:
            return ["elsewhere"]

        def list_files(self, partition: str) -> list:
            return []

    assert FileSystemView(table.storage, table.timeline).partitions() == ["p0"]
    view = FileSystemView(table.storage, table.timeline, file_listing=Listing())
    assert view.partitions() == ["elsewhere"]
    assert view.file_groups("p0") == {}


def test_pending_compaction_slices_of_a_plan_over_partitions_and_a_damaged_plan(tmp_path, caplog) -> None:
    """A plan over two partitions opens its slice in both (whichever partition's operation comes
    first); slices know their partition (base-only groups too). A damaged plan of a compaction that
    never ran is read around with one warning per file, naming the problem; reserved log versions
    skip it, but once the compaction ran (inflight) they refuse it."""
    import logging

    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from hoodie.format.timeline.active import DamagedTimelineFileError
    from hoodie.services.compaction import schedule_compaction
    from hoodie import write_arrow
    from tests.services.test_compaction_support import UNBOUNDED

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts"}

    def write(op: str, keys: list[str], parts: list[str], ts: int) -> None:
        write_arrow(path, pa.table({"k": keys, "p": parts, "ts": pa.array([ts] * len(keys), pa.int64())}),
                    {**opts, "hoodie.datasource.write.operation": op})

    write("insert", ["a", "b", "c"], ["p1", "p2", "p3"], 1)
    write("upsert", ["a", "b"], ["p1", "p2"], 2)
    c = schedule_compaction(path, UNBOUNDED)
    table = HoodieTable(path)
    assert {op.partition for op in table.timeline.compaction_plan(c).operations} == {"p1", "p2"}
    view = FileSystemView(table.storage, table.timeline)
    for p in ("p1", "p2"):
        (fg,) = view.file_groups(p).values()
        assert c in fg.slices and fg.slices[c].is_empty()
        assert {sl.partition for sl in fg.slices.values()} == {p}
    (sl,) = view.latest_file_slices("p3")
    assert sl.partition == "p3" and sl.base_file is not None

    plan_file = tmp_path / "t" / ".hoodie" / f"{c}.compaction.requested"
    plan_file.write_bytes(b"")
    with pytest.raises(DamagedTimelineFileError) as err:
        HoodieTable(path).timeline.compaction_plan(c)
    e = err.value
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            t = HoodieTable(path)
            damaged = FileSystemView(t.storage, t.timeline)
            assert [s.base_instant for s in damaged.latest_file_slices("p1")] != []
            assert damaged.reserved_log_versions() == {}
    warned = [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]
    assert warned == [f"{e.path} is damaged ({e.problem}); reading without it: it has not run, so its file slices "
                      f"hold only log files writers added. {e.fix}"]
    (tmp_path / "t" / ".hoodie" / f"{c}.compaction.inflight").write_bytes(b"")
    t = HoodieTable(path)
    with pytest.raises(DamagedTimelineFileError):
        FileSystemView(t.storage, t.timeline).reserved_log_versions()


def test_layout2_log_of_a_failed_first_deltacommit_is_not_read(tmp_path) -> None:
    """Timeline layout 2: a log written by a deltacommit that never completed is dropped, also when
    that deltacommit is the oldest instant of the active timeline (only logs of older, archived
    deltacommits are looked up in the archived timeline)."""
    import hoodie
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from hoodie import write_arrow

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "8"}

    def write(op: str, key: str, part: str, ts: int) -> str:
        return write_arrow(path, pa.table({"k": [key], "p": [part], "ts": pa.array([ts], pa.int64())}),
                           {**opts, "hoodie.datasource.write.operation": op})

    first, failed = write("insert", "k1", "p1", 1), write("upsert", "k1", "p1", 2)
    write("insert", "k2", "p2", 3)
    timeline = tmp_path / "t" / ".hoodie" / "timeline"
    for f in timeline.iterdir():
        if f.name.startswith(first) or (f.name.startswith(failed) and f.name.endswith(".deltacommit")):
            f.unlink()  # the insert archived (without an LSM timeline), the upsert failed
    assert any(f.name.startswith(failed) for f in timeline.iterdir())
    assert any(".log." in f.name for f in (tmp_path / "t" / "p1").iterdir())
    got = hoodie.read_table(path, columns=["k", "ts"]).to_pylist()
    assert sorted(got, key=lambda r: r["k"]) == [{"k": "k1", "ts": 1}, {"k": "k2", "ts": 3}]
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("p1")
    assert sl.base_instant == first and sl.log_files == []  # e.g. a compaction plan must not name it


def test_partition_nesting_at_its_boundaries(tmp_path) -> None:
    """A new partition may not sit inside or above a partition of the same write or of the table. A
    folder is a partition of the table when its metafile's commitTime is a completed instant, or
    older than the active timeline (archived), or missing (written elsewhere: "0"); a metafile
    left by a write that never completed makes no partition."""
    from hoodie.format.file_group.fsview import _parent_paths, check_partition_nesting
    from hoodie.format.keys.paths import PartitionPathError
    from hoodie.format.table import HoodieTable, write_partition_metadata
    from hoodie import write_arrow

    path = tmp_path / "t"
    first = "20240101000000000"
    write_arrow(str(path), pa.table({"k": ["k1"], "p": ["p0"]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert"},
                instant=first)
    pending_first = "20231231000000000"  # a write that never completed, the oldest instant of the timeline
    (path / ".hoodie" / f"{pending_first}.commit.requested").write_bytes(b"")
    table = HoodieTable(str(path))
    assert table.timeline.first().timestamp == pending_first
    storage, timeline = table.storage, table.timeline
    write_partition_metadata(storage, "a", first)  # committed
    write_partition_metadata(storage, "q/r", first)  # committed, one level down
    write_partition_metadata(storage, "m/n", first)  # committed, two levels
    write_partition_metadata(storage, "failed", "20240102000000000")  # its write never completed
    write_partition_metadata(storage, "old", "20230101000000000")  # archived
    write_partition_metadata(storage, "pending", pending_first)  # the pending first instant's: no partition
    write_partition_metadata(storage, "fz/child", "20240102000000000")  # failed, below a new partition
    write_partition_metadata(storage, "j", first)  # nested partitions another writer made (Java
    write_partition_metadata(storage, "j/k", first)  # Hudi does not refuse them)
    (path / "nocommit").mkdir()
    (path / "nocommit" / ".hoodie_partition_metadata").write_text("partitionDepth=1\n")

    def message(inner: str, outer: str, where: str) -> str:
        return (f"partition path {inner!r} would be a partition inside partition {outer!r} ({where}). Java Hudi "
                "does not look inside a partition folder and hudi-rs reads only the innermost one, so rows would "
                "disappear for them. Nothing was committed. Partition values containing '/' make nested folders: "
                "keep every value at the same depth (e.g. 'a/_' next to 'a/b' instead of 'a'), or create the table "
                "with hoodie.datasource.write.partitionpath.urlencode=true, which writes '/' as %2F (one folder per "
                "value).")

    def refused(parts: list[str], tl=timeline) -> str:
        with pytest.raises(PartitionPathError) as e:
            check_partition_nesting(storage, parts, tl)
        return str(e.value)

    assert _parent_paths("a/b/c") == ["a", "a/b"] and _parent_paths("a") == []
    assert refused(["x", "x/y"]) == message("x/y", "x", "both in this write")
    assert refused(["a/b"]) == message("a/b", "a", "already in the table")
    assert refused(["m/n/o/p"]) == message("m/n/o/p", "m/n", "already in the table")
    assert refused(["q"]) == message("q/r", "q", "already in the table")
    assert refused(["old/x"]) == message("old/x", "old", "already in the table")
    assert refused(["nocommit/x"]) == message("nocommit/x", "nocommit", "already in the table")
    assert refused(["a", "q"]) == message("q/r", "q", "already in the table")  # checks go on past "a"
    for fine in (["failed/x"], ["a"], ["q/s"], ["m/x/y"], [], [""], ["p0", "a", "q/r"], ["pending/x"], ["fz"],
                 ["j"], ["j/k"]):
        check_partition_nesting(storage, fine, timeline)
    check_partition_nesting(storage, ["a/b"], None)  # without a timeline no metafile proves a partition
    # The metadata table's partition-list key, only on a table with a metadata table.
    check_partition_nesting(storage, ["__all_partitions__"], timeline)
    (path / ".hoodie" / "metadata").mkdir()
    assert refused(["__all_partitions__"]).startswith(
        "partition path '__all_partitions__' is the key of the metadata table's partition list: ")


# -- timeline -------------------------------------------------------------------------------------

P = "2024010100000000"  # instants P + "1", P + "2", ...: 17 digits, in order

def _timeline_of(tmp_path, names: list[str]):
    from hoodie.format.timeline import active as T
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    for name in names:
        st.write_bytes(f".hoodie/{name}", b"")
    st.write_bytes(".hoodie/hoodie.properties", b"")
    return T.Timeline.load(st)


def test_timeline_filters_at_their_boundaries(tmp_path) -> None:
    """Ranges are exact: before_or_on includes its instant, after excludes it, between is (begin, end]."""
    from hoodie.format.timeline import instant as I

    tl = _timeline_of(tmp_path, [
        P + "1.deltacommit.requested", P + "1.deltacommit.inflight", P + "1.deltacommit",
        P + "2.deltacommit.requested",
        P + "3.logcompaction.requested",
        P + "4.replacecommit.requested", P + "4.replacecommit.inflight",
        P + "5.compaction.requested", P + "5.compaction.inflight",
        P + "6.clean.requested", P + "6.clean.inflight", P + "6.clean",
        P + "7.compaction.requested", P + "7.compaction.inflight", P + "7.commit",
        P + "8.compaction.requested", P + "8.commit",
    ])
    assert tl.is_compaction_commit(tl.get(P + "8"))  # the plan file decides, not the inflight one
    tl = tl.before_or_on(P + "7")
    assert tl.timestamps == [P + "1", P + "2", P + "3", P + "4", P + "5", P + "6", P + "7"]
    assert len(tl) == 7 and bool(tl) and not bool(tl.filter(lambda i: False))
    assert [i.state for i in tl] == [I.State.COMPLETED, I.State.REQUESTED, I.State.REQUESTED, I.State.INFLIGHT,
                                     I.State.INFLIGHT, I.State.COMPLETED, I.State.COMPLETED]
    assert tl.first().timestamp == P + "1" and tl.last().timestamp == P + "7"
    assert tl.filter(lambda i: False).first() is None and tl.filter(lambda i: False).last() is None
    assert tl.before_or_on(P + "4").timestamps == [P + "1", P + "2", P + "3", P + "4"]
    assert tl.after(P + "4").timestamps == [P + "5", P + "6", P + "7"]
    assert tl.between(P + "2", P + "5").timestamps == [P + "3", P + "4", P + "5"]
    assert tl.between(P + "1", P + "1").timestamps == []
    assert tl.completed().timestamps == [P + "1", P + "6", P + "7"]
    assert tl.pending().timestamps == [P + "2", P + "3", P + "4", P + "5"]
    assert tl.completed_writes().timestamps == [P + "1", P + "7"]
    assert tl.commits().timestamps == [P + "1", P + "2", P + "3", P + "4", P + "5", P + "7"]
    assert tl.pending_compactions().timestamps == [P + "5"]
    assert tl.pending_log_compactions().timestamps == [P + "3"]
    assert tl.pending_replaces().timestamps == [P + "4"]
    assert tl.by_actions(I.CLEAN, I.REPLACE_COMMIT).timestamps == [P + "4", P + "6"]
    assert tl.is_compaction_commit(tl.get(P + "7")) and not tl.is_compaction_commit(tl.get(P + "1"))
    assert not tl.is_compaction_commit(tl.get(P + "5"))
    assert tl.contains(P + "3") and not tl.contains(P + "8")
    assert tl.get(P + "8") is None and tl.get(P + "5").state == I.State.INFLIGHT
    assert tl.has_file(P + "2.deltacommit.requested") and not tl.has_file(P + "2.deltacommit")
    assert repr(tl.filter(lambda i: i.timestamp == P + "1")) == f"Timeline(['[{P}1__deltacommit__COMPLETED]'])"


def test_timeline_get_prefers_the_highest_state(tmp_path) -> None:
    """get() on a timeline that was not collapsed returns the most advanced state of the instant."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    insts = [I.Instant(P + "1", I.DELTA_COMMIT, st) for st in (I.State.INFLIGHT, I.State.COMPLETED, I.State.REQUESTED)]
    assert T.Timeline(insts).get(P + "1").state == I.State.COMPLETED
    assert T.Timeline(insts[::-1]).get(P + "1").state == I.State.COMPLETED


def test_timeline_reads_need_storage_and_name_the_file(tmp_path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.storage import Storage

    with pytest.raises(T.TimelineError, match="^this timeline was not loaded from storage$"):
        T.Timeline([I.Instant(P + "1", I.COMMIT)]).read_file(P + "1.commit")
    st = Storage(str(tmp_path))
    st.write_bytes(".hoodie/20240101000000001.commit", b"{not json")
    tl = T.Timeline.load(st)
    with pytest.raises(ValueError, match=r"\.hoodie/20240101000000001\.commit"):
        tl.commit_metadata(tl.get(P + "1"))
    assert tl.read_file(P + "1.commit") == b"{not json"
    # Filtered timelines keep their storage and file listing.
    assert tl.completed().read_file(P + "1.commit") == b"{not json"
    assert tl.completed().has_file(P + "1.commit") and not tl.pending().has_file(P + "2.commit")


def test_timeline_transitions_refuse_the_wrong_state(tmp_path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    with pytest.raises(T.TimelineError, match=r"\[20240101000000001__deltacommit__INFLIGHT\] is not requested"):
        T.transition_to_inflight(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.INFLIGHT))
    with pytest.raises(T.TimelineError, match="has no requested file; cannot move it to inflight"):
        T.transition_to_inflight(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.REQUESTED))
    with pytest.raises(T.TimelineError, match=r"\[20240101000000001__deltacommit__REQUESTED\] is not inflight"):
        T.transition_to_complete(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.REQUESTED), b"{}")
    with pytest.raises(T.TimelineError, match="has no inflight file; cannot complete it"):
        T.transition_to_complete(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.INFLIGHT), b"{}")
    bare = T.transition_to_inflight(st, T.create_requested(st, P + "3", I.DELTA_COMMIT))
    assert st.read_bytes(f".hoodie/{P}3.deltacommit.requested") == b"" == st.read_bytes(f".hoodie/{bare.file_name}")
    req = T.create_requested(st, P + "2", I.COMPACTION, b"plan")
    inf = T.transition_to_inflight(st, req, b"inflight")
    done = T.transition_to_complete(st, inf, b"{}")
    assert (done.action, done.state) == (I.COMMIT, I.State.COMPLETED)
    assert st.read_bytes(".hoodie/20240101000000002.compaction.requested") == b"plan"
    assert st.read_bytes(".hoodie/20240101000000002.compaction.inflight") == b"inflight"
    with pytest.raises(T.TimelineError, match=rf"\.hoodie/{P}2\.compaction\.requested already exists: another "
                                              "writer used this instant; retry with a new instant time"):
        T.create_requested(st, P + "2", I.COMPACTION)
    T.delete_instant_files(st, P + "2", I.COMPACTION, [I.State.INFLIGHT, I.State.REQUESTED])
    assert [i.timestamp for i in T.Timeline.load(st)] == [P + "2", P + "3"]
    assert not st.exists(f".hoodie/{P}2.compaction.requested") and st.exists(f".hoodie/{P}2.commit")


def test_pending_compaction_opens_a_slice_in_its_own_group_only(tmp_path) -> None:
    """A pending compaction opens an (empty) slice at C in each group of its plan and partition;
    snapshot views merge it with the previous slice, Hudi's getLatestFileSlices view drops it while
    it is empty; CDC log files are no table data."""
    import shutil

    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie import write_arrow
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import OPTS

    path = str(tmp_path / "t")
    rows = pa.table({"id": pa.array([1, 2], pa.int64()), "p": ["a", "b"], "ts": pa.array([1, 1], pa.int64()),
                     "v": ["x", "y"]})
    write_arrow(path, rows, {**OPTS, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, rows, {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    (sa,), (sb,) = view.latest_file_slices("a"), view.latest_file_slices("b")
    c = table.new_instant_time()
    op = plans.compaction_operation(sa.base_instant, sa.base_file.name, [lf.name for lf in sa.sorted_logs()],
                                    sa.file_id, "a", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    # A CDC log sorting before every other file of the partition: skipped, and the listing goes on.
    (sl_log,) = sa.log_files
    shutil.copy(tmp_path / "t" / sl_log.path, tmp_path / "t" / "a" / f".00000000-cdc_{sa.base_instant}.log.1_0-1-0.cdc")
    table.reload()
    view = FileSystemView(table.storage, table.timeline)
    groups_a = view.file_groups("a")
    assert sorted(groups_a) == [sa.file_id]
    fg = groups_a[sa.file_id]
    assert (fg.partition, fg.file_id) == ("a", sa.file_id)
    assert sorted(fg.slices) == [sa.base_instant, c] and fg.slices[c].is_empty()
    assert fg.slices[sa.base_instant].base_file.file_id == sa.file_id
    assert [lf.name for lf in fg.slices[sa.base_instant].log_files] == [sl_log.name]
    assert sorted(view.file_groups("b")[sb.file_id].slices) == [sb.base_instant]
    (merged,) = view.latest_file_slices("a")
    assert (merged.partition, merged.base_instant, merged.base_file.name) == ("a", sa.base_instant, sa.base_file.name)
    assert view.latest_file_slices("a", merge_pending_compaction=False) == []
    (b_slice,) = view.latest_file_slices("b", merge_pending_compaction=False)
    assert b_slice.base_instant == sb.base_instant and b_slice.partition == "b"
    assert view.pending_compaction_file_groups() == {("a", sa.file_id): c}
    assert [sl.partition for sl in view.all_latest_file_slices(partitions=["b"])] == ["b"]
    assert sorted(sl.partition for sl in view.all_latest_file_slices()) == ["a", "b"]


def test_slices_older_than_the_active_timeline_are_visible_but_not_failed_first_writes(tmp_path) -> None:
    """A base file whose instant is older than the first instant of the active timeline was archived:
    completed. One whose instant is the first instant itself, left by a failed write, is not."""
    import shutil

    import hoodie
    from hoodie.format.timeline import instant as I
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _vals, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    c2 = _write(path, _data([1], 2, "b"), "upsert")
    # Archive c1: its timeline files go, its base file stays.
    for st in I.State:
        (tmp_path / "t" / ".hoodie" / I.instant_file_name(c1, I.DELTA_COMMIT, st)).unlink()
    table = HoodieTable(path)
    assert table.timeline.first().timestamp == c2
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    assert sl.base_instant == c1 and sl.base_file is not None
    assert _vals(hoodie.read_table(path)) == {1: "b1", 2: "a2"}
    # Now make the first active instant a failed write that left a base file of its own.
    (tmp_path / "t" / ".hoodie" / I.instant_file_name(c2, I.DELTA_COMMIT, I.State.COMPLETED)).unlink()
    other = tmp_path / "t" / "a" / sl.base_file.name.replace(c1, c2).replace(sl.file_id, "ffffffff-dead-0")
    shutil.copy(tmp_path / "t" / "a" / sl.base_file.name, other)
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    assert table.timeline.first().timestamp == c2 and not table.timeline.first().is_completed
    assert [b.name for b in view.latest_base_files("a")] == [sl.base_file.name]


def test_views_of_an_empty_timeline_and_of_a_plan_naming_a_vanished_group(tmp_path) -> None:
    """A table with no instant yet has no slices; a pending compaction whose file group has no
    file left opens an empty group (nothing to read) instead of failing."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import plans
    from hoodie.format.timeline import active as T
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.storage import Storage
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _write

    st = Storage(str(tmp_path / "empty"))
    st.write_bytes(".hoodie/hoodie.properties", b"")
    view = FileSystemView(st, T.Timeline.load(st))
    assert view.partitions() == [] and view.all_latest_file_slices() == []
    path = str(tmp_path / "t")
    _write(path, _data([1], 1, "a"), "insert")
    table = HoodieTable(path)
    c = table.new_instant_time()
    op = plans.compaction_operation("001", None, [], "ghost-0", "a", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    table.reload()
    view = FileSystemView(table.storage, table.timeline)
    ghost = view.file_groups("a")["ghost-0"]
    assert (ghost.partition, ghost.file_id, list(ghost.slices)) == ("a", "ghost-0", [c])
    (only,) = view.latest_file_slices("a")
    assert only.file_id != "ghost-0"


# -- reader: read arguments and the incremental range ---------------------------------------------

def test_read_arguments_are_checked_and_say_what_to_use(tmp_path) -> None:
    """Each refusal names the argument and the way to write it; nothing is read."""
    import hoodie
    from hoodie.format.slice.filters import ReadError
    from tests.format.test_fsview import _data, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    with pytest.raises(ReadError, match=r"^query_type 'x' is not one of snapshot, read_optimized, incremental$"):
        hoodie.read_table(path, query_type="x")
    with pytest.raises(ReadError, match=r"^as_of does not apply to incremental queries; use begin and end$"):
        hoodie.read_table(path, query_type="incremental", as_of=c1, begin="0")
    with pytest.raises(ReadError, match=r"^incremental queries need begin \(exclusive\), e\.g\. begin='00000000000000'$"):
        hoodie.read_table(path, query_type="incremental")
    for kw in ({"begin": "0"}, {"end": c1}):
        with pytest.raises(ReadError, match=r"^begin/end apply only to query_type='incremental'$"):
            hoodie.read_table(path, **kw)
    for name, kw in (("as_of", {"as_of": "2024010203040"}), ("begin", {"query_type": "incremental", "begin": "x"}),
                     ("end", {"query_type": "incremental", "begin": "0", "end": "soon"})):
        with pytest.raises(ReadError, match=rf"^{name}='[^']*' is not an instant time; use yyyyMMddHHmmss\[SSS\], "
                                            r"e\.g\. 20240101000000$"):
            hoodie.read_table(path, **kw)
    with pytest.raises(ReadError, match=r"^column\(s\) \['nope'\] are not in the table \(columns: _hoodie_commit_time, "
                                        r"_hoodie_commit_seqno, .*, v\)$"):
        hoodie.read_table(path, columns=["id", "nope"])


def test_instant_arguments_are_normalised_to_at_most_17_digits() -> None:
    from hoodie.format.slice.reader import _normalize_instant

    assert _normalize_instant("0", "as_of") == "0" and _normalize_instant(" 000 ", "as_of") == "000"
    assert _normalize_instant("2024-01-02 03:04:05", "as_of") == "20240102030405"
    assert _normalize_instant("2024-01-02T03:04:05.678", "as_of") == "20240102030405678"
    assert _normalize_instant(20240102030405678, "as_of") == "20240102030405678"
    assert _normalize_instant("2024010203040567899", "as_of") == "20240102030405678"


def test_incremental_range_excludes_begin_and_includes_end(tmp_path) -> None:
    import hoodie
    from tests.format.test_fsview import _data, _vals, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    c2 = _write(path, _data([2], 2, "b"), "upsert")
    c3 = _write(path, _data([3], 3, "c"), "upsert")

    def inc(begin: str, end: Optional[str] = None) -> dict[int, str]:
        return _vals(hoodie.read_table(path, query_type="incremental", begin=begin, end=end))

    assert inc("0") == {1: "a1", 2: "b2", 3: "c3"}
    assert inc(c1) == {2: "b2", 3: "c3"} and inc(c2) == {3: "c3"} and inc(c3) == {}
    assert inc("0", c1) == {1: "a1", 2: "a2"} and inc(c1, c2) == {2: "b2"} and inc(c2, c2) == {}
    empty = hoodie.read_table(path, query_type="incremental", begin=c3, columns=["id", "v"])
    assert empty.num_rows == 0 and empty.column_names == ["id", "v"]


# -- timeline: what a damaged Avro timeline file's error tells the user to do -----------------------

def test_damaged_timeline_file_fix_per_action_and_state() -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline.active import DamagedTimelineFileError, damaged_file_fix

    base = "file:///t"
    ts = P + "1"

    def fix(action: str, state: "I.State") -> str:
        return damaged_file_fix(base, I.Instant(ts, action, state))

    backup = "restore it from a backup: it records a completed action and cannot be rebuilt"
    assert fix(I.COMPACTION, I.State.COMPLETED) == fix(I.CLEAN, I.State.COMPLETED) == backup
    assert fix(I.COMPACTION, I.State.REQUESTED) == (
        f"remove the pending compaction with `hoodie rollback {base} {ts}` (its outputs are deleted, logs written on "
        "top of it move back to their previous file slices), then schedule a new one")
    assert fix(I.REPLACE_COMMIT, I.State.INFLIGHT) == f"roll the pending replacecommit back with `hoodie rollback {base} {ts}`"
    assert fix(I.CLEAN, I.State.REQUESTED) == (
        "a pending clean holds no data: the next clean (`hoodie clean`) drops it and plans again "
        f"(or delete .hoodie/{ts}.clean.requested and .hoodie/{ts}.clean.inflight)")
    assert fix(I.ROLLBACK, I.State.INFLIGHT) == (
        f"if .hoodie/{ts}.rollback.inflight does not exist the rollback never started and the file can be deleted; "
        "otherwise restore it from a backup")
    assert fix(I.SAVEPOINT, I.State.INFLIGHT) == (
        "restore it from a backup, or remove the pending instant with the tool that created it")
    inst = I.Instant(ts, I.CLEAN, I.State.REQUESTED)
    e = DamagedTimelineFileError(f"{base}/.hoodie/x", inst, "empty", "do this")
    assert str(e) == f"{base}/.hoodie/x is damaged (empty); do this" and isinstance(e, ValueError)
    assert (e.path, e.instant, e.problem, e.fix) == (f"{base}/.hoodie/x", inst, "empty", "do this")


def test_timeline_layout_from_properties_and_what_each_layout_writes(tmp_path) -> None:
    """Layout 2 (table versions 8/9, or said explicitly) lives in .hoodie/timeline, names completed
    instants by their completion time and refuses JSON commit metadata; layout 1 takes it as is."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline.commit_metadata import CommitMetadata

    st = Storage(str(tmp_path))
    assert T.layout_of(st) == T.TimelineLayout(1, "LOCAL")  # no hoodie.properties yet

    def layout(props: str) -> "T.TimelineLayout":
        st.write_bytes(".hoodie/hoodie.properties", props.encode())
        return T.layout_of(st)

    assert layout("hoodie.table.version=6\n") == T.TimelineLayout(1, "LOCAL")
    st.write_bytes(".hoodie/hoodie.properties", "#caf\u00e9\nhoodie.table.version=9\n".encode("latin-1"))
    assert T.layout_of(st).version == 2  # a byte that is not UTF-8 (in a comment) does not stop the read
    assert layout("hoodie.table.version=8\nhoodie.table.timeline.timezone=utc\n") == T.TimelineLayout(2, "UTC")
    assert layout("hoodie.table.version=9\n") == T.TimelineLayout(2, "LOCAL")
    assert layout("hoodie.table.version=9\nhoodie.timeline.layout.version=1\n").version == 1
    assert layout("hoodie.table.version=6\nhoodie.timeline.layout.version=2\n").version == 2
    v1, v2 = T.TimelineLayout(1), T.TimelineLayout(2)
    assert (v1.folder, v1.path("x"), v2.folder, v2.path("x")) == (".hoodie", ".hoodie/x", ".hoodie/timeline",
                                                                  ".hoodie/timeline/x")
    json_md = b'{"partitionToWriteStats": {}}'
    done = I.Instant(P + "1", I.DELTA_COMMIT, I.State.COMPLETED)
    inflight = I.Instant(P + "1", I.COMPACTION, I.State.INFLIGHT)
    assert v1.content(done, json_md) == json_md
    with pytest.raises(T.TimelineError, match=rf"^\[{P}1__deltacommit__COMPLETED\] of a table-version 8/9 table must "
                                              "be written as Avro commit metadata, not JSON; pass the CommitMetadata "
                                              "object so the timeline serialises it$"):
        v2.content(done, json_md)
    with pytest.raises(T.TimelineError):
        v2.content(inflight, json_md)  # a compaction completes as a commit: a write action too
    requested = I.Instant(P + "1", I.DELTA_COMMIT, I.State.REQUESTED)
    clean = I.Instant(P + "1", I.CLEAN, I.State.COMPLETED)
    assert v2.content(requested, json_md) == json_md and v2.content(clean, json_md) == json_md
    assert v2.content(done, b"") == b""
    md = CommitMetadata(operation_type="INSERT")
    assert v1.content(done, md) == md.to_json_bytes()
    # Avro container files differ by their random sync marker: compare the record schema written.
    replace = I.Instant(P + "1", I.REPLACE_COMMIT, I.State.COMPLETED)
    for inst, name in ((done, b'"HoodieCommitMetadata"'), (replace, b'"HoodieReplaceCommitMetadata"'),
                       (replace.with_state(I.State.INFLIGHT), b'"HoodieCommitMetadata"')):
        data = v2.content(inst, md)
        assert data.startswith(b"Obj\x01") and name in data
    assert b"HoodieReplaceCommitMetadata" not in v2.content(done, md)


def test_layout2_completion_times_pass_every_name_on_the_timeline(tmp_path) -> None:
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    st = Storage(str(tmp_path))
    st.write_bytes(".hoodie/hoodie.properties", b"hoodie.table.version=9\nhoodie.table.timeline.timezone=UTC\n")
    lay = T.layout_of(st)
    # A folder sorting first, with a time in its name: not an instant, and the listing goes on past it.
    (tmp_path / ".hoodie" / "timeline" / "1_29990101000000000").mkdir(parents=True)
    st.write_bytes(".hoodie/timeline/20990101000000001_20990101000000009.deltacommit", b"")
    assert "20990101000000009" < T.completion_time(st, lay, "20990101000000002") < "2999"
    st.write_bytes(".hoodie/timeline/20990101000000020.clean.requested", b"")  # the newest name: pending
    assert "20990101000000020" < T.completion_time(st, lay, "20990101000000002") < "2999"
    assert T.completion_time(st, lay, "20990201000000000") > "20990201000000000"
    inflight = T.transition_to_inflight(st, T.create_requested(st, "20990101000000003", I.COMMIT))
    done = T.transition_to_complete(st, inflight, b"")
    assert done.completion > "20990101000000020" and st.exists(f".hoodie/timeline/{done.file_name}")
    st.write_bytes(".hoodie/timeline/20990101000000004_20990101000000030.commit", b"")  # another commit
    T.delete_instant_files(st, "20990101000000003", I.COMMIT, [I.State.COMPLETED, I.State.INFLIGHT])
    T.delete_instant_files(st, "20990101000000001", I.COMMIT, [I.State.COMPLETED])  # another action: kept
    names = sorted(s.name for s in st.list_dir(".hoodie/timeline") if not s.is_dir)
    assert names == ["20990101000000001_20990101000000009.deltacommit", "20990101000000003.commit.requested",
                     "20990101000000004_20990101000000030.commit", "20990101000000020.clean.requested"]
    assert T.instant_file_path(st, inflight) == ".hoodie/timeline/20990101000000003.inflight"
    # A requested state is deleted by name, never by the completed-file listing.
    T.delete_instant_files(st, "20990101000000004", I.COMMIT, [I.State.REQUESTED])
    assert st.exists(".hoodie/timeline/20990101000000004_20990101000000030.commit")
    # A completed compaction is a commit on the timeline.
    c = T.transition_to_inflight(st, T.create_requested(st, "20990101000000005", I.COMPACTION))
    c_done = T.transition_to_complete(st, c, b"")
    assert c_done.action == I.COMMIT
    T.delete_instant_files(st, "20990101000000005", I.COMPACTION, [I.State.COMPLETED])
    assert not st.exists(f".hoodie/timeline/{c_done.file_name}")
    assert st.exists(".hoodie/timeline/20990101000000005.compaction.requested")


def test_a_completion_that_skipped_the_metadata_table_is_refused(tmp_path) -> None:
    """The format layer keeps no callback into the services: it refuses a completion that did not record
    the instant in the table's metadata table first (hoodie.services.commit.commit does, and says so),
    before the completed file is written; a table without a metadata table completes either way."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    st = Storage(str(tmp_path))

    def inflight(n: int) -> "I.Instant":
        return T.transition_to_inflight(st, T.create_requested(st, P + str(n), I.DELTA_COMMIT))

    assert T.transition_to_complete(st, inflight(1), b"{}").is_completed  # no metadata table: nothing to refuse
    st.write_bytes(T.METADATA_PROPS, b"hoodie.table.version=6\n")
    pending = T.prepare_completion(st, inflight(2), b"{}")
    with pytest.raises(T.TimelineError, match=rf"^\[{P}2__deltacommit__INFLIGHT\] of {st.uri()} is completing outside "
                                              "hoodie's commit path, which keeps the table's metadata table in step "
                                              "with its timeline; commit through hoodie.services.transaction.Transaction$"):
        T.write_completion(pending, metadata_table_updated=False)
    with pytest.raises(T.TimelineError, match="outside hoodie's commit path"):
        T.transition_to_complete(st, inflight(3), b"{}")
    assert not st.exists(f".hoodie/{P}2.deltacommit") and not st.exists(f".hoodie/{P}3.deltacommit")
    assert T.write_completion(pending, metadata_table_updated=True).is_completed
    assert st.exists(f".hoodie/{P}2.deltacommit")


# -- reader: the log-scan rules ------------------------------------------------------------------

def _scan_fixture(tmp_path):
    """Log files of one slice under a timeline P1 (completed) .. P3 (inflight), P5 (completed):
    each data block holds one row tagged with its instant."""
    from hoodie.format.log import logformat as L
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline.active import Timeline

    avro = {"type": "record", "name": "r", "fields": [{"name": "_hoodie_record_key", "type": "string"},
                                                       {"name": "v", "type": "string"}]}

    def data(instant: str) -> bytes:
        return L.encode_avro_data_block(pa.table({"_hoodie_record_key": ["k"], "v": [instant]}), instant=instant,
                                        avro_schema=avro)

    st = Storage(str(tmp_path))
    tl = Timeline([I.Instant(P + "1", I.DELTA_COMMIT), I.Instant(P + "3", I.DELTA_COMMIT, I.State.INFLIGHT),
                   I.Instant(P + "5", I.DELTA_COMMIT), I.Instant(P + "6", I.CLEAN)])
    return st, tl, data


def test_log_scan_keeps_committed_and_archived_blocks_and_skips_the_rest(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.reader import scan_log_blocks
    from hoodie.format.timeline.active import Timeline

    st, tl, data = _scan_fixture(tmp_path)
    L.write_log_file(st, "a.log.1", [data(P + "0"), data(P + "1"), data(P + "3"), data(P + "4"),
                                     L.encode_block(L.BlockType.CDC_DATA, {0: P + "5"}, b""), data(P + "6")])
    res = scan_log_blocks(st, ["a.log.1"], tl)
    # P0 is older than the timeline (archived, so completed); P3 inflight, P4 unknown, P6 a clean.
    assert [b.instant_time for b in res.blocks] == [P + "0", P + "1"]
    assert (res.total_blocks, res.skipped_uncommitted, res.corrupt_blocks, res.rollback_blocks) == (6, 3, 0, 0)
    empty = scan_log_blocks(st, ["a.log.1"], Timeline([]))  # no timeline: nothing is committed
    assert empty.blocks == [] and empty.skipped_uncommitted == 5
    # A filter keeps the listed timeline's start: P0 stays archived (a reader's completion-time cut drops
    # later completions, not the archive).
    cut = scan_log_blocks(st, ["a.log.1"], tl.filter(lambda i: False))
    assert [b.instant_time for b in cut.blocks] == [P + "0"] and cut.skipped_uncommitted == 4


def test_log_scan_stops_after_as_of_and_skips_files_by_path_or_name(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.reader import scan_log_blocks

    st, tl, data = _scan_fixture(tmp_path)
    L.write_log_file(st, "p/a.log.1", [data(P + "1"), data(P + "5")])
    L.write_log_file(st, "p/a.log.2", [data(P + "1")])
    L.write_log_file(st, "p/a.log.3", [data(P + "5")])
    files = ["p/a.log.1", "p/a.log.2", "p/a.log.3"]
    at = scan_log_blocks(st, files, tl, as_of=P + "1")
    assert [b.instant_time for b in at.blocks] == [P + "1"] and at.total_blocks == 2  # stops at the P5 block
    assert len(scan_log_blocks(st, files, tl, as_of=P + "5").blocks) == 4
    assert [b.instant_time for b in scan_log_blocks(st, files, tl, skip_files=["p/a.log.1", "a.log.3"]).blocks] == [
        P + "1"]


@pytest.mark.filterwarnings("ignore:a.log.1. corrupt log block")  # the torn block below, on purpose
def test_log_scan_rollback_block_removes_the_blocks_of_its_target_before_it(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.filters import ReadError
    from hoodie.format.slice.reader import scan_log_blocks

    st, tl, data = _scan_fixture(tmp_path)
    good = data(P + "1")
    torn = good[:-20]  # a corrupt block: its length points past what is there
    L.write_log_file(st, "a.log.1", [data(P + "5"), good])
    with open(st.full("a.log.1"), "ab") as f:
        f.write(torn)
    L.write_log_file(st, "a.log.2", [L.encode_command_block(P + "5", P + "1"), data(P + "0")])
    res = scan_log_blocks(st, ["a.log.1", "a.log.2"], tl)
    assert [b.instant_time for b in res.blocks] == [P + "5", P + "0"]
    assert (res.corrupt_blocks, res.rollback_blocks) == (1, 1)
    kept = scan_log_blocks(st, ["a.log.1"], tl)  # without the rollback block a corrupt block is only skipped
    assert [b.instant_time for b in kept.blocks] == [P + "5", P + "1"] and kept.corrupt_blocks == 1
    L.write_log_file(st, "h.log.1", [L.encode_block(L.BlockType.HFILE_DATA, {0: P + "1"}, b"")])
    with pytest.raises(ReadError, match=r"^h\.log\.1: HFile data blocks belong to the metadata table, not data tables$"):
        scan_log_blocks(st, ["h.log.1"], tl)


def test_base_file_reads_conform_to_the_schema_or_name_the_problem(tmp_path) -> None:
    """Columns are reordered and cast, missing ones are nulls, a column that cannot be cast and a
    file that is not Parquet are refused naming them; a missing file keeps its own error."""
    import pyarrow.parquet as pq

    from hoodie.format.slice.filters import ReadError
    from hoodie.format.slice.reader import read_base_file
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    pq.write_table(pa.table({"b": pa.array([1, 2], pa.int32()), "a": ["x", "y"], "s": ["1", "zz"]}),
                   str(tmp_path / "f.parquet"))
    schema = pa.schema([("a", pa.string()), ("b", pa.int64()), ("c", pa.float64())])
    got = read_base_file(st, "f.parquet", schema)
    assert got.schema == schema and got.to_pydict() == {"a": ["x", "y"], "b": [1, 2], "c": [None, None]}
    import pyarrow.compute as pc

    assert read_base_file(st, "f.parquet", schema, filters=pc.field("b") > 1).to_pydict()["a"] == ["y"]
    with pytest.raises(ReadError, match=r"^column 's' has type string in a data file but int64 in the table schema "
                                        r"and cannot be converted: "):
        read_base_file(st, "f.parquet", pa.schema([("s", pa.int64())]))
    (tmp_path / "g.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ReadError, match=rf"^base file {st.uri('g.parquet')} is not readable Parquet \(.*\); it is "
                                        "damaged or was replaced by another file. Restore it from a copy, or roll "
                                        "back / restore the table to before the commit that wrote it$"):
        read_base_file(st, "g.parquet", schema)
    with pytest.raises(FileNotFoundError):
        read_base_file(st, "missing.parquet", schema)


def test_float_columns_widen_the_java_way_only_when_asked(tmp_path) -> None:
    import pyarrow.parquet as pq

    from hoodie.format.slice.reader import java_float_to_double, read_base_file
    from hoodie.format.storage import Storage

    floats = pa.array([0.1, None, 0.1, 2.5], pa.float32())
    assert java_float_to_double(floats).to_pylist() == [0.1, None, 0.1, 2.5]
    assert java_float_to_double(pa.chunked_array([floats[:2], floats[2:]])).to_pylist() == [0.1, None, 0.1, 2.5]
    st = Storage(str(tmp_path))
    pq.write_table(pa.table({"f": floats}), str(tmp_path / "f.parquet"))
    schema = pa.schema([("f", pa.float64())])
    assert read_base_file(st, "f.parquet", schema, java_floats=True).column("f").to_pylist()[0] == 0.1
    binary = read_base_file(st, "f.parquet", schema).column("f").to_pylist()[0]
    assert binary != 0.1 and abs(binary - 0.1) < 1e-7  # the float's own value, 0.10000000149011612


def test_slice_record_keys_reads_keys_only_until_a_delete_needs_the_merge(tmp_path) -> None:
    """The writer's index lookup: base keys plus data-block keys (duplicates kept) while nothing
    deletes; once a delete block (or a soft-delete column) is valid, the merged slice's keys."""
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.slice.reader import slice_record_keys
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _write

    path = str(tmp_path / "t")
    _write(path, _data([1, 2, 3], 1, "a"), "insert")

    def keys() -> list[str]:
        t = HoodieTable(path)
        (sl,) = FileSystemView(t.storage, t.timeline).latest_file_slices("a")
        return sorted(slice_record_keys(t, sl).to_pylist())

    assert keys() == ["1", "2", "3"]
    _write(path, _data([2], 2, "b"), "upsert")
    assert keys() == ["1", "2", "2", "3"]
    _write(path, _data([3], 3, "x"), "delete")
    assert keys() == ["1", "2"]
    soft = str(tmp_path / "s")
    with_flag = _data([1, 2], 1, "a").append_column("_hoodie_is_deleted", pa.array([False, False]))
    _write(soft, with_flag, "insert")
    _write(soft, _data([2], 2, "b").append_column("_hoodie_is_deleted", pa.array([True])), "upsert")
    t = HoodieTable(soft)
    (sl,) = FileSystemView(t.storage, t.timeline).latest_file_slices("a")
    assert slice_record_keys(t, sl).to_pylist() == ["1"]


def test_timeline_reads_plans_and_names_a_damaged_one(tmp_path) -> None:
    """read_avro names the instant and the problem; the log compaction plan is read from its own
    requested file; with_instants orders what it is given and keeps the file listing."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline import plans

    st = Storage(str(tmp_path))
    op = plans.compaction_operation(P + "0", None, [".f1_" + P + "0.log.1_1-0-1"], "f1", "a", {})
    T.create_requested(st, P + "1", I.LOG_COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    T.create_requested(st, P + "2", I.CLEAN, b"not avro")
    tl = T.Timeline.load(st)
    (got,) = tl.log_compaction_plan(P + "1").operations
    assert got.file_group == ("a", "f1") and got.delta_file_names == (".f1_" + P + "0.log.1_1-0-1",)
    bad = tl.get(P + "2")
    with pytest.raises(T.DamagedTimelineFileError) as e:
        tl.read_avro(bad)
    assert e.value.instant == bad and e.value.problem and e.value.problem != "None"
    assert e.value.path == st.uri(f".hoodie/{bad.file_name}") and e.value.problem in str(e.value)
    mixed = tl.with_instants([tl.get(P + "2"), tl.get(P + "1")])
    assert mixed.timestamps == [P + "1", P + "2"] and mixed.has_file(bad.file_name)


def test_an_instant_can_start_inflight_without_a_requested_file(tmp_path) -> None:
    """Hudi's savepoint action: ``<t>.savepoint.inflight`` then ``<t>.savepoint``, create-only."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    st = Storage(str(tmp_path))
    inf = T.create_inflight(st, P + "1", I.SAVEPOINT, b"content")
    assert (inf.timestamp, inf.action, inf.state) == (P + "1", I.SAVEPOINT, I.State.INFLIGHT)
    assert st.read_bytes(f".hoodie/{P}1.savepoint.inflight") == b"content"
    assert not st.exists(f".hoodie/{P}1.savepoint.requested")
    with pytest.raises(T.TimelineError, match="already exists"):
        T.create_inflight(st, P + "1", I.SAVEPOINT)
    assert T.create_inflight(st, P + "2", I.SAVEPOINT).state == I.State.INFLIGHT
    assert st.read_bytes(f".hoodie/{P}2.savepoint.inflight") == b""
    st.write_bytes(".hoodie/hoodie.properties", b"hoodie.table.version=9\n")
    T.create_inflight(st, P + "3", I.SAVEPOINT)
    assert st.exists(f".hoodie/timeline/{P}3.savepoint.inflight")
    with pytest.raises(T.TimelineError, match="must be written as Avro commit metadata"):
        T.create_inflight(st, P + "4", I.COMMIT, b'{"partitionToWriteStats": {}}')  # the layout's rules hold
    T.create_requested(st, P + "5", I.COMMIT, b'{"partitionToWriteStats": {}}')  # a requested file may be JSON
    assert st.read_bytes(f".hoodie/timeline/{P}5.commit.requested") == b'{"partitionToWriteStats": {}}'


# -- reader: Hudi 1.x partial-update blocks -----------------------------------------------------

_PARTIAL_SCHEMA = pa.schema([("_hoodie_commit_time", pa.string()), ("_hoodie_record_key", pa.string()),
                             ("a", pa.float64()), ("b", pa.string())])


def _data_block(instant: str, rows: dict, partial: bool) -> bytes:
    """An Avro data block holding ``rows`` (column -> values; ``a`` written as an Avro float), with
    the IS_PARTIAL header when ``partial``."""
    import json
    import struct

    from hoodie.format.avro.encode import encode_records_array
    from hoodie.format.log import encode as LE
    from hoodie.format.log import logformat as L

    types = {"_hoodie_commit_time": "string", "_hoodie_record_key": "string", "a": "float", "b": "string"}
    avro = {"type": "record", "name": "r", "fields": [{"name": c, "type": types[c]} for c in rows]}
    table = pa.table({c: pa.array(v, pa.float32() if c == "a" else pa.string()) for c, v in rows.items()})
    datums = encode_records_array(table, avro)
    content = struct.pack(">ii", L.DATA_BLOCK_CONTENT_VERSION, len(datums)) + LE._concat_datums(datums, length_prefix=True)
    header = {L.HeaderKey.INSTANT_TIME: instant, L.HeaderKey.SCHEMA: json.dumps(avro)}
    if partial:
        header[7] = "true"  # HoodieLogBlock.HeaderMetadataType.IS_PARTIAL
    return L.encode_block(L.BlockType.AVRO_DATA, header, content)


def test_partial_update_blocks_lay_their_columns_over_the_current_record(tmp_path) -> None:
    """Blocks apply in log order (full ones too, before and after partial ones); a partial row keeps
    the key's other columns, a new key gets nulls there; floats widen the Java way in both kinds."""
    from types import SimpleNamespace

    from hoodie.format.log import logformat as L
    from hoodie.format.slice.filters import ReadError
    from hoodie.format.slice.reader import is_partial, merge_partial_blocks
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    t1, t2, t3, t4 = (P + str(i) for i in range(1, 5))
    L.write_log_file(st, "a.log.1", [
        _data_block(t1, {"_hoodie_commit_time": [t1], "_hoodie_record_key": ["k1"], "a": [0.1], "b": ["y"]}, False),
        _data_block(t2, {"_hoodie_commit_time": [t2, t2], "_hoodie_record_key": ["k1", "k3"], "b": ["z", "w"]}, True),
        _data_block(t3, {"_hoodie_commit_time": [t3], "_hoodie_record_key": ["k2"], "a": [0.3]}, True),
        _data_block(t4, {"_hoodie_commit_time": [t4], "_hoodie_record_key": ["k4"], "a": [0.7], "b": ["u"]}, False),
    ])
    blocks = list(L.read_log_file(st, "a.log.1"))
    assert [is_partial(b) for b in blocks] == [False, True, True, False]
    table = SimpleNamespace(merge_mode=SimpleNamespace(use_ordering=False, ordering_field=None), base_path="t")
    base = pa.table({"_hoodie_commit_time": [P + "0"] * 2, "_hoodie_record_key": ["k1", "k2"], "a": [1.0, 2.0],
                     "b": ["x", "x"]}, schema=_PARTIAL_SCHEMA)

    def rows(t: pa.Table) -> dict:
        return {r["_hoodie_record_key"]: (r["_hoodie_commit_time"], r["a"], r["b"]) for r in t.to_pylist()}

    assert rows(merge_partial_blocks(table, base, blocks, _PARTIAL_SCHEMA)) == {
        "k1": (t2, 0.1, "z"), "k2": (t3, 0.3, "x"), "k3": (t2, None, "w"), "k4": (t4, 0.7, "u")}
    # A log-only slice whose first block is partial: nothing to lay it over.
    assert rows(merge_partial_blocks(table, None, blocks[1:3], _PARTIAL_SCHEMA)) == {
        "k1": (t2, None, "z"), "k3": (t2, None, "w"), "k2": (t3, 0.3, None)}
    ordered = SimpleNamespace(merge_mode=SimpleNamespace(use_ordering=True, ordering_field="ts"), base_path="t")
    with pytest.raises(ReadError, match=r"^t: partial-update log blocks \(IS_PARTIAL\) on a table merged by event "
                                        r"time \(ts\); hoodie merges partial updates with commit-time ordering only\. "
                                        "Read this table with Hudi 1.x, or compact it with Hudi first$"):
        merge_partial_blocks(ordered, base, blocks, _PARTIAL_SCHEMA)


def test_reading_a_table_without_commits_or_schema_gives_the_meta_columns(tmp_path) -> None:
    import hoodie
    from hoodie.format.table import META_COLUMNS

    (tmp_path / ".hoodie").mkdir()
    (tmp_path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=t\nhoodie.table.version=6\n"
                                                          "hoodie.table.type=COPY_ON_WRITE\n")
    got = hoodie.read_table(str(tmp_path))
    assert got.num_rows == 0 and got.schema == pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS])
    assert hoodie.read_table(str(tmp_path), columns=["_hoodie_record_key"]).column_names == ["_hoodie_record_key"]


def test_block_data_widens_avro_floats_only_when_asked(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.reader import block_data
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    t1 = P + "1"
    L.write_log_file(st, "a.log.1", [_data_block(t1, {"_hoodie_commit_time": [t1], "_hoodie_record_key": ["k"],
                                                       "a": [0.1], "b": ["y"]}, False)])
    (block,) = L.read_log_file(st, "a.log.1")
    binary = block_data(block, _PARTIAL_SCHEMA).column("a").to_pylist()[0]
    assert binary != 0.1 and abs(binary - 0.1) < 1e-7  # the float's own value by default
    assert block_data(block, _PARTIAL_SCHEMA, False).column("a").to_pylist() == [binary]
    assert block_data(block, _PARTIAL_SCHEMA, True).column("a").to_pylist() == [0.1]
    assert block_data(block, _PARTIAL_SCHEMA, True).schema == _PARTIAL_SCHEMA


def test_layout1_timeline_ignores_names_only_layout2_has(tmp_path) -> None:
    """A version-6 timeline (``.hoodie/``) is parsed with Hudi 0.x's names: a completed instant named
    the 1.x way (``<instant>_<completion>.commit``) or a 1.x action (``clustering``) is not an instant of it."""
    tl = _timeline_of(tmp_path, [P + "1.commit", P + "2_" + P + "3.commit", P + "4.clustering.requested"])
    assert tl.timestamps == [P + "1"]
