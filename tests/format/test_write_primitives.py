"""Write primitives: meta columns, event-time stats and headers, log versions, corrupt logs."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.format.log import logformat as L
from hoodie import write_arrow
from hoodie.errors import WriteError
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable
from tests.hudi_rs import read_hudi_rs

OPTS = {
    "hoodie.table.name": "w", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.payload.event.time.field": "ts",
}


def _data(ids, ts, p="a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids), "ts": pa.array(ts, pa.int64()),
                     "v": [str(i) for i in ids]})


def test_meta_columns_and_event_time_stats(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1 = write_arrow(path, _data([1, 2, 3], [1000, 3000, 2000]), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([2], [5000]), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    t = HoodieTable(path)
    base_stat = next(t.timeline.commit_metadata(t.timeline.get(c1)).all_write_stats())
    assert (base_stat.min_event_time, base_stat.max_event_time) == (1000, 3000)
    assert base_stat.prev_commit == "null" and base_stat.num_inserts == 3
    log_stat = next(t.timeline.commit_metadata(t.timeline.get(c2)).all_write_stats())
    assert log_stat.is_delta and (log_stat.min_event_time, log_stat.max_event_time) == (5000, 5000)
    assert log_stat.prev_commit == c1 and log_stat.base_file.endswith(f"_{c1}.parquet")
    # The block header carries the same range, readable without decoding records.
    (block,) = list(L.read_log_file(t.storage, log_stat.path))
    assert block.event_time_range == (5000, 5000)
    # Meta columns as Hudi fills them.
    base = pq.read_table(tmp_path / "t" / base_stat.path)
    row = base.to_pylist()[0]
    assert row["_hoodie_commit_time"] == c1 and row["_hoodie_partition_path"] == "a"
    assert row["_hoodie_file_name"] == base_stat.path.split("/")[-1]
    assert row["_hoodie_commit_seqno"].startswith(f"{c1}_")
    # In the Parquet footer's key/value metadata, where Java Hudi keeps them.
    md = pq.ParquetFile(tmp_path / "t" / base_stat.path).metadata.metadata
    assert md[b"hoodie_min_record_key"] == b"1" and md[b"hoodie_max_record_key"] == b"3"
    log_rows = hoodie.read_table(path, columns=["id", "_hoodie_file_name"]).to_pylist()
    assert {r["_hoodie_file_name"] for r in log_rows if r["id"] == 2} == {log_stat.file_id}
    schema = json.loads(t.timeline.commit_metadata(t.timeline.get(c2)).extra_metadata["schema"])
    assert [f["name"] for f in schema["fields"]] == ["id", "p", "ts", "v"]


def test_new_log_file_per_write_never_appends(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _data([1], [1]), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    sizes = []
    for i in range(3):
        write_arrow(path, _data([1], [10 + i]), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
        logs = sorted(p for p in (tmp_path / "t" / "a").iterdir() if ".log." in p.name)
        sizes.append([p.stat().st_size for p in logs])
    assert [len(s) for s in sizes] == [1, 2, 3]
    assert sizes[0][0] == sizes[2][0], "an existing log file was modified"
    t = HoodieTable(path)
    (sl,) = FileSystemView(t.storage, t.timeline).latest_file_slices("a")
    assert [lf.version for lf in sl.sorted_logs()] == [1, 2, 3]


def test_corrupt_log_tail_is_skipped_with_warning(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _data([1, 2], [1, 1]), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    write_arrow(path, _data([1], [2]), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    write_arrow(path, _data([2], [3]), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    logs = sorted(p for p in (tmp_path / "t" / "a").iterdir() if ".log." in p.name)
    # Truncate the last log file mid-block, as a crashed writer would leave it.
    data = logs[-1].read_bytes()
    logs[-1].write_bytes(data[: len(data) // 2])
    with pytest.warns(L.CorruptLogBlockWarning):
        t = hoodie.read_table(path, columns=["id", "v", "ts"])
    vals = {r["id"]: r["ts"] for r in t.to_pylist()}
    assert vals == {1: 2, 2: 1}, "the intact blocks still apply, the corrupt one does not"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = read_hudi_rs(path)
    assert {r["id"]: r["ts"] for r in theirs.to_pylist()} == vals


def test_null_precombine_refused(tmp_path: Path) -> None:
    data = pa.table({"id": [1], "p": ["a"], "ts": pa.array([None], pa.int64()), "v": ["x"]})
    with pytest.raises(WriteError, match="null precombine"):
        write_arrow(str(tmp_path / "t"), data, {**OPTS, "hoodie.datasource.write.operation": "insert"})
    assert not (tmp_path / "t" / ".hoodie").exists() or not any(
        p.name.endswith(".deltacommit") for p in (tmp_path / "t" / ".hoodie").iterdir())


def test_incompatible_schema_change_names_column(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, _data([1], [1]), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    bad = pa.table({"id": pa.array([2], pa.int64()), "p": ["a"], "ts": pa.array([1], pa.int64()), "v": [1.5]})
    with pytest.raises(WriteError, match="'v'"):
        write_arrow(path, bad, {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    added = _data([3], [1]).append_column("extra", pa.array(["e"]))
    write_arrow(path, added, {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    t = hoodie.read_table(path, columns=["id", "extra"])
    assert {r["id"]: r["extra"] for r in t.to_pylist()} == {1: None, 3: "e"}
    assert {r["id"]: r["extra"] for r in read_hudi_rs(path).to_pylist()} == {1: None, 3: "e"}
