"""Shared test fixtures: the Java-written Hudi v6 tables from ../shared/fixtures/hudi-v6."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE_DIR = Path(os.environ.get("HOODIE_FIXTURES", REPO.parent / "shared" / "fixtures" / "hudi-v6"))
FIXTURE_ZIPS = sorted(FIXTURE_DIR.glob("*.zip"))


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
        raise RuntimeError(f"no fixture zips found in {FIXTURE_DIR}; set HOODIE_FIXTURES")
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
