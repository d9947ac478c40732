"""The metadata table's ``record_index`` partition: record key -> (partition, file id, instant).

What Java writes (``HoodieMetadataPayload.createRecordIndexUpdate``/``createRecordIndexDelete``,
``HoodieRecordIndexInfo``; checked against the Java-written v8/v9 fixtures by
``tests/format/test_record_index.py``):

* **key** = the record key itself; **file group** = ``mapRecordKeyToFileGroupIndex(key, N)`` (Java's
  ``String.hashCode``, as for column_stats), file id ``record-index-<4-digit index>-0``;
* **record** (type 5, ``recordIndexMetadata``): ``partitionName``; the file id, for a
  ``<UUID>-<n>`` file id as ``fileIdHighBits``/``fileIdLowBits`` (the UUID's two big-endian signed
  longs) and ``fileIndex`` n with ``fileIdEncoding`` 0 and ``fileId`` empty, any other file id as
  ``fileId`` with ``fileIdEncoding`` 1; ``instantTime`` the epoch milliseconds of the instant that put
  the key into that file group (in the timeline's time zone); ``position`` null;
* a **delete** is the key in a ``DELETE`` log block (partition path ``record_index``).

A newer record of a key replaces the older one.
"""

from __future__ import annotations

import io
import math
import json
import re
import struct
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

import fastavro

from hoodie.format.metadata.column_stats import file_group_indexes  # the same hash as column_stats
from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError

RECORD_INDEX_PARTITION = "record_index"
FILE_ID_PREFIX = "record-index-"
TYPE_RECORD_INDEX = 5
# Hudi's defaults: hoodie.metadata.record.index.min.filegroup.count / max.filegroup.count /
# max.filegroup.size / growth.factor.
DEFAULT_MIN_FILE_GROUPS = 10
DEFAULT_MAX_FILE_GROUPS = 10000
DEFAULT_MAX_FILE_GROUP_BYTES = 1024 * 1024 * 1024
DEFAULT_GROWTH_FACTOR = 2.0
# Java's estimate of one record's bytes in the partition (RECORD_INDEX_AVERAGE_RECORD_SIZE).
RECORD_BYTES_ESTIMATE = 48

_UUID_FILE_ID = re.compile(r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})-(\d+)$")
_NS = "org.apache.hudi.avro.model."


@dataclass(frozen=True)
class RecordLocation:
    """Where a record key lives: its partition path, file id and the instant (epoch milliseconds) that
    put it into that file group."""

    partition: str
    file_id: str
    instant_ms: int


def file_group_id(index: int) -> str:
    """``record-index-0000-0``-style file id of file group ``index``."""
    return f"{FILE_ID_PREFIX}{index:04d}-0"


def encode_file_id(file_id: str) -> dict[str, Any]:
    """The file-id fields of ``HoodieRecordIndexInfo`` (encoding 0 for ``<UUID>-<n>``, else 1)."""
    m = _UUID_FILE_ID.match(file_id)
    if m and int(m.group(2)) < 2**31:
        hi, lo = struct.unpack(">qq", uuid.UUID(m.group(1)).bytes)
        return {"fileIdHighBits": hi, "fileIdLowBits": lo, "fileIndex": int(m.group(2)), "fileId": "",
                "fileIdEncoding": 0}
    return {"fileIdHighBits": None, "fileIdLowBits": None, "fileIndex": None, "fileId": file_id,
            "fileIdEncoding": 1}


def decode_file_id(info: Mapping[str, Any]) -> str:
    """The file id of a ``HoodieRecordIndexInfo``."""
    if int(info.get("fileIdEncoding") or 0) == 1:
        return str(info.get("fileId") or "")
    raw = struct.pack(">qq", int(info["fileIdHighBits"]), int(info["fileIdLowBits"]))
    return f"{uuid.UUID(bytes=raw)}-{int(info.get('fileIndex') or 0)}"


def record_index_datum(loc: RecordLocation, schema: Any) -> dict[str, Any]:
    """The ``HoodieMetadataRecord`` datum of one location, for the parsed metadata-record ``schema``."""
    info = {"partitionName": loc.partition, **encode_file_id(loc.file_id), "instantTime": loc.instant_ms,
            "position": None}
    fields = _record_index_fields(schema)
    info = {k: v for k, v in info.items() if k in fields}
    return {"key": "", "type": TYPE_RECORD_INDEX, "filesystemMetadata": None, "BloomFilterMetadata": None,
            "ColumnStatsMetadata": None, "recordIndexMetadata": info}


def _record_index_fields(schema: Any) -> set[str]:
    for f in schema["fields"]:
        if f["name"] == "recordIndexMetadata":
            for branch in f["type"]:
                if isinstance(branch, dict):
                    return {x["name"] for x in branch["fields"]}
    raise ValueError("the metadata record schema has no recordIndexMetadata")


# -- a fast codec for the record-index datum ------------------------------------------------------------
# fastavro costs ~90 us per record either way; a record index holds a record per key. The metadata
# record's layout is fixed by its schema: every field before and after ``recordIndexMetadata`` of a
# record-index datum is null (or the empty key and the type), so those bytes are constant and only the
# ``HoodieRecordIndexInfo`` fields (null/int/long/string unions) are coded here. Any other shape (a
# field this codec does not know, a non-null prefix) goes through fastavro: same bytes, same values.

class _Unsupported(Exception):
    pass


def _zz(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_long(buf: bytes, pos: int) -> tuple[int, int]:
    shift = n = 0
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (n >> 1) ^ -(n & 1), pos


def _kind(t: Any) -> str:
    """``int``/``long``/``string`` (``?`` suffix: a union with null first), else unsupported."""
    if isinstance(t, list):
        if len(t) == 2 and t[0] == "null":
            return _kind(t[1]) + "?"
        raise _Unsupported()
    name = t.get("type") if isinstance(t, dict) else t
    if name in ("int", "long", "string"):
        return name
    raise _Unsupported()


class _Codec:
    """Encodes and decodes record-index datums of one metadata-record schema."""

    def __init__(self, schema_json: str) -> None:
        self.parsed = fastavro.parse_schema(json.loads(schema_json))
        raw = json.loads(schema_json)
        prefix, suffix, info, seen = bytearray(), bytearray(), None, False
        for f in raw["fields"]:
            name, t = f["name"], f["type"]
            if name == "recordIndexMetadata":
                if not (isinstance(t, list) and len(t) == 2 and t[0] == "null" and isinstance(t[1], dict)):
                    raise _Unsupported()
                info = [(g["name"], _kind(g["type"])) for g in t[1]["fields"]]
                seen = True
                continue
            out = suffix if seen else prefix
            if name == "key":
                out += _zz(0)  # the empty string
            elif name == "type":
                out += _zz(TYPE_RECORD_INDEX)
            elif isinstance(t, list) and t and t[0] == "null":
                out += _zz(0)  # null branch
            else:
                raise _Unsupported()
        if info is None:
            raise _Unsupported()
        self.prefix, self.suffix, self.info = bytes(prefix), bytes(suffix), info

    def encode(self, fields: Mapping[str, Any]) -> bytes:
        out = bytearray(self.prefix)
        out += _zz(1)
        for name, kind in self.info:
            v = fields.get(name)
            if kind.endswith("?"):
                if v is None:
                    out += _zz(0)
                    continue
                out += _zz(1)
                kind = kind[:-1]
            elif v is None:
                v = 0 if kind != "string" else ""
            if kind == "string":
                b = str(v).encode("utf-8")
                out += _zz(len(b)) + b
            else:
                out += _zz(int(v))
        out += self.suffix
        return bytes(out)

    def decode(self, value: bytes) -> dict[str, Any]:
        if not value.startswith(self.prefix):
            raise _Unsupported()
        pos = len(self.prefix)
        branch, pos = _read_long(value, pos)
        if branch != 1:
            raise _Unsupported()
        out: dict[str, Any] = {}
        for name, kind in self.info:
            if kind.endswith("?"):
                b, pos = _read_long(value, pos)
                if b == 0:
                    out[name] = None
                    continue
                kind = kind[:-1]
            if kind == "string":
                n, pos = _read_long(value, pos)
                out[name] = value[pos:pos + n].decode("utf-8")
                pos += n
            else:
                out[name], pos = _read_long(value, pos)
        if value[pos:] != self.suffix:
            raise _Unsupported()
        return out


_CODECS: dict[str, Optional[_Codec]] = {}


def _codec(schema_json: str) -> Optional[_Codec]:
    if schema_json not in _CODECS:
        try:
            _CODECS[schema_json] = _Codec(schema_json)
        except (_Unsupported, KeyError, TypeError, ValueError):
            _CODECS[schema_json] = None
    return _CODECS[schema_json]


def encode_locations(locations: Mapping[str, RecordLocation], schema_json: str) -> list[tuple[str, bytes]]:
    """(key, Avro value) of each location, sorted by key bytes (HFile order)."""
    codec = _codec(schema_json)
    parsed = codec.parsed if codec is not None else fastavro.parse_schema(json.loads(schema_json))
    out = []
    # A value depends on the location only, and a commit puts many keys in one file group.
    done: dict[RecordLocation, bytes] = {}
    for k in sorted(locations, key=lambda k: k.encode("utf-8")):
        loc = locations[k]
        value = done.get(loc)
        if value is None:
            datum = record_index_datum(loc, parsed)
            if codec is not None:
                value = codec.encode(datum["recordIndexMetadata"])
            else:
                buf = io.BytesIO()
                fastavro.schemaless_writer(buf, parsed, datum)
                value = buf.getvalue()
            done[loc] = value
        out.append((k, value))
    return out


def decode_record_location(key: str, value: bytes, schema_json: str, where: str,
                           cache: Optional[dict[Any, Any]] = None) -> RecordLocation:
    """One record-index cell.

    Raises:
        MetadataTableError: not a record-index record, or undecodable.
    """
    cache = cache if cache is not None else {}
    seen = cache.setdefault(("values", schema_json), {})  # values repeat: one per location
    got = seen.get(value)
    if got is not None:
        return got
    codec = _codec(schema_json)
    if codec is not None:
        try:
            info = codec.decode(value)
            loc = RecordLocation(str(info.get("partitionName") or ""), decode_file_id(info),
                                 int(info.get("instantTime") or 0))
            if len(seen) < 100_000:
                seen[value] = loc
            return loc
        except (_Unsupported, IndexError, KeyError, TypeError, ValueError, UnicodeDecodeError, struct.error):
            pass  # another shape of datum: fastavro below decodes it (or names the problem)
    parsed = cache.get(schema_json)
    try:
        if parsed is None:
            parsed = cache[schema_json] = fastavro.parse_schema(json.loads(schema_json))
        rec = fastavro.schemaless_reader(io.BytesIO(value), parsed, None)
    except Exception as e:  # malformed schemas and datums surface as assorted decoding errors
        raise MetadataTableError(f"{where}: undecodable record-index record {key!r} ({e}). {LIST_THROUGH_STORAGE}") from None
    info = rec.get("recordIndexMetadata")
    if int(rec.get("type") or 0) != TYPE_RECORD_INDEX or not isinstance(info, Mapping):
        raise MetadataTableError(f"{where}: record {key!r} of type {rec.get('type')} in record_index, which holds "
                                 f"record-index records (type 5) only. {LIST_THROUGH_STORAGE}")
    try:
        fid = decode_file_id(info)
    except (KeyError, TypeError, ValueError, struct.error) as e:
        raise MetadataTableError(f"{where}: record-index record {key!r} has no readable file id ({e}). "
                                 f"{LIST_THROUGH_STORAGE}") from None
    return RecordLocation(str(info.get("partitionName") or ""), fid, int(info.get("instantTime") or 0))


def file_group_count(records: int, min_groups: int = DEFAULT_MIN_FILE_GROUPS,
                     max_groups: int = DEFAULT_MAX_FILE_GROUPS, max_bytes: int = DEFAULT_MAX_FILE_GROUP_BYTES,
                     growth: float = DEFAULT_GROWTH_FACTOR) -> int:
    """File groups of a new record_index for ``records`` keys (``estimateFileGroupCount``): enough
    groups that each holds at most ``max_bytes`` after growing by ``growth``, within [min, max]."""
    need = math.ceil(records * RECORD_BYTES_ESTIMATE * growth / max(1, max_bytes))
    return max(min_groups, min(max_groups, need))


def keys_by_group(keys: Iterable[str], count: int) -> dict[int, list[str]]:
    """file-group index -> the keys it holds."""
    keys = list(keys)
    out: dict[int, list[str]] = {}
    for k, g in zip(keys, file_group_indexes(keys, count)):
        out.setdefault(g, []).append(k)
    return out


__all__ = ["RECORD_INDEX_PARTITION", "FILE_ID_PREFIX", "TYPE_RECORD_INDEX", "RecordLocation", "file_group_id",
           "encode_file_id", "decode_file_id", "record_index_datum", "encode_locations", "decode_record_location",
           "file_group_count", "keys_by_group"]
