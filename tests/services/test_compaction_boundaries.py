"""Deterministic tests at compaction's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): the event-time threshold itself, Java-written write stats of log files with deletes, the
strategies (synthetic slices, no table), partial compaction's links and the event-time index."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest


from hoodie.format.file_group import naming as N
from hoodie.format.slice import writer as W
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import plan_compaction, run_compaction, schedule_compaction
from hoodie.services.compaction import partial as P
from hoodie.format.slice.event_ranges import EventTimeIndex
from hoodie.services.compaction.strategies import CompactionStrategy
from tests.services.test_compaction_support import (
    Setup, event_time_config, latest_slices, log_names, read_optimized, snapshot, write,
)
from tests.services.boundaries_support import T


def _plan(path: str, instant: str) -> dict:
    """The plan as its Avro record (the boundary tests check the fields as written)."""
    return HoodieTable(path).timeline.compaction_plan(instant).to_avro()


def test_log_whose_minimum_event_time_equals_the_threshold_is_compacted(tmp_path: Path) -> None:
    """docs/compaction.md and RFC-74: every log file with minimum event time **at or before** T is
    compacted (after the compaction no log file with min_event_time <= T is left)."""
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0), (3, T - 10, 0)])
    write(path, "upsert", [(1, T - 1, 1)])
    write(path, "upsert", [(2, T, 2)])       # minimum exactly T: compacted
    write(path, "upsert", [(3, T + 1, 3)])   # one millisecond after T: kept as a link
    logs = log_names(path)
    c = schedule_compaction(path, event_time_config(T))
    (op,) = _plan(path, c)["operations"]
    assert op["deltaFilePaths"] == logs[:2] + [P.sentinel_name(op["fileId"], c)]
    assert [s["target"] for s in op["symlinkOperations"]] == logs[2:]
    expected = snapshot(path)
    run_compaction(path, c)
    assert snapshot(path) == expected
    ro = {r[0]: r[3] for r in read_optimized(path)}
    assert ro[repr(("int", 2))] == repr(("int", 2)) and ro[repr(("int", 3))] == repr(("int", 0))


def test_threshold_one_below_the_minimum_leaves_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0)])
    write(path, "upsert", [(1, T, 1)])
    t = HoodieTable(path)
    assert plan_compaction(t, event_time_config(T - 1), instant=t.new_instant_time()).operations == []
    t.reload()
    (op,) = plan_compaction(t, event_time_config(T), instant=t.new_instant_time()).operations
    assert op.is_partial is False


def _java_stat_log_with_delete(path: str, data_ms: int, delete_ms: int) -> str:
    """A deltacommit writing one log file holding a data block (event time ``data_ms``) and a
    delete block (``delete_ms``), whose write stat has numDeletes > 0 and a range covering only the
    data block, as a Java writer records it. Returns the log file's relative path."""
    t = HoodieTable(path)
    (sl,) = latest_slices(path)
    inflight = W.start_commit(t, "deltacommit", operation_type="UPSERT")
    data = pa.table({"k": pa.array([1], pa.int64()), "part": ["all"], "ts": pa.array([data_ms], pa.int64()),
                     "v": pa.array([9], pa.int64())})
    data = W.add_meta_columns(data, instant=inflight.timestamp, record_keys=pa.array(["1"]), partition_paths="all",
                              file_name=sl.file_id)
    deletes = pa.table({"record_key": ["2"], "partition_path": ["all"],
                        "event_time": pa.array([delete_ms], pa.int64())})
    stat = W.write_log_file(t.storage, partition="all", file_id=sl.file_id, base_instant=sl.base_instant,
                            instant=inflight.timestamp, token=N.write_token(0, 1, 1),
                            write=W.LogWrite(data=data, deletes=deletes), avro_schema=t.avro_schema(),
                            base_file_name=sl.base_file.name, event_time_field="ts")
    assert stat.num_deletes == 1 and stat.min_event_time == min(data_ms, delete_ms)
    stat.min_event_time = stat.max_event_time = data_ms  # the Java stat: the data block's range only
    W.complete_commit(t, inflight, W.commit_metadata_for([stat], avro_schema=t.avro_schema(),
                                                         operation_type="UPSERT"))
    return stat.path


def test_write_stat_of_a_log_file_with_deletes_is_not_trusted(tmp_path: Path) -> None:
    """A stat with numDeletes > 0 may cover only the data block: the headers decide, so a delete
    at or before T is compacted even though the stat's minimum is after T."""
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0)])
    log = _java_stat_log_with_delete(path, data_ms=T + 100, delete_ms=T - 100)
    t = HoodieTable(path)
    index = EventTimeIndex(t)
    got = index.for_path(log)
    assert (got.min_ms, got.max_ms, got.source) == (T - 100, T + 100, "headers") and index.header_reads == 1
    c = schedule_compaction(path, event_time_config(T))
    (op,) = _plan(path, c)["operations"]
    assert op["deltaFilePaths"] == [Path(log).name] and not op["symlinkOperations"]
    run_compaction(path, c)
    assert [r[0] for r in read_optimized(path)] == [repr(("int", 1))]


def test_write_stat_without_deletes_is_used_as_is(tmp_path: Path) -> None:
    """The guard is about deletes only: a stat of a data-only log file answers without headers."""
    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0)])
    write(path, "upsert", [(1, T + 5, 1)])
    t = HoodieTable(path)
    index = EventTimeIndex(t)
    (sl,) = latest_slices(path)
    (lf,) = sl.log_files
    got = index.for_log(lf)
    assert (got.min_ms, got.max_ms, got.source) == (T + 5, T + 5, "stats") and index.header_reads == 0


def _slice(partition: str, file_id: str, log_sizes: list[int], base_size: int | None = 10 * 1024 * 1024):
    from hoodie.format.file_group.fsview import BaseFile, FileSlice, LogFile

    base = None if base_size is None else BaseFile(partition, f"{file_id}_1-0-1_001.parquet", file_id, "001",
                                                   base_size)
    logs = [LogFile(partition, n, N.parse_log_file(n), size) for n, size in
            ((N.log_file_name(file_id, "001", v + 1, "1-0-1"), s) for v, s in enumerate(log_sizes))]
    return FileSlice(partition, file_id, "001", base, logs)


def _ops(strategy, slices):
    from hoodie.services.compaction.strategies import CandidateOperation

    return [CandidateOperation(sl, sl.sorted_logs(), [], strategy.capture_metrics(sl, sl.sorted_logs()))
            for sl in slices]


def _context(cfg, today=None):
    from hoodie.services.compaction.strategies import PlanningContext

    return PlanningContext(table=None, config=cfg, instant="20240101000000000", event_times=None,
                           today=today or dt.date(2024, 3, 10))


def test_capture_metrics_uses_whole_mebibytes_and_the_max_file_size_without_a_base() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    cfg = CompactionConfig.from_options({"hoodie.parquet.max.file.size": str(120 * S.MIB)})
    strategy = S.CompactionStrategy(cfg)
    sl = _slice("p", "f", [S.MIB, S.MIB // 2], base_size=3 * S.MIB - 1)
    m = strategy.capture_metrics(sl, sl.sorted_logs())
    assert m == {S.TOTAL_LOG_FILES_SIZE: 1.5 * S.MIB, S.TOTAL_LOG_FILES: 2.0, S.TOTAL_IO_READ_MB: 4.0,
                 S.TOTAL_IO_WRITE_MB: 2.0, S.TOTAL_IO_MB: 6.0}
    no_base = _slice("p", "g", [S.MIB - 1], base_size=None)
    m = strategy.capture_metrics(no_base, no_base.sorted_logs())
    assert (m[S.TOTAL_IO_READ_MB], m[S.TOTAL_IO_WRITE_MB], m[S.TOTAL_IO_MB]) == (0.0, 120.0, 120.0)


def test_bounded_io_includes_the_operation_that_uses_up_the_budget() -> None:
    """Hudi's BoundedIO: subtract each operation's IO, keep it, stop once the budget is <= 0."""
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    def kept(target_io: int, ios: list[int]) -> list[str]:
        strategy = S.BoundedIOCompactionStrategy(CompactionConfig.from_options(
            {"hoodie.compaction.target.io": str(target_io)}))
        ops = [S.CandidateOperation(_slice("p", f"f{i}", [1]), [], [], {S.TOTAL_IO_MB: float(io)})
               for i, io in enumerate(ios)]
        return [op.file_id for op in strategy.order_and_filter(ops, [], _context(strategy.config))]

    assert kept(100, [40, 60, 10]) == ["f0", "f1"]        # exactly used up: stop after it
    assert kept(100, [40, 59, 10, 5]) == ["f0", "f1", "f2"]  # crossing it: included, then stop
    assert kept(100, [150, 1]) == ["f0"]
    assert kept(100, [10, 20]) == ["f0", "f1"]


def test_log_file_size_threshold_keeps_the_equal_and_orders_largest_first() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    strategy = S.resolve_strategy(CompactionConfig.from_options({
        "hoodie.compaction.strategy": "LogFileSizeBased", "hoodie.compaction.logfile.size.threshold": "3000",
        "hoodie.compaction.target.io": "1000000"}))
    slices = [_slice("p", "below", [1000, 1999]), _slice("p", "equal", [1000, 2000]), _slice("p", "big", [4000])]
    got = strategy.order_and_filter(_ops(strategy, slices), [], _context(strategy.config))
    assert [op.file_id for op in got] == ["big", "equal"]


def test_log_file_num_threshold_keeps_the_equal_and_orders_most_first() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    strategy = S.resolve_strategy(CompactionConfig.from_options({
        "hoodie.compaction.strategy": "LogFileNumBased", "hoodie.compaction.logfile.num.threshold": "3",
        "hoodie.compaction.target.io": "1000000"}))
    slices = [_slice("p", "two", [1, 1]), _slice("p", "three", [1, 1, 1]), _slice("p", "four", [1, 1, 1, 1])]
    got = strategy.order_and_filter(_ops(strategy, slices), [], _context(strategy.config))
    assert [op.file_id for op in got] == ["four", "three"]


def test_date_partition_strategies_at_their_boundaries() -> None:
    """DayBased keeps the newest N date partitions; BoundedPartitionAware keeps dates on or after
    today - N days (future ones too), newest first; UnBoundedPartitionAware the rest."""
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    parts = ["2024/03/07", "dt=2024/03/08", "2024/03/09", "2024/03/12"]

    def run(name: str) -> tuple[list[str], list[str]]:
        strategy = S.resolve_strategy(CompactionConfig.from_options({
            "hoodie.compaction.strategy": name, "hoodie.compaction.daybased.target.partitions": "2"}))
        ctx = _context(strategy.config)  # today = 2024-03-10: earliest = 2024-03-08
        ops = _ops(strategy, [_slice(p, f"f{i}", [1]) for i, p in enumerate(parts)])
        return strategy.filter_partition_paths(parts, ctx), [op.partition for op in
                                                             strategy.order_and_filter(ops, [], ctx)]

    assert run("DayBased") == (["2024/03/12", "2024/03/09"], ["2024/03/12", "2024/03/09"])
    assert run("BoundedPartitionAware") == (["2024/03/12", "2024/03/09", "dt=2024/03/08"],
                                            ["2024/03/12", "2024/03/09", "dt=2024/03/08"])
    assert run("UnBoundedPartitionAware") == (["2024/03/07"], ["2024/03/07"])
    assert S.partition_date("y=2024/m=02/d=29/extra") == dt.date(2024, 2, 29)
    with pytest.raises(S.CompactionConfigError, match=r"partition 'us/2024' is not a yyyy/MM/dd date path \(hive-style "
                                                      r"k=v allowed\); the day-based and partition-aware strategies "
                                                      r"need date partitions"):
        S.partition_date("us/2024")
    with pytest.raises(S.CompactionConfigError, match="is not a yyyy/MM/dd date path"):
        S.partition_date("y=2024=2025/m=03/d=01")  # only the first '=' separates key and value


def test_partition_regex_searches_and_composites_narrow_in_turn() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    cfg = CompactionConfig.from_options({
        "hoodie.compaction.strategy": "PartitionRegexBased,DayBased",
        "hoodie.compaction.partition.path.regex": "03/0[89]", "hoodie.compaction.daybased.target.partitions": "1"})
    strategy = S.resolve_strategy(cfg)
    assert isinstance(strategy, S.CompositeCompactionStrategy)
    assert strategy.name == S.JAVA_PACKAGE + "PartitionRegexBasedCompactionStrategy," + S.JAVA_PACKAGE \
        + "DayBasedCompactionStrategy"
    ctx = _context(cfg)
    assert strategy.filter_partition_paths(["2024/03/07", "2024/03/08", "2024/03/09"], ctx) == ["2024/03/09"]
    sl = _slice("2024/03/09", "f", [1, 2, 3])
    assert strategy.filter_log_files(sl.sorted_logs(), file_slice=sl, context=ctx) == (sl.sorted_logs(), [])
    with pytest.raises(S.CompactionConfigError, match="^PartitionRegexBasedCompactionStrategy needs "
                                                      "hoodie.compaction.partition.path.regex$"):
        S.resolve_strategy(CompactionConfig.from_options({"hoodie.compaction.strategy": "PartitionRegexBased"}))
    with pytest.raises(S.CompactionConfigError, match=r"regex='\(' is not a valid regex"):
        S.resolve_strategy(CompactionConfig.from_options({"hoodie.compaction.strategy": "PartitionRegexBased",
                                                          "hoodie.compaction.partition.path.regex": "("}))


def test_strategy_names_resolve_like_hudi_and_refuse_clearly() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    def resolve(name: str) -> S.CompactionStrategy:
        return S.resolve_strategy(CompactionConfig.from_options({"hoodie.compaction.strategy": name}))

    for cls in S.BUILTIN:
        if cls is S.PartitionRegexBasedCompactionStrategy:
            continue
        simple = cls.java_class.rsplit(".", 1)[1]
        assert type(resolve(cls.java_class)) is cls and type(resolve(simple)) is cls
        assert type(resolve(cls.short_name)) is cls and resolve(cls.short_name).name == cls.java_class
    # Composite names are dropped from a list; a list of one strategy is that strategy.
    assert type(resolve(" Composite , UnBounded ")) is S.UnBoundedCompactionStrategy
    assert type(resolve(S.JAVA_PACKAGE + "CompositeCompactionStrategy,DayBased")) is S.DayBasedCompactionStrategy
    assert type(resolve("CompositeCompactionStrategy,DayBased")) is S.DayBasedCompactionStrategy
    user = resolve("tests.services.test_compaction_plan.PickLastLog")
    assert user.name == "tests.services.test_compaction_plan.PickLastLog"
    assert S.event_time_strategy(resolve("UnBounded,EventTimeBased")) is not None
    assert S.event_time_strategy(resolve("UnBounded,DayBased")) is None
    with pytest.raises(S.CompactionConfigError, match=r"'org.apache.hudi.Foo' is a Hudi class hoodie does not "
                                                      r"implement; use one of LogFileSizeBased, LogFileNumBased"):
        resolve("org.apache.hudi.Foo")
    builtins = ", ".join(c.short_name for c in S.BUILTIN)
    assert builtins.startswith("LogFileSizeBased, LogFileNumBased, BoundedIO, UnBounded, DayBased")
    with pytest.raises(S.CompactionConfigError, match=rf"^hoodie.compaction.strategy='Nope' is unknown; use one of "
                                                      rf"{builtins}, a Hudi class name, or a dotted Python path$"):
        resolve("Nope")
    with pytest.raises(S.CompactionConfigError, match=r"'no_such_module.X' cannot be loaded"):
        resolve("no_such_module.X")
    with pytest.raises(S.CompactionConfigError, match=r"'pathlib.Path' is not a subclass of "
                                                      r"hoodie.services.compaction.strategies.CompactionStrategy"):
        resolve("pathlib.Path")
    with pytest.raises(S.CompactionConfigError, match="^hoodie.compaction.strategy is empty$"):
        resolve(" , ")
    with pytest.raises(S.CompactionConfigError, match="^a composite compaction strategy needs at least one strategy$"):
        S.CompositeCompactionStrategy(CompactionConfig(), [])


class _Recorder(CompactionStrategy):
    """A user strategy recording what a composite hands it (and keeping the last log file out)."""

    seen: list = []

    def filter_partition_paths(self, partitions, context):
        self.seen.append(("partitions", context.today))
        return list(partitions)

    def filter_log_files(self, logs, *, file_slice, context):
        self.seen.append(("logs", file_slice.file_id, context.today))
        return list(logs[:-1]), list(logs[-1:])

    def order_and_filter(self, operations, pending_plans, context):
        self.seen.append(("ops", len(pending_plans), context.today))
        return list(operations)


def test_composite_hands_every_member_the_context_slice_and_pending_plans() -> None:
    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    _Recorder.seen = []
    cfg = CompactionConfig.from_options({
        "hoodie.compaction.strategy": f"{__name__}._Recorder,BoundedPartitionAware",
        "hoodie.compaction.daybased.target.partitions": "1"})
    strategy = S.resolve_strategy(cfg)
    ctx = _context(cfg)
    assert strategy.filter_partition_paths(["2024/03/01", "2024/03/09"], ctx) == ["2024/03/09"]
    sl = _slice("2024/03/09", "f", [1, 2, 3])
    logs = sl.sorted_logs()
    assert strategy.filter_log_files(logs, file_slice=sl, context=ctx) == (logs[:2], logs[2:])
    ops = _ops(strategy, [sl, _slice("2024/03/01", "g", [1])])
    assert [op.file_id for op in strategy.order_and_filter(ops, [{"plan": 1}], ctx)] == ["f"]
    assert _Recorder.seen == [("partitions", ctx.today), ("logs", "f", ctx.today), ("ops", 1, ctx.today)]


def test_event_time_strategy_splits_at_the_threshold_itself() -> None:
    from types import SimpleNamespace

    from hoodie.services.compaction import CompactionConfig
    from hoodie.services.compaction import strategies as S

    cfg = CompactionConfig.from_options(event_time_config(T))
    strategy = S.resolve_strategy(cfg)
    sl = _slice("p", "f", [1, 1, 1, 1])
    logs = sl.sorted_logs()
    mins = dict(zip((lf.name for lf in logs), (T + 1, T, float("-inf"), float("inf"))))
    ctx = _context(cfg)
    # known=False: the unit check (a recorded range in another unit) has nothing to look at.
    ctx.event_times = SimpleNamespace(for_log=lambda lf: SimpleNamespace(planning_min=mins[lf.name], known=False))
    assert strategy.filter_log_files(logs, file_slice=sl, context=ctx) == ([logs[1], logs[2]], [logs[0], logs[3]])


def test_original_of_follows_links_and_refuses_broken_or_foreign_ones(tmp_path: Path) -> None:
    import os
    from types import SimpleNamespace

    from hoodie.format.storage import Storage
    from hoodie.services.compaction import CompactionError
    from hoodie.services.compaction import partial as P

    root = tmp_path / "t"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    st = Storage(str(root))
    target = N.log_file_name("f", "001", 1, "1-0-1")
    (root / "a" / target).write_bytes(b"x")
    (root / target).write_bytes(b"x")  # a non-partitioned table's log file
    link = N.log_file_name("f", "002", 1, "1-0-1")
    os.symlink(root / "a" / target, root / "a" / link)
    os.symlink(root / target, root / link)
    assert P.original_of(st, "a", link) == target and P.original_of(st, "a", target) == target
    assert P.original_of(st, "", link) == target
    gone = N.log_file_name("f", "003", 1, "1-0-1")
    os.symlink(root / "a" / "missing.log", root / "a" / gone)
    with pytest.raises(CompactionError, match=rf"^log file a/{gone} is a link to {root}/a/missing.log, which is "
                                              r"missing; restore it \(or roll back the compaction that created the "
                                              r"link\) before compacting again$"):
        P.original_of(st, "a", gone)
    foreign = N.log_file_name("f", "004", 1, "1-0-1")
    (root / "b" / "other.log").write_bytes(b"x")
    os.symlink(root / "b" / "other.log", root / "a" / foreign)
    with pytest.raises(CompactionError, match=rf"^log file a/{foreign} links outside its partition folder "
                                              rf"\({root}/b/other.log\); hoodie only creates links between log "
                                              "files of one file group$"):
        P.original_of(st, "a", foreign)

    # Storage without symlinks (object stores) is never asked about links.
    def refuse(rel: str) -> bool:
        raise AssertionError("is_symlink asked on storage without symlinks")
    assert P.original_of(SimpleNamespace(supports_symlinks=False, is_symlink=refuse), "a", link) == link
    assert P.parse_version(link) == 1 and P.parse_version(N.log_file_name("f", "002", 7, "1-0-1")) == 7
    assert P.parse_version("f_1-0-1_001.parquet") is None


def test_remove_links_deletes_leftover_copies_and_links_lowest_version_first(tmp_path: Path) -> None:
    from hoodie.format.storage import Storage
    from hoodie.services.compaction import CompactionError
    from hoodie.services.compaction import partial as P

    root = tmp_path / "t"
    (root / "a").mkdir(parents=True)
    st = Storage(str(root))
    links = [P.LinkOp("a", "f", N.log_file_name("f", "002", v, "1-0-1"), N.log_file_name("f", "001", v + 1, "1-0-1"))
             for v in (2, 1)]
    for lk in links:
        (root / lk.target_path).write_bytes(b"target")
        (root / lk.link_path).write_bytes(b"copy")
    (root / (links[0].link_path + P.COPY_TMP_SUFFIX)).write_bytes(b"half")
    assert P.remove_links(st, links) == [links[1].link_path, links[0].link_path + P.COPY_TMP_SUFFIX,
                                         links[0].link_path]
    assert sorted(p.name for p in (root / "a").iterdir()) == sorted(lk.target for lk in links)
    assert P.remove_links(st, links) == []
    (root / links[0].target_path).unlink()
    with pytest.raises(CompactionError, match=rf"^log file {links[0].target_path} \(target of planned link "
                                              rf"{links[0].link}\) is missing; the table changed under the "
                                              r"compaction plan \(was it cleaned\?\)\. Nothing was committed; "
                                              "restore the file or roll the compaction back$"):
        P.materialize_link(st, links[0], "copy")


def test_event_index_counts_archived_blocks_as_committed_but_not_a_pending_first_instant(tmp_path: Path) -> None:
    """Without a write stat (its deltacommit archived), the headers give the range: a block older
    than the active timeline was committed. A block of the first active instant is committed only
    if that instant completed."""
    import warnings

    from hoodie.format.timeline import instant as I
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_compaction_support import batch, options

    path = str(tmp_path / "t")
    c1 = write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0)])
    c2 = write(path, "upsert", [(1, T + 5, 1)])
    c3 = write(path, "upsert", [(2, T + 6, 2)])
    for inst in (c1, c2):  # archive c1 and c2: their timeline files go, their files stay
        for st in I.State:
            (tmp_path / "t" / ".hoodie" / I.instant_file_name(inst, I.DELTA_COMMIT, st)).unlink()
    (sl,) = latest_slices(path)
    logs = sl.sorted_logs()
    archived_log = tmp_path / "t" / logs[0].path
    intact = archived_log.read_bytes()
    archived_log.write_bytes(intact + b"#HUDI#\x00\x00\x00\x00\x00\x00\x01\x00torn")  # a torn block after it
    index = EventTimeIndex(HoodieTable(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # planning reads headers quietly
        old, new = index.for_log(logs[0]), index.for_log(logs[1])
    assert (old.min_ms, old.source, new.min_ms, new.source) == (T + 5, "headers", T + 6, "stats")
    assert index.header_reads == 1
    archived_log.write_bytes(intact)
    # Now make the first active instant a failed write: its log block is not committed data.
    for st in I.State:
        (tmp_path / "t" / ".hoodie" / I.instant_file_name(c3, I.DELTA_COMMIT, st)).unlink()
    failed = _uncommitted_write(path, batch([(1, T + 7, 3)], Setup()), opts=options(Setup(), "upsert"))
    table = HoodieTable(path)
    assert table.timeline.first().timestamp == failed
    (pending_log,) = [lf for lf in latest_slices(path)[0].log_files if lf.name not in {x.name for x in logs}]
    index = EventTimeIndex(table)
    pending_range = index.for_log(pending_log)
    assert (pending_range.has_data, pending_range.min_ms, pending_range.source) == (False, None, "headers")
    assert index.for_log(logs[1]).min_ms == T + 6
    assert index.header_reads == 2


def test_event_index_headers_skip_foreign_blocks_and_mark_unknown_ranges(tmp_path: Path) -> None:
    """Reading headers goes on past a corrupt block and past blocks of uncommitted instants; a
    committed block without a range makes the whole file unknown."""
    from hoodie.format.file_group import naming as N
    from tests.format.test_fsview import _uncommitted_write
    from tests.services.test_compaction_support import batch, options

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0), (2, T - 10, 0)])
    write(path, "upsert", [(1, T + 5, 1)])
    write(path, "upsert", [(2, 0, 2)], Setup(event_field=False))  # no event time recorded
    _uncommitted_write(path, batch([(1, T + 7, 3)], Setup()), opts=options(Setup(), "upsert"))
    (sl,) = latest_slices(path)
    known, unknown, failed = sl.sorted_logs()
    part = tmp_path / "t" / "all"
    table = HoodieTable(path)
    index = EventTimeIndex(table)
    got = index.for_log(unknown)
    assert (got.min_ms, got.max_ms, got.has_data, got.source) == (None, None, True, "headers")

    # Files no stat describes (as an older Java writer appending to one file would leave them).
    def craft(version: int, content: bytes) -> str:
        name = N.log_file_name(sl.file_id, sl.base_instant, version, "9-9-9")
        (part / name).write_bytes(content)
        return f"all/{name}"

    torn_then_known = craft(20, b"#HUDI#\x00\x00\x00\x00\x00\x00\x01\x00torn" + (part / known.name).read_bytes())
    failed_then_known = craft(21, (part / failed.name).read_bytes() + (part / known.name).read_bytes())
    index = EventTimeIndex(table)
    for rel in (torn_then_known, failed_then_known):
        got = index.for_path(rel)
        assert (got.min_ms, got.max_ms, got.source) == (T + 5, T + 5, "headers"), rel


@pytest.mark.parametrize("partition", ["a", ""])
def test_materialize_link_replaces_leftovers_of_a_failed_attempt(tmp_path: Path, partition: str) -> None:
    """A leftover at the link's name (a dangling link, or a half copy) is replaced; in symlink mode
    the link points at the file its target finally reaches."""
    import os

    from hoodie.format.storage import Storage
    from hoodie.services.compaction import partial as P

    root = tmp_path / "t"
    folder = root / partition if partition else root
    folder.mkdir(parents=True, exist_ok=True)
    st = Storage(str(root))
    original = N.log_file_name("f", "001", 1, "1-0-1")
    middle = N.log_file_name("f", "002", 1, "1-0-1")
    (folder / original).write_bytes(b"data")
    os.symlink(original, folder / middle)  # an earlier partial compaction's link
    for leftover in ("dangling", "regular"):
        lk = P.LinkOp(partition, "f", N.log_file_name("f", "003", 1 if leftover == "dangling" else 2, "1-0-1"),
                      middle)
        if leftover == "dangling":
            os.symlink("no-such-file", folder / lk.link)
        else:
            (folder / lk.link).write_bytes(b"half")
        P.materialize_link(st, lk, "symlink")
        assert os.path.realpath(folder / lk.link) == str(folder / original)
        assert (folder / lk.link).read_bytes() == b"data"
    copy = P.LinkOp(partition, "f", N.log_file_name("f", "004", 1, "1-0-1"), original)
    (folder / copy.link).write_bytes(b"half")
    P.materialize_link(st, copy, "copy")
    assert not os.path.islink(folder / copy.link) and (folder / copy.link).read_bytes() == b"data"


def test_operation_links_of_a_plan_operation() -> None:
    from hoodie.format.timeline.compaction_plan import CompactionOperation
    from hoodie.services.compaction import partial as P

    def link(v: int) -> dict:
        return {"symlink": N.log_file_name("f", "002", v, "1-0-1"), "target": N.log_file_name("f", "001", v, "1-0-1")}

    op = {"partitionPath": None, "fileId": "f",
          "symlinkOperations": [link(2), {"symlink": None, "target": "x"}, {"symlink": "y", "target": None}, link(1)]}
    got = P.operation_links(CompactionOperation.from_avro(op))
    assert [(lk.partition, lk.file_id, lk.version) for lk in got] == [("", "f", 1), ("", "f", 2)]
    assert got[0].link_path == link(1)["symlink"] and got[0].target_path == link(1)["target"]
    op = {"partitionPath": "a/b", "fileId": "f", "symlinkOperations": [link(1)]}
    (only,) = P.operation_links(CompactionOperation.from_avro(op))
    assert (only.link_path, only.target_path) == (f"a/b/{link(1)['symlink']}", f"a/b/{link(1)['target']}")
    assert P.operation_links(CompactionOperation.from_avro({"partitionPath": "a", "fileId": None, "symlinkOperations": None})) == []
    assert P.operation_links(CompactionOperation.from_avro({"partitionPath": "a", "symlinkOperations": [link(3)]}))[0].file_id == ""


def test_partial_compaction_naming_and_ordering_rules(monkeypatch) -> None:
    """The sentinel's exact name, the prefix rule with nothing selected, links keeping their
    targets' write tokens, links made highest version first, and the link mode per storage."""
    from types import SimpleNamespace

    from hoodie.format.file_group.fsview import LogFile
    from hoodie.services.compaction import CompactionError
    from hoodie.services.compaction import partial as P

    assert P.sentinel_name("fid-0", "002") == ".fid-0_002.log.0_0-0-0"
    assert P.is_sentinel(".fid-0_002.log.0_0-0-0", "fid-0", "002") and not P.is_sentinel("x", "fid-0", "002")

    def lf(v: int, token: str | None = "1-0-1") -> LogFile:
        name = N.log_file_name("f", "001", v, token) if token else f".f_001.log.{v}"
        return LogFile("p", name, N.parse_log_file(name), 1)

    logs = [lf(1), lf(2), lf(3, None)]
    assert P.prefix_closure(logs, []) == ([], logs)
    assert P.prefix_closure(logs, [logs[1]]) == (logs[:2], logs[2:])
    assert P.link_names("f", "002", logs[1:], 4) == [
        (N.log_file_name("f", "002", 4, "1-0-1"), logs[1].name),
        (N.log_file_name("f", "002", 5, N.UNKNOWN_WRITE_TOKEN), logs[2].name)]
    made: list[int] = []
    monkeypatch.setattr(P, "materialize_link", lambda storage, link, mode: made.append(link.version))
    links = [P.LinkOp("p", "f", N.log_file_name("f", "002", v, "1-0-1"), logs[0].name) for v in (2, 3, 1)]
    P.materialize_links(None, links, "copy")
    assert made == [3, 2, 1]
    s3 = SimpleNamespace(supports_symlinks=False, base_uri="s3://bucket/t")
    local = SimpleNamespace(supports_symlinks=True, base_uri="/data/t")
    assert (P.resolve_link_mode(s3, "auto"), P.resolve_link_mode(local, "auto")) == ("copy", "symlink")
    assert (P.resolve_link_mode(s3, "copy"), P.resolve_link_mode(local, "symlink")) == ("copy", "symlink")
    with pytest.raises(CompactionError, match=r"^s3://bucket/t cannot hold symlinks \(object store\); set "
                                              r"hoodie.compaction.partial.link.mode=copy or auto$"):
        P.resolve_link_mode(s3, "symlink")


def test_event_index_combines_several_stats_and_blocks_of_one_file(tmp_path: Path) -> None:
    """Older Java writers appended several commits to one log file: its range is the union of its
    stats' ranges (stats without records and without a range add nothing; one without a range
    makes the headers decide), or of its blocks' headers."""
    from hoodie.format.timeline.commit_metadata import WriteStat
    from hoodie.format.slice.event_ranges import EMPTY, LogEventTime, min_event_time

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T - 10, 0)])
    write(path, "upsert", [(1, T + 9, 1)])
    write(path, "upsert", [(1, T + 5, 2)])
    (sl,) = latest_slices(path)
    late, early = sl.sorted_logs()
    part = tmp_path / "t" / "all"
    both = N.log_file_name(sl.file_id, sl.base_instant, 30, "9-9-9")
    (part / both).write_bytes((part / late.name).read_bytes() + (part / early.name).read_bytes())
    index = EventTimeIndex(HoodieTable(path))
    got = index.for_path(f"all/{both}")
    assert (got.min_ms, got.max_ms, got.source) == (T + 5, T + 9, "headers")

    def stat(writes: int, lo: int | None, hi: int | None) -> WriteStat:
        return WriteStat(file_id="f", path="all/x", partition_path="all", num_writes=writes,
                         min_event_time=lo, max_event_time=hi)

    index._stats["all/x"] = [stat(2, T + 7, T + 8), stat(0, None, None), stat(3, T + 1, T + 9), stat(1, T + 4, T + 6)]
    got = index._from_stats("all/x")
    assert (got.min_ms, got.max_ms, got.has_data, got.source) == (T + 1, T + 9, True, "stats")
    index._stats["all/y"] = [stat(0, None, None)]
    assert index._from_stats("all/y") is None  # no records: the headers decide
    index._stats["all/z"] = [stat(2, T, T), stat(1, T + 2, None)]
    assert index._from_stats("all/z") is None  # a range half missing: the headers decide
    index._stats["all/w"] = [stat(0, T + 3, T + 3)]  # a range without records still counts
    assert (index._from_stats("all/w").min_ms, index._from_stats("all/w").max_ms) == (T + 3, T + 3)
    # The table-wide minimum: unknown wins, files without data are skipped, nothing at all is complete.
    known = [LogEventTime(T + 2, T + 3, True), EMPTY, LogEventTime(T + 1, T + 9, True)]
    assert min_event_time(known) == (T + 1, "known")
    assert min_event_time([EMPTY, LogEventTime(None, None, True, "headers")] + known) == (None, "unknown")
    assert min_event_time([EMPTY, EMPTY]) == (None, "complete") and min_event_time([]) == (None, "complete")


def test_event_index_header_ranges_take_the_least_minimum_of_every_block(tmp_path: Path) -> None:
    """A log file of several blocks (headers read): its minimum is the least block minimum, whether
    the first or a later block holds it and whatever the later blocks' maxima; a stat with one
    write and no range sends the file to the headers; a block without an instant is uncommitted."""
    from hoodie.format.timeline.commit_metadata import WriteStat

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T, 0), (2, T, 0)])
    for lo, hi in ((1, 20), (10, 30), (10, 20), (1, 5)):
        write(path, "upsert", [(1, T + lo, 1), (2, T + hi, 1)])
    (sl,) = latest_slices(path)
    index = EventTimeIndex(HoodieTable(path))
    by_range = {(index.for_log(lf).min_ms - T, index.for_log(lf).max_ms - T): lf for lf in sl.sorted_logs()}
    part = tmp_path / "t" / "all"

    def joined(version: int, *ranges: tuple[int, int]) -> str:
        name = N.log_file_name(sl.file_id, sl.base_instant, version, "9-9-9")
        (part / name).write_bytes(b"".join((part / by_range[r].name).read_bytes() for r in ranges))
        return f"all/{name}"

    first_holds_min = joined(40, (1, 20), (10, 30))
    later_holds_min = joined(41, (10, 20), (1, 5))
    index = EventTimeIndex(HoodieTable(path))
    for rel, want in ((first_holds_min, (T + 1, T + 30)), (later_holds_min, (T + 1, T + 20))):
        got = index.for_path(rel)
        assert (got.min_ms, got.max_ms, got.source) == (*want, "headers"), rel

    def stat(writes: int, lo: int | None, hi: int | None) -> WriteStat:
        return WriteStat(file_id="f", path="all/v", partition_path="all", num_writes=writes,
                         min_event_time=lo, max_event_time=hi)

    index._stats["all/v"] = [stat(5, T + 10, T + 20), stat(1, None, None)]
    assert index._from_stats("all/v") is None
    assert not index._committed(None)

    # Links (partial compaction) resolve through chains to their target's stats; a cycle, or a
    # chain without stats, falls back to the headers of the file asked about; results are cached.
    index = EventTimeIndex(HoodieTable(path))
    index._stats["all/target"] = [stat(2, T + 3, T + 4)]
    index._links.update({"all/link2": "all/link1", "all/link1": "all/target",
                         first_holds_min: "all/loop", "all/loop": first_holds_min,
                         later_holds_min: "all/c1", "all/c1": "all/c2", "all/c2": "all/c1"})
    for rel in ("all/link1", "all/link2"):
        got = index.for_path(rel)
        assert (got.min_ms, got.max_ms, got.source) == (T + 3, T + 4, "stats"), rel
    got = index.for_path(later_holds_min)  # a cycle further down the chain
    assert (got.min_ms, got.max_ms, got.source) == (T + 1, T + 20, "headers")
    reads = index.header_reads
    for _ in range(2):
        got = index.for_path(first_holds_min)
        assert (got.min_ms, got.max_ms, got.source) == (T + 1, T + 30, "headers")
    assert index.header_reads == reads + 1


def test_event_index_of_a_table_without_instants(tmp_path: Path) -> None:
    from hoodie.format.timeline import instant as I

    path = str(tmp_path / "t")
    write(path, "insert", [(1, T, 0)])
    for f in (tmp_path / "t" / ".hoodie").iterdir():
        if f.is_file() and I.parse_instant_file_name(f.name) is not None:
            f.unlink()
    table = HoodieTable(path)
    assert table.timeline.first() is None
    index = EventTimeIndex(table)
    assert index._start is None and not index._committed("20240101000000000")


def test_unit_problem_names_the_value_and_the_way_out() -> None:
    """A recorded range that is milliseconds only in another unit, or in none, is a problem naming
    the file, the value and the fix; the maximum is checked too when the minimum is fine."""
    from hoodie.format.slice.event_ranges import LogEventTime, unit_problem

    assert unit_problem("p/f.log", LogEventTime(T, T + 1, True)) is None
    assert unit_problem("p/f.log", LogEventTime(None, None, True)) is None  # unknown: nothing to check
    micros = T * 1000
    got = unit_problem("p/f.log", LogEventTime(T, micros, True))
    assert got is not None and got.startswith(f"log file p/f.log records event time {micros} ms (")
    assert "which is a MICROSECONDS value (" in got
    huge = 9 * 10**18
    assert unit_problem("p/f.log", LogEventTime(huge, huge, True)).endswith(
        "which is no epoch time in any unit: it was written from an event-time column in another unit read as "
        "milliseconds. Compact it once with a strategy that does not read event times (e.g. --set "
        "hoodie.compaction.strategy=UnBounded), and write event times in milliseconds or set "
        "hoodie.payload.event.time.unit to the column's unit")
