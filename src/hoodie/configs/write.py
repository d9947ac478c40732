"""Write keys (Hudi's ``hoodie.datasource.write.*``, ``hoodie.parquet.*``, ``hoodie.index.*`` and the
rest of ``HoodieWriteConfig`` that hoodie reads); ``hoodie.services.write.configs.WriteConfig`` parses them."""

from __future__ import annotations

from hoodie.configs.registry import W, define
from hoodie.configs.rules import BOOLEAN, LIST, Bool, Enum, Float, Int

OPERATIONS = ("insert", "bulk_insert", "upsert", "delete", "insert_overwrite", "insert_overwrite_table",
              "delete_partition")
OPERATION = define("hoodie.datasource.write.operation", "upsert", ", ".join(OPERATIONS[:-1]) + " or "
                   + OPERATIONS[-1] + ".", W, type=Enum(OPERATIONS))
PARTITIONS_TO_DELETE = define(
    "hoodie.datasource.write.partitions.to.delete", None,
    "delete_partition: comma-separated partition paths (default: the partitions of the input rows).", W, type=LIST)
WRITE_TABLE_VERSION = define(
    "hoodie.write.table.version", 6,
    "Table version of tables this write creates: 6 (Hudi 0.14/0.15, the default), 8 (Hudi 1.0) or 9 (Hudi 1.1). On an "
    "existing table it must match the table's version (hoodie does not upgrade tables).", W, type=Int(minimum=1))
TABLE_TYPE = define("hoodie.datasource.write.table.type", "COPY_ON_WRITE", "COPY_ON_WRITE or MERGE_ON_READ.", W,
                    type=Enum(("COPY_ON_WRITE", "MERGE_ON_READ")))
RECORD_KEY_FIELD = define("hoodie.datasource.write.recordkey.field", None, "Record key column(s), comma-separated.",
                          W, type=LIST)
PARTITION_PATH_FIELD = define("hoodie.datasource.write.partitionpath.field", None,
                              "Partition column(s), comma-separated (none: an unpartitioned table).", W, type=LIST)
PRECOMBINE_FIELD = define(
    "hoodie.datasource.write.precombine.field", None,
    "Ordering (precombine) column: the greatest value wins on duplicates and, with an ordering "
    "payload, on merges.", W)
KEYGEN_CLASS = define("hoodie.datasource.write.keygenerator.class", None, "Key generator (Hudi Java class name).", W)
KEYGEN_TYPE = define("hoodie.datasource.write.keygenerator.type", None,
                     "SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM.", W)
HIVE_STYLE_PARTITIONING = define(
    "hoodie.datasource.write.hive_style_partitioning", False,
    "Partition folders as field=value. Fixed when the table is created; a write option that "
    "contradicts the table is refused.", W, type=BOOLEAN)
URL_ENCODE_PARTITIONING = define(
    "hoodie.datasource.write.partitionpath.urlencode", False,
    "URL-encode partition values (Hive escaping: '/' as %2F, so a value with '/' is one folder, not "
    "nested folders). Fixed when the table is created; a write option that contradicts the table is refused.",
    W, type=BOOLEAN)
PAYLOAD_CLASS = define(
    "hoodie.datasource.write.payload.class", None,
    "Record payload: OverwriteWithLatestAvroPayload (commit-time ordering) or "
    "DefaultHoodieRecordPayload (ordering-field ordering; the default with a precombine field).", W)
EVENT_TIME_FIELD = define("hoodie.payload.event.time.field", None,
                          "Event-time column: min/max event time go into write stats and log block headers.", W)
TRACK_EVENT_TIME_WATERMARK = define(
    "hoodie.write.track.event.time.watermark", False,
    "Hudi 1.1's switch for recording each write's min/max event time (HoodieWriteStat.minEventTime/maxEventTime). "
    "Accepted for compatibility: hoodie records them whenever hoodie.payload.event.time.field is set, on every table "
    "version, and event-time compaction reads them.", W, type=Bool())
EVENT_TIME_UNITS = ("SECONDS", "MILLISECONDS", "MICROSECONDS", "NANOSECONDS")
EVENT_TIME_UNIT = define(
    "hoodie.payload.event.time.unit", "MILLISECONDS",
    "Unit of a numeric event-time column (int, long, double, decimal, digit strings): SECONDS, "
    "MILLISECONDS (Hudi's), MICROSECONDS or NANOSECONDS. Timestamp and date columns are converted by "
    "their type. A number that is a 1971-2200 time only in another unit is refused, naming that unit.", W,
    type=Enum(EVENT_TIME_UNITS, what="a unit"))
LOG_BLOCK_FORMAT = define(
    "hoodie.logfile.data.block.format", "parquet",
    "Format of the data blocks merge-on-read writes put in log files: parquet or avro. hoodie writes parquet "
    "unless told otherwise (Hudi's writers default to avro): encoding is 4.6x faster and blocks 3.5x smaller "
    "than Avro's on the benchmark rows, and the next write's index reads only their key column "
    "(BENCHMARKS.md, write profile). Java Hudi (0.10 and later) and hudi-rs read both; set avro for a "
    "reader that knows only Avro blocks.", W,
    type=Enum(("avro", "parquet"), what="a log block format"))
# The one definition of the base file size target (the writer and the compactor both read it).
PARQUET_MAX_FILE_SIZE = define("hoodie.parquet.max.file.size", 120 * 1024 * 1024, "Target base file size in bytes.",
                               W, type=Int(minimum=1, bits=64))
PARQUET_SMALL_FILE_LIMIT = define("hoodie.parquet.small.file.limit", 100 * 1024 * 1024,
                                  "Base files below this size receive inserts (COW).", W,
                                  type=Int(minimum=0, bits=64))
RECORD_SIZE_ESTIMATE = define("hoodie.copyonwrite.record.size.estimate", 1024,
                              "Record size estimate used to size file groups.", W, type=Int(minimum=1))


# Hudi's codec names (the writer maps them to pyarrow's: uncompressed is pyarrow's none).
PARQUET_CODEC = define("hoodie.parquet.compression.codec", "snappy", "Parquet codec for base files.", W,
                       type=Enum(("brotli", "gzip", "lz4", "none", "snappy", "uncompressed", "zstd"),
                                 what="a supported codec", refused={"lzo": "Arrow has no LZO codec"}))
BLOOM_NUM_ENTRIES = define("hoodie.index.bloom.num_entries", 60000,
                           "Keys per bloom filter row in base-file footers (Java Hudi's BLOOM index reads them).",
                           W, type=Int(minimum=1))
BLOOM_FPP = define("hoodie.index.bloom.fpp", 0.000000001,
                   "Target false-positive rate of the base-file bloom filters.", W, type=Float(0.0, 1.0))
BLOOM_FILTER_TYPE = define("hoodie.bloom.index.filter.type", "DYNAMIC_V0",
                           "Base-file bloom filter type: DYNAMIC_V0 or SIMPLE.", W,
                           type=Enum(("DYNAMIC_V0", "SIMPLE"), what="a bloom filter type"))
BLOOM_DYNAMIC_MAX_ENTRIES = define("hoodie.bloom.index.filter.dynamic.max.entries", 100000,
                                   "DYNAMIC_V0: rows are added until rows x num_entries reaches this bound.", W,
                                   type=Int(minimum=1))
INDEX_TYPE = define(
    "hoodie.index.type", "BLOOM",
    "Hudi's index type. BLOOM and SIMPLE: hoodie's non-global index (a key is unique within its partition; "
    "candidate file groups are pruned by the bloom filters and key ranges in their base files' footers, then "
    "their keys are read): both are accepted and behave alike. GLOBAL_BLOOM and GLOBAL_SIMPLE: Hudi's global "
    "indexes without the metadata table (a key is unique across partitions; the keys of every latest file slice "
    "of the table are read to find it), and a record arriving with another partition value moves as "
    "hoodie.bloom.index.update.partition.path / hoodie.simple.index.update.partition.path say. RECORD_INDEX: "
    "Hudi's global record index, looked up in the metadata table's record_index partition; it needs that index "
    "(hoodie.metadata.record.index.enable=true), and a moving record follows "
    "hoodie.record.index.update.partition.path. Other index types are refused before anything is written, "
    "since their records would be placed or found differently.",
    W, type=Enum(("BLOOM", "SIMPLE", "GLOBAL_BLOOM", "GLOBAL_SIMPLE", "RECORD_INDEX"),
                 what="an index type hoodie implements", refused={
        "BUCKET": "a bucket index stores each key in the file group its hash bucket names "
                  "(hoodie.bucket.index.num.buckets file groups per partition) and Java finds keys only there; "
                  "hoodie sizes file groups by hoodie.parquet.max.file.size, so a bucket-index reader would miss "
                  "its records. Use BLOOM or SIMPLE (a key unique within its partition), GLOBAL_SIMPLE or "
                  "RECORD_INDEX (unique across partitions) on a table hoodie writes",
        "HBASE": "an external index hoodie cannot reach", "INMEMORY": "an index of one Spark job",
        "FLINK_STATE": "Flink's state index"}))
_MOVES = ("a record whose key the table holds in another partition than its incoming partition value, on a "
          "partitioned table. ")
RECORD_INDEX_UPDATE_PARTITION_PATH = define(
    "hoodie.record.index.update.partition.path", False,
    "hoodie.index.type=RECORD_INDEX: " + _MOVES + "false (Hudi's default): it updates the stored record in the "
    "partition it lives in (the incoming partition value is ignored for placement). true: it is merged with the "
    "stored record; a merge result in another partition deletes the stored record and inserts the result in the "
    "new partition (a delete, or an older record by the ordering field, stays in the old partition).", W,
    type=BOOLEAN)
BLOOM_INDEX_UPDATE_PARTITION_PATH = define(
    "hoodie.bloom.index.update.partition.path", True,
    "hoodie.index.type=GLOBAL_BLOOM: " + _MOVES + "true (Hudi's default): it is merged with the stored record and "
    "a result in the new partition deletes the stored record and is inserted there (as "
    "hoodie.record.index.update.partition.path=true). false: the stored record is updated where it lives.", W,
    type=BOOLEAN)
SIMPLE_INDEX_UPDATE_PARTITION_PATH = define(
    "hoodie.simple.index.update.partition.path", True,
    "hoodie.index.type=GLOBAL_SIMPLE: as hoodie.bloom.index.update.partition.path for GLOBAL_BLOOM (Hudi's default "
    "true: a record whose partition value changed moves).", W, type=BOOLEAN)
BULK_INSERT_SORT_MODES = ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
                          "PARTITION_PATH_REPARTITION_AND_SORT")
BULK_INSERT_SORT_MODE = define(
    "hoodie.bulkinsert.sort.mode", "NONE",
    "How a Spark bulk_insert lays out its input, as Hudi's: NONE (Hudi's default since 0.12: each input "
    "partition writes its rows as they come, one file group per table partition it holds; no shuffle), "
    "GLOBAL_SORT (sorted by partition path and record key across the input), PARTITION_SORT (sorted within "
    "each input partition), PARTITION_PATH_REPARTITION (one task per table partition) or "
    "PARTITION_PATH_REPARTITION_AND_SORT (that, sorted by record key). hoodie.combine.before.insert=true "
    "repartitions by table partition whatever the mode (de-duplication needs every copy of a key in one task).",
    W, type=Enum(BULK_INSERT_SORT_MODES, what="a bulk insert sort mode"))
COMBINE_BEFORE_INSERT = define("hoodie.combine.before.insert", False,
                               "De-duplicate inserts by key before writing.", W, type=BOOLEAN)
SET_NULL_FOR_MISSING_COLUMNS = define(
    "hoodie.write.set.null.for.missing.columns", False,
    "A batch lacking table columns is refused (as Hudi refuses it); true writes the missing columns "
    "as null, also over the stored values of updated records.", W, type=BOOLEAN)
TRANSIENT_DELETE_MARKER = define(
    "hoodie.write.delete.marker.transient", False,
    "true: a _hoodie_is_deleted column in the batch only marks deletes (hoodie.sql's MERGE INTO ... DELETE) and "
    "is not added to the table schema when the table lacks it.", W, type=BOOLEAN)
WRITE_INSTANT = define("hoodie.write.instant", None, "Use this instant time for the write (testing/backfills).", W)
KEYGEN_TIMEBASED = tuple(
    define(_k, None, "Timestamp-based key generator setting (as in Hudi).", W)
    for _k in ("hoodie.keygen.timebased.timestamp.type", "hoodie.keygen.timebased.input.dateformat",
               "hoodie.keygen.timebased.output.dateformat", "hoodie.keygen.timebased.timezone",
               "hoodie.keygen.timebased.input.timezone", "hoodie.keygen.timebased.output.timezone",
               "hoodie.keygen.timebased.timestamp.scalar.time.unit"))

MERGE_ALLOW_DUPLICATE_ON_INSERTS = define(
    "hoodie.merge.allow.duplicate.on.inserts", True,
    "Operation insert only. true (Hudi 1.x's default): incoming rows routed to an existing small base file are "
    "added beside its records, also when they share a record key (INSERT INTO keeps duplicates, as Hudi's "
    "'INSERT INTO preserves duplicates by default'). false: a row whose key the table holds updates the stored "
    "record (merged by the ordering field) instead of being added, on copy-on-write and merge-on-read.",
    W, type=BOOLEAN)

STATIC_OVERWRITE_PARTITIONS = define(
    "hoodie.write.static.overwrite.partitions", None,
    "insert_overwrite: comma-separated partition paths replaced in addition to the partitions of the input rows "
    "(hoodie.sql's static INSERT OVERWRITE ... PARTITION (p = v) sets it to every partition the static spec "
    "names, so they are replaced also when the query returns no row; Hudi passes the same list internally as "
    "HoodieInternalConfig.STATIC_OVERWRITE_PARTITION_PATHS).", W, type=LIST)


COMMIT_METADATA_KEY_PREFIX = define(
    "hoodie.datasource.write.commitmeta.key.prefix", "_",
    "Write options whose key begins with this prefix are stored in the commit's extraMetadata, as Hudi stores "
    "them (the streaming sink records its checkpoint, _hudi_streaming_sink_checkpoint, this way).", W)
