"""A write's configuration: Hudi's write options parsed into one :class:`WriteConfig`, with the table's
``hoodie.properties`` filling what the options leave out, and every option that contradicts the table
refused before anything is written (the ``configs`` of the write's room, as delta-rs
``operations/write/configs.rs``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Optional


from hoodie import configs as C
from hoodie.configs import read
from hoodie.configs import table as TC
from hoodie.configs.table import CDC_ENABLED
from hoodie.configs.write import MERGE_ALLOW_DUPLICATE_ON_INSERTS
from hoodie.errors import WriteError
from hoodie.format.metadata.index_reader import record_index_available
from hoodie.format.metadata.table import files_partition_available
from hoodie.format.slice import writer as W
from hoodie.format.slice.bloom import BloomSpec
from hoodie.format.slice.eventtime import DEFAULT_UNIT
from hoodie.format.table import HoodieTable, TableError, check_payload_class
from hoodie.services.metadata.config import RECORD_INDEX_ENABLE, enable_option, index_option

OPERATIONS = ("insert", "bulk_insert", "upsert", "delete", "insert_overwrite", "insert_overwrite_table",
              "delete_partition")



# Operations that replace file groups and commit as a replacecommit.
OVERWRITE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table")



OPERATION_TYPES = {"insert": "INSERT", "bulk_insert": "BULK_INSERT", "upsert": "UPSERT", "delete": "DELETE",
                   "insert_overwrite": "INSERT_OVERWRITE", "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
                   "delete_partition": "DELETE_PARTITION"}



PARTITIONS_TO_DELETE = "hoodie.datasource.write.partitions.to.delete"

# Hudi's DATASOURCE_WRITE_PREPPED_KEY: set by its SQL UPDATE/MERGE/DELETE for rows read back from the table.
PREPPED = "_hoodie.datasource.write.prepped"



# Write options that fall back to a hoodie.properties key when the write does not set them.
WRITE_TABLE_VERSIONS = (6, 8, 9)



_TABLE_FALLBACKS = (
    (C.RECORD_KEY_FIELD, TC.RECORDKEY_FIELDS),
    (C.PARTITION_PATH_FIELD, TC.PARTITION_FIELDS),
    (C.TABLE_NAME, C.TABLE_NAME),
    (C.TABLE_TYPE, TC.TYPE),
    (C.HIVE_STYLE_PARTITIONING, C.HIVE_STYLE_PARTITIONING),
    (C.URL_ENCODE_PARTITIONING, C.URL_ENCODE_PARTITIONING),
    (C.PRECOMBINE_FIELD, TC.PRECOMBINE_FIELD),
    (C.PAYLOAD_CLASS, TC.PAYLOAD_CLASS),
    (C.TIMELINE_TIMEZONE, C.TIMELINE_TIMEZONE),
)



SET_NULL_FOR_MISSING_COLUMNS = C.SET_NULL_FOR_MISSING_COLUMNS



# Hudi's soft-delete marker column: a row with true is a delete (HoodieRecordPayload.isDeleteRecord).
IS_DELETED = "_hoodie_is_deleted"



@dataclass
class WriteConfig:
    """The subset of Hudi's write options this layer needs, parsed from Hudi's own keys."""

    table_name: str
    table_type: str
    operation: str
    record_key_fields: list[str]
    partition_fields: list[str]
    precombine_field: Optional[str]
    keygen_props: dict[str, str]
    hive_style: bool
    url_encode: bool
    payload_class: Optional[str]
    event_time_field: Optional[str]
    block_format: str
    max_file_size: int
    small_file_limit: int
    record_size_estimate: int
    parquet_codec: str
    timeline_timezone: str
    combine_before_insert: bool
    bloom: BloomSpec = BloomSpec()
    event_time_unit: str = DEFAULT_UNIT
    set_null_for_missing_columns: bool = False
    # hoodie.merge.allow.duplicate.on.inserts (Hudi 1.x default true): an insert routed to a small file
    # is added beside the stored records (Hudi's concat handle) instead of merged with them by key.
    allow_duplicate_on_inserts: bool = True
    table_version: int = 6  # of a table this write creates (hoodie.write.table.version)
    transient_delete_marker: bool = False  # _hoodie_is_deleted marks deletes only (not a table column)
    # No record key field: keys are generated per write as Hudi 0.14+ does (:func:`with_auto_keys`).
    auto_record_keys: bool = False
    bulk_insert_sort_mode: str = "NONE"  # hoodie.bulkinsert.sort.mode (the Spark engine's layout)
    # _hoodie.datasource.write.prepped=true (what Hudi's SQL UPDATE/MERGE set): the input rows were read from
    # the table and carry _hoodie_record_key and _hoodie_partition_path, which the write takes as the keys.
    prepped: bool = False
    # hoodie.index.type: BLOOM/SIMPLE (hoodie's non-global index), GLOBAL_BLOOM/GLOBAL_SIMPLE (global, by a
    # scan of the table's keys) or RECORD_INDEX (global, by the metadata table's record_index).
    index_type: str = "BLOOM"
    # How a global index places a record whose partition changed: each index type has its own key in Hudi
    # (hoodie.{record,bloom,simple}.index.update.partition.path), with their own defaults (false, true, true).
    record_index_update_partition_path: bool = False
    bloom_index_update_partition_path: bool = True
    simple_index_update_partition_path: bool = True
    # hoodie.metadata.record.index.enable=true: the commit builds the record index when the table lacks it.
    build_record_index: bool = False

    @property
    def is_global_index(self) -> bool:
        """Whether hoodie.index.type is one of Hudi's global indexes (a key is unique across partitions)."""
        return self.index_type in GLOBAL_INDEX_TYPES

    @property
    def tags_globally(self) -> bool:
        """Whether this write tags its records with a global index (Hudi's RECORD_INDEX, GLOBAL_BLOOM or
        GLOBAL_SIMPLE): an upsert, a delete, or an insert that merges keys the table holds."""
        return self.is_global_index and tags_index(self)

    @property
    def update_partition_path(self) -> bool:
        """The update-partition-path setting of this write's global index type (Hudi reads one key per type:
        ``HoodieIndexConfig``'s RECORD_INDEX_/BLOOM_INDEX_/SIMPLE_INDEX_UPDATE_PARTITION_PATH_ENABLE)."""
        return {"RECORD_INDEX": self.record_index_update_partition_path,
                "GLOBAL_BLOOM": self.bloom_index_update_partition_path,
                "GLOBAL_SIMPLE": self.simple_index_update_partition_path}.get(self.index_type, False)

    @property
    def keys_from_input(self) -> bool:
        """The record keys and partition paths come from the input's meta columns, not from a key
        generator: a delete or a prepped upsert on a table without record key fields (Hudi's delete and
        upsert prepped, by the keys the rows were read with)."""
        return self.auto_record_keys and (self.operation == "delete" or (self.prepped and self.operation == "upsert"))

    @classmethod
    def from_options(cls, options: Mapping[str, Any], table: Optional[HoodieTable] = None,
                     overwrite: bool = False) -> "WriteConfig":
        """Parse Hudi datasource options; table properties fill what the options leave out.

        An option that contradicts the table's configuration (table type, record key, partition
        fields, key generator, precombine field, partition path style) is refused, as Hudi
        refuses it: the records would get other keys or paths than the stored ones. ``overwrite``
        (``mode='overwrite'``) only changes the advice: the table's data is replaced, its
        configuration kept.
        """
        o = {str(k): str(v) for k, v in options.items() if v is not None}
        tp = table.props if table is not None else {}
        # Table properties fill what the options leave out: merged first, then read through the typed
        # properties (one parsing rule per type; a boolean that is not true/false is refused).
        merged = {write_key: tp[table_key] for write_key, table_key in _TABLE_FALLBACKS if table_key in tp}
        if table is not None and table.precombine_field and str(C.PRECOMBINE_FIELD) not in merged:
            merged[str(C.PRECOMBINE_FIELD)] = table.precombine_field  # Hudi 1.1: hoodie.table.ordering.fields
        merged.update(o)
        # Hudi 1.1 writes name the ordering field by the table config's key (HoodieTableConfig.ORDERING_FIELDS,
        # as its own tests do) or the older table key; before, such a write created a table without an ordering
        # field, silently (later upserts then kept the latest write instead of the greatest ordering value).
        given = {k: o[k].strip() for k in (str(TC.ORDERING_FIELDS), str(TC.PRECOMBINE_FIELD)) if o.get(k, "").strip()}
        if given and not o.get(str(C.PRECOMBINE_FIELD), "").strip():
            if len(set(given.values())) > 1:
                raise WriteError(f"the ordering field is given twice, differently: {given}; keep one of the keys")
            merged[str(C.PRECOMBINE_FIELD)] = next(iter(given.values()))
        cfg = read(merged, WriteError)

        op = cfg.get(C.OPERATION)
        if cfg.get(CDC_ENABLED):
            raise WriteError(
                "hoodie.table.cdc.enabled=true: hoodie does not write change data (Java Hudi's CDC log files), so a "
                "table created or written with it would answer CDC queries without hoodie's changes. Drop the option "
                "(or set it false); for the records changed between two commits use an incremental query, "
                "hoodie.read_table(path, query_type='incremental', begin=...). Nothing was written")
        # BLOOM and SIMPLE are hoodie's non-global index, GLOBAL_BLOOM and GLOBAL_SIMPLE scan every latest
        # slice's keys; RECORD_INDEX needs the record index (checked below).
        index_type = cfg.get(C.INDEX_TYPE)
        version = cfg.get(C.WRITE_TABLE_VERSION)
        if version not in WRITE_TABLE_VERSIONS:
            raise WriteError(
                f"hoodie.write.table.version={version}: hoodie writes table versions 6 (Hudi 0.14/0.15), 8 (Hudi 1.0) "
                "and 9 (Hudi 1.1). Nothing was written")
        if table is not None and cfg.is_set(C.WRITE_TABLE_VERSION) and version != table.table_version:
            raise WriteError(
                f"hoodie.write.table.version={version} but the table at {table.base_path} is table version "
                f"{table.table_version}; hoodie neither upgrades nor downgrades tables (Hudi's upgrade does). Drop the "
                "option to write the table in its own version. Nothing was written")
        rk = cfg.get(C.RECORD_KEY_FIELD) or []
        if table is not None and rk and not table.record_key_fields:
            raise WriteError(
                f"hoodie.datasource.write.recordkey.field={o.get(str(C.RECORD_KEY_FIELD), '')!r} but the table at "
                f"{table.base_path} has no record key fields (no hoodie.table.recordkey.fields): its record keys are "
                "auto-generated (Hudi 0.14+), so no column can match its stored records. Drop the option to add rows "
                "with generated keys, or write the data to a new table with this record key. Nothing was written")
        auto = not rk
        prepped = str(o.get(PREPPED, "false")).strip().lower() == "true"
        if auto and not (prepped and op == "upsert" and cfg.is_set(C.OPERATION)):
            op = _auto_key_operation(cfg, table)
        _refuse_insert_dup_policy(o, op)
        pf = cfg.get(C.PARTITION_PATH_FIELD) or []
        name = cfg.get(C.TABLE_NAME)
        if not name:
            raise WriteError("set hoodie.table.name")
        ttype = cfg.get(C.TABLE_TYPE)
        if table is not None:
            _refuse_config_conflicts(o, table, overwrite)
        keygen = {k: v for k, v in o.items() if k.startswith(("hoodie.datasource.write.", "hoodie.keygen."))}
        for k, wk in ((TC.KEYGEN_CLASS, "hoodie.datasource.write.keygenerator.class"),
                      ("hoodie.table.keygenerator.type", "hoodie.datasource.write.keygenerator.type")):
            if k in tp and wk not in keygen and "hoodie.datasource.write.keygenerator.class" not in keygen:
                keygen[wk] = tp[k]
        keygen["hoodie.datasource.write.recordkey.field"] = ",".join(rk)
        keygen["hoodie.datasource.write.partitionpath.field"] = ",".join(pf)
        hive = bool(cfg.get(C.HIVE_STYLE_PARTITIONING))
        urlenc = bool(cfg.get(C.URL_ENCODE_PARTITIONING))
        keygen["hoodie.datasource.write.hive_style_partitioning"] = str(hive).lower()
        keygen["hoodie.datasource.write.partitionpath.urlencode"] = str(urlenc).lower()
        codec = W.parquet_codec(cfg.get(C.PARQUET_CODEC))
        try:
            bloom = BloomSpec.from_options(o)
        except ValueError as e:
            raise WriteError(str(e)) from None
        # A table without the timeline-zone key is LOCAL (Hudi's default); new tables default to UTC
        # (docs/ttl.md).
        zone = cfg.get(C.TIMELINE_TIMEZONE) if cfg.is_set(C.TIMELINE_TIMEZONE) else (
            "UTC" if table is None else "LOCAL")

        made = cls(
            table_name=name,
            table_type=ttype,
            operation=op,
            record_key_fields=rk,
            partition_fields=pf,
            precombine_field=cfg.get(C.PRECOMBINE_FIELD),
            keygen_props=keygen,
            hive_style=hive,
            url_encode=urlenc,
            payload_class=_checked_payload(cfg.get(C.PAYLOAD_CLASS)),
            event_time_field=cfg.get(C.EVENT_TIME_FIELD),
            block_format=cfg.get(C.LOG_BLOCK_FORMAT),
            max_file_size=cfg.get(C.PARQUET_MAX_FILE_SIZE),
            small_file_limit=cfg.get(C.PARQUET_SMALL_FILE_LIMIT),
            record_size_estimate=cfg.get(C.RECORD_SIZE_ESTIMATE),
            parquet_codec=codec,
            timeline_timezone=zone,
            combine_before_insert=bool(cfg.get(C.COMBINE_BEFORE_INSERT)),
            allow_duplicate_on_inserts=bool(cfg.get(MERGE_ALLOW_DUPLICATE_ON_INSERTS)),
            bloom=bloom,
            event_time_unit=cfg.get(C.EVENT_TIME_UNIT),
            set_null_for_missing_columns=bool(cfg.get(C.SET_NULL_FOR_MISSING_COLUMNS)),
            table_version=version,
            transient_delete_marker=bool(cfg.get(C.TRANSIENT_DELETE_MARKER)),
            auto_record_keys=auto,
            bulk_insert_sort_mode=cfg.get(C.BULK_INSERT_SORT_MODE),
            prepped=prepped,
            index_type=index_type,
            record_index_update_partition_path=bool(cfg.get(C.RECORD_INDEX_UPDATE_PARTITION_PATH)),
            bloom_index_update_partition_path=bool(cfg.get(C.BLOOM_INDEX_UPDATE_PARTITION_PATH)),
            simple_index_update_partition_path=bool(cfg.get(C.SIMPLE_INDEX_UPDATE_PARTITION_PATH)),
            build_record_index=index_option(o, RECORD_INDEX_ENABLE) is True,
        )
        if made.tags_globally and index_type == "RECORD_INDEX":
            _check_record_index_usable(o, table)
        return made



# Hudi's global index types hoodie implements: one tagging (plan._tag_globally), two ways of finding keys.
GLOBAL_INDEX_TYPES = ("RECORD_INDEX", "GLOBAL_BLOOM", "GLOBAL_SIMPLE")


def tags_index(cfg: "WriteConfig") -> bool:
    """Whether the write looks its records up in the table (Hudi tags upserts and deletes; an insert only with
    hoodie.merge.allow.duplicate.on.inserts=false, which merges a key the table holds; bulk_insert and the
    overwrites never)."""
    op = cfg.operation
    return op in ("upsert", "delete") or (op == "insert" and not cfg.allow_duplicate_on_inserts)


def _check_record_index_usable(options: Mapping[str, str], table: Optional[HoodieTable]) -> None:
    """hoodie.index.type=RECORD_INDEX tags by the metadata table's record_index: the write must find it, or
    build it at its commit (hoodie.metadata.record.index.enable=true), else it is refused before anything is
    written. (Java Hudi falls back to a GLOBAL_SIMPLE scan of every file when the index is missing; hoodie
    names the missing setting instead of running a slower index than the one asked for.)"""
    enable = enable_option(options)
    ri = index_option(options, RECORD_INDEX_ENABLE)
    where = f"the table at {table.base_path}" if table is not None else "this new table"
    fix = ("Set hoodie.metadata.enable=true and hoodie.metadata.record.index.enable=true (the write builds the "
           "record index from the table's files, then keeps it), or use hoodie.index.type=BLOOM (non-global). "
           "Nothing was written")
    if enable is False:
        raise WriteError(f"hoodie.index.type=RECORD_INDEX looks records up in the metadata table's record_index, "
                         f"and hoodie.metadata.enable=false drops the metadata table. {fix}")
    if ri is False:
        raise WriteError(f"hoodie.index.type=RECORD_INDEX looks records up in the metadata table's record_index, "
                         f"and hoodie.metadata.record.index.enable=false drops it. {fix}")
    props = table.props if table is not None else {}
    has_mdt = files_partition_available(props)
    if ri is True and (has_mdt or enable is True):
        return  # built (or rebuilt) by this write's commit when missing; tagged by a key scan until then
    if ri is None and has_mdt and record_index_available(props):
        return
    missing = ("has no metadata table" if not has_mdt else
               "has a metadata table without the record_index partition")
    raise WriteError(f"hoodie.index.type=RECORD_INDEX looks records up in the metadata table's record_index, and "
                     f"{where} {missing}. {fix}")


# What a write without record key fields may do: add rows with generated keys (insert, bulk_insert and
# the overwrites, which replace file groups without matching keys), delete rows by the keys they were
# read with, drop partitions. An upsert must find stored records by key: refused.
AUTO_KEY_OPERATIONS = ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table", "delete",
                       "delete_partition")



def _auto_key_operation(cfg: Any, table: Optional[HoodieTable]) -> str:
    """The operation of a write without record key fields, whose keys are generated as Hudi 0.14+
    generates them (``AutoRecordKeyGenerationUtils``, ``HoodieSparkSqlWriter.deduceOperation``): an unset
    operation is bulk_insert (Hudi's choice); upsert and ``hoodie.combine.before.insert=true`` are refused
    before anything is written."""
    where = (f"the table at {table.base_path} has no record key fields (its keys are auto-generated)"
             if table is not None else "hoodie.datasource.write.recordkey.field is not set")
    if not cfg.is_set(C.OPERATION):
        return "bulk_insert"
    op = cfg.get(C.OPERATION)
    if op not in AUTO_KEY_OPERATIONS:
        raise WriteError(
            f"hoodie.datasource.write.operation={op} matches incoming rows to stored records by record key, and "
            f"this write has none: {where}. Without a record key field Hudi 0.14+ generates a new key for every "
            "row (<instant>_<partition id>_<row id>), so such a write can only add rows: use operation insert or "
            "bulk_insert (a delete takes the keys from the input's _hoodie_record_key and _hoodie_partition_path "
            "columns). To upsert, give the table a record key: set hoodie.datasource.write.recordkey.field when "
            "the table is created. Nothing was written")
    if cfg.get(C.COMBINE_BEFORE_INSERT):
        raise WriteError(
            f"hoodie.combine.before.insert=true de-duplicates rows by record key, and {where}: every row gets a "
            "new generated key, so there is nothing to de-duplicate (Hudi refuses the combination too). Drop the "
            "option, or set hoodie.datasource.write.recordkey.field. Nothing was written")
    return op



INSERT_DUP_POLICY = "hoodie.datasource.insert.dup.policy"
INSERT_DROP_DUPS = "hoodie.datasource.write.insert.drop.duplicates"


def _refuse_insert_dup_policy(options: Mapping[str, str], operation: str) -> None:
    """Hudi's insert dup policy (``drop``: leave out incoming rows whose key the table holds, ``fail``: refuse
    them; ``hoodie.datasource.write.insert.drop.duplicates=true`` is the older ``drop``) looks the incoming keys
    up before an insert. hoodie applies it in ``hoodie.sql`` INSERT INTO only; a DataFrame or Arrow insert
    would store the duplicates as if the option were not there, so it is refused before anything is written.
    Upserts ignore the policy (Hudi's too): the key's stored row is updated."""
    policy = options.get(INSERT_DUP_POLICY, "").strip().lower()
    drop = options.get(INSERT_DROP_DUPS, "").strip().lower() == "true"
    if operation not in ("insert", "bulk_insert") or not (drop or policy in ("drop", "fail")):
        return
    given = f"{INSERT_DUP_POLICY}={policy}" if policy in ("drop", "fail") else f"{INSERT_DROP_DUPS}=true"
    raise WriteError(
        f"{given} with operation {operation}: hoodie's DataFrame and Arrow writes do not look incoming keys up "
        "before an insert, so the rows whose key the table holds would be stored again. Use hoodie.sql's INSERT "
        f"INTO (it applies {INSERT_DUP_POLICY}), or operation upsert (a stored key's row is updated), or drop the "
        "option to keep duplicates. Nothing was written")


def _checked_payload(payload: Optional[str]) -> Optional[str]:
    """The payload class of a write; one hoodie does not merge Hudi's way is refused before anything
    is written (see :func:`hoodie.format.table.check_payload_class`)."""
    if payload:
        try:
            check_payload_class(payload, "this write (hoodie.datasource.write.payload.class)")
        except TableError as e:
            raise WriteError(str(e)) from None
    return payload



def _fields(v: str) -> list[str]:
    return [x.split(":")[0].strip() for x in v.split(",") if x.strip()]



def _keygen_kind(v: str) -> str:
    return v.strip().rsplit(".", 1)[-1]



# (write option, table property, normalizer): settings a write cannot change on an existing table.
_TABLE_CONFIG = (
    ("hoodie.datasource.write.table.type", TC.TYPE, lambda v: v.strip().upper()),
    ("hoodie.datasource.write.recordkey.field", TC.RECORDKEY_FIELDS, _fields),
    ("hoodie.datasource.write.partitionpath.field", TC.PARTITION_FIELDS, _fields),
    ("hoodie.datasource.write.keygenerator.class", TC.KEYGEN_CLASS, _keygen_kind),
    ("hoodie.datasource.write.precombine.field", TC.PRECOMBINE_FIELD, lambda v: v.strip()),
    (C.HIVE_STYLE_PARTITIONING, C.HIVE_STYLE_PARTITIONING, lambda v: v.strip().lower()),
    (C.URL_ENCODE_PARTITIONING, C.URL_ENCODE_PARTITIONING, lambda v: v.strip().lower()),
)



_TABLE_CONFIG_DEFAULTS = {
    TC.PARTITION_FIELDS: "",
    "hoodie.datasource.write.hive_style_partitioning": "false",
    "hoodie.datasource.write.partitionpath.urlencode": "false",
}



def _refuse_config_conflicts(options: Mapping[str, str], table: HoodieTable, overwrite: bool) -> None:
    """WriteError listing every option that contradicts ``table``'s hoodie.properties."""
    tp = table.props
    diffs = []
    for key, table_key, norm in _TABLE_CONFIG:
        if key not in options:
            continue
        # Absent folder-naming keys mean Hudi's default, false: a table without them is named plainly.
        stored = tp.get(table_key, _TABLE_CONFIG_DEFAULTS.get(table_key))
        if stored is None:
            continue
        if norm(options[key]) == norm(stored):
            continue
        if table_key == "hoodie.table.type":
            diffs.append(f"{key}={norm(options[key])} but the table at {table.base_path} is {stored}")
        else:
            diffs.append(f"{key}={options[key]!r} but the table has {table_key}={stored!r}")
    if not diffs:
        return
    advice = ("mode='overwrite' replaces the table's data but keeps its configuration; to change the "
              "configuration, delete the table first (all its data and history) and write it anew"
              if overwrite else "drop the option(s) or make them match .hoodie/hoodie.properties")
    raise WriteError(f"{'; '.join(diffs)}. A write cannot change the configuration of the table at "
                     f"{table.base_path} (Hudi refuses it too: records would get other keys, locations or "
                     f"merging than the stored ones): {advice}")



def overwrite_config(cfg: WriteConfig) -> WriteConfig:
    """The write config of ``mode='overwrite'`` on an existing table: an insert_overwrite_table
    replacecommit, as Hudi's SaveMode.Overwrite replaces the table's data.

    The old file groups stay readable until the replacecommit completes, so a failure at any
    point leaves the old table as it was. The batch is de-duplicated as the requested operation
    would de-duplicate it on an empty table (upsert: always; insert: with
    hoodie.combine.before.insert)."""
    if cfg.operation in ("delete", "delete_partition"):
        raise WriteError(f"mode='overwrite' replaces the table's data with the batch; it does not combine with "
                         f"hoodie.datasource.write.operation={cfg.operation}: use mode='append'")
    combine = cfg.combine_before_insert or cfg.operation == "upsert"
    return dataclasses.replace(cfg, operation="insert_overwrite_table", combine_before_insert=combine)
