"""The hoodie CLI through subprocess: the demo job and metadata commands (no JVM)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hoodie.interfaces.cli import main


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_demo_then_show_timeline(tmp_path: Path) -> None:
    base = str(tmp_path / "demo")
    out = _cli("demo", "--base-path", base, "--rows", "300", "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["read_optimized_rows"] == 300
    assert summary["snapshot_rows"] == 300 - 15
    tl = _cli("show", "timeline", base, "--json")
    assert tl.returncode == 0, tl.stderr
    rows = json.loads(tl.stdout)
    assert [r["instant"] for r in rows] == summary["commits"]
    assert {r["action"] for r in rows} == {"deltacommit"}


def test_error_is_one_line_with_nonzero_exit(tmp_path: Path) -> None:
    out = _cli("show", "timeline", str(tmp_path / "missing"))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "not a Hudi table" in out.stderr


def test_create_show_rollback_and_metrics_file(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    out = _cli("create", base, "--name", "t", "--type", "mor", "--record-key", "id", "--partition-fields", "day",
               "--precombine", "ts", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["table_type"] == "MERGE_ON_READ"
    import pyarrow as pa

    from hoodie import write_arrow

    metrics = tmp_path / "m.prom"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.operation": "upsert",
            "hoodie.metrics.prometheus.file": str(metrics), "hoodie.clean.automatic": "false"}
    write_arrow(base, pa.table({"id": [1, 2], "day": ["d1", "d2"], "ts": [1, 1]}), opts)
    c2 = write_arrow(base, pa.table({"id": [1], "day": ["d1"], "ts": [2]}), opts)
    text = metrics.read_text()
    assert 'hoodie_write_records_written{base_path="' in text and 'operation="UPSERT"' in text
    parts = json.loads(_cli("show", "partitions", base, "--json").stdout)
    assert [p["partition"] for p in parts] == ["d1", "d2"] and parts[0]["log_files"] == 1
    slices = json.loads(_cli("show", "file-slices", base, "--partition", "d1", "--json").stdout)
    assert len(slices) == 1 and len(slices[0]["log_files"]) == 1
    stats = json.loads(_cli("show", "stats", base, "--json").stdout)
    assert [s["records_written"] for s in stats] == [2, 1]
    out = _cli("--metrics-file", str(metrics), "rollback", base, c2, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rolled_back"] == c2
    out = _cli("--metrics-file", str(metrics), "clean", base, "--set", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
               "--set", "hoodie.cleaner.fileversions.retained=1")
    assert out.returncode == 0, out.stderr
    text = metrics.read_text()
    assert "hoodie_clean_files_deleted" in text and "hoodie_write_records_written" in text


def _unrelated_files(folder: Path) -> dict[str, str]:
    """Files a user keeps in a folder hoodie did not create; returns {relative path: content}."""
    files = {"notes.txt": "keep me", "sub/data.csv": "a,b\n1,2\n"}
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return files


def _assert_survive(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        assert (folder / rel).read_text() == text, f"{rel} was deleted or changed"


def test_demo_refuses_a_folder_it_did_not_create(tmp_path: Path) -> None:
    """`hoodie demo` deleted the whole --base-path (rmtree), unrelated files included; now a
    non-empty folder it did not create is refused, and so is a user's own table."""
    base = tmp_path / "mine"
    files = _unrelated_files(base)
    out = _cli("demo", "--base-path", str(base), "--rows", "100")
    assert out.returncode == 2
    assert "not empty" in out.stderr and "--overwrite" in out.stderr and "notes.txt" in out.stderr
    _assert_survive(base, files)
    # --no-overwrite (append to the demo's table) must not write into a folder it did not create either.
    out = _cli("demo", "--base-path", str(base), "--rows", "100", "--no-overwrite")
    assert out.returncode == 2 and "not empty" in out.stderr
    _assert_survive(base, files)
    assert not (base / ".hoodie").exists()
    # A user's table (not made by the demo) is refused too: replacing it would lose their data.
    table = tmp_path / "t"
    assert _cli("create", str(table), "--name", "t", "--record-key", "id").returncode == 0
    out = _cli("demo", "--base-path", str(table), "--rows", "100")
    assert out.returncode == 2 and "a Hudi table that hoodie demo/quickstart did not create" in out.stderr
    assert (table / ".hoodie" / "hoodie.properties").exists()
    # Said explicitly, --overwrite replaces the folder.
    out = _cli("demo", "--base-path", str(base), "--rows", "100", "--overwrite", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["snapshot_rows"] == 95 and not (base / "notes.txt").exists()


def test_demo_replaces_its_own_previous_table(tmp_path: Path) -> None:
    """The demo's own earlier output is replaced without --overwrite; --no-overwrite appends to it."""
    base = tmp_path / "demo"
    first = json.loads(_cli("demo", "--base-path", str(base), "--rows", "100", "--json").stdout)
    out = _cli("demo", "--base-path", str(base), "--rows", "200", "--json")
    assert out.returncode == 0, out.stderr
    second = json.loads(out.stdout)
    assert second["snapshot_rows"] == 190
    timeline = json.loads(_cli("show", "timeline", str(base), "--json").stdout)
    assert [r["instant"] for r in timeline] == second["commits"]
    assert not set(first["commits"]) & set(second["commits"])
    out = _cli("demo", "--base-path", str(base), "--rows", "200", "--no-overwrite", "--json")
    assert out.returncode == 0, out.stderr
    assert len(json.loads(_cli("show", "timeline", str(base), "--json").stdout)) == 6


def test_quickstart_without_java_deletes_nothing(tmp_path: Path) -> None:
    """`hoodie quickstart` deleted --base-path first and then failed for want of Java; now the folder
    is checked and Spark started before anything is deleted."""
    import os

    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}

    def quickstart(base: Path, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hoodie.interfaces.cli", "quickstart", "--base-path",
                               str(base), "--rows", "100", *extra], capture_output=True, text=True, timeout=300,
                              env=env)

    base = tmp_path / "mine"
    files = _unrelated_files(base)
    out = quickstart(base)
    assert out.returncode == 2 and "not empty" in out.stderr and "--overwrite" in out.stderr
    _assert_survive(base, files)
    out = quickstart(base, "--overwrite")
    assert out.returncode == 2 and "JavaNotFoundError" in out.stderr, out.stderr
    _assert_survive(base, files)
    # Its own earlier output passes the folder check; Java is still missing, and the table stays.
    demo = tmp_path / "demo"
    assert _cli("demo", "--base-path", str(demo), "--rows", "100").returncode == 0
    out = quickstart(demo)
    assert out.returncode == 2 and "JavaNotFoundError" in out.stderr, out.stderr
    assert (demo / ".hoodie" / "hoodie.properties").exists()


@pytest.mark.parametrize("version", ["8", "9"])
def test_create_a_hudi_1x_table(tmp_path: Path, version: str) -> None:
    """`hoodie create --table-version 8|9` lays out a layout-2 table that writes and hudi-rs reads."""
    import pyarrow as pa

    from hoodie.format.table import HoodieTable
    from hoodie import write_arrow
    from tests.hudi_rs import read_hudi_rs

    path = str(tmp_path / "t")
    assert main(["create", path, "--name", "t", "--type", "mor", "--record-key", "k", "--partition-fields", "p",
                 "--precombine", "ts", "--table-version", version]) == 0
    t = HoodieTable(path)
    assert t.table_version == int(version) and t.timeline_layout == 2
    assert (tmp_path / "t" / ".hoodie" / "timeline" / "history").is_dir()
    write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [1]}), {"hoodie.table.name": "t"})
    assert read_hudi_rs(path).column("k").to_pylist() == ["a"]


def test_create_refuses_properties_it_derives(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = str(tmp_path / "t")
    assert main(["create", path, "--name", "t", "--record-key", "k", "--set", "hoodie.table.version=9"]) == 2
    assert "--set hoodie.table.version: set by hoodie" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("prop", ["hoodie.populate.meta.fields=yes", "hoodie.table.cdc.enabled=1",
                                  "hoodie.table.base.file.format=avro"])
def test_create_refuses_a_table_property_its_rule_refuses(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                          prop: str) -> None:
    """A --set table property is read by its rule before anything is written: before, `yes` went into
    hoodie.properties (and was read as false)."""
    path = str(tmp_path / "t")
    assert main(["create", path, "--name", "t", "--record-key", "k", "--set", prop]) == 2
    key, value = prop.split("=")
    assert f"{key}='{value}' is not" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()
