"""CALL procedures' rows, without Spark: each procedure's function called with a base path (the
table argument resolves without a catalog), as hoodie.sql would after binding the arguments. Every
procedure says what it did, or why it did nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql_call import PROCEDURES, SqlError, bind
import hoodie.interfaces.procedures  # noqa: F401  (registers the procedures)
from hoodie.services.clean import run_clean
from hoodie.services.compaction import schedule_compaction
from hoodie import write_arrow
from tests.hudi_rs import read_hudi_rs

OPTS = {
    "hoodie.table.name": "pr", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.clean.automatic": "false",
}


def call(name: str, path: str, **kw: Any) -> list[tuple]:
    proc = PROCEDURES[name.lower()]
    rows = proc.fn(None, bind(proc, [], {"basePath": path, **kw}))
    width = len(proc.output.split(","))
    assert rows and all(len(r) == width for r in rows), f"{name} returned {rows!r} for {width} columns"
    return rows


def named(name: str, row: tuple) -> dict[str, Any]:
    cols = [c.strip().split(" ")[0] for c in PROCEDURES[name.lower()].output.split(",")]
    return dict(zip(cols, row))


def _table(path: str, table_type: str) -> list[str]:
    o = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    out = []
    for k, ids in enumerate([range(6), [1, 2], [2, 3]]):
        data = pa.table({"id": pa.array(list(ids), pa.int64()), "p": [f"p{i % 2}" for i in ids],
                         "ts": pa.array([k] * len(list(ids)), pa.int64())})
        op = "insert" if k == 0 else "upsert"
        out.append(write_arrow(path, data, {**o, "hoodie.datasource.write.operation": op}))
    return out


def test_savepoint_procedures(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1, c2, c3 = _table(path, "MERGE_ON_READ")
    assert "no savepoint" in named("show_savepoints", call("show_savepoints", path)[0])["note"]
    row = named("create_savepoint", call("create_savepoint", path, commit_time=c2, user="ops", comments="x")[0])
    assert row["create_savepoint_result"] is True and row["savepoint_time"] == c2 and row["files"] > 0
    again = named("create_savepoint", call("create_savepoint", path, instant_time=c2)[0])
    assert again["create_savepoint_result"] is False and "savepointed already" in again["message"]
    shown = [named("show_savepoints", r) for r in call("show_savepoints", path)]
    assert [(s["savepoint_time"], s["savepointed_by"], s["comments"]) for s in shown] == [(c2, "ops", "x")]
    assert shown[0]["partitions"] == 2 and shown[0]["files"] == row["files"]
    parts = [named("show_partitions", r) for r in call("show_partitions", path)]
    assert [(p["partition"], p["savepointed"]) for p in parts] == [("p0", True), ("p1", True)]
    # Refusals are rows with a false result and the reason.
    rb = named("rollback_to_instant", call("rollback_to_instant", path, instant_time=c1)[0])
    assert rb["rollback_result"] is False and "later writes" in rb["message"]
    restored = named("rollback_to_savepoint", call("rollback_to_savepoint", path, instant_time=c2)[0])
    assert restored["rollback_savepoint_result"] is True and restored["rolled_back_instants"] == c3
    assert "restored to savepoint" in restored["message"]
    assert sorted(read_hudi_rs(path).column("id").to_pylist()) == list(range(6))
    rb = named("rollback_to_instant", call("rollback_to_instant", path, instant_time=c2)[0])
    assert rb["rollback_result"] is False and "savepointed" in rb["message"]
    nothing = named("rollback_to_savepoint", call("rollback_to_savepoint", path, instant_time=c2)[0])
    assert nothing["rollback_savepoint_result"] is True and "nothing to restore" in nothing["message"]
    missing = named("rollback_to_savepoint", call("rollback_to_savepoint", path, instant_time=c1)[0])
    assert missing["rollback_savepoint_result"] is False and f"savepoints: {c2}" in missing["message"]
    assert call("delete_savepoint", path, instant_time=c2)[0][0] is True
    gone = named("delete_savepoint", call("delete_savepoint", path, instant_time=c2)[0])
    assert gone["delete_savepoint_result"] is False and "no savepoint" in gone["message"]
    rb = named("rollback_to_instant", call("rollback_to_instant", path, instant_time=c2)[0])
    assert rb["rollback_result"] is True and f"rolled back deltacommit {c2}" in rb["message"]


def test_procedures_that_do_nothing_say_why(tmp_path: Path) -> None:
    cow, mor = str(tmp_path / "cow"), str(tmp_path / "mor")
    _table(cow, "COPY_ON_WRITE")
    _table(mor, "MERGE_ON_READ")
    assert "COPY_ON_WRITE" in named("show_compaction", call("show_compaction", cow)[0])["note"]
    assert "schedule one" in named("show_compaction", call("show_compaction", mor)[0])["note"]
    c = named("run_compaction", call("run_compaction", cow, op="run")[0])
    assert c["state"] == "NONE" and "COPY_ON_WRITE" in c["message"]
    c = named("run_compaction", call("run_compaction", mor, op="schedule")[0])
    assert c["timestamp"] is None and c["state"] == "NONE" and "delta commit" in c["message"]
    c = named("run_compaction", call("run_compaction", mor, op="run")[0])
    assert c["state"] == "NONE" and "no pending compaction" in c["message"]
    clean = named("run_clean", call("run_clean", cow)[0])
    assert clean["start_clean_time"] == "" and clean["message"].startswith("nothing to clean")
    dry = named("run_clean", call("run_clean", cow, clean_policy="KEEP_LATEST_FILE_VERSIONS",
                                  file_versions_retained=1, dry_run=True)[0])
    assert dry["message"].startswith("dry run: would delete") and dry["total_files_deleted"] > 0
    assert "no clean" in named("show_clean_plans", call("show_clean_plans", cow)[0])["note"]
    cl = named("run_clustering", call("run_clustering", cow, op="schedule", order="id")[0])
    assert cl["state"] == "NOT_SUPPORTED" and "insert_overwrite" in cl["message"]
    ttl = call("run_ttl", cow, retain_days=30)
    assert [named("run_ttl", r)["status"] for r in ttl] == ["nothing deleted"]
    assert "no partition expired" in named("run_ttl", ttl[0])["reason"]
    # show_freshness: a null watermark says whether it is unknown or complete.
    f = named("show_freshness", call("show_freshness", mor)[0])
    assert f["watermark"] is None and f["watermark_status"] == "unknown" and "unknown" in f["note"]
    f = named("show_freshness", call("show_freshness", cow)[0])
    assert f["watermark"] is None and f["watermark_status"] == "complete" and "nothing is left" in f["note"]


def test_file_views(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1, c2, c3 = _table(path, "MERGE_ON_READ")
    view = [named("show_fsview_latest", r) for r in call("show_fsview_latest", path)]
    assert sorted(v["partition"] for v in view) == ["p0", "p1"]
    assert all(v["base_instant"] == c1 and v["num_delta_files"] >= 1 and v["delta_files_compaction_scheduled"] == "[]"
               for v in view)
    c = schedule_compaction(path, {"hoodie.compact.inline.max.delta.commits": "1"})
    view = [named("show_fsview_latest", r) for r in call("show_fsview_latest", path, partition_path="p1")]
    assert [v["partition"] for v in view] == ["p1"] and view[0]["delta_size_compaction_scheduled"] > 0
    assert view[0]["delta_files_compaction_unscheduled"] == "[]" and view[0]["base_instant"] == c1
    unmerged = named("show_fsview_latest", call("show_fsview_latest", path, partition_path="p1", merge=False)[0])
    assert unmerged["base_instant"] == c and unmerged["data_file"] == ""
    old = named("show_fsview_latest", call("show_fsview_latest", path, max_instant=c1, partition_path="p1")[0])
    assert old["file_id"] is None and "no live file slice" in old["note"]
    with pytest.raises(SqlError, match="no partition 'p9'; its partitions are 'p0', 'p1'"):
        call("show_fsview_latest", path, partition_path="p9")
    limited = call("show_fsview_latest", path, limit=1)
    assert len(limited) == 1 and "more file slice" in named("show_fsview_latest", limited[0])["note"]
    stats = [named("stats_file_sizes", r) for r in call("stats_file_sizes", path)]
    data_files = [f for p in ("p0", "p1") for f in os.listdir(os.path.join(path, p)) if not f.startswith(".hoodie")]
    assert stats[-1]["commit_time"] == "ALL" and stats[-1]["num_files"] == len(data_files)
    assert stats[-1]["min"] <= stats[-1]["50th"] <= stats[-1]["max"]
    nothing = named("stats_file_sizes", call("stats_file_sizes", path, partition_path="x*")[-1])
    assert "no partition matches" in nothing["note"] and nothing["num_files"] == 0
    base = next(f for f in os.listdir(os.path.join(path, "p0")) if f.endswith(".parquet"))
    st = named("show_file_status", call("show_file_status", path, partition="p0", file=base)[0])
    assert st["status"] == "exist" and st["full_path"].endswith(f"p0/{base}") and "latest file slice" in st["detail"]
    st = named("show_file_status", call("show_file_status", path, file="nope.parquet")[0])
    assert st["status"] == "unknown" and "no file" in st["detail"]


def test_file_status_names_the_clean_and_clean_plans_are_shown(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    c1, _, _ = _table(path, "COPY_ON_WRITE")
    old = next(f for f in os.listdir(os.path.join(path, "p1")) if c1 in f)
    st = named("show_file_status", call("show_file_status", path, partition="p1", file=old)[0])
    assert st["status"] == "exist" and "older version" in st["detail"]
    res = run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                           "hoodie.cleaner.fileversions.retained": "1"})
    st = named("show_file_status", call("show_file_status", path, partition="p1", file=old)[0])
    assert (st["status"], st["action"], st["instant"], st["timeline"]) == ("deleted", "clean", res.instant, "active")
    plans = [named("show_clean_plans", r) for r in call("show_clean_plans", path)]
    assert plans[0]["plan_time"] == res.instant and plans[0]["state"] == "COMPLETED"
    assert plans[0]["policy"] == "KEEP_LATEST_FILE_VERSIONS" and plans[0]["total_files_to_delete"] == res.total_deleted
    assert PROCEDURES["show_clean_plan"] is PROCEDURES["show_clean_plans"]
    assert HoodieTable(path).timeline.completed().by_actions("clean").last().timestamp == res.instant
