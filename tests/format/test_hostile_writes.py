"""Writes a hostile user broke (issue 12), on the pure-Python writer: each test fails on the code
before its fix. The Spark writer's twins are in tests/engine/test_spark_hostile_writes.py."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.errors import WriteError
from tests.hudi_rs import read_hudi_rs


def _opts(table_type: str, **extra: str) -> dict[str, str]:
    o = {"hoodie.table.name": "hw", "hoodie.datasource.write.recordkey.field": "k",
         "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.precombine.field": "ts"}
    o.update(extra)
    return o


def _files(path: str) -> list[str]:
    """Every file under ``path`` (a refused first write leaves none: no table, no data)."""
    return sorted(str(p) for p in Path(path).rglob("*") if p.is_file()) if Path(path).exists() else []


def _by_key(t: pa.Table, cols: list[str]) -> dict:
    return {r["k"]: tuple(r[c] for c in cols) for r in t.select(["k"] + cols).to_pylist()}


# -- item 6: widening a column ------------------------------------------------------------------

@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_widening_int_to_long_and_float_to_double_keeps_values_exact(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    o = _opts(table_type)
    write_arrow(path, pa.table({"k": pa.array([1, 2, 3], pa.int64()), "ts": pa.array([1, 1, 1], pa.int64()),
                                "i": pa.array([1, 2, 3], pa.int32()),
                                "f": pa.array([0.5, 0.25, 0.1], pa.float32())}), o)
    # Key 2 is updated with values only the wider types hold; key 4 is new; keys 1 and 3 keep
    # their narrow values, read back through the wider type.
    write_arrow(path, pa.table({"k": pa.array([2, 4], pa.int64()), "ts": pa.array([2, 2], pa.int64()),
                                "i": pa.array([2 ** 40, 7], pa.int64()),
                                "f": pa.array([1e300, 0.1], pa.float64())}), o)
    # Key 3's float 0.1 is widened as Hudi widens rewritten or merged records (Float.toString, then
    # parsed as a double): 0.1, in the rewritten COW base file and in every merge-on-read read.
    expected = {1: (1, 0.5), 2: (2 ** 40, 1e300), 3: (3, 0.1), 4: (7, 0.1)}
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert t.schema.field("i").type == pa.int64() and t.schema.field("f").type == pa.float64()
        assert _by_key(t, ["i", "f"]) == expected
    # Read-optimized: the base files as hudi-rs reads them (merge-on-read: the decimal-string
    # widening too; key 2's update is still in a log there).
    assert _by_key(hoodie.read_table(path, query_type="read_optimized"), ["i", "f"]) == _by_key(
        read_hudi_rs(path, query_type="read_optimized"), ["i", "f"])
    # A later batch in the narrow types is cast up to the table's types (the table never narrows).
    write_arrow(path, pa.table({"k": pa.array([1], pa.int64()), "ts": pa.array([3], pa.int64()),
                                "i": pa.array([5], pa.int32()), "f": pa.array([0.75], pa.float32())}), o)
    expected[1] = (5, 0.75)
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert t.schema.field("i").type == pa.int64() and t.schema.field("f").type == pa.float64()
        assert _by_key(t, ["i", "f"]) == expected


def test_widening_then_compaction_keeps_values_exact(tmp_path: Path) -> None:
    """Compaction rewrites the slice into one base file of the widened types, values unchanged."""
    from hoodie.services.compaction import run_compaction

    path = str(tmp_path / "t")
    o = _opts("MERGE_ON_READ", **{"hoodie.clean.automatic": "false"})
    write_arrow(path, pa.table({"k": pa.array([1, 2, 3], pa.int64()), "ts": pa.array([1, 1, 1], pa.int64()),
                                "i": pa.array([1, 2, 3], pa.int32()), "f": pa.array([0.5, 0.2, 0.1], pa.float32())}), o)
    write_arrow(path, pa.table({"k": pa.array([2], pa.int64()), "ts": pa.array([2], pa.int64()),
                                "i": pa.array([-2 ** 40], pa.int64()), "f": pa.array([-1e300], pa.float64())}), o)
    expected = {1: (1, 0.5), 2: (-2 ** 40, -1e300), 3: (3, 0.1)}
    assert _by_key(hoodie.read_table(path), ["i", "f"]) == expected
    assert run_compaction(path, config={"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
    for t in (hoodie.read_table(path), read_hudi_rs(path), read_hudi_rs(path, query_type="read_optimized")):
        assert _by_key(t, ["i", "f"]) == expected


# -- item 8: _hoodie_is_deleted -----------------------------------------------------------------

def _deleted_batch(rows: list[tuple[int, int, str, bool]]) -> pa.Table:
    return pa.table({"k": pa.array([r[0] for r in rows], pa.int64()), "ts": pa.array([r[1] for r in rows], pa.int64()),
                     "v": [r[2] for r in rows], "_hoodie_is_deleted": [r[3] for r in rows]})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("ordering", [True, False])
def test_hoodie_is_deleted_rows_are_deletes(tmp_path: Path, table_type: str, ordering: bool) -> None:
    """Rows with ``_hoodie_is_deleted = true`` delete their key, as Hudi's payloads do: on upsert
    (unless, with an ordering field, the stored version is newer), never inserted by insert or by
    upsert of a new key; compaction keeps them deleted; hudi-rs reads the same rows."""
    from hoodie.services.compaction import run_compaction

    path = str(tmp_path / "t")
    o = _opts(table_type, **{"hoodie.clean.automatic": "false"})
    if ordering:
        o["hoodie.datasource.write.payload.class"] = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    else:
        del o["hoodie.datasource.write.precombine.field"]
    # insert: the deleted row 9 is not written.
    write_arrow(path, _deleted_batch([(1, 5, "a", False), (2, 5, "b", False), (3, 5, "c", False),
                                      (9, 5, "z", True)]), {**o, "hoodie.datasource.write.operation": "insert"})
    expected = {1: ("a",), 2: ("b",), 3: ("c",)}
    # upsert: 1 deleted (newer), 2 "deleted" with an older ordering value (kept with an ordering
    # field), 4 is new and deleted (not written), 3 updated.
    write_arrow(path, _deleted_batch([(1, 6, "x", True), (2, 4, "x", True), (3, 6, "c2", False),
                                      (4, 6, "d", True)]), o)
    del expected[1]
    expected[3] = ("c2",)
    if not ordering:
        del expected[2]
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert _by_key(t, ["v"]) == expected
        assert not any(t.column("_hoodie_is_deleted").to_pylist())
    # A deleted key written again is back.
    write_arrow(path, _deleted_batch([(1, 7, "a2", False)]), o)
    expected[1] = ("a2",)
    if table_type == "MERGE_ON_READ":
        assert run_compaction(path, config={"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert _by_key(t, ["v"]) == expected


def test_hoodie_is_deleted_must_be_boolean(tmp_path: Path) -> None:
    from hoodie.errors import WriteError

    t = pa.table({"k": pa.array([1], pa.int64()), "ts": pa.array([1], pa.int64()), "_hoodie_is_deleted": ["yes"]})
    with pytest.raises(WriteError, match="_hoodie_is_deleted.*boolean"):
        write_arrow(str(tmp_path / "t"), t, _opts("COPY_ON_WRITE"))
    assert _files(str(tmp_path / "t")) == []


@pytest.mark.parametrize("ordering", [True, False])
def test_log_rows_marked_deleted_by_another_writer_are_deletes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             ordering: bool) -> None:
    """A log data block holding ``_hoodie_is_deleted = true`` rows (written by an older hoodie, which
    ignored the column) reads as deletes in our reader, the writer's index and compaction, as in
    hudi-rs; base-file rows are returned as stored, as hudi-rs returns them."""
    from hoodie.services.write import prepare as BW
    from hoodie.services.compaction import run_compaction

    path = str(tmp_path / "t")
    o = _opts("MERGE_ON_READ", **{"hoodie.clean.automatic": "false"})
    if ordering:
        o["hoodie.datasource.write.payload.class"] = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    else:
        del o["hoodie.datasource.write.precombine.field"]
    write_arrow(path, _deleted_batch([(1, 5, "a", False), (2, 5, "b", False), (3, 5, "c", False)]), o)
    with monkeypatch.context() as m:  # the old writer: the marker is an ordinary column
        m.setattr(BW, "soft_deleted", lambda records: None)
        write_arrow(path, _deleted_batch([(1, 6, "x", True), (2, 4, "y", True)]), o)
    expected = {3: ("c",)} if not ordering else {2: ("b",), 3: ("c",)}
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert _by_key(t, ["v"]) == expected
    # The index sees key 1 as gone: writing it again inserts it.
    write_arrow(path, _deleted_batch([(1, 7, "a2", False)]), o)
    expected[1] = ("a2",)
    assert run_compaction(path, config={"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert _by_key(t, ["v"]) == expected


# -- item 12: composite keys whose values contain ',' ----------------------------------------

@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_composite_key_values_with_commas_are_refused_before_writing(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    o = _opts(table_type, **{"hoodie.datasource.write.recordkey.field": "a,b"})
    good = pa.table({"a": ["x"], "b": ["y"], "ts": pa.array([1], pa.int64()), "v": ["first"]})
    clash = pa.table({"a": ["x,b:y", "x"], "b": ["z", "y,b:z"], "ts": pa.array([1, 1], pa.int64()), "v": ["1", "2"]})
    with pytest.raises(ValueError, match=r"record key field 'a' has the value 'x,b:y'.*Fix: replace the ','"):
        write_arrow(path, clash, o)
    assert _files(path) == []  # no table was created
    write_arrow(path, good, o)
    files = _files(path)
    with pytest.raises(ValueError, match=r"record key field 'a' has the value 'x,b:y'"):
        write_arrow(path, clash, o)
    assert _files(path) == files
    assert hoodie.read_table(path, columns=["_hoodie_record_key", "v"]).to_pylist() == [
        {"_hoodie_record_key": "a:x,b:y", "v": "first"}]


# -- item 11: a batch lacking a table column -----------------------------------------------------

@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("op", ["upsert", "insert", "insert_overwrite"])
def test_batch_missing_a_column_is_refused_unless_opted_in(tmp_path: Path, table_type: str, op: str) -> None:
    path = str(tmp_path / "t")
    o = _opts(table_type)
    write_arrow(path, pa.table({"k": pa.array([1, 2], pa.int64()), "ts": pa.array([1, 1], pa.int64()),
                                "a": ["a1", "a2"], "b": ["b1", "b2"]}), o)
    files = _files(path)
    # (insert skips the index, as Hudi's does: it gets a new key only)
    k1 = 4 if op == "insert" else 1
    lacking = pa.table({"k": pa.array([k1, 3], pa.int64()), "ts": pa.array([2, 2], pa.int64()), "a": ["A1", "A3"]})
    ow = {**o, "hoodie.datasource.write.operation": op}
    with pytest.raises(WriteError, match=r"lacks the table column\(s\) \['b'\].*"
                                         r"hoodie\.write\.set\.null\.for\.missing\.columns=true"):
        write_arrow(path, lacking, ow)
    assert _files(path) == files
    # Opted in: the missing column is written as null (Hudi's semantics), for updated and new rows.
    write_arrow(path, lacking, {**ow, "hoodie.write.set.null.for.missing.columns": "true"})
    expected = {k1: ("A1", None), 3: ("A3", None)}
    if op != "insert_overwrite":
        expected[2] = ("a2", "b2")
    if op == "insert":
        expected[1] = ("a1", "b1")
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert _by_key(t, ["a", "b"]) == expected


def test_missing_columns_option_value_is_checked(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match=r"hoodie\.write\.set\.null\.for\.missing\.columns='yes' is not a boolean; use true or false"):
        write_arrow(str(tmp_path / "t"), pa.table({"k": [1], "ts": [1]}),
                    _opts("COPY_ON_WRITE", **{"hoodie.write.set.null.for.missing.columns": "yes"}))


def test_delete_batch_needs_only_the_keys(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = _opts("MERGE_ON_READ")
    write_arrow(path, pa.table({"k": pa.array([1, 2], pa.int64()), "ts": pa.array([1, 1], pa.int64()), "a": ["x", "y"]}), o)
    write_arrow(path, pa.table({"k": pa.array([1], pa.int64())}), {**o, "hoodie.datasource.write.operation": "delete"})
    assert _by_key(hoodie.read_table(path), ["a"]) == {2: ("y",)}


# -- item 10: a committed write whose inline service fails ---------------------------------------

def test_inline_service_failure_after_commit_says_the_write_committed(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The automatic clean fails after the commit: the error says which instant committed and which
    service failed, and tells not to retry; the data is there."""
    from hoodie.errors import PostCommitError
    from hoodie.format.table import HoodieTable
    from hoodie.services.clean import CleanError
    import hoodie.services.clean.executor as clean_executor

    path = str(tmp_path / "t")
    o = _opts("COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "insert"})
    write_arrow(path, pa.table({"k": pa.array([1], pa.int64()), "ts": pa.array([1], pa.int64())}), o)

    def broken(*a: object, **k: object) -> None:
        raise CleanError("the cleaner cannot plan (injected)")

    monkeypatch.setattr(clean_executor, "plan_clean", broken)
    with pytest.raises(PostCommitError) as info:
        write_arrow(path, pa.table({"k": pa.array([2], pa.int64()), "ts": pa.array([1], pa.int64())}), o)
    err = info.value
    last = HoodieTable(path).timeline.completed_writes().last().timestamp
    assert err.instant == last and err.service == "clean" and err.base_path == path
    assert isinstance(err, WriteError) and isinstance(err.__cause__, CleanError)
    msg = str(err)
    assert f"committed as instant {last}" in msg and "inline clean failed" in msg and "do not retry" in msg
    assert "hoodie.clean.automatic=false" in msg
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == [1, 2]


def test_metrics_failure_after_commit_says_the_write_committed(tmp_path: Path) -> None:
    from hoodie.errors import PostCommitError

    path = str(tmp_path / "t")
    o = _opts("MERGE_ON_READ", **{"hoodie.metrics.pushgateway.url": "http://127.0.0.1:9/"})
    with pytest.raises(PostCommitError, match=r"committed as instant \d+ .*publishing the write's metrics failed"):
        write_arrow(path, pa.table({"k": pa.array([1], pa.int64()), "ts": pa.array([1], pa.int64())}), o)
    assert hoodie.read_table(path).column("k").to_pylist() == [1]


# -- item 2: mode="overwrite" ---------------------------------------------------------------------

def _old_table(path: str, table_type: str) -> dict[str, str]:
    o = _opts(table_type, **{"hoodie.datasource.write.partitionpath.field": "p", "hoodie.clean.automatic": "false"})
    write_arrow(path, pa.table({"k": pa.array([1, 2, 3], pa.int64()), "p": ["a", "a", "b"],
                                "ts": pa.array([1, 1, 1], pa.int64()), "v": ["x1", "x2", "x3"]}), o)
    write_arrow(path, pa.table({"k": pa.array([2], pa.int64()), "p": ["a"], "ts": pa.array([2], pa.int64()),
                                "v": ["y2"]}), o)
    return o


def _snapshot(path: str) -> tuple:
    return (_by_key(hoodie.read_table(path), ["p", "v"]), _by_key(read_hudi_rs(path), ["p", "v"]))


OLD = {1: ("a", "x1"), 2: ("a", "y2"), 3: ("b", "x3")}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("bad, error, message", [
    ({"hoodie.datasource.write.operation": "upsertt"}, WriteError, "operation='upsertt' is not one of"),
    ({"hoodie.parquet.compression.codec": "lzo"}, WriteError, "Arrow has no LZO codec"),
    ({"hoodie.datasource.write.operation": "delete"}, WriteError, "does not combine with .*operation=delete"),
    ({"hoodie.datasource.write.recordkey.field": "v"}, WriteError,
     "recordkey.field='v' but the table has hoodie.table.recordkey.fields='k'.*delete the table first"),
    ({"hoodie.datasource.write.table.type": "flip"}, WriteError, "but the table at .* is .*delete the table first"),
    ({}, ValueError, "record key field 'k' is null or empty in 1 of 2 rows"),
])
def test_overwrite_mode_refusals_leave_the_old_table(tmp_path: Path, table_type: str, bad: dict, error: type,
                                                    message: str) -> None:
    path = str(tmp_path / "t")
    o = _old_table(path, table_type)
    if bad.get("hoodie.datasource.write.table.type") == "flip":
        bad = {"hoodie.datasource.write.table.type": "MERGE_ON_READ" if table_type == "COPY_ON_WRITE"
               else "COPY_ON_WRITE"}
    files = _files(path)
    batch = pa.table({"k": pa.array([9, None if not bad else 8], pa.int64()), "p": ["c", "c"],
                      "ts": pa.array([1, 1], pa.int64()), "v": ["n9", "n8"]})
    with pytest.raises(error, match=message):
        write_arrow(path, batch, {**o, **bad}, mode="overwrite")
    assert _files(path) == files
    assert _snapshot(path) == (OLD, OLD)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_overwrite_mode_failing_midway_leaves_the_old_table(tmp_path: Path, table_type: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from hoodie.services.write import execution as BW

    path = str(tmp_path / "t")
    o = _old_table(path, table_type)
    real = BW.execute_file_group
    calls = []

    def dies_on_the_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(BW, "execute_file_group", dies_on_the_second)
    batch = pa.table({"k": pa.array([7, 8], pa.int64()), "p": ["c", "d"], "ts": pa.array([1, 1], pa.int64()),
                      "v": ["n7", "n8"]})
    with pytest.raises(OSError, match="disk full"):
        write_arrow(path, batch, o, mode="overwrite")
    assert _snapshot(path) == (OLD, OLD)
    monkeypatch.setattr(BW, "execute_file_group", real)
    write_arrow(path, batch, o, mode="overwrite")  # rolls the failed attempt back, then replaces
    new = {7: ("c", "n7"), 8: ("d", "n8")}
    assert _snapshot(path) == (new, new)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_overwrite_mode_replaces_data_and_schema_keeping_history(tmp_path: Path, table_type: str) -> None:
    """The replacecommit takes the batch's schema (a column dropped, one retyped); time travel still
    reads the old table; upsert de-duplicates, insert keeps duplicates (as on an empty table)."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.table import HoodieTable

    path = str(tmp_path / "t")
    o = _old_table(path, table_type)
    before = HoodieTable(path).timeline.completed_writes().last().timestamp
    batch = pa.table({"k": pa.array([5, 5, 6], pa.int64()), "p": ["a", "a", "e"],
                      "ts": pa.array([2, 1, 1], pa.int64()), "w": pa.array([1.5, 2.5, 3.5])})
    c = write_arrow(path, batch, o, mode="overwrite")
    t = HoodieTable(path)
    assert t.timeline.get(c).action == I.REPLACE_COMMIT and t.table_type == table_type
    assert t.timeline.commit_metadata(t.timeline.get(c)).operation_type == "INSERT_OVERWRITE_TABLE"
    for got in (hoodie.read_table(path), read_hudi_rs(path)):
        assert "v" not in got.column_names and _by_key(got, ["p", "w"]) == {5: ("a", 1.5), 6: ("e", 3.5)}
    assert _by_key(hoodie.read_table(path, as_of=before), ["p", "v"]) == OLD
    write_arrow(path, batch, {**o, "hoodie.datasource.write.operation": "insert"}, mode="overwrite")
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == [5, 5, 6]
    assert sorted(read_hudi_rs(path).column("k").to_pylist()) == [5, 5, 6]


@pytest.mark.parametrize("key", ["hoodie.datasource.write.hive_style_partitioning",
                                 "hoodie.datasource.write.partitionpath.urlencode",
                                 "hoodie.combine.before.insert"])
@pytest.mark.parametrize("value", ["yes", "1", "on", "t"])
def test_write_booleans_other_than_true_or_false_are_refused_before_anything_is_written(
        tmp_path: Path, key: str, value: str) -> None:
    """These were read as false (anything but 'true' was): `hive_style_partitioning=yes` silently wrote
    day=.. folders as plain ones. Now the typed boolean rule refuses them, naming key, value and fix."""
    path = tmp_path / "t"
    data = pa.table({"k": ["k1"], "p": ["a"], "ts": pa.array([1], pa.int64())})
    with pytest.raises(WriteError, match=rf"{re.escape(key)}='{value}' is not a boolean; use true or false"):
        write_arrow(str(path), data, {**_opts("COPY_ON_WRITE"), key: value})
    assert not path.exists()
