"""Writes a hostile user broke (issue 12), on the Spark writer (``hoodie.spark.write``); the
pure-Python twins are in tests/format/test_hostile_writes.py."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import tests.format.test_hostile_writes as HW

import hoodie
from hoodie.errors import PostCommitError, WriteError
from hoodie.format.table import HoodieTable
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark


def _opts(table_type: str, **extra: str) -> dict[str, str]:
    o = {"hoodie.table.name": "shw", "hoodie.datasource.write.recordkey.field": "k",
         "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.table.type": table_type, "hoodie.clean.automatic": "false"}
    o.update(extra)
    return o


# The pure-Python twins' helpers: every file under a path, rows by key.
_files, _by_key = HW._files, HW._by_key


def _both(path: str, cols: list[str]) -> tuple[dict, dict]:
    return _by_key(hoodie.read_table(path), cols), _by_key(read_hudi_rs(path), cols)


ROWS = "k long, p string, ts long, v string"


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ"])
def test_spark_overwrite_mode_validates_first_and_replaces(spark, tmp_path: Path, table_type: str) -> None:
    """Item 2: a misspelt operation, an unsupported codec, a null record key or a changed table
    configuration with mode="overwrite" leave the old table as it was (it used to be deleted first);
    a good overwrite is an insert_overwrite_table replacecommit, with the old data still in history."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    o = _opts(table_type)
    hs.write(spark.createDataFrame([(1, "a", 1, "x1"), (2, "b", 1, "x2")], ROWS), path, o)
    hs.write(spark.createDataFrame([(2, "b", 2, "y2")], ROWS), path, o)
    old = {1: ("a", "x1"), 2: ("b", "y2")}
    files = _files(path)
    before = HoodieTable(path).timeline.completed_writes().last().timestamp
    other_type = "MERGE_ON_READ" if table_type == "COPY_ON_WRITE" else "COPY_ON_WRITE"
    good = spark.createDataFrame([(7, "c", 1, "n7")], ROWS)
    for bad, df, error, message in [
        ({"hoodie.datasource.write.operation": "upsertt"}, good, WriteError, "operation='upsertt' is not one of"),
        ({"hoodie.parquet.compression.codec": "lzo"}, good, WriteError, "Arrow has no LZO codec"),
        ({}, spark.createDataFrame([(7, "c", 1, "n7"), (None, "c", 1, "n8")], ROWS), ValueError,
         "record key field 'k' is null or empty in 1 of"),
        ({"hoodie.datasource.write.table.type": other_type}, good, WriteError, "delete the table first"),
    ]:
        with pytest.raises(error, match=message):
            hs.write(df, path, {**o, **bad}, mode="overwrite")
        assert _files(path) == files, bad
        assert _both(path, ["p", "v"]) == (old, old), bad
    c = hs.write(good, path, o, mode="overwrite")
    t = HoodieTable(path)
    assert t.timeline.get(c).action == "replacecommit" and t.table_type == table_type
    assert _both(path, ["p", "v"]) == ({7: ("c", "n7")}, {7: ("c", "n7")})
    assert _by_key(hoodie.read_table(path, as_of=before), ["p", "v"]) == old


def test_spark_bad_records_are_refused_before_anything_is_written(spark, tmp_path: Path) -> None:
    """Items 11 and 12 on Spark: a batch lacking a table column and composite keys whose values
    contain ',' are refused before a commit starts; the opt-in writes the missing column as null."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    o = _opts("MERGE_ON_READ", **{"hoodie.datasource.write.recordkey.field": "k,v"})
    hs.write(spark.createDataFrame([(1, "a", 1, "x")], ROWS), path, o)
    files = _files(path)
    clash = spark.createDataFrame([(1, "a", 2, "x,k:1"), (1, "a", 2, "y")], ROWS)
    with pytest.raises(ValueError, match=r"record key field 'v' has the value 'x,k:1'.*Fix: replace the ','"):
        hs.write(clash, path, o)
    assert _files(path) == files
    o2 = _opts("COPY_ON_WRITE")
    path2 = str(tmp_path / "t2")
    hs.write(spark.createDataFrame([(1, "a", 1, "x"), (2, "a", 1, "y")], ROWS), path2, o2)
    no_v = spark.createDataFrame([(1, "a", 2)], "k long, p string, ts long")
    with pytest.raises(WriteError, match=r"lacks the table column\(s\) \['v'\].*set.null.for.missing.columns=true"):
        hs.write(no_v, path2, o2)
    hs.write(no_v, path2, {**o2, "hoodie.write.set.null.for.missing.columns": "true"})
    assert _both(path2, ["v"]) == ({1: (None,), 2: ("y",)}, {1: (None,), 2: ("y",)})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_widening_and_soft_deletes(spark, tmp_path: Path, table_type: str) -> None:
    """Items 6 and 8 on Spark: int->long / float->double widen exactly; _hoodie_is_deleted rows
    delete (newer), are ignored (older than the stored version) or are never inserted (new key)."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    o = _opts(table_type, **{"hoodie.datasource.write.payload.class":
                             "org.apache.hudi.common.model.DefaultHoodieRecordPayload"})
    narrow = "k long, p string, ts long, i int, f float, _hoodie_is_deleted boolean"
    wide = "k long, p string, ts long, i long, f double, _hoodie_is_deleted boolean"
    hs.write(spark.createDataFrame([(1, "a", 1, 1, 0.5, False), (2, "a", 1, 2, 0.25, False),
                                    (3, "a", 1, 3, 0.1, False)], narrow), path, o)
    hs.write(spark.createDataFrame([(1, "a", 2, 2 ** 40, 1e300, False), (2, "a", 2, 0, 0.0, True),
                                    (3, "a", 0, 0, 0.0, True), (4, "a", 2, 4, 0.1, True)], wide), path, o)
    expected = {1: (2 ** 40, 1e300), 3: (3, 0.1)}
    assert _both(path, ["i", "f"]) == (expected, expected)
    for t in (hoodie.read_table(path), read_hudi_rs(path)):
        assert t.schema.field("i").type == pa.int64() and t.schema.field("f").type == pa.float64()


def test_spark_inline_service_failure_after_commit(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 10 on Spark: the automatic clean failing after the commit raises PostCommitError naming
    the committed instant; the rows are in the table."""
    import hoodie.services.clean.executor as clean_executor
    import hoodie.spark as hs
    from hoodie.services.clean import CleanError

    path = str(tmp_path / "t")
    o = _opts("COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "insert"})
    hs.write(spark.createDataFrame([(1, "a", 1, "x")], ROWS), path, o)

    def broken(*a: object, **k: object) -> None:
        raise CleanError("the cleaner cannot plan (injected)")

    monkeypatch.setattr(clean_executor, "plan_clean", broken)
    with pytest.raises(PostCommitError, match=r"committed as instant \d+ .*inline clean failed.*do not retry") as info:
        hs.write(spark.createDataFrame([(2, "a", 1, "y")], ROWS), path, {**o, "hoodie.clean.automatic": "true"})
    assert info.value.instant == HoodieTable(path).timeline.completed_writes().last().timestamp
    assert info.value.service == "clean"
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == [1, 2]
