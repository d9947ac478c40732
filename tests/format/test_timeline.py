"""Instants, the timeline and create-only transitions."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.timeline import instant as I
from hoodie.format.timeline import active as T
from hoodie.format.timeline.commit_metadata import CommitMetadata, WriteStat
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from tests.conftest import fixture_table_path
from tests.helpers import examples


def test_parse_all_file_names() -> None:
    cases = {
        "20240101000000000.commit": ("commit", I.State.COMPLETED),
        "20240101000000000.inflight": ("commit", I.State.INFLIGHT),
        "20240101000000000.commit.requested": ("commit", I.State.REQUESTED),
        "20240101000000000.deltacommit.inflight": ("deltacommit", I.State.INFLIGHT),
        "20240101000000000.compaction.requested": ("compaction", I.State.REQUESTED),
        "20240101000000000.replacecommit": ("replacecommit", I.State.COMPLETED),
        "20240101000000000.clean.inflight": ("clean", I.State.INFLIGHT),
        "20240101000000000.rollback": ("rollback", I.State.COMPLETED),
        "20240101000000000.savepoint": ("savepoint", I.State.COMPLETED),
        "20240101000000000.restore.requested": ("restore", I.State.REQUESTED),
        "20240101000000000.indexing.inflight": ("indexing", I.State.INFLIGHT),
        "20240101000000000.logcompaction.requested": ("logcompaction", I.State.REQUESTED),
    }
    for name, (action, state) in cases.items():
        inst = I.parse_instant_file_name(name)
        assert inst is not None and (inst.action, inst.state) == (action, state), name
        assert inst.file_name == name
    for junk in ("hoodie.properties", "archived", "20240101.commit", "abc.commit", "20240101000000000.foo"):
        assert I.parse_instant_file_name(junk) is None


def test_fixture_timelines(fixtures_root: Path) -> None:
    t = HoodieTable(str(fixture_table_path(fixtures_root, "sample_table_mor_parquet_v6_nonpartitioned_rollback")))
    tl = t.timeline
    assert [str(i) for i in tl] == [
        "[20250126040823628__deltacommit__COMPLETED]",
        "[20250126040936578__rollback__COMPLETED]",
        "[20250126060846931__deltacommit__COMPLETED]",
    ]
    assert tl.completed_writes().timestamps == ["20250126040823628", "20250126060846931"]
    rb = tl.avro_metadata(tl.get("20250126040936578"))
    assert rb["commitsRollback"] == ["20250126040826878"]
    t2 = HoodieTable(str(fixture_table_path(fixtures_root,
                                            "sample_table_cow_v6_simplekeygen_nonhivestyle_overwritetable")))
    rc = t2.timeline.by_actions(I.REPLACE_COMMIT).last()
    meta = t2.timeline.commit_metadata(rc)
    assert meta.operation_type == "INSERT_OVERWRITE_TABLE"
    assert meta.partition_to_replace_file_ids and sum(map(len, meta.partition_to_replace_file_ids.values())) >= 1


def test_collapse_completed_compaction(tmp_path: Path) -> None:
    st_ = Storage(str(tmp_path))
    for name in ("20240101000000000.compaction.requested", "20240101000000000.compaction.inflight",
                 "20240101000000000.commit", "20240102000000000.compaction.requested"):
        st_.write_bytes(f".hoodie/{name}", b"")
    tl = T.Timeline.load(st_)
    assert [(i.timestamp, i.action, i.state.name) for i in tl] == [
        ("20240101000000000", "commit", "COMPLETED"), ("20240102000000000", "compaction", "REQUESTED")]
    assert tl.is_compaction_commit(tl.instants[0])
    assert tl.pending_compactions().timestamps == ["20240102000000000"]


def test_create_only_transitions(tmp_path: Path) -> None:
    st_ = Storage(str(tmp_path))
    req = T.create_requested(st_, "20240101000000000", I.DELTA_COMMIT)
    with pytest.raises(T.TimelineError, match="already exists"):
        T.create_requested(st_, "20240101000000000", I.DELTA_COMMIT)
    inf = T.transition_to_inflight(st_, req, b"{}")
    meta = CommitMetadata(operation_type="UPSERT")
    meta.add_write_stat("p", WriteStat(file_id="f", path="p/x", partition_path="p", num_writes=3))
    done = T.transition_to_complete(st_, inf, meta.to_json_bytes())
    with pytest.raises(T.TimelineError):
        T.transition_to_complete(st_, inf, b"{}")
    tl = T.Timeline.load(st_)
    assert tl.completed().timestamps == ["20240101000000000"]
    back = tl.commit_metadata(done)
    assert back.operation_type == "UPSERT" and next(back.all_write_stats()).num_writes == 3
    # All three files stay (layout v1 never renames).
    assert sorted(p.name for p in (tmp_path / ".hoodie").iterdir()) == [
        "20240101000000000.deltacommit", "20240101000000000.deltacommit.inflight",
        "20240101000000000.deltacommit.requested"]


def test_commit_metadata_reads_java_json(fixtures_root: Path) -> None:
    path = fixture_table_path(fixtures_root, "quickstart_trips_table_mor_avro_v6_trips_8i1u")
    data = (path / ".hoodie" / "20250331030645735.deltacommit").read_bytes()
    meta = CommitMetadata.from_json_bytes(data)
    s = next(meta.all_write_stats())
    assert s.is_delta and s.log_version == 1 and s.prev_commit == "20250331030642808"
    assert s.log_files == [".d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85"]
    again = CommitMetadata.from_json_bytes(meta.to_json_bytes())
    assert again.to_json_bytes() == meta.to_json_bytes()
    assert CommitMetadata.from_json_bytes(b"").operation_type == "UNKNOWN"


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.sampled_from(["UTC", "LOCAL"]), min_size=2, max_size=30))
def test_instant_generator_strictly_increasing(zones: list[str]) -> None:
    seen: dict[str, str] = {}
    for z in zones:
        t = I.InstantGenerator(z).now(floor=seen.get(z))
        assert len(t) == 17 and t.isdigit()
        if z in seen:
            assert t > seen[z]
        seen[z] = t


def test_generator_respects_floor_in_future() -> None:
    future = "29990101000000000"
    t = I.InstantGenerator("UTC").now(floor=future)
    assert t > future and len(t) == 17


def test_instant_time_zones() -> None:
    utc = I.InstantGenerator("UTC").now()
    now = dt.datetime.now(dt.timezone.utc)
    parsed = I.instant_to_datetime(utc, "UTC")
    assert abs((now - parsed).total_seconds()) < 5
    assert I.epoch_ms_to_instant(I.instant_to_epoch_ms("20240229235959123", "UTC"), "UTC") == "20240229235959123"
    assert I.fix_instant_compatibility("20240101000000") == "20240101000000999"


def test_named_views_are_built_once_and_a_written_timeline_has_its_own() -> None:
    """completed(), completed_writes() and commits() are filtered once per (immutable) timeline: a read asks
    for them once per file slice. A timeline made by ``written`` sees its new instants."""
    from hoodie.format.timeline.active import Timeline
    from hoodie.format.timeline.instant import Instant, State

    tl = Timeline([Instant("20240101000000000", "deltacommit", State.COMPLETED),
                   Instant("20240101000000001", "clean", State.COMPLETED),
                   Instant("20240101000000002", "deltacommit", State.INFLIGHT)])
    assert tl.completed_writes() is tl.completed_writes()
    assert [i.timestamp for i in tl.completed_writes().instants] == ["20240101000000000"]
    assert [i.timestamp for i in tl.completed().instants] == ["20240101000000000", "20240101000000001"]
    assert [i.timestamp for i in tl.commits().instants] == ["20240101000000000", "20240101000000002"]
    later = tl.written(Instant("20240101000000002", "deltacommit", State.COMPLETED))
    assert [i.timestamp for i in later.completed_writes().instants] == ["20240101000000000", "20240101000000002"]
    assert [i.timestamp for i in tl.completed_writes().instants] == ["20240101000000000"]
