"""HoodieMetadataPayload's merge rules for the files partition, and a model test of merge sequences."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.format.metadata import MetadataTable, MetadataTableError
from hoodie.format.metadata.records import (
    FileInfo, FilesRecord, RecordDecoder, combine, deleted_record, fold,
)
from hoodie.format.storage import Storage
from tests.format.metadata_builder import SCHEMA_JSON, MdtBuilder, encode_value


def rec(key: str, typ: int = 2, **files: tuple[int, bool]) -> FilesRecord:
    return FilesRecord(key, typ, {n: FileInfo(s, d) for n, (s, d) in files.items()})


def test_additions_keep_the_larger_size_and_deletions_remove() -> None:
    old = rec("p", a=(10, False), b=(5, False))
    new = rec("p", a=(7, False), b=(0, True), c=(3, False))
    out = combine(new, old)
    assert out.files == {"a": FileInfo(10, False), "c": FileInfo(3, False)}
    assert combine(rec("p", a=(12, False)), old).files["a"] == FileInfo(12, False)


def test_tombstone_without_older_entry_is_kept() -> None:
    out = combine(rec("p", x=(0, True)), rec("p", y=(4, False)))
    assert out.files["x"] == FileInfo(0, True) and out.live() == {"y": 4}


def test_repeated_tombstone_v6_drops_it_v8_keeps_it() -> None:
    """0.14/0.15 ``Map.merge`` with null drops a name deleted twice; 1.x keeps the newer tombstone."""
    first, second = rec("p", x=(0, True)), rec("p", x=(0, True))
    assert "x" not in combine(second, first).files
    assert combine(second, first, keep_repeated_tombstones=True).files["x"] == FileInfo(0, True)
    # folded over a base file that lists x, either way x stays deleted
    for keep in (False, True):
        got = fold({"p": rec("p", x=(9, False))}, [[first], [second]], keep_repeated_tombstones=keep)
        assert got["p"].live() == {}


def test_grown_then_deleted_file_stays_deleted() -> None:
    """A log file listed in the base, listed again larger in one log block and deleted in a later one
    is gone (Java's two-stage order would bring the base entry back; storage no longer has it)."""
    got = fold({"p": rec("p", L=(10, False), K=(1, False))}, [[rec("p", L=(20, False))], [rec("p", L=(0, True))]])
    assert got["p"].live() == {"K": 1}


def test_delete_record_hides_older_and_newer_wins_over_it() -> None:
    base = {"p": rec("p", b=(2, False))}
    assert fold(base, [[rec("p", a=(1, False))], [deleted_record("p")]]) == {}
    got = fold(base, [[deleted_record("p")], [rec("p", c=(3, False))]])
    assert got["p"].live() == {"c": 3}


def test_invalid_combinations_raise() -> None:
    with pytest.raises(MetadataTableError, match="cannot combine"):
        combine(rec("p", 1), rec("p", 2))
    with pytest.raises(MetadataTableError, match="cannot combine"):
        combine(rec("p"), rec("q"))
    with pytest.raises(MetadataTableError, match="type 3"):
        combine(rec("p", 3), rec("p", 3))
    with pytest.raises(MetadataTableError, match="size 0"):
        combine(rec("p", a=(0, False)), rec("p", b=(1, False)))


def test_decoder_reads_keys_from_the_cell_row_and_refuses_garbage() -> None:
    dec = RecordDecoder(SCHEMA_JSON, "here")
    got = dec.decode(b"city=x", encode_value(2, {"f": (5, False), "g": (0, True)}))
    assert got == rec("city=x", f=(5, False), g=(0, True))
    assert dec.decode(b"p", encode_value(2, None)).files == {}
    with pytest.raises(MetadataTableError, match="here: undecodable metadata record for key b'p'"):
        dec.decode(b"p", b"\x04\x02garbage")
    with pytest.raises(MetadataTableError, match="unreadable HoodieMetadataRecord schema"):
        RecordDecoder("{not json", "there")


# ------------------------------------------------------------------------------------------------
# model test: random commits of additions, growth and deletions, with compactions in between
# ------------------------------------------------------------------------------------------------
OP = st.tuples(st.sampled_from(["add", "grow", "delete"]), st.integers(0, 5), st.integers(1, 1000))
COMMIT = st.tuples(st.lists(OP, max_size=6), st.booleans())  # (operations, compact afterwards)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commits=st.lists(COMMIT, min_size=1, max_size=8))
def test_merged_listing_matches_model(tmp_path_factory: pytest.TempPathFactory, commits: list) -> None:
    """Each commit adds fresh files, grows live ones (log files only grow) or deletes live ones, in
    one MDT deltacommit; some commits are followed by an MDT compaction writing the merged state as
    a new base file. The listing read back must equal the model after the last commit."""
    path = tmp_path_factory.mktemp("model") / "t"
    data = Storage(str(path))
    data.write_bytes(".hoodie/hoodie.properties",
                     b"hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\n")
    mdt = MdtBuilder(path)
    mdt.bootstrap("00000000000000010", {})
    model: dict[str, dict[str, int]] = {}
    fresh = 0
    for n, (ops, compact) in enumerate(commits):
        ts = f"2024010100{n:02d}00000"
        data.write_bytes(f".hoodie/{ts}.commit", b"{}")
        changes: dict[str, dict[str, tuple[int, bool]]] = {}
        for kind, part_no, size in ops:
            part = f"p{part_no % 3}"
            live = model.setdefault(part, {})
            ch = changes.setdefault(part, {})
            if kind == "add" or not live:
                fresh += 1
                name = f"f{fresh}.parquet"
                live[name] = size
                ch[name] = (size, False)
            else:
                name = sorted(live)[size % len(live)]
                if kind == "grow":
                    live[name] = live[name] + size
                    ch[name] = (live[name], False)
                else:
                    del live[name]
                    ch[name] = (0, True)
        recs = {"__all_partitions__": (1, {p: (0, False) for p in changes})}
        recs.update({p: (2, files) for p, files in changes.items()})
        mdt.deltacommit(ts, recs)
        if compact:
            state = {"__all_partitions__": (1, {p: (0, False) for p in model})}
            state.update({p: (2, {f: (s, False) for f, s in files.items()}) for p, files in model.items()})
            mdt.compact(ts + "001", state)
    m = MetadataTable(str(path))
    assert m.partitions() == sorted(model)
    assert {p: m.files(p) for p in model} == model
