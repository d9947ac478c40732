"""``hoodie.sql(spark, text)``: Hudi-style ``CALL`` procedures, everything else to ``spark.sql``.

    hoodie.sql(spark, "CALL run_ttl(table => 'analytics.events', retain_days => 30)")
    hoodie.sql(spark, "CALL show_compaction(table => 'events')")  # in the current database
    hoodie.sql(spark, "CALL managePartitionTTL(basePath => '/data/t', strategy => 'KEEP_BY_TIME', daysRetain => '10', predicate => 'productid = 1')")
    hoodie.sql(spark, "CALL show_commits('/data/t', 5)")        # positional: table, limit
    hoodie.sql(spark, "CREATE TABLE analytics.clicks USING hoodie LOCATION '/data/clicks'")

Arguments are named (``name => value``) or positional (in the procedure's parameter order, Hudi's
for Hudi's procedures, before any named one). Values are SQL literals: quoted strings (``''``
escapes a quote), integers, decimals, ``true``/``false`` and ``null``. Each argument is
type-checked and a wrong one is named in the error. ``table`` is a catalog name (``name`` in the
current database, or ``db.name``) or a base path (any value with a ``/``); ``basePath``/``path``
takes a path. Procedures return DataFrames. ``CREATE TABLE name USING hoodie LOCATION 'path'``
registers an existing hoodie table in the catalog (see :func:`create_table`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence
from hoodie.errors import HoodieError


class SqlError(HoodieError, ValueError):
    """A CALL statement is malformed or an argument is wrong; the message names it."""


@dataclass(frozen=True)
class Param:
    """One procedure parameter."""

    name: str
    type: type
    required: bool = False
    default: Any = None
    aliases: tuple[str, ...] = ()


@dataclass
class Procedure:
    """A callable procedure: parameters, output schema (DDL) and the function that runs it."""

    name: str
    params: list[Param]
    output: str
    fn: Callable[[Any, dict[str, Any]], list[tuple]]
    doc: str = ""
    aliases: tuple[str, ...] = field(default=())
    # Statements for docs/sql.md; a test runs every one against a table registered as
    # analytics.events at /data/events, with analytics the current database.
    examples: tuple[str, ...] = field(default=())


PROCEDURES: dict[str, Procedure] = {}


def procedure(name: str, params: list[Param], output: str, doc: str, aliases: tuple[str, ...] = (),
              examples: tuple[str, ...] = ()):
    """Register a procedure (decorator)."""
    def wrap(fn: Callable[[Any, dict[str, Any]], list[tuple]]):
        p = Procedure(name, params, output, fn, doc, aliases, examples)
        PROCEDURES[name.lower()] = p
        for a in aliases:
            PROCEDURES[a.lower()] = p
        return fn
    return wrap


# -- parsing ----------------------------------------------------------------------------------

_CALL = re.compile(r"^\s*call\s+([A-Za-z_][\w.]*)\s*\((.*)\)\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<arrow>=>)|(?P<comma>,)|(?P<num>[-+]?\d+(?:\.\d+)?)"
    r"|(?P<word>[A-Za-z_][\w.]*))",
    re.DOTALL,
)


def parse_call(text: str) -> Optional[tuple[str, list[Any], dict[str, Any]]]:
    """(procedure name, positional args, named args) for a CALL statement; None for other SQL."""
    m = _CALL.match(text)
    if not m:
        if re.match(r"^\s*call\b", text, re.IGNORECASE):
            raise SqlError(f"malformed CALL statement: {text.strip()!r}; expected CALL name(arg => value, ...)")
        return None
    name, body = m.group(1), m.group(2)
    tokens: list[tuple[str, Any]] = []
    pos = 0
    body = body.strip()
    while pos < len(body):
        t = _TOKEN.match(body, pos)
        if not t or t.end() == pos:
            raise SqlError(f"cannot parse CALL arguments near {body[pos:pos + 20]!r}")
        pos = t.end()
        kind = t.lastgroup
        val = t.group(kind)
        if kind == "str":
            tokens.append(("value", val[1:-1].replace("''", "'")))
        elif kind == "num":
            tokens.append(("value", float(val) if "." in val else int(val)))
        elif kind == "word":
            low = val.lower()
            tokens.append(("value", {"true": True, "false": False, "null": None}[low])
                          if low in ("true", "false", "null") else ("word", val))
        else:
            tokens.append((kind, val))
        while pos < len(body) and body[pos].isspace():
            pos += 1
    positional: list[Any] = []
    named: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and tokens[i][0] == "word" and tokens[i + 1][0] == "arrow":
            if i + 2 >= len(tokens) or tokens[i + 2][0] != "value":
                raise SqlError(f"argument {tokens[i][1]!r} needs a literal value after =>")
            key = tokens[i][1]
            if key.lower() in {k.lower() for k in named}:
                raise SqlError(f"argument {key!r} is given twice")
            named[key] = tokens[i + 2][1]
            i += 3
        elif tokens[i][0] == "value":
            if named:
                raise SqlError("positional arguments must come before named ones")
            positional.append(tokens[i][1])
            i += 1
        elif tokens[i][0] == "word":
            raise SqlError(f"unquoted value {tokens[i][1]!r}: quote strings, e.g. '{tokens[i][1]}'")
        else:
            raise SqlError(f"unexpected {tokens[i][1]!r} in CALL arguments")
        if i < len(tokens):
            if tokens[i][0] != "comma":
                raise SqlError(f"expected ',' between arguments, found {tokens[i][1]!r}")
            i += 1
            if i == len(tokens):
                raise SqlError("trailing ',' in CALL arguments")
    return name, positional, named


def bind(proc: Procedure, positional: Sequence[Any], named: dict[str, Any]) -> dict[str, Any]:
    """Map arguments to parameters with type checks; errors name the argument."""
    if len(positional) > len(proc.params):
        raise SqlError(f"{proc.name} takes at most {len(proc.params)} arguments, got {len(positional)}")
    out: dict[str, Any] = {}
    for p, v in zip(proc.params, positional):
        out[p.name] = v
    lookup = {}
    for p in proc.params:
        lookup[p.name.lower()] = p
        for a in p.aliases:
            lookup[a.lower()] = p
    for k, v in named.items():
        p = lookup.get(k.lower())
        if p is None:
            raise SqlError(f"{proc.name} has no argument {k!r}; its arguments are "
                           f"{', '.join(q.name for q in proc.params)}")
        if p.name in out:
            raise SqlError(f"argument {p.name!r} of {proc.name} is given twice")
        out[p.name] = v
    for p in proc.params:
        v = out.get(p.name)
        if v is None:
            if p.required:
                raise SqlError(f"{proc.name} needs argument {p.name!r}")
            out[p.name] = p.default
        else:
            out[p.name] = _coerce(proc, p, v)
    return out


def _coerce(proc: Procedure, p: Param, v: Any) -> Any:
    try:
        if p.type is int:
            if isinstance(v, bool) or (isinstance(v, float) and not v.is_integer()):
                raise ValueError
            return int(v)
        if p.type is float:
            if isinstance(v, bool):
                raise ValueError
            return float(v)
        if p.type is bool:
            if isinstance(v, bool):
                return v
            if isinstance(v, str) and v.lower() in ("true", "false"):
                return v.lower() == "true"
            raise ValueError
        if p.type is str:
            if isinstance(v, bool):
                raise ValueError
            return str(v) if not isinstance(v, float) else repr(v)
    except (TypeError, ValueError):
        raise SqlError(f"argument {p.name!r} of {proc.name} must be {p.type.__name__}, got {v!r}") from None
    return v


# -- tables --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TableRef:
    """A procedure's table: its base path, and its qualified catalog name (`` `db`.`name` ``) when
    the table was named rather than given as a path."""

    base_path: str
    name: Optional[str] = None


def is_path(value: str) -> bool:
    """Whether a ``table`` argument is a base path: table names hold no ``/`` unless quoted."""
    return not value.strip().startswith("`") and "/" in value


def _same_path(a: str, b: str) -> bool:
    def norm(p: str) -> str:
        p = p.strip()
        return (p[len("file://"):] if p.startswith("file://") else p).rstrip("/") or "/"
    return norm(a) == norm(b)


def resolve_table(spark: Any, args: dict[str, Any], proc: Procedure) -> TableRef:
    """The table a procedure works on, for every procedure alike: ``table`` is a name (``name`` in
    the current database, or ``db.name``, looked up in the catalog) or a base path; ``basePath``
    (``path``) is a base path. Given both, they must name the same table."""
    from hoodie.interfaces.catalog import _split, quote_name, resolve_table_path

    table, base = args.get("table"), args.get("basePath") or args.get("path")
    if not table and not base:
        raise SqlError(f"{proc.name} needs table => 'db.name' (or a base path) or basePath => '/path/to/table'")
    ref: Optional[TableRef] = None
    if table:
        table = str(table)
        if is_path(table):
            ref = TableRef(table)
        else:
            db, tbl = _split(table, spark)
            ref = TableRef(resolve_table_path(spark, table), quote_name(db, tbl))
    if base:
        if ref is not None and not _same_path(ref.base_path, str(base)):
            raise SqlError(f"{proc.name}: table => {table!r} is the table at {ref.base_path}, but basePath => "
                           f"{str(base)!r} names another; give one of them")
        return ref or TableRef(str(base))
    assert ref is not None
    return ref


def parse_options(text: Optional[str]) -> dict[str, str]:
    """Hudi's ``options => 'k1=v1,k2=v2'`` string as a dict."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise SqlError(f"options entry {part.strip()!r} is not key=value")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


# -- CREATE TABLE ... USING hoodie ---------------------------------------------------------------

_IDENT = r"(?:`(?:[^`]|``)*`|\w+)"
_CREATE = re.compile(
    r"^\s*create\s+(?P<replace>or\s+replace\s+)?(?:external\s+)?table\s+(?P<ine>if\s+not\s+exists\s+)?"
    rf"(?P<name>{_IDENT}(?:\s*\.\s*{_IDENT})?)(?P<rest>.*?)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_LITERAL = re.compile(r"'(?:[^'\\]|\\.|'')*'")
_USING = re.compile(r"\busing\s+(?P<fmt>hoodie|hudi)\b", re.IGNORECASE)
_LOCATION = re.compile(r"\blocation\s+(?P<lit>'(?:[^'\\]|\\.|'')*')", re.IGNORECASE)
_CLAUSES = [(re.compile(r"^\s*\("), "a column list"), (re.compile(r"\bas\s+select\b|\bas\s*\(", re.I), "AS SELECT"),
            (re.compile(r"\boptions\b", re.I), "OPTIONS"), (re.compile(r"\btblproperties\b", re.I), "TBLPROPERTIES"),
            (re.compile(r"\bpartitioned\s+by\b", re.I), "PARTITIONED BY"),
            (re.compile(r"\bclustered\s+by\b", re.I), "CLUSTERED BY"), (re.compile(r"\bcomment\b", re.I), "COMMENT")]


@dataclass(frozen=True)
class CreateTable:
    """A parsed ``CREATE TABLE name USING hoodie|hudi LOCATION 'path'``."""

    name: str
    location: Optional[str]
    if_not_exists: bool
    replace: bool
    using: str
    refused: Optional[str] = None  # the first clause hoodie cannot honour


def parse_create_table(text: str) -> Optional[CreateTable]:
    """The statement as a :class:`CreateTable` when it creates a table ``USING hoodie`` (or
    ``hudi``); None for any other statement."""
    m = _CREATE.match(text)
    if not m:
        return None
    rest = m.group("rest")
    masked = _LITERAL.sub(lambda x: "'" + " " * (len(x.group(0)) - 2) + "'", rest)  # keywords outside literals
    using = _USING.search(masked)
    if not using:
        return None
    loc = _LOCATION.search(masked)
    location = None
    left = masked[: using.start()] + " " * (using.end() - using.start()) + masked[using.end():]
    if loc:
        lit = rest[loc.start("lit"): loc.end("lit")]
        location = re.sub(r"\\(.)", r"\1", lit[1:-1].replace("''", "'"))
        left = left[: loc.start()] + " " * (loc.end() - loc.start()) + left[loc.end():]
    refused = next((what for pat, what in _CLAUSES if pat.search(left)), None)
    if refused is None and left.strip():
        refused = repr(" ".join(left.split()))
    return CreateTable(m.group("name"), location, bool(m.group("ine")), bool(m.group("replace")),
                       using.group("fmt"), refused)


def create_table(spark: Any, stmt: CreateTable):
    """Register the existing hoodie table at ``stmt.location`` under ``stmt.name`` (snapshot) and
    ``name_ro`` (read-optimized), as :func:`hoodie.catalog.register_table` does, since Spark 4.3
    keeps no LOCATION for a Python data source table. Returns the registered view names.

    Refused before anything is registered: clauses hoodie cannot honour (a column list, OPTIONS,
    TBLPROPERTIES, PARTITIONED BY, AS SELECT: the schema, keys and partitioning are the table's own),
    a missing LOCATION, a location without a hoodie table, and a name already in use (unless
    ``IF NOT EXISTS``, which then does nothing, or ``OR REPLACE`` of a hoodie registration).
    """
    from hoodie.format.table import HoodieTable
    from hoodie.interfaces.catalog import (BASE_PATH_PROP, RO_SUFFIX, _split, quote_name, register_table,
                                           table_properties)

    how = (f"hoodie.sql registers an existing hoodie table: CREATE TABLE [IF NOT EXISTS] name USING {stmt.using} "
           "LOCATION '/path/to/table' (its schema, keys, partitioning and properties are the table's own); "
           "create a new table by writing it with hoodie.spark.write(df, path, options), then register it")
    if stmt.refused:
        raise SqlError(f"CREATE TABLE {stmt.name} USING {stmt.using}: {stmt.refused} is not accepted. {how}")
    if not stmt.location:
        raise SqlError(f"CREATE TABLE {stmt.name} USING {stmt.using} needs LOCATION '/path/to/table'. {how}")
    db, tbl = _split(stmt.name, spark)
    existing = []
    if spark.catalog.databaseExists(db):
        for view in (tbl, tbl + RO_SUFFIX):
            if spark.catalog.tableExists(view, db):
                hoodie_view = BASE_PATH_PROP in table_properties(spark, quote_name(db, view))
                if not hoodie_view:
                    raise SqlError(f"{db}.{view} already exists and is not a hoodie registration; drop it first "
                                   f"(DROP TABLE or DROP VIEW {db}.{view}) or choose another name")
                existing.append(f"{db}.{view}")
    if existing and stmt.if_not_exists:
        return existing
    if existing and not stmt.replace:
        raise SqlError(f"{', '.join(existing)} already exists; use CREATE TABLE IF NOT EXISTS to keep it or "
                       "CREATE OR REPLACE TABLE to point it at this LOCATION")
    try:
        HoodieTable(stmt.location)
    except Exception as e:  # TableError, OSError: nothing usable there
        raise SqlError(f"no hoodie table at {stmt.location!r} ({e}). {how}") from None
    return register_table(spark, quote_name(db, tbl), stmt.location)


def sql(spark: Any, text: str):
    """Run ``CALL procedure(...)`` (returns a DataFrame), register a table with ``CREATE TABLE name
    USING hoodie LOCATION 'path'`` (returns the registered views), or pass any other statement to
    ``spark.sql``."""
    create = parse_create_table(text)
    if create is not None:
        return spark.createDataFrame([(v,) for v in create_table(spark, create)], "view string")
    parsed = parse_call(text)
    if parsed is None:
        from hoodie.interfaces.catalog import rewrite_names

        return spark.sql(rewrite_names(spark, text))
    name, positional, named = parsed
    _load_procedures()
    proc = PROCEDURES.get(name.lower())
    if proc is None:
        raise SqlError(f"unknown procedure {name!r}; available: {', '.join(sorted({p.name for p in PROCEDURES.values()}))}")
    args = bind(proc, positional, named)
    rows = proc.fn(spark, args)
    return spark.createDataFrame(rows, proc.output)


def _load_procedures() -> None:
    import hoodie.interfaces.procedures  # noqa: F401  (registers the procedures)
