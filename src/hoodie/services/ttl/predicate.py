"""A small SQL-like predicate language over partition columns, evaluated without Spark.

Grammar (keywords are case-insensitive, column names resolve case-insensitively)::

    expr      := or
    or        := and ( OR and )*
    and       := not ( AND not )*
    not       := NOT not | '(' expr ')' | test
    test      := operand ( cmp operand
                         | [NOT] IN '(' literal ( ',' literal )* ')'
                         | [NOT] LIKE string
                         | [NOT] BETWEEN operand AND operand
                         | IS [NOT] NULL )
    cmp       := = | == | != | <> | < | <= | > | >=
    operand   := column | literal
    column    := identifier | `back-quoted identifier`
    literal   := 'string' | "string" | number | TRUE | FALSE | NULL

Partition values are strings (``hoodie.format.keys.paths.partition_values``); the default partition
(``__HIVE_DEFAULT_PARTITION__``) is NULL. A comparison with a number literal compares numerically
when the value is a number, and is unknown otherwise; string literals compare as strings
(``day < '2024-01-01'`` works on ISO dates). Logic is SQL's three-valued logic: a partition is
selected only when the predicate is TRUE (unknown counts as not selected).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

from hoodie.services.ttl.keys import PREDICATE, TTLConfigError

Tri = Optional[bool]  # True, False, or None (unknown)

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<str>'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![A-Za-z_])"
    r"|(?P<op><=|>=|<>|!=|==|=|<|>)"
    r"|(?P<punct>[(),])"
    r"|(?P<bq>`[^`]+`)"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_.$]*)"
    r")"
)
_KEYWORDS = {"AND", "OR", "NOT", "IN", "LIKE", "IS", "NULL", "TRUE", "FALSE", "BETWEEN"}


class PredicateError(TTLConfigError):
    """The TTL predicate cannot be parsed or refers to an unknown column."""


@dataclass(frozen=True)
class _Tok:
    kind: str  # str, num, op, punct, ident, kw, end
    value: Any
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    n = len(text)
    while pos < n:
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise PredicateError(f"{PREDICATE}: unexpected character {text[pos:].strip()[:1]!r} at "
                                 f"position {pos + 1} of {text!r}")
        kind = m.lastgroup or ""
        raw = m.group(kind)
        start = m.start(kind)
        if kind == "str":
            q = raw[0]
            body = raw[1:-1]
            if q == "'":
                body = body.replace("''", "'")
            body = re.sub(r"\\(.)", r"\1", body)
            out.append(_Tok("str", body, start))
        elif kind == "num":
            out.append(_Tok("num", float(raw) if re.search(r"[.eE]", raw) else int(raw), start))
        elif kind == "bq":
            out.append(_Tok("ident", raw[1:-1], start))
        elif kind == "ident" and raw.upper() in _KEYWORDS:
            out.append(_Tok("kw", raw.upper(), start))
        else:
            out.append(_Tok(kind, raw, start))
        pos = m.end()
    out.append(_Tok("end", None, n))
    return out


# -- AST ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    """A reference to a partition column."""

    name: str


@dataclass(frozen=True)
class Literal:
    """A constant: str, int, float, bool or None."""

    value: Any


Operand = Union[Column, Literal]


@dataclass(frozen=True)
class Compare:
    """``left <op> right``."""

    left: Operand
    op: str
    right: Operand


@dataclass(frozen=True)
class InList:
    """``operand [NOT] IN (values)``."""

    operand: Operand
    values: tuple[Literal, ...]
    negated: bool


@dataclass(frozen=True)
class Like:
    """``operand [NOT] LIKE pattern``."""

    operand: Operand
    pattern: str
    negated: bool


@dataclass(frozen=True)
class Between:
    """``operand [NOT] BETWEEN low AND high``."""

    operand: Operand
    low: Operand
    high: Operand
    negated: bool


@dataclass(frozen=True)
class IsNull:
    """``operand IS [NOT] NULL``."""

    operand: Operand
    negated: bool


@dataclass(frozen=True)
class Not:
    """``NOT expr``."""

    expr: Any


@dataclass(frozen=True)
class BoolOp:
    """``AND`` / ``OR`` over two or more expressions."""

    op: str
    exprs: tuple[Any, ...]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def fail(self, what: str) -> PredicateError:
        t = self.peek()
        found = "the end" if t.kind == "end" else repr(str(t.value))
        return PredicateError(f"{PREDICATE}: expected {what} at position {t.pos + 1} of {self.text!r}, "
                              f"found {found}")

    def kw(self, word: str) -> bool:
        t = self.peek()
        if t.kind == "kw" and t.value == word:
            self.i += 1
            return True
        return False

    def expect_punct(self, p: str) -> None:
        t = self.peek()
        if t.kind != "punct" or t.value != p:
            raise self.fail(f"'{p}'")
        self.i += 1

    def parse(self) -> Any:
        if self.peek().kind == "end":
            raise PredicateError(f"{PREDICATE} is empty; give a condition such as productid = 1")
        e = self.or_()
        if self.peek().kind != "end":
            raise self.fail("AND, OR or the end of the predicate")
        return e

    def or_(self) -> Any:
        parts = [self.and_()]
        while self.kw("OR"):
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else BoolOp("OR", tuple(parts))

    def and_(self) -> Any:
        parts = [self.not_()]
        while self.kw("AND"):
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else BoolOp("AND", tuple(parts))

    def not_(self) -> Any:
        if self.kw("NOT"):
            return Not(self.not_())
        t = self.peek()
        if t.kind == "punct" and t.value == "(":
            self.i += 1
            e = self.or_()
            self.expect_punct(")")
            return e
        return self.test()

    def operand(self) -> Operand:
        t = self.next()
        if t.kind == "ident":
            return Column(t.value)
        if t.kind in ("str", "num"):
            return Literal(t.value)
        if t.kind == "kw" and t.value in ("TRUE", "FALSE"):
            return Literal(t.value == "TRUE")
        if t.kind == "kw" and t.value == "NULL":
            return Literal(None)
        self.i -= 1
        raise self.fail("a column name or a value")

    def literal(self) -> Literal:
        op = self.operand()
        if not isinstance(op, Literal):
            self.i -= 1
            raise self.fail("a value")
        return op

    def test(self) -> Any:
        left = self.operand()
        t = self.peek()
        if t.kind == "op":
            self.i += 1
            op = {"==": "=", "<>": "!="}.get(t.value, t.value)
            return Compare(left, op, self.operand())
        negated = self.kw("NOT")
        if self.kw("IN"):
            self.expect_punct("(")
            vals = [self.literal()]
            while self.peek().kind == "punct" and self.peek().value == ",":
                self.i += 1
                vals.append(self.literal())
            self.expect_punct(")")
            return InList(left, tuple(vals), negated)
        if self.kw("LIKE"):
            pat = self.next()
            if pat.kind != "str":
                self.i -= 1
                raise self.fail("a quoted LIKE pattern")
            return Like(left, pat.value, negated)
        if self.kw("BETWEEN"):
            low = self.operand()
            if not self.kw("AND"):
                raise self.fail("AND of BETWEEN")
            return Between(left, low, self.operand(), negated)
        if not negated and self.kw("IS"):
            neg = self.kw("NOT")
            if not self.kw("NULL"):
                raise self.fail("NULL")
            return IsNull(left, neg)
        raise self.fail("a comparison (=, !=, <, <=, >, >=), IN, LIKE, BETWEEN or IS NULL")


# -- evaluation ---------------------------------------------------------------------------------

def _num(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return None


def _cmp(a: Any, op: str, b: Any) -> Tri:
    if a is None or b is None:
        return None
    if isinstance(a, bool) or isinstance(b, bool):
        x = str(a).lower()
        y = str(b).lower()
    elif isinstance(a, (int, float)) or isinstance(b, (int, float)):
        x, y = _num(a), _num(b)  # type: ignore[assignment]
        if x is None or y is None:
            return None  # as Spark: a non-numeric string cast to a number is NULL
    else:
        x, y = str(a), str(b)
    return {"=": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def _like_regex(pattern: str) -> re.Pattern:
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out += re.escape(pattern[i + 1])
            i += 2
            continue
        out += ".*" if c == "%" else "." if c == "_" else re.escape(c)
        i += 1
    return re.compile(out, re.DOTALL)


def _not(v: Tri) -> Tri:
    return None if v is None else not v


class Predicate:
    """A parsed predicate. :meth:`bind` checks its columns against a table's partition fields."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ast = _Parser(text).parse()

    def columns(self) -> list[str]:
        """Column names the predicate refers to, in order of appearance."""
        out: list[str] = []

        def walk(n: Any) -> None:
            if isinstance(n, Column):
                if n.name not in out:
                    out.append(n.name)
            elif isinstance(n, (Compare,)):
                walk(n.left)
                walk(n.right)
            elif isinstance(n, (InList, Like, IsNull)):
                walk(n.operand)
            elif isinstance(n, Between):
                walk(n.operand)
                walk(n.low)
                walk(n.high)
            elif isinstance(n, Not):
                walk(n.expr)
            elif isinstance(n, BoolOp):
                for e in n.exprs:
                    walk(e)

        walk(self.ast)
        return out

    def bind(self, fields: Sequence[str]) -> "BoundPredicate":
        """Resolve columns (case-insensitively) to partition fields; unknown columns are an error."""
        lower = {f.lower(): f for f in fields}
        mapping: dict[str, str] = {}
        for c in self.columns():
            f = lower.get(c.lower())
            if f is None:
                raise PredicateError(
                    f"{PREDICATE} refers to column {c!r}, which is not a partition column of this table "
                    f"(partition columns: {', '.join(fields) or 'none'})")
            mapping[c] = f
        return BoundPredicate(self, mapping)


class BoundPredicate:
    """A predicate whose columns are partition fields; evaluates partition values."""

    def __init__(self, pred: Predicate, mapping: Mapping[str, str]) -> None:
        self.pred = pred
        self.mapping = dict(mapping)
        self._like: dict[str, re.Pattern] = {}

    def __call__(self, values: Mapping[str, Optional[str]]) -> bool:
        """Whether the partition with these column values is selected (TRUE, not unknown)."""
        return self._eval(self.pred.ast, values) is True

    def _val(self, op: Operand, values: Mapping[str, Optional[str]]) -> Any:
        if isinstance(op, Column):
            return values.get(self.mapping[op.name])
        return op.value

    def _eval(self, n: Any, values: Mapping[str, Optional[str]]) -> Tri:
        if isinstance(n, Compare):
            return _cmp(self._val(n.left, values), n.op, self._val(n.right, values))
        if isinstance(n, InList):
            v = self._val(n.operand, values)
            if v is None:
                return None
            results = [_cmp(v, "=", lit.value) for lit in n.values]
            r: Tri = True if True in results else (None if None in results else False)
            return _not(r) if n.negated else r
        if isinstance(n, Like):
            v = self._val(n.operand, values)
            if v is None:
                return None
            rx = self._like.setdefault(n.pattern, _like_regex(n.pattern))
            r = rx.fullmatch(str(v)) is not None
            return not r if n.negated else r
        if isinstance(n, Between):
            v = self._val(n.operand, values)
            lo = _cmp(v, ">=", self._val(n.low, values))
            hi = _cmp(v, "<=", self._val(n.high, values))
            r = _and([lo, hi])
            return _not(r) if n.negated else r
        if isinstance(n, IsNull):
            r = self._val(n.operand, values) is None
            return not r if n.negated else r
        if isinstance(n, Not):
            return _not(self._eval(n.expr, values))
        if isinstance(n, BoolOp):
            vals = [self._eval(e, values) for e in n.exprs]
            return _and(vals) if n.op == "AND" else _or(vals)
        raise PredicateError(f"{PREDICATE}: cannot evaluate {n!r}")


def _and(vals: Sequence[Tri]) -> Tri:
    if any(v is False for v in vals):
        return False
    if any(v is None for v in vals):
        return None
    return True


def _or(vals: Sequence[Tri]) -> Tri:
    if any(v is True for v in vals):
        return True
    if any(v is None for v in vals):
        return None
    return False


def parse_predicate(text: str) -> Predicate:
    """Parse a predicate (raises :class:`PredicateError` with the position of a syntax error)."""
    return Predicate(text)


__all__ = ["Predicate", "BoundPredicate", "PredicateError", "parse_predicate"]
