"""CALL statements of :func:`hoodie.sql`: the procedure registry, argument parsing and binding, tables.

Procedures (:mod:`hoodie.interfaces.procedures`) register here with :func:`procedure`;
:mod:`hoodie.interfaces.sql` parses a statement with :func:`parse_call`, binds it with :func:`bind`
and runs it. Both import this module, which imports neither, so the registry has no import cycle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from hoodie.errors import HoodieError
from hoodie.interfaces.catalog import _split, quote_name, resolve_table_path


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
    r"\s*(?:(?P<str>'(?:[^']|'')*')" r'|(?P<dstr>"(?:[^"\\]|\\.|"")*")' r"|(?P<arrow>=>)|(?P<comma>,)|(?P<num>[-+]?\d+(?:\.\d+)?)"
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
        elif kind == "dstr":  # Spark SQL takes "..." as a string literal too (Hudi's docs write filter => "...")
            tokens.append(("value", re.sub(r'\\(.)', r"\1", val[1:-1].replace('""', '"'))))
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


def commit_totals(m: Any) -> tuple:
    """show_commits' totals of one commit's write stats: bytes written, files added, files updated,
    partitions written, records written, records updated, write errors."""
    stats = list(m.all_write_stats())
    return (sum(s.total_write_bytes for s in stats), sum(1 for s in stats if s.prev_commit == "null"),
            sum(1 for s in stats if s.prev_commit != "null"), len(m.partition_to_write_stats),
            sum(s.num_writes for s in stats), sum(s.num_update_writes for s in stats),
            sum(s.total_write_errors for s in stats))


__all__ = ["SqlError", "commit_totals", "Param", "Procedure", "PROCEDURES", "procedure", "parse_call", "bind",
           "TableRef", "is_path", "resolve_table", "parse_options"]
