"""Base files are flushed to stable storage before a write's stats (and so its commit) can name them:
each at once, or (inside ``Storage.deferred_syncs``) all together when the block ends normally."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hoodie.format.storage import Storage
from hoodie import write_arrow


def _record(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    synced: list[str] = []
    monkeypatch.setattr(Storage, "_fsync", lambda self, rel: synced.append(rel))
    return synced


def test_deferred_syncs_flush_at_the_end_and_never_after_an_error(tmp_path: Path, monkeypatch) -> None:
    synced = _record(monkeypatch)
    st = Storage(str(tmp_path))
    st.sync("a")
    assert synced == ["a"]  # outside a block: at once
    with st.deferred_syncs():
        st.sync("b")
        with st.deferred_syncs():  # nested: the outermost flushes
            st.sync("c")
        assert synced == ["a"]
    assert synced == ["a", "b", "c"]
    with pytest.raises(RuntimeError):
        with st.deferred_syncs():
            st.sync("d")
            raise RuntimeError("a failed task")
    assert synced == ["a", "b", "c"]  # its files are never committed
    st.sync("e")  # the block is over: at once again
    assert synced[-1] == "e"


def test_every_base_file_of_a_write_is_synced_before_its_commit(tmp_path: Path, monkeypatch) -> None:
    base = tmp_path / "t"
    synced: dict[str, bool] = {}  # file -> whether a completed commit existed when it was flushed

    def fsync(self: Storage, rel: str) -> None:
        synced[rel] = any((base / ".hoodie").glob("*.commit"))

    monkeypatch.setattr(Storage, "_fsync", fsync)
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert",
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    write_arrow(str(base), pa.table({"k": ["a", "b", "c"], "p": ["x", "y", "z"]}), opts)
    files = {str(f.relative_to(base)) for f in base.rglob("*.parquet") if ".hoodie" not in f.parts}
    assert len(files) == 3 and files <= set(synced)
    assert not any(synced[f] for f in files), "a base file was flushed after its commit completed"


@pytest.mark.parametrize("setting, flushes", [(None, True), ("true", True), ("false", False), ("0", False)])
def test_hoodie_fsync_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None,
                             flushes: bool) -> None:
    """Durable by default: unset (a user's run), every timeline file and base file reaches the disk
    through ``os.fsync``; only an explicit ``HOODIE_FSYNC=false`` (this test suite) skips it."""
    import os

    if setting is None:
        monkeypatch.delenv("HOODIE_FSYNC", raising=False)
    else:
        monkeypatch.setenv("HOODIE_FSYNC", setting)
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert"}
    write_arrow(str(tmp_path / "t"), pa.table({"k": ["a"], "p": ["x"]}), opts)
    assert bool(calls) == flushes
