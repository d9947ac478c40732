"""Storage through pyarrow.fs on an S3-compatible store (moto_server on 127.0.0.1)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.storage import Storage, StorageError
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs  # noqa: F401  (hudi-rs cannot reach moto; local comparison below)
from tests.s3 import moto_s3  # noqa: F401


def test_s3_storage_capabilities(moto_s3: dict) -> None:
    st = Storage("s3://hoodie-test/caps", moto_s3)
    assert not st.supports_symlinks
    st.create_new(".hoodie/x.commit.requested", b"")
    with pytest.raises(FileExistsError):
        st.create_new(".hoodie/x.commit.requested", b"")
    st.write_bytes("a/b.bin", b"12345")
    assert st.read_bytes("a/b.bin") == b"12345" and st.size("a/b.bin") == 5
    assert [e.name for e in st.list_dir("a")] == ["b.bin"]
    st.copy("a/b.bin", "a/c.bin")
    assert st.read_bytes("a/c.bin") == b"12345"
    with pytest.raises(StorageError, match="symlinks"):
        st.symlink("a/b.bin", "a/d.bin")
    assert st.delete("a/b.bin") and not st.exists("a/b.bin")


def test_unknown_s3_option_is_named() -> None:
    with pytest.raises(StorageError, match="endpoint_ur"):
        Storage("s3://b/t", {"endpoint_ur": "http://x"})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_write_and_read_table_on_s3(moto_s3: dict, tmp_path, table_type: str) -> None:
    opts = {
        "hoodie.table.name": "s3t", "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
    }
    data = pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [1, 1, 1, 1], "v": ["w", "x", "y", "z"]})
    upd = pa.table({"id": [2, 3], "p": ["a", "b"], "ts": [2, 2], "v": ["X", "Y"]})
    outs = []
    for base, so in ((f"s3://hoodie-test/{table_type}", moto_s3), (str(tmp_path / "local"), None)):
        write_arrow(base, data, {**opts, "hoodie.datasource.write.operation": "insert"}, storage_options=so)
        write_arrow(base, upd, {**opts, "hoodie.datasource.write.operation": "upsert"}, storage_options=so)
        outs.append(hoodie.read_table(base, storage_options=so, columns=["id", "p", "v"]))
    s3_rows, local_rows = (sorted(rows_of(t, ["id", "p", "v"])) for t in outs)
    assert s3_rows == local_rows
    assert sorted(outs[0].column("v").to_pylist()) == ["X", "Y", "w", "z"]


def test_small_log_files_are_read_in_one_request_on_s3(moto_s3: dict, tmp_path) -> None:  # noqa: F811
    """On an object store every ranged read is a request: a small log file is fetched once and its blocks
    (content included) parsed from memory. The blocks are the ones a local read finds, corrupt regions
    included (a torn tail)."""
    from hoodie.format.log.logformat import read_log_file

    opts = {"hoodie.table.name": "s3log", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts"}
    local = str(tmp_path / "t")
    for n in range(3):
        write_arrow(local, pa.table({"k": ["a", "b"], "p": ["x", "x"], "ts": pa.array([n, n], pa.int64())}), opts)
    lst = Storage(local)
    log = next(e.name for e in lst.list_dir("x") if ".log." in e.name)
    data = lst.read_bytes(f"x/{log}") + b"#HUDI#\x00\x00torn"  # a torn block at the end
    s3 = Storage("s3://hoodie-test/logs", moto_s3)
    s3.write_bytes(f"x/{log}", data)
    lst.write_bytes(f"x/{log}.torn", data)
    opened: list[str] = []
    real = Storage.open_input

    def open_input(self: Storage, rel: str):  # type: ignore[no-untyped-def]
        opened.append(rel)
        return real(self, rel)

    Storage.open_input = open_input  # type: ignore[method-assign]
    try:
        with pytest.warns(Warning, match="corrupt log block"):
            remote = [(b.block_type, b.offset, b.size, b.header, b.read_content()) for b in read_log_file(s3, f"x/{log}")]
    finally:
        Storage.open_input = real  # type: ignore[method-assign]
    assert opened == [f"x/{log}"]
    with pytest.warns(Warning, match="corrupt log block"):
        here = [(b.block_type, b.offset, b.size, b.header, b.read_content()) for b in read_log_file(lst, f"x/{log}.torn")]
    assert remote == here and len(remote) >= 2
