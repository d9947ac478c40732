"""The write's room: writes (insert, upsert, delete, overwrites, delete_partition) as transactions, the
one write flow of the pure-Python writer (:func:`hoodie.interfaces.python_io.write_arrow`, which passes
:class:`ArrowWriteExecutor`) and the Spark engine (``hoodie.spark.write``, which passes its own
:class:`WriteExecutor`). Shaped like delta-rs ``operations/write``:

* this module, the flow: :class:`WriteOperation` (the transaction's steps), :func:`run_write`,
  :func:`commit_write` (the write stats into the completed instant), :func:`open_or_create`;
* :mod:`~hoodie.services.write.configs`: the options parsed into one :class:`WriteConfig`, checked
  against the table;
* :mod:`~hoodie.services.write.prepare`: the input records (keys, partition paths, event times,
  soft deletes) and the schema the write leaves;
* :mod:`~hoodie.services.write.plan`: tagging, de-duplication and sizing into per-file-group work;
* :mod:`~hoodie.services.write.execution`: writing one file group (the format layer writes the
  files themselves: :mod:`hoodie.format.slice.writer`).

:class:`WriteOperation` parses and checks the options and data, creates the table when absent,
writes the requested/inflight instant of the operation (a commit, deltacommit or replacecommit;
:mod:`hoodie.services.delete_partition` for delete_partition) and commits the write stats the
executor returns; the executor decides where the file groups are written. After the commit the
transaction publishes the write's metrics and runs the post-commit hooks its caller passes: the
entry points pass the inline services the options enable (:mod:`hoodie.services.inline`), which this
package does not import, so the services may write through it (partition TTL's move action does).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.configs.write import COMMIT_METADATA_KEY_PREFIX
from hoodie.faults import fault_point
from hoodie.errors import PostCommitError, WriteError
from hoodie.format.file_group.fsview import FileSystemView, check_partition_nesting
from hoodie.format.keys.generators import key_generator_from_config
from hoodie.format.slice import writer as W
from hoodie.format.storage import Storage
from hoodie.format.table import META_COLUMNS, HoodieTable, create_table, table_exists
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.format.timeline.instant import Instant
from hoodie.metrics import publish_write
from hoodie.services.delete_partition import DeletePartitionOperation
from hoodie.services.transaction import Hook, Operation, Transaction
from hoodie.services.write.configs import (
    OPERATION_TYPES, OVERWRITE_OPERATIONS, PARTITIONS_TO_DELETE, PREPPED, WriteConfig, overwrite_config,
)
from hoodie.services.write.execution import write_file_groups
from hoodie.services.write.plan import (  # noqa: I001
    RecordIndexConflict,
    action_for, check_compaction_plans, partitions_to_delete, replaced_file_groups, requested_content,
)
from hoodie.services.write.prepare import avro_schema_for, check_event_times, prepare_records, with_auto_keys

METRICS_HOOK = "publishing the write's metrics"

# A check of the options a post-commit hook reads, run before anything is written: called with whether
# the table is MERGE_ON_READ and its properties (None for a table the write creates). A misconfiguration
# found only after the commit would raise with the data committed (see :mod:`hoodie.services.inline`).
OptionCheck = Callable[[bool, Optional[Mapping[str, str]]], None]


@dataclass
class WriteOutcome:
    """What an executor wrote: the write stats, and the partitions the input touched (an
    insert_overwrite replaces the file groups of those)."""

    stats: list[WriteStat]
    partitions: list[str] = field(default_factory=list)


class WriteExecutor(Protocol):
    """Where a write's data work runs: in this process (:class:`ArrowWriteExecutor`) or on Spark
    (the engine's). The operation calls these in this order, under the table lock."""

    def body_schema(self) -> pa.Schema:
        """The input's schema without meta columns (the table schema is derived from it)."""

    def check(self, op: "WriteOperation", existing: Optional[HoodieTable]) -> None:
        """Check every record (keys, partition paths, precombine values...) before anything is
        written; raise the first error found."""

    def partitions_to_delete(self, op: "WriteOperation") -> list[str]:
        """The partitions of a delete_partition write."""

    def execute(self, txn: Transaction) -> WriteOutcome:
        """Write the file groups of ``txn.operation`` for the inflight instant ``txn.instant``."""

    def abort(self, txn: Transaction, error: BaseException) -> None:
        """The work failed before the commit (``error`` propagates after this)."""


class WriteOperation(Operation):
    """One write as a transaction's operation (see the module docstring)."""

    table_versions = (6, 8, 9)

    rollback_failed_writes = True

    def __init__(self, storage: Storage, options: Mapping[str, Any], executor: WriteExecutor, *,
                 mode: str = "append", instant: Optional[str] = None,
                 storage_options: Optional[dict[str, Any]] = None, what: str = "write",
                 checks: Sequence[OptionCheck] = ()) -> None:
        self.storage = storage
        self.options = options
        self.executor = executor
        self.mode = mode
        self.instant_time = instant
        self.storage_options = storage_options
        self.what = what
        self.checks = list(checks)
        self.started = time.monotonic()
        self.cfg: Optional[WriteConfig] = None
        self.existing: Optional[HoodieTable] = None
        self.avro_schema: dict = {}
        self.delete: Optional[DeletePartitionOperation] = None

    @property
    def config(self) -> WriteConfig:
        """The parsed write config (set by :meth:`prepare`)."""
        assert self.cfg is not None
        return self.cfg

    @property
    def operation_type(self) -> str:
        """Hudi's operationType of this write (``UPSERT``...)."""
        return OPERATION_TYPES[self.config.operation]

    def prepare(self, txn: Transaction) -> bool:
        """Parse the options against the table, check every record, create the table when absent."""
        self.started = time.monotonic()
        st = self.storage
        existing = HoodieTable(st.base_uri, storage=st) if table_exists(st) else None
        if existing is not None:
            existing.merge_mode  # a merge hoodie cannot do Hudi's way is refused before anything is written
        self.existing = existing
        cfg = _prepped_upsert_config(self.options, self.executor, existing, self.mode == "overwrite") \
            or WriteConfig.from_options(self.options, existing, overwrite=self.mode == "overwrite")
        replace = self.mode == "overwrite" and existing is not None
        if replace:
            cfg = overwrite_config(cfg)
        self.cfg = cfg
        # The post-commit hooks run after the commit: a misconfiguration found only then would raise
        # with the data committed, so their options are checked now.
        for check in self.checks:
            check(cfg.table_type == "MERGE_ON_READ", existing.props if existing else None)
        self.executor.check(self, existing)
        if cfg.operation in ("delete", "delete_partition") and existing is not None:
            self.avro_schema = existing.avro_schema()
        else:
            # An overwrite's batch is the table's new content: its schema is the new table schema.
            self.avro_schema = avro_schema_for(self.executor.body_schema(), cfg, None if replace else existing)
        # hoodie.database.name (Hudi's HoodieTableConfig.DATABASE_NAME) is recorded when the write creates the table.
        txn.table = existing or open_or_create(st.base_uri, cfg, self.avro_schema, self.storage_options,
                                               database=self.options.get("hoodie.database.name") or None)
        return True

    def check(self, txn: Transaction) -> None:
        """Pending compaction plans must be readable; a delete_partition resolves its partitions."""
        assert txn.table is not None
        check_compaction_plans(txn.table)
        if self.config.operation != "delete_partition":
            return
        parts = self.executor.partitions_to_delete(self)
        if not parts:
            raise WriteError(f"delete_partition needs {PARTITIONS_TO_DELETE} or input rows naming the partitions")
        table = txn.table
        all_parts = set(FileSystemView(table.storage, table.timeline).partitions())
        missing = [p for p in parts if p not in all_parts]
        if missing:
            raise WriteError(f"delete_partition: partition(s) {missing} do not exist in {table.base_path}")
        self.delete = DeletePartitionOperation(replaced_file_groups(table, parts), instant=self.instant_time)

    def start(self, txn: Transaction) -> Instant:
        """The requested and inflight instant of the write's action."""
        assert txn.table is not None
        if self.delete is not None:
            return self.delete.start(txn)
        op = self.config.operation
        return W.start_commit(txn.table, action_for(txn.table, op), self.instant_time,
                              operation_type=self.operation_type, requested_content=requested_content(op))

    def execute(self, txn: Transaction) -> Optional[WriteOutcome]:
        """The transaction's executor step: the executor's file groups (a delete_partition has none)."""
        if self.delete is not None:
            return None
        return self.executor.execute(txn)

    def complete(self, txn: Transaction, result: Optional[WriteOutcome]) -> CommitMetadata:
        """The write's commit metadata: its write stats, and the file groups an overwrite replaces."""
        assert txn.table is not None and txn.instant is not None
        if self.delete is not None:
            return self.delete.complete(txn, None)
        assert result is not None
        table = txn.table
        cfg = self.config
        fault_point("write.before_complete")
        replaced = None
        if cfg.operation in OVERWRITE_OPERATIONS:
            # A static overwrite also replaces the partitions its spec names that it writes no row to.
            static = [p.strip() for p in str(self.options.get("hoodie.write.static.overwrite.partitions") or "")
                      .split(",") if p.strip()]
            parts = (FileSystemView(table.storage, table.timeline).partitions()
                     if cfg.operation == "insert_overwrite_table" else sorted(set(result.partitions) | set(static)))
            replaced = replaced_file_groups(table, parts)
        return W.commit_metadata_for(result.stats, avro_schema=self.avro_schema, operation_type=self.operation_type,
                                     extra=commit_extra_metadata(self.options), replaced=replaced)

    def finalize(self, txn: Transaction) -> None:
        """Nothing to do after the commit but the crash tests' fault point."""
        if self.delete is None:
            fault_point("write.after_complete")

    def abort(self, txn: Transaction, error: BaseException) -> None:
        """Let the executor undo its work (the Spark engine rolls the instant back at once)."""
        if self.delete is None:
            self.executor.abort(txn, error)

    def metrics_hook(self) -> Hook:
        """Publish the committed write's metrics (a post-commit hook)."""

        def publish(txn: Transaction) -> Any:
            assert txn.table is not None and txn.completed is not None
            stats = txn.result.stats if isinstance(txn.result, WriteOutcome) else []
            return publish_write(txn.table.name, txn.table.base_path, txn.completed.timestamp, self.operation_type,
                                 stats, int((time.monotonic() - self.started) * 1000), self.options)

        return Hook(METRICS_HOOK, publish)


def commit_extra_metadata(options: Mapping[str, Any]) -> dict[str, str]:
    """The write options stored in the commit's extraMetadata: those whose key begins with
    ``hoodie.datasource.write.commitmeta.key.prefix`` (``_`` by default), as Hudi's Spark writer stores
    them. The streaming sink's checkpoint (``_hudi_streaming_sink_checkpoint``) travels this way, so it
    completes in the same instant file as the micro-batch's data (one atomic step)."""
    prefix = COMMIT_METADATA_KEY_PREFIX.get(options)
    if not prefix:
        return {}
    return {str(k): str(v) for k, v in options.items()
            if isinstance(k, str) and k.startswith(prefix) and v is not None and k != "schema"}


def run_write(storage: Storage, options: Mapping[str, Any], executor: WriteExecutor, *, mode: str = "append",
              instant: Optional[str] = None, storage_options: Optional[dict[str, Any]] = None,
              what: str = "write", checks: Sequence[OptionCheck] = (),
              pre_commit: Sequence[Hook] = (), post_commit: Sequence[Hook] = ()) -> str:
    """Run one write through a :class:`~hoodie.services.transaction.Transaction`; returns the
    committed instant time.

    ``executor`` does the data work. ``post_commit`` hooks run after the write's metrics, in their
    order (the entry points pass the inline services: :func:`hoodie.services.inline.post_commit_hooks`);
    ``checks`` check the options those hooks read before anything is written. A failure after the
    commit raises :class:`PostCommitError`.
    """
    if mode not in ("append", "overwrite"):
        raise WriteError(f"mode={mode!r}: use 'append' or 'overwrite'")
    op = WriteOperation(storage, options, executor, mode=mode, instant=instant, storage_options=storage_options,
                        what=what, checks=checks)
    hooks = [op.metrics_hook(), *post_commit]
    txn = Transaction(op, op, storage=storage, options=options, pre_commit=pre_commit, post_commit=hooks).run()
    assert txn.completed is not None
    return txn.completed.timestamp


def open_or_create(base_path: str, cfg: WriteConfig, avro_schema: Optional[dict],
                   storage_options: Optional[dict[str, Any]] = None, database: Optional[str] = None,
                   extra_props: Optional[dict[str, str]] = None) -> HoodieTable:
    """Open the table at ``base_path``, creating it from the write config when absent."""
    st = Storage(base_path, storage_options)
    if table_exists(st):
        return HoodieTable(base_path, storage=st)
    kg = key_generator_from_config(cfg.keygen_props, allow_auto_record_keys=cfg.auto_record_keys)
    return create_table(
        base_path, table_name=cfg.table_name, table_type=cfg.table_type,
        record_key_fields=cfg.record_key_fields, partition_fields=cfg.partition_fields,
        precombine_field=cfg.precombine_field, keygen_class=kg.java_class_name,
        hive_style=cfg.hive_style, url_encode=cfg.url_encode, avro_schema=avro_schema,
        payload_class=cfg.payload_class, timeline_timezone=cfg.timeline_timezone,
        database=database, extra_props=extra_props, storage=st, table_version=cfg.table_version,
        auto_record_keys=cfg.auto_record_keys,
    )


def _prepped_upsert_config(options: Mapping[str, Any], executor: Any, existing: Optional[HoodieTable],
                           overwrite: bool) -> Optional[WriteConfig]:
    """The config of Hudi's upsert prepped when this write is one, else None: rows read back from a table
    without record key fields carry ``_hoodie_record_key``, and written with the default operation (or
    upsert) Hudi 1.x takes them as an update of the records those keys name
    (``HoodieSparkSqlWriter.canDoPreppedWrites``; its quick start updates a key-less table this way). A
    delete takes the keys from the same columns already (``keys_from_input``).

    Raises:
        WriteError: such rows without ``_hoodie_partition_path`` (the key alone does not say where the
            record lives), or for a table that does not exist yet; before anything is written.
    """
    op = str(options.get("hoodie.datasource.write.operation", "upsert")).strip().lower()
    if op != "upsert" or str(options.get(PREPPED, "false")).strip().lower() == "true":
        return None
    columns = executor.input_columns() if hasattr(executor, "input_columns") else []
    if "_hoodie_record_key" not in columns:
        return None
    cfg = WriteConfig.from_options({**options, "hoodie.datasource.write.operation": "upsert", PREPPED: "true"},
                                   existing, overwrite=overwrite)
    if not cfg.auto_record_keys:
        return None
    if existing is None or "_hoodie_partition_path" not in columns:
        what = ("the table does not exist yet" if existing is None
                else "they lack _hoodie_partition_path, which says where each record lives")
        raise WriteError(
            "the rows carry _hoodie_record_key and the table has no record key fields (auto-generated keys): "
            "Hudi 1.x writes them as an update of the records those keys name (upsert prepped), but "
            f"{what}. Write the rows as read from the table (with their _hoodie_* columns), or drop the "
            "_hoodie_* columns (or set hoodie.datasource.write.operation=insert) to add them as new rows. "
            "Nothing was written")
    return cfg


class ArrowWriteExecutor:
    """The pure-Python write executor: plans and writes every file group in this process."""

    def __init__(self, data: pa.Table, options: Mapping[str, Any]) -> None:
        self.data = data
        self.options = options
        self.records: Optional[pa.Table] = None

    def input_columns(self) -> list[str]:
        """The input's column names, meta columns included."""
        return list(self.data.column_names)

    def body_schema(self) -> pa.Schema:
        """The input's schema without meta columns."""
        return self.data.drop_columns([c for c in self.data.column_names if c in META_COLUMNS]).schema

    def check(self, op: WriteOperation, existing: Optional[HoodieTable]) -> None:
        """Every check of the data (keys, partition paths, precombine values, schema) runs before
        the table is created or anything is written."""
        cfg = op.config
        body = self.data.drop_columns([c for c in self.data.column_names if c in META_COLUMNS])
        check_event_times(body, cfg)
        self.records = prepare_records(self.data, cfg)
        if cfg.operation not in ("delete", "delete_partition"):
            check_partition_nesting(op.storage, pc.unique(self.records.column("_hoodie_partition_path")).to_pylist(),
                                    existing.timeline if existing is not None else None)

    def partitions_to_delete(self, op: WriteOperation) -> list[str]:
        """``hoodie.datasource.write.partitions.to.delete``, or the partitions of the input rows."""
        return partitions_to_delete(self.options, self.records)

    def execute(self, txn: Transaction) -> WriteOutcome:
        """Plan the write and write its file groups one after another."""
        op = txn.operation
        assert isinstance(op, WriteOperation) and txn.table is not None and txn.instant is not None
        assert self.records is not None
        instant = txn.instant.timestamp
        # A write without record key fields gets Hudi's generated keys now that its instant is known: one
        # process, so partition id 0 and the rows numbered in input order.
        self.records = with_auto_keys(self.records, op.config, instant)
        stats = write_file_groups(txn.table, self.records, op.config, instant, op.avro_schema,
                                    "write.after_file_group")
        parts = sorted(pc.unique(self.records.column("_hoodie_partition_path")).to_pylist())
        return WriteOutcome(stats, parts)

    def abort(self, txn: Transaction, error: BaseException) -> None:
        """A write refused while planning (no file written yet) leaves no instant behind; after that,
        nothing: the instant stays pending and the next writer rolls it back."""
        if isinstance(error, RecordIndexConflict) and txn.table is not None and txn.instant is not None:
            txn.table.delete_instant(txn.instant.timestamp, txn.instant.action, (I.State.INFLIGHT, I.State.REQUESTED))


__all__ = ["run_write", "commit_extra_metadata", "OptionCheck", "WriteOperation", "WriteExecutor", "WriteOutcome",
           "ArrowWriteExecutor",
           "PostCommitError", "WriteError", "METRICS_HOOK"]
