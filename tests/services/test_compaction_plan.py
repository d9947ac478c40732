"""Scheduling: plan format, plan filters, triggers, partial plans (links, reservation, sentinel),
the prefix rule and event-time planning."""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import pytest

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans as PL
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.execution import execute_file_group
from hoodie.services.write.plan import plan_write
from hoodie.services.write.prepare import prepare_records
from hoodie.format.timeline.compaction_plan import CompactionPlan
from hoodie.format.file_group.fsview import RESERVED_LOG_VERSION_METRIC, FileSystemView, reserved_log_version
from hoodie.format.file_group.links import PARTIAL_PLAN_KEY
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import (
    CompactionConfig, CompactionConfigError, CompactionError, plan_compaction, run_compaction, schedule_compaction,
    schedule_compaction_result,
)
from hoodie.services.compaction import keys as K
from hoodie.services.compaction import partial as P
from hoodie.format.slice.event_ranges import EventTimeIndex
from hoodie.services.compaction.strategies import CompactionStrategy
from hoodie.services.compaction.triggers import evaluate_trigger
from tests.services.test_compaction_support import (
    UNBOUNDED, Setup, batch, event_time_config, latest_slices, log_names, options, read_optimized, snapshot, write,
)


def _plan(path: str, instant: str) -> CompactionPlan:
    return HoodieTable(path).timeline.compaction_plan(instant)


def test_plan_is_avro_version_2_with_file_names(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 1), (2, 1, 2)])
    write(path, "upsert", [(1, 2, 10)])
    write(path, "upsert", [(2, 3, 20)])
    c = schedule_compaction(path, UNBOUNDED)
    assert c is not None
    raw = (tmp_path / "t" / ".hoodie" / f"{c}.compaction.requested").read_bytes()
    assert raw.startswith(PL.AVRO_MAGIC)
    plan = PL.read_avro_metadata(raw)
    assert plan["version"] == 2
    (op,) = plan["operations"]
    (sl,) = latest_slices(path)
    assert op["dataFilePath"] == sl.base_file.name and "/" not in op["dataFilePath"]
    assert op["deltaFilePaths"] == [lf.name for lf in sl.sorted_logs()]
    assert op["baseInstantTime"] == sl.base_instant and op["fileId"] == sl.file_id and op["partitionPath"] == "all"
    assert op["symlinkOperations"] is None
    assert set(op["metrics"]) >= {"TOTAL_LOG_FILES_SIZE", "TOTAL_LOG_FILES", "TOTAL_IO_READ_MB", "TOTAL_IO_WRITE_MB",
                                  "TOTAL_IO_MB"}
    assert op["metrics"]["TOTAL_LOG_FILES"] == 2.0
    assert PARTIAL_PLAN_KEY not in (plan["extraMetadata"] or {})
    assert not (tmp_path / "t" / ".hoodie" / f"{c}.compaction.inflight").exists()


def _clustering_request(table: HoodieTable, file_id: str, partition: str) -> str:
    ts = table.new_instant_time()
    plan = {"inputGroups": [{"slices": [{"dataFilePath": None, "deltaFilePaths": [], "fileId": file_id,
                                         "partitionPath": partition, "bootstrapFilePath": None, "version": 1}],
                             "metrics": {}, "numOutputFileGroups": 1, "extraMetadata": None, "version": 1}],
            "strategy": None, "extraMetadata": None, "version": 1, "preserveHoodieMetadata": None}
    T.create_requested(table.storage, ts, I.REPLACE_COMMIT, PL.write_avro_metadata(
        "HoodieRequestedReplaceMetadata", PL.requested_replace_metadata("CLUSTER", {}, plan)))
    return ts


def test_pending_clustering_and_no_log_slices_excluded(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    s = Setup(partitioned=True)
    write(path, "insert", [(0, 1, 0)], s)
    write(path, "insert", [(2, 1, 0)], s)
    write(path, "insert", [(1, 1, 0)], s)
    write(path, "upsert", [(0, 2, 1), (2, 2, 1)], s)
    p0 = sorted([sl for sl in latest_slices(path) if sl.partition == "p0"], key=lambda sl: sl.base_instant)
    t = HoodieTable(path)
    _clustering_request(t, p0[0].file_id, "p0")
    opts = {**UNBOUNDED, "hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
            "hoodie.compact.inline.max.delta.commits": "1"}
    res = plan_compaction(t.reload(), opts)
    assert [op.file_id for op in res.operations] == [p0[1].file_id]
    # EVENT_TIME_TRIGGER refuses while clustering is pending.
    res2 = plan_compaction(t.reload(), UNBOUNDED)
    assert res2.instant is None and "clustering" in res2.reason


def test_triggers(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 1)])
    t = HoodieTable(path)
    cfg = CompactionConfig.from_options({"hoodie.compact.inline.max.delta.commits": "2"})
    assert not evaluate_trigger(t, cfg, t.new_instant_time()).schedule  # only the insert's deltacommit
    write(path, "upsert", [(1, 2, 2)])
    t.reload()
    assert evaluate_trigger(t, cfg, t.new_instant_time()).schedule
    # Time: measured from the first deltacommit (no compaction yet).
    first = t.timeline.completed().instants[0].timestamp
    later = I.epoch_ms_to_instant(I.instant_to_epoch_ms(first, t.timeline_timezone) + 7200_000, t.timeline_timezone)
    soon = t.new_instant_time()
    tcfg = CompactionConfig.from_options({"hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"})
    assert evaluate_trigger(t, tcfg, later).schedule and not evaluate_trigger(t, tcfg, soon).schedule
    both = CompactionConfig.from_options({"hoodie.compact.inline.trigger.strategy": "NUM_AND_TIME",
                                          "hoodie.compact.inline.max.delta.commits": "2"})
    either = CompactionConfig.from_options({"hoodie.compact.inline.trigger.strategy": "NUM_OR_TIME",
                                            "hoodie.compact.inline.max.delta.commits": "9"})
    assert evaluate_trigger(t, both, later).schedule and not evaluate_trigger(t, both, soon).schedule
    assert evaluate_trigger(t, either, later).schedule and not evaluate_trigger(t, either, soon).schedule
    # After a (pending) request: NUM_COMMITS still counts from the last completed compaction,
    # NUM_COMMITS_AFTER_LAST_REQUEST from the request.
    c = schedule_compaction(path, {"hoodie.compaction.strategy": "UnBounded",
                                   "hoodie.compact.inline.max.delta.commits": "1"})
    assert c is not None
    write(path, "upsert", [(1, 3, 3)])
    t.reload()
    n = CompactionConfig.from_options({"hoodie.compact.inline.max.delta.commits": "3"})
    r = CompactionConfig.from_options({"hoodie.compact.inline.trigger.strategy": "NUM_COMMITS_AFTER_LAST_REQUEST",
                                       "hoodie.compact.inline.max.delta.commits": "2"})
    assert evaluate_trigger(t, n, t.new_instant_time()).schedule  # 3 deltacommits, no completed compaction
    assert not evaluate_trigger(t, r, t.new_instant_time()).schedule  # 1 since the request
    ev = CompactionConfig.from_options({"hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER"})
    d = evaluate_trigger(t, ev, t.new_instant_time())
    assert not d.schedule and c in d.reason
    run_compaction(path, c)
    assert evaluate_trigger(t.reload(), ev, t.new_instant_time()).schedule


def test_bad_config_values_are_clear() -> None:
    with pytest.raises(CompactionConfigError, match="trigger"):
        CompactionConfig.from_options({"hoodie.compact.inline.trigger.strategy": "SOMETIMES"})
    with pytest.raises(CompactionConfigError, match="max.delta.commits"):
        CompactionConfig.from_options({"hoodie.compact.inline.max.delta.commits": "many"})
    with pytest.raises(CompactionConfigError, match="ISO-8601"):
        CompactionConfig.from_options({"hoodie.compaction.event.time.threshold": "yesterday"})
    assert CompactionConfig.from_options(
        {"hoodie.compaction.event.time.threshold": "2024-05-01T00:00:00Z"}).event_time_threshold_ms == 1714521600000


def test_inflight_write_blocks_scheduling(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 1)])
    write(path, "upsert", [(1, 2, 2)])
    t = HoodieTable(path)
    W.start_commit(t, I.DELTA_COMMIT)
    res = plan_compaction(t.reload(), UNBOUNDED)
    assert res.instant is None and "inflight" in res.reason


def _three_logs(path: str, s: Setup = Setup()) -> None:
    """A base file (ts 1) and three log files with event times 10, 20, 30."""
    write(path, "insert", [(1, 1, 0), (2, 1, 0), (3, 1, 0)], s)
    write(path, "upsert", [(1, 10, 1)], s)
    write(path, "upsert", [(2, 20, 2)], s)
    write(path, "upsert", [(3, 30, 3)], s)


def test_partial_plan_links_reservation_marker_and_sentinel(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _three_logs(path)
    logs = log_names(path)
    res = schedule_compaction_result(path, event_time_config(15))
    c = res.instant
    plan = _plan(path, c)
    (op,) = plan.operations
    fid = op.file_id
    sentinel = P.sentinel_name(fid, c)
    assert op.delta_file_paths == (logs[0], sentinel)
    assert N.is_log_file(sentinel) and N.parse_log_file(sentinel).version == 0
    assert not (tmp_path / "t" / "all" / sentinel).exists()
    links = [(s.symlink, s.target) for s in op.symlink_operations]
    assert [t for _, t in links] == logs[1:]
    assert [N.parse_log_file(l).version for l, _ in links] == [1, 2]
    assert all(N.parse_log_file(l).base_instant == c and N.parse_log_file(l).file_id == fid for l, _ in links)
    assert op.metrics[RESERVED_LOG_VERSION_METRIC] == 2.0 and reserved_log_version(op) == 2
    assert op.reserved_log_version == 2 and op.is_partial and plan.partial_operations() == [op]
    extra = plan.extra_metadata
    assert extra[PARTIAL_PLAN_KEY] == "true" and extra[K.THRESHOLD_KEY] == "15"
    assert extra[K.THRESHOLD_COMPLETE_KEY] == "true"
    # Nothing is created before the compaction runs.
    assert log_names(path) == logs


def test_exact_split_reserves_version_one(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _three_logs(path)
    c = schedule_compaction(path, event_time_config(25, exact=True))
    (op,) = _plan(path, c).operations
    assert [N.parse_log_file(s.symlink).version for s in op.symlink_operations] == [2]
    assert reserved_log_version(op) == 2
    assert _plan(path, c).extra_metadata[K.EXACT_SPLIT_KEY] == "true"


def test_write_during_pending_partial_compaction_goes_above_reserved(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _three_logs(path)
    c = schedule_compaction(path, event_time_config(15))
    write(path, "upsert", [(2, 40, 4)])
    at_c = [n for n in log_names(path) if N.parse_log_file(n).base_instant == c]
    assert [N.parse_log_file(n).version for n in at_c] == [3]
    expected = snapshot(path)
    run_compaction(path, c)
    assert snapshot(path) == expected
    assert [N.parse_log_file(n).version for n in log_names(path) if N.parse_log_file(n).base_instant == c] == [1, 2, 3]


def test_prefix_rule_with_late_data(tmp_path: Path) -> None:
    """A later log file with older events forces every earlier file into the compaction."""
    path = str(tmp_path / "t")
    s = Setup(ordering=False)
    write(path, "insert", [(1, 1, 0), (2, 1, 0)], s)
    write(path, "upsert", [(1, 100, 1)], s)   # log 1: events at 100
    write(path, "upsert", [(1, 5, 2)], s)     # log 2: late data, event 5, arrives later and wins
    write(path, "upsert", [(2, 200, 3)], s)   # log 3: events at 200
    logs = log_names(path)
    expected = snapshot(path)
    assert [r for r in expected if "1)" in r[0]][0][3] == repr(("int", 2))
    c = schedule_compaction(path, event_time_config(50))
    (op,) = _plan(path, c).operations
    # Log 1 (min 100 > 50) is compacted anyway: log 2 (min 5) comes after it.
    assert list(op.delta_file_paths[:2]) == logs[:2]
    assert [s_.target for s_ in op.symlink_operations] == logs[2:]
    run_compaction(path, c)
    assert snapshot(path) == expected
    ro = read_optimized(path)
    assert (repr(("int", 1)), repr(("str", "all")), repr(("int", 5)), repr(("int", 2))) in ro


class PickLastLog(CompactionStrategy):
    """A user strategy that asks for the last log file only (breaking the prefix rule on purpose)."""

    def filter_log_files(self, logs, *, file_slice, context):
        return [logs[-1]], list(logs[:-1])


def test_user_strategy_selection_is_widened_to_a_prefix(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _three_logs(path, Setup(ordering=False))
    logs = log_names(path)
    res = schedule_compaction_result(path, {"hoodie.compaction.strategy": f"{__name__}.PickLastLog",
                                            "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER"})
    (op,) = _plan(path, res.instant).operations
    assert list(op.delta_file_paths) == logs and op.symlink_operations is None


def test_unknown_event_time_forces_compaction(tmp_path: Path) -> None:
    """Log files whose blocks carry no event time count as -infinity."""
    path = str(tmp_path / "t")
    s_known = Setup()
    s_unknown = Setup(event_field=False)
    write(path, "insert", [(1, 1, 0), (2, 1, 0), (3, 1, 0)], s_known)
    write(path, "upsert", [(1, 100, 1)], s_known)
    write(path, "upsert", [(2, 200, 2)], s_unknown)  # no event time recorded
    write(path, "upsert", [(3, 300, 3)], s_known)
    logs = log_names(path)
    c = schedule_compaction(path, event_time_config(50))
    (op,) = _plan(path, c).operations
    assert list(op.delta_file_paths[:2]) == logs[:2] and len(op.symlink_operations) == 1


def test_delete_block_event_time(tmp_path: Path) -> None:
    """Deletes record the input's event times; a delete without them is unknown and compacted."""
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0), (2, 1, 0), (3, 1, 0)])
    write(path, "delete", [(1, 500, 0)])                      # delete with event time 500
    t = HoodieTable(path)
    cfg = WriteConfig.from_options({**options(Setup(), "delete")}, t)
    dels = prepare_records(batch([(2, 0, 0)], Setup()).drop_columns(["ts"]), cfg)
    inflight = W.start_commit(t, I.DELTA_COMMIT, operation_type="DELETE")
    plan = plan_write(t, dels, cfg, inflight.timestamp, t.avro_schema())
    stats = [execute_file_group(t, w, instant=inflight.timestamp, avro_schema=t.avro_schema(), cfg=cfg,
                                token=N.write_token(i, 3, i)) for i, w in enumerate(plan.work)]
    W.complete_commit(t, inflight, W.commit_metadata_for(stats, avro_schema=t.avro_schema(), operation_type="DELETE"))
    t.reload()
    index = EventTimeIndex(t)
    (sl,) = latest_slices(path)
    ranges = [index.for_log(lf) for lf in sl.sorted_logs()]
    assert (ranges[0].min_ms, ranges[0].max_ms) == (500, 500)
    assert ranges[1].unknown
    c = schedule_compaction(path, event_time_config(50))
    (op,) = _plan(path, c).operations
    assert len(op.delta_file_paths) == 2 and op.symlink_operations is None


def test_planning_uses_write_stats_not_headers(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _three_logs(path)
    t = HoodieTable(path)
    index = EventTimeIndex(t)
    (sl,) = latest_slices(path)
    got = [(index.for_log(lf).min_ms, index.for_log(lf).source) for lf in sl.sorted_logs()]
    assert got == [(10, "stats"), (20, "stats"), (30, "stats")] and index.header_reads == 0


def test_threshold_from_latency_and_instant(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0)])
    write(path, "upsert", [(1, 2, 1)])
    t = HoodieTable(path)
    c = t.new_instant_time()
    res = plan_compaction(t, event_time_config(None, **{"hoodie.compaction.event.time.data.latency.ms": "60000"}),
                          instant=c)
    assert res.threshold_ms == I.instant_to_epoch_ms(c, t.timeline_timezone) - 60000
    assert CompactionConfig().event_time_latency_ms == 3_600_000


def test_exact_split_needs_event_time_strategy_and_field(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0)])
    write(path, "upsert", [(1, 2, 1)])
    with pytest.raises(CompactionError, match="EventTimeBased"):
        schedule_compaction(path, {**UNBOUNDED, "hoodie.compaction.event.time.exact.split": "true"})
    with pytest.raises(CompactionError, match="not a column"):
        schedule_compaction(path, event_time_config(5, exact=True, **{"hoodie.payload.event.time.field": "nope"}))


def test_instant_must_be_newest(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    first = write(path, "insert", [(1, 1, 0)])
    write(path, "upsert", [(1, 2, 1)])
    with pytest.raises(CompactionError, match="later than every"):
        schedule_compaction(path, UNBOUNDED, instant=first)


def test_cow_table_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = {**options(Setup(), "insert"), "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    from hoodie import write_arrow

    write_arrow(path, batch([(1, 1, 0)], Setup()), o)
    with pytest.raises(CompactionError, match="MERGE_ON_READ"):
        schedule_compaction(path, UNBOUNDED)


def test_today_based_strategies_use_partition_dates(tmp_path: Path) -> None:
    """DayBased / partition-aware strategies over real date partitions (yyyy/MM/dd)."""
    path = str(tmp_path / "t")
    o = {**options(Setup(), "insert"), "hoodie.datasource.write.partitionpath.field": "day"}
    import pyarrow as pa

    from hoodie import write_arrow

    days = ["2024/05/01", "2024/05/02", "2024/05/03"]
    data = pa.table({"k": pa.array([1, 2, 3], pa.int64()), "day": days, "ts": pa.array([1, 1, 1], pa.int64()),
                     "v": pa.array([0, 0, 0], pa.int64())})
    write_arrow(path, data, o)
    write_arrow(path, data.set_column(2, "ts", pa.array([2, 2, 2], pa.int64())),
                {**o, "hoodie.datasource.write.operation": "upsert"})
    t = HoodieTable(path)
    base = {"hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER", "hoodie.compaction.daybased.target.partitions": "1"}
    res = plan_compaction(t, {**base, "hoodie.compaction.strategy": "DayBased"})
    assert [op.partition for op in res.operations] == ["2024/05/03"]
    today = _dt.date(2024, 5, 3)
    res = plan_compaction(t, {**base, "hoodie.compaction.strategy": "BoundedPartitionAware"}, context_today=today)
    assert sorted(op.partition for op in res.operations) == ["2024/05/02", "2024/05/03"]
    res = plan_compaction(t, {**base, "hoodie.compaction.strategy": "UnBoundedPartitionAware"}, context_today=today)
    assert [op.partition for op in res.operations] == ["2024/05/01"]
    res = plan_compaction(t, {**base, "hoodie.compaction.strategy": "PartitionRegexBased",
                              "hoodie.compaction.partition.path.regex": "05/0[12]"})
    assert sorted(op.partition for op in res.operations) == ["2024/05/01", "2024/05/02"]
    res = plan_compaction(t, {**base, "hoodie.compaction.strategy": "PartitionRegexBased,EventTimeBasedCompactionStrategy",
                              "hoodie.compaction.partition.path.regex": "05/01",
                              "hoodie.compaction.event.time.threshold": "100"})
    assert [op.partition for op in res.operations] == ["2024/05/01"]
    assert not res.threshold_complete  # other partitions still hold logs with events before T


def test_pending_plan_excludes_its_groups_from_new_plans(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, 1, 0)])
    write(path, "upsert", [(1, 2, 1)])
    opts = {"hoodie.compaction.strategy": "UnBounded", "hoodie.compact.inline.max.delta.commits": "1"}
    c = schedule_compaction(path, opts)
    write(path, "upsert", [(1, 3, 2)])
    res = plan_compaction(HoodieTable(path), opts)
    assert res.instant is None  # the only file group has a pending compaction
    run_compaction(path, c)
    assert schedule_compaction(path, opts) is not None


def test_views_see_reserved_versions(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _three_logs(path)
    c = schedule_compaction(path, event_time_config(15))
    t = HoodieTable(path)
    v = FileSystemView(t.storage, t.timeline)
    (entry,) = v.reserved_log_versions().values()
    assert entry == (c, 2)
    assert os.path.exists(os.path.join(path, "all"))
