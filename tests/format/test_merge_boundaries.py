"""Deterministic tests at the merge's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): ordering-field and commit-time merging, deletes at the ordering boundary, soft deletes, and
the same rule end to end against hudi-rs."""

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
