"""The streaming sink's checkpoint in commit metadata (hoodie.services.streaming), without Spark:
Hudi's key and JSON shape, the write path storing prefixed options in extraMetadata, the lookup of a
stream's latest batch across other streams' commits, and the refusal of a second query under one
identifier."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from hoodie.interfaces.python_io import write_arrow
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.services import streaming as S

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "insert"}


def _batch(ids: range) -> pa.Table:
    return pa.table({"id": list(ids), "p": ["a"] * len(ids), "ts": [1] * len(ids)})


def _write(path: str, ids: range, **extra: str) -> str:
    return write_arrow(path, _batch(ids), {**OPTS, **extra})


def _extra(path: str, instant: str) -> dict:
    tl = HoodieTable(path).timeline
    return tl.commit_metadata(tl.get(instant)).extra_metadata


def test_checkpoint_value_is_hudis_json() -> None:
    # CommitUtils.getCheckpointValueAsString: Jackson's compact map of identifier -> batch id as text.
    assert S.checkpoint_value("default_single_writer", 7) == '{"default_single_writer":"7"}'
    assert S.read_checkpoint('{"a":"3","b":"9"}', "b") == 9
    assert S.read_checkpoint('{"a":"3"}', "b") is None
    for bad in ("not json", "[1]", '{"b":"x"}'):
        with pytest.raises(S.StreamingError):
            S.read_checkpoint(bad, "b")


def test_prefixed_options_reach_extra_metadata(tmp_path) -> None:
    """hoodie.datasource.write.commitmeta.key.prefix (default "_"): Hudi stores such options in the commit."""
    path = str(tmp_path / "t")
    t1 = _write(path, range(3), _my_checkpoint="42")
    assert _extra(path, t1)["_my_checkpoint"] == "42"
    t2 = _write(path, range(3, 6), **{"hoodie.datasource.write.commitmeta.key.prefix": "x_", "x_a": "1",
                                       "_not_stored": "2"})
    extra = _extra(path, t2)
    assert extra["x_a"] == "1" and "_not_stored" not in extra
    assert "schema" in extra  # the table schema is still recorded


def test_latest_batch_of_each_identifier(tmp_path) -> None:
    path = str(tmp_path / "t")
    st = Storage(path)
    assert S.last_committed_batch(st, "a") is None  # no table yet
    ck = S.SINK_CHECKPOINT_KEY
    _write(path, range(0, 2), **{ck: S.checkpoint_value("a", 0), S.QUERY_ID_KEY: "qa"})
    ta1 = _write(path, range(2, 4), **{ck: S.checkpoint_value("a", 1), S.QUERY_ID_KEY: "qa"})
    tb0 = _write(path, range(4, 6), **{ck: S.checkpoint_value("b", 0), S.QUERY_ID_KEY: "qb"})
    _write(path, range(6, 8))  # a batch write between the streams' commits
    a = S.last_committed_batch(st, "a")
    assert (a.batch_id, a.instant, a.query_id) == (1, ta1, "qa")
    b = S.last_committed_batch(st, "b")
    assert (b.batch_id, b.instant, b.query_id) == (0, tb0, "qb")
    assert S.last_committed_batch(st, "c") is None
    # Replays of a committed batch are skipped, the next batch is written.
    assert S.check_batch(a, 1, "qa", "a", path) is True
    assert S.check_batch(a, 0, "qa", "a", path) is True
    assert S.check_batch(a, 2, "qa", "a", path) is False
    # A commit Hudi's own sink wrote (no query id): Hudi's rule.
    legacy = S.SinkCheckpoint(5, "x", None)
    assert S.check_batch(legacy, 5, "qz", "a", path) is True and S.check_batch(legacy, 6, "qz", "a", path) is False


def test_second_query_under_one_identifier_is_refused(tmp_path) -> None:
    """Hudi would skip query B's batches 0..N because query A committed batch N under the same identifier:
    rows dropped without a word. Refused, naming the key to set."""
    last = S.SinkCheckpoint(4, "20250101000000000", "query-a")
    with pytest.raises(S.StreamingError, match="hoodie.datasource.write.streaming.checkpoint.identifier") as e:
        S.check_batch(last, 0, "query-b", "default_single_writer", "/t")
    assert "query-a" in str(e.value) and "nothing was written" in str(e.value)


def test_streaming_keys_are_typed() -> None:
    assert S.RETRY_COUNT.get({}) == 3 and S.RETRY_INTERVAL_MS.get({}) == 2000
    assert S.IGNORE_FAILED_BATCH.get({}) is False
    assert S.CHECKPOINT_IDENTIFIER.get({}) == "default_single_writer"
    with pytest.raises(ValueError, match="retry.count"):
        S.RETRY_COUNT.get({"hoodie.datasource.write.streaming.retry.count": "0"})
    with pytest.raises(ValueError, match="ignore.failed.batch"):
        S.IGNORE_FAILED_BATCH.get({"hoodie.datasource.write.streaming.ignore.failed.batch": "yes"})


def test_checkpoint_found_in_v9_archived_timeline(tmp_path) -> None:
    """A stream's last batch whose commit moved to the LSM timeline (table version 9) is still found."""
    from hoodie.format.timeline import archived as A

    path = str(tmp_path / "t")
    ck = S.SINK_CHECKPOINT_KEY
    opts = {**OPTS, "hoodie.write.table.version": "9"}
    t0 = write_arrow(path, _batch(range(2)), {**opts, ck: S.checkpoint_value("a", 3), S.QUERY_ID_KEY: "q"})
    table = HoodieTable(path)
    if table.timeline_layout != 2:
        pytest.skip("version 9 tables are not created by this writer")
    inst = table.timeline.get(t0)
    blob = table.storage.read_bytes(f"{table.timeline.folder}/{inst.file_name}")
    # Archive it by hand as Hudi's LSM writer lays it out: one Parquet file, manifest 1, _version_ 1.
    import pyarrow.parquet as pq

    st = table.storage
    name = f"{t0}_{t0}_0.parquet"
    buf = pa.BufferOutputStream()
    pq.write_table(pa.table({"instantTime": [t0], "completionTime": [inst.completion], "action": [inst.action],
                             "metadata": pa.array([blob], pa.binary()), "plan": pa.array([None], pa.binary()),
                             "version": pa.array([1], pa.int32())}), buf)
    data = buf.getvalue().to_pybytes()
    st.write_bytes(f"{A.HISTORY_FOLDER}/{name}", data)
    st.write_bytes(f"{A.HISTORY_FOLDER}/manifest_1",
                   json.dumps({"files": [{"fileName": name, "fileLen": len(data)}]}).encode())
    st.write_bytes(f"{A.HISTORY_FOLDER}/{A.VERSION_FILE}", b"1")
    for f in st.list_dir(table.timeline.folder):
        if f.name.startswith(t0):
            st.delete(f.path)
    found = S.last_committed_batch(Storage(path), "a")
    assert found is not None and (found.batch_id, found.instant, found.archived) == (3, t0, True)


@pytest.mark.parametrize("version", [6, 9])
def test_checkpoint_found_after_archival_moved_it(tmp_path, version: int) -> None:
    """The stream's last batch was committed, then other writers' commits pushed it out of the active timeline
    and archival moved it (version 6: .hoodie/archived, 8/9: the LSM history): a replay of that batch is
    still recognised, not written twice."""
    from hoodie.services.archive import run_archival

    path = str(tmp_path / "t")
    ck = S.SINK_CHECKPOINT_KEY
    opts = {**OPTS, "hoodie.write.table.version": str(version), "hoodie.keep.min.commits": "2",
            "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    t0 = write_arrow(path, _batch(range(2)), {**opts, ck: S.checkpoint_value("a", 5), S.QUERY_ID_KEY: "q"})
    for n in range(6):
        write_arrow(path, _batch(range(10 + n, 11 + n)), opts)
    run_archival(path, opts)  # (automatic archival after each write may have moved it already)
    assert HoodieTable(path).timeline.get(t0) is None
    found = S.last_committed_batch(Storage(path), "a")
    assert found is not None and (found.batch_id, found.instant, found.archived) == (5, t0, True)
    assert S.check_batch(found, 5, "q", "a", path) is True
    assert S.last_committed_batch(Storage(path), "other") is None
