"""The process-wide cache of local Parquet footers (``hoodie.format.storage.parquet_footer``): a hit spares
decoding a base file's footer (and Hudi's bloom filter in it) again, and a file replaced under the same name,
whatever stays equal, is read afresh."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format import storage as S
from hoodie.format.slice.slice_reader import read_base_file
from hoodie.format.storage import Storage, StorageError, clear_footer_cache, parquet_footer
from tests.helpers import examples

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.int64())])


def _write(path: str, values: list[int]) -> None:
    # Plain encoding, no compression, no dictionary: equal row counts give equal file sizes. The footer's
    # key-value metadata names the values (as Hudi's footer carries the file's keys): a stale footer would show.
    meta = {b"values": ",".join(f"{v:03d}" for v in values).encode()}
    t = pa.table({"k": list(range(len(values))), "v": values}, schema=SCHEMA.with_metadata(meta))
    pq.write_table(t, path, compression="NONE", use_dictionary=False)


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch):
    monkeypatch.delenv("HOODIE_PARQUET_FOOTER_CACHE_MB", raising=False)
    clear_footer_cache()
    yield
    clear_footer_cache()


def _values(storage: Storage, rel: str) -> list[int]:
    """The file's values, after checking that the footer read with them is the file's own."""
    footer: dict[bytes, bytes] = {}
    vals = read_base_file(storage, rel, SCHEMA, footer=footer).column("v").to_pylist()
    assert footer[b"values"] == ",".join(f"{v:03d}" for v in vals).encode()
    return vals


def test_hit_returns_the_cached_footer(tmp_path):
    _write(str(tmp_path / "a.parquet"), [1, 2, 3])
    st = Storage(str(tmp_path))
    first = parquet_footer(st, "a.parquet")
    assert first is not None and parquet_footer(st, "a.parquet") is first
    assert _values(st, "a.parquet") == [1, 2, 3]


def test_file_replaced_by_rename_with_same_size_and_mtime_is_reread(tmp_path):
    """A retried write reusing the name: same size, mtime forced equal; the inode and ctime tell them apart."""
    full = str(tmp_path / "a.parquet")
    _write(full, [1, 2, 3])
    st = Storage(str(tmp_path))
    assert _values(st, "a.parquet") == [1, 2, 3]
    old = os.stat(full)
    _write(str(tmp_path / "b.tmp"), [7, 8, 9])
    os.replace(str(tmp_path / "b.tmp"), full)
    os.utime(full, ns=(old.st_atime_ns, old.st_mtime_ns))
    new = os.stat(full)
    assert (new.st_size, new.st_mtime_ns) == (old.st_size, old.st_mtime_ns) and new.st_ino != old.st_ino
    assert _values(st, "a.parquet") == [7, 8, 9]


def test_file_rewritten_in_place_with_other_size_is_reread(tmp_path):
    """Same inode and mtime (forced), other size: the size in the key catches it."""
    full = str(tmp_path / "a.parquet")
    _write(full, [1, 2, 3])
    st = Storage(str(tmp_path))
    assert _values(st, "a.parquet") == [1, 2, 3]
    old = os.stat(full)
    _write(str(tmp_path / "b.tmp"), [4, 5, 6, 7])
    with open(str(tmp_path / "b.tmp"), "rb") as src, open(full, "r+b") as dst:  # same inode
        dst.truncate(0)
        dst.write(src.read())
    os.utime(full, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert os.stat(full).st_ino == old.st_ino and os.stat(full).st_size != old.st_size
    assert _values(st, "a.parquet") == [4, 5, 6, 7]


def test_file_rewritten_in_place_same_size_other_mtime_is_reread(tmp_path):
    full = str(tmp_path / "a.parquet")
    _write(full, [1, 2, 3])
    st = Storage(str(tmp_path))
    assert _values(st, "a.parquet") == [1, 2, 3]
    old = os.stat(full)
    _write(str(tmp_path / "b.tmp"), [4, 5, 6])
    with open(str(tmp_path / "b.tmp"), "rb") as src, open(full, "r+b") as dst:
        dst.write(src.read())
    os.utime(full, ns=(old.st_atime_ns, old.st_mtime_ns + 1_000_000))
    assert os.stat(full).st_size == old.st_size
    assert _values(st, "a.parquet") == [4, 5, 6]


def test_cache_off_and_bad_setting(tmp_path, monkeypatch):
    _write(str(tmp_path / "a.parquet"), [1])
    st = Storage(str(tmp_path))
    monkeypatch.setenv("HOODIE_PARQUET_FOOTER_CACHE_MB", "0")
    assert parquet_footer(st, "a.parquet") is None
    assert _values(st, "a.parquet") == [1]
    monkeypatch.setenv("HOODIE_PARQUET_FOOTER_CACHE_MB", "lots")
    with pytest.raises(StorageError, match="HOODIE_PARQUET_FOOTER_CACHE_MB='lots'.*0 to turn"):
        parquet_footer(st, "a.parquet")


def test_cache_is_bounded_least_recently_used_first(tmp_path, monkeypatch):
    st = Storage(str(tmp_path))
    for i in range(6):
        _write(str(tmp_path / f"{i}.parquet"), [i])
    one = pq.read_metadata(str(tmp_path / "0.parquet")).serialized_size
    monkeypatch.setenv("HOODIE_PARQUET_FOOTER_CACHE_MB", str(3.5 * one / (1024 * 1024)))
    mds = [parquet_footer(st, f"{i}.parquet") for i in range(6)]
    assert len(S._FOOTERS) == 3 and S._FOOTER_BYTES[0] <= 3.5 * one
    assert parquet_footer(st, "5.parquet") is mds[5]  # kept
    assert parquet_footer(st, "0.parquet") is not mds[0]  # evicted, read again


def test_missing_and_damaged_files_keep_their_errors(tmp_path):
    from hoodie.format.slice.filters import ReadError

    st = Storage(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        read_base_file(st, "gone.parquet", SCHEMA)
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ReadError, match="bad.parquet is not readable Parquet"):
        read_base_file(st, "bad.parquet", SCHEMA)


@settings(max_examples=examples(30), deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["rename", "in_place", "delete_recreate"]),
                                 st.lists(st.integers(0, 999), min_size=1, max_size=4),
                                 st.booleans()), min_size=1, max_size=5))
def test_every_replacement_of_a_file_is_read_as_written(tmp_path_factory, steps):
    """Model: whatever sequence of replacements under one name (a renamed-in copy, an in-place rewrite, a delete
    and re-create reusing the freed inode; mtime forced back to the previous one or not), a read returns the
    last written values and the last written footer, never a cached one. (Found: with a key of path, size,
    mtime and inode, a delete and re-create got the first file's inode back and matched its stale entry.)"""
    root = tmp_path_factory.mktemp("replace")
    full = str(root / "f.parquet")
    stor = Storage(str(root))
    _write(full, [0])
    assert _values(stor, "f.parquet") == [0]
    for how, values, keep_mtime in steps:
        before = os.stat(full)
        tmp = str(root / "next.tmp")
        _write(tmp, values)
        if how == "rename":
            os.replace(tmp, full)
        elif how == "in_place":
            with open(tmp, "rb") as src, open(full, "r+b") as dst:
                dst.truncate(0)
                dst.write(src.read())
            os.remove(tmp)
        else:
            os.remove(full)
            os.replace(tmp, full)
        if keep_mtime:
            os.utime(full, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert _values(stor, "f.parquet") == values
