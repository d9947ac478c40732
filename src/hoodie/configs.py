"""Config definitions: every ``hoodie.*`` key hoodie understands, with its type, default, Hudi
aliases and meaning, and the one set of rules by which every value is parsed.

One :class:`ConfigProperty` per key (made by :func:`define`). A property *is* its key (it subclasses
``str``, so ``options[PROP]`` and f-strings keep working) and also knows how to read its value from
an option map: ``PROP.get(options)`` resolves aliases, applies the type's rule and the default, and
raises :class:`ConfigValueError` naming the key, the value and what is accepted. ``read(options,
MyError)`` gives a reader that raises a service's own error class instead. The registry drives the
unknown-key warnings (with the closest known key as a suggestion) and the generated configuration
reference (``docs/configuration.md``: key, aliases, type, default, meaning).

The rules, one per type (the same for every key of every service):

* Every value is read as text (``str(value)``) and stripped of surrounding whitespace. A blank value
  (empty or only whitespace) means *unset*: the default applies (``--set KEY=`` clears a key).
* **boolean**: ``true`` or ``false`` in any case. Anything else (``1``, ``0``, ``yes``, ``no``,
  ``on``) is refused. Hudi's Java reads booleans with ``Boolean.parseBoolean``, which turns every
  value but ``true`` into false, so ``yes`` silently means false there; hudi-rs accepts exactly
  ``true``/``false``. hoodie refuses what Hudi would misread.
* **int** / **long**: an optional sign and ASCII decimal digits, within Java's int (32-bit) or long
  (64-bit) range, as Hudi reads the key, and within the key's own bounds. No fractions, exponents,
  underscores or unit suffixes (``120MB``).
* **number**: a finite decimal number (``inf`` and ``nan`` are refused) within the key's bounds.
* **enum**: one of the allowed values, compared case-insensitively (as Hudi's enum configs are);
  the value is returned in its canonical spelling. Some enums accept documented synonyms.
* **duration**: an ISO-8601 duration (``P7D``, ``PT36H``, ``P1DT12H``, ``P2W``, case-insensitive)
  or a plain number of days (``30``, ``1.5``); exact, in milliseconds. Years and months have no
  fixed length and are refused.
* **list**: comma-separated; items are stripped and empty items dropped.
* **string**: the stripped text.

Aliases are resolved in one place (:meth:`ConfigProperty.raw`): the property's key is the newest
Hudi spelling and its aliases are older ones. A value under any of them is used; when the key and an
alias (or two aliases) carry values that parse to different results, reading fails naming both.
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import decimal
import difflib
import importlib
import math
import re
import warnings
from typing import Any, Callable, Generic, Iterator, Mapping, Optional, Sequence, TypeVar

from hoodie.errors import HoodieError

T = TypeVar("T")

# Modules that define service configs (imported lazily by known_keys / all_configs).
SERVICE_CONFIG_MODULES = (
    "hoodie.metrics",
    "hoodie.format.lock",
    "hoodie.services.ttl.config",
    "hoodie.services.compaction.config",
    "hoodie.services.clean", "hoodie.services.streaming",
    "hoodie.services.metadata.config", "hoodie.services.archive.config", "hoodie.services.write.configs",
)

JAVA_INT_MIN, JAVA_INT_MAX = -(2**31), 2**31 - 1
JAVA_LONG_MIN, JAVA_LONG_MAX = -(2**63), 2**63 - 1
DAY_MS = 86_400_000


class ConfigValueError(HoodieError, ValueError):
    """A configuration value cannot be read; the message names the key, the value and what is accepted."""


class _Invalid(Exception):
    """A type rule refused a value; ``reason`` completes ``KEY=VALUE <reason>``."""

    def __init__(self, reason: str, show_parsed: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        # Range errors show the value as read (``=0``) rather than as typed (``='0'``).
        self.show_parsed = show_parsed


def _shown(text: str) -> str:
    """A value for a message: quoted, and cut short when it is very long (a pasted file, 5000 digits)."""
    return repr(text) if len(text) <= 80 else repr(text[:60]) + f"... ({len(text)} characters)"


def _choices(values: Sequence[str]) -> str:
    return f"{values[0]} or {values[1]}" if len(values) == 2 else "one of " + ", ".join(values)


class ConfigType(abc.ABC, Generic[T]):
    """A parsing rule: the text of a key's value (stripped, never blank) to a value of type ``T``, and back."""

    name = "string"

    @abc.abstractmethod
    def read(self, key: str, text: str) -> T:
        """The value of ``text`` set for ``key``; raises :class:`ConfigValueError` naming both."""

    def format(self, value: T) -> str:
        """``value`` as text that :meth:`read` reads back to ``value``."""
        return str(value)

    def describe(self) -> str:
        """The type as the configuration reference shows it."""
        return self.name


class Rule(ConfigType[T]):
    """A built-in rule: :meth:`parse` gives the reason a value is refused, :meth:`read` adds the key."""

    @abc.abstractmethod
    def parse(self, text: str) -> T:
        """The value of ``text``; raises ``_Invalid`` with the reason when the rule refuses it."""

    def read(self, key: str, text: str) -> T:
        """The value of ``text`` set for ``key``; raises :class:`ConfigValueError` naming both."""
        try:
            return self.parse(text)
        except _Invalid as e:
            shown = "=" + (text if e.show_parsed else _shown(text))
            raise ConfigValueError(f"{key}{shown} {e.reason}") from None


class Str(Rule[str]):
    """Any text (stripped)."""

    def parse(self, text: str) -> str:
        return text


class Bool(Rule[bool]):
    """``true`` or ``false``, any case; anything else is refused."""

    name = "boolean"

    def parse(self, text: str) -> bool:
        low = text.lower()
        if low not in ("true", "false"):
            raise _Invalid("is not a boolean; use true or false")
        return low == "true"

    def format(self, value: bool) -> str:
        return "true" if value else "false"


_INT_TEXT = re.compile(r"[+-]?[0-9]+")


class Int(Rule[int]):
    """A whole number in Java's int (``bits=32``) or long (``bits=64``) range and ``[minimum, maximum]``.

    ``what`` and ``hint`` shape the message (``KEY='x' is not <what>; <hint>``)."""

    def __init__(self, minimum: Optional[int] = None, maximum: Optional[int] = None, bits: int = 32,
                 what: str = "an integer", hint: str = "") -> None:
        lo, hi = (JAVA_INT_MIN, JAVA_INT_MAX) if bits == 32 else (JAVA_LONG_MIN, JAVA_LONG_MAX)
        self.minimum = lo if minimum is None else minimum
        self.maximum = hi if maximum is None else maximum
        self.bits = bits
        self.name = "int" if bits == 32 else "long"
        self.what = what
        self.hint = hint
        self.java_range = (lo, hi)

    def _tail(self) -> str:
        return f"; {self.hint}" if self.hint else ""

    def parse(self, text: str) -> int:
        if not _INT_TEXT.fullmatch(text):
            raise _Invalid(f"is not {self.what}{self._tail()}")
        # 25 digits exceed any long; checking length first keeps int() away from huge strings.
        if len(text.lstrip("+-").lstrip("0")) > 25 or not self.java_range[0] <= int(text) <= self.java_range[1]:
            raise _Invalid(f"is out of range: Hudi reads it as a Java {self.name} "
                           f"(from {self.java_range[0]} to {self.java_range[1]}){self._tail()}")
        n = int(text)
        if n < self.minimum or n > self.maximum:
            raise _Invalid(f"{self._bounds()}{self._tail()}", show_parsed=True)
        return n

    def _bounds(self) -> str:
        lo, hi = self.java_range
        if self.maximum != hi and self.minimum != lo:
            return f"must be between {self.minimum} and {self.maximum}"
        if self.maximum != hi:
            return f"must be at most {self.maximum}"
        return "must not be negative" if self.minimum == 0 else f"must be at least {self.minimum}"

    def describe(self) -> str:
        lo, hi = self.java_range
        if self.minimum == lo and self.maximum == hi:
            return self.name
        if self.maximum == hi:
            return f"{self.name} >= {self.minimum}"
        if self.minimum == lo:
            return f"{self.name} <= {self.maximum}"
        return f"{self.name} {self.minimum}..{self.maximum}"


class Float(Rule[float]):
    """A finite decimal number within ``[minimum, maximum]``."""

    name = "number"

    def __init__(self, minimum: Optional[float] = None, maximum: Optional[float] = None) -> None:
        self.minimum = minimum
        self.maximum = maximum

    def parse(self, text: str) -> float:
        if not re.fullmatch(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", text):
            raise _Invalid("is not a number")
        x = float(text)
        if not math.isfinite(x):
            raise _Invalid("is not a finite number")
        if self.minimum is not None and x < self.minimum:
            raise _Invalid(f"must be at least {self.minimum:g}", show_parsed=True)
        if self.maximum is not None and x > self.maximum:
            raise _Invalid(f"must be at most {self.maximum:g}", show_parsed=True)
        return x

    def format(self, value: float) -> str:
        return repr(float(value))

    def describe(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"number {self.minimum:g}..{self.maximum:g}"
        if self.minimum is not None:
            return f"number >= {self.minimum:g}"
        return "number"


class Enum(Rule[str]):
    """One of ``values`` (case-insensitive), returned as spelled in ``values``. ``synonyms`` maps
    other accepted spellings (also case-insensitive) to a value; ``refused`` explains why some
    plausible values are not accepted (``{"lzo": "Arrow has no LZO codec"}``)."""

    name = "enum"

    def __init__(self, values: Sequence[str], synonyms: Optional[Mapping[str, str]] = None,
                 what: str = "", hint: str = "", refused: Optional[Mapping[str, str]] = None) -> None:
        self.values = tuple(values)
        self.synonyms = dict(synonyms or {})
        self._lookup = {v.lower(): v for v in self.values}
        for alias, target in self.synonyms.items():
            if target not in self.values:
                raise ValueError(f"enum synonym {alias!r} names {target!r}, which is not one of {self.values}")
            self._lookup.setdefault(alias.lower(), target)
        self.what = what
        self.hint = hint
        self.refused = {k.lower(): v for k, v in (refused or {}).items()}

    def parse(self, text: str) -> str:
        found = self._lookup.get(text.lower())
        if found is None:
            note = f" ({self.refused[text.lower()]})" if text.lower() in self.refused else ""
            if self.what:
                reason = f"is not {self.what}{note}; use {_choices(self.values)}"
            else:
                reason = f"is not one of {', '.join(self.values)}{note}"
            raise _Invalid(reason + (f" {self.hint}" if self.hint else ""))
        return found

    def describe(self) -> str:
        return "enum: " + ", ".join(self.values)


class ListOf(Rule[tuple]):
    """Comma-separated items; each stripped, empty items dropped."""

    name = "list"

    def parse(self, text: str) -> tuple:
        return tuple(p.strip() for p in text.split(",") if p.strip())

    def format(self, value: tuple) -> str:
        return ",".join(value)


_ISO = re.compile(
    r"^P(?:(?P<w>[0-9]+(?:\.[0-9]+)?)W)?(?:(?P<d>[0-9]+(?:\.[0-9]+)?)D)?"
    r"(?:T(?:(?P<h>[0-9]+(?:\.[0-9]+)?)H)?(?:(?P<m>[0-9]+(?:\.[0-9]+)?)M)?(?:(?P<s>[0-9]+(?:\.[0-9]+)?)S)?)?$"
)
_ISO_UNITS = {"w": 7 * DAY_MS, "d": DAY_MS, "h": 3_600_000, "m": 60_000, "s": 1000}
_MAX_DIGITS = 30  # longer numbers are typos; also keeps int() below Python's digit limit
_EXACT = decimal.Context(prec=200)


def _exact_ms(number: str, unit_ms: int) -> int:
    """``number`` (ASCII digits, maybe a fraction) times ``unit_ms``, exactly, rounded half-even to
    whole milliseconds; no float on the way, so no overflow and no inf/nan."""
    if len(number.replace(".", "").lstrip("0")) > _MAX_DIGITS:
        raise _Invalid("is implausibly large; give a retention such as P30D")
    if "." not in number:
        return int(number) * unit_ms
    return int((_EXACT.multiply(decimal.Decimal(number), decimal.Decimal(unit_ms)))
               .to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def format_duration(ms: Optional[int]) -> Optional[str]:
    """An ISO-8601 duration for milliseconds (``P30D``, ``P1DT12H``, ``PT0.5S``)."""
    if ms is None:
        return None
    sign = "-" if ms < 0 else ""
    ms = abs(int(ms))
    days, rem = divmod(ms, DAY_MS)
    h, rem = divmod(rem, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, milli = divmod(rem, 1000)
    out = f"{sign}P"
    if days:
        out += f"{days}D"
    t = ""
    if h:
        t += f"{h}H"
    if m:
        t += f"{m}M"
    if s or milli:
        t += f"{s}.{milli:03d}S".replace(".000S", "S")
    if t:
        out += "T" + t
    return out if out not in ("P", "-P") else "PT0S"


class Duration(Rule[int]):
    """Milliseconds of an ISO-8601 duration or a plain number of days, within ``[minimum, maximum]``
    (durations as text, e.g. ``"PT0S"``, ``"PT26H"``, shown as given in messages; ``hint`` completes
    a range error)."""

    name = "duration"

    def __init__(self, minimum: Optional[str] = None, maximum: Optional[str] = None, hint: str = "") -> None:
        self.minimum_text, self.maximum_text = minimum, maximum
        self.minimum = None if minimum is None else duration_ms(minimum)
        self.maximum = None if maximum is None else duration_ms(maximum)
        self.hint = hint

    def parse(self, text: str) -> int:
        ms = duration_ms(text)
        low = self.minimum is not None and ms < self.minimum
        high = self.maximum is not None and ms > self.maximum
        if low or high:
            if self.minimum is not None and self.maximum is not None:
                bound = f"must be between {self.minimum_text} and {self.maximum_text}"
            elif high:
                bound = f"must be at most {self.maximum_text}"
            else:
                bound = "must not be negative" if self.minimum == 0 else f"must be at least {self.minimum_text}"
            raise _Invalid(bound + (f" {self.hint}" if self.hint else ""), show_parsed=True)
        return ms

    def format(self, value: int) -> str:
        return format_duration(value) or "PT0S"

    def describe(self) -> str:
        if self.minimum_text is not None and self.maximum_text is not None:
            return f"duration {self.minimum_text}..{self.maximum_text}"
        if self.minimum_text is not None:
            return f"duration >= {self.minimum_text}"
        return "duration"


def duration_ms(text: str) -> int:
    """The duration rule: milliseconds of an ISO-8601 duration (``P7D``, ``PT36H``, ``P1DT12H``,
    ``P2W``) or a plain number of days (``30``, ``1.5``), exactly; raises ``_Invalid``. ``inf``,
    ``nan`` and exponents (``1e-7``) are not durations."""
    t = text.strip().upper()
    if not t:
        raise _Invalid("is empty; give a duration such as P30D or a number of days")
    plain = re.fullmatch(r"(-?)([0-9]+(?:\.[0-9]+)?)", t)
    if plain:
        ms = _exact_ms(plain.group(2), DAY_MS)
        total = -ms if plain.group(1) else ms
    else:
        # A leading minus negates an ISO duration, as Java's Duration.parse reads -PT6H.
        negative = t.startswith("-P")
        t = t[1:] if negative else t
        if re.search(r"P[0-9]+(?:\.[0-9]+)?[YM]", t.split("T")[0]):
            raise _Invalid("has years or months, which have no fixed length; use days (P365D, P30D)")
        m = _ISO.match(t)
        if not m or t in ("P", "PT") or t.endswith("T"):
            raise _Invalid("is not a duration; use ISO-8601 such as P30D, PT36H, P1DT12H, P2W, or a number of days")
        total = sum(_exact_ms(m.group(name), unit) for name, unit in _ISO_UNITS.items() if m.group(name) is not None)
        total = -total if negative else total
    if abs(total) > JAVA_LONG_MAX:
        raise _Invalid(f"is out of range (more than {JAVA_LONG_MAX} ms); give a retention such as P30D")
    return total


class Custom(ConfigType[T]):
    """A rule of its own (e.g. a timestamp as epoch milliseconds or ISO-8601): ``parser(text, key)``
    returns the value or raises ValueError with the whole message (naming the key)."""

    def __init__(self, name: str, parser: Callable[[str, str], T], formatter: Callable[[T], str] = str) -> None:
        self.name = name
        self._parser = parser
        self._formatter = formatter

    def read(self, key: str, text: str) -> T:
        """The parser's value; its ValueError becomes a :class:`ConfigValueError` with the same message."""
        try:
            return self._parser(text, key)
        except ConfigValueError:
            raise
        except ValueError as e:
            raise ConfigValueError(str(e)) from None

    def format(self, value: T) -> str:
        return self._formatter(value)


STRING: Str = Str()
BOOLEAN: Bool = Bool()
INT: Int = Int()
LONG: Int = Int(bits=64)
LIST: ListOf = ListOf()
DURATION: Duration = Duration()


def parse_duration(text: Any, key: str) -> int:
    """The duration rule applied to one value (e.g. a TTL rule's retention): milliseconds, or
    :class:`ConfigValueError` naming ``key``."""
    return DURATION.read(key, str(text).strip())


def _text(value: Any) -> Optional[str]:
    """A raw option value as stripped text; None when unset or blank."""
    if value is None:
        return None
    s = str(value).strip()
    return s or None


class ConfigProperty(str, Generic[T]):
    """One configuration key: its type, default, Hudi aliases, doc and group. The object is the key
    string itself, so it works wherever a key does."""

    type: ConfigType[T]
    default: Optional[T]
    doc: str
    group: str
    aliases: tuple[str, ...]

    def __new__(cls, key: str, type_: ConfigType[T], default: Optional[T], doc: str, group: str,
                aliases: Sequence[str] = ()) -> "ConfigProperty[T]":
        self = super().__new__(cls, key)
        self.type = type_
        self.default = default
        self.doc = doc
        self.group = group
        self.aliases = tuple(aliases)
        return self

    @property
    def key(self) -> str:
        """The key (Hudi's newest spelling)."""
        return str.__str__(self)

    @property
    def default_text(self) -> Optional[str]:
        """The default as text (None when the key has no default)."""
        return None if self.default is None else self.type.format(self.default)

    def parse(self, text: Any, key: Optional[str] = None) -> T:
        """Apply the type's rule to one value (``key`` names it in the error; default: this key)."""
        name = key or self.key
        s = _text(text)
        if s is None:
            raise ConfigValueError(f"{name} is empty; give a {self.type.describe()} value")
        return self.type.read(name, s)

    def raw(self, options: Optional[Mapping[str, Any]]) -> Optional[str]:
        """The stripped text set for this key or one of its aliases (None when none is set).

        The single place aliases are resolved: values under several of the names must agree
        (after parsing); otherwise the conflict is an error naming both."""
        if not options:
            return None
        found = [(k, t) for k in (self.key, *self.aliases) if k in options
                 for t in (_text(options[k]),) if t is not None]
        if not found:
            return None
        if len(found) > 1:
            parsed = [self.parse(t, k) for k, t in found]
            if any(p != parsed[0] for p in parsed[1:]):
                raise ConfigValueError(f"{' and '.join(k for k, _ in found)} are both set, to different values "
                                       f"({', '.join(_shown(t) for _, t in found)}); keep only {self.key}")
        return found[0][1]

    def get(self, options: Optional[Mapping[str, Any]]) -> Optional[T]:
        """This key's value in ``options`` (aliases resolved), or the default when unset."""
        text = self.raw(options)
        if text is None:
            return self.default
        return self.parse(text, self._source(options))

    def _source(self, options: Optional[Mapping[str, Any]]) -> str:
        """Which spelling carried the value, for messages."""
        for k in (self.key, *self.aliases):
            if options and _text(options.get(k)) is not None:
                return k
        return self.key

    def __reduce__(self) -> tuple:
        # Pickled (e.g. to Spark executors) as the plain key.
        return (str, (self.key,))


# Backwards-compatible name of a registry entry.
ConfigKey = ConfigProperty

class ConfigReader:
    """Reads properties from one option map and raises ``error`` (a service's own error class,
    a subclass of ValueError) instead of :class:`ConfigValueError`."""

    def __init__(self, options: Optional[Mapping[str, Any]], error: type[Exception] = ConfigValueError) -> None:
        self.options: Mapping[str, Any] = options or {}
        self.error = error

    def get(self, prop: "ConfigProperty[T]") -> Optional[T]:
        """The value of ``prop`` (its default when unset)."""
        try:
            return prop.get(self.options)
        except ConfigValueError as e:
            if self.error is ConfigValueError:
                raise
            raise self.error(str(e)) from None

    def raw(self, prop: "ConfigProperty[Any]") -> Optional[str]:
        """The text set for ``prop`` or an alias (None when unset); conflicts raise."""
        try:
            return prop.raw(self.options)
        except ConfigValueError as e:
            if self.error is ConfigValueError:
                raise
            raise self.error(str(e)) from None

    def is_set(self, prop: "ConfigProperty[Any]") -> bool:
        """Whether ``prop`` or an alias has a non-blank value."""
        return self.raw(prop) is not None


def read(options: Optional[Mapping[str, Any]], error: type[Exception] = ConfigValueError) -> ConfigReader:
    """A :class:`ConfigReader` over ``options`` raising ``error``."""
    return ConfigReader(options, error)


_REGISTRY: dict[str, ConfigProperty[Any]] = {}
_ALIAS_OWNER: dict[str, str] = {}


def _same(a: ConfigProperty[Any], b: ConfigProperty[Any]) -> bool:
    return (a.key, a.type.describe(), a.default_text, a.doc, a.group, a.aliases) == \
        (b.key, b.type.describe(), b.default_text, b.doc, b.group, b.aliases)


def define(key: str, default: Any, doc: str, group: str, aliases: Sequence[str] = (),
           type: Optional[ConfigType[Any]] = None) -> ConfigProperty[Any]:
    """Define and register a key; returns its :class:`ConfigProperty`.

    ``default`` is a typed value or its text (parsed by the type, so every default is one the rule
    accepts); ``type`` defaults to string. A key has one definition: defining it again differently is
    a programming error (an identical definition, e.g. a re-imported module, is fine)."""
    old = _REGISTRY.get(key)
    if isinstance(default, str) and not default.strip():
        default = None  # a blank value is unset by the rules, so a blank default is no default
    t: ConfigType[Any] = type or STRING
    prop0: ConfigProperty[Any] = ConfigProperty(key, t, None, doc, group, aliases)
    typed = default
    if isinstance(default, str) and not isinstance(t, Str):
        typed = prop0.parse(default)
    prop = ConfigProperty(key, t, typed, doc, group, aliases)
    if old is not None and not _same(old, prop):
        raise ValueError(f"config key {key} is defined twice, differently; keep one definition")
    for a in prop.aliases:
        owner = _ALIAS_OWNER.get(a, key)
        if owner != key or a in _REGISTRY:
            raise ValueError(f"{a} is an alias of {key} and also of {owner}; an alias belongs to one key")
    if key in _ALIAS_OWNER and _ALIAS_OWNER[key] != key:
        raise ValueError(f"{key} is already an alias of {_ALIAS_OWNER[key]}")
    if old is not None:
        return old
    _REGISTRY[key] = prop
    for a in prop.aliases:
        _ALIAS_OWNER[a] = key
    return prop


W = "write"
R = "read"
TB = "table"
TABLE_NAME = define("hoodie.table.name", None, "Table name (required when creating a table).", W)
DATABASE_NAME = define("hoodie.database.name", None, "Database name recorded in hoodie.properties.", TB)
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
TIMELINE_TIMEZONE = define(
    "hoodie.table.timeline.timezone", "UTC",
    "Time zone of instant times: LOCAL or UTC. Tables hoodie creates default to UTC; a table whose "
    "hoodie.properties lacks the key is LOCAL (Hudi's default), where each instant is its writer's "
    "wall-clock time (see docs/ttl.md).", TB, type=Enum(("LOCAL", "UTC"), what="a timeline time zone"))
_GLOBAL = ("a global index finds a key in any partition and moves a record whose partition changed; hoodie's "
           "index looks within the record's partition, so such a record would be stored twice")
INDEX_TYPE = define(
    "hoodie.index.type", "BLOOM",
    "Hudi's index type. hoodie's index is non-global, as Hudi's BLOOM and SIMPLE (a key is unique within its "
    "partition; candidate file groups are pruned by the bloom filters and key ranges in their base files' "
    "footers, then their keys are read): both are accepted and behave alike. Other index types are refused "
    "before anything is written, since their records would be placed or found differently.",
    W, type=Enum(("BLOOM", "SIMPLE"), what="an index type hoodie implements", refused={
        "GLOBAL_BLOOM": _GLOBAL, "GLOBAL_SIMPLE": _GLOBAL,
        "RECORD_INDEX": "global tagging through record_index, which hoodie keeps (hoodie.metadata.record.index.enable) "
                        "but does not tag by: a record whose partition changed would be stored twice",
        "BUCKET": "a bucket index stores each key in the file group of its hash bucket; hoodie would write file "
                  "groups a bucket index cannot find",
        "HBASE": "an external index hoodie cannot reach", "INMEMORY": "an index of one Spark job",
        "FLINK_STATE": "Flink's state index"}))
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
QUERY_TYPE = define("hoodie.datasource.query.type", "snapshot", "snapshot, read_optimized or incremental.", R,
                    type=Enum(("snapshot", "read_optimized", "incremental"), what="a query type"))
READ_BEGIN_INSTANT = define("hoodie.datasource.read.begin.instanttime", None,
                            "Incremental start instant (exclusive).", R)
READ_END_INSTANT = define("hoodie.datasource.read.end.instanttime", None, "Incremental end instant (inclusive).", R)
HOLLOW_COMMIT_POLICY = define(
    "hoodie.read.timeline.holes.resolution.policy", "FAIL",
    "Incremental reads of version-6 tables when a write older than a completed one is still pending (a hollow "
    "commit: what it commits later has a commit time inside ranges already read): FAIL refuses the read, "
    "BLOCK reads only up to the last write completed before it. USE_TRANSITION_TIME is refused (hoodie "
    "does not order version-6 instants by completion; versions 8/9 always do).", R,
    aliases=("hoodie.datasource.read.handle.hollow.commit",),
    type=Enum(("FAIL", "BLOCK", "USE_TRANSITION_TIME"), what="a hollow-commit policy"))
SPARK_READ_NATIVE = define("hoodie.spark.read.native", True,
                           "hoodie.spark.read: base files that need no merging go through Spark's own Parquet scan "
                           "(false: every slice through hoodie's reader).", R, type=BOOLEAN)
INCREMENTAL_FORMAT = define(
    "hoodie.datasource.query.incremental.format", "latest_state",
    "Incremental query output: latest_state (the latest version of each changed record). Hudi's cdc format "
    "(change records with before/after images) is refused: hoodie does not read CDC log files.", R,
    type=Enum(("latest_state", "cdc"), what="an incremental format"))
SPLIT_TARGET_BYTES = define("hoodie.datasource.read.split.target.bytes", 128 * 1024 * 1024,
                            "Bytes of file slices grouped into one Spark task.", R, type=Int(minimum=1, bits=64))

# -- clean (hoodie.services.clean.CleanConfig reads these) ----------------------------------------------
CLEAN_POLICIES = ("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS")
_CLEAN = "clean"
CLEANER_POLICY = define("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS",
                        "Cleaning policy: KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS.",
                        _CLEAN, aliases=("hoodie.clean.policy",), type=Enum(CLEAN_POLICIES, what="a cleaning policy"))
CLEANER_COMMITS_RETAINED = define("hoodie.cleaner.commits.retained", 10,
                                  "KEEP_LATEST_COMMITS: number of newest commits whose file versions stay queryable.",
                                  _CLEAN, aliases=("hoodie.clean.commits.retained",), type=Int(minimum=1))
CLEANER_FILE_VERSIONS_RETAINED = define("hoodie.cleaner.fileversions.retained", 3,
                                        "KEEP_LATEST_FILE_VERSIONS: number of newest file slices kept per file group.",
                                        _CLEAN, aliases=("hoodie.clean.fileversions.retained",), type=Int(minimum=1))
# 0 hours is allowed: only the state after the newest commit must stay readable.
CLEANER_HOURS_RETAINED = define("hoodie.cleaner.hours.retained", 24,
                                "KEEP_LATEST_BY_HOURS: file versions needed by queries over the last N hours stay.",
                                _CLEAN, aliases=("hoodie.clean.hours.retained",), type=Int(minimum=0))
CLEAN_AUTOMATIC = define("hoodie.clean.automatic", True,
                         "Run the cleaner after each commit (maybe_clean_after_commit).", _CLEAN, type=BOOLEAN)
CLEAN_MAX_COMMITS = define("hoodie.clean.max.commits", 1,
                           "Automatic clean runs once at least this many commits completed since the last clean.",
                           _CLEAN, type=Int(minimum=1))

# Record-level TTL (issue 19; hoodie.services.ttl.records, docs/ttl.md "Record-level TTL"). Hudi has no
# record-level TTL yet; the keys follow the hoodie.partition.ttl.* spelling.
_RTTL = "ttl"
RECORD_TTL_FIELD = define(
    "hoodie.record.ttl.field", None,
    "Event-time column whose age expires a record: a timestamp, date, number (epoch time in "
    "hoodie.payload.event.time.unit) or ISO-8601 string column. Unset: hoodie.payload.event.time.field.", _RTTL)
RECORD_TTL_RETENTION = define(
    "hoodie.record.ttl.retention", None,
    "How long a record is kept after its event time: an ISO-8601 duration (P30D, PT36H) or a number of days; "
    "at least PT1H. A record whose event time is before now minus this is deleted by a record TTL run.", _RTTL,
    type=Duration(minimum="PT1H", hint="(e.g. P30D or PT36H)"))
RECORD_TTL_INLINE = define(
    "hoodie.record.ttl.inline", False,
    "Run record TTL right after a write commits (an inline table service, after partition TTL and "
    "before clean).", _RTTL, type=BOOLEAN)
RECORD_TTL_INLINE_MAX_COMMITS = define(
    "hoodie.record.ttl.inline.max.commits", 1,
    "Inline record TTL runs once at least this many writes completed since the last record TTL run.", _RTTL,
    type=Int(minimum=1))


# Partition TTL tiering (issue 19; hoodie.services.ttl.move, docs/ttl.md "Tiering"): the action of a
# partition TTL run, and where `move` puts the expired partitions.
TTL_ACTION = define(
    "hoodie.partition.ttl.action", "delete",
    "What partition TTL does with expired partitions: delete (a delete_partition replacecommit) or move (copy "
    "them into the Hudi table at hoodie.partition.ttl.move.target, verify the copy, then delete them from this "
    "table).", _RTTL, type=Enum(("delete", "move"), what="a partition TTL action"))
TTL_MOVE_TARGET = define(
    "hoodie.partition.ttl.move.target", None,
    "action=move: base path of the cold table (created on the first move): a local path, file://, s3://, gs://, "
    "abfs[s]:// or hdfs:// URI outside this table's base path.", _RTTL)
TTL_MOVE_STORAGE_OPTIONS = define(
    "hoodie.partition.ttl.move.storage.options", None,
    "action=move: storage options of the cold table's store as a JSON object (credentials, endpoint_override, "
    "region...; the names the hot table's storage options take). Unset: the hot table's storage options when "
    "the target is on the same kind of store.", _RTTL)

def _load_services() -> None:
    for mod in SERVICE_CONFIG_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            # A service package that is not installed defines no keys; any other error surfaces.
            if e.name is None or not mod.startswith(e.name):
                raise


def all_configs() -> list[ConfigProperty[Any]]:
    """Every defined key, sorted by group then key."""
    _load_services()
    return sorted(_REGISTRY.values(), key=lambda c: (c.group, c.key))


def lookup(key: str) -> Optional[ConfigProperty[Any]]:
    """The property of ``key`` or of the key ``key`` is an alias of (None when unknown)."""
    _load_services()
    return _REGISTRY.get(_ALIAS_OWNER.get(key, key))


def known_keys() -> set[str]:
    """Every key and alias hoodie accepts."""
    out: set[str] = set()
    for c in all_configs():
        out.add(c.key)
        out.update(c.aliases)
    return out


_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("hoodie_quiet_unknown_keys", default=False)


def warn_unknown_keys(options: Optional[Mapping[str, Any]], stacklevel: int = 3) -> list[str]:
    """Warn about each ``hoodie.*`` key in ``options`` that hoodie does not know, suggesting the
    closest known key; returns the unknown keys.

    Every entry point that takes options calls this (writes, TTL, clean, compaction, the CLI's
    ``--set``): a misspelled key would otherwise be ignored and its default applied in silence.
    """
    if not options or _quiet.get():
        return []
    known = known_keys()
    unknown = [k for k in options if isinstance(k, str) and k.startswith("hoodie.") and k not in known]
    for k in unknown:
        close = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        warnings.warn(f"unknown option {k!r} is ignored{hint}", UserWarning, stacklevel=stacklevel)
    return unknown


@contextlib.contextmanager
def unknown_keys_checked() -> Iterator[None]:
    """Inside this block :func:`warn_unknown_keys` is silent: the caller has already warned about
    these options (inline services get the options of the write that warned)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


__all__ = [
    "ConfigProperty", "ConfigKey", "ConfigType", "ConfigValueError", "ConfigReader", "read", "define", "lookup",
    "all_configs", "known_keys", "warn_unknown_keys", "unknown_keys_checked", "Str", "Bool", "Int", "Float", "Enum",
    "ListOf", "Duration", "Custom", "Rule", "STRING", "BOOLEAN", "INT", "LONG", "LIST", "DURATION", "parse_duration", "duration_ms", "format_duration",
]
