"""Incremental reads whose range starts before the active timeline: the writes Java's archiver moved
out of the active timeline (version 6: into ``.hoodie/archived``; versions 8/9: into the LSM timeline)
are still in the range. Archiving must not change what an incremental read returns.

Before the fix, the read listed only the file groups active commits touched, so the records of archived
commits in the range (in groups no active commit touched) were dropped without a word.

Versions 8/9 also read by completion time, and Hudi archives by requested time: with two writers, an
archived write may have completed after active ones. The hypothesis test interleaves writers at random,
archives a random prefix, and checks every time travel and incremental range against the same read
before archiving (itself checked against a model by completion time).
"""

from __future__ import annotations

import datetime as _dt
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.execution import execute_file_group
from hoodie.services.write.plan import plan_write
from hoodie.services.write.prepare import prepare_records
from hoodie.format.file_group import naming as N
from hoodie.format.slice import writer as W
from hoodie.format.slice.reader import ReadError
from hoodie.format.table import HoodieTable
from hoodie.format.timeline.instant import Instant
from hoodie.services.rollback.failed_writes import register_live_instant, unregister_live_instant
from hoodie import write_arrow
from tests.format.test_lsm_timeline import JavaLSMWriter
from tests.helpers import examples, rows_of

COLS = ["k", "p", "v"]


def _opts(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
            "hoodie.datasource.write.precombine.field": "v", "hoodie.datasource.write.table.type": table_type,
            "hoodie.write.table.version": str(version)}


def _archive_v6(base: Path, timestamps: list[str]) -> None:
    """What Java's version-6 archiver leaves on the active timeline: the instants' files gone."""
    for f in (base / ".hoodie").iterdir():
        if f.is_file() and f.name.split(".")[0] in timestamps:
            f.unlink()


def _incremental(path: str, begin: str, end: str | None = None) -> list[tuple]:
    t = hoodie.read_table(path, query_type="incremental", begin=begin, end=end)
    return sorted(rows_of(t, COLS)) if t.num_rows else []


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_archiving_does_not_change_incremental_reads(tmp_path: Path, table_type: str, version: int) -> None:
    path = str(tmp_path / "t")
    batches = [  # each commit touches its own partition, then one goes back to an old one
        pa.table({"k": ["a", "b"], "p": ["x", "x"], "v": [1, 1]}),
        pa.table({"k": ["c"], "p": ["y"], "v": [1]}),
        pa.table({"k": ["d"], "p": ["z"], "v": [1]}),
        pa.table({"k": ["a"], "p": ["x"], "v": [2]}),
        pa.table({"k": ["e"], "p": ["w"], "v": [1]}),
    ]
    instants = [write_arrow(path, b, _opts(table_type, version)) for b in batches]
    tl = HoodieTable(path).timeline
    # Range bounds: requested times on version 6, completion times on 8/9.
    bounds = [tl.get(i).completion if version >= 8 else i for i in instants]
    begins = ["00000000000000000", *bounds[:-1]]
    ends = [None, bounds[2], bounds[3]]
    before = {(b, e): _incremental(path, b, e) for b in begins for e in ends if e is None or b < e}
    assert before[("00000000000000000", None)] == sorted(rows_of(hoodie.read_table(path), COLS))
    as_of_first_active = sorted(rows_of(hoodie.read_table(path, as_of=bounds[3]), COLS))
    archived = instants[:3]
    if version >= 8:
        JavaLSMWriter(Path(path)).archive(Path(path), archived)
    else:
        _archive_v6(Path(path), archived)
    assert HoodieTable(path).timeline.first().timestamp == instants[3]
    for (b, e), rows in before.items():
        if version >= 8 and e is not None and e < bounds[3]:
            # Versions 8/9 slice by completion time from the active timeline: a read as of a time whose
            # writes are all archived is refused, never empty.
            with pytest.raises(ReadError, match=rf"^end={e} is before the first write on the active timeline"):
                _incremental(path, b, e)
            continue
        assert _incremental(path, b, e) == rows, f"incremental ({b}, {e}] changed by archiving"
    if version >= 8:
        with pytest.raises(ReadError, match=rf"^as_of={bounds[1]} is before the first write"):
            hoodie.read_table(path, as_of=bounds[1])
    # Time travel to the first active write still reads the state then.
    assert sorted(rows_of(hoodie.read_table(path, as_of=bounds[3]), COLS)) == as_of_first_active


def test_a_read_before_the_first_write_of_an_unarchived_table_is_empty(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [1]}), _opts("MERGE_ON_READ", 9))
    assert hoodie.read_table(path, as_of="20000101000000000").num_rows == 0
    assert hoodie.read_table(path, query_type="incremental", begin="00000000000000000",
                             end="20000101000000000").num_rows == 0


# -- random overlapping writers, then a random archival (versions 8/9) ---------------------------------

ZERO = "00000000000000000"
_PARTS = ["x", "y", "z"]


def _ms(instant: str, delta: int) -> str:
    t = _dt.datetime.strptime(instant, "%Y%m%d%H%M%S%f") + _dt.timedelta(milliseconds=delta)
    return t.strftime("%Y%m%d%H%M%S%f")[:17]


@dataclass
class _Writer:
    """One writer: requested at its first event, planned, written and completed at its second (so a writer
    requested before another may complete after it, as with two concurrent writers)."""

    part: str
    keys: list[int]
    value: int
    instant: Optional[Instant] = None
    live_key: Optional[tuple[str, str]] = None
    completion: Optional[str] = None


@st.composite
def _histories(draw: st.DrawFn) -> dict[str, Any]:
    """A table type, the order in which n writers start and finish, what each writes, and the archival:
    how many of the oldest instants (by requested time) move to the LSM timeline, in one or two batches."""
    n = draw(st.integers(2, 4))
    events = draw(st.permutations([w for w in range(n) for _ in (0, 1)]))
    writers = [{"part": draw(st.sampled_from(_PARTS)), "keys": sorted(draw(st.sets(st.integers(0, 2), min_size=1)))}
               for _ in range(n)]
    archived = draw(st.integers(1, n))  # of the n + 1 writes (the first one creates the table); one stays active
    split = draw(st.integers(0, archived - 1))  # a first archival batch of that many, then the rest
    return {"table_type": draw(st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"])), "events": events,
            "writers": writers, "archived": archived, "split": split}


def _no_conflicts(events: list[int], writers: list[dict[str, Any]]) -> list[str]:
    """Each writer's partition, moved to a partition of its own where a writer running at the same time
    writes the same one: Hudi's conflict resolution lets only one of two concurrent writers that touch a
    file group commit, so such histories do not exist."""
    span = {w: (events.index(w), len(events) - 1 - events[::-1].index(w)) for w in set(events)}
    parts: dict[int, str] = {}
    for w in sorted(span, key=lambda w: span[w][0]):
        overlapping = [o for o in parts if span[o][0] < span[w][1] and span[w][0] < span[o][1]]
        parts[w] = (writers[w]["part"] if all(parts[o] != writers[w]["part"] for o in overlapping)
                    else f"own{w}")
    return [parts[w] for w in range(len(writers))]


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(zip(t.column("k").to_pylist(), t.column("p").to_pylist(), t.column("v").to_pylist()))


class _Model:
    """The table by completion time: each write lands on the state the writes completed before it left
    (overlapping writers touch different partitions), so a key's version as of T is the one of the last
    write completed by T that wrote it."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, list[tuple]]] = []  # (completion, rows), in completion order

    def state(self, t: Optional[str]) -> dict[str, tuple[str, tuple]]:
        out: dict[str, tuple[str, tuple]] = {}
        for done, rows in self.writes:
            if t is None or done <= t:
                for r in rows:
                    out[r[0]] = (done, r)
        return out

    def snapshot(self, t: Optional[str]) -> list[tuple]:
        return sorted(r for _, r in self.state(t).values())

    def incremental(self, begin: str, end: Optional[str]) -> list[tuple]:
        return sorted(r for done, r in self.state(end).values() if begin < done)


def _write(path: str, w: _Writer, opts: dict[str, str]) -> None:
    """Plan, write and complete writer ``w`` on the table as it is now (the low-level path, as a writer
    whose instant was requested earlier)."""
    table = HoodieTable(path)
    cfg = WriteConfig.from_options(opts, table)
    data = pa.table({"k": [f"{w.part}{k}" for k in w.keys], "p": [w.part] * len(w.keys), "v": [w.value] * len(w.keys)})
    avro = table.avro_schema()
    assert w.instant is not None
    plan = plan_write(table, prepare_records(data, cfg), cfg, w.instant.timestamp, avro)
    stats = [execute_file_group(HoodieTable(path), work, instant=w.instant.timestamp, avro_schema=avro, cfg=cfg,
                                token=N.write_token(i, 9, i)) for i, work in enumerate(plan.work)]
    W.complete_commit(HoodieTable(path), w.instant,
                      W.commit_metadata_for(stats, avro_schema=avro, operation_type="UPSERT"))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_histories())
def test_archiving_overlapping_writes_changes_no_read(history: dict[str, Any]) -> None:
    """Version 9, writers that complete out of requested order, then Hudi's archival of the oldest instants
    by requested time (so an archived write may have completed after active ones): every time travel and
    every incremental range reads as before archiving (and as the model, by completion time), except the
    reads as of a time before the first active write completed, which are refused."""
    opts = {**_opts(history["table_type"], 9), "hoodie.metadata.enable": "false"}
    opts.pop("hoodie.datasource.write.precombine.field")  # commit-time ordering: the last completed write wins
    with tempfile.TemporaryDirectory(prefix="hoodie_archived_") as d:
        base = Path(d) / "t"
        path = str(base)
        model = _Model()
        c0 = write_arrow(path, pa.table({"k": ["x9"], "p": ["x"], "v": [0]}), opts)
        model.writes.append((HoodieTable(path).timeline.get(c0).completion, [("x9", "x", 0)]))
        parts = _no_conflicts(history["events"], history["writers"])
        writers = [_Writer(parts[i], spec["keys"], i + 1) for i, spec in enumerate(history["writers"])]
        uri = HoodieTable(path).storage.uri()
        try:
            for e in history["events"]:
                w = writers[e]
                if w.instant is None:
                    table = HoodieTable(path)
                    w.instant = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT")
                    w.live_key = register_live_instant(uri, w.instant.timestamp)
                    continue
                _write(path, w, opts)
                unregister_live_instant(w.live_key)
                w.live_key = None
                w.completion = HoodieTable(path).timeline.get(w.instant.timestamp).completion
                model.writes.append((w.completion, [(f"{w.part}{k}", w.part, w.value) for k in w.keys]))
        finally:
            for w in writers:
                if w.live_key is not None:
                    unregister_live_instant(w.live_key)
        event("a write requested before another completed after it" if any(
            a.instant.timestamp < b.instant.timestamp and a.completion > b.completion
            for a in writers for b in writers) else "writes completed in requested order")

        done = sorted(d for d, _ in model.writes)
        requested = sorted([c0] + [w.instant.timestamp for w in writers])
        points = sorted({ZERO, *done, *(_ms(c, -1) for c in done), *requested})
        ends: list[Optional[str]] = [None, *done, *(_ms(c, -1) for c in done)]

        def snapshot(t: str) -> list[tuple]:
            return _rows(hoodie.read_table(path, as_of=t))

        def incremental(b: str, e: Optional[str]) -> list[tuple]:
            return _rows(hoodie.read_table(path, query_type="incremental", begin=b, end=e))

        before_as_of = {t: snapshot(t) for t in points}
        before_incremental = {(b, e): incremental(b, e) for b in points for e in ends if e is None or b < e}
        for t, rows in before_as_of.items():
            assert rows == model.snapshot(t), f"as_of={t} before archiving"
        for (b, e), rows in before_incremental.items():
            assert rows == model.incremental(b, e), f"incremental ({b}, {e}] before archiving"

        to_archive = requested[:history["archived"]]
        split = history["split"]
        lsm = JavaLSMWriter(base)
        if split:
            lsm.archive(base, to_archive[:split])
        lsm.archive(base, to_archive[split:])
        active = HoodieTable(path).timeline.completed_writes().instants
        assert [i.timestamp for i in active] == requested[history["archived"]:]
        first_done = min(i.completion for i in active)
        if any(w.instant.timestamp in to_archive and w.completion > first_done for w in writers):
            event("an archived write completed after an active one")

        for t, rows in before_as_of.items():
            if t < first_done:
                with pytest.raises(ReadError, match=rf"^as_of={t} is before the first write on the active timeline"):
                    snapshot(t)
            else:
                assert snapshot(t) == rows, f"as_of={t} changed by archiving {to_archive}"
        for (b, e), rows in before_incremental.items():
            if e is not None and e < first_done:
                with pytest.raises(ReadError, match=rf"^end={e} is before the first write on the active timeline"):
                    incremental(b, e)
            else:
                assert incremental(b, e) == rows, f"incremental ({b}, {e}] changed by archiving {to_archive}"
