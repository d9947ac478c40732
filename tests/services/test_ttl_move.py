"""Partition TTL's ``move`` action (tiering, :mod:`hoodie.services.ttl.move`; docs/ttl.md "Tiering").

The model test: random partitions of random ages (with updates and deletes, COPY_ON_WRITE and
MERGE_ON_READ), then a dry run (writes nothing, names where each partition would go), a move, and a
bring-back. After the move the hot table (hoodie and hudi-rs) is the model without the expired
partitions and the cold table (hoodie and hudi-rs) is exactly their rows; the bring-back restores the
partition exactly. Crash tests kill a child process at each fault point of the move and of the
bring-back: every row is then in the hot or the cold table, and re-running finishes the job.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.services.ttl import TTLConfigError, run_ttl
from hoodie.services.ttl.move import MOVED_KEY, TTLMoveError, bring_back
from hoodie import write_arrow
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

DAY = 86_400_000
# Ages are measured from the clock (runs without an explicit instant use it); explicit TTL instants
# just after NOW keep the model test exact.
NOW = int(time.time() * 1000)
RETAIN = {"hoodie.partition.ttl.strategy.days.retain": "10"}
REPO = Path(__file__).resolve().parents[2]


def _opts(table_type: str, op: str) -> dict[str, str]:
    return {"hoodie.table.name": "mv", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": op,
            "hoodie.clean.automatic": "false"}


def _move(target: str, **extra: str) -> dict[str, str]:
    return {**RETAIN, "hoodie.partition.ttl.action": "move", "hoodie.partition.ttl.move.target": target, **extra}


def _at(ms: int) -> str:
    return I.epoch_ms_to_instant(ms, "UTC")


def _rows(t: pa.Table) -> list[tuple]:
    if not t.num_rows:
        return []
    return sorted(zip(*(t.column(c).to_pylist() for c in ("k", "part", "ts", "v"))))


def _read(path: str, reader: Any = None) -> list[tuple]:
    return _rows(reader(path) if reader else hoodie.read_table(path))


def _batch(rows: list[tuple]) -> pa.Table:
    return pa.table({"k": [r[0] for r in rows], "part": [r[1] for r in rows],
                     "ts": pa.array([r[2] for r in rows], pa.int64()), "v": pa.array([r[3] for r in rows], pa.int64())})


def _build(path: str, table_type: str, parts: dict[str, tuple[int, int, bool]]) -> dict[str, dict[str, tuple]]:
    """parts: partition -> (age in days, rows, update-and-delete later). Writes the oldest first
    (instants must grow); returns the model, partition -> key -> row."""
    model: dict[str, dict[str, tuple]] = {}
    t = 0
    for p, (age, n, churn) in sorted(parts.items(), key=lambda kv: (-kv[1][0], kv[0])):
        base = NOW - age * DAY
        rows = [(f"{p}-{i}", p, 1, i) for i in range(n)]
        write_arrow(path, _batch(rows), _opts(table_type, "insert"), instant=_at(base + t))
        t += 1
        model[p] = {r[0]: r for r in rows}
        if churn and n > 1:
            upd = [(f"{p}-0", p, 2, 100)]
            write_arrow(path, _batch(upd), _opts(table_type, "upsert"), instant=_at(base + t))
            t += 1
            model[p][upd[0][0]] = upd[0]
            gone = model[p].pop(f"{p}-{n - 1}")
            write_arrow(path, _batch([gone]), _opts(table_type, "delete"), instant=_at(base + t))
            t += 1
    return model


def _flat(model: dict[str, dict[str, tuple]], parts: Any) -> list[tuple]:
    return sorted(r for p in parts for r in model.get(p, {}).values())


def _timeline(path: str) -> list[str]:
    return sorted(os.listdir(os.path.join(path, ".hoodie")))


PARTS = st.dictionaries(st.sampled_from([f"p{i}" for i in range(6)]),
                        st.tuples(st.sampled_from([1, 3, 20, 40]), st.integers(1, 4), st.booleans()),
                        min_size=1, max_size=4)


@settings(max_examples=examples(6), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(parts=PARTS, table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]))
def test_model_move_and_bring_back(parts: dict[str, tuple[int, int, bool]], table_type: str) -> None:
    d = tempfile.mkdtemp()
    try:
        hot, cold = f"{d}/hot", f"{d}/cold"
        model = _build(hot, table_type, parts)
        expired = sorted(p for p, (age, _, _) in parts.items() if age > 10)
        kept = sorted(set(parts) - set(expired))
        opts = _move(cold)
        # The dry run names where each partition would go and writes nothing.
        before = _timeline(hot)
        dry = run_ttl(hot, opts, dry_run=True, instant_time=_at(NOW))
        assert dry.expired_partitions == expired
        assert dry.to_json()["moves"] == {p: f"{cold}/{p}" for p in expired}
        assert _timeline(hot) == before and not os.path.exists(cold)
        res = run_ttl(hot, opts, instant_time=_at(NOW + 1))
        if not expired:
            assert res.instant is None and not os.path.exists(cold)
            return
        assert sorted(res.moved) == expired
        assert {p: m["rows"] for p, m in res.moved.items()} == {p: len(model[p]) for p in expired}
        meta = HoodieTable(hot).timeline.commit_metadata(HoodieTable(hot).timeline.last())
        assert sorted(json.loads(meta.extra_metadata[MOVED_KEY])) == expired
        for reader in (None, read_hudi_rs):
            assert _read(hot, reader) == _flat(model, kept)
            assert _read(cold, reader) == _flat(model, expired)
        # A second run finds nothing more to move.
        assert run_ttl(hot, opts, instant_time=_at(NOW + 2)).instant is None
        # Bring one back: the hot table holds it exactly as before, the cold table no longer.
        back = expired[0]
        bb = bring_back(hot, [back])
        assert bb.instant and bb.partitions[back].rows == len(model[back]) and bb.cold_drop_instant
        for reader in (None, read_hudi_rs):
            assert _read(hot, reader) == _flat(model, kept + [back])
            assert _read(cold, reader) == _flat(model, expired[1:])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_rerun_overwrites_the_cold_partition_never_duplicates(tmp_path: Path) -> None:
    """A partition moved, brought back with the cold copy kept, then moved again replaces its cold copy."""
    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    model = _build(hot, "COPY_ON_WRITE", {"old": (40, 3, False), "new": (1, 2, False)})
    run_ttl(hot, _move(cold))
    bring_back(hot, ["old"], drop_from_cold=False)
    assert _read(cold) == _flat(model, ["old"]) == [r for r in _read(hot) if r[1] == "old"]
    # The brought-back partition is written now; an explicit selection with the creation-time
    # strategy expires it again.
    opts = _move(cold, **{"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME",
                          "hoodie.partition.ttl.strategy.partition.selected": "old"})
    assert run_ttl(hot, opts).expired_partitions == ["old"]
    assert _read(cold) == _read(cold, read_hudi_rs) == _flat(model, ["old"])
    assert _read(hot) == _flat(model, ["new"])


def test_bring_back_refuses_to_overwrite_new_rows(tmp_path: Path) -> None:
    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    _build(hot, "COPY_ON_WRITE", {"old": (40, 3, False), "new": (1, 2, False)})
    run_ttl(hot, _move(cold))
    write_arrow(hot, _batch([("x", "old", 1, 7)]), _opts("COPY_ON_WRITE", "insert"))
    before = _timeline(hot)
    with pytest.raises(TTLMoveError, match="would overwrite"):
        bring_back(hot, ["old"])
    assert _timeline(hot) == before
    with pytest.raises(TTLMoveError, match="no TTL move of new"):
        bring_back(hot, ["new"])


@pytest.mark.parametrize("case", ["missing", "same", "inside", "contains", "scheme", "not-hudi", "other-keys",
                                  "bad-json", "bad-action"])
def test_bad_config_is_refused_before_anything_is_written(tmp_path: Path, case: str) -> None:
    hot = str(tmp_path / "t" / "hot")
    _build(hot, "COPY_ON_WRITE", {"old": (40, 2, False)})
    opts = _move(str(tmp_path / "cold"))
    if case == "missing":
        del opts["hoodie.partition.ttl.move.target"]
    elif case == "same":
        opts["hoodie.partition.ttl.move.target"] = hot + "/"
    elif case == "inside":
        opts["hoodie.partition.ttl.move.target"] = f"file://{hot}/cold"
    elif case == "contains":
        opts["hoodie.partition.ttl.move.target"] = str(tmp_path / "t")
    elif case == "scheme":
        opts["hoodie.partition.ttl.move.target"] = "ftp://host/cold"
    elif case == "not-hudi":
        (tmp_path / "cold").mkdir()
        (tmp_path / "cold" / "notes.txt").write_text("mine")
    elif case == "other-keys":
        o = {**_opts("COPY_ON_WRITE", "insert"), "hoodie.datasource.write.recordkey.field": "v"}
        write_arrow(str(tmp_path / "cold"), _batch([("a", "old", 1, 1)]), o)
    elif case == "bad-json":
        opts["hoodie.partition.ttl.move.storage.options"] = "{nope"
    elif case == "bad-action":
        opts["hoodie.partition.ttl.action"] = "archive"
    cold_before = sorted(os.listdir(tmp_path / "cold")) if (tmp_path / "cold").exists() else None
    before = _timeline(hot)
    for dry in (True, False):
        with pytest.raises(TTLConfigError):
            run_ttl(hot, opts, dry_run=dry)
    assert _timeline(hot) == before
    assert (sorted(os.listdir(tmp_path / "cold")) if (tmp_path / "cold").exists() else None) == cold_before


# -- crash safety ---------------------------------------------------------------------------------------

# One child imports hoodie once and forks a grandchild per job (an import costs about a second of
# CPU; six of them made this test slow on two cores). Each grandchild sets its own fault point and
# must die there; the child prints each one's wait status.
_CHILD = """
import json, os, sys
from hoodie.services.ttl import run_ttl
from hoodie.services.ttl.move import bring_back
pids = []
for hot, cold, what, fault in json.loads(sys.argv[1]):
    pid = os.fork()
    if pid == 0:
        os.environ["HOODIE_FAULT_POINTS"] = fault
        if what == "move":
            run_ttl(hot, {"hoodie.partition.ttl.strategy.days.retain": "10", "hoodie.partition.ttl.action": "move",
                          "hoodie.partition.ttl.move.target": cold})
        else:
            bring_back(hot, ["old"], target=cold)
        os._exit(0)
    pids.append(pid)
print(json.dumps([os.waitpid(pid, 0)[1] for pid in pids]))
"""


def _children(jobs: list[tuple[str, str, str, str]]) -> None:
    """Run the (hot, cold, what, fault point) jobs at once (on separate tables); each must die by
    SIGKILL at its fault point."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("HOODIE_FAULT_POINTS", None)
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(jobs)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    statuses = json.loads(proc.stdout.strip().splitlines()[-1])
    killed = [os.WIFSIGNALED(w) and os.WTERMSIG(w) == 9 for w in statuses]
    assert all(killed), [(j[3], w) for j, w in zip(jobs, statuses)]


def _in_hot_or_cold(hot: str, cold: str, model: dict[str, dict[str, tuple]]) -> None:
    """Nothing is lost: each partition's rows are all in the hot table or all in the cold one, and
    neither table holds a row the model does not."""
    h = _read(hot)
    c = _read(cold) if os.path.exists(os.path.join(cold, ".hoodie", "hoodie.properties")) else []
    assert set(h) | set(c) <= set(_flat(model, model))
    for p, rows in model.items():
        want = sorted(rows.values())
        assert [r for r in h if r[1] == p] == want or [r for r in c if r[1] == p] == want, p


MOVE_FAULTS = ["write.after_file_group", "ttl.move.after_copy", "ttl.move.after_verify", "ttl.after_inflight"]
BACK_FAULTS = ["ttl.bring_back.after_write", "ttl.bring_back.after_verify", "ttl.bring_back.cold_drop_inflight"]


def test_killed_move_loses_nothing_and_the_next_run_finishes(tmp_path: Path) -> None:
    """A TTL move killed at each fault point (mid copy, after the copy, after its verification, with
    the hot delete inflight) and a bring-back killed after its write or its verification: every row
    is in the hot or the cold table, and running the TTL (the bring-back) again finishes the job, as
    hoodie and hudi-rs read it. All children run at once, on copies of one table."""
    seed = str(tmp_path / "seed")
    parts = {"old": (40, 3, True), "older": (50, 2, False), "new": (1, 2, True)}
    model = _build(seed, "MERGE_ON_READ", parts)
    moved_seed, moved_cold = str(tmp_path / "moved"), str(tmp_path / "moved_cold")
    shutil.copytree(seed, moved_seed)
    run_ttl(moved_seed, _move(moved_cold))
    jobs = []
    for i, fault in enumerate(MOVE_FAULTS + BACK_FAULTS):
        hot, cold = str(tmp_path / f"hot{i}"), str(tmp_path / f"cold{i}")
        if fault in MOVE_FAULTS:
            shutil.copytree(seed, hot)
        else:
            shutil.copytree(moved_seed, hot)
            shutil.copytree(moved_cold, cold)
        jobs.append((hot, cold, "move" if fault in MOVE_FAULTS else "back", fault))
    _children(jobs)
    for hot, cold, what, fault in jobs:
        _in_hot_or_cold(hot, cold, model)
        if what == "move":
            assert run_ttl(hot, _move(cold)).expired_partitions == ["old", "older"], fault
            in_hot, in_cold = ["new"], ["old", "older"]
        else:
            res = bring_back(hot, ["old"], target=cold)
            assert res.already_back == ["old"] and res.cold_drop_instant, fault
            in_hot, in_cold = ["new", "old"], ["older"]
        for reader in (None, read_hudi_rs):
            assert _read(hot, reader) == _flat(model, in_hot), fault
            assert _read(cold, reader) == _flat(model, in_cold), fault
        # The re-run leaves nothing pending: a drop or copy the kill left behind was rolled back.
        assert not HoodieTable(hot).timeline.pending().instants, fault
        assert not HoodieTable(cold).timeline.pending().instants, fault


# -- interfaces ----------------------------------------------------------------------------------------

def test_cli_and_call(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from hoodie.interfaces.cli import main
    from tests.interfaces.test_procedure_rows import call, named

    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    model = _build(hot, "COPY_ON_WRITE", {"old": (40, 3, False), "older": (50, 2, False), "new": (1, 2, False)})
    assert main(["ttl", "run", hot, "--dry-run", "--json", "--move-to", cold,
                 "--set", "hoodie.partition.ttl.strategy.days.retain=10"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["action"] == "move" and doc["moves"] == {"old": f"{cold}/old", "older": f"{cold}/older"}
    assert not os.path.exists(cold)
    rows = call("run_ttl", hot, retain_days=10, action="move", target=cold, dry_run=True)
    assert sorted((named("run_ttl", r)["partition"], named("run_ttl", r)["status"]) for r in rows) == \
        [("old", "would move"), ("older", "would move")]
    rows = call("run_ttl", hot, retain_days=10, action="move", target=cold)
    assert sorted(named("run_ttl", r)["status"] for r in rows) == ["moved", "moved"]
    assert "verified" in named("run_ttl", rows[0])["reason"]
    assert _read(cold) == _flat(model, ["old", "older"])
    assert main(["ttl", "bring-back", hot, "old", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["partitions"]["old"]["rows"] == 3 and doc["cold_drop_instant"]
    rows = call("bring_back_partitions", hot, partitions="older", keep_cold=True)
    assert named("bring_back_partitions", rows[0])["status"] == "brought back"
    assert _read(hot) == _flat(model, model) and _read(cold) == _flat(model, ["older"])
    assert main(["ttl", "bring-back", hot, "new", "--target", cold]) == 2
    assert "holds no rows in new" in capsys.readouterr().err


# -- issue 31: moving a partition again, bringing back after schema evolution ------------------------

def _late(hot: str, table_type: str, rows: list[tuple], keyless: bool = False) -> None:
    o = _opts(table_type, "insert" if keyless else "upsert")
    if keyless:
        o.pop("hoodie.datasource.write.recordkey.field")
    write_arrow(hot, _batch(rows), o)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_second_move_adds_late_rows_to_the_cold_partition(tmp_path: Path, table_type: str) -> None:
    """Issue 31 item 9: late rows written to a moved partition are moved again; the first move's rows
    stay in the cold table (the second copy used to insert_overwrite the partition with the late rows
    only: the first move's rows were in neither table). A late row with a key the cold table holds is
    the newer version of that key and replaces it."""
    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    model = _build(hot, table_type, {"old": (40, 3, False), "new": (1, 2, False)})
    run_ttl(hot, _move(cold))
    late = [("late-1", "old", 1, 50), ("old-1", "old", 9, 51)]  # a new key and a newer version of old-1
    _late(hot, table_type, late)
    model["old"].update({r[0]: r for r in late})
    opts = _move(cold, **{"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME",
                          "hoodie.partition.ttl.strategy.partition.selected": "old"})
    res = run_ttl(hot, opts)
    assert res.expired_partitions == ["old"]
    assert res.moved["old"]["rows"] == 2 and res.moved["old"]["cold_rows"] == 4
    for reader in (None, read_hudi_rs):
        assert _read(cold, reader) == _flat(model, ["old"])
        assert _read(hot, reader) == _flat(model, ["new"])


def test_second_move_of_a_keyless_table_adds_and_reruns_exactly(tmp_path: Path) -> None:
    """Item 9 on a table without record keys (generated keys differ between the tables): the late
    rows are added by the digests the hot table recorded; a re-run of the copy (as after a crash
    between the cold write and the hot commit) neither duplicates nor loses rows."""
    from hoodie.services.ttl import move as MV

    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    first = [("a", "old", 1, 1), ("b", "old", 1, 2)]
    o = _opts("COPY_ON_WRITE", "insert")
    o.pop("hoodie.datasource.write.recordkey.field")
    write_arrow(hot, _batch(first), o, instant=_at(NOW - 40 * DAY))
    run_ttl(hot, _move(cold))
    assert _read(cold) == sorted(first) and _read(hot) == []
    late = [("a", "old", 1, 1), ("c", "old", 2, 3)]  # a duplicate of a moved row is a row of its own here
    _late(hot, "COPY_ON_WRITE", late, keyless=True)
    t = HoodieTable(hot)
    cfg = MV.move_config(_move(cold), t)
    MV.copy_to_cold(t, ["old"], cfg)  # the copy of an interrupted move: the hot commit never came
    assert _read(cold) == sorted(first + late)
    opts = _move(cold, **{"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME",
                          "hoodie.partition.ttl.strategy.partition.selected": "old"})
    assert run_ttl(hot, opts).expired_partitions == ["old"]
    for reader in (None, read_hudi_rs):
        assert _read(cold, reader) == sorted(first + late)
    assert _read(hot) == []


@pytest.mark.parametrize("cleaned", [False, True])
def test_keyless_interrupted_move_then_more_late_rows(tmp_path: Path, cleaned: bool) -> None:
    """Item 9 without record keys, the hard case: a copy interrupted before the hot commit, then more
    late rows before the re-run. The cold partition matches neither the record of the last move nor
    that plus the moving rows; read as of the recorded move's cold instant it matches the record, and
    the re-run adds the moving rows to that. When the cold table's cleaner removed the files of that
    state (nothing can tell which cold rows are which), the move is refused before anything is written."""
    from hoodie.services.ttl import move as MV

    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    o = _opts("COPY_ON_WRITE", "insert")
    o.pop("hoodie.datasource.write.recordkey.field")
    write_arrow(hot, _batch([("a", "old", 1, 1)]), o, instant=_at(NOW - 40 * DAY))
    first = run_ttl(hot, _move(cold)).moved["old"]["instant"]
    _late(hot, "COPY_ON_WRITE", [("b", "old", 1, 2)], keyless=True)
    t = HoodieTable(hot)
    MV.copy_to_cold(t, ["old"], MV.move_config(_move(cold), t))  # the hot commit never came
    _late(hot, "COPY_ON_WRITE", [("c", "old", 1, 3)], keyless=True)
    opts = _move(cold, **{"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME",
                          "hoodie.partition.ttl.strategy.partition.selected": "old"})
    if cleaned:
        # What a cleaner keeping fewer versions (or a storage lifecycle rule) leaves: the first
        # move's file is gone, its replacing copy stays.
        gone = list((Path(cold) / "old").glob(f"*_{first}.parquet"))
        assert gone
        for f in gone:
            f.unlink()
        before_hot, before_cold = _timeline(hot), _timeline(cold)
        with pytest.raises(TTLMoveError, match="not readable any more.*Nothing was written"):
            run_ttl(hot, opts)
        assert _timeline(hot) == before_hot and _timeline(cold) == before_cold
        return
    assert run_ttl(hot, opts).expired_partitions == ["old"]
    for reader in (None, read_hudi_rs):
        assert _read(cold, reader) == [("a", "old", 1, 1), ("b", "old", 1, 2), ("c", "old", 1, 3)]
    assert _read(hot) == []


@pytest.mark.parametrize("opt", [None, {"hoodie.write.set.null.for.missing.columns": "true"}])
def test_bring_back_after_the_hot_table_gained_a_column(tmp_path: Path, opt: Optional[dict]) -> None:
    """Issue 31 item 10: a partition moved before the hot table gained a column comes back with the
    column null (it was refused, also with the option the refusal recommended: a wedge)."""
    hot, cold = str(tmp_path / "hot"), str(tmp_path / "cold")
    model = _build(hot, "MERGE_ON_READ", {"old": (40, 3, True), "new": (1, 2, False)})
    run_ttl(hot, _move(cold))
    wide = _batch([("n-9", "new", 1, 9)]).append_column("extra", pa.array([7], pa.int64()))
    write_arrow(hot, wide, _opts("MERGE_ON_READ", "upsert"))
    res = bring_back(hot, ["old"], options=opt)
    assert res.instant and res.cold_drop_instant
    got = hoodie.read_table(hot)
    back = [r for r in got.to_pylist() if r["part"] == "old"]
    assert sorted((r["k"], r["part"], r["ts"], r["v"]) for r in back) == _flat(model, ["old"])
    assert all(r["extra"] is None for r in back)
    assert _read(cold) == []


def test_digest_ignores_null_columns_and_adds_up() -> None:
    """The move's digest: a column that is null (or absent) does not change it; the digest of two
    multisets of rows together is the sum of theirs (modulo 2**256)."""
    from hoodie.services.ttl.move import digest

    a = pa.table({"k": ["a", "b"], "v": [1, 2]})
    b = pa.table({"k": ["c"], "v": [3]})
    wide = a.append_column("x", pa.nulls(2, pa.int64()))
    assert digest(a) == digest(wide) != digest(a.append_column("x", pa.array([None, 1], pa.int64())))
    both = pa.concat_tables([a, b])
    assert int(digest(both), 16) == (int(digest(a), 16) + int(digest(b), 16)) % (1 << 256)
    assert digest(both) == digest(both.take([2, 0, 1]))
