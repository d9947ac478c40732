"""Read options are checked as write options are: an unknown ``hoodie.*`` key warns (a misspelled query
type read a snapshot in silence), and options that would change what a read returns but that hoodie
does not honour are refused rather than ignored."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.slice.filters import ReadError
from hoodie import write_arrow


@pytest.fixture()
def table(tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"]}), {"hoodie.table.name": "t",
                                                            "hoodie.datasource.write.recordkey.field": "k",
                                                            "hoodie.datasource.write.partitionpath.field": "p"})
    return path


def test_unknown_read_keys_warn_with_the_closest_key(table: str) -> None:
    with pytest.warns(UserWarning, match=r"unknown option 'hoodie\.metadata\.enabled' is ignored; did you mean "
                                         r"'hoodie\.metadata\.enable'\?"):
        hoodie.read_table(table, options={"hoodie.metadata.enabled": "true"})


@pytest.mark.parametrize("key,value,reason", [
    ("hoodie.datasource.query.incremental.format", "cdc", "does not read Hudi's CDC log files"),
    ("hoodie.datasource.read.incr.path.glob", "x/*", "filters an incremental read by file path"),
    ("hoodie.datasource.read.incr.filters", "k = 'a'", "filters an incremental read by expressions"),
    ("hoodie.datasource.read.paths", "x/f.parquet", "reads only the listed files"),
    ("hoodie.datasource.query.incremental.format", "changes", "is not an incremental format"),
])
def test_options_that_would_change_the_result_are_refused(table: str, key: str, value: str, reason: str) -> None:
    with pytest.raises(ReadError, match=reason):
        hoodie.read_table(table, query_type="incremental", begin="0", options={key: value})


def test_supported_read_options_pass_quietly(table: str, recwarn) -> None:
    out = hoodie.read_table(table, options={"hoodie.datasource.query.incremental.format": "latest_state",
                                            "hoodie.metadata.enable": "false", "hoodie.datasource.read.incr.filters": ""})
    assert out.num_rows == 1 and not [w for w in recwarn if "unknown option" in str(w.message)]
