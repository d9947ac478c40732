"""Incremental reads whose range starts before the active timeline: the writes Java's archiver moved
out of the active timeline (version 6: into ``.hoodie/archived``; versions 8/9: into the LSM timeline)
are still in the range. Archiving must not change what an incremental read returns.

Before the fix, the read listed only the file groups active commits touched, so the records of archived
commits in the range (in groups no active commit touched) were dropped without a word.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.slice.reader import ReadError
from hoodie.format.table import HoodieTable
from hoodie.services.write import write_arrow
from tests.format.test_lsm_timeline import JavaLSMWriter
from tests.helpers import rows_of

COLS = ["k", "p", "v"]


def _opts(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
            "hoodie.datasource.write.precombine.field": "v", "hoodie.datasource.write.table.type": table_type,
            "hoodie.write.table.version": str(version)}


def _archive_v6(base: Path, timestamps: list[str]) -> None:
    """What Java's version-6 archiver leaves on the active timeline: the instants' files gone."""
    for f in (base / ".hoodie").iterdir():
        if f.is_file() and f.name.split(".")[0] in timestamps:
            f.unlink()


def _incremental(path: str, begin: str, end: str | None = None) -> list[tuple]:
    t = hoodie.read_table(path, query_type="incremental", begin=begin, end=end)
    return sorted(rows_of(t, COLS)) if t.num_rows else []


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_archiving_does_not_change_incremental_reads(tmp_path: Path, table_type: str, version: int) -> None:
    path = str(tmp_path / "t")
    batches = [  # each commit touches its own partition, then one goes back to an old one
        pa.table({"k": ["a", "b"], "p": ["x", "x"], "v": [1, 1]}),
        pa.table({"k": ["c"], "p": ["y"], "v": [1]}),
        pa.table({"k": ["d"], "p": ["z"], "v": [1]}),
        pa.table({"k": ["a"], "p": ["x"], "v": [2]}),
        pa.table({"k": ["e"], "p": ["w"], "v": [1]}),
    ]
    instants = [write_arrow(path, b, _opts(table_type, version)) for b in batches]
    tl = HoodieTable(path).timeline
    # Range bounds: requested times on version 6, completion times on 8/9.
    bounds = [tl.get(i).completion if version >= 8 else i for i in instants]
    begins = ["00000000000000000", *bounds[:-1]]
    ends = [None, bounds[2], bounds[3]]
    before = {(b, e): _incremental(path, b, e) for b in begins for e in ends if e is None or b < e}
    assert before[("00000000000000000", None)] == sorted(rows_of(hoodie.read_table(path), COLS))
    as_of_first_active = sorted(rows_of(hoodie.read_table(path, as_of=bounds[3]), COLS))
    archived = instants[:3]
    if version >= 8:
        JavaLSMWriter(Path(path)).archive(Path(path), archived)
    else:
        _archive_v6(Path(path), archived)
    assert HoodieTable(path).timeline.first().timestamp == instants[3]
    for (b, e), rows in before.items():
        if version >= 8 and e is not None and e < bounds[3]:
            # Versions 8/9 slice by completion time from the active timeline: a read as of a time whose
            # writes are all archived is refused, never empty.
            with pytest.raises(ReadError, match=rf"^end={e} is before the first write on the active timeline"):
                _incremental(path, b, e)
            continue
        assert _incremental(path, b, e) == rows, f"incremental ({b}, {e}] changed by archiving"
    if version >= 8:
        with pytest.raises(ReadError, match=rf"^as_of={bounds[1]} is before the first write"):
            hoodie.read_table(path, as_of=bounds[1])
    # Time travel to the first active write still reads the state then.
    assert sorted(rows_of(hoodie.read_table(path, as_of=bounds[3]), COLS)) == as_of_first_active


def test_a_read_before_the_first_write_of_an_unarchived_table_is_empty(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [1]}), _opts("MERGE_ON_READ", 9))
    assert hoodie.read_table(path, as_of="20000101000000000").num_rows == 0
    assert hoodie.read_table(path, query_type="incremental", begin="00000000000000000",
                             end="20000101000000000").num_rows == 0
