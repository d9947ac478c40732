"""The one set of rules by which every configuration value is parsed (a write option, a service
option, a ``--set`` on the CLI or a ``hoodie.properties`` entry alike).

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
* **epoch ms or ISO-8601** (a point in time): epoch milliseconds between 1971 and 2200 (a number that
  is a time only in seconds or microseconds is refused, naming that unit), or an ISO-8601 date or
  date-time (``Z`` or an offset; naive means UTC).
"""

from __future__ import annotations

import abc
import datetime as _dt
import decimal
import math
import re
from typing import Any, Callable, Generic, Mapping, Optional, Sequence, TypeVar

from hoodie.errors import HoodieError

T = TypeVar("T")

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


# -- points in time ---------------------------------------------------------------------------------
# Pure date arithmetic on epoch milliseconds, shared by the rule below and by the event-time readers of
# the format layer (hoodie.format.slice.eventtime), so a threshold and a column are judged alike.
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)
# Milliseconds per java.util.concurrent.TimeUnit name (as Hudi's event-time unit), as floats for range
# checks; in the order other units are suggested.
MS_PER_UNIT = {"SECONDS": 1000.0, "MILLISECONDS": 1.0, "MICROSECONDS": 1e-3, "NANOSECONDS": 1e-6}
# The range of a plausible event time, and the range a date (hence an ISO string) can hold.
PLAUSIBLE_MS = ((_dt.datetime(1971, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS,
                (_dt.datetime(2200, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS)
MIN_MS = (_dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS
MAX_MS = (_dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS


def iso_text(ms: int) -> str:
    """ISO-8601 UTC text with milliseconds of epoch milliseconds within years 1-9999 (exact)."""
    return (_EPOCH + _dt.timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def describe_millis(ms: float) -> str:
    """An epoch-millisecond value as ISO-8601 text, or why it is no date."""
    if not MIN_MS <= ms <= MAX_MS:
        return "beyond year 9999" if ms > 0 else "before year 1"
    return iso_text(int(ms))


def looks_like(raw: float, unit: str) -> Optional[str]:
    """Another unit in which ``raw`` is a plausible event time, if any (the ranges do not overlap)."""
    lo, hi = PLAUSIBLE_MS
    for u, per in MS_PER_UNIT.items():
        if u != unit and lo <= raw * per <= hi:
            return u
    return None


def iso_millis(text: str) -> Optional[int]:
    """Epoch milliseconds of an ISO-8601 date or date-time (``Z`` or an offset; naive means UTC),
    rounded down, computed exactly (no floating point); None when ``text`` is not ISO-8601."""
    t = text.strip()
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    try:
        dt = _dt.datetime.fromisoformat(t)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.timezone.utc)
    return (dt - _EPOCH) // _MS


_EPOCH_TEXT = re.compile(r"-?[0-9]+")


class EpochMillis(Rule[int]):
    """A point in time: epoch milliseconds, or an ISO-8601 date or date-time (naive means UTC).

    A number that is a date only in another unit (``1714521600``: seconds) or no date at all is
    refused, naming the unit it looks like: read as milliseconds it would be a time in January 1970."""

    name = "epoch ms or ISO-8601"

    def parse(self, text: str) -> int:
        if _EPOCH_TEXT.fullmatch(text):
            # 25 digits exceed any date; checking length first keeps int() away from huge strings.
            v = int(text) if len(text.lstrip("-").lstrip("0")) <= 25 else (-1 if text.startswith("-") else 1) * 10**26
            other = looks_like(v, "MILLISECONDS")
            plausible = PLAUSIBLE_MS[0] <= v <= PLAUSIBLE_MS[1]
            if not plausible and (other is not None or not MIN_MS <= v <= MAX_MS):
                hint = f"; it looks like {other}" if other else ""
                raise _Invalid(f"read as epoch milliseconds is {describe_millis(v)}{hint}: give epoch milliseconds "
                               "or ISO-8601 (e.g. 2024-05-01T00:00:00Z)", show_parsed=True)
            return v
        ms = iso_millis(text)
        if ms is None:
            raise _Invalid("is neither epoch milliseconds nor ISO-8601 (e.g. 2024-05-01T12:00:00Z)")
        return ms

    def format(self, value: int) -> str:
        # ISO text, not the number: a small epoch value written as digits could read as another unit.
        return iso_text(value)


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
