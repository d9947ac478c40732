"""Spark writes in child processes: a real multi-executor cluster, a driver killed mid-write,
and an object store (moto_server on 127.0.0.1) reached only from Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hoodie
from hoodie.format.table import HoodieTable
from tests.hudi_rs import read_hudi_rs
from tests.s3 import moto_s3  # noqa: F401

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]


def _job(master: str, base: str, step: int, env_extra: dict | None = None, so: dict | None = None,
         timeout: int = 400) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    args = [sys.executable, "-m", "tests.engine.spark_job", master, base, str(step)]
    if so:
        args.append(json.dumps(so))
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(REPO))


def _values(path: str, so: dict | None = None) -> dict[int, str]:
    t = hoodie.read_table(path, columns=["id", "v"], storage_options=so)
    return dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))


def test_local_cluster_two_executors(tmp_path: Path) -> None:
    """local-cluster gives separate executor JVMs and Python workers: nothing may rely on driver state."""
    base = str(tmp_path / "t")
    out = _job("local-cluster[2,1,1024]", base, 0)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["count"] == 50
    out = _job("local-cluster[2,1,1024]", base, 1)
    assert out.returncode == 0, out.stderr[-3000:]
    expected = {i: ("s1" if i < 10 else "s0") for i in range(50)}
    assert _values(base) == expected
    theirs = read_hudi_rs(base)
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("v").to_pylist())) == expected


def test_driver_killed_mid_write_then_recovers(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    assert _job("local[2]", base, 0).returncode == 0
    # SIGKILL after the executors wrote their files, before the commit.
    out = _job("local[2]", base, 1, {"HOODIE_FAULT_POINTS": "write.after_files"})
    assert out.returncode == -9, out.stderr[-2000:]
    t = HoodieTable(base)
    pending = t.timeline.pending().instants
    assert len(pending) == 1 and pending[0].action == "deltacommit"
    assert any(".log." in p.name for p in (tmp_path / "t" / "p0").iterdir()), "the killed write left files"
    committed = {i: "s0" for i in range(50)}
    assert _values(base) == committed
    theirs = read_hudi_rs(base)
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("v").to_pylist())) == committed
    # The next write rolls the failed one back and succeeds.
    out = _job("local[2]", base, 2)
    assert out.returncode == 0, out.stderr[-3000:]
    t = HoodieTable(base)
    assert [i.action for i in t.timeline.completed()].count("rollback") == 1
    assert not t.timeline.pending()
    assert _values(base) == {i: ("s2" if i < 10 else "s0") for i in range(50)}
    assert not any(pending[0].timestamp in p.name for p in (tmp_path / "t" / ".hoodie").iterdir())


def test_spark_write_to_object_store(moto_s3: dict, tmp_path: Path) -> None:
    base = "s3://hoodie-test/spark_t"
    out = _job("local[2]", base, 0, so=moto_s3)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["count"] == 50
    out = _job("local[2]", base, 1, so=moto_s3)
    assert out.returncode == 0, out.stderr[-3000:]
    assert _values(base, moto_s3) == {i: ("s1" if i < 10 else "s0") for i in range(50)}
