"""Partition pruning never drops a row (issue 12, item 1).

The oracle is the unpruned read filtered in Python: a pruned read (``read_table(filters=...)``)
must return exactly those rows, for every operator at its boundary, on typed partition columns
(bool, integers, float, double, decimal, date, timestamps, strings), url-encoded and hive-style
folders and the default partition. Pruning must also prune: a partition holding no passing row is
not read unless its folder name is ambiguous (the default partition of a string column, a double
folder that a float column widened to double may have written).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from hoodie.format.keys.paths import PartitionPathError
from hoodie.format.keys.generators import SimpleKeyGenerator
from hoodie.format.slice.pruning import candidates, prune_partitions
from hoodie.format.slice.reader import plan_read
from hoodie.format.table import HoodieTable, create_table
from tests.helpers import examples

OPS = ["=", "!=", "<", "<=", ">", ">=", "in", "not in"]
UTC = dt.timezone.utc
URLENCODE = "hoodie.datasource.write.partitionpath.urlencode"
HIVE = "hoodie.datasource.write.hive_style_partitioning"


def passes(v: Any, op: str, x: Any, typ: pa.DataType) -> bool:
    """The row filter's semantics in plain Python: the filter value is cast to the column type
    first; a null row value fails every comparison, ``in`` matches null only to a null in the
    list, and ``not in`` is its negation (Arrow's ``is_in``)."""
    if op in ("in", "not in"):
        xs = [pa.scalar(e).cast(typ).as_py() if e is not None else None for e in x]
        hit = any((v is None and e is None) or (v is not None and e is not None and v == e) for e in xs)
        return hit if op == "in" else not hit
    if v is None or x is None:
        return False
    x = pa.scalar(x).cast(typ).as_py()
    return {"=": v == x, "!=": v != x, "<": v < x, "<=": v <= x, ">": v > x, ">=": v >= x}[op]


def write_values(path: str, typ: pa.DataType, values: list[Any], **extra: str) -> None:
    opts = {"hoodie.table.name": "prune_t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert",
            **extra}
    write_arrow(path, pa.table({"k": [f"k{i}" for i in range(len(values))], "p": pa.array(values, typ)}), opts)


def check(path: str, typ: pa.DataType, filters: list[tuple[str, str, Any]]) -> None:
    """Pruned read == unpruned read filtered in Python; the plan skips what it provably can."""
    everything = hoodie.read_table(path, columns=["k", "p", "_hoodie_partition_path"]).to_pylist()
    want = {r["k"] for r in everything if all(passes(r["p"], op, x, typ) for _, op, x in filters)}
    got = hoodie.read_table(path, columns=["k"], filters=filters).column("k").to_pylist()
    assert sorted(got) == sorted(want), f"filters {filters}"
    table = HoodieTable(path)
    planned = {sl.partition for sl in plan_read(table, filters=filters).slices}
    needed = {r["_hoodie_partition_path"] for r in everything if r["k"] in want}
    assert needed <= planned
    for part in planned - needed:  # read without need: only if its folder name is ambiguous
        seg = part.split("=", 1)[1] if table.hive_style else part
        seg = None if seg == "__HIVE_DEFAULT_PARTITION__" else seg
        cands = candidates(seg, typ, table.url_encode)
        assert cands is None or len(cands) > 1, f"{part} read for {filters} though it holds one value"


def ts(s: str, tz: Any = UTC) -> dt.datetime:
    return dt.datetime.fromisoformat(s).replace(tzinfo=tz)


# name: (type, values written (one row each), probe values for the filters, write options)
CASES: dict[str, tuple[pa.DataType, list[Any], list[Any], dict[str, str]]] = {
    "int": (pa.int64(), [-1, 0, 7, 10, None], [0, 7, 9], {}),
    "int8_hive_urlencode": (pa.int8(), [-128, 0, 127, None], [0, 127], {HIVE: "true", URLENCODE: "true"}),
    "bool": (pa.bool_(), [False, True, None], [False, True], {}),
    "double": (pa.float64(), [-0.5, 0.1, 1e300, -0.0, math.inf, None], [0.1, -0.0, 1e300], {}),
    "float": (pa.float32(), [-0.5, 0.1, 3.5, None], [0.1, 3.5], {}),
    "decimal": (pa.decimal128(5, 2), [Decimal("-1.00"), Decimal("1.10"), Decimal("10.05"), None],
                [Decimal("1.1"), Decimal("10.05")], {}),
    "date": (pa.date32(), [dt.date(1969, 12, 31), dt.date(2024, 1, 31), dt.date(2024, 2, 1), None],
             [dt.date(2024, 1, 31)], {}),
    "timestamp": (pa.timestamp("us", "UTC"), [ts("2024-01-01T00:00:00"), ts("2024-01-01T00:00:00.000001"),
                                              ts("1969-12-31T23:59:59.999999"), None],
                  [ts("2024-01-01T00:00:00")], {}),
    "timestamp_ntz": (pa.timestamp("us"), [ts("2024-01-01T00:00:00", None), ts("2024-06-01T12:00:00", None), None],
                      [ts("2024-01-01T00:00:00", None)], {}),
    "timestamp_ms": (pa.timestamp("ms"), [ts("2024-01-01T00:00:00.001", None), ts("2024-01-01T00:00:00.002", None)],
                     [ts("2024-01-01T00:00:00.001", None)], {}),
    "string": (pa.string(), ["", "10", "9", "a/b", ".NET", "é", "__HIVE_DEFAULT_PARTITION__", None],
               ["9", "", "10", "a/b"], {}),
    "string_urlencode": (pa.string(), ["2024/01/31", "2024/1/31", "a%b", "x/../y", "%41", "", None],
                         ["2024/01/31", "a%b", "%41"], {URLENCODE: "true"}),
    "string_hive": (pa.string(), ["", "10", "9", "p=q", None], ["9", "p=q"], {HIVE: "true"}),
}


@pytest.fixture(scope="module")
def case_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("prune")
    out = {}
    for name, (typ, values, _, extra) in CASES.items():
        out[name] = str(root / name)
        write_values(out[name], typ, values, **extra)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_operator_at_its_boundary_keeps_every_passing_row(case_tables: dict[str, str], case: str) -> None:
    """Each operator with each probe value (a value that is a partition, or sits between two), and
    ``in``/``not in`` with one and two values: the pruned read equals the oracle. A mutant that turns
    ``<=`` into ``<`` (or prunes on the folder's string) fails here."""
    typ, values, probes, _ = CASES[case]
    path = case_tables[case]
    non_null = [v for v in values if v is not None]
    for x in probes:
        for op in OPS:
            if op in ("in", "not in"):
                check(path, typ, [("p", op, [x])])
                check(path, typ, [("p", op, [x, non_null[0]])])
            else:
                check(path, typ, [("p", op, x)])
    # Two filters on the column (a range), AND-ed.
    check(path, typ, [("p", ">=", probes[0]), ("p", "<=", probes[-1])])


def test_the_issue_examples(tmp_path: Path) -> None:
    """The cases of the report: url-encoded '2024/01/31', bool, timestamp, Decimal('1.1') against the
    folder '1.10', the empty string, and p < '9' keeping '10'."""
    cases: list[tuple[pa.DataType, list[Any], tuple[str, str, Any], dict[str, str]]] = [
        (pa.string(), ["2024/01/31"], ("p", "=", "2024/01/31"), {URLENCODE: "true"}),
        (pa.bool_(), [True, False], ("p", "=", True), {}),
        (pa.timestamp("us", "UTC"), [ts("2024-01-01T00:00:00")], ("p", "=", ts("2024-01-01T00:00:00")), {}),
        (pa.decimal128(5, 2), [Decimal("1.10")], ("p", "=", Decimal("1.1")), {}),
        (pa.string(), [""], ("p", "=", ""), {}),
        (pa.string(), ["10"], ("p", "<", "9"), {}),
    ]
    for i, (typ, values, flt, extra) in enumerate(cases):
        path = str(tmp_path / f"t{i}")
        write_values(path, typ, values, **extra)
        assert hoodie.read_table(path, filters=[flt]).num_rows == 1, flt


def test_timestamp_formatted_partitions_are_never_pruned_on_the_value(tmp_path: Path) -> None:
    """A TimestampBasedKeyGenerator folder ('20240131') is a date format of the value, not the
    value: filters on the column keep every partition (a numeric comparison would drop them)."""
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd"}
    ms = 1706659200000  # 2024-01-31
    write_arrow(path, pa.table({"k": ["a", "b"], "p": pa.array([ms, ms + 86_400_000], pa.int64())}), opts)
    assert hoodie.read_table(path, filters=[("p", "=", ms)]).column("k").to_pylist() == ["a"]
    assert hoodie.read_table(path, filters=[("p", ">", 20240131)]).num_rows == 2


def test_folder_names_decode_only_to_values_that_render_to_them() -> None:
    """A folder decodes to the values whose rendering is exactly its name; anything else (a name
    the key generator never writes for the type, NaN) is undecidable and keeps the partition."""
    assert candidates(None, pa.string(), False) == [None, "", "__HIVE_DEFAULT_PARTITION__"]
    assert candidates(None, pa.int64(), False) == [None]
    assert candidates("a%2Fb", pa.string(), True) == ["a/b"]
    assert candidates("a%2Fb", pa.string(), False) == ["a%2Fb"]
    assert candidates("a%ZZ/b", pa.string(), True) is None  # url encoding never writes '/' or a bare '%'
    assert candidates("1.10", pa.decimal128(5, 2), False) == [Decimal("1.10")]
    assert candidates("1.1", pa.decimal128(5, 2), False) is None
    assert candidates("01", pa.int32(), False) is None and candidates("-7", pa.int32(), False) == [-7]
    assert candidates("128", pa.int8(), False) is None
    assert candidates("true", pa.bool_(), False) == [True] and candidates("True", pa.bool_(), False) is None
    assert candidates("NaN", pa.float64(), False) is None
    assert candidates("1.0E7", pa.float64(), False) == [1e7, 1e7]  # as a double, and as a widened float
    assert candidates("10000000.0", pa.float64(), False) is None  # Java writes 1.0E7
    assert candidates("0.1", pa.float32(), False) == [pa.scalar(0.1, pa.float32()).as_py()]
    assert candidates("2024-01-31", pa.date32(), False) == [dt.date(2024, 1, 31)]
    assert candidates("2024-1-31", pa.date32(), False) is None
    assert candidates("1704067200000001", pa.timestamp("ms"), False) is None  # not whole milliseconds
    assert candidates("1704067200001000", pa.timestamp("ms"), False) == [dt.datetime(2024, 1, 1, 0, 0, 0, 1000)]
    assert candidates("2024-01-01 00:00:00.0", pa.timestamp("us", "UTC"), False) is None  # consistent logical ts
    assert candidates("x", pa.binary(), False) is None


def test_float_partition_widened_to_double_is_kept(tmp_path: Path) -> None:
    """A float column widened to double keeps its folders: '0.1' was written from float 0.1, which
    reads as the double 0.1 where a merged read widens it through its decimal text (as Hudi and
    hudi-rs do) and as 0.10000000149011612 where a base file is read as stored; pruning keeps the
    folder for both values."""
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_arrow(path, pa.table({"k": ["a"], "p": pa.array([0.1], pa.float32())}),
                {**opts, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, pa.table({"k": ["b"], "p": pa.array([0.5], pa.float64())}),
                {**opts, "hoodie.datasource.write.operation": "upsert"})
    assert HoodieTable(path).arrow_schema().field("p").type == pa.float64()
    for flt in [("p", "=", 0.10000000149011612), ("p", ">", 0.1), ("p", "!=", 0.1), ("p", "<", 0.1000001)]:
        check(path, pa.float64(), [flt])
    for flt in [("p", "=", 0.1), ("p", "<=", 0.1)]:
        check(path, pa.float64(), [flt])
    assert hoodie.read_table(path, filters=[("p", "=", 0.1)]).column("k").to_pylist() == ["a"]


# -- property-based: random typed values, random filters ----------------------------------------

TYPED = {
    "int": (pa.int32(), st.integers(-3, 3) | st.sampled_from([-2**31, 2**31 - 1])),
    "bool": (pa.bool_(), st.booleans()),
    "double": (pa.float64(), st.sampled_from([0.0, -0.0, 0.1, 0.5, 1e300, -1e-300, 1e7, math.inf, -math.inf, math.nan])
               | st.floats(-10, 10)),
    "float": (pa.float32(), st.floats(-4, 4, width=32) | st.sampled_from([0.1, math.inf, math.nan])),
    "decimal": (pa.decimal128(6, 2), st.decimals(min_value=-9999, max_value=9999, places=2)),
    "date": (pa.date32(), st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))),
    "timestamp": (pa.timestamp("us", "UTC"), st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2100, 1, 1),
                                                           timezones=st.just(UTC))),
    "string": (pa.string(), st.text(st.sampled_from(["a", "b", "1", "9", ".", "%", "/", "é", " ", "="]), max_size=4)),
}


@st.composite
def typed_case(draw: st.DrawFn) -> tuple[str, pa.DataType, list[Any], list[tuple[str, str, Any]], bool, bool]:
    name = draw(st.sampled_from(sorted(TYPED)))
    typ, values = TYPED[name]
    pool = draw(st.lists(values, min_size=1, max_size=5))
    rows = draw(st.lists(st.sampled_from(pool) | st.none(), min_size=1, max_size=8))
    probe = st.sampled_from(pool) | values
    flt = draw(st.lists(st.tuples(st.just("p"), st.sampled_from(OPS), probe), min_size=1, max_size=2))
    flt = [(c, op, [x] if op in ("in", "not in") else x) for c, op, x in flt]
    return name, typ, rows, flt, draw(st.booleans()), draw(st.booleans())


@pytest.fixture(scope="module")
def naming_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[bool, bool], HoodieTable]:
    """Empty tables, one per folder naming (hive style, url encoding): pruning reads only their
    properties."""
    root = tmp_path_factory.mktemp("naming")
    return {(hive, enc): create_table(str(root / f"{hive}_{enc}"), table_name="n", record_key_fields=["k"],
                                      partition_fields=["p"], hive_style=hive, url_encode=enc)
            for hive in (False, True) for enc in (False, True)}


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(typed_case())
def test_pruning_keeps_every_folder_a_passing_value_renders_to(naming_tables: dict, case: tuple) -> None:
    """Over the key generator's own folder names (no files written, so many examples): a folder is
    pruned only if no value rendered to it passes the filters."""
    _, typ, rows, flt, hive, enc = case
    kg = SimpleKeyGenerator("k", "p", hive, enc)
    data = pa.table({"k": [str(i) for i in range(len(rows))], "p": pa.array(rows, typ)})
    folders = kg.partition_paths(data).to_pylist()
    kept = set(prune_partitions(naming_tables[(hive, enc)], pa.schema([pa.field("p", typ)]), sorted(set(folders)), flt))
    for v, folder in zip(data.column("p").to_pylist(), folders):  # the values as stored (float32...)
        if all(passes(v, op, x, typ) for _, op, x in flt):
            assert folder in kept, f"{folder!r} (value {v!r}) pruned by {flt}"


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(typed_case())
def test_pruned_read_equals_unpruned_read_filtered_in_python(tmp_path_factory: pytest.TempPathFactory,
                                                             case: tuple) -> None:
    """End to end: random typed partition values written to a table, random filters; the pruned
    read equals the oracle."""
    _, typ, rows, flt, hive, enc = case
    path = str(tmp_path_factory.mktemp("prop") / "t")
    try:
        write_values(path, typ, rows, **{HIVE: str(hive).lower(), URLENCODE: str(enc).lower()})
    except PartitionPathError:
        reject()  # values that cannot be folders ('..', 'a/' ...): refused, tested elsewhere
    check(path, typ, flt)
