"""One commit path: the transaction every write and table service commits through.

A :class:`Transaction` runs one :class:`Operation` (a write, a delete_partition, a clean, a rollback,
a compaction commit, a TTL run, a stash restore) in one order of steps:

1. take the table lock (:mod:`hoodie.format.lock`);
2. ``operation.prepare``: read and check what the operation needs (it may create the table, or find
   that there is nothing to commit: then the transaction ends here without an instant);
3. roll back failed writes (Hudi's EAGER policy), for operations that write data;
4. ``operation.check``: checks against the table as the rollback left it;
5. ``operation.start``: the requested and inflight instant files, with the action's content;
6. ``executor.execute``: the work, in this process or on Spark (the engine passes its executor in;
   services never import the engine). An operation that runs for long without blocking writers
   (compaction) releases the lock for this step and takes it again after;
7. pre-commit hooks: after the work, before the instant completes;
8. ``operation.complete`` says what the completed instant holds, and the commit point
   (:func:`hoodie.services.commit.commit`) records the instant in the table's metadata table
   (:mod:`hoodie.services.metadata`), writes the completed instant file and removes its markers;
   then ``operation.finalize`` does what the action does after it under the lock (a rollback removes
   the rolled-back instant's files, a TTL run stashes the expired files);
9. release the lock;
10. post-commit hooks (metrics, inline compaction, partition TTL, clean, catalog freshness). A hook
    that fails raises :class:`~hoodie.errors.PostCommitError` naming the committed
    instant: the commit stays committed and the error says so.

A failure in steps 6-7 calls ``operation.abort`` (by default nothing: the instant stays pending,
and the next writer rolls it back) and propagates; nothing is committed.
"""

from __future__ import annotations

import abc
import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional, Protocol, Sequence

from hoodie.errors import PostCommitError
from hoodie.format.lock import TableLock
from hoodie.format.schema_on_read import refuse_write as refuse_schema_on_read_write
from hoodie.format.table import refuse_unwritable
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, TableError
from hoodie.format.timeline.instant import Instant
from hoodie.format.metadata.table import files_partition_available
from hoodie.format.timeline.commit_metadata import CommitMetadata
from hoodie.services.commit import Committed, commit
from hoodie.services.metadata.lifecycle import prepare_metadata_table
from hoodie.services.metadata.writer import MetadataWriter
from hoodie.services.rollback.failed_writes import register_live_instant, rollback_failed_writes, unregister_live_instant

log = logging.getLogger(__name__)


class Executor(Protocol):
    """Does an operation's work between its inflight instant and its commit (step 6).

    The pure-Python executors run it in this process; the Spark engine passes its own (one task per
    file group or compaction operation). Returns what the operation's ``complete`` records.
    """

    def execute(self, txn: "Transaction") -> Any:
        """Run the work of ``txn.operation`` for the inflight instant ``txn.instant``."""


class NoWork:
    """The executor of operations whose work is done by ``start`` and ``complete`` alone (a
    delete_partition replacecommit writes no data file)."""

    def execute(self, txn: "Transaction") -> Any:
        """Nothing to do; returns None."""
        return None


@dataclass(frozen=True)
class Hook:
    """A step run before (pre-commit) or after (post-commit) the commit. ``name`` is what a
    :class:`~hoodie.errors.PostCommitError` says failed (``clean``, ``compaction``,
    ``partition TTL``, ``publishing the write's metrics``...)."""

    name: str
    run: Callable[["Transaction"], Any]


class Operation(abc.ABC):
    """One action committed through a :class:`Transaction`; subclasses say what each step writes.

    Class attributes: ``what`` names the operation in lock files and messages;
    ``rollback_failed_writes`` makes the transaction roll back failed writes first (writes do, table
    services leave pending writes alone); ``execute_unlocked`` releases the table lock while the
    executor runs (``commit_what`` then names the second lock).
    """

    what: str = "operation"
    # Table versions the operation writes as Hudi does (checked before anything is written).
    table_versions: tuple[int, ...] = (6,)
    commit_what: Optional[str] = None
    rollback_failed_writes: bool = False
    execute_unlocked: bool = False
    # Operations that only remove files or record instants (clean, rollback, savepoint, restore) keep a
    # schema-on-read table's history as Java does; every other one is refused on such tables.
    schema_on_read_safe: bool = False

    def prepare(self, txn: "Transaction") -> bool:
        """Read and check what the operation needs, under the lock; set ``txn.table``. Returns False
        when there is nothing to commit (the transaction then ends without an instant)."""
        txn.table = txn.open_table()
        return True

    def check(self, txn: "Transaction") -> None:
        """Checks after failed writes were rolled back, before any timeline file is written."""

    @abc.abstractmethod
    def start(self, txn: "Transaction") -> Instant:
        """Create the requested and inflight instant files; returns the inflight instant."""

    @abc.abstractmethod
    def complete(self, txn: "Transaction", result: Any) -> "bytes | CommitMetadata":
        """What the completed instant ``txn.instant`` holds, from the executor's ``result``; the
        transaction then commits it (:func:`hoodie.services.commit.commit`). Writes nothing."""

    def finalize(self, txn: "Transaction") -> None:
        """What the action does after its commit, still under the lock."""

    def abort(self, txn: "Transaction", error: BaseException) -> None:
        """The work or a pre-commit hook failed (``error`` propagates after this). By default the
        instant stays pending: it is a failed write, which the next writer rolls back."""


class Transaction:
    """Runs one :class:`Operation` through the steps of the module docstring.

    ``table`` (or ``storage``, for a write that may create the table) names the table;
    ``options`` configure the lock (``hoodie.write.lock.*``); ``lock=False`` is for dry runs, which
    write nothing. After :meth:`run`: ``instant`` (inflight) and ``completed`` are set when an
    instant was committed, ``result`` holds what the executor returned, ``hook_results`` what each
    hook returned, and ``steps`` the steps run, in order (for logs and tests).
    """

    def __init__(self, operation: Operation, executor: Optional[Executor] = None, *,
                 table: Optional[HoodieTable] = None, storage: Optional[Storage] = None,
                 options: Optional[Mapping[str, Any]] = None, pre_commit: Sequence[Hook] = (),
                 post_commit: Sequence[Hook] = (), lock: bool = True) -> None:
        if table is None and storage is None:
            raise ValueError("a transaction needs the table or its storage")
        self.operation = operation
        self.executor: Executor = executor or NoWork()
        self.table: Optional[HoodieTable] = table
        self.storage: Storage = table.storage if table is not None else storage  # type: ignore[assignment]
        self.options: dict[str, Any] = dict(options or {})
        self.pre_commit: list[Hook] = list(pre_commit)
        self.post_commit: list[Hook] = list(post_commit)
        self.lock = lock
        self.instant: Optional[Instant] = None
        self.completed: Optional[Instant] = None
        self.result: Any = None
        self.hook_results: dict[str, Any] = {}
        self.steps: list[str] = []
        self._live: tuple[str, str] = ("", "")
        self._loaded = False  # whether self.table was loaded under the current acquisition of the lock

    # -- helpers for operations --------------------------------------------------------------------

    def open_table(self) -> HoodieTable:
        """The transaction's snapshot of the table (operations on an existing table call this in
        ``prepare``): loaded once per acquisition of the table lock, the one load a transaction needs to
        see what other writers committed (under the lock no one else changes the timeline); later calls
        return the same snapshot, which the transaction advances by the instants it writes."""
        if self.table is None or not self._loaded:
            self.table = (HoodieTable(self.storage.base_uri, storage=self.storage) if self.table is None
                          else self.table.latest())
            self._loaded = True
        return self.table

    @property
    def committed_instant(self) -> Optional[str]:
        """The instant time committed, or None."""
        return self.completed.timestamp if self.completed is not None else None

    def _step(self, name: str) -> None:
        self.steps.append(name)
        for observer in list(_observers):
            observer(self, name)

    @contextlib.contextmanager
    def _locked(self, what: str) -> Iterator[None]:
        # A new acquisition of the lock: what the last one loaded may be stale now.
        self._loaded = False
        if not self.lock:
            yield
            return
        with TableLock(self.storage, self.options, what):
            yield

    # -- the one sequence ------------------------------------------------------------------------------

    def run(self) -> "Transaction":
        """Run the operation (see the module docstring); returns ``self``.

        Raises what the operation raises before its commit (nothing committed), or
        :class:`~hoodie.errors.PostCommitError` for a failure after it.
        """
        self._step("begin")
        self._run_locked()
        self._step("unlock")
        if self.completed is not None:
            self._run_post_commit()
        return self

    def _run_locked(self) -> None:
        op = self.operation
        try:
            if op.execute_unlocked:
                with self._locked(op.what):
                    started = self._begin()
                if started:
                    # Writers go on meanwhile; the operation guards its own work (compaction's lock).
                    self._guarded(self._execute)
                    with self._locked(op.commit_what or op.what):
                        # Writers went on while the work ran: the one load of this acquisition of the lock.
                        self.open_table()
                        self._guarded(self._pre_commit)
                        self._commit()
            else:
                with self._locked(op.what):
                    if self._begin():
                        self._guarded(self._execute)
                        self._guarded(self._pre_commit)
                        self._commit()
        except PostCommitError:
            raise
        except Exception as e:
            if self.completed is None:
                raise
            # The commit point passed: a finalize step or releasing the lock failed after it.
            raise PostCommitError(self.completed.timestamp, self.storage.base_uri, "releasing the table lock",
                                  e) from e

    def commit(self, inflight: Instant, content: "bytes | CommitMetadata") -> Committed:
        """Complete ``inflight`` of this transaction's table through the commit point, recording it in the
        metadata table first: the transaction's own instant (:meth:`run`'s commit step), and the
        rollbacks of failed writes it runs. The transaction goes on with the snapshot the commit point
        returns (its own completed instant added, no listing). A transaction without the lock (a dry
        run) writes no metadata table, so a table that has one refuses its completions."""
        record = self.record_in_metadata_table if self.lock else None
        done = commit(self.storage, inflight, content, record=record, table=self.table)
        if done.table is not None:
            self.table = done.table
        return done

    def record_in_metadata_table(self, inflight: Instant, content: bytes) -> HoodieTable:
        """Before ``inflight`` completes: record it in the metadata table, if the table has one. Returns
        the snapshot the recording left (a new one when it changed the table's properties, such as an
        index partition it built or dropped)."""
        table = self.table if self.table is not None else self.open_table()
        if not files_partition_available(table.props):
            return table
        self._step(f"metadata table {inflight.timestamp}.{inflight.action}")
        writer = MetadataWriter(table, self.options)
        writer.update(inflight, content)
        self.table = writer.table
        return writer.table

    def _begin(self) -> bool:
        """Steps 2-5 under the lock; False when there is nothing to commit."""
        op = self.operation
        self._step("lock")
        self._step("prepare")
        if not op.prepare(self):
            self._step("nothing to commit")
            return False
        assert self.table is not None, f"{type(op).__name__}.prepare must set txn.table"
        if self.table.table_version not in op.table_versions:
            raise TableError(
                f"{op.what} on {self.table.base_path}: the table is version {self.table.table_version} (Hudi 1.x) and "
                f"hoodie runs {op.what} on table versions {', '.join(map(str, op.table_versions))} only. Nothing was "
                "written")
        if not op.schema_on_read_safe:
            # Before anything is written (metadata table, rollbacks, instants): hoodie does not keep the
            # schema history Java's writers keep.
            refuse_schema_on_read_write(self.table, op.what)
            refuse_unwritable(self.table, op.what)
        create_mdt = False
        if self.lock:
            # Before anything is committed: drop what hoodie does not maintain, or a metadata table
            # that is broken or stale (rebuilt below), or all of it when hoodie.metadata.enable=false.
            self._step("metadata table")
            # (The metadata table's own timeline and the table's properties change here, not the data
            # timeline: the table's listing from prepare stays the transaction's snapshot, with the
            # properties the step leaves.)
            self.table, create_mdt = prepare_metadata_table(self.table, self.options)
        if op.rollback_failed_writes:
            self._step("rollback failed writes")
            # Each rollback goes on with the snapshot its commit returned and takes the failed write's
            # instant files out of it: the transaction's snapshot (self.table, set by self.commit) needs
            # no listing after them.
            rollback_failed_writes(self.table, commit=self.commit)
        if create_mdt:
            self._step("create metadata table")
            writer = MetadataWriter(self.table, self.options)
            writer.bootstrap()  # the metadata table's own timeline; the data timeline is as it was
            self.table = writer.table
        self._step("check")
        op.check(self)
        self._step("start")
        self.instant = op.start(self)
        # Until it completes, this process's own instant is no failed write to roll back.
        self._live = register_live_instant(self.storage.uri(), self.instant.timestamp)
        return True

    def _guarded(self, step: Callable[[], None]) -> None:
        """Run a step between start and commit; on failure let the operation abort, then raise."""
        try:
            step()
        except BaseException as e:
            self._step("abort")
            unregister_live_instant(self._live)
            self.operation.abort(self, e)
            raise

    def _execute(self) -> None:
        self._step("execute")
        self.result = self.executor.execute(self)

    def _pre_commit(self) -> None:
        for hook in self.pre_commit:
            self._step(f"pre-commit {hook.name}")
            self.hook_results[hook.name] = hook.run(self)

    def _commit(self) -> None:
        self._step("complete")
        assert self.instant is not None
        try:
            content = self.operation.complete(self, self.result)
            self.completed = self.commit(self.instant, content).instant
        finally:
            unregister_live_instant(self._live)
        self._step("finalize")
        self.operation.finalize(self)

    def _run_post_commit(self) -> None:
        assert self.completed is not None
        for hook in self.post_commit:
            self._step(f"post-commit {hook.name}")
            try:
                self.hook_results[hook.name] = hook.run(self)
            except PostCommitError:
                raise
            except Exception as e:
                raise PostCommitError(self.completed.timestamp, self.storage.base_uri, hook.name, e) from e


# Observers of transaction steps, (transaction, step name) -> None: tests and tracing.
_observers: list[Callable[[Transaction, str], None]] = []
_observers_guard = threading.Lock()


@contextlib.contextmanager
def observe(observer: Callable[[Transaction, str], None]) -> Iterator[None]:
    """Call ``observer(transaction, step)`` for every step of every transaction while in the block."""
    with _observers_guard:
        _observers.append(observer)
    try:
        yield
    finally:
        with _observers_guard:
            _observers.remove(observer)


__all__ = ["Transaction", "Operation", "Executor", "NoWork", "Hook", "observe"]
