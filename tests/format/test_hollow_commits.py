"""Hollow commits in version-6 incremental reads (``hoodie.read.timeline.holes.resolution.policy``).

A write still pending while a later one completed will, when it completes, hold records whose commit time
lies inside ranges a reader may already have read past: an incremental consumer would never see them.
Hudi 0.14+ refuses such reads by default (FAIL) or stops before the hole (BLOCK); hoodie returned the
range as if the pending write did not exist.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.slice.filters import ReadError
from hoodie.format.slice import writer as W
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.services.rollback.failed_writes import register_live_instant, unregister_live_instant
from hoodie import write_arrow

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
POLICY = "hoodie.read.timeline.holes.resolution.policy"
ZERO = "00000000000000000"


def _keys(path: str, **kw) -> list[str]:
    t = hoodie.read_table(path, query_type="incremental", **kw)
    return sorted(t.column("k").to_pylist())


def _hollow_table(path: str) -> tuple[str, str, str]:
    """c1 completed, h pending (a concurrent writer of this process), c3 completed after it."""
    c1 = write_arrow(path, pa.table({"k": ["a"], "p": ["x"]}), OPTS)
    table = HoodieTable(path)
    h = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT").timestamp
    key = register_live_instant(table.storage.uri(), h)  # not a failed write: the next write keeps it
    try:
        c3 = write_arrow(path, pa.table({"k": ["c"], "p": ["y"]}), OPTS)
    finally:
        unregister_live_instant(key)
    assert c1 < h < c3
    return c1, h, c3


def test_a_range_reaching_a_pending_write_is_refused_by_default(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1, h, c3 = _hollow_table(path)
    for begin in (ZERO, c1):
        with pytest.raises(ReadError, match=rf"^incremental read of .*: write {h} \(deltacommit\) is still "
                                            rf"inflight while later writes completed \(a hollow commit\)"):
            _keys(path, begin=begin)
    # A range that ends before the hole cannot change: it is read.
    assert _keys(path, begin=ZERO, end=c1) == ["a"]
    # BLOCK (or Hudi's older key for it) reads up to the last write completed before the hole.
    for key in (POLICY, "hoodie.datasource.read.handle.hollow.commit"):
        assert hoodie.read_table(path, query_type="incremental", begin=ZERO,
                                 options={key: "BLOCK"}).column("k").to_pylist() == ["a"]
    assert hoodie.read_table(path, query_type="incremental", begin=c1, options={POLICY: "BLOCK"}).num_rows == 0
    with pytest.raises(ReadError, match="USE_TRANSITION_TIME: hoodie does not order version-6 instants") as e:
        hoodie.read_table(path, query_type="incremental", begin=ZERO, options={POLICY: "USE_TRANSITION_TIME"})
    # The message says what to use instead and where completion times do order ranges.
    assert str(e.value).endswith("use FAIL or BLOCK (table versions 8/9 order incremental ranges by completion "
                                 "time always)")
    with pytest.raises(ReadError, match=POLICY.replace(".", r"\.")):
        hoodie.read_table(path, query_type="incremental", begin=ZERO, options={POLICY: "MAYBE"})
    # Snapshot reads are not incremental: unaffected.
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["a", "c"]


def test_the_newest_write_pending_or_a_pending_clustering_is_no_hole(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1 = write_arrow(path, pa.table({"k": ["a"], "p": ["x"]}), OPTS)
    c2 = write_arrow(path, pa.table({"k": ["b"], "p": ["x"]}), OPTS)
    table = HoodieTable(path)
    # A clustering planned before c3: it rewrites records under their old commit times.
    cl = table.new_instant_time()
    T.create_requested(table.storage, cl, I.REPLACE_COMMIT, plans.write_avro_metadata(
        "HoodieRequestedReplaceMetadata", plans.requested_replace_metadata(
            "cluster", clustering_plan={"inputGroups": [], "strategy": None, "extraMetadata": {}, "version": 1,
                                        "preserveHoodieMetadata": True})))
    key = register_live_instant(table.storage.uri(), cl)
    try:
        write_arrow(path, pa.table({"k": ["c"], "p": ["x"]}), OPTS)
    finally:
        unregister_live_instant(key)
    # The newest write still pending: no completed write lies beyond it.
    table = HoodieTable(path)
    W.start_commit(table, W.write_action_for(table), operation_type="UPSERT")
    assert _keys(path, begin=ZERO) == ["a", "b", "c"]
    assert _keys(path, begin=c1) == ["b", "c"] and c2 > c1


def test_time_travel_past_a_pending_write_is_refused(tmp_path: Path) -> None:
    """Version 6 time travel at or after a pending write could not be repeated once it completes (Hudi's
    validateTimestampAsOf); before it, it is read."""
    path = str(tmp_path / "t")
    c1, h, c3 = _hollow_table(path)
    for as_of in (h, c3):
        with pytest.raises(ReadError, match=rf"^time travel to {as_of} on .*: write {h} \(deltacommit\) is still "
                                            r"inflight"):
            hoodie.read_table(path, as_of=as_of)
    assert hoodie.read_table(path, as_of=c1).column("k").to_pylist() == ["a"]
    assert hoodie.read_table(path, as_of=c1, query_type="read_optimized").num_rows == 1


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.helpers import examples  # noqa: E402


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                              HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["write", "write", "pending"]), min_size=2, max_size=6), st.data())
def test_incremental_reads_never_answer_across_a_hole(tmp_path_factory, steps: list[str], data) -> None:
    """Random histories of completed and pending writes, every range: BLOCK answers with exactly the
    records of writes completed before the first pending one; FAIL answers only ranges no pending write can
    still change, and then exactly; time travel is answered only before the first pending write."""
    path = str(tmp_path_factory.mktemp("hollow") / "t")
    completed: list[tuple[str, str]] = []  # (instant, key)
    pending: list[str] = []
    keys: list = []
    for i, step in enumerate(steps):
        if step == "write" or not completed:
            inst = write_arrow(path, pa.table({"k": [f"k{i}"], "p": ["x"]}), OPTS)
            completed.append((inst, f"k{i}"))
        else:
            table = HoodieTable(path)
            h = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT").timestamp
            keys.append(register_live_instant(table.storage.uri(), h))  # stays pending
            pending.append(h)
    try:
        hole = min(pending) if pending and any(c > min(pending) for c, _ in completed) else None
        begins = [ZERO] + [c for c, _ in completed]
        begin = data.draw(st.sampled_from(begins))
        end = data.draw(st.sampled_from([None] + [c for c, _ in completed]))
        if end is not None and end <= begin:
            return

        def expected(upto):
            return sorted(k for c, k in completed if c > begin and (upto is None or c <= upto))

        blocked_end = end if hole is None else min([e for e in (end,) if e] + [max(
            [c for c, _ in completed if c < hole], default=begin)])
        got = hoodie.read_table(path, query_type="incremental", begin=begin, end=end, options={POLICY: "BLOCK"})
        assert sorted(got.column("k").to_pylist()) == expected(blocked_end)
        changeable = hole is not None and (end is None or end >= hole)
        if changeable:
            with pytest.raises(ReadError, match="a hollow commit"):
                hoodie.read_table(path, query_type="incremental", begin=begin, end=end)
        else:
            assert _keys(path, begin=begin, end=end) == expected(end)
        first_pending = min(pending) if pending else None
        for as_of, _ in completed:
            if first_pending is not None and as_of >= first_pending:
                with pytest.raises(ReadError, match="time travel to"):
                    hoodie.read_table(path, as_of=as_of)
            else:
                assert sorted(hoodie.read_table(path, as_of=as_of).column("k").to_pylist()) == sorted(
                    k for c, k in completed if c <= as_of)
    finally:
        for k in keys:
            unregister_live_instant(k)
