"""Benchmark: the pure-Python HFile writer and reader (``hoodie.format.hfile``).

Writes one HFile the way Hudi's metadata table does (1 MiB GZ blocks, CRC32C checksums) with
keys shaped like metadata-table keys (partition path + file name) and ~200-byte values, then
times a full scan and random point lookups: one by one in random order on a new reader (each
data block decoded on first use), as one sorted batch with ``get_many``, and again on a reader
whose block cache is warm. Prints entries per second for each; best of ``--repeat`` runs. Run on demand:

    python bench/hfile.py [--entries 100000] [--lookups 1000] [--compression GZ|NONE]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from _common import best_of  # noqa: E402

from hoodie.format.hfile import HFileReader, HFileWriter  # noqa: E402


def make_items(n: int, seed: int = 7) -> list[tuple[bytes, bytes]]:
    """Sorted ``(key, value)`` pairs: ``region=../dt=YYYY-MM-DD/<file group>_<token>_<instant>.parquet``
    keys and 200-byte values that compress like Avro records (half structure, half noise)."""
    rnd = random.Random(seed)
    keys = set()
    while len(keys) < n:
        region = rnd.choice(["us", "eu", "apac", "latam"])
        day = f"2024-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}"
        fg = f"{rnd.getrandbits(128):032x}"
        fg = f"{fg[:8]}-{fg[8:12]}-{fg[12:16]}-{fg[16:20]}-{fg[20:]}-0"
        keys.add(f"region={region}/dt={day}/{fg}_{rnd.randint(0, 99)}-{rnd.randint(0, 999)}-"
                 f"{rnd.randint(0, 9999)}_2024{rnd.randint(10**12, 10**13 - 1)}.parquet".encode())
    items = []
    for k in sorted(keys):
        noise = rnd.randbytes(100)
        items.append((k, b"\x00\x02" + k[:60].ljust(60, b"_") + b"\x02\x08size" + noise + bytes(34)))
    return items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--lookups", type=int, default=1000)
    ap.add_argument("--compression", default="GZ", choices=["GZ", "NONE"])
    ap.add_argument("--block-size", type=int, default=1024 * 1024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    items = make_items(args.entries)
    avg_key = sum(len(k) for k, _ in items) / len(items)
    avg_value = sum(len(v) for _, v in items) / len(items)

    def write() -> bytes:
        w = HFileWriter(io.BytesIO(), block_size=args.block_size, compression=args.compression,
                        schema='{"type":"record","name":"HoodieMetadataRecord"}')
        w.extend(items)
        w.close()
        return w._sink.getvalue()  # type: ignore[union-attr]

    t_write, data = best_of(write, args.repeat)

    def scan() -> int:
        return sum(1 for _ in HFileReader(data, verify_checksums=True))

    t_scan, count = best_of(scan, args.repeat)
    assert count == len(items)

    rnd = random.Random(11)
    probes = [rnd.choice(items) for _ in range(args.lookups)]

    def lookups() -> None:
        r = HFileReader(data)
        for k, v in probes:
            assert r.get(k) == v

    t_get, _ = best_of(lookups, args.repeat)

    def batch() -> None:
        r = HFileReader(data)
        got = r.get_many(k for k, _ in probes)
        assert len(got) == len({k for k, _ in probes})

    t_batch, _ = best_of(batch, args.repeat)
    warm = HFileReader(data)
    for k, _ in probes:
        warm.get(k)

    def warm_lookups() -> None:
        for k, v in probes:
            assert warm.get(k) == v

    t_warm, _ = best_of(warm_lookups, args.repeat)
    reader = HFileReader(data)
    blocks = len(reader.data_blocks())

    print(f"HFile: {len(items):,} entries, keys {avg_key:.0f} B, values {avg_value:.0f} B, "
          f"{args.compression}, {args.block_size:,}-byte blocks -> {len(data) / 2**20:.1f} MiB, "
          f"{blocks} data blocks, {reader.trailer.num_data_index_levels}-level index")
    n = len(items)
    rows = [
        ("write", t_write, n, "entries"),
        ("full scan (checksums verified)", t_scan, n, "entries"),
        (f"{args.lookups} random lookups, new reader", t_get, args.lookups, "lookups"),
        (f"{args.lookups} lookups as one batch (get_many)", t_batch, args.lookups, "lookups"),
        (f"{args.lookups} random lookups, warm cache", t_warm, args.lookups, "lookups"),
    ]
    for label, seconds, count, unit in rows:
        print(f"{label:<38} {seconds:8.3f} s {count / seconds:12,.0f} {unit}/s")

if __name__ == "__main__":
    main()
