"""Typed compaction plans: lossless, byte-identical round trips through the Avro plan codec (random
plans, every kind of plan hoodie schedules, Java-written plans of the fixtures) and the conveniences
the services use."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any, Optional

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.timeline import plans as PL
from hoodie.format.avro.encode import zigzag_long
from hoodie.format.timeline.compaction_plan import (
    KIND, RESERVED_LOG_VERSION_METRIC, CompactionOperation, CompactionPlan, CompactionPlanStrategy,
    SymlinkOperation,
)
from hoodie.format.table import HoodieTable
from tests.fixture_paths import V89_DIR
from tests.conftest import FIXTURE_DIR
from tests.services.test_compaction_support import UNBOUNDED, Setup, event_time_config, write
from tests.helpers import examples





def _java_plans() -> list[tuple[str, bytes]]:
    """Every ``.compaction.requested`` file in the Java-written fixture zips (v6, then v8/v9; the
    metadata tables' plans included), as (zip/member, bytes)."""
    out = []
    for folder in (FIXTURE_DIR, V89_DIR):
        for z in sorted(folder.glob("*.zip")):
            with zipfile.ZipFile(z) as zf:
                for name in zf.namelist():
                    if name.endswith(".compaction.requested") and not name.startswith("__MACOSX"):
                        out.append((f"{z.stem}/{name}", zf.read(name)))
    if not out:
        raise RuntimeError(f"no Java-written compaction plans in {FIXTURE_DIR} or {V89_DIR}")
    return out


JAVA_PLANS = _java_plans()


def _reencoded_with_writer_schema(data: bytes, record: dict[str, Any]) -> bytes:
    """``data`` with its single data block replaced by ``record`` encoded with the file's own writer
    schema (its header and sync marker kept)."""
    schema = fastavro.parse_schema(json.loads(fastavro.reader(io.BytesIO(data)).metadata["avro.schema"]))
    body = io.BytesIO()
    fastavro.schemaless_writer(body, schema, record)
    block = zigzag_long(1) + zigzag_long(len(body.getvalue())) + body.getvalue() + data[-16:]
    # The header ends with the same sync marker; everything before the block is kept as it is.
    header_len = len(data) - len(block)
    assert header_len > 0 and data[header_len - 16:header_len] == data[-16:]
    return data[:header_len] + block


# ------------------------------------------------------------------ Java-written plans

@pytest.mark.parametrize("name,data", JAVA_PLANS, ids=[n for n, _ in JAVA_PLANS])
def test_java_plans_round_trip_byte_identical(name: str, data: bytes) -> None:
    raw = PL.read_avro_metadata(data)
    plan = CompactionPlan.from_bytes(data)
    assert plan.operations and len(plan.operations) == len(raw["operations"])
    # Lossless: every field of the file comes back (stock Hudi has no symlinkOperations: its default).
    assert plan.to_avro() == {**raw, "operations": [{**op, "symlinkOperations": None} for op in raw["operations"]]}
    # Byte-identical: the typed plan, encoded with the file's writer schema, is the file.
    assert _reencoded_with_writer_schema(data, plan.to_avro()) == data
    # Rewritten by hoodie (its own schema; Hudi 1.x's extra fields dropped, as resolution does).
    again = CompactionPlan.from_bytes(plan.to_bytes())
    assert again.to_avro() == plan.to_avro(unknown_fields=False)
    assert again.operations == plan.operations


def test_java_plan_conveniences() -> None:
    (data,) = [d for n, d in JAVA_PLANS
               if n.startswith("sample_table_mor_avro_v9_txns_simple_meta/") and "/metadata/" not in n]
    plan = CompactionPlan.from_bytes(data)
    assert plan.version == 2 and plan.extra_metadata == {} and plan.preserve_hoodie_metadata is False
    assert plan.unknown_fields == {"missingSchedulePartitions": []}
    assert plan.partitions() == ["region=apac", "region=us"]
    assert plan.file_groups() == [("region=us", "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0"),
                                  ("region=apac", "c3b646cc-8602-47c5-b010-3fe002241298-0")]
    us = plan.operations[0]
    assert not us.is_partial and us.reserved_log_version == 0 and us.metrics["TOTAL_LOG_FILES"] == 2.0
    assert us.file_paths() == (
        "region=us/3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_1-27-53_20260307162557587.parquet",
        "region=us/.3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_20260307162604102.log.1_0-52-126",
        "region=us/.3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_20260307162606034.log.1_0-78-180",
    )
    assert plan.file_paths() == set(us.file_paths()) | set(plan.operations[1].file_paths())


# ------------------------------------------------------------------ plans hoodie writes

def _scheduled(tmp_path: Path, name: str, config: dict[str, str], s: Setup = Setup()) -> bytes:
    path = str(tmp_path / name)
    write(path, "insert", [(1, 1, 0), (2, 1, 0), (3, 1, 0)], s)
    write(path, "upsert", [(1, 10, 1), (2, 10, 1)], s)
    write(path, "upsert", [(1, 20, 2)], s)
    write(path, "upsert", [(2, 30, 3), (3, 30, 3)], s)
    c = HoodieTable(path).new_instant_time()
    from hoodie.services.compaction import schedule_compaction

    assert schedule_compaction(path, config, instant=c) == c
    return (tmp_path / name / ".hoodie" / f"{c}.compaction.requested").read_bytes()


@pytest.mark.parametrize("kind", ["full", "partial", "exact_split", "partitioned_partial"])
def test_hoodie_plans_round_trip_byte_identical(tmp_path: Path, kind: str) -> None:
    config, s = {
        "full": (UNBOUNDED, Setup()),
        "partial": (event_time_config(15), Setup()),
        "exact_split": (event_time_config(15, exact=True), Setup()),
        "partitioned_partial": (event_time_config(15), Setup(partitioned=True)),
    }[kind]
    data = _scheduled(tmp_path, kind, config, s)
    plan = CompactionPlan.from_bytes(data)
    sync = data[-16:]
    assert plan.to_bytes(sync_marker=sync) == data
    # ... which is today's dict encoding of the same record.
    assert PL.write_avro_metadata(KIND, PL.read_avro_metadata(data), sync_marker=sync) == data
    assert plan.to_avro() == PL.read_avro_metadata(data)
    assert (kind == "full") == (not plan.partial_operations())
    # The timeline accessor gives the same typed plan.
    ts = HoodieTable(str(tmp_path / kind)).timeline.pending_compactions().last().timestamp
    assert HoodieTable(str(tmp_path / kind)).timeline.compaction_plan(ts) == plan


# ------------------------------------------------------------------ random plans

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_opt_text = st.one_of(st.none(), _text)
_metrics = st.one_of(st.none(), st.dictionaries(_text, st.floats(allow_nan=False), max_size=3))
_ints = st.integers(-(2 ** 31), 2 ** 31 - 1)


def _drop_some(draw: Any, record: dict[str, Any], defaulted: tuple[str, ...]) -> dict[str, Any]:
    """Leave out some defaulted fields, as an older writer schema (or stock Hudi) does."""
    gone = draw(st.sets(st.sampled_from(defaulted))) if defaulted else set()
    return {k: v for k, v in record.items() if k not in gone}


@st.composite
def _operations(draw: Any) -> dict[str, Any]:
    links = draw(st.one_of(st.none(), st.lists(st.fixed_dictionaries({"symlink": _opt_text, "target": _opt_text}),
                                              max_size=3)))
    op = {"baseInstantTime": draw(_opt_text), "deltaFilePaths": draw(st.one_of(st.none(), st.lists(_text, max_size=4))),
          "dataFilePath": draw(_opt_text), "fileId": draw(_opt_text), "partitionPath": draw(_opt_text),
          "metrics": draw(_metrics), "bootstrapFilePath": draw(_opt_text), "symlinkOperations": links}
    return _drop_some(draw, op, ("deltaFilePaths", "dataFilePath", "partitionPath", "metrics", "bootstrapFilePath",
                                 "symlinkOperations"))


@st.composite
def _plans(draw: Any) -> dict[str, Any]:
    strategy = draw(st.one_of(st.none(), st.fixed_dictionaries({
        "compactorClassName": _opt_text,
        "strategyParams": st.one_of(st.none(), st.dictionaries(_text, _text, max_size=2)),
        "version": st.one_of(st.none(), _ints)})))
    plan = {"operations": draw(st.one_of(st.none(), st.lists(_operations(), max_size=4))),
            "extraMetadata": draw(st.one_of(st.none(), st.dictionaries(_text, _text, max_size=3))),
            "version": draw(st.one_of(st.none(), _ints)), "strategy": strategy,
            "preserveHoodieMetadata": draw(st.one_of(st.none(), st.booleans()))}
    return _drop_some(draw, plan, ("operations", "extraMetadata", "version", "strategy", "preserveHoodieMetadata"))


@settings(max_examples=examples(200), deadline=None)
@given(record=_plans(), sync=st.binary(min_size=16, max_size=16))
def test_random_plans_round_trip_byte_identical(record: dict[str, Any], sync: bytes) -> None:
    data = PL.write_avro_metadata(KIND, record, sync_marker=sync)  # today's encoding of the dict
    plan = CompactionPlan.from_avro(record)
    assert plan.to_bytes(sync_marker=sync) == data
    assert plan.to_avro() == PL.fill_defaults(KIND, record)
    assert CompactionPlan.from_bytes(data) == plan
    assert CompactionPlan.from_avro(plan.to_avro()) == plan
    assert pickle.loads(pickle.dumps(plan)) == plan  # operations travel to Spark tasks pickled


@settings(max_examples=examples(50), deadline=None)
@given(record=_plans(), extra_op=st.dictionaries(st.sampled_from(["futureA", "futureB"]), _ints, min_size=1),
       extra_plan=st.dictionaries(st.sampled_from(["missingSchedulePartitions", "futureC"]), st.lists(_text)))
def test_unknown_writer_fields_are_kept_by_to_avro_and_dropped_by_to_bytes(record, extra_op, extra_plan) -> None:
    """Fields of a newer writer schema (Hudi 1.x's missingSchedulePartitions) survive to_avro."""
    widened = {**record, **extra_plan}
    if record.get("operations"):
        widened["operations"] = [{**op, **extra_op} for op in record["operations"]]
    plan = CompactionPlan.from_avro(widened)
    assert plan.unknown_fields == extra_plan
    assert all(op.unknown_fields == extra_op for op in plan.operations)
    filled = PL.fill_defaults(KIND, record)
    expected = {**filled, **extra_plan}
    if filled["operations"]:
        expected["operations"] = [{**op, **extra_op} for op in filled["operations"]]
    assert plan.to_avro() == expected
    sync = b"s" * 16
    assert plan.to_bytes(sync_marker=sync) == PL.write_avro_metadata(KIND, record, sync_marker=sync)


# ------------------------------------------------------------------ construction and conveniences

def _partial_op(partition: Optional[str] = "city=sf") -> CompactionOperation:
    return CompactionOperation(
        base_instant_time="20250101000000000", file_id="f1-0", partition_path=partition,
        data_file_path="f1-0_0-1-1_20250101000000000.parquet",
        delta_file_paths=(".f1-0_20250101000000000.log.1_0-1-1", ".f1-0_20250102000000000.log.0_0-0-0"),
        metrics={"TOTAL_LOG_FILES": 1.0, RESERVED_LOG_VERSION_METRIC: 1.0},
        symlink_operations=(SymlinkOperation(".f1-0_20250102000000000.log.1_0-2-2",
                                             ".f1-0_20250101000000000.log.2_0-2-2"),))


def test_constructed_plan_encodes_like_the_dict_constructors() -> None:
    """What the scheduler builds is byte for byte what the dict helpers of plans.py build."""
    op = _partial_op()
    full = CompactionOperation(base_instant_time="20250101000000000", file_id="f2-0", partition_path="",
                               delta_file_paths=(".f2-0_20250101000000000.log.1_0-1-1",), metrics={"X": 2.0})
    plan = CompactionPlan(operations=(op, full), extra_metadata={"hoodie.compaction.partial": "true"})
    legacy = PL.compaction_plan([
        PL.compaction_operation(op.base_instant_time, op.data_file_path, op.delta_file_paths, op.file_id,
                                op.partition_path, op.metrics, [(s.symlink, s.target) for s in op.symlink_operations]),
        PL.compaction_operation(full.base_instant_time, None, full.delta_file_paths, full.file_id, "", {"X": 2}),
    ], {"hoodie.compaction.partial": "true"})
    sync = bytes(range(16))
    assert plan.to_bytes(sync_marker=sync) == PL.write_avro_metadata(KIND, legacy, sync_marker=sync)
    assert plan.to_avro() == legacy


def test_operation_conveniences() -> None:
    op = _partial_op()
    assert op.partition == "city=sf" and op.file_group == ("city=sf", "f1-0")
    assert op.is_partial and op.reserved_log_version == 1
    assert op.data_file_name == "f1-0_0-1-1_20250101000000000.parquet"
    assert op.file_paths() == (
        "city=sf/f1-0_0-1-1_20250101000000000.parquet",
        "city=sf/.f1-0_20250101000000000.log.1_0-1-1",
        "city=sf/.f1-0_20250102000000000.log.0_0-0-0",
        "city=sf/.f1-0_20250101000000000.log.2_0-2-2",
    )
    # Plan version 1 held full paths: names are their last segment, paths stay relative.
    v1 = CompactionOperation(base_instant_time="1", file_id="f", partition_path=None,
                             data_file_path="s3://b/t/f_0-1-1_1.parquet", delta_file_paths=("s3://b/t/.f_1.log.1_0-1-1", ""))
    assert v1.partition == "" and v1.data_file_name == "f_0-1-1_1.parquet"
    assert v1.delta_file_names == (".f_1.log.1_0-1-1",)
    assert v1.file_paths() == ("f_0-1-1_1.parquet", ".f_1.log.1_0-1-1")
    assert not v1.is_partial and v1.reserved_log_version == 0 and v1.file_group == ("", "f")
    # Without the metric, the link names give the reservation.
    bare = CompactionOperation(base_instant_time="1", file_id="f", symlink_operations=(
        SymlinkOperation(".f_2.log.3_0-0-0", ".f_1.log.9_0-0-0"), SymlinkOperation(None, "x")))
    assert bare.reserved_log_version == 3


def test_plan_conveniences_and_strategy() -> None:
    a, b = _partial_op("p2"), _partial_op("p1")
    c = CompactionOperation(base_instant_time="1", file_id="g", partition_path="p1")
    plan = CompactionPlan(operations=(a, b, c), strategy=CompactionPlanStrategy("org.X", {"k": "v"}))
    assert plan.partitions() == ["p1", "p2"]
    assert plan.file_groups() == [("p2", "f1-0"), ("p1", "f1-0"), ("p1", "g")]
    assert plan.partial_operations() == [a, b]
    assert plan.to_avro()["strategy"] == {"compactorClassName": "org.X", "strategyParams": {"k": "v"}, "version": 1}
    assert CompactionPlan.from_bytes(plan.to_bytes()) == plan
    assert CompactionPlan().to_avro() == {"operations": [], "extraMetadata": {}, "version": 2, "strategy": None,
                                          "preserveHoodieMetadata": None}


def test_damaged_bytes_raise_value_error() -> None:
    data = CompactionPlan(operations=(_partial_op(),)).to_bytes()
    for bad in (b"", b"not avro", data[: len(data) // 2]):
        with pytest.raises(ValueError):
            CompactionPlan.from_bytes(bad)
    with pytest.raises(ValueError, match="16 bytes"):
        CompactionPlan().to_bytes(sync_marker=b"short")
