"""``hoodie.open(path)``: each table method does what its module function does.

Every test builds one small table, copies it, runs the method on one copy and the module function
on the other with the same arguments, and compares results and resulting tables. No Spark.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie import write_arrow
from tests.helpers import PYSPARK_BLOCKER, keyed_rows
from hoodie.format.slice.reader import read_table
from hoodie.format.table import HoodieTable, TableError
from hoodie.services.clean import run_clean
from hoodie.services.compaction import (
    rollback_compaction, run_compaction, schedule_compaction, show_compactions,
)
from hoodie.services.rollback.operation import rollback
from hoodie.services.ttl import list_stashes, restore, run_ttl

COLS = ["k", "part", "ts", "v"]
TTL = {"hoodie.partition.ttl.strategy.days.retain": "10", "hoodie.partition.ttl.stash.enabled": "true"}
COMPACT = {"hoodie.compact.inline.max.delta.commits": "1"}


def opts(op: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "api_t",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
    }


data = keyed_rows


def at(ms: int) -> str:
    return I.epoch_ms_to_instant(ms, "UTC")


def later(seconds: int = 5) -> str:
    """An instant after every instant the tests write (they write at most a few seconds ahead)."""
    return at(int(time.time() * 1000) + seconds * 1000)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MERGE_ON_READ table: p0 and p1 last written in 1970 (expired for a 10-day TTL), p2 now with
    an update in log files (a compaction candidate)."""
    path = tmp_path_factory.mktemp("api") / "t"
    write_arrow(str(path), data("p0", range(4), 1, 0), {**opts("insert"), "hoodie.table.timeline.timezone": "UTC"},
                instant=at(0))
    write_arrow(str(path), data("p1", range(3), 1, 100), opts("insert"), instant=at(1000))
    write_arrow(str(path), data("p2", range(5), 1, 200), opts("insert"))
    write_arrow(str(path), data("p2", range(2), 2, 300), opts("upsert"))
    return path


@pytest.fixture()
def twins(template: Path, tmp_path: Path) -> tuple[str, str]:
    """Two identical copies of the template: one for the method, one for the function."""
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(template, a)
    shutil.copytree(template, b)
    return str(a), str(b)


def rows(path: str, **kw: Any) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in read_table(path, **kw).to_pylist())


def timeline(path: str) -> list[tuple[str, str, str]]:
    return [(i.timestamp, i.action, i.state.name) for i in HoodieTable(path).timeline.instants]


def relative(paths: Any, base: str) -> list[str]:
    return sorted(str(p).replace(base, "<base>") for p in paths)


def test_open_refuses_a_folder_without_a_table(tmp_path: Path) -> None:
    with pytest.raises(TableError, match="is not a Hudi table"):
        hoodie.open(str(tmp_path))


def test_metadata_is_the_tables(twins: tuple[str, str]) -> None:
    a, _ = twins
    t = hoodie.open(a)
    h = HoodieTable(a)
    assert isinstance(t, hoodie.Table) and repr(t) == f"hoodie.open({a!r})"
    assert (t.name, t.table_type, t.partition_fields) == ("api_t", "MERGE_ON_READ", ["part"])
    assert t.timeline.instants == h.timeline.instants and len(t.timeline.instants) == 4
    # Each access reads the table now: a write after open shows up.
    write_arrow(a, data("p3", range(1), 1, 0), opts("insert"))
    assert len(t.timeline.instants) == 5


def test_read_is_read_table(twins: tuple[str, str]) -> None:
    a, _ = twins
    t = hoodie.open(a)
    for kw in ({}, {"query_type": "read_optimized"}, {"filters": [("part", "=", "p2")], "columns": COLS},
               {"as_of": at(1000)}):
        assert t.read(**kw).equals(read_table(a, **kw)), kw
    assert len(t.read(filters=[("part", "=", "p2")])) == 5
    assert t.read(query_type="read_optimized", filters=[("k", "=", "p2-0")])["v"].to_pylist() == [200]
    assert t.read(filters=[("k", "=", "p2-0")])["v"].to_pylist() == [300]


def test_compaction_schedule_show_run_and_rollback(twins: tuple[str, str]) -> None:
    a, b = twins
    t = hoodie.open(a)
    inst = later()
    assert t.compaction.schedule(COMPACT, instant=inst) == schedule_compaction(b, COMPACT, instant=inst) == inst
    assert t.compaction.show() == show_compactions(b) and t.compaction.show()[0].state == "REQUESTED"
    assert t.show_compactions(limit=1) == show_compactions(b, limit=1)
    # A requested plan has no files to undo: both report nothing rolled back and keep the plan.
    ra, rb = t.compaction.rollback(inst), rollback_compaction(b, inst)
    assert dataclasses.astuple(ra) == dataclasses.astuple(rb) and ra.rollback_instant is None
    got, want = t.compaction.run(), run_compaction(b)
    assert [r.instant for r in got] == [r.instant for r in want] == [inst]
    assert sorted(s.file_id for s in got[0].stats) == sorted(s.file_id for s in want[0].stats)
    assert timeline(a) == timeline(b) and timeline(a)[-1] == (inst, "commit", "COMPLETED")
    assert rows(a, query_type="read_optimized") == rows(b, query_type="read_optimized") == rows(a)
    assert t.freshness() == hoodie.open(b).freshness()


def test_compaction_run_schedules_when_asked(twins: tuple[str, str]) -> None:
    a, b = twins
    assert hoodie.open(a).compaction.run(options=COMPACT) == [] == run_compaction(b, None, COMPACT)
    got = hoodie.open(a).compaction.run(options=COMPACT, schedule_if_none=True)
    want = run_compaction(b, None, COMPACT, schedule_if_none=True)
    assert len(got) == len(want) == 1 and timeline(a)[-1][1:] == timeline(b)[-1][1:] == ("commit", "COMPLETED")


def test_ttl_dry_run_run_stashes_restore(twins: tuple[str, str]) -> None:
    a, b = twins
    t = hoodie.open(a)
    now = later()
    dry, dry_b = t.ttl.dry_run(TTL, instant_time=now), run_ttl(b, TTL, dry_run=True, instant_time=now)
    assert dry.dry_run and dry.instant is None and dry.decisions == dry_b.decisions
    assert timeline(a) == timeline(b) and len(timeline(a)) == 4  # a dry run writes nothing
    got, want = t.ttl.run(TTL, instant_time=now), run_ttl(b, TTL, instant_time=now)
    assert got.instant == want.instant == now and got.decisions == want.decisions
    assert sorted(got.partition_to_replace_file_ids) == ["p0", "p1"]
    assert rows(a) == rows(b) and {r[1] for r in rows(a)} == {"p2"}
    assert t.ttl.stashes() == list_stashes(b) and [s.instant for s in t.ttl.stashes()] == [now]
    ra, rb = t.ttl.restore(now), restore(b, now)
    assert ra.rows == rb.rows == {"p0": 4, "p1": 3}
    assert rows(a) == rows(b) and {r[1] for r in rows(a)} == {"p0", "p1", "p2"}


def test_clean_is_run_clean(twins: tuple[str, str]) -> None:
    a, b = twins
    now = later()
    after = later(10)
    for p in (a, b):  # TTL replaces p0 and p1; a write after it lets the cleaner delete their files
        run_ttl(p, {"hoodie.partition.ttl.strategy.days.retain": "10"}, instant_time=now)
        write_arrow(p, data("p2", range(1), 4, 500), opts("upsert"), instant=after)
    cfg = {"hoodie.cleaner.commits.retained": "1"}
    dry, dry_b = hoodie.open(a).clean(cfg, dry_run=True), run_clean(b, cfg, dry_run=True)
    assert dry.plan == dry_b.plan and dry.instant is None
    got, want = hoodie.open(a).clean(cfg), run_clean(b, cfg)
    assert got.deleted == want.deleted and got.deleted_partitions == want.deleted_partitions
    assert sorted(got.deleted_partitions) == ["p0", "p1"]  # the TTL'd partitions' files are gone
    assert [x[1:] for x in timeline(a)] == [x[1:] for x in timeline(b)]


def test_rollback_is_rollback(twins: tuple[str, str]) -> None:
    a, b = twins
    inst = later()
    for p in (a, b):
        write_arrow(p, data("p2", range(5), 3, 900), opts("upsert"), instant=inst)
    got, want = hoodie.open(a).rollback(inst), rollback(b, inst)
    assert (got.rolled_back, got.action) == (want.rolled_back, want.action) == (inst, "deltacommit")
    assert relative(got.deleted_files, a) == relative(want.deleted_files, b)
    assert rows(a) == rows(b) and max(r[3] for r in rows(a)) < 900


def test_open_and_its_metadata_methods_never_import_pyspark(template: Path, tmp_path: Path) -> None:
    path = tmp_path / "t"
    shutil.copytree(template, path)
    code = (
        PYSPARK_BLOCKER +
        "import hoodie\n"
        "t = hoodie.open(sys.argv[1])\n"
        "assert t.read().num_rows == 12 and t.timeline.instants and t.freshness() is not None\n"
        "t.compaction.show(); t.ttl.stashes(); t.clean(dry_run=True)\n"
        f"t.ttl.dry_run({TTL!r})\n"
        f"t.compaction.schedule({COMPACT!r}); t.compaction.run()\n"
        "assert not any(k.startswith(('pyspark', 'py4j')) for k in sys.modules)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
