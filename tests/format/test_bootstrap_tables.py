"""Tables Hudi bootstrapped from existing Parquet files (``hoodie.bootstrap.base.path``).

A metadata-only bootstrap (Hudi's reserved instant ``00000000000001``) leaves skeleton base files holding
only Hudi's meta columns; the records' data stays in the source files, found through the bootstrap index.
hoodie does not read bootstrap indexes: reading a skeleton alone returned nulls for every data column, and
a merge into it would have written those nulls back. Both are refused with an error naming the table.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.errors import HoodieError
from hoodie.format.properties import format_table_properties, parse_properties
from hoodie.services.compaction import schedule_compaction
from hoodie import write_arrow

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _bootstrapped(path: str, instant: str) -> None:
    """A table whose first commit is Hudi's bootstrap instant ``instant`` (its files and instant files
    renamed to it) and whose properties name a bootstrap source."""
    first = write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "x"], "v": [1, 2]}), OPTS)
    root = Path(path)
    for f in list(root.rglob(f"*{first}*")):
        f.rename(f.with_name(f.name.replace(first, instant)))
    props_file = root / ".hoodie" / "hoodie.properties"
    props = parse_properties(props_file.read_text())
    props["hoodie.bootstrap.base.path"] = "/data/source_parquet"
    props_file.write_text(format_table_properties(props))


def _listing(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*") if p.is_file())


def test_metadata_only_bootstrap_is_refused_for_reads_writes_and_compaction(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _bootstrapped(path, "00000000000001")
    with pytest.raises(HoodieError, match=r"is a bootstrapped table \(hoodie\.bootstrap\.base\.path=/data/source_"
                                          r"parquet\): x/.*_00000000000001\.parquet is a metadata-only bootstrap"):
        hoodie.read_table(path)
    with pytest.raises(HoodieError, match="metadata-only bootstrap"):
        hoodie.read_table(path, query_type="read_optimized")
    before = _listing(Path(path))
    for op in ("upsert", "insert", "delete"):
        with pytest.raises(HoodieError, match=r"^write \(" + op + r"\) on .*: the table was bootstrapped from "
                                              r"/data/source_parquet .* Nothing was written"):
            write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [9]}),
                        {**OPTS, "hoodie.datasource.write.operation": op})
    with pytest.raises(HoodieError, match="^compaction scheduling on .*: the table was bootstrapped"):
        schedule_compaction(path)
    assert _listing(Path(path)) == before


def test_full_record_bootstrap_files_are_ordinary_base_files(tmp_path: Path) -> None:
    """A full-record bootstrap (instant 00000000000002) writes whole records: read as any base file."""
    path = str(tmp_path / "t")
    _bootstrapped(path, "00000000000002")
    assert sorted(hoodie.read_table(path).column("v").to_pylist()) == [1, 2]
