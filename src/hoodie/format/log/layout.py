"""The layout of Hudi log files (log format version 1, block content version 3): the magic and
versions, block types and header keys, the errors a malformed block raises, the Avro schema of delete
blocks (with Hudi's ordering-value wrappers), and the event time a block carries in its SCHEMA header.

Reference: ``hudi-v6-format.md`` §3.6. A log file is a sequence of blocks::

    MAGIC "#HUDI#" | int64 blockLength | int32 logFormatVersion=1 | int32 blockType
    | header (int32 n, n x {int32 key, int32 len, utf-8}) | int64 contentLength | content
    | footer (same encoding, always empty) | int64 reversePointer = blockLength + 6

All integers are big-endian. Reading is :mod:`hoodie.format.log.logformat`, writing
:mod:`hoodie.format.log.encode`; ``logformat`` re-exports this module's names.

Event time: min/max event time of a block ride inside the SCHEMA header as two extra attributes
of the top-level Avro record (see ``docs/log-block-event-time.md``), because Hudi readers reject
unknown header keys.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa

from hoodie.errors import HoodieError
from hoodie.format.avro.schema import schema_to_json


MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
DATA_BLOCK_CONTENT_VERSION = 3
DELETE_BLOCK_CONTENT_VERSION = 3
ROLLBACK_COMMAND = "0"  # HoodieCommandBlock.HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK ordinal

EVENT_TIME_MIN_KEY = "hoodie.event.time.min"
EVENT_TIME_MAX_KEY = "hoodie.event.time.max"


class BlockType(IntEnum):
    """``HoodieLogBlock.HoodieLogBlockType`` ordinals."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    """``HoodieLogBlock.HeaderMetadataType`` ordinals valid for table version 6."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6


class CorruptLogBlockWarning(UserWarning):
    """A log file region could not be parsed as a block and was skipped."""


class LogFormatError(HoodieError, ValueError):
    """A well-framed block whose content this library cannot read (e.g. Kryo delete blocks)."""


# ----------------------------------------------------------------------------------------------
# delete block schema (HoodieDeleteRecordList.avsc of 0.14/0.15, wrappers from HoodieMetadata.avsc)
# ----------------------------------------------------------------------------------------------
def _wrapper(name: str, value_type: Any) -> dict:
    return {
        "type": "record",
        "name": name,
        "namespace": "org.apache.hudi.avro.model",
        "fields": [{"name": "value", "type": value_type}],
    }


# Union branch i (1-based after "null") -> (wrapper name, Avro value type, Arrow type of the value).
# DateWrapper and TimestampMicrosWrapper carry plain int/long in Hudi's schema (the logical types
# are commented out there); values are still days / micros since the epoch.
ORDERING_WRAPPERS: list[tuple[str, Any, pa.DataType]] = [
    ("BooleanWrapper", "boolean", pa.bool_()),
    ("IntWrapper", "int", pa.int32()),
    ("LongWrapper", "long", pa.int64()),
    ("FloatWrapper", "float", pa.float32()),
    ("DoubleWrapper", "double", pa.float64()),
    ("BytesWrapper", "bytes", pa.binary()),
    ("StringWrapper", "string", pa.string()),
    ("DateWrapper", "int", pa.date32()),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
     pa.decimal128(30, 15)),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
    ("TimestampMicrosWrapper", "long", pa.timestamp("us", tz="UTC")),
]
_WRAPPER_INDEX = {f"org.apache.hudi.avro.model.{name}": i + 1 for i, (name, _, _) in enumerate(ORDERING_WRAPPERS)}

DELETE_RECORD_LIST_SCHEMA: dict = {
    "type": "record",
    "name": "HoodieDeleteRecordList",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [{
        "name": "deleteRecordList",
        "type": {
            "type": "array",
            "items": {
                "type": "record",
                "name": "HoodieDeleteRecord",
                "fields": [
                    {"name": "recordKey", "type": ["null", "string"], "default": None},
                    {"name": "partitionPath", "type": ["null", "string"], "default": None},
                    {"name": "orderingVal",
                     "type": ["null"] + [_wrapper(n, t) for n, t, _ in ORDERING_WRAPPERS],
                     "default": None},
                ],
            },
        },
    }],
}


def _strip_logical_types(t: Any) -> Any:
    if isinstance(t, list):
        return [_strip_logical_types(x) for x in t]
    if isinstance(t, dict):
        if "logicalType" in t and t.get("type") in ("bytes", "long", "int"):
            return t["type"]
        return {k: _strip_logical_types(v) for k, v in t.items()}
    return t


# fastavro gets the schema without logical types: decimals stay bytes (decoded Java-style below)
_DELETE_SCHEMA_PARSED = fastavro.parse_schema(_strip_logical_types(DELETE_RECORD_LIST_SCHEMA))
_KEY_SCHEMA = {
    "type": "record", "name": "HoodieDeleteRecordKeys", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "recordKey", "type": ["null", "string"]},
               {"name": "partitionPath", "type": ["null", "string"]}],
}


# ----------------------------------------------------------------------------------------------
# event time inside the SCHEMA header
# ----------------------------------------------------------------------------------------------
def _check_epoch_ms(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer epoch-millisecond value, got {value!r}")
    value = int(value)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"{name} {value} does not fit a long")
    return value


def with_event_time(avro_schema_json: str | dict, min_ms: int, max_ms: int) -> str:
    """Schema JSON with ``hoodie.event.time.min``/``max`` (epoch ms, UTC, JSON integers) set as
    attributes of the top-level record; other content and key order are kept.

    Raises:
        ValueError: if the schema is not a record, the values are not integers or min > max.
    """
    lo = _check_epoch_ms("min_ms", min_ms)
    hi = _check_epoch_ms("max_ms", max_ms)
    if lo > hi:
        raise ValueError(f"event time min {lo} is after max {hi}")
    obj = json.loads(avro_schema_json) if isinstance(avro_schema_json, str) else dict(avro_schema_json)
    if not isinstance(obj, dict) or obj.get("type") not in ("record", "error"):
        raise ValueError("event time can only be attached to a record schema")
    obj[EVENT_TIME_MIN_KEY] = lo
    obj[EVENT_TIME_MAX_KEY] = hi
    return schema_to_json(obj)


def event_time_from_schema(schema_json: str | None) -> tuple[int, int] | None:
    """``(min_ms, max_ms)`` stored by :func:`with_event_time`, or None when absent/unusable."""
    if not schema_json or EVENT_TIME_MIN_KEY not in schema_json:
        return None  # cheap check: most schemas carry no event time, skip the JSON parse
    try:
        obj = json.loads(schema_json)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    lo, hi = obj.get(EVENT_TIME_MIN_KEY), obj.get(EVENT_TIME_MAX_KEY)
    if isinstance(lo, bool) or isinstance(hi, bool) or not isinstance(lo, int) or not isinstance(hi, int):
        return None
    if lo > hi:
        return None
    return lo, hi
