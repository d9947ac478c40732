"""Data skipping in Spark reads: ``hoodie.spark.read(filters=...)`` with ``hoodie.enable.data.skipping=true``
opens only the base files the metadata table's column statistics leave, and returns the rows the same read
returns without skipping (and :func:`hoodie.read_table`); the ``hoodie`` data source with the option reads
the same rows as without it."""

from __future__ import annotations

import pyarrow as pa
import pytest

import hoodie

pytestmark = pytest.mark.spark
OPTS = {"hoodie.table.name": "ds", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.parquet.small.file.limit": "0", "hoodie.datasource.write.operation": "insert"}
ON = {"hoodie.enable.data.skipping": "true", "hoodie.metadata.enable": "true"}
OFF = {"hoodie.enable.data.skipping": "false", "hoodie.metadata.enable": "true"}


def _rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.select("id", "p", "ts", "v").collect())


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A copy-on-write table: 3 inserts of ids in blocks, 2 partitions, one base file per partition each
    (6 files, each holding a contiguous range of ids); one row with a null v."""
    path = str(tmp_path_factory.mktemp("skip") / "t")
    for c in range(3):
        ids = list(range(c * 10, c * 10 + 10))
        hoodie.write_arrow(path, pa.table({"id": ids, "p": ["a" if i % 10 < 5 else "b" for i in ids],
                                           "ts": [c] * 10, "v": [None if i == 17 else f"v{i}" for i in ids]}), OPTS)
    return path


def test_spark_read_skips_files_by_column_stats_and_keeps_the_rows(spark, table: str) -> None:
    """A point filter on a non-partition column opens 1 of the 6 base files with skipping and all 6
    without, with the same rows, equal to read_table's; other filters (a range, not in with a null) too."""
    import hoodie.spark as hs

    point = [("id", "=", 17)]
    on, off = hs.read(spark, table, ON, filters=point), hs.read(spark, table, OFF, filters=point)
    assert (len(on.inputFiles()), len(off.inputFiles())) == (1, 6)
    assert _rows(on) == _rows(off) == [(17, "b", 1, None)]
    # A range over two files, and not in, which keeps the null (as read_table's Arrow filter does).
    filters = [("v", "not in", ["v11", "v12"]), ("id", ">=", 8), ("id", "<", 19)]
    got = hs.read(spark, table, ON, filters=filters)
    want = sorted(tuple(r.values()) for r in hoodie.read_table(table, filters=filters, options=OFF)
                  .select(["id", "p", "ts", "v"]).to_pylist())
    assert _rows(got) == want and (17, "b", 1, None) in want and len(want) == 9
    assert len(got.inputFiles()) == 3


def test_data_source_passes_data_skipping_to_its_plan() -> None:
    """The data source's read options reach plan_read with hoodie.enable.data.skipping (pure Python: the
    option is Hudi's read key, not an unknown one; the Spark read is the slow test below)."""
    from hoodie.engine.datasource import _read_args

    assert _read_args({**ON, "path": "/t"})["options"] == ON


@pytest.mark.slow  # a Python data source read: about 10 s on a session whose Python workers are cold
def test_data_source_with_data_skipping_reads_the_same_rows(spark, table: str) -> None:
    """The data source takes the option; its rows under a point filter are the table's (Spark evaluates the
    condition; the data source plans before it and skips no file, see docs/metadata-table.md)."""
    reader = spark.read.format("hoodie")
    for k, v in ON.items():
        reader = reader.option(k, v)
    assert _rows(reader.load(table).where("id = 17")) == [(17, "b", 1, None)]
