"""column_stats as Java writes it: hoodie's keys, file groups and records for the Java-written
fixtures' base files equal Java's byte for byte.

For every fixture table of ``tests/fixtures/hudi-v8-v9`` holding ``.hoodie/metadata/column_stats``
(one v8, four v9), every column-stats cell of every HFile (base files and log blocks) whose file is a
Parquet base file still on storage is recomputed from that file's footer
(:func:`hoodie.format.metadata.column_stats.footer_column_stats`), encoded with the cell's own writer
schema and compared with Java's bytes; its key and file group (the file id the cell sits in) must be
hoodie's. The columns Java indexed must be the columns hoodie indexes by default.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import fastavro
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.hfile import HFileReader
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.metadata import MetadataTable
from hoodie.format.metadata import column_stats as CS
from hoodie.format.metadata.index_reader import read_column_stats
from hoodie.format.storage import Storage
from tests.conftest import unzip_fixture
from tests.fixture_paths import V89_DIR
from tests.helpers import examples


def _has_col_stats(z: Path) -> bool:
    with zipfile.ZipFile(z) as zf:
        return any("/.hoodie/metadata/column_stats/" in m for m in zf.namelist())


ZIPS = [z for z in sorted(V89_DIR.glob("*.zip")) if _has_col_stats(z)]


def _table(z: Path, tmp: Path) -> Path:
    unzip_fixture(z, tmp)
    return next(p.parent.parent for p in tmp.rglob(".hoodie/hoodie.properties")
                if "/.hoodie/metadata/" not in str(p))


def _cells(table: Path):
    """(file id, key, raw value, parsed writer schema) of every column_stats cell Java wrote."""
    st = Storage(str(table / ".hoodie/metadata"))
    for f in sorted((table / ".hoodie/metadata/column_stats").iterdir()):
        m = re.search(r"(col-stats-\d{4}-0)", f.name)
        if not m or f.name.endswith(".crc"):
            continue
        rel = f"column_stats/{f.name}"
        if f.name.endswith(".hfile"):
            with HFileReader.from_storage(st, rel) as r:
                sc = fastavro.parse_schema(json.loads(r.schema))
                for k, v in r.items():
                    yield m.group(1), k.decode(), v, sc
            continue
        for b in read_log_file(st, rel, warn=False):
            if b.block_type != BlockType.HFILE_DATA:
                continue
            r = HFileReader(b.read_content(), name=f.name)
            sc = fastavro.parse_schema(json.loads(b.schema_json or r.schema))
            for k, v in r.items():
                yield m.group(1), k.decode(), v, sc


def test_hash_ids_and_java_string_hash():
    assert CS.xxhash64(b"") == 0xEF46DB3751D8E999  # the XXH64 reference value
    assert CS.java_string_hash("hello") == 99162322
    assert CS.java_string_hash("polygenelubricants") == -2147483648  # Integer.MIN_VALUE: abs stays negative
    assert CS.file_group_index("polygenelubricants", 2) == 0
    assert CS.partition_index_id("") == CS.partition_index_id(".")


@settings(max_examples=examples(30), deadline=None)
@given(keys=st.lists(st.one_of(st.text(max_size=12), st.text("ab-_09", max_size=40),
                               st.sampled_from(["polygenelubricants", "", "hello", "é😀"])), max_size=60),
       count=st.integers(1, 1000))
def test_vectorised_file_group_indexes_equal_javas_hash(keys: list, count: int):
    """file_group_indexes (NumPy over UTF-8 bytes, Java's hash per key for non-ASCII keys) places every key
    where file_group_index (Java's String.hashCode over UTF-16) does."""
    assert CS.file_group_indexes(keys, count) == [CS.file_group_index(k, count) for k in keys]


@pytest.mark.parametrize("z", ZIPS, ids=[z.stem for z in ZIPS])
def test_java_column_stats_equal_hoodies_byte_for_byte(z: Path, tmp_path: Path):
    table = _table(z, tmp_path)
    props = Storage(str(table)).read_bytes(".hoodie/hoodie.properties").decode()
    version = int(re.search(r"hoodie.table.version=(\d+)", props).group(1))
    files = {p.name: p for p in table.rglob("*.parquet") if ".hoodie" not in p.parts}
    checked = 0
    indexed: dict[str, set[str]] = {}
    footers: dict[str, dict[str, CS.ColumnStats]] = {}
    for fid, key, raw, schema in _cells(table):
        rec = fastavro.schemaless_reader(__import__("io").BytesIO(raw), schema, None, return_record_name=True)
        java = CS.decode_column_stats(key, rec, "fixture")
        assert CS.file_group_id(CS.file_group_index(key, CS.DEFAULT_FILE_GROUP_COUNT)) == fid
        if java.is_deleted or java.file_name not in files:
            continue
        path = files[java.file_name]
        partition = str(path.parent.relative_to(table)) if path.parent != table else ""
        indexed.setdefault(java.file_name, set()).add(java.column_name)
        if java.file_name not in footers:
            md = pq.ParquetFile(path).metadata
            footers[java.file_name] = {s.column_name: s for s in CS.footer_column_stats(
                md, java.file_name, partition, None, version)}
        ours = footers[java.file_name][java.column_name]
        assert ours.key == key
        meta = {k: v for k, v in rec.items() if k.startswith("_hoodie_")}  # base HFiles name themselves
        assert CS.encode_stats_value(ours, schema, version, meta) == raw, (java, ours)
        checked += 1
    assert checked > 0
    # The columns Java indexed are hoodie's default columns (meta columns first, then data columns).
    for name, cols in indexed.items():
        md = pq.ParquetFile(files[name]).metadata
        fields = [md.schema.column(i).path for i in range(len(md.schema))]
        assert set(CS.columns_to_index(fields, {}, {}, version)) == cols


@pytest.mark.parametrize("z", ZIPS, ids=[z.stem for z in ZIPS])
def test_read_column_stats_merges_the_partition(z: Path, tmp_path: Path):
    """The merged partition holds one live record per (file, column) of the latest base files."""
    table = _table(z, tmp_path)
    stats = read_column_stats(MetadataTable(str(table)))
    assert stats
    for key, s in stats.items():
        assert not s.is_deleted and s.file_name and s.column_name
        assert key.startswith(CS.column_index_id(s.column_name))
        assert key.endswith(CS.file_index_id(s.file_name))


@pytest.mark.parametrize("z", ZIPS, ids=[z.stem for z in ZIPS])
def test_java_log_file_stats_equal_hoodies(z: Path, tmp_path: Path):
    """A log file's statistics are those of the records its data blocks hold (sizes 0), as Java's
    append handle records them: equal byte for byte for every log file with data blocks."""
    table = _table(z, tmp_path)
    props = Storage(str(table)).read_bytes(".hoodie/hoodie.properties").decode()
    version = int(re.search(r"hoodie.table.version=(\d+)", props).group(1))
    logs = {p.name: p for p in table.rglob(".*.log.*") if ".hoodie" not in p.parts and not p.name.endswith(".crc")}
    st = Storage(str(table))
    checked = 0
    for fid, key, raw, schema in _cells(table):
        rec = fastavro.schemaless_reader(__import__("io").BytesIO(raw), schema, None, return_record_name=True)
        java = CS.decode_column_stats(key, rec, "fixture")
        if java.is_deleted or java.file_name not in logs:
            continue
        path = logs[java.file_name]
        partition = str(path.parent.relative_to(table)) if path.parent != table else ""
        blocks = [b for b in read_log_file(st, str(path.relative_to(table)), warn=False)
                  if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)]
        if not blocks:
            continue
        import pyarrow as pa
        data = pa.concat_tables([b.data_table() for b in blocks], promote_options="default")
        ours = {s.column_name: s for s in CS.records_column_stats(data, java.file_name, partition, None, version)}
        meta = {k: v for k, v in rec.items() if k.startswith("_hoodie_")}
        assert CS.encode_stats_value(ours[java.column_name], schema, version, meta) == raw, (java, ours[java.column_name])
        checked += 1
    print(z.stem, checked)
