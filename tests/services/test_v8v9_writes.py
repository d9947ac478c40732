"""Writes and table services on tables Hudi 1.0 (table version 8) and 1.1 (version 9) wrote.

Every Java-written fixture in ``tests/fixtures/hudi-v8-v9`` is copied and then written by
hoodie (upsert of existing keys, insert of new keys, delete of a key, in that order) and, for
merge-on-read tables, compacted and cleaned. After every step our read equals the expected rows
(Spark's gold read with the step applied), hudi-rs reads the same, the timeline stays in layout 2
(completion times in completed names, Avro commit metadata) and a metadata table equals storage.
Tables hoodie cannot write as Hudi would are refused with nothing written.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.commit_metadata import AVRO_MAGIC
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction
from hoodie.services.metadata import validate_metadata_table
from hoodie import write_arrow
from tests.format.test_metadata_fixtures import V89_DIR, _table
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")
ZIPS = sorted(V89_DIR.glob("*.zip"))
# Tables a write must be told more about: the timestamp key generator's settings are write options
# (Hudi 1.x does not store them in hoodie.properties), refused by name before anything is written.
NEEDS_OPTIONS = {"sample_table_cow_v9_timebasedkeygen_nonhivestyle": "hoodie.keygen.timebased.timestamp.type"}
# hudi-rs 0.5 drops file groups without a base file when it lists through the metadata table (its
# file_groups_from_files_partition_records: "Support file groups with only log files"): compared on
# a copy listed from storage.
LOG_ONLY = {"quickstart_trips_table_mor_avro_table_log_only"}
# COMMIT_TIME_ORDERING: hudi-rs merges by the ordering field anyway (hudi-v8-v9-format.md §6), so
# it agrees only where the newest write also has the largest ordering value (our writes bump it).


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("v8v9w")
    return {z.stem: _table(z, root / z.stem) for z in ZIPS}


def _data_columns(t: pa.Table) -> list[str]:
    return [c for c in t.column_names if c not in META and c != "_hoodie_operation"]


def _changed_column(table: HoodieTable, t: pa.Table) -> Optional[str]:
    """A plain data column a write can change visibly (not a key, partition or ordering field)."""
    skip = set(table.record_key_fields) | set(table.partition_fields) | {table.precombine_field}
    for f in t.select(_data_columns(t)).schema:
        if f.name not in skip and (pa.types.is_string(f.type) or pa.types.is_float64(f.type)):
            return f.name
    return None


def _bump(col: pa.ChunkedArray | pa.Array, typ: pa.DataType) -> pa.Array:
    if pa.types.is_string(typ):
        return pa.array(["hoodie-" + str(i) for i in range(len(col))], typ)
    return pc.add(pc.fill_null(col, 0), pa.scalar(1, typ))


def _with_column(t: pa.Table, name: str, values: Any) -> pa.Table:
    i = t.schema.get_field_index(name)
    return t.set_column(i, t.schema.field(i), values)


def _key(row: dict, table: HoodieTable) -> tuple:
    return tuple(row[k] for k in table.record_key_fields)


def _rows(t: pa.Table, cols: list[str]) -> list[tuple]:
    return sorted(rows_of(t, cols)) if t.num_rows else []


def _hudi_rs_listing_storage(path: str) -> pa.Table:
    copy = Path(path).with_name("rs_copy")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    shutil.rmtree(copy / ".hoodie" / "metadata", ignore_errors=True)
    props = (copy / ".hoodie" / "hoodie.properties").read_text().splitlines()
    (copy / ".hoodie" / "hoodie.properties").write_text(
        "\n".join(p for p in props if not p.startswith("hoodie.table.metadata.partitions")) + "\n")
    return read_hudi_rs(str(copy))


def _check(path: str, expected: pa.Table, cols: list[str], table: HoodieTable, what: str,
           hudi_rs: bool = True, log_only: bool = False) -> None:
    ours = hoodie.read_table(path)
    assert _rows(ours, cols) == _rows(expected, cols), f"our read after {what}"
    if hudi_rs:
        theirs = _hudi_rs_listing_storage(path) if log_only else read_hudi_rs(path)
        assert _rows(theirs, cols) == _rows(expected, cols), f"hudi-rs after {what}"
    t = HoodieTable(path)
    names = [s.name for s in t.storage.list_dir(".hoodie") if not s.is_dir and s.name[:1].isdigit()]
    assert not names, f"instant files outside .hoodie/timeline after {what}: {names}"
    for inst in t.timeline.completed_writes():
        assert inst.completion, f"{inst} has no completion time after {what}"
        assert t.timeline.read_file(inst.file_name)[:4] == AVRO_MAGIC, f"{inst.file_name} is not Avro"
    if t.has_metadata_table:
        res = validate_metadata_table(t)
        assert res.equal, f"metadata table after {what}: {res}"


def _options(table: HoodieTable, op: str) -> dict[str, str]:
    o = {"hoodie.table.name": table.name, "hoodie.datasource.write.operation": op,
         "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    return o


@pytest.mark.parametrize("stem", [z.stem for z in ZIPS])
def test_write_then_compact_and_clean_a_java_written_table(tables: dict[str, Path], tmp_path: Path,
                                                           stem: str) -> None:
    path = tmp_path / "t"
    shutil.copytree(tables[stem], path)
    base = str(path)
    table = HoodieTable(base)
    current = hoodie.read_table(base)
    cols = _data_columns(current)
    if current.num_rows < 2:
        pytest.skip("an empty table: nothing to update (writes to empty v8 tables are in the model tests)")
    data = current.select(cols)
    if stem in NEEDS_OPTIONS:
        before = sorted(str(p) for p in path.rglob("*"))
        with pytest.raises(Exception, match=NEEDS_OPTIONS[stem]):
            write_arrow(base, data.slice(0, 1), _options(table, "upsert"))
        assert sorted(str(p) for p in path.rglob("*")) == before
        return
    # Rows of keys the table holds once (a key held twice merges into each copy by its own ordering).
    counts: dict[tuple, int] = {}
    for r in data.to_pylist():
        counts[_key(r, table)] = counts.get(_key(r, table), 0) + 1
    data = pa.Table.from_pylist([r for r in data.to_pylist() if counts[_key(r, table)] == 1], schema=data.schema)
    log_only = stem in LOG_ONLY
    commit_time = table.merge_mode.use_ordering is False and table.precombine_field is not None
    # 1. upsert two existing rows: a changed column and (so hudi-rs agrees) a larger ordering value.
    changed = _changed_column(table, data)
    up = data.slice(0, 2)
    if changed is not None:
        up = _with_column(up, changed, _bump(up.column(changed), up.schema.field(changed).type))
    order = table.precombine_field
    if order is not None and order in up.column_names and pa.types.is_integer(up.schema.field(order).type):
        up = _with_column(up, order, pc.add(pc.fill_null(up.column(order), 0), pa.scalar(1000, up.schema.field(order).type)))
    write_arrow(base, up, _options(table, "upsert"))
    # Every copy of an updated key takes the new row (a table may hold a key twice: Hudi's index
    # tags every location of the key).
    new = {_key(r, table): r for r in up.to_pylist()}
    expected = pa.Table.from_pylist([new.get(_key(r, table), r) for r in current.select(cols).to_pylist()],
                                    schema=data.schema)
    _check(base, expected, cols, table, "an upsert", log_only=log_only)
    # 2. delete one key that was not updated.
    gone = data.slice(data.num_rows - 1, 1)
    write_arrow(base, gone, _options(table, "delete"))
    gone_key = _key(gone.to_pylist()[0], table)
    expected = pa.Table.from_pylist([r for r in expected.to_pylist() if _key(r, table) != gone_key],
                                    schema=data.schema)
    _check(base, expected, cols, table, "a delete", hudi_rs=not commit_time, log_only=log_only)
    # 3. MOR: compact every slice, then clean; the rows stay, the read-optimized view catches up.
    if table.is_mor:
        res = run_compaction(base, None, {"hoodie.compaction.strategy": "UnBounded",
                                          "hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
        assert res, "nothing was compacted"
        _check(base, expected, cols, table, "a compaction", hudi_rs=not commit_time, log_only=log_only)
        ro = hoodie.read_table(base, query_type="read_optimized")
        assert _rows(ro, cols) == _rows(expected, cols)
        t = HoodieTable(base)
        done = t.timeline.completed().by_actions(I.COMMIT).last()
        meta = t.timeline.commit_metadata(done)
        assert meta.compacted and meta.operation_type == "COMPACT"
        # Hudi 1.x names the compacted base file (none for a group of log files only).
        assert all(s.prev_base_file for s in meta.all_write_stats()) or log_only
    run_clean(base, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    _check(base, expected, cols, table, "a clean", hudi_rs=not commit_time, log_only=log_only)


def _v9_mor(path: str) -> dict[str, str]:
    opts = {"hoodie.table.name": "t9", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "9",
            "hoodie.payload.event.time.field": "ts"}
    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "x"], "ts": [1, 2]}),
                {**opts, "hoodie.datasource.write.operation": "insert"})
    return opts


def test_an_operation_without_version_9_support_is_refused(tmp_path: Path) -> None:
    """The commit path refuses an operation on a table version it does not declare, before writing."""
    from hoodie.format.table import TableError
    from hoodie.services.transaction import Operation, Transaction

    path = str(tmp_path / "t")
    _v9_mor(path)

    class SixOnly(Operation):
        what = "a version-6 service"

        def start(self, txn: Transaction) -> I.Instant:  # pragma: no cover - never reached
            raise AssertionError("started")

        def complete(self, txn: Transaction, result: Any) -> I.Instant:  # pragma: no cover
            raise AssertionError("completed")

    before = sorted(str(p) for p in Path(path).rglob("*"))
    with pytest.raises(TableError, match="the table is version 9 .* on table versions 6 only. Nothing was written"):
        Transaction(SixOnly(), table=HoodieTable(path)).run()
    assert sorted(str(p) for p in Path(path).rglob("*")) == before


@pytest.mark.parametrize("mode,split", [("symlink", False), ("copy", False), ("symlink", True)])
def test_partial_event_time_compaction_on_1x(tmp_path: Path, mode: str, split: bool) -> None:
    """Event-time compaction on a version-9 table: logs whose events are all after the threshold stay
    visible in the new slice through links named by the compaction instant (docs/compaction.md); the
    read-optimized view holds exactly the events up to the threshold; hudi-rs reads the same."""
    from hoodie.services.compaction import run_compaction

    path = str(tmp_path / "t")
    opts = _v9_mor(path)
    # One update due (event time 5 <= threshold 10), then two late ones (900, 950), in log order.
    for k, ts in (("a", 5), ("b", 900), ("a", 950)):
        write_arrow(path, pa.table({"k": [k], "p": ["x"], "ts": [ts]}), {**opts, "hoodie.datasource.write.operation": "upsert"})
    expected = [("a", "x", 950), ("b", "x", 900)]
    cols = ["k", "p", "ts"]

    def rows(t: pa.Table) -> list[tuple]:
        return sorted(tuple(r[c] for c in cols) for r in t.select(cols).to_pylist())

    cfg = {"hoodie.compaction.strategy": "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy",
           "hoodie.compaction.event.time.threshold": "10", "hoodie.payload.event.time.field": "ts",
           "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER", "hoodie.compaction.partial.link.mode": mode}
    if split:
        cfg["hoodie.compaction.event.time.exact.split"] = "true"
    (res,) = run_compaction(path, None, cfg, schedule_if_none=True)
    assert res.metrics["partialOperations"] == 1 and res.links, res.metrics
    t = HoodieTable(path)
    for link in res.links:
        # Named by the compaction instant: the slice it joins follows from the compaction's completion.
        assert f"_{res.instant}.log." in link.link
    assert rows(hoodie.read_table(path)) == expected
    assert rows(read_hudi_rs(path)) == expected
    # Read-optimized: the base file holds the events up to the threshold only (a at 5, b's insert at 2).
    assert rows(hoodie.read_table(path, query_type="read_optimized")) == [("a", "x", 5), ("b", "x", 2)]
    assert rows(read_hudi_rs(path, query_type="read_optimized")) == [("a", "x", 5), ("b", "x", 2)]
    # A later write lands after the links; compacting everything then leaves no link behind.
    write_arrow(path, pa.table({"k": ["b"], "p": ["x"], "ts": [990]}), {**opts, "hoodie.datasource.write.operation": "upsert"})
    expected = [("a", "x", 950), ("b", "x", 990)]
    assert rows(hoodie.read_table(path)) == expected and rows(read_hudi_rs(path)) == expected
    run_compaction(path, None, {"hoodie.compaction.strategy": "UnBounded", "hoodie.compact.inline.max.delta.commits": "1"},
                   schedule_if_none=True)
    assert rows(hoodie.read_table(path)) == expected and rows(read_hudi_rs(path)) == expected
    assert rows(hoodie.read_table(path, query_type="read_optimized")) == expected
    assert validate_metadata_table(t).equal if t.has_metadata_table else True


@pytest.mark.parametrize("version", [8, 9])
def test_overwrite_delete_partition_ttl_and_restore(tmp_path: Path, version: int) -> None:
    """insert_overwrite, delete_partition, a TTL run that stashes and its restore on a 1.x table with a
    metadata table: replacecommits in Avro as 1.x writes them; hudi-rs and the metadata table agree."""
    from hoodie.services.ttl import restore, run_ttl

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.write.table.version": str(version),
            "hoodie.metadata.enable": "true", "hoodie.payload.event.time.field": "ts"}
    parts = ["2020-01-01", "2020-01-02", "2999-01-01"]
    rows = {f"k{i}": (parts[i % 3], 1_577_836_800_000 + i) for i in range(9)}

    def batch(keys: list[str], vals: dict) -> pa.Table:
        return pa.table({"k": keys, "p": [vals[k][0] for k in keys], "ts": pa.array([vals[k][1] for k in keys], pa.int64())})

    def check(expected: dict, what: str) -> None:
        want = sorted((k, p, ts) for k, (p, ts) in expected.items())
        cols = ["k", "p", "ts"]
        assert sorted(hoodie.read_table(path, columns=cols).to_pylist(), key=str) == sorted(
            [dict(zip(cols, r)) for r in want], key=str), what
        assert sorted(read_hudi_rs(path).select(cols).to_pylist(), key=str) == sorted(
            [dict(zip(cols, r)) for r in want], key=str), f"hudi-rs after {what}"
        assert validate_metadata_table(HoodieTable(path)).equal, what

    write_arrow(path, batch(sorted(rows), rows), {**opts, "hoodie.datasource.write.operation": "insert"})
    check(rows, "the insert")
    new = {"n1": ("2020-01-02", 1_577_836_900_000)}
    write_arrow(path, batch(["n1"], new), {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    rows = {k: v for k, v in rows.items() if v[0] != "2020-01-02"} | new
    check(rows, "insert_overwrite")
    write_arrow(path, batch(["n1"], new).slice(0, 0),
                {**opts, "hoodie.datasource.write.operation": "delete_partition",
                 "hoodie.datasource.write.partitions.to.delete": "2020-01-02"})
    rows = {k: v for k, v in rows.items() if v[0] != "2020-01-02"}
    check(rows, "delete_partition")
    t = HoodieTable(path)
    last = t.timeline.completed_writes().last()
    assert last.action == I.REPLACE_COMMIT and t.timeline.read_file(last.file_name)[:4] == AVRO_MAGIC
    meta = t.timeline.commit_metadata(last)
    assert meta.operation_type == "DELETE_PARTITION" and set(meta.partition_to_replace_file_ids) == {"2020-01-02"}
    res = run_ttl(path, {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
                         "hoodie.partition.ttl.strategy.days.retain": "30", "hoodie.partition.ttl.stash.enabled": "true"})
    assert res.instant is not None
    kept = {k: v for k, v in rows.items() if v[0] == "2999-01-01"}
    check(kept, "the TTL run")
    restore(path, res.instant)
    check(rows, "restoring the TTL stash")
