"""insert_overwrite, insert_overwrite_table and delete_partition: replacecommits as Hudi writes them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie import write_arrow
from hoodie.errors import WriteError
from hoodie.format.table import HoodieTable
from tests.hudi_rs import read_hudi_rs

OPTS = {
    "hoodie.table.name": "ow", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.clean.automatic": "false",
}


def _data(ids, p, tag) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids), "ts": pa.array([1] * len(ids), pa.int64()),
                     "v": [f"{tag}{i}" for i in ids]})


def _vals(t: pa.Table) -> dict:
    return dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_overwrite_operations(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    write_arrow(path, pa.concat_tables([_data([1, 2], "a", "x"), _data([3, 4], "b", "x")]),
                {**o, "hoodie.datasource.write.operation": "insert"})
    c2 = write_arrow(path, _data([5], "a", "y"), {**o, "hoodie.datasource.write.operation": "insert_overwrite"})
    expected = {3: "x3", 4: "x4", 5: "y5"}
    assert _vals(hoodie.read_table(path)) == expected and _vals(read_hudi_rs(path)) == expected
    t = HoodieTable(path)
    inst = t.timeline.get(c2)
    assert inst.action == I.REPLACE_COMMIT
    meta = t.timeline.commit_metadata(inst)
    assert meta.operation_type == "INSERT_OVERWRITE" and list(meta.partition_to_replace_file_ids) == ["a"]
    assert plans.read_avro_metadata(t.timeline.read_file(inst.requested_file_name))["operationType"] is None
    write_arrow(path, _data([9], "c", "z"), {**o, "hoodie.datasource.write.operation": "insert_overwrite_table"})
    assert _vals(hoodie.read_table(path)) == {9: "z9"} == _vals(read_hudi_rs(path))
    write_arrow(path, _data([10], "d", "w"), {**o, "hoodie.datasource.write.operation": "insert"})
    c5 = write_arrow(path, pa.table({"id": pa.array([], pa.int64()), "p": pa.array([], pa.string())}),
                     {**o, "hoodie.datasource.write.operation": "delete_partition",
                      "hoodie.datasource.write.partitions.to.delete": "c"})
    assert _vals(hoodie.read_table(path)) == {10: "w10"} == _vals(read_hudi_rs(path))
    meta = HoodieTable(path).timeline.commit_metadata(HoodieTable(path).timeline.get(c5))
    assert meta.operation_type == "DELETE_PARTITION" and list(meta.partition_to_replace_file_ids) == ["c"]
    with pytest.raises(WriteError, match="do not exist"):
        write_arrow(path, _data([1], "zz", "q"), {**o, "hoodie.datasource.write.operation": "delete_partition"})
