"""A Hudi table on storage: its config (``hoodie.properties``), timeline and schema.

``HoodieTable`` plays the role of Java's ``HoodieTableMetaClient``; ``create_table`` lays out a new
table-version-6 table without a metadata table (reference §3.1, §3.9).
"""

from __future__ import annotations

import copy
import json
from types import MappingProxyType
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, TypeVar, Union

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.configs import ConfigProperty, ConfigValueError
from hoodie.configs import table as TC
from hoodie.configs.table import CDC_ENABLED, TABLE_NAME, TIMELINE_TIMEZONE
from hoodie.configs.write import HIVE_STYLE_PARTITIONING, URL_ENCODE_PARTITIONING
from hoodie.errors import HoodieError
from hoodie.format import properties as P
from hoodie.format.file_group.naming import PARTITION_METAFILES
from hoodie.format.timeline.instant import Instant, InstantGenerator, State
from hoodie.format.storage import Storage
from hoodie.format.timeline import active as TL
from hoodie.format.timeline.active import METAFOLDER, Timeline
from hoodie.format.keys.common import _TYPE_TO_CLASS
from hoodie.format.avro.schema import avro_to_arrow_schema

PROPS_FILE = f"{METAFOLDER}/hoodie.properties"
META_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
OPERATION_COLUMN = "_hoodie_operation"
COW = "COPY_ON_WRITE"
MOR = "MERGE_ON_READ"
# Table versions hoodie opens: 6 (Hudi 0.14/0.15), 8 (Hudi 1.0) and 9 (Hudi 1.1).
READABLE_VERSIONS = ("6", "8", "9")
WRITABLE_VERSIONS = ("6", "8", "9")

OVERWRITE_WITH_LATEST_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = TC.DEFAULT_PAYLOAD
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"
# Payloads whose merge picks the record with the greatest ordering (precombine) value.
ORDERING_PAYLOADS = frozenset({DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD})
# Payloads that keep the latest write regardless of ordering values.
COMMIT_TIME_PAYLOADS = frozenset({OVERWRITE_WITH_LATEST_PAYLOAD})
# Payloads whose merge is more than "greatest ordering value wins" or "latest write wins": field-wise
# overlays (OverwriteNonDefaults, PartialUpdate), deletes marked in a column (AWS DMS, Debezium).
# hoodie does not merge them Hudi's way, so tables using them are refused rather than read wrong.
UNSUPPORTED_PAYLOADS = {
    "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload":
        "a null (default) field of a newer record keeps the older value",
    "org.apache.hudi.common.model.PartialUpdateAvroPayload":
        "a null field of the winning record takes the other record's value",
    "org.apache.hudi.common.model.AWSDmsAvroPayload": "a row with Op = 'D' deletes the key",
    "org.apache.hudi.common.model.debezium.MySqlDebeziumAvroPayload": "Debezium operation and sequence columns",
    "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload": "Debezium operation and LSN columns",
}


def check_payload_class(payload: str, where: str, merge_mode: str = "") -> None:
    """Refuse a payload class whose merge hoodie does not implement (it would return other rows than
    Hudi): names the class, what Hudi does with it and the way out.

    Raises:
        TableError: ``payload`` is neither an ordering payload nor a commit-time one.
    """
    if payload in ORDERING_PAYLOADS or payload in COMMIT_TIME_PAYLOADS:
        return
    what = UNSUPPORTED_PAYLOADS.get(payload, "a merge hoodie does not know")
    mode = f" (hoodie.record.merge.mode={merge_mode})" if merge_mode else ""
    raise TableError(
        f"{where} merges records with {payload}{mode}: {what}. hoodie merges by the ordering field "
        f"({DEFAULT_PAYLOAD}, {EVENT_TIME_PAYLOAD}) or by commit time ({OVERWRITE_WITH_LATEST_PAYLOAD}) only, so it "
        "would return other rows than Hudi. Read and write this table with Hudi, or rewrite it with one of those "
        "payloads")
MERGER_STRATEGY_DEFAULT = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"

T = TypeVar("T")

# Every hoodie.properties key hoodie reads, each by the rule of its definition in hoodie.configs.table
# (checked when a table is opened, so a value Java would misread never reaches a read or a write).
TABLE_PROPERTIES: tuple[ConfigProperty[Any], ...] = (
    TABLE_NAME, TC.TYPE, TC.VERSION, TC.INITIAL_VERSION, TC.TIMELINE_LAYOUT_VERSION, TC.RECORDKEY_FIELDS,
    TC.PARTITION_FIELDS, TC.PRECOMBINE_FIELD, TC.ORDERING_FIELDS, TC.KEYGEN_CLASS, TC.KEYGEN_TYPE,
    HIVE_STYLE_PARTITIONING, URL_ENCODE_PARTITIONING, TIMELINE_TIMEZONE, TC.PAYLOAD_CLASS, TC.LEGACY_PAYLOAD_CLASS,
    TC.RECORD_MERGE_MODE, TC.PARTIAL_UPDATE_MODE, TC.POPULATE_META_FIELDS, TC.DROP_PARTITION_COLUMNS,
    TC.BASE_FILE_FORMAT, TC.PARTITION_METAFILE_BASE_FORMAT, CDC_ENABLED, TC.BOOTSTRAP_BASE_PATH,
    TC.METADATA_PARTITIONS, TC.METADATA_PARTITIONS_INFLIGHT, TC.CREATE_SCHEMA, TC.ARCHIVELOG_FOLDER,
)


class TableError(HoodieError):
    """The path is not a usable Hudi v6 table; the message says why and what to do."""


def table_property(props: Mapping[str, str], prop: "ConfigProperty[T]", where: str) -> Optional[T]:
    """``prop``'s value in the table properties ``props`` (of the file ``where``), read by its rule;
    its default when absent or blank.

    Raises:
        TableError: a value the rule refuses (``hoodie.populate.meta.fields=yes``), naming the key, the
            file and the values accepted. Java Hudi would read such a value some way (``yes`` as false),
            so hoodie refuses it instead of guessing which the writer meant.
    """
    try:
        return prop.get(props)
    except ConfigValueError as e:
        raise TableError(
            f"{where}: {e}. hoodie reads hoodie.properties by the rules of Hudi's configs and does not guess what "
            "another value means (Java Hudi would read it some way, a boolean as false); correct the value in "
            "hoodie.properties (and in hoodie.properties.backup, Hudi's copy)") from None


@dataclass(frozen=True)
class MergeMode:
    """How records with one key combine: by commit order, or by the ordering (precombine) field."""

    ordering_field: Optional[str]
    use_ordering: bool

    @property
    def name(self) -> str:
        """``EVENT_TIME_ORDERING`` or ``COMMIT_TIME_ORDERING`` (Hudi 1.x vocabulary)."""
        return "EVENT_TIME_ORDERING" if self.use_ordering else "COMMIT_TIME_ORDERING"


class HoodieTable:
    """One snapshot of a table: its ``hoodie.properties`` as read when it was opened, and its active
    timeline, listed at the first access and then advanced only by the instants this process writes
    through it (:meth:`wrote`). Java's ``HoodieTableMetaClient`` without ``reloadActiveTimeline``:

    * a transaction opens the table once under the table lock (the one load it needs to see other
      writers' instants) and adds its own instants to that snapshot; its commit step returns it;
    * the properties never change in place: :func:`update_table_properties` writes the file and
      returns a new snapshot (:meth:`with_properties`), which the caller uses from then on;
    * :meth:`latest` opens the table again, for a caller that must see what others committed since.
    """

    def __init__(self, base_path: str, storage_options: Optional[dict[str, Any]] = None,
                 storage: Optional[Storage] = None, read_only: bool = False) -> None:
        self.storage = storage or Storage(base_path, storage_options)
        self.base_path = self.storage.base_uri
        try:
            raw = self.storage.read_bytes(PROPS_FILE)
        except FileNotFoundError:
            raise TableError(
                f"{self.storage.uri()} is not a Hudi table: {PROPS_FILE} is missing "
                "(create one with `hoodie create` or hoodie.spark.write)"
            ) from None
        # Nothing is written through a read-only table (readers open tables so).
        self.read_only = read_only
        self._use_props(P.parse_properties(raw.decode("utf-8", errors="replace")))
        self._timeline: Optional[Timeline] = None
        self._schema_cache: dict[str, dict] = {}

    def _use_props(self, props: Mapping[str, str]) -> None:
        """Take ``props`` as this snapshot's properties, each typed key read by its rule now, before
        anything reads or writes the table through it."""
        self._props: Mapping[str, str] = MappingProxyType(dict(props))
        self._typed: dict[str, Any] = {}  # key -> value read by its rule, filled by prop()
        # Hudi always writes these. Without them a damaged file would pass for a copy-on-write table,
        # and the next write would rewrite base files without the updates held in log files.
        missing = [k.key for k in (TABLE_NAME, TC.TYPE, TC.VERSION) if k.raw(self._props) is None]
        if missing:
            raise TableError(
                f"{self.storage.uri(PROPS_FILE)} is damaged: it lacks {', '.join(missing)}, which Hudi always "
                "writes. Restore it from .hoodie/hoodie.properties.backup (Hudi's copy) or from a backup"
            )
        version = self.prop(TC.VERSION)
        if str(version) not in READABLE_VERSIONS:
            raise TableError(
                f"{self.storage.uri()} is table version {version}; hoodie reads and writes table versions 6 "
                "(Hudi 0.14/0.15), 8 (Hudi 1.0) and 9 (Hudi 1.1)"
            )
        default_layout = 2 if version in (8, 9) else 1
        layout = self.prop(TC.TIMELINE_LAYOUT_VERSION)
        if layout is not None and layout != default_layout:
            raise TableError(
                f"{self.storage.uri()} is table version {version} with timeline layout {layout}; Hudi writes layout "
                f"{default_layout} for that version, and hoodie reads only that")
        self.timeline_layout = default_layout
        # Every other property is read by its rule now, before anything reads or writes the table.
        for prop in TABLE_PROPERTIES:
            self.prop(prop)

    def __getstate__(self) -> dict[str, Any]:
        # Spark ships snapshots to its Python workers by pickle; a mappingproxy does not pickle.
        state = self.__dict__.copy()
        state["_props"] = dict(self._props)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["_props"] = MappingProxyType(dict(state["_props"]))
        self.__dict__.update(state)

    # -- snapshots -----------------------------------------------------------------------------
    def latest(self) -> "HoodieTable":
        """The table as it is on storage now: a new snapshot (``hoodie.properties`` read and the
        timeline listed again, at its first access); this one is unchanged."""
        return HoodieTable(self.base_path, storage=self.storage, read_only=self.read_only)

    def with_properties(self, props: Mapping[str, str]) -> "HoodieTable":
        """A new snapshot with ``props`` as its properties (what :func:`update_table_properties` just
        wrote) and this one's timeline; this one is unchanged."""
        new = copy.copy(self)
        new._use_props(props)
        new._schema_cache = dict(self._schema_cache)
        return new

    # -- config --------------------------------------------------------------------------------
    @property
    def props(self) -> Mapping[str, str]:
        """``hoodie.properties`` as text, read-only: a change goes through :func:`update_table_properties`,
        which returns a new snapshot."""
        return self._props

    def prop(self, prop: "ConfigProperty[T]") -> Optional[T]:
        """The table property ``prop`` (a key of :mod:`hoodie.configs.table`) read from hoodie.properties
        by its rule, once; its default when absent. Raises :class:`TableError` naming the key and the file."""
        key = prop.key
        if key not in self._typed:
            self._typed[key] = table_property(self._props, prop, self.storage.uri(PROPS_FILE))
        return self._typed[key]

    @property
    def name(self) -> str:
        """``hoodie.table.name``."""
        return self.prop(TABLE_NAME) or ""

    @property
    def table_type(self) -> str:
        """``COPY_ON_WRITE`` or ``MERGE_ON_READ``."""
        return self.prop(TC.TYPE)

    @property
    def is_mor(self) -> bool:
        """Whether the table is merge-on-read."""
        return self.table_type == MOR

    @property
    def record_key_fields(self) -> list[str]:
        """``hoodie.table.recordkey.fields`` as a list."""
        return list(self.prop(TC.RECORDKEY_FIELDS) or ())

    @property
    def partition_fields(self) -> list[str]:
        """``hoodie.table.partition.fields`` as a list (empty: not partitioned)."""
        return list(self.prop(TC.PARTITION_FIELDS) or ())

    @property
    def is_partitioned(self) -> bool:
        """Whether the table has partition fields."""
        return bool(self.partition_fields)

    @property
    def precombine_field(self) -> Optional[str]:
        """The ordering field: ``hoodie.table.precombine.field``, or the first of Hudi 1.1's
        ``hoodie.table.ordering.fields`` (table version 9 writes only that key), if set."""
        field = self.prop(TC.PRECOMBINE_FIELD)
        if field is None:
            fields = list(self.prop(TC.ORDERING_FIELDS) or ())
            if len(fields) > 1:
                raise TableError(
                    f"{self.storage.uri()} orders records by several fields ({', '.join(fields)}); hoodie merges by one "
                    "ordering field, so it would pick winners Hudi does not. Read it with Hudi 1.1")
            field = fields[0] if fields else None
        return field

    @property
    def hive_style(self) -> bool:
        """Whether partition paths are ``field=value``."""
        return self.prop(HIVE_STYLE_PARTITIONING)

    @property
    def url_encode(self) -> bool:
        """Whether partition values are URL-encoded."""
        return self.prop(URL_ENCODE_PARTITIONING)

    @property
    def timeline_timezone(self) -> str:
        """``LOCAL`` or ``UTC``: a table whose hoodie.properties lacks the key is LOCAL (Hudi's default; the
        key's own default, UTC, is for the tables hoodie creates)."""
        return "LOCAL" if TIMELINE_TIMEZONE.raw(self.props) is None else self.prop(TIMELINE_TIMEZONE)

    @property
    def payload_class(self) -> str:
        """``hoodie.compaction.payload.class`` (v6 default: DefaultHoodieRecordPayload)."""
        return self.prop(TC.PAYLOAD_CLASS)

    @property
    def merge_mode(self) -> MergeMode:
        """Commit-time or ordering-field merging, chosen by the payload class (reference §3.10), or on
        table versions 8/9 by ``hoodie.record.merge.mode`` (COMMIT_TIME_ORDERING / EVENT_TIME_ORDERING;
        CUSTOM merging through a payload class hoodie knows)."""
        ordering = self.precombine_field
        mode = self.prop(TC.RECORD_MERGE_MODE) or ""
        # Hudi 1.1 carries the deprecated payloads' behaviour as a partial-update mode and merge
        # properties (delete markers); hoodie merges neither, so it refuses rather than drop them.
        partial = self.prop(TC.PARTIAL_UPDATE_MODE).upper()
        extra = sorted(k for k in self.props if k.startswith("hoodie.table.merge.properties."))
        if partial != "NONE" or extra:
            what = f"hoodie.table.partial.update.mode={partial}" if partial != "NONE" else ", ".join(extra)
            legacy = self.prop(TC.LEGACY_PAYLOAD_CLASS)
            raise TableError(
                f"{self.storage.uri()} merges records with {what}{f' (from {legacy})' if legacy else ''}: null or "
                "default fields that keep older values, or deletes marked in a column. hoodie does not merge that way, "
                "so it would return other rows than Hudi. Read and write this table with Hudi 1.1")
        if mode == "COMMIT_TIME_ORDERING":
            return MergeMode(ordering, False)
        if mode == "EVENT_TIME_ORDERING":
            return MergeMode(ordering, ordering is not None)
        payload = self.payload_class
        check_payload_class(payload, self.storage.uri(), mode)
        if payload in COMMIT_TIME_PAYLOADS or not ordering:
            return MergeMode(ordering, False)
        return MergeMode(ordering, True)

    @property
    def populate_meta_fields(self) -> bool:
        """``hoodie.populate.meta.fields`` (default true)."""
        return self.prop(TC.POPULATE_META_FIELDS)

    @property
    def has_operation_field(self) -> bool:
        """Whether the table schema carries ``_hoodie_operation`` (``hoodie.allow.operation.metadata.field``,
        Flink's changelog mode): a merged log record whose operation is ``D`` is a delete (Hudi's
        ``LogFileIterator.isDeleteOperation``)."""
        try:
            fields = self.avro_schema().get("fields", [])
        except Exception:  # no schema yet: no records either
            return False
        return any(f.get("name") == OPERATION_COLUMN for f in fields)

    @property
    def bootstrap_base_path(self) -> Optional[str]:
        """``hoodie.bootstrap.base.path``: set on tables Hudi bootstrapped from existing Parquet files."""
        return self.prop(TC.BOOTSTRAP_BASE_PATH)

    @property
    def base_file_format(self) -> str:
        """``hoodie.table.base.file.format`` (PARQUET unless the table says otherwise: ORC, HFILE)."""
        return self.prop(TC.BASE_FILE_FORMAT)

    @property
    def cdc_enabled(self) -> bool:
        """``hoodie.table.cdc.enabled``: Java's writers record change data (CDC log files) with each write."""
        return self.prop(CDC_ENABLED)

    @property
    def drop_partition_columns(self) -> bool:
        """Whether partition columns are dropped from data files."""
        return self.prop(TC.DROP_PARTITION_COLUMNS)

    @property
    def has_metadata_table(self) -> bool:
        """Whether the table reports metadata-table partitions (we never maintain an MDT)."""
        return bool(self.prop(TC.METADATA_PARTITIONS))

    def instant_generator(self) -> InstantGenerator:
        """An instant generator in the table's timeline zone."""
        return InstantGenerator(self.timeline_timezone)

    @property
    def table_version(self) -> int:
        """``hoodie.table.version``: 6, 8 or 9."""
        return self.prop(TC.VERSION)

    def new_instant_time(self) -> str:
        """A fresh instant strictly after every instant (and, on layout 2, every completion time) on
        the timeline."""
        newest = max((max(i.timestamp, i.completion or "") for i in self.timeline), default=None)
        return self.instant_generator().now(floor=newest)

    # -- timeline ------------------------------------------------------------------------------
    @property
    def timeline(self) -> Timeline:
        """The snapshot's active timeline: listed at the first access, then advanced by :meth:`wrote`
        and :meth:`removed` (:meth:`latest` gives a new snapshot that lists again)."""
        if self._timeline is None:
            self._timeline = Timeline.load(self.storage, self.timeline_layout)
        return self._timeline

    def with_timeline(self, timeline: Timeline) -> "HoodieTable":
        """Use ``timeline`` (a listing made elsewhere, such as the Spark driver's, so that every
        task sees the same instants); returns ``self``."""
        self._timeline = timeline
        return self

    def wrote(self, *instants: Instant) -> "HoodieTable":
        """Add the instant files this process just wrote to the snapshot's timeline (:meth:`Timeline.written`)
        rather than listing again; with no timeline listed yet the first access lists anyway. Returns ``self``."""
        if self._timeline is not None:
            self._timeline = self._timeline.written(*instants)
        return self

    def removed(self, timestamp: str, action: str, states: "Iterable[State]") -> "HoodieTable":
        """Take out of the snapshot's timeline the instant files this process just deleted
        (:meth:`Timeline.removed`, after :func:`~hoodie.format.timeline.active.delete_instant_files`)
        rather than listing again. Returns ``self``."""
        if self._timeline is not None:
            self._timeline = self._timeline.removed(timestamp, action, states)
        return self

    def delete_instant(self, timestamp: str, action: str, states: "Iterable[State]") -> "HoodieTable":
        """Delete timeline files of one instant (:func:`~hoodie.format.timeline.active.delete_instant_files`)
        and take them out of the snapshot's timeline (:meth:`removed`). Returns ``self``."""
        states = tuple(states)
        TL.delete_instant_files(self.storage, timestamp, action, states)
        return self.removed(timestamp, action, states)

    def reload(self) -> "HoodieTable":
        """Forget the listed timeline so the next access lists ``.hoodie`` again (the properties stay:
        :meth:`latest` reads both). For a process that removed instant files or must see other
        writers' instants in the same snapshot object; returns ``self``."""
        self._timeline = None
        return self

    # -- schema --------------------------------------------------------------------------------
    def avro_schema(self, as_of: Optional[str] = None) -> dict:
        """The table's Avro schema (without meta fields): the newest completed write's
        ``extraMetadata.schema`` at or before ``as_of``, else ``hoodie.table.create.schema``."""
        tl = self.timeline.completed_writes()
        if as_of is not None:
            tl = tl.before_or_on(as_of)
        for inst in reversed(tl.instants):
            cached = self._schema_cache.get(inst.timestamp)
            if cached is not None:
                return cached
            meta = self.timeline.commit_metadata(inst)
            if meta.schema:
                schema = json.loads(meta.schema)
                self._schema_cache[inst.timestamp] = schema
                return schema
        create = self.prop(TC.CREATE_SCHEMA)
        if create:
            return json.loads(create)
        raise TableError(
            f"{self.storage.uri()} has no schema yet: no completed commit records one and "
            "hoodie.table.create.schema is not set"
        )

    def arrow_schema(self, as_of: Optional[str] = None, with_meta: bool = True) -> pa.Schema:
        """The table schema in Arrow, with the 5 meta columns first when ``with_meta``."""
        data = avro_to_arrow_schema(self.avro_schema(as_of))
        data = pa.schema([f for f in data if f.name not in META_COLUMNS and f.name != OPERATION_COLUMN])
        if not with_meta:
            return data
        meta = [pa.field(c, pa.string(), nullable=True) for c in META_COLUMNS]
        return pa.schema(meta + list(data))

    def __repr__(self) -> str:
        return f"HoodieTable({self.base_path!r}, {self.table_type})"


def open_table(table_or_path: Union[str, "HoodieTable"], storage_options: Optional[dict[str, Any]] = None, *,
               read_only: bool = False) -> HoodieTable:
    """The table as it is on storage now, for an entry point given a base path or a table: a path is
    opened; a :class:`HoodieTable` gives its :meth:`~HoodieTable.latest` snapshot (the caller's object is
    unchanged; the entry point's results say what it committed)."""
    if isinstance(table_or_path, HoodieTable):
        return table_or_path.latest()
    return HoodieTable(str(table_or_path), storage_options, read_only=read_only)


def table_exists(storage: Storage) -> bool:
    """Whether ``hoodie.properties`` exists under the storage root."""
    return storage.exists(PROPS_FILE)


def create_table(
    base_path: str,
    *,
    table_name: str,
    table_type: str = COW,
    record_key_fields: list[str],
    partition_fields: Optional[list[str]] = None,
    precombine_field: Optional[str] = None,
    keygen_class: Optional[str] = None,
    hive_style: bool = False,
    url_encode: bool = False,
    avro_schema: Optional[dict] = None,
    payload_class: Optional[str] = None,
    timeline_timezone: str = "UTC",
    database: Optional[str] = None,
    extra_props: Optional[Mapping[str, str]] = None,
    storage_options: Optional[dict[str, Any]] = None,
    storage: Optional[Storage] = None,
    table_version: int = 6,
    auto_record_keys: bool = False,
) -> HoodieTable:
    """Lay out a new table (no metadata table) of ``table_version`` 6 (Hudi 0.14/0.15), 8 (Hudi 1.0)
    or 9 (Hudi 1.1), with the properties that version's Spark writer sets, and return it.

    ``auto_record_keys`` makes a table without record key fields, as Hudi 0.14+ creates one when a
    write sets no ``hoodie.datasource.write.recordkey.field``: no ``hoodie.table.recordkey.fields``,
    the key generator inferred from the partition fields alone.

    The timeline zone defaults to UTC (Hudi's default is LOCAL, whose instants are each writer's
    wall-clock time: time-based services misjudge ages when writers run in different zones).
    Fails if a table already exists at ``base_path`` (delete it first, or use overwrite mode).
    """
    st = storage or Storage(base_path, storage_options)
    if table_exists(st):
        raise TableError(f"a Hudi table already exists at {st.uri()}")
    if timeline_timezone.upper() not in ("LOCAL", "UTC"):
        raise TableError(f"hoodie.table.timeline.timezone={timeline_timezone!r} is not a timeline zone; use LOCAL or "
                         "UTC (UTC is recommended: LOCAL instants are each writer's wall-clock time)")
    table_type = table_type.upper()
    if table_type not in (COW, MOR):
        raise TableError(f"table type {table_type!r} is not COPY_ON_WRITE or MERGE_ON_READ")
    if table_version not in (6, 8, 9):
        raise TableError(f"table version {table_version}: hoodie creates tables of version 6, 8 or 9")
    if not record_key_fields and not auto_record_keys:
        raise TableError("a table needs at least one record key field "
                         "(hoodie.datasource.write.recordkey.field), or auto-generated record keys")
    partition_fields = [f for f in (partition_fields or []) if f]
    if keygen_class is None:
        if not partition_fields:
            keygen_class = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
        elif len(record_key_fields) > 1 or len(partition_fields) > 1:
            keygen_class = "org.apache.hudi.keygen.ComplexKeyGenerator"
        else:
            keygen_class = "org.apache.hudi.keygen.SimpleKeyGenerator"
    props: dict[str, str] = {
        "hoodie.table.name": table_name,
        "hoodie.table.type": table_type,
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.recordkey.fields": ",".join(record_key_fields),
        "hoodie.table.keygenerator.class": keygen_class,
        "hoodie.datasource.write.hive_style_partitioning": str(hive_style).lower(),
        "hoodie.datasource.write.partitionpath.urlencode": str(url_encode).lower(),
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.populate.meta.fields": "true",
        "hoodie.compaction.record.merger.strategy": MERGER_STRATEGY_DEFAULT,
    }
    if not record_key_fields:
        del props["hoodie.table.recordkey.fields"]  # auto-generated keys: Hudi stores no record key fields
    if partition_fields:
        props["hoodie.table.partition.fields"] = ",".join(partition_fields)
    if precombine_field:
        props["hoodie.table.precombine.field"] = precombine_field
    if table_type == MOR or payload_class:
        props["hoodie.compaction.payload.class"] = payload_class or (
            DEFAULT_PAYLOAD if precombine_field else OVERWRITE_WITH_LATEST_PAYLOAD
        )
    props["hoodie.table.timeline.timezone"] = timeline_timezone.upper()
    if database:
        props["hoodie.database.name"] = database
    if avro_schema is not None:
        props["hoodie.table.create.schema"] = json.dumps(avro_schema, separators=(",", ":"))
    if table_version >= 8:
        _props_v8(props, table_version, precombine_field)
    for k, v in (extra_props or {}).items():
        props[k] = str(v)
    # Every typed property as the table will read it, before anything is written (an extra property
    # such as hoodie.populate.meta.fields=yes would otherwise leave a table no one can open).
    for prop in TABLE_PROPERTIES:
        table_property(props, prop, st.uri(PROPS_FILE))
    dirs = [METAFOLDER, f"{METAFOLDER}/.aux/.bootstrap/.partitions", f"{METAFOLDER}/.aux/.bootstrap/.fileids",
            f"{METAFOLDER}/.temp", f"{METAFOLDER}/.schema"]
    dirs += [f"{METAFOLDER}/timeline", f"{METAFOLDER}/timeline/history"] if table_version >= 8 else [
        f"{METAFOLDER}/archived"]
    for d in dirs:
        st.mkdirs(d)
    st.write_bytes(PROPS_FILE, P.format_table_properties(props).encode("utf-8"))
    return HoodieTable(st.base_uri, storage=st)


# Merge strategy ids of Hudi 1.x's built-in merge modes.
COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
EVENT_TIME_STRATEGY = MERGER_STRATEGY_DEFAULT


def _props_v8(props: dict[str, str], version: int, precombine_field: Optional[str]) -> None:
    """Turn version-6 properties into what Hudi 1.0 (8) / 1.1 (9) writes (``hudi-v8-v9-format.md``
    §2): timeline layout 2, the key generator by type, merge mode (from the payload class),
    ordering fields (9) instead of the precombine field."""
    payload = props.pop("hoodie.compaction.payload.class", None)
    props.pop("hoodie.compaction.record.merger.strategy", None)
    keygen = props.pop("hoodie.table.keygenerator.class", "")
    event_time = precombine_field is not None and (payload is None or payload in ORDERING_PAYLOADS)
    if payload is not None and payload not in ORDERING_PAYLOADS | COMMIT_TIME_PAYLOADS:
        raise TableError(f"payload class {payload}: a table version {version} table merges by a merge mode; hoodie "
                         "creates COMMIT_TIME_ORDERING or EVENT_TIME_ORDERING tables only (payloads "
                         f"{', '.join(sorted(ORDERING_PAYLOADS | COMMIT_TIME_PAYLOADS))})")
    props.update({
        "hoodie.table.version": str(version),
        "hoodie.table.initial.version": str(version),
        "hoodie.timeline.layout.version": "2",
        "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history",
        "hoodie.table.keygenerator.type": _keygen_type(keygen, version),
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING" if event_time else "COMMIT_TIME_ORDERING",
    })
    if version == 8:
        props["hoodie.record.merge.strategy.id"] = EVENT_TIME_STRATEGY if event_time else COMMIT_TIME_STRATEGY
        props["hoodie.compaction.payload.class"] = payload or (
            DEFAULT_PAYLOAD if event_time else OVERWRITE_WITH_LATEST_PAYLOAD)
    else:
        props["hoodie.table.format"] = "native"
        if precombine_field:
            props.pop("hoodie.table.precombine.field", None)
            props["hoodie.table.ordering.fields"] = precombine_field


def _keygen_type(keygen_class: str, version: int) -> str:
    """``hoodie.table.keygenerator.type`` for a key generator class (1.x stores the type only)."""
    for kind, cls in _TYPE_TO_CLASS.items():
        if cls.rsplit(".", 1)[-1] == keygen_class.rsplit(".", 1)[-1]:
            return kind
    raise TableError(f"key generator {keygen_class}: a table version {version} table records its key generator by "
                     f"type, and {keygen_class} has none of Hudi's types ({', '.join(_TYPE_TO_CLASS)})")


def update_table_properties(table: HoodieTable, updates: Mapping[str, Optional[str]]) -> HoodieTable:
    """Set (or, with None, remove) table properties, rewriting the checksum last; returns the new
    snapshot holding them (``table`` keeps the properties it was opened with: use the result)."""
    props = dict(table.props)
    for k, v in updates.items():
        if v is None:
            props.pop(k, None)
        else:
            props[k] = v
    text = P.format_table_properties(props)
    table.storage.write_bytes(PROPS_FILE, text.encode("utf-8"))
    # As a later open reads them (the checksum line included).
    return table.with_properties(P.parse_properties(text))


def _metafile(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def write_partition_metadata(storage: Storage, partition: str, commit_time: str) -> None:
    """Create ``<partition>/.hoodie_partition_metadata`` (commitTime, partitionDepth) unless the partition
    has a metafile already (in either form: Java may have written it in the base format)."""
    rel = _metafile(partition, PARTITION_METAFILES[0])
    if any(storage.exists(_metafile(partition, name)) for name in PARTITION_METAFILES):
        return
    depth = len([p for p in partition.split("/") if p]) if partition else 0
    text = P.format_properties(
        {"commitTime": commit_time, "partitionDepth": str(depth)}, comment="partition metadata"
    )
    try:
        storage.create_new(rel, text.encode("utf-8"))
    except FileExistsError:
        pass  # another task created it concurrently; its content is equivalent


def read_partition_metadata(storage: Storage, partition: str) -> Optional[dict[str, str]]:
    """The partition metafile's properties, or None when it is absent. The properties file first, then
    the Parquet form Java writes with ``hoodie.partition.metafile.use.base.format=true`` (the properties
    are the footer's key-value metadata)."""
    try:
        return P.parse_properties(storage.read_bytes(_metafile(partition, PARTITION_METAFILES[0])).decode("utf-8"))
    except FileNotFoundError:
        pass
    rel = _metafile(partition, PARTITION_METAFILES[1])
    if not storage.exists(rel):
        return None
    with storage.fs.open_input_file(storage.full(rel)) as f:
        kv = pq.read_metadata(f).metadata or {}
    return {k.decode("utf-8"): v.decode("utf-8") for k, v in kv.items() if not k.startswith(b"ARROW:")}


# Hudi's reserved instant of a metadata-only bootstrap (HoodieTimeline.METADATA_BOOTSTRAP_INSTANT_TS): its
# base files are skeletons holding only the meta columns; the data stays in the source files.
METADATA_BOOTSTRAP_INSTANT = "00000000000001"


def _refuse(table: HoodieTable, what: str, problem: str, remedy: str, nothing: str = "written") -> None:
    raise TableError(f"{what} on {table.storage.uri()}: {problem}. Nothing was {nothing}. {remedy}")


def refuse_foreign_base_format(table: HoodieTable, what: str) -> None:
    """Refuse ``what`` (a read, a write or a service) on a data table whose base files are not Parquet
    (``hoodie.table.base.file.format=ORC`` or ``HFILE``), before anything is read or written: hoodie
    reads and writes Parquet base files only, and a Parquet file written into an ORC table breaks
    Java Hudi's reads of it (they pick the reader by the table's format)."""
    fmt = table.base_file_format
    if fmt != "PARQUET":
        _refuse(table, what, f"the table's base files are {fmt} (hoodie.table.base.file.format={fmt}); hoodie "
                "reads and writes Parquet base files only", "Use Java Hudi for this table, or copy it into a Parquet "
                "table (hoodie.table.base.file.format=PARQUET) with Java Hudi", "read or written")


def refuse_virtual_keys(table: HoodieTable, what: str) -> None:
    """Refuse ``what`` (a write or a service that merges by key) on a table with virtual keys
    (``hoodie.populate.meta.fields=false``), before anything is written: Java writes such tables'
    files without Hudi's meta columns, and hoodie finds records by ``_hoodie_record_key``, so an
    upsert would miss every stored key and write a second copy of each record."""
    if not table.populate_meta_fields:
        _refuse(table, what, "the table has virtual keys (hoodie.populate.meta.fields=false): its files do not "
                "store Hudi's record keys, and hoodie finds records by the stored key, so an upsert would duplicate "
                "every record it updates", "Write it with Java Hudi, or re-create it with "
                "hoodie.populate.meta.fields=true")


def refuse_dropped_partition_columns(table: HoodieTable, what: str) -> None:
    """Refuse ``what`` on a table whose files leave out the partition columns
    (``hoodie.datasource.write.drop.partition.columns=true``), before anything is read or written:
    hoodie takes column values from the files only, so a read would return the partition columns as
    nulls (and a filter on them would drop every row), and hoodie's writes would store them."""
    if table.drop_partition_columns:
        _refuse(table, what, "the table's files leave out its partition columns (hoodie.datasource.write.drop."
                "partition.columns=true), whose values hoodie does not rebuild from the partition paths",
                "Use Java Hudi for this table, or re-create it with hoodie.datasource.write.drop.partition."
                "columns=false", "read or written")


def refuse_bootstrap_write(table: HoodieTable, what: str) -> None:
    """Refuse ``what`` (a write or a service that rewrites data) on a bootstrapped table before anything is
    written: a skeleton base file (metadata-only bootstrap) holds only Hudi's meta columns, so merging into
    it or compacting it without the source file would drop every column of its records."""
    if table.bootstrap_base_path is not None:
        _refuse(table, what, f"the table was bootstrapped from {table.bootstrap_base_path} (hoodie.bootstrap.base."
                "path); its metadata-only bootstrap files hold Hudi's meta columns only and the data stays in the "
                "source files, which hoodie does not read", "Write it with Java Hudi, or re-create it with a "
                "full-record bootstrap (hoodie.bootstrap.mode.selector=FULL_RECORD) or a bulk_insert of the source "
                "data")


def refuse_cdc_write(table: HoodieTable, what: str) -> None:
    """Refuse ``what`` on a table that records change data (``hoodie.table.cdc.enabled=true``): Java's
    writers add CDC log files (before/after images) to each write, which hoodie does not write, so a CDC
    query by Java Hudi would miss or misstate the changes hoodie made."""
    if table.cdc_enabled:
        _refuse(table, what, "the table records change data (hoodie.table.cdc.enabled=true) with every write, "
                "which hoodie's writes do not produce: Java Hudi's CDC queries would miss their changes",
                "Write it with Java Hudi, or turn CDC off for the table first")


def refuse_unwritable(table: HoodieTable, what: str) -> None:
    """Every refusal above that applies to ``what``, a write or a service that writes data (called by the
    one commit path and by compaction scheduling, before anything is written)."""
    for refuse in (refuse_bootstrap_write, refuse_foreign_base_format, refuse_virtual_keys,
                   refuse_dropped_partition_columns, refuse_cdc_write):
        refuse(table, what)
