"""Data skipping (hoodie.enable.data.skipping) never changes a read's rows.

Random tables (inserts, upserts into log files, deletes, a compaction, a clean; table versions 6 and
9; COW and MOR) with the column_stats partition, and random filters on every column type: the read
with skipping equals the read without, and the files skipped are only ever slices every file of which
the statistics prove empty of matches. Unit tests pin each operator's rule and that a point filter on a
non-partition column skips files.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from hoodie.format.metadata.column_stats import ColumnStats
from hoodie.format.slice.reader import plan_read
from hoodie.format.slice.skipping import file_might_match
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction, schedule_compaction
from tests.helpers import examples

OPTS = {"hoodie.table.name": "ds", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.clean.automatic": "false", "hoodie.parquet.small.file.limit": "0"}
ON = {"hoodie.enable.data.skipping": "true", "hoodie.metadata.enable": "true"}
OFF = {"hoodie.enable.data.skipping": "false", "hoodie.metadata.enable": "true"}

ROW = st.fixed_dictionaries({
    "id": st.integers(0, 30), "p": st.sampled_from(["a", "b"]), "ts": st.integers(0, 5),
    "i": st.one_of(st.none(), st.integers(-50, 50)),
    "s": st.one_of(st.none(), st.text("abcé", max_size=3)),
    "x": st.one_of(st.none(), st.floats(-10, 10, allow_nan=False), st.just(-0.0)),
    "d": st.one_of(st.none(), st.dates(dt.date(2020, 1, 1), dt.date(2020, 3, 1))),
    "m": st.one_of(st.none(), st.decimals(-100, 100, places=2, allow_nan=False, allow_infinity=False)),
})
SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.string()), ("ts", pa.int64()), ("i", pa.int32()), ("s", pa.string()),
                    ("x", pa.float64()), ("d", pa.date32()), ("m", pa.decimal128(10, 2))])
VALUES = {"id": st.integers(-1, 31), "i": st.integers(-55, 55), "s": st.text("abcé", max_size=3),
          "x": st.floats(-11, 11, allow_nan=False), "d": st.dates(dt.date(2019, 12, 1), dt.date(2020, 4, 1)),
          "m": st.decimals(-101, 101, places=2, allow_nan=False, allow_infinity=False), "ts": st.integers(-1, 6),
          "p": st.sampled_from(["a", "b", "c"])}
OPS = ["=", "!=", "<", "<=", ">", ">=", "in", "not in"]


@st.composite
def a_filter(draw):
    col = draw(st.sampled_from(sorted(VALUES)))
    op = draw(st.sampled_from(OPS))
    if op in ("in", "not in"):
        return (col, op, draw(st.lists(VALUES[col], min_size=1, max_size=3)))
    return (col, op, draw(VALUES[col]))


def _table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _sorted(t: pa.Table) -> list:
    return sorted(map(str, t.drop_columns([c for c in t.column_names if c.startswith("_hoodie_")]).to_pylist()))


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(ROW, min_size=1, max_size=6), min_size=1, max_size=4),
       deletes=st.lists(st.integers(0, 30), max_size=3),
       version=st.sampled_from(["6", "9"]), table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
       compact=st.booleans(), filters=st.lists(st.lists(a_filter(), min_size=1, max_size=2), min_size=1, max_size=6))
def test_reads_with_skipping_equal_reads_without(tmp_path_factory, batches, deletes, version, table_type, compact,
                                                  filters):
    path = str(tmp_path_factory.mktemp("ds") / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": version}
    for n, b in enumerate(batches):
        write_arrow(path, _table(b), {**opts, "hoodie.datasource.write.operation": "insert" if n == 0 else "upsert"})
    if deletes:
        gone = [r for r in (row for b in batches for row in b) if r["id"] in set(deletes)][:3]
        if gone:
            write_arrow(path, _table(gone), {**opts, "hoodie.datasource.write.operation": "delete"})
    if compact and table_type == "MERGE_ON_READ":
        inst = schedule_compaction(path, check_trigger=False)
        if inst:
            run_compaction(path, inst)
    table = HoodieTable(path)
    for flt in filters:
        try:
            want = hoodie.read_table(path, filters=flt, options=OFF)
        except Exception as e:  # a filter value that does not cast is refused either way
            with pytest.raises(type(e)):
                hoodie.read_table(path, filters=flt, options=ON)
            continue
        got = hoodie.read_table(path, filters=flt, options=ON)
        assert _sorted(got) == _sorted(want), flt
        assert len(plan_read(table, filters=flt, options=ON).slices) <= len(plan_read(table, filters=flt,
                                                                                     options=OFF).slices)


def _cs(lo, hi, values=3, nulls=0, wrapper="LongWrapper"):
    return ColumnStats("f", "c", None if lo is None else (wrapper, lo), None if hi is None else (wrapper, hi),
                       values, nulls, 0, 0)


@pytest.mark.parametrize("op, val, might", [
    ("=", 5, True), ("=", 11, False), ("=", 0, False), ("<", 1, False), ("<", 2, True), ("<=", 1, True),
    (">", 10, False), (">", 9, True), (">=", 10, True), ("in", [0, 11], False), ("in", [0, 3], True),
    ("!=", 5, True), ("not in", [1, 10], True),
])
def test_operator_rules(op, val, might):
    assert file_might_match(_cs(1, 10), op, val, pa.int64()) is might


def test_equal_bounds_and_nulls():
    one = _cs(4, 4)
    assert not file_might_match(one, "!=", 4, pa.int64())
    assert not file_might_match(one, "not in", [4], pa.int64())
    assert file_might_match(_cs(4, 4, nulls=1), "not in", [4], pa.int64())  # a null passes `not in`
    assert not file_might_match(_cs(None, None, values=2, nulls=2), "=", 4, pa.int64())  # all null
    assert file_might_match(_cs(None, None, values=2, nulls=1), "=", 4, pa.int64())  # values without bounds
    assert file_might_match(None, "=", 4, pa.int64())  # no statistics
    assert file_might_match(_cs("a", "b", wrapper="StringWrapper"), "=", 4, pa.int64())  # types disagree: kept
    # timestamps without the unit recorded (table versions 6/8) are never decided
    assert file_might_match(_cs(1, 2), "=", dt.datetime(2000, 1, 1), pa.timestamp("us"))


def test_point_filter_on_a_non_partition_column_skips_files(tmp_path: Path):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    for k in range(6):  # six files in one partition, disjoint id ranges
        rows = [{"id": 10 * k + j, "p": "a", "ts": 1, "i": k, "s": None, "x": None, "d": None, "m": None}
                for j in range(5)]
        write_arrow(path, _table(rows), {**opts, "hoodie.datasource.write.operation": "insert"})
    table = HoodieTable(path)
    flt = [("id", "=", 23)]
    assert len(plan_read(table, filters=flt, options=OFF).slices) == 6
    assert len(plan_read(table, filters=flt, options=ON).slices) == 1
    assert hoodie.read_table(path, filters=flt, options=ON).column("id").to_pylist() == [23]
    # table version 6 reads skip only when asked (Hudi 0.14/0.15's readers' default)
    assert len(plan_read(table, filters=flt, options={"hoodie.metadata.enable": "true"}).slices) == 6


def _cs_zips():
    import zipfile

    from tests.fixture_paths import V89_DIR

    out = []
    for z in sorted(V89_DIR.glob("*.zip")):
        with zipfile.ZipFile(z) as zf:
            if any("/.hoodie/metadata/column_stats/" in m for m in zf.namelist()):
                out.append(z)
    return out


@pytest.mark.parametrize("z", _cs_zips(), ids=lambda z: z.stem)
def test_java_written_statistics_skip_without_changing_reads(z: Path, tmp_path: Path):
    """On the Java-written v8/v9 tables, filters on every column's values read the same rows with and
    without skipping (asked for: it is off by default), and something is skipped; unasked, nothing is."""
    from tests.format.test_metadata_fixtures import _table

    path = str(_table(z, tmp_path))
    table = HoodieTable(path)
    rows = hoodie.read_table(path, options=OFF)
    skipped = 0
    for name in rows.column_names:
        typ = rows.schema.field(name).type
        if not (pa.types.is_integer(typ) or pa.types.is_string(typ) or pa.types.is_floating(typ)
                or pa.types.is_date32(typ) or pa.types.is_decimal(typ) or pa.types.is_timestamp(typ)):
            continue
        vals = [v for v in rows.column(name).to_pylist() if v is not None]
        for v in sorted(set(vals))[:1]:  # the smallest: "<" matches nothing
            for op in ("=", "<"):
                flt = [(name, op, v)]
                want = hoodie.read_table(path, filters=flt, options=OFF)
                assert _sorted(hoodie.read_table(path, filters=flt, options=ON)) == _sorted(want), flt
                skipped += len(plan_read(table, filters=flt, options=OFF).slices) - len(
                    plan_read(table, filters=flt, options=ON).slices)
                assert len(plan_read(table, filters=flt).slices) == len(plan_read(table, filters=flt, options=OFF).slices)
    assert skipped > 0


def test_skipping_asked_for_without_statistics_warns_and_skips_nothing(tmp_path: Path):
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.metadata.index.column.stats.enable": "false", "hoodie.datasource.write.table.type":
            "COPY_ON_WRITE"}
    for k in range(2):
        rows = [{"id": 10 * k + j, "p": "a", "ts": 1, "i": k, "s": None, "x": None, "d": None, "m": None}
                for j in range(3)]
        write_arrow(path, _table(rows), {**opts, "hoodie.datasource.write.operation": "insert"})
    with pytest.warns(UserWarning, match="no file is skipped, the table's metadata table has no column_stats"):
        plan = plan_read(HoodieTable(path), filters=[("id", "=", 1)], options=ON)
    assert len(plan.slices) == 2
    assert len(plan_read(HoodieTable(path), filters=[("id", "=", 1)]).slices) == 2  # default: off, no warning
