"""``spark.read.format("hoodie")`` on sessions hoodie did not make: Python filter pushdown unset (a
plain ``SparkSession.builder.getOrCreate()``), turned off by the user, or on; any session time zone
and Arrow setting. Every read returns the rows Spark's own filter keeps from the table."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Optional

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from tests.helpers import examples

pytestmark = pytest.mark.spark
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
REPO = Path(__file__).resolve().parents[2]
OPTS = {
    "hoodie.table.name": "sess", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false",
}
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _write(path: str) -> list[dict]:
    """Partitions a, b, c (three rows each); an upsert leaves log files in partition b."""
    rows = [{"id": i, "p": "abc"[i % 3], "ts": i, "at": datetime.fromtimestamp(T0.timestamp() + 3600 * i, timezone.utc)}
            for i in range(9)]
    schema = pa.schema([("id", pa.int64()), ("p", pa.string()), ("ts", pa.int64()), ("at", pa.timestamp("us", "UTC"))])
    write_arrow(path, pa.Table.from_pylist(rows, schema), {**OPTS, "hoodie.datasource.write.operation": "insert"})
    upd = [dict(r, ts=100 + r["id"]) for r in rows if r["p"] == "b"]
    write_arrow(path, pa.Table.from_pylist(upd, schema), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    return [dict(r, ts=100 + r["id"]) if r["p"] == "b" else r for r in rows]


@contextmanager
def _conf(spark, settings_: dict[str, Optional[str]]) -> Iterator[None]:
    """Session settings for the block (None: unset, as on a plain session); restored afterwards."""
    before = {k: spark.conf.get(k, None) for k in settings_}
    try:
        for k, v in settings_.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)
        yield
    finally:
        for k, v in before.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)


def _ids(df) -> list[int]:
    return sorted(r["id"] for r in df.select("id").collect())


def test_reads_with_python_filter_pushdown_off(spark, tmp_path: Path) -> None:
    """A session with spark.sql.python.filterPushdown.enabled=false (Spark 4.3's default) reads every
    partition and Spark filters the rows; before, every read failed with DATA_SOURCE_PUSHDOWN_DISABLED."""
    path = str(tmp_path / "t")
    rows = _write(path)
    with _conf(spark, {PUSHDOWN: "false"}):
        df = spark.read.format("hoodie").load(path)
        assert _ids(df) == list(range(9))
        assert _ids(df.where("p = 'b'")) == [1, 4, 7]
        assert sorted(r["ts"] for r in df.where("p = 'b'").collect()) == [101, 104, 107]
        assert _ids(df.where("p IN ('a', 'c') AND id > 2")) == [3, 5, 6, 8]
        ro = spark.read.format("hoodie").option("hoodie.datasource.query.type", "read_optimized").load(path)
        assert sorted(r["ts"] for r in ro.where("p = 'b'").collect()) == [1, 4, 7]
    assert len(rows) == 9


def test_register_leaves_the_session_pushdown_setting_alone(spark, tmp_path: Path) -> None:
    """hoodie.spark.register changes no session setting: the source takes no pushed filters (pruning
    through them loses rows in PySpark 4.3, see hoodie.engine.datasource), so it reads the same rows
    with pushdown unset, on or off."""
    import hoodie.spark as hs

    path = str(tmp_path / "t")
    _write(path)
    for setting in (None, "true", "false"):
        with _conf(spark, {PUSHDOWN: setting}):
            hs.register(spark)
            assert spark.conf.get(PUSHDOWN, None) == setting
            assert _ids(spark.read.format("hoodie").load(path).where("p = 'a'")) == [0, 3, 6]


FILTERS = {
    "none": (None, lambda r: True),
    "partition =": ("p = 'b'", lambda r: r["p"] == "b"),
    "partition IN": ("p IN ('a', 'c')", lambda r: r["p"] in ("a", "c")),
    "partition <": ("p < 'b'", lambda r: r["p"] < "b"),
    "partition and key": ("p >= 'b' AND id < 5", lambda r: r["p"] >= "b" and r["id"] < 5),
    "key range": ("id BETWEEN 2 AND 6", lambda r: 2 <= r["id"] <= 6),
    "precombine (merged value)": ("ts > 100", lambda r: r["ts"] > 100),
    "timestamp": ("at >= TIMESTAMP '2024-01-01T04:00:00Z'",
                  lambda r: r["at"] >= datetime(2024, 1, 1, 4, tzinfo=timezone.utc)),
}


@pytest.fixture(scope="module")
def session_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict]]:
    path = str(tmp_path_factory.mktemp("sessions") / "t")
    return path, _write(path)


@settings(max_examples=examples(6), deadline=None)
@given(pushdown=st.sampled_from([None, "true", "false"]), register_again=st.booleans(),
       tz=st.sampled_from(["UTC", "America/Los_Angeles", "Asia/Kolkata"]), arrow=st.sampled_from([None, "false"]),
       flt=st.sampled_from(sorted(FILTERS)))
def test_any_session_settings_read_what_spark_filters(spark, session_table, pushdown: Optional[str],
                                                      register_again: bool, tz: str, arrow: Optional[str],
                                                      flt: str) -> None:
    """The class of item 21: whatever the session says about pushdown (before or after
    register), its time zone and Arrow, a read returns exactly the rows the filter keeps."""
    import hoodie.spark as hs

    path, rows = session_table
    where, keep = FILTERS[flt]
    with _conf(spark, {PUSHDOWN: pushdown, "spark.sql.session.timeZone": tz,
                       "spark.sql.execution.arrow.pyspark.enabled": arrow}):
        if register_again:
            hs.register(spark)
        df = spark.read.format("hoodie").load(path)
        if where:
            df = df.where(where)
        got = sorted((r["id"], r["p"], r["ts"]) for r in df.select("id", "p", "ts").collect())
    assert got == sorted((r["id"], r["p"], r["ts"]) for r in rows if keep(r))
    assert hoodie.read_table(path).num_rows == len(rows)


PLAIN_SESSION_JOB = """
import json, sys
from pyspark.sql import SparkSession
import hoodie.spark as hs
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
hs.register(spark)
df = spark.read.format("hoodie").load(sys.argv[1])
print(json.dumps({"all": sorted(r.id for r in df.collect()), "b": sorted(r.id for r in df.where("p = 'b'").collect()),
                  "pushdown": spark.conf.get("spark.sql.python.filterPushdown.enabled")}))
spark.stop()
"""


@pytest.mark.slow
def test_plain_spark_session_reads_after_register(tmp_path: Path) -> None:
    """The documented promise, in a process of its own: SparkSession.builder.getOrCreate() (not
    hoodie's session) + hoodie.spark.register(spark) reads the table."""
    import json

    path = str(tmp_path / "t")
    _write(path)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    out = subprocess.run([sys.executable, "-c", PLAIN_SESSION_JOB, path], capture_output=True, text=True,
                         timeout=600, env=env, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res == {"all": list(range(9)), "b": [1, 4, 7], "pushdown": "false"}
