"""Partition metafiles in the base format (``hoodie.partition.metafile.use.base.format=true``).

Java then writes ``<partition>/.hoodie_partition_metadata.parquet`` (the properties in the Parquet
footer's key-value metadata) instead of the properties file. hoodie found partitions by the properties
file only: such a table read as empty, TTL saw no partition, and a write added a second metafile.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import hoodie
from hoodie.format.table import read_partition_metadata
from hoodie.format.storage import Storage
from hoodie.services.ttl import run_ttl
from hoodie import write_arrow
from tests.hudi_rs import read_hudi_rs

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.operation": "upsert"}


def _base_format_metafiles(path: str, created: str) -> None:
    """Replace every partition's properties metafile by the Parquet form Java writes."""
    for meta in Path(path).rglob(".hoodie_partition_metadata"):
        os.remove(meta)
        props = {"commitTime": created, "partitionDepth": "1"}
        pq.write_table(pa.table({}).replace_schema_metadata(props), str(meta) + ".parquet")


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(zip(t.column("k").to_pylist(), t.column("v").to_pylist()))


def test_a_table_with_base_format_partition_metafiles_reads_and_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "y"], "v": [1, 2]}), OPTS)
    _base_format_metafiles(path, "20200101000000000")
    assert _rows(hoodie.read_table(path)) == [("a", 1), ("b", 2)]
    assert _rows(read_hudi_rs(path)) == [("a", 1), ("b", 2)]
    assert read_partition_metadata(Storage(path), "x") == {"commitTime": "20200101000000000", "partitionDepth": "1"}
    write_arrow(path, pa.table({"k": ["a", "c"], "p": ["x", "z"], "v": [3, 4]}), OPTS)
    # No second metafile in a partition that has one; a new partition gets the properties file.
    assert sorted(n.name for n in Path(path, "x").iterdir() if n.name.startswith(".hoodie_partition")) == \
        [".hoodie_partition_metadata.parquet"]
    assert (Path(path) / "z" / ".hoodie_partition_metadata").exists()
    assert _rows(hoodie.read_table(path)) == [("a", 3), ("b", 2), ("c", 4)]
    # KEEP_BY_CREATION_TIME reads the creation time from the Parquet footer.
    res = run_ttl(path, {"hoodie.partition.ttl.strategy": "KEEP_BY_CREATION_TIME",
                         "hoodie.partition.ttl.strategy.days.retain": "30"}, dry_run=True)
    assert {d.partition: d.status for d in res.decisions} == {"x": "expired", "y": "expired", "z": "kept"}
