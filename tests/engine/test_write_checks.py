"""The Spark writer's record checks: the native aggregation that proves a batch valid
(``_proven_valid``) never accepts a batch the writer's own checks (``prepare_records``) refuse, and a
refused batch fails with the writer's message before anything is written."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.engine.write import _key_columns, _proven_valid
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.prepare import prepare_records

pytestmark = pytest.mark.spark
SCHEMA = "k string, n long, p string, ts long, ev timestamp, v string"
UTC = dt.timezone.utc


def _opts(key: str = "k", **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "wc", "hoodie.datasource.write.recordkey.field": key,
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.payload.event.time.field": "ev", "hoodie.datasource.write.operation": "upsert", **extra}


def _python_verdict(df, cfg: WriteConfig):
    """None when the writer's checks accept every row, else the error they raise."""
    try:
        prepare_records(df.select(*_key_columns(cfg, df.columns)).toArrow(), cfg)
    except Exception as e:  # noqa: BLE001 - the verdict is the error itself
        return e
    return None


GOOD = ("a", 1, "2024-01-01", 5, dt.datetime(2024, 1, 1, 12, tzinfo=UTC), "x")


BAD_ROWS = [
    (("", 1, "2024-01-01", 5, GOOD[4], "x"), "k"),              # empty string key
    ((None, 1, "2024-01-01", 5, GOOD[4], "x"), "k"),            # null string key
    (("a", None, "2024-01-01", 5, GOOD[4], "x"), "n"),          # null integer key
    (("a", 1, "2024-01-01", None, GOOD[4], "x"), "k"),          # null precombine value
    (("a", 1, "2024/01/01/../x", 5, GOOD[4], "x"), "k"),        # partition path climbing out
    (("a", 1, "..", 5, GOOD[4], "x"), "k"),                     # partition path "."/".."
]


def test_a_bad_row_is_never_proven_valid(spark) -> None:
    for row, key in BAD_ROWS:
        df = spark.createDataFrame([GOOD, row], SCHEMA)
        cfg = WriteConfig.from_options(_opts(key))
        assert not _proven_valid(df.select(*_key_columns(cfg, df.columns)), cfg), row
        assert not _proven_valid(df.select(*_key_columns(cfg, df.columns)), cfg, small=True), row
        assert _python_verdict(df, cfg) is not None, row


@pytest.mark.parametrize("row,key", [BAD_ROWS[0], BAD_ROWS[4]])
def test_a_bad_row_fails_as_the_writer_says_before_writing(spark, tmp_path: Path, row, key) -> None:
    import hoodie.spark as hs

    df = spark.createDataFrame([GOOD, row], SCHEMA)
    cfg = WriteConfig.from_options(_opts(key))
    expected = _python_verdict(df, cfg)
    assert expected is not None
    path = tmp_path / "t"
    with pytest.raises(type(expected)) as got:
        hs.write(df, str(path), _opts(key))
    # The same message (the Spark job counts rows per batch: "1 of 1" where the whole input has "1 of 2").
    assert re.sub(r"\d+ of \d+", "N of M", str(expected).splitlines()[0]) in re.sub(r"\d+ of \d+", "N of M", str(got.value))
    assert not list(path.rglob("*.parquet")) and not list(path.rglob("*.log.*"))


def test_clean_batches_of_the_common_shape_skip_the_python_job(spark) -> None:
    df = spark.createDataFrame([GOOD, ("b", 2, "2024-01-02", 6, dt.datetime(2024, 1, 2, tzinfo=UTC), None)], SCHEMA)
    for key in ("k", "n"):
        cfg = WriteConfig.from_options(_opts(key))
        assert _proven_valid(df.select(*_key_columns(cfg, df.columns)), cfg)
    # Shapes it does not decide go to the Python job: composite keys, string event times.
    for opts in (_opts("k,n"), _opts(**{"hoodie.payload.event.time.field": "v"})):
        cfg = WriteConfig.from_options(opts)
        assert not _proven_valid(df.select(*_key_columns(cfg, df.columns)), cfg)


@pytest.mark.parametrize("ts_values,proven", [
    ([1_700_000_000_000, 1_700_000_100_000], True),   # milliseconds, both plausible
    ([1_700_000_000, 1_700_000_100], False),           # seconds in a milliseconds column: refused
    ([0, 1_700_000_000_000], False),                   # an extreme outside 1971-2200: the Python job decides
])
def test_numeric_event_times_are_proven_only_when_both_extremes_are_plausible(spark, tmp_path: Path, ts_values,
                                                                               proven) -> None:
    import hoodie.spark as hs

    df = spark.createDataFrame([(f"k{i}", i, "p", v, None, "x") for i, v in enumerate(ts_values)], SCHEMA)
    opts = _opts(**{"hoodie.payload.event.time.field": "ts"})
    cfg = WriteConfig.from_options(opts)
    assert _proven_valid(df.select(*_key_columns(cfg, df.columns)), cfg) is proven
    verdict = _python_verdict(df, cfg)
    if proven:
        assert verdict is None
    elif verdict is not None:  # refused before anything is written, with the writer's message
        with pytest.raises(type(verdict), match="event time field 'ts'"):
            hs.write(df, str(tmp_path / "t"), opts)
        assert not list((tmp_path / "t").rglob("*.parquet"))


_keys = st.one_of(st.none(), st.just(""), st.text(alphabet="ab/ .", min_size=1, max_size=3))
_parts = st.one_of(st.none(), st.just(""), st.sampled_from(["2024-01-01", "a/b", "..", ".", "a/../b", " x", "%2F"]))
_events = st.one_of(st.none(), st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30),
                                             timezones=st.just(UTC)))
_rows = st.lists(st.tuples(_keys, st.one_of(st.none(), st.integers(-5, 5)), _parts,
                           st.one_of(st.none(), st.integers(0, 3)), _events, st.just("v")), min_size=1, max_size=6)


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=_rows, key=st.sampled_from(["k", "n"]))
def test_proven_valid_implies_the_writer_accepts(spark, rows, key) -> None:
    """The class behind the native check: whatever the keys, partition values and event times,
    a batch the aggregation calls valid is one the writer's checks accept."""
    df = spark.createDataFrame(rows, SCHEMA)
    cfg = WriteConfig.from_options(_opts(key))
    proven = _proven_valid(df.select(*_key_columns(cfg, df.columns)), cfg)
    # A small input aggregates in one task (no shuffle): the same verdict.
    assert _proven_valid(df.select(*_key_columns(cfg, df.columns)), cfg, small=True) is proven
    if proven:
        assert _python_verdict(df, cfg) is None


def test_a_spark_write_parses_its_options_once(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hoodie.spark.write parses the write config and each inline service's settings once (the hooks
    reuse what the check parsed); before, compaction's, clean's and archival's were parsed twice."""
    import collections

    import hoodie.spark
    from hoodie.services.archive.config import ArchivalConfig
    from hoodie.services.clean import CleanConfig
    from hoodie.services.compaction.config import CompactionConfig

    counts: collections.Counter = collections.Counter()
    for cls in (WriteConfig, CompactionConfig, CleanConfig, ArchivalConfig):
        original = cls.__dict__["from_options"].__func__

        def counted(c, *a, _original=original, _name=cls.__name__, **k):
            counts[_name] += 1
            return _original(c, *a, **k)

        monkeypatch.setattr(cls, "from_options", classmethod(counted))
    opts = _opts(**{"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true"})
    df = spark.createDataFrame([GOOD], SCHEMA)
    hoodie.spark.write(df, str(tmp_path / "t"), opts)
    counts.clear()
    hoodie.spark.write(df, str(tmp_path / "t"), opts)
    assert dict(counts) == {"WriteConfig": 1, "CompactionConfig": 1, "CleanConfig": 1, "ArchivalConfig": 1}



@pytest.mark.parametrize("key", ["hoodie.compact.inline", "hoodie.compact.schedule.inline"])
def test_inline_compaction_on_copy_on_write_is_refused_before_writing(spark, tmp_path: Path, key: str) -> None:
    """hoodie.spark.write with hoodie.compact.inline=true (or schedule.inline) on a copy-on-write table: Hudi's
    copy-on-write table throws "Compaction is not supported on a CopyOnWrite table" from the inline service,
    after the commit; hoodie refuses before anything is written (before: silently ignored)."""
    import hoodie.spark
    from hoodie.errors import WriteError

    df = spark.createDataFrame([GOOD], SCHEMA)
    cow = _opts(**{"hoodie.datasource.write.table.type": "COPY_ON_WRITE", key: "true"})
    with pytest.raises(WriteError, match=f"Compaction is not supported on a CopyOnWrite table: {key}=true"):
        hoodie.spark.write(df, str(tmp_path / "t"), cow)
    assert not (tmp_path / "t").exists()


@pytest.mark.slow  # three Spark writes (about 5 s): the refusal itself runs in the default run above
def test_inline_compaction_on_existing_copy_on_write_table(spark, tmp_path: Path) -> None:
    """The refusal on an existing copy-on-write table (nothing written); with
    hoodie.fail.writes.on.inline.table.service.exception=false Hudi only warns: the write commits, nothing is
    compacted."""
    import hoodie.spark
    from hoodie.errors import WriteError
    from hoodie.format.table import HoodieTable

    path = str(tmp_path / "t")
    df = spark.createDataFrame([GOOD], SCHEMA)
    cow = _opts(**{"hoodie.datasource.write.table.type": "COPY_ON_WRITE"})
    hoodie.spark.write(df, path, cow)
    with pytest.raises(WriteError, match="Nothing was written"):
        hoodie.spark.write(df, path, {**cow, "hoodie.compact.inline": "true"})
    assert len(HoodieTable(path).timeline.instants) == 1
    hoodie.spark.write(df, path, {**cow, "hoodie.compact.inline": "true",
                                  "hoodie.fail.writes.on.inline.table.service.exception": "false"})
    assert [i.action for i in HoodieTable(path).timeline.instants] == ["commit", "commit"]
