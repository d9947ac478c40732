"""Structured Streaming into a hoodie table: ``hoodie.spark.write_stream``.

Each micro-batch is one ``hoodie.spark.write`` (``foreachBatch`` underneath), so a batch gets the
shuffle and index lookup an upsert needs, the table lock, the rollback of a failed earlier attempt and
the inline services of any write. Exactly once, as Hudi's ``HoodieStreamingSink``:

1. The batch's commit records the stream's checkpoint in its extraMetadata
   (``_hudi_streaming_sink_checkpoint`` = ``{"<identifier>":"<batch id>"}``, plus Spark's query id under
   ``_hoodie_streaming_query_id``), in the same instant file as its data: the batch and its record
   complete together or not at all.
2. Before writing, the sink looks up the stream's latest recorded batch in the table
   (:func:`hoodie.services.streaming.last_committed_batch`: active timeline, then the archived one). A
   batch at or below it committed already: Spark is replaying it after a crash between the table's
   commit and Spark's own commit log, and it is skipped.
3. A batch killed before its commit leaves a pending instant that the next write rolls back (every
   write does), and Spark replays the batch from its offset log.

A write failing before its commit is retried (``hoodie.datasource.write.streaming.retry.count``, with
``...retry.interval.ms`` doubling), each attempt looking for the batch in the table first; input the
writer refuses (a ``ValueError``) is not retried. A failure of an inline service after the commit
(:class:`~hoodie.services.write.PostCommitError`) does not fail the stream: the batch is in the table,
the failure is logged as an error and kept in :func:`service_failures`, and the service runs again after
the next batch's commit.

On a merge-on-read table the sink manages compaction as Hudi's does
(``hoodie.datasource.compaction.async.enable``, default true, unless ``hoodie.compact.inline=true``):
each micro-batch's write schedules a compaction when its trigger says so, and a background thread of
the driver (:class:`~hoodie.services.compaction.CompactionAsyncService` with the Spark executor) runs
the plans, under the table lock only for its commit. A failed round is reported like a failed inline
service and retried in the next round; the thread stops when the query terminates.

``df.writeStream.format("hoodie")`` is refused (see :meth:`hoodie.engine.datasource.HoodieDataSource.streamWriter`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

from hoodie.configs import streaming as SK
from hoodie.configs import warn_unknown_keys
from hoodie.errors import HoodieError
from hoodie.faults import fault_point
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, table_exists
from hoodie.services import streaming as S
from hoodie.services.compaction import CompactionAsyncService
from hoodie.configs.compaction import INLINE as INLINE_COMPACTION, SCHEDULE_INLINE
from hoodie.services.write import PostCommitError, WriteError

log = logging.getLogger(__name__)

# Spark's local property holding the running query's id (StreamExecution.QUERY_ID_KEY): the id kept in the
# checkpoint location, the same across restarts from it.
QUERY_ID_PROPERTY = "sql.streaming.queryId"


@dataclass(frozen=True)
class ServiceFailure:
    """A table service that failed after a micro-batch committed: the batch, the committed instant, the
    service and the error text."""

    batch_id: int
    instant: str
    service: str
    error: str


_FAILURES: dict[str, list[ServiceFailure]] = {}
_FAILURES_LOCK = threading.Lock()


def service_failures(query: Any) -> list[ServiceFailure]:
    """The table-service failures reported by the streaming query ``query`` (a ``StreamingQuery`` or its
    id) since this process started it: each micro-batch committed; its inline service failed and runs
    again after the next batch."""
    qid = str(getattr(query, "id", query))
    with _FAILURES_LOCK:
        return list(_FAILURES.get(qid, []))


class HoodieStreamSink:
    """The ``foreachBatch`` function of :func:`write_stream`: one ``hoodie.spark.write`` per micro-batch,
    skipping a batch the table already holds (see the module docstring)."""

    def __init__(self, path: str, options: Mapping[str, Any], storage_options: Optional[dict[str, Any]] = None) -> None:
        self.path = path
        self.options = {str(k): str(v) for k, v in options.items() if v is not None}
        self.storage_options = storage_options
        self.identifier = str(SK.CHECKPOINT_IDENTIFIER.get(self.options))
        self.retries = int(SK.RETRY_COUNT.get(self.options))
        self.interval_ms = int(SK.RETRY_INTERVAL_MS.get(self.options))
        self.ignore_failed = bool(SK.IGNORE_FAILED_BATCH.get(self.options))
        self.async_compaction = bool(SK.ASYNC_COMPACTION.get(self.options)) and not INLINE_COMPACTION.get(self.options)
        self.compactor: Optional[CompactionAsyncService] = None
        self._errors_seen = 0
        self._last_batch = -1
        self._mor: Optional[bool] = None

    def _merge_on_read(self) -> bool:
        # A table's type never changes: read hoodie.properties once it exists, not per micro-batch.
        if self._mor is not None:
            return self._mor
        storage = Storage(self.path, self.storage_options)
        if table_exists(storage):
            self._mor = HoodieTable(self.path, storage=storage).is_mor
            return self._mor
        table_type = str(self.options.get("hoodie.datasource.write.table.type")
                         or self.options.get("hoodie.table.type") or "COPY_ON_WRITE")
        return table_type.upper() == "MERGE_ON_READ"

    def _start_compactor(self, spark: Any, query_id: Optional[str]) -> None:
        """The background compaction of a merge-on-read table (once per sink), stopped with the query."""
        if self.compactor is not None:
            return
        from hoodie.engine.compaction import spark_executor

        self.compactor = CompactionAsyncService(self.path, self.options, executor=spark_executor(spark),
                                                storage_options=self.storage_options).start()
        if query_id:
            _stop_with_query(spark, query_id, self)

    def _report_compactor_errors(self, query_id: Optional[str]) -> None:
        if self.compactor is None:
            return
        new = self.compactor.errors_after(self._errors_seen)
        self._errors_seen += len(new)
        for e in new:
            failure = ServiceFailure(self._last_batch, "", "async compaction", str(e))
            log.error("%s: the async compaction beside the stream failed; it runs again in its next round and "
                      "the stream goes on: %s", self.path, e)
            with _FAILURES_LOCK:
                _FAILURES.setdefault(str(query_id), []).append(failure)

    def stop_services(self, timeout: float = 60.0) -> None:
        """Stop the background compaction (after its current round)."""
        if self.compactor is not None:
            self.compactor.stop(timeout)

    def _committed(self, batch_id: int, query_id: Optional[str]) -> bool:
        last = S.last_committed_batch(Storage(self.path, self.storage_options), self.identifier)
        return S.check_batch(last, batch_id, query_id, self.identifier, self.path)

    def __call__(self, batch_df: Any, batch_id: int) -> None:
        from hoodie.engine.write import write

        query_id = batch_df.sparkSession.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
        if self._committed(batch_id, query_id):
            log.warning("%s: micro-batch %d of query %s (%s=%s) is already in the table; Spark replays it after a "
                        "restart, and it is skipped", self.path, batch_id, query_id, SK.CHECKPOINT_IDENTIFIER.key,
                        self.identifier)
            return
        opts = dict(self.options)
        background = self.async_compaction and self._merge_on_read()
        if background:
            # The write only schedules; the background thread executes (Hudi's sink: inline off, async on).
            opts[INLINE_COMPACTION.key] = "false"
            opts[SCHEDULE_INLINE.key] = "true"
        opts[S.SINK_CHECKPOINT_KEY] = S.checkpoint_value(self.identifier, batch_id)
        if query_id:
            opts[S.QUERY_ID_KEY] = query_id
        fault_point("stream.before_write")
        wait = self.interval_ms
        for attempt in range(1, self.retries + 1):
            try:
                instant = write(batch_df, self.path, opts, storage_options=self.storage_options)
            except PostCommitError as e:
                self._report(query_id, batch_id, e)
                break
            except Exception as e:
                # Input the writer refuses is refused again on every attempt: no retry.
                refused = isinstance(e, WriteError) or (isinstance(e, HoodieError) and isinstance(e, ValueError))
                if attempt < self.retries and not refused:
                    log.warning("%s: micro-batch %d failed (attempt %d of %d), retrying in %d ms: %s", self.path,
                                batch_id, attempt, self.retries, wait, e)
                    time.sleep(wait / 1000)
                    wait *= 2
                    # A write that raised did not commit, by the writer's contract; looking costs one read.
                    if self._committed(batch_id, query_id):
                        break
                    continue
                if self.ignore_failed:
                    log.error("%s: micro-batch %d failed and is DROPPED (%s=true): its rows are not in the table: %s",
                              self.path, batch_id, SK.IGNORE_FAILED_BATCH.key, e)
                    return
                raise
            else:
                log.info("%s: micro-batch %d committed as %s", self.path, batch_id, instant)
                break
        self._last_batch = batch_id
        if background:
            self._start_compactor(batch_df.sparkSession, query_id)
            self.compactor.wake()  # type: ignore[union-attr]
            self._report_compactor_errors(query_id)
        # Between the table's commit and Spark's commit log: a kill here makes Spark replay the batch.
        fault_point("stream.after_commit")

    def _report(self, query_id: Optional[str], batch_id: int, error: PostCommitError) -> None:
        """A service failed after the batch committed: said loudly, kept for :func:`service_failures`, and
        the stream goes on (the service runs again after the next commit)."""
        failure = ServiceFailure(batch_id, error.instant, error.service, str(error))
        log.error("%s: micro-batch %d committed as %s, then %s failed; the stream goes on and the service runs "
                  "again after the next micro-batch: %s", self.path, batch_id, error.instant, error.service, error)
        with _FAILURES_LOCK:
            _FAILURES.setdefault(str(query_id), []).append(failure)


_SINKS_BY_QUERY: dict[str, list[HoodieStreamSink]] = {}
_LISTENING: set[int] = set()


def _stop_with_query(spark: Any, query_id: str, sink: HoodieStreamSink) -> None:
    """Stop ``sink``'s background services when its query terminates (a listener per Spark session)."""
    with _FAILURES_LOCK:
        _SINKS_BY_QUERY.setdefault(query_id, []).append(sink)
        if id(spark) in _LISTENING:
            return
        _LISTENING.add(id(spark))
    from pyspark.sql.streaming import StreamingQueryListener

    class _StopServices(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            pass

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            with _FAILURES_LOCK:
                sinks = _SINKS_BY_QUERY.pop(str(event.id), [])
            for s in sinks:
                s.stop_services()

    spark.streams.addListener(_StopServices())


def stop_services(query: Any, timeout: float = 60.0) -> None:
    """Stop the background services of the sinks of ``query`` (a ``StreamingQuery`` or its id) now and wait
    for them; they also stop by themselves when the query terminates. Call it after ``query.stop()`` to be
    sure no compaction is still committing (before deleting the table, say)."""
    qid = str(getattr(query, "id", query))
    with _FAILURES_LOCK:
        sinks = _SINKS_BY_QUERY.pop(qid, [])
    for s in sinks:
        s.stop_services(timeout)


def write_stream(df: Any, path: str, options: Mapping[str, Any], *, checkpoint_location: str,
                 trigger: Union[None, str, Mapping[str, Any]] = None, query_name: Optional[str] = None,
                 storage_options: Optional[dict[str, Any]] = None) -> Any:
    """Start a Structured Streaming query writing the streaming DataFrame ``df`` into the Hudi table at
    ``path``, each micro-batch as one ``hoodie.spark.write`` with ``options`` (Hudi's
    ``hoodie.datasource.write.*`` keys, the inline services' keys, and the streaming sink's:
    ``hoodie.datasource.write.streaming.checkpoint.identifier`` (one per query writing the table),
    ``...retry.count``, ``...retry.interval.ms``, ``...ignore.failed.batch``). Returns the
    ``StreamingQuery``.

    ``checkpoint_location`` is Spark's checkpoint folder (required: without it a restart could not
    resume). ``trigger``: a processing-time interval (``"10 seconds"``) or the keywords of
    ``DataStreamWriter.trigger`` (``{"availableNow": True}``); Spark's default runs batches as data
    arrives. Every micro-batch is written exactly once, also across kills and restarts from the same
    checkpoint location (see the module docstring and docs/streaming.md)."""
    if not getattr(df, "isStreaming", False):
        raise S.StreamingError("write_stream takes a streaming DataFrame (spark.readStream...); write a batch "
                               "DataFrame with hoodie.spark.write")
    if not path:
        raise S.StreamingError("write_stream needs the table's base path")
    if not checkpoint_location or not str(checkpoint_location).strip():
        raise S.StreamingError("write_stream needs checkpoint_location (Spark's checkpoint folder): without it a "
                               "restarted query could neither resume nor recognise the batches it committed")
    opts = {str(k): str(v) for k, v in options.items() if v is not None}
    warn_unknown_keys(opts)
    sink = HoodieStreamSink(path, opts, storage_options)  # parses the streaming keys before the query starts
    from hoodie.engine.datasource import ensure_registered

    ensure_registered(df.sparkSession)
    writer = df.writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint_location))
    if query_name:
        writer = writer.queryName(query_name)
    if isinstance(trigger, str):
        writer = writer.trigger(processingTime=trigger)
    elif trigger is not None:
        writer = writer.trigger(**dict(trigger))
    return writer.start()


__all__ = ["write_stream", "service_failures", "stop_services", "ServiceFailure", "HoodieStreamSink"]
