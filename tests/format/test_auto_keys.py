"""Tables without a record key field (Hudi 0.14+'s auto-generated keys), written in pure Python: keys as
Hudi generates them (``<instant>_<partition id>_<row id>``, ``HoodieRecord.generateSequenceId``), no
``hoodie.table.recordkey.fields``, insert-only writes (upserts refused before anything is written, except
prepped upserts of rows carrying their stored keys), deletes by the keys rows were read with, compaction and
clean; hudi-rs reads the same rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hoodie
from hoodie.format.keys.generators import SimpleKeyGenerator, auto_record_keys, key_generator_from_config
from hoodie.format.properties import parse_properties
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction
from hoodie import write_arrow
from hoodie.errors import WriteError
from tests.hudi_rs import read_hudi_rs

COLS = ["_hoodie_record_key", "_hoodie_partition_path", "day", "v"]


def _opts(table_type: str = "MERGE_ON_READ", **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "auto_t", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.partitionpath.field": "day", **extra}


def _batch(values: list[int]) -> pa.Table:
    return pa.table({"day": pa.array(["2024-01-0%d" % (1 + v % 2) for v in values], pa.string()),
                     "v": pa.array(values, pa.int64())})


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


def _props(path: Path) -> dict[str, str]:
    return parse_properties((path / ".hoodie" / "hoodie.properties").read_text())


def _instants(path: Path) -> list[str]:
    return [str(i) for i in HoodieTable(str(path)).timeline.instants]


def test_key_format_is_hudis_sequence_id() -> None:
    """``instantTime + "_" + partitionId + "_" + recordIndex``, decimal, no padding."""
    assert auto_record_keys("20240501000000000", 3, 9, 3).to_pylist() == [
        "20240501000000000_3_9", "20240501000000000_3_10", "20240501000000000_3_11"]
    assert auto_record_keys("20240501000000000", 0, 0, 0).to_pylist() == []
    kg = key_generator_from_config({"hoodie.datasource.write.partitionpath.field": "day"},
                                   allow_auto_record_keys=True)
    # The generator Hudi infers from the partition fields alone (inferKeyGeneratorTypeForAutoKeyGen).
    assert isinstance(kg, SimpleKeyGenerator) and kg.auto_record_keys and kg.record_key_fields == []
    assert kg.partition_paths(_batch([0, 1])).to_pylist() == ["2024-01-01", "2024-01-02"]
    with pytest.raises(ValueError, match="record keys are generated per write"):
        kg.record_keys(_batch([0]))
    with pytest.raises(ValueError, match="no record key field configured"):
        key_generator_from_config({"hoodie.datasource.write.partitionpath.field": "day"})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_tables_without_record_key_get_hudis_keys_and_read_like_hudi_rs(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    # No operation given: bulk_insert, as Hudi chooses for a write without a record key.
    first = write_arrow(str(path), _batch([0, 1, 2]), _opts(table_type))
    second = write_arrow(str(path), _batch([3, 4]), _opts(table_type, **{"hoodie.datasource.write.operation": "insert"}))
    props = _props(path)
    assert "hoodie.table.recordkey.fields" not in props
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    t = hoodie.read_table(str(path))
    by_v = {r["v"]: r["_hoodie_record_key"] for r in t.to_pylist()}
    # One process: partition id 0, rows numbered in input order.
    assert by_v == {0: f"{first}_0_0", 1: f"{first}_0_1", 2: f"{first}_0_2", 3: f"{second}_0_0", 4: f"{second}_0_1"}
    assert _rows(read_hudi_rs(str(path))) == _rows(t)
    # Partition pruning reads the partition fields of a table without record key fields too.
    pruned = hoodie.read_table(str(path), filters=[("day", "=", "2024-01-02")])
    assert sorted(pruned.column("v").to_pylist()) == [1, 3]
    meta = HoodieTable(str(path)).timeline.commit_metadata(HoodieTable(str(path)).timeline.instants[0])
    assert meta.operation_type == "BULK_INSERT"


def test_writes_that_need_a_record_key_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with pytest.raises(WriteError, match=r"operation=upsert matches incoming rows .* use operation insert or "
                                         r"bulk_insert.*hoodie.datasource.write.recordkey.field.*Nothing was written"):
        write_arrow(str(path), _batch([0]), _opts(**{"hoodie.datasource.write.operation": "upsert"}))
    assert not path.exists()
    write_arrow(str(path), _batch([0, 1]), _opts())
    before, rows = _instants(path), _rows(hoodie.read_table(str(path)))
    with pytest.raises(WriteError, match="has no record key fields .*its keys are auto-generated"):
        write_arrow(str(path), _batch([2]), _opts(**{"hoodie.datasource.write.operation": "upsert"}))
    with pytest.raises(WriteError, match="hoodie.combine.before.insert=true de-duplicates rows by record key"):
        write_arrow(str(path), _batch([2]), _opts(**{"hoodie.datasource.write.operation": "insert",
                                                     "hoodie.combine.before.insert": "true"}))
    with pytest.raises(WriteError, match="recordkey.field='v' but the table .* has no record key fields"):
        write_arrow(str(path), _batch([2]), _opts(**{"hoodie.datasource.write.recordkey.field": "v"}))
    with pytest.raises(WriteError, match="the input lacks _hoodie_record_key, _hoodie_partition_path: read the rows"):
        write_arrow(str(path), _batch([0]), _opts(**{"hoodie.datasource.write.operation": "delete"}))
    assert _instants(path) == before and _rows(hoodie.read_table(str(path))) == rows


def test_delete_by_key_compaction_clean_and_overwrite_keep_working(tmp_path: Path) -> None:
    """MERGE_ON_READ: a delete by the keys rows were read with (a log delete block), compaction of it,
    clean, then mode='overwrite'; hoodie and hudi-rs agree at every step."""
    path = tmp_path / "t"
    write_arrow(str(path), _batch([0, 1, 2, 3]), _opts())
    write_arrow(str(path), _batch([4, 5]), _opts(**{"hoodie.datasource.write.operation": "insert"}))
    stored = hoodie.read_table(str(path))
    gone = stored.filter(pc.is_in(stored.column("v"), value_set=pa.array([1, 4], pa.int64())))
    write_arrow(str(path), gone, _opts(**{"hoodie.datasource.write.operation": "delete"}))
    t = hoodie.read_table(str(path))
    assert sorted(t.column("v").to_pylist()) == [0, 2, 3, 5]
    assert _rows(read_hudi_rs(str(path))) == _rows(t)
    assert run_compaction(str(path), config={"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
    run_clean(str(path), {"hoodie.cleaner.commits.retained": "1"})
    assert _rows(hoodie.read_table(str(path))) == _rows(t) == _rows(read_hudi_rs(str(path)))
    replaced = write_arrow(str(path), _batch([7, 8]), _opts(), mode="overwrite")
    after = hoodie.read_table(str(path))
    assert sorted(after.column("_hoodie_record_key").to_pylist()) == [f"{replaced}_0_0", f"{replaced}_0_1"]
    assert _rows(read_hudi_rs(str(path))) == _rows(after)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rows_read_back_with_default_operation_update_their_records(tmp_path: Path, table_type: str) -> None:
    """Hudi's quick start update on a table without record key: rows read back (with _hoodie_record_key),
    changed and written with the default operation (or upsert). Hudi 1.x upserts them by those keys
    (``canDoPreppedWrites``: upsert prepped), so each record is replaced under its stored key, and hudi-rs
    reads the same (before: refused; before that, a bulk_insert that stored every changed row twice). An
    explicit insert still adds them with new keys, as Hudi does (it drops the meta columns); without
    ``_hoodie_partition_path`` the rows are refused before anything is written."""
    path = tmp_path / "t"
    write_arrow(str(path), _batch([0, 1]), _opts(table_type))
    stored = hoodie.read_table(str(path))
    keys = dict(zip(stored.column("v").to_pylist(), stored.column("_hoodie_record_key").to_pylist()))
    changed = stored.filter(pc.equal(pc.field("v"), 1))
    changed = changed.set_column(changed.schema.get_field_index("v"), "v", pc.multiply(changed.column("v"), 10))
    write_arrow(str(path), changed, _opts(table_type))
    out = hoodie.read_table(str(path))
    assert dict(zip(out.column("v").to_pylist(), out.column("_hoodie_record_key").to_pylist())) == {
        0: keys[0], 10: keys[1]}
    assert _rows(read_hudi_rs(str(path))) == _rows(out)
    again = out.filter(pc.equal(pc.field("v"), 0))
    again = again.set_column(again.schema.get_field_index("v"), "v", pc.add(again.column("v"), 5))
    write_arrow(str(path), again, _opts(table_type, **{"hoodie.datasource.write.operation": "upsert"}))
    assert sorted(hoodie.read_table(str(path)).column("v").to_pylist()) == [5, 10]
    before, rows = _instants(path), _rows(hoodie.read_table(str(path)))
    with pytest.raises(WriteError, match=r"carry _hoodie_record_key .*lack _hoodie_partition_path.*Nothing was written"):
        write_arrow(str(path), again.drop_columns(["_hoodie_partition_path"]), _opts(table_type))
    assert _instants(path) == before and _rows(hoodie.read_table(str(path))) == rows
    write_arrow(str(path), changed, _opts(table_type, **{"hoodie.datasource.write.operation": "insert"}))
    assert sorted(hoodie.read_table(str(path)).column("v").to_pylist()) == [5, 10, 10]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_prepped_upsert_rewrites_rows_under_their_stored_keys(tmp_path: Path, table_type: str) -> None:
    """``_hoodie.datasource.write.prepped=true`` with operation upsert (what hoodie.sql's UPDATE and MERGE write
    on such a table, Hudi's upsert prepped): rows read back keep the keys they carry and replace their
    records; a row without a stored key (a MERGE insert) gets a generated key. hudi-rs reads the same rows."""
    base = str(tmp_path / "t")
    write_arrow(base, _batch([1, 2, 3]), _opts(table_type, **{"hoodie.datasource.write.operation": "insert"}))
    stored = hoodie.read_table(base)
    changed = stored.filter(pc.less(stored.column("v"), 3))
    changed = changed.set_column(changed.schema.get_field_index("v"), "v", pc.multiply(changed.column("v"), 10))
    new = pa.table({"_hoodie_record_key": pa.nulls(1, pa.string()), "_hoodie_partition_path": pa.nulls(1, pa.string()),
                    "day": ["2024-01-02"], "v": pa.array([7], pa.int64())})
    prepped = pa.concat_tables([changed.select(["_hoodie_record_key", "_hoodie_partition_path", "day", "v"]), new])
    write_arrow(base, prepped, _opts(table_type, **{"hoodie.datasource.write.operation": "upsert",
                                                     "_hoodie.datasource.write.prepped": "true"}))
    out = hoodie.read_table(base)
    keys = dict(zip(stored.column("v").to_pylist(), stored.column("_hoodie_record_key").to_pylist()))
    got = dict(zip(out.column("v").to_pylist(), out.column("_hoodie_record_key").to_pylist()))
    assert sorted(got) == [3, 7, 10, 20]
    assert got[10] == keys[1] and got[20] == keys[2] and got[3] == keys[3]  # updated in place, not added
    assert got[7] not in keys.values()
    assert _rows(read_hudi_rs(base)) == _rows(out)
    # An upsert of rows without stored keys on this table is still refused before anything is written.
    with pytest.raises(WriteError, match="matches incoming rows to stored records by record key"):
        write_arrow(base, new.drop_columns(["_hoodie_record_key", "_hoodie_partition_path"]),
                    _opts(table_type, **{"hoodie.datasource.write.operation": "upsert"}))
