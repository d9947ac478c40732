"""Joda-Time date patterns and Java time-zone ids, as Hudi's timestamp key generator uses them.

Printing is vectorized over Arrow's calendar kernels; parsing runs once per distinct value.
"""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from dataclasses import dataclass, field
from typing import Optional, Sequence
import pyarrow as pa
import pyarrow.compute as pc
from hoodie.format.keys.common import TS_INPUT_DATEFORMAT, TS_SCALAR_TIME_UNIT, TS_TYPE, _concat


# ---------------------------------------------------------------------------------------------
# Time zones (java.util.TimeZone ids as Joda's DateTimeZone.forTimeZone sees them)
# ---------------------------------------------------------------------------------------------

# Joda's DateTimeZone.forTimeZone conversion of the legacy three-letter java.util.TimeZone ids
# (DateTimeZone.getConvertedId); note EST/MST/HST become DST-observing zones, not fixed offsets.
_JAVA_SHORT_IDS = {
    "MET": "CET", "ECT": "Europe/Paris", "MIT": "Pacific/Apia", "HST": "Pacific/Honolulu",
    "AST": "America/Anchorage", "PST": "America/Los_Angeles", "MST": "America/Denver",
    "PNT": "America/Phoenix", "CST": "America/Chicago", "EST": "America/New_York",
    "IET": "America/Indiana/Indianapolis", "PRT": "America/Puerto_Rico", "CNT": "America/St_Johns",
    "AGT": "America/Argentina/Buenos_Aires", "BET": "America/Sao_Paulo", "ART": "Africa/Cairo",
    "CAT": "Africa/Harare", "EAT": "Africa/Addis_Ababa", "NET": "Asia/Yerevan", "PLT": "Asia/Karachi",
    "IST": "Asia/Kolkata", "BST": "Asia/Dhaka", "VST": "Asia/Ho_Chi_Minh", "CTT": "Asia/Shanghai",
    "JST": "Asia/Tokyo", "ACT": "Australia/Darwin", "AET": "Australia/Sydney",
    "SST": "Pacific/Guadalcanal", "NST": "Pacific/Auckland",
}
_OFFSET_ID = re.compile(r"^(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def _arrow_zone(zone_id: str, key: str) -> str:
    """A Java time zone id as an Arrow/IANA zone string: ``UTC``, ``+08:00`` or ``Area/City``.

    Java maps an unknown id silently to GMT; here it is an error naming the config key.
    """
    z = zone_id.strip()
    if z.upper() in ("UTC", "GMT", "UT", "Z", "ETC/UTC", "ETC/GMT", "UCT", "ZULU"):
        return "UTC"
    if z in _JAVA_SHORT_IDS:
        return _JAVA_SHORT_IDS[z]
    m = _OFFSET_ID.match(z)
    if m:
        sign, hh, mm = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        if hh > 23 or mm > 59:
            raise ValueError(f"{key}: time zone offset {zone_id!r} is out of range")
        if hh == 0 and mm == 0:
            return "UTC"
        return f"{sign}{hh:02d}:{mm:02d}"
    try:
        zoneinfo.ZoneInfo(z)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{key}: unknown time zone {zone_id!r}; use an IANA id such as 'Asia/Shanghai', 'UTC' or "
            f"an offset such as 'GMT+08:00'"
        ) from None
    return z


def _py_zone(arrow_zone: str) -> _dt.tzinfo:
    if arrow_zone == "UTC":
        return _dt.timezone.utc
    m = re.fullmatch(r"([+-])(\d{2}):(\d{2})", arrow_zone)
    if m:
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return _dt.timezone(-delta if m.group(1) == "-" else delta)
    return zoneinfo.ZoneInfo(arrow_zone)


def _offset_zone(offset_seconds: int) -> str:
    """Joda ``DateTimeZone.forOffsetMillis``: ``UTC`` for zero, else ``+hh:mm``."""
    if offset_seconds == 0:
        return "UTC"
    sign = "-" if offset_seconds < 0 else "+"
    s = abs(offset_seconds)
    return f"{sign}{s // 3600:02d}:{(s % 3600) // 60:02d}"


# ---------------------------------------------------------------------------------------------
# Joda DateTimeFormat patterns: vectorized printing, per-distinct-value parsing
# ---------------------------------------------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PATTERN_LETTERS = set("GCYxwyDMdHhKkmsSeEazZ")
_NUMERIC_LETTERS = set("CYxwyDdHhKkmsSe")
# Earliest/latest instants Arrow's calendar kernels handle correctly (years 1..9999).
_MIN_MILLIS = -62135596800000
_MAX_MILLIS = 253402300799999


@dataclass(frozen=True)
class _JodaToken:
    letter: str  # "" for a literal
    count: int = 0
    text: str = ""

    def numeric(self) -> bool:
        return self.letter in _NUMERIC_LETTERS or (self.letter == "M" and self.count <= 2)


def parse_joda_pattern(pattern: str) -> list[_JodaToken]:
    """Tokenize a Joda ``DateTimeFormat`` pattern (letters repeat, ``'quoted'`` literals, ``''`` = ')."""
    toks: list[_JodaToken] = []
    lit: list[str] = []
    i, n = 0, len(pattern)

    def flush() -> None:
        if lit:
            toks.append(_JodaToken("", 0, "".join(lit)))
            lit.clear()

    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                lit.append("'")
                i += 2
                continue
            j = i + 1
            while j < n:
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        lit.append("'")
                        j += 2
                        continue
                    break
                lit.append(pattern[j])
                j += 1
            i = j + 1
            continue
        if ("a" <= c <= "z") or ("A" <= c <= "Z"):
            if c not in _PATTERN_LETTERS:
                raise ValueError(f"illegal pattern component {c!r} in date format {pattern!r}")
            j = i
            while j < n and pattern[j] == c:
                j += 1
            flush()
            toks.append(_JodaToken(c, j - i))
            i = j
            continue
        lit.append(c)
        i += 1
    flush()
    return toks


def _pad(values: pa.Array, width: int) -> pa.Array:
    s = pc.cast(values, pa.string())
    return pc.utf8_lpad(s, width, "0") if width > 1 else s


def _mod(values: pa.Array, m: int) -> pa.Array:
    return pc.subtract(values, pc.multiply(pc.divide(values, m), m))


def format_millis(millis: pa.Array, pattern: str | list[_JodaToken], zone: str) -> pa.Array:
    """Format epoch milliseconds with a Joda pattern in ``zone`` (an Arrow zone string), vectorized.

    Supports the letters y Y x w e E D M d H k h K m s S a G C Z (English text). ``z`` (zone
    short names) is not supported. Instants outside years 1..9999 raise ValueError.
    """
    toks = parse_joda_pattern(pattern) if isinstance(pattern, str) else pattern
    n = len(millis)
    valid = pc.drop_null(millis)
    if len(valid):
        lo, hi = pc.min(valid).as_py(), pc.max(valid).as_py()
        if lo < _MIN_MILLIS or hi > _MAX_MILLIS:
            raise ValueError(
                f"timestamp value(s) out of the supported range (years 1..9999): {lo}..{hi} ms since epoch; "
                f"check {TS_TYPE} / {TS_SCALAR_TIME_UNIT} (is the column in a different time unit?)"
            )
    ts = pc.cast(pc.cast(millis, pa.int64()), pa.timestamp("ms", tz=zone))
    cache: dict[str, pa.Array] = {}

    def comp(name: str) -> pa.Array:
        if name not in cache:
            if name == "dow":
                cache[name] = pc.day_of_week(ts, count_from_zero=True, week_start=1)
            elif name == "offset":
                local = pc.cast(pc.local_timestamp(ts), pa.int64())
                cache[name] = pc.divide(pc.subtract(local, pc.cast(ts, pa.int64())), 60_000)
            else:
                cache[name] = getattr(pc, name)(ts)
        return cache[name]

    parts: list[pa.Array | str] = []
    for t in toks:
        L, k = t.letter, t.count
        if not L:
            parts.append(t.text)
        elif L in "yYx":
            v = comp("iso_year") if L == "x" else comp("year")
            parts.append(_pad(_mod(pc.abs(v), 100), 2) if k == 2 else _pad(v, k))
        elif L == "C":
            parts.append(_pad(pc.divide(comp("year"), 100), k))
        elif L == "G":
            parts.append(pc.if_else(pc.greater(comp("year"), 0), "AD", "BC"))
        elif L == "w":
            parts.append(_pad(comp("iso_week"), k))
        elif L == "e":
            parts.append(_pad(pc.add(comp("dow"), 1), k))
        elif L == "E":
            names = pa.array(_DAYS if k >= 4 else [d[:3] for d in _DAYS])
            parts.append(pc.take(names, comp("dow")))
        elif L == "D":
            parts.append(_pad(comp("day_of_year"), k))
        elif L == "M":
            if k >= 3:
                names = pa.array(_MONTHS if k >= 4 else [m[:3] for m in _MONTHS])
                parts.append(pc.take(names, pc.subtract(comp("month"), 1)))
            else:
                parts.append(_pad(comp("month"), k))
        elif L == "d":
            parts.append(_pad(comp("day"), k))
        elif L == "H":
            parts.append(_pad(comp("hour"), k))
        elif L == "k":
            h = comp("hour")
            parts.append(_pad(pc.if_else(pc.equal(h, 0), 24, h), k))
        elif L in "hK":
            h12 = _mod(comp("hour"), 12)
            if L == "h":
                h12 = pc.if_else(pc.equal(h12, 0), 12, h12)
            parts.append(_pad(h12, k))
        elif L == "m":
            parts.append(_pad(comp("minute"), k))
        elif L == "s":
            parts.append(_pad(comp("second"), k))
        elif L == "S":
            ms = comp("millisecond")
            v = pc.divide(ms, 10 ** (3 - k)) if k <= 3 else pc.multiply(pc.cast(ms, pa.int64()), 10 ** (k - 3))
            parts.append(_pad(v, k))
        elif L == "a":
            parts.append(pc.if_else(pc.less(comp("hour"), 12), "AM", "PM"))
        elif L == "Z":
            if k >= 3:
                parts.append(zone)
            else:
                off = comp("offset")
                a = pc.abs(off)
                sign = pc.if_else(pc.less(off, 0), "-", "+")
                hh, mm = _pad(pc.divide(a, 60), 2), _pad(_mod(a, 60), 2)
                parts.append(_concat(sign, hh, ":" if k == 2 else "", mm, n=n))
        else:  # "z"
            raise ValueError("the Joda pattern letter 'z' (time zone name) is not supported in date formats")
    return _concat(*parts, n=n)


@dataclass
class _JodaParser:
    """One Joda input format compiled to a regex, with the group -> field mapping."""

    pattern: str
    regex: re.Pattern
    fields: list[_JodaToken] = field(default_factory=list)


def _compile_parser(pattern: str) -> _JodaParser:
    toks = parse_joda_pattern(pattern)
    rx: list[str] = []
    fields: list[_JodaToken] = []
    for i, t in enumerate(toks):
        nxt_numeric = i + 1 < len(toks) and toks[i + 1].letter != "" and toks[i + 1].numeric()
        L, k = t.letter, t.count
        if not L:
            rx.append(re.escape(t.text))
            continue
        fields.append(t)
        if L in "yxY":
            if k == 2:
                rx.append(r"(\d{2})" if nxt_numeric else r"([+-]?\d{1,9})")
            else:
                rx.append(rf"(\d{{1,{k}}})" if nxt_numeric else r"([+-]?\d{1,9})")
        elif L == "M" and k >= 3:
            names = sorted(_MONTHS + [m[:3] for m in _MONTHS], key=len, reverse=True)
            rx.append("(" + "|".join(names) + ")")
        elif L == "E":
            names = sorted(_DAYS + [d[:3] for d in _DAYS], key=len, reverse=True)
            rx.append("(" + "|".join(names) + ")")
        elif L == "a":
            rx.append("(AM|PM)")
        elif L == "G":
            rx.append("(AD|BC)")
        elif L == "S":
            rx.append(rf"(\d{{1,{k}}})" if nxt_numeric else r"(\d{1,9})")
        elif L in "DC":
            rx.append(r"(\d{1,3})")
        elif L == "e":
            rx.append(r"(\d)")
        elif L == "Z":
            rx.append(r"(Z|[+-]\d{2}(?::?\d{2})?)" if k < 3 else r"([A-Za-z][A-Za-z0-9_/+\-]*)")
        elif L == "z":
            raise ValueError("the Joda pattern letter 'z' (time zone name) cannot be parsed; use Z, ZZ or ZZZ")
        else:  # d H h K k m s w
            rx.append(r"(\d{1,2})")
    return _JodaParser(pattern, re.compile("".join(rx), re.IGNORECASE), fields)


def _two_digit_year(yy: int) -> int:
    """Joda ``appendTwoDigitYear(now.year - 30)``: map 00..99 into [pivot-50, pivot+49]."""
    pivot = _dt.date.today().year - 30
    low = pivot - 50
    t = low % 100 if low >= 0 else 99 + ((low + 1) % 100)
    return yy + low + (100 if yy < t else 0) - t


def _parse_one(value: str, parsers: Sequence[_JodaParser], default_zone: str,
               input_zone: Optional[str]) -> tuple[int, str]:
    """Parse like Joda ``parseDateTime`` with ``withZone(inputZone)`` or ``withOffsetParsed()``.

    Returns ``(epoch_millis, zone)`` where zone is what the resulting DateTime carries: the input
    zone when configured, else the parsed offset/zone, else ``default_zone`` (the JVM zone).
    """
    for p in parsers:
        m = p.regex.fullmatch(value)
        if not m:
            continue
        year, month, day, doy = 1970, 1, 1, None
        hour, minute, second, frac = 0, 0, 0, 0
        half: Optional[str] = None
        h12: Optional[int] = None
        bc = False
        zone: Optional[str] = None
        for t, g in zip(p.fields, m.groups()):
            L, k = t.letter, t.count
            if L in "yxY":
                year = _two_digit_year(int(g)) if k == 2 and len(g) == 2 and g[0] not in "+-" else int(g)
            elif L == "M":
                month = int(g) if k <= 2 else next(i + 1 for i, nm in enumerate(_MONTHS)
                                                   if nm.lower().startswith(g.lower()[:3]))
            elif L == "d":
                day = int(g)
            elif L == "D":
                doy = int(g)
            elif L == "H":
                hour = int(g)
            elif L == "k":
                hour = int(g) % 24
            elif L in "hK":
                h12 = int(g) % 12
            elif L == "a":
                half = g.upper()
            elif L == "m":
                minute = int(g)
            elif L == "s":
                second = int(g)
            elif L == "S":
                frac = int(g.ljust(3, "0")[:3])
            elif L == "G":
                bc = g.upper() == "BC"
            elif L == "Z":
                if k >= 3:
                    zone = _arrow_zone(g, "parsed zone id")
                elif g.upper() == "Z":
                    zone = "UTC"
                else:
                    digits = g[1:].replace(":", "")
                    secs = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60
                    zone = _offset_zone(-secs if g[0] == "-" else secs)
            # C, w, e, E carry no information Joda would need here (the date fields win).
        if h12 is not None:
            hour = h12 + (12 if half == "PM" else 0)
        if bc:
            year = 1 - year
        try:
            if doy is not None:
                base = _dt.datetime(year, 1, 1) + _dt.timedelta(days=doy - 1)
                if base.year != year:
                    raise ValueError(f"day of year {doy} out of range")
                local = base.replace(hour=hour, minute=minute, second=second, microsecond=frac * 1000)
            else:
                local = _dt.datetime(year, month, day, hour, minute, second, frac * 1000)
        except ValueError as e:
            raise ValueError(f"cannot parse {value!r} with date format {p.pattern!r}: {e}") from None
        calc_zone = zone or input_zone or default_zone
        tz = _py_zone(calc_zone)
        aware = local.replace(tzinfo=tz)
        # Joda rejects local times in a DST gap ("Illegal instant due to time zone offset transition").
        if aware.astimezone(_dt.timezone.utc).astimezone(tz).replace(tzinfo=None) != local:
            raise ValueError(f"{value!r} is not a valid local time in {calc_zone} (daylight saving gap)")
        millis = (aware - _EPOCH) // _dt.timedelta(milliseconds=1)
        result_zone = input_zone or zone or default_zone
        return millis, result_zone
    formats = ", ".join(repr(p.pattern) for p in parsers)
    raise ValueError(f"cannot parse partition value {value!r} with the input date format(s) {formats} "
                     f"({TS_INPUT_DATEFORMAT})")


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
