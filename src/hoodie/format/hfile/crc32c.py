"""CRC32C (Castagnoli), the checksum HBase writes after every HFile block (checksum type 2).

No CRC32C library is a dependency, so this is table-driven. A byte-at-a-time Python loop runs at
about 10 MB/s, far too slow for megabyte blocks, so larger inputs are vectorised with numpy:

* a chunk is cut into ``L`` equal *lanes* (zero-padded at the front, which leaves a CRC register
  that starts at zero unchanged) and all lanes of all chunks advance one byte per numpy step;
* each lane's register is then moved to the end of the chunk ("shifted by the zero bytes that
  follow it", a linear map precomputed as four 256-entry tables per lane) and the lanes are
  XOR-ed together; CRCs are linear over GF(2), so that equals the CRC of the whole chunk;
* the standard initial value ``0xFFFFFFFF`` is folded in by complementing the first four data
  bytes, which for a reflected CRC is the same as starting the register at all ones.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["crc32c", "crc32c_chunks"]

_POLY = 0x82F63B78  # CRC32C, reflected


def _make_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE: list[int] = _make_table()
_NP_TABLE = np.array(_TABLE, dtype=np.uint32)

# Below this many bytes in a call the numpy set-up costs more than the plain loop.
_SMALL = 1024
# Bytes each lane covers: few numpy steps per chunk, more lanes advancing in each step.
_WIDTH = 16
_MAX_LANES = 1024


def _crc32c_py(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """Byte-at-a-time CRC32C; ``crc`` continues a previous result."""
    table = _TABLE
    c = crc ^ 0xFFFFFFFF
    for b in bytes(data):
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


@lru_cache(maxsize=32)
def _lane_tables(lanes: int, width: int) -> np.ndarray:
    """``Z[i, j, v]``: the register ``v << 8j`` of lane ``i`` moved past ``(lanes-1-i)*width``
    zero bytes. Shape ``(lanes, 4, 256)``."""
    vals = (np.arange(256, dtype=np.uint32)[None, :] << (8 * np.arange(4, dtype=np.uint32))[:, None])
    # shift-by-`width`-zero-bytes operator, as four 256-entry tables
    op = vals.copy()
    for _ in range(width):
        op = _NP_TABLE[op & 0xFF] ^ (op >> 8)
    out = np.empty((lanes, 4, 256), dtype=np.uint32)
    cur = vals
    for i in range(lanes - 1, -1, -1):
        out[i] = cur
        cur = op[0][cur & 0xFF] ^ op[1][(cur >> 8) & 0xFF] ^ op[2][(cur >> 16) & 0xFF] ^ op[3][cur >> 24]
    return out


def crc32c_chunks(data: bytes | bytearray | memoryview, chunk_size: int) -> list[int]:
    """CRC32C of each consecutive ``chunk_size`` piece of ``data`` (the last may be shorter).

    This is exactly the list of checksums HBase stores after a block, computed over the block
    header plus its on-disk payload.
    """
    if chunk_size <= 0:
        raise ValueError(f"chunk size must be positive, got {chunk_size}")
    mv = memoryview(data).cast("B")
    n = len(mv)
    if n == 0:
        return []
    if n < _SMALL or chunk_size < 64:
        return [_crc32c_py(mv[i:i + chunk_size]) for i in range(0, n, chunk_size)]
    nchunks = -(-n // chunk_size)
    longest = min(chunk_size, n)
    # Power-of-two lane counts keep the number of distinct lane tables (cached) small.
    nlanes = min(_MAX_LANES, 1 << max(0, (-(-longest // _WIDTH) - 1).bit_length()))
    width = max(_WIDTH, -(-longest // nlanes))  # bytes per lane
    span = width * nlanes
    buf = np.zeros((nchunks, span), dtype=np.uint8)
    arr = np.frombuffer(mv, dtype=np.uint8)
    full = n // chunk_size
    if full:
        buf[:full, span - chunk_size:] = arr[:full * chunk_size].reshape(full, chunk_size)
    lengths = [chunk_size] * full
    rest = n - full * chunk_size
    if rest:
        buf[full, span - rest:] = arr[full * chunk_size:]
        lengths.append(rest)
    short = [i for i, ln in enumerate(lengths) if ln < 4]
    for i, ln in enumerate(lengths):
        if ln >= 4:
            buf[i, span - ln:span - ln + 4] ^= 0xFF
    # column j of every lane of every chunk, contiguous: one numpy step per byte position
    cols = np.ascontiguousarray(buf.reshape(nchunks * nlanes, width).T).astype(np.uint32)
    reg = np.zeros(nchunks * nlanes, dtype=np.uint32)
    idx = np.empty_like(reg)
    tmp = np.empty_like(reg)
    table = _NP_TABLE
    for j in range(width):
        np.bitwise_xor(reg, cols[j], out=idx)
        idx &= 0xFF
        np.take(table, idx, out=tmp)
        reg >>= 8
        reg ^= tmp
    z = _lane_tables(nlanes, width)
    reg = reg.reshape(nchunks, nlanes)
    lane = np.arange(nlanes)[None, :]
    moved = (z[lane, 0, reg & 0xFF] ^ z[lane, 1, (reg >> 8) & 0xFF]
             ^ z[lane, 2, (reg >> 16) & 0xFF] ^ z[lane, 3, reg >> 24])
    crcs = np.bitwise_xor.reduce(moved, axis=1) ^ np.uint32(0xFFFFFFFF)
    out = [int(c) for c in crcs]
    for i in short:  # under four bytes the complement trick does not apply
        out[i] = _crc32c_py(mv[i * chunk_size:i * chunk_size + lengths[i]])
    return out


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC32C of ``data`` (the iSCSI / Castagnoli checksum; ``crc32c(b"123456789") == 0xE3069283``)."""
    n = len(memoryview(data).cast("B"))
    if n < _SMALL:
        return _crc32c_py(data)
    return crc32c_chunks(data, n)[0]
