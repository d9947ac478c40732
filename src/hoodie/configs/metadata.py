"""Metadata-table keys (Hudi's ``HoodieMetadataConfig`` names): whether a write keeps the table's metadata
table and which of its indexes, how they are sized, when the metadata table is compacted."""

from __future__ import annotations

from hoodie.configs.registry import define
from hoodie.configs.rules import BOOLEAN, Float, Int

_GROUP = "metadata table"

ENABLE = define(
    "hoodie.metadata.enable", None,
    "Writes: true keeps (or creates) the table's metadata table and updates it on every commit; false deletes "
    "it and clears hoodie.table.metadata.partitions, as Hudi does; unset keeps what the table has (maintained "
    "when present, not created). New tables have none unless true. Reads: list files through it (default false "
    "for table version 6, true for 8/9).", _GROUP, type=BOOLEAN)
COMPACT_MAX_DELTA_COMMITS = define(
    "hoodie.metadata.compact.max.delta.commits", 10,
    "Compact the metadata table after this many deltacommits since its last compaction (Hudi's default 10).",
    _GROUP, type=Int(minimum=1))


COLUMN_STATS_ENABLE = define(
    "hoodie.metadata.index.column.stats.enable", None,
    "Writes: true keeps (or creates, on a table with a metadata table) the column_stats partition and updates it "
    "on every commit; false drops it; unset keeps what the table has (maintained when present).", _GROUP,
    type=BOOLEAN)
COLUMN_STATS_COLUMNS = define(
    "hoodie.metadata.index.column.stats.column.list", None,
    "Comma-separated columns to keep statistics of; unset: Hudi's default (table version 6: every top-level "
    "column; 8/9: _hoodie_commit_time, _hoodie_record_key, _hoodie_partition_path and the first "
    "hoodie.metadata.index.column.stats.max.columns.to.index data columns).", _GROUP)
COLUMN_STATS_MAX_COLUMNS = define(
    "hoodie.metadata.index.column.stats.max.columns.to.index", 32,
    "Table versions 8/9 without a column list: index this many data columns (Hudi's default 32).", _GROUP,
    type=Int(minimum=1))
COLUMN_STATS_FILE_GROUPS = define(
    "hoodie.metadata.index.column.stats.file.group.count", 2,
    "File groups of a column_stats partition hoodie creates (Hudi's default 2); an existing partition keeps its "
    "own count.", _GROUP, type=Int(minimum=1))

PARTITION_STATS_ENABLE = define(
    "hoodie.metadata.index.partition.stats.enable", None,
    "Writes (table versions 8/9, partitioned tables): true keeps (or creates) the partition_stats partition, "
    "per partition and indexed column the range and counts over the partition's latest file slices, and updates "
    "it on every commit; it needs column_stats (Hudi couples them). false drops it; unset keeps what the table "
    "has.", _GROUP, type=BOOLEAN)
PARTITION_STATS_FILE_GROUPS = define(
    "hoodie.metadata.index.partition.stats.file.group.count", 1,
    "File groups of a partition_stats partition hoodie creates (Hudi's default 1).", _GROUP, type=Int(minimum=1))
RECORD_INDEX_ENABLE = define(
    "hoodie.metadata.record.index.enable", None,
    "Writes: true keeps (or creates) the record_index partition (record key -> partition, file id, instant) "
    "and updates it on every commit; keys must then be unique across partitions. false drops it; unset keeps "
    "what the table has.", _GROUP, type=BOOLEAN)
RECORD_INDEX_MIN_GROUPS = define(
    "hoodie.metadata.record.index.min.filegroup.count", 10,
    "Fewest file groups of a record_index hoodie creates (Hudi's default 10).", _GROUP, type=Int(minimum=1))
RECORD_INDEX_MAX_GROUPS = define(
    "hoodie.metadata.record.index.max.filegroup.count", 10000,
    "Most file groups of a record_index hoodie creates (Hudi's default 10000).", _GROUP, type=Int(minimum=1))
RECORD_INDEX_MAX_SIZE = define(
    "hoodie.metadata.record.index.max.filegroup.size", 1024 * 1024 * 1024,
    "Bytes one record_index file group may grow to (Hudi's default 1 GiB); with the growth factor and 48 bytes "
    "per key it sets the file-group count of a new record index.", _GROUP, type=Int(minimum=1))
RECORD_INDEX_GROWTH = define(
    "hoodie.metadata.record.index.growth.factor", 2.0,
    "Expected growth of the key count, sizing a new record_index (Hudi's default 2.0).", _GROUP, type=Float(minimum=1.0))
