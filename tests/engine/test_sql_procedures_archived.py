"""CALL show_archived_commits and show_archived_commits_metadata (Hudi's ShowArchivedCommitsProcedure): the
archived timeline's completed commits with Hudi's output columns, read only. The answers are checked against
each commit's metadata as the active timeline held it before archival moved it (version 6: archive files;
version 9: the LSM history)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.table import HoodieTable

pytestmark = pytest.mark.spark

OPTS = {"hoodie.table.name": "arch", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert", "hoodie.cleaner.commits.retained": "1",
        "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.archive.automatic": "true"}


def _call(spark, text: str) -> list[dict]:
    return [r.asDict() for r in hoodie.sql(spark, text).collect()]


@pytest.mark.parametrize("version", [pytest.param(6, marks=pytest.mark.slow), 9])
def test_show_archived_commits(spark, tmp_path: Path, version: int) -> None:
    path = str(tmp_path / "t")
    seen = {}  # commit time -> (completion time, commit metadata) while it was active
    for i in range(7):
        batch = pa.table({"id": pa.array([i % 3, 10 + i], pa.int64()), "p": pa.array([i % 2, 0], pa.int32()),
                          "ts": pa.array([i, i], pa.int64())})
        ts = write_arrow(path, batch, {**OPTS, "hoodie.write.table.version": str(version)})
        t = HoodieTable(path)
        inst = t.timeline.completed().get(ts)
        seen[ts] = (inst.completion, t.timeline.commit_metadata(inst))
    active = {i.timestamp for i in HoodieTable(path).timeline.completed_writes()}
    archived = sorted(set(seen) - active, reverse=True)
    assert len(archived) >= 2, "the table's timeline must have been archived"
    window = "start_ts => '0', end_ts => '99991231235959999'"

    rows = _call(spark, f"CALL show_archived_commits(table => '{path}', {window}, limit => 100)")
    assert [r["commit_time"] for r in rows] == archived  # newest first, active commits not shown
    for r in rows:
        completion, m = seen[r["commit_time"]]
        stats = list(m.all_write_stats())
        assert (r["total_bytes_written"], r["total_records_written"], r["total_update_records_written"],
                r["total_partitions_written"], r["total_errors"]) == (
            sum(s.total_write_bytes for s in stats), sum(s.num_writes for s in stats),
            sum(s.num_update_writes for s in stats), len(m.partition_to_write_stats), 0)
        assert r["total_files_added"] + r["total_files_updated"] == len(stats)
        if version == 9:
            assert r["state_transition_time"] == completion
        else:
            assert r["state_transition_time"] is None or len(r["state_transition_time"]) >= 14
    assert len(_call(spark, f"CALL show_archived_commits(table => '{path}', {window}, limit => 1)")) == 1
    between = _call(spark, f"CALL show_archived_commits(table => '{path}', start_ts => '{archived[-1]}', "
                           f"end_ts => '{archived[0]}')")
    assert [r["commit_time"] for r in between] == archived[:-1]  # start exclusive, end inclusive (Hudi's range)
    # Hudi's default window is ten days ago to one day ago: commits made now are not in it.
    assert _call(spark, f"CALL show_archived_commits(table => '{path}')") == []

    meta = _call(spark, f"CALL show_archived_commits_metadata(table => '{path}', {window}, limit => 1000)")
    want = sorted((ts, part, s.file_id, s.prev_commit, s.num_writes, s.num_inserts, s.num_update_writes,
                   s.total_write_bytes) for ts in archived for part, ss in seen[ts][1].partition_to_write_stats.items()
                  for s in ss)
    assert sorted((r["commit_time"], r["partition"], r["file_id"], r["previous_commit"], r["num_writes"],
                   r["num_inserts"], r["num_update_writes"], r["total_bytes_written"]) for r in meta) == want
    assert {r["action"] for r in meta} == {"commit"}
    assert list(meta[0]) == [
        "commit_time", "state_transition_time", "action", "partition", "file_id", "previous_commit", "num_writes",
        "num_inserts", "num_deletes", "num_update_writes", "total_errors", "total_log_blocks",
        "total_corrupt_log_blocks", "total_rollback_blocks", "total_log_records", "total_updated_records_compacted",
        "total_bytes_written"]
