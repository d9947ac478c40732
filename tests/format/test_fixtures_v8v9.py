"""Tables written by Hudi 1.0 (table version 8) and 1.1 (version 9), read in pure Python: every
fixture's snapshot and every ``gold_options`` read (projections, read-optimized, incremental ranges
by completion time) equal what Spark with Hudi read, and hudi-rs agrees. Writes and services on them:
tests/services/test_v8v9_writes.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.format.slice.filters import ReadError
from hoodie.format.table import HoodieTable
from tests.format.test_fixtures import option_cases, read_kwargs
from tests.format.test_metadata_fixtures import V89_DIR, _table
from tests.helpers import rows_of
from tests.hudi_rs import read_hudi_rs

META = {"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"}
ZIPS = sorted(V89_DIR.glob("*.zip"))
# Partial-update log blocks (IS_PARTIAL): laid over the older record (commit-time ordering).
PARTIAL = "quickstart_trips_table_mor_avro_table_partial_update"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("v8v9")
    return {z.stem: _table(z, root / z.stem) for z in ZIPS}


def _gold(folder: Path) -> pa.Table:
    return pa.concat_tables([pq.read_table(f) for f in sorted(folder.glob("*.parquet"))])


def _root(tables: dict[str, Path], stem: str) -> Path:
    return tables[stem].parent


def _same(ours: pa.Table, gold: pa.Table, cols: list[str]) -> None:
    assert ours.num_rows == gold.num_rows
    assert sorted(rows_of(ours, cols)) == sorted(rows_of(gold, cols))


@pytest.mark.parametrize("stem", [z.stem for z in ZIPS])
def test_snapshot_matches_gold(tables: dict[str, Path], stem: str) -> None:
    path = str(tables[stem])
    gold = _gold(_root(tables, stem) / "gold_data")
    ours = hoodie.read_table(path)
    _same(ours, gold, [c for c in gold.column_names if c not in META])
    # _hoodie_commit_time identifies versions; hudi-rs (which reads 1.x tables) agrees on the keys.
    if "_hoodie_commit_time" in gold.column_names:
        _same(ours, gold, ["_hoodie_commit_time", "_hoodie_record_key"])


@pytest.mark.parametrize("stem,case", option_cases(ZIPS), ids=lambda x: x if isinstance(x, str) else x["name"])
def test_gold_options(tables: dict[str, Path], stem: str, case: dict) -> None:
    gold = _gold(_root(tables, stem) / "gold_options" / case["name"])
    ours = hoodie.read_table(str(tables[stem]), **read_kwargs(case))
    if "projection" in case:
        assert ours.column_names == case["projection"]
    _same(ours, gold, case.get("projection") or [c for c in gold.column_names if c not in META])


@pytest.mark.parametrize("stem", ["quickstart_trips_table_mor_avro_v8_trips_8i3u1d",
                                  "sample_table_mor_avro_v9_txns_simple_nometa",
                                  "quickstart_trips_table_mor_avro_table_uncommitted_log_v9"])
def test_hudi_rs_reads_what_we_read(tables: dict[str, Path], stem: str) -> None:
    path = str(tables[stem])
    ours = hoodie.read_table(path)
    theirs = read_hudi_rs(path)
    cols = [c for c in theirs.column_names if c in ours.column_names and c not in ("_hoodie_commit_seqno",)]
    assert sorted(rows_of(ours, cols)) == sorted(rows_of(theirs, cols))


def test_time_travel_uses_completion_time(tables: dict[str, Path]) -> None:
    """As of an instant's completion time the table holds that instant; just before it, not yet."""
    path = str(tables["quickstart_trips_table_mor_avro_v8_trips_8i3u1d"])
    tl = HoodieTable(path, read_only=True).timeline
    writes = [i for i in tl.completed_writes() if i.action == "deltacommit"]
    last = writes[-1]
    before = hoodie.read_table(path, as_of=str(int(last.completion) - 1))
    at = hoodie.read_table(path, as_of=last.completion)
    assert sorted(rows_of(at, ["uuid", "fare"])) == sorted(rows_of(hoodie.read_table(path), ["uuid", "fare"]))
    assert sorted(rows_of(before, ["uuid", "fare"])) != sorted(rows_of(at, ["uuid", "fare"]))


def test_partial_updates_on_an_event_time_table_are_refused(tables: dict[str, Path], tmp_path: Path) -> None:
    """Whether a partial row wins under event-time ordering depends on ordering values it may not
    hold: refused, naming the way out, rather than merged by commit time."""
    from hoodie.format.table import PROPS_FILE
    from hoodie.format import properties as P

    path = tmp_path / "t"
    shutil.copytree(tables[PARTIAL], path)
    props = P.parse_properties((path / PROPS_FILE).read_text())
    props.update({"hoodie.record.merge.mode": "EVENT_TIME_ORDERING", "hoodie.table.ordering.fields": "ts"})
    (path / PROPS_FILE).write_text(P.format_table_properties(props))
    with pytest.raises(ReadError, match="partial-update log blocks .* merged by event time"):
        hoodie.read_table(str(path))
