"""Azure (Azurite) and GCS (fake-gcs-server) end to end, each emulator started on 127.0.0.1 by its fixture:
the storage capabilities, the table lock between two processes, and the model checks of the S3 end-to-end
test (pure-Python writes, MOR upserts and a delete, event-time partial compaction with copies, TTL with
stash and restore, clean), every step against a local twin table and an in-memory model."""

from __future__ import annotations

import multiprocessing
import uuid
from pathlib import Path
from typing import Any

import pytest

from hoodie.format.lock import LockError, TableLock, lock_status
from hoodie.format.storage import Storage, StorageError
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction
from hoodie.services.ttl import restore, run_ttl
from tests.object_stores import azure_uri, azurite, fake_gcs  # noqa: F401  (fixtures)
from tests.prove.test_object_store_e2e import CLEAN, COMPACTION, DAYS, TTL, Model, Pair, check

STORES = ["azure", "gcs"]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest) -> tuple[str, dict]:
    """(a fresh table URI, storage options) on one emulated store."""
    prefix = f"t-{uuid.uuid4().hex[:8]}"
    if request.param == "azure":
        return azure_uri(prefix), request.getfixturevalue("azurite")
    return f"gs://hoodie-test/{prefix}", request.getfixturevalue("fake_gcs")


def test_storage_capabilities(store: tuple[str, dict]) -> None:
    uri, so = store
    st = Storage(uri, so)
    assert not st.supports_symlinks and not st.is_local and st.uri("a/b.bin") == uri + "/a/b.bin"
    st.create_new(".hoodie/x.commit.requested", b"")
    with pytest.raises(FileExistsError):
        st.create_new(".hoodie/x.commit.requested", b"")
    st.write_bytes("p/q/b.bin", b"12345")
    assert st.read_bytes("p/q/b.bin") == b"12345" and st.size("p/q/b.bin") == 5
    assert [(e.name, e.is_dir) for e in st.list_dir("")] == [(".hoodie", True), ("p", True)]
    assert [(e.name, e.is_dir) for e in st.list_dir("p")] == [("q", True)]
    st.copy("p/q/b.bin", "p/q/c.bin")
    assert [e.path for e in st.list_dir("p/q")] == ["p/q/b.bin", "p/q/c.bin"]
    with pytest.raises(StorageError, match="symlinks"):
        st.symlink("p/q/b.bin", "p/q/d.bin")
    assert st.delete("p/q/b.bin") and not st.exists("p/q/b.bin") and not st.delete("p/q/b.bin")


def test_unknown_options_are_named() -> None:
    with pytest.raises(StorageError, match=r"\['account_ky'\].*account_key"):
        Storage("abfs://c@acct.dfs.core.windows.net/t", {"account_ky": "x"})
    with pytest.raises(StorageError, match=r"\['endpoint'\].*endpoint_override"):
        Storage("gs://b/t", {"endpoint": "http://x"})
    with pytest.raises(StorageError, match="CONTAINER@ACCOUNT"):
        Storage("abfs://acct.dfs.core.windows.net/t")


def test_hdfs_without_libhdfs_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("JAVA_HOME", "HADOOP_HOME", "ARROW_LIBHDFS_DIR", "CLASSPATH"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(StorageError, match=r"JAVA_HOME=unset.*HADOOP_HOME=unset.*libhdfs.so.*CLASSPATH \(unset"):
        Storage("hdfs://namenode:8020/tables/t")


def _hold(uri: str, so: dict, ready: Any, go: Any) -> None:
    with TableLock(Storage(uri, so), {}, "holder"):
        ready.set()
        go.wait(30)


def test_lock_between_processes(store: tuple[str, dict]) -> None:
    uri, so = store
    st = Storage(uri, so)
    ctx = multiprocessing.get_context("spawn")
    ready, go = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(uri, so, ready, go))
    holder.start()
    try:
        assert ready.wait(60), "the holder process did not take the lock"
        status = lock_status(st)
        assert status is not None and status["holder"]["operation"] == "holder" and status["stale"] is None
        with pytest.raises(LockError, match="held by holder"):
            TableLock(st, {"hoodie.write.lock.wait_time_ms": "300"}, "second").acquire()
        go.set()
        holder.join(30)
        assert holder.exitcode == 0 and lock_status(st) is None
        with TableLock(st, {}, "second"):  # free again
            assert lock_status(st)["holder"]["operation"] == "second"
    finally:
        go.set()
        holder.join(10)


def test_lock_taken_over_after_holder_died(store: tuple[str, dict]) -> None:
    """A holder killed on this host leaves its lock object; the next writer takes it over (a put conditional
    on the stale object's version)."""
    uri, so = store
    ctx = multiprocessing.get_context("spawn")
    ready, go = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(uri, so, ready, go))
    holder.start()
    assert ready.wait(60)
    holder.kill()
    holder.join(10)
    st = Storage(uri, so)
    assert "gone" in lock_status(st)["stale"]
    with TableLock(st, {"hoodie.write.lock.wait_time_ms": "5000"}, "successor"):
        assert lock_status(st)["holder"]["operation"] == "successor"
    assert lock_status(st) is None


# Azurite's end to end takes 87 s on a loaded machine: -m slow runs it (the Azure lock and capability tests
# run in the default run, and the same end to end on the GCS emulator).
@pytest.mark.parametrize("store", ["gcs", pytest.param("azure", marks=pytest.mark.slow)], indirect=True)
def test_end_to_end(store: tuple[str, dict], tmp_path: Path) -> None:
    uri, so = store
    pair = Pair(uri, so, str(tmp_path / "local"))
    model = Model()
    for op, batch in [("insert", [(k, 1, k) for k in range(12)]), ("upsert", [(k, 10, 100 + k) for k in range(4)]),
                      ("delete", [(6, 20, 0)]), ("upsert", [(0, 50, 300), (5, 40, 205), (1, 5, 999)])]:
        pair.write(op, batch)
        model.delete([k for k, _, _ in batch]) if op == "delete" else model.upsert(batch)
        check(pair, model)

    (res,), (local_res,) = pair.both(lambda p, o: run_compaction(p, None, COMPACTION, storage_options=o,
                                                                 schedule_if_none=True))
    assert res.links and {link.mode for link in res.links} == {"copy"}
    assert sorted(link.partition for link in res.links) == sorted(link.partition for link in local_res.links)
    st = Storage(uri, so)
    for link in res.links:
        assert st.read_bytes(link.link_path) == st.read_bytes(link.target_path)
    check(pair, model)

    ttl = pair.both(lambda p, o: run_ttl(p, TTL, storage_options=o))
    assert [sorted(r.expired_partitions) for r in ttl] == [list(DAYS[:2])] * 2
    assert pair.read() == model.snapshot(DAYS[2:])
    back = [restore(p, r.instant, storage_options=o) for (p, o), r in zip(pair.sides, ttl)]
    assert back[0].rows == back[1].rows
    for side, b in enumerate(back):
        pair.instants[side].append(b.instant)
    check(pair, model)

    before = pair.data_files()
    cleaned = pair.both(lambda p, o: run_clean(p, CLEAN, storage_options=o))
    assert cleaned[0].total_deleted == cleaned[1].total_deleted > 0
    after = pair.data_files()
    assert after[0] == after[1] and sum(after[0].values()) < sum(before[0].values())
    check(pair, model)


def test_lock_object_conditions(store: tuple[str, dict]) -> None:
    """The store honours the conditions the lock relies on: create only if absent, replace and delete only
    at the version last written."""
    from hoodie.format.lock import TableLock as _T

    uri, so = store
    backend = _T(Storage(uri, so))._backend()
    assert backend is not None
    first = backend._put_if(b"a", None)
    assert first is not None and backend._put_if(b"b", None) is None
    second = backend._put_if(b"c", first)
    assert second is not None and second != first and backend._put_if(b"d", first) is None
    assert backend._get()[0] == b"c"
    assert backend._delete_if(first) == "other" and backend._get()[0] == b"c"
    assert backend._delete_if(second) == "released" and backend._get() is None
    assert backend._delete_if(second) == "gone"
