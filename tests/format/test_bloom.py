"""Base-file bloom filters: byte-identical to Java Hudi's, checked three ways.

* every base file in the Java-written fixtures: the filter rebuilt from the file's keys serializes
  to exactly the footer Java wrote, and the Java filter holds every key;
* random keys (non-ASCII included, so MurmurHash's sign-extended tail bytes matter) and small
  filter sizes (so dynamic rows are added and the bound is reached): the vectorised builder
  against a per-key model transcribed from Hudi's Java classes;
* files hoodie writes carry the filter, honour the bloom options, and refuse bad ones before
  anything is committed.
"""

from __future__ import annotations

import base64
import math
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie import write_arrow
from hoodie.errors import WriteError
from hoodie.format.slice.bloom import (
    BLOOM_FOOTER_KEY, BLOOM_TYPE_FOOTER_KEY, BloomFilter, BloomSpec, read_bloom_filter,
)
from hoodie.format.storage import Storage
from hoodie.format.timeline.active import Timeline
from tests.conftest import FIXTURE_ZIPS
from tests.helpers import examples


# ------------------------------------------------------------------------------------------------
# A per-key model of Hudi's classes (MurmurHash, HashFunction, InternalBloomFilter,
# InternalDynamicBloomFilter), written with Python ints, independent of the numpy code.
# ------------------------------------------------------------------------------------------------
def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _murmur(data: bytes, seed: int) -> int:
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = _i32(seed ^ length)
    for i in range(length >> 2):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = _i32(k * m)
        k ^= (k & 0xFFFFFFFF) >> r
        k = _i32(k * m)
        h = _i32(h * m)
        h = _i32(h ^ k)
    left = length & 3
    if left:
        sb = [b - 256 if b > 127 else b for b in data[length - left:]]  # Java bytes are signed
        if left >= 3:
            h = _i32(h ^ (sb[-3] << 16))
        if left >= 2:
            h = _i32(h ^ (sb[-2] << 8))
        h = _i32(h ^ sb[-1])
        h = _i32(h * m)
    h = _i32(h ^ ((h & 0xFFFFFFFF) >> 13))
    h = _i32(h * m)
    h = _i32(h ^ ((h & 0xFFFFFFFF) >> 15))
    return h


def _positions(key: str, nb_hash: int, vector_size: int) -> list[int]:
    b = key.encode("utf-8")
    out, seed = [], 0
    for _ in range(nb_hash):
        seed = _murmur(b, seed)
        out.append(abs(int(math.fmod(seed, vector_size))))  # Java's % truncates toward zero
    return out


class _ModelDynamic:
    def __init__(self, spec: BloomSpec) -> None:
        self.vs, self.nh, self.nr, self.max_nr = spec.vector_size, spec.num_hashes, spec.num_entries, \
            spec.dynamic_max_entries
        self.cur, self.reached, self.idx = 0, False, 0
        self.rows = [set()]

    def _active(self):
        if self.reached:
            row = self.rows[self.idx % len(self.rows)]
            self.idx += 1
            return row
        if self.cur >= self.nr and len(self.rows) * self.nr < self.max_nr:
            return None
        if self.cur >= self.nr and len(self.rows) * self.nr >= self.max_nr:
            self.reached = True
            return self.rows[0]
        return self.rows[-1]

    def add(self, key: str) -> None:
        row = self._active()
        if row is None:
            self.rows.append(set())
            row = self.rows[-1]
            self.cur = 0
        row.update(_positions(key, self.nh, self.vs))
        self.cur += 1

    def to_bytes(self) -> bytes:
        head = struct.pack(">iibi", -1, self.nh, 1, self.vs)
        out = [head, struct.pack(">iii", self.nr, self.cur, len(self.rows))]
        for row in self.rows:
            bits = bytearray((self.vs + 7) // 8)
            for p in row:
                bits[p // 8] |= 1 << (p % 8)
            out += [head, bytes(bits)]
        return b"".join(out)


# ------------------------------------------------------------------------------------------------
def _java_base_files(fixtures_root: Path) -> list[Path]:
    files = [p for z in FIXTURE_ZIPS for p in (fixtures_root / z.stem).rglob("*.parquet")
             if "gold_" not in str(p) and ".hoodie" not in p.parts]
    return sorted(files)


def test_java_fixture_filters_are_reproduced_byte_for_byte(fixtures_root: Path) -> None:
    files = _java_base_files(fixtures_root)
    assert len(files) >= 10, files
    for f in files:
        pf = pq.ParquetFile(f)
        footer = pf.metadata.metadata
        keys = pf.read(columns=["_hoodie_record_key"]).column(0)
        java = read_bloom_filter(footer)
        assert java is not None and java.filter_type == "DYNAMIC_V0", f
        assert java.might_contain(keys).all(), f
        ours = BloomFilter.build(keys, BloomSpec())
        assert ours.serialize() == footer[BLOOM_FOOTER_KEY.encode()].decode(), f
        assert ours.footer()[BLOOM_TYPE_FOOTER_KEY] == footer[BLOOM_TYPE_FOOTER_KEY.encode()].decode()
        # A round trip through our parser gives the same bytes back.
        assert java.to_bytes() == ours.to_bytes()


def test_defaults_are_hudis() -> None:
    spec = BloomSpec()
    # Hudi 0.14 defaults: 60000 entries at 1e-9 give 30 hashes over ~2.59M bits.
    assert (spec.num_entries, spec.fpp, spec.filter_type, spec.dynamic_max_entries) == (60000, 1e-9, "DYNAMIC_V0",
                                                                                        100000)
    assert spec.num_hashes == 30
    assert spec.vector_size == math.ceil(60000 * -math.log(1e-9) / math.log(2) ** 2)


_keys = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=13),
                 min_size=0, max_size=60)


@settings(max_examples=examples(150), deadline=None)
@given(keys=_keys, nr=st.integers(1, 12), max_nr=st.integers(1, 40),
       fpp=st.sampled_from([0.5, 0.1, 0.01, 1e-4]))
def test_vectorised_builder_matches_the_java_model(keys: list[str], nr: int, max_nr: int, fpp: float) -> None:
    spec = BloomSpec(num_entries=nr, fpp=fpp, dynamic_max_entries=max_nr)
    model = _ModelDynamic(spec)
    for k in keys:
        model.add(k)
    ours = BloomFilter.build(pa.array(keys, pa.string()), spec)
    assert ours.to_bytes() == model.to_bytes()
    # Adding in two batches is the same as adding at once (the dynamic state carries over).
    half = len(keys) // 2
    two = BloomFilter.empty(spec)
    two.add(pa.array(keys[:half], pa.string()))
    two.add(pa.array(keys[half:], pa.string()))
    assert two.to_bytes() == model.to_bytes()
    if keys:
        assert BloomFilter.deserialize(ours.serialize(), "DYNAMIC_V0").might_contain(pa.array(keys)).all()


@settings(max_examples=examples(50), deadline=None)
@given(keys=_keys.filter(bool))
def test_simple_filter_matches_the_model(keys: list[str]) -> None:
    spec = BloomSpec(num_entries=20, fpp=0.01, filter_type="SIMPLE")
    bits = bytearray((spec.vector_size + 7) // 8)
    for k in keys:
        for p in _positions(k, spec.num_hashes, spec.vector_size):
            bits[p // 8] |= 1 << (p % 8)
    expected = struct.pack(">iibi", -1, spec.num_hashes, 1, spec.vector_size) + bytes(bits)
    ours = BloomFilter.build(pa.array(keys), spec)
    assert ours.to_bytes() == expected
    assert BLOOM_TYPE_FOOTER_KEY not in ours.footer()  # Java writes the type code for dynamic filters only
    assert read_bloom_filter({BLOOM_FOOTER_KEY.encode(): ours.serialize().encode()}).might_contain(pa.array(keys)).all()


def test_false_positive_rate_is_low_and_rows_grow() -> None:
    keys = pa.array([f"key-{i}" for i in range(130_000)])
    bf = BloomFilter.build(keys)
    assert len(bf.rows) == 2 and bf.current_nb_record == 70_000  # bound reached: rows take turns
    assert bf.might_contain(keys).all()
    others = pa.array([f"other-{i}" for i in range(200_000)])
    assert bf.might_contain(others).sum() <= 2


@pytest.mark.parametrize("text,code,message", [
    ("not base64!", "DYNAMIC_V0", "not Base64"),
    (base64.b64encode(b"\xff\xff\xff\xff\x00").decode(), "DYNAMIC_V0", "truncated"),
    (base64.b64encode(struct.pack(">iibi", -2, 3, 1, 8) + b"\x00").decode(), "SIMPLE", "version -2"),
    (base64.b64encode(struct.pack(">iibi", -1, 3, 0, 8) + b"\x00").decode(), "SIMPLE", "hash type 0"),
    (base64.b64encode(struct.pack(">iibi", -1, 3, 1, 8) + b"\x00").decode(), "BLOOMIER", "unknown bloom filter type"),
])
def test_damaged_footers_raise_clear_errors(text: str, code: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BloomFilter.deserialize(text, code)


def test_null_and_empty_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="null record key"):
        BloomFilter.build(pa.array(["a", None]))
    with pytest.raises(ValueError, match="empty record key"):
        BloomFilter.build(pa.array(["a", ""]))


# ------------------------------------------------------------------------------------------------
_OPTS = {"hoodie.table.name": "b", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.operation": "upsert"}


def _rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array([f"k{i}" for i in ids]), "p": pa.array([f"p{i % 2}" for i in ids]),
                     "ts": pa.array(list(ids), pa.int64())})


def test_written_base_files_carry_the_filter(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    write_arrow(base, _rows(range(500)), _OPTS)
    files = sorted((tmp_path / "t").rglob("*.parquet"))
    assert len(files) == 2
    for f in files:
        pf = pq.ParquetFile(f)
        keys = pf.read(columns=["_hoodie_record_key"]).column(0)
        footer = pf.metadata.metadata
        assert footer[BLOOM_TYPE_FOOTER_KEY.encode()] == b"DYNAMIC_V0"
        serialized = BloomFilter.build(keys).serialize()
        assert footer[BLOOM_FOOTER_KEY.encode()].decode() == serialized
        assert read_bloom_filter(footer).might_contain(keys).all()
        # Stored once, in the Parquet footer (not a second time inside pyarrow's ARROW:schema).
        assert f.read_bytes().count(serialized[:4096].encode()) == 1
        assert f.stat().st_size < len(serialized) * 1.2


def test_bloom_options_are_honoured(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    write_arrow(base, _rows(range(300)), {**_OPTS, "hoodie.bloom.index.filter.type": "SIMPLE",
                                         "hoodie.index.bloom.num_entries": "1000", "hoodie.index.bloom.fpp": "0.001"})
    spec = BloomSpec(num_entries=1000, fpp=0.001, filter_type="SIMPLE")
    for f in (tmp_path / "t").rglob("*.parquet"):
        footer = pq.ParquetFile(f).metadata.metadata
        assert BLOOM_TYPE_FOOTER_KEY.encode() not in footer
        bf = read_bloom_filter(footer)
        assert (bf.filter_type, bf.vector_size, bf.nb_hash) == ("SIMPLE", spec.vector_size, spec.num_hashes)


@pytest.mark.parametrize("key,value,message", [
    ("hoodie.bloom.index.filter.type", "CUCKOO", "DYNAMIC_V0 or SIMPLE"),
    ("hoodie.index.bloom.fpp", "2", "must be at most 1"),
    ("hoodie.index.bloom.fpp", "1", "between 0 and 1"),
    ("hoodie.index.bloom.fpp", "0", "between 0 and 1"),
    ("hoodie.index.bloom.num_entries", "many", "not an integer"),
])
def test_bad_bloom_options_fail_before_any_commit(tmp_path: Path, key: str, value: str, message: str) -> None:
    base = str(tmp_path / "t")
    write_arrow(base, _rows(range(10)), _OPTS)
    with pytest.raises(WriteError, match=f"{key}.*{message}|{message}"):
        write_arrow(base, _rows(range(10, 20)), {**_OPTS, key: value})
    timeline = Timeline.load(Storage(base))
    assert len(timeline.completed().instants) == 1 and not timeline.pending().instants


def _latest_base_files(root: Path) -> dict[str, Path]:
    """The newest base file of each file group (by instant in the name)."""
    out: dict[str, Path] = {}
    for f in sorted(root.rglob("*.parquet"), key=lambda f: f.name.rsplit("_", 1)[1]):
        out[f.name.split("_", 1)[0]] = f
    return out


@pytest.mark.parametrize("filter_type,num_entries", [("DYNAMIC_V0", 60000), ("DYNAMIC_V0", 64), ("SIMPLE", 60000)])
def test_a_copy_on_write_update_keeps_the_filter_it_would_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  filter_type: str, num_entries: int) -> None:
    """A rewrite that keeps exactly the old file's keys copies the old filter (issue 18: the bloom phase
    was a fifth of a copy-on-write upsert); the bytes equal a filter built from the new file's keys
    (several rows with 64 entries a row: updates stay in place, so the key order is the old file's).
    A rewrite that adds or drops keys, or a changed bloom option, builds it afresh."""
    base = str(tmp_path / "t")
    opts = {**_OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.bloom.index.filter.type": filter_type,
            "hoodie.index.bloom.num_entries": str(num_entries)}
    write_arrow(base, _rows(range(400)), opts)
    built = []
    real = BloomFilter.build.__func__

    def counting(cls, keys, spec=BloomSpec()):
        built.append(len(keys))
        return real(cls, keys, spec)

    monkeypatch.setattr(BloomFilter, "build", classmethod(counting))

    def check(spec: BloomSpec) -> None:
        for f in _latest_base_files(tmp_path / "t").values():
            pf = pq.ParquetFile(f)
            keys = pf.read(columns=["_hoodie_record_key"]).column(0)
            assert pf.metadata.metadata[BLOOM_FOOTER_KEY.encode()].decode() == real(BloomFilter, keys, spec).serialize()

    upd = _rows(range(0, 400, 7)).set_column(2, "ts", pa.array([1000] * len(range(0, 400, 7)), pa.int64()))
    write_arrow(base, upd, opts)  # updates only: both files rewritten with their own keys
    assert built == [], "the old filters should have been copied"
    check(BloomSpec(filter_type=filter_type, num_entries=num_entries))
    write_arrow(base, _rows(range(400, 410)), opts)  # new keys fill the small files: filters rebuilt
    assert sorted(built) == [205, 205], built  # each file: its 200 keys and 5 new ones
    check(BloomSpec(filter_type=filter_type, num_entries=num_entries))
    built.clear()
    changed = {**opts, "hoodie.index.bloom.fpp": "0.0001"}
    write_arrow(base, upd, changed)  # same keys, another fpp: the option wins over the old filter
    assert len(built) == 2
    check(BloomSpec(fpp=0.0001, filter_type=filter_type, num_entries=num_entries))


@pytest.mark.parametrize("change", ["type", "size", "count", "rows", "garbage", "missing"])
def test_a_filter_is_copied_only_when_it_is_exactly_the_one_to_build(change: str) -> None:
    from hoodie.format.slice.bloom import reusable_footer

    spec = BloomSpec(num_entries=50)
    keys = pa.array([f"k{i}" for i in range(40)])
    footer = {k.encode(): v.encode() for k, v in BloomFilter.build(keys, spec).footer().items()}
    assert reusable_footer(footer, spec, 40) == BloomFilter.build(keys, spec).footer()
    n = 40
    if change == "type":
        spec = BloomSpec(num_entries=50, filter_type="SIMPLE")
    elif change == "size":
        spec = BloomSpec(num_entries=60)
    elif change == "count":
        n = 41
    elif change == "rows":  # 120 keys over rows of 50 with a bound of 100: keys went to the rows in turn
        spec = BloomSpec(num_entries=50, dynamic_max_entries=100)
        keys = pa.array([f"k{i}" for i in range(120)])
        footer = {k.encode(): v.encode() for k, v in BloomFilter.build(keys, spec).footer().items()}
        n = 120
    elif change == "garbage":
        footer[BLOOM_FOOTER_KEY.encode()] = b"!!" + footer[BLOOM_FOOTER_KEY.encode()][2:]
    else:
        footer = {}
    assert reusable_footer(footer, spec, n) is None
