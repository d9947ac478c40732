"""The fixed 4096-byte HFile v3 trailer.

Layout: magic ``TRABLK"$``, a varint-delimited protobuf ``FileTrailerProto``, zero padding, and
the version as the last ``int32``: ``(minor << 24) | major``. HBase 2.x and Hudi 1.0 write
version 3.3, Hudi 1.1's own writer 3.0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .blocks import COMPRESSION_NAMES, GZ, NONE, TRAILER_MAGIC
from .encoding import field_bytes, field_varint, parse_message, read_uvarint, write_uvarint
from .errors import HFileError

__all__ = [
    "TRAILER_SIZE", "HBASE_KV_COMPARATOR", "HOODIE_KV_COMPARATOR", "HFileTrailer",
    "parse_trailer",
]

TRAILER_SIZE = 4096
# What HBase 2 writes for its default CellComparatorImpl (the HBase 1 name, kept for compatibility).
HBASE_KV_COMPARATOR = "org.apache.hadoop.hbase.KeyValue$KVComparator"
# What Hudi's HBase-based writer (0.14 - 1.0) and its 1.1 writer record.
HOODIE_KV_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"

_U64 = 1 << 64


def _signed(value: int) -> int:
    # uint64 fields hold Java longs; -1 (no data blocks) arrives as 2**64 - 1
    return value - _U64 if value >= 1 << 63 else value


@dataclass
class HFileTrailer:
    """The trailer's fields (``FileTrailerProto``); ``None`` where a field is absent."""

    file_info_offset: int = 0
    load_on_open_data_offset: int = 0
    uncompressed_data_index_size: int | None = None
    total_uncompressed_bytes: int | None = None
    data_index_count: int = 0
    meta_index_count: int = 0
    entry_count: int = 0
    num_data_index_levels: int = 1
    first_data_block_offset: int | None = None
    last_data_block_offset: int | None = None
    comparator_class_name: str | None = None
    compression_codec: int = GZ
    encryption_key: bytes | None = None
    major_version: int = 3
    minor_version: int = 3
    unknown_fields: list[tuple[int, int | bytes]] = field(default_factory=list)

    @property
    def compression_name(self) -> str:
        """The codec's HBase name (``GZ``, ``NONE``, ...)."""
        return COMPRESSION_NAMES.get(self.compression_codec, f"unknown codec id {self.compression_codec}")

    def serialize(self) -> bytes:
        """The 4096 trailer bytes, fields in number order as protobuf-java writes them."""
        parts = [
            field_varint(1, self.file_info_offset),
            field_varint(2, self.load_on_open_data_offset),
        ]
        if self.uncompressed_data_index_size is not None:
            parts.append(field_varint(3, self.uncompressed_data_index_size))
        if self.total_uncompressed_bytes is not None:
            parts.append(field_varint(4, self.total_uncompressed_bytes))
        parts += [
            field_varint(5, self.data_index_count),
            field_varint(6, self.meta_index_count),
            field_varint(7, self.entry_count),
            field_varint(8, self.num_data_index_levels),
        ]
        if self.first_data_block_offset is not None:
            parts.append(field_varint(9, self.first_data_block_offset))
        if self.last_data_block_offset is not None:
            parts.append(field_varint(10, self.last_data_block_offset))
        if self.comparator_class_name is not None:
            parts.append(field_bytes(11, self.comparator_class_name.encode()))
        parts.append(field_varint(12, self.compression_codec))
        if self.encryption_key is not None:
            parts.append(field_bytes(13, self.encryption_key))
        body = b"".join(parts)
        out = TRAILER_MAGIC + write_uvarint(len(body)) + body
        if len(out) > TRAILER_SIZE - 4:
            raise ValueError("trailer fields do not fit in 4096 bytes (comparator name too long?)")
        version = ((self.minor_version & 0xFF) << 24) | (self.major_version & 0xFFFFFF)
        return out + bytes(TRAILER_SIZE - 4 - len(out)) + version.to_bytes(4, "big")


def parse_trailer(buf: bytes) -> HFileTrailer:
    """Parse the last 4096 bytes of an HFile; only version 3 is accepted."""
    if len(buf) != TRAILER_SIZE:
        raise HFileError(f"trailer needs {TRAILER_SIZE} bytes, got {len(buf)}")
    if buf[:8] != TRAILER_MAGIC:
        raise HFileError(f"bad trailer magic {bytes(buf[:8])!r} (not an HFile, or truncated)")
    version = int.from_bytes(buf[-4:], "big")
    major, minor = version & 0xFFFFFF, version >> 24
    if major != 3:
        raise HFileError(f"unsupported HFile version {major}.{minor} (only version 3 is supported)")
    end = TRAILER_SIZE - 4
    length, pos = read_uvarint(buf, 8, end)
    if pos + length > end:
        raise HFileError(f"trailer message of {length} bytes does not fit in the trailer")
    # absent fields keep protobuf's defaults; HBase's default codec is NONE
    t = HFileTrailer(major_version=major, minor_version=minor, compression_codec=NONE)
    ints = {1: "file_info_offset", 2: "load_on_open_data_offset", 3: "uncompressed_data_index_size",
            4: "total_uncompressed_bytes", 5: "data_index_count", 6: "meta_index_count",
            7: "entry_count", 8: "num_data_index_levels", 9: "first_data_block_offset",
            10: "last_data_block_offset", 12: "compression_codec"}
    for number, value in parse_message(buf[pos:pos + length]):
        name = ints.get(number)
        if name is not None:
            if not isinstance(value, int):
                raise HFileError(f"trailer field {number} ({name}) is not an integer")
            setattr(t, name, _signed(value))
        elif number == 11:
            if not isinstance(value, bytes):
                raise HFileError("trailer comparator class name is not a string")
            t.comparator_class_name = value.decode("utf-8", errors="replace")
        elif number == 13:
            t.encryption_key = value if isinstance(value, bytes) else None
        else:
            t.unknown_fields.append((number, value))
    return t
