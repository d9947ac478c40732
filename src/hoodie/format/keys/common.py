"""Key generation constants and config keys (``KeyGenerator``, ``KeyGenUtils``, ``KeyGeneratorOptions``), and small Arrow helpers shared by the key modules.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.configs import BOOLEAN


# ---------------------------------------------------------------------------------------------
# Constants (KeyGenerator, KeyGenUtils, PartitionPathEncodeUtils)
# ---------------------------------------------------------------------------------------------

DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
RECORD_KEY_PARTS_SEPARATOR = ","
COLUMN_VALUE_SEPARATOR = ":"
PARTITION_PATH_SEPARATOR = "/"

# Write configs (DataSourceWriteOptions / KeyGeneratorOptions / HoodieWriteConfig).
RECORDKEY_FIELD = "hoodie.datasource.write.recordkey.field"
PARTITIONPATH_FIELD = "hoodie.datasource.write.partitionpath.field"
KEYGENERATOR_CLASS = "hoodie.datasource.write.keygenerator.class"
KEYGENERATOR_TYPE = "hoodie.datasource.write.keygenerator.type"
HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_PARTITIONING = "hoodie.datasource.write.partitionpath.urlencode"
CONSISTENT_LOGICAL_TIMESTAMP = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
COMPLEX_KEYGEN_NEW_ENCODING = "hoodie.write.complex.keygen.new.encoding"
# Table configs (hoodie.properties).
TABLE_RECORDKEY_FIELDS = "hoodie.table.recordkey.fields"
TABLE_PARTITION_FIELDS = "hoodie.table.partition.fields"
TABLE_KEYGENERATOR_CLASS = "hoodie.table.keygenerator.class"
TABLE_KEYGENERATOR_TYPE = "hoodie.table.keygenerator.type"
# TimestampKeyGeneratorConfig; each also has a deprecated "hoodie.deltastreamer.keygen.timebased." alias.
TS_PREFIX = "hoodie.keygen.timebased."
_TS_OLD_PREFIX = "hoodie.deltastreamer.keygen.timebased."
TS_TYPE = TS_PREFIX + "timestamp.type"
TS_SCALAR_TIME_UNIT = TS_PREFIX + "timestamp.scalar.time.unit"
TS_INPUT_DATEFORMAT = TS_PREFIX + "input.dateformat"
TS_INPUT_DATEFORMAT_DELIMITER = TS_PREFIX + "input.dateformat.list.delimiter.regex"
TS_INPUT_TIMEZONE = TS_PREFIX + "input.timezone"
TS_OUTPUT_DATEFORMAT = TS_PREFIX + "output.dateformat"
TS_OUTPUT_TIMEZONE = TS_PREFIX + "output.timezone"
TS_TIMEZONE = TS_PREFIX + "timezone"

_PKG = "org.apache.hudi.keygen."
SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM, GLOBAL_DELETE = (
    "SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE")

# Java class (Spark and Avro variants) -> KeyGeneratorType name.
_CLASS_TO_TYPE = {
    "SimpleKeyGenerator": SIMPLE, "SimpleAvroKeyGenerator": SIMPLE,
    "ComplexKeyGenerator": COMPLEX, "ComplexAvroKeyGenerator": COMPLEX,
    "NonpartitionedKeyGenerator": NON_PARTITION, "NonpartitionedAvroKeyGenerator": NON_PARTITION,
    "TimestampBasedKeyGenerator": TIMESTAMP, "TimestampBasedAvroKeyGenerator": TIMESTAMP,
    "CustomKeyGenerator": CUSTOM, "CustomAvroKeyGenerator": CUSTOM,
    "GlobalDeleteKeyGenerator": GLOBAL_DELETE, "GlobalAvroDeleteKeyGenerator": GLOBAL_DELETE,
}
_TYPE_TO_CLASS = {
    SIMPLE: _PKG + "SimpleKeyGenerator",
    COMPLEX: _PKG + "ComplexKeyGenerator",
    NON_PARTITION: _PKG + "NonpartitionedKeyGenerator",
    TIMESTAMP: _PKG + "TimestampBasedKeyGenerator",
    CUSTOM: _PKG + "CustomKeyGenerator",
    GLOBAL_DELETE: _PKG + "GlobalDeleteKeyGenerator",
}

# PartitionPathEncodeUtils.charToEscape: ASCII controls and Hive's special characters.
_ESCAPE_CHARS = frozenset([chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
_ESCAPE_REGEX = "[" + "".join(f"\\x{ord(c):02x}" for c in sorted(_ESCAPE_CHARS)) + "]"


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def _option_bool(config: Mapping[str, str], key: str, default: bool = False) -> bool:
    """A boolean key generator option by hoodie's one boolean rule (``true`` / ``false``, any case;
    unset or blank: ``default``). Java's ``Boolean.parseBoolean`` reads anything else as false, which
    would silently give other partition paths; that is refused, naming the key."""
    value = config.get(key)
    if value is None or str(value).strip() == "":
        return default
    return BOOLEAN.read(key, str(value).strip())


def _split_fields(value: Optional[str]) -> list[str]:
    """Comma-separated field list, trimmed, empties dropped (``KeyGenUtils.getRecordKeyFields``)."""
    if value is None:
        return []
    return [f.strip() for f in str(value).split(",") if f.strip()]


def _as_array(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def _empty_strings(n: int) -> pa.Array:
    return pc.fill_null(pa.nulls(n, pa.string()), "")


def _map_distinct(arr: pa.Array, fn: Callable[[object], Optional[str]]) -> pa.Array:
    """Apply a Python function once per distinct non-null value; nulls stay null."""
    enc = pc.dictionary_encode(arr)
    mapped = pa.array([fn(v) for v in enc.dictionary.to_pylist()], pa.string())
    return pc.take(mapped, enc.indices)


def _concat(*parts: pa.Array | str, n: int) -> pa.Array:
    """Element-wise string concatenation of arrays and literal strings (nulls propagate)."""
    if not any(isinstance(p, (pa.Array, pa.ChunkedArray)) for p in parts):
        return pc.fill_null(pa.nulls(n, pa.string()), "".join(parts))  # type: ignore[arg-type]
    args = [pa.scalar(p, pa.string()) if isinstance(p, str) else p for p in parts]
    if len(args) == 1:
        return args[0]  # type: ignore[return-value]
    return pc.binary_join_element_wise(*args, "")


def _null_or_empty(values: pa.Array) -> pa.Array:
    """Boolean mask without nulls: value is null or the empty string."""
    return pc.fill_null(pc.or_kleene(pc.is_null(values), pc.equal(pc.utf8_length(values), 0)), True)


