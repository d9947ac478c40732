"""A fresh clone passes its tests with nothing beside it: every fixture is inside the repository and
a read beside the checkout is refused while the tests run (the guard in tests/conftest.py)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from tests.conftest import _beside_checkout
from tests.fixture_paths import FIXTURES, HFILE_DIR, REPO, V6_DIR, V89_DIR


def test_a_read_beside_the_checkout_is_refused(tmp_path: Path) -> None:
    """The guard is on for the whole run: opening or listing a sibling of the repository fails."""
    sibling = REPO.parent / "shared" / "fixtures" / "hudi-v6" / "README.md"
    with pytest.raises(PermissionError, match="outside the repository"):
        open(sibling).close()
    with pytest.raises(PermissionError, match="outside the repository"):
        list((REPO.parent / "shared").iterdir())
    assert _beside_checkout(str(REPO.parent / "other-checkout" / "x"))
    assert not _beside_checkout(str(REPO / "tests" / "fixtures"))
    assert not _beside_checkout(str(tmp_path / "x"))
    (tmp_path / "x").write_text("ok")  # the temporary folder stays usable


def test_fixtures_are_inside_the_repository_with_their_provenance() -> None:
    """Each fixture folder is under tests/fixtures, holds files, and its README names source and licence."""
    for folder in (V6_DIR, V89_DIR, HFILE_DIR):
        assert folder.resolve().is_relative_to(FIXTURES.resolve()), folder
        readme = (folder / "README.md").read_text()
        assert "Provenance" in readme and "Apache-2.0" in readme, folder
        data = [p for p in folder.iterdir() if p.name != "README.md"]
        assert len(data) >= 7, folder
        # every data file the README lists is there, and every zip opens
        for z in folder.glob("*.zip"):
            assert zipfile.ZipFile(z).testzip() is None, z
            assert z.stem in readme, f"{z.name} is not in {folder / 'README.md'}"


def test_no_test_names_a_folder_beside_the_checkout() -> None:
    """No test, benchmark or tool looks for ``shared/`` (the steering folder CI has and a clone lacks)."""
    pattern = re.compile(r"""["'/]shared["'/]|\.\./shared""")
    offenders = [str(p.relative_to(REPO)) for d in ("tests", "bench", "tools") for p in (REPO / d).rglob("*.py")
                 if p.name != "test_fresh_clone.py" and pattern.search(p.read_text())]
    assert not offenders, offenders
