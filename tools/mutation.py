"""Mutation testing of the format core and the services, on demand (never in the default CI run).

Runs `mutmut <https://pypi.org/project/mutmut/>`_ (install with ``pip install -e '.[mutation]'``)
on one source module at a time, against only the fast, deterministic tests that exercise it, then
writes the score and every surviving mutant to ``MUTATION.md`` at the repo root.

Each target runs in its own workspace ``.mutation/<target>/`` (a copy of ``src/`` and ``tests/``
plus a ``pyproject.toml`` whose ``[tool.mutmut]`` names that module and its tests), so targets
neither share mutmut's caches nor touch the work tree. Survivors judged by a person are listed in
``tools/mutation_triage.toml`` as ``equivalent`` (no test can tell them apart: left out of the
score) or ``hole`` (a known gap, counted as surviving); anything else is ``untriaged``.

Usage::

    python tools/mutation.py --list
    python tools/mutation.py merge fsview            # run two targets, update MUTATION.md
    python tools/mutation.py --all --jobs 2          # every target (long: run it in the background)
    python tools/mutation.py --budget 10 fsview      # stop after 10 minutes: the rest stays "not checked"
    python tools/mutation.py --retest merge          # after new tests: re-run merge's survivors (and
                                                     # the mutants a cut-short run left unchecked)
    python tools/mutation.py --report                # rewrite MUTATION.md from the recorded runs

Run it from the repo root without ``PYTHONPATH`` (the script drops it: mutmut must import the
mutated copy). Each finished run is recorded in ``tools/mutation_results.json`` (counts, exit code
per mutant, the diff of every survivor); MUTATION.md is written from that file, so targets not
re-run keep their last result, marked stale when their module has changed since.

The property-based model tests (hypothesis histories, fuzzers) are left out of the test command:
they are slow per mutant and find different mutants on different seeds; a kill here must come
from a deterministic test. The remaining small ``@given`` tests run with a fixed seed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
WORKSPACES = REPO / ".mutation"
TRIAGE = REPO / "tools" / "mutation_triage.toml"
REPORT = REPO / "MUTATION.md"
RESULTS = REPO / "tools" / "mutation_results.json"

# Tests left out of every mutation run: random model histories and fuzzers (slow, seed-dependent),
# tests that run the CLI or a crashing writer in a subprocess (which imports the unmutated tree:
# slow, and they kill nothing) and the TTL stash's S3 round trip (a moto server per mutant; the
# object-store branches of the cleaner and rollback are tested with fakes).
DESELECT = (
    "not test_random_histories and not test_compaction_preserves_snapshot_and_freshness"
    " and not test_logformat_fuzz and not test_incremental_equals_full_scan and not test_cli"
    " and not test_a_kill_at_each_metadata_step and not test_interrupted_rollback_of_a_stashed_ttl_commit"
    " and not test_ttl_stash_clean_restore_on_object_store"
)


# Single tests of slower files (a target may name test files or pytest node ids).
EVENT_TIME_UNITS = ("tests/services/test_compaction_event_time_units.py"
                    "::test_ranges_recorded_in_another_unit_are_reported_not_used")
DAMAGED_PLANS = (
    "tests/services/test_compaction_plan_guards.py"
    "::test_damaged_compaction_requested_reads_with_warning_and_rollback_removes_it",
    "tests/services/test_compaction_plan_guards.py"
    "::test_damaged_plan_of_a_compaction_that_ran_errors_on_read_and_rollback_cleans_up",
)

# Rollback's entry point also removes pending compaction plans, moves a stashed TTL commit's files
# back, reopens a rolled-back restore's stash and refuses savepointed commits: those paths are
# tested beside the services they serve (the guards' hypothesis test is left out).
ROLLBACK_TESTS = (
    "tests/services/test_rollback_boundaries.py", "tests/services/test_rollback.py", "tests/services/test_ttl_stash.py",
    "tests/services/test_savepoint.py", "tests/services/test_transaction.py", "tests/services/test_metadata_write.py",
    "tests/services/test_ttl_restore_model.py::test_rollback_of_a_restore_commit_makes_the_stash_restorable_again",
    "tests/services/test_compaction_plan_guards.py::test_rollback_of_deltacommit_in_pending_compaction_plan_is_refused",
    "tests/services/test_compaction_plan_guards.py"
    "::test_hoodie_rollback_of_pending_compaction_removes_plan_then_deltacommit_rolls_back",
    *DAMAGED_PLANS,
)
# The cleaner keeps savepointed slices and settles TTL stashes first (tested with those services).
CLEAN_TESTS = (
    "tests/services/test_clean_boundaries.py", "tests/services/test_clean_plan_boundaries.py",
    "tests/services/test_clean.py", "tests/services/test_clean_model.py",
    "tests/services/test_compaction_link_chains.py", "tests/services/test_savepoint.py",
    "tests/services/test_ttl_stash.py",
)


@dataclass(frozen=True)
class Target:
    """One module to mutate and the test files that run against it."""

    source: str
    tests: tuple[str, ...]


READER_TESTS = (
    "tests/format/test_reader_boundaries.py", "tests/format/test_fsview.py", "tests/format/test_fixtures.py",
    "tests/format/test_fixtures_v8v9.py", "tests/format/test_model_hudi_rs.py",
    "tests/format/test_overwrite_ops.py", "tests/format/test_write_primitives.py",
    "tests/format/test_partition_pruning.py",
    # Reads the 2026-11-27 session made correct or refused: archived incremental ranges, hollow commits,
    # read options, schema on read, the operation field, bootstrapped tables.
    "tests/format/test_incremental_archived.py", "tests/format/test_hollow_commits.py",
    "tests/format/test_read_options.py", "tests/format/test_schema_on_read.py",
    "tests/format/test_operation_field.py", "tests/format/test_bootstrap_tables.py",
    # read_base_file's footer argument (the copy-on-write bloom filter reuse) and keys stored twice.
    "tests/format/test_bloom.py::test_a_copy_on_write_update_keeps_the_filter_it_would_build",
    "tests/format/test_duplicates_in_file.py",
    # Tables whose properties hoodie refuses or honours (refusals in plan_read, base-format metafiles).
    "tests/format/test_foreign_base_format.py", "tests/format/test_partition_metafile.py",
    # Boundaries its first run's survivors showed untested (pending clustering, operation field, archived
    # ranges, the float widening's result type).
    "tests/format/test_reader_mutants.py",
    # Reads of slices a partial compaction linked or is writing (the reader skips duplicates).
    *(f"tests/services/test_compaction_run.py::test_{t}" for t in (
        "reader_ignores_outputs_of_a_running_compaction", "duplicate_link_of_target_in_same_slice_is_read_once",
        "incremental_and_time_travel_unchanged_by_partial_compaction")),
)

TARGETS: dict[str, Target] = {
    "merge": Target(
        "src/hoodie/format/slice/merge.py",
        ("tests/format/test_merge_boundaries.py", "tests/format/test_model_hudi_rs.py", "tests/format/test_fsview.py",
         "tests/format/test_fixtures.py", "tests/format/test_fixtures_v8v9.py", "tests/format/test_java_order_keys.py",
         "tests/format/test_ordering_java_compare.py::test_nan_and_signed_zero_ordering_values",
         # Keys stored twice in one base file (merge_copies, copy_ranks, the detection in both merges).
         "tests/format/test_duplicates_in_file.py"),
    ),
    "fsview": Target(
        "src/hoodie/format/file_group/fsview.py",
        ("tests/format/test_fsview_boundaries.py", "tests/format/test_fsview.py", "tests/format/test_overwrite_ops.py",
         "tests/format/test_fixtures.py", "tests/format/test_fixtures_v8v9.py", "tests/format/test_lsm_timeline.py",
         "tests/services/test_compaction_plan.py", *DAMAGED_PLANS),
    ),
    "timeline": Target(
        "src/hoodie/format/timeline/active.py",
        ("tests/format/test_timeline_boundaries.py", "tests/format/test_timeline.py", "tests/format/test_fsview.py",
         "tests/format/test_write_primitives.py", "tests/format/test_fixtures_v8v9.py", *DAMAGED_PLANS),
    ),
    "reader": Target("src/hoodie/format/slice/reader.py", READER_TESTS),
    "reader.slice": Target("src/hoodie/format/slice/slice_reader.py", READER_TESTS),
    "reader.pruning": Target(
        "src/hoodie/format/slice/pruning.py",
        ("tests/format/test_reader_boundaries.py", "tests/format/test_partition_pruning.py", "tests/format/test_fixtures.py"),
    ),
    "reader.filters": Target(
        "src/hoodie/format/slice/filters.py",
        ("tests/format/test_reader_boundaries.py", "tests/format/test_partition_pruning.py", "tests/format/test_fixtures.py"),
    ),
    "compaction.strategies": Target(
        "src/hoodie/services/compaction/strategies.py",
        ("tests/services/test_compaction_boundaries.py", "tests/services/test_compaction_plan.py", EVENT_TIME_UNITS),
    ),
    "compaction.event_index": Target(
        "src/hoodie/format/slice/event_ranges.py",
        ("tests/services/test_compaction_boundaries.py", "tests/services/test_compaction_plan.py",
         "tests/services/test_compaction_run.py", EVENT_TIME_UNITS),
    ),
    "compaction.partial": Target(
        "src/hoodie/services/compaction/partial.py",
        ("tests/services/test_compaction_boundaries.py", "tests/services/test_compaction_plan.py",
         "tests/services/test_compaction_run.py", "tests/services/test_compaction_link_chains.py",
         # The fixed examples of the property tests (their random histories are left out).
         *(f"tests/services/test_compaction_property.py::test_example_{t}" for t in (
             "late_delete_and_exact_split_ordering", "writes_while_pending_and_links_of_links",
             "clean_after_links_of_links", "rollback_of_planned_write_is_refused_and_plan_removal_moves_later_logs",
             "plan_removed_after_a_crashed_partial_run"))),
    ),
    "ttl.strategies": Target(
        "src/hoodie/services/ttl/strategies.py",
        ("tests/services/test_ttl_boundaries.py", "tests/services/test_ttl.py", "tests/services/test_ttl_config.py"),
    ),
    "ttl.stats": Target(
        "src/hoodie/services/ttl/stats.py",
        ("tests/services/test_ttl_boundaries.py", "tests/services/test_ttl_stats.py", "tests/services/test_ttl.py"),
    ),
    "clean.planner": Target("src/hoodie/services/clean/planner.py", CLEAN_TESTS),
    "clean.executor": Target("src/hoodie/services/clean/executor.py", CLEAN_TESTS),
    "rollback": Target("src/hoodie/services/rollback/operation.py", ROLLBACK_TESTS),
    "rollback.action": Target("src/hoodie/services/rollback/action.py", ROLLBACK_TESTS),
    "rollback.instant": Target("src/hoodie/services/rollback/instant.py", ROLLBACK_TESTS),
    "rollback.failed_writes": Target("src/hoodie/services/rollback/failed_writes.py", ROLLBACK_TESTS),
}

# mutmut's exit codes per mutant, grouped the way the report counts them.
KILLED_CODES = {1, 3, 36, -24, 24, 152, 255, -11, -9}  # failing tests, timeouts, crashes
TIMEOUT_CODES = {36, -24, 24, 152, 255}  # counted as killed, but --retest checks them again
# mutmut stops a mutant's tests after (their estimated time + 1 s) x this many wall-clock seconds.
TIMEOUT_MULTIPLIER = 20
# mutmut's default isolation forks each mutant's worker from the process that ran the clean tests,
# whose Arrow thread pools are then held by threads the child does not have: some mutants hang
# there (and count as timeouts, i.e. killed) though they pass the same tests in a plain run. The
# fork server forks from a process that only collected the tests.
PROCESS_ISOLATION = "forkserver"
SURVIVED_CODES = {0}
NO_TEST_CODES = {5, 33}


@dataclass
class Survivor:
    """A mutant the tests did not kill, with its diff and its triage verdict."""

    name: str
    status: str
    diff: str
    verdict: str = "untriaged"
    reason: str = ""


@dataclass
class TargetResult:
    """Counts and survivors of one target's last run."""

    target: str
    total: int = 0
    killed: int = 0
    not_checked: int = 0
    survivors: list[Survivor] = field(default_factory=list)
    timeouts: list[Survivor] = field(default_factory=list)  # counted as killed
    seconds: Optional[float] = None
    finished: Optional[str] = None
    running: bool = False
    cut_short: bool = False
    stale: bool = False

    @property
    def equivalent(self) -> int:
        """Survivors judged equivalent (left out of the score)."""
        return sum(1 for s in self.survivors if s.verdict == "equivalent")

    @property
    def holes(self) -> int:
        """Survivors judged to be known holes."""
        return sum(1 for s in self.survivors if s.verdict == "hole")

    @property
    def untriaged(self) -> int:
        """Survivors nobody has judged yet."""
        return sum(1 for s in self.survivors if s.verdict == "untriaged")

    @property
    def score(self) -> Optional[float]:
        """Killed / non-equivalent mutants, in percent."""
        denominator = self.total - self.equivalent - self.not_checked
        return None if denominator <= 0 else 100.0 * self.killed / denominator


def _mutmut_bin() -> Path:
    exe = Path(sys.executable).parent / "mutmut"
    if not exe.exists():
        raise SystemExit("mutmut is not installed in this environment: pip install -e '.[mutation]'")
    return exe


def _fixtures_env() -> dict[str, str]:
    env = dict(os.environ)
    # mutmut puts the mutated tree first on sys.path; a PYTHONPATH naming the work tree's src/ (as
    # the plain test runs here use) must not offer the unmutated modules besides.
    env.pop("PYTHONPATH", None)
    # The workspace's copy of tests/ carries tests/fixtures/, which tests/fixture_paths.py finds.
    return env


def _mutmut_config(target: Target, ws: Path) -> str:
    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    # One pytest temp folder per workspace, emptied by each run: pytest's own numbered folders are
    # never pruned by mutmut's forked runs and filled the disk (tens of GB per target).
    basetemp = str(ws / "pytest-tmp")
    return "\n".join([
        "",
        "[tool.mutmut]",
        'source_paths = ["src"]',
        f"only_mutate = {toml_list([target.source])}",
        f"pytest_add_cli_args_test_selection = {toml_list(list(target.tests))}",
        f"pytest_add_cli_args = {toml_list(['-p', 'no:randomly', '-n', '0', '--hypothesis-seed=0', '-k', DESELECT, '--basetemp', basetemp])}",
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER}",
        f'process_isolation = "{PROCESS_ISOLATION}"',
        "use_git_change_detection = false",
        "",
    ])


RUNNING = "RUNNING"  # marker file in a workspace while mutmut works on it


def _runner(ws: Path) -> Optional[str]:
    """The pid of a live run working on this workspace, if any (a marker of a dead one is stale)."""
    marker = ws / RUNNING
    if not marker.exists():
        return None
    pid = marker.read_text().strip()
    return pid if pid.isdigit() and Path(f"/proc/{pid}").exists() else None


def _claim(ws: Path, name: str) -> None:
    """Mark a workspace busy; refuse when another run of the same target is under way."""
    pid = _runner(ws)
    if pid is not None:
        raise SystemExit(f"target {name} is being run by process {pid}; wait for it (or end it) first")
    ws.mkdir(parents=True, exist_ok=True)
    (ws / RUNNING).write_text(str(os.getpid()))


def prepare_workspace(name: str, target: Target) -> Path:
    """A fresh copy of src/ and tests/ with a pyproject.toml configuring mutmut for one target."""
    ws = WORKSPACES / name
    _claim(ws, name)
    for child in ws.iterdir():
        if child.name != RUNNING:
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.copytree(REPO / "src", ws / "src", ignore=ignore)
    shutil.copytree(REPO / "tests", ws / "tests", ignore=ignore)
    _write_pyproject(ws, target)
    return ws


def _write_pyproject(ws: Path, target: Target) -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    pyproject = re.sub(r"\n\[tool\.mutmut\][^\[]*", "\n", pyproject)
    (ws / "pyproject.toml").write_text(pyproject + _mutmut_config(target, ws.resolve()))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _meta_path(name: str) -> Path:
    return WORKSPACES / name / "mutants" / (TARGETS[name].source + ".meta")


def _launch(name: str, args: list[str], jobs: int, budget: Optional[float]) -> tuple[float, bool]:
    """Run ``mutmut run`` in a target's workspace; stop it after ``budget`` seconds.

    Stopping: the results of mutants finished before the budget ran out stay; mutants in flight at
    that moment are reset to "not checked" (their workers are killed, so their exit codes say
    nothing), and ``--retest`` later goes on from there. Returns (seconds, cut short).
    """
    ws = WORKSPACES / name
    meta = _meta_path(name)
    cut = False
    start = time.monotonic()
    with open(ws / "mutmut.log", "a") as log:
        proc = subprocess.Popen([str(_mutmut_bin()), "run", "--max-children", str(jobs), *args], cwd=ws,
                                env=_fixtures_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            cut = True
            before = json.loads(meta.read_text()).get("exit_code_by_key", {}) if meta.exists() else {}
            proc.send_signal(signal.SIGINT)  # mutmut stops its workers and saves what it has
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                # It waits for workers it has stopped; every finished mutant is saved already.
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if meta.exists():
                data = json.loads(meta.read_text())
                codes = data.get("exit_code_by_key", {})
                for key in codes:
                    if codes[key] != before.get(key):
                        codes[key] = None  # finished while mutmut was being stopped: not trusted
                meta.write_text(json.dumps(data, indent=4))
    seconds = time.monotonic() - start
    (ws / RUNNING).unlink(missing_ok=True)
    if proc.returncode != 0 and not cut:
        tail = (ws / "mutmut.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"mutmut failed on target {name} (exit {proc.returncode}); end of its log:\n{tail}")
    return seconds, cut


def _record_run(name: str, seconds: float, cut: bool, *, retest: bool) -> None:
    run = WORKSPACES / name / "run.json"
    info = json.loads(run.read_text()) if retest and run.exists() else {}
    info["retested" if retest else "finished"] = _now()
    info["seconds"] = round(seconds + (info.get("seconds", 0.0) if retest else 0.0), 1)
    info["cut_short"] = cut
    run.write_text(json.dumps(info))


def run_target(name: str, jobs: int, budget: Optional[float] = None) -> float:
    """Run mutmut on one target; its output goes to ``.mutation/<name>/mutmut.log``."""
    target = TARGETS[name]
    missing = [t for t in target.tests if not (REPO / t.partition("::")[0]).exists()]
    if missing:
        raise SystemExit(f"target {name}: test files missing: {', '.join(missing)}")
    ws = prepare_workspace(name, target)
    (ws / "mutmut.log").unlink(missing_ok=True)
    seconds, cut = _launch(name, [], jobs, budget)
    _record_run(name, seconds, cut, retest=False)
    return seconds


def retest_target(name: str, jobs: int, budget: Optional[float] = None) -> float:
    """Re-run the last run's surviving mutants of a target, those it left unchecked and those that
    timed out (a loaded machine can stop a sound mutant), against the current tests.

    The mutants (and their names) stay those of the last full run, so the module's source must be
    unchanged since; the tests and every other module are copied afresh and mutmut's
    test-to-function map is rebuilt, so new tests (and fixes elsewhere) count.
    """
    target = TARGETS[name]
    ws = WORKSPACES / name
    meta = _meta_path(name)
    if not meta.exists():
        raise SystemExit(f"target {name} has no previous run to retest; run it in full first")
    if (ws / target.source).read_bytes() != (REPO / target.source).read_bytes():
        raise SystemExit(f"{target.source} changed since the last run of {name}: its mutants are stale; "
                         "run the target in full")
    data = json.loads(meta.read_text())
    codes: dict[str, Optional[int]] = data.get("exit_code_by_key", {})
    survivors = sorted(k for k, c in codes.items() if c not in KILLED_CODES or c in TIMEOUT_CODES)
    if not survivors:
        return 0.0
    _claim(ws, name)
    # Not checked until re-run: a retest cut short by its budget then reports only what it re-ran.
    for key in survivors:
        codes[key] = None
    meta.write_text(json.dumps(data, indent=4))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.rmtree(ws / "tests")
    shutil.copytree(REPO / "tests", ws / "tests", ignore=ignore)
    # Every other module as it is now (only the target's mutants are kept from the last run).
    for src in (REPO / "src").rglob("*"):
        rel = src.relative_to(REPO)
        if not src.is_file() or "__pycache__" in rel.parts or str(rel) == target.source:
            continue
        for dst in (ws / rel, ws / "mutants" / rel):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    shutil.rmtree(ws / "mutants" / "tests", ignore_errors=True)
    # The target's current test list; with mutmut's stats removed (rebuilt from these tests) the
    # changed selection does not reset the recorded verdicts.
    _write_pyproject(ws, target)
    (ws / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    seconds, cut = _launch(name, survivors, jobs, budget)
    _record_run(name, seconds, cut, retest=True)
    return seconds


def _load_triage() -> list[dict]:
    if not TRIAGE.exists():
        return []
    entries = tomllib.loads(TRIAGE.read_text()).get("mutant", [])
    for e in entries:
        if e.get("verdict") not in ("equivalent", "hole") or not e.get("target") or not e.get("change") \
                or not e.get("reason"):
            raise SystemExit(f"{TRIAGE}: each [[mutant]] needs target (or \"*\"), change, verdict "
                             f"(equivalent|hole) and reason, and may name a function; bad entry: {e}")
    return entries


def _changed_lines(diff: str) -> list[str]:
    return [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]


def _function_of(mutant: str) -> str:
    base = mutant.partition("__mutmut_")[0].rpartition(".")[2]
    return base.split("ǁ")[-1] if "ǁ" in base else base.removeprefix("x_")


def triage(target: str, survivor: Survivor, entries: list[dict]) -> None:
    """Attach the verdict of the first triage entry matching the survivor's function and change."""
    lines = _changed_lines(survivor.diff)
    changed = " ".join(lines)
    function = _function_of(survivor.name)
    for e in entries:
        if e["target"] not in ("*", target) or e.get("function", function) != function:
            continue
        if e["change"] == "*" and "function" in e or \
                ((e["change"] in lines) if e.get("exact") else (e["change"] in changed)):
            survivor.verdict = e["verdict"]
            survivor.reason = e.get("reason", "")
            e["_used"] = True
            return


def _sha256(path: Path) -> Optional[str]:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def snapshot(name: str) -> Optional[dict]:
    """The last run of a target as its workspace holds it (None when it never ran here)."""
    target = TARGETS[name]
    ws = WORKSPACES / name
    meta = _meta_path(name)
    if not meta.exists():
        return None
    codes: dict[str, Optional[int]] = json.loads(meta.read_text()).get("exit_code_by_key", {})
    run = ws / "run.json"
    info = json.loads(run.read_text()) if run.exists() else {}
    return {
        "source": target.source,
        "source_sha256": _sha256(ws / target.source),
        "tests": list(target.tests),
        "finished": info.get("retested") or info.get("finished"),
        "seconds": info.get("seconds"),
        "cut_short": bool(info.get("cut_short")),
        "exit_codes": dict(sorted(codes.items(), key=lambda kv: _natural(kv[0]))),
        "diffs": {m: _diff(ws, target.source, m) for m, c in sorted(codes.items(), key=lambda kv: _natural(kv[0]))
                  if c is not None and (c not in KILLED_CODES or c in TIMEOUT_CODES)},
    }


def load_results() -> dict[str, dict]:
    """The recorded runs (tools/mutation_results.json), by target."""
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {}


def update_results() -> dict[str, dict]:
    """Record in tools/mutation_results.json every finished workspace run newer than the recorded one.

    The report is written from this file, so it outlives the (ignored) workspaces: a target not
    re-run keeps its last result, marked stale once its module changes.
    """
    results = load_results()
    changed = False
    for name in TARGETS:
        if _runner(WORKSPACES / name) is not None:
            continue  # under way: the report shows it live, the file keeps the last finished run
        snap = snapshot(name)
        if snap is None or not snap["finished"]:
            continue
        old = results.get(name)
        if old is None or old.get("source") != snap["source"] or (old.get("finished") or "") <= snap["finished"]:
            if old != snap:
                results[name] = snap
                changed = True
    if changed:
        tmp = RESULTS.with_name(f".{RESULTS.name}.{os.getpid()}")
        tmp.write_text(json.dumps({k: results[k] for k in sorted(results)}, indent=1, ensure_ascii=False) + "\n")
        os.replace(tmp, RESULTS)
    return results


def collect(name: str, entries: list[dict], results: dict[str, dict]) -> Optional[TargetResult]:
    """Counts and survivors of the target's last run (None when it never ran)."""
    target = TARGETS[name]
    live = _runner(WORKSPACES / name) is not None
    rec = snapshot(name) if live else results.get(name)
    if rec is None or rec.get("source") != target.source:
        return None
    codes: dict[str, Optional[int]] = rec["exit_codes"]
    res = TargetResult(name, total=len(codes), running=live)
    res.seconds, res.finished, res.cut_short = rec.get("seconds"), rec.get("finished"), rec.get("cut_short", False)
    res.stale = rec.get("source_sha256") != _sha256(REPO / target.source)
    for mutant, code in codes.items():
        if code in TIMEOUT_CODES:
            # Killed by mutmut's count, unless judged otherwise: a mutant that takes a code path
            # using Arrow's thread pool can hang in mutmut's forked worker though it passes the
            # same tests in a plain pytest run (checked by hand for each one triaged).
            s = Survivor(mutant, "timeout", rec["diffs"].get(mutant, ""))
            triage(name, s, entries)
            if s.verdict == "untriaged":
                res.killed += 1
                res.timeouts.append(s)
            else:
                res.survivors.append(s)
        elif code in KILLED_CODES:
            res.killed += 1
        elif code is None:
            res.not_checked += 1
        else:
            status = "survived" if code in SURVIVED_CODES else "no tests" if code in NO_TEST_CODES else f"exit {code}"
            s = Survivor(mutant, status, rec["diffs"].get(mutant, ""))
            triage(name, s, entries)
            res.survivors.append(s)
    return res


def _natural(name: str) -> tuple:
    head, _, num = name.rpartition("__mutmut_")
    return (head, int(num) if num.isdigit() else 0)


def _diff(ws: Path, source: str, mutant: str) -> str:
    """The mutant's diff against the original function (mutmut's own ``show``, in process)."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    old = os.getcwd()
    os.chdir(ws)  # mutmut reads its config and the mutants/ folder from the working directory
    try:
        reset_config()
        text = get_diff_for_mutant(mutant, path=Path(source))
    finally:
        os.chdir(old)
    # Keep the hunks only (no file headers).
    return "\n".join(line for line in text.splitlines() if not line.startswith(("---", "+++")))


def write_report(results: list[TargetResult]) -> None:
    """MUTATION.md: the score per target, then every survivor with its diff and verdict."""
    out = [
        "# Mutation testing",
        "",
        "Written by `tools/mutation.py` (mutmut, one source module per target, each against the fast",
        "deterministic tests listed below; the hypothesis model histories and fuzzers are left out, so every",
        "kill comes from a deterministic test). Score = killed / (mutants - not checked - equivalent); a run cut",
        "short by `--budget` leaves mutants not checked (its score covers the checked ones). Survivors are",
        "triaged in `tools/mutation_triage.toml`: **equivalent** (no test can tell it from the original;",
        "out of the score) or **hole** (a known gap). Re-run with `python tools/mutation.py TARGET...`",
        "(`--budget MINUTES` per target, `--retest` to go on with the unchecked and surviving mutants).",
        "The runs are recorded in `tools/mutation_results.json`; a row marked *stale* is from an",
        "earlier version of its module (re-run it). Mutants mutmut stopped for time count as killed",
        "(listed, with their count in brackets) unless triaged: on this 2-core machine a few hang only",
        "in mutmut's forked worker and pass the same tests in a plain pytest run (those are equivalent).",
        "",
        "| target | module | mutants | not checked | killed (timeouts) | equivalent | known holes | untriaged | score | run |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        score = "-" if r.score is None else f"{r.score:.1f}%"
        when = f"{r.finished}, {r.seconds:.0f} s" if r.finished and r.seconds is not None else ""
        when += ", cut short" if r.cut_short and r.not_checked else ""
        when += ", *stale*" if r.stale else ""
        when = "**running: partial**" if r.running else when
        killed = f"{r.killed} ({len(r.timeouts)})" if r.timeouts else str(r.killed)
        out.append(f"| {r.target} | `{TARGETS[r.target].source}` | {r.total} | {r.not_checked} | {killed} | "
                   f"{r.equivalent} | {r.holes} | {r.untriaged} | {score} | {when} |")
    total = sum(r.total for r in results)
    killed = sum(r.killed for r in results)
    eq = sum(r.equivalent for r in results)
    nc = sum(r.not_checked for r in results)
    if total - eq - nc > 0:
        out.append(f"| **all** | | {total} | {nc} | {killed} | {eq} | {sum(r.holes for r in results)} | "
                   f"{sum(r.untriaged for r in results)} | {100.0 * killed / (total - eq - nc):.1f}% | |")
    never = [t for t in TARGETS if t not in {r.target for r in results}]
    if never:
        out += ["", "Not run yet: " + ", ".join(f"{t} (`{TARGETS[t].source}`)" for t in never) + "."]
    out += ["", "## Test commands", ""]
    for r in results:
        out.append(f"* **{r.target}**: " + ", ".join(f"`{t}`" for t in TARGETS[r.target].tests))
    out += ["", f"All with `-k \"{DESELECT}\"`.", "", "## Survivors", ""]
    for r in results:
        if not r.survivors and not r.timeouts:
            continue
        out += [f"### {r.target}", ""]
        for s in r.timeouts:
            out += [f"* `{s.name}` (timeout) — counted as **killed**: mutmut stopped it", "", "  ```diff"]
            out += [f"  {line}" for line in s.diff.splitlines() if line.startswith(("+", "-", "@"))]
            out += ["  ```", ""]
        for s in r.survivors:
            label = {"equivalent": "equivalent", "hole": "known hole", "untriaged": "untriaged"}[s.verdict]
            why = f": {s.reason}" if s.reason else ""
            out += [f"* `{s.name}` ({s.status}) — **{label}**{why}", "", "  ```diff"]
            out += [f"  {line}" for line in s.diff.splitlines() if line.startswith(("+", "-", "@"))]
            out += ["  ```", ""]
    tmp = REPORT.with_name(f".{REPORT.name}.{os.getpid()}")
    tmp.write_text("\n".join(out).rstrip() + "\n")
    os.replace(tmp, REPORT)  # runs finishing at the same time never leave a half-written report


def main(argv: Optional[list[str]] = None) -> int:
    """Command line: run the chosen targets (or none, with --report) and rewrite MUTATION.md."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", help="targets to run (see --list)")
    ap.add_argument("--all", action="store_true", help="run every target")
    ap.add_argument("--list", action="store_true", help="list the targets and their tests")
    ap.add_argument("--report", action="store_true", help="only rewrite MUTATION.md from the last runs")
    ap.add_argument("--retest", action="store_true",
                    help="re-run only the survivors of each target's last run, against the current tests")
    ap.add_argument("--jobs", type=int, default=1, help="mutants tested in parallel (default 1)")
    ap.add_argument("--budget", type=float, metavar="MINUTES",
                    help="stop each target after this many minutes; the mutants left are reported as not "
                         "checked, and --retest goes on with them")
    args = ap.parse_args(argv)
    if args.list:
        for name, t in TARGETS.items():
            print(f"{name:24} {t.source}\n{'':24} tests: {' '.join(t.tests)}")
        return 0
    chosen = list(TARGETS) if args.all else args.targets
    unknown = [t for t in chosen if t not in TARGETS]
    if unknown:
        ap.error(f"unknown target(s) {', '.join(unknown)}; choose from {', '.join(TARGETS)}")
    if not chosen and not args.report:
        ap.error("name targets to run, or --all, or --report")
    if not args.report:
        for name in chosen:
            print(f"mutation: {name} ...", flush=True)
            budget = None if args.budget is None else 60.0 * args.budget
            seconds = (retest_target if args.retest else run_target)(name, args.jobs, budget)
            print(f"mutation: {name} done in {seconds:.0f} s", flush=True)
    entries = _load_triage()
    recorded = update_results()
    results = [r for r in (collect(n, entries, recorded) for n in TARGETS) if r is not None]
    write_report(results)
    for r in results:
        score = "-" if r.score is None else f"{r.score:.1f}%"
        print(f"{r.target:24} {r.killed}/{r.total - r.equivalent - r.not_checked} killed ({score}); "
              f"{r.not_checked} not checked, "
              f"{r.equivalent} equivalent, {r.holes} holes, {r.untriaged} untriaged"
              + (" (running: partial)" if r.running else ""))
    # Entries of targets whose last run is current but that matched no survivor: the mutant is
    # killed now (or the code moved); drop them so they cannot hide a new hole.
    current = {r.target for r in results if not r.stale and not r.running and not r.not_checked}
    unused = [e for e in entries if e["target"] in current and not e.get("_used")]
    for e in unused:
        print(f"triage entry matches no survivor: target={e['target']} function={e.get('function', '*')} "
              f"change={e['change']!r}")
    print(f"wrote {REPORT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
