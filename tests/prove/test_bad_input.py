"""Bad input, one test per row of docs/bad-input.md: every case either fails with a message naming
what is wrong (before anything is committed) or is handled in a documented way; none loses data
silently."""

from __future__ import annotations

import difflib
import errno
import glob
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import hoodie
from hoodie.format import storage as S
from hoodie import write_arrow
from hoodie.errors import WriteError
from hoodie.format.slice.reader import ReadError
from hoodie.format.table import HoodieTable, TableError
from hoodie.services.clean import CleanError, run_clean
from hoodie.services.compaction import CompactionConfigError, run_compaction
from hoodie.services.ttl import TTLConfigError, run_ttl
from tests.hudi_rs import read_hudi_rs

COLS = ["k", "day", "ts", "v"]
EVENT_TTL = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME"}


def opts(op: str = "upsert", table_type: str = "MERGE_ON_READ", **extra: str) -> dict[str, str]:
    o = {
        "hoodie.table.name": "bad_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
    }
    o.update(extra)
    return o


def batch(rows: list[tuple[Any, Any, Any, Any]]) -> pa.Table:
    return pa.table({"k": pa.array([r[0] for r in rows], pa.string()),
                     "day": pa.array([r[1] for r in rows], pa.string()),
                     "ts": pa.array([r[2] for r in rows], pa.int64()),
                     "v": pa.array([r[3] for r in rows], pa.int64())})


def rows(path: str) -> list[tuple]:
    t = hoodie.read_table(path, columns=COLS)
    return sorted(tuple(r[c] for c in COLS) for r in t.to_pylist())


def instants(path: str) -> list[str]:
    return [str(i) for i in HoodieTable(path).timeline.instants]


@pytest.fixture()
def table(tmp_path: Path) -> str:
    """A MOR table: a base file and one log file in partition 2024-01-01, a base file in 2024-01-02."""
    path = str(tmp_path / "t")
    write_arrow(path, batch([("a", "2024-01-01", 1, 1), ("b", "2024-01-01", 1, 2), ("c", "2024-01-02", 1, 3)]),
                opts("insert"))
    write_arrow(path, batch([("a", "2024-01-01", 2, 10)]), opts())
    return path


# -- configuration ---------------------------------------------------------------------------------

def test_typo_key_spark_write_warns_with_suggestion(tmp_path: Path) -> None:
    import hoodie.spark as hs

    bad = {**opts("upsertt"), "hoodie.datasource.write.precombine.feild": "ts"}
    # The warning comes first; the bad operation then stops the write before Spark is touched.
    with pytest.warns(UserWarning, match=r"unknown option 'hoodie.datasource.write.precombine.feild' is ignored; "
                                         r"did you mean 'hoodie.datasource.write.precombine.field'\?"):
        with pytest.raises(WriteError, match="upsertt"):
            hs.write(None, str(tmp_path / "t"), bad)
    assert not (tmp_path / "t").exists()


def _warned_once(typo: str, key: str, call) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    texts = [str(w.message) for w in seen if w.category is UserWarning and "unknown option" in str(w.message)]
    assert texts == [f"unknown option {typo!r} is ignored; did you mean {key!r}?"], texts


def test_typo_keys_warn_at_every_entry_point(table: str) -> None:
    """write_arrow, run_ttl, run_clean, run_compaction, schedule_compaction: each names the unknown
    key and the closest known one, once (inline services do not repeat the write's warning)."""
    from hoodie.services.compaction import schedule_compaction

    _warned_once("hoodie.cleaner.polcy", "hoodie.cleaner.policy",
                 lambda: write_arrow(table, batch([("d", "2024-01-02", 1, 4)]),
                                     {**opts(), "hoodie.cleaner.polcy": "KEEP_LATEST_COMMITS"}))
    _warned_once("hoodie.partition.ttl.strategy.days.retian", "hoodie.partition.ttl.strategy.days.retain",
                 lambda: run_ttl(table, {"hoodie.partition.ttl.strategy.days.retain": "1",
                                         "hoodie.partition.ttl.strategy.days.retian": "30"}, dry_run=True))
    _warned_once("hoodie.cleaner.commits.retaind", "hoodie.cleaner.commits.retained",
                 lambda: run_clean(table, {"hoodie.cleaner.commits.retaind": "3"}, dry_run=True))
    _warned_once("hoodie.compaction.stratgy", "hoodie.compaction.strategy",
                 lambda: schedule_compaction(table, {"hoodie.compaction.stratgy": "UnBounded"}))
    _warned_once("hoodie.compaction.stratgy", "hoodie.compaction.strategy",
                 lambda: run_compaction(table, None, {"hoodie.compaction.stratgy": "UnBounded"}))


def test_typo_key_in_cli_set_is_one_warning_line(table: str, capsys: pytest.CaptureFixture[str]) -> None:
    from hoodie.interfaces.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["clean", table, "--dry-run", "--set", "hoodie.cleaner.comits.retained=3"]) == 0
    err = capsys.readouterr().err
    assert ("hoodie: warning: unknown option 'hoodie.cleaner.comits.retained' is ignored; "
            "did you mean 'hoodie.cleaner.commits.retained'?\n") in err


def test_typo_ttl_retention_key_is_not_silent(table: str) -> None:
    with pytest.warns(UserWarning, match="did you mean 'hoodie.partition.ttl.strategy.days.retain'"):
        with pytest.raises(TTLConfigError, match="no retention is set"):
            run_ttl(table, {**EVENT_TTL, "hoodie.partition.ttl.strategy.days.retian": "30"})


@pytest.mark.parametrize("bad, message", [
    ({"hoodie.datasource.write.operation": "upsertt"},
     "hoodie.datasource.write.operation='upsertt' is not one of insert"),
    ({"hoodie.datasource.write.table.type": "COPY_ON_WRITE"},
     "hoodie.datasource.write.table.type=COPY_ON_WRITE but the table at .* is MERGE_ON_READ"),
    ({"hoodie.datasource.write.table.type": "MERGE_ON_REED"}, "table.type='MERGE_ON_REED' is not one of COPY_ON_WRITE, MERGE_ON_READ"),
    ({"hoodie.parquet.max.file.size": "120MB"}, "hoodie.parquet.max.file.size='120MB' is not an integer"),
    ({"hoodie.parquet.compression.codec": "lzo"}, "Arrow has no LZO codec"),
    ({"hoodie.parquet.compression.codec": "snapy"}, "codec='snapy' is not a supported codec; use one of brotli"),
    ({"hoodie.logfile.data.block.format": "orc"}, "hoodie.logfile.data.block.format='orc' is not a log block format; use avro or parquet"),
    ({"hoodie.index.type": "BUCKET"}, r"hoodie.index.type='BUCKET' is not an index type hoodie implements \(a bucket "
                                      r"index .* Use BLOOM or SIMPLE .* GLOBAL_SIMPLE or RECORD_INDEX .*\); use one of "
                                      r"BLOOM, SIMPLE, GLOBAL_BLOOM, GLOBAL_SIMPLE, RECORD_INDEX"),
    ({"hoodie.index.type": "HBASE"}, r"'HBASE' is not an index type hoodie implements \(an external index"),
])
def test_wrong_write_option_values_are_refused_before_anything_is_written(table: str, bad: dict, message: str) -> None:
    before_instants, before_rows = instants(table), rows(table)
    files = sorted(glob.glob(f"{table}/**", recursive=True))
    with pytest.raises(WriteError, match=message):
        write_arrow(table, batch([("a", "2024-01-01", 3, 30)]), {**opts(), **bad})
    assert instants(table) == before_instants and rows(table) == before_rows
    assert sorted(glob.glob(f"{table}/**", recursive=True)) == files


def test_uncompressed_codec_is_accepted(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([("a", "d", 1, 1)]), opts("insert", "COPY_ON_WRITE",
                                                     **{"hoodie.parquet.compression.codec": "uncompressed"}))
    assert rows(path) == [("a", "d", 1, 1)]


@pytest.mark.parametrize("bad, error, message", [
    ({"hoodie.clean.automatic": "yes"}, ValueError, "hoodie.clean.automatic='yes' is not a boolean; use true or false"),
    ({"hoodie.cleaner.commits.retained": "0"}, CleanError, "must be at least 1"),
    ({"hoodie.partition.ttl.inline": "true", "hoodie.partition.ttl.strategy.days.retain": "0"}, TTLConfigError,
     "days.retain=0 keeps nothing"),
    ({"hoodie.compact.inline": "true", "hoodie.compaction.strategy": "EventTimeBased2"}, CompactionConfigError,
     "hoodie.compaction.strategy='EventTimeBased2' is unknown"),
])
def test_inline_service_misconfiguration_is_refused_before_the_commit(table: str, bad: dict, error: type,
                                                                     message: str) -> None:
    """Inline services run after the commit; their settings are checked before it, so the error never
    comes with the data already committed (a retried insert would duplicate it)."""
    before_instants, before_rows = instants(table), rows(table)
    with pytest.raises(error, match=message):
        write_arrow(table, batch([("d", "2024-01-01", 3, 30)]), {**opts(), **bad})
    assert instants(table) == before_instants and rows(table) == before_rows


@pytest.mark.parametrize("key", ["hoodie.table.ordering.fields", "hoodie.table.precombine.field"])
def test_ordering_field_by_the_table_config_key(tmp_path: Path, key: str) -> None:
    """A write naming the ordering field by Hudi 1.1's table key (``HoodieTableConfig.ORDERING_FIELDS``, as
    Hudi's TestDeleteTable writes) creates the table with it, and an upsert keeps the greatest value. Before,
    the key was ignored: a table without ordering field, and the later (smaller) value won."""
    path = str(tmp_path / "t")
    o = opts()
    del o["hoodie.datasource.write.precombine.field"]
    write_arrow(path, batch([("a", "2024-01-01", 5, 1)]), {**o, key: "ts"})
    assert HoodieTable(path).precombine_field == "ts"
    write_arrow(path, batch([("a", "2024-01-01", 3, 2)]), {**o, key: "ts"})
    assert rows(path) == [("a", "2024-01-01", 5, 1)]
    with pytest.raises(WriteError, match="the ordering field is given twice, differently"):
        write_arrow(path, batch([("a", "2024-01-01", 9, 3)]), {**o, "hoodie.table.ordering.fields": "ts",
                                                               "hoodie.table.precombine.field": "v"})


@pytest.mark.parametrize("key", ["hoodie.compact.inline", "hoodie.compact.schedule.inline"])
def test_inline_compaction_on_copy_on_write_is_refused_before_the_commit(tmp_path: Path, key: str) -> None:
    """Hudi's copy-on-write table throws "Compaction is not supported on a CopyOnWrite table" from the inline
    service after the commit; hoodie refuses before anything is written (before: silently ignored)."""
    path = str(tmp_path / "t")
    cow = opts("insert", "COPY_ON_WRITE")
    write_arrow(path, batch([("a", "2024-01-01", 1, 1)]), cow)
    before = instants(path)
    with pytest.raises(WriteError, match=f"Compaction is not supported on a CopyOnWrite table: {key}=true"):
        write_arrow(path, batch([("b", "2024-01-01", 1, 2)]), {**cow, key: "true"})
    assert instants(path) == before and rows(path) == [("a", "2024-01-01", 1, 1)]


@pytest.mark.parametrize("days, message", [
    ("0", "days.retain=0 keeps nothing"),
    ("-3", "days.retain=-3 keeps nothing"),
    ("thirty", "days.retain='thirty' is not a whole number of days"),
])
def test_ttl_retention_must_be_positive(table: str, days: str, message: str) -> None:
    with pytest.raises(TTLConfigError, match=message):
        run_ttl(table, {**EVENT_TTL, "hoodie.partition.ttl.strategy.days.retain": days})
    assert rows(table) == [("a", "2024-01-01", 2, 10), ("b", "2024-01-01", 1, 2), ("c", "2024-01-02", 1, 3)]


@pytest.mark.parametrize("bad, message", [
    ({"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_TIMES"}, "is not a TTL strategy type; use one of"),
    ({"hoodie.partition.ttl.strategy.event.time.format": "yyyy-QQ"}, "pattern letter 'Q' is not supported"),
])
def test_ttl_unknown_strategy_and_pattern(table: str, bad: dict, message: str) -> None:
    with pytest.raises(TTLConfigError, match=message):
        run_ttl(table, {**EVENT_TTL, "hoodie.partition.ttl.strategy.days.retain": "30", **bad})


def test_ttl_malformed_partition_values(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([("a", "2024-01-01", 1, 1), ("b", "2024-13-45", 1, 2), ("c", "yesterday", 1, 3)]),
                opts("insert"))
    cfg = {**EVENT_TTL, "hoodie.partition.ttl.strategy.days.retain": "30"}
    res = run_ttl(path, cfg)
    assert res.expired_partitions == ["2024-01-01"]
    kept = {d.partition: d.reason for d in res.decisions if d.partition != "2024-01-01"}
    assert set(kept) == {"2024-13-45", "yesterday"}
    assert all("does not match hoodie.partition.ttl.strategy.event.time.format='yyyy-MM-dd'" in r
               for r in kept.values())
    assert "skips partition yesterday" in caplog.text and "skips partition 2024-13-45" in caplog.text
    # A format that parses no partition at all is a configuration error, not "nothing expired".
    with pytest.raises(TTLConfigError, match="parses no partition with .*format='yyyyMMdd'"):
        run_ttl(path, {**cfg, "hoodie.partition.ttl.strategy.event.time.format": "yyyyMMdd"})
    assert sorted(r[0] for r in rows(path)) == ["b", "c"]


@pytest.mark.parametrize("bad, message", [
    ({"hoodie.cleaner.policy": "KEEP_LATEST_COMMIT"}, "is not a cleaning policy; use one of KEEP_LATEST_COMMITS"),
    ({"hoodie.cleaner.commits.retained": "ten"}, "hoodie.cleaner.commits.retained='ten' is not an integer"),
    ({"hoodie.cleaner.fileversions.retained": "0"}, "hoodie.cleaner.fileversions.retained=0 must be at least 1"),
])
def test_clean_bad_values(table: str, bad: dict, message: str) -> None:
    files = sorted(glob.glob(f"{table}/**", recursive=True))
    with pytest.raises(CleanError, match=message):
        run_clean(table, bad)
    assert sorted(glob.glob(f"{table}/**", recursive=True)) == files


@pytest.mark.parametrize("bad, message", [
    # The trigger (5 delta commits by default) is not met: the misspelled strategy still fails.
    ({"hoodie.compaction.strategy": "EventTimeBasedCompactionStrateg"}, "is unknown; use one of LogFileSizeBased"),
    ({"hoodie.compaction.strategy": "EventTimeBased", "hoodie.compaction.event.time.threshold": "yesterday"},
     "threshold='yesterday' is neither epoch milliseconds nor ISO-8601"),
])
def test_compaction_bad_values(table: str, bad: dict, message: str) -> None:
    with pytest.raises(CompactionConfigError, match=message):
        run_compaction(table, None, bad, schedule_if_none=True)
    assert not HoodieTable(table).timeline.pending_compactions().instants


# -- data ------------------------------------------------------------------------------------------

def test_schema_type_change_names_the_column(table: str) -> None:
    bad = batch([("a", "2024-01-01", 3, 0)]).set_column(3, "v", pa.array(["thirty"]))
    with pytest.raises(WriteError, match="column 'v' has type string in the new data but int64 in the table"):
        write_arrow(table, bad, opts())


def test_missing_record_key_column_names_it(table: str) -> None:
    bad = batch([("a", "2024-01-01", 3, 30)]).rename_columns(["key", "day", "ts", "v"])
    with pytest.raises(ValueError, match="record key field 'k' is not a column of the table; available columns: key"):
        write_arrow(table, bad, opts())


def test_null_record_key_names_the_field(table: str) -> None:
    before = instants(table)
    with pytest.raises(ValueError, match="record key field 'k' is null or empty in 1 of 2 rows"):
        write_arrow(table, batch([("x", "2024-01-01", 3, 30), (None, "2024-01-01", 3, 31)]), opts())
    with pytest.raises(WriteError, match="1 record\\(s\\) have a null precombine field 'ts'"):
        write_arrow(table, batch([("x", "2024-01-01", None, 30)]), opts())
    assert instants(table) == before


@pytest.mark.parametrize("op, extra, expected", [
    ("upsert", {}, [("a", 9, 90), ("b", 1, 1)]),
    ("insert", {"hoodie.combine.before.insert": "true"}, [("a", 9, 90), ("b", 1, 1)]),
    # Hudi's insert does not de-duplicate by default: both versions of "a" are written.
    ("insert", {}, [("a", 5, 50), ("a", 9, 90), ("b", 1, 1)]),
])
def test_duplicate_keys_in_one_batch(tmp_path: Path, op: str, extra: dict, expected: list) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([("a", "d", 5, 50), ("a", "d", 9, 90), ("b", "d", 1, 1)]), opts(op, **extra))
    assert [(k, ts, v) for k, _, ts, v in rows(path)] == expected
    assert sorted((r["k"], r["ts"], r["v"]) for r in read_hudi_rs(path).to_pylist()) == expected


def test_null_partition_value_goes_to_the_default_partition(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, batch([("a", None, 1, 1)]), opts("insert"))
    (row,) = hoodie.read_table(path).to_pylist()
    assert row["_hoodie_partition_path"] == "__HIVE_DEFAULT_PARTITION__" and row["k"] == "a"


# -- timeline and files ----------------------------------------------------------------------------

def test_future_instant_on_the_timeline(table: str, caplog: pytest.LogCaptureFixture) -> None:
    import datetime as dt

    today = dt.datetime.now().strftime("%Y-%m-%d")
    future = write_arrow(table, batch([("d", today, 1, 4)]), opts(), instant="29990101000000000")
    nxt = write_arrow(table, batch([("b", "2024-01-01", 5, 20)]), opts())
    assert future == "29990101000000000" and nxt > future
    expected = [("a", "2024-01-01", 2, 10), ("b", "2024-01-01", 5, 20), ("c", "2024-01-02", 1, 3), ("d", today, 1, 4)]
    assert rows(table) == expected
    assert sorted(tuple(r[c] for c in COLS) for r in read_hudi_rs(table).to_pylist()) == expected
    # TTL commits after the future instant but measures ages from the clock: today's partition stays.
    res = run_ttl(table, {**EVENT_TTL, "hoodie.partition.ttl.strategy.days.retain": "30"})
    assert res.instant > nxt
    assert sorted(res.expired_partitions) == ["2024-01-01", "2024-01-02"]
    assert "holds an instant from the future" in caplog.text
    assert rows(table) == [("d", today, 1, 4)]


def _log_files(path: str) -> list[str]:
    return sorted(glob.glob(f"{path}/2024-01-01/.*.log.*"))


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_log_block_warns_and_skips(table: str, damage: str) -> None:
    (log,) = _log_files(table)
    if damage == "truncate":
        with open(log, "r+b") as f:
            f.truncate(os.path.getsize(log) - 30)
    else:
        Path(log).write_bytes(b"not a hudi log block" * 5)
    with pytest.warns(UserWarning, match=re.escape(os.path.basename(log)) + ": corrupt log block at offset 0"):
        got = rows(table)
    # The update in the damaged block cannot be read: the previous version is returned, loudly.
    assert got == [("a", "2024-01-01", 1, 1), ("b", "2024-01-01", 1, 2), ("c", "2024-01-02", 1, 3)]


@pytest.mark.parametrize("content", [b"", b"this is not parquet" * 10])
def test_garbage_base_file_names_the_file(table: str, content: bytes) -> None:
    (base,) = glob.glob(f"{table}/2024-01-02/*.parquet")
    Path(base).write_bytes(content)
    with pytest.raises(ReadError, match=f"base file {re.escape(base)} is not readable Parquet"):
        hoodie.read_table(table)
    # An upsert into that file group reads the same file to find its keys: the same clear error.
    with pytest.raises(ReadError, match=re.escape(os.path.basename(base))):
        write_arrow(table, batch([("c", "2024-01-02", 5, 30)]), opts("upsert", "MERGE_ON_READ"))


def test_unreadable_commit_metadata_names_the_file(table: str) -> None:
    commit = sorted(glob.glob(f"{table}/.hoodie/*.deltacommit"))[-1]
    Path(commit).write_text("{not json")
    with pytest.raises(ValueError, match=re.escape(commit) + ": commit metadata is not valid JSON"):
        hoodie.read_table(table)


class _Denying(pafs.FileSystemHandler):
    """The local filesystem, except that everything under ``denied`` raises PermissionError (EACCES),
    as a folder with mode 000 does for a non-root user (the tests run as root, where chmod does not
    restrict)."""

    def __init__(self, local: pafs.FileSystem, denied: str) -> None:
        self.fs = local
        self.denied = denied

    def _check(self, path: str) -> None:
        if path == self.denied or path.startswith(self.denied + "/"):
            raise PermissionError(errno.EACCES, "Permission denied", path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Denying) and other.denied == self.denied

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return "denying"

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        for p in paths:
            self._check(p)
        return self.fs.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        self._check(selector.base_dir)
        return self.fs.get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self._check(path)
        self.fs.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self._check(path)
        self.fs.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._check(path)
        self.fs.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", "/")

    def delete_file(self, path: str) -> None:
        self._check(path)
        self.fs.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self._check(src)
        self._check(dest)
        self.fs.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self._check(src)
        self._check(dest)
        self.fs.copy_file(src, dest)

    def open_input_stream(self, path: str) -> Any:
        self._check(path)
        return self.fs.open_input_stream(path)

    def open_input_file(self, path: str) -> Any:
        self._check(path)
        return self.fs.open_input_file(path)

    def open_output_stream(self, path: str, metadata: Optional[dict]) -> Any:
        self._check(path)
        return self.fs.open_output_stream(path)

    def open_append_stream(self, path: str, metadata: Optional[dict]) -> Any:
        self._check(path)
        return self.fs.open_append_stream(path)


def _deny(monkeypatch: pytest.MonkeyPatch, folder: str) -> None:
    init = S.Storage.__init__

    def denying_init(self: S.Storage, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if self.is_local:
            self.fs = pafs.PyFileSystem(_Denying(self.fs, os.path.abspath(folder)))

    monkeypatch.setattr(S.Storage, "__init__", denying_init)


def test_permission_denied_on_a_partition_is_raised_not_skipped(table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = rows(table)
    files = sorted(glob.glob(f"{table}/**", recursive=True))
    denied = f"{table}/2024-01-01"
    with monkeypatch.context() as m:
        _deny(m, denied)
        with pytest.raises(PermissionError, match=re.escape(denied)):
            hoodie.read_table(table)
        with pytest.raises(PermissionError, match=re.escape(denied)):
            run_ttl(table, {**EVENT_TTL, "hoodie.partition.ttl.strategy.days.retain": "30"})
        with pytest.raises(PermissionError, match=re.escape(denied)):
            run_clean(table, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                              "hoodie.cleaner.fileversions.retained": "1"})
    # Nothing was deleted or committed while the folder could not be read.
    assert sorted(glob.glob(f"{table}/**", recursive=True)) == files and rows(table) == before


def test_permission_denied_on_the_metadata_folder(table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _deny(monkeypatch, f"{table}/.hoodie")
    with pytest.raises(S.StorageError, match=r"cannot read .*hoodie.properties: \[Errno 13\] Permission denied"):
        hoodie.read_table(table)


def test_not_a_hudi_table(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "data.parquet").write_bytes(b"x")
    for p in (tmp_path / "plain", tmp_path / "missing"):
        with pytest.raises(TableError, match=f"{re.escape(str(p))} is not a Hudi table: .hoodie/hoodie.properties "
                                             "is missing"):
            hoodie.read_table(str(p))


@pytest.mark.parametrize("version", ["5", "7", "8", "10"])
def test_other_table_versions_are_refused(table: str, tmp_path: Path, version: str) -> None:
    """Versions hoodie does not know are refused for reads and writes, and a version-8 table must have
    timeline layout 2 (this one is a v6 table relabelled)."""
    props = Path(table) / ".hoodie" / "hoodie.properties"
    props.write_text(re.sub(r"hoodie.table.version=\d+", f"hoodie.table.version={version}", props.read_text()))
    if version == "8":
        msg = "is table version 8 with timeline layout 1; Hudi writes layout 2"
    else:
        msg = f"is table version {version}; hoodie reads and writes table versions 6 .*, 8 .* and 9"
    with pytest.raises(TableError, match=msg):
        hoodie.read_table(table)
    with pytest.raises(TableError, match=msg):
        write_arrow(table, batch([("a", "2024-01-01", 3, 30)]), opts())


@pytest.mark.parametrize("content", ["", "garbage\n", "hoodie.table.name=bad_t\nhoodie.table.version=6\n"])
def test_damaged_properties_are_refused(table: str, content: str) -> None:
    """Without hoodie.table.type a damaged MOR table would pass for copy-on-write, and the next write
    would rewrite base files without the updates held in its log files."""
    backup = Path(table).parent / "props.bak"
    props = Path(table) / ".hoodie" / "hoodie.properties"
    shutil.copy(props, backup)
    props.write_text(content)
    with pytest.raises(TableError, match="hoodie.properties is damaged: it lacks .*hoodie.table.type"):
        write_arrow(table, batch([("a", "2024-01-01", 3, 30)]), {k: v for k, v in opts().items()
                                                                  if k != "hoodie.datasource.write.table.type"})
    shutil.copy(backup, props)
    assert rows(table)[0] == ("a", "2024-01-01", 2, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the restored table reads cleanly
        assert len(rows(table)) == 3


def test_every_row_of_the_bad_input_table_names_an_existing_test() -> None:
    """docs/bad-input.md and the tests stay in step: each row's test exists somewhere under tests/
    (a module-level function or a method of a test class)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "bad-input.md").read_text()
    here = "".join(p.read_text() for p in sorted(Path(__file__).resolve().parents[1].rglob("test_*.py")))
    rows_ = [l for l in doc.splitlines() if l.startswith("| ") and not l.startswith("| input") and "---" not in l]
    assert len(rows_) >= 25
    for row in rows_:
        named = re.findall(r"`(test_\w+)`", row.rsplit("|", 2)[-2])
        if not named:
            assert row.rsplit("|", 2)[-2].strip() == "same", row  # "same": the test of the row above
        for name in named:
            assert re.search(rf"^\s*def {name}\(", here, re.M), f"{name} (docs/bad-input.md) does not exist"


@pytest.mark.parametrize("version", ["5", "7", "10"])
def test_asking_for_an_unknown_table_version_is_refused(tmp_path: Path, version: str) -> None:
    """hoodie writes versions 6, 8 and 9: another is refused before anything is written, not silently
    written as a version-6 table."""
    path = tmp_path / "t"
    with pytest.raises(WriteError, match=f"hoodie.write.table.version={version}: hoodie writes table versions 6"):
        write_arrow(str(path), batch([("a", "2024-01-01", 3, 30)]), {**opts(), "hoodie.write.table.version": version})
    assert not path.exists()


def test_a_write_cannot_change_the_table_version(table: str) -> None:
    """Asking for 9 on a version-6 table would need Hudi's upgrade: refused, nothing written."""
    before = rows(table)
    with pytest.raises(WriteError, match="table version 6; hoodie neither upgrades nor downgrades"):
        write_arrow(table, batch([("a", "2024-01-01", 3, 30)]), {**opts(), "hoodie.write.table.version": "9"})
    assert rows(table) == before


@pytest.mark.parametrize("payload", ["org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload",
                                     "org.apache.hudi.common.model.PartialUpdateAvroPayload",
                                     "org.apache.hudi.common.model.AWSDmsAvroPayload",
                                     "com.example.MyPayload"])
def test_payloads_hoodie_cannot_merge_are_refused(table: str, tmp_path: Path, payload: str) -> None:
    """A payload whose merge is not "greatest ordering value" or "latest write" (null fields keeping
    older values, delete markers in a column) was read as one of those: other rows than Hudi's. Now
    refused for reads, writes and new tables, naming the class, before anything is written."""
    new = tmp_path / "new"
    with pytest.raises(WriteError, match=f"merges records with {re.escape(payload)}"):
        write_arrow(str(new), batch([("a", "2024-01-01", 3, 30)]),
                    {**opts(), "hoodie.datasource.write.payload.class": payload})
    assert not new.exists()
    props = Path(table) / ".hoodie" / "hoodie.properties"
    text = re.sub(r"hoodie.compaction.payload.class=.*", "", props.read_text())
    props.write_text(text + f"hoodie.compaction.payload.class={payload}\n")
    listing = sorted(str(p) for p in Path(table).rglob("*"))
    with pytest.raises(TableError, match=f"merges records with {re.escape(payload)}"):
        hoodie.read_table(table)
    with pytest.raises(TableError, match=f"merges records with {re.escape(payload)}"):
        write_arrow(table, batch([("a", "2024-01-01", 3, 30)]), opts())
    assert sorted(str(p) for p in Path(table).rglob("*")) == listing


def test_hudi_11_partial_update_modes_are_refused(table: str) -> None:
    """Hudi 1.1 carries those payloads as hoodie.table.partial.update.mode / merge properties."""
    props = Path(table) / ".hoodie" / "hoodie.properties"
    base = props.read_text()
    for extra in ("hoodie.table.partial.update.mode=IGNORE_DEFAULTS\n",
                  "hoodie.table.merge.properties.hoodie.payload.delete.field=Op\n"):
        props.write_text(base + extra)
        with pytest.raises(TableError, match="hoodie does not merge that way"):
            hoodie.read_table(table)
    props.write_text(base + "hoodie.table.partial.update.mode=NONE\n")
    assert rows(table)
