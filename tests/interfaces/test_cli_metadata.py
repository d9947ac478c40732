"""``hoodie metadata show|validate|create|drop`` on a table, end to end (no JVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hoodie.interfaces.cli import main
from hoodie import write_arrow

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts"}


def _json(capsys: pytest.CaptureFixture, argv: list[str]) -> tuple[int, dict]:
    rc = main(argv + ["--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_create_show_validate_drop(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"id": [1, 2, 3], "p": ["a", "b", "b"], "ts": [1, 1, 1]}), OPTS)
    rc, st = _json(capsys, ["metadata", "show", path])
    assert rc == 0 and st["state"] == "none"
    assert main(["metadata", "validate", path]) == 1
    assert "has no metadata table" in capsys.readouterr().out

    assert main(["metadata", "create", path]) == 0
    assert "2 file(s) in 2 partition(s)" in capsys.readouterr().out
    rc, res = _json(capsys, ["metadata", "validate", path])
    assert rc == 0 and res["equal"]
    write_arrow(path, pa.table({"id": [4], "p": ["c"], "ts": [2]}), OPTS)  # maintained from now on
    rc, st = _json(capsys, ["metadata", "show", path])
    assert st["state"] == "ready" and st["data_partitions"] == 3 and st["latest_instant"] == st["data_latest_instant"]

    # A file removed behind hoodie's back: validate names it and exits 1.
    victim = next((Path(path) / "c").glob("*.parquet"))
    victim.unlink()
    assert main(["metadata", "validate", path]) == 1
    out = capsys.readouterr().out
    assert f"c/{victim.name}" in out and "files in the metadata table only (1)" in out

    assert main(["metadata", "drop", path]) == 0
    assert "dropped the metadata table" in capsys.readouterr().out
    rc, st = _json(capsys, ["metadata", "show", path])
    assert st["state"] == "none" and not (Path(path) / ".hoodie" / "metadata").exists()


def test_create_refuses_while_a_write_is_pending(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tests.format.test_fsview import _uncommitted_write

    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"id": [1], "p": ["a"], "ts": [1]}), OPTS)
    _uncommitted_write(path, pa.table({"id": [2], "p": ["a"], "ts": [2]}), opts=OPTS)
    assert main(["metadata", "create", path]) == 2
    assert "pending write" in capsys.readouterr().err
    assert not (Path(path) / ".hoodie" / "metadata").exists()


def test_show_and_validate_a_hudi_1x_table(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A metadata table Hudi 1.0 wrote (layout 2, with index partitions): show reads it, validate finds
    its listing equal to storage; drop removes it (readers then list storage) and create builds it
    again in layout 2."""
    from tests.format.test_fixtures_v8v9 import ZIPS
    from tests.format.test_metadata_fixtures import _table

    z = next(z for z in ZIPS if z.stem == "quickstart_trips_table_mor_avro_v8_trips_8i3u1d")
    path = str(_table(z, tmp_path / "v8"))
    rc, st = _json(capsys, ["metadata", "show", path])
    assert rc == 0 and st["state"] == "ready" and "files" in st["partitions"] and st["data_partitions"] == 3
    rc, res = _json(capsys, ["metadata", "validate", path])
    assert rc == 0 and res["equal"], res
    assert main(["metadata", "drop", path]) == 0
    capsys.readouterr()
    assert main(["metadata", "create", path]) == 0
    capsys.readouterr()
    rc, res = _json(capsys, ["metadata", "validate", path])
    assert rc == 0 and res["equal"], res
    assert (Path(path) / ".hoodie" / "metadata" / ".hoodie" / "timeline").is_dir()
    rc, timeline = _json(capsys, ["show", "timeline", path])
    assert rc == 0 and all(r["completion"] > r["instant"] for r in timeline if r["state"] == "COMPLETED")
