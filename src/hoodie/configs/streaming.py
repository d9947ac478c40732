"""Streaming keys: Hudi's streaming sink (``hoodie.datasource.write.streaming.*``,
``hoodie.datasource.compaction.async.enable``) and streaming source (``hoodie.datasource.streaming.startOffset``)."""

from __future__ import annotations

from hoodie.configs.registry import define
from hoodie.configs.rules import BOOLEAN, Int

_S = "streaming"
CHECKPOINT_IDENTIFIER = define(
    "hoodie.datasource.write.streaming.checkpoint.identifier", "default_single_writer",
    "The stream's name in the table's sink checkpoint (extraMetadata._hudi_streaming_sink_checkpoint): a "
    "replayed micro-batch this stream already committed is skipped. Give every streaming query writing one "
    "table its own identifier (hoodie refuses a batch when the identifier's last batch came from another "
    "Spark query).", _S)
RETRY_COUNT = define("hoodie.datasource.write.streaming.retry.count", 3,
                     "Attempts at a failed micro-batch write (1: no retry). A batch that committed is never "
                     "written again: each attempt first looks for it in the table.", _S, type=Int(minimum=1))
RETRY_INTERVAL_MS = define("hoodie.datasource.write.streaming.retry.interval.ms", 2000,
                           "Wait before the first retry of a failed micro-batch; doubled after each attempt.",
                           _S, type=Int(minimum=0, bits=64))
ASYNC_COMPACTION = define(
    "hoodie.datasource.compaction.async.enable", True,
    "Merge-on-read tables written by a stream: schedule compaction after each micro-batch (its trigger "
    "permitting) and execute the plans in a background thread of the driver, so a compaction never holds up "
    "the stream (Hudi's streaming sink default). Off, or with hoodie.compact.inline=true, compaction runs "
    "inline after the micro-batch's commit instead.", _S, type=BOOLEAN)
IGNORE_FAILED_BATCH = define(
    "hoodie.datasource.write.streaming.ignore.failed.batch", False,
    "true: a micro-batch whose write still fails after the retries is logged as an error and the stream goes "
    "on WITHOUT its rows (Hudi's option; off by default, when the query fails instead).", _S, type=BOOLEAN)
START_OFFSET = define(
    "hoodie.datasource.streaming.startOffset", "earliest",
    "Where spark.readStream.format('hoodie') starts on a new checkpoint: earliest (every commit), latest (only "
    "commits after the query starts) or an instant time (commits completed after it; a completion time on "
    "table versions 8/9).", _S)
