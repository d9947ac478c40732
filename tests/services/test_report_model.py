"""The health report's figures against a model of a generated history (issue 37).

Random MERGE_ON_READ histories of upserts (event times drawn per record), compactions, failed
writes (a pending deltacommit with no files, which the next write rolls back), cleans and
partition TTL runs are applied to a small table while a plain-Python model records what each step
should leave behind. Then ``gather_report`` must agree with the model:

* the partitions are those written and not expired, each with its rows in base files equal to what
  the read-optimized reader returns for it (an independent code path: data, not footers);
* the timeline counts by kind equal the steps taken; the rolled-back instants are exactly the failed
  writes that a later write rolled back; a failed write not yet rolled back is reported pending;
* one freshness history entry per compaction; no log file waits right after a compaction, and
  otherwise the waiting partitions lie between those updated and those written since it;
* the watermark W and the newest waiting event lie within the event times written since the last
  compaction (W at most the oldest update's event time: an update always goes to a log file);
* the files section counts the latest base files, with the small-file figures against the limit.

Plus the report writes nothing (the table's files are byte-identical before and after) and a TTL
dry run's verdicts appear as the report's "would expire" and "expires next".
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.format.slice.reader import read_table
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.report import gather_report
from hoodie.services.ttl import run_ttl
from hoodie import write_arrow
from tests.helpers import examples
from tests.s3 import moto_s3  # noqa: F401  (fixture)

KEYS = list(range(9))
PARTS = ["p0", "p1", "p2"]
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: event times are minutes after it


def part_of(k: int) -> str:
    return PARTS[k % 3]


def opts(op: str = "upsert") -> dict[str, str]:
    return {
        "hoodie.table.name": "report_t",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.payload.event.time.field": "ts",
        "hoodie.datasource.write.operation": op,
    }


def batch(rows: list[tuple[int, int]]) -> pa.Table:
    """(key, event minute) rows; the event time is BASE_MS + minute."""
    return pa.table({"k": pa.array([k for k, _ in rows], pa.int64()), "part": [part_of(k) for k, _ in rows],
                     "ts": pa.array([BASE_MS + m * 60_000 for _, m in rows], pa.int64())})


class Model:
    """What the history should leave: live keys per partition, the steps by kind, and the event
    times written since the last compaction."""

    def __init__(self) -> None:
        self.keys: dict[str, set[int]] = {}
        self.kinds = {"write": 0, "compaction": 0, "clean": 0, "ttl": 0, "rollback": 0, "other": 0}
        self.pending_failed: list[str] = []
        self.rolled_back: list[str] = []
        self.written_since: dict[str, list[int]] = {}  # partition -> event times written since the compaction
        self.updated_since: dict[str, list[int]] = {}  # partition -> event times of updates of existing keys

    def write(self, rows: list[tuple[int, int]]) -> None:
        # The write rolls back every failed write first (Hudi's EAGER policy): one rollback each.
        self.rolled_back += self.pending_failed
        self.kinds["rollback"] += len(self.pending_failed)
        self.pending_failed = []
        self.kinds["write"] += 1
        # Rows of one batch with the same key: the one with the larger ordering value (ts) wins, but
        # every drawn event time may sit in a log block, so the bounds below use all of them.
        for k, m in rows:
            p = part_of(k)
            ms = BASE_MS + m * 60_000
            self.written_since.setdefault(p, []).append(ms)
            if k in self.keys.get(p, set()):
                self.updated_since.setdefault(p, []).append(ms)
        for k, _ in rows:
            self.keys.setdefault(part_of(k), set()).add(k)

    def compacted(self) -> None:
        self.kinds["compaction"] += 1
        self.written_since = {}
        self.updated_since = {}

    def expired(self, p: str) -> None:
        self.kinds["ttl"] += 1
        self.keys.pop(p, None)
        self.written_since.pop(p, None)
        self.updated_since.pop(p, None)


upsert = st.tuples(st.just("upsert"), st.lists(st.tuples(st.sampled_from(KEYS), st.integers(0, 600)),
                                               min_size=1, max_size=5, unique_by=lambda r: r[0]))
step = st.one_of(upsert, upsert, upsert, st.tuples(st.just("compact"), st.none()),
                 st.tuples(st.just("fail"), st.none()), st.tuples(st.just("clean"), st.none()),
                 st.tuples(st.just("ttl"), st.sampled_from(PARTS)))
history = st.lists(step, min_size=3, max_size=8)


def _fail(path: str) -> str:
    """A write that died after going inflight: requested and inflight files, no data file."""
    table = HoodieTable(path)
    ts = table.new_instant_time()
    T.transition_to_inflight(table.storage, T.create_requested(table.storage, ts, I.DELTA_COMMIT), b"")
    return ts


def _tree_digest(path: str) -> dict[str, str]:
    out = {}
    for p in sorted(Path(path).rglob("*")):
        if p.is_file():
            out[str(p.relative_to(path))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _ro_rows(path: str) -> dict[str, int]:
    t = read_table(path, query_type="read_optimized", columns=["part"])
    if t.num_rows == 0:
        return {}
    counts = pc.value_counts(t.column("part")).to_pylist()
    return {c["values"]: c["counts"] for c in counts}


def run_history(path: str, steps: list) -> Model:
    m = Model()
    for kind, arg in steps:
        if kind == "upsert":
            write_arrow(path, batch(arg), opts("upsert"))
            m.write(arg)
        elif not m.keys and kind != "upsert":
            continue  # services on a table with no data: nothing to model
        elif kind == "compact":
            if m.pending_failed:
                continue  # compaction plans wait for the failed write's rollback (the next write)
            c = schedule_compaction(path, {"hoodie.compact.inline.max.delta.commits": "1"})
            if c is not None:
                run_compaction(path, c)
                m.compacted()
            else:
                # Updates of existing keys always go to log files, which the strategy compacts.
                assert not any(m.updated_since.values()), "nothing scheduled although log files wait"
        elif kind == "fail":
            if not m.pending_failed:
                m.pending_failed.append(_fail(path))
        elif kind == "clean":
            if m.pending_failed:
                continue
            r = run_clean(path, {"hoodie.cleaner.commits.retained": "1"})
            if r.instant is not None:
                m.kinds["clean"] += 1
        elif kind == "ttl":
            if arg not in m.keys or m.pending_failed:
                continue
            # A TTL instant 2 h after the newest instant: the partition's last write is past a 1 h retention.
            last = HoodieTable(path).timeline.last()
            assert last is not None
            at = I.epoch_ms_to_instant(I.instant_to_epoch_ms(last.timestamp, "UTC") + 2 * 3_600_000, "UTC")
            res = run_ttl(path, {"hoodie.partition.ttl.strategy.retention": "PT1H",
                                 "hoodie.partition.ttl.strategy.partition.selected": arg}, instant_time=at)
            assert res.instant is not None, res.to_json()
            m.expired(arg)
    return m


def check(path: str, m: Model) -> None:
    before = _tree_digest(path)
    r = gather_report(path)
    assert _tree_digest(path) == before, "the report changed the table"

    rows = {p["partition"]: p for p in r["partitions"]["rows"]}
    assert set(rows) == set(m.keys)
    ro = _ro_rows(path)
    for p, row in rows.items():
        assert row["rows"] == ro.get(p, 0), p
        assert row["created_instant"] is not None and row["last_modified_instant"] is not None

    tl = r["timeline"]
    # Every step is one instant, except the pending failed write, which is a pending write.
    completed = {k: 0 for k in m.kinds}
    for i in tl["instants"]:
        if i["state"] == "COMPLETED":
            completed[i["kind"]] += 1
    assert completed == m.kinds
    assert [i["instant"] for i in tl["instants"] if i["state"] != "COMPLETED"] == m.pending_failed
    assert tl["rolled_back_instants"] == sorted(m.rolled_back)
    assert tl["archived"]["instants"] == 0
    # Every instant of these histories was requested within the last day (TTL's a few hours ahead).
    assert tl["growth"]["last_24h"] == tl["growth"]["last_7d"] == tl["active"]
    assert sum(d["instants"] for d in tl["growth"]["per_day"]) == tl["active"]
    assert tl["metadata_table_instants"] is None
    if m.pending_failed:
        assert any(a["topic"] == "timeline" and "not completed" in a["text"] for a in r["attention"])

    assert len(r["freshness"]["history"]) == m.kinds["compaction"]
    assert r["compaction"]["completed"] == m.kinds["compaction"] and r["compaction"]["pending"] == []
    backlog = {b["partition"] for b in r["compaction"]["backlog"]["partitions"]}
    assert {p for p, v in m.updated_since.items() if v} <= backlog <= {p for p, v in m.written_since.items() if v}
    assert r["compaction"]["backlog"]["log_files"] == sum(row["log_files"] for row in rows.values())
    # Records in the waiting logs: at least the updates, at most everything written since the compaction.
    for p, row in rows.items():
        assert len(m.updated_since.get(p, [])) <= row["log_records"] <= len(m.written_since.get(p, [])), (p, row)
        assert (row["log_records"] > 0) == (row["log_files"] > 0) == (p in backlog)
    w = r["freshness"]["now"]["watermark"]
    wait = r["freshness"]["waiting"]
    if not backlog:
        assert w["status"] == "complete" and w["epoch_ms"] is None and wait["min"]["epoch_ms"] is None
    else:
        written = [ms for p in backlog for ms in m.written_since.get(p, [])]
        updated = [ms for p in backlog for ms in m.updated_since.get(p, [])]
        assert w["status"] == "known"
        assert w["epoch_ms"] == wait["min"]["epoch_ms"]
        assert min(written) <= w["epoch_ms"] and wait["max"]["epoch_ms"] <= max(written)
        if updated:
            assert w["epoch_ms"] <= min(updated) and wait["max"]["epoch_ms"] >= max(updated)

    files = r["files"]
    assert files["base_files"] == sum(row["base_files"] for row in rows.values())
    assert sum(b["count"] for b in files["histogram"]) == files["base_files"]
    assert files["small_files"] == files["base_files"]  # test files are tiny: all below 100 MiB
    assert any(a["topic"] == "files" for a in r["attention"]) == bool(files["base_files"])


@settings(max_examples=examples(4), suppress_health_check=list(HealthCheck), deadline=None)
@given(history)
def test_report_figures_match_the_model(tmp_path_factory: pytest.TempPathFactory, steps: list) -> None:
    path = str(tmp_path_factory.mktemp("report") / "t")
    m = run_history(path, [("upsert", [(0, 1), (1, 2), (2, 3)])] + steps)
    check(path, m)


def test_report_history_with_every_kind(tmp_path: Path) -> None:
    """One fixed history that takes every kind of step (the drawn ones may not)."""
    path = str(tmp_path / "t")
    steps = [("upsert", [(0, 10), (1, 20), (2, 30), (3, 40)]), ("upsert", [(0, 5), (4, 50)]),
             ("compact", None), ("upsert", [(1, 70), (5, 80)]), ("fail", None), ("upsert", [(2, 90)]),
             ("clean", None), ("ttl", "p0"), ("upsert", [(3, 100)]), ("ttl", "p1"), ("fail", None)]
    m = run_history(path, steps)
    # p1 expired last, with no clean after it: its folder is still there, but it is no partition.
    assert m.kinds["compaction"] == 1 and m.kinds["ttl"] == 2 and m.kinds["rollback"] == 1
    assert (Path(path) / "p1").is_dir() and "p1" not in m.keys
    assert len(m.pending_failed) == 1
    check(path, m)


def _day(ms: int) -> str:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).strftime("%Y-%m-%d")


def test_ttl_dry_run_verdicts_and_next_expiry(tmp_path: Path) -> None:
    """Partitions named by day under KEEP_BY_EVENT_TIME: the report's "would expire" is the dry run's
    list, the next to expire is the youngest past-retention-minus-a-day, and nothing was deleted."""
    path = str(tmp_path / "t")
    now = int(time.time() * 1000)
    ages = [40, 31, 29, 10, 0]  # days
    days = [_day(now - a * 86_400_000) for a in ages]
    o = {**opts("insert"), "hoodie.datasource.write.partitionpath.field": "day"}
    write_arrow(path, pa.table({"k": pa.array(range(len(days)), pa.int64()), "day": days,
                                "ts": pa.array([now] * len(days), pa.int64())}), o)
    ttl = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
           "hoodie.partition.ttl.strategy.days.retain": "30",
           "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd"}
    before = _tree_digest(path)
    r = gather_report(path, ttl, now_ms=now)
    assert _tree_digest(path) == before
    t = r["partitions"]["ttl"]
    dry = run_ttl(path, ttl, dry_run=True)
    assert t["configured"] and sorted(t["would_expire"]) == sorted(dry.expired_partitions)
    assert sorted(t["would_expire"]) == sorted(days[:2])
    nxt = [x["partition"] for x in t["next"]]
    assert nxt == [days[2], days[3], days[4]]  # soonest first
    # 29 days old, 30 retained: it expires within a day or two depending on the hour; the figure is exact.
    row = {p["partition"]: p for p in r["partitions"]["rows"]}[days[2]]
    assert row["ttl"]["expires_in_ms"] == row["ttl"]["retention_ms"] - row["ttl"]["age_ms"]
    assert 0 < row["ttl"]["expires_in_ms"] <= 2 * 86_400_000
    warn = [a["text"] for a in r["attention"] if a["topic"] == "ttl"]
    assert any("2 partition(s)" in w and "would expire now" in w for w in warn), warn


def test_ttl_not_configured_says_how(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(0, 1)]), opts("insert"))
    t = gather_report(path)["partitions"]["ttl"]
    assert not t["configured"] and "days.retain" in t["note"] and t["would_expire"] == []


def test_copy_on_write_table(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(0, 1), (1, 2)]), {**opts("insert"), "hoodie.datasource.write.table.type": "COPY_ON_WRITE"})
    r = gather_report(path)
    assert r["freshness"]["enabled"] is False and r["compaction"]["backlog"]["log_files"] == 0
    assert {p["partition"]: p["rows"] for p in r["partitions"]["rows"]} == {"p0": 1, "p1": 1}


def test_histogram_bins() -> None:
    from hoodie.services.report import _histogram

    h = _histogram([1, 3, 4, 1000, 1023, 1024])
    assert sum(b["count"] for b in h) == 6
    for s in (1, 3, 4, 1000, 1023, 1024):
        assert sum(1 for b in h if b["lo"] <= s < b["hi"] and b["count"]) == 1
    assert [b["lo"] for b in h][:3] == [0, 2, 4] and h[-1] == {"lo": 1024, "hi": 2048, "count": 1}
    assert _histogram([]) == []


def test_tiering_moves_and_metadata_table_size(tmp_path: Path) -> None:
    """Partitions TTL moved to a cold table are listed with target and rows; the metadata table's
    size is its folder's."""
    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    o = {**opts("insert"), "hoodie.metadata.enable": "true"}
    write_arrow(hot, batch([(0, 1), (3, 2), (1, 3)]), o)  # p0 holds keys 0 and 3, p1 key 1
    last = HoodieTable(hot).timeline.last()
    assert last is not None
    at = I.epoch_ms_to_instant(I.instant_to_epoch_ms(last.timestamp, "UTC") + 20 * 86_400_000, "UTC")
    res = run_ttl(hot, {"hoodie.partition.ttl.strategy.days.retain": "10", "hoodie.partition.ttl.action": "move",
                        "hoodie.partition.ttl.move.target": cold,
                        "hoodie.partition.ttl.strategy.partition.selected": "p0", "hoodie.metadata.enable": "true"},
                  instant_time=at)
    assert res.instant is not None and res.expired_partitions == ["p0"]
    r = gather_report(hot)
    moved = r["partitions"]["tiering"]["moved"]
    assert [(m["partition"], m["ttl_instant"], m["target"], m["rows"]) for m in moved] == [("p0", res.instant, cold, 2)]
    assert [p["partition"] for p in r["partitions"]["rows"]] == ["p1"]
    assert r["timeline"]["by_kind"]["ttl"] == 1
    [c] = r["partitions"]["tiering"]["cold_tables"]
    assert c["error"] is None and c["target"] == cold and [p["partition"] for p in c["partitions"]] == ["p0"]
    cold_files = [f for f in (Path(cold) / "p0").iterdir() if f.suffix == ".parquet"]
    assert c["partitions"][0]["bytes"] == sum(f.stat().st_size for f in cold_files)
    md = r["files"]["metadata_table"]
    files = [p for p in (Path(hot) / ".hoodie" / "metadata").rglob("*") if p.is_file()]
    mdt_timeline = [p for p in (Path(hot) / ".hoodie" / "metadata" / ".hoodie").iterdir()
                    if p.is_file() and p.name.endswith(".deltacommit")]
    assert r["timeline"]["metadata_table_instants"] >= len(mdt_timeline) >= 2
    assert md["enabled"] and md["files"] == len(files) > 0 and md["bytes"] == sum(p.stat().st_size for p in files)


def test_ttl_dry_run_refused_by_the_table_is_shown(tmp_path: Path) -> None:
    """KEEP_BY_EVENT_TIME whose format parses no partition value: the run's error is in the report
    (and its summary), not hidden, and the rest of the report is there."""
    path = str(tmp_path / "t")
    write_arrow(path, batch([(0, 1), (1, 2)]), opts("insert"))
    r = gather_report(path, {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
                             "hoodie.partition.ttl.strategy.days.retain": "30",
                             "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd"})
    err = r["partitions"]["ttl"]["error"]
    assert err and "TTLConfigError" in err and "parses no partition" in err
    assert any(a["level"] == "warn" and "TTL dry run failed" in a["text"] for a in r["attention"])
    assert [p["partition"] for p in r["partitions"]["rows"]] == ["p0", "p1"]


def test_misspelled_option_warns(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([(0, 1)]), opts("insert"))
    with pytest.warns(UserWarning, match="days.retain"):
        gather_report(path, {"hoodie.partition.ttl.strategy.days.retian": "30"})


def test_report_on_an_object_store(moto_s3: dict, tmp_path: Path) -> None:
    """The same figures for the same history on S3 (moto) as on a local disk: every read goes
    through the table's storage (footers, listings, metafiles, the metadata table)."""
    steps = [("upsert", [(0, 10), (1, 20), (2, 30)]), ("upsert", [(0, 40)]), ("compact", None),
             ("upsert", [(1, 50), (3, 60)])]
    local = str(tmp_path / "t")
    run_history(local, steps)
    base = "s3://hoodie-test/report_t"
    for kind, arg in steps:  # the same steps on S3
        if kind == "upsert":
            write_arrow(base, batch(arg), opts("upsert"), storage_options=moto_s3)
        else:
            c = schedule_compaction(base, {"hoodie.compact.inline.max.delta.commits": "1"}, storage_options=moto_s3)
            run_compaction(base, c, storage_options=moto_s3)
    a = gather_report(local)
    b = gather_report(base, storage_options=moto_s3)

    def shape(r: dict) -> dict:
        return {"parts": [(p["partition"], p["rows"], p["base_files"], p["log_files"], p["log_records"])
                          for p in r["partitions"]["rows"]],
                "kinds": r["timeline"]["by_kind"], "backlog": r["compaction"]["backlog"]["log_files"],
                "W": r["freshness"]["now"]["watermark"]["epoch_ms"], "history": len(r["freshness"]["history"]),
                "files": r["files"]["base_files"]}

    assert shape(b) == shape(a) and shape(a)["backlog"] > 0
