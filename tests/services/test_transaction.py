"""The one commit path (hoodie.services.transaction): the order of a transaction's steps, what a
failing pre-commit or post-commit hook leaves behind, that every write and table service commits
through a transaction, and the one delete_partition writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.lock import TableLock
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.instant import State
from hoodie.services.clean import pending_operations, run_clean
from hoodie.format.storage import Storage
from hoodie.format.timeline import active as T
from hoodie.services.compaction import run_compaction, schedule_compaction
from hoodie.services.compaction.rollback import remove_compaction_plan, rollback_compaction
from hoodie.services.rollback.operation import rollback
from hoodie.services.transaction import Hook, Transaction, observe
from hoodie.services.ttl import restore, run_ttl
from hoodie.services.ttl.service import delete_partitions
from hoodie import write_arrow
from hoodie.services.write import ArrowWriteExecutor, PostCommitError, run_write


def opts(table_type: str = "COPY_ON_WRITE", op: str = "upsert", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "txn_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
        "hoodie.clean.automatic": "false",
        **extra,
    }


def rows(part: str, n: int = 3, ts: int = 1) -> pa.Table:
    return pa.table({"k": [f"{part}-{i}" for i in range(n)], "part": [part] * n,
                     "ts": pa.array([ts] * n, pa.int64())})


def lock_is_free(path: str) -> bool:
    return not (Path(path) / ".hoodie" / "lock").exists()


class RecordingExecutor(ArrowWriteExecutor):
    """The in-process write executor, recording when it runs and what the timeline shows then."""

    def __init__(self, data: pa.Table, options: dict, log: list) -> None:
        super().__init__(data, options)
        self.log = log

    def execute(self, txn: Transaction) -> Any:
        assert txn.instant is not None and txn.table is not None
        state = txn.table.reload().timeline.get(txn.instant.timestamp).state
        self.log.append(("execute", state))
        return super().execute(txn)


def test_steps_run_in_order_with_hooks_around_the_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, rows("a"), opts())
    log: list = []

    def pre(txn: Transaction) -> str:
        # After the work, before the instant completes, under the lock.
        log.append(("pre", txn.table.reload().timeline.get(txn.instant.timestamp).state, lock_is_free(path)))
        return "pre done"

    def post(txn: Transaction) -> str:
        log.append(("post", txn.table.reload().timeline.get(txn.instant.timestamp).state, lock_is_free(path)))
        return "post done"

    seen: list = []
    with observe(lambda txn, step: seen.append(step)):
        from hoodie.format.storage import Storage

        instant = run_write(Storage(path), opts(), RecordingExecutor(rows("a", ts=2), opts(), log),
                            pre_commit=[Hook("recorder", pre)], post_commit=[Hook("recorder", post)])
    assert log == [("execute", State.INFLIGHT), ("pre", State.INFLIGHT, False), ("post", State.COMPLETED, True)]
    assert seen == ["begin", "lock", "prepare", "metadata table", "rollback failed writes", "check",
                    "start", "execute",
                    "pre-commit recorder", "complete", "finalize", "unlock",
                    "post-commit publishing the write's metrics", "post-commit recorder"]
    assert HoodieTable(path).timeline.get(instant).is_completed


def test_a_failing_post_commit_hook_leaves_the_commit_committed(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, rows("a"), opts())

    def boom(txn: Transaction) -> None:
        raise OSError("catalog unreachable")

    from hoodie.format.storage import Storage

    with pytest.raises(PostCommitError, match=r"the write committed as instant (\d+).*then the inline catalog") as e:
        run_write(Storage(path), opts(), ArrowWriteExecutor(rows("b"), opts()), post_commit=[Hook("catalog", boom)])
    assert isinstance(e.value.__cause__, OSError)
    inst = HoodieTable(path).timeline.get(e.value.instant)
    assert inst is not None and inst.is_completed
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["a-0", "a-1", "a-2", "b-0", "b-1", "b-2"]
    assert lock_is_free(path)


def test_a_failing_pre_commit_hook_commits_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, rows("a"), opts())
    started: list[str] = []

    def boom(txn: Transaction) -> None:
        started.append(txn.instant.timestamp)
        raise RuntimeError("metadata table update failed")

    from hoodie.format.storage import Storage

    with pytest.raises(RuntimeError, match="metadata table update failed"):
        run_write(Storage(path), opts(), ArrowWriteExecutor(rows("b"), opts()), pre_commit=[Hook("mdt", boom)])
    (failed,) = started
    tl = HoodieTable(path).timeline
    assert tl.get(failed).is_inflight  # pending: nothing committed, rollbackable
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["a-0", "a-1", "a-2"]
    assert lock_is_free(path)
    res = rollback(path, failed)
    assert res.rolled_back == failed and HoodieTable(path).timeline.get(failed) is None
    # The next write finds nothing left over.
    write_arrow(path, rows("c"), opts())
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["a-0", "a-1", "a-2", "c-0", "c-1", "c-2"]


def test_a_failed_execution_leaves_the_instant_to_the_next_writer(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, rows("a"), opts())

    class Failing(ArrowWriteExecutor):
        def execute(self, txn: Transaction) -> Any:
            super().execute(txn)
            raise OSError("disk full")

    from hoodie.format.storage import Storage

    with pytest.raises(OSError, match="disk full"):
        run_write(Storage(path), opts(), Failing(rows("b"), opts()))
    (pending,) = HoodieTable(path).timeline.pending().instants
    seen: list = []
    with observe(lambda txn, step: seen.append(step)):
        write_arrow(path, rows("c"), opts())
    assert "rollback failed writes" in seen
    assert HoodieTable(path).timeline.get(pending.timestamp) is None
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["a-0", "a-1", "a-2", "c-0", "c-1", "c-2"]


def test_every_entry_point_commits_through_a_transaction(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    mor = opts("MERGE_ON_READ")
    begun: list[str] = []
    committed: list[str] = []

    def watch(txn: Transaction, step: str) -> None:
        if step == "begin":
            begun.append(type(txn.operation).__name__)
        if step == "complete":
            committed.append(type(txn.operation).__name__)

    with observe(watch):
        write_arrow(path, rows("old"), mor, instant="19700101000000000")  # an old partition TTL expires
        write_arrow(path, rows("a"), mor)
        write_arrow(path, rows("a", ts=2), mor)  # log files to compact
        c = schedule_compaction(path, check_trigger=False)
        run_compaction(path, c)
        write_arrow(path, rows("a", ts=3), mor)
        rollback(path, HoodieTable(path).timeline.completed_writes().last().timestamp)
        run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                         "hoodie.cleaner.fileversions.retained": "1"})
        ttl = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10",
                             "hoodie.partition.ttl.stash.enabled": "true"})
        restore(path, ttl.instant)
        write_arrow(path, rows("b"), mor)
        write_arrow(path, rows("b"), {**mor, "hoodie.datasource.write.operation": "delete_partition"})
        write_arrow(path, rows("c"), mor)
        table = HoodieTable(path)
        from hoodie.format.file_group.fsview import FileSystemView

        c_fids = sorted({s.file_id for s in FileSystemView(table.storage, table.timeline).latest_file_slices("c")})
        delete_partitions(table, {"c": c_fids})
        # A pending compaction rolled back to requested, then its plan removed: each a rollback instant.
        write_arrow(path, rows("a", ts=4), mor)
        c2 = schedule_compaction(path, check_trigger=False)
        T.transition_to_inflight(Storage(path), I.Instant(c2, I.COMPACTION, State.REQUESTED), b"")
        rollback_compaction(path, c2)
        remove_compaction_plan(path, c2)
    assert begun == ["WriteOperation"] * 3 + ["CompactionCommit", "WriteOperation", "RollbackOperation",
                                              "CleanOperation", "TTLOperation", "RestoreOperation"] \
        + ["WriteOperation"] * 3 + ["DeletePartitionOperation", "WriteOperation", "_CompactionRollback",
                                    "_PlanRemoval"]
    assert c2 not in {i.timestamp for i in HoodieTable(path).timeline.instants}
    # Each of them committed its instant in the transaction's complete step.
    assert committed == begun


def test_one_delete_partition_writer_and_its_pending_state(tmp_path: Path) -> None:
    """A user's delete_partition and a TTL run write the same instant files (Hudi's); a pending one
    shows in pending operations as a delete_partition."""
    path = str(tmp_path / "t")
    write_arrow(path, rows("old"), opts(), instant="19700101000000000")
    write_arrow(path, rows("a"), opts())
    write_arrow(path, rows("b"), opts())
    user = write_arrow(path, rows("b"), opts(op="delete_partition"))
    ttl = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10"}).instant
    tl = HoodieTable(path).timeline
    contents = []
    for ts in (user, ttl):
        req = plans.read_avro_metadata(tl.read_file(I.instant_file_name(ts, I.REPLACE_COMMIT, State.REQUESTED)))
        inflight = tl.read_file(I.instant_file_name(ts, I.REPLACE_COMMIT, State.INFLIGHT))
        contents.append((req, inflight))
    assert contents[0] == contents[1]
    req, inflight = contents[0]
    assert req == {"operationType": "DELETE_PARTITION", "clusteringPlan": None, "extraMetadata": {}, "version": 1}
    import json

    assert json.loads(inflight) == {"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {},
                                    "operationType": "DELETE_PARTITION"}

    # A delete_partition interrupted after its inflight file is pending as a delete_partition.
    seen: list = []

    class Stop(Exception):
        pass

    def stop_at_execute(txn: Transaction, step: str) -> None:
        if step == "execute":
            seen.append(txn.instant.timestamp)
            raise Stop()

    with observe(stop_at_execute), pytest.raises(Stop):
        write_arrow(path, rows("a"), opts(op="delete_partition"))
    (pending,) = seen
    ops = pending_operations(HoodieTable(path))
    assert ops.unknown_writes == [f"delete_partition {pending}"]
    assert ops.reasons("a") == [f"pending delete_partition {pending} does not name its partitions; let it "
                                "finish or roll it back (hoodie rollback)"]
    # The next writer rolls it back like any failed write.
    write_arrow(path, rows("c"), opts())
    assert HoodieTable(path).timeline.get(pending) is None
    assert sorted(set(hoodie.read_table(path).column("part").to_pylist())) == ["a", "c"]


def test_execute_unlocked_releases_the_lock_for_the_work_only(tmp_path: Path) -> None:
    """A compaction's work runs without the table lock; its start and commit hold it."""
    path = str(tmp_path / "t")
    mor = opts("MERGE_ON_READ")
    write_arrow(path, rows("a"), mor)
    write_arrow(path, rows("a", ts=2), mor)
    c = schedule_compaction(path, check_trigger=False)
    held: dict[str, bool] = {}

    def watch(txn: Transaction, step: str) -> None:
        if step in ("start", "execute", "complete"):
            held[step] = not lock_is_free(path)

    with observe(watch):
        run_compaction(path, c)
    assert held == {"start": True, "execute": False, "complete": True}
    # A writer may take the lock while the work runs (it is free), and the table stays consistent.
    with TableLock(HoodieTable(path).storage, None, "test"):
        pass
    assert sorted(hoodie.read_table(path).column("ts").to_pylist()) == [2, 2, 2]


def test_compaction_post_commit_hooks_run_after_each_commit(tmp_path: Path) -> None:
    """run_compaction's ``post_commit`` (how CALL run_compaction refreshes the catalog's freshness
    properties) runs after the compaction completed; a failing hook leaves it committed."""
    path = str(tmp_path / "t")
    mor = opts("MERGE_ON_READ")
    write_arrow(path, rows("a"), mor)
    write_arrow(path, rows("a", ts=2), mor)
    seen: list = []

    def record(txn: Transaction) -> None:
        seen.append((txn.instant.timestamp, txn.table.reload().timeline.get(txn.instant.timestamp).is_completed))

    first = schedule_compaction(path, {"hoodie.compact.inline.max.delta.commits": "1"})
    assert first is not None
    results = run_compaction(path, first, post_commit=[Hook("catalog", record)])
    assert seen == [(first, True)] and results[0].instant == first

    write_arrow(path, rows("a", ts=3), mor)
    second = schedule_compaction(path, {"hoodie.compact.inline.max.delta.commits": "1"})
    assert second is not None

    def boom(txn: Transaction) -> None:
        raise OSError("catalog unreachable")

    with pytest.raises(PostCommitError, match="catalog") as e:
        run_compaction(path, second, post_commit=[Hook("catalog", boom)])
    assert e.value.instant == second and HoodieTable(path).timeline.get(second).is_completed
    assert lock_is_free(path)


def test_every_completion_passes_the_one_commit_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The transaction's commit step and the rollback of a failed write it runs first complete through
    hoodie.services.commit.commit, which records each instant in the metadata table before its completed
    file exists and removes its markers; the metadata table's own deltacommits go through it too (as
    completions of a table without a metadata table of its own)."""
    path = str(tmp_path / "t")
    o = opts(**{"hoodie.metadata.enable": "true"})
    write_arrow(path, rows("a"), o)

    class Failing(ArrowWriteExecutor):
        def execute(self, txn: Transaction) -> Any:
            super().execute(txn)
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_write(Storage(path), o, Failing(rows("b"), o))
    (failed,) = HoodieTable(path).timeline.pending().instants
    mdt_timeline = Path(path) / ".hoodie" / "metadata" / ".hoodie"
    seen: list[tuple] = []
    real = T.write_completion

    def spy(pending: T.PendingCompletion, *, metadata_table_updated: bool) -> I.Instant:
        inst = pending.inflight
        in_mdt = pending.storage.uri().rstrip("/").endswith(".hoodie/metadata")
        recorded = (mdt_timeline / f"{inst.timestamp}.deltacommit").exists()
        seen.append(("mdt" if in_mdt else "data", inst.action, metadata_table_updated, in_mdt or recorded))
        return real(pending, metadata_table_updated=metadata_table_updated)

    monkeypatch.setattr(T, "write_completion", spy)
    instant = write_arrow(path, rows("c"), o)
    data = [s for s in seen if s[0] == "data"]
    assert data == [("data", I.ROLLBACK, True, True), ("data", I.COMMIT, True, True)]
    assert {s[1:3] for s in seen if s[0] == "mdt"} == {(I.DELTA_COMMIT, False)}
    assert HoodieTable(path).timeline.get(failed.timestamp) is None
    assert not (Path(path) / ".hoodie" / ".temp" / instant).exists()  # the commit point removed the markers
