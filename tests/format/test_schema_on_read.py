"""Schema-on-read tables (``hoodie.schema.on.read.enable``): files read by field id, or refused.

The tables are written by hoodie, then given what Java Hudi leaves after ``ALTER TABLE ... RENAME /
DROP / ADD / ALTER COLUMN TYPE`` (``AlterTableCommand.commitWithSchema`` and
``BaseHoodieWriteClient.saveInternalSchema``): old files keep their columns; the ALTER is a completed
commit with ``operationType: ALTER_SCHEMA``, no write stats and ``extraMetadata.latest_schema`` (version =
its instant), and a ``.hoodie/.schema/<instant>.schemacommit`` history (requested, inflight, completed);
later commits write files under the new names and carry ``latest_schema`` (unchanged version) plus a
new ``.schemacommit`` of their own instant. The ALTER instant is reserved before the later write so that
it sorts between the two writes, as on Java's timeline.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable, Optional

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.format import schema_on_read as S
from hoodie.format.schema_on_read import Field, InternalSchema, Record, SchemaOnReadError
from hoodie.format.slice.reader import read_table
from hoodie.format.table import HoodieTable
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.timeline.instant import State, instant_file_name
from hoodie import write_arrow


def _options(table_type: str, op: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "sor",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.metadata.enable": "false",
        "hoodie.write.table.version": "6",
    }


def _first(base: str, table_type: str) -> None:
    data = pa.table({"k": ["a", "b"], "part": ["p", "p"], "ts": pa.array([1, 1], pa.int64()),
                     "val": pa.array([10, 20], pa.int32())})
    write_arrow(base, data, _options(table_type, "insert"))


def _commit_file(base: str, instant: str) -> Path:
    inst = next(i for i in HoodieTable(base).timeline.completed().instants if i.timestamp == instant)
    return Path(base) / ".hoodie" / inst.file_name


def _history(schemas: list[InternalSchema]) -> str:
    return json.dumps({"schemas": [S.schema_to_json(s) for s in reversed(schemas)]}, separators=(",", ":"))


def _schema_commit(base: str, instant: str, history: str) -> None:
    folder = Path(base) / ".hoodie" / ".schema"
    folder.mkdir(exist_ok=True)
    (folder / f"{instant}.schemacommit.requested").write_bytes(b"")
    (folder / f"{instant}.schemacommit.inflight").write_bytes(b"")
    (folder / f"{instant}.schemacommit").write_text(history)


def _alter(base: str, instant: str, new: InternalSchema, history: list[InternalSchema], action: str) -> None:
    """The ALTER_SCHEMA commit Java's AlterTableCommand writes (empty write stats)."""
    meta = CommitMetadata(operation_type="ALTER_SCHEMA")
    meta.extra_metadata[S.LATEST_SCHEMA] = json.dumps(S.schema_to_json(new), separators=(",", ":"))
    hoodie_dir = Path(base) / ".hoodie"
    (hoodie_dir / instant_file_name(instant, action, State.REQUESTED)).write_bytes(b"")
    (hoodie_dir / instant_file_name(instant, action, State.INFLIGHT)).write_bytes(meta.to_json_bytes())
    _schema_commit(base, instant, _history(history))
    # schema: the Avro of the new schema, as the write client's config schema; taken from the next write.
    (hoodie_dir / f"{instant}.{action}").write_bytes(meta.to_json_bytes())


def _carry(base: str, instant: str, latest: InternalSchema, history: list[InternalSchema]) -> None:
    """What saveInternalSchema adds to a later commit: latest_schema (unchanged version), a .schemacommit."""
    path = _commit_file(base, instant)
    d = json.loads(path.read_bytes())
    d["extraMetadata"][S.LATEST_SCHEMA] = json.dumps(S.schema_to_json(latest), separators=(",", ":"))
    path.write_text(json.dumps(d, indent=2))
    _schema_commit(base, instant, _history(history))


def _evolve(base: str, table_type: str, change: Callable[[InternalSchema, int], InternalSchema],
            second: pa.Table, op: str = "insert") -> tuple[str, str]:
    """Write the first batch, ALTER the schema with ``change``, write ``second`` under the new schema."""
    _first(base, table_type)
    table = HoodieTable(base)
    t1 = table.timeline.completed_writes().instants[-1].timestamp
    start = S.avro_to_internal(table.avro_schema())  # the first ALTER derives it from the table schema
    alter = table.new_instant_time()
    new = change(start, int(alter))
    # hoodie's writer refuses a batch without a table column, so it writes the dropped one as nulls; that
    # column is then removed from the new base files and from the commit's schema (Java writes neither).
    write_arrow(base, second, {**_options(table_type, op), "hoodie.write.set.null.for.missing.columns": "true"})
    t3 = HoodieTable(base).timeline.completed_writes().instants[-1].timestamp
    assert t1 < alter < t3
    names = {f.name for f in new.record.fields}
    for f in Path(base).rglob(f"*_{t3}.parquet"):
        t = pq.read_table(f)
        pq.write_table(t.select([c for c in t.column_names if c in names]), f)
    avro = json.loads(json.loads(_commit_file(base, t3).read_bytes())["extraMetadata"]["schema"])
    avro["fields"] = [f for f in avro["fields"] if f["name"] in names]
    action = "deltacommit" if table_type == "MERGE_ON_READ" else "commit"
    _alter(base, alter, new, [new], action)
    for inst in (alter, t3):  # the Avro of the evolved schema, as Java's write client records it
        path = _commit_file(base, inst)
        d = json.loads(path.read_bytes())
        d["extraMetadata"]["schema"] = json.dumps(avro)
        path.write_text(json.dumps(d, indent=2))
    _carry(base, t3, new, [new])
    return alter, t3


def _rename(old: str, new_name: str, new_type: Optional[str] = None) -> Callable[[InternalSchema, int], InternalSchema]:
    def change(s: InternalSchema, version: int) -> InternalSchema:
        fields = tuple(dataclasses.replace(f, name=new_name, type=new_type or f.type) if f.name == old else f
                       for f in s.record.fields)
        return InternalSchema(version, Record(fields))
    return change


def _drop(col: str, readd: Optional[str] = None) -> Callable[[InternalSchema, int], InternalSchema]:
    def change(s: InternalSchema, version: int) -> InternalSchema:
        fields = [f for f in s.record.fields if f.name != col]
        if readd is not None:
            fields.append(Field(S.max_column_id(s) + 1, col, True, readd))
        return InternalSchema(version, Record(tuple(fields)))
    return change


def _rows(base: str, cols: list[str], **kw: object) -> list[tuple]:
    t = read_table(base, columns=["k"] + cols, **kw)
    return sorted(tuple(r[c] for c in ["k"] + cols) for r in t.to_pylist())


def _listing(base: str) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(base)), p.stat().st_size) for p in Path(base).rglob("*") if p.is_file())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_renamed_column_reads_old_files_under_the_new_name(tmp_path: Path, table_type: str) -> None:
    base = str(tmp_path / "t")
    second = pa.table({"k": ["c"], "part": ["p"], "ts": pa.array([2], pa.int64()),
                       "amount": pa.array([30], pa.int32())})
    _evolve(base, table_type, _rename("val", "amount"), second)
    # Without the field-id mapping, a and b would read amount = None.
    assert _rows(base, ["amount"]) == [("a", 10), ("b", 20), ("c", 30)]
    assert "val" not in read_table(base).column_names
    assert _rows(base, ["amount"], query_type="read_optimized") == [("a", 10), ("b", 20), ("c", 30)]
    assert _rows(base, ["amount"], filters=[("amount", ">", 15)]) == [("b", 20), ("c", 30)]


def test_renamed_column_merges_a_log_block_over_an_old_base_file(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    second = pa.table({"k": ["a"], "part": ["p"], "ts": pa.array([2], pa.int64()),
                       "amount": pa.array([11], pa.int32())})
    _evolve(base, "MERGE_ON_READ", _rename("val", "amount"), second, op="upsert")
    assert any(p.name.startswith(".") and ".log." in p.name for p in (Path(base) / "p").iterdir())
    assert _rows(base, ["amount", "ts"]) == [("a", 11, 2), ("b", 20, 1)]


def test_dropped_column_never_reappears(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    second = pa.table({"k": ["c"], "part": ["p"], "ts": pa.array([2], pa.int64())})
    _evolve(base, "COPY_ON_WRITE", _drop("val"), second)
    t = read_table(base)
    assert "val" not in t.column_names
    assert sorted(t.column("k").to_pylist()) == ["a", "b", "c"]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_dropped_and_readded_column_does_not_show_old_values(tmp_path: Path, table_type: str) -> None:
    base = str(tmp_path / "t")
    second = pa.table({"k": ["c"], "part": ["p"], "ts": pa.array([2], pa.int64()),
                       "val": pa.array([99], pa.int32())})
    _evolve(base, table_type, _drop("val", readd="int"), second)
    # Old files hold a column named val with another field id: Java reads it as null.
    assert _rows(base, ["val"]) == [("a", None), ("b", None), ("c", 99)]


def test_widened_and_renamed_column(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    second = pa.table({"k": ["c"], "part": ["p"], "ts": pa.array([2], pa.int64()),
                       "amount": pa.array([2 ** 40], pa.int64())})
    _evolve(base, "COPY_ON_WRITE", _rename("val", "amount", "long"), second)
    t = read_table(base, columns=["k", "amount"])
    assert t.schema.field("amount").type == pa.int64()
    assert _rows(base, ["amount"]) == [("a", 10), ("b", 20), ("c", 2 ** 40)]


def test_unsupported_type_change_is_refused_naming_the_column(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    second = pa.table({"k": ["c"], "part": ["p"], "ts": pa.array([2], pa.int64())})
    _evolve(base, "COPY_ON_WRITE", _rename("val", "val", "string"), second)
    with pytest.raises(SchemaOnReadError, match=r"column 'val' changed type from int to string.*Java Hudi"):
        read_table(base)
    # The refusal comes at planning: a read of other columns is served.
    assert _rows(base, ["ts"]) == [("a", 1), ("b", 1), ("c", 2)]


def test_table_without_evolution_reads_as_before(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    _first(base, "COPY_ON_WRITE")
    table = HoodieTable(base)
    assert S.uses_schema_on_read(table) is None
    assert S.SchemaOnRead.load(table, ["k", "val"]) is None
    assert _rows(base, ["val"]) == [("a", 10), ("b", 20)]


def test_history_file_of_an_uncompleted_commit_is_ignored_by_reads(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    _first(base, "COPY_ON_WRITE")
    table = HoodieTable(base)
    bogus = S.avro_to_internal(table.avro_schema())
    bogus = _rename("val", "amount")(bogus, int(table.new_instant_time()))
    _schema_commit(base, str(bogus.version_id), _history([bogus]))  # an ALTER that never completed
    assert S.load_history(HoodieTable(base)) == {}
    assert _rows(base, ["val"]) == [("a", 10), ("b", 20)]
    with pytest.raises(SchemaOnReadError, match="nothing was written"):
        write_arrow(base, pa.table({"k": ["z"], "part": ["p"], "ts": pa.array([3], pa.int64()),
                                    "val": pa.array([1], pa.int32())}), _options("COPY_ON_WRITE", "upsert"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writes_and_data_services_are_refused_before_anything_is_written(tmp_path: Path, table_type: str) -> None:
    from hoodie.services.compaction.schedule import schedule_compaction

    base = str(tmp_path / "t")
    second = pa.table({"k": ["c"], "part": ["p"], "ts": pa.array([2], pa.int64()),
                       "amount": pa.array([30], pa.int32())})
    _evolve(base, table_type, _rename("val", "amount"), second, op="upsert" if table_type == "MERGE_ON_READ" else "insert")
    before = _listing(base)
    batch = pa.table({"k": ["a"], "part": ["p"], "ts": pa.array([5], pa.int64()), "amount": pa.array([1], pa.int32())})
    for op in ("upsert", "insert", "delete", "delete_partition"):
        opts = {**_options(table_type, op), "hoodie.datasource.write.partitions.to.delete": "p"}
        with pytest.raises(SchemaOnReadError, match=r"write \(\w+\) on .*schema on read.*nothing was written"):
            write_arrow(base, batch, opts)
    if table_type == "MERGE_ON_READ":
        with pytest.raises(SchemaOnReadError, match="compaction scheduling"):
            schedule_compaction(base, {"hoodie.compact.inline.max.delta.commits": "1"})
    assert _listing(base) == before


def test_internal_schema_json_round_trip_and_java_keys() -> None:
    text = ('{"max_column_id":8,"version_id":20240101000000123,"type":"record","fields":['
            '{"id":0,"name":"_hoodie_commit_time","optional":true,"type":"string","doc":""},'
            '{"id":5,"name":"pt","optional":false,"type":{"type":"record","fields":'
            '[{"id":7,"name":"x","optional":true,"type":"decimal(10, 2)"}]}},'
            '{"id":6,"name":"tags","optional":true,"type":{"type":"array","element_id":8,'
            '"element":"string","element_optional":true}}]}')
    s = S.parse_internal_schema(text)
    assert s.version_id == 20240101000000123
    assert s.field_by_name("PT").id == 5
    assert S.max_column_id(s) == 8
    again = S.parse_internal_schema(S.schema_to_json(s))
    assert again == s


def test_avro_positional_ids_as_java_assigns_them() -> None:
    avro = {"type": "record", "name": "r", "fields": [
        {"name": "a", "type": "int"},
        {"name": "s", "type": ["null", {"type": "record", "name": "s", "fields": [
            {"name": "x", "type": "long"}, {"name": "y", "type": {"type": "array", "items": "string"}}]}]},
        {"name": "m", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "d", "type": {"type": "int", "logicalType": "date"}}]}
    s = S.avro_to_internal(avro)
    ids = {f.name: f.id for f in s.record.fields}
    # meta fields 0-4, then top-level fields, then nested ids depth-first.
    assert [f.name for f in s.record.fields][:5] == list(S.META_FIELDS)
    assert ids == {**{m: i for i, m in enumerate(S.META_FIELDS)}, "a": 5, "s": 6, "m": 7, "d": 8}
    st = s.field_by_name("s").type
    assert [(f.id, f.name) for f in st.fields] == [(9, "x"), (10, "y")]
    assert st.fields[1].type.element_id == 11
    m = s.field_by_name("m").type
    assert (m.key_id, m.value_id, m.value, m.value_optional) == (12, 13, "double", True)
    assert s.field_by_name("d").type == "date"
