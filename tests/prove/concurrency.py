"""Writers and table services in separate processes on one table (tests/prove/test_concurrency.py).

``python -m tests.prove.concurrency ROLE PATH SEED ROUNDS OUT`` runs one role:

* ``writer``: ROUNDS random inserts, upserts and deletes (``write_arrow``, pure Python); after each,
  holding the table lock, it reads the snapshot and compares it with the model replayed from its own
  writes and the TTL commits on the timeline, in instant order (every change to the table holds the
  table lock, so instant order is the order the changes happened in). Writes its log to OUT.
* ``compactor``: schedules and runs compactions (full or event-time/partial) until the writer's
  done-file appears;
* ``ttl``: partition TTL runs (``KEEP_BY_EVENT_TIME``; the 2020 partitions expire, the 2999 ones never);
* ``cleaner``: cleans with random policies.

Services write what they did to OUT (one JSON document); any exception fails the process.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from hoodie.format.timeline import instant as I
from hoodie.format.lock import table_lock
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from tests.prove.crash_child import batch
from tests.prove.crash_harness import (
    Model, Setup, clean_options, compaction_options, random_rows, snapshot,
)

KEYS = list(range(64))
SETUP = Setup("MERGE_ON_READ", ordering=True, block_format="avro", commits_retained=3)
TTL_OPTIONS = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
               "hoodie.partition.ttl.strategy.days.retain": "30"}
# The writer leaves cleaning to the cleaner process: every process takes its own turn at the lock.
# The writer creates a metadata table on its first write; every process's commits keep it up to date.
WRITE_EXTRA = {"hoodie.clean.automatic": "false", "hoodie.write.lock.wait_time_ms": "120000",
               "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "5"}
SERVICE_LOCK = {"hoodie.write.lock.wait_time_ms": "120000"}


def done_file(path: str) -> Path:
    return Path(path).parent / "writer.done"


def ttl_events(table: HoodieTable) -> list[tuple[str, list[str]]]:
    """(instant, expired partitions) of the completed TTL replacecommits, active and archived (archival
    moves old replacecommits out of the active timeline; the model must still replay them)."""
    from hoodie.format.timeline.archive_v1 import ArchivedTimelineV1
    from hoodie.format.timeline.commit_metadata import CommitMetadata
    from hoodie.services.archive import load_archived_timeline

    metas: dict[str, CommitMetadata] = {}
    archived = load_archived_timeline(table)
    for inst in archived.instants:
        if inst.action != I.REPLACE_COMMIT:
            continue
        if isinstance(archived, ArchivedTimelineV1):
            meta = archived.commit_metadata(inst.timestamp)
        else:
            raw = archived.metadata_bytes(inst.timestamp)
            meta = CommitMetadata.from_json_bytes(raw) if raw else None
        if meta is not None:
            metas[inst.timestamp] = meta
    tl = table.timeline
    for inst in tl.completed().by_actions(I.REPLACE_COMMIT).instants:
        metas[inst.timestamp] = tl.commit_metadata(inst)
    return [(ts, sorted((meta.partition_to_replace_file_ids or {}).keys()))
            for ts, meta in sorted(metas.items()) if meta.operation_type == "DELETE_PARTITION"]


def replay(writes: list[dict[str, Any]], ttls: list[tuple[str, list[str]]]) -> Model:
    """The model after the writes and TTL runs, applied in instant order."""
    model = Model(True)
    events = [(w["instant"], "w", w) for w in writes] + [(t, "t", parts) for t, parts in ttls]
    for _, kind, ev in sorted(events, key=lambda e: e[0]):
        if kind == "w":
            model.apply(ev["kind"], ev["rows"])
        else:
            model.expire(tuple(ev))
    return model


def writer(path: str, rng: random.Random, rounds: int, out: Path) -> None:
    from hoodie import write_arrow

    writes: list[dict[str, Any]] = []
    storage = Storage(path)
    model = Model(True)
    checks = 0
    r = -1
    while len(writes) < rounds:
        r += 1
        kind = "insert" if r == 0 else rng.choice(["upsert", "upsert", "upsert", "insert", "delete"])
        if kind == "insert":
            free = [k for k in KEYS if k not in model.rows]
            keys = rng.sample(free, min(len(free), rng.randint(1, 8))) or [rng.choice(KEYS)]
            if r == 0:
                keys = list(KEYS)
        elif kind == "delete":
            keys = rng.sample(KEYS, rng.randint(1, 4))
        else:
            keys = [rng.choice(KEYS) for _ in range(rng.randint(1, 12))]
        rows = random_rows(rng, keys)
        if kind == "insert":  # Hudi's insert does not de-duplicate against the table: fresh keys only
            rows = [row for row in rows if row[0] not in model.rows] or rows[:0]
            if not rows:
                continue
        instant = write_arrow(path, batch(rows), {**SETUP.write_options(kind), **WRITE_EXTRA})
        writes.append({"instant": instant, "kind": kind, "rows": rows})
        with table_lock(storage, SERVICE_LOCK, "concurrency check"):
            table = HoodieTable(path)
            model = replay(writes, ttl_events(table))
            try:
                got = snapshot(path)
            except FileNotFoundError:
                _dump_state(path, out)
                raise
            keys_seen = [row[0] for row in got]
            if len(keys_seen) != len(set(keys_seen)):
                raise AssertionError(f"round {r}: duplicated keys in the snapshot: {got}")
            if got != model.snapshot():
                raise AssertionError(f"round {r} ({kind} {instant}): snapshot differs from the model\n"
                                     f" got:   {got}\n model: {model.snapshot()}")
            checks += 1
    out.write_text(json.dumps({"writes": writes, "checks": checks}))
    done_file(path).write_text("done")


def _dump_state(path: str, out: Path) -> None:
    """Write what the reader saw when a file it planned was gone (OUT.dump: every file, the metadata
    table's listing and valid instants), for the diagnosis of a failed run."""
    import os
    from hoodie.format.metadata import MetadataTable
    lines = []
    for root, _, files in os.walk(path):
        for f in sorted(files):
            lines.append(os.path.relpath(os.path.join(root, f), path))
    try:
        mt = MetadataTable(HoodieTable(path))
        lines.append("MDT listing: " + json.dumps(mt.listing(), sort_keys=True))
        lines.append("valid: " + json.dumps(sorted(mt.valid_instants())))
    except Exception as e:  # noqa: BLE001
        lines.append(f"MDT error {e!r}")
    Path(str(out) + ".dump").write_text("\n".join(sorted(lines)))


def service(role: str, path: str, rng: random.Random, out: Path) -> None:
    from hoodie.services.clean import run_clean
    from hoodie.services.compaction import run_compaction, schedule_compaction
    from hoodie.services.ttl import run_ttl

    did: dict[str, Any] = {"rounds": 0, "commits": []}
    while True:
        finished = done_file(path).exists()  # one last round after the writer ends
        if Path(path, ".hoodie", "hoodie.properties").exists():
            if role == "compactor":
                opts = {**compaction_options(rng), **SERVICE_LOCK}
                c = schedule_compaction(path, opts)
                for res in run_compaction(path, c, opts) if c else []:
                    did["commits"].append(res.instant)
            elif role == "ttl":
                res = run_ttl(path, {**TTL_OPTIONS, **SERVICE_LOCK})
                if res.instant:
                    did["commits"].append(res.instant)
            elif role == "cleaner":
                res = run_clean(path, {**clean_options(rng), **SERVICE_LOCK})
                if res.instant:
                    did["commits"].append(res.instant)
            did["rounds"] += 1
        if finished and (did["commits"] or did["rounds"] >= 400):
            break
        if finished:
            # The writer is done but this service has not committed yet (a busy machine: each round
            # found its partitions under a pending compaction): a few more rounds, on a quiet table.
            extra = did.setdefault("extra_rounds", 0)
            if extra >= 20:
                break
            did["extra_rounds"] = extra + 1
        time.sleep(rng.uniform(0.0, 0.15))
    out.write_text(json.dumps(did))


def main(argv: list[str]) -> int:
    role, path, seed, rounds, out = argv[0], argv[1], int(argv[2]), int(argv[3]), Path(argv[4])
    rng = random.Random(f"{seed}-{role}")
    try:
        if role == "writer":
            writer(path, rng, rounds, out)
        else:
            service(role, path, rng, out)
    except BaseException:
        traceback.print_exc()
        if role == "writer":
            done_file(path).write_text("failed")  # let the services stop
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

