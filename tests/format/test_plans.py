"""Avro timeline metadata: real Java-written files, round trips and Java reader-schema resolution."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.timeline import plans as P
from tests.conftest import fixture_table_path
from tests.helpers import examples

ROLLBACK_TABLE = "sample_table_mor_parquet_v6_nonpartitioned_rollback"
OVERWRITE_TABLE = "sample_table_cow_v6_simplekeygen_nonhivestyle_overwritetable"
ROLLBACK_INSTANT = "20250126040936578"
BASE = "/opt/data/external_tables/v6_nonpartitioned_rollback"


def _timeline_file(root: Path, table: str, name: str) -> bytes:
    return (fixture_table_path(root, table) / ".hoodie" / name).read_bytes()


def _writer_schema(data: bytes) -> dict:
    return json.loads(fastavro.reader(io.BytesIO(data)).metadata["avro.schema"])


def _normalize(schema, ns: str | None = None):
    """Schema with full names everywhere and Java-only annotations dropped, for comparison."""
    if isinstance(schema, list):
        return [_normalize(s, ns) for s in schema]
    if isinstance(schema, str):
        if schema in ("null", "boolean", "int", "long", "float", "double", "bytes", "string") or "." in schema:
            return schema
        return f"{ns}.{schema}" if ns else schema
    out = {k: v for k, v in schema.items() if k not in ("avro.java.string", "doc")}
    t = out.get("type")
    if t == "record":
        name = out["name"]
        if "." in name:
            ns = name.rsplit(".", 1)[0]
        else:
            ns = out.get("namespace", ns)
            name = f"{ns}.{name}"
        out.pop("namespace", None)
        out["name"] = name
        out["fields"] = [dict(f, type=_normalize(f["type"], ns)) for f in out["fields"]]
        for f in out["fields"]:
            f.pop("doc", None)
        return out
    if t == "array":
        out.pop("default", None)
        out["items"] = _normalize(out["items"], ns)
        return out
    if t == "map":
        out.pop("default", None)
        out["values"] = _normalize(out["values"], ns)
        return out
    if isinstance(t, (dict, list)):
        return _normalize(t, ns)
    return t if len(out) == 1 else out


# ------------------------------------------------------------------ real Java-written files

def test_reads_java_rollback_metadata(fixtures_root: Path) -> None:
    data = _timeline_file(fixtures_root, ROLLBACK_TABLE, f"{ROLLBACK_INSTANT}.rollback")
    assert data.startswith(P.AVRO_MAGIC)
    assert P.read_avro_metadata_kind(data) == "HoodieRollbackMetadata"
    md = P.read_avro_metadata(data)
    assert md["startRollbackTime"] == ROLLBACK_INSTANT
    assert md["timeTakenInMillis"] == 195
    assert md["totalFilesDeleted"] == 1
    assert md["commitsRollback"] == ["20250126040826878"]
    assert md["version"] == 1
    assert md["instantsRollback"] == [{"commitTime": "20250126040826878", "action": "deltacommit"}]
    pm = md["partitionMetadata"][""]  # non-partitioned table: the partition path is ""
    assert pm["partitionPath"] == ""
    assert pm["successDeleteFiles"] == [
        f"{BASE}/cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_20250126040826878.parquet"]
    assert pm["failedDeleteFiles"] == []
    assert pm["rollbackLogFiles"] == {
        f"file:{BASE}/.0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1": 105}
    assert pm["logFilesFromFailedCommit"] == {
        f"file:{BASE}/.0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43": 11828}


def test_reads_java_rollback_plan(fixtures_root: Path) -> None:
    data = _timeline_file(fixtures_root, ROLLBACK_TABLE, f"{ROLLBACK_INSTANT}.rollback.requested")
    plan = P.read_avro_metadata(data)
    assert plan["instantToRollback"] == {"commitTime": "20250126040826878", "action": "deltacommit"}
    assert plan["version"] == 1
    req0, req1 = plan["RollbackRequests"]
    # A base file written by the failed commit: deleted outright, no file id recorded.
    assert req0 == {
        "partitionPath": "", "fileId": "", "latestBaseInstant": "",
        "filesToBeDeleted": [f"{BASE}/cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_20250126040826878.parquet"],
        "logBlocksToBeDeleted": {},
    }
    # A log file appended by the failed commit: gets a rollback command block.
    assert req1["fileId"] == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
    assert req1["latestBaseInstant"] == "20250126040823628"
    assert req1["filesToBeDeleted"] == []
    assert req1["logBlocksToBeDeleted"] == {
        f"file:{BASE}/.0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43": 11828}


def test_reads_java_requested_replace_of_insert_overwrite(fixtures_root: Path) -> None:
    data = _timeline_file(fixtures_root, OVERWRITE_TABLE, "20240707001303088.replacecommit.requested")
    md = P.read_avro_metadata(data)
    # Spark's insert_overwrite path writes `new HoodieRequestedReplaceMetadata()`: every field null.
    assert md == {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
    assert md == P.requested_replace_metadata(None)
    assert P.read_avro_metadata(P.write_avro_metadata("HoodieRequestedReplaceMetadata", md)) == md


def test_empty_inflight_rollback_is_a_clear_error(fixtures_root: Path) -> None:
    data = _timeline_file(fixtures_root, ROLLBACK_TABLE, f"{ROLLBACK_INSTANT}.rollback.inflight")
    assert data == b""
    with pytest.raises(ValueError, match="empty"):
        P.read_avro_metadata(data)


@pytest.mark.parametrize("name,kind", [
    (f"{ROLLBACK_INSTANT}.rollback", "HoodieRollbackMetadata"),
    (f"{ROLLBACK_INSTANT}.rollback.requested", "HoodieRollbackPlan"),
])
def test_schemas_equal_java_writer_schemas(fixtures_root: Path, name: str, kind: str) -> None:
    java = _writer_schema(_timeline_file(fixtures_root, ROLLBACK_TABLE, name))
    assert _normalize(P.avro_schema(kind)) == _normalize(java)


def test_replace_and_clustering_schema_equal_java_writer_schema(fixtures_root: Path) -> None:
    java = _writer_schema(_timeline_file(fixtures_root, OVERWRITE_TABLE, "20240707001303088.replacecommit.requested"))
    assert _normalize(P.avro_schema("HoodieRequestedReplaceMetadata")) == _normalize(java)


def test_java_files_resolve_against_our_reader_schemas(fixtures_root: Path) -> None:
    for table, name, kind in [
        (ROLLBACK_TABLE, f"{ROLLBACK_INSTANT}.rollback", "HoodieRollbackMetadata"),
        (ROLLBACK_TABLE, f"{ROLLBACK_INSTANT}.rollback.requested", "HoodieRollbackPlan"),
        (OVERWRITE_TABLE, "20240707001303088.replacecommit.requested", "HoodieRequestedReplaceMetadata"),
    ]:
        data = _timeline_file(fixtures_root, table, name)
        recs = list(fastavro.reader(io.BytesIO(data), reader_schema=P.avro_schema(kind)))
        assert recs == [P.read_avro_metadata(data)]


# ------------------------------------------------------------------ sample records of every kind

def _compaction_plan() -> dict:
    ops = [
        P.compaction_operation(
            "20250101000000000", "f1-0_0-1-1_20250101000000000.parquet",
            [".f1-0_20250101000000000.log.1_0-1-1", ".f1-0_20250101000000000.log.2_0-2-2"],
            "f1-0", "city=sf", {"TOTAL_LOG_FILES": 2, "TOTAL_IO_MB": 1.5},
            symlink_operations=[(".f1-0_20250102000000000.log.1_0-0-0", ".f1-0_20250101000000000.log.2_0-2-2")],
        ),
        P.compaction_operation("20250101000000000", None, [".f2-0_20250101000000000.log.1_0-1-1"],
                               "f2-0", "", {}),
    ]
    return P.compaction_plan(ops, {"hoodie.partial.compaction": "true"})


def _samples() -> dict[str, dict]:
    eitr = ("20250101000000000", "commit", "COMPLETED")
    clean_pm = P.clean_partition_metadata("p1", "KEEP_LATEST_COMMITS", ["a.parquet"], ["a.parquet"], [], False)
    rb_pm = P.rollback_partition_metadata("p1", ["/t/p1/x.parquet"], [], {"/t/p1/.f_1.log.2_1-0-1": 100}, {})
    clustering = {
        "inputGroups": [{"slices": [{"dataFilePath": "p1/a.parquet", "deltaFilePaths": [], "fileId": "a",
                                     "partitionPath": "p1"}], "metrics": {"TOTAL_FILE_SIZE": 10.0},
                         "numOutputFileGroups": 1}],
        "strategy": {"strategyClassName": "org.example.Strategy", "strategyParams": {}},
        "extraMetadata": {}, "preserveHoodieMetadata": True,
    }
    return {
        "HoodieCompactionPlan": _compaction_plan(),
        "HoodieCleanerPlan": P.cleaner_plan(eitr, "20250102000000000", "KEEP_LATEST_COMMITS",
                                            {"p1": ["/t/p1/a.parquet", ("/t/p1/b.parquet", True)]}, ["p2"]),
        "HoodieCleanMetadata": P.clean_metadata("20250103000000000", 12, "20250101000000000",
                                                "20250102000000000", {"p1": clean_pm}),
        "HoodieRollbackPlan": P.rollback_plan(("20250102000000000", "deltacommit"), [
            P.rollback_request("p1", files_to_delete=["/t/p1/x.parquet"]),
            P.rollback_request("p1", "f-0", "20250101000000000", [], {"/t/p1/.f-0_1.log.1_0-1-1": 42}),
        ]),
        "HoodieRollbackMetadata": P.rollback_metadata("20250103000000000", 7, [("20250102000000000", "deltacommit")],
                                                      {"p1": rb_pm}),
        "HoodieRequestedReplaceMetadata": P.requested_replace_metadata("CLUSTER", None, clustering),
        "HoodieSavepointMetadata": P.savepoint_metadata("alice", 1700000000, "before upgrade",
                                                        {"p1": ["a.parquet"]}),
        "HoodieRestorePlan": {"instantsToRollback": [{"commitTime": "20250102000000000", "action": "commit"}]},
        "HoodieRestoreMetadata": {
            "startRestoreTime": "20250104000000000", "timeTakenInMillis": 3,
            "instantsToRollback": ["20250102000000000"],
            "hoodieRestoreMetadata": {"20250102000000000": [
                P.rollback_metadata("20250104000000000", 1, [("20250102000000000", "commit")], {"p1": rb_pm})]},
            "restoreInstantInfo": [{"commitTime": "20250102000000000", "action": "commit"}],
        },
        # Table versions 8/9 (timeline layout 2) write commit metadata as Avro.
        "HoodieCommitMetadata": {
            "partitionToWriteStats": {"p1": [{"fileId": "f-0", "path": "p1/.f-0_20250102000000000.log.1_0-1-0",
                                              "prevCommit": "20250102000000000", "numWrites": 2, "logVersion": 1,
                                              "logOffset": 0, "baseFile": "", "logFiles": ["a"],
                                              "runtimeStats": {"totalScanTime": 0}}]},
            "compacted": False, "extraMetadata": {"schema": "{}"}, "version": None, "operationType": "UPSERT",
        },
        "HoodieReplaceCommitMetadata": {
            "partitionToWriteStats": {}, "compacted": False, "extraMetadata": {}, "version": None,
            "operationType": "DELETE_PARTITION", "partitionToReplaceFileIds": {"p1": ["f-0", "f-1"]},
        },
        # Version 6 archival's merge of small archive files (hoodie.archive.merge.enable).
        "HoodieMergeArchiveFilePlan": {
            "candidate": ["file:/t/.hoodie/archived/.commits_.archive.2_1-0-1",
                          "file:/t/.hoodie/archived/.commits_.archive.1_1-0-1"],
            "mergedArchiveFileName": ".commits_.archive.3_1-0-1",
        },
    }


@pytest.mark.parametrize("kind", P.KINDS)
def test_round_trip_every_kind(kind: str) -> None:
    record = _samples()[kind]
    data = P.write_avro_metadata(kind, record)
    assert data.startswith(b"Obj\x01")
    reader = fastavro.reader(io.BytesIO(data))
    # Same container layout as Java's DataFileWriter: only the schema in the header, no codec key.
    assert list(reader.metadata) == ["avro.schema"]
    assert reader.codec == "null"
    assert reader.writer_schema["name"].endswith(kind)
    assert len(list(fastavro.reader(io.BytesIO(data)))) == 1
    assert P.read_avro_metadata(data) == P.fill_defaults(kind, record)
    assert P.read_avro_metadata_kind(data) == kind


def test_constructor_values() -> None:
    s = _samples()
    plan = s["HoodieCompactionPlan"]
    assert plan["version"] == 2 and plan["strategy"] is None and plan["preserveHoodieMetadata"] is None
    op = plan["operations"][0]
    assert op["metrics"] == {"TOTAL_LOG_FILES": 2.0, "TOTAL_IO_MB": 1.5}
    assert op["symlinkOperations"] == [{"symlink": ".f1-0_20250102000000000.log.1_0-0-0",
                                        "target": ".f1-0_20250101000000000.log.2_0-2-2"}]
    assert plan["operations"][1]["symlinkOperations"] is None
    assert plan["operations"][1]["dataFilePath"] is None
    cp = s["HoodieCleanerPlan"]
    assert cp["version"] == 2 and cp["filesToBeDeletedPerPartition"] == {}
    assert cp["earliestInstantToRetain"] == {"timestamp": "20250101000000000", "action": "commit",
                                             "state": "COMPLETED"}
    assert cp["filePathsToBeDeletedPerPartition"]["p1"][1] == {"filePath": "/t/p1/b.parquet",
                                                               "isBootstrapBaseFile": True}
    assert s["HoodieCleanMetadata"]["totalFilesDeleted"] == 1 and s["HoodieCleanMetadata"]["version"] == 2
    rm = s["HoodieRollbackMetadata"]
    assert rm["totalFilesDeleted"] == 1 and rm["commitsRollback"] == ["20250102000000000"]
    assert rm["instantsRollback"] == [{"commitTime": "20250102000000000", "action": "deltacommit"}]


@pytest.mark.parametrize("op", ["DELETE_PARTITION", "INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE"])
def test_requested_replace_without_clustering(op: str) -> None:
    md = P.requested_replace_metadata(op)
    assert md == {"operationType": op, "clusteringPlan": None, "extraMetadata": {}, "version": 1}
    assert P.read_avro_metadata(P.write_avro_metadata("HoodieRequestedReplaceMetadata", md)) == md
    with pytest.raises(ValueError, match="no clustering plan"):
        P.requested_replace_metadata(op, clustering_plan={"inputGroups": []})


# ------------------------------------------------------------------ Java reader-schema semantics

@pytest.mark.parametrize("kind", P.KINDS)
def test_readable_with_hudi_schema_without_extension(kind: str) -> None:
    data = P.write_avro_metadata(kind, _samples()[kind])
    hudi = P.avro_schema(kind, extensions=False)
    (rec,) = list(fastavro.reader(io.BytesIO(data), reader_schema=hudi))
    expected = P.fill_defaults(kind, _samples()[kind])
    if kind == "HoodieCompactionPlan":
        for op in expected["operations"]:
            del op["symlinkOperations"]  # unknown writer field: skipped by resolution
    assert rec == expected


def test_compaction_plan_readable_by_pre_013_schema() -> None:
    """A reader schema without strategy/preserveHoodieMetadata/symlinkOperations still resolves."""
    old = P.avro_schema("HoodieCompactionPlan", extensions=False)
    old["fields"] = [f for f in old["fields"] if f["name"] not in ("strategy", "preserveHoodieMetadata")]
    data = P.write_avro_metadata("HoodieCompactionPlan", _compaction_plan())
    (rec,) = list(fastavro.reader(io.BytesIO(data), reader_schema=old))
    assert set(rec) == {"operations", "extraMetadata", "version"}
    assert rec["operations"][0]["deltaFilePaths"] == [".f1-0_20250101000000000.log.1_0-1-1",
                                                      ".f1-0_20250101000000000.log.2_0-2-2"]
    assert "symlinkOperations" not in rec["operations"][0]


def test_our_rollback_files_readable_with_java_writer_schemas(fixtures_root: Path) -> None:
    """Use the schemas Java actually wrote as *reader* schemas for our bytes."""
    for name, kind in [(f"{ROLLBACK_INSTANT}.rollback", "HoodieRollbackMetadata"),
                       (f"{ROLLBACK_INSTANT}.rollback.requested", "HoodieRollbackPlan")]:
        java_schema = _writer_schema(_timeline_file(fixtures_root, ROLLBACK_TABLE, name))
        data = P.write_avro_metadata(kind, _samples()[kind])
        (rec,) = list(fastavro.reader(io.BytesIO(data), reader_schema=java_schema))
        assert rec == P.fill_defaults(kind, _samples()[kind])


def test_extension_field_is_last_and_nullable() -> None:
    op = P.avro_schema("HoodieCompactionPlan")["fields"][0]["type"][1]["items"]
    last = op["fields"][-1]
    assert last["name"] == "symlinkOperations" and last["default"] is None and last["type"][0] == "null"
    assert [f["name"] for f in op["fields"][:-1]] == [
        f["name"] for f in P.avro_schema("HoodieCompactionPlan", extensions=False)
        ["fields"][0]["type"][1]["items"]["fields"]]


# ------------------------------------------------------------------ defaults and validation

def test_defaults_are_filled() -> None:
    assert P.read_avro_metadata(P.write_avro_metadata("HoodieCompactionPlan", {})) == {
        "operations": None, "extraMetadata": None, "version": 1, "strategy": None, "preserveHoodieMetadata": None}
    rec = P.fill_defaults("HoodieCleanerPlan", {"policy": "KEEP_LATEST_COMMITS"})
    assert rec["lastCompletedCommitTimestamp"] == "" and rec["version"] == 1
    op = P.fill_defaults("HoodieCompactionPlan",
                         {"operations": [{"baseInstantTime": "1", "fileId": "f"}]})["operations"][0]
    assert op["deltaFilePaths"] is None and op["symlinkOperations"] is None and op["bootstrapFilePath"] is None


def test_validation_errors() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        P.write_avro_metadata("HoodieCompactionPlan", {"operationz": []})
    with pytest.raises(ValueError, match="missing required field 'policy'"):
        P.write_avro_metadata("HoodieCleanerPlan", {})
    with pytest.raises(ValueError, match="missing required field 'baseInstantTime'"):
        P.write_avro_metadata("HoodieCompactionPlan", {"operations": [{"fileId": "f"}]})
    with pytest.raises(ValueError, match="does not match"):
        P.write_avro_metadata("HoodieRollbackMetadata", dict(_samples()["HoodieRollbackMetadata"],
                                                             timeTakenInMillis="soon"))
    with pytest.raises(ValueError, match="unknown Avro metadata kind"):
        P.write_avro_metadata("HoodieCommitMetadatas", {})


def test_read_rejects_non_avro() -> None:
    with pytest.raises(ValueError, match="not an Avro object container"):
        P.read_avro_metadata(b'{"partitionToWriteStats": {}}')
    data = P.write_avro_metadata("HoodieRestorePlan", {})
    with pytest.raises(ValueError, match="corrupt"):
        P.read_avro_metadata(data[: len(data) // 2])


def test_write_does_not_mutate_input() -> None:
    rec = _compaction_plan()
    before = copy.deepcopy(rec)
    P.write_avro_metadata("HoodieCompactionPlan", rec)
    assert rec == before


_names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


@settings(max_examples=examples(50), deadline=None)
@given(
    ops=st.lists(st.tuples(
        _names, st.one_of(st.none(), _names), st.lists(_names, max_size=3), _names, _names,
        st.dictionaries(_names, st.floats(allow_nan=False), max_size=3),
        st.one_of(st.none(), st.lists(st.tuples(_names, _names), max_size=2)),
    ), max_size=4),
    extra=st.one_of(st.none(), st.dictionaries(_names, _names, max_size=3)),
)
def test_compaction_plan_round_trip_property(ops, extra) -> None:
    plan = P.compaction_plan([P.compaction_operation(*o) for o in ops], extra)
    assert P.read_avro_metadata(P.write_avro_metadata("HoodieCompactionPlan", plan)) == plan
