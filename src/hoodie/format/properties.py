"""Java ``.properties`` files: ``hoodie.properties`` and ``.hoodie_partition_metadata``.

Reference: ``hudi-v6-format.md`` §3.1. ``hoodie.table.checksum`` is the CRC32 of
``"<database>.<table>"`` and is always written as the last entry.
"""

from __future__ import annotations

import datetime as _dt
import re
import zlib
from typing import Iterable, Mapping

CHECKSUM_KEY = "hoodie.table.checksum"
_SEPARATOR = re.compile(r"[=: \t]")


def _unescape(s: str) -> str:
    if "\\" not in s:  # the common case: nothing to unescape (a table is opened often)
        return s
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and i + 5 < len(s):
                out.append(chr(int(s[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    text = "".join(out)
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        # Java escapes a character beyond U+FFFF as its UTF-16 surrogate pair (two 4-digit \u escapes): join them.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _escape(s: str, is_key: bool) -> str:
    out: list[str] = []
    for i, c in enumerate(s):
        if c == " " and (i == 0 or is_key):
            out.append("\\ ")
        elif c in "\\:=#!":
            out.append("\\" + c)
        elif c == "\t":
            out.append("\\t")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\f":
            out.append("\\f")
        elif ord(c) > 0xFFFF:
            # A Java \u escape (four hex digits) holds one UTF-16 unit: beyond the BMP, write the surrogate pair.
            hi, lo = divmod(ord(c) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + hi:04X}\\u{0xDC00 + lo:04X}")
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java properties text (comments, escapes, line continuations)."""
    props: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip()
        i += 1
        if not line or line[0] in "#!":
            continue
        # Line continuation: an odd number of trailing backslashes.
        while line.endswith("\\") and (len(line) - len(line.rstrip("\\"))) % 2 == 1 and i < len(lines):
            line = line[:-1] + lines[i].lstrip()
            i += 1
        # Find the first unescaped separator (=, : or whitespace).
        j = 0
        if "\\" not in line:
            m = _SEPARATOR.search(line)
            j = m.start() if m else len(line)
        while j < len(line):
            if line[j] == "\\":
                j += 2
                continue
            if line[j] in "=: \t":
                break
            j += 1
        key = line[:j]
        # Whitespace, then at most one '=' or ':', then whitespace separate key and value.
        rest = line[j:].lstrip(" \t")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t")
        props[_unescape(key)] = _unescape(rest)
    return props


def format_properties(props: Mapping[str, str], comment: str | None = None, last_keys: Iterable[str] = ()) -> str:
    """Render properties as Java would store them; ``last_keys`` go at the end, in order."""
    last = [k for k in last_keys if k in props]
    lines = []
    if comment:
        lines.append("#" + comment)
    lines.append("#" + _dt.datetime.now(_dt.timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y"))
    for k in sorted(k for k in props if k not in last):
        lines.append(f"{_escape(k, True)}={_escape(str(props[k]), False)}")
    for k in last:
        lines.append(f"{_escape(k, True)}={_escape(str(props[k]), False)}")
    return "\n".join(lines) + "\n"


def table_checksum(table_name: str, database: str | None = None) -> str:
    """CRC32 of ``"<database>.<table>"`` as an unsigned decimal string."""
    return str(zlib.crc32(f"{database or ''}.{table_name}".encode("utf-8")) & 0xFFFFFFFF)


def format_table_properties(props: Mapping[str, str]) -> str:
    """Render ``hoodie.properties`` with a fresh checksum as the last line."""
    p = dict(props)
    if "hoodie.table.name" not in p:
        raise ValueError("hoodie.properties needs hoodie.table.name")
    p[CHECKSUM_KEY] = table_checksum(p["hoodie.table.name"], p.get("hoodie.database.name"))
    now = _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return format_properties(p, comment=f"Properties saved on {now}", last_keys=[CHECKSUM_KEY])


def validate_checksum(props: Mapping[str, str]) -> bool:
    """Whether the stored checksum matches the table and database names."""
    if CHECKSUM_KEY not in props or "hoodie.table.name" not in props:
        return False
    return props[CHECKSUM_KEY] == table_checksum(props["hoodie.table.name"], props.get("hoodie.database.name"))
