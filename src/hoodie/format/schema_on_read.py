"""Hudi "schema on read" evolution (``hoodie.schema.on.read.enable``; Spark SQL ``ALTER TABLE ... RENAME
COLUMN / DROP COLUMN / ALTER COLUMN TYPE``): reading such tables by field id, and refusing writes to them.

What Java Hudi persists (0.14/0.15 and 1.x; ``SerDeHelper``, ``FileBasedInternalSchemaStorageManager``,
``BaseHoodieWriteClient.saveInternalSchema``, ``AlterTableCommand.commitWithSchema``):

* an *InternalSchema* is JSON ``{"max_column_id": n, "version_id": <instant>, "type": "record", "fields":
  [{"id", "name", "optional", "type", "doc"?}...]}``; a field type is a primitive name (``int``, ``long``,
  ``decimal(10, 2)``, ``fixed[16]``...) or ``{"type": "record"|"array"|"map", ...}`` with ``element_id``,
  ``key_id``, ``value_id``, ``element_optional``, ``value_optional``. The meta columns are fields 0-4.
* a commit written with schema on read carries it in ``extraMetadata.latest_schema`` (its version is the
  instant of the commit that last changed the schema);
* the history is ``.hoodie/.schema/<instant>.schemacommit`` (``<instant>_<completion>.schemacommit`` on
  timeline layout 2): ``{"schemas": [newest, ..., oldest]}``, rewritten at every such commit *before* the
  commit completes, so only files of completed commits count, and the newest of those holds the history.
* a file's columns are read through the version of its instant: the ``latest_schema`` of that commit, else
  the newest history version at or before it, else (a file older than the history) the commit's Avro
  schema with field ids given by position (``AvroInternalSchemaConverter``; meta fields 0-4 first).
  ``InternalSchemaMerger`` then maps the query schema onto the file by id: a renamed column is read under
  its old name, a column whose id the file lacks reads as null even when the file has a column of the
  same name (dropped and re-added), and a changed primitive type is converted.

hoodie reads such tables this way (:class:`SchemaOnRead`) and refuses what it cannot do exactly
(:class:`SchemaOnReadError`): type changes other than int -> long, int -> double and long -> double,
changes inside nested columns, partial-update log blocks, and log blocks older than the schema history
when their columns were renamed (Java's log reader reads those by name, its base file reader by id).
Writes and table services that write data are refused (:func:`refuse_write`): hoodie does not keep the
schema history the way Java's writers do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import pyarrow as pa

from hoodie.errors import HoodieError

LATEST_SCHEMA = "latest_schema"  # SerDeHelper.LATEST_SCHEMA, the commit extraMetadata key
SCHEMA_FOLDER = ".hoodie/.schema"  # FileBasedInternalSchemaStorageManager.SCHEMA_NAME under .hoodie
SCHEMA_COMMIT = "schemacommit"
META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
               "_hoodie_partition_path", "_hoodie_file_name")
# File type -> query type changes hoodie converts exactly as Java does (both Spark's cast and Avro's record
# rewriting give the same values: widening, or Java's round-to-nearest long -> double).
EXACT_CHANGES = frozenset({("int", "long"), ("int", "double"), ("long", "double")})
WHAT_TO_DO = "Read this table with Java Hudi (Spark with hoodie.schema.on.read.enable=true)"


class SchemaOnReadError(HoodieError):
    """A schema-on-read table (or one of its files) that hoodie cannot read or write exactly."""


# -- the InternalSchema model -------------------------------------------------------------------------

@dataclass(frozen=True)
class Field:
    """One field of a record: its id, name, optionality and type."""

    id: int
    name: str
    optional: bool
    type: "IType"


@dataclass(frozen=True)
class Record:
    """A record type: its fields in order."""

    fields: tuple[Field, ...]


@dataclass(frozen=True)
class ArrayType:
    """An array type: its element's id, type and optionality."""

    element_id: int
    element: "IType"
    element_optional: bool


@dataclass(frozen=True)
class MapType:
    """A map type: key and value ids and types."""

    key_id: int
    key: "IType"
    value_id: int
    value: "IType"
    value_optional: bool


IType = Union[str, Record, ArrayType, MapType]  # a str is a primitive type, lower case, as Java prints it


@dataclass(frozen=True)
class InternalSchema:
    """A version of the table schema with field ids (Hudi's ``InternalSchema``)."""

    version_id: Optional[int]
    record: Record

    def field_by_id(self, fid: int) -> Optional[Field]:
        """The top-level field of id ``fid``."""
        for f in self.record.fields:
            if f.id == fid:
                return f
        return None

    def field_by_name(self, name: str) -> Optional[Field]:
        """The top-level field named ``name`` (case-insensitive, as Hudi's ``RecordType.field``)."""
        low = name.lower()
        for f in self.record.fields:
            if f.name.lower() == low:
                return f
        return None


def _parse_type(node: Any, where: str) -> IType:
    if isinstance(node, str):
        return node.lower()
    if isinstance(node, dict):
        kind = node.get("type")
        try:
            if kind == "record":
                return Record(tuple(Field(int(f["id"]), str(f["name"]), bool(f["optional"]),
                                          _parse_type(f["type"], where)) for f in node["fields"]))
            if kind == "array":
                return ArrayType(int(node["element_id"]), _parse_type(node["element"], where),
                                 bool(node["element_optional"]))
            if kind == "map":
                return MapType(int(node["key_id"]), _parse_type(node["key"], where), int(node["value_id"]),
                               _parse_type(node["value"], where), bool(node["value_optional"]))
        except (KeyError, TypeError, ValueError) as e:
            raise SchemaOnReadError(f"{where}: malformed InternalSchema type {node!r}: {e}") from e
    raise SchemaOnReadError(f"{where}: unknown InternalSchema type {node!r}")


def parse_internal_schema(obj: Union[str, Mapping[str, Any]], where: str = "InternalSchema") -> InternalSchema:
    """An InternalSchema from its JSON (``SerDeHelper.toJson``), as text or parsed."""
    try:
        d = json.loads(obj) if isinstance(obj, str) else obj
    except ValueError as e:
        raise SchemaOnReadError(f"{where}: not JSON: {e}") from e
    rec = _parse_type(d, where)
    if not isinstance(rec, Record):
        raise SchemaOnReadError(f"{where}: an InternalSchema is a record, not {d!r}")
    version = d.get("version_id")
    return InternalSchema(int(version) if version is not None else None, rec)


def parse_history(text: str, where: str = "schema history") -> dict[int, InternalSchema]:
    """The versions of a ``.schemacommit`` file (``{"schemas": [...]}``) by version id."""
    try:
        d = json.loads(text)
    except ValueError as e:
        raise SchemaOnReadError(f"{where}: not JSON: {e}") from e
    if not isinstance(d, dict) or "schemas" not in d:
        raise SchemaOnReadError(f"{where}: no 'schemas' list")
    out: dict[int, InternalSchema] = {}
    for s in d["schemas"]:
        sch = parse_internal_schema(s, where)
        if sch.version_id is None:
            raise SchemaOnReadError(f"{where}: a schema without version_id")
        out[sch.version_id] = sch
    return out


def schema_to_json(schema: InternalSchema) -> dict[str, Any]:
    """The JSON object Java's ``SerDeHelper.toJson`` writes for ``schema`` (key order included)."""

    def typ(t: IType) -> Any:
        if isinstance(t, str):
            return t
        if isinstance(t, Record):
            return {"type": "record", "fields": [
                {"id": f.id, "name": f.name, "optional": f.optional, "type": typ(f.type)} for f in t.fields]}
        if isinstance(t, ArrayType):
            return {"type": "array", "element_id": t.element_id, "element": typ(t.element),
                    "element_optional": t.element_optional}
        return {"type": "map", "key_id": t.key_id, "key": typ(t.key), "value_id": t.value_id,
                "value": typ(t.value), "value_optional": t.value_optional}

    out: dict[str, Any] = {"max_column_id": max_column_id(schema)}
    if schema.version_id is not None:
        out["version_id"] = schema.version_id
    out.update(typ(schema.record))
    return out


def max_column_id(schema: InternalSchema) -> int:
    """The largest field id of ``schema`` (nested ids included), as ``InternalSchema`` computes it."""
    ids: list[int] = []

    def walk(t: IType) -> None:
        if isinstance(t, Record):
            for f in t.fields:
                ids.append(f.id)
                walk(f.type)
        elif isinstance(t, ArrayType):
            ids.append(t.element_id)
            walk(t.element)
        elif isinstance(t, MapType):
            ids.extend((t.key_id, t.value_id))
            walk(t.value)

    walk(schema.record)
    return max(ids, default=-1)


# -- Avro -> InternalSchema, ids by position (AvroInternalSchemaConverter) --------------------------------

def _avro_primitive(t: Any) -> str:
    if isinstance(t, dict):
        logical = t.get("logicalType")
        base = t.get("type")
        if logical == "decimal":
            return f"decimal({int(t['precision'])}, {int(t.get('scale', 0))})"
        if logical == "date":
            return "date"
        if logical in ("time-millis", "time-micros"):
            return "time"
        if logical in ("timestamp-millis", "timestamp-micros"):
            return "timestamp"
        if logical == "uuid":
            return "uuid"
        if base == "fixed":
            return f"fixed[{int(t['size'])}]"
        if base == "enum":
            return "string"
        return _avro_primitive(base)
    return {"bytes": "binary", "enum": "string"}.get(t, t)


def avro_to_internal(avro: Mapping[str, Any]) -> InternalSchema:
    """An Avro record schema as the InternalSchema Java derives from it when a commit has no
    ``latest_schema`` (meta fields prepended, ids assigned by position, nested ids after their record's)."""
    fields = list(avro.get("fields", []))
    names = [f["name"] for f in fields]
    if names[:len(META_FIELDS)] != list(META_FIELDS):  # HoodieAvroUtils.addMetadataFields
        fields = [{"name": m, "type": ["null", "string"]} for m in META_FIELDS
                  if m not in names] + fields
    next_id = [0]

    def strip(t: Any) -> tuple[Any, bool]:
        if isinstance(t, list):
            branches = [b for b in t if b != "null"]
            if len(branches) != 1:
                raise SchemaOnReadError(f"Avro union {t!r} is not a nullable type")
            return branches[0], len(branches) != len(t)
        return t, False

    def visit(t: Any, root: bool = False) -> IType:
        t, _ = strip(t)
        kind = t.get("type") if isinstance(t, dict) else t
        if kind == "record":
            fs = t["fields"]
            first = 0 if root else next_id[0]
            next_id[0] = first + len(fs)
            types = [visit(f["type"]) for f in fs]
            return Record(tuple(Field(first + i, f["name"], strip(f["type"])[1], types[i]) for i, f in enumerate(fs)))
        if kind == "array":
            eid = next_id[0]
            next_id[0] = eid + 1
            return ArrayType(eid, visit(t["items"]), strip(t["items"])[1])
        if kind == "map":
            kid = next_id[0]
            next_id[0] = kid + 2
            return MapType(kid, "string", kid + 1, visit(t["values"]), strip(t["values"])[1])
        if isinstance(t, dict) and isinstance(t.get("type"), (dict, list)):
            return visit(t["type"])
        return _avro_primitive(t)

    rec = visit({"type": "record", "fields": fields}, root=True)
    assert isinstance(rec, Record)
    return InternalSchema(None, rec)


# -- mapping a file's columns onto the query schema --------------------------------------------------

@dataclass(frozen=True)
class ColumnSource:
    """Where a query column's values come from in one file: ``file_name`` (None: the file does not hold
    the column, the values are nulls) and ``convert`` (the file's primitive type, when it differs)."""

    name: str
    file_name: Optional[str]
    convert: Optional[str] = None


def _shape(t: IType) -> Any:
    """A type without optionality (Java's merger ignores it), for comparing nested types."""
    if isinstance(t, Record):
        return ("record", tuple((f.id, f.name.lower(), _shape(f.type)) for f in t.fields))
    if isinstance(t, ArrayType):
        return ("array", t.element_id, _shape(t.element))
    if isinstance(t, MapType):
        return ("map", t.key_id, _shape(t.key), t.value_id, _shape(t.value))
    return t


def map_columns(table: str, query: InternalSchema, file_schema: InternalSchema, columns: Sequence[str],
                what: str) -> list[ColumnSource]:
    """Map the query ``columns`` onto a file written with ``file_schema``, by field id
    (``InternalSchemaMerger``). Raises :class:`SchemaOnReadError` for a change hoodie cannot read exactly."""
    out = []
    for name in columns:
        qf = query.field_by_name(name)
        if qf is None:
            raise SchemaOnReadError(
                f"{table}: column {name!r} of the table schema is not in the schema-on-read schema "
                f"(version {query.version_id}): the schema history is inconsistent. {WHAT_TO_DO}")
        ff = file_schema.field_by_id(qf.id)
        if ff is None:
            # Added after the file was written, or dropped and re-added under this name: never the
            # file's column of the same name (Java reads it as "<name>suffix", i.e. null).
            out.append(ColumnSource(name, None))
            continue
        convert = None
        if isinstance(qf.type, str) and isinstance(ff.type, str):
            if qf.type != ff.type:
                if (ff.type, qf.type) not in EXACT_CHANGES:
                    raise SchemaOnReadError(
                        f"{table}: column {name!r} changed type from {ff.type} to {qf.type} (schema on read) and "
                        f"{what} holds it as {ff.type}; hoodie converts only int -> long, int -> double and "
                        f"long -> double exactly as Java Hudi does. {WHAT_TO_DO}")
                convert = ff.type
        elif _shape(qf.type) != _shape(ff.type):
            raise SchemaOnReadError(
                f"{table}: nested column {name!r} changed (schema on read) after {what} was written; hoodie "
                f"maps top-level columns by field id only. {WHAT_TO_DO}")
        out.append(ColumnSource(name, ff.name, convert))
    return out


def apply_mapping(data: pa.Table, mapping: Sequence[ColumnSource], schema: pa.Schema) -> pa.Table:
    """A file's columns (``data``, under the file's names) under their query names, converted to the types
    of ``schema``; columns the file lacks are left out (the caller's conform step adds them as nulls)."""
    present = {n.lower(): n for n in data.column_names}
    cols, names = [], []
    for src in mapping:
        if src.file_name is None:
            continue
        actual = src.file_name if src.file_name in data.column_names else present.get(src.file_name.lower())
        if actual is None:
            continue
        col = data.column(actual)
        if src.convert is not None:
            # Exact widenings; long -> double rounds to nearest, as Java's (double) cast does.
            col = col.cast(schema.field(src.name).type, safe=False)
        cols.append(col)
        names.append(src.name)
    # No column held: keep the row count (a table without columns still has its rows).
    return pa.Table.from_arrays(cols, names=names) if cols else data.select([])


def base_file_instant(path: str) -> str:
    """The instant of a base file, from its name ``<fileId>_<writeToken>_<instant>.<ext>``."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit("_", 1)[-1].split(".", 1)[0]


def _as_long(instant: str) -> int:
    try:
        return int(instant)
    except ValueError:
        raise SchemaOnReadError(f"instant {instant!r} is not a number: schema versions are instant times") from None


# -- the table's schema-on-read state ---------------------------------------------------------------

def schema_files(storage: Any) -> list[str]:
    """Names of the files under ``.hoodie/.schema`` (any state)."""
    return [s.name for s in storage.list_dir(SCHEMA_FOLDER) if not s.is_dir]


def latest_schema_of(table: Any, inst: Any) -> Optional[str]:
    """The ``latest_schema`` a completed commit carries, or None."""
    try:
        meta = table.timeline.commit_metadata(inst)
    except (FileNotFoundError, ValueError):
        return None
    return meta.extra_metadata.get(LATEST_SCHEMA) or None


def _schema_bearing_write(table: Any, as_of: Optional[str]) -> Any:
    """The newest completed write (at or before ``as_of``) recording a schema: the one hoodie's table
    schema comes from (:meth:`HoodieTable.avro_schema`)."""
    tl = table.timeline.completed_writes()
    if as_of is not None:
        tl = tl.before_or_on(as_of)
    for inst in reversed(tl.instants):
        try:
            meta = table.timeline.commit_metadata(inst)
        except (FileNotFoundError, ValueError):
            continue
        if meta.schema:
            return inst
    return None


class SchemaOnRead:
    """The schema-on-read state of a table: its schema history and the query schema, mapping each file's
    columns onto the query columns by field id (see the module docstring)."""

    def __init__(self, table: Any, history: dict[int, InternalSchema], query: InternalSchema,
                 columns: Sequence[str]) -> None:
        self.table = table
        self.where = table.storage.uri()
        self.history = history
        self.query = query
        self.columns = list(columns)
        self._completed = {i.timestamp: i for i in table.timeline.completed().commits().instants}
        self._cache: dict[tuple[str, bool], list[ColumnSource]] = {}
        self.first_version = min(history) if history else None

    @classmethod
    def load(cls, table: Any, columns: Sequence[str], as_of: Optional[str] = None) -> Optional["SchemaOnRead"]:
        """The state for reading ``columns`` of ``table`` (as of ``as_of``), or None when the read needs no
        field-id mapping (no schema history at or before the read, and no ``latest_schema``)."""
        history = load_history(table)
        q_inst = _schema_bearing_write(table, as_of)
        if q_inst is None:
            return None
        raw = latest_schema_of(table, q_inst)
        if raw is None:
            limit = _as_long(q_inst.timestamp)
            if any(v <= limit for v in history):
                raise SchemaOnReadError(
                    f"{table.storage.uri()}: commit {q_inst.timestamp} carries no {LATEST_SCHEMA} although the table's "
                    f"schema evolved on read before it (.hoodie/.schema): it was written without "
                    f"hoodie.schema.on.read.enable, and which columns its files hold is ambiguous. {WHAT_TO_DO}")
            return None
        query = parse_internal_schema(raw, f"{table.storage.uri()} commit {q_inst.timestamp} {LATEST_SCHEMA}")
        if query.version_id is not None:
            history.setdefault(query.version_id, query)
        out = cls(table, history, query, columns)
        out.validate()
        return out

    def validate(self) -> None:
        """Map the query columns onto every version of the history now, so that a change hoodie cannot read
        is refused before any row is returned."""
        for v, sch in sorted(self.history.items()):
            map_columns(self.where, self.query, sch, self.columns, f"a file of schema version {v}")

    def file_schema(self, instant: str, log: bool) -> Optional[InternalSchema]:
        """The InternalSchema a file (``log``: a log block) of ``instant`` was written with; None for a log
        block older than the history (see :meth:`columns`)."""
        inst = self._completed.get(instant)
        if inst is not None:
            raw = latest_schema_of(self.table, inst)
            if raw is not None:
                return parse_internal_schema(raw, f"{self.where} commit {instant} {LATEST_SCHEMA}")
        at = _as_long(instant)
        older = [v for v in self.history if v <= at]
        if older:
            return self.history[max(older)]
        if log:
            return None
        # A base file older than the history: its commit's Avro schema, ids by position.
        meta = None
        if inst is not None:
            try:
                meta = self.table.timeline.commit_metadata(inst)
            except (FileNotFoundError, ValueError):
                meta = None
        if meta is None or not meta.schema:
            raise SchemaOnReadError(
                f"{self.where}: a base file of instant {instant} predates the schema-on-read history and its commit's "
                f"schema is not on the active timeline (archived or missing), so its field ids are unknown. "
                f"{WHAT_TO_DO}")
        return avro_to_internal(json.loads(meta.schema))

    def columns_of(self, instant: str, log: bool, written_names: Sequence[str] = ()) -> list[ColumnSource]:
        """Where each query column comes from in a base file (``log=False``) or log block of ``instant``.

        A log block older than the history is read by name by Java's log reader (its base file reader reads
        by position-derived ids): it is read by name when that agrees with the ids of its commit's schema,
        else refused."""
        key = (instant, log)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        sch = self.file_schema(instant, log)
        what = f"the {'log block' if log else 'base file'} of instant {instant}"
        if sch is None:
            by_id = map_columns(self.where, self.query, self.file_schema(instant, False), self.columns, what)
            written = {n.lower() for n in written_names}
            by_name = [ColumnSource(c, c if c.lower() in written else None) for c in self.columns]

            def held(s: ColumnSource) -> Optional[str]:
                return s.file_name.lower() if s.file_name and s.file_name.lower() in written else None

            if any(s.convert for s in by_id) or [held(s) for s in by_id] != [held(s) for s in by_name]:
                raise SchemaOnReadError(
                    f"{self.where}: {what} predates the schema-on-read history and its columns were renamed, "
                    f"dropped or retyped since; Java Hudi's log reader (by name) and its base file reader (by "
                    f"field id) disagree on such blocks. Compact the table with Java Hudi first. {WHAT_TO_DO}")
            out = by_name
        else:
            out = map_columns(self.where, self.query, sch, self.columns, what)
        self._cache[key] = out
        return out


def load_history(table: Any) -> dict[int, InternalSchema]:
    """The schema history: the newest ``.schemacommit`` file of a completed commit (files of failed or
    pending commits are ignored, as ``FileBasedInternalSchemaStorageManager`` does)."""
    completed = {i.timestamp for i in table.timeline.completed().commits().instants}
    valid = []
    for name in schema_files(table.storage):
        if not name.endswith(SCHEMA_COMMIT):
            continue  # .requested / .inflight
        instant = name.split(".", 1)[0].split("_", 1)[0]
        if instant in completed:
            valid.append((instant, name))
    if not valid:
        return {}
    _, name = max(valid)
    path = f"{SCHEMA_FOLDER}/{name}"
    return parse_history(table.storage.read_bytes(path).decode("utf-8"), table.storage.uri(path))


def uses_schema_on_read(table: Any) -> Optional[str]:
    """Why ``table`` is a schema-on-read table (a sentence), or None: files under ``.hoodie/.schema``, or a
    ``latest_schema`` in the commit the table schema comes from."""
    files = schema_files(table.storage)
    if files:
        return f"it has schema-on-read history files ({SCHEMA_FOLDER}/{files[-1]}...)"
    inst = _schema_bearing_write(table, None)
    if inst is not None and latest_schema_of(table, inst) is not None:
        return f"commit {inst.timestamp} carries a {LATEST_SCHEMA} (schema on read)"
    return None


def refuse_write(table: Any, what: str) -> None:
    """Refuse ``what`` (a write or a table service that writes data) on a schema-on-read table, before
    anything is written: Java writers keep the schema history (a ``latest_schema`` in every commit, a new
    ``.schemacommit`` file at every commit), which hoodie does not write."""
    why = uses_schema_on_read(table)
    if why is None:
        return
    raise SchemaOnReadError(
        f"{what} on {table.storage.uri()}: the table evolves its schema on read (hoodie.schema.on.read.enable; "
        f"{why}). Java Hudi writers record the schema history at every commit and hoodie does not, so it refuses "
        f"to write this table; nothing was written. Write it with Java Hudi (Spark with "
        f"hoodie.schema.on.read.enable=true); hoodie reads it")


__all__ = ["SchemaOnRead", "SchemaOnReadError", "InternalSchema", "Field", "Record", "ArrayType", "MapType",
           "ColumnSource", "parse_internal_schema", "parse_history", "schema_to_json", "avro_to_internal",
           "map_columns", "apply_mapping", "load_history", "uses_schema_on_read", "refuse_write",
           "base_file_instant", "LATEST_SCHEMA", "SCHEMA_FOLDER", "EXACT_CHANGES"]
