"""The streaming sink's checkpoint in the table: which micro-batch of which stream a commit holds.

Hudi's Spark streaming sink (``HoodieStreamingSink``) makes each micro-batch one write and records the
batch in that write's commit metadata, under ``extraMetadata._hudi_streaming_sink_checkpoint``: a JSON
object mapping the stream's identifier (``hoodie.datasource.write.streaming.checkpoint.identifier``,
``default_single_writer`` unless set) to the batch id as text, e.g. ``{"default_single_writer":"7"}``
(``CommitUtils.getCheckpointValueAsString``). When Spark replays a batch after a crash between the
table's commit and Spark's own commit log, the sink finds the stream's latest recorded batch
(``CommitUtils.getValidCheckpointForCurrentWriter``: the newest completed write whose checkpoint holds
the identifier) and skips a batch at or below it.

hoodie writes the same key and value, so Hudi's sink and hoodie's resume each other's streams, and one
key more, ``_hoodie_streaming_query_id``: Spark's query id (kept in the checkpoint location across
restarts). Hudi's rule alone skips the batches of a *different* query under the same identifier (a
second query into the table, or the same job restarted with a new checkpoint location, whose batch ids
start at 0 again): their rows would be dropped in silence. hoodie refuses such a batch instead, naming
the identifier to set (:func:`check_batch`).

Everything here is pure Python over the timeline; :mod:`hoodie.engine.stream` runs it per micro-batch.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from hoodie.configs.streaming import (
    ASYNC_COMPACTION, CHECKPOINT_IDENTIFIER, IGNORE_FAILED_BATCH, RETRY_COUNT, RETRY_INTERVAL_MS, START_OFFSET,
)
from hoodie.errors import HoodieError
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, table_exists
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.archive_v1 import load_archived
from hoodie.format.timeline.commit_metadata import CommitMetadata

log = logging.getLogger(__name__)

# Hudi's key (HoodieStreamingSink.SINK_CHECKPOINT_KEY) and hoodie's own beside it.
SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"
QUERY_ID_KEY = "_hoodie_streaming_query_id"



class StreamingError(HoodieError, ValueError):
    """A streaming query cannot write or read the table as asked; the message says why and what to set."""


def checkpoint_value(identifier: str, batch_id: int) -> str:
    """The value of ``_hudi_streaming_sink_checkpoint`` for one batch, as Hudi writes it (Jackson's
    compact JSON of ``{identifier: "batchId"}``)."""
    return json.dumps({identifier: str(batch_id)}, separators=(",", ":"))


def read_checkpoint(value: str, identifier: str) -> Optional[int]:
    """The batch id ``identifier`` holds in a checkpoint value, or None. A value that is not a JSON object
    of text raises (Hudi fails the same way: ``Failed to parse checkpoint as map``)."""
    try:
        parsed = json.loads(value)
    except ValueError as e:
        raise StreamingError(f"{SINK_CHECKPOINT_KEY}={value!r} is not JSON ({e})") from e
    if not isinstance(parsed, dict):
        raise StreamingError(f"{SINK_CHECKPOINT_KEY}={value!r} is not a JSON object of identifier to batch id")
    if identifier not in parsed:
        return None
    try:
        return int(str(parsed[identifier]))
    except ValueError as e:
        raise StreamingError(f"{SINK_CHECKPOINT_KEY}={value!r}: the batch id of {identifier!r} is not a number") from e


@dataclass(frozen=True)
class SinkCheckpoint:
    """The latest batch a stream committed: its id, the write's instant, the Spark query that wrote it
    (None for a commit Hudi's own sink wrote) and whether it was found in the archived timeline."""

    batch_id: int
    instant: str
    query_id: Optional[str]
    archived: bool = False


def _from_extra(extra: Mapping[str, Any], identifier: str, instant: str, archived: bool) -> Optional[SinkCheckpoint]:
    value = extra.get(SINK_CHECKPOINT_KEY)
    if not value:
        return None
    batch = read_checkpoint(str(value), identifier)
    if batch is None:
        return None
    qid = extra.get(QUERY_ID_KEY)
    return SinkCheckpoint(batch, instant, str(qid) if qid else None, archived)


def last_committed_batch(storage: Storage, identifier: str) -> Optional[SinkCheckpoint]:
    """The newest completed write of the table holding a sink checkpoint for ``identifier``, or None
    (no table, or no such write).

    The active timeline is searched newest first (the stream's last commit is usually the newest or
    close to it); then the archived timeline (version 6: ``.hoodie/archived``; 8/9: the LSM history),
    read only when no active commit holds the identifier (a stream restarted after other writers'
    commits pushed its own out of the active timeline)."""
    if not table_exists(storage):
        return None
    table = HoodieTable(storage.base_uri, storage=storage, read_only=True)
    tl = table.timeline
    writes = [i for i in tl.instants if i.is_completed and i.action in I.WRITE_ACTIONS]
    # Newest first by completion on layout 2 (the order Hudi's findLatestInCommitMetadata walks), by
    # instant time on layout 1 (where a stream's batches commit one after another anyway).
    writes.sort(key=lambda i: (i.completion or i.timestamp, i.timestamp), reverse=True)
    for inst in writes:
        found = _from_extra(tl.commit_metadata(inst).extra_metadata, identifier, inst.timestamp, False)
        if found is not None:
            return found
    archived = load_archived(storage, table.timeline_layout)
    done = [i for i in archived.instants if i.action in I.WRITE_ACTIONS]
    done.sort(key=lambda i: (i.completion or i.timestamp, i.timestamp), reverse=True)
    for inst in done:
        meta = archived.commit_metadata(inst.timestamp)
        found = _from_extra(meta.extra_metadata, identifier, inst.timestamp, True) if meta is not None else None
        if found is not None:
            return found
    return None


def check_batch(last: Optional[SinkCheckpoint], batch_id: int, query_id: Optional[str], identifier: str,
                where: str) -> bool:
    """Whether micro-batch ``batch_id`` of Spark query ``query_id`` is already in the table (True: skip it).

    Hudi's rule: the stream's latest recorded batch at or above ``batch_id`` means this batch committed
    (Spark replays only its last uncommitted batch). When that record came from another Spark query,
    the two share the identifier and their batch ids mean different data: refused (see the module
    docstring), before anything is written."""
    if last is None:
        return False
    if last.query_id is not None and query_id is not None and last.query_id != query_id:
        raise StreamingError(
            f"streaming into {where}: the table's last micro-batch under "
            f"{CHECKPOINT_IDENTIFIER.key}={identifier!r} (batch {last.batch_id}, commit {last.instant}) came from "
            f"Spark query {last.query_id}, and this is query {query_id} (a second query into the table, or the "
            "query restarted with a new checkpoint location, whose batch ids start again at 0). Their batch ids "
            f"cannot be told apart, so nothing was written: give each query its own {CHECKPOINT_IDENTIFIER.key}, "
            "or restart the query from its original checkpoint location")
    return last.batch_id >= batch_id


__all__ = ["SINK_CHECKPOINT_KEY", "QUERY_ID_KEY", "ASYNC_COMPACTION", "CHECKPOINT_IDENTIFIER", "RETRY_COUNT", "RETRY_INTERVAL_MS",
           "IGNORE_FAILED_BATCH", "START_OFFSET", "StreamingError", "SinkCheckpoint", "checkpoint_value",
           "read_checkpoint", "last_committed_batch", "check_batch"]
