"""The health report on every Java-written fixture table (table versions 6, 8 and 9): it reads
them without error and writes nothing; the rows it reports per partition (Parquet footers) equal the
read-optimized rows per partition that hudi-rs and hoodie's reader return; the timeline counts and
rollbacks are the tables' own; the page renders."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow.compute as pc
import pytest

from hoodie.format.slice.reader import read_table
from hoodie.format.table import HoodieTable
from hoodie.interfaces.report_html import render_html
from hoodie.services.report import gather_report
from tests.conftest import fixture_table_path, unzip_fixture
from tests.fixture_paths import V6_DIR, V89_DIR
from tests.hudi_rs import read_hudi_rs

ZIPS = sorted(V6_DIR.glob("*.zip")) + sorted(V89_DIR.glob("*.zip"))
# hudi-rs 0.5.0 cannot read these (the reason is the fixture's point); hoodie's reader is the oracle.
HUDI_RS_CANNOT = {"quickstart_trips_table_mor_avro_table_corrupt_tail_block"}


def _digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _per_partition(t) -> dict[str, int]:
    if t.num_rows == 0:
        return {}
    return {c["values"]: c["counts"] for c in pc.value_counts(t.column("_hoodie_partition_path")).to_pylist()}


@pytest.mark.parametrize("zip_path", ZIPS, ids=[z.stem for z in ZIPS])
def test_report_on_fixture(zip_path: Path, tmp_path: Path) -> None:
    root = unzip_fixture(zip_path, tmp_path / zip_path.stem)
    path = fixture_table_path(tmp_path, zip_path.stem)
    assert root.exists()
    before = _digest(path)
    r = gather_report(str(path), {"hoodie.partition.ttl.strategy.days.retain": "30"})
    page = render_html(r)
    assert _digest(path) == before, "the report changed the table"
    for section in ("Needs attention", "Partitions", "Freshness", "Compaction backlog", "Base files", "Timeline"):
        assert f"<h2>{section}" in page
    assert ('data-chart="timeline"' in page) == bool(r["timeline"]["active"])

    # Readers return nothing for a partition whose base files hold no row (all deleted).
    got = {p["partition"]: p["rows"] for p in r["partitions"]["rows"] if p["rows"]}
    ours = _per_partition(read_table(str(path), query_type="read_optimized", columns=["_hoodie_partition_path"]))
    assert got == ours
    if zip_path.stem not in HUDI_RS_CANNOT:
        assert got == _per_partition(read_hudi_rs(str(path), query_type="read_optimized"))

    tl = HoodieTable(str(path), read_only=True).timeline
    assert r["timeline"]["active"] == len(tl.instants)
    assert sum(r["timeline"]["by_kind"].values()) == len(tl.instants)
    has_mdt = (path / ".hoodie" / "metadata" / ".hoodie").is_dir()
    assert (r["timeline"]["metadata_table_instants"] or 0) > 0 if has_mdt else r["timeline"]["metadata_table_instants"] is None
    if "rollback" in zip_path.stem:
        assert r["timeline"]["rollbacks"] and r["timeline"]["rolled_back_instants"]
    # The TTL dry run ran on every partitioned table (these were written years ago: all expire).
    ttl = r["partitions"]["ttl"]
    assert ttl["error"] is None, ttl["error"]
    if r["table"]["partition_fields"] and r["partitions"]["rows"]:
        assert ttl["dry_run_instant"] and sorted(ttl["would_expire"]) == sorted(p["partition"] for p in r["partitions"]["rows"])
    if r["table"]["table_version"] >= 8:
        assert r["timeline"]["archived"]["instants"] is not None
