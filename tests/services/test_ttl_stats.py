"""Incremental partition last-modified stats give the same answer as a full scan, whatever happens
on the timeline between runs: new writes, writes that were pending and complete later, table
services, rolled-back commits and instants created out of order. Timelines are synthesized (commit
metadata only, as in bench/ttl_stats.py); the code path is the one run_ttl uses."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie import write_arrow
from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.format.timeline.instant import State
from hoodie.format.table import HoodieTable, create_table
from hoodie.services.ttl import run_ttl
from hoodie.services.ttl.stats import PartitionStats, forget, full_scan, partition_last_modified
from tests.helpers import examples

PARTS = [f"d={i}" for i in range(6)]
BASE_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def _meta(parts: list[str], op: str = "UPSERT", compacted: bool = False) -> CommitMetadata:
    """Commit metadata touching ``parts``; the timeline writes it as its layout does (JSON on version
    6, Avro on versions 8/9)."""
    m = CommitMetadata(operation_type=op, compacted=compacted)
    for p in parts:
        m.add_write_stat(p, WriteStat(file_id=f"f-{p}", path=f"{p}/f.parquet", partition_path=p))
    m.extra_metadata["schema"] = '{"type":"record","name":"r","fields":[]}'
    return m


class Synth:
    """Writes instant files directly (no data files), and keeps a model of what they say: the newest
    completed write per partition, with and without table services."""

    def __init__(self, path: str, version: int = 6) -> None:
        self.table = create_table(path, table_name="s", record_key_fields=["k"], partition_fields=["d"],
                                  timeline_timezone="UTC", table_version=version)
        self.n = 0
        self.pending: list[tuple[str, list[str]]] = []
        self.completed: dict[str, tuple[list[str], bool]] = {}  # instant -> (partitions, is a table service)

    def model(self, count_table_services: bool) -> dict[str, str]:
        """Partition -> newest completed instant writing it (what a full scan must find)."""
        out: dict[str, str] = {}
        for ts, (parts, service) in self.completed.items():
            if service and not count_table_services:
                continue
            for p in parts:
                out[p] = max(out.get(p, ts), ts)
        return out

    def ts(self, offset: int = 0) -> str:
        self.n += 10
        return I.epoch_ms_to_instant(BASE_MS + self.n + offset, "UTC")

    def write(self, parts: list[str], action: str = I.DELTA_COMMIT, ts: str | None = None) -> str:
        ts = ts or self.ts()
        st = self.table.storage
        inf = T.transition_to_inflight(st, T.create_requested(st, ts, action), b"")
        T.transition_to_complete(st, inf, _meta(parts))
        self.completed[ts] = (parts, False)
        return ts

    def start(self, parts: list[str]) -> None:
        ts = self.ts()
        st = self.table.storage
        T.transition_to_inflight(st, T.create_requested(st, ts, I.COMMIT), b"")
        self.pending.append((ts, parts))

    def finish(self, i: int) -> None:
        if not self.pending:
            return
        ts, parts = self.pending.pop(i % len(self.pending))
        T.transition_to_complete(self.table.storage, I.Instant(ts, I.COMMIT, State.INFLIGHT), _meta(parts))
        self.completed[ts] = (parts, False)

    def compact(self, parts: list[str]) -> None:
        ts = self.ts()
        st = self.table.storage
        plan = plans.compaction_plan([plans.compaction_operation("0", None, [], f"f-{p}", p, {}) for p in parts])
        req = T.create_requested(st, ts, I.COMPACTION, plans.write_avro_metadata("HoodieCompactionPlan", plan))
        inf = T.transition_to_inflight(st, req, b"")
        T.transition_to_complete(st, inf, _meta(parts, "COMPACT", True))
        self.completed[ts] = (parts, True)

    def rollback_latest(self) -> None:
        tl = self.table.reload().timeline.completed_writes()
        last = tl.last()
        if last is not None and last.action != I.COMMIT or (last is not None and not tl.is_compaction_commit(last)):
            T.delete_instant_files(self.table.storage, last.timestamp, last.action,
                                   [State.COMPLETED, State.INFLIGHT, State.REQUESTED])
            self.completed.pop(last.timestamp, None)

    def late(self, parts: list[str]) -> None:
        # An instant older than the newest one (a backfill with an explicit instant time); the counter
        # moves on so that every instant stays unique.
        self.n += 10
        self.write(parts, ts=I.epoch_ms_to_instant(BASE_MS + self.n - 13, "UTC"))


parts_st = st.lists(st.sampled_from(PARTS), min_size=1, max_size=3, unique=True)
step = st.one_of(
    st.tuples(st.just("write"), parts_st), st.tuples(st.just("write"), parts_st),
    st.tuples(st.just("start"), parts_st), st.tuples(st.just("finish"), st.integers(0, 5)),
    st.tuples(st.just("compact"), parts_st), st.tuples(st.just("rollback"), st.none()),
    st.tuples(st.just("late"), parts_st), st.tuples(st.just("check"), st.none()),
    st.tuples(st.just("check"), st.none()),
)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(st.sampled_from([6, 9]), st.lists(step, min_size=1, max_size=25))
def test_incremental_equals_full_scan(tmp_path_factory, version: int, steps: list) -> None:
    """On table versions 6 and 9 (JSON and Avro commit metadata): the full scan equals the model, and
    the incremental stats equal the full scan."""
    path = str(tmp_path_factory.mktemp("stats") / "t")
    s = Synth(path, version)
    forget()
    for kind, arg in steps + [("check", None)]:
        if kind == "write":
            s.write(arg)
        elif kind == "start":
            s.start(arg)
        elif kind == "finish":
            s.finish(arg)
        elif kind == "compact":
            s.compact(arg)
        elif kind == "rollback":
            s.rollback_latest()
        elif kind == "late":
            s.late(arg)
        else:
            table = HoodieTable(path)
            for cts in (False, True):
                inc = partition_last_modified(table, count_table_services=cts)
                assert full_scan(table, cts) == s.model(cts), f"full scan != model (cts={cts})"
                assert inc.last_modified == full_scan(table, cts), f"incremental != full scan (cts={cts})"


def test_incremental_reads_only_new_instants(tmp_path: Path) -> None:
    s = Synth(str(tmp_path / "t"))
    forget()
    for i in range(20):
        s.write([PARTS[i % 6]])
    table = HoodieTable(str(tmp_path / "t"))
    first = partition_last_modified(table)
    assert first.scanned_instants == 20 and not first.incremental
    s.start(["d=0"])
    s.write(["d=1"])
    second = partition_last_modified(table.reload())
    assert second.incremental and second.scanned_instants == 1
    s.finish(0)  # the older pending write completes: it is read next time
    third = partition_last_modified(table.reload())
    assert third.incremental and third.scanned_instants == 1
    assert third.last_modified["d=0"] == table.timeline.completed_writes().instants[-2].timestamp
    assert third.last_modified == full_scan(table)
    # Full scans on request.
    assert partition_last_modified(table, incremental=False).scanned_instants == 22


def test_stats_are_persisted_in_the_ttl_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
         "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.operation": "insert"}
    for i, p in enumerate(["old0", "old1"]):
        write_arrow(path, pa.table({"k": [f"{p}"], "part": [p]}), o, instant=I.epoch_ms_to_instant(i))
    for i in range(3):
        write_arrow(path, pa.table({"k": [f"n{i}"], "part": ["new"]}), o)
    forget()
    res = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10"})
    assert res.expired_partitions == ["old0", "old1"] and res.stats_scanned_instants == 5
    meta = HoodieTable(path).timeline.commit_metadata(I.Instant(res.instant, I.REPLACE_COMMIT))
    st = PartitionStats.decode(meta.extra_metadata["hoodie.partition.ttl.stats"])
    assert st.last_modified["old0"] == I.epoch_ms_to_instant(0) and st.covered == 5
    # A new process (no in-memory state) starts from the commit and reads only what came after.
    forget()
    write_arrow(path, pa.table({"k": ["n9"], "part": ["new"]}), o)
    again = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10"}, dry_run=True)
    assert again.stats_incremental and again.stats_scanned_instants == 2  # the TTL commit and the write
    assert partition_last_modified(HoodieTable(path)).last_modified == full_scan(HoodieTable(path))
