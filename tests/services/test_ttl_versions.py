"""Partition TTL reads every write of the active timeline on every table version.

Its last-modified statistics parsed commit metadata as JSON only; version 8/9 tables (Hudi 1.x) keep
it in Avro, so every write was skipped without a word. KEEP_BY_TIME then expired nothing on such
tables, or, once the archiver had run, took a partition's age from its slices' base instants: a
merge-on-read partition whose only recent writes were log files looked as old as its base file and
was deleted with the fresh rows in it.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services.ttl import run_ttl
from hoodie import write_arrow
from tests.format.test_incremental_archived import _archive_v6
from tests.format.test_lsm_timeline import JavaLSMWriter

TTL = {"hoodie.partition.ttl.strategy": "KEEP_BY_TIME", "hoodie.partition.ttl.strategy.days.retain": "30"}


def _opts(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version)}


@pytest.mark.parametrize("archived", [False, True])
@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_keep_by_time_ages_partitions_by_their_newest_write(tmp_path: Path, table_type: str, version: int,
                                                            archived: bool) -> None:
    path = str(tmp_path / "t")
    opts = _opts(table_type, version)
    first = write_arrow(path, pa.table({"k": ["a", "b"], "p": ["old", "fresh"], "v": [1, 1]}), opts,
                        instant="20200101000000000")
    write_arrow(path, pa.table({"k": ["c"], "p": ["other"], "v": [1]}), opts, instant="20200201000000000")
    # The only write to "fresh" since: on merge-on-read a log file; its base file stays January's.
    write_arrow(path, pa.table({"k": ["b"], "p": ["fresh"], "v": [2]}), opts, instant="20200301000000000")
    if archived:
        if version >= 8:
            JavaLSMWriter(Path(path)).archive(Path(path), [first])
        else:
            _archive_v6(Path(path), [first])
            # The archive log Java's archiver writes them into (TTL only looks whether one exists).
            (Path(path) / ".hoodie" / "archived").mkdir(exist_ok=True)
            (Path(path) / ".hoodie" / "archived" / ".commits_.archive.1_1-0-1").write_bytes(b"")
        assert HoodieTable(path).timeline.first().timestamp != first
    # Mid-March with 30 days' retention: "old" (January) and "other" (February) expired, "fresh" (March) kept.
    res = run_ttl(path, TTL, instant_time="20200315000000000")
    status = {d.partition: (d.status, d.reference) for d in res.decisions}
    # Once archived, "old"'s only write is known by its slice's base instant, which is that write's.
    assert status == {"old": ("expired", first), "other": ("expired", "20200201000000000"),
                      "fresh": ("kept", "20200301000000000")}, status
    assert sorted(res.expired_partitions) == ["old", "other"]
    t = hoodie.read_table(path)
    assert list(zip(t.column("k").to_pylist(), t.column("v").to_pylist())) == [("b", 2)]
