"""File-system view rules: committed-only visibility, pending compaction, replaced file groups,
rollback command blocks and blocks of inflight instants."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.execution import execute_file_group
from hoodie.services.write.plan import plan_write
from hoodie.services.write.prepare import prepare_records
from hoodie import write_arrow
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.table import HoodieTable
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

OPTS = {
    "hoodie.table.name": "v", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _data(ids: list[int], ts: int, tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": ["a"] * len(ids),
                     "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"{tag}{i}" for i in ids]})


def _vals(t: pa.Table) -> dict[int, str]:
    return dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))


def _write(path: str, data: pa.Table, op: str, **extra: str) -> str:
    return write_arrow(path, data, {**OPTS, "hoodie.datasource.write.operation": op, **extra})


def _uncommitted_write(path: str, data: pa.Table, op: str = "upsert", opts: dict | None = None) -> str:
    """Write files for a new instant but never complete it (a crashed writer)."""
    table = HoodieTable(path)
    cfg = WriteConfig.from_options({**(opts or OPTS), "hoodie.datasource.write.operation": op}, table)
    inflight = W.start_commit(table, W.write_action_for(table), operation_type=op.upper())
    plan = plan_write(table, prepare_records(data, cfg), cfg, inflight.timestamp, table.avro_schema())
    for i, w in enumerate(plan.work):
        execute_file_group(table, w, instant=inflight.timestamp, avro_schema=table.avro_schema(), cfg=cfg,
                           token=N.write_token(i, 9, i))
    return inflight.timestamp


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_inflight_write_is_invisible(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    write_arrow(path, _data([1, 2, 3], 1, "a"), {**opts, "hoodie.datasource.write.operation": "insert"})
    _uncommitted_write(path, pa.concat_tables([_data([2], 2, "b"), _data([9], 2, "new")]), opts=opts)
    ours = hoodie.read_table(path)
    assert _vals(ours) == {1: "a1", 2: "a2", 3: "a3"}
    assert _vals(read_hudi_rs(path)) == {1: "a1", 2: "a2", 3: "a3"}


def test_pending_compaction_slice_merges_with_previous(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _write(path, _data([1, 2, 3], 1, "a"), "insert")
    _write(path, _data([1], 2, "b"), "upsert")
    table = HoodieTable(path)
    view = FileSystemView(table.storage, table.timeline)
    (sl,) = view.latest_file_slices("a")
    c = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [lf.name for lf in sl.sorted_logs()],
                                    sl.file_id, "a", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    # A partial base file of the running compaction must stay invisible.
    partial = N.base_file_name(sl.file_id, "0-1-1", c)
    (tmp_path / "t" / "a" / partial).write_bytes((tmp_path / "t" / "a" / sl.base_file.name).read_bytes())
    # A write while the compaction is pending goes to the new slice at C.
    _write(path, _data([2], 3, "c"), "upsert")
    logs_at_c = [p.name for p in (tmp_path / "t" / "a").iterdir() if f"_{c}.log." in p.name]
    assert len(logs_at_c) == 1
    t = HoodieTable(path)
    v2 = FileSystemView(t.storage, t.timeline)
    (merged,) = v2.latest_file_slices("a")
    assert merged.base_instant == sl.base_instant and len(merged.log_files) == 2
    (pending,) = v2.latest_file_slices("a", merge_pending_compaction=False)
    assert pending.base_instant == c and pending.base_file is None
    assert _vals(hoodie.read_table(path)) == {1: "b1", 2: "c2", 3: "a3"}
    assert _vals(hoodie.read_table(path, query_type="read_optimized")) == {1: "a1", 2: "a2", 3: "a3"}


def test_replaced_file_group_dropped_and_time_travel_keeps_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    t = table.new_instant_time()
    T.create_requested(table.storage, t, I.REPLACE_COMMIT,
                       plans.write_avro_metadata("HoodieRequestedReplaceMetadata",
                                                 plans.requested_replace_metadata("DELETE_PARTITION")))
    inf = T.transition_to_inflight(table.storage, I.Instant(t, I.REPLACE_COMMIT, I.State.REQUESTED),
                                   CommitMetadata(operation_type="DELETE_PARTITION").to_json_bytes())
    # hudi-rs resolves the table schema from the newest commit: a replacecommit must carry it.
    meta = CommitMetadata(operation_type="DELETE_PARTITION", partition_to_replace_file_ids={"a": [sl.file_id]},
                          extra_metadata={"schema": json.dumps(table.avro_schema())})
    T.transition_to_complete(table.storage, inf, meta.to_json_bytes())
    assert hoodie.read_table(path).num_rows == 0
    assert read_hudi_rs(path).num_rows == 0
    assert _vals(hoodie.read_table(path, as_of=c1)) == {1: "a1", 2: "a2"}


def test_rollback_block_cancels_target_blocks(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _write(path, _data([1, 2], 1, "a"), "insert")
    failed = _uncommitted_write(path, _data([1], 5, "bad"))
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("a")
    from hoodie.format.log import logformat as L

    # Mark the failed instant as if it had completed: only the rollback block then hides it.
    rb = table.new_instant_time()
    ver = W.next_log_version(table.storage, "a", sl.file_id, sl.base_instant)
    L.write_log_file(table.storage, f"a/{N.log_file_name(sl.file_id, sl.base_instant, ver, N.UNKNOWN_WRITE_TOKEN)}",
                     [L.encode_command_block(rb, failed)])
    T.transition_to_complete(table.storage, I.Instant(failed, I.DELTA_COMMIT, I.State.INFLIGHT),
                             CommitMetadata(operation_type="UPSERT",
                                            extra_metadata={"schema": json.dumps(table.avro_schema())}
                                            ).to_json_bytes())
    assert _vals(hoodie.read_table(path)) == {1: "a1", 2: "a2"}
    assert _vals(read_hudi_rs(path)) == {1: "a1", 2: "a2"}


def test_blocks_of_inflight_instant_skipped_then_later_write_visible(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _write(path, _data([1, 2], 1, "a"), "insert")
    _uncommitted_write(path, _data([1], 5, "bad"))
    _write(path, _data([2], 6, "good"), "upsert")
    assert _vals(hoodie.read_table(path)) == {1: "a1", 2: "good2"}
    assert _vals(read_hudi_rs(path)) == {1: "a1", 2: "good2"}
    assert rows_of(hoodie.read_table(path, query_type="incremental", begin="0"), ["id"]) != []


def test_a_completion_cut_is_ignored_on_a_version_6_table(tmp_path: Path) -> None:
    """completion_cut is a version 8/9 notion (completion times); a version 6 view ignores it."""
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [1]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "p"})
    table = HoodieTable(path)
    cut = FileSystemView(table.storage, table.timeline, completion_cut="00000000000000001")
    assert [s.file_id for s in cut.latest_file_slices("x")] == \
        [s.file_id for s in FileSystemView(table.storage, table.timeline).latest_file_slices("x")] != []
