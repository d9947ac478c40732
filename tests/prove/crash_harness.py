"""Crash-injection harness: kill an operation at a random point, recover as a user would, and check
that the table holds a committed state.

One trial (``run_trial``), fully determined by its seed:

1. builds a random table and history in this process (inserts, upserts, deletes, and sometimes a
   compaction, a clean or a TTL run), tracking the expected rows in a :class:`Model`;
2. runs the operation under test on a copy of the table (the *twin*) to completion, which gives the
   state after it and how long it takes;
3. runs the same operation on the table in a child process (``tests/prove/crash_child.py``) and kills
   it with SIGKILL, either at a named fault point (``HOODIE_FAULT_POINTS``, ``name@n`` for the n-th
   hit) or after a random delay;
4. checks the table: its snapshot is the state before or the state after the operation (never
   anything else; for a compaction, the read-optimized view is also one of the two), and hudi-rs
   reads what we read when no compaction is pending;
5. recovers the way a user would: the next write (which rolls back failed writes), re-running the
   compaction (sometimes after ``rollback_compaction``), re-running clean, TTL or restore; the
   recovery itself is killed at a random point too in some trials, then run again;
6. checks the final state exactly: the expected rows, hudi-rs agreement on snapshot and read-optimized
   reads, no pending instant left, no data file of an uncommitted instant, and for compaction and
   clean the same result as the uninterrupted twin.

Operations: ``insert``, ``upsert``, ``delete`` (pure-Python ``write_arrow``), ``compaction``,
``ttl``, ``clean``, ``rollback`` (a write whose eager rollback of an earlier crashed write is
killed), ``restore`` (a TTL stash restore), ``record_ttl`` (record-level TTL at a fixed "now", so
that a random share of the rows expires), ``ttl_move`` (partition TTL's ``move`` action into a cold
table) and ``bring_back`` (moved partitions back from the cold table). For the last two the checks
after the crash and after recovery also read the cold table: every row of the table is in the hot
table or in the cold table, and after recovery each is exactly where the completed operation puts it.

``python -m tests.prove.crash_harness --trials 200 --seed 1`` runs trials from the command line and
prints the summary; a failing trial prints the seed and operation that reproduce it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional


from hoodie.faults import ENV as FAULT_ENV
from hoodie.format.file_group import naming as N
from hoodie.format.table import HoodieTable
from hoodie.services.compaction import run_compaction
from hoodie.services.ttl.service import last_ttl_instant
from hoodie.services.ttl.stash import COMPLETE, read_manifest
from tests.hudi_rs import read_hudi_rs
from tests.prove import crash_child
from tests.prove.crash_checks import (  # the reads and checks; re-exported for the trials' users
    Rows, TrialFailure, _rows, check_hudi_rs, check_metadata_table, check_state, data_files, orphan_files,
    pending_instants, read_optimized, snapshot,
)

REPO = Path(__file__).resolve().parents[2]
# Two partitions far in the past (every TTL run expires them) and two in the future (never).
PARTS = ("2020-01-01", "2020-01-02", "2999-01-01", "2999-01-02")
OLD_PARTS = PARTS[:2]
KEYS = list(range(16))
# Half the trials on table version 6, the rest on Hudi 1.0's 8 and 1.1's 9.
TABLE_VERSIONS = (6, 6, 8, 9)
OPERATIONS = ("insert", "upsert", "delete", "compaction", "ttl", "clean", "rollback", "restore",
              "record_ttl", "ttl_move", "bring_back", "archive")
# The operations whose history ends with data in the expiring partitions and runs no partition TTL.
TTL_OPS = ("ttl", "restore", "ttl_move", "bring_back")
# Record TTL runs with the smallest retention at now = retention + cutoff: the rows whose event time
# (ts, 0..50 ms after the epoch) is below the cutoff expire.
RECORD_TTL_RETENTION_MS = 3_600_000
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
EVENT_TIME_STRATEGY = "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy"

# Fault points each operation passes, with the largest hit number worth asking for (points in loops
# kill midway through the loop at a random hit). A point that is not reached lets the operation finish.
_AUTO_CLEAN = [("clean.after_inflight", 1), ("clean.after_file", 3), ("clean.before_complete", 1)]
FAULT_POINTS: dict[str, list[tuple[str, int]]] = {
    "write": [("write.after_file_group", 3), ("write.before_complete", 1)] + _AUTO_CLEAN,
    "compaction": [("compaction.after_inflight", 1), ("compaction.after_links", 1),
                   ("compaction.after_operation", 3), ("compaction.before_commit", 1)],
    "ttl": [("ttl.after_inflight", 1), ("ttl.before_stash", 1)],
    "clean": [("clean.after_inflight", 1), ("clean.after_file", 4), ("clean.after_partition_files", 3),
              ("clean.before_complete", 1)],
    "rollback": [("rollback.after_inflight", 1), ("rollback.after_delete", 3), ("rollback.after_complete", 1),
                 ("write.after_file_group", 2), ("write.before_complete", 1)],
    "restore": [],  # restore has no fault points of its own: timing kills only
    "record_ttl": [("record_ttl.after_file_group", 2), ("record_ttl.before_complete", 1)],
    # The cold table's insert_overwrite goes through the write path (write.*), then the hot table's
    # delete_partition (ttl.*).
    "ttl_move": [("write.after_file_group", 2), ("write.before_complete", 1), ("ttl.move.after_copy", 1),
                 ("ttl.move.after_verify", 1), ("ttl.after_inflight", 1), ("ttl.before_stash", 1)],
    # The hot table's insert_overwrite (write.*), then the cold table's delete_partition.
    "bring_back": [("write.after_file_group", 2), ("write.before_complete", 1), ("ttl.bring_back.after_write", 1),
                   ("ttl.bring_back.after_verify", 1), ("ttl.bring_back.cold_drop_inflight", 1)],
    # Timeline archival (issue 33): after the archive file (v6) or the LSM file and its manifest (8/9), and
    # midway through deleting the archived instants' active files; v6, merging the small archive files
    # (archive_options enables it): after the plan, after the merged file, midway through deleting candidates.
    "archive": [("archive.after_archive_file", 1), ("archive.lsm.after_data_file", 1), ("archive.after_manifest", 1),
                ("archive.while_deleting", 4), ("archive.merge.after_plan", 1),
                ("archive.merge.after_merged_file", 1), ("archive.merge.while_deleting", 1)],
}
# Added to every operation's points on a table with a metadata table: inside its deltacommit,
# between it and the data commit, inside its compaction (every third deltacommit) and rollback.
METADATA_POINTS = [("metadata.deltacommit.after_log", 1), ("metadata.after_deltacommit", 1),
                   ("metadata.compaction.after_base_file", 1), ("metadata.rollback.after_command_block", 1)]
# Where a recovery step can be stopped (a second crash): re-running a compaction rolls the
# interrupted one back first, and the next write rolls back the failed write.
RECOVERY_POINTS: dict[str, list[tuple[str, int]]] = {
    "write": FAULT_POINTS["rollback"],
    "compaction": [("rollback.after_inflight", 1)] + FAULT_POINTS["compaction"],
    "ttl": FAULT_POINTS["ttl"],
    "clean": FAULT_POINTS["clean"],
    "restore": [("rollback.after_inflight", 1), ("rollback.after_delete", 2)],
    # Re-running record TTL rolls the failed delete write back first.
    "record_ttl": [("rollback.after_inflight", 1)] + FAULT_POINTS["record_ttl"],
    "ttl_move": FAULT_POINTS["ttl_move"],
    "bring_back": FAULT_POINTS["bring_back"],
    "archive": FAULT_POINTS["archive"],
}


def part_of(k: int) -> str:
    """The partition of a key (fixed, so upserts never move a key between partitions)."""
    return PARTS[k % len(PARTS)]


class Model:
    """The table's live rows as Hudi semantics define them: key -> (ts, value)."""

    def __init__(self, ordering: bool, rows: Optional[dict[int, tuple[int, int]]] = None) -> None:
        self.ordering = ordering
        self.rows: dict[int, tuple[int, int]] = dict(rows or {})

    def copy(self) -> "Model":
        return Model(self.ordering, self.rows)

    def apply(self, kind: str, batch: list[list[Any]]) -> None:
        """Apply a write (rows ``[k, part, ts, v]``): de-duplicate the batch, then merge."""
        pending: dict[int, tuple[int, int]] = {}
        for k, _, ts, v in batch:
            if kind == "delete" or not self.ordering or k not in pending or ts >= pending[k][0]:
                pending[k] = (ts, v)
        for k, (ts, v) in pending.items():
            if kind == "delete":
                self.rows.pop(k, None)
                continue
            old = self.rows.get(k)
            if old is None or not self.ordering or ts >= old[0]:
                self.rows[k] = (ts, v)

    def expire(self, partitions: tuple[str, ...]) -> None:
        """A TTL run: every row of ``partitions`` goes."""
        self.rows = {k: r for k, r in self.rows.items() if part_of(k) not in partitions}

    def expire_records(self, cutoff: int) -> None:
        """A record TTL run: every row whose event time (ts) is before ``cutoff`` goes."""
        self.rows = {k: r for k, r in self.rows.items() if r[0] >= cutoff}

    def partitions(self, partitions: tuple[str, ...]) -> Rows:
        """The rows of ``partitions`` only (what a move copies to the cold table)."""
        return [r for r in self.snapshot() if r[1] in partitions]

    def snapshot(self) -> Rows:
        return sorted((k, part_of(k), ts, v) for k, (ts, v) in self.rows.items())


@dataclass(frozen=True)
class Setup:
    """How a trial's table is written."""

    table_type: str
    ordering: bool
    block_format: str
    commits_retained: int  # of the automatic clean writers run after each commit
    metadata: bool = False  # the table has a metadata table (created by the first write)
    table_version: int = 6  # 6 (Hudi 0.14/0.15) or 8/9 (Hudi 1.0/1.1: timeline layout 2)

    def write_options(self, kind: str) -> dict[str, str]:
        o = {
            "hoodie.table.name": "crash_t",
            "hoodie.datasource.write.table.type": self.table_type,
            "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.datasource.write.operation": kind,
            "hoodie.logfile.data.block.format": self.block_format,
            "hoodie.payload.event.time.field": "ts",
            "hoodie.cleaner.commits.retained": str(self.commits_retained),
            "hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD if self.ordering else OVERWRITE_PAYLOAD,
            "hoodie.write.table.version": str(self.table_version),
        }
        if self.ordering:
            o["hoodie.datasource.write.precombine.field"] = "ts"
        if self.metadata:
            o["hoodie.metadata.enable"] = "true"
            o["hoodie.metadata.compact.max.delta.commits"] = "3"
        return o


# -- the child process ---------------------------------------------------------------------------

@dataclass
class ChildRun:
    """How a child run ended: killed (SIGKILL) or finished, and what it printed."""

    killed: bool
    result: Any = None
    seconds: Optional[float] = None


def run_child(spec: dict[str, Any], fault: Optional[str] = None, kill_after: Optional[float] = None,
              timeout: float = 300.0) -> ChildRun:
    """Run ``spec`` in ``tests.prove.crash_child``; a non-zero exit other than SIGKILL fails the trial."""
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    spec = dict(spec, kill_after=kill_after)
    proc = subprocess.run([sys.executable, "-m", "tests.prove.crash_child", json.dumps(spec)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode == -signal.SIGKILL:
        return ChildRun(True)
    if proc.returncode != 0:
        raise TrialFailure(f"the {spec['op']} child failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return ChildRun(False, out["result"], out["seconds"])


def choose_kill(rng: random.Random, points: list[tuple[str, int]], seconds: float) -> tuple[Optional[str], Optional[float], str]:
    """A named fault point (half the time, when the operation has any) or a delay in [0, 1.25 x the
    operation's uninterrupted duration]; returns (fault spec, delay, description)."""
    if points and rng.random() < 0.5:
        name, top = rng.choice(points)
        n = rng.randint(1, top)
        spec = f"{name}@{n}" if top > 1 else name
        return spec, None, f"fault:{spec}"
    delay = round(rng.uniform(0.0, 1.25 * max(seconds, 0.02)), 4)
    return None, delay, "timing"


# -- histories -----------------------------------------------------------------------------------

def random_rows(rng: random.Random, keys: list[int]) -> list[list[Any]]:
    """Rows for ``keys`` (repeats allowed) with random event times 0..50 and values."""
    return [[k, part_of(k), rng.randint(0, 50), rng.randint(0, 10_000)] for k in keys]


def write_batch(rng: random.Random, kind: str, model: Model) -> list[list[Any]]:
    """A random batch for ``kind``; inserts only use keys not live (Hudi's insert skips the index)."""
    if kind == "insert":
        free = [k for k in KEYS if k not in model.rows]
        keys = rng.sample(free, min(len(free), rng.randint(1, 4)))
    elif kind == "delete":
        keys = rng.sample(KEYS, rng.randint(1, 4))  # absent keys too: deleting them is a no-op
    else:
        live = sorted(model.rows)
        keys = [rng.choice(live) if live and rng.random() < 0.7 else rng.choice(KEYS)
                for _ in range(rng.randint(1, 5))]
    return random_rows(rng, keys)


def do_write(path: str, setup: Setup, model: Model, kind: str, rows: list[list[Any]]) -> str:
    instant = crash_child.perform({"op": "write", "path": path, "rows": rows, "options": setup.write_options(kind)})
    model.apply(kind, rows)
    return instant


def compaction_options(rng: random.Random, version: int = 6) -> dict[str, str]:
    """A full (UnBounded) or event-time (partial, sometimes with an exact split: table version 6 only)
    compaction."""
    o = {"hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER", "hoodie.payload.event.time.field": "ts",
         "hoodie.compaction.partial.link.mode": rng.choice(["symlink", "copy"])}
    if rng.random() < 0.35:
        o["hoodie.compaction.strategy"] = "UnBounded"
    else:
        o["hoodie.compaction.strategy"] = EVENT_TIME_STRATEGY
        o["hoodie.compaction.event.time.threshold"] = str(rng.randint(5, 45))
        if rng.random() < 0.4:
            o["hoodie.compaction.event.time.exact.split"] = "true"
    return o


def archive_options() -> dict[str, str]:
    """A small archival window, so that short histories archive (the cleaner's retention below it); version 6
    merges its archive files as soon as there are two (the setup archives once before the operation)."""
    return {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1",
            "hoodie.archive.merge.enable": "true", "hoodie.archive.merge.files.batch.size": "2"}


def clean_options(rng: random.Random) -> dict[str, str]:
    if rng.random() < 0.5:
        return {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    return {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": str(rng.randint(1, 2))}


def ttl_options(rng: random.Random, stash: Optional[bool] = None) -> dict[str, str]:
    o = {"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
         "hoodie.partition.ttl.strategy.days.retain": str(rng.randint(1, 30))}
    if stash if stash is not None else rng.random() < 0.5:
        o["hoodie.partition.ttl.stash.enabled"] = "true"
    return o


def record_ttl_options(setup: Setup) -> dict[str, str]:
    """Record TTL on ts, with the table's write options (as a user's scheduled run would pass them:
    payload, block format, metadata table...)."""
    return {**setup.write_options("delete"), "hoodie.record.ttl.retention": "PT1H", "hoodie.record.ttl.field": "ts"}


def cold_snapshot(cold: str) -> Rows:
    """The cold table's rows (none when the move has not created it yet)."""
    if not (Path(cold) / ".hoodie" / "hoodie.properties").exists():
        return []
    return snapshot(cold)


def check_nothing_lost(path: str, cold: str, rows: Rows, what: str) -> None:
    """Tiering: every row of ``rows`` (the table's rows, wherever they live) is in the hot table or
    in the cold table, and neither holds a row that is not one of them."""
    hot, cold_rows = set(snapshot(path)), set(cold_snapshot(cold))
    lost = [r for r in rows if r not in hot and r not in cold_rows]
    if lost:
        raise TrialFailure(f"{what}: row(s) in neither the hot nor the cold table: {lost}\n hot: {sorted(hot)}\n"
                           f" cold: {sorted(cold_rows)}")
    extra = sorted((hot | cold_rows) - set(rows))
    if extra:
        raise TrialFailure(f"{what}: row(s) that the table never held: {extra}")


def check_cold(cold: str, expected: Rows, what: str) -> int:
    """The settled cold table: exactly ``expected``, read the same by hudi-rs, no pending instant, no
    file of an uncommitted instant. Returns hudi-rs checks."""
    got = cold_snapshot(cold)
    if got != expected:
        raise TrialFailure(f"{what}: the cold table holds other rows\n got:      {got}\n expected: {expected}")
    if not (Path(cold) / ".hoodie").exists():
        return 0
    if pending_instants(cold):
        raise TrialFailure(f"{what}: instants left pending in the cold table: {pending_instants(cold)}")
    if orphan_files(cold):
        raise TrialFailure(f"{what}: data files of uncommitted cold instants left behind: {orphan_files(cold)}")
    theirs = _rows(read_hudi_rs(cold))
    if theirs != got:
        raise TrialFailure(f"{what}: hudi-rs reads other rows in the cold table\n ours:    {got}\n hudi-rs: {theirs}")
    return 1


def build_history(rng: random.Random, path: str, setup: Setup, model: Model, op: str) -> None:
    """A random committed history ending in what ``op`` needs to have work to do."""
    first = sorted(set(rng.sample(KEYS, rng.randint(4, 12))) | {0, 1, 2, 3})  # every partition has data
    do_write(path, setup, model, "insert", random_rows(rng, first))
    kinds = ["upsert", "upsert", "upsert", "delete", "insert"]
    services = op not in TTL_OPS
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if services and setup.table_type == "MERGE_ON_READ" and r < 0.15:
            run_compaction(path, None, compaction_options(rng, setup.table_version), schedule_if_none=True)
        elif services and r < 0.25:
            crash_child.perform({"op": "clean", "path": path, "options": clean_options(rng)})
        elif services and r < 0.35:
            crash_child.perform({"op": "ttl", "path": path, "options": ttl_options(rng)})
            model.expire(OLD_PARTS)
        else:
            kind = rng.choice(kinds)
            rows = write_batch(rng, kind, model)
            if rows:
                do_write(path, setup, model, kind, rows)
    if op == "clean":
        # Something to clean: superseded file versions (COW rewrites; MOR needs a compaction).
        do_write(path, setup, model, "upsert", random_rows(rng, sorted(model.rows)[:3] or [0]))
        if setup.table_type == "MERGE_ON_READ":
            run_compaction(path, None, {"hoodie.compaction.strategy": "UnBounded",
                                        "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER"},
                           schedule_if_none=True)
        do_write(path, setup, model, "upsert", random_rows(rng, sorted(model.rows)[-3:] or [1]))
    if op in TTL_OPS:
        # Data in the expiring partitions, so the TTL run has something to delete.
        do_write(path, setup, model, "upsert", random_rows(rng, [k for k in KEYS if part_of(k) in OLD_PARTS][:3]))
    if op == "archive":
        # More completed commits than archive_options keeps (keep.max.commits=3), archived once first so that
        # the operation's archive file is the second (v6: merged with the first).
        from hoodie.services.archive import run_archival

        for n in range(6):
            do_write(path, setup, model, "upsert", random_rows(rng, sorted(model.rows)[:2] or [0]))
            if n == 2:
                run_archival(path, {**archive_options(), "hoodie.archive.merge.enable": "false"})
    if op == "compaction":
        # Log files to compact: updates of live keys (MOR appends them to the slices' logs).
        live = sorted(model.rows)
        do_write(path, setup, model, "upsert", random_rows(rng, rng.sample(live, min(len(live), 3)) or [0]))


# -- trials --------------------------------------------------------------------------------------

@dataclass
class TrialResult:
    """One trial: what was killed where, which state the crash left, how recovery went."""

    seed: int
    op: str
    table_type: str
    kill: str
    killed: bool
    observed: str
    recovery: str
    recovery_kill: str  # "" when the recovery was not interrupted
    recovery_killed: bool
    hudi_rs_checks: int
    seconds: float
    metadata: bool = False  # the table had a metadata table, validated against storage at the end
    table_version: int = 6

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Summary:
    """Counts over a run of trials (what the harness reports)."""

    trials: list[TrialResult] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict[str, Any]:
        by_op = Counter(t.op for t in self.trials)
        return {
            "trials": len(self.trials),
            "seconds": round(self.seconds, 1),
            "per_operation": dict(sorted(by_op.items())),
            "killed": sum(t.killed for t in self.trials),
            "finished_before_the_kill": sum(not t.killed for t in self.trials),
            "recoveries_killed": sum(t.recovery_killed for t in self.trials),
            "kill_modes": dict(Counter("fault" if t.kill.startswith("fault") else "timing" for t in self.trials)),
            "fault_points_hit": dict(sorted(Counter(
                [t.kill.split(":", 1)[1].split("@")[0] for t in self.trials if t.killed and t.kill.startswith("fault")]
                + [t.recovery_kill.split(":", 1)[1].split("@")[0] for t in self.trials
                   if t.recovery_killed and t.recovery_kill.startswith("fault")]).items())),
            "observed_after_crash": dict(sorted(Counter(f"{t.op}:{t.observed}" for t in self.trials).items())),
            "hudi_rs_comparisons": sum(t.hudi_rs_checks for t in self.trials),
            "with_metadata_table": sum(t.metadata for t in self.trials),
            "per_table_version": dict(Counter(t.table_version for t in self.trials)),
        }


def _twin(path: str, workdir: Path) -> str:
    twin = str(workdir / "twin")
    shutil.copytree(path, twin, symlinks=True)
    return twin


def _timed(spec: dict[str, Any]) -> tuple[Any, float]:
    started = time.monotonic()
    out = crash_child.perform(spec)
    return out, time.monotonic() - started


def _rebase(spec: dict[str, Any], path: str) -> dict[str, Any]:
    """``spec`` on another copy of the table; a cold table (tiering) is copied next to it."""
    out = dict(spec, path=path)
    if "cold" in spec:
        out["cold"] = path + "_cold"
        if Path(spec["cold"]).exists():
            shutil.copytree(spec["cold"], out["cold"], symlinks=True)
    return out


def run_trial(seed: int, op: str, workdir: Path) -> TrialResult:
    """One trial of ``op`` (see the module docstring); raises :class:`TrialFailure` on a bad state."""
    started = time.monotonic()
    rng = random.Random(f"{seed}:{op}")
    setup = Setup(table_type="MERGE_ON_READ" if op == "compaction" else rng.choice(["COPY_ON_WRITE", "MERGE_ON_READ"]),
                  ordering=rng.random() < 0.5, block_format=rng.choice(["avro", "parquet"]),
                  commits_retained=rng.choice([2, 10]), metadata=rng.random() < 0.5,
                  table_version=rng.choice(TABLE_VERSIONS))
    path = str(workdir / "t")
    model = Model(setup.ordering)
    build_history(rng, path, setup, model, op)
    rs_checks = int(check_hudi_rs(path, "history"))
    before = model.copy()
    ctx: dict[str, Any] = {}

    # The operation under test, as a child spec, and the model after it.
    after = model.copy()
    if op in ("insert", "upsert", "delete"):
        rows = write_batch(rng, op, model) or random_rows(rng, [KEYS[-1]])
        kind = op if (op != "insert" or rows[0][0] not in model.rows) else "upsert"
        spec = {"op": "write", "path": path, "rows": rows, "options": setup.write_options(kind)}
        after.apply(kind, rows)
        points = FAULT_POINTS["write"]
    elif op == "rollback":
        # An earlier write crashed (files written, no commit); the next write's eager rollback is killed.
        failed = write_batch(rng, "upsert", model)
        dead = run_child({"op": "write", "path": path, "rows": failed, "options": setup.write_options("upsert")},
                         fault=rng.choice(["write.after_file_group", "write.before_complete"]
                                          + (["metadata.after_deltacommit"] if setup.metadata else [])))
        if not dead.killed:
            raise TrialFailure("the write meant to crash at a fault point finished")
        check_state(path, {"before": before.snapshot()}, "after the crashed write")
        rs_checks += int(check_hudi_rs(path, "after the crashed write"))
        rows = write_batch(rng, "upsert", model)
        spec = {"op": "write", "path": path, "rows": rows, "options": setup.write_options("upsert")}
        after.apply("upsert", rows)
        points = FAULT_POINTS["rollback"]
    elif op == "compaction":
        spec = {"op": "compaction", "path": path, "options": compaction_options(rng, setup.table_version)}
        points = FAULT_POINTS["compaction"]
    elif op == "ttl":
        spec = {"op": "ttl", "path": path, "options": ttl_options(rng)}
        after.expire(OLD_PARTS)
        points = FAULT_POINTS["ttl"]
    elif op == "clean":
        spec = {"op": "clean", "path": path, "options": clean_options(rng)}
        points = FAULT_POINTS["clean"]
    elif op == "record_ttl":
        cutoff = rng.randint(5, 45)
        spec = {"op": "record_ttl", "path": path, "options": record_ttl_options(setup),
                "now_ms": RECORD_TTL_RETENTION_MS + cutoff}
        after.expire_records(cutoff)
        points = FAULT_POINTS["record_ttl"]
    elif op == "ttl_move":
        spec = {"op": "ttl_move", "path": path, "cold": str(workdir / "cold"), "options": ttl_options(rng)}
        after.expire(OLD_PARTS)
        # Every row of the table, and where the completed move leaves the expired ones.
        ctx.update(all_rows=before.snapshot(), cold_after=before.partitions(OLD_PARTS), cold_before=[])
        points = FAULT_POINTS["ttl_move"]
    elif op == "bring_back":
        cold = str(workdir / "cold")
        crash_child.perform({"op": "ttl_move", "path": path, "cold": cold, "options": ttl_options(rng, stash=False)})
        before = model.copy()
        before.expire(OLD_PARTS)
        if cold_snapshot(cold) != model.partitions(OLD_PARTS) or snapshot(path) != before.snapshot():
            raise TrialFailure("the TTL move before the bring-back did not move the expiring partitions")
        spec = {"op": "bring_back", "path": path, "cold": cold, "partitions": list(OLD_PARTS)}
        ctx.update(all_rows=model.snapshot(), cold_after=[], cold_before=model.partitions(OLD_PARTS))
        points = FAULT_POINTS["bring_back"]
    elif op == "archive":
        spec = {"op": "archive", "path": path, "options": archive_options()}
        points = FAULT_POINTS["archive"]
    elif op == "restore":
        crash_child.perform({"op": "ttl", "path": path, "options": ttl_options(rng, stash=True)})
        ctx["ttl_instant"] = last_ttl_instant(HoodieTable(path))
        if ctx["ttl_instant"] is None:
            raise TrialFailure("the TTL run before the restore expired nothing")
        before = model.copy()
        before.expire(OLD_PARTS)
        spec = {"op": "restore", "path": path, "ttl_instant": ctx["ttl_instant"]}
        points = FAULT_POINTS["restore"]
    else:
        raise ValueError(f"unknown operation {op!r}; use one of {', '.join(OPERATIONS)}")

    if setup.metadata:
        points = points + METADATA_POINTS
    # The twin runs it uninterrupted: the state after, and the duration timing kills draw from.
    twin = _twin(path, workdir)
    twin_spec = _rebase(spec, twin)
    _, seconds = _timed(twin_spec)
    ro_before, ro_after = read_optimized(path), read_optimized(twin)
    files_after = data_files(twin)
    if snapshot(twin) != after.snapshot():
        raise TrialFailure(f"the uninterrupted {op} does not give the model's state\n got:   {snapshot(twin)}\n"
                           f" model: {after.snapshot()}")
    if "cold" in spec and cold_snapshot(twin_spec["cold"]) != ctx["cold_after"]:
        raise TrialFailure(f"the uninterrupted {op} leaves other rows in the cold table\n"
                           f" got:   {cold_snapshot(twin_spec['cold'])}\n model: {ctx['cold_after']}")

    fault, delay, kill = choose_kill(rng, points, seconds)
    newest_before = HoodieTable(path).timeline.last().timestamp
    run = run_child(spec, fault=fault, kill_after=delay)
    allowed = {"before": before.snapshot(), "after": after.snapshot()}
    if allowed["before"] == allowed["after"]:
        allowed = {"same": allowed["before"]}
    observed = check_state(path, allowed, f"after the crash ({kill})")
    if op == "compaction":
        ro = read_optimized(path)
        if ro not in (ro_before, ro_after):
            raise TrialFailure(f"after the crash ({kill}): read-optimized is neither before nor after the compaction"
                               f"\n got: {ro}\n before: {ro_before}\n after: {ro_after}")
    rs_checks += int(check_hudi_rs(path, f"after the crash ({kill})"))
    if "cold" in spec:
        check_nothing_lost(path, spec["cold"], ctx["all_rows"], f"after the crash ({kill})")

    # Recovery, as a user would do it; sometimes killed once itself before it runs to the end.
    state = before if observed == "before" else after
    expected = state.copy()
    if op in ("insert", "upsert", "delete", "rollback"):
        rows = write_batch(rng, "upsert", state)
        recovery = {"op": "write", "path": path, "rows": rows, "options": setup.write_options("upsert")}
        expected.apply("upsert", rows)
        name, rpoints = "next write", RECOVERY_POINTS["write"]
    elif op == "compaction":
        recovery = {"op": "compaction_recover", "path": path, "options": spec["options"],
                    "mode": rng.choice(["rerun", "rollback_then_run"]), "since": newest_before}
        name, rpoints = f"compaction {recovery['mode']}", RECOVERY_POINTS["compaction"]
    elif op == "restore":
        recovery = spec
        expected = after.copy()
        name, rpoints = "restore again", RECOVERY_POINTS["restore"]
    else:
        recovery = spec
        expected = after.copy()
        name, rpoints = f"{op} again", RECOVERY_POINTS[op]
    recovery_killed, recovery_kill = False, ""
    if rng.random() < 0.3:
        rfault, rdelay, recovery_kill = choose_kill(rng, rpoints, seconds)
        recovery_killed = run_child(recovery, fault=rfault, kill_after=rdelay).killed
        check_state(path, {"before recovery": state.snapshot(), "recovered": expected.snapshot()},
                    "after a crash during recovery")
        if "cold" in spec:
            check_nothing_lost(path, spec["cold"], ctx["all_rows"], "after a crash during recovery")
        rs_checks += int(check_hudi_rs(path, "after a crash during recovery"))
    crash_child.perform(recovery)  # the recovery, to the end, in this process

    # The final state, exactly.
    what = f"after recovery ({name})"
    check_state(path, {"expected": expected.snapshot()}, what)
    if not check_hudi_rs(path, what):
        raise TrialFailure(f"{what}: a compaction is still pending: {pending_instants(path)}")
    rs_checks += 1
    left = pending_instants(path)
    if left:
        raise TrialFailure(f"{what}: instants left pending: {left}")
    orphans = orphan_files(path)
    if orphans:
        raise TrialFailure(f"{what}: data files of uncommitted instants left behind: {orphans}")
    if op == "compaction" and read_optimized(path) != ro_after:
        raise TrialFailure(f"{what}: read-optimized differs from the uninterrupted compaction\n"
                           f" got: {read_optimized(path)}\n twin: {ro_after}")
    if op == "clean" and data_files(path) != files_after:
        raise TrialFailure(f"{what}: the files differ from the uninterrupted clean\n got:  {data_files(path)}\n"
                           f" twin: {files_after}")
    if setup.metadata:
        check_metadata_table(path, what)
    if "cold" in spec:
        check_nothing_lost(path, spec["cold"], ctx["all_rows"], what)
        rs_checks += check_cold(spec["cold"], ctx["cold_after"], what)
    if op in ("ttl", "ttl_move"):
        rs_checks += check_ttl_outcome(path, spec["options"], rng, before)
    if op == "archive":
        check_archived_once(path, twin, what)
    return TrialResult(seed, op, setup.table_type, kill, run.killed, observed, name, recovery_kill, recovery_killed,
                       rs_checks,
                       round(time.monotonic() - started, 3), setup.metadata, setup.table_version)


def check_archived_once(path: str, twin: str, what: str) -> None:
    """After a recovered archival: every completed instant is in exactly one of the active and the archived
    timeline, the same instants as the uninterrupted twin has; version 6: no merge plan left and no archived
    entry in two archive files (the merge recovery reverted or completed an interrupted merge)."""
    from hoodie.format.timeline import archive_v1 as A1
    from hoodie.services.archive import load_archived_timeline

    def split(p: str) -> tuple[set, set]:
        t = HoodieTable(p)
        return ({(i.timestamp, i.action) for i in load_archived_timeline(t)},
                {(i.timestamp, i.action) for i in t.timeline.completed()})

    archived, active = split(path)
    if archived & active:
        raise TrialFailure(f"{what}: instants both archived and active: {sorted(archived & active)}")
    t_archived, t_active = split(twin)
    if archived | active != t_archived | t_active:
        raise TrialFailure(f"{what}: the completed instants differ from the uninterrupted archival's: "
                           f"{sorted((archived | active) ^ (t_archived | t_active))}")
    table = HoodieTable(path)
    if table.timeline_layout == 1:
        if table.storage.exists(f"{A1.ARCHIVE_FOLDER}/{A1.MERGE_PLAN_NAME}"):
            raise TrialFailure(f"{what}: a merge plan of archive files is left")
        keys = [(e["commitTime"], e["actionType"], e["actionState"]) for rel in A1.archive_files(table.storage)
                for e in A1.read_archive_entries(table.storage, rel)]
        if len(keys) != len(set(keys)):
            raise TrialFailure(f"{what}: archived entries in two archive files: "
                               f"{sorted(k for k in set(keys) if keys.count(k) > 1)}")


def check_ttl_outcome(path: str, options: dict[str, str], rng: random.Random, before: Model) -> int:
    """After a recovered TTL run with stash: the stash is complete, no file of the replaced groups is
    left in place, and (half the time) restoring it brings the rows back. Returns hudi-rs checks."""
    if options.get("hoodie.partition.ttl.stash.enabled") != "true":
        return 0
    table = HoodieTable(path)
    ttl = last_ttl_instant(table)
    doc = read_manifest(table.storage, ttl) if ttl else None
    if doc is None or doc.get("state") != COMPLETE:
        raise TrialFailure(f"the TTL stash of {ttl} is not complete after recovery: {doc}")
    meta = table.timeline.commit_metadata(table.timeline.get(ttl))
    for p, fids in (meta.partition_to_replace_file_ids or {}).items():
        left = [s.name for s in table.storage.list_dir(p) if N.is_base_file(s.name) or N.is_log_file(s.name)
                if (N.parse_base_file(s.name).file_id if N.is_base_file(s.name) else N.parse_log_file(s.name).file_id)
                in set(fids)]
        if left:
            raise TrialFailure(f"TTL {ttl} stashed partition {p}, but files of its groups are still there: {left}")
    if rng.random() < 0.5:
        return 0
    crash_child.restore_once(path, ttl)
    check_state(path, {"restored": before.snapshot()}, "after restoring the TTL stash")
    return int(check_hudi_rs(path, "after restoring the TTL stash"))


def run_trials(n: int, seed: int = 0, ops: tuple[str, ...] = OPERATIONS, root: Optional[Path] = None) -> Summary:
    """``n`` trials cycling through ``ops`` (trial i: seed ``seed + i``); stops at the first failure,
    re-raised with what reproduces it."""
    summary = Summary()
    started = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="hoodie_crash_", dir=root))
    try:
        for i in range(n):
            op = ops[i % len(ops)]
            workdir = base / f"trial{i}"
            workdir.mkdir()
            try:
                summary.trials.append(run_trial(seed + i, op, workdir))
            except TrialFailure as e:
                raise TrialFailure(f"trial seed={seed + i} op={op} failed (reproduce: python -m "
                                   f"tests.prove.crash_harness --seed {seed + i} --ops {op} --trials 1):\n{e}") from e
            shutil.rmtree(workdir, ignore_errors=True)
    finally:
        summary.seconds = time.monotonic() - started
        shutil.rmtree(base, ignore_errors=True)
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=len(OPERATIONS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ops", default=",".join(OPERATIONS), help="comma-separated operations to cycle through")
    ap.add_argument("--verbose", action="store_true", help="print every trial")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # recoveries log warnings by design; the summary is the output
    summary = run_trials(args.trials, args.seed, tuple(o.strip() for o in args.ops.split(",") if o.strip()))
    if args.verbose:
        for t in summary.trials:
            print(json.dumps(t.to_json()))
    print(json.dumps(summary.counts(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
