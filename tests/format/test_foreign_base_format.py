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

from hoodie.errors import HoodieError
from hoodie.format.properties import format_table_properties, parse_properties
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import schedule_compaction
from hoodie.services.rollback import rollback
from hoodie.services.ttl import run_ttl
from hoodie.services.write import write_arrow

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _table(path: str, fmt: str, version: int) -> None:
    """A two-commit table whose properties then name ``fmt`` as its base file format."""
    opts = {**OPTS, "hoodie.write.table.version": str(version)}
    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["1970-01-01", "1970-01-02"], "v": [1, 2]}), opts)
    write_arrow(path, pa.table({"k": ["a"], "p": ["1970-01-01"], "v": [3]}), opts)
    props_file = Path(path) / ".hoodie" / "hoodie.properties"
    props = parse_properties(props_file.read_text())
    props["hoodie.table.base.file.format"] = fmt
    props_file.write_text(format_table_properties(props))


def _listing(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*") if p.is_file())


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
