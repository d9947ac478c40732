"""One table operation in a process of its own, for the crash harness (tests/prove/crash_harness.py).

``python -m tests.prove.crash_child SPEC_JSON`` performs the operation the spec names on the table at
``spec["path"]`` and prints one JSON line (``{"result": ..., "seconds": ...}``) when it finishes. The
harness kills it on the way: ``HOODIE_FAULT_POINTS`` in the environment stops it at a named fault
point, and ``spec["kill_after"]`` (seconds after the operation starts) makes it SIGKILL itself, a
timing kill. Everything the operations import is imported before the clock starts, so a delay
measures time spent in the operation, not in Python's import machinery.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

import pyarrow as pa

# Imported up front (see the module docstring): the operations import some of these lazily.
import hoodie  # noqa: F401
import hoodie.format.avro.decode  # noqa: F401
import hoodie.format.avro.encode  # noqa: F401
import hoodie.format.avro.schema  # noqa: F401
import hoodie.format.keys.common  # noqa: F401
import hoodie.format.keys.generators  # noqa: F401
import hoodie.format.keys.java_text  # noqa: F401
import hoodie.format.keys.joda  # noqa: F401
import hoodie.format.keys.paths  # noqa: F401
import hoodie.format.log.logformat  # noqa: F401
import hoodie.format.slice.reader  # noqa: F401
import hoodie.metrics  # noqa: F401
import hoodie.services.inline  # noqa: F401
from hoodie.format.timeline import instant as I
from hoodie import write_arrow
from hoodie.format.table import HoodieTable
from hoodie.services.clean import run_clean
from hoodie.services.compaction import rollback_compaction, run_compaction
from hoodie.services.rollback.failed_writes import rollback_failed_writes  # noqa: F401
from hoodie.services.ttl import StashError, restore, run_ttl
from hoodie.services.ttl.move import bring_back
from hoodie.services.ttl.record_ttl import run_record_ttl

# pyarrow imports pandas the first time a table is built from a dict: do it now, not in the operation.
pa.table({"warm_up": [0]})


def batch(rows: list[list[Any]]) -> pa.Table:
    """Rows ``[key, partition, ts, value]`` as a write batch (the harness's table schema)."""
    return pa.table({
        "k": pa.array([r[0] for r in rows], pa.int64()),
        "part": pa.array([r[1] for r in rows], pa.string()),
        "ts": pa.array([r[2] for r in rows], pa.int64()),
        "v": pa.array([r[3] for r in rows], pa.int64()),
    })


def recover_compaction(path: str, options: dict[str, str], mode: str, since: str) -> list[str]:
    """Finish an interrupted compaction as a user would: re-run the pending plan (``run_compaction``
    rolls an inflight one back first), or roll it back explicitly and then run it; schedule and run
    when the crash came before the plan existed. A compaction completed after ``since`` (the newest
    instant before the interrupted run) needs nothing. Returns the compacted instants."""
    table = HoodieTable(path)
    pending = sorted({i.timestamp for i in table.timeline.pending_compactions().instants})
    if pending:
        if mode == "rollback_then_run":
            done = []
            for c in pending:
                rollback_compaction(path, c)
                done += [r.instant for r in run_compaction(path, c, options)]
            return done
        return [r.instant for r in run_compaction(path, None, options)]
    tl = table.timeline
    if any(tl.is_compaction_commit(i) for i in tl.completed().by_actions(I.COMMIT).after(since).instants):
        return []
    return [r.instant for r in run_compaction(path, None, options, schedule_if_none=True)]


def restore_once(path: str, ttl_instant: str) -> Any:
    """Restore a TTL stash; a stash an interrupted earlier attempt already restored is fine."""
    try:
        return restore(path, ttl_instant).instant
    except StashError as e:
        if "already restored" not in str(e):
            raise
        return None


def perform(spec: dict[str, Any]) -> Any:
    """Run the operation of ``spec``; returns something JSON-friendly describing the outcome."""
    op, path, options = spec["op"], spec["path"], spec.get("options") or {}
    if op == "write":
        data = spec.get("data") or batch(spec["rows"])
        return write_arrow(path, data, options)
    if op == "compaction":
        return [r.instant for r in run_compaction(path, None, options, schedule_if_none=True)]
    if op == "ttl":
        return run_ttl(path, options).instant
    if op == "clean":
        return run_clean(path, options).instant
    if op == "restore":
        return restore_once(path, spec["ttl_instant"])
    if op == "record_ttl":
        # A fixed "now", so the twin, the killed run and the recovery expire the same records.
        return run_record_ttl(path, options, now_ms=spec["now_ms"]).instant
    if op == "ttl_move":
        # The cold table's path is part of the spec, so that the twin moves into a cold table of its own.
        o = dict(options, **{"hoodie.partition.ttl.action": "move", "hoodie.partition.ttl.move.target": spec["cold"]})
        return run_ttl(path, o).instant
    if op == "bring_back":
        return bring_back(path, spec["partitions"], target=spec["cold"]).instant
    if op == "archive":
        from hoodie.services.archive import run_archival

        return len(run_archival(path, options).archived)
    if op == "compaction_recover":
        return recover_compaction(path, options, spec["mode"], spec["since"])
    raise ValueError(f"unknown operation {op!r}")


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    if spec["op"] == "write":
        spec["data"] = batch(spec["rows"])  # before the clock: the kill delay covers the write only
    delay = spec.get("kill_after")
    if delay is not None:
        timer = threading.Timer(float(delay), os.kill, (os.getpid(), signal.SIGKILL))
        timer.daemon = True
        timer.start()
    started = time.monotonic()
    result = perform(spec)
    print(json.dumps({"result": result, "seconds": time.monotonic() - started}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
