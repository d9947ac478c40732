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

from hoodie.format.metadata.column_stats import file_group_index  # the same hash as column_stats
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


def encode_locations(locations: Mapping[str, RecordLocation], schema_json: str) -> list[tuple[str, bytes]]:
    """(key, Avro value) of each location, sorted by key bytes (HFile order)."""
    parsed = fastavro.parse_schema(json.loads(schema_json))
    out = []
    for k in sorted(locations, key=lambda k: k.encode("utf-8")):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record_index_datum(locations[k], parsed))
        out.append((k, buf.getvalue()))
    return out


def decode_record_location(key: str, value: bytes, schema_json: str, where: str,
                           cache: Optional[dict[str, Any]] = None) -> RecordLocation:
    """One record-index cell.

    Raises:
        MetadataTableError: not a record-index record, or undecodable.
    """
    cache = cache if cache is not None else {}
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
    out: dict[int, list[str]] = {}
    for k in keys:
        out.setdefault(file_group_index(k, count), []).append(k)
    return out


__all__ = ["RECORD_INDEX_PARTITION", "FILE_ID_PREFIX", "TYPE_RECORD_INDEX", "RecordLocation", "file_group_id",
           "encode_file_id", "decode_file_id", "record_index_datum", "encode_locations", "decode_record_location",
           "file_group_count", "keys_by_group"]
