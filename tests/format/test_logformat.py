"""Hudi log files: fixtures parsed and re-encoded byte for byte, corruption handling, streaming, event
time in the schema header, and hudi-rs accepting what we write (delete blocks:
test_logformat_delete_blocks.py)."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import struct
import warnings
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.format.log import logformat as lf
from hoodie.format.avro.schema import avro_to_arrow_schema
from hoodie.format.log.logformat import (
    MAGIC, BlockType, CorruptLogBlockWarning, HeaderKey,
    LogBlock, LogFormatError, encode_avro_data_block, encode_block, encode_command_block,
    encode_delete_block, encode_parquet_data_block, event_time_from_schema, read_log_file, with_event_time,
    write_log_file,
)
from hoodie.format.storage import Storage
from tests.conftest import fixture_table_path
from tests.format.logformat_support import TRIPS_SCHEMA, _tmp_storage, _write


QUICKSTART = "quickstart_trips_table_mor_avro_v6_trips_8i1u"


ROLLBACK = "sample_table_mor_parquet_v6_nonpartitioned_rollback"


SIMPLEKEY = "sample_table_mor_parquet_v6_simplekeygen_nonhivestyle"


MOR_FIXTURES = [QUICKSTART, ROLLBACK, SIMPLEKEY]


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
def _log_files(table_dir: Path) -> list[str]:
    st_ = Storage(str(table_dir))
    return sorted(f.path for f in st_.walk_files() if ".log." in f.name)


def _blocks(table_dir: Path, rel: str) -> list[LogBlock]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptLogBlockWarning)
        return list(read_log_file(Storage(str(table_dir)), rel))


def _gold(table_dir: Path) -> pa.Table:
    return pq.read_table(next((table_dir.parent / "gold_data").glob("*.parquet")))


def _normalised_rows(table: pa.Table) -> list[dict]:
    """Rows with timestamps as naive microseconds (gold data is Spark's naive ns)."""
    cols = []
    for f in table.schema:
        col = table.column(f.name)
        if pa.types.is_timestamp(f.type):
            col = col.cast(pa.timestamp("us", tz=f.type.tz)).cast(pa.timestamp("us"))
        cols.append(col)
    return pa.table(cols, names=table.column_names).to_pylist()


def _small_avro_block(instant: str = "20250101000000000", n: int = 3, rider: str = "r") -> bytes:
    table = pa.table({
        "_hoodie_record_key": [f"k{i}" for i in range(n)],
        "ts": pa.array(range(n), pa.int64()),
        "rider": [f"{rider}{i}" for i in range(n)],
    })
    return encode_avro_data_block(table, instant=instant, avro_schema=TRIPS_SCHEMA)


def _completed_deltacommits(table_dir: Path) -> dict[str, dict]:
    return {p.name.split(".")[0]: json.loads(p.read_text())
            for p in (table_dir / ".hoodie").glob("*.deltacommit")}


def _rollbacks(table_dir: Path) -> dict[str, dict]:
    out = {}
    for p in (table_dir / ".hoodie").glob("*.rollback"):
        with open(p, "rb") as f:
            out[p.name.split(".")[0]] = next(iter(fastavro.reader(f)))
    return out


# ----------------------------------------------------------------------------------------------
# fixtures: structure and headers
# ----------------------------------------------------------------------------------------------
EXPECTED_TYPES = {
    QUICKSTART: [[BlockType.AVRO_DATA]],
    ROLLBACK: [[BlockType.PARQUET_DATA], [BlockType.COMMAND], [BlockType.PARQUET_DATA]],
    SIMPLEKEY: [[BlockType.PARQUET_DATA]],
}


@pytest.mark.parametrize("stem", MOR_FIXTURES)
def test_fixture_block_types_and_headers_match_timeline(fixtures_root: Path, stem: str) -> None:
    table_dir = fixture_table_path(fixtures_root, stem)
    logs = _log_files(table_dir)
    deltas = _completed_deltacommits(table_dir)
    rollbacks = _rollbacks(table_dir)
    rolled_back = {c for r in rollbacks.values() for c in r["commitsRollback"]}
    types = []
    for rel in logs:
        blocks = _blocks(table_dir, rel)
        types.append([b.block_type for b in blocks])
        size = (table_dir / rel).stat().st_size
        assert sum(b.size for b in blocks) == size
        for b in blocks:
            assert b.footer == {}
            assert b.instant_time is not None and len(b.instant_time) == 17
            if b.block_type == BlockType.COMMAND:
                # rollback command block: written by the rollback instant, targets the failed commit
                assert b.is_rollback and b.header[HeaderKey.COMMAND_BLOCK_TYPE] == "0"
                assert b.instant_time in rollbacks
                assert b.target_instant_time in rollbacks[b.instant_time]["commitsRollback"]
                assert b.content_length == 0 and b.schema_json is None
                continue
            assert json.loads(b.schema_json)["type"] == "record"
            assert b.event_time_range is None  # Java writes no event time
            name = os.path.basename(rel)
            if b.instant_time in deltas:
                stats = [s for ss in deltas[b.instant_time]["partitionToWriteStats"].values() for s in ss]
                assert any(name in s.get("logFiles", []) or s["path"].endswith(name) for s in stats)
            else:
                assert b.instant_time in rolled_back
    assert types == EXPECTED_TYPES[stem]


def test_rollback_fixture_command_block_details(fixtures_root: Path) -> None:
    table_dir = fixture_table_path(fixtures_root, ROLLBACK)
    rel = next(r for r in _log_files(table_dir) if ".log.2_" in r)
    (block,) = _blocks(table_dir, rel)
    assert block.header == {0: "20250126040936578", 3: "0", 1: "20250126040826878"}
    assert list(block.header) == [0, 3, 1]  # file order (a Java HashMap's) is kept
    assert (block.offset, block.size, block.read_content()) == (0, 105, b"")


# ----------------------------------------------------------------------------------------------
# fixtures: records equal the gold data
# ----------------------------------------------------------------------------------------------
def test_quickstart_log_record_equals_gold_row(fixtures_root: Path) -> None:
    table_dir = fixture_table_path(fixtures_root, QUICKSTART)
    (block,) = _blocks(table_dir, _log_files(table_dir)[0])
    data = block.data_table()
    assert data.num_rows == 1
    row = data.to_pylist()[0]
    gold = _gold(table_dir)
    assert data.schema.equals(gold.schema.remove_metadata())
    assert row == next(g for g in gold.to_pylist() if g["uuid"] == row["uuid"])
    assert row["_hoodie_commit_time"] == block.instant_time


@pytest.mark.parametrize("stem, log_marker, key", [(ROLLBACK, ".log.3_", 2), (SIMPLEKEY, ".log.1_", 1)])
def test_parquet_log_record_equals_gold_row(fixtures_root: Path, stem: str, log_marker: str, key: int) -> None:
    table_dir = fixture_table_path(fixtures_root, stem)
    rel = next(r for r in _log_files(table_dir) if log_marker in r)
    (block,) = _blocks(table_dir, rel)
    data = block.data_table()
    assert data.schema.equals(avro_to_arrow_schema(block.schema_json))
    (row,) = _normalised_rows(data)
    gold = next(g for g in _normalised_rows(_gold(table_dir)) if g["id"] == key)
    assert row == {k: gold[k] for k in row}
    assert row["_hoodie_commit_time"] == block.instant_time


def test_rolled_back_block_still_decodes(fixtures_root: Path) -> None:
    table_dir = fixture_table_path(fixtures_root, ROLLBACK)
    rel = next(r for r in _log_files(table_dir) if ".log.1_" in r)
    (block,) = _blocks(table_dir, rel)
    assert block.data_table().column("_hoodie_commit_time").to_pylist() == [block.instant_time]


def test_parquet_block_projected_to_reader_schema(fixtures_root: Path) -> None:
    """The simplekeygen log block puts byteField last; a reader schema reorders/adds columns."""
    table_dir = fixture_table_path(fixtures_root, SIMPLEKEY)
    (block,) = _blocks(table_dir, _log_files(table_dir)[0])
    header_schema = avro_to_arrow_schema(block.schema_json)
    assert header_schema.names[-1] == "byteField"
    reader = pa.schema([header_schema.field("byteField"), header_schema.field("id"),
                        pa.field("longField", pa.int64()), pa.field("added", pa.string()),
                        header_schema.field("arrayField"), header_schema.field("mapField")])
    out = block.data_table(reader)
    assert out.schema.equals(reader)
    (row,) = out.to_pylist()
    assert (row["byteField"], row["id"], row["added"]) == (10, 1, None)


# ----------------------------------------------------------------------------------------------
# byte-exactness
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stem", MOR_FIXTURES)
def test_fixture_blocks_reencode_byte_exact(fixtures_root: Path, stem: str, tmp_path: Path) -> None:
    table_dir = fixture_table_path(fixtures_root, stem)
    for rel in _log_files(table_dir):
        raw = (table_dir / rel).read_bytes()
        for i, block in enumerate(_blocks(table_dir, rel)):
            original = raw[block.offset:block.offset + block.size]
            content = block.read_content()
            # same header order as the file: identical bytes
            assert encode_block(block.block_type, block.header, content, block.footer,
                                keep_header_order=True) == original
            # our own (sorted) header order: same length, same parsed header and content
            ours = encode_block(block.block_type, block.header, content, block.footer)
            assert len(ours) == len(original)
            (again,) = list(read_log_file(_write(tmp_path / f"{i}", "l", ours), "l"))
            assert again.header == block.header and again.read_content() == content

            if block.block_type == BlockType.AVRO_DATA:
                enc = encode_avro_data_block(block.data_table(), instant=block.instant_time,
                                             avro_schema=block.schema_json)
                (re,) = list(read_log_file(_write(tmp_path / f"avro{i}", "l", enc), "l"))
                assert re.header == block.header
                assert re.read_content() == content
            elif block.block_type == BlockType.COMMAND:
                enc = encode_command_block(block.instant_time, block.target_instant_time)
                (re,) = list(read_log_file(_write(tmp_path / f"cmd{i}", "l", enc), "l"))
                assert re.header == block.header and len(enc) == len(original)
            elif block.block_type == BlockType.PARQUET_DATA:
                data = block.data_table()
                enc = encode_parquet_data_block(data, instant=block.instant_time, avro_schema=block.schema_json)
                (re,) = list(read_log_file(_write(tmp_path / f"pq{i}", "l", enc), "l"))
                assert re.header == block.header
                assert re.read_content()[:4] == b"PAR1"
                assert re.data_table().equals(data)


def test_block_layout_matches_reference() -> None:
    """MAGIC, length, version 1, type, header, content length, content, empty footer, pointer."""
    enc = encode_block(BlockType.DELETE, {HeaderKey.SCHEMA: "s", HeaderKey.INSTANT_TIME: "t"}, b"abc")
    length = len(enc) - 14
    expected = (MAGIC + struct.pack(">q", length) + struct.pack(">ii", 1, 1)
                + struct.pack(">i", 2) + struct.pack(">ii", 0, 1) + b"t" + struct.pack(">ii", 2, 1) + b"s"
                + struct.pack(">q", 3) + b"abc" + struct.pack(">i", 0) + struct.pack(">q", length + 6))
    assert enc == expected


def test_avro_data_block_content_layout() -> None:
    enc = _small_avro_block(n=2)
    (block,) = list(read_log_file(_StorageBytes(enc), "mem"))
    content = block.read_content()
    version, count, first_len = struct.unpack_from(">iii", content, 0)
    assert (version, count) == (3, 2)
    assert block.header == {0: "20250101000000000", 2: json.dumps(TRIPS_SCHEMA, separators=(",", ":"))}
    assert block.data_table().column("rider").to_pylist() == ["r0", "r1"]


def test_unknown_header_keys_are_kept(tmp_path: Path) -> None:
    enc = encode_block(BlockType.COMMAND, {0: "1", 7: "x", 3: "0", 1: "0"}, b"")
    (block,) = list(read_log_file(_write(tmp_path, "l", enc), "l"))
    assert block.header == {0: "1", 1: "0", 3: "0", 7: "x"}


def test_non_data_blocks_have_no_table(tmp_path: Path) -> None:
    blocks = [encode_command_block("1", "0"), encode_block(BlockType.HFILE_DATA, {0: "1"}, b"x"),
              encode_block(BlockType.CDC_DATA, {0: "1"}, b"y")]
    st_ = _write(tmp_path, "l", b"".join(blocks))
    for block in read_log_file(st_, "l"):
        with pytest.raises(LogFormatError, match="no data records"):
            block.data_table()
        with pytest.raises(LogFormatError, match="not a DELETE block"):
            block.delete_records()


def test_unreadable_parquet_content(tmp_path: Path) -> None:
    enc = encode_block(BlockType.PARQUET_DATA, {0: "1", 2: json.dumps(TRIPS_SCHEMA)}, b"PAR1 not parquet PAR1")
    (block,) = list(read_log_file(_write(tmp_path, "p.log", enc), "p.log"))
    with pytest.raises(LogFormatError, match=r"p\.log \(block at offset 0\): unreadable Parquet"):
        block.data_table()


def test_unsupported_avro_content_version(tmp_path: Path) -> None:
    enc = encode_block(BlockType.AVRO_DATA, {0: "1", 2: json.dumps(TRIPS_SCHEMA)}, struct.pack(">ii", 7, 0))
    (block,) = list(read_log_file(_write(tmp_path, "l", enc), "l"))
    with pytest.raises(LogFormatError, match="content version 7"):
        block.data_table()


def test_truncated_avro_record_is_reported(tmp_path: Path) -> None:
    enc = encode_block(BlockType.AVRO_DATA, {0: "1", 2: json.dumps(TRIPS_SCHEMA)},
                       struct.pack(">iii", 3, 1, 50) + b"\x02\x02k")
    (block,) = list(read_log_file(_write(tmp_path, "l", enc), "l"))
    with pytest.raises(LogFormatError, match=r"l \(block at offset 0\).*invalid length 50"):
        block.data_table()


# ----------------------------------------------------------------------------------------------
# corruption
# ----------------------------------------------------------------------------------------------
def _read_all(storage: Storage, name: str) -> list[LogBlock]:
    return list(read_log_file(storage, name))


def _kinds(blocks: list[LogBlock]) -> list[tuple[str, int, int]]:
    return [(b.block_type.name, b.offset, b.size) for b in blocks]


A = _small_avro_block("20250101000000001", rider="a")


B = _small_avro_block("20250101000000002", rider="b")


def test_truncated_tail_block(tmp_path: Path) -> None:
    data = A + B[:-10]
    st_ = _write(tmp_path, "t.log", data)
    with pytest.warns(CorruptLogBlockWarning, match=rf"t\.log: corrupt log block at offset {len(A)} .*"
                                                    rf"runs past the end.*skipped {len(B) - 10} bytes to the end"):
        blocks = _read_all(st_, "t.log")
    assert _kinds(blocks) == [("AVRO_DATA", 0, len(A)), ("CORRUPT", len(A), len(B) - 10)]
    assert blocks[0].data_table().column("rider").to_pylist() == ["a0", "a1", "a2"]
    assert blocks[1].read_content() == B[:-10]


def test_garbage_between_blocks(tmp_path: Path) -> None:
    garbage = b"\x00garbage\xff" * 7
    st_ = _write(tmp_path, "g.log", A + garbage + B)
    with pytest.warns(CorruptLogBlockWarning,
                      match=rf"g\.log: corrupt log block at offset {len(A)} .*skipped {len(garbage)} bytes "
                            rf"to the next block at offset {len(A) + len(garbage)}"):
        blocks = _read_all(st_, "g.log")
    assert _kinds(blocks) == [("AVRO_DATA", 0, len(A)), ("CORRUPT", len(A), len(garbage)),
                              ("AVRO_DATA", len(A) + len(garbage), len(B))]
    assert blocks[2].data_table().column("rider").to_pylist() == ["b0", "b1", "b2"]


def test_garbage_at_file_start(tmp_path: Path) -> None:
    garbage = b"not a hudi block"
    st_ = _write(tmp_path, "s.log", garbage + A)
    with pytest.warns(CorruptLogBlockWarning, match=rf"offset 0 \(no magic.*skipped {len(garbage)} bytes"):
        blocks = _read_all(st_, "s.log")
    assert _kinds(blocks) == [("CORRUPT", 0, len(garbage)), ("AVRO_DATA", len(garbage), len(A))]
    assert blocks[0].read_content() == garbage


@pytest.mark.parametrize("delta", [1, -1, 1000, -10**6])
def test_wrong_length_field(tmp_path: Path, delta: int) -> None:
    (length,) = struct.unpack(">q", A[6:14])
    bad = A[:6] + struct.pack(">q", length + delta) + A[14:]
    st_ = _write(tmp_path, "w.log", bad + B)
    with pytest.warns(CorruptLogBlockWarning, match=rf"w\.log: corrupt log block at offset 0 .*skipped {len(A)} bytes"):
        blocks = _read_all(st_, "w.log")
    assert _kinds(blocks) == [("CORRUPT", 0, len(A)), ("AVRO_DATA", len(A), len(B))]


def test_wrong_reverse_pointer(tmp_path: Path) -> None:
    bad = A[:-8] + struct.pack(">q", 12345)
    st_ = _write(tmp_path, "r.log", bad + B)
    with pytest.warns(CorruptLogBlockWarning, match="reverse pointer 12345"):
        blocks = _read_all(st_, "r.log")
    assert _kinds(blocks) == [("CORRUPT", 0, len(A)), ("AVRO_DATA", len(A), len(B))]


@pytest.mark.parametrize("tail", [b"\x00" * 100, b"xy", b"#HUD", MAGIC, MAGIC + b"\x00" * 20])
def test_trailing_garbage(tmp_path: Path, tail: bytes) -> None:
    st_ = _write(tmp_path, "z.log", A + tail)
    with pytest.warns(CorruptLogBlockWarning, match=rf"offset {len(A)} .*skipped {len(tail)} bytes to the end"):
        blocks = _read_all(st_, "z.log")
    assert _kinds(blocks) == [("AVRO_DATA", 0, len(A)), ("CORRUPT", len(A), len(tail))]


def test_empty_file_and_no_warnings_when_disabled(tmp_path: Path) -> None:
    st_ = _write(tmp_path, "e.log", b"")
    assert _read_all(st_, "e.log") == []
    (tmp_path / "q.log").write_bytes(b"junk" + A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        blocks = list(read_log_file(st_, "q.log", warn=False))
    assert [b.block_type for b in blocks] == [BlockType.CORRUPT, BlockType.AVRO_DATA]


def test_invalid_block_type_and_version_are_corrupt(tmp_path: Path) -> None:
    bad_type = A[:18] + struct.pack(">i", 9) + A[22:]
    bad_version = A[:14] + struct.pack(">i", 0) + A[18:]
    st_ = _write(tmp_path, "v.log", bad_type + bad_version + B)
    with pytest.warns(CorruptLogBlockWarning) as record:
        blocks = _read_all(st_, "v.log")
    messages = " ".join(str(w.message) for w in record)
    assert "unknown block type 9" in messages and "unsupported log format version 0" in messages
    assert _kinds(blocks) == [("CORRUPT", 0, len(A)), ("CORRUPT", len(A), len(A)), ("AVRO_DATA", 2 * len(A), len(B))]


@pytest.mark.parametrize("garbage_len", range(0, 16))
def test_magic_split_across_scan_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, garbage_len: int) -> None:
    monkeypatch.setattr(lf, "_SCAN_CHUNK", 7)  # every magic straddles some chunk boundary
    garbage = (b"g" * garbage_len) or b"#"
    st_ = _write(tmp_path, "c.log", garbage + A + b"#HUD#" + B)
    with pytest.warns(CorruptLogBlockWarning):
        blocks = _read_all(st_, "c.log")
    assert _kinds(blocks) == [("CORRUPT", 0, len(garbage)), ("AVRO_DATA", len(garbage), len(A)),
                              ("CORRUPT", len(garbage) + len(A), 5),
                              ("AVRO_DATA", len(garbage) + len(A) + 5, len(B))]


# ----------------------------------------------------------------------------------------------
# streaming
# ----------------------------------------------------------------------------------------------
class _CountingFile:
    """Wraps a pyarrow random-access file, counting bytes read."""

    def __init__(self, inner, counter: list[int]) -> None:
        self._inner = inner
        self._counter = counter

    def read(self, n: int = -1) -> bytes:
        data = self._inner.read(n)
        self._counter[0] += len(data)
        return data

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


class _StorageBytes(Storage):
    """An in-memory single-file storage (for tests that need no disk)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def open_input(self, rel: str):
        return pa.BufferReader(self._data)


def test_iteration_streams_headers_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 20_000
    blocks = []
    for b in range(3):
        table = pa.table({"_hoodie_record_key": [f"key-{b}-{i:08d}" for i in range(n)],
                          "ts": pa.array(range(n), pa.int64()),
                          "rider": ["x" * 80] * n})
        blocks.append(encode_avro_data_block(table, instant=f"2025010100000000{b}", avro_schema=TRIPS_SCHEMA))
    st_ = _tmp_storage(tmp_path)
    size = write_log_file(st_, "big.log", blocks)
    assert size > 5 * 1024 * 1024

    counter = [0]
    real_open = Storage.open_input
    monkeypatch.setattr(Storage, "open_input", lambda self, rel: _CountingFile(real_open(self, rel), counter))

    def no_content(self):
        raise AssertionError("read_content called while iterating")

    with monkeypatch.context() as m:
        m.setattr(LogBlock, "read_content", no_content)
        parsed = list(read_log_file(st_, "big.log"))
    assert [b.instant_time for b in parsed] == [f"2025010100000000{b}" for b in range(3)]
    assert counter[0] < 300_000, f"read {counter[0]} bytes of a {size}-byte file"

    # content stays readable afterwards, lazily
    assert parsed[1].data_table().column("_hoodie_record_key")[0].as_py() == "key-1-00000000"


# ----------------------------------------------------------------------------------------------
# event time in the schema header
# ----------------------------------------------------------------------------------------------
def test_with_event_time_appends_top_level_attributes() -> None:
    text = json.dumps(TRIPS_SCHEMA, separators=(",", ":"))
    out = with_event_time(text, 1_700_000_000_000, 1_700_000_000_999)
    assert out == text[:-1] + ',"hoodie.event.time.min":1700000000000,"hoodie.event.time.max":1700000000999}'
    assert event_time_from_schema(out) == (1_700_000_000_000, 1_700_000_000_999)
    # replacing keeps one copy of each attribute
    again = with_event_time(out, 5, 6)
    assert again.count("hoodie.event.time.min") == 1 and event_time_from_schema(again) == (5, 6)
    assert with_event_time(TRIPS_SCHEMA, -5, -5).endswith('"hoodie.event.time.min":-5,"hoodie.event.time.max":-5}')


@pytest.mark.parametrize("schema_json", [
    None, "", json.dumps(TRIPS_SCHEMA),
    '{"type":"record","name":"r","fields":[],"hoodie.event.time.min":1}',
    '{"type":"record","name":"r","fields":[],"hoodie.event.time.min":"1","hoodie.event.time.max":2}',
    '{"type":"record","name":"r","fields":[],"hoodie.event.time.min":1.5,"hoodie.event.time.max":2}',
    '{"type":"record","name":"r","fields":[],"hoodie.event.time.min":true,"hoodie.event.time.max":2}',
    '{"type":"record","name":"r","fields":[],"hoodie.event.time.min":3,"hoodie.event.time.max":2}',
    '{"hoodie.event.time.min": broken',
])
def test_absent_or_unusable_event_time_is_unknown(schema_json) -> None:
    assert event_time_from_schema(schema_json) is None


def test_with_event_time_validation() -> None:
    with pytest.raises(ValueError, match="after max"):
        with_event_time(TRIPS_SCHEMA, 2, 1)
    with pytest.raises(ValueError, match="integer"):
        with_event_time(TRIPS_SCHEMA, True, 2)
    with pytest.raises(ValueError, match="integer"):
        with_event_time(TRIPS_SCHEMA, 1.0, 2)
    with pytest.raises(ValueError, match="long"):
        with_event_time(TRIPS_SCHEMA, 0, 2**63)
    with pytest.raises(ValueError, match="record"):
        with_event_time('"string"', 0, 1)


def test_event_time_range_on_blocks_reads_header_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = pa.table({"_hoodie_record_key": ["a"], "ts": pa.array([1], pa.int64()), "rider": ["x"]})
    keys = pa.table({"record_key": ["a"], "partition_path": ["p"]})
    rng = (1_600_000_000_000, 1_600_000_000_500)
    encoded = [
        encode_avro_data_block(table, instant="1", avro_schema=TRIPS_SCHEMA, event_time_range=rng),
        encode_parquet_data_block(table, instant="1", avro_schema=TRIPS_SCHEMA, event_time_range=rng),
        encode_delete_block(keys, instant="1", avro_schema=TRIPS_SCHEMA, event_time_range=rng),
        encode_avro_data_block(table, instant="2", avro_schema=TRIPS_SCHEMA),
        encode_command_block("3", "2"),
    ]
    st_ = _tmp_storage(tmp_path)
    write_log_file(st_, "e.log", encoded)
    monkeypatch.setattr(LogBlock, "read_content", lambda self: (_ for _ in ()).throw(AssertionError("content read")))
    ranges = [b.event_time_range for b in read_log_file(st_, "e.log")]
    assert ranges == [rng, rng, rng, None, None]


def test_event_time_does_not_change_content() -> None:
    table = pa.table({"_hoodie_record_key": ["a", "b"], "ts": pa.array([1, 2], pa.int64()), "rider": ["x", None]})
    plain = encode_avro_data_block(table, instant="1", avro_schema=TRIPS_SCHEMA)
    with_range = encode_avro_data_block(table, instant="1", avro_schema=TRIPS_SCHEMA, event_time_range=(1, 2))
    (p,) = list(read_log_file(_StorageBytes(plain), "p"))
    (w,) = list(read_log_file(_StorageBytes(with_range), "w"))
    assert p.read_content() == w.read_content()
    assert w.data_table().equals(p.data_table())
    assert json.loads(w.schema_json)["fields"] == TRIPS_SCHEMA["fields"]


# ----------------------------------------------------------------------------------------------
# writing files
# ----------------------------------------------------------------------------------------------
def test_write_log_file_is_create_only(tmp_path: Path) -> None:
    st_ = _tmp_storage(tmp_path)
    size = write_log_file(st_, "p/.f_1.log.1_0-0-0", [A, encode_command_block("2", "1")])
    assert size == (tmp_path / "p/.f_1.log.1_0-0-0").stat().st_size
    with pytest.raises(FileExistsError):
        write_log_file(st_, "p/.f_1.log.1_0-0-0", [B])
    with pytest.raises(ValueError, match="not an encoded log block"):
        write_log_file(st_, "p/other", [b"nope"])
    blocks = list(read_log_file(st_, "p/.f_1.log.1_0-0-0"))
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.COMMAND]
    assert blocks[1].header == {0: "2", 1: "1", 3: "0"}


def test_parquet_block_uses_standard_nested_layout() -> None:
    schema = {"type": "record", "name": "r", "namespace": "n", "fields": [
        {"name": "l", "type": ["null", {"type": "array", "items": ["null", "int"]}], "default": None},
        {"name": "m", "type": ["null", {"type": "map", "values": ["null", "string"]}], "default": None},
        {"name": "t", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
        {"name": "d", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "n.r.d", "size": 5,
                                        "logicalType": "decimal", "precision": 10, "scale": 5}], "default": None},
    ]}
    table = pa.table({"l": pa.array([[1, None]]), "m": pa.array([[("k", "v")]], pa.map_(pa.string(), pa.string())),
                      "t": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)], pa.timestamp("us", tz="UTC")),
                      "d": pa.array([Decimal("12345.67890")], pa.decimal128(10, 5))})
    enc = encode_parquet_data_block(table, instant="1", avro_schema=schema)
    (block,) = list(read_log_file(_StorageBytes(enc), "x"))
    pf = pq.ParquetFile(pa.BufferReader(block.read_content()))
    text = str(pf.schema)
    assert re.search(r"repeated group (field_id=-1 )?list", text) and re.search(r"int32 (field_id=-1 )?element", text)
    assert re.search(r"repeated group (field_id=-1 )?key_value", text)
    ts_col = pf.metadata.schema.column(3)  # leaves: l.list.element, m.key, m.value, t, d
    assert ts_col.name == "t" and ts_col.physical_type == "INT64"
    assert "isAdjustedToUTC=true, timeUnit=microseconds" in str(ts_col.logical_type)
    assert pf.metadata.schema.column(4).physical_type == "INT64"  # decimal(10, 5) like Spark
    assert block.data_table().equals(table.cast(avro_to_arrow_schema(schema)))


# ----------------------------------------------------------------------------------------------
# hudi-rs accepts what we write
# ----------------------------------------------------------------------------------------------
def _hudi_rs_rows(base: Path) -> list[dict]:
    import hudi

    batches = hudi.HudiTableBuilder.from_base_uri(str(base.resolve())).build().read()
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return sorted(rows, key=lambda r: r["_hoodie_record_key"])


def _copy_fixture(fixtures_root: Path, stem: str, tmp_path: Path) -> Path:
    src = fixture_table_path(fixtures_root, stem)
    dst = tmp_path / stem / src.name
    shutil.copytree(src, dst)
    return dst


def _replace_blocks(base: Path, rel: str, blocks: list[bytes]) -> None:
    st_ = Storage(str(base))
    st_.delete(rel)
    write_log_file(st_, rel, blocks)


def test_hudi_rs_reads_event_time_schema_attribute(fixtures_root: Path, tmp_path: Path) -> None:
    base = _copy_fixture(fixtures_root, QUICKSTART, tmp_path)
    before = _hudi_rs_rows(base)
    (rel,) = _log_files(base)
    (block,) = _blocks(base, rel)
    content, records = block.read_content(), block.data_table()  # content is lazy: read it first
    enc = encode_avro_data_block(records, instant=block.instant_time,
                                 avro_schema=block.schema_json, event_time_range=(1, 2))
    _replace_blocks(base, rel, [enc])
    (new_block,) = _blocks(base, rel)
    assert new_block.event_time_range == (1, 2)
    assert new_block.instant_time == block.instant_time
    assert new_block.read_content() == content  # same records, byte for byte
    after = _hudi_rs_rows(base)
    assert after == before
    updated = next(r for r in after if r["uuid"] == records.column("uuid")[0].as_py())
    assert updated["_hoodie_commit_time"] == block.instant_time  # the row really came from the log


def test_hudi_rs_reads_our_parquet_block(fixtures_root: Path, tmp_path: Path) -> None:
    base = _copy_fixture(fixtures_root, SIMPLEKEY, tmp_path)
    before = _hudi_rs_rows(base)
    (rel,) = _log_files(base)
    (block,) = _blocks(base, rel)
    enc = encode_parquet_data_block(block.data_table(), instant=block.instant_time,
                                    avro_schema=block.schema_json, event_time_range=(10, 20))
    _replace_blocks(base, rel, [enc])
    assert _hudi_rs_rows(base) == before


def test_hudi_rs_applies_our_delete_block(fixtures_root: Path, tmp_path: Path) -> None:
    base = _copy_fixture(fixtures_root, QUICKSTART, tmp_path)
    before = _hudi_rs_rows(base)
    (rel,) = _log_files(base)
    (block,) = _blocks(base, rel)
    victim = next(r for r in before if r["_hoodie_commit_time"] != block.instant_time)
    keys = pa.table({"record_key": [victim["_hoodie_record_key"]],
                     "partition_path": [victim["_hoodie_partition_path"]],
                     "ordering_value": pa.array([victim["ts"] + 1], pa.int64())})
    data = encode_avro_data_block(block.data_table(), instant=block.instant_time, avro_schema=block.schema_json)
    delete = encode_delete_block(keys, instant=block.instant_time, avro_schema=block.schema_json,
                                 event_time_range=(victim["ts"], victim["ts"]))
    _replace_blocks(base, rel, [data, delete])
    after = _hudi_rs_rows(base)
    assert after == [r for r in before if r["_hoodie_record_key"] != victim["_hoodie_record_key"]]
