"""The metadata-table compaction folds the index partitions too (as Java compacts every MDT partition):
after it, each column_stats / partition_stats / record_index file group's latest slice is one base HFile at
the compaction instant holding what the slice's base file and log blocks held (every index reads back the
same and validates against the files), later commits add log files to that slice, and the MDT clean
removes the older slices."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.metadata.index_reader import (
    lookup_record_index, read_column_stats, read_partition_stats, read_record_index,
)
from hoodie.format.metadata.table import MetadataTable
from hoodie.format.table import HoodieTable
from hoodie.services.metadata.lifecycle import validate_metadata_table, validate_partition_stats, validate_record_index
from tests.hudi_rs import read_hudi_rs

INDEXES = ("column_stats", "partition_stats", "record_index")


def _opts(version: int, table_type: str, op: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.metadata.index.partition.stats.enable": str(version >= 8).lower(),
            "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.record.index.min.filegroup.count": "2",
            "hoodie.metadata.compact.max.delta.commits": "3", "hoodie.clean.automatic": "false",
            "hoodie.datasource.write.operation": op}


def _state(path: str) -> tuple:
    mdt = MetadataTable(HoodieTable(path))
    stats = {k: (s.file_name, s.column_name, s.min_value, s.max_value, s.null_count, s.value_count)
             for k, s in read_column_stats(mdt).items()}
    pstats = ({k: (s.file_name, s.column_name, s.min_value, s.max_value, s.null_count, s.value_count)
               for k, s in read_partition_stats(mdt).items()}
              if "partition_stats" in HoodieTable(path).props.get("hoodie.table.metadata.partitions", "") else {})
    return stats, pstats, read_record_index(mdt)


def _slices(path: str, partition: str) -> list[tuple[str, list[str]]]:
    """(base file, log files) of each file group's latest slice of an MDT index partition."""
    return [(sl.base_file.rsplit("/", 1)[-1] if sl.base_file else "", [p.rsplit("/", 1)[-1] for p in sl.log_files])
            for sl in MetadataTable(HoodieTable(path)).partition_slices(partition)]


# Version 6 (layout 1) under -m slow: the default run's kill test at metadata.compaction.after_base_file
# (tests/services/test_column_stats_write.py) compacts a version-6 metadata table with its index partitions.
@pytest.mark.parametrize("version, table_type", [pytest.param(6, "MERGE_ON_READ", marks=pytest.mark.slow),
                                                 (9, "COPY_ON_WRITE")])
def test_mdt_compaction_folds_the_index_partitions(tmp_path: Path, version: int, table_type: str) -> None:
    """Writes (inserts, a key moving... deletes) up to the MDT compaction: the indexes read the same before
    and after it, each file group's slice is one base file at the compaction instant, validate passes, and
    the commits after it add log files to those slices and keep everything valid."""
    path = str(tmp_path / "t")
    rows = [("a", "x", 1), ("b", "y", 1), ("c", "x", 1), ("d", "z", 1)]
    hoodie.write_arrow(path, pa.table({"k": [r[0] for r in rows], "p": [r[1] for r in rows],
                                       "ts": [r[2] for r in rows], "v": [f"{r[0]}1" for r in rows]}),
                       _opts(version, table_type, "insert"))
    hoodie.write_arrow(path, pa.table({"k": ["b", "e"], "p": ["y", "z"], "ts": [2, 2], "v": ["b2", "e2"]}),
                       _opts(version, table_type, "upsert"))
    before = _state(path)
    mdt_commits = lambda: [i for i in MetadataTable(HoodieTable(path)).timeline.completed()  # noqa: E731
                           if i.action == "commit"]
    initial = mdt_commits()  # the MDT's creation (and the index bootstraps) on version 6 are commits
    # Writes until the MDT compacts (3 deltacommits after its creation): a delete, then upserts of b.
    hoodie.write_arrow(path, pa.table({"k": ["c"], "p": ["x"], "ts": [3]}).append_column("v", pa.array([None], pa.string())),
                       _opts(version, table_type, "delete"))
    for n in range(3):
        if len(mdt_commits()) > len(initial):
            break
        hoodie.write_arrow(path, pa.table({"k": ["b"], "p": ["y"], "ts": [2], "v": ["b2"]}),
                           _opts(version, table_type, "upsert"))
    (compaction,) = [i for i in mdt_commits() if i not in initial]
    for part in INDEXES if version >= 8 else ("column_stats", "record_index"):
        for base, logs in _slices(path, part):
            assert compaction.timestamp in base, (part, base)
            # layout 1 names the following deltacommit's log after the compaction instant; layout 2 by its own
            assert len(logs) <= 1, (part, logs)
    after = _state(path)
    # What the delete changed: c's entries; all else as before the compaction.
    assert {k: v for k, v in after[2].items()} == {k: v for k, v in before[2].items() if k != "c"}
    assert validate_record_index(HoodieTable(path)) == []
    if version >= 8:
        assert validate_partition_stats(HoodieTable(path)) == []
    assert validate_metadata_table(HoodieTable(path)).equal
    # Lookups find the compacted entries.
    got = lookup_record_index(MetadataTable(HoodieTable(path)), ["a", "b", "c", "e"])
    assert {k: loc.partition for k, loc in got.items()} == {"a": "x", "b": "y", "e": "z"}
    # More commits: logs on the compacted slices, a second compaction, the MDT clean of the older slices.
    for n in range(4):
        hoodie.write_arrow(path, pa.table({"k": ["f", "a"], "p": ["x", "x"], "ts": [4 + n, 4 + n],
                                           "v": [f"f{n}", f"a{n}"]}), _opts(version, table_type, "upsert"))
    assert len(mdt_commits()) == len(initial) + 2
    # The MDT clean after the second compaction keeps the 2 latest slices of every index file group: the
    # bootstrap slice's files are gone.
    for part in INDEXES if version >= 8 else ("column_stats", "record_index"):
        names = [p.name for p in (Path(path) / ".hoodie" / "metadata" / part).iterdir() if p.name.endswith(".hfile")]
        per_group: dict[str, int] = {}
        for n in names:
            per_group[n.split("_")[0]] = per_group.get(n.split("_")[0], 0) + 1
        assert per_group and max(per_group.values()) <= 2, (part, sorted(names))
    assert validate_record_index(HoodieTable(path)) == []
    assert validate_metadata_table(HoodieTable(path)).equal
    want = sorted((r["k"], r["p"], r["v"]) for r in hoodie.read_table(path).to_pylist())
    assert sorted((r["k"], r["p"], r["v"]) for r in read_hudi_rs(path).to_pylist()) == want
    assert want == [("a", "x", "a3"), ("b", "y", "b2"), ("d", "z", "d1"), ("e", "z", "e2"), ("f", "x", "f3")]


def _java_fixtures() -> list:
    """The Java fixtures with a clean record index; the default run compacts one (v9 MOR), the slow run all."""
    from tests.services.test_record_index_tagging import _java_fixtures_with_a_clean_record_index

    return [z if "mor_avro_v9" in z.stem else pytest.param(z, marks=pytest.mark.slow)
            for z in _java_fixtures_with_a_clean_record_index()]


@pytest.mark.filterwarnings("ignore:.*dropped the metadata-table partitions")
@pytest.mark.parametrize("z", _java_fixtures(), ids=lambda z: getattr(z, "stem", None))
def test_mdt_compaction_of_java_written_indexes(z: Path, tmp_path: Path) -> None:
    """A Java-written table's indexes (v8 MOR, v9 COW and MOR) compacted by hoodie's writes (compaction due
    after one deltacommit): every index file group's slice is then a base file at the compaction instant, the record
    index holds what it held (the writes rewrote one row in place), and every index
    validates against the files."""
    from tests.format.test_metadata_fixtures import _table

    path = str(_table(z, tmp_path / "t"))
    before = read_record_index(MetadataTable(HoodieTable(path)))
    table = HoodieTable(path)
    one = hoodie.read_table(path).slice(0, 1)
    data = one.drop_columns([c for c in one.column_names if c.startswith("_hoodie")])
    commits = lambda: {i.timestamp for i in MetadataTable(HoodieTable(path)).timeline.completed()  # noqa: E731
                       if i.action == "commit"}
    old = commits()
    for _ in range(2):  # due once a deltacommit follows the MDT's last compaction
        if commits() == old:
            hoodie.write_arrow(path, data, {"hoodie.datasource.write.operation": "upsert",
                                            "hoodie.metadata.compact.max.delta.commits": "1"})
    (compaction,) = commits() - old
    listed = HoodieTable(path).props["hoodie.table.metadata.partitions"].split(",")
    for part in (p for p in INDEXES if p in listed):
        assert all(compaction in base for base, _ in _slices(path, part)), part
    after = read_record_index(MetadataTable(HoodieTable(path)))
    key = one.column("_hoodie_record_key")[0].as_py()
    assert {k: (v.partition, v.file_id) for k, v in after.items() if k != key} == \
        {k: (v.partition, v.file_id) for k, v in before.items() if k != key}
    assert validate_metadata_table(HoodieTable(path)).equal
    assert validate_record_index(HoodieTable(path)) == []
    if "partition_stats" in listed:
        assert validate_partition_stats(HoodieTable(path)) == []
    assert table.table_version == HoodieTable(path).table_version
