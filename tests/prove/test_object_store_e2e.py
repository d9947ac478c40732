"""End to end on an object store (moto_server on 127.0.0.1): writes, a partial compaction (copies of
the remaining log files, as object stores have no symlinks), TTL with stash, restore, clean, and
snapshot / read-optimized / incremental reads, on tables with a metadata table (compacted every third
deltacommit, validated against storage after every step). Every step runs on S3 and on a local table with the
same data; the two must read the same, and the snapshot must equal an in-memory model. At the end
hudi-rs reads a downloaded copy of the S3 table."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Callable, Optional

import pyarrow as pa
import pyarrow.fs as pafs

import hoodie
from hoodie.format.file_group import naming as N
from hoodie import write_arrow
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction
from hoodie.services.metadata import validate_metadata_table
from hoodie.services.ttl import list_stashes, restore, run_ttl
from tests.hudi_rs import read_hudi_rs
from tests.s3 import moto_s3  # noqa: F401  (fixture)

COLS = ["k", "day", "ts", "v"]
DAYS = ("2020-01-01", "2020-01-02", "2999-01-01")  # two expire under TTL, one never does
OPTIONS = {
    "hoodie.table.name": "s3_e2e",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    "hoodie.payload.event.time.field": "ts",
    "hoodie.clean.automatic": "false",  # the clean step below is the one under test
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
}
COMPACTION = {
    "hoodie.compaction.strategy": "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy",
    "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER",
    "hoodie.compaction.event.time.threshold": "25",  # log files with events after 25 stay as logs
    "hoodie.payload.event.time.field": "ts",
    "hoodie.compaction.partial.link.mode": "copy",  # what "auto" picks on S3; the local twin copies too
}
TTL = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
       "hoodie.partition.ttl.strategy.days.retain": "30", "hoodie.partition.ttl.stash.enabled": "true"}
CLEAN = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def day(k: int) -> str:
    return DAYS[k % len(DAYS)]


class Model:
    """Live rows with DefaultHoodieRecordPayload semantics: key -> (ts, value)."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[int, int]] = {}

    def upsert(self, batch: list[tuple[int, int, int]]) -> None:
        for k, ts, v in batch:
            if k not in self.rows or ts >= self.rows[k][0]:
                self.rows[k] = (ts, v)

    def delete(self, keys: list[int]) -> None:
        for k in keys:
            self.rows.pop(k, None)

    def snapshot(self, days: tuple[str, ...] = DAYS) -> list[tuple]:
        return sorted((k, day(k), ts, v) for k, (ts, v) in self.rows.items() if day(k) in days)


def table_of(batch: list[tuple[int, int, int]]) -> pa.Table:
    return pa.table({"k": pa.array([r[0] for r in batch], pa.int64()), "day": [day(r[0]) for r in batch],
                     "ts": pa.array([r[1] for r in batch], pa.int64()), "v": pa.array([r[2] for r in batch], pa.int64())})


def rows(t: pa.Table) -> list[tuple]:
    if t.num_rows == 0:
        return []
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


class Pair:
    """The same table on S3 and on local disk; every step runs on both."""

    def __init__(self, s3_path: str, so: dict[str, Any], local_path: str) -> None:
        self.sides = [(s3_path, so), (local_path, None)]
        self.instants: list[list[str]] = [[], []]  # completed writes, per side

    def both(self, fn: Callable[[str, Optional[dict[str, Any]]], Any]) -> list[Any]:
        return [fn(path, so) for path, so in self.sides]

    def write(self, op: str, batch: list[tuple[int, int, int]]) -> None:
        got = self.both(lambda p, so: write_arrow(p, table_of(batch), {**OPTIONS, "hoodie.datasource.write.operation": op},
                                                  storage_options=so))
        for side, instant in enumerate(got):
            self.instants[side].append(instant)

    def read(self, **kw: Any) -> list[tuple]:
        """The rows of a query, which must be the same on both sides (``begin_index`` picks the
        i-th completed write of each side as the incremental start)."""
        index = kw.pop("begin_index", None)
        out = []
        for side, (path, so) in enumerate(self.sides):
            extra = dict(kw)
            if index is not None:
                extra.update(query_type="incremental", begin=self.instants[side][index])
            out.append(rows(hoodie.read_table(path, storage_options=so, columns=COLS, **extra)))
        assert out[0] == out[1], f"S3 and local differ for {kw or index}:\n s3:    {out[0]}\n local: {out[1]}"
        return out[0]

    def data_files(self) -> list[dict[str, int]]:
        """Per side: partition -> number of base and log files."""
        out = []
        for path, so in self.sides:
            st = Storage(path, so)
            counts = {}
            for d in DAYS:
                names = [e.name for e in st.list_dir(d) if not e.is_dir]
                counts[d] = sum(1 for n in names if N.is_base_file(n) or N.is_log_file(n))
            out.append(counts)
        return out


def check(pair: Pair, model: Model, days: tuple[str, ...] = DAYS, every_begin: bool = False) -> None:
    """Snapshot equals the model, and read-optimized / incremental reads agree across the sides
    (incremental from the first and the previous write; from every write with ``every_begin``: each
    read is an S3 round trip per file, so all of them once is enough)."""
    assert pair.read() == model.snapshot(days)
    assert pair.read(options={"hoodie.metadata.enable": "true"}) == model.snapshot(days)
    for path, so in pair.sides:
        res = validate_metadata_table(HoodieTable(path, storage_options=so))
        assert res.equal, f"{path}: {res.to_dict()}"
    pair.read(query_type="read_optimized")
    n = len(pair.instants[0])
    for i in (range(n - 1) if every_begin else sorted({0, n - 2} - {-1})):
        pair.read(begin_index=i)


def test_object_store_end_to_end(moto_s3: dict, tmp_path: Path) -> None:  # noqa: F811
    pair = Pair(f"s3://hoodie-test/e2e-{uuid.uuid4().hex[:8]}", moto_s3, str(tmp_path / "local"))
    model = Model()

    # Writes: inserts, updates with event times 10..50, a delete.
    history = [
        ("insert", [(k, 1, k) for k in range(12)]),
        ("upsert", [(k, 10, 100 + k) for k in range(4)]),
        ("upsert", [(4, 40, 204), (5, 40, 205)]),
        ("delete", [(6, 20, 0)]),
        ("upsert", [(0, 50, 300), (7, 50, 307), (1, 5, 999)]),  # key 1 at ts 5 loses to ts 10
    ]
    for op, batch in history:
        pair.write(op, batch)
        if op == "delete":
            model.delete([k for k, _, _ in batch])
        else:
            model.upsert(batch)
        check(pair, model)

    # Partial compaction: logs whose events are all after 25 stay, as copies under the new slice.
    ro_before = pair.read(query_type="read_optimized")
    results = pair.both(lambda p, so: run_compaction(p, None, COMPACTION, storage_options=so, schedule_if_none=True))
    (s3_res,), (local_res,) = results
    assert s3_res.links and {l.mode for l in s3_res.links} == {"copy"}
    assert sorted((l.partition, l.link.split(".log.")[1][:1]) for l in s3_res.links) == \
        sorted((l.partition, l.link.split(".log.")[1][:1]) for l in local_res.links)
    st = Storage(pair.sides[0][0], moto_s3)
    for l in s3_res.links:
        assert not st.is_symlink(l.link_path) and st.read_bytes(l.link_path) == st.read_bytes(l.target_path)
    check(pair, model)
    # Per slice, the shortest log prefix holding every log with events <= 25 is compacted:
    # 2020-01-01 keeps the ts-50 update of key 0 as a log, 2999-01-01 the ts-40 update of key 5;
    # in 2020-01-02 the last log holds a late event (key 1 at ts 5), which pulls every log in.
    assert pair.read(query_type="read_optimized") == [
        (0, DAYS[0], 10, 100), (1, DAYS[1], 10, 101), (2, DAYS[2], 10, 102), (3, DAYS[0], 10, 103),
        (4, DAYS[1], 40, 204), (5, DAYS[2], 1, 5), (7, DAYS[1], 50, 307), (8, DAYS[2], 1, 8), (9, DAYS[0], 1, 9),
        (10, DAYS[1], 1, 10), (11, DAYS[2], 1, 11)] != ro_before
    assert sorted(l.partition for l in s3_res.links) == [DAYS[0], DAYS[2]]

    # A write after the partial compaction lands above the copies.
    pair.write("upsert", [(2, 60, 402), (4, 45, 404)])
    model.upsert([(2, 60, 402), (4, 45, 404)])
    check(pair, model)

    # TTL with stash: the 2020 partitions go; their files move to the stash on both sides.
    ttl = pair.both(lambda p, so: run_ttl(p, TTL, storage_options=so))
    assert [sorted(r.expired_partitions) for r in ttl] == [list(DAYS[:2])] * 2 and all(r.stashed for r in ttl)
    assert pair.read() == model.snapshot(DAYS[2:])
    assert [c[DAYS[0]] + c[DAYS[1]] for c in pair.data_files()] == [0, 0]
    stashes = pair.both(lambda p, so: list_stashes(p, storage_options=so))
    assert [[(s.state, s.partitions) for s in side] for side in stashes][0] == \
        [[(s.state, s.partitions) for s in side] for side in stashes][1]
    assert stashes[0][0].state == "complete" and all(n > 0 for n in stashes[0][0].partitions.values())

    # Restore: the stashed rows come back as a new commit, identical on both sides.
    back = [restore(p, r.instant, storage_options=so) for (p, so), r in zip(pair.sides, ttl)]
    assert back[0].rows == back[1].rows and sum(back[0].rows.values()) == len(model.snapshot(DAYS[:2]))
    for side, b in enumerate(back):
        pair.instants[side].append(b.instant)
    check(pair, model)

    # Clean: superseded slices go (the pre-compaction slices, the replaced groups' leftovers).
    files_before = pair.data_files()
    cleaned = pair.both(lambda p, so: run_clean(p, CLEAN, storage_options=so))
    assert cleaned[0].total_deleted == cleaned[1].total_deleted > 0
    files_after = pair.data_files()
    assert files_after[0] == files_after[1] and sum(files_after[0].values()) < sum(files_before[0].values())
    check(pair, model, every_begin=True)

    # hudi-rs cannot reach moto: it reads a downloaded copy of the S3 table.
    local_copy = tmp_path / "download"
    pafs.copy_files(st.full(""), str(local_copy), source_filesystem=st.fs, destination_filesystem=pafs.LocalFileSystem())
    assert not HoodieTable(str(local_copy)).timeline.pending().instants
    assert rows(read_hudi_rs(str(local_copy))) == model.snapshot()
    assert rows(read_hudi_rs(str(local_copy), query_type="read_optimized")) == pair.read(query_type="read_optimized")
