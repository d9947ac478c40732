"""Every Java-written fixture table reads identically to the gold data Spark read from it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hoodie
from tests.conftest import FIXTURE_ZIPS, fixture_table_path
from tests.helpers import rows_of

META = {"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"}
STEMS = [z.stem for z in FIXTURE_ZIPS]


def _gold(folder: Path) -> pa.Table:
    files = sorted(p for p in folder.glob("*.parquet"))
    assert files, f"no gold parquet in {folder}"
    return pa.concat_tables([pq.read_table(f) for f in files])


def _assert_same(ours: pa.Table, gold: pa.Table, columns: list[str]) -> None:
    assert sorted(rows_of(ours, columns)) == sorted(rows_of(gold, columns))


@pytest.mark.parametrize("stem", STEMS)
def test_snapshot_matches_gold(fixtures_root: Path, stem: str) -> None:
    table = fixture_table_path(fixtures_root, stem)
    gold = _gold(fixtures_root / stem / "gold_data")
    ours = hoodie.read_table(str(table))
    data_cols = [c for c in gold.column_names if c not in META]
    assert ours.num_rows == gold.num_rows
    _assert_same(ours, gold, data_cols)
    # Meta columns that Spark returned must match too (commit time and record key identify versions).
    for c in ("_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path"):
        if c in gold.column_names:
            _assert_same(ours, gold, [c] + data_cols[:1])


def option_cases(zips: list[Path] = FIXTURE_ZIPS) -> list[tuple[str, dict]]:
    """(zip stem, case) for every case of every ``gold_options/manifest.json`` in ``zips``."""
    import zipfile

    out = []
    for z in zips:
        with zipfile.ZipFile(z) as zf:
            names = [n for n in zf.namelist() if n.endswith("gold_options/manifest.json") and "__MACOSX" not in n]
            for n in names:
                manifest = json.loads(zf.read(n))
                for case in manifest["cases"]:
                    out.append((z.stem, case))
    return out


def read_kwargs(case: dict) -> dict:
    """``read_table`` arguments for a gold_options case (projection, read-optimized, incremental)."""
    kwargs: dict = {}
    if case.get("read_optimized"):
        kwargs["query_type"] = "read_optimized"
    if "start_timestamp" in case:
        kwargs.update(query_type="incremental", begin=case["start_timestamp"], end=case.get("end_timestamp"))
    if "projection" in case:
        kwargs["columns"] = case["projection"]
    return kwargs


@pytest.mark.parametrize("stem,case", option_cases(), ids=lambda x: x if isinstance(x, str) else x["name"])
def test_gold_options(fixtures_root: Path, stem: str, case: dict) -> None:
    table = str(fixture_table_path(fixtures_root, stem))
    gold = _gold(fixtures_root / stem / "gold_options" / case["name"])
    ours = hoodie.read_table(table, **read_kwargs(case))
    cols = case.get("projection") or [c for c in gold.column_names if c not in META]
    if "projection" in case:
        assert ours.column_names == case["projection"]
    assert ours.num_rows == gold.num_rows
    _assert_same(ours, gold, cols)


def test_read_optimized_differs_from_snapshot_on_mor(fixtures_root: Path) -> None:
    """The MOR fixture's update lives in a log: RO must show the old value, snapshot the new."""
    table = str(fixture_table_path(fixtures_root, "quickstart_trips_table_mor_avro_v6_trips_8i1u"))
    snap = hoodie.read_table(table, columns=["uuid", "fare", "_hoodie_commit_time"])
    ro = hoodie.read_table(table, query_type="read_optimized", columns=["uuid", "fare", "_hoodie_commit_time"])
    assert snap.num_rows == ro.num_rows == 8
    assert sorted(rows_of(snap, ["uuid", "fare"])) != sorted(rows_of(ro, ["uuid", "fare"]))
    assert len(set(snap.column("_hoodie_commit_time").to_pylist())) == 2
    assert len(set(ro.column("_hoodie_commit_time").to_pylist())) == 1


def test_time_travel_before_update(fixtures_root: Path) -> None:
    table = str(fixture_table_path(fixtures_root, "quickstart_trips_table_mor_avro_v6_trips_8i1u"))
    first = "20250331030642808"
    old = hoodie.read_table(table, as_of=first, columns=["uuid", "fare"])
    ro = hoodie.read_table(table, query_type="read_optimized", columns=["uuid", "fare"])
    assert sorted(rows_of(old, ["uuid", "fare"])) == sorted(rows_of(ro, ["uuid", "fare"]))


def test_rollback_fixture_ignores_rolled_back_block(fixtures_root: Path) -> None:
    table = str(fixture_table_path(fixtures_root, "sample_table_mor_parquet_v6_nonpartitioned_rollback"))
    t = hoodie.read_table(table, columns=["id", "_hoodie_commit_time"])
    times = dict(zip(t.column("id").to_pylist(), t.column("_hoodie_commit_time").to_pylist()))
    assert times == {1: "20250126040823628", 2: "20250126060846931", 3: "20250126040823628"}


def test_filters_and_partition_pruning(fixtures_root: Path) -> None:
    table = str(fixture_table_path(fixtures_root, "quickstart_trips_table_mor_avro_v6_trips_8i1u"))
    t = hoodie.read_table(table, filters=[("city", "=", "san_francisco")], columns=["city"])
    assert t.num_rows == 4 and set(t.column("city").to_pylist()) == {"san_francisco"}
    t = hoodie.read_table(table, filters=[("city", "in", ["chennai", "sao_paulo"]), ("fare", ">", 0.0)],
                          columns=["city"])
    assert t.num_rows == 4
