"""Log-file delete blocks: every ordering-value wrapper round-trips against a reference payload, the
natural-order mask, the type mapping and its errors, Kryo (version 1/2) blocks refused, malformed payloads."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import struct
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.format.log import layout
from hoodie.format.avro.schema import java_decimal_bytes
from hoodie.format.log.logformat import (
    DELETE_RECORD_LIST_SCHEMA, ORDERING_WRAPPERS, BlockType, LogBlock, LogFormatError, encode_block, encode_delete_block, read_log_file, commit_ordering_natural,
)
from tests.helpers import examples
from tests.format.logformat_support import TRIPS_SCHEMA, _write


# ----------------------------------------------------------------------------------------------
# delete blocks
# ----------------------------------------------------------------------------------------------
def _delete_block(storage_dir: Path, keys: pa.Table) -> LogBlock:
    enc = encode_delete_block(keys, instant="20250101000000000", avro_schema=TRIPS_SCHEMA)
    (block,) = list(read_log_file(_write(storage_dir, "d", enc), "d"))
    assert block.block_type == BlockType.DELETE
    assert block.header == {0: "20250101000000000", 2: json.dumps(TRIPS_SCHEMA, separators=(",", ":"))}
    return block


_PHYSICAL_DELETE_SCHEMA = fastavro.parse_schema(layout._strip_logical_types(DELETE_RECORD_LIST_SCHEMA))


def _reference_payload(keys: list, parts: list, branch: int, values: list) -> bytes:
    """HoodieDeleteRecordList encoded by fastavro from the Java schema (decimals Java-style)."""
    records = []
    for k, p, v in zip(keys, parts, values):
        if v is None:
            ordering = None
        else:
            name = ORDERING_WRAPPERS[branch - 1][0]
            if branch == 9:
                v = java_decimal_bytes(int(v.scaleb(15, context=decimal.Context(prec=100))))
            elif branch == 8:
                v = (v - dt.date(1970, 1, 1)).days
            elif branch == 10:
                v = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
            elif branch == 11:
                v = (v - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1)
            ordering = (f"org.apache.hudi.avro.model.{name}", {"value": v})
        records.append({"recordKey": k, "partitionPath": p, "orderingVal": ordering})
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _PHYSICAL_DELETE_SCHEMA, {"deleteRecordList": records})
    return buf.getvalue()


_ORDERING_STRATEGIES = {
    1: (pa.bool_(), st.booleans()),
    2: (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    3: (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    4: (pa.float32(), st.floats(width=32, allow_nan=False)),
    5: (pa.float64(), st.floats(allow_nan=False)),
    6: (pa.binary(), st.binary(max_size=10)),
    7: (pa.string(), st.text(max_size=10)),
    8: (pa.date32(), st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))),
    9: (pa.decimal128(30, 15), st.integers(-(10**30) + 1, 10**30 - 1).map(
        lambda i: Decimal(i).scaleb(-15, context=decimal.Context(prec=100)))),
    10: (pa.time64("us"), st.times()),
    11: (pa.timestamp("us", tz="UTC"), st.datetimes(dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30)).map(
        lambda d: d.replace(tzinfo=dt.timezone.utc))),
}


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), branch=st.sampled_from(sorted(_ORDERING_STRATEGIES)))
def test_delete_block_round_trip_each_wrapper(tmp_path: Path, data: st.DataObject, branch: int) -> None:
    arrow_t, values_st = _ORDERING_STRATEGIES[branch]
    n = data.draw(st.integers(0, 5))
    keys = data.draw(st.lists(st.one_of(st.none(), st.text(max_size=8)), min_size=n, max_size=n))
    parts = data.draw(st.lists(st.one_of(st.none(), st.text(max_size=8)), min_size=n, max_size=n))
    values = data.draw(st.lists(st.one_of(st.none(), values_st), min_size=n, max_size=n))
    table = pa.table({"record_key": pa.array(keys, pa.string()), "partition_path": pa.array(parts, pa.string()),
                      "ordering_value": pa.array(values, arrow_t)})
    block = _delete_block(tmp_path / f"b{branch}", table)
    content = block.read_content()
    assert content[8:] == _reference_payload(keys, parts, branch, values)
    out = block.delete_records()
    assert out.column("record_key").to_pylist() == keys
    assert out.column("partition_path").to_pylist() == parts
    assert out.column("ordering_type").to_pylist() == [0 if v is None else branch for v in values]
    if any(v is not None for v in values):
        assert out.column("ordering_value").type == ORDERING_WRAPPERS[branch - 1][2]
        assert out.column("ordering_value").to_pylist() == values
    else:
        assert out.column("ordering_value").null_count == n


def test_delete_block_without_ordering_writes_int_wrapper_zero(tmp_path: Path) -> None:
    block = _delete_block(tmp_path, pa.table({"record_key": ["a", "b"], "partition_path": ["p", ""]}))
    out = block.delete_records()
    assert out.column("ordering_type").to_pylist() == [2, 2]
    assert out.column("ordering_value").to_pylist() == [0, 0]
    assert out.column("ordering_value").type == pa.int32()
    # union index 2 (IntWrapper) zig-zag encoded as 0x04, value 0
    assert block.read_content()[8:] == b"\x04" + b"\x02\x02a\x02\x02p\x04\x00" + b"\x02\x02b\x02\x00\x04\x00" + b"\x00"


def test_commit_ordering_natural_mask(tmp_path: Path) -> None:
    sql_delete = _delete_block(tmp_path / "a", pa.table({"record_key": ["a", "b"], "partition_path": ["p", "p"]}))
    assert commit_ordering_natural(sql_delete.delete_records()).to_pylist() == [True, True]
    ints = _delete_block(tmp_path / "b", pa.table({"record_key": ["a", "b", "c"], "partition_path": ["p"] * 3,
                                                  "ordering_value": pa.array([0, 3, None], pa.int32())}))
    assert commit_ordering_natural(ints.delete_records()).to_pylist() == [True, False, False]
    longs = _delete_block(tmp_path / "c", pa.table({"record_key": ["a"], "partition_path": ["p"],
                                                   "ordering_value": pa.array([0], pa.int64())}))
    assert commit_ordering_natural(longs.delete_records()).to_pylist() == [False]  # Long 0 != Integer 0


@pytest.mark.parametrize("arrow_value, branch, expected", [
    (pa.array([7], pa.int16()), 2, 7),
    (pa.array([7], pa.uint32()), 3, 7),
    (pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("ms")), 11,
     dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)),
    (pa.array([Decimal("1.5")], pa.decimal128(5, 1)), 9, Decimal("1.500000000000000")),
    (pa.array(["x"], pa.large_string()), 7, "x"),
    (pa.array([None], pa.null()), 0, None),
])
def test_delete_ordering_type_mapping(tmp_path: Path, arrow_value: pa.Array, branch: int, expected) -> None:
    block = _delete_block(tmp_path, pa.table({"record_key": ["a"], "partition_path": ["p"],
                                              "ordering_value": arrow_value}))
    out = block.delete_records()
    assert out.column("ordering_type").to_pylist() == [branch]
    assert out.column("ordering_value").to_pylist() == [expected]


def test_delete_ordering_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no Hudi ordering value wrapper"):
        encode_delete_block(pa.table({"record_key": ["a"], "partition_path": ["p"],
                                      "ordering_value": pa.array([[1]])}), instant="1", avro_schema=TRIPS_SCHEMA)
    with pytest.raises(ValueError, match="DecimalWrapper"):
        encode_delete_block(pa.table({"record_key": ["a"], "partition_path": ["p"],
                                      "ordering_value": pa.array([Decimal("1E+20")], pa.decimal128(38, 0))}),
                            instant="1", avro_schema=TRIPS_SCHEMA)
    with pytest.raises(ValueError, match="partition_path"):
        encode_delete_block(pa.table({"record_key": ["a"]}), instant="1", avro_schema=TRIPS_SCHEMA)


def _delete_block_with_payload(tmp_path: Path, version: int, payload: bytes) -> LogBlock:
    content = struct.pack(">ii", version, len(payload)) + payload
    enc = encode_block(BlockType.DELETE, {0: "1", 2: json.dumps(TRIPS_SCHEMA)}, content)
    (block,) = list(read_log_file(_write(tmp_path, "del.log", enc), "del.log"))
    return block


@pytest.mark.parametrize("version", [1, 2])
def test_kryo_delete_blocks_are_rejected_clearly(tmp_path: Path, version: int) -> None:
    block = _delete_block_with_payload(tmp_path, version, b"\x01\x00kryo")
    with pytest.raises(LogFormatError, match=rf"del\.log.*version {version}.*Kryo.*0\.13.*unsupported"):
        block.delete_records()


def test_mixed_ordering_types_raise_naming_the_file(tmp_path: Path) -> None:
    records = {"deleteRecordList": [
        {"recordKey": "a", "partitionPath": "p", "orderingVal": ("org.apache.hudi.avro.model.IntWrapper", {"value": 0})},
        {"recordKey": "b", "partitionPath": "p", "orderingVal": ("org.apache.hudi.avro.model.LongWrapper", {"value": 5})},
    ]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _PHYSICAL_DELETE_SCHEMA, records)
    block = _delete_block_with_payload(tmp_path, 3, buf.getvalue())
    with pytest.raises(LogFormatError, match=r"del\.log.*mixes ordering value types.*IntWrapper.*LongWrapper"):
        block.delete_records()


def test_malformed_delete_payload(tmp_path: Path) -> None:
    block = _delete_block_with_payload(tmp_path, 3, b"\x04\x02")
    with pytest.raises(LogFormatError, match="malformed delete payload"):
        block.delete_records()
