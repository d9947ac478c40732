"""Model test for TTL stash, restore and rollback interleaved with upserts, deletes and cleans.

Random sequences of upsert / delete / TTL (with stash) / restore / rollback of the latest write /
clean run on a COPY_ON_WRITE or MERGE_ON_READ table. After every step the table (ours) must equal an
in-memory model, meta column ``_hoodie_commit_time`` included; at the end hudi-rs must agree.

The model's rule for a restore (issue 12 item 7): a stashed row comes back only if nothing after the
TTL run wrote its key, deleted it while it existed, expired it again or restored it. A delete of a
key that was only in a stash finds nothing and leaves no trace, so it does not count. A restore may
be refused (nothing written) only when it cannot be proven safe: rows were deleted after the TTL run
and a clean ran since. Rolling back a TTL commit brings its rows back (item 16); rolling back a
restore commit makes the stash restorable again.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from hoodie.services.clean import run_clean
from hoodie.services.rollback.operation import rollback
from hoodie.services.ttl import StashError, restore, run_ttl
from tests.hudi_rs import read_hudi_rs
from tests.services.test_ttl_stash import expire
from tests.helpers import examples

KEYS = range(4)
PARTS = ("p0", "p1")


def part_of(k: int) -> str:
    return PARTS[k % len(PARTS)]


Row = tuple[int, int, str]  # (ts, v, commit time)


@dataclass
class Stash:
    rows: dict[int, Row]
    state: str = "complete"  # complete | restored | rolled_back


@dataclass
class Model:
    rows: dict[int, Row] = field(default_factory=dict)
    # key -> instants that wrote it, deleted it while it existed, expired it or restored it
    events: dict[int, list[str]] = field(default_factory=dict)
    stashes: dict[str, Stash] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)  # instants of effective deletes
    cleans: list[str] = field(default_factory=list)  # instants before which a clean ran (the last write then)

    def copy(self) -> "Model":
        return Model(dict(self.rows), {k: list(v) for k, v in self.events.items()},
                     {i: Stash(dict(s.rows), s.state) for i, s in self.stashes.items()}, list(self.deletes),
                     list(self.cleans))

    def touch(self, k: int, instant: str) -> None:
        self.events.setdefault(k, []).append(instant)

    def expected(self) -> list[tuple]:
        return sorted((f"k{k}", part_of(k), ts, v, ct) for k, (ts, v, ct) in self.rows.items())


VERSION = {"v": 6}  # the table version of the running example (set by each test)


def _opts(table_type: str, op: str) -> dict[str, str]:
    return {
        "hoodie.write.table.version": str(VERSION["v"]),
        "hoodie.table.name": "restore_model",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
        "hoodie.clean.automatic": "false",
    }


def _batch(rows: dict[int, int], ts: int) -> pa.Table:
    keys = sorted(rows)
    return pa.table({"k": [f"k{k}" for k in keys], "part": [part_of(k) for k in keys],
                     "ts": pa.array([ts] * len(keys), pa.int64()), "v": pa.array([rows[k] for k in keys], pa.int64())})


def _read(path: str, reader=hoodie.read_table) -> list[tuple]:
    t = reader(path)
    if t.num_rows == 0:
        return []
    return sorted(zip(t.column("k").to_pylist(), t.column("part").to_pylist(), t.column("ts").to_pylist(),
                      t.column("v").to_pylist(), t.column("_hoodie_commit_time").to_pylist()))


op_strategy = st.one_of(
    st.tuples(st.just("upsert"), st.dictionaries(st.sampled_from(KEYS), st.integers(0, 99), min_size=1, max_size=4)),
    st.tuples(st.just("delete"), st.sets(st.sampled_from(KEYS), min_size=1, max_size=3)),
    st.tuples(st.just("ttl"), st.sampled_from(PARTS)),
    st.tuples(st.just("restore"), st.integers(0, 3)),
    st.tuples(st.just("rollback"), st.none()),
    st.tuples(st.just("clean"), st.none()),
)


def _run(table_type: str, ops: list[tuple[str, object]], version: int = 6) -> None:
    VERSION["v"] = version
    tmp = tempfile.mkdtemp()
    path = f"{tmp}/t"
    try:
        model = Model()
        # completed writes, newest last: (instant, kind, the model before it)
        history: list[tuple[str, str, Model]] = []
        write_arrow(path, _batch({0: 0, 1: 1}, 0), _opts(table_type, "insert"))
        from hoodie.format.table import HoodieTable

        assert HoodieTable(path).table_version == version
        first = hoodie.read_table(path).column("_hoodie_commit_time")[0].as_py()
        model.rows = {0: (0, 0, first), 1: (0, 1, first)}
        model.touch(0, first)
        model.touch(1, first)
        history.append((first, "insert", Model()))
        for step, (kind, arg) in enumerate(ops, start=1):
            before = model.copy()
            if kind == "upsert":
                assert isinstance(arg, dict)
                inst = write_arrow(path, _batch(arg, step), _opts(table_type, "upsert"))
                for k, v in arg.items():
                    model.rows[k] = (step, v, inst)
                    model.touch(k, inst)
                history.append((inst, kind, before))
            elif kind == "delete":
                assert isinstance(arg, set)
                inst = write_arrow(path, _batch({k: 0 for k in arg}, step), _opts(table_type, "delete"))
                for k in arg:
                    if model.rows.pop(k, None) is not None:
                        model.touch(k, inst)
                        if inst not in model.deletes:
                            model.deletes.append(inst)
                history.append((inst, kind, before))
            elif kind == "ttl":
                assert isinstance(arg, str)
                res = run_ttl(path, expire(arg))
                gone = {k: r for k, r in model.rows.items() if part_of(k) == arg}
                assert res.instant is not None or not gone
                if res.instant is not None:
                    for k in gone:
                        del model.rows[k]
                        model.touch(k, res.instant)
                    model.stashes[res.instant] = Stash(gone)
                    history.append((res.instant, kind, before))
            elif kind == "restore":
                assert isinstance(arg, int)
                if not model.stashes:
                    continue
                ttl = sorted(model.stashes)[arg % len(model.stashes)]
                stash = model.stashes[ttl]
                if stash.state != "complete":
                    try:
                        restore(path, ttl)
                    except StashError as e:
                        assert ("rolled back" if stash.state == "rolled_back" else "already restored") in str(e)
                    else:
                        raise AssertionError(f"restoring the {stash.state} stash {ttl} did not fail")
                    continue
                unprovable = any(d > ttl for d in model.deletes) and any(c > ttl for c in model.cleans)
                try:
                    res = restore(path, ttl)
                except StashError as e:
                    assert unprovable, f"restore of {ttl} refused although it is provably safe: {e}"
                    assert "--force" in str(e)
                    assert _read(path) == model.expected()
                    continue
                for k, row in stash.rows.items():
                    if not any(i > ttl for i in model.events.get(k, [])):
                        assert k not in model.rows
                        model.rows[k] = row
                        model.touch(k, res.instant)
                stash.state = "restored"
                history.append((res.instant, kind, before))
            elif kind == "rollback":
                inst, what, prior = history[-1]
                # Keep the first commit (the table's schema comes from it). A clean since an upsert
                # or delete may have removed the versions its rollback would fall back to (the
                # cleaner's documented trade-off, not a TTL matter).
                if len(history) == 1 or (what in ("upsert", "delete") and any(c >= inst for c in model.cleans)):
                    continue
                history.pop()
                rollback(path, inst)
                model = prior
            elif kind == "clean":
                run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                 "hoodie.cleaner.fileversions.retained": "1"})
                model.cleans.append(history[-1][0])
            assert _read(path) == model.expected(), f"after step {step} {kind} {arg}"
        assert _read(path, read_hudi_rs) == model.expected()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), st.sampled_from([6, 9]),
       st.lists(op_strategy, min_size=3, max_size=9))
def test_restore_and_rollback_interleaved_with_writes_match_the_model(table_type: str, version: int,
                                                                      ops: list) -> None:
    """On table versions 6 and 9."""
    _run(table_type, ops, version)


def test_rollback_of_a_restore_commit_makes_the_stash_restorable_again() -> None:
    _run("MERGE_ON_READ", [("ttl", "p0"), ("restore", 0), ("rollback", None), ("restore", 0),
                           ("upsert", {0: 7}), ("delete", {0, 2}), ("restore", 0)])


def test_restore_after_delete_and_clean_is_refused_or_exact() -> None:
    _run("COPY_ON_WRITE", [("ttl", "p0"), ("upsert", {0: 5, 2: 6}), ("delete", {0}), ("clean", None),
                           ("restore", 0), ("ttl", "p1"), ("rollback", None), ("restore", 0)])

