"""hoodie.properties, partition metafiles and file naming, checked against the Java fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.file_group import naming as N
from hoodie.format import properties as P
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable, TableError, create_table, read_partition_metadata
from tests.conftest import FIXTURE_ZIPS, fixture_table_path
from tests.helpers import examples


@pytest.mark.parametrize("stem", [z.stem for z in FIXTURE_ZIPS])
def test_fixture_properties_parse_and_checksum(fixtures_root: Path, stem: str) -> None:
    path = fixture_table_path(fixtures_root, stem)
    text = (path / ".hoodie" / "hoodie.properties").read_text()
    props = P.parse_properties(text)
    assert props["hoodie.table.version"] == "6"
    assert P.validate_checksum(props), "the checksum is CRC32 of '<db>.<table>'"
    # Escaped ':' inside the create schema must round-trip to valid JSON.
    if "hoodie.table.create.schema" in props:
        import json

        assert json.loads(props["hoodie.table.create.schema"])["type"] == "record"


def test_checksum_matches_reference_example() -> None:
    assert P.table_checksum("v6_trips_8i3d", "default") == "3180720914"


def test_properties_round_trip_with_escapes() -> None:
    props = {"hoodie.table.name": "t", "a.b": 'x:y=z {"k":"v"} ü', "hoodie.database.name": "db"}
    text = P.format_table_properties(props)
    lines = [l for l in text.splitlines() if not l.startswith("#")]
    assert lines[-1].startswith("hoodie.table.checksum=")
    back = P.parse_properties(text)
    assert back["a.b"] == props["a.b"]
    assert P.validate_checksum(back)


# Keys and values with every character class the Java format escapes or splits on: separators, comment
# marks, backslashes, leading blanks, line breaks, non-ASCII (the parser's fast path skips the escape walk
# only where no backslash is).
_PROP_TEXT = st.text(alphabet=st.sampled_from(list("ab.z09 =:#!\\\t\n\r\fü€{}\"'")) | st.characters(), max_size=12)


@settings(max_examples=examples(200), deadline=None)
@given(st.dictionaries(_PROP_TEXT.filter(lambda k: k != ""), _PROP_TEXT, max_size=6))
def test_properties_round_trip_any_text(props: dict[str, str]) -> None:
    assert P.parse_properties(P.format_properties(props)) == props


def test_create_table_layout(tmp_path: Path) -> None:
    t = create_table(str(tmp_path / "t"), table_name="t", table_type="MERGE_ON_READ",
                     record_key_fields=["id"], partition_fields=["day"], precombine_field="ts")
    for d in (".hoodie/.aux/.bootstrap/.partitions", ".hoodie/.aux/.bootstrap/.fileids", ".hoodie/.temp",
              ".hoodie/.schema", ".hoodie/archived"):
        assert (tmp_path / "t" / d).is_dir(), d
    t2 = HoodieTable(str(tmp_path / "t"))
    assert t2.is_mor and t2.partition_fields == ["day"] and t2.precombine_field == "ts"
    assert "hoodie.table.metadata.partitions" not in t2.props
    assert t2.merge_mode.use_ordering
    with pytest.raises(TableError, match="already exists"):
        create_table(str(tmp_path / "t"), table_name="t", record_key_fields=["id"])


def test_non_table_error_names_fix(tmp_path: Path) -> None:
    with pytest.raises(TableError, match="not a Hudi table"):
        HoodieTable(str(tmp_path))


def test_partition_metadata_fixture(fixtures_root: Path) -> None:
    path = fixture_table_path(fixtures_root, "sample_table_mor_parquet_v6_nonpartitioned_rollback")
    md = read_partition_metadata(Storage(str(path)), "")
    assert md == {"commitTime": "20250126040823628", "partitionDepth": "0"}


def test_base_and_log_names() -> None:
    b = N.parse_base_file("6d3d1d6e-2298-4080-a0c1-494877d6f40a-0_0-13-60_20250331030642808.parquet")
    assert (b.file_id, b.write_token, b.instant) == ("6d3d1d6e-2298-4080-a0c1-494877d6f40a-0", "0-13-60",
                                                     "20250331030642808")
    name = N.log_file_name("fid-0", "20250126040823628", 2, N.UNKNOWN_WRITE_TOKEN)
    assert name == ".fid-0_20250126040823628.log.2_1-0-1"
    lp = N.parse_log_file(name)
    assert (lp.file_id, lp.base_instant, lp.version, lp.write_token) == ("fid-0", "20250126040823628", 2, "1-0-1")
    assert N.is_log_file(name) and not N.is_base_file(name)
    assert N.parse_log_file(".f-0_1.log.3_0-1-2.cdc").suffix == ".cdc"
    with pytest.raises(ValueError):
        N.parse_log_file("f-0_1.log.1")


def test_log_ordering_matches_hudi_comparator() -> None:
    names = [".f_2.log.1_0-1-1", ".f_1.log.10_0-1-1", ".f_1.log.2_1-0-1", ".f_1.log.2_0-9-9", ".f_1.log.1"]
    ordered = sorted((N.parse_log_file(n) for n in names), key=N.LogFileName.sort_key)
    assert [o.name for o in ordered] == [".f_1.log.1", ".f_1.log.2_0-9-9", ".f_1.log.2_1-0-1",
                                         ".f_1.log.10_0-1-1", ".f_2.log.1_0-1-1"]
