"""Table keys: what ``hoodie.properties`` records about a table (Hudi's ``HoodieTableConfig`` names and
defaults), and the write options that set them when a table is created.

``hoodie.format.table.HoodieTable`` reads every property below through its rule when it opens a table,
so a value Hudi's Java would misread is refused, naming the key, the file and the values accepted:
Java reads booleans with ``Boolean.parseBoolean`` (``yes``, ``1`` and ``True `` with a blank are
false there), enums with ``valueOf`` (an unknown value fails), and hoodie reads ``true``/``false`` in
any case and refuses anything else rather than guess which the writer meant. A blank value is unset
(the default applies), as Java's ``getStringOrDefault`` treats an empty string from the file.

Keys that only describe the table (``option=False``) are not write options: the write's own keys
(``hoodie.datasource.write.table.type``, ``hoodie.datasource.write.recordkey.field``...) set them when
a table is created, and an option of their name is warned about as unknown."""

from __future__ import annotations

from hoodie.configs.registry import TB, W, define
from hoodie.configs.rules import BOOLEAN, LIST, Enum, Int

TABLE_NAME = define("hoodie.table.name", None, "Table name (required when creating a table).", W)
DATABASE_NAME = define("hoodie.database.name", None, "Database name recorded in hoodie.properties.", TB)
TIMELINE_TIMEZONE = define(
    "hoodie.table.timeline.timezone", "UTC",
    "Time zone of instant times: LOCAL or UTC. Tables hoodie creates default to UTC; a table whose "
    "hoodie.properties lacks the key is LOCAL (Hudi's default), where each instant is its writer's "
    "wall-clock time (see docs/ttl.md).", TB, type=Enum(("LOCAL", "UTC"), what="a timeline time zone"))

# Accepted so that false is a no-op and true is refused with its reason (an unknown key would only be
# warned about, with a guess at another key, and the table written without change data).
CDC_ENABLED = define(
    "hoodie.table.cdc.enabled", "false",
    "Change data capture on write (Java Hudi's CDC log files with before/after images). hoodie does not write "
    "CDC log files: true is refused before anything is written; incremental queries "
    "(hoodie.read_table(query_type='incremental')) give the records changed in a range of commits.",
    W, type=BOOLEAN)


# -- hoodie.properties only ----------------------------------------------------------------------------
TP = "table properties (hoodie.properties)"
COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
MERGE_MODES = ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING", "CUSTOM")
BASE_FILE_FORMATS = ("PARQUET", "ORC", "HFILE", "LANCE")

TYPE = define("hoodie.table.type", COPY_ON_WRITE,
              "COPY_ON_WRITE or MERGE_ON_READ (Hudi always writes it; set by hoodie.datasource.write.table.type).", TP,
              type=Enum((COPY_ON_WRITE, MERGE_ON_READ), what="a table type"), option=False)
VERSION = define("hoodie.table.version", None,
                 "Table version: 6 (Hudi 0.14/0.15), 8 (Hudi 1.0) or 9 (Hudi 1.1); set by hoodie.write.table.version.",
                 TP, type=Int(minimum=0), option=False)
INITIAL_VERSION = define("hoodie.table.initial.version", None,
                         "Table versions 8/9: the version the table was created with.", TP, type=Int(minimum=0),
                         option=False)
TIMELINE_LAYOUT_VERSION = define(
    "hoodie.timeline.layout.version", None,
    "Timeline layout: 1 (flat .hoodie folder, table version 6) or 2 (.hoodie/timeline with completion times, "
    "versions 8/9); unset: the table version's.", TP, type=Int(minimum=0), option=False)
RECORDKEY_FIELDS = define("hoodie.table.recordkey.fields", None,
                          "Record key columns, comma-separated (absent: Hudi 0.14+'s auto-generated keys).", TP,
                          type=LIST, option=False)
PARTITION_FIELDS = define("hoodie.table.partition.fields", None,
                          "Partition columns, comma-separated (absent or empty: not partitioned).", TP, type=LIST,
                          option=False)
PRECOMBINE_FIELD = define("hoodie.table.precombine.field", None,
                          "Ordering (precombine) column (table versions 6/8); as a write option, the write's "
                          "ordering field (hoodie.datasource.write.precombine.field).", TP)
ORDERING_FIELDS = define("hoodie.table.ordering.fields", None,
                         "Ordering columns, comma-separated (Hudi 1.1's name for the precombine field); as a write "
                         "option, the write's ordering field, as Hudi 1.1 writes take it.", TP, type=LIST)
KEYGEN_CLASS = define("hoodie.table.keygenerator.class", None, "Key generator class (table version 6).", TP,
                      option=False)
KEYGEN_TYPE = define("hoodie.table.keygenerator.type", None, "Key generator type (table versions 8/9).", TP,
                     option=False)
PAYLOAD_CLASS = define("hoodie.compaction.payload.class", DEFAULT_PAYLOAD,
                       "Record payload class: how records with one key merge (set by "
                       "hoodie.datasource.write.payload.class).", TP, option=False)
LEGACY_PAYLOAD_CLASS = define("hoodie.legacy.payload.class", None,
                              "Hudi 1.1: the deprecated payload class a partial-update mode replaced.", TP, option=False)
RECORD_MERGE_MODE = define(
    "hoodie.record.merge.mode", None,
    "Table versions 8/9: COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING or CUSTOM (then the payload class decides).", TP,
    type=Enum(MERGE_MODES, what="a record merge mode"), option=False)
PARTIAL_UPDATE_MODE = define("hoodie.table.partial.update.mode", "NONE",
                             "Hudi 1.1: how a partial record updates the stored one; hoodie merges only NONE.", TP,
                             option=False)
POPULATE_META_FIELDS = define(
    "hoodie.populate.meta.fields", True,
    "Whether the files store Hudi's meta columns (false: virtual keys, which hoodie reads but does not write).", TP,
    type=BOOLEAN, option=False)
DROP_PARTITION_COLUMNS = define(
    "hoodie.datasource.write.drop.partition.columns", False,
    "Whether the files leave out the partition columns (true is refused: hoodie does not rebuild them).", TP,
    type=BOOLEAN, option=False)
BASE_FILE_FORMAT = define("hoodie.table.base.file.format", "PARQUET",
                          "Format of base files: PARQUET (the only one hoodie reads and writes), ORC, HFILE or LANCE.",
                          TP, type=Enum(BASE_FILE_FORMATS, what="a base file format"), option=False)
PARTITION_METAFILE_BASE_FORMAT = define(
    "hoodie.partition.metafile.use.base.format", False,
    "Whether partition metafiles are written in the base file format (.hoodie_partition_metadata.parquet) "
    "instead of as properties.", TP, type=BOOLEAN, option=False)
BOOTSTRAP_BASE_PATH = define("hoodie.bootstrap.base.path", None,
                             "Set on tables Hudi bootstrapped from existing Parquet files (writes are refused).", TP,
                             option=False)
METADATA_PARTITIONS = define("hoodie.table.metadata.partitions", None,
                             "The metadata table's partitions (files, column_stats...); absent: no metadata table.",
                             TP, type=LIST, option=False)
METADATA_PARTITIONS_INFLIGHT = define("hoodie.table.metadata.partitions.inflight", None,
                                      "Metadata-table partitions being built.", TP, type=LIST, option=False)
CREATE_SCHEMA = define("hoodie.table.create.schema", None,
                       "The table's Avro schema at creation (without meta columns), as JSON.", TP, option=False)
ARCHIVELOG_FOLDER = define("hoodie.archivelog.folder", "archived",
                           "Table version 6: the archived timeline's folder under .hoodie.", TP, option=False)
