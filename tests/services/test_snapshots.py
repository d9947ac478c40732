"""Snapshots, not reloads (issue 32): a transaction loads the table once per acquisition of the table lock
(the load that sees other writers' instants), adds the instants it writes to that snapshot and goes on
with the snapshot its commit point returns; the table's properties never change in place."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie import write_arrow
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, update_table_properties
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.instant import State
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.transaction import Transaction, observe
from hoodie.services.write import ArrowWriteExecutor, run_write
from tests.helpers import examples


def opts(table_type: str = "COPY_ON_WRITE", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "snap_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
        # The inline services are transactions of their own: measured on their own below.
        "hoodie.clean.automatic": "false",
        "hoodie.archive.automatic": "false",
        **extra,
    }


def rows(ts: int) -> pa.Table:
    return pa.table({"k": ["a", "b"], "part": ["p", "p"], "ts": pa.array([ts, ts], pa.int64())})


def data_timeline_loads(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> tuple[list[int], int]:
    """Listings of the data table's timeline folder while ``run`` runs: per transaction (in the order
    they began), and outside any transaction."""
    per_txn: list[int] = []
    current: list[int] = []
    outside = [0]
    real = T.Timeline.load.__func__  # type: ignore[attr-defined]

    def load(cls: type, storage: Storage, layout: int = 1) -> T.Timeline:
        if not storage.base_uri.rstrip("/").endswith("/metadata"):
            if current:
                per_txn[current[-1]] += 1
            else:
                outside[0] += 1
        return real(cls, storage, layout)

    def step(txn: Transaction, name: str) -> None:
        if name == "begin":
            per_txn.append(0)
            current.append(len(per_txn) - 1)
        elif name == "unlock":
            current.pop()

    monkeypatch.setattr(T.Timeline, "load", classmethod(load))
    with observe(step):
        run()
    return per_txn, outside[0]


@pytest.mark.parametrize("history", [1, 4])
def test_a_write_lists_the_timeline_once_whatever_the_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              history: int) -> None:
    """An upsert on a table with a metadata table: one listing of the data timeline, under the lock (the
    failed-write check, the compaction-plan check, the new instant time, the metadata table's sync check
    and its update all read the snapshot; the requested, inflight and completed instants are added to it)."""
    path = str(tmp_path / "t")
    o = opts(**{"hoodie.metadata.enable": "true"})
    for n in range(history):
        write_arrow(path, rows(n), o)
    per_txn, outside = data_timeline_loads(monkeypatch, lambda: write_arrow(path, rows(9), o))
    assert (per_txn, outside) == ([1], 0)


def test_rolling_back_a_failed_write_lists_no_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rollback of a failed write a writing transaction runs first takes the failed instant's files
    out of the transaction's snapshot (and adds its own rollback instant): still one listing, and the
    write's new instant comes after the rollback's."""
    path = str(tmp_path / "t")
    o = opts()
    write_arrow(path, rows(1), o)

    class Failing(ArrowWriteExecutor):
        def execute(self, txn: Transaction) -> Any:
            raise OSError("disk full")

    with pytest.raises(OSError):
        run_write(Storage(path), o, Failing(rows(2), o))
    (failed,) = HoodieTable(path).timeline.pending().instants
    per_txn, outside = data_timeline_loads(monkeypatch, lambda: write_arrow(path, rows(3), o))
    assert (per_txn, outside) == ([1], 0)
    tl = HoodieTable(path).timeline
    (rb,) = tl.by_actions(I.ROLLBACK).instants
    assert tl.get(failed.timestamp) is None and rb.is_completed
    assert tl.completed_writes().last().timestamp > rb.timestamp


def test_table_services_list_once_per_acquisition_of_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """A clean lists once; compaction scheduling once (under its lock); a compaction run of a given plan
    twice: it releases the lock for its work, and lists again when it takes it back to commit (writers
    may have added instants meanwhile)."""
    path = str(tmp_path / "t")
    o = opts("MERGE_ON_READ")
    for n in range(3):
        write_arrow(path, rows(n), o)
    per_txn, outside = data_timeline_loads(
        monkeypatch, lambda: run_clean(path, {"hoodie.cleaner.commits.retained": "1"}))
    assert (per_txn, outside) == ([1], 0)
    instant: list[Any] = []
    per_txn, outside = data_timeline_loads(monkeypatch, lambda: instant.append(schedule_compaction(
        path, {"hoodie.compact.inline.max.delta.commits": "1"})))
    assert instant[0] is not None and (per_txn, outside) == ([], 1)
    per_txn, outside = data_timeline_loads(monkeypatch, lambda: run_compaction(path, instant[0]))
    assert (per_txn, outside) == ([2], 0)
    assert HoodieTable(path).timeline.get(instant[0]).is_completed


def test_properties_change_through_a_new_snapshot(tmp_path: Path) -> None:
    """update_table_properties writes hoodie.properties and returns a new snapshot holding the change;
    the snapshot it was given keeps the properties it was opened with, and no snapshot's properties
    can be changed in place."""
    path = str(tmp_path / "t")
    write_arrow(path, rows(1), opts())
    old = HoodieTable(path)
    tl = old.timeline
    new = update_table_properties(old, {"hoodie.table.metadata.partitions": "files", "hoodie.database.name": None})
    assert new is not old and new.props["hoodie.table.metadata.partitions"] == "files"
    assert "hoodie.table.metadata.partitions" not in old.props
    assert new.timeline is tl  # the same timeline snapshot: no listing
    assert dict(HoodieTable(path).props) == dict(new.props)
    with pytest.raises(TypeError):
        old.props["hoodie.table.name"] = "x"  # type: ignore[index]
    with pytest.raises(AttributeError):
        old.props = {}  # type: ignore[misc]


def test_a_snapshot_pickles_with_read_only_properties(tmp_path: Path) -> None:
    """Spark ships a table snapshot to its Python workers by pickle (the data source's read task): the
    copy has the same properties and timeline, and its properties stay read-only."""
    import pickle

    path = str(tmp_path / "t")
    write_arrow(path, rows(1), opts())
    old = HoodieTable(path)
    copy = pickle.loads(pickle.dumps(old, protocol=pickle.HIGHEST_PROTOCOL))
    assert dict(copy.props) == dict(old.props)
    assert [i.timestamp for i in copy.timeline.completed()] == [i.timestamp for i in old.timeline.completed()]
    with pytest.raises(TypeError):
        copy.props["hoodie.table.name"] = "x"  # type: ignore[index]


@pytest.mark.parametrize("version", ["6", "9"])
def test_instants_added_and_removed_equal_a_listing(tmp_path: Path, version: str) -> None:
    """The snapshot a holder of the lock keeps (Timeline.written after writing instant files,
    Timeline.removed after deleting them) equals what listing the folder shows, on both layouts."""
    path = str(tmp_path / "t")
    o = opts(**{"hoodie.write.table.version": version})
    for n in range(3):
        write_arrow(path, rows(n), o)
    table = HoodieTable(path)
    table.timeline
    storage = table.storage
    req = T.create_requested(storage, table.new_instant_time(), I.COMMIT)
    inf = T.transition_to_inflight(storage, req)
    table.wrote(req, inf)

    def same() -> None:
        listed = T.Timeline.load(storage, table.timeline_layout)
        assert [(i.timestamp, i.action, i.state, i.completion) for i in table.timeline] == \
            [(i.timestamp, i.action, i.state, i.completion) for i in listed]
        assert table.timeline.file_names == listed.file_names

    same()
    done = table.timeline.completed_writes().instants
    table.delete_instant(done[-1].timestamp, done[-1].action, (State.COMPLETED,))
    same()
    table.delete_instant(inf.timestamp, inf.action, (State.INFLIGHT, State.REQUESTED))
    table.delete_instant(done[-1].timestamp, done[-1].action, (State.INFLIGHT, State.REQUESTED))
    same()


_ACTIONS = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.CLEAN, I.ROLLBACK, I.COMPACTION)


@settings(max_examples=examples(30), deadline=None)
@given(layout=st.sampled_from([1, 2]), steps=st.lists(st.tuples(
    st.sampled_from(["start", "complete", "delete"]), st.integers(0, 5), st.sampled_from(_ACTIONS),
    st.sets(st.sampled_from(list(State)), min_size=1)), min_size=1, max_size=12))
def test_a_snapshot_advanced_by_its_writes_equals_a_listing(layout: int, steps: list) -> None:
    """Any sequence of instant files written (requested and inflight, then completed) and deleted (any
    states of one instant) leaves the snapshot (Timeline.written, Timeline.removed) equal to a listing."""
    with tempfile.TemporaryDirectory() as d:
        storage = Storage(d)
        folder = T.TIMELINE_FOLDER_V2 if layout == 2 else T.METAFOLDER
        storage.mkdirs(folder)
        storage.mkdirs(T.METAFOLDER)
        # delete_instant_files reads the layout from here; on layout 1 it is also a file of the listed
        # folder that is no instant (kept by both).
        storage.write_bytes(f"{T.METAFOLDER}/hoodie.properties",
                            b"hoodie.table.version=9\nhoodie.timeline.layout.version=2\n" if layout == 2
                            else b"hoodie.table.version=6\n")
        snap = T.Timeline.load(storage, layout)
        pending: dict[str, I.Instant] = {}
        for kind, n, action, states in steps:
            ts = f"2026010100000{n}000"
            known = snap.get(ts)
            if kind == "start" and known is None:
                req = I.Instant(ts, action, State.REQUESTED)
                storage.write_bytes(f"{folder}/{req.file_name}", b"")
                inf = req.with_state(State.INFLIGHT)
                storage.write_bytes(f"{folder}/{inf.file_name}", b"")
                snap = snap.written(req, inf)
                pending[ts] = inf
            elif kind == "complete" and ts in pending and known is not None and not known.is_completed:
                done = pending.pop(ts).with_state(State.COMPLETED)
                if layout == 2:
                    done = I.Instant(done.timestamp, done.action, State.COMPLETED, ts[:-3] + "999")
                storage.write_bytes(f"{folder}/{done.file_name}", b"{}")
                snap = snap.written(done)
            elif kind == "delete" and known is not None:
                T.delete_instant_files(storage, ts, known.action, states)
                snap = snap.removed(ts, known.action, states)
                if State.INFLIGHT in states:
                    pending.pop(ts, None)
            listed = T.Timeline.load(storage, layout)
            assert [(i.timestamp, i.action, i.state, i.completion) for i in snap] == \
                [(i.timestamp, i.action, i.state, i.completion) for i in listed]
            assert snap.file_names == listed.file_names
