"""Partition values that are awkward as folder names (issue 12, items 4, 5 and 9): dot-leading
segments are ordinary partitions that every reader and service sees; values that would leave the
table, land in hoodie's own folders or mean different things on local and S3 storage are refused,
with the same message on both, before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format import instant as I
from hoodie.format.batch_write import write_arrow
from hoodie.format.fsview import list_partitions
from hoodie.format.storage import Storage
from hoodie.services.clean import run_clean
from hoodie.services.ttl import run_ttl
from tests.hudi_rs import read_hudi_rs


def opts(op: str = "upsert", table_type: str = "COPY_ON_WRITE", **extra: str) -> dict[str, str]:
    o = {
        "hoodie.table.name": "pv_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
    }
    o.update(extra)
    return o


def batch(rows: list[tuple[str, object, int]]) -> pa.Table:
    return pa.table({"k": pa.array([r[0] for r in rows], pa.string()),
                     "p": pa.array([r[1] for r in rows], pa.string()),
                     "ts": pa.array([r[2] for r in rows], pa.int64())})


def by_key(t: pa.Table) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for r in t.select(["k", "p", "ts"]).to_pylist():
        assert r["k"] not in out, f"key {r['k']} read twice"
        out[r["k"]] = (r["p"], r["ts"])
    return out


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_dot_leading_partitions_are_read_and_serviced(tmp_path: Path, table_type: str) -> None:
    """``.NET`` and ``2024/.late`` are partitions like any other: read (ours and hudi-rs), updated in
    place, expired by TTL, cleaned and dropped by delete_partition."""
    path = str(tmp_path / "t")
    old = I.epoch_ms_to_instant(0, "LOCAL")  # 1970: expired for any retention
    write_arrow(path, batch([("a", ".NET", 1)]), opts("insert", table_type), instant=old)
    write_arrow(path, batch([("b", "2024/.late", 1), ("c", "x", 1), ("d", ".hidden.too", 1)]),
                opts("insert", table_type))
    assert list_partitions(Storage(path)) == [".NET", ".hidden.too", "2024/.late", "x"]
    want = {"a": (".NET", 1), "b": ("2024/.late", 1), "c": ("x", 1), "d": (".hidden.too", 1)}
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    # An upsert finds the row in the dot partition: an update, not a second row.
    write_arrow(path, batch([("a", ".NET", 2), ("b", "2024/.late", 2)]), opts("upsert", table_type))
    want.update(a=(".NET", 2), b=("2024/.late", 2))
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    assert by_key(hoodie.read_table(path, filters=[("p", "=", ".NET")])) == {"a": (".NET", 2)}
    # delete_partition drops a dot partition by name.
    write_arrow(path, batch([]), opts("delete_partition", table_type,
                                      **{"hoodie.datasource.write.partitions.to.delete": ".hidden.too"}))
    del want["d"]
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    # TTL sees the dot partition written in 1970 (its last write was the upsert, so judge by creation).
    res = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10",
                         "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME"})
    assert res.expired_partitions == [".NET"]
    del want["a"]
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    # The cleaner removes the replaced partitions' files and folders, dot or not.
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert not os.path.exists(f"{path}/.NET") and not os.path.exists(f"{path}/.hidden.too")
    assert list_partitions(Storage(path)) == ["2024/.late", "x"]
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
