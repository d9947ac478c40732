"""Partition TTL acceptance tests: upstream's scenarios (1970 partitions expire, the current one
survives), the MOR log-only case, each strategy, rules, predicates, the cap, dry runs, pending
operations, inline and async modes, procedures, the CLI, errors, and Java-written fixture tables.
Every table is also read by hudi-rs after TTL and after clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie import write_arrow
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.format.file_group.fsview import FileSystemView, list_partitions
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.ttl import (
    PartitionTTLStrategy, TTLAsyncService, TTLConfigError, call_manage_partition_ttl, call_run_ttl,
    maybe_run_async_ttl, run_ttl, stop_async_services,
)
from hoodie.services.ttl.config import DAY_MS
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs
from tests.services.test_clean import compact_all

DAYS = {"hoodie.partition.ttl.strategy.days.retain": "10"}
FILE_VERSIONS = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}


def opts(table_type: str = "COPY_ON_WRITE", fields: str = "part", hive: bool = False, op: str = "upsert",
         **extra: str) -> dict[str, str]:
    o = {
        "hoodie.table.name": "ttl_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": fields,
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
    }
    o.update(extra)
    return o


def ten_rows(part: str, ts: int = 1, **cols: str) -> pa.Table:
    data = {"k": [f"{part}-{i}" for i in range(10)], "part": [part] * 10, "ts": [ts] * 10}
    for c, v in cols.items():
        data[c] = [v] * 10
    return pa.table(data)


def at(ms: int) -> str:
    return I.epoch_ms_to_instant(ms, "LOCAL")


def now_ms() -> int:
    return I.instant_to_epoch_ms(I.InstantGenerator("LOCAL").now())


def upstream_setup(path: str, table_type: str) -> None:
    """TestPartitionTTLManagement's table: 10 records each in 3 partitions, written at
    getCommitTimeAtUTC(0), getCommitTimeAtUTC(1000) (both 1970) and now."""
    for part, inst in (("p0", at(0)), ("p1", at(1000)), ("p2", None)):
        write_arrow(path, ten_rows(part), opts(table_type, op="insert"), instant=inst)


def parts_of(t: pa.Table) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in t.column("part").to_pylist() if t.num_rows else []:
        out[p] = out.get(p, 0) + 1
    return out


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_keep_by_time_upstream_acceptance(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, table_type)
    res = run_ttl(path, DAYS)
    assert sorted(res.partition_to_replace_file_ids) == ["p0", "p1"] == res.expired_partitions
    assert parts_of(hoodie.read_table(path)) == {"p2": 10}
    assert parts_of(read_hudi_rs(path)) == {"p2": 10}
    # Exactly Hudi's delete_partition replacecommit.
    tl = HoodieTable(path).timeline
    inst = tl.get(res.instant)
    assert inst.action == I.REPLACE_COMMIT and inst.is_completed
    req = plans.read_avro_metadata(tl.read_file(f"{res.instant}.replacecommit.requested"))
    assert req == {"operationType": "DELETE_PARTITION", "clusteringPlan": None, "extraMetadata": {}, "version": 1}
    inflight = json.loads(tl.read_file(f"{res.instant}.replacecommit.inflight"))
    assert inflight["partitionToWriteStats"] == {} and inflight["operationType"] == "DELETE_PARTITION"
    done = json.loads(tl.read_file(f"{res.instant}.replacecommit"))
    assert done["partitionToWriteStats"] == {} and done["compacted"] is False
    assert done["operationType"] == "DELETE_PARTITION" and "schema" in done["extraMetadata"]
    assert sorted(done["partitionToReplaceFileIds"]) == ["p0", "p1"]
    # Time travel to before the TTL instant still sees everything until the cleaner runs.
    assert parts_of(hoodie.read_table(path, as_of=at(1000))) == {"p0": 10, "p1": 10}
    run_clean(path, FILE_VERSIONS)
    assert not (tmp_path / "t" / "p0").exists() and not (tmp_path / "t" / "p1").exists()
    assert parts_of(hoodie.read_table(path)) == {"p2": 10} == parts_of(read_hudi_rs(path))
    # Nothing left to expire: no instant.
    again = run_ttl(path, DAYS)
    assert again.instant is None and again.expired_partitions == []


def test_keep_by_creation_time(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, "COPY_ON_WRITE")
    # A recent write into p0 keeps it alive for KEEP_BY_TIME but not for KEEP_BY_CREATION_TIME.
    write_arrow(path, ten_rows("p0", ts=2), opts())
    by_time = run_ttl(path, DAYS, dry_run=True)
    assert by_time.expired_partitions == ["p1"]
    res = run_ttl(path, {**DAYS, "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME"})
    assert sorted(res.expired_partitions) == ["p0", "p1"]
    reason = next(d for d in res.decisions if d.partition == "p0")
    assert reason.reference == at(0) and "created at" in reason.reason
    assert parts_of(read_hudi_rs(path)) == {"p2": 10} == parts_of(hoodie.read_table(path))


def test_mor_log_only_write_keeps_partition_alive(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    mor = opts("MERGE_ON_READ")
    write_arrow(path, ten_rows("p0"), {**mor, "hoodie.datasource.write.operation": "insert"}, instant=at(0))
    write_arrow(path, ten_rows("p1"), {**mor, "hoodie.datasource.write.operation": "insert"}, instant=at(1000))
    write_arrow(path, ten_rows("p1", ts=5), mor, instant=at(2000))  # old log-only update of p1
    recent = write_arrow(path, ten_rows("p0", ts=9), mor)  # a log-only update of p0, now
    table = HoodieTable(path)
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("p0")
    # Upstream's lastCommitTime is the newest slice base instant: 1970 here, so Hudi 1.x would expire p0.
    assert sl.base_instant == at(0) and sl.log_files and sl.base_file is not None
    res = run_ttl(path, DAYS, dry_run=True)
    d0 = next(d for d in res.decisions if d.partition == "p0")
    assert not d0.expired and d0.reference == recent
    assert res.expired_partitions == ["p1"]
    # A compaction of p1 now is a table service: by default it does not make p1 look modified.
    compact_all(path)
    assert run_ttl(path, DAYS, dry_run=True).expired_partitions == ["p1"]
    counted = run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.count.table.services": "true",
                             "hoodie.partition.ttl.strategy.stats.incremental": "false"}, dry_run=True)
    assert counted.expired_partitions == []
    res = run_ttl(path, DAYS)
    assert res.expired_partitions == ["p1"]
    got = hoodie.read_table(path)
    assert parts_of(got) == {"p0": 10} == parts_of(read_hudi_rs(path))
    assert set(got.column("ts").to_pylist()) == {9}


def _event_table(path: str) -> None:
    o = opts(fields="region,day", hive=True, op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        for region in ("eu", "us"):
            write_arrow(path, ten_rows(f"{region}{day}", region=region, day=day), o)


def test_keep_by_event_time_age_from_end_and_start(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _event_table(path)
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.event.time.segment.start.index": "1"}
    morning = "20240103080000000"  # 08:00 UTC on Jan 3rd
    end = run_ttl(path, cfg, dry_run=True, instant_time=morning)
    # END (default): yesterday's partition (Jan 2nd ended 8 hours ago) survives the morning.
    assert sorted(end.expired_partitions) == ["region=eu/day=2024-01-01", "region=us/day=2024-01-01"]
    d = next(x for x in end.decisions if x.partition == "region=eu/day=2024-01-02")
    assert d.age_ms == 8 * 3_600_000 and d.reference == "2024-01-02"
    start = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.age.from": "START"}, dry_run=True,
                    instant_time=morning)
    assert len(start.expired_partitions) == 4
    # Partition values in Shanghai time end 8 hours earlier in UTC: at midnight UTC on Jan 3rd, Jan 1st
    # (Shanghai) ended 32 hours ago, Jan 1st (UTC) exactly 24 hours ago (not more than the retention).
    sh = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.timezone": "Asia/Shanghai"},
                 dry_run=True, instant_time="20240103000000000")
    assert len(sh.expired_partitions) == 2
    assert run_ttl(path, cfg, dry_run=True, instant_time="20240103000000000").expired_partitions == []
    # The real run deletes the old day; hudi-rs agrees.
    res = run_ttl(path, cfg)
    assert len(res.expired_partitions) == 6  # "now" is years later
    assert read_hudi_rs(path).num_rows == 0 == hoodie.read_table(path).num_rows


def test_keep_by_event_time_multi_segment_default_partition_and_errors(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = opts(fields="dt", op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    for dt in ("2024/01/01/05", "2024/01/02/05"):
        write_arrow(path, ten_rows(dt.replace("/", ""), dt=dt), o)
    write_arrow(path, pa.table({"k": ["n1"], "part": ["x"], "ts": [1], "dt": pa.array([None], pa.string())}), o)
    parts = list_partitions(HoodieTable(path).storage)
    assert "__HIVE_DEFAULT_PARTITION__" in parts and "2024/01/01/05" in parts
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.retention": "PT12H",
           "hoodie.partition.ttl.strategy.event.time.format": "yyyy/MM/dd/HH"}
    res = run_ttl(path, cfg, dry_run=True, instant_time="20240102000000000")
    assert res.expired_partitions == ["2024/01/01/05"]
    default = next(d for d in res.decisions if d.partition == "__HIVE_DEFAULT_PARTITION__")
    assert not default.expired and "default partition" in default.reason
    res = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.delete.hive.default.partition": "true"},
                  dry_run=True, instant_time="20240102000000000")
    assert sorted(res.expired_partitions) == ["2024/01/01/05", "__HIVE_DEFAULT_PARTITION__"]
    with pytest.raises(TTLConfigError, match="parses no partition"):
        run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd"}, dry_run=True)


def _product_table(path: str, days_old: int) -> list[str]:
    """product=1..3 x two days, all last written ``days_old`` days ago."""
    o = opts(fields="productid,day", hive=True, op="insert")
    base = now_ms() - days_old * DAY_MS
    parts = []
    n = 0
    for product in ("1", "2", "3"):
        for day in ("2024-01-01", "2024-01-02"):
            write_arrow(path, ten_rows(f"{product}{day}", productid=product, day=day), o, instant=at(base + n))
            parts.append(f"productid={product}/day={day}")
            n += 1
    return parts


def test_rules_give_partitions_their_own_retention(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _product_table(path, 20)
    cfg = {"hoodie.partition.ttl.rules": json.dumps([
        {"partition": "productid=1/*", "retention": "P30D"},
        {"partition": "productid=2/*", "retention": 7},
        {"partition": "productid=2/day=2024-01-02", "retention": "P60D"},
    ])}
    res = run_ttl(path, cfg)
    assert res.expired_partitions == ["productid=2/day=2024-01-01"]
    by = {d.partition: d for d in res.decisions}
    assert "rule #2" in by["productid=2/day=2024-01-01"].rule
    assert "rule #3" in by["productid=2/day=2024-01-02"].rule  # the exact path is more specific
    assert by["productid=3/day=2024-01-01"].rule is None and not by["productid=3/day=2024-01-01"].expired
    assert "no rule matches" in by["productid=3/day=2024-01-01"].reason
    # A table-wide default covers what no rule matches.
    res = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.days.retain": "10"})
    assert sorted(res.expired_partitions) == ["productid=3/day=2024-01-01", "productid=3/day=2024-01-02"]
    assert sorted(set(read_hudi_rs(path).column("productid").to_pylist())) == ["1", "2"]


def test_predicate_selected_partitions_and_procedures(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    parts = _product_table(path, 20)
    dry = run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.partition.predicate":
                         "productid IN (1, 3) AND day < '2024-01-02'"}, dry_run=True)
    assert sorted(dry.expired_partitions) == ["productid=1/day=2024-01-01", "productid=3/day=2024-01-01"]
    with pytest.raises(TTLConfigError, match="column 'city'"):
        run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.partition.predicate": "city = 'x'"}, dry_run=True)
    sel = run_ttl(path, {**DAYS, "hoodie.partition.ttl.partition.selected": parts[2]}, dry_run=True)
    assert sel.expired_partitions == [parts[2]]
    with pytest.raises(TTLConfigError, match="do not exist.*hive-style"):
        run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.partition.selected": "1/2024-01-01"}, dry_run=True)
    deleted = call_manage_partition_ttl(path, days_retain=10, predicate="productid = 1")
    assert deleted == ["productid=1/day=2024-01-01", "productid=1/day=2024-01-02"]
    deleted = call_run_ttl(path, ttl_policy="keep_by_time", retain_days=10,
                           options="hoodie.partition.ttl.strategy.max.delete.partitions=1")
    assert deleted == ["productid=2/day=2024-01-01"]
    assert call_run_ttl(path, retain_days=100) == []
    rs = read_hudi_rs(path)
    left = sorted(set(zip(rs.column("productid").to_pylist(), rs.column("day").to_pylist())))
    assert left == [("2", "2024-01-02"), ("3", "2024-01-01"), ("3", "2024-01-02")]


def test_cap_deletes_oldest_first(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    parts = _product_table(path, 20)
    res = run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.max.delete.partitions": "2"})
    assert res.expired_partitions == parts[:2]
    assert set(res.skipped) == set(parts[2:]) and all("cap" in r for r in res.skipped.values())
    res = run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.max.delete.partitions": "2"})
    assert res.expired_partitions == parts[2:4]
    none = run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.max.delete.partitions": "0"})
    assert none.instant is None and len(none.skipped) == 2


def test_dry_run_reports_time_age_and_rule_and_writes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, "COPY_ON_WRITE")
    before = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    res = run_ttl(path, DAYS, dry_run=True)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == before
    doc = res.to_json()
    assert doc["instant"] is None and doc["dry_run"] is True
    assert doc["expired_partitions"] == ["p0", "p1"]
    p0 = doc["reasons"]["p0"]
    assert p0["reference_time"] == "1970-01-01T00:00:00.000Z" or p0["reference"] == at(0)
    assert p0["retention"] == "P10D" and p0["rule"].startswith("default hoodie.partition.ttl.strategy.days.retain")
    assert p0["age_ms"] > 10 * DAY_MS and p0["status"] == "expired"
    assert doc["reasons"]["p2"]["status"] == "kept"


def test_pending_operations_skip_partitions_not_the_run(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, "MERGE_ON_READ")
    table = HoodieTable(path)
    # A running write touching p0 (inflight with a marker).
    w = table.new_instant_time()
    T.transition_to_inflight(table.storage, T.create_requested(table.storage, w, I.DELTA_COMMIT), b"")
    W.create_marker(table.storage, w, "p0", N.base_file_name("x-0", "0-0-0", w), "CREATE")
    res = run_ttl(path, DAYS)
    assert res.expired_partitions == ["p1"]
    assert "pending write deltacommit" in res.skipped["p0"]
    T.delete_instant_files(table.storage, w, I.DELTA_COMMIT, [I.State.INFLIGHT, I.State.REQUESTED])
    W.delete_markers(table.storage, w)
    # A pending compaction of p0 also protects it.
    write_arrow(path, ten_rows("p0", ts=3), opts("MERGE_ON_READ"), instant=at(3000))
    table.reload()
    (sl,) = FileSystemView(table.storage, table.timeline).latest_file_slices("p0")
    c = table.new_instant_time()
    op = plans.compaction_operation(sl.base_instant, sl.base_file.name, [l.name for l in sl.log_files],
                                    sl.file_id, "p0", {})
    T.create_requested(table.storage, c, I.COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    res = run_ttl(path, DAYS, dry_run=True)
    assert res.expired_partitions == [] and f"compaction {c}" in res.skipped["p0"]


def test_stale_pending_ttl_instant_is_aborted(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, "COPY_ON_WRITE")
    table = HoodieTable(path)
    stale = table.new_instant_time()
    req = T.create_requested(table.storage, stale, I.REPLACE_COMMIT, plans.write_avro_metadata(
        "HoodieRequestedReplaceMetadata", plans.requested_replace_metadata("DELETE_PARTITION")))
    T.transition_to_inflight(table.storage, req, CommitMetadata(
        operation_type="DELETE_PARTITION", extra_metadata={"hoodie.partition.ttl.partitions": '["p0"]'}).to_json_bytes())
    res = run_ttl(path, DAYS)
    assert res.aborted == [stale]
    assert res.expired_partitions == ["p0", "p1"]
    assert HoodieTable(path).timeline.get(stale) is None
    assert parts_of(read_hudi_rs(path)) == {"p2": 10}


def test_no_instant_when_nothing_expires(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p2"), opts())
    n = len(list((tmp_path / "t" / ".hoodie").iterdir()))
    res = run_ttl(path, DAYS)
    assert res.instant is None and res.expired_partitions == []
    assert len(list((tmp_path / "t" / ".hoodie").iterdir())) == n


def test_configuration_errors(tmp_path: Path, fixture_copy) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, "COPY_ON_WRITE")
    with pytest.raises(TTLConfigError, match="no retention is set"):
        run_ttl(path, {})
    with pytest.raises(TTLConfigError, match="keeps nothing"):
        run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "0"})
    with pytest.raises(TTLConfigError, match="do not exist: nope"):
        run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.partition.selected": "p0,nope"})
    with pytest.raises(TTLConfigError, match="not newer"):
        run_ttl(path, DAYS, instant_time="20000101000000000")
    nonpart = fixture_copy("sample_table_cow_v6_nonpartitioned")
    with pytest.raises(TTLConfigError, match="not partitioned"):
        run_ttl(str(nonpart), DAYS)
    with pytest.raises(TTLConfigError, match="not a subclass"):
        run_ttl(path, {"hoodie.partition.ttl.strategy.class": "tests.services.test_ttl.NotAStrategy"})
    with pytest.raises(TTLConfigError, match="cannot import"):
        run_ttl(path, {"hoodie.partition.ttl.strategy.class": "no_such_module.Strategy"})


@pytest.mark.parametrize("days", ["1e-7", "inf", "nan"])
def test_days_retain_fraction_inf_nan_refused_before_anything_is_written(tmp_path: Path, days: str) -> None:
    # 1e-7 days (9 ms) expired a partition written 2 s earlier; inf/nan raised raw Python errors.
    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p2"), opts())
    listing = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    for run in (lambda: run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": days}),
                lambda: write_arrow(path, ten_rows("p3"), opts(**{"hoodie.partition.ttl.inline": "true",
                                                                 "hoodie.partition.ttl.strategy.days.retain": days}))):
        with pytest.raises(TTLConfigError, match="not a whole number of days") as e:
            run()
        assert type(e.value) is TTLConfigError
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == listing
    assert hoodie.read_table(path).num_rows == 10


def test_empty_table_is_a_noop(tmp_path: Path) -> None:
    from hoodie.format.table import create_table

    path = str(tmp_path / "t")
    create_table(path, table_name="e", record_key_fields=["k"], partition_fields=["part"])
    res = run_ttl(path, DAYS)
    assert res.instant is None and res.decisions == []


class NotAStrategy:
    """Used by test_configuration_errors."""


class ExpireNamed(PartitionTTLStrategy):
    """A user strategy: expires the partitions listed in ``test.expire`` (and a missing one)."""

    def get_expired_partition_paths(self) -> list[str]:
        wanted = self.config.options.get("test.expire", "").split(",")
        return [p for p in self.get_partition_paths_for_ttl() if p in wanted] + ["does/not/exist"]


def test_user_strategy_class_takes_precedence(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, "COPY_ON_WRITE")
    res = run_ttl(path, {"hoodie.partition.ttl.strategy.class": "tests.services.test_ttl.ExpireNamed",
                         "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME",
                         "test.expire": "p2"})
    assert res.strategy == "ExpireNamed" and res.expired_partitions == ["p2"]
    missing = next(d for d in res.decisions if d.partition == "does/not/exist")
    assert not missing.expired and "no such partition" in missing.reason
    # Hudi's Java class names select the built-ins.
    java = run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.class":
                          "org.apache.hudi.table.action.ttl.strategy.KeepByTimeStrategy"}, dry_run=True)
    assert java.strategy == "KEEP_BY_TIME" and java.expired_partitions == ["p0", "p1"]


def test_inline_ttl_after_each_write(tmp_path: Path) -> None:
    """TestPartitionTTLManagement#testInlinePartitionTTL: writes into expired partitions vanish."""
    path = str(tmp_path / "t")
    o = {**opts(op="insert"), **DAYS, "hoodie.partition.ttl.inline": "true"}
    write_arrow(path, ten_rows("p0"), o, instant=at(0))
    assert hoodie.read_table(path).num_rows == 0
    write_arrow(path, ten_rows("p1"), o, instant=at(1000))
    assert hoodie.read_table(path).num_rows == 0
    write_arrow(path, ten_rows("p2"), o)
    assert parts_of(hoodie.read_table(path)) == {"p2": 10} == parts_of(read_hudi_rs(path))
    ttl = [i for i in HoodieTable(path).timeline.completed().by_actions(I.REPLACE_COMMIT).instants]
    assert len(ttl) == 2  # the write of p2 expired nothing: no third instant


def test_async_ttl_every_n_commits(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = opts(op="insert")
    write_arrow(path, ten_rows("p0"), o, instant=at(0))
    cfg = {**DAYS, "hoodie.ttl.async.enabled": "true", "hoodie.ttl.async.max.commits": "2",
           "hoodie.ttl.async.poll.interval.ms": "50"}
    with TTLAsyncService(path, cfg) as svc:
        svc.notify_commit()
        assert svc.wait_idle(30)
        assert svc.results == []  # 1 commit < 2
        write_arrow(path, ten_rows("p1"), o, instant=at(1000))
        svc.notify_commit()
        assert svc.wait_idle(30)
        assert [r.expired_partitions for r in svc.results] == [["p0", "p1"]]
        write_arrow(path, ten_rows("p2"), o)
        svc.notify_commit()
        assert svc.wait_idle(30)
        assert len(svc.results) == 1  # 1 commit since the TTL instant
    assert not svc.running and not svc.errors
    # Through the writer hook: the service is started on the first commit and notified on each.
    path2 = str(tmp_path / "t2")
    try:
        write_arrow(path2, ten_rows("p0"), {**o, **cfg}, instant=at(0))
        write_arrow(path2, ten_rows("p1"), {**o, **cfg}, instant=at(1000))
        svc2 = maybe_run_async_ttl(HoodieTable(path2), {**o, **cfg})
        assert svc2 is not None and svc2.wait_idle(30)
        assert hoodie.read_table(path2).num_rows == 0 == read_hudi_rs(path2).num_rows
        assert maybe_run_async_ttl(HoodieTable(path2), DAYS) is None
    finally:
        stop_async_services()


def test_java_fixture_cow_overwrite_table(fixture_copy) -> None:
    path = str(fixture_copy("sample_table_cow_v6_simplekeygen_nonhivestyle_overwritetable"))
    res = run_ttl(path, DAYS)
    # 10 and 20 hold no live data (insert_overwrite_table replaced them): only 30 has something to delete.
    assert res.expired_partitions == ["30"]
    by = {d.partition: d for d in res.decisions}
    assert "no live data" in by["10"].reason
    assert hoodie.read_table(path).num_rows == 0 == read_hudi_rs(path).num_rows
    clean = run_clean(path, FILE_VERSIONS)
    assert sorted(clean.deleted_partitions) == ["10", "20", "30"]
    assert read_hudi_rs(path).num_rows == 0


def test_java_fixture_mor_quickstart_with_predicate(fixture_copy, fixtures_root: Path) -> None:
    stem = "quickstart_trips_table_mor_avro_v6_trips_8i1u"
    path = str(fixture_copy(stem))
    gold = pq.read_table(next((fixtures_root / stem / "gold_data").glob("*.parquet")))
    res = run_ttl(path, {**DAYS, "hoodie.partition.ttl.strategy.partition.predicate": "city = 'chennai'"})
    assert res.expired_partitions == ["city=chennai"]
    cols = ["uuid", "rider", "fare", "city"]
    keep = gold.filter(pa.compute.not_equal(gold.column("city"), "chennai"))
    assert sorted(rows_of(hoodie.read_table(path), cols)) == sorted(rows_of(keep, cols))
    assert sorted(rows_of(read_hudi_rs(path), cols)) == sorted(rows_of(keep, cols))
    run_clean(path, FILE_VERSIONS)
    assert not (Path(path) / "city=chennai").exists()
    assert sorted(rows_of(read_hudi_rs(path), cols)) == sorted(rows_of(keep, cols))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_cli_ttl_run(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    upstream_setup(path, "COPY_ON_WRITE")
    dry = _cli("ttl", "run", path, "--dry-run", "--json", "--set", "hoodie.partition.ttl.strategy.days.retain=10")
    assert dry.returncode == 0, dry.stderr
    doc = json.loads(dry.stdout)
    assert doc["expired_partitions"] == ["p0", "p1"] and doc["instant"] is None
    assert doc["reasons"]["p0"]["retention"] == "P10D" and "age" in doc["reasons"]["p0"]
    out = _cli("ttl", "run", path, "--set", "hoodie.partition.ttl.strategy.retention=P10D")
    assert out.returncode == 0, out.stderr
    assert "expired 2 partition(s) in replacecommit" in out.stdout and "p0:" in out.stdout
    bad = _cli("ttl", "run", path)
    assert bad.returncode == 2 and "TTLConfigError" in bad.stderr and bad.stderr.count("\n") == 1
    bad = _cli("ttl", "run", path, "--set", "novalue")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def test_keep_by_time_lists_the_archive_only_for_a_partition_it_needs(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The version-6 archive holds one file per archival, so listing it on every TTL run would make a run's
    cost grow with the table's age: KEEP_BY_TIME lists it only when a partition has no write in the active
    timeline (then the archive can hide its writes), and decides the same either way."""
    from hoodie.format.storage import Storage
    from hoodie.services.archive import run_archival

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.clean.automatic": "false"}
    write_arrow(path, pa.table({"k": ["old"], "p": ["quiet"], "ts": pa.array([0], pa.int64())}), opts)
    for n in range(8):
        write_arrow(path, pa.table({"k": ["a"], "p": ["busy"], "ts": pa.array([n], pa.int64())}), opts)
    arch = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    run_clean(path, arch)
    run_archival(path, arch)
    listed: list[str] = []
    real = Storage.list_dir

    def list_dir(self: Storage, rel: str = "") -> list:
        listed.append(rel)
        return real(self, rel)

    monkeypatch.setattr(Storage, "list_dir", list_dir)
    ttl = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "3650"}
    both = run_ttl(path, {**ttl, "hoodie.partition.ttl.partition.selected": "busy,quiet"}, dry_run=True)
    assert any("archived" in r for r in listed), "the quiet partition's writes are archived: the archive is read"
    assert "quiet" in {d.partition for d in both.decisions}
    listed.clear()
    busy = run_ttl(path, {**ttl, "hoodie.partition.ttl.partition.selected": "busy"}, dry_run=True)
    assert not [r for r in listed if "archived" in r], listed
    assert [d.partition for d in busy.decisions] == ["busy"]
