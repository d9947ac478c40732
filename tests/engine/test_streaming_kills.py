"""Exactly once under kills: a streaming query in a child driver (tests/engine/stream_child.py) is
SIGKILLed at a random point, inside a micro-batch (before or during its write, after its files, right
before or after its commit), between the table's commit and Spark's commit log, or inside an inline
compaction, and restarted from its checkpoint until it finishes. Every source row is then in the table
exactly once (insert, where a replayed batch would show as duplicates) or as the model says (upsert),
read by hoodie and by hudi-rs.

A child driver with a JVM of its own costs 10-40 s on a loaded machine, so most trials use children that
attach to the test session's JVM instead (tests/engine/stream_child.py ``run_attached``): forked from a
preloaded server (no imports, no JVM start), each runs its query in a session of its own in the shared
JVM through a py4j server of its own, and dies by SIGKILL at its fault point; its query in the JVM then
fails the interrupted micro-batch without Spark's commit log, as a dead driver leaves it. A chain of such
children, each restarting from the checkpoint the one before was killed in, is finished by the test
session itself; every kill is a trial. The default run makes one chain of 5 kills (upsert into
merge-on-read); ``-m slow`` makes HOODIE_STREAM_KILL_TRIALS seeded chains per operation and table type
(71 kills in 401 s on a loaded machine), and keeps one kill of a child with its own JVM (the whole driver
process dies)."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]

# Driver-side points (the micro-batch's Python code runs in the driver): inside a batch, between the
# table's commit and Spark's commit log, and inside the inline compaction that follows a commit.
BATCH_POINTS = ("stream.before_write", "write.after_files", "write.before_complete", "write.after_complete")
COMMIT_LOG_POINT = "stream.after_commit"
SERVICE_POINTS = ("compaction.after_inflight", "compaction.before_commit")
FILES, ROWS = 4, 20


def _options(operation: str, table_type: str) -> dict:
    return {"hoodie.table.name": "s", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            "hoodie.compact.inline": "true" if table_type == "MERGE_ON_READ" else "false",
            "hoodie.compact.inline.max.delta.commits": "2", "hoodie.datasource.write.streaming.retry.count": "1"}


def _source(src: Path, operation: str, rng: random.Random, files: int = FILES) -> dict[int, int]:
    """``files`` Parquet files; returns the model (id -> ts of its winning version). Insert files hold new
    ids only; upsert files also update ids of earlier files, with a later ts."""
    src.mkdir(parents=True)
    model: dict[int, int] = {}
    for n in range(files):
        ids = list(range(n * ROWS, n * ROWS + ROWS))
        if operation == "upsert" and n:
            ids += rng.sample(range(n * ROWS), ROWS // 2)
        ts = n + 1
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "p": [f"p{i % 3}" for i in ids],
                                 "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"{ts}:{i}" for i in ids]}),
                       src / f"f{n:03d}.parquet")
        for i in ids:
            model[i] = ts
    return model


def _child(src: "Path | str", table: Path, ck: Path, opts: dict, fault: str | None) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("HOODIE_FAULT_POINTS", None)
    if fault:
        env["HOODIE_FAULT_POINTS"] = fault
    p = subprocess.Popen([sys.executable, "-m", "tests.engine.stream_child", str(src), str(table), str(ck),
                          json.dumps(opts)], cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=600)
    finally:
        # The killed driver's JVM exits when its stdin closes; take the whole group down so no JVM of the
        # dead query still writes to the checkpoint when the next one starts.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if p.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"child failed ({p.returncode}) with {fault}:\n{err[-4000:]}")
    return p.returncode


def _check(table: Path, operation: str, model: dict[int, int], files: int = FILES) -> None:
    got = hoodie.read_table(str(table), columns=["id", "ts"])
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), f"duplicates: {sorted(i for i in set(ids) if ids.count(i) > 1)[:10]}"
    assert dict(zip(ids, got.column("ts").to_pylist())) == model
    theirs = read_hudi_rs(str(table))
    assert sorted(theirs.column("id").to_pylist()) == sorted(model)
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("ts").to_pylist())) == model
    # Every batch committed once: one checkpoint per batch id.
    tl = HoodieTable(str(table)).timeline
    batches = [tl.commit_metadata(i).extra_metadata.get("_hudi_streaming_sink_checkpoint")
               for i in tl.completed_writes().instants]
    batches = [json.loads(b)["default_single_writer"] for b in batches if b]
    assert sorted(batches, key=int) == [str(n) for n in range(files)]


class _AttachedChildren:
    """Kill-trial children attached to the JVM of ``spark`` (see the module docstring): a py4j server of
    their own in that JVM, and a forkserver with the child's modules imported."""

    PRELOAD = ("tests.engine.stream_child", "hoodie.spark", "hoodie.engine.stream", "hoodie.engine.write",
               "hoodie.engine.datasource", "pyspark.sql", "pyspark.sql.streaming", "pyarrow.parquet")

    def __init__(self, spark, logs: Path) -> None:
        self.spark = spark
        sc = spark.sparkContext
        self.server = sc._jvm.org.apache.spark.api.python.Py4JServer(sc._jsc.getConf())
        self.server.start()
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload(list(self.PRELOAD))
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        self.runs = 0

    def run(self, src: Path | str, table: Path, ck: Path, opts: dict, fault: str | None) -> int:
        """Run one child until it finishes (0) or dies at ``fault`` (-SIGKILL)."""
        from tests.engine.stream_child import run_attached

        self.runs += 1
        log = self.logs / f"child{self.runs}.log"
        p = self.ctx.Process(target=run_attached, args=(str(src), str(table), str(ck), opts,
                                                        self.server.getListeningPort(), self.server.secret(),
                                                        fault, str(log)))
        p.start()
        p.join(300)
        if p.is_alive():
            p.kill()
            p.join()
            raise AssertionError(f"child with {fault} hung:\n{log.read_text()[-4000:]}")
        if p.exitcode not in (0, -signal.SIGKILL):
            raise AssertionError(f"child failed ({p.exitcode}) with {fault}:\n{log.read_text()[-4000:]}")
        return p.exitcode

    def close(self) -> None:
        self.server.shutdown()
        jvm = self.spark.sparkContext._jvm
        from pyspark.sql import SparkSession

        SparkSession._get_j_spark_session_class(jvm).setDefaultSession(self.spark._jsparkSession)


def _finish_in_session(spark, src: Path, table: Path, ck: Path, opts: dict) -> None:
    """The last restart, in the test session itself: no child, no JVM."""
    import hoodie.spark as hs
    from tests.engine.stream_child import run_stream

    q = run_stream(spark, str(src), str(table), str(ck), opts)
    hs.stop_services(q)
    assert q.exception() is None


def _no_duplicates_yet(table: Path, model: dict[int, int]) -> None:
    """After a kill: whatever the table holds is a part of the model, each id once (insert and upsert
    alike: an id holds one version)."""
    if not (table / ".hoodie" / "hoodie.properties").exists():
        return
    ids = hoodie.read_table(str(table), columns=["id"]).column("id").to_pylist()
    assert len(ids) == len(set(ids)) and set(ids) <= set(model)


def _chain(children: _AttachedChildren, spark, tmp: Path, seed: int, operation: str, table_type: str,
           kills: int, files: int, nth: tuple[int, ...] = (1, 2)) -> list[tuple[str, int, float]]:
    """Up to ``kills`` attached children, each killed at a random point (its ``nth`` hit, one of ``nth``)
    or finishing first, and restarted by the next from the same checkpoint; the test session finishes the
    stream; every row as the model says (hoodie and hudi-rs). Returns (fault, exit code, seconds) per
    child."""
    rng = random.Random(seed)
    src, table, ck = tmp / "src", tmp / "t", tmp / "ck"
    model = _source(src, operation, rng, files)
    opts = _options(operation, table_type)
    points = list(BATCH_POINTS) + [COMMIT_LOG_POINT] * 2
    if table_type == "MERGE_ON_READ" and operation == "upsert":
        points += list(SERVICE_POINTS)  # (inserts into merge-on-read make no log files: nothing to compact)
    done = []
    for _ in range(kills):
        fault = f"{rng.choice(points)}@{rng.choice(nth)}"
        started = time.perf_counter()
        rc = children.run(src, table, ck, opts, fault)
        done.append((fault, rc, round(time.perf_counter() - started, 2)))
        if rc == 0:
            break  # the stream finished before the point was reached
        _no_duplicates_yet(table, model)
    _finish_in_session(spark, src, table, ck, opts)
    _check(table, operation, model, files)
    return done


@pytest.fixture
def attached(spark, tmp_path: Path):
    children = _AttachedChildren(spark, tmp_path / "logs")
    yield children
    children.close()


def test_killed_stream_chain_resumes_exactly_once(spark, attached, tmp_path: Path) -> None:
    """5 real kills (SIGKILL of an attached child driver at a random point, each at its first hit, so each
    child dies in its first micro-batch or the inline compaction after it), each restarted from the
    checkpoint, upserting into merge-on-read: every point, the inline compaction's included; every batch
    committed once (one checkpoint per batch id) and every row as the model says. (Insert, where a replay
    would also double rows, and copy-on-write: the slow run; 10 kills here cost 48 s on a loaded machine.)"""
    done = _chain(attached, spark, tmp_path, 2, "upsert", "MERGE_ON_READ", kills=5, files=6, nth=(1,))
    print(done)
    assert sum(rc == -signal.SIGKILL for _, rc, _ in done) == 5, done


@pytest.mark.slow  # a child driver and its own JVM (about 50 s); the default run's replay test is
# test_streaming.py::test_replayed_batch_is_skipped
def test_killed_stream_resumes_exactly_once(tmp_path: Path) -> None:
    """One kill between the table's commit and Spark's commit log (the case only the sink's checkpoint
    catches), insert-only into merge-on-read: without the sink's lookup the replayed batch doubles."""
    src, table, ck = tmp_path / "src", tmp_path / "t", tmp_path / "ck"
    model = _source(src, "insert", random.Random(0))
    opts = _options("insert", "MERGE_ON_READ")
    assert _child(src, table, ck, opts, f"{COMMIT_LOG_POINT}@2") == -signal.SIGKILL
    assert _child(src, table, ck, opts, None) == 0
    _check(table, "insert", model)


@pytest.mark.slow
@pytest.mark.parametrize("operation", ["insert", "upsert"])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_killed_stream_random_points(spark, attached, tmp_path: Path, operation: str, table_type: str) -> None:
    """HOODIE_STREAM_KILL_TRIALS (default 4) seeded chains of up to 5 kills per operation and table type:
    with the defaults at least 13 kills per case, 52 over the four."""
    seeds = int(os.environ.get("HOODIE_STREAM_KILL_TRIALS", "4"))
    kills = 0
    for seed in range(100, 100 + seeds):
        done = _chain(attached, spark, tmp_path / f"trial{seed}", seed, operation, table_type, kills=5, files=6)
        kills += sum(rc == -signal.SIGKILL for _, rc, _ in done)
        print(seed, done)
    print(f"kills {operation} {table_type}: {kills}")
    assert kills >= (13 * seeds + 3) // 4  # the kills happen (a point never reached lets a child finish)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["stream.before_write@1", "write.before_complete@1", "stream.after_commit@1"])
def test_killed_hoodie_source_resumes_without_missing_or_repeating(tmp_path: Path, point: str) -> None:
    """readStream.format('hoodie') from table A into table B (insert): the child is killed in its first
    micro-batch (before B's write, before B's commit, or between B's commit and Spark's commit log), A
    gains a commit, the child restarts from its checkpoint: Spark replays the logged range of A, then
    reads the new commit; B holds every row of A once."""
    from hoodie.interfaces.python_io import write_arrow

    a, b, ck = tmp_path / "a", tmp_path / "b", tmp_path / "ck"
    a_opts = {**_options("insert", "MERGE_ON_READ"), "hoodie.table.name": "a"}

    def commit(ids: range) -> None:
        write_arrow(str(a), pa.table({"id": pa.array(list(ids), pa.int64()), "p": [f"p{i % 3}" for i in ids],
                                      "ts": pa.array([1] * len(ids), pa.int64()), "v": [str(i) for i in ids]}), a_opts)

    commit(range(0, 20))
    commit(range(20, 40))
    opts = _options("insert", "COPY_ON_WRITE")
    assert _child(f"hoodie:{a}", b, ck, opts, point) == -signal.SIGKILL
    commit(range(40, 60))
    assert _child(f"hoodie:{a}", b, ck, opts, None) == 0
    got = hoodie.read_table(str(b), columns=["id"]).column("id").to_pylist()
    assert sorted(got) == list(range(60))
    assert sorted(read_hudi_rs(str(b)).column("id").to_pylist()) == list(range(60))
