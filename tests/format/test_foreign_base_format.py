"""Tables whose base files are not Parquet (``hoodie.table.base.file.format=ORC`` or ``HFILE``).

hoodie reads and writes Parquet base files only. A write used to put Parquet base files into an ORC
table without a word; Java Hudi reads base files with the reader of the table's format, so the table
broke for it. Every write and every service that writes base files is refused before anything is
written; services that only remove files or record instants (clean, rollback) still run.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.errors import HoodieError
from hoodie.format.properties import format_table_properties, parse_properties
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import schedule_compaction
from hoodie.services.rollback.operation import rollback
from hoodie.services.ttl import run_ttl
from hoodie import write_arrow

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _table(path: str, fmt: str, version: int) -> None:
    """A two-commit table whose properties then name ``fmt`` as its base file format."""
    opts = {**OPTS, "hoodie.write.table.version": str(version)}
    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["1970-01-01", "1970-01-02"], "v": [1, 2]}), opts)
    write_arrow(path, pa.table({"k": ["a"], "p": ["1970-01-01"], "v": [3]}), opts)
    _set_table_property(path, "hoodie.table.base.file.format", fmt)


def _set_table_property(path: str, key: str, value: str) -> None:
    """Set one property in the table's hoodie.properties (as a Java writer configured so would have)."""
    props_file = Path(path) / ".hoodie" / "hoodie.properties"
    props = parse_properties(props_file.read_text())
    props[key] = value
    props_file.write_text(format_table_properties(props))


def _listing(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*") if p.is_file())


def _upsert_and_compaction_refused(path: str, reason: str) -> None:
    """An upsert and compaction scheduling both fail with ``reason`` and leave every file as it was."""
    before = _listing(Path(path))
    with pytest.raises(HoodieError, match=r"^write \(upsert\) on .*: " + reason):
        write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [9]}), OPTS)
    with pytest.raises(HoodieError, match=r"^compaction scheduling on .*: " + reason):
        schedule_compaction(path)
    assert _listing(Path(path)) == before


@pytest.mark.parametrize("fmt,version", [("ORC", 6), ("orc", 9), ("HFILE", 6)])
def test_writes_and_data_services_are_refused_before_anything_is_written(tmp_path: Path, fmt: str,
                                                                         version: int) -> None:
    path = str(tmp_path / "t")
    _table(path, fmt, version)
    root = Path(path)
    before = _listing(root)
    refusal = (rf"on .*: the table's base files are {fmt.upper()} \(hoodie\.table\.base\.file\.format="
               rf"{fmt.upper()}\); hoodie reads and writes Parquet base files only\. Nothing was read or written")
    for op in ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite"):
        with pytest.raises(HoodieError, match=rf"^write \({op}\) " + refusal):
            write_arrow(path, pa.table({"k": ["a"], "p": ["1970-01-01"], "v": [9]}),
                        {**OPTS, "hoodie.datasource.write.operation": op})
    with pytest.raises(HoodieError, match="^compaction scheduling " + refusal):
        schedule_compaction(path)
    with pytest.raises(HoodieError, match=refusal):
        # Ten years on, both partitions have expired.
        run_ttl(path, {"hoodie.partition.ttl.strategy": "KEEP_BY_TIME",
                       "hoodie.partition.ttl.strategy.days.retain": "1"}, instant_time="20361127000000000")
    assert _listing(root) == before, "a refused operation wrote something"


def test_services_that_only_remove_files_still_run(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _table(path, "ORC", 6)
    last = HoodieTable(path).timeline.completed().last()
    assert last is not None
    rollback(path, last.timestamp)
    assert last.timestamp not in {i.timestamp for i in HoodieTable(path).timeline.completed_writes().instants}
    run_clean(path, {"hoodie.cleaner.commits.retained": "1"})
    assert not HoodieTable(path).timeline.pending().instants


# -- virtual keys (hoodie.populate.meta.fields=false) ------------------------------------------------

def _virtual_keys(path: str, table_type: str) -> None:
    """A table as Java writes one with virtual keys: its properties say so and its base files hold no
    meta column values (hoodie's own first write, its meta columns then emptied)."""
    import pyarrow.parquet as pq

    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "x"], "v": [1, 2]}),
                {**OPTS, "hoodie.datasource.write.table.type": table_type})
    _set_table_property(path, "hoodie.populate.meta.fields", "false")
    for f in Path(path).rglob("*.parquet"):
        t = pq.read_table(f)
        for c in [n for n in t.column_names if n.startswith("_hoodie_")]:
            t = t.set_column(t.schema.get_field_index(c), c, pa.nulls(t.num_rows, pa.string()))
        pq.write_table(t, f)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_writes_to_a_table_with_virtual_keys_are_refused(tmp_path: Path, table_type: str) -> None:
    """An upsert used to miss every stored key of a merge-on-read table and add a second copy of the
    record (copy-on-write failed half-way with a bloom-filter error)."""
    path = str(tmp_path / "t")
    _virtual_keys(path, table_type)
    root = Path(path)
    before = _listing(root)
    refusal = r"on .*: the table has virtual keys \(hoodie\.populate\.meta\.fields=false\).* Nothing was written"
    for op in ("upsert", "insert", "delete"):
        with pytest.raises(HoodieError, match=rf"^write \({op}\) " + refusal):
            write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [9]}),
                        {**OPTS, "hoodie.datasource.write.table.type": table_type,
                         "hoodie.datasource.write.operation": op})
    with pytest.raises(HoodieError, match="^compaction scheduling " + refusal):
        schedule_compaction(path)
    assert _listing(root) == before, "a refused operation wrote something"


# -- partition columns left out of the files (hoodie.datasource.write.drop.partition.columns=true) ------

def _dropped_partition_columns(path: str) -> None:
    """A table as Java writes one with drop.partition.columns: its files hold no partition column."""
    import pyarrow.parquet as pq

    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "y"], "v": [1, 2]}), OPTS)
    _set_table_property(path, "hoodie.datasource.write.drop.partition.columns", "true")
    for f in Path(path).rglob("*.parquet"):
        pq.write_table(pq.read_table(f).drop_columns(["p"]), f)


def test_writes_to_a_table_without_partition_columns_in_its_files_are_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _dropped_partition_columns(path)
    _upsert_and_compaction_refused(path, r"the table's files leave out its partition columns .* Nothing was read "
                                         r"or written")


# -- reads --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["ORC", "HFILE"])
def test_reads_of_a_table_whose_base_files_are_not_parquet_are_refused(tmp_path: Path, fmt: str) -> None:
    path = str(tmp_path / "t")
    _table(path, fmt, 6)
    for query_type in ("snapshot", "read_optimized"):
        with pytest.raises(HoodieError, match=rf"^read on .*: the table's base files are {fmt} "):
            hoodie.read_table(path, query_type=query_type)


def test_reads_of_a_table_without_partition_columns_in_its_files_are_refused(tmp_path: Path) -> None:
    """They used to return the partition column as nulls, and a filter on it dropped every row."""
    path = str(tmp_path / "t")
    _dropped_partition_columns(path)
    with pytest.raises(HoodieError, match=r"^read on .*: the table's files leave out its partition columns"):
        hoodie.read_table(path)
    with pytest.raises(HoodieError, match=r"leave out its partition columns"):
        hoodie.read_table(path, filters=[("p", "=", "x")])


def test_reads_of_a_table_with_virtual_keys_never_merge_without_keys(tmp_path: Path) -> None:
    """Base files alone read as written; a slice with log files (merged by key) and an incremental
    read (selected by _hoodie_commit_time, which such files do not store) are refused."""
    cow, mor = str(tmp_path / "cow"), str(tmp_path / "mor")
    _virtual_keys(cow, "COPY_ON_WRITE")
    t = hoodie.read_table(cow)
    assert sorted(zip(t.column("k").to_pylist(), t.column("v").to_pylist())) == [("a", 1), ("b", 2)]
    with pytest.raises(HoodieError, match=r"^incremental read of .*: the table has virtual keys"):
        hoodie.read_table(cow, query_type="incremental", begin="000")
    # A merge-on-read table with a log file: written before the table was switched to virtual keys.
    write_arrow(mor, pa.table({"k": ["a", "b"], "p": ["x", "x"], "v": [1, 2]}), OPTS)
    write_arrow(mor, pa.table({"k": ["a"], "p": ["x"], "v": [3]}), OPTS)
    _set_table_property(mor, "hoodie.populate.meta.fields", "false")
    with pytest.raises(HoodieError, match=r"has virtual keys \(hoodie\.populate\.meta\.fields=false\): x/.* has log "
                                          r"files"):
        hoodie.read_table(mor)
    t = hoodie.read_table(mor, query_type="read_optimized")
    assert sorted(zip(t.column("k").to_pylist(), t.column("v").to_pylist())) == [("a", 1), ("b", 2)]


# -- change data capture (hoodie.table.cdc.enabled=true) ---------------------------------------------

def test_writes_to_a_table_that_records_change_data_are_refused_and_reads_answer(tmp_path: Path) -> None:
    """hoodie writes no CDC log files, so Java's CDC queries would miss its changes: writes and compaction
    scheduling are refused; snapshot reads ignore CDC log files (they are no data logs) and answer."""
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "x"], "v": [1, 2]}), OPTS)
    _set_table_property(path, "hoodie.table.cdc.enabled", "true")
    _upsert_and_compaction_refused(path, r"the table records change data \(hoodie\.table\.cdc\.enabled=true\).* "
                                         r"Nothing was written")
    t = hoodie.read_table(path)
    assert sorted(zip(t.column("k").to_pylist(), t.column("v").to_pylist())) == [("a", 1), ("b", 2)]
