"""Deterministic tests at partition TTL's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): partition stats on a synthetic timeline, the strategies at the retention boundary,
event-time partition values and strategy class loading."""

from __future__ import annotations

import abc
from pathlib import Path

import pyarrow as pa
import pytest


from hoodie.format.table import HoodieTable
from hoodie.services.ttl import PartitionTTLStrategy
from tests.services.boundaries_support import T0, _stats_table


def _commit_file(root: Path, name: str, parts: dict[str, int], op: str = "UPSERT", extra: dict | None = None) -> None:
    import json

    doc = {"partitionToWriteStats": {p: [{"fileId": f"f{i}"} for i in range(n)] for p, n in parts.items()},
           "operationType": op, "extraMetadata": extra or {}}
    (root / ".hoodie").mkdir(parents=True, exist_ok=True)
    (root / ".hoodie" / name).write_text(json.dumps(doc))


def test_touched_partitions_skip_empty_stats_unreadable_files_and_table_services(tmp_path: Path) -> None:
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1, "p2": 0})
    _commit_file(root, f"{T0}2.commit", {"p1": 1})
    (root / ".hoodie" / f"{T0}2.compaction.requested").write_bytes(b"")
    _commit_file(root, f"{T0}3.deltacommit", {"p3": 1})
    (root / ".hoodie" / f"{T0}3.logcompaction.requested").write_bytes(b"")
    _commit_file(root, f"{T0}4.replacecommit", {"p4": 1}, op="CLUSTER")
    (root / ".hoodie" / f"{T0}5.deltacommit").write_text("  \n")
    (root / ".hoodie" / f"{T0}6.deltacommit").write_text("{not json")
    _commit_file(root, f"{T0}7.commit", {"p7": 2}, op="INSERT_OVERWRITE")
    tl = _stats_table(root).timeline
    got = {i.timestamp[-1]: (TS.touched_partitions(tl, i, False), TS.touched_partitions(tl, i, True))
           for i in tl if not i.timestamp.endswith("6")}
    assert got == {"1": (["p1"], ["p1"]), "2": ([], ["p1"]), "3": ([], ["p3"]), "4": ([], ["p4"]),
                   "5": ([], []), "7": (["p7"], ["p7"])}
    # An unreadable commit is an error naming its file, never "no write": a write it hides would make
    # its partitions look older than they are (and TTL would expire them).
    damaged = next(i for i in tl if i.timestamp.endswith("6"))
    with pytest.raises(ValueError, match=rf"{T0}6\.deltacommit"):
        TS.touched_partitions(tl, damaged, False)


def test_partition_stats_encode_decode_and_copy() -> None:
    import base64
    import json
    import zlib

    from hoodie.services.ttl import stats as TS

    st = TS.PartitionStats({"p": "001"}, "002", ["001", "000"], True, 5)
    back = TS.PartitionStats.decode(st.encode())
    assert (back.last_modified, back.upto, back.pending, back.count_table_services, back.covered) == (
        {"p": "001"}, "002", ["000", "001"], True, 5)

    def raw(doc: object) -> str:
        return base64.b64encode(zlib.compress(json.dumps(doc).encode())).decode()

    assert TS.PartitionStats.decode("not base64 !") is None
    assert TS.PartitionStats.decode(base64.b64encode(b"not zlib").decode()) is None
    assert TS.PartitionStats.decode(raw([1, 2])) is None
    assert TS.PartitionStats.decode(raw({"v": TS.STATS_VERSION + 1, "lm": {}})) is None
    empty = TS.PartitionStats.decode(raw({"v": TS.STATS_VERSION}))
    assert (empty.last_modified, empty.upto, empty.pending, empty.count_table_services, empty.covered) == (
        {}, None, [], False, 0)
    st.scanned_instants, st.incremental, st.source = 7, True, "replacecommit 002"
    assert st.copy() == st
    c = st.copy()
    c.last_modified["q"] = "003"
    c.pending.append("x")
    assert st.last_modified == {"p": "001"} and st.pending == ["001", "000"]
    assert (c.upto, c.count_table_services, c.covered) == ("002", True, 5)


def test_partition_last_modified_incremental_rechecks_pending_and_rescans_after_a_rollback(tmp_path: Path) -> None:
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1})
    _commit_file(root, f"{T0}2.deltacommit", {"p2": 1})
    table = _stats_table(root)
    TS.forget(table)
    first = TS.partition_last_modified(table)
    assert first.last_modified == {"p1": f"{T0}1", "p2": f"{T0}2"}
    assert (first.upto, first.covered, first.scanned_instants, first.incremental, first.source) == (
        f"{T0}2", 2, 2, False, "full scan")
    # A new write: only it is read.
    _commit_file(root, f"{T0}3.deltacommit", {"p1": 1})
    (root / ".hoodie" / f"{T0}4.deltacommit.requested").write_bytes(b"")
    _commit_file(root, f"{T0}5.deltacommit", {"p3": 1})
    second = TS.partition_last_modified(_stats_table(root))
    assert second.last_modified == {"p1": f"{T0}3", "p2": f"{T0}2", "p3": f"{T0}5"}
    assert (second.scanned_instants, second.incremental, second.source, second.pending) == (
        2, True, "process cache", [f"{T0}4"])
    # The pending write completes later, touching p3 (older than p3's newer write) and p2.
    _commit_file(root, f"{T0}4.deltacommit", {"p3": 1, "p2": 1})
    third = TS.partition_last_modified(_stats_table(root))
    assert third.scanned_instants == 1 and third.pending == []
    assert third.last_modified == {"p1": f"{T0}3", "p2": f"{T0}4", "p3": f"{T0}5"}
    assert TS.partitions_in(third, ["p2", "nope"]) == {"p2": f"{T0}4"}
    # A rolled-back write below upto: the incremental state no longer matches, so everything is read again.
    (root / ".hoodie" / f"{T0}3.deltacommit").unlink()
    fourth = TS.partition_last_modified(_stats_table(root))
    assert fourth.last_modified == {"p1": f"{T0}1", "p2": f"{T0}4", "p3": f"{T0}5"} == TS.full_scan(_stats_table(root))
    # A compaction commit counts only when table services count.
    _commit_file(root, f"{T0}6.commit", {"p1": 1}, op="COMPACT")
    assert TS.full_scan(_stats_table(root))["p1"] == f"{T0}1"
    assert TS.full_scan(_stats_table(root), count_table_services=True)["p1"] == f"{T0}6"
    (root / ".hoodie" / f"{T0}6.commit").unlink()
    assert (fourth.scanned_instants, fourth.incremental) == (4, False)
    # Counting table services is a separate state; forgetting one table leaves the others.
    _commit_file(tmp_path / "other", f"{T0}1.deltacommit", {"x": 1})
    other = _stats_table(tmp_path / "other")
    TS.partition_last_modified(other)
    counted = TS.partition_last_modified(_stats_table(root), count_table_services=True)
    assert counted.scanned_instants == 4 and counted.count_table_services
    again = TS.partition_last_modified(_stats_table(root), count_table_services=True)
    assert (again.scanned_instants, again.incremental, again.count_table_services) == (0, True, True)
    TS.forget(_stats_table(root))
    assert TS.partition_last_modified(_stats_table(root)).scanned_instants == 4
    assert TS.partition_last_modified(other).scanned_instants == 0
    TS.forget()
    assert TS.partition_last_modified(other).scanned_instants == 1
    assert TS.partition_last_modified(other, incremental=False).scanned_instants == 1


def test_partition_stats_persisted_by_a_ttl_replacecommit_are_the_starting_point(tmp_path: Path) -> None:
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1})
    _commit_file(root, f"{T0}2.deltacommit", {"p2": 1})
    saved = TS.PartitionStats({"p1": f"{T0}1", "p2": f"{T0}2"}, f"{T0}2", [], False, 2)
    other_rule = TS.PartitionStats({"p1": f"{T0}1"}, f"{T0}2", [], True, 2)
    _commit_file(root, f"{T0}3.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: saved.encode()})
    _commit_file(root, f"{T0}4.replacecommit", {}, op="DELETE_PARTITION",
                 extra={TS.STATS_KEY: other_rule.encode()})
    _commit_file(root, f"{T0}5.replacecommit", {}, op="DELETE_PARTITION")
    TS.forget()
    got = TS.partition_last_modified(_stats_table(root))
    assert got.source == f"replacecommit {T0}3" and got.incremental
    assert got.scanned_instants == 3 and got.last_modified == {"p1": f"{T0}1", "p2": f"{T0}2"}
    counted = TS.partition_last_modified(_stats_table(root), count_table_services=True)
    assert counted.source == f"replacecommit {T0}4"
    # The process's state keeps the source it started from, until a TTL commit persists a newer one.
    assert TS.partition_last_modified(_stats_table(root)).source == f"replacecommit {T0}3"
    _commit_file(root, f"{T0}6.deltacommit", {"p1": 1})
    newer = TS.PartitionStats({"p1": f"{T0}6", "p2": f"{T0}2"}, f"{T0}6", [], False, 6)
    _commit_file(root, f"{T0}7.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: newer.encode()})
    got = TS.partition_last_modified(_stats_table(root))
    assert got.source == f"replacecommit {T0}7" and got.scanned_instants == 1
    assert got.last_modified == {"p1": f"{T0}6", "p2": f"{T0}2"}
    again = TS.partition_last_modified(_stats_table(root))
    assert again.source == f"replacecommit {T0}7" and again.scanned_instants == 0
    # A state computed on a timeline without writes never hides the persisted one.
    (tmp_path / "empty" / ".hoodie").mkdir(parents=True)
    empty = _stats_table(tmp_path / "empty")
    assert TS.partition_last_modified(empty).upto is None
    for f in sorted((root / ".hoodie").iterdir()):
        (tmp_path / "empty" / ".hoodie" / f.name).write_bytes(f.read_bytes())
    assert TS.partition_last_modified(_stats_table(tmp_path / "empty")).source == f"replacecommit {T0}7"


@pytest.mark.parametrize("strategy_type", ["KEEP_BY_TIME", "KEEP_BY_CREATION_TIME"])
def test_ttl_expires_only_strictly_after_the_retention(tmp_path: Path, strategy_type: str,
                                                       new_york_machine: None) -> None:
    """Hudi's rule: a partition expires when its age is greater than the retention; at exactly the
    retention it is kept (instants read in the table's UTC timeline zone, whatever the machine's)."""
    from hoodie.format.timeline import instant as I
    from hoodie import write_arrow
    from hoodie.services.ttl.config import DAY_MS, TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    w_ms = 1_700_000_000_000
    written = I.epoch_ms_to_instant(w_ms, "UTC")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC"})  # instants below are UTC
    write_arrow(path, ten_rows("p0"), o, instant=written)
    write_arrow(path, ten_rows("p1"), o, instant=I.epoch_ms_to_instant(w_ms + DAY_MS, "UTC"))
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1",
                                  "hoodie.partition.ttl.management.strategy.type": strategy_type})
    table = HoodieTable(path)

    def decide(now_ms: int) -> dict:
        strategy = create_strategy(table, I.epoch_ms_to_instant(now_ms, "UTC"), cfg)
        return {d.partition: d for d in strategy.decisions()}

    at_limit = decide(w_ms + DAY_MS)
    d = at_limit["p0"]
    assert (d.status, d.age_ms, d.retention_ms, d.reference) == ("kept", DAY_MS, DAY_MS, written)
    assert d.rule.startswith("default hoodie.partition.ttl.strategy.days.retain")
    assert d.reason.endswith(f" {written}: age P1D <= retention P1D ({d.rule})")
    past = decide(w_ms + DAY_MS + 1)
    d = past["p0"]
    assert (d.status, d.age_ms) == ("expired", DAY_MS + 1)
    assert d.reason.endswith(f" {written}: age P1DT0.001S > retention P1D ({d.rule})")
    assert past["p1"].status == "kept" and past["p1"].age_ms == 1
    assert create_strategy(table, I.epoch_ms_to_instant(w_ms + DAY_MS + 1, "UTC"), cfg) \
        .get_expired_partition_paths() == ["p0"]
    doc = d.to_json()
    assert doc["status"] == "expired" and doc["age_ms"] == DAY_MS + 1 and doc["retention"] == "P1D"
    assert doc["reference_time"] == "2023-11-14T22:13:20.000Z" and doc["strategy"] == strategy_type


def test_keep_by_event_time_reasons_for_unreadable_partition_values(tmp_path: Path, caplog) -> None:
    """Partitions whose path is too short or whose value does not match the format are kept, with
    the reason, and logged; when no partition parses at all the run is refused, naming up to three."""
    import logging

    from hoodie import write_arrow
    from hoodie.services.ttl import TTLConfigError, run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="dt", op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    # 2023/12 is shorter than the format; it must not be a prefix of another partition (nesting is refused).
    for dt in ("2024/01/01", "2024/01/02", "2024/xx/01", "2023/12", "2024/yy/02"):
        write_arrow(path, ten_rows(dt.replace("/", ""), dt=dt), o)
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.event.time.format": "yyyy/MM/dd"}
    with caplog.at_level(logging.WARNING, logger="hoodie.services.ttl.strategies"):
        res = run_ttl(path, cfg, dry_run=True, instant_time="20240103120000000")
    reasons = {d.partition: (d.status, d.reason) for d in res.decisions}
    assert reasons["2023/12"] == ("kept", "cannot read an event time: the path has fewer than 3 segment(s) from "
                                          "index 0")
    assert reasons["2024/xx/01"] == ("kept", "cannot read an event time: '2024/xx/01' does not match "
                                             "hoodie.partition.ttl.strategy.event.time.format='yyyy/MM/dd'")
    assert reasons["2024/01/01"][0] == "expired"
    assert reasons["2024/01/01"][1].startswith("event period ends 2024/01/01: age P1DT12H > retention P1D")
    assert reasons["2024/01/02"] == ("kept", reasons["2024/01/02"][1])
    assert reasons["2024/01/02"][1].startswith("event period ends 2024/01/02: age PT12H <= retention P1D")
    start = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.age.from": "START"}, dry_run=True,
                    instant_time="20240103120000000")
    d = next(x for x in start.decisions if x.partition == "2024/01/02")
    assert d.status == "expired" and d.reason.startswith("event period starts 2024/01/02: age P1DT12H > retention")
    messages = [r.getMessage() for r in caplog.records]
    assert "KEEP_BY_EVENT_TIME skips partition 2023/12: the path has fewer than 3 segment(s) from index 0" in messages
    # No partition parses: refused, naming the first three.
    with pytest.raises(TTLConfigError) as err:
        run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd"}, dry_run=True)
    msg = str(err.value)
    assert msg.startswith("KEEP_BY_EVENT_TIME parses no partition with "
                          "hoodie.partition.ttl.strategy.event.time.format='yyyy-MM-dd' (segment start index 0): ")
    assert msg.endswith(". Fix the format or the start index, or switch to KEEP_BY_TIME")
    assert msg.count("does not match") == 3 and msg.count("; 2024/") == 2


def test_keep_by_event_time_hive_style_and_creation_time_metafiles(tmp_path: Path) -> None:
    from hoodie import write_arrow
    from hoodie.services.ttl import run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="day", hive=True, op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    write_arrow(path, ten_rows("a", day="2024-01-01"), o, instant="20240101000000000")
    write_arrow(path, pa.table({"k": ["n1"], "part": ["x"], "ts": [1], "day": pa.array([None], pa.string())}), o,
                instant="20240101000001000")
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1"}
    res = run_ttl(path, cfg, dry_run=True, instant_time="20240105000000000")
    reasons = {d.partition: (d.status, d.reason) for d in res.decisions}
    assert reasons["day=2024-01-01"][0] == "expired"
    assert reasons["day=__HIVE_DEFAULT_PARTITION__"] == (
        "kept", "the hive default partition has no event time (set event.time.delete.hive.default.partition=true "
                "to expire it)")
    # KEEP_BY_CREATION_TIME reads the metafile's commitTime (14 or 17 digits); anything else never expires.
    meta = tmp_path / "t" / "day=2024-01-01" / ".hoodie_partition_metadata"
    text = meta.read_text()
    created = next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith("commitTime="))
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1"}
    for value, expires in ((created[:14], True), (created[:13], False), ("2024010100000x", False), ("", False)):
        meta.write_text(text.replace(f"commitTime={created}", f"commitTime={value}"))
        by = {x.partition: x for x in run_ttl(path, cfg, dry_run=True).decisions}
        d = by["day=2024-01-01"]
        assert d.expired is expires, value
        assert by["day=__HIVE_DEFAULT_PARTITION__"].reference == "20240101000001000"  # read after a bad one
        if expires:
            assert d.reference == created[:14] and d.reason.startswith(f"created at {created[:14]}: age ")
        else:
            assert d.reason == ".hoodie_partition_metadata has no commitTime"


class _HalfStrategy(PartitionTTLStrategy):
    """A user TTL strategy that forgot to implement get_expired_partition_paths."""


class _TwoMissing(PartitionTTLStrategy):
    """A user TTL strategy with an abstract method of its own, implementing neither."""

    @abc.abstractmethod
    def extra_hook(self) -> None:
        """Left abstract."""


def test_ttl_strategy_class_loading_and_its_refusals() -> None:
    from hoodie.services.ttl import TTLConfigError
    from hoodie.services.ttl import strategies as S

    java = "org.apache.hudi.table.action.ttl.strategy."
    assert S.load_strategy_class(java + "KeepByTimeStrategy") is S.KeepByTimeStrategy
    assert S.load_strategy_class(java + "KeepByCreationTimeStrategy") is S.KeepByCreationTimeStrategy
    event = S.load_strategy_class("hoodie.services.ttl.strategies:KeepByEventTimeStrategy")
    assert event is S.KeepByEventTimeStrategy
    key = "hoodie.partition.ttl.strategy.class"
    cases = {
        "NoDots": rf"^{key}='NoDots' is not a dotted class path \(module.ClassName\)$",
        "no_such_module.Cls": rf"^{key}='no_such_module.Cls': cannot import no_such_module: ",
        "pathlib.NoSuchClass": rf"^{key}='pathlib.NoSuchClass': module pathlib has no NoSuchClass$",
        "pathlib.Path": rf"^{key}='pathlib.Path' is not a subclass of hoodie.services.ttl.PartitionTTLStrategy$",
        f"{__name__}._HalfStrategy": rf"^{key}='{__name__}._HalfStrategy' does not implement "
                                     "get_expired_partition_paths$",
        f"{__name__}._TwoMissing": rf"^{key}='{__name__}._TwoMissing' does not implement "
                                   "extra_hook, get_expired_partition_paths$",
    }
    cases[".Cls"] = rf"^{key}='.Cls' is not a dotted class path \(module.ClassName\)$"
    for path, pattern in cases.items():
        with pytest.raises(TTLConfigError, match=pattern):
            S.load_strategy_class(path)
    import dataclasses

    from hoodie.services.ttl.config import TTLConfig

    cfg = dataclasses.replace(TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1"}),
                              strategy_type="nope")  # from_options refuses it first; build it directly
    with pytest.raises(TTLConfigError, match=r"^hoodie.partition.ttl.management.strategy.type='nope' is not a TTL "
                                              "strategy type; use one of KEEP_BY_TIME, KEEP_BY_CREATION_TIME, "
                                              "KEEP_BY_EVENT_TIME$"):
        S.create_strategy(None, "20240101000000000", cfg)


def test_keep_by_event_time_strips_only_the_hive_key_prefix() -> None:
    """Hive-style folders lose their ``key=`` prefix (up to the first '='; values may hold '=');
    folders without one, and every folder of a non-hive table, are read as they are. Only a value
    that is exactly __HIVE_DEFAULT_PARTITION__ is the default partition."""
    from types import SimpleNamespace

    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import KeepByEventTimeStrategy

    cfg = TTLConfig.from_options({"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
                                  "hoodie.partition.ttl.strategy.days.retain": "1"})

    def strategy(hive: bool) -> KeepByEventTimeStrategy:
        return KeepByEventTimeStrategy(SimpleNamespace(hive_style=hive, url_encode=False), "20240105000000000", cfg)

    hive, plain = strategy(True), strategy(False)
    assert hive.value_text("day=2024-01-01") == "2024-01-01"
    assert hive.value_text("day=x=2024-01-01") == "x=2024-01-01"
    assert hive.value_text("2024-01-01") == "2024-01-01"
    assert plain.value_text("day=2024-01-01") == "day=2024-01-01"
    parts = ["day=2024-01-01", "2024-01-02", "day=__HIVE_DEFAULT_PARTITION__", "day=__HIVE_DEFAULT_PARTITION__=x",
             "day=x=__HIVE_DEFAULT_PARTITION__"]
    refs = hive.reference_times(parts)
    assert {p: r.reference for p, r in refs.items()} == {"day=2024-01-01": "2024-01-01", "2024-01-02": "2024-01-02"}
    assert hive._default == {"day=__HIVE_DEFAULT_PARTITION__"}
    assert set(hive._unparsed) == {"day=__HIVE_DEFAULT_PARTITION__=x", "day=x=__HIVE_DEFAULT_PARTITION__"}


def test_builtin_strategy_without_a_reference_says_so(tmp_path: Path) -> None:
    """A BuiltinTTLStrategy subclass that finds no reference time keeps the partition with the
    base class's reason."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import BuiltinTTLStrategy
    from tests.services.test_ttl import opts, ten_rows

    class NoReference(BuiltinTTLStrategy):
        type_name = "NO_REFERENCE"

        def reference_times(self, partitions):
            return {}

    class NamedMissing(NoReference):
        def missing_reason(self, partition: str) -> str:
            return f"nothing known of {partition}"

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p0"), opts(op="insert"))
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1"})
    (d,) = NoReference(HoodieTable(path), "20990101000000000", cfg).decisions()
    assert (d.partition, d.status, d.reason, d.strategy) == ("p0", "kept", "no reference time", "NO_REFERENCE")
    (d,) = NamedMissing(HoodieTable(path), "20990101000000000", cfg).decisions()
    assert d.reason == "nothing known of p0"


def test_local_timeline_margin_at_its_boundaries(tmp_path: Path) -> None:
    """On a LOCAL timeline a partition expires only when its age exceeds retention + skew: at
    exactly the retention it is kept as young, up to and including retention + skew it is kept as
    zone-uncertain (saying until when), one millisecond later it expires, naming the margin."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "LOCAL"})
    # TTL at 2024-01-10 12:00 (one January day: no DST change in any zone); ages 12h+1ms ... 10h.
    written = {"d": "20240109235959999", "c": "20240110000000000", "b": "20240110015959999",
               "a": "20240110020000000"}
    for part, inst in written.items():
        write_arrow(path, ten_rows(part), o, instant=inst)
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.retention": "PT10H",
                                  "hoodie.partition.ttl.local.timeline.skew": "PT2H"})
    strategy = create_strategy(HoodieTable(path), "20240110120000000", cfg)
    assert strategy.stats is None  # before decisions
    got = {d.partition: d for d in strategy.decisions()}
    assert {p: (d.status, d.zone_uncertain) for p, d in got.items()} == {
        "a": ("kept", False), "b": ("kept", True), "c": ("kept", True), "d": ("expired", False)}
    assert got["a"].reason == "last modified at 20240110020000000: age PT10H <= retention PT10H (default hoodie.partition.ttl.strategy.retention=PT10H)"
    assert got["c"].reason == (
        "last modified at 20240110000000000: age PT12H > retention PT10H (default hoodie.partition.ttl.strategy.retention=PT10H), but by less than PT2H, "
        "the time-zone uncertainty of a LOCAL timeline (hoodie.table.timeline.timezone=LOCAL: instants are each "
        "writer's wall-clock time, and a writer in another zone may have written this partition up to PT2H later "
        "than it looks here); kept until its age exceeds PT12H. Create tables with "
        "hoodie.table.timeline.timezone=UTC (hoodie's default); if every writer and TTL run share one zone, set "
        "hoodie.partition.ttl.local.timeline.skew=PT0S")
    assert got["d"].reason.startswith("last modified at 20240109235959999: age PT12H0.001S > retention PT10H")
    assert got["d"].reason.endswith(" (default hoodie.partition.ttl.strategy.retention=PT10H), beyond the PT2H time-zone uncertainty of a LOCAL timeline")


def test_keep_by_time_reuses_recorded_stats_only_when_incremental(tmp_path: Path) -> None:
    """hoodie.partition.ttl.strategy.stats.incremental (default true) reaches the stats: the second
    run starts from the first one's state; with false every run is a full scan."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p0"), opts(op="insert"))

    def stats(options: dict):
        cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "1", **options})
        strategy = create_strategy(HoodieTable(path), "20990101000000000", cfg)
        strategy.decisions()
        return strategy.stats

    stats({})  # warms the process state
    assert stats({}).incremental is True
    off = stats({"hoodie.partition.ttl.strategy.stats.incremental": "false"})
    assert off.incremental is False and off.source == "full scan"


def test_ttl_selected_partitions_that_do_not_exist_name_the_fix(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from hoodie.services.ttl import strategies as S

    hive = SimpleNamespace(partition_fields=["productid", "day"], hive_style=True)
    existing = ["productid=1/day=a", "productid=1/day=b", "productid=2/day=a", "productid=2/day=b"]
    assert S._selected_hint(["1/a"], existing, hive) == (
        " (the table is hive-style partitioned: write paths as productid=<value>; existing partitions include "
        "productid=1/day=a, productid=1/day=b, productid=2/day=a)")
    # A path that already has key=value parts, or a table that is not hive-style: give exact paths.
    exact = " (existing partitions include productid=1/day=a, productid=1/day=b, productid=2/day=a); give exact " \
            "relative partition paths"
    assert S._selected_hint(["productid=9/day=a"], existing, hive) == exact
    plain = SimpleNamespace(partition_fields=["productid"], hive_style=False)
    assert S._selected_hint(["9"], existing, plain) == exact
    assert S._selected_hint(["9"], [], SimpleNamespace(partition_fields=[], hive_style=True)) == (
        " (existing partitions include none); give exact relative partition paths")


def test_keep_by_time_falls_back_to_slice_base_instants_only_with_an_archived_timeline(tmp_path: Path) -> None:
    """A partition whose writes all left the active timeline: with an archived timeline its newest
    slice's base instant is the reference; without one (or without data) it is never expired."""
    from hoodie.format.timeline import instant as I
    from hoodie import write_arrow
    from hoodie.format.table import write_partition_metadata
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    old = "20230101000000000"
    write_arrow(path, ten_rows("p0"), o, instant=old)
    write_arrow(path, ten_rows("p1"), o, instant="20240101000000000")
    for st in I.State:  # archive the old write
        (tmp_path / "t" / ".hoodie" / I.instant_file_name(old, I.COMMIT, st)).unlink(missing_ok=True)
    write_partition_metadata(HoodieTable(path).storage, "empty", old)  # a partition without data
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "30"})

    def decisions() -> dict:
        strategy = create_strategy(HoodieTable(path), "20240301000000000", cfg)
        return {d.partition: d for d in strategy.decisions()}

    without_archive = decisions()
    assert without_archive["p1"].reason.startswith("last modified at 20240101000000000: age ")  # after "empty"
    assert without_archive["p0"].status == "kept"
    assert without_archive["p0"].reason == "no completed write touches it and it holds no data"
    archived = tmp_path / "t" / ".hoodie" / "archived"
    archived.mkdir(exist_ok=True)
    (archived / ".commits_.archive.1_1-0-1").write_bytes(b"archived instants")
    got = decisions()
    assert got["p0"].status == "expired" and got["p0"].reference == old
    assert got["p0"].reason.startswith(f"last modified (archived write, slice base instant) {old}: age ")
    assert got["p1"].reason.startswith("last modified at 20240101000000000: age ")
    assert got["empty"].status == "kept" and got["empty"].reason == without_archive["p0"].reason


def test_keep_by_time_finds_the_archived_timeline_of_a_1x_table(tmp_path: Path) -> None:
    """Timeline layout 2 (table version 8): the archived timeline is the LSM history
    (.hoodie/timeline/history), not .hoodie/archived; a partition whose writes were archived there
    falls back to its slice's base instant."""
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC", "hoodie.write.table.version": "8"})
    old = "20230101000000000"
    write_arrow(path, ten_rows("p0"), o, instant=old)
    write_arrow(path, ten_rows("p1"), o, instant="20240101000000000")
    timeline = tmp_path / "t" / ".hoodie" / "timeline"
    archived = [f for f in timeline.iterdir() if f.name.startswith(old)]
    assert archived
    for f in archived:  # archive the old write
        f.unlink()
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "30"})

    def decision():
        strategy = create_strategy(HoodieTable(path), "20240301000000000", cfg)
        return next(d for d in strategy.decisions() if d.partition == "p0")

    assert decision().status == "kept"  # no archived timeline: nothing proves p0's write is complete
    (tmp_path / "t" / ".hoodie" / "archived").mkdir(exist_ok=True)
    (tmp_path / "t" / ".hoodie" / "archived" / ".commits_.archive.1_1-0-1").write_bytes(b"not layout 2's")
    assert decision().status == "kept"
    (timeline / "history").mkdir(exist_ok=True)
    (timeline / "history" / f"{old}_{old}_0.parquet").write_bytes(b"archived instants")
    d = decision()
    assert d.status == "expired" and d.reference == old
    assert d.reason.startswith(f"last modified (archived write, slice base instant) {old}: age ")


def test_ttl_decisions_without_a_rule_without_data_and_without_a_reference(tmp_path: Path) -> None:
    """Every candidate gets a full decision: no rule and no default retention (kept), a reference
    older than the retention but no live data (kept, nothing to delete), no reference at all."""
    import json

    from hoodie import write_arrow
    from hoodie.format.table import write_partition_metadata
    from hoodie.services.ttl.config import DAY_MS, TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_clean import drop_partition
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    for part, inst in (("a", "20240101000000000"), ("b", "20240101000001000"), ("c", "20240101000002000")):
        write_arrow(path, ten_rows(part), o, instant=inst)
    drop_partition(path, "b")  # its reference is old, but nothing in it is live
    # Never written to; it sorts first, so the partitions after it must still be decided.
    write_partition_metadata(HoodieTable(path).storage, "0", "20240101000003000")
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.rules": json.dumps(
        [{"partition": "a", "retention": "P1D"}, {"partition": "b", "retention": "P1D"},
         {"partition": "0", "retention": "P1D"}])})
    strategy = create_strategy(HoodieTable(path), "20240301000000000", cfg)
    got = {d.partition: d for d in strategy.decisions()}
    c = got["c"]
    assert (c.status, c.reason, c.strategy, c.rule, c.retention_ms) == (
        "kept", "no rule matches it and no table-wide retention is set", "KEEP_BY_TIME", None, None)
    a = got["a"]
    assert (a.status, a.strategy, a.retention_ms) == ("expired", "KEEP_BY_TIME", DAY_MS) and "rule #1" in a.rule
    b = got["b"]
    assert b.status == "kept" and b.reason.startswith("last modified at ")
    assert b.reason.endswith(" is older than the retention, but the partition holds no live data (nothing to delete)")
    d = got["0"]
    assert (d.status, d.reason, d.strategy, d.retention_ms) == (
        "kept", "no completed write touches it and it holds no data", "KEEP_BY_TIME", DAY_MS)
    assert "rule #3" in d.rule and d.reference is None and d.age_ms is None
    assert strategy.get_expired_partition_paths() == ["a"]
    assert d.to_json() == {"partition": "0", "status": "kept", "reason": d.reason, "strategy": "KEEP_BY_TIME",
                           "reference_time": None, "reference": None, "age": None, "age_ms": None,
                           "retention": "P1D", "retention_ms": DAY_MS, "rule": d.rule}
    assert a.to_json() == {"partition": "a", "status": "expired", "reason": a.reason, "strategy": "KEEP_BY_TIME",
                           "reference_time": "2024-01-01T00:00:00.000Z", "reference": "20240101000000000",
                           "age": "P60D", "age_ms": 60 * DAY_MS, "retention": "P1D", "retention_ms": DAY_MS,
                           "rule": a.rule}


def test_keep_by_event_time_reads_url_encoded_partition_values(tmp_path: Path) -> None:
    """With hoodie.datasource.write.partitionpath.urlencode, a value such as 2024-01-01 05:00 is stored
    as 2024-01-01 05%3A00; the strategy decodes it before parsing."""
    from hoodie import write_arrow
    from hoodie.services.ttl import TTLConfigError, run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="dt", op="insert", **{"hoodie.table.timeline.timezone": "UTC",
                                          "hoodie.datasource.write.partitionpath.urlencode": "true"})
    write_arrow(path, ten_rows("x", dt="2024-01-01 05:00"), o)
    write_arrow(path, ten_rows("y", dt="2024-01-03 05:00"), o)
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd HH:mm"}
    res = run_ttl(path, cfg, dry_run=True, instant_time="20240103120000000")
    by = {d.partition: d for d in res.decisions}
    assert sorted(by) == ["2024-01-01 05%3A00", "2024-01-03 05%3A00"]
    assert res.expired_partitions == ["2024-01-01 05%3A00"]
    assert by["2024-01-03 05%3A00"].reference == "2024-01-03 05:00" and by["2024-01-03 05%3A00"].status == "kept"
    # A predicate compares decoded values too; naming missing partitions lists them all.
    pred = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.partition.predicate": "dt = '2024-01-03 05:00'"},
                   dry_run=True, instant_time="20240105000000000")
    assert [d.partition for d in pred.decisions] == ["2024-01-03 05%3A00"] and pred.expired_partitions == [
        "2024-01-03 05%3A00"]
    with pytest.raises(TTLConfigError, match=r"names partition\(s\) that do not exist: nope, gone \("):
        run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.partition.selected": "nope,gone"}, dry_run=True)


def test_keep_by_event_time_default_partition_below_a_first_level(tmp_path: Path) -> None:
    """The event time starts at segment 1 (region=.../day=...); a null day is the hive default
    partition: kept, or expired with delete.hive.default.partition; a table holding only default
    partitions is no configuration error."""
    from hoodie import write_arrow
    from hoodie.services.ttl import run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    o = opts(fields="region,day", hive=True, op="insert", **{"hoodie.table.timeline.timezone": "UTC"})
    write_arrow(path, ten_rows("a", region="eu", day="2024-01-01"), o)  # sorts after the default one
    nulls = pa.table({"k": ["n1"], "part": ["x"], "ts": [1], "region": ["de"], "day": pa.array([None], pa.string())})
    write_arrow(path, nulls, o)
    cfg = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.event.time.segment.start.index": "1"}
    default = "region=de/day=__HIVE_DEFAULT_PARTITION__"
    res = run_ttl(path, cfg, dry_run=True, instant_time="20240105000000000")
    by = {d.partition: d for d in res.decisions}
    assert res.expired_partitions == ["region=eu/day=2024-01-01"]
    assert by[default].status == "kept" and by[default].reason.startswith("the hive default partition has no event")
    res = run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.delete.hive.default.partition": "true"},
                  dry_run=True, instant_time="20240105000000000")
    by = {d.partition: d for d in res.decisions}
    assert by[default].status == "expired" and by[default].reason == (
        "the hive default partition (null partition value) and event.time.delete.hive.default.partition=true")
    only_default = str(tmp_path / "only")
    write_arrow(only_default, nulls, o)
    (d,) = run_ttl(only_default, cfg, dry_run=True, instant_time="20240105000000000").decisions
    assert d.partition == default and d.status == "kept"


class _ExpireP0(PartitionTTLStrategy):
    """A user TTL strategy: always p0."""

    def get_expired_partition_paths(self) -> list[str]:
        return ["p0"]


def test_user_ttl_strategy_decisions_name_the_strategy(tmp_path: Path) -> None:
    from hoodie import write_arrow
    from hoodie.services.ttl.config import TTLConfig
    from hoodie.services.ttl.strategies import create_strategy
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p0"), opts(op="insert"))
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.strategy.class": f"{__name__}._ExpireP0"})
    strategy = create_strategy(HoodieTable(path), "20990101000000000", cfg)
    (d,) = strategy.decisions()
    assert (d.partition, d.status, d.strategy) == ("p0", "expired", strategy.name)
    assert d.reason == f"returned by {strategy.name}.get_expired_partition_paths"


def test_ttl_predicate_skips_partitions_whose_path_does_not_fit_the_fields(tmp_path: Path, caplog) -> None:
    import logging

    from hoodie import write_arrow
    from hoodie.format.table import write_partition_metadata
    from hoodie.services.ttl import run_ttl
    from tests.services.test_ttl import opts, ten_rows

    path = str(tmp_path / "t")
    write_arrow(path, ten_rows("p1", sub="x"), opts(fields="part,sub", op="insert"), instant="20240101000000000")
    write_partition_metadata(HoodieTable(path).storage, "0", "20240101000000000")  # one level, two fields
    cfg = {"hoodie.partition.ttl.strategy.days.retain": "1",
           "hoodie.partition.ttl.strategy.partition.predicate": "part = 'p1'"}
    with caplog.at_level(logging.WARNING, logger="hoodie.services.ttl.strategies"):
        res = run_ttl(path, cfg, dry_run=True)
    assert [d.partition for d in res.decisions] == ["p1/x"] and res.expired_partitions == ["p1/x"]
    assert "partition 0 skipped by the TTL predicate: partition path '0' has 1 segment(s) but the table has 2 " \
           "partition field(s) ['part', 'sub']" in [r.getMessage() for r in caplog.records]


def test_partition_stats_the_process_state_wins_unless_a_persisted_one_is_newer(tmp_path: Path) -> None:
    """Persisted stats replace the process's own only when they cover more (a later upto): at equal
    upto, or without an upto, the process state stays the starting point."""
    from hoodie.services.ttl import stats as TS

    root = tmp_path / "t"
    _commit_file(root, f"{T0}1.deltacommit", {"p1": 1})
    _commit_file(root, f"{T0}2.deltacommit", {"p2": 1})
    TS.forget()
    first = TS.partition_last_modified(_stats_table(root))
    assert (first.source, first.upto) == ("full scan", f"{T0}2")
    same = TS.PartitionStats({"p1": f"{T0}1", "p2": f"{T0}2"}, f"{T0}2", [], False, 2)
    _commit_file(root, f"{T0}3.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: same.encode()})
    got = TS.partition_last_modified(_stats_table(root))
    assert (got.source, got.scanned_instants) == ("process cache", 1)
    no_upto = TS.PartitionStats({"p1": f"{T0}1"}, None, [], False, 0)
    _commit_file(root, f"{T0}4.replacecommit", {}, op="DELETE_PARTITION", extra={TS.STATS_KEY: no_upto.encode()})
    got = TS.partition_last_modified(_stats_table(root))
    assert (got.source, got.scanned_instants, got.incremental) == ("process cache", 1, True)
    TS.forget()
