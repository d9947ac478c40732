"""Benchmark: what keeping partition_stats and the record index costs a commit, and partition pruning.

Three copy-on-write tables (table version 9) get the same commits, interleaved: ``--commits`` inserts
of ``--rows`` rows into ``--partitions`` day partitions, then ``--upserts`` upserts of ``--upsert-rows``
existing keys. The metadata table keeps (a) column_stats, (b) column_stats and partition_stats,
(c) column_stats, partition_stats and record_index. Reported: the median commit time of each kind of
commit per table, and for a point filter on ``id`` with data skipping the partitions left after
partition_stats pruning (table b) against all partitions.

    python bench/metadata_indexes.py [--partitions 30] [--commits 4] [--rows 50000] [--upserts 3]

``--tagging``: instead, what hoodie.index.type=RECORD_INDEX saves when tagging an upsert. One table of
``--keys`` keys in ``--file-groups`` file groups (``--tagging-partitions`` partitions, default 20, inserted in one
commit, record index on),
copied; upserts of ``--upsert-rows`` random existing keys, alternating on the copies, tag with BLOOM (the
keys of every latest slice of the touched partitions) or RECORD_INDEX (HFile lookups in the record index's
file groups). Reported: the median tagging time (the write's ``index.*`` phases; RECORD_INDEX's includes
listing the touched file groups' partitions), planning time (``plan_write``: tagging, de-duplication,
sizing, both listing alike) and upsert time of each (``BENCH_PHASES=1`` prints each upsert's top phases).

    python bench/metadata_indexes.py --tagging [--keys 200000] [--file-groups 200] [--upsert-rows 1000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pyarrow as pa  # noqa: E402
import random  # noqa: E402

from _common import call_timer, timed  # noqa: E402

import hoodie  # noqa: E402
import hoodie.services.write.execution as write_execution  # noqa: E402
from hoodie import write_arrow  # noqa: E402
from hoodie.format import phases  # noqa: E402
from hoodie.format.slice.reader import plan_read  # noqa: E402
from hoodie.format.table import HoodieTable  # noqa: E402
from hoodie.services.metadata import validate_metadata_table  # noqa: E402

OPTS = {"hoodie.table.name": "mi", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.clean.automatic": "false",
        "hoodie.metadata.enable": "true", "hoodie.parquet.small.file.limit": "0", "hoodie.write.table.version": "9",
        "hoodie.metadata.index.column.stats.enable": "true"}
KINDS = {
    "column_stats": {},
    "+partition_stats": {"hoodie.metadata.index.partition.stats.enable": "true"},
    "+record_index": {"hoodie.metadata.index.partition.stats.enable": "true",
                      "hoodie.metadata.record.index.enable": "true"},
}


def batch(commit: int, rows: int, partitions: int) -> pa.Table:
    """Ids ``commit * rows ...``; ``partitions`` new day partitions per commit, each a block of ids (ids
    grow with time, as event ids do; the partition follows from the id)."""
    start = commit * rows
    first = dt.date(2025, 1, 1)
    per = -(-rows // partitions)
    ids = list(range(start, start + rows))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "day": [(first + dt.timedelta(days=i // per)).isoformat() for i in ids],
                     "ts": pa.array([commit] * rows, pa.int64()),
                     "amount": pa.array([(i * 37) % 1000 / 10 for i in ids], pa.float64())})


def tagging(keys: int, file_groups: int, upsert_rows: int, upserts: int, parts: int = 20) -> None:
    """RECORD_INDEX against BLOOM tagging on one table of many file groups in ``parts`` partitions (module doc)."""
    per_group = max(1, keys // file_groups)
    opts = {**OPTS, "hoodie.metadata.index.column.stats.enable": "false", "hoodie.metadata.record.index.enable": "true",
            "hoodie.copyonwrite.record.size.estimate": "100", "hoodie.parquet.max.file.size": str(100 * per_group)}
    first = dt.date(2025, 1, 1)
    ids = list(range(keys))
    data = pa.table({"id": pa.array(ids, pa.int64()),
                     "day": [(first + dt.timedelta(days=i % parts)).isoformat() for i in ids],
                     "ts": pa.array([0] * keys, pa.int64()),
                     "amount": pa.array([(i * 37) % 1000 / 10 for i in ids], pa.float64())})
    root = tempfile.mkdtemp(prefix="hoodie-tag-")
    try:
        paths = {"BLOOM": os.path.join(root, "bloom"), "RECORD_INDEX": os.path.join(root, "ridx")}
        made, _ = timed(lambda: write_arrow(paths["BLOOM"], data, {**opts, "hoodie.datasource.write.operation": "insert"}))
        shutil.copytree(paths["BLOOM"], paths["RECORD_INDEX"])
        table = HoodieTable(paths["BLOOM"])
        n_groups = len({s.file_id for i in table.timeline.completed_writes()
                        for s in table.timeline.commit_metadata(i).all_write_stats()})
        print(f"table: {keys:,} keys, {n_groups} file groups in {parts} partitions, record index on "
              f"(created in {made:.1f} s); upserts of {upsert_rows:,} random keys (median of {upserts}):")
        rng = random.Random(7)
        tag: dict[str, list[float]] = {k: [] for k in paths}
        plan: dict[str, list[float]] = {k: [] for k in paths}
        total: dict[str, list[float]] = {k: [] for k in paths}
        for u in range(upserts):
            picked = sorted(rng.sample(ids, upsert_rows))
            up = data.take(pa.array(picked)).set_column(2, "ts", pa.array([u + 1] * upsert_rows, pa.int64()))
            for kind, path in paths.items():
                o = {**opts, "hoodie.datasource.write.operation": "upsert", "hoodie.index.type": kind}
                with phases.recording() as prof, call_timer(write_execution, "plan_write") as planned:
                    secs, _ = timed(lambda: write_arrow(path, up, o))
                plan[kind].append(sum(planned))
                spent = prof.as_dict()
                tag[kind].append(sum(v for k, v in spent.items() if k.startswith("index")))
                if os.environ.get("BENCH_PHASES"):
                    print(kind, sorted(spent.items(), key=lambda kv: -kv[1])[:6])
                total[kind].append(secs)
        for kind in paths:
            assert validate_metadata_table(HoodieTable(paths[kind])).equal, kind
        a = hoodie.read_table(paths["BLOOM"]).sort_by("id").select(["id", "day", "ts", "amount"])
        b = hoodie.read_table(paths["RECORD_INDEX"]).sort_by("id").select(["id", "day", "ts", "amount"])
        assert a.equals(b)
        tb, tr = statistics.median(tag["BLOOM"]), statistics.median(tag["RECORD_INDEX"])
        ub, ur = statistics.median(total["BLOOM"]), statistics.median(total["RECORD_INDEX"])
        pb, pr = statistics.median(plan["BLOOM"]), statistics.median(plan["RECORD_INDEX"])
        print(f"  BLOOM         tagging {tb:.3f} s   planning {pb:.3f} s   upsert {ub:.3f} s")
        print(f"  RECORD_INDEX  tagging {tr:.3f} s   planning {pr:.3f} s   upsert {ur:.3f} s")
        print(f"  RECORD_INDEX / BLOOM: tagging {tr / tb:.2f}x, planning {pr / pb:.2f}x, upsert {ur / ub:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tagging", action="store_true", help="RECORD_INDEX against BLOOM tagging (module doc)")
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--file-groups", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=30, help="new day partitions per insert")
    ap.add_argument("--commits", type=int, default=4)
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--upserts", type=int, default=3)
    ap.add_argument("--upsert-rows", type=int, default=1000)
    ap.add_argument("--tagging-partitions", type=int, default=20, help="--tagging: the table's partitions")
    args = ap.parse_args()
    if args.tagging:
        tagging(args.keys, args.file_groups, args.upsert_rows, args.upserts, args.tagging_partitions)
        return
    root = tempfile.mkdtemp(prefix="hoodie-mi-")
    try:
        paths = {k: os.path.join(root, k.strip("+")) for k in KINDS}
        ins: dict[str, list[float]] = {k: [] for k in KINDS}
        ups: dict[str, list[float]] = {k: [] for k in KINDS}
        for c in range(args.commits):
            data = batch(c, args.rows, args.partitions)
            for k, extra in KINDS.items():
                ins[k].append(timed(lambda: write_arrow(paths[k], data, {**OPTS, **extra,
                                                                         "hoodie.datasource.write.operation": "insert"}))[0])
        for u in range(args.upserts):
            full = batch(u % args.commits, args.rows, args.partitions)
            data = full.slice(args.rows // 2, args.upsert_rows).set_column(
                2, "ts", pa.array([100 + u] * args.upsert_rows, pa.int64()))
            for k, extra in KINDS.items():
                ups[k].append(timed(lambda: write_arrow(paths[k], data, {**OPTS, **extra,
                                                                         "hoodie.datasource.write.operation": "upsert"}))[0])
        for k in KINDS:
            assert validate_metadata_table(HoodieTable(paths[k])).equal, k
        total = args.rows * args.commits
        print(f"tables: {total:,} rows, {args.partitions * args.commits} day partitions; inserts of {args.rows:,} rows, upserts of {args.upsert_rows:,} keys (median s):")
        base_i, base_u = statistics.median(ins["column_stats"]), statistics.median(ups["column_stats"])
        for k in KINDS:
            mi, mu = statistics.median(ins[k]), statistics.median(ups[k])
            print(f"  {k:18s} insert {mi:.3f} s ({mi / base_i:.2f}x)   upsert {mu:.3f} s ({mu / base_u:.2f}x)")
        table = HoodieTable(paths["+partition_stats"])
        target = total // 3
        flt = [("id", "=", target)]
        on = {"hoodie.enable.data.skipping": "true"}
        parts_all = {sl.partition for sl in plan_read(table, options={}).slices}
        parts_on = {sl.partition for sl in plan_read(table, filters=flt, options=on).slices}
        got = hoodie.read_table(paths["+partition_stats"], filters=flt, options=on)
        assert got.column("id").to_pylist() == [target]
        print(f"point filter id = {target} with data skipping: {len(parts_on)} of {len(parts_all)} partitions left")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
