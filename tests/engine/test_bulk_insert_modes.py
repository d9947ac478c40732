"""``hoodie.bulkinsert.sort.mode`` on Spark: every mode writes the same rows (checked by hoodie and
hudi-rs), and each lays the files out as Hudi's partitioner of that name does."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark
COLS = ["id", "p", "ts", "v"]
ROWS = [(i, f"p{(i * 7) % 3}", i % 5, f"v{i}") for i in range(120)]


def _opts(mode: str, table_type: str = "COPY_ON_WRITE", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "bi", "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "bulk_insert",
        "hoodie.bulkinsert.sort.mode": mode, **extra,
    }


def _input(spark, rows=ROWS, slices: int = 4):
    # Rows of every table partition in every input partition: the layouts differ visibly.
    return spark.createDataFrame(rows, "id long, p string, ts long, v string").repartition(slices, "id")


def _stats(path: str):
    t = HoodieTable(path)
    return list(t.timeline.commit_metadata(t.timeline.last()).all_write_stats())


# NONE on copy-on-write is the small-file test's; PARTITION_PATH_REPARTITION is every upsert's layout.
@pytest.mark.parametrize("mode,files_per_partition,table_type", [
    ("NONE", 4, "MERGE_ON_READ"), ("PARTITION_SORT", 4, "MERGE_ON_READ"),
    ("GLOBAL_SORT", None, "COPY_ON_WRITE"), ("PARTITION_PATH_REPARTITION_AND_SORT", 1, "COPY_ON_WRITE"),
])
def test_every_mode_writes_the_rows_laid_out_as_hudi_does(spark, tmp_path: Path, mode: str,
                                                         files_per_partition, table_type: str) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    hs.write(_input(spark), path, _opts(mode, table_type))
    expected = sorted(rows_of(spark.createDataFrame(ROWS, "id long, p string, ts long, v string")
                              .toArrow(), COLS))
    assert sorted(rows_of(hoodie.read_table(path), COLS)) == expected
    assert sorted(rows_of(read_hudi_rs(path), COLS)) == expected
    stats = _stats(path)
    per_partition = {p: sum(1 for s in stats if s.partition_path == p) for p in ("p0", "p1", "p2")}
    if files_per_partition is not None:
        # NONE/PARTITION_SORT: one file group per (input partition, table partition), as Hudi's
        # NonSortPartitioner; the repartitioning modes: one task, so one file group, per partition.
        assert per_partition == {p: files_per_partition for p in per_partition}, per_partition
    else:
        # GLOBAL_SORT: a range partitioning over (partition path, key); every row once.
        assert sum(s.num_inserts for s in stats) == len(ROWS)
    assert len({s.file_id for s in stats}) == len(stats)  # never two writers of one file group
    if "SORT" in mode:
        for s in stats:
            keys = pq.read_table(str(Path(path) / s.path), columns=["_hoodie_record_key"]).column(0)
            assert keys.to_pylist() == sorted(keys.to_pylist()), (mode, s.path)


def test_none_mode_never_fills_small_files_of_other_tasks(spark, tmp_path: Path) -> None:
    """A second bulk_insert into a copy-on-write table writes new file groups (Hudi's bulk_insert does
    no small-file handling): with several tasks holding rows of one partition, filling a small file
    would have two tasks rewrite the same file group."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    hs.write(_input(spark, ROWS[:30], 1), path, _opts("NONE"))
    first = {s.file_id for s in _stats(path)}
    hs.write(_input(spark, ROWS[30:]), path, _opts("NONE"))
    second = _stats(path)
    assert not first & {s.file_id for s in second}
    assert all(s.prev_commit == "null" for s in second)
    assert hoodie.read_table(path).num_rows == len(ROWS) == read_hudi_rs(path).num_rows


def test_combine_before_insert_dedupes_across_input_partitions(spark, tmp_path: Path) -> None:
    """With hoodie.combine.before.insert the copies of a key meet in one task whatever the mode."""
    import hoodie.spark as hs

    rows = [(i % 10, "p0", i, f"v{i}") for i in range(40)]  # 4 copies of each key, in different slices
    path = str(tmp_path / "t")
    hs.write(_input(spark, rows), path, _opts("NONE", **{"hoodie.combine.before.insert": "true"}))
    t = hoodie.read_table(path)
    assert t.num_rows == 10
    assert sorted(zip(t.column("id").to_pylist(), t.column("ts").to_pylist())) == [(k, 30 + k) for k in range(10)]


def test_auto_generated_keys_are_unique_without_a_shuffle(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    opts = _opts("NONE")
    del opts["hoodie.datasource.write.recordkey.field"], opts["hoodie.datasource.write.precombine.field"]
    hs.write(_input(spark), path, opts)
    t = hoodie.read_table(path)
    keys = t.column("_hoodie_record_key")
    assert t.num_rows == len(ROWS) == len(pc.unique(keys))
    instant = HoodieTable(path).timeline.last().timestamp
    assert all(k.startswith(instant + "_") for k in keys.to_pylist())
    assert read_hudi_rs(path).num_rows == len(ROWS)


def test_unknown_sort_mode_is_refused_before_writing(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    path = tmp_path / "t"
    with pytest.raises(Exception, match="hoodie.bulkinsert.sort.mode"):
        hs.write(_input(spark), str(path), _opts("FAST"))
    assert not (path / ".hoodie").exists() or not list((path / ".hoodie").glob("*.commit"))
