"""``ALTER TABLE ... ADD COLUMNS`` commits the new schema as Hudi does (``AlterHoodieTableAddColumnsCommand``):
an instant without records, operationType ALTER_SCHEMA, action ``commit`` on copy-on-write and
``deltacommit`` on merge-on-read, whose metadata carries the schema; hudi-rs then reads the new column, null
in the rows written before. No Spark: :func:`hoodie.interfaces.sql_ddl.commit_schema` is the commit."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql_ddl import commit_schema
from tests.hudi_rs import read_hudi_rs


@pytest.mark.parametrize("version,ttype", [(6, "COPY_ON_WRITE"), (8, "MERGE_ON_READ"), (9, "COPY_ON_WRITE"),
                                           (9, "MERGE_ON_READ")])
def test_add_columns_commits_alter_schema(tmp_path: Path, version: int, ttype: str) -> None:
    path = str(tmp_path / "t")
    hoodie.write_table(path, pa.table({"id": pa.array([1, 2], pa.int32()), "ts": pa.array([1, 2], pa.int64())}), {
        "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": ttype,
        "hoodie.write.table.version": str(version)})
    before = HoodieTable(path)
    schema = pa.schema(list(before.arrow_schema(with_meta=False)) + [pa.field("company", pa.string())])
    instant = commit_schema(path, "t", schema)
    t = HoodieTable(path)
    last = t.timeline.completed().last()
    assert (last.timestamp, last.action) == (instant, "deltacommit" if ttype == "MERGE_ON_READ" else "commit")
    meta = t.timeline.commit_metadata(last)
    assert meta.operation_type == "ALTER_SCHEMA" and not list(meta.all_write_stats())
    assert '"company"' in meta.schema
    assert t.arrow_schema(with_meta=False).names == ["id", "ts", "company"]
    theirs = read_hudi_rs(path)
    assert "company" in theirs.column_names
    assert sorted(zip(theirs.column("id").to_pylist(), theirs.column("company").to_pylist())) == [(1, None), (2, None)]
    ours = hoodie.read_table(path)
    assert sorted(zip(ours.column("id").to_pylist(), ours.column("company").to_pylist())) == [(1, None), (2, None)]
