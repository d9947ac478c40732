"""Variable-length integers and the two protobuf messages of an HFile.

HFiles mix two integer encodings: protobuf base-128 varints (trailer, file info) and Hadoop's
``WritableUtils`` VLong (index key lengths, the per-cell MVCC timestamp). Only the handful of
protobuf features the trailer and file info use are implemented: varint (wire type 0) and
length-delimited (wire type 2) fields; fixed-width fields are skipped when reading.
"""

from __future__ import annotations

from .errors import HFileError

__all__ = [
    "read_uvarint", "write_uvarint", "parse_message", "field_varint", "field_bytes",
    "read_vlong", "write_vlong", "vlong_size",
]

_U64 = (1 << 64) - 1


def read_uvarint(buf: bytes | memoryview, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode a protobuf varint at ``pos``; returns ``(value, next position)``."""
    end = len(buf) if end is None else end
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise HFileError("truncated protobuf varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise HFileError("protobuf varint longer than 10 bytes")


def write_uvarint(value: int) -> bytes:
    """Encode ``value`` as a protobuf varint; negative numbers as 64-bit two's complement, the
    way Java writes a ``long`` such as ``-1`` into a ``uint64`` field."""
    value &= _U64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def parse_message(buf: bytes | memoryview) -> list[tuple[int, int | bytes]]:
    """Fields of a protobuf message in wire order as ``(number, value)``; varints as ints,
    length-delimited fields as bytes. Fixed 32/64-bit fields are skipped."""
    fields: list[tuple[int, int | bytes]] = []
    pos = 0
    end = len(buf)
    while pos < end:
        tag, pos = read_uvarint(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise HFileError("protobuf field number 0")
        if wire == 0:
            value, pos = read_uvarint(buf, pos, end)
            fields.append((number, value))
        elif wire == 2:
            length, pos = read_uvarint(buf, pos, end)
            if length > end - pos:
                raise HFileError(f"protobuf field {number} runs past the end of its message")
            fields.append((number, bytes(buf[pos:pos + length])))
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise HFileError(f"unsupported protobuf wire type {wire} (field {number})")
        if pos > end:
            raise HFileError(f"protobuf field {number} runs past the end of its message")
    return fields


def field_varint(number: int, value: int) -> bytes:
    """A varint field (wire type 0)."""
    return write_uvarint(number << 3) + write_uvarint(value)


def field_bytes(number: int, data: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return write_uvarint((number << 3) | 2) + write_uvarint(len(data)) + data


def vlong_size(first: int) -> int:
    """Total size of a Hadoop VLong from its first (unsigned) byte."""
    b = first - 256 if first >= 128 else first
    if b >= -112:
        return 1
    if b < -120:
        return -119 - b
    return -111 - b


def read_vlong(buf: bytes | memoryview, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode a Hadoop ``WritableUtils`` VLong at ``pos``; returns ``(value, next position)``."""
    end = len(buf) if end is None else end
    if pos >= end:
        raise HFileError("truncated variable-length integer")
    first = buf[pos]
    size = vlong_size(first)
    if size == 1:
        return (first - 256 if first >= 128 else first), pos + 1
    if pos + size > end:
        raise HFileError("truncated variable-length integer")
    value = int.from_bytes(bytes(buf[pos + 1:pos + size]), "big")
    if first - 256 < -120:  # negative numbers are stored complemented
        value = ~value
    return value, pos + size


def write_vlong(value: int) -> bytes:
    """Encode ``value`` as a Hadoop ``WritableUtils`` VLong (also what ``writeVInt`` writes)."""
    if -112 <= value <= 127:
        return bytes([value & 0xFF])
    length = -112
    if value < 0:
        value = ~value
        length = -120
    tmp = value
    while tmp:
        tmp >>= 8
        length -= 1
    nbytes = -(length + 120) if length < -120 else -(length + 112)
    return bytes([length & 0xFF]) + value.to_bytes(nbytes, "big")
