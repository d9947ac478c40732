"""Fuzzing the log-block reader: mutated and random log files must yield only our own errors.

Used twice: a short run in CI (``test_logformat_fuzz``) and a long run on demand:

    python -m tests.format.fuzz_logformat --seconds 600
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import warnings
from pathlib import Path

import pyarrow as pa

from hoodie.format.log import logformat as L
from hoodie.format.storage import Storage

SCHEMA = {"type": "record", "name": "r", "namespace": "hoodie.f", "fields": [
    {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
    {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
    {"name": "k", "type": ["null", "long"], "default": None},
    {"name": "v", "type": ["null", "string"], "default": None},
    {"name": "l", "type": ["null", {"type": "array", "items": ["null", "int"]}], "default": None},
]}
ALLOWED = (L.LogFormatError,)


def seed_files() -> list[bytes]:
    t = pa.table({"_hoodie_record_key": ["a", "b", "c"], "_hoodie_commit_time": ["1", "1", "1"],
                  "k": pa.array([1, 2, None], pa.int64()), "v": ["x", None, "zz"],
                  "l": pa.array([[1, None], None, []], pa.list_(pa.int32()))})
    keys = pa.table({"record_key": ["a"], "partition_path": ["p"], "ordering_value": pa.array([3], pa.int64())})
    avro = L.encode_avro_data_block(t, instant="20240101000000000", avro_schema=SCHEMA, event_time_range=(1, 2))
    parquet = L.encode_parquet_data_block(t, instant="20240101000000001", avro_schema=SCHEMA)
    delete = L.encode_delete_block(keys, instant="20240101000000002", avro_schema=SCHEMA)
    cmd = L.encode_command_block("20240101000000003", "20240101000000001")
    return [avro + delete + cmd, parquet + avro, delete, avro]


def mutate(data: bytes, rnd: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rnd.randint(1, 6)):
        op = rnd.random()
        if op < 0.4 and b:
            i = rnd.randrange(len(b))
            b[i] = rnd.randrange(256)
        elif op < 0.55 and b:
            i = rnd.randrange(len(b))
            del b[i:i + rnd.randint(1, 64)]
        elif op < 0.7:
            i = rnd.randrange(len(b) + 1)
            b[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 64)))
        elif op < 0.8 and b:
            b = b[: rnd.randrange(len(b))]
        elif op < 0.9:
            i = rnd.randrange(len(b) + 1)
            b[i:i] = L.MAGIC
        else:
            j = rnd.randrange(max(1, len(b)))
            # Overwrite a length-looking field with an extreme value.
            b[j:j + 8] = rnd.choice([b"\x7f" * 8, b"\x00" * 8, b"\xff" * 8])
    return bytes(b)


def exercise(storage: Storage, name: str) -> int:
    """Read every block and decode its content; return the number of blocks seen."""
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", L.CorruptLogBlockWarning)
        for block in L.read_log_file(storage, name):
            n += 1
            _ = (block.instant_time, block.target_instant_time, block.event_time_range)
            try:
                if block.block_type in (L.BlockType.AVRO_DATA, L.BlockType.PARQUET_DATA):
                    block.data_table()
                elif block.block_type == L.BlockType.DELETE:
                    block.delete_records()
            except ALLOWED:
                pass
    return n


def run(seconds: float, seed: int = 0) -> int:
    """Fuzz for ``seconds``; raises on any exception that is not ours. Returns the case count."""
    rnd = random.Random(seed)
    seeds = seed_files()
    cases = 0
    with tempfile.TemporaryDirectory() as d:
        storage = Storage(d)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            base = rnd.choice(seeds)
            data = mutate(base, rnd) if rnd.random() < 0.9 else bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 300)))
            name = f".f_1.log.{cases + 1}_0-0-0"
            Path(d, name).write_bytes(data)
            try:
                exercise(storage, name)
            except ALLOWED:
                pass
            except Exception as e:
                Path(d, name).unlink()
                raise AssertionError(f"case {cases}: {type(e).__name__}: {e}; input hex {data.hex()[:400]}") from e
            Path(d, name).unlink()
            cases += 1
    return cases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    n = run(a.seconds, a.seed)
    print(f"{n} fuzz cases in {a.seconds:.0f} s: no exception other than LogFormatError")


if __name__ == "__main__":
    main()
