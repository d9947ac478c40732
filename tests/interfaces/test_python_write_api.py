"""The pure-Python write API (``hoodie.write_table``, ``Table.upsert/insert/delete/overwrite``) and the
lazy reads (``Table.to_arrow_reader``, ``Table.to_polars``), against a model of the table and hudi-rs.

The model: a dict from record key to row. Hudi's rules it encodes: upsert replaces a key's row when
the incoming ordering value is not lower; insert on a keyed table follows the same path here
(hoodie's insert de-duplicates against stored keys only through upsert, so the model test uses
keys new to the table for insert); delete removes keys; overwrite of the table replaces every row,
of the written partitions only those partitions' rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import hoodie
from hoodie.errors import WriteError
from hoodie.interfaces import python_io
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

OPTS = {"hoodie.table.name": "events", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day", "hoodie.datasource.write.precombine.field": "ts"}
DATA = ["id", "name", "day", "ts"]


class Capsule:
    """An object that only speaks the Arrow PyCapsule stream interface (like nanoarrow, arro3)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._table.__arrow_c_stream__(requested_schema)


FORMS: dict[str, Callable[[pa.Table], Any]] = {
    "pyarrow": lambda t: t,
    "batch": lambda t: t.combine_chunks().to_batches()[0] if t.num_rows else t,
    "reader": lambda t: pa.RecordBatchReader.from_batches(t.schema, t.to_batches()),
    "pandas": lambda t: t.to_pandas(),
    "polars": lambda t: pl.from_arrow(t),
    "capsule": Capsule,
    "pylist": lambda t: t.to_pylist() if t.num_rows else t,
    "pydict": lambda t: t.to_pydict(),
}


def rows(ids: list[int], name: str, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{name}{i}" for i in ids],
                     "day": [f"2024-05-0{1 + i % 3}" for i in ids], "ts": pa.array([ts] * len(ids), pa.int64())})


def table_rows(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in DATA) for r in t.select(DATA).to_pylist())


def check(base: str, model: dict[int, dict]) -> None:
    """hoodie's snapshot, its lazy reader and hudi-rs all equal the model."""
    want = sorted(tuple(r[c] for c in DATA) for r in model.values())
    assert table_rows(hoodie.read_table(base)) == want
    assert table_rows(hoodie.open(base).to_arrow_reader().read_all()) == want
    assert table_rows(read_hudi_rs(base)) == want


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_write_table_takes_every_arrow_compatible_form(tmp_path: Path, form: str, table_type: str) -> None:
    base = str(tmp_path / "t")
    first = rows([1, 2, 3], "a", 1)
    hoodie.write_table(base, FORMS[form](first), {**OPTS, "hoodie.datasource.write.table.type": table_type})
    model = {r["id"]: r for r in first.to_pylist()}
    check(base, model)
    t = hoodie.open(base)
    change = rows([2, 4], "b", 2)
    t.upsert(FORMS[form](change))
    model.update({r["id"]: r for r in change.to_pylist()})
    check(base, model)


def test_polars_view_types_are_written_as_plain_types(tmp_path: Path) -> None:
    """polars exports string_view and large_list; Hudi's Avro schemas have string and list."""
    base = str(tmp_path / "t")
    df = pl.DataFrame({"id": [1, 2], "name": ["x", "y"], "day": ["d1", "d2"], "ts": [1, 1], "tags": [["a"], ["b", "c"]]})
    assert pa.table(df).schema.field("name").type == pa.string_view()
    hoodie.write_table(base, df, OPTS)
    out = hoodie.read_table(base, columns=["id", "name", "tags"]).sort_by("id")
    assert out.schema.field("name").type == pa.string()
    assert out.to_pylist() == [{"id": 1, "name": "x", "tags": ["a"]}, {"id": 2, "name": "y", "tags": ["b", "c"]}]
    assert sorted(read_hudi_rs(base).column("name").to_pylist()) == ["x", "y"]


def test_pandas_index_is_not_written(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    df = rows([1, 2], "a", 1).to_pandas().set_index("name", drop=False)
    hoodie.write_table(base, df, OPTS)
    assert "__index_level_0__" not in hoodie.read_table(base).column_names


def test_delete_by_rows_and_by_filters(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    hoodie.write_table(base, rows(list(range(9)), "a", 1), OPTS)
    t = hoodie.open(base)
    t.delete(rows([0, 1], "a", 1).to_pandas())
    assert t.delete(filters=[("day", "=", "2024-05-03")]) is not None  # ids 2, 5, 8
    assert t.delete(filters=[("id", "=", 999)]) is None
    check(base, {i: r for i, r in ((r["id"], r) for r in rows([3, 4, 6, 7], "a", 1).to_pylist())})


def test_delete_by_filters_on_a_table_with_generated_keys(tmp_path: Path) -> None:
    """No key field to recompute keys from: the rows' own meta columns carry them."""
    base = str(tmp_path / "t")
    hoodie.write_table(base, {"name": ["a", "b", "c"], "day": ["x", "y", "x"]},
                       {"hoodie.table.name": "t", "hoodie.datasource.write.partitionpath.field": "day",
                        "hoodie.datasource.write.operation": "insert"})
    hoodie.open(base).delete(filters=[("name", "in", ["a", "b"])])
    assert hoodie.read_table(base, columns=["name"]).column("name").to_pylist() == ["c"]
    assert read_hudi_rs(base).column("name").to_pylist() == ["c"]


def test_overwrite_table_and_written_partitions(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    hoodie.write_table(base, rows(list(range(6)), "a", 1), OPTS)
    t = hoodie.open(base)
    t.overwrite(rows([10], "b", 1), partitions="written")  # 10 % 3 == 1: day 2024-05-02 only
    model = {r["id"]: r for r in rows([0, 2, 3, 5, 10], "a", 1).to_pylist()}
    model[10]["name"] = "b10"
    check(base, model)
    t.overwrite(rows([7], "c", 1))
    check(base, {7: rows([7], "c", 1).to_pylist()[0]})


def test_bad_input_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    base = tmp_path / "t"
    with pytest.raises(WriteError, match="cannot write a builtins.int.*PyCapsule"):
        hoodie.write_table(str(base), 42, OPTS)
    with pytest.raises(WriteError, match="mode='merge'.*'append'.*'overwrite'"):
        hoodie.write_table(str(base), rows([1], "a", 1), OPTS, mode="merge")  # type: ignore[arg-type]
    assert not base.exists()
    hoodie.write_table(str(base), rows([1], "a", 1), OPTS)
    before = sorted(p.name for p in (base / ".hoodie").iterdir())
    t = hoodie.open(str(base))
    with pytest.raises(WriteError, match="operation='insert' contradicts the method called \\(upsert\\)"):
        t.upsert(rows([2], "a", 1), {"hoodie.datasource.write.operation": "insert"})
    with pytest.raises(WriteError, match="would delete every row"):
        t.delete(filters=[])
    with pytest.raises(TypeError, match="not both"):
        t.delete(rows([1], "a", 1), filters=[("id", "=", 1)])
    with pytest.raises(ValueError, match="partitions='some'"):
        t.overwrite(rows([1], "a", 1), partitions="some")
    assert sorted(p.name for p in (base / ".hoodie").iterdir()) == before


def test_arrow_reader_reads_one_slice_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is read when the reader is made; each batch pulled reads one more file slice."""
    base = str(tmp_path / "t")
    hoodie.write_table(base, rows(list(range(30)), "a", 1), OPTS)  # 3 partitions, one slice each
    pulled: list[int] = []
    real = python_io.iter_plan

    def counting(plan: Any, slices: Any = None) -> Any:
        for i, part in enumerate(real(plan, slices)):
            pulled.append(i)
            yield part

    monkeypatch.setattr(python_io, "iter_plan", counting)
    reader = hoodie.open(base).to_arrow_reader(columns=["id", "day"], filters=[("id", "<", 20)])
    assert pulled == []
    first = reader.read_next_batch()
    assert pulled == [0] and first.schema.names == ["id", "day"]
    rest = reader.read_all()
    assert first.num_rows + rest.num_rows == 20 and pulled == [0, 1, 2]


def test_duckdb_and_polars_query_without_loading_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    base = str(tmp_path / "t")
    data = rows(list(range(30)), "a", 1)
    hoodie.write_table(base, data, {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    hoodie.open(base).upsert(rows([1, 2], "z", 5))
    t = hoodie.open(base)
    reader = t.to_arrow_reader(columns=["day", "id"])  # noqa: F841  (DuckDB scans it by its name)
    got = duckdb.sql("SELECT day, count(*) AS n FROM reader GROUP BY day ORDER BY day").fetchall()
    assert got == [("2024-05-01", 10), ("2024-05-02", 10), ("2024-05-03", 10)]
    asked: list[Any] = []
    real = python_io.arrow_reader

    def recording(*args: Any, **kw: Any) -> pa.RecordBatchReader:
        asked.append(kw.get("columns"))
        return real(*args, **kw)

    monkeypatch.setattr(python_io, "arrow_reader", recording)
    lf = t.to_polars()
    out = lf.filter(pl.col("ts") > 1).select("id", "name").collect().sort("id")
    assert out.to_dicts() == [{"id": 1, "name": "z1"}, {"id": 2, "name": "z2"}]
    assert sorted(asked[-1]) == ["id", "name", "ts"]  # projection pushed down, plus the predicate's column


@settings(max_examples=examples(10))
@given(table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
       steps=st.lists(st.tuples(st.sampled_from(["upsert", "insert", "delete", "delete_where", "overwrite_written"]),
                          st.lists(st.integers(0, 12), min_size=1, max_size=6, unique=True),
                          st.sampled_from(sorted(FORMS)), st.integers(1, 4)),
                min_size=1, max_size=5))
def test_write_api_sequences_match_the_model(tmp_path_factory: pytest.TempPathFactory, table_type: str,
                                             steps: list) -> None:
    """Random sequences of the Table write methods, fed in every input form, equal the model and hudi-rs."""
    base = str(tmp_path_factory.mktemp("seq") / "t")
    hoodie.write_table(base, rows([0], "init", 1), {**OPTS, "hoodie.datasource.write.table.type": table_type})
    model = {0: rows([0], "init", 1).to_pylist()[0]}
    t = hoodie.open(base)
    for n, (op, ids, form, ts) in enumerate(steps):
        batch = rows(ids, f"s{n}_", ts)
        if op == "upsert":
            t.upsert(FORMS[form](batch))
            for r in batch.to_pylist():
                if r["id"] not in model or model[r["id"]]["ts"] <= ts:
                    model[r["id"]] = r
        elif op == "insert":
            new = [i for i in ids if i not in model]
            if not new:
                continue
            batch = rows(new, f"s{n}_", ts)
            t.insert(FORMS[form](batch))
            model.update({r["id"]: r for r in batch.to_pylist()})
        elif op == "delete":
            t.delete(FORMS[form](batch))
            for i in ids:
                model.pop(i, None)
        elif op == "delete_where":
            t.delete(filters=[("id", "in", ids)])
            for i in ids:
                model.pop(i, None)
        else:
            t.overwrite(FORMS[form](batch), partitions="written")
            days = set(batch.column("day").to_pylist())
            model = {k: v for k, v in model.items() if v["day"] not in days}
            model.update({r["id"]: r for r in batch.to_pylist()})
        check(base, model)


def test_every_service_result_says_why_nothing_happened(tmp_path: Path) -> None:
    """t.compaction.run(), t.clean() and t.ttl.run() name the reason when they do nothing."""
    base = str(tmp_path / "t")
    hoodie.write_table(base, rows([1, 2], "a", 1), {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    t = hoodie.open(base)
    runs = t.compaction.run()
    assert runs == [] and "no compaction plan is pending" in runs.reason and "schedule_if_none" in runs.reason
    runs = t.compaction.run(schedule_if_none=True)
    assert runs == [] and runs.reason.startswith("nothing to compact: ")
    t.upsert(rows([1], "b", 2))
    runs = t.compaction.run(schedule_if_none=True, options={"hoodie.compact.inline.max.delta.commits": "1"})
    assert len(runs) == 1 and runs.reason.startswith(f"scheduled and ran compaction {runs[0].instant}")
    cleaned = t.clean()
    assert cleaned.instant is None and cleaned.reason.startswith("nothing to clean (KEEP_LATEST_COMMITS): ")
    ttl = t.ttl.run({"hoodie.partition.ttl.strategy.days.retain": "100000"})
    assert ttl.instant is None and ttl.reason.startswith("no partition expired: 2 evaluated by KEEP_BY_TIME")
    ttl = t.ttl.dry_run({"hoodie.partition.ttl.strategy.days.retain": "1"}, instant_time="20991231000000")
    assert ttl.reason == "would delete 2 partition(s)"


def test_cdc_on_write_is_refused_with_its_reason_not_a_guessed_key(tmp_path: Path) -> None:
    """hoodie.table.cdc.enabled=true named hoodie.ttl.async.enabled as the likely key; now it says CDC
    is not written and what to use; false is accepted silently."""
    import warnings

    base = tmp_path / "t"
    with pytest.raises(WriteError, match=r"cdc.enabled=true: hoodie does not write change data.*incremental"):
        hoodie.write_table(str(base), rows([1], "a", 1), {**OPTS, "hoodie.table.cdc.enabled": "true"})
    assert not base.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hoodie.write_table(str(base), rows([1], "a", 1), {**OPTS, "hoodie.table.cdc.enabled": "false"})
    assert hoodie.read_table(str(base)).num_rows == 1


@pytest.mark.parametrize("option", [{"hoodie.datasource.insert.dup.policy": "drop"},
                                    {"hoodie.datasource.insert.dup.policy": " FAIL "},
                                    {"hoodie.datasource.write.insert.drop.duplicates": "true"}])
@pytest.mark.parametrize("operation", ["insert", "bulk_insert"])
def test_insert_dup_policy_on_a_dataframe_write_is_refused_before_writing(tmp_path: Path, option: dict,
                                                                          operation: str) -> None:
    """Hudi's insert dup policy drops (or refuses) incoming rows whose key the table holds; hoodie applies it
    in hoodie.sql INSERT INTO only. A write_table insert with it stored the duplicates (the option was warned
    about as unknown and ignored): now refused before anything is written. Upserts, and the policy none,
    write as before (Hudi ignores the policy for them)."""
    base = tmp_path / "t"
    opts = {**OPTS, "hoodie.datasource.write.operation": "insert"}
    hoodie.write_table(str(base), rows([1, 2], "a", 1), opts)
    before = sorted((tmp_path / "t").rglob("*"))
    with pytest.raises(WriteError, match=r"do not look incoming keys up.*hoodie.sql's INSERT INTO.*Nothing was written"):
        hoodie.write_table(str(base), rows([2, 3], "b", 2),
                           {**opts, "hoodie.datasource.write.operation": operation, **option})
    assert sorted((tmp_path / "t").rglob("*")) == before
    hoodie.write_table(str(base), rows([2, 3], "b", 2),
                       {**opts, "hoodie.datasource.write.operation": "upsert", **option})
    hoodie.write_table(str(base), rows([4], "c", 3), {**opts, "hoodie.datasource.insert.dup.policy": "none"})
    assert table_rows(hoodie.read_table(str(base))) == [(1, "a1", "2024-05-02", 1), (2, "b2", "2024-05-03", 2),
                                                        (3, "b3", "2024-05-01", 2), (4, "c4", "2024-05-02", 3)]
