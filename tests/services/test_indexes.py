"""partition_stats and record_index: the Java-written fixtures' own indexes equal what hoodie computes
from the same files; hoodie keeps both equal to a recomputation from the files through every action
(validate checks each index against the files), hudi-rs reads the tables hoodie wrote, reads prune
partitions by partition_stats, and ``hoodie metadata create-index`` builds each on an existing table."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import write_arrow
from hoodie.format.metadata import MetadataTable
from hoodie.format.metadata import record_index as RI
from hoodie.format.metadata.index_reader import lookup_record_index, read_partition_stats, read_record_index
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.metadata import create_index, validate_metadata_table
from hoodie.services.metadata.lifecycle import validate_record_index
from hoodie.errors import WriteError
from hoodie.services.rollback.operation import rollback
from tests.fixture_paths import V89_DIR
from tests.hudi_rs import read_hudi_rs

OPTS = {"hoodie.table.name": "ix", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.clean.automatic": "false", "hoodie.metadata.enable": "true",
        "hoodie.metadata.index.column.stats.enable": "true", "hoodie.metadata.index.partition.stats.enable": "true",
        "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3"}


def _rows(ids: list[int], p: str, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids), "ts": pa.array([ts] * len(ids), pa.int64()),
                     "x": pa.array([i * 10 + ts for i in ids], pa.int64())})


def _zips(partition: str) -> list[Path]:
    def has(z: Path) -> bool:
        with zipfile.ZipFile(z) as zf:
            return any(f"/.hoodie/metadata/{partition}/" in m for m in zf.namelist())
    return [z for z in sorted(V89_DIR.glob("*.zip")) if has(z)]


@pytest.mark.parametrize("z", _zips("partition_stats"), ids=lambda z: z.stem)
def test_java_partition_stats_equal_hoodies_recomputation(z: Path, tmp_path: Path) -> None:
    """Java's partition_stats records decode and match hoodie's aggregation of each partition's latest
    files: same keys, and per record equal, or (where Java aggregated more files than the latest slices:
    a COW update's old and new file version, a file a delete emptied) a range that covers hoodie's with
    at least as many values. Most records are equal outright."""
    from hoodie.services.metadata.lifecycle import expected_partition_stats
    from tests.format.test_metadata_fixtures import _table

    table = HoodieTable(str(_table(z, tmp_path / "t")))
    got = read_partition_stats(MetadataTable(table))
    want = expected_partition_stats(table)
    assert set(got) == set(want)
    equal = 0
    for k, w in want.items():
        g = got[k]
        assert (g.partition, g.column_name) == (w.partition, w.column_name)
        if (g.python_min(), g.python_max(), g.value_count, g.null_count) == (
                w.python_min(), w.python_max(), w.value_count, w.null_count):
            equal += 1
            continue
        assert g.value_count >= w.value_count, k
        if w.value_count > w.null_count:
            assert g.python_min() <= w.python_min() and g.python_max() >= w.python_max(), k
    assert equal >= len(want) // 2, (equal, len(want))


@pytest.mark.parametrize("z", _zips("record_index"), ids=lambda z: z.stem)
def test_java_record_index_equals_a_key_scan(z: Path, tmp_path: Path) -> None:
    """Java's record index puts every live key at the newest file group holding it (Java writers left
    some keys in two file groups; hoodie's validate reports those)."""
    from tests.format.test_metadata_fixtures import _table

    table = HoodieTable(str(_table(z, tmp_path / "t")))
    got = read_record_index(MetadataTable(table))
    assert got
    some = sorted(got)[::2]
    assert lookup_record_index(MetadataTable(table), some + ["no such key"]) == {k: got[k] for k in some}
    for m in validate_record_index(table):
        assert "file groups (" in m, m  # only duplicates are reported


def test_record_index_encoding_round_trips() -> None:
    loc = RI.RecordLocation("2024/01/15/10", "796b1245-1589-462d-944d-cb01e98595ba-0", 1775241522444)
    enc = RI.encode_file_id(loc.file_id)
    assert (enc["fileIdHighBits"], enc["fileIdLowBits"], enc["fileIndex"]) == (
        8749106789020681773, -7760323373816244806, 0)  # the fixture's cell for TXN-001
    assert RI.encode_file_id("not-a-uuid")["fileIdEncoding"] == 1
    import io
    import json

    import fastavro

    from hoodie.format.metadata import encoding as MW
    for version in (6, 8, 9):
        schema = MW.schema_json(version)
        parsed = fastavro.parse_schema(json.loads(schema))
        assert RI._codec(schema) is not None  # the fast codec covers every schema hoodie writes
        for other in (loc, RI.RecordLocation("", "my-file-id", 5), RI.RecordLocation("p/ü", "x" * 300, -1)):
            (k, v), = RI.encode_locations({"k": other}, schema)
            buf = io.BytesIO()
            fastavro.schemaless_writer(buf, parsed, RI.record_index_datum(other, parsed))
            assert v == buf.getvalue()  # the fast codec writes fastavro's bytes
            assert RI.decode_record_location(k, v, schema, "test") == other
    assert RI.file_group_count(0) == 10 and RI.file_group_count(10**9) == 90


def _check(path: str, what: str) -> None:
    res = validate_metadata_table(HoodieTable(path))
    assert res.equal, (what, res)
    got = sorted(map(str, read_hudi_rs(path).column("_hoodie_record_key").to_pylist()))
    assert got == sorted(map(str, hoodie.read_table(path).column("_hoodie_record_key").to_pylist())), what


# MOR v9 in the default run; COW v8 and MOR v6 (command-block rollbacks) under -m slow.
@pytest.mark.parametrize("table_type,version", [("MERGE_ON_READ", "9"),
                                                pytest.param("COPY_ON_WRITE", "8", marks=pytest.mark.slow),
                                                pytest.param("MERGE_ON_READ", "6", marks=pytest.mark.slow)])
def test_every_action_keeps_the_indexes_equal_to_the_files(tmp_path: Path, table_type: str, version: str) -> None:
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": version}
    write_arrow(path, _rows([1, 2, 3], "a", 1), mode="overwrite", options=o)
    table = HoodieTable(path)
    listed = table.props["hoodie.table.metadata.partitions"].split(",")
    assert "record_index" in listed and ("partition_stats" in listed) == (version != "6")
    _check(path, "insert")
    write_arrow(path, _rows([4, 5], "b", 1), options=o)
    write_arrow(path, _rows([2, 3], "a", 2), options={**o, "hoodie.datasource.write.operation": "upsert"})
    _check(path, "upsert")
    write_arrow(path, _rows([5], "b", 3), options={**o, "hoodie.datasource.write.operation": "delete"})
    _check(path, "delete")
    assert "5" not in read_record_index(MetadataTable(HoodieTable(path)))
    full = read_record_index(MetadataTable(HoodieTable(path)))
    assert lookup_record_index(MetadataTable(HoodieTable(path)), ["1", "4", "5"]) == {k: full[k] for k in ("1", "4")}
    if table_type == "MERGE_ON_READ":
        run_compaction(path, schedule_compaction(path, check_trigger=False))
        _check(path, "compaction")
    write_arrow(path, _rows([6], "a", 4), options={**o, "hoodie.datasource.write.operation": "upsert"})
    last = HoodieTable(path).timeline.completed_writes().last().timestamp
    rollback(path, last)
    assert "6" not in read_record_index(MetadataTable(HoodieTable(path)))
    _check(path, "rollback")
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    _check(path, "clean")
    # A key moved to another partition (or inserted again) would be in two file groups: refused before
    # anything is written, the index stays right.
    done = HoodieTable(path).timeline.instants
    files = sorted(str(f) for f in Path(path).rglob("*") if ".hoodie" not in f.parts)
    for op in ("upsert", "insert"):
        with pytest.raises(WriteError, match="record key '1' is already in partition 'a'.*Nothing was written"):
            write_arrow(path, _rows([1], "b" if op == "upsert" else "a", 9),
                        options={**o, "hoodie.datasource.write.operation": op})
    with pytest.raises(WriteError, match="record key '7' is written to partitions 'a' and 'b'"):
        write_arrow(path, pa.concat_tables([_rows([7], "a", 9), _rows([7], "b", 9)]),
                    options={**o, "hoodie.datasource.write.operation": "insert"})
    assert HoodieTable(path).timeline.instants == done  # not even an instant stays
    assert sorted(str(f) for f in Path(path).rglob("*") if ".hoodie" not in f.parts) == files
    _check(path, "refused writes")


def test_reads_prune_partitions_by_partition_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hoodie.format.slice import skipping

    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.write.table.version": "9"}
    write_arrow(path, _rows([1, 2], "a", 1), mode="overwrite", options=o)
    write_arrow(path, _rows([30, 40], "b", 1), options=o)
    seen = {}
    real = skipping.prune_by_partition_stats

    def spy(table, slices, cols):
        out = real(table, slices, cols)
        seen["partitions"] = sorted({s.partition for s in out})
        return out

    monkeypatch.setattr(skipping, "prune_by_partition_stats", spy)
    got = hoodie.read_table(path, filters=[("x", ">=", 300)], options={"hoodie.enable.data.skipping": "true"})
    assert sorted(got.column("id").to_pylist()) == [30, 40]
    assert seen["partitions"] == ["b"]
    unpruned = hoodie.read_table(path, filters=[("x", ">=", 300)])
    assert sorted(unpruned.column("id").to_pylist()) == [30, 40]


def test_create_index_on_an_existing_table_and_cli(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    o = {k: v for k, v in {**OPTS, "hoodie.write.table.version": "9"}.items()
         if "index" not in k}
    write_arrow(path, _rows([1, 2], "a", 1), mode="overwrite", options=o)
    write_arrow(path, _rows([3], "b", 1), options=o)
    assert HoodieTable(path).props["hoodie.table.metadata.partitions"] == "files"
    with pytest.raises(Exception, match="column_stats"):
        create_index(HoodieTable(path), "partition_stats")
    create_index(HoodieTable(path), "column_stats")
    create_index(HoodieTable(path), "partition_stats")
    env = {"PYTHONPATH": ":".join(sys.path)}
    r = subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", "metadata", "create-index", path,
                        "--index", "record_index"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    listed = HoodieTable(path).props["hoodie.table.metadata.partitions"].split(",")
    assert {"column_stats", "partition_stats", "record_index"} <= set(listed)
    assert set(read_record_index(MetadataTable(HoodieTable(path)))) == {"1", "2", "3"}
    _check(path, "create-index")
    write_arrow(path, _rows([4], "b", 2), options=o)  # kept by a writer that does not name them
    _check(path, "write after create-index")


@pytest.mark.parametrize("link_mode", ["symlink", pytest.param("copy", marks=pytest.mark.slow)])
def test_a_partial_compaction_keeps_column_and_partition_stats_of_its_linked_log_files(tmp_path: Path,
                                                                                    link_mode: str) -> None:
    """An event-time partial compaction links the log files it does not compact into its new slice
    (log files named by the compaction, holding blocks of the writes' instants). Their statistics were
    left out of column_stats (only blocks of the recording instant were taken), so partition_stats
    undercounted the partition and a read pruning by it could drop their rows."""
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "9",
         "hoodie.payload.event.time.field": "ts", "hoodie.compaction.partial.link.mode": link_mode}
    write_arrow(path, _rows([1, 2, 3, 4], "a", 1), mode="overwrite", options=o)
    write_arrow(path, _rows([1, 2], "a", 10), options={**o, "hoodie.datasource.write.operation": "upsert"})
    write_arrow(path, _rows([3, 4], "a", 50), options={**o, "hoodie.datasource.write.operation": "upsert"})
    copt = {**o, "hoodie.compaction.strategy": "org.apache.hudi.table.action.compact.strategy."
            "EventTimeBasedCompactionStrategy", "hoodie.compaction.event.time.threshold": "20",
            "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER"}
    run_compaction(path, schedule_compaction(path, copt, check_trigger=False), copt)
    _check(path, "partial compaction")
    got = hoodie.read_table(path, filters=[("x", ">=", 80)], options={"hoodie.enable.data.skipping": "true"})
    assert sorted(got.column("id").to_pylist()) == [3, 4]


def _child(path: str, ids: list[int], options: dict, point: str) -> int:
    import json
    import os
    code = ("import json, sys; from hoodie import write_arrow; from tests.services.test_indexes import _rows; "
            "write_arrow(sys.argv[1], _rows(json.loads(sys.argv[2]), 'a', 9), json.loads(sys.argv[3]))")
    return subprocess.run([sys.executable, "-c", code, path, json.dumps(ids), json.dumps(options)],
                          env={**os.environ, "HOODIE_FAULT_POINTS": point}, capture_output=True, text=True,
                          timeout=120).returncode


@pytest.mark.parametrize("version", [pytest.param("6", marks=pytest.mark.slow), "9"])
def test_a_kill_after_the_index_logs_is_repaired_by_the_next_commit(tmp_path: Path, version: str) -> None:
    """Killed after writing the index partitions' log files, before the metadata-table deltacommit
    completes: readers (with data skipping) read the state before, and the next write (rolling the
    killed one back) leaves every index equal to the files'."""
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": version}
    write_arrow(path, _rows([1, 2], "a", 1), mode="overwrite", options=o)
    write_arrow(path, _rows([5], "b", 1), options=o)
    assert _child(path, [9, 1], o, "metadata.indexes.after_log") != 0
    skip = {"hoodie.enable.data.skipping": "true"}
    for flt in ([("id", "=", 9)], [("x", ">=", 0)]):
        assert sorted(hoodie.read_table(path, filters=flt, options=skip).column("id").to_pylist()) == sorted(
            hoodie.read_table(path, filters=flt).column("id").to_pylist())
    write_arrow(path, _rows([3], "a", 6), options=o)
    _check(path, "after the kill")
    assert set(read_record_index(MetadataTable(HoodieTable(path)))) == {"1", "2", "3", "5"}


def test_time_travel_and_incremental_reads_do_not_prune_by_partition_stats(tmp_path: Path) -> None:
    """partition_stats describe the partitions' latest slices: an older snapshot's values may lie outside
    them, so a read as of an earlier instant (or an incremental one) must not prune partitions by them."""
    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.write.table.version": "9"}
    write_arrow(path, _rows([1, 2], "a", 1), mode="overwrite", options=o)  # x = 11, 21
    first = HoodieTable(path).timeline.completed_writes().last().completion  # 1.x time travel: completion times
    write_arrow(path, _rows([1, 2], "a", 500), options={**o, "hoodie.datasource.write.operation": "upsert"})
    skip = {"hoodie.enable.data.skipping": "true"}
    assert hoodie.read_table(path, filters=[("x", "=", 11)], options=skip).num_rows == 0
    old = hoodie.read_table(path, as_of=first, filters=[("x", "=", 11)], options=skip)
    assert old.column("id").to_pylist() == [1]
    inc = hoodie.read_table(path, query_type="incremental", begin="000", end=first, filters=[("x", "=", 11)],
                            options=skip)
    assert inc.column("id").to_pylist() == [1]


def test_validate_reports_a_wrong_record_index_and_wrong_partition_stats(tmp_path: Path, capsys,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """validate compares each index with the files: a key the files hold elsewhere (or not at all) and a
    partition whose statistics differ are reported, and the CLI exits 1 naming them."""
    from hoodie.interfaces.cli import main
    from hoodie.services.metadata import indexes, lifecycle

    path = str(tmp_path / "t")
    write_arrow(path, _rows([1, 2], "a", 1), mode="overwrite", options={**OPTS, "hoodie.write.table.version": "9"})
    assert main(["metadata", "validate", path]) == 0
    real_scan = indexes.RecordIndexWriter.scan_locations

    def moved(self, view):
        out = real_scan(self, view)
        out["1"] = [RI.RecordLocation("b", "elsewhere-0", 0)]
        out["7"] = [RI.RecordLocation("a", "other-0", 0)]
        return out

    real_expected = lifecycle.expected_partition_stats

    def wider(table):
        out = real_expected(table)
        for s in out.values():
            if s.column_name == "x":
                s.value_count += 1
        return out

    monkeypatch.setattr(indexes.RecordIndexWriter, "scan_locations", moved)
    monkeypatch.setattr(lifecycle, "expected_partition_stats", wider)
    capsys.readouterr()
    assert main(["metadata", "validate", path]) == 1
    out = capsys.readouterr().out
    assert "the record index differs from a key scan (2)" in out
    assert "1: recorded in 'a' file group" in out and "7: in 'a' file group other-0, not in the record index" in out
    assert "partition statistics differ from the files' own (1)" in out and "a x: recorded" in out


def test_record_index_refused_on_a_table_with_virtual_keys(tmp_path: Path) -> None:
    """A table with virtual keys stores no _hoodie_record_key: no record index can be built for it."""
    from tests.format.test_foreign_base_format import _virtual_keys

    path = str(tmp_path / "t")
    _virtual_keys(path, "COPY_ON_WRITE")
    write_arrow_opts = {"hoodie.metadata.enable": "true"}
    from hoodie.services.metadata import create_metadata_table
    create_metadata_table(HoodieTable(path), write_arrow_opts)
    with pytest.raises(Exception, match="virtual keys"):
        create_index(HoodieTable(path), "record_index")
    assert "record_index" not in HoodieTable(path).props["hoodie.table.metadata.partitions"]
