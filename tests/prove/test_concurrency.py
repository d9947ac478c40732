"""Concurrency: a writer, async compaction, TTL and clean in four processes on one table, synchronized
only by the table lock (hoodie.format.lock). The writer checks after every round that the snapshot
holds exactly the records its writes and the TTL commits leave (no lost, no duplicated record); at
the end hudi-rs reads the same, and no instant is left pending. Also unit tests of the lock itself."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hoodie
from hoodie.format.lock import LockError, TableLock, table_lock
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from hoodie.services.metadata import validate_metadata_table
from tests.prove.concurrency import replay, ttl_events
from tests.prove.crash_harness import _rows, pending_instants, snapshot
from tests.hudi_rs import read_hudi_rs
from tests.s3 import moto_s3  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[2]
ROLES = ("writer", "compactor", "ttl", "cleaner")


def run_roles(tmp_path: Path, rounds: int, seed: int) -> dict[str, dict]:
    path = str(tmp_path / "t")
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = {role: subprocess.Popen([sys.executable, "-m", "tests.prove.concurrency", role, path, str(seed),
                                     str(rounds), str(tmp_path / f"{role}.json")],
                                    cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role in ROLES}
    errors = []
    for role, p in procs.items():
        try:
            _, err = p.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            errors.append(f"{role} timed out\n{err[-3000:]}")
            continue
        if p.returncode != 0:
            errors.append(f"{role} failed (exit {p.returncode}):\n{err[-5000:]}")
    assert not errors, "\n".join(errors)
    return {role: json.loads((tmp_path / f"{role}.json").read_text()) for role in ROLES}


def test_writer_compaction_ttl_clean_in_separate_processes(tmp_path: Path) -> None:
    check_concurrent_run(tmp_path, rounds=45, seed=42)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_concurrent_processes_long(tmp_path: Path, seed: int) -> None:
    check_concurrent_run(tmp_path, rounds=300, seed=seed)


def check_concurrent_run(tmp_path: Path, rounds: int, seed: int) -> None:
    """Run the four roles; the writer checked every round; check the end state."""
    out = run_roles(tmp_path, rounds, seed=seed)
    path = str(tmp_path / "t")
    writes = out["writer"]["writes"]
    print("\nconcurrency:", json.dumps({"writes": len(writes), "checks": out["writer"]["checks"],
                                        **{r: {"rounds": out[r]["rounds"], "commits": len(out[r]["commits"])}
                                           for r in ROLES[1:]}}))
    assert len(writes) == rounds and out["writer"]["checks"] == rounds
    # Each service really ran alongside the writer and changed the table.
    for role in ("compactor", "ttl", "cleaner"):
        assert out[role]["commits"], (f"{role} never committed anything in {out[role]['rounds']} rounds: the test "
                                      f"would prove nothing")
    table = HoodieTable(path)
    expected = replay(writes, ttl_events(table)).snapshot()
    assert snapshot(path) == expected
    assert pending_instants(path) == []
    assert not Path(path, ".hoodie", "lock").exists()
    assert _rows(read_hudi_rs(path)) == expected
    # The metadata table went through every process's commits and lists what storage holds.
    res = validate_metadata_table(table)
    assert res.equal, res.to_dict()
    assert _rows(hoodie.read_table(path, options={"hoodie.metadata.enable": "true"})) == expected


def _hold_lock(path: str, ready: "multiprocessing.synchronize.Event", release: "multiprocessing.synchronize.Event") -> None:
    with table_lock(Storage(path), None, "a test holder"):
        ready.set()
        release.wait(30)


def test_lock_excludes_another_process_and_names_the_holder(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(path, ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(LockError, match=rf"held by a test holder \(pid {holder.pid} on "):
            with table_lock(Storage(path), {"hoodie.write.lock.wait_time_ms": "300"}):
                pass
        release.set()
        holder.join(30)
        with table_lock(Storage(path), {"hoodie.write.lock.wait_time_ms": "5000"}):
            assert Path(path, ".hoodie", "lock").exists()
        assert not Path(path, ".hoodie", "lock").exists()
    finally:
        release.set()
        holder.join(30)


def test_lock_of_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    code = ("import os, signal, sys; from hoodie.format.lock import TableLock; from hoodie.format.storage import "
            "Storage; TableLock(Storage(sys.argv[1]), None, 'doomed').acquire(); os.kill(os.getpid(), signal.SIGKILL)")
    subprocess.run([sys.executable, "-c", code, path], check=False)
    assert Path(path, ".hoodie", "lock").exists()  # left behind by the dead holder
    started = time.monotonic()
    with table_lock(Storage(path), {"hoodie.write.lock.wait_time_ms": "5000"}):
        pass
    assert time.monotonic() - started < 2


def test_foreign_lock_file_waits_unless_expired(tmp_path: Path) -> None:
    """A lock file hoodie did not write (Hudi's FileSystemBasedLockProvider, same place) is never
    assumed dead; hoodie.write.lock.filesystem.expire (Hudi's key) lets an old one be taken over."""
    path = tmp_path / "t"
    (path / ".hoodie").mkdir(parents=True)
    lock = path / ".hoodie" / "lock"
    lock.write_text('{"lockCreateTime": "x", "lockThreadName": "main"}')
    with pytest.raises(LockError, match="not hoodie"):
        with table_lock(Storage(str(path)), {"hoodie.write.lock.wait_time_ms": "200"}):
            pass
    old = time.time() - 120
    os.utime(lock, (old, old))
    with table_lock(Storage(str(path)), {"hoodie.write.lock.wait_time_ms": "200",
                                         "hoodie.write.lock.filesystem.expire": "1"}):
        assert "hoodie" in lock.read_text()


def test_lock_is_reentrant_in_a_thread(tmp_path: Path) -> None:
    st = Storage(str(tmp_path / "t"))
    with table_lock(st):
        with table_lock(st, {"hoodie.write.lock.wait_time_ms": "0"}):
            assert (tmp_path / "t" / ".hoodie" / "lock").exists()
        assert (tmp_path / "t" / ".hoodie" / "lock").exists()
    assert not (tmp_path / "t" / ".hoodie").exists()  # made only for the lock: gone with it


@pytest.mark.parametrize("provider, message", [
    ("org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider", "is not available in hoodie"),
    ("filesytem", "is not available in hoodie"),
])
def test_unknown_lock_provider_is_refused(tmp_path: Path, provider: str, message: str) -> None:
    with pytest.raises(LockError, match=message):
        TableLock(Storage(str(tmp_path)), {"hoodie.write.lock.provider": provider})



class _Contender:
    """Another process that tries to take the lock of ``uri`` each time it is asked, printing "took"
    or the LockError. It starts (imports, a first request to the store) before the test's lease
    does, so a loaded machine's slow interpreter start cannot run the lease out before the first try."""

    CODE = ("import json, sys\nfrom hoodie.format.lock import LockError, table_lock\n"
            "from hoodie.format.storage import Storage\n"
            "st = Storage(sys.argv[1], json.loads(sys.argv[2]))\nst.exists('.hoodie/lock')\n"
            "print('ready', flush=True)\n"
            "for line in sys.stdin:\n"
            "    try:\n        with table_lock(st, {'hoodie.write.lock.wait_time_ms': line.strip()}, 'contender'):\n"
            "            pass\n        print('took', flush=True)\n"
            "    except LockError as e:\n        print(str(e).replace('\\n', ' '), flush=True)\n")

    def __init__(self, uri: str, storage_options: dict) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", self.CODE, uri, json.dumps(storage_options)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def attempt(self, wait_ms: int) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{wait_ms}\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


def test_s3_lock_uses_conditional_puts(moto_s3: dict, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """On S3 the lock is an object created with If-None-Match: another process waits and times out,
    naming the holder; a lease that is not renewed expires and is taken over (a put conditional on
    its ETag), and the old holder learns it lost the lock when it releases."""
    import uuid

    from hoodie.format import lock as L

    uri = f"s3://hoodie-test/lock-{uuid.uuid4().hex[:8]}"
    st = Storage(uri, moto_s3)
    monkeypatch.setattr(L._Holding, "start_heartbeat", lambda self: None)  # a holder paused (never renews)
    contender = _Contender(uri, moto_s3)
    held = TableLock(st, {"hoodie.write.lock.storage.validity.timeout.secs": "3",
                          "hoodie.write.lock.storage.heartbeat.poll.secs": "1"}, "first holder")
    held.acquire()
    try:
        assert st.exists(".hoodie/lock")
        out = contender.attempt(300)
        assert "timed out after 300 ms" in out and "held by first holder" in out, out
        time.sleep(3.2)  # the lease (3 s, never renewed) expires
        assert contender.attempt(5000) == "took"
    finally:
        contender.stop()
        with pytest.raises(LockError, match="taken from this process"):
            held.release()
    assert not st.exists(".hoodie/lock")


def test_s3_lock_lease_is_renewed_while_held(moto_s3: dict) -> None:  # noqa: F811
    import uuid

    uri = f"s3://hoodie-test/lock-{uuid.uuid4().hex[:8]}"
    contender = _Contender(uri, moto_s3)
    try:
        with table_lock(Storage(uri, moto_s3), {"hoodie.write.lock.storage.validity.timeout.secs": "3",
                                                "hoodie.write.lock.storage.heartbeat.poll.secs": "1"}, "renewing"):
            time.sleep(4)  # past the first lease: only renewals keep it
            out = contender.attempt(300)
            assert "held by renewing" in out, out
    finally:
        contender.stop()


def test_s3_lock_of_a_killed_writer_on_this_host_is_taken_over(moto_s3: dict) -> None:  # noqa: F811
    """A writer SIGKILLed on S3 blocked every operation until its lease expired (300 s); its owner
    ran on this host and its process is gone, so the next operation takes the lock over at once."""
    import uuid

    uri = f"s3://hoodie-test/lock-{uuid.uuid4().hex[:8]}"
    st = Storage(uri, moto_s3)
    code = ("import json, os, signal, sys; from hoodie.format.lock import TableLock; from hoodie.format.storage "
            "import Storage; TableLock(Storage(sys.argv[1], json.loads(sys.argv[2])), None, 'doomed').acquire(); "
            "os.kill(os.getpid(), signal.SIGKILL)")
    subprocess.run([sys.executable, "-c", code, uri, json.dumps(moto_s3)], check=False, cwd=REPO, timeout=120)
    assert st.exists(".hoodie/lock")  # left behind, its lease (default 60 s) still running
    started = time.monotonic()
    with table_lock(st, {"hoodie.write.lock.wait_time_ms": "5000"}, "next writer"):
        assert json.loads(st.read_bytes(".hoodie/lock"))["what"] == "next writer"
    assert time.monotonic() - started < 3
    assert not st.exists(".hoodie/lock")


def test_readers_skip_lock_files(tmp_path: Path) -> None:
    """While a lock is held (.hoodie/lock, a compaction's own lock under .hoodie/.aux), our reader and
    hudi-rs read the table as without them."""
    from hoodie import write_arrow
    from hoodie.format.lock import compaction_lock
    from tests.prove.concurrency import SETUP
    from tests.prove.crash_child import batch

    path = str(tmp_path / "t")
    write_arrow(path, batch([[1, "2999-01-01", 1, 10], [2, "2999-01-02", 1, 20]]), SETUP.write_options("insert"))
    write_arrow(path, batch([[1, "2999-01-01", 2, 11]]), SETUP.write_options("upsert"))
    expected = snapshot(path)
    st = Storage(path)
    with table_lock(st, None, "held while reading"), compaction_lock(st, "20990101000000000"):
        assert Path(path, ".hoodie", "lock").exists()
        assert Path(path, ".hoodie", ".aux", ".locks", "compaction_20990101000000000").exists()
        assert snapshot(path) == expected == _rows(read_hudi_rs(path))
        assert [str(i) for i in HoodieTable(path).timeline.instants] == \
            [str(i) for i in HoodieTable(path).timeline.completed().instants]


def test_cli_lock_show_and_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hoodie.interfaces.cli import main

    path = str(tmp_path / "t")
    assert main(["lock", "show", path]) == 0
    assert "the table lock is free" in capsys.readouterr().out
    code = ("import os, signal, sys; from hoodie.format.lock import TableLock; from hoodie.format.storage import "
            "Storage; TableLock(Storage(sys.argv[1]), None, 'upsert').acquire(); os.kill(os.getpid(), signal.SIGKILL)")
    subprocess.run([sys.executable, "-c", code, path], check=False)
    assert main(["lock", "show", path]) == 0
    out = capsys.readouterr().out
    assert "held by upsert (pid" in out and "stale: its owner" in out
    assert main(["lock", "release", path]) == 0
    assert not Path(path, ".hoodie", "lock").exists()
    # A foreign lock file may be in use: release refuses without --force.
    Path(path, ".hoodie", "lock").write_text("{}")
    assert main(["lock", "release", path]) == 2
    assert "may still be in use" in capsys.readouterr().err
    assert main(["lock", "release", path, "--force"]) == 0
    assert not Path(path, ".hoodie", "lock").exists()


def test_forked_child_does_not_inherit_the_lock(tmp_path: Path) -> None:
    """A process forked while its parent holds the lock must take the lock itself (and wait)."""
    st = Storage(str(tmp_path / "t"))
    with table_lock(st, None, "parent"):
        pid = os.fork()
        if pid == 0:  # the child: the parent's lock is not its own
            try:
                with table_lock(st, {"hoodie.write.lock.wait_time_ms": "200"}):
                    os._exit(3)  # wrongly re-entered the parent's lock
            except LockError:
                os._exit(0)
            os._exit(4)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
