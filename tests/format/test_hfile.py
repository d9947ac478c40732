"""The pure-Python HFile reader and writer (``hoodie.format.hfile``), checked against real files.

* Every HBase-written fixture in ``tests/fixtures/hfile`` is read completely and its documented
  contents (``hudi-key-%09d`` -> ``hudi-value-%09d`` and the variants) compared; point lookups of
  first / middle / last / absent keys, prefix lookups and ``items(start)`` go through the index
  (single-level, 2- and 3-level, shortened "fake" index keys, repeated keys, an empty file).
* Every metadata-table HFile in the Java-written v8/v9 fixture tables is read and validated: base
  files and the HFile data blocks of the log files (Hudi 1.0 via HBase, and Hudi 1.1's own
  writer); the ``files`` partition holds ``__all_partitions__`` and the table's partition paths.
* The writer, given the same contents and HBase's settings, reproduces every HBase fixture and
  every Hudi 1.0 metadata-table HFile (base files and log-block HFiles) byte for byte.
* Property tests: random sorted keys (empty, binary, long), values and tiny block / index-chunk
  sizes (many blocks, multi-level indexes) round-trip; truncated or bit-flipped files only ever
  raise ``HFileError``; CRC32C and the variable-length integer codecs match their definitions.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.format.hfile import (
    GZ, NONE, HFileError, HFileReader, HFileWriter, write_hfile,
)
from hoodie.format.hfile.blocks import (
    HEADER_SIZE, LATEST_TIMESTAMP, ROOT_INDEX, TYPE_MAXIMUM, TYPE_PUT, encode_block,
    encode_root_index, key_row, midpoint_row,
)
from hoodie.format.hfile.crc32c import _crc32c_py, crc32c, crc32c_chunks
from hoodie.format.hfile.encoding import (
    parse_message, read_uvarint, read_vlong, write_uvarint, write_vlong,
)
from hoodie.format.hfile.trailer import TRAILER_SIZE, parse_trailer
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.storage import Storage
from tests.fixture_paths import HFILE_DIR, V89_DIR
from tests.helpers import examples





def fixture(name: str) -> bytes:
    return (HFILE_DIR / f"hudi_1_0_hbase_{name}.hfile").read_bytes()


def plain(i: int) -> tuple[bytes, bytes]:
    return b"hudi-key-%09d" % i, b"hudi-value-%09d" % i


def fake_key(i: int) -> tuple[bytes, bytes]:
    return b"hudi-key-%09d-abcdefghij" % i, b"hudi-value-%09d" % i


def large_key(i: int) -> tuple[bytes, bytes]:
    return b"hudi-key-" + b"a" * 100 + b"-%09d" % i, b"hudi-value-%09d" % i


# name, entries, key pattern, block size, codec, index levels, extra writer options for HBase's
# settings in the test that wrote it (the deep index: a 2 KiB index chunk and a minimum of at most
# 14 entries per intermediate block instead of HBase's default 16; 2 to 14 all give the same file)
PLAIN = [
    ("2_4_9_16KB_GZ_20000", 20000, plain, 16 * 1024, GZ, 1, {}),
    ("2_4_9_512KB_GZ_20000", 20000, plain, 512 * 1024, GZ, 1, {}),
    ("2_4_9_16KB_NONE_5000", 5000, plain, 16 * 1024, NONE, 1, {}),
    ("2_4_9_64KB_NONE_5000", 5000, plain, 64 * 1024, NONE, 1, {}),
    ("2_4_13_16KB_GZ_20000_fake_first_key", 20000, fake_key, 16 * 1024, GZ, 1, {}),
    ("2_4_13_1KB_GZ_20000_large_keys", 20000, large_key, 1024, GZ, 2, {}),
    ("2_4_13_1KB_GZ_10000_large_keys_deep_index", 10000, large_key, 1024, GZ, 3,
     {"max_index_chunk_size": 2048, "min_index_entries": 2}),
]
PLAIN_IDS = [p[0] for p in PLAIN]


@pytest.fixture(scope="module")
def readers() -> dict[str, HFileReader]:
    return {name: HFileReader(fixture(name), name=name) for name, *_ in PLAIN}


# ------------------------------------------------------------------------------------------------
# HBase-written fixtures
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,n,pattern,block_size,codec,levels,_opts", PLAIN, ids=PLAIN_IDS)
def test_fixture_full_scan(readers, name, n, pattern, block_size, codec, levels, _opts):
    r = readers[name]
    assert r.num_entries == len(r) == n
    assert r.trailer.num_data_index_levels == levels
    assert r.compression == ("GZ" if codec == GZ else "NONE")
    assert r.trailer.major_version == 3 and r.trailer.minor_version == 3
    assert list(r) == [pattern(i) for i in range(n)]
    assert r.validate() == n
    assert r.first_key == pattern(0)[0] and r.last_key == pattern(n - 1)[0]
    info = r.file_info
    assert info["hudi_hfile_testing.custom_key"] == b"hudi_custom_value"
    assert int.from_bytes(info["KEY_VALUE_VERSION"], "big") == 1
    assert int.from_bytes(info["hfile.AVG_KEY_LEN"], "big") == len(pattern(0)[0]) + 12
    assert int.from_bytes(info["hfile.AVG_VALUE_LEN"], "big") == len(pattern(0)[1])
    assert r.meta_block_names == ["bloomFilter"]
    assert r.meta_block("bloomFilter").startswith(b"/////")  # Base64 of a Java-serialized filter
    assert r.meta_block("nope") is None


@pytest.mark.parametrize("name,n,pattern,block_size,codec,levels,_opts", PLAIN, ids=PLAIN_IDS)
def test_fixture_point_lookups(readers, name, n, pattern, block_size, codec, levels, _opts):
    r = readers[name]
    probe = sorted({0, 1, n // 3, n // 2, n - 2, n - 1, *range(0, n, max(1, n // 37))})
    for i in probe:
        k, v = pattern(i)
        assert r.get(k) == v
        assert r.get(k.decode()) == v  # str keys are UTF-8
        assert k in r
    # every block's first and last key: the index boundaries
    for i in range(min(40, len(r.data_blocks()))):
        rows, values = r._block(i)
        assert r.get(rows[0]) == values[0] and r.get(rows[-1]) == values[-1]
    first = pattern(0)[0]
    for absent in (b"", b"a", b"hudi-key-", first[:-1], first + b"\x00", pattern(n - 1)[0] + b"0",
                   b"hudi-key-\xff", b"zzz", pattern(n // 2)[0][:-1] + b":"):
        assert r.get(absent) is None
        assert absent not in r
    assert r.get_many([pattern(5)[0], b"nope", pattern(n - 1)[0]]) == dict([pattern(5), pattern(n - 1)])
    # HBase-written files (MVCC versions, deep indexes): get_many of the probes (sparse) and of every
    # third key (dense) on a fresh reader (no block decoded by get before) equals the written values.
    fresh = HFileReader(fixture(name), name=name)
    for idx in (probe, range(0, n, 3)):
        want = dict(pattern(i) for i in idx)
        assert fresh.get_many(list(want) + [b"nope", first[:-1]]) == want


@pytest.mark.parametrize("name,n,pattern,block_size,codec,levels,_opts", PLAIN, ids=PLAIN_IDS)
def test_fixture_prefix_and_range(readers, name, n, pattern, block_size, codec, levels, _opts):
    r = readers[name]
    k1000 = pattern(1000)[0]
    prefix = k1000[:k1000.index(b"000001000") + 6]  # keys 1000..1999 share it, across blocks
    got = r.keys_with_prefix(prefix)
    assert got == [pattern(i)[0] for i in range(1000, min(2000, n))]
    assert list(r.items_with_prefix(k1000)) == [pattern(1000)]
    assert r.keys_with_prefix(b"hudi-key-x") == []
    assert r.keys_with_prefix(b"zz") == [] and r.keys_with_prefix(b"a") == []
    assert len(r.keys_with_prefix(b"")) == n
    start = pattern(n - 3)[0]
    assert list(r.items(start)) == [pattern(i) for i in range(n - 3, n)]
    assert list(r.items(start + b"\x00")) == [pattern(i) for i in range(n - 2, n)]
    assert list(r.keys(b"")) [:2] == [pattern(0)[0], pattern(1)[0]]
    assert list(r.items(b"zzz")) == []


def test_fake_first_keys_in_the_index(readers):
    r = readers["2_4_13_16KB_GZ_20000_fake_first_key"]
    blocks = r.data_blocks()
    assert len(blocks) == 86
    # block 0 is indexed by its real first key; every other one by HBase's shortened
    # "first on row" key (type Maximum) that sorts between the blocks
    assert blocks[0].index_key[-1] == TYPE_PUT and blocks[0].index_row == fake_key(0)[0]
    fakes = [b for b in blocks[1:] if b.index_key[-1] == TYPE_MAXIMUM]
    assert len(fakes) == 85
    shortened = [b for b in fakes if len(b.index_row) < 29]
    assert shortened, "the fixture is meant to have shortened index keys"
    for b in shortened:
        # the shortened row is absent, sorts before the block's first key, and lookups of the
        # keys around it still land in the right block
        assert r.get(b.index_row) is None
        after = r.keys(b.index_row)
        first = next(after)
        assert b.index_row < first and first.startswith(b.index_row[:-1])
        assert r.get(first) is not None
    assert blocks[2].index_row == b"hudi-key-00000047"
    assert r.keys_with_prefix(b"hudi-key-00000047") == [fake_key(i)[0] for i in range(470, 480)]


def test_multi_level_index_blocks(readers):
    deep = readers["2_4_13_1KB_GZ_10000_large_keys_deep_index"]
    assert deep.trailer.num_data_index_levels == 3
    blocks = deep.data_blocks()
    assert len(blocks) == 1429 and deep.trailer.data_index_count == 7
    assert [b.offset for b in blocks] == sorted(b.offset for b in blocks)
    two = readers["2_4_13_1KB_GZ_20000_large_keys"]
    assert two.trailer.num_data_index_levels == 2 and two.trailer.data_index_count == 4
    for i in (0, 1, 17, 6251, 6252, 12502, 19999):
        assert two.get(large_key(i)[0]) == large_key(i)[1]


def test_cells_carry_the_hbase_key_fields(readers):
    r = readers["2_4_9_16KB_NONE_5000"]
    cells = list(r.cells())
    assert len(cells) == 5000
    c = cells[42]
    assert (c.row, c.value) == plain(42)
    assert (c.family, c.qualifier, c.timestamp, c.type, c.mvcc) == (b"", b"", LATEST_TIMESTAMP, TYPE_PUT, 0)


def test_non_unique_keys():
    r = HFileReader(fixture("2_4_9_16KB_GZ_200_20_non_unique"))
    items = list(r)
    # 200 keys, each stored 21 times: the plain value, then value_0 .. value_19
    assert r.num_entries == len(items) == 4200 and r.validate() == 4200
    expected = [(k, v + s) for i in range(200) for k, v in [plain(i)]
                for s in [b"", *(b"_%d" % j for j in range(20))]]
    assert items == expected
    assert r.get(plain(7)[0]) == plain(7)[1]
    assert r.get_all(plain(7)[0]) == [v for k, v in expected if k == plain(7)[0]]
    assert r.get_all(b"nope") == []
    # equal keys never straddle a block
    rows_per_block = [r._block(i)[0] for i in range(len(r.data_blocks()))]
    for a, b in zip(rows_per_block, rows_per_block[1:]):
        assert a[-1] != b[0]
    assert len(r.keys_with_prefix(b"hudi-key-00000019")) == 10 * 21


def test_empty_file():
    r = HFileReader(fixture("2_4_9_no_entry"))
    assert r.num_entries == 0 and list(r) == [] and r.validate() == 0
    assert r.get(b"a") is None and r.keys_with_prefix(b"") == [] and r.first_key is None
    assert r.last_key is None and r.data_blocks() == []
    assert r.trailer.first_data_block_offset == -1 and r.trailer.last_data_block_offset == -1
    assert r.trailer.comparator_class_name == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
    assert r.file_info["bloomFilterTypeCode"] == b"DYNAMIC_V0" and r.bloom_filter_type == "DYNAMIC_V0"
    assert r.min_record_key == b"" and r.max_record_key == b""
    assert r.schema.startswith('{"type":"record"')
    assert r.bloom_filter.startswith(b"/////")


def test_open_from_pyarrow_storage_and_python_files(tmp_path):
    path = HFILE_DIR / "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile"
    with HFileReader.open(str(path)) as r:
        assert r.get(plain(4321)[0]) == plain(4321)[1]
        assert r.name == str(path)
    with HFileReader.open(str(path), pafs.LocalFileSystem()) as r:
        assert len(list(r)) == 5000
    storage = Storage(str(HFILE_DIR))
    with HFileReader.from_storage(storage, path.name) as r:
        assert r.keys_with_prefix(b"hudi-key-00000499") == [plain(i)[0] for i in range(4990, 5000)]
        assert path.name in r.name
    with open(path, "rb") as f:
        r = HFileReader(f)
        assert r.get(plain(0)[0]) == plain(0)[1] and r.name == str(path)
    with pytest.raises(TypeError):
        HFileReader(str(path))  # a path is not file content


# ------------------------------------------------------------------------------------------------
# metadata tables of the Java-written v8/v9 fixture tables
# ------------------------------------------------------------------------------------------------
def _table_root(names: list[str]) -> str:
    return min((n.split("/.hoodie/")[0] for n in names if "/.hoodie/" in n), key=len)


@pytest.fixture(scope="module")
def mdt_tables(tmp_path_factory) -> list[tuple[str, Path, set[str]]]:
    """(zip stem, unzipped table root, the table's partition paths) of every v8/v9 fixture with
    a metadata table folder; only ``.hoodie/metadata`` is unzipped."""
    out = []
    for z in sorted(V89_DIR.glob("*.zip")):
        with zipfile.ZipFile(z) as zf:
            names = [n for n in zf.namelist() if not n.startswith("__MACOSX")]
            root = _table_root(names)
            mdt = [n for n in names if n.startswith(root + "/.hoodie/metadata/") and not n.endswith("/")]
            if not mdt:
                continue
            partitions = set()
            for n in names:
                rel = n[len(root) + 1:]
                if (n.startswith(root + "/") and not rel.startswith(".hoodie/")
                        and rel.endswith(".hoodie_partition_metadata")):
                    partitions.add(rel.rsplit("/", 1)[0] if "/" in rel else "")
            dest = tmp_path_factory.mktemp(z.stem)
            for n in mdt:
                zf.extract(n, dest)
        out.append((z.stem, dest / root, partitions))
    assert len(out) >= 5, f"expected the v8/v9 fixtures with metadata tables in {V89_DIR}"
    return out


def test_metadata_table_base_files(mdt_tables):
    seen_files = 0
    versions = set()
    for stem, root, partitions in mdt_tables:
        for path in sorted((root / ".hoodie" / "metadata").glob("*/*.hfile")):
            with HFileReader.open(str(path)) as r:
                n = r.validate()
                keys = list(r.keys())
                assert len(keys) == n == r.num_entries and keys == sorted(keys)
                assert r.schema and '"HoodieMetadataRecord"' in r.schema
                versions.add(r.trailer.minor_version)
                for k, v in r:
                    assert v and r.get(k) == v  # raw Avro payload bytes
                if r.bloom_filter is not None:  # Hudi's record key range goes with its bloom filter
                    assert (r.min_record_key, r.max_record_key) == ((keys[0], keys[-1]) if keys else (b"", b""))
                    assert r.bloom_filter_type == "DYNAMIC_V0"
                if path.parent.name != "files":
                    continue
                seen_files += 1
                assert keys[0] == b"__all_partitions__", (stem, path.name)
                rest = {k.decode() for k in keys[1:]}
                # file-list records are keyed by partition path ("." for a non-partitioned table)
                assert rest <= {p if p else "." for p in partitions}, (stem, rest, partitions)
                assert r.keys_with_prefix(b"__all") == [b"__all_partitions__"]
    assert seen_files >= 6 and versions == {0, 3}  # Hudi 1.1 (3.0) and HBase via Hudi 1.0 (3.3)


def test_metadata_table_log_blocks(mdt_tables):
    hfile_blocks = reproduced = 0
    for stem, root, partitions in mdt_tables:
        storage = Storage(str(root / ".hoodie" / "metadata"))
        for status in storage.walk_files(""):
            if ".log." not in status.name or status.name.endswith(".crc"):
                continue
            for block in read_log_file(storage, status.path):
                if block.block_type != BlockType.HFILE_DATA:
                    continue
                content = block.read_content()
                r = HFileReader(content, name=f"{stem}/{status.name}")
                keys = list(r.keys())
                assert r.validate() == len(keys) > 0
                if status.path.startswith("files/"):
                    assert (b"__all_partitions__" in keys
                            or set(keys) <= {p.encode() or b"." for p in partitions})
                assert r.schema and r.meta_block_names == []
                hfile_blocks += 1
                if r.trailer.minor_version == 3:
                    # Hudi 1.0 (HBase): the same records, schema and creation time give the same bytes
                    created = int.from_bytes(r.file_info["hfile.CREATE_TIME_TS"], "big")
                    w = HFileWriter(schema=r.schema, create_time_ms=created)
                    w.extend(r)
                    assert w.getvalue() == content, status.name
                    reproduced += 1
    assert hfile_blocks >= 50 and reproduced >= 30


# ------------------------------------------------------------------------------------------------
# the writer against HBase
# ------------------------------------------------------------------------------------------------
def rewrite_like(ref: bytes, **options) -> bytes:
    """Write the contents of ``ref`` again, with its codec, comparator, custom file info and
    meta blocks."""
    r = HFileReader(ref)
    w = HFileWriter(compression=r.trailer.compression_codec,
                    comparator=r.trailer.comparator_class_name, **options)
    w.extend(r)
    for k, v in r.raw_file_info.items():
        if not k.startswith(b"hfile.") and k not in (b"KEY_VALUE_VERSION", b"MAX_MEMSTORE_TS_KEY"):
            w.add_file_info(k, v)
    for name in r.meta_block_names:
        w.add_meta_block(name, r.meta_block(name))
    return w.getvalue()


@pytest.mark.parametrize("name,n,pattern,block_size,codec,levels,opts", PLAIN, ids=PLAIN_IDS)
def test_writer_reproduces_hbase_fixtures_byte_for_byte(name, n, pattern, block_size, codec, levels, opts):
    ref = fixture(name)
    out = rewrite_like(ref, block_size=block_size, index_keys="midpoint", **opts)
    assert out == ref


def test_writer_reproduces_hbase_files_with_repeated_keys_and_no_entries():
    ref = fixture("2_4_9_16KB_GZ_200_20_non_unique")
    assert rewrite_like(ref, block_size=16 * 1024, index_keys="midpoint") == ref
    ref = fixture("2_4_9_no_entry")
    r = HFileReader(ref)
    # the Hudi way: schema plus bloom filter (which brings the min/max keys and the type code)
    w = HFileWriter(schema=r.schema, bloom_filter=r.meta_block("bloomFilter"))
    assert w.getvalue() == ref


def test_full_index_keys_keep_hbase_data_blocks():
    """The default full index keys change only the index: the data blocks stay HBase's."""
    ref = fixture("2_4_13_16KB_GZ_20000_fake_first_key")
    out = rewrite_like(ref, block_size=16 * 1024)
    a, b = HFileReader(ref), HFileReader(out)
    blocks_a, blocks_b = a.data_blocks(), b.data_blocks()
    assert [(x.offset, x.size) for x in blocks_a] == [(x.offset, x.size) for x in blocks_b]
    assert ref[:a.trailer.load_on_open_data_offset] == out[:b.trailer.load_on_open_data_offset]
    for i, blk in enumerate(blocks_b):
        assert blk.index_key[-1] == TYPE_PUT and blk.index_row == b._block(i)[0][0]
    assert list(a) == list(b)


def test_writer_reproduces_hudi_1_0_metadata_base_files(mdt_tables):
    """Every metadata-table base file Hudi 1.0 wrote through HBase (v8 fixture), rewritten from its
    records with Hudi's defaults plus its schema and bloom filter, is byte-identical."""
    compared = 0
    for stem, root, _ in mdt_tables:
        for path in sorted((root / ".hoodie" / "metadata").glob("*/*.hfile")):
            ref = path.read_bytes()
            r = HFileReader(ref)
            if r.trailer.minor_version != 3:
                continue  # Hudi 1.1's own writer: different index keys, file info and deflate
            info = r.raw_file_info
            w = HFileWriter(schema=r.schema, bloom_filter=r.meta_block("bloomFilter"),
                            bloom_filter_type=info[b"bloomFilterTypeCode"].decode())
            w.extend(r)
            assert w.getvalue() == ref, path.name
            compared += 1
    assert compared >= 20


def test_writer_hudi_defaults():
    w = HFileWriter(schema='{"type":"record"}')
    w.append("__all_partitions__", b"v1")
    w.append("city=chennai", b"v2")
    data = w.getvalue()
    r = HFileReader(data)
    t = r.trailer
    assert (t.major_version, t.minor_version, t.compression_codec) == (3, 3, GZ)
    assert t.comparator_class_name == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
    header, raw = r.raw_block(0)
    assert header.checksum_type == 2 and header.bytes_per_checksum == 16384
    assert raw[HEADER_SIZE:HEADER_SIZE + 2] == b"\x1f\x8b"  # a gzip member
    assert r.data_blocks()[0].index_key == b"\x00\x12__all_partitions__\x00" + LATEST_TIMESTAMP.to_bytes(8, "big") + b"\x04"
    assert r.file_info["hfile.LASTKEY"] == b"\x00\x0ccity=chennai\x00" + LATEST_TIMESTAMP.to_bytes(8, "big") + b"\x04"
    assert r.schema == '{"type":"record"}'
    assert sorted(r.file_info) == ["KEY_VALUE_VERSION", "MAX_MEMSTORE_TS_KEY", "hfile.AVG_KEY_LEN",
                                   "hfile.AVG_VALUE_LEN", "hfile.CREATE_TIME_TS", "hfile.LASTKEY", "schema"]
    assert r.meta_block_names == []
    assert dict(r) == {b"__all_partitions__": b"v1", b"city=chennai": b"v2"}
    assert r["city=chennai"] == b"v2"
    with pytest.raises(KeyError):
        r["city=paris"]


def test_writer_to_a_file_and_api_errors(tmp_path):
    path = tmp_path / "x.hfile"
    with open(path, "wb") as f:
        size = write_hfile([(b"a", b"1"), (b"b", b"2")], f, file_info={"k": b"v"}, compression="NONE")
    assert size == path.stat().st_size
    with HFileReader.open(str(path)) as r:
        assert dict(r) == {b"a": b"1", b"b": b"2"} and r.file_info["k"] == b"v"
    w = HFileWriter()
    w.append(b"b", b"")
    with pytest.raises(ValueError, match="sorted order"):
        w.append(b"a", b"")
    with pytest.raises(ValueError, match="32767"):
        w.append(b"c" * 40000, b"")
    with pytest.raises(TypeError):
        w.append(1, b"")  # type: ignore[arg-type]
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.append(b"z", b"")
    with pytest.raises(ValueError, match="SNAPPY"):
        HFileWriter(compression=3)
    with pytest.raises(ValueError, match="unsupported compression"):
        HFileWriter(compression="LZ4")


# ------------------------------------------------------------------------------------------------
# round trips
# ------------------------------------------------------------------------------------------------
keys_st = st.lists(
    st.one_of(st.binary(max_size=6), st.binary(min_size=20, max_size=300),
              st.text(max_size=30).map(lambda s: s.encode())),
    max_size=250, unique=True,
).map(sorted)

options_st = st.fixed_dictionaries({
    "block_size": st.sampled_from([1, 40, 300, 4096, 1 << 20]),
    "compression": st.sampled_from(["GZ", "NONE"]),
    "index_keys": st.sampled_from(["full", "midpoint"]),
    "checksum_type": st.sampled_from([0, 1, 2]),
    "bytes_per_checksum": st.sampled_from([64, 512, 16384]),
    "max_index_chunk_size": st.sampled_from([64, 400, 128 * 1024]),
    "min_index_entries": st.sampled_from([2, 4, 16]),
})


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keys=keys_st, data=st.data(), options=options_st)
def test_round_trip(keys, data, options):
    values = data.draw(st.lists(st.binary(max_size=300), min_size=len(keys), max_size=len(keys)))
    items = list(zip(keys, values))
    out = write_hfile(items, **options)
    r = HFileReader(out)
    assert r.num_entries == len(items) and r.validate() == len(items)
    assert list(r) == items
    for k, v in items[:: max(1, len(items) // 25)]:
        assert r.get(k) == v
    present = set(keys)
    absent = data.draw(st.lists(st.binary(max_size=8), max_size=10))
    for k in absent:
        assert (r.get(k) is None) == (k not in present)
    # get_many (a binary search over the cell offsets, or over every row when the keys are many per block)
    # answers what get answers, for few keys and for all of them.
    for wanted in (data.draw(st.lists(st.sampled_from(keys), max_size=5)) if keys else [], keys):
        asked = list(wanted) + absent
        fresh = HFileReader(out)
        assert fresh.get_many(asked) == {k: r.get(k) for k in asked if r.get(k) is not None}
    for prefix in [b"", *(k[:2] for k in keys[:3]), b"\xff\xff"]:
        assert list(r.items_with_prefix(prefix)) == [kv for kv in items if kv[0].startswith(prefix)]
    if items:
        start = data.draw(st.binary(max_size=4))
        assert list(r.items(start)) == [kv for kv in items if kv[0] >= start]
        assert r.last_key == keys[-1] and r.first_key == keys[0]


@settings(max_examples=examples(25), deadline=None)
@given(counts=st.lists(st.integers(1, 6), min_size=1, max_size=40),
       block_size=st.sampled_from([1, 60, 1000]))
def test_round_trip_repeated_keys(counts, block_size):
    items = [(b"k%04d" % i, b"v%d_%d" % (i, j)) for i, c in enumerate(counts) for j in range(c)]
    r = HFileReader(write_hfile(items, block_size=block_size, max_index_chunk_size=100,
                                min_index_entries=2, index_keys="midpoint"))
    assert list(r) == items
    for i, c in enumerate(counts):
        assert r.get_all(b"k%04d" % i) == [b"v%d_%d" % (i, j) for j in range(c)]
        assert r.get(b"k%04d" % i) == b"v%d_0" % i
    # get_many answers as get (the first of a repeated key), searching each block once
    wanted = [b"k%04d" % i for i in range(0, len(counts), 2)]
    fresh = HFileReader(r._source.read(0, r._source.size))
    assert fresh.get_many(wanted) == {k: r.get(k) for k in wanted}


def test_block_cache_limit():
    items = [(b"k%05d" % i, b"v" * 50) for i in range(2000)]
    data = write_hfile(items, block_size=4096)
    for limit in (0, 5000, 64 << 20):
        r = HFileReader(data, cache_bytes=limit)
        for k, v in items[::-7]:
            assert r.get(k) == v
            assert r._cached_bytes <= limit
        assert (r._cached_bytes > 0) == (limit > 4096)


def test_deep_index_from_tiny_chunks():
    items = [(b"partition=%05d/file-%05d.parquet" % (i // 7, i), os.urandom(20)) for i in range(3000)]
    out = write_hfile(items, block_size=256, max_index_chunk_size=256, min_index_entries=2)
    r = HFileReader(out)
    assert r.trailer.num_data_index_levels >= 4
    assert r.validate() == 3000 and list(r) == items
    for k, v in items[::97]:
        assert r.get(k) == v
    assert r.keys_with_prefix(b"partition=00100/") == [k for k, _ in items if k.startswith(b"partition=00100/")]


# ------------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------------
def _small_file() -> bytes:
    items = [(b"key-%04d" % i, b"value-%d" % i * 3) for i in range(120)]
    w = HFileWriter(block_size=200, max_index_chunk_size=120, min_index_entries=2,
                    bytes_per_checksum=128, schema="{}")
    w.extend(items)
    w.add_meta_block("bloomFilter", b"not really a bloom filter")
    return w.getvalue()


SMALL = _small_file()


def _read_everything(data: bytes, verify: bool) -> None:
    r = HFileReader(data, name="fuzzed.hfile", verify_checksums=verify)
    for _ in r:
        pass
    r.get(b"key-0042")
    r.get(b"zzz")
    list(r.items_with_prefix(b"key-01"))
    r.meta_block("bloomFilter")
    _ = r.file_info, r.last_key, r.first_key
    list(r.cells())
    r.validate()


def test_small_file_is_valid():
    assert HFileReader(SMALL).trailer.num_data_index_levels >= 2
    _read_everything(SMALL, True)


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data(), verify=st.booleans())
def test_corrupt_input_only_raises_hfile_error(data, verify):
    buf = bytearray(SMALL)
    kind = data.draw(st.sampled_from(["truncate", "flip", "flip-near-end", "garbage"]))
    if kind == "truncate":
        buf = buf[:data.draw(st.integers(0, len(buf) - 1))]
    elif kind == "garbage":
        at = data.draw(st.integers(0, len(buf) - 1))
        chunk = data.draw(st.binary(min_size=1, max_size=64))
        buf[at:at + len(chunk)] = chunk
    else:
        lo = len(buf) - TRAILER_SIZE - 600 if kind == "flip-near-end" else 0
        for _ in range(data.draw(st.integers(1, 3))):
            i = data.draw(st.integers(lo, len(buf) - 1))
            buf[i] ^= 1 << data.draw(st.integers(0, 7))
    try:
        _read_everything(bytes(buf), verify)
    except HFileError as exc:
        assert "fuzzed.hfile" in str(exc)


def test_error_messages_name_the_file_and_block():
    with pytest.raises(HFileError, match="short.hfile.*too short"):
        HFileReader(SMALL[:100], name="short.hfile")
    with pytest.raises(HFileError, match="t.hfile.*bad trailer magic"):
        HFileReader(SMALL[:-1], name="t.hfile")
    with pytest.raises(HFileError, match="bad trailer magic"):
        HFileReader(b"PAR1" + bytes(5000))
    bad_version = SMALL[:-4] + (2).to_bytes(4, "big")
    with pytest.raises(HFileError, match="unsupported HFile version 2.0"):
        HFileReader(bad_version)
    # flip a payload byte of the second data block: its checksum no longer matches
    r = HFileReader(SMALL)
    second = r.data_blocks()[1]
    buf = bytearray(SMALL)
    buf[second.offset + HEADER_SIZE + 3] ^= 0x10
    bad = HFileReader(bytes(buf), name="crc.hfile")
    assert bad.get(b"key-0000") is not None  # other blocks still read
    with pytest.raises(HFileError, match=f"crc.hfile: block at offset {second.offset}: CRC32C checksum mismatch"):
        list(bad)
    # a truncated data section: the index points past the end of what is there
    with pytest.raises(HFileError, match="outside"):
        HFileReader(SMALL[:second.offset] + SMALL[-TRAILER_SIZE:])


def _with_trailer_field(data: bytes, number: int, value: int) -> bytes:
    """Rewrite one varint field of the trailer message."""
    t = parse_trailer(data[-TRAILER_SIZE:])
    names = {12: "compression_codec", 8: "num_data_index_levels", 5: "data_index_count"}
    setattr(t, names[number], value)
    return data[:-TRAILER_SIZE] + t.serialize()


def test_unsupported_compression_is_named():
    for codec, name in [(3, "SNAPPY"), (6, "ZSTD"), (0, "LZO"), (4, "LZ4"), (42, "unknown codec id 42")]:
        with pytest.raises(HFileError, match=f"x.hfile: unsupported compression {name}"):
            HFileReader(_with_trailer_field(SMALL, 12, codec), name="x.hfile")


def test_inconsistent_trailer_counts():
    with pytest.raises(HFileError, match="data index levels"):
        HFileReader(_with_trailer_field(SMALL, 8, 99))
    with pytest.raises(HFileError):
        HFileReader(_with_trailer_field(SMALL, 5, 1000))


def test_index_that_repeats_blocks_is_refused():
    """A (crafted) root index listing the same leaf blocks over and over is caught before the
    descent multiplies them."""
    r = HFileReader(SMALL)
    t = r.trailer
    loo = t.load_on_open_data_offset
    repeated = [e for e in r._root for _ in range(200)]
    opts = {"prev_offset": -1, "codec": GZ, "checksum_type": 2, "bytes_per_checksum": 16384}
    root = encode_block(ROOT_INDEX, encode_root_index(repeated), **opts)
    rest = SMALL[loo:len(SMALL) - TRAILER_SIZE]
    first_len = r.raw_block(loo)[0].on_disk_size_with_header
    t.data_index_count = len(repeated)
    t.file_info_offset += len(root) - first_len
    crafted = SMALL[:loo] + root + rest[first_len:] + t.serialize()
    bad = HFileReader(crafted, name="crafted.hfile")
    with pytest.raises(HFileError, match="crafted.hfile.*more blocks than the file has cells"):
        bad.get(b"key-0001")


def test_checksum_types():
    items = [(b"k%04d" % i, os.urandom(50)) for i in range(400)]
    for ctype in (0, 1, 2):
        out = write_hfile(items, checksum_type=ctype, block_size=2000, bytes_per_checksum=512)
        r = HFileReader(out)
        header, raw = r.raw_block(0)
        assert header.checksum_type == ctype
        odd = header.on_disk_data_size_with_header
        sums = struct.unpack(f">{(len(raw) - odd) // 4}I", raw[odd:])
        chunks = [raw[:odd][i:i + 512] for i in range(0, odd, 512)]
        want = {0: [0] * len(chunks), 1: [zlib.crc32(c) for c in chunks],
                2: [crc32c(c) for c in chunks]}[ctype]
        assert list(sums) == want and list(r) == items


# ------------------------------------------------------------------------------------------------
# building blocks
# ------------------------------------------------------------------------------------------------
def test_crc32c_known_values():
    # RFC 3720 (iSCSI) B.4 test vectors
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(b"") == 0
    big = bytes(range(256)) * 300
    assert crc32c(big) == _crc32c_py(big)


@settings(max_examples=examples(60), deadline=None)
@given(data=st.binary(max_size=5000), chunk=st.sampled_from([1, 3, 4, 63, 64, 100, 512, 4096, 16384]),
       tail=st.sampled_from([0, 0, 0, 17000, 40000]))
def test_crc32c_chunks_match_the_definition(data, chunk, tail):
    data = data + bytes(tail)  # long inputs: many chunks, the vectorised path
    assert crc32c_chunks(data, chunk) == [_crc32c_py(data[i:i + chunk]) for i in range(0, len(data), chunk)]


@given(st.integers(-(1 << 63), (1 << 63) - 1))
def test_hadoop_vlong_round_trip(value):
    enc = write_vlong(value)
    assert read_vlong(enc + b"junk", 0) == (value, len(enc))


def test_hadoop_vlong_known_encodings():
    # WritableUtils.writeVLong
    assert write_vlong(0) == b"\x00" and write_vlong(127) == b"\x7f" and write_vlong(-112) == b"\x90"
    assert write_vlong(128) == b"\x8f\x80" and write_vlong(131) == b"\x8f\x83"
    assert write_vlong(-113) == b"\x87\x70" and write_vlong(65536) == b"\x8d\x01\x00\x00"


@given(st.integers(0, (1 << 64) - 1))
def test_protobuf_varint_round_trip(value):
    enc = write_uvarint(value)
    assert read_uvarint(enc, 0) == (value, len(enc))
    assert write_uvarint(-1) == b"\xff" * 9 + b"\x01"


def test_protobuf_messages_reject_garbage():
    assert parse_message(b"\x08\x96\x01\x12\x02hi") == [(1, 150), (2, b"hi")]
    for bad in (b"\x08", b"\x12\x05ab", b"\x0b", b"\x00\x01", b"\x08" + b"\xff" * 11):
        with pytest.raises(HFileError):
            parse_message(bad)


def test_midpoint_rows_like_hbase():
    assert midpoint_row(b"hudi-key-000000277", b"hudi-key-000000278") == b"hudi-key-000000278"
    assert midpoint_row(b"hudi-key-000000469-abcdefghij", b"hudi-key-000000470-abcdefghij") == b"hudi-key-00000047"
    assert midpoint_row(b"abc", b"abcdef") == b"abcd"  # left is a prefix of right
    assert midpoint_row(b"a1", b"a5") == b"a2"
    assert midpoint_row(b"a\xff", b"b") == b"b"
    with pytest.raises(HFileError):
        key_row(b"\x00\x09abc")


def test_trailer_round_trip():
    t = HFileReader(fixture("2_4_9_no_entry")).trailer
    again = parse_trailer(t.serialize())
    assert vars(again) == vars(t)
    assert t.serialize() == fixture("2_4_9_no_entry")[-TRAILER_SIZE:]
