"""Partition TTL and time zones (issue 12 item 13).

With ``hoodie.table.timeline.timezone=LOCAL`` (Hudi's default) an instant is its writer's wall-clock
time, in a zone nobody records. A writer in New York and a TTL run in Tokyo disagree by 14 hours on
every age, enough to expire a partition written seconds earlier. hoodie creates tables with a UTC
timeline; on LOCAL timelines, KEEP_BY_TIME and KEEP_BY_CREATION_TIME keep partitions less than the
largest zone difference (26 hours) past their retention, say so in the reasons and warn, naming the
key and the fix. Steps run "elsewhere" by switching this process's zone (``TZ`` + ``time.tzset``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.timeline import instant as I
from hoodie import write_arrow
from hoodie.format.table import HoodieTable
from hoodie.services.ttl import run_ttl
from hoodie.services.ttl.config import MAX_ZONE_SKEW_MS
from tests.services.test_ttl import at, opts, parts_of, ten_rows
from tests.helpers import examples

HOUR = 3_600_000
LOCAL = {"hoodie.table.timeline.timezone": "LOCAL"}
# From UTC-12 to UTC+14, half hours and DST zones included.
ZONES = ["Etc/GMT+12", "Pacific/Kiritimati", "America/New_York", "Asia/Tokyo", "UTC", "Asia/Kolkata",
         "America/St_Johns", "Australia/Lord_Howe", "Europe/Berlin"]


@contextlib.contextmanager
def zone_switcher() -> Iterator:
    """A function switching this process's local zone; the zone (and the instant generator's memory,
    so one zone's instants do not look like instants from the future to other tests) is restored
    on exit."""
    saved_env, saved_last = os.environ.get("TZ"), dict(I.InstantGenerator._last)

    def switch(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()
        I.InstantGenerator._last.clear()

    try:
        yield switch
    finally:
        if saved_env is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved_env
        time.tzset()
        I.InstantGenerator._last.clear()
        I.InstantGenerator._last.update(saved_last)


@pytest.fixture
def local_zone() -> Iterator:
    """:func:`zone_switcher` for one test."""
    with zone_switcher() as switch:
        yield switch


def test_local_timeline_written_in_new_york_ttl_in_tokyo_keeps_a_fresh_partition(
        tmp_path: Path, local_zone, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "t")
    local_zone("America/New_York")  # UTC-5 (UTC-4 in summer)
    write_arrow(path, ten_rows("old"), opts(op="insert", **LOCAL), instant=at(0))
    write_arrow(path, ten_rows("fresh"), opts(op="insert", **LOCAL))  # written just now, New York wall clock
    local_zone("Asia/Tokyo")  # UTC+9: the New York instant reads 13-14 h old here
    ttl = {"hoodie.partition.ttl.strategy.retention": "PT12H"}
    dry = {d.partition: d for d in run_ttl(path, ttl, dry_run=True).decisions}
    # Used to expire "fresh", written seconds earlier.
    assert dry["fresh"].status == "kept"
    assert "LOCAL" in dry["fresh"].reason and "hoodie.table.timeline.timezone=UTC" in dry["fresh"].reason
    assert dry["old"].status == "expired"  # decades old: no zone difference makes it young
    with caplog.at_level("WARNING"):
        res = run_ttl(path, ttl)
    assert res.expired_partitions == ["old"]
    assert any("hoodie.table.timeline.timezone" in w for w in res.warnings)
    assert "hoodie.table.timeline.timezone=UTC" in caplog.text
    assert parts_of(hoodie.read_table(path)) == {"fresh": 10}
    # Writers and TTL runs that share one zone can say so (the Tokyo TTL commit now reads as from the
    # future here, and is reported).
    local_zone("America/New_York")
    same = run_ttl(path, {**ttl, "hoodie.partition.ttl.local.timeline.skew": "PT0S"}, dry_run=True)
    assert same.decisions[0].status == "kept" and not same.decisions[0].zone_uncertain
    assert [w for w in same.warnings if "from the future" not in w] == []


def test_local_timeline_instants_from_a_zone_ahead_are_detected(tmp_path: Path, local_zone) -> None:
    path = str(tmp_path / "t")
    local_zone("Asia/Tokyo")
    write_arrow(path, ten_rows("fresh"), opts(op="insert", **LOCAL))
    local_zone("America/New_York")  # the Tokyo instant is 13-14 h in this process's future
    res = run_ttl(path, {"hoodie.partition.ttl.strategy.retention": "PT1H"}, dry_run=True)
    assert res.expired_partitions == []
    assert any("ahead" in w and "hoodie.table.timeline.timezone" in w for w in res.warnings)


def test_new_tables_default_to_a_utc_timeline(tmp_path: Path) -> None:
    from hoodie.format.table import TableError, create_table

    write_arrow(str(tmp_path / "w"), ten_rows("p"), opts(op="insert"))
    assert HoodieTable(str(tmp_path / "w")).props["hoodie.table.timeline.timezone"] == "UTC"
    made = create_table(str(tmp_path / "c"), table_name="c", table_type="COPY_ON_WRITE", record_key_fields=["k"])
    assert made.timeline_timezone == "UTC"
    write_arrow(str(tmp_path / "l"), ten_rows("p"), opts(op="insert", **LOCAL))
    assert HoodieTable(str(tmp_path / "l")).timeline_timezone == "LOCAL"
    with pytest.raises(TableError, match="hoodie.table.timeline.timezone='Asia/Tokyo'.*LOCAL or UTC"):
        create_table(str(tmp_path / "x"), table_name="x", table_type="COPY_ON_WRITE", record_key_fields=["k"],
                     timeline_timezone="Asia/Tokyo")
    out = subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", "create", str(tmp_path / "cli"),
                          "--name", "cli", "--type", "cow", "--record-key", "k"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert HoodieTable(str(tmp_path / "cli")).timeline_timezone == "UTC"


def test_local_timeline_skew_is_validated() -> None:
    from hoodie.services.ttl import TTLConfig, TTLConfigError

    assert TTLConfig.from_options({}).local_skew_ms == MAX_ZONE_SKEW_MS
    with pytest.raises(TTLConfigError, match="between PT0S and PT26H"):
        TTLConfig.from_options({"hoodie.partition.ttl.local.timeline.skew": "P2D"})


# -- the class: any writer zone, any TTL zone, any retention and age -------------------------------

# (writer zone, true age in minutes relative to the retention): mostly near the retention, where a
# zone difference decides, some far past it.
partition_st = st.tuples(st.sampled_from(ZONES), st.integers(-30 * 60, 60 * 60))


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["LOCAL", "UTC"]), st.lists(partition_st, min_size=1, max_size=3),
       st.sampled_from(ZONES), st.integers(1, 72), st.sampled_from(["KEEP_BY_TIME", "KEEP_BY_CREATION_TIME"]))
def test_ttl_never_expires_a_partition_younger_than_its_retention_whatever_the_zones(
        timeline_zone: str, partitions: list[tuple[str, int]], ttl_zone: str, retention_h: int, strategy: str) -> None:
    """Safety: a partition whose true age (real time since its write) is within the retention is
    never expired, whichever zones the writers and the TTL run are in. Liveness: on a UTC timeline
    a partition past its retention expires; on a LOCAL one, once past it by twice the zone margin."""
    retention = retention_h * HOUR
    margin = MAX_ZONE_SKEW_MS if timeline_zone == "LOCAL" else 0
    partitions = [(zone, max(0, retention_h * 60 + offset)) for zone, offset in partitions]
    # Ages within a minute of a boundary would depend on how long this example takes.
    for _, age_min in partitions:
        for bound in (retention, retention + 2 * margin):
            assume(abs(age_min * 60_000 - bound) > 60_000)
    tmp = tempfile.mkdtemp()
    path = f"{tmp}/t"
    try:
        with zone_switcher() as switch:
            now = int(time.time() * 1000)
            writes = []
            for n, (zone, age_min) in enumerate(partitions):
                switch(zone)  # the writer's wall clock (or UTC) names the instant
                writes.append((I.epoch_ms_to_instant(now - age_min * 60_000, timeline_zone), f"p{n}", age_min))
            for n, (inst, part, _) in enumerate(sorted(writes)):
                write_arrow(path, ten_rows(part), opts(op="insert", **{"hoodie.table.timeline.timezone": timeline_zone}),
                            instant=f"{inst[:14]}{n:03d}")  # distinct instants, same second
            switch(ttl_zone)
            res = run_ttl(path, {"hoodie.partition.ttl.management.strategy.type": strategy,
                                 "hoodie.partition.ttl.strategy.retention": f"PT{retention_h}H"}, dry_run=True)
        decided = {d.partition: d for d in res.decisions}
        for _, part, age_min in writes:
            d = decided[part]
            age = age_min * 60_000
            if d.status == "expired":
                assert age > retention, f"{part} is {age_min} min old, retention {retention_h} h: {d.reason}"
            if age > retention + 2 * margin:
                assert d.status == "expired", f"{part} is {age_min} min old, retention {retention_h} h: {d.reason}"
            if d.status == "kept" and d.age_ms is not None and d.age_ms > retention:
                assert d.zone_uncertain and "hoodie.table.timeline.timezone=UTC" in d.reason
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
