"""Shared test fixtures (the Java-written Hudi v6 tables of tests/fixtures/hudi-v6), the Hypothesis
profiles (docs/testing.md) and the guard that keeps the run inside the repository."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, is_hypothesis_test, settings
from hypothesis.errors import InvalidArgument

from tests.fixture_paths import REPO, V6_DIR as FIXTURE_DIR

FIXTURE_ZIPS = sorted(FIXTURE_DIR.glob("*.zip"))

# Only processes die in this run, never the machine: local writes skip the flush to stable storage
# (hoodie.format.storage.fsync_enabled; about a tenth of a pure-Python test's time). Inherited by every
# child process and Spark worker; tests/format/test_storage_sync.py checks the flush with it on.
os.environ.setdefault("HOODIE_FSYNC", "false")


def _beside_checkout(path: str) -> bool:
    """Whether ``path`` lies beside the checkout (under its parent folder, outside the repository,
    the interpreter's own folders and the temporary folder). A fresh clone has nothing there, so a
    test that reads there passes only on the machine it was written on."""
    full = os.path.abspath(path) + os.sep
    # Hidden entries (a home folder's .cache, .config) are tools' state, not another checkout.
    return (full.startswith(_PARENT) and full != _PARENT and not full.startswith(_ALLOWED)
            and not full[len(_PARENT):].startswith("."))


_PARENT = str(REPO.parent) + os.sep
# Folders a test may read although they lie under the checkout's parent; a folder that holds the
# parent itself (the temporary folder, when the clone lives in it, as .ci/run's does) is no exemption.
_ALLOWED = tuple(a for a in {str(REPO) + os.sep, tempfile.gettempdir() + os.sep, sys.prefix + os.sep,
                             sys.base_prefix + os.sep, *(os.path.abspath(p) + os.sep for p in sys.path if p)}
                 if not _PARENT.startswith(a))


def _guard_reads(event: str, args: tuple) -> None:
    """Audit hook: refuse every open or listing of a path beside the checkout (docs/testing.md)."""
    if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if _beside_checkout(path):
            raise PermissionError(f"a test read {path}, outside the repository {REPO}: a fresh clone has nothing "
                                  "there; put what the test needs under tests/fixtures/ with its provenance")


sys.addaudithook(_guard_reads)

# Hypothesis profiles. Per-test counts are written for "ci" and pass through tests.helpers.examples,
# which scales them by the active profile's max_examples / 100 (so by LONG_FACTOR under "long").
LONG_FACTOR = 10
_BASE = settings.get_profile("default")
# "ci", the default everywhere: derandomized. Each test draws the same examples on every run
# (seeded from the test's own code), so a red run is the change's fault, re-running the test
# reproduces it exactly, and the run's length is stable. The price is that the default run
# explores nothing new; exploring is the long profile's job. No deadline and no too_slow check:
# both measure time, and the machines are shared, so they would fail at random.
settings.register_profile("ci", _BASE, max_examples=100, derandomize=True, database=None, deadline=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
# "long", behind -m slow: random seeds on every run and LONG_FACTOR times the examples; the example
# database (.hypothesis/, git-ignored) replays any failure it found first on the next run.
settings.register_profile("long", _BASE, max_examples=100 * LONG_FACTOR, derandomize=False, deadline=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])


def _selects_slow(markexpr: str) -> bool:
    """Whether the -m expression lets a test marked only ``slow`` through (an empty one lets all through)."""
    if not markexpr:
        return True
    from _pytest.mark.expression import Expression

    try:
        return Expression.compile(markexpr).evaluate(lambda name, **kwargs: name == "slow")
    except SyntaxError:
        return False  # pytest reports the malformed expression itself


def pytest_configure(config: pytest.Config) -> None:
    """Load the Hypothesis profile: --hypothesis-profile, else $HYPOTHESIS_PROFILE, else "long" when
    the run includes the slow tests (``-m slow``) and "ci" otherwise."""
    slow = _selects_slow(config.getoption("markexpr"))
    name = (config.getoption("--hypothesis-profile") or os.environ.get("HYPOTHESIS_PROFILE")
            or ("long" if slow else "ci"))
    try:
        settings.load_profile(name)
    except InvalidArgument:
        raise pytest.UsageError(f"unknown Hypothesis profile {name!r}; use ci (the default) or long") from None
    if settings.get_profile(name).max_examples > 100 and not slow:
        raise pytest.UsageError(
            f"the Hypothesis profile {name!r} makes every Hypothesis test a slow test, and this run "
            "excludes slow tests; run the long suite with `python3 -m pytest -m slow`")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under a profile with more examples than "ci", every Hypothesis test is a slow test, so the
    default run (``-m 'not slow'``) never runs a long property and ``-m slow`` runs them all. Tests
    that call @given inside their body declare it with ``@pytest.mark.hypothesis``."""
    for item in items:
        # Under pytest-xdist (the default run has two workers) every test of tests/engine runs on the
        # same worker: they share one Spark session (local[2]), and a second session on the other
        # worker would double the JVM start and take the cores the pure-Python tests run on.
        if item.nodeid.replace(os.sep, "/").startswith(("tests/engine/", "engine/")):
            item.add_marker(pytest.mark.xdist_group("spark"))
    if settings().max_examples <= 100:
        return
    for item in items:
        if isinstance(item, pytest.Function) and (is_hypothesis_test(item.obj) or item.get_closest_marker("hypothesis")):
            item.add_marker(pytest.mark.slow)


def unzip_fixture(zip_path: Path, dest: Path) -> Path:
    """Unzip one fixture (skipping __MACOSX) and return the folder that holds the table,
    its gold_data and gold_options."""
    with zipfile.ZipFile(zip_path) as zf:
        for member in zf.namelist():
            if member.startswith("__MACOSX"):
                continue
            zf.extract(member, dest)
    return dest


@pytest.fixture(scope="session")
def fixtures_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All fixture zips unzipped once per session into a read-only-by-convention folder."""
    if not FIXTURE_ZIPS:
        raise RuntimeError(f"no fixture zips found in {FIXTURE_DIR}")
    root = tmp_path_factory.mktemp("hudi_v6_fixtures")
    for z in FIXTURE_ZIPS:
        unzip_fixture(z, root / z.stem)
    return root


def fixture_table_path(root: Path, zip_stem: str) -> Path:
    """The table folder inside an unzipped fixture (the one holding .hoodie)."""
    base = root / zip_stem
    for child in sorted(base.iterdir()):
        if (child / ".hoodie").is_dir():
            return child
    raise FileNotFoundError(f"no table in {base}")


@pytest.fixture()
def fixture_copy(fixtures_root: Path, tmp_path: Path):
    """A function returning a private, writable copy of a fixture table."""

    def _copy(zip_stem: str) -> Path:
        src = fixture_table_path(fixtures_root, zip_stem)
        dst = tmp_path / zip_stem / src.name
        shutil.copytree(src, dst, symlinks=True)
        return dst

    return _copy


def pytest_report_header() -> str:
    """Name the Hypothesis profile at the top of every run (pytest -v shows Hypothesis' own line)."""
    s = settings()
    return (f"hypothesis profile {settings.get_current_profile_name()!r}: "
            f"{'derandomized' if s.derandomize else 'random'}, per-test counts x{s.max_examples // 100}")
