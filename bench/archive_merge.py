"""Benchmark (issue 33): loading the archived timeline of a version 6 table with many archive files, before
and after merging them (``hoodie.archive.merge.enable``, Hudi's defaults: batch size 10, small-file limit
20 MiB).

A small merge-on-read table archived after each commit gives real archive files (Hudi's
``HoodieArchivedMetaEntry`` records of deltacommits, compactions and cleans, as hoodie's archival writes
them). Their blocks are then copied, with fresh instant times, into ``--files`` archive files (one per
simulated archival: what a table archiving after every commit for years accumulates). Timed, median of
``--repeat`` runs, wall and this process's CPU time: ``load_archived`` (list and read every archive file)
with ``--files`` files (the instants and their entries, as every reader of the archived timeline loads
them); one merge with Hudi's defaults (every file is small, so all are merged into one);
``load_archived`` again. The archived instants and their commit metadata are checked equal before and after.
Locally, also the next merge with the defaults (the merged file and 10 more small files): copying the merged
file's full blocks as they are, against decoding and re-encoding every record on an identical copy.

    python bench/archive_merge.py [--files 1000] [--repeat 5] [--s3]

``--s3``: the archive files live in an S3 bucket served by moto on 127.0.0.1 (started and stopped here),
so that each file costs a request as on an object store (loopback: no network latency, so a lower bound).

Prints one JSON document.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pyarrow as pa  # noqa: E402

from hoodie import write_arrow  # noqa: E402
from hoodie.format.storage import Storage  # noqa: E402
from hoodie.format.timeline import archive_v1 as A1  # noqa: E402
from hoodie.services.archive import merge as M  # noqa: E402
from hoodie.services.archive.config import ArchivalConfig  # noqa: E402
from tests.s3 import moto_server  # noqa: E402  (one moto starter for tests and benchmarks)

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "6",
        "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3",
        "hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4",
        "hoodie.archive.automatic": "true"}


def _timed(fn, repeat: int) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def _view(storage: Storage) -> tuple[list, dict]:
    tl = A1.load_archived(storage, 1)
    metas = {i.timestamp: repr(tl.commit_metadata(i.timestamp)) for i in tl.instants}
    return [(i.timestamp, i.action) for i in tl.instants], metas


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--s3", action="store_true", help="archive files in a moto S3 bucket on 127.0.0.1")
    args = p.parse_args(argv)
    root = tempfile.mkdtemp(prefix="hoodie-archive-merge-")
    moto = contextlib.ExitStack()
    try:
        src = os.path.join(root, "src")
        for n in range(20):
            keys = [f"k{(n + i) % 8}" for i in range(4)]
            write_arrow(src, pa.table({"k": keys, "part": ["p1"] * 4, "ts": pa.array([n] * 4, pa.int64()),
                                       "v": pa.array(range(4), pa.int64())}), OPTS)
        s_src = Storage(src)
        # The real archive files' blocks (one archival's worth each), reused round robin.
        samples = [A1.read_archive_blocks(s_src, rel) for rel in A1.archive_files(s_src)]
        if args.s3:
            opts = moto.enter_context(moto_server("bench"))
            storage = Storage("s3://bench/t", opts)
        else:
            storage = Storage(os.path.join(root, "t"))
        storage.mkdirs(A1.ARCHIVE_FOLDER)
        n = 0
        for f in range(args.files):
            blocks = []
            for schema_json, records in samples[f % len(samples)]:
                out = []
                for r in records:
                    r = dict(r)
                    # One fresh time per (original time): keep an instant's requested/inflight/completed together.
                    r["commitTime"] = f"2020{f:06d}{r['commitTime'][-7:]}"
                    out.append(r)
                    n += 1
                blocks.append(A1.encode_archive_block(out, schema_json))
            storage.create_new(f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(f + 1)}", b"".join(blocks))
        size_before = sum(x.size for x in M.list_archive_files(storage))
        before = _view(storage)
        before_wall, before_cpu, _ = _timed(lambda: A1.load_archived(storage, 1), args.repeat)
        cfg = ArchivalConfig.from_options({"hoodie.archive.merge.enable": "true"})
        w, c = time.perf_counter(), time.process_time()
        res = M.merge_archive_files_if_necessary(storage, batch_size=cfg.merge_files_batch_size,
                                                 small_file_limit_bytes=cfg.merge_small_file_limit_bytes,
                                                 records_per_block=cfg.batch)
        merge_wall, merge_cpu = time.perf_counter() - w, time.process_time() - c
        after_files = M.list_archive_files(storage)
        after_wall, after_cpu, _ = _timed(lambda: A1.load_archived(storage, 1), args.repeat)
        after = _view(storage)
        assert res is not None and len(res.candidates) == args.files and len(after_files) == 1
        assert after == before, "the archived timeline changed in the merge"
        remerge = {}
        if not args.s3:
            # The next merge with the defaults: 10 more archivals' files and the merged file, all small. The
            # merged file's full blocks are copied as they are; "decode all" is the same merge decoding and
            # re-encoding every record (what every merge did before), on an identical copy of the folder.
            for f in range(args.files, args.files + cfg.merge_files_batch_size):
                schema_json, records = samples[f % len(samples)][0]
                out = [dict(r, commitTime=f"2020{f:06d}{r['commitTime'][-7:]}") for r in records]
                storage.create_new(f"{A1.ARCHIVE_FOLDER}/{A1.archive_file_name(f + 2)}",
                                   A1.encode_archive_block(out, schema_json))
            twin = Storage(os.path.join(root, "twin"))
            shutil.copytree(storage.full(A1.ARCHIVE_FOLDER), twin.full(A1.ARCHIVE_FOLDER))
            for name, st_, per_block in (("copy_full_blocks", storage, cfg.batch), ("decode_all", twin, 10 ** 9)):
                w, c = time.perf_counter(), time.process_time()
                r2 = M.merge_archive_files_if_necessary(st_, batch_size=cfg.merge_files_batch_size,
                                                        small_file_limit_bytes=cfg.merge_small_file_limit_bytes,
                                                        records_per_block=per_block)
                remerge[name] = {"wall": round(time.perf_counter() - w, 4), "cpu": round(time.process_time() - c, 4)}
                assert r2 is not None and len(r2.candidates) == cfg.merge_files_batch_size + 1
            assert _view(storage) == _view(twin), "the two re-merges disagree"
        print(json.dumps({
            "storage": "s3 (moto, loopback)" if args.s3 else "local file system", "archive_files_before": args.files, "entries": n, "archived_instants": len(before[0]),
            "bytes_before": size_before, "bytes_after": after_files[0].size,
            "load_before_s": {"wall": round(before_wall, 4), "cpu": round(before_cpu, 4)},
            "merge_s": {"wall": round(merge_wall, 4), "cpu": round(merge_cpu, 4)},
            "load_after_s": {"wall": round(after_wall, 4), "cpu": round(after_cpu, 4)},
            "ratio_before_over_after": {"wall": round(before_wall / after_wall, 2),
                                        "cpu": round(before_cpu / after_cpu, 2)},
            "next_merge_s (merged file + 10 small files)": remerge,
        }, indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)
        moto.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
