"""Java-style date patterns (``yyyy-MM-dd``, ``yyyy/MM/dd/HH``, ``yyyyMMddHH``) for partition values.

KEEP_BY_EVENT_TIME reads a partition's time from its path. A pattern is compiled once into a regular
expression; parsing yields the period the value denotes: its start, and its end (start plus one unit
of the finest field in the pattern: a ``yyyy-MM-dd`` value covers one day, ``yyyy-MM`` one month).

Supported letters: ``yyyy``/``yy``/``y`` year, ``MM``/``M`` month, ``MMM`` English month abbreviation,
``dd``/``d`` day, ``HH``/``H`` hour (0-23), ``mm``/``m`` minute, ``ss``/``s`` second, ``SSS``
millisecond; text in single quotes is literal, other characters are literal.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Optional
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hoodie.services.ttl.keys import EVENT_FORMAT, EVENT_TIMEZONE, TTLConfigError

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# Unit order, coarse to fine; the finest unit present sets the length of a period.
_UNITS = ["year", "month", "day", "hour", "minute", "second", "milli"]


@dataclass(frozen=True)
class _Field:
    unit: str
    regex: str
    month_name: bool = False


def _field_for(letter: str, count: int, pattern: str) -> _Field:
    if letter == "y":
        if count == 2:
            return _Field("year2", r"\d{2}")
        return _Field("year", r"\d{4}" if count == 4 else r"\d{1,4}")
    if letter == "M":
        if count == 3:
            return _Field("month", r"[A-Za-z]{3}", month_name=True)
        if count > 3:
            raise TTLConfigError(f"{EVENT_FORMAT}={pattern!r}: full month names (MMMM) are not supported; "
                                 "use MM or MMM")
        return _Field("month", r"\d{2}" if count == 2 else r"\d{1,2}")
    fixed = {"d": "day", "H": "hour", "m": "minute", "s": "second"}
    if letter in fixed:
        return _Field(fixed[letter], r"\d{2}" if count == 2 else r"\d{1,2}")
    if letter == "S":
        return _Field("milli", r"\d{%d}" % count)
    raise TTLConfigError(
        f"{EVENT_FORMAT}={pattern!r}: pattern letter {letter!r} is not supported; use yyyy, MM, MMM, dd, "
        "HH, mm, ss, SSS and literal separators ('T' in quotes for literal letters)")


class TimePattern:
    """A compiled Java-style date pattern."""

    def __init__(self, pattern: str) -> None:
        if not pattern or not pattern.strip():
            raise TTLConfigError(f"{EVENT_FORMAT} is empty; use a pattern such as yyyy-MM-dd")
        self.pattern = pattern
        regex = ""
        self.fields: list[_Field] = []
        i = 0
        segments = 1
        while i < len(pattern):
            c = pattern[i]
            if c == "'":
                j = pattern.find("'", i + 1)
                if j < 0:
                    raise TTLConfigError(f"{EVENT_FORMAT}={pattern!r} has an unclosed quote")
                lit = pattern[i + 1:j] if j > i + 1 else "'"
                regex += re.escape(lit)
                segments += lit.count("/")
                i = j + 1
                continue
            if c.isalpha():
                j = i
                while j < len(pattern) and pattern[j] == c:
                    j += 1
                f = _field_for(c, j - i, pattern)
                self.fields.append(f)
                regex += f"({f.regex})"
                i = j
                continue
            if c == "/":
                segments += 1
            regex += re.escape(c)
            i += 1
        units = {f.unit for f in self.fields}
        if not ({"year", "year2"} & units):
            raise TTLConfigError(f"{EVENT_FORMAT}={pattern!r} has no year field (yyyy)")
        self.regex = re.compile(regex)
        self.segment_count = segments
        order = [u for u in _UNITS if u in units or (u == "year" and "year2" in units)]
        self.finest = order[-1]

    def parse(self, text: str, tz: _dt.tzinfo) -> Optional[tuple[int, int]]:
        """(start ms, end ms) of the period ``text`` denotes, or None if it does not match."""
        m = self.regex.fullmatch(text)
        if not m:
            return None
        parts = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "milli": 0}
        for f, raw in zip(self.fields, m.groups()):
            if f.month_name:
                try:
                    parts["month"] = _MONTHS.index(raw.lower()) + 1
                except ValueError:
                    return None
            elif f.unit == "year2":
                parts["year"] = 2000 + int(raw)
            else:
                parts[f.unit] = int(raw)
        try:
            start = _dt.datetime(parts["year"], parts["month"], parts["day"], parts["hour"],
                                 parts["minute"], parts["second"], parts["milli"] * 1000, tzinfo=tz)
        except ValueError:
            return None  # e.g. month 13 or February 30
        end = _add_unit(start, self.finest)
        return _epoch_ms(start), _epoch_ms(end)


def _epoch_ms(dt: _dt.datetime) -> int:
    # Exact integer arithmetic (datetime.timestamp() goes through a float).
    delta = dt - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _add_unit(dt: _dt.datetime, unit: str) -> _dt.datetime:
    if unit == "year":
        return dt.replace(year=dt.year + 1)
    if unit == "month":
        return dt.replace(year=dt.year + (dt.month // 12), month=dt.month % 12 + 1)
    step = {"day": _dt.timedelta(days=1), "hour": _dt.timedelta(hours=1), "minute": _dt.timedelta(minutes=1),
            "second": _dt.timedelta(seconds=1), "milli": _dt.timedelta(milliseconds=1)}[unit]
    if unit == "day" and isinstance(dt.tzinfo, ZoneInfo):
        # A calendar day in a zone with DST can last 23 or 25 hours: step the wall clock.
        naive = dt.replace(tzinfo=None) + step
        return naive.replace(tzinfo=dt.tzinfo)
    return (dt.astimezone(_dt.timezone.utc) + step).astimezone(dt.tzinfo)


def zone(name: str) -> _dt.tzinfo:
    """A time zone from ``UTC``, ``LOCAL``, an IANA name or an offset like ``+08:00``."""
    n = name.strip()
    if n.upper() in ("UTC", "Z", "GMT"):
        return _dt.timezone.utc
    if n.upper() == "LOCAL":
        tz = _dt.datetime.now().astimezone().tzinfo
        return tz or _dt.timezone.utc
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", n, re.IGNORECASE)
    if m:
        sign = 1 if m.group(1) == "+" else -1
        off = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return _dt.timezone(sign * off)
    try:
        return ZoneInfo(n)
    except (ZoneInfoNotFoundError, ValueError):
        raise TTLConfigError(f"{EVENT_TIMEZONE}={name!r} is not a time zone; use UTC, LOCAL, an IANA name "
                             "(Europe/Paris) or an offset (+08:00)") from None


__all__ = ["TimePattern", "zone"]
