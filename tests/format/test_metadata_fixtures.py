"""Java-written metadata tables: the files partition's listing equals the storage listing.

Every fixture table of ``tests/fixtures/hudi-v6`` and ``hudi-v8-v9`` that holds
``.hoodie/metadata/files`` is compared (none of the v6 ones has a metadata table; the v8/v9 ones read
their MDT timeline with layout 2): the MDT listing, names and sizes, must equal the storage listing
filtered to files of completed instants, and every file of hudi-rs's latest file slices (which
hudi-rs takes from the MDT for v8/v9) must be listed with the same size. Tables whose properties name
the files partition but whose zip holds no MDT must raise MetadataTableNotFoundError (the hook then
lists storage, as Java and hudi-rs do).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import list_partitions
from hoodie.format.metadata import MetadataTable, MetadataTableNotFoundError, files_partition_available
from hoodie.format.storage import Storage
from tests.fixture_paths import V6_DIR, V89_DIR
from tests.conftest import unzip_fixture



ZIPS = sorted(V6_DIR.glob("*.zip")) + sorted(V89_DIR.glob("*.zip"))


def _members(z: Path) -> list[str]:
    with zipfile.ZipFile(z) as zf:
        return [m for m in zf.namelist() if not m.startswith("__MACOSX")]


WITH_MDT = [z for z in ZIPS if any("/.hoodie/metadata/files/" in m for m in _members(z))]
WITHOUT_MDT = [z for z in ZIPS if z not in WITH_MDT]


def _table(z: Path, tmp: Path) -> Path:
    unzip_fixture(z, tmp)
    props = [p for p in tmp.rglob(".hoodie/hoodie.properties") if "/.hoodie/metadata/" not in str(p)]
    assert len(props) == 1, props
    return props[0].parent.parent


def _committed_storage_listing(base: Path, mdt: MetadataTable) -> dict[str, dict[str, int]]:
    """Base and log files of completed commits, deltacommits and replacecommits (a v8/v9 log file
    names the deltacommit that wrote it; every fixture's logs do), per partition."""
    done = {i.timestamp for i in mdt.data_timeline.completed()
            if i.action in ("commit", "deltacommit", "replacecommit")}
    storage = Storage(str(base))
    out: dict[str, dict[str, int]] = {}
    for p in list_partitions(storage):
        files: dict[str, int] = {}
        for e in storage.list_dir(p):
            if e.is_dir:
                continue
            if N.is_base_file(e.name) and N.parse_base_file(e.name).instant in done:
                files[e.name] = e.size
            elif N.is_log_file(e.name) and N.parse_log_file(e.name).base_instant in done:
                files[e.name] = e.size
        if files:
            out[p] = files
    return out


def test_fixture_folders_hold_metadata_tables() -> None:
    assert ZIPS, f"no fixture zips in {V6_DIR} or {V89_DIR}"
    assert WITH_MDT, "no fixture holds .hoodie/metadata/files"


@pytest.mark.parametrize("zip_path", WITH_MDT, ids=[z.stem for z in WITH_MDT])
def test_mdt_listing_equals_storage(zip_path: Path, tmp_path: Path) -> None:
    base = _table(zip_path, tmp_path)
    mdt = MetadataTable(str(base))
    assert files_partition_available(mdt.data_props)
    listing = mdt.listing()
    assert listing == _committed_storage_listing(base, mdt)
    assert sum(len(f) for f in listing.values()) > 0
    assert mdt.scan is not None and not mdt.scan.corrupt


@pytest.mark.parametrize("zip_path", WITH_MDT, ids=[z.stem for z in WITH_MDT])
def test_hudi_rs_latest_slices_are_listed(zip_path: Path, tmp_path: Path) -> None:
    from hudi import HudiTableBuilder

    base = _table(zip_path, tmp_path)
    listing = MetadataTable(str(base)).listing()
    slices = HudiTableBuilder.from_base_uri(str(base)).build().get_file_slices()
    assert slices
    for s in slices:
        files = listing[s.partition_path]
        if s.base_file_name:
            assert files[s.base_file_name] == s.base_file_size
        for name, size in zip(s.log_file_names, s.log_file_sizes):
            assert files[name] == size


@pytest.mark.parametrize("zip_path", WITHOUT_MDT, ids=[z.stem for z in WITHOUT_MDT])
def test_tables_without_mdt(zip_path: Path, tmp_path: Path) -> None:
    """A table naming the files partition without shipping the MDT raises the not-found error that
    the listing hook turns into a storage listing; the others do not name it."""
    base = _table(zip_path, tmp_path)
    mdt = MetadataTable(str(base))
    if files_partition_available(mdt.data_props):
        with pytest.raises(MetadataTableNotFoundError, match="hoodie.metadata.enable=false"):
            mdt.partitions()
    else:
        assert not (base / ".hoodie" / "metadata" / "files").exists()
