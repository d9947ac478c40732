"""A key held more than once in one base file (Hudi's ``insert`` does not de-duplicate a batch), then
updated and deleted: the class the file-group model test (``test_model_duplicates.py``) leaves to this
file for merge-on-read tables.

Java's merge-on-read readers merge a key's log record into its first copy in file order and return the
other copies as stored; hudi-rs does the same, so it is the oracle for snapshot reads. Java's merge handle
(copy-on-write upserts, compaction) merges every copy on its own: the copy model of
``test_model_duplicates.py`` is the oracle there (compaction: the example below; after a merge-on-read
delete the readers keep the second copy, so the copy model does not describe what a compaction then
finds). Found by this class: a copy-on-write upsert with an
ordering field failed on such a file (Arrow's "Filter inputs must all be the same length"), and
merge-on-read snapshots folded the copies into one row.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.services.compaction import run_compaction
from hoodie import write_arrow
from tests.format.test_model_duplicates import Copies, _options, _read
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

KEYS = [0, 2, 4]  # one partition (key % 2): every copy lands in one file group


def _batch(rows: list[tuple[int, int, int, bool]]) -> pa.Table:
    return pa.table({"k": pa.array([r[0] for r in rows], pa.int64()),
                     "part": pa.array([r[0] % 2 for r in rows], pa.int64()),
                     "ts": pa.array([r[1] for r in rows], pa.int64()),
                     "val": pa.array([r[2] for r in rows], pa.int64()),
                     "_hoodie_is_deleted": pa.array([r[3] for r in rows], pa.bool_())})


row = st.tuples(st.sampled_from(KEYS), st.integers(0, 4), st.integers(0, 99), st.sampled_from([False, False, True]))
first = st.lists(st.tuples(st.sampled_from(KEYS), st.integers(0, 4), st.integers(0, 99), st.just(False)),
                 min_size=2, max_size=6)
later = st.lists(st.tuples(st.sampled_from(["upsert", "upsert", "delete"]), st.lists(row, min_size=1, max_size=4)),
                 min_size=1, max_size=4)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), st.booleans(), st.sampled_from([6, 9]), first, later)
def test_copies_in_one_file_read_as_java_reads_them(table_type: str, ordering: bool, version: int,
                                                    inserted: list, history: list) -> None:
    if table_type == "MERGE_ON_READ" and ordering and any(r[3] for _, rows in history for r in rows):
        # Known difference (docs/compatibility.md): a copy left live by an ordered delete (a soft delete),
        # updated, then deleted by the delete operation stays in hoodie's read; hudi-rs drops it.
        history = [(k, [(a, b, c, False) for a, b, c, _ in rows]) for k, rows in history]
    d = tempfile.mkdtemp(prefix="hoodie_dups_file_")
    path = f"{d}/t"
    model = Copies(ordering)
    try:
        write_arrow(path, _batch(inserted), _options(table_type, ordering, version, "insert"))
        model.apply("insert", inserted)
        for kind, rows in history:
            write_arrow(path, _batch(rows), _options(table_type, ordering, version, kind))
            model.apply(kind, rows)
            ours, theirs = _read(hoodie.read_table(path)), _read(read_hudi_rs(path))
            assert ours == theirs, f"hoodie and hudi-rs disagree after {kind}"
            if table_type == "COPY_ON_WRITE":
                assert ours == model.snapshot(), f"copy-on-write {kind}: each copy merges on its own"
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("ordering", [True, False])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_an_update_of_a_key_stored_twice(tmp_path, table_type: str, ordering: bool) -> None:
    """The example that found the class: copies (1, ts 5) and (1, ts 1), then an update of 1 at ts 3."""
    path = str(tmp_path / "t")
    write_arrow(path, _batch([(1, 5, 10, False), (1, 1, 11, False), (3, 1, 12, False)]),
                _options(table_type, ordering, 6, "insert"))
    write_arrow(path, _batch([(1, 3, 20, False)]), _options(table_type, ordering, 6, "upsert"))
    got = _read(hoodie.read_table(path))
    assert got == _read(read_hudi_rs(path))
    if table_type == "COPY_ON_WRITE":
        # Each copy merged: the ts-5 copy outranks the update when ordering; both replaced otherwise.
        want = [(1, 1, 5, 10), (1, 1, 3, 20)] if ordering else [(1, 1, 3, 20), (1, 1, 3, 20)]
    else:
        # The log record merges into the first copy (ts 5); the second copy is read as stored.
        want = [(1, 1, 5, 10), (1, 1, 1, 11)] if ordering else [(1, 1, 3, 20), (1, 1, 1, 11)]
    assert got == Counter(want + [(3, 1, 1, 12)])
    if table_type == "MERGE_ON_READ":
        run_compaction(path, None, {"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
        # Compaction is Java's merge handle ("if we have duplicate records that we are updating..."): every
        # copy merges with the log record on its own, as a copy-on-write upsert does.
        want = [(1, 1, 5, 10), (1, 1, 3, 20)] if ordering else [(1, 1, 3, 20), (1, 1, 3, 20)]
        assert _read(hoodie.read_table(path)) == Counter(want + [(3, 1, 1, 12)])


def test_copy_ranks_count_earlier_copies() -> None:
    from hoodie.format.slice.merge import copy_ranks

    assert copy_ranks(pa.array(["a", "b", "a", "a", "b", "c"])).tolist() == [0, 0, 1, 2, 1, 0]
    assert copy_ranks(pa.chunked_array([["x"], ["x", "y"]])).tolist() == [0, 1, 0]
    assert copy_ranks(pa.array([], pa.string())).tolist() == []
    # Many rows in random order (a sort that is not stable would number copies out of file order).
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 50, 5000)
    seen: dict[int, int] = {}
    want = []
    for k in keys.tolist():
        want.append(seen.get(k, 0))
        seen[k] = seen.get(k, 0) + 1
    assert copy_ranks(pa.array(keys.astype(str))).tolist() == want


def test_merge_copies_passes_files_without_copies_through() -> None:
    from hoodie.format.slice.merge import merge_copies

    seen: list = []

    def merge(b):
        seen.append(None if b is None else b.num_rows)
        return b if b is not None else _SCHEMA.empty_table()

    one = _t([("001", "k", 1, "a")])
    two = _t([("001", "k", 1, "a"), ("001", "j", 1, "b")])
    for base, each in ((one, False), (two, True), (None, False)):
        seen.clear()
        out = merge_copies(base, merge, each_copy=each)
        assert seen == [None if base is None else base.num_rows]
        assert out.num_rows == (0 if base is None else base.num_rows)


_SCHEMA = pa.schema([("_hoodie_commit_time", pa.string()), ("_hoodie_record_key", pa.string()),
                     ("ts", pa.int64()), ("v", pa.string())])


def _t(rows: list[tuple[str, str, int, str]]) -> pa.Table:
    return pa.table([pa.array(c) for c in zip(*rows)], schema=_SCHEMA)


@pytest.mark.parametrize("mode", ["commit_time", "ordering"])
def test_merges_apply_the_readers_and_the_merge_handles_rule(mode: str) -> None:
    """Three copies of k (ts 1, 9, 1) and one j; a log update of k (ts 5) and a delete of j."""
    from hoodie.format.slice.merge import DeleteBatch, LogBatch, merge_commit_time, merge_ordering

    base = _t([("001", "k", 1, "k1"), ("001", "j", 1, "j1"), ("001", "k", 9, "k2"), ("001", "k", 1, "k3")])
    log = [LogBatch(data=_t([("002", "k", 5, "new")])),
           LogBatch(deletes=DeleteBatch(pa.array(["j"]), pa.array([0], pa.int64()), "003"))]

    def merged(each_copy: bool) -> list[str]:
        if mode == "ordering":
            out = merge_ordering(base, log, _SCHEMA, "ts", each_copy=each_copy)
        else:
            out = merge_commit_time(base, log, _SCHEMA, each_copy=each_copy)
        return sorted(out.column("v").to_pylist())

    # Readers: the first copy takes the log record; the others are read as stored; j is deleted.
    assert merged(False) == ["k2", "k3", "new"]
    # Merge handle: every copy merges on its own; with ordering the ts-9 copy outranks the update.
    assert merged(True) == (["k2", "new", "new"] if mode == "ordering" else ["new", "new", "new"])
    # Without copies in the base file nothing changes: one version per key.
    single = _t([("001", "k", 1, "k1"), ("001", "j", 1, "j1")])
    out = merge_commit_time(single, log, _SCHEMA, each_copy=True) if mode == "commit_time" else \
        merge_ordering(single, log, _SCHEMA, "ts", each_copy=True)
    assert out.column("v").to_pylist() == ["new"]


def test_an_exact_split_takes_a_late_update_of_a_key_stored_twice_once(tmp_path) -> None:
    """Event-time compaction with an exact split, commit-time ordering: k=1 is stored twice and its update is
    after the threshold (split off into a log of its own), k=2's update is before it (compacted). The split
    holds k=1's update once (the per-copy merge listed it once per copy), and the snapshot is unchanged."""
    from hoodie.services.compaction import run_compaction, schedule_compaction_result
    from tests.services.test_compaction_support import event_time_config

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "d", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.payload.event.time.field": "ts", "hoodie.datasource.write.operation": "insert"}
    day = 86_400_000
    rows = lambda ks, ts, vs: pa.table({"k": pa.array(ks, pa.int64()), "part": pa.array([0] * len(ks), pa.int64()),  # noqa: E731
                                        "ts": pa.array(ts, pa.int64()), "val": pa.array(vs, pa.int64())})
    t0 = 1_714_521_600_000
    write_arrow(path, rows([1, 1, 2], [t0, t0, t0], [10, 11, 20]), opts)
    write_arrow(path, rows([1, 2], [t0 + 3 * day, t0 + day], [12, 21]), {**opts, "hoodie.datasource.write.operation": "upsert"})
    before = Counter(zip(*(hoodie.read_table(path).column(c).to_pylist() for c in ("k", "val"))))
    assert before == Counter({(1, 12): 1, (1, 11): 1, (2, 21): 1}), "the update merges into the first copy"
    cfg = event_time_config(t0 + 2 * day, exact=True)
    res = schedule_compaction_result(path, cfg)
    assert res.instant is not None
    (out,) = run_compaction(path, res.instant, cfg)
    assert [f["records"] for f in out.split_files] == [1]
    after = Counter(zip(*(hoodie.read_table(path).column(c).to_pylist() for c in ("k", "val"))))
    assert after == before
    assert Counter(zip(*(read_hudi_rs(path).column(c).to_pylist() for c in ("k", "val")))) == before
