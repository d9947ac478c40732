"""Boundary tests for ``hoodie.format.slice.reader`` that mutation testing (``tools/mutation.py reader``)
showed were missing: each group pins one decision of the reader at the input where it flips.

* Pending replacecommits (``_is_clustering``): a pending clustering opens no hole (its records keep
  their old commit times), every other pending replacecommit is a write, and so is one whose requested
  file cannot be read. Getting it wrong either refuses good reads or answers reads that a later
  completion changes. The plan alone, or the operation type alone, marks a clustering.
* Hudi's operation field (``with_operation_deletes``, ``_has_operation_column``): a winning log row whose
  ``_hoodie_operation`` is ``D`` is a delete, a row with ``_hoodie_is_deleted = true`` still is one, a
  null operation is not, and a table or block without the operation field is left alone (its
  ``_hoodie_is_deleted`` values read as written). Getting it wrong resurrects or drops records.
* Versions 8/9 reads near the archived timeline (``_refuse_archived_point``, ``_archived_commit_times``,
  the view's completion cut): the refusal names the right remedy for ``as_of`` and for ``end``; an
  archived write completed after the first active write (a concurrent writer's; Hudi archives by
  requested time) is in a range iff its completion time is, and in time travel from its completion on,
  also when it is the active timeline's oldest write. Getting it wrong drops its records from an
  incremental read, or shows them as of a time before they were committed.
* ``java_float_to_double``: returns the ``pa.Array`` of doubles it promises, also for chunked, empty or
  all-null input.

Deterministic and fast: a few small local tables, no Spark, no hypothesis.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

import pyarrow as pa
import pytest

import hoodie
import hoodie.services.write.plan as BW
import hoodie.services.write.prepare as BR
from hoodie.services.write.configs import WriteConfig
from hoodie.services.write.execution import execute_file_group
from hoodie.services.write.plan import plan_write
from hoodie.services.write.prepare import prepare_records
from hoodie.format.file_group import naming as N
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.slice import writer as W
from hoodie.format.slice.reader import (
    ReadError,
    block_data,
    java_float_to_double,
    with_operation_deletes,
)
from hoodie.format.slice.slice_reader import _has_operation_column
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import active as T
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.services.rollback.failed_writes import register_live_instant, unregister_live_instant
from hoodie import write_arrow
from tests.format.test_lsm_timeline import JavaLSMWriter

MOR = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
       "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert",
       "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
V9 = {**MOR, "hoodie.write.table.version": "9"}
ZERO = "00000000000000000"
OPERATION_FIELD = {"name": "_hoodie_operation", "type": ["null", "string"], "default": None}


def _keys(t: pa.Table) -> list[str]:
    return sorted(t.column("k").to_pylist())


# -- pending replacecommits: clustering or write (_is_clustering) -----------------------------------

_PLAN = {"inputGroups": [], "strategy": None, "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True}


def _requested_replace(operation_type: Optional[str], clustering_plan: Optional[dict]) -> bytes:
    """A ``replacecommit.requested`` file with exactly these two fields (the rest as Hudi fills them)."""
    return plans.write_avro_metadata("HoodieRequestedReplaceMetadata", {
        "operationType": operation_type, "clusteringPlan": clustering_plan, "extraMetadata": {}, "version": 1})


@pytest.mark.parametrize("requested, clustering", [
    (_requested_replace("CLUSTER", _PLAN), True),  # what Hudi's clustering writes
    (_requested_replace(None, _PLAN), True),  # the plan alone marks a clustering ...
    (_requested_replace("UNKNOWN", _PLAN), True),
    (_requested_replace("CLUSTER", None), True),  # ... and so does the operation type alone,
    (_requested_replace("cluster", None), True),  # in any case
    (_requested_replace("INSERT_OVERWRITE", None), False),  # a write through the replacecommit action
    (plans.write_avro_metadata("HoodieRequestedReplaceMetadata", plans.requested_replace_metadata(None)), False),
    (b"", False),  # an empty requested file holds no plan: a write
    (b"Obj\x01 damaged", False),  # unreadable: counted as a write, the read is refused rather than risked
], ids=["plan+CLUSTER", "plan+null-type", "plan+other-type", "CLUSTER-no-plan", "lowercase-cluster",
        "insert_overwrite", "all-null", "empty", "damaged"])
def test_a_pending_replacecommit_is_a_hole_unless_it_is_a_clustering(tmp_path: Path, requested: bytes,
                                                                      clustering: bool) -> None:
    """Version-6 time travel at a pending replacecommit: read when it is a clustering (it changes no
    record's commit time), refused as for any pending write otherwise."""
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"]}), MOR)
    table = HoodieTable(path)
    h = table.new_instant_time()
    T.create_requested(table.storage, h, I.REPLACE_COMMIT, requested)
    if clustering:
        assert _keys(hoodie.read_table(path, as_of=h)) == ["a"]
    else:
        with pytest.raises(ReadError, match=rf"^time travel to {h} on .*: write {h} \(replacecommit\) is still "
                                            r"requested; once it completes"):
            hoodie.read_table(path, as_of=h)


# -- Hudi's operation field (with_operation_deletes, _has_operation_column) --------------------------

def _log_commit(path: str, data: pa.Table, extra: dict[str, pa.Array], extra_fields: list[dict],
                keep_flagged_rows: bool = False) -> str:
    """Commit an upsert of ``data`` whose log records also carry ``extra`` columns (added to the writer
    schema as ``extra_fields``), as a writer with Hudi's operation field writes them. ``keep_flagged_rows``:
    rows with ``_hoodie_is_deleted`` stay in the data block (hoodie's writer moves them into a delete
    block; the reader must delete them where it finds them either way)."""
    table = HoodieTable(path)
    avro = table.avro_schema()
    names = {f["name"] for f in avro["fields"]}
    avro = {**avro, "fields": [f for f in extra_fields if f["name"] not in names] + avro["fields"]}
    cfg = WriteConfig.from_options(MOR, table)
    inst = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT")
    recs = prepare_records(data, cfg)
    for name, values in extra.items():
        recs = recs.append_column(name, values)
    with pytest.MonkeyPatch.context() as mp:
        if keep_flagged_rows:
            mp.setattr(BW, "_split_soft_deletes", lambda table, sl, hits, cfg: (None, hits if hits.num_rows else None))
        plan = plan_write(table, recs, cfg, inst.timestamp, avro)
    stats = [execute_file_group(table, w, instant=inst.timestamp, avro_schema=avro, cfg=cfg,
                                token=N.write_token(i, 9, i)) for i, w in enumerate(plan.work)]
    W.complete_commit(HoodieTable(path), inst, W.commit_metadata_for(stats, avro_schema=avro, operation_type="UPSERT"))
    return inst.timestamp


def _live(t: pa.Table) -> dict[str, tuple[Any, Any]]:
    return {r["k"]: (r["v"], r["_hoodie_is_deleted"]) for r in t.to_pylist()}


def _operation_table(path: str) -> None:
    """A table with the operation field and its own boolean ``_hoodie_is_deleted``: a base file of a..d,
    then one log commit over them."""
    write_arrow(path, pa.table({"k": ["a", "b", "c", "d"], "p": ["x"] * 4, "v": [1, 2, 3, 4],
                                "_hoodie_is_deleted": [False] * 4}), MOR)
    _log_commit(path, pa.table({"k": ["a", "b", "c", "d"], "p": ["x"] * 4, "v": [10, 20, 30, 40],
                                "_hoodie_is_deleted": [True, False, False, False]}),
                {"_hoodie_operation": pa.array(["I", "D", None, "+U"], pa.string())}, [OPERATION_FIELD],
                keep_flagged_rows=True)


def test_operation_d_and_the_delete_flag_both_delete_and_a_null_operation_does_not(tmp_path: Path) -> None:
    """a: operation I but _hoodie_is_deleted = true, deleted (the flag still counts next to the operation);
    b: operation D, deleted; c: a null operation is no delete, and its flag reads false as written."""
    path = str(tmp_path / "t")
    _operation_table(path)
    assert HoodieTable(path).has_operation_field
    assert _live(hoodie.read_table(path)) == {"c": (30, False), "d": (40, False)}  # hudi-rs reads the same


def test_without_the_operation_field_a_log_rows_delete_flag_reads_as_written(tmp_path: Path) -> None:
    """No operation column in the table or its blocks: the blocks' _hoodie_is_deleted values are not
    touched (a null stays null), only a true one deletes."""
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x"] * 2, "v": [1, 2], "_hoodie_is_deleted": [False] * 2}),
                MOR)
    _log_commit(path, pa.table({"k": ["a", "b"], "p": ["x"] * 2, "v": [10, 20],
                                "_hoodie_is_deleted": pa.array([None, True], pa.bool_())}), {}, [])
    assert not HoodieTable(path).has_operation_field
    assert _live(hoodie.read_table(path)) == {"a": (10, None)}  # hudi-rs reads the same


def test_with_operation_deletes_leaves_rows_without_a_delete_flag_column_alone(tmp_path: Path) -> None:
    """Called (as compaction calls it) on a block that holds operations, but with rows read without
    _hoodie_is_deleted, or with no rows: the rows come back as they are."""
    path = str(tmp_path / "t")
    _operation_table(path)
    storage = HoodieTable(path).storage
    logs = [f"x/{p.name}" for p in (tmp_path / "t" / "x").iterdir() if ".log." in p.name]
    blocks = [b for lf in logs for b in read_log_file(storage, lf) if b.block_type != BlockType.DELETE]
    assert len(blocks) == 1 and _has_operation_column(blocks[0])
    plain = pa.schema([pa.field("_hoodie_record_key", pa.string()), pa.field("v", pa.int64())])
    data = block_data(blocks[0], plain)
    assert with_operation_deletes(blocks[0], data).equals(data)
    flagged = pa.schema([*plain, pa.field("_hoodie_is_deleted", pa.bool_())])
    empty = flagged.empty_table()
    assert with_operation_deletes(blocks[0], empty).equals(empty)
    # And with the flag column: D and true flags, nothing else (the null operation of c is no delete).
    assert with_operation_deletes(blocks[0], block_data(blocks[0], flagged)).column(
        "_hoodie_is_deleted").to_pylist() == [True, True, False, False]


@pytest.mark.parametrize("schema_json, has", [
    (None, False),  # no schema header
    ("{}", False),
    ('{"type": "record", "name": "r"}', False),  # a record without fields
    ("{not json", False),  # a damaged header is no operation column
    (json.dumps({"type": "record", "name": "r", "fields": [{"name": "k", "type": "string"}]}), False),
    (json.dumps({"type": "record", "name": "r", "fields": [OPERATION_FIELD]}), True),
    (json.dumps({"type": "record", "name": "r", "fields": [{"name": "k", "type": "string"}, OPERATION_FIELD]}), True),
])
def test_has_operation_column_reads_only_the_writer_schema(schema_json: Optional[str], has: bool) -> None:
    assert _has_operation_column(SimpleNamespace(schema_json=schema_json)) is has


def test_with_the_operation_field_a_null_delete_flag_reads_as_written(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [1], "_hoodie_is_deleted": [False]}), MOR)
    _log_commit(path, pa.table({"k": ["a"], "p": ["x"], "v": [10], "_hoodie_is_deleted": pa.array([None], pa.bool_())}),
                {"_hoodie_operation": pa.array(["I"])}, [OPERATION_FIELD])
    assert _live(hoodie.read_table(path)) == {"a": (10, None)}


def test_with_the_operation_field_a_non_boolean_delete_column_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["a", "b", "c"], "p": ["x"] * 3, "v": [1, 2, 3]}), MOR)
    flag = {"name": "_hoodie_is_deleted", "type": ["null", "int"], "default": None}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(BR, "soft_deleted", lambda records: None)  # hoodie's writer reads the column as a boolean
        _log_commit(path, pa.table({"k": ["a", "b", "c"], "p": ["x"] * 3, "v": [10, 20, 30]}),
                    {"_hoodie_operation": pa.array(["I", "D", "I"]),
                     "_hoodie_is_deleted": pa.array([7, 0, None], pa.int32())}, [OPERATION_FIELD, flag])
    # Hudi deletes by the column only when it is boolean; hoodie marks D rows in it, so it refuses
    # rather than overwrite the column's values (it used to keep D rows live and overwrite them).
    with pytest.raises(ReadError, match=r"a _hoodie_is_deleted column of type int32, not boolean"):
        hoodie.read_table(path)


# -- versions 8/9 near the archived timeline (_refuse_archived_point, _archived_commit_times) ----------

def _later(instant: str, ms: int) -> str:
    t = _dt.datetime.strptime(instant, "%Y%m%d%H%M%S%f") + _dt.timedelta(milliseconds=ms)
    return t.strftime("%Y%m%d%H%M%S%f")[:17]


def _overlapping_writes(base: Path, archive: str) -> dict[str, str]:
    """A version 9 table where c1 (key a) was requested before c2 (key b) but completed after it (two
    writers), after c0 (key z). ``archive``: ``"c0+c1"`` as Hudi's archiver (which archives by requested
    time) would, so c2 is the first active write and c1 an archived one completed after it; ``"c0"``, so
    c1 is the first active write by requested time but completes after c2."""
    path = str(base)
    write_arrow(path, pa.table({"k": ["z"], "p": ["w"]}), V9)
    c0 = HoodieTable(path).timeline.completed_writes().last().timestamp
    table = HoodieTable(path)
    cfg = WriteConfig.from_options(V9, table)
    c1 = W.start_commit(table, W.write_action_for(table), operation_type="UPSERT")
    key = register_live_instant(table.storage.uri(), c1.timestamp)  # a live writer: c2's keeps it
    try:
        c2 = write_arrow(path, pa.table({"k": ["b"], "p": ["y"]}), V9)
    finally:
        unregister_live_instant(key)
    avro = table.avro_schema()
    plan = plan_write(HoodieTable(path), prepare_records(pa.table({"k": ["a"], "p": ["x"]}), cfg), cfg,
                      c1.timestamp, avro)
    stats = [execute_file_group(HoodieTable(path), w, instant=c1.timestamp, avro_schema=avro, cfg=cfg,
                                token=N.write_token(i, 9, i)) for i, w in enumerate(plan.work)]
    W.complete_commit(HoodieTable(path), c1, W.commit_metadata_for(stats, avro_schema=avro, operation_type="UPSERT"))
    tl = HoodieTable(path).timeline
    c1c, c2c = tl.get(c1.timestamp).completion, tl.get(c2).completion
    assert c1.timestamp < c2 and c2c < c1c
    JavaLSMWriter(base).archive(base, [c0, c1.timestamp] if archive == "c0+c1" else [c0])
    active = [i.timestamp for i in HoodieTable(path).timeline.completed_writes().instants]
    assert active == ([c2] if archive == "c0+c1" else [c1.timestamp, c2])
    return {"path": path, "uri": HoodieTable(path).storage.uri(), "c1c": c1c, "c2c": c2c}


@pytest.fixture(scope="module")
def overlapping_archive(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """c0 and c1 archived: c2 is the first active write, c1 an archived one completed after it."""
    return _overlapping_writes(tmp_path_factory.mktemp("v9") / "t", "c0+c1")


@pytest.fixture(scope="module", params=["c0+c1", "c0"])
def overlapping(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, str]:
    """Both archivals: c1 archived, or c1 the active write requested first and completed last (a read as
    of c2's completion drops it from the timeline, and it is older than the timeline's first write then)."""
    return _overlapping_writes(tmp_path_factory.mktemp("v9") / "t", request.param)


def test_reads_before_the_first_active_write_are_refused_with_the_remedy_for_their_bound(
        overlapping_archive: dict[str, str]) -> None:
    """as_of: move it; end: move it, or drop it (begin alone reads every change since begin)."""
    path, uri, first = overlapping_archive["path"], overlapping_archive["uri"], overlapping_archive["c2c"]
    before = _later(first, -1)
    head = (f"is before the first write on the active timeline of {uri} (completed {first}); the writes before it "
            "are archived (.hoodie/timeline/history) and hoodie reads a version 8/9 table as of a time only within "
            "its active timeline. ")
    with pytest.raises(ReadError) as e:
        hoodie.read_table(path, as_of=before)
    assert str(e.value) == f"as_of={before} {head}Use as_of at or after {first}"
    with pytest.raises(ReadError) as e:
        hoodie.read_table(path, query_type="incremental", begin=ZERO, end=before)
    assert str(e.value) == (f"end={before} {head}Use end at or after {first}, "
                            "or begin alone for every change since begin")


def test_an_archived_write_completed_at_the_end_of_the_range_is_in_it(overlapping_archive: dict[str, str]) -> None:
    """A range from before the active timeline holds an archived write completed exactly at its end (and not
    one completed after it)."""
    path, c1c, c2c = overlapping_archive["path"], overlapping_archive["c1c"], overlapping_archive["c2c"]

    def incremental(end: str) -> list[str]:
        return _keys(hoodie.read_table(path, query_type="incremental", begin=ZERO, end=end))

    assert incremental(c1c) == ["a", "b", "z"]
    assert incremental(_later(c1c, -1)) == ["b", "z"]
    assert incremental(c2c) == ["b", "z"]


def test_an_archived_write_completed_after_the_first_active_one_is_in_a_range_starting_after_it(
        overlapping_archive: dict[str, str]) -> None:
    path, c1c, c2c = overlapping_archive["path"], overlapping_archive["c1c"], overlapping_archive["c2c"]
    assert _keys(hoodie.read_table(path, query_type="incremental", begin=c2c, end=c1c)) == ["a"]


def test_time_travel_before_an_archived_writes_completion_does_not_see_it(overlapping_archive: dict[str, str]) -> None:
    path, c2c = overlapping_archive["path"], overlapping_archive["c2c"]
    assert _keys(hoodie.read_table(path, as_of=c2c)) == ["b", "z"]


def test_time_travel_sees_a_write_from_its_completion_on(overlapping: dict[str, str]) -> None:
    """As of c1's completion exactly, c1 is in the table; a millisecond before, it is not (whether c1 is
    archived or the oldest write of the active timeline)."""
    path, c1c, c2c = overlapping["path"], overlapping["c1c"], overlapping["c2c"]
    assert _keys(hoodie.read_table(path, as_of=c1c)) == ["a", "b", "z"]
    assert _keys(hoodie.read_table(path, as_of=_later(c1c, -1))) == ["b", "z"]
    assert _keys(hoodie.read_table(path, as_of=c2c)) == ["b", "z"]
    assert _keys(hoodie.read_table(path, query_type="read_optimized", as_of=c2c)) == ["b", "z"]
    assert _keys(hoodie.read_table(path)) == ["a", "b", "z"]


def test_a_range_holds_a_write_iff_it_completed_in_it(overlapping: dict[str, str]) -> None:
    """(begin, end] by completion time: c1 is in a range ending at its completion and not in one beginning
    there; an open range (no end) holds it when it begins before c1's completion, though after c1's
    requested time."""
    path, c1c, c2c = overlapping["path"], overlapping["c1c"], overlapping["c2c"]

    def incremental(begin: str, end: Optional[str] = None) -> list[str]:
        return _keys(hoodie.read_table(path, query_type="incremental", begin=begin, end=end))

    assert incremental(c2c, c1c) == ["a"]
    assert incremental(_later(c1c, -1), c1c) == ["a"]
    assert incremental(c2c, _later(c1c, -1)) == []
    assert incremental(c1c, _later(c1c, 1)) == []
    assert incremental(c2c) == ["a"]
    assert incremental(_later(c1c, -1)) == ["a"]
    assert incremental(c1c) == []
    assert incremental(_later(c2c, -1), c2c) == ["b"]


# -- java_float_to_double ------------------------------------------------------------------------------

@pytest.mark.parametrize("values, expected", [
    (pa.chunked_array([pa.array([0.1, None], pa.float32()), pa.array([0.1, 2.5], pa.float32())]),
     [0.1, None, 0.1, 2.5]),
    (pa.array([None, None], pa.float32()), [None, None]),
    (pa.array([], pa.float32()), []),
], ids=["chunked", "all-null", "empty"])
def test_java_float_to_double_returns_one_array_of_doubles(values: Any, expected: list) -> None:
    """A pa.Array of float64 whatever the input's chunking, and even when no value is left to infer the
    type from."""
    out = java_float_to_double(values)
    assert isinstance(out, pa.Array) and out.type == pa.float64()
    assert out.to_pylist() == expected


# -- plan_read on a table without writes, and the bootstrap refusal's whole message -------------------

def test_an_incremental_plan_of_a_table_without_writes_keeps_its_range(tmp_path: Path) -> None:
    """Nothing to read, but the plan still says which range was asked (callers report it)."""
    from hoodie.format.slice.reader import plan_read
    from hoodie.format.table import create_table

    table = create_table(str(tmp_path / "t"), table_name="t", record_key_fields=["k"], partition_fields=["p"])
    plan = plan_read(table, query_type="incremental", begin="20200101000000000", end="20200102000000000")
    assert (plan.slices, plan.begin, plan.end) == ([], "20200101000000000", "20200102000000000")


def test_the_bootstrap_refusal_names_both_ways_out(tmp_path: Path) -> None:
    from tests.format.test_bootstrap_tables import _bootstrapped

    path = str(tmp_path / "t")
    _bootstrapped(path, "00000000000001")
    with pytest.raises(ReadError) as e:
        hoodie.read_table(path)
    assert str(e.value).endswith("Read this table with Java Hudi, or re-create it with a full-record bootstrap "
                                 "(hoodie.bootstrap.mode.selector=FULL_RECORD) or a bulk_insert of the source data")
