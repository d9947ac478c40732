"""Errors hoodie raises inside Spark reach the user with hoodie's message first, whole and once (issue 35,
"Messages"): hoodie.engine.spark_errors finds it in Spark's wrapping; hoodie.sql and hoodie.spark.* raise it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.engine.spark_errors import SparkSideError, hoodie_message, unwrap
from hoodie.errors import HoodieError, WriteError
from tests.helpers import examples

MSG = "hoodie.datasource.query.type='bogus': use snapshot, read_optimized or incremental"
DATA_SOURCE = (
    "[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance: Traceback (most recent call last):\n"
    '  File "/site-packages/hoodie/engine/datasource.py", line 183, in schema\n'
    "    plan = plan_read(self._table(), **_read_args(self.options))\n"
    "                                      ^^^^^^^^^^^^^^^^^^^^^^^^\n"
    '  File "/site-packages/hoodie/engine/datasource.py", line 126, in _read_args\n'
    '    raise ValueError(f"...")\n'
    f"ValueError: {MSG}\n SQLSTATE: 38000")
WORKER = (
    "An error occurred while calling o123.collectToPython.\n"
    ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times, most "
    "recent failure: Lost task 0.0: org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
    '  File "/opt/spark/python/pyspark/worker.py", line 1900, in main\n    process()\n'
    '  File "/work/src/hoodie/services/write/execution.py", line 88, in run\n    raise WriteError(msg)\n'
    "hoodie.errors.WriteError: the record key is null in 1 row\nfix: give every row a key\n"
    "\n\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:600)\n"
    "\tat org.apache.spark.api.python.PythonRunner$$anon$3.read(PythonRunner.scala:900)\n"
    "Driver stacktrace:\n\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:1)\n")
USER = ("Traceback (most recent call last):\n  File \"/home/me/job.py\", line 3, in f\n    1 / 0\n"
        "ZeroDivisionError: division by zero\n")


def test_hoodie_message_is_found_in_spark_text() -> None:
    assert hoodie_message(DATA_SOURCE) == ("ValueError", MSG)
    assert hoodie_message(WORKER) == ("hoodie.errors.WriteError",
                                      "the record key is null in 1 row\nfix: give every row a key")
    assert hoodie_message(USER) is None  # not raised by hoodie's code: Spark's error stands
    assert hoodie_message("[TABLE_OR_VIEW_NOT_FOUND] The table `x` cannot be found.") is None


def test_unwrap_keeps_the_class_and_the_spark_exception() -> None:
    e = unwrap(RuntimeError(WORKER))
    assert isinstance(e, WriteError) and str(e).startswith("the record key is null")
    assert e.spark_exception.args == (WORKER,)
    v = unwrap(RuntimeError(DATA_SOURCE))
    assert isinstance(v, SparkSideError) and isinstance(v, ValueError) and str(v) == MSG
    assert unwrap(RuntimeError(USER)) is None
    assert unwrap(WriteError("on the driver")) is None


@pytest.mark.spark
def test_data_source_errors_come_out_whole_once(spark, tmp_path: Path) -> None:
    """A bad read option (hoodie.spark.read) and a time travel to a non-instant (hoodie.sql, which reads it
    through the data source) raise hoodie's message alone: no Python traceback, no Spark error class, the
    message once."""
    import traceback

    import hoodie
    import hoodie.spark
    from hoodie.interfaces.sql import sql

    path = str(tmp_path / "t")
    hoodie.write_table(path, pa.table({"id": [1], "ts": [1]}), {
        "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts"})
    with pytest.raises(ValueError) as e:
        hoodie.spark.read(spark, path, {"hoodie.datasource.query.type": "bogus"})
    assert str(e.value) == MSG
    sql(spark, f"create table spark_errors_t using hudi location '{path}'")
    props = Path(path, ".hoodie", "hoodie.properties")
    props.write_text("\n".join("hoodie.table.version=5" if line.startswith("hoodie.table.version=") else line
                               for line in props.read_text().splitlines()) + "\n")
    try:
        with pytest.raises(HoodieError) as e:
            sql(spark, "select * from spark_errors_t").collect()
        text = "".join(traceback.format_exception(e.value))
        assert e.value.spark_exception is not None  # it came through Spark, unwrapped
        assert "version 5" in str(e.value) or "5" in str(e.value)
        assert "Traceback (most recent call last)" not in str(e.value) and "PYTHON_DATA_SOURCE_ERROR" not in text
        assert text.count(str(e.value)) == 1
    finally:
        sql(spark, "drop table spark_errors_t")


@settings(max_examples=examples(200), deadline=None)
@given(cls=st.sampled_from(["ValueError", "hoodie.errors.WriteError", "hoodie.format.slice.filters.ReadError"]),
       lines=st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(
           lambda s: s.strip() and not s[0].isspace() and "Traceback" not in s), min_size=1, max_size=3),
       wrap=st.sampled_from(["ds", "worker", "py4j"]))
def test_hoodie_message_generator(cls: str, lines: list[str], wrap: str) -> None:
    """Any hoodie message (one or more lines) in each of Spark's wrappings comes out exactly."""
    msg = "\n".join(lines)
    tb = (f"Traceback (most recent call last):\n  File \"/x/hoodie/engine/datasource.py\", line 1, in schema\n"
          f"    raise X\n{cls}: {msg}\n")
    text = {"ds": f"[PYTHON_DATA_SOURCE_ERROR] Failed: {tb} SQLSTATE: 38000",
            "worker": f"Job aborted: org.apache.spark.api.python.PythonException: {tb}\n\tat org.apache.X.y(X.scala:1)\n",
            "py4j": f"An error occurred while calling o1.save.\n: org.apache.spark.SparkException: {tb}\tat a.b(C.java:1)\n"
                    "Caused by: java.lang.RuntimeException: other\n"}[wrap]
    assert hoodie_message(text) == (cls, msg.strip())
