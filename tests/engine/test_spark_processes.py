"""Spark writes across processes: a real multi-executor cluster, a driver killed mid-write, and an
object store (moto_server on 127.0.0.1) reached only from Python.

Each JVM a test starts costs 10-40 s, so the default run starts two: the cluster runs both of its
writes in one child driver, and the steps around the killed driver and the object-store writes use
the run's shared session. The ``-m slow`` twins (``*_driver_per_step``) run every step in a child
driver of its own, so each write also meets fresh executors and Python workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hoodie
from hoodie.format.table import HoodieTable
from tests.engine.spark_job import run_step
from tests.hudi_rs import read_hudi_rs
from tests.s3 import moto_s3  # noqa: F401

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
CLUSTER = "local-cluster[2,1,1024]"


def _job(master: str, base: str, steps: str, env_extra: dict | None = None, so: dict | None = None,
         timeout: int = 400, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """Run ``steps`` (``"0"``, ``"0,1,c"``) of tests/engine/spark_job.py in one child driver, in ``cwd``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    args = [sys.executable, "-m", "tests.engine.spark_job", master, base, steps]
    if so:
        args.append(json.dumps(so))
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(cwd))


def _counts(out: subprocess.CompletedProcess) -> list[int]:
    """The row counts the child read back after each of its steps."""
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line)["count"] for line in out.stdout.splitlines() if line.startswith("{")]


def _values(path: str, so: dict | None = None) -> dict[int, str]:
    t = hoodie.read_table(path, columns=["id", "v"], storage_options=so)
    return dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))


def _check_cluster_table(base: str) -> None:
    """ids 0..49 inserted with "s0", 0..9 updated to "s1": our reader and hudi-rs agree."""
    expected = {i: ("s1" if i < 10 else "s0") for i in range(50)}
    assert _values(base) == expected
    theirs = read_hudi_rs(base)
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("v").to_pylist())) == expected


@pytest.mark.slow  # a second Spark application (117 s loaded); default run: every engine test's executors
def test_local_cluster_two_executors(tmp_path: Path) -> None:
    """local-cluster gives separate executor JVMs and Python workers, each in a working directory of
    its own under Spark's work folder: nothing may rely on driver state, and the table is given as a
    path relative to the driver's working directory. One child driver inserts, upserts, compacts
    through CALL run_compaction, reading back through the data source after each step."""
    (tmp_path / "tables").mkdir()
    assert _counts(_job(CLUSTER, "tables/t", "0,1,c", cwd=tmp_path)) == [50, 50, 50]
    base = str(tmp_path / "tables" / "t")
    _check_cluster_table(base)
    t = HoodieTable(base)
    assert t.timeline.completed().by_actions("commit").instants, "the compaction committed"
    assert not list(Path(REPO).glob("tables")) and not (tmp_path / "work").exists()


@pytest.mark.slow
def test_local_cluster_two_executors_driver_per_step(tmp_path: Path) -> None:
    """As above, with the insert and the upsert each in a cluster of its own."""
    base = str(tmp_path / "t")
    assert _counts(_job(CLUSTER, base, "0")) == [50]
    assert _counts(_job(CLUSTER, base, "1")) == [50]
    _check_cluster_table(base)


def _killed_write(tmp_path: Path, base: str) -> str:
    """SIGKILL a child driver after its executors wrote their files, before the commit; check what
    it left and that every reader still sees the committed state. Returns the failed instant."""
    out = _job("local[2]", base, "1", {"HOODIE_FAULT_POINTS": "write.after_files"})
    assert out.returncode == -9, out.stderr[-2000:]
    pending = HoodieTable(base).timeline.pending().instants
    assert len(pending) == 1 and pending[0].action == "deltacommit"
    assert any(".log." in p.name for p in (tmp_path / "t" / "p0").iterdir()), "the killed write left files"
    committed = {i: "s0" for i in range(50)}
    assert _values(base) == committed
    theirs = read_hudi_rs(base)
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("v").to_pylist())) == committed
    return pending[0].timestamp


def _check_recovered(tmp_path: Path, base: str, failed: str) -> None:
    """The next write rolled the failed one back and succeeded."""
    t = HoodieTable(base)
    assert [i.action for i in t.timeline.completed()].count("rollback") == 1
    assert not t.timeline.pending()
    assert _values(base) == {i: ("s2" if i < 10 else "s0") for i in range(50)}
    assert not any(failed in p.name for p in (tmp_path / "t" / ".hoodie").iterdir())


@pytest.mark.slow  # a child driver killed; default run: tests/prove/test_crash.py kills every write step
def test_driver_killed_mid_write_then_recovers(spark, tmp_path: Path) -> None:
    """The killed write runs in a child driver; the write before it and the recovering write after
    it run in this run's session."""
    base = str(tmp_path / "t")
    assert run_step(spark, base, 0)["count"] == 50
    failed = _killed_write(tmp_path, base)
    assert run_step(spark, base, 2)["count"] == 50
    _check_recovered(tmp_path, base, failed)


@pytest.mark.slow
def test_driver_killed_mid_write_then_recovers_driver_per_step(tmp_path: Path) -> None:
    """As above, with the insert and the recovering write in child drivers of their own."""
    base = str(tmp_path / "t")
    assert _counts(_job("local[2]", base, "0")) == [50]
    failed = _killed_write(tmp_path, base)
    assert _counts(_job("local[2]", base, "2")) == [50]
    _check_recovered(tmp_path, base, failed)


def test_spark_write_to_object_store(spark, moto_s3: dict, tmp_path: Path) -> None:
    """Executors write to S3 through Python; the JVM has no S3 connector configured."""
    base = "s3://hoodie-test/spark_t"
    assert run_step(spark, base, 0, so=moto_s3)["count"] == 50
    assert run_step(spark, base, 1, so=moto_s3)["count"] == 50
    assert _values(base, moto_s3) == {i: ("s1" if i < 10 else "s0") for i in range(50)}


@pytest.mark.slow
def test_spark_write_to_object_store_driver_per_step(moto_s3: dict, tmp_path: Path) -> None:
    """As above, with each write in a child driver of its own."""
    base = "s3://hoodie-test/spark_t_children"
    assert _counts(_job("local[2]", base, "0", so=moto_s3)) == [50]
    assert _counts(_job("local[2]", base, "1", so=moto_s3)) == [50]
    assert _values(base, moto_s3) == {i: ("s1" if i < 10 else "s0") for i in range(50)}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_standalone_cluster_with_a_relative_path(tmp_path: Path) -> None:
    """A Spark standalone cluster (a master and two workers from the pyspark package, on 127.0.0.1,
    each worker with a work folder of its own) runs a child driver that writes, reads and compacts a
    table given by a path relative to the driver's working directory: executors never see the
    relative path, and the driver's address is Spark's choice (not the loopback hoodie sets for local
    masters)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    port = _free_port()
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    cls = str(home / "bin" / "spark-class")
    procs = [subprocess.Popen([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                               "--webui-port", str(_free_port())], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    try:
        for i in range(2):
            work = tmp_path / f"worker{i}"
            work.mkdir()
            procs.append(subprocess.Popen(
                [cls, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                 "--cores", "1", "--memory", "1g", "--work-dir", str(work), "--webui-port", str(_free_port())],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        (tmp_path / "driver" / "tables").mkdir(parents=True)
        out = _job(f"spark://127.0.0.1:{port}", "tables/t", "0,1,c", cwd=tmp_path / "driver",
                   env_extra={"SPARK_HOME": str(home)})
        assert _counts(out) == [50, 50, 50]
        base = str(tmp_path / "driver" / "tables" / "t")
        _check_cluster_table(base)
        assert HoodieTable(base).timeline.completed().by_actions("commit").instants
        # The executors ran in the workers' own folders.
        assert any((tmp_path / f"worker{i}").iterdir() for i in range(2))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
