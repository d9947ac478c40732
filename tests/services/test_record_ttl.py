"""Record-level TTL (``hoodie.record.ttl.*``, :mod:`hoodie.services.ttl.record_ttl`; docs/ttl.md).

The model test: random histories of inserts and upserts with event times on COPY_ON_WRITE and
MERGE_ON_READ tables (versions 6 and 9), then a dry run and a record TTL run. The dry run writes
nothing and counts what the run deletes; after the run the table (hoodie's reader and hudi-rs)
equals the model (rows with an event time before ``now - retention`` gone, every other row unchanged,
commit times included), and the run wrote exactly the file groups that held expired rows.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services.ttl.record_ttl import (
    CUTOFF_KEY, RecordTTLConfigError, base_file_min, run_record_ttl, writes_since_last_run,
)
from hoodie import write_arrow
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

DAY = 86_400_000
NOW = 1_735_689_600_000  # 2025-01-01T00:00:00Z
RETAIN_DAYS = 5
KEYS = range(8)


def part_of(k: int) -> str:
    return f"p{k % 2}"


def _opts(table_type: str, op: str, version: str = "6", event_field: bool = True) -> dict[str, str]:
    o = {
        "hoodie.table.name": "rttl", "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": op,
        "hoodie.clean.automatic": "false", "hoodie.write.table.version": version,
        # Small base files, so that a partition holds several file groups.
        "hoodie.parquet.small.file.limit": "0",
    }
    if event_field:
        o["hoodie.payload.event.time.field"] = "ev"
    return o


def _batch(rows: dict[int, tuple[int, int]], ts: int, now: int = NOW) -> pa.Table:
    """rows: key -> (age in days of the event time, value)."""
    keys = sorted(rows)
    return pa.table({"k": [f"k{k}" for k in keys], "part": [part_of(k) for k in keys],
                     "ts": pa.array([ts] * len(keys), pa.int64()),
                     "ev": pa.array([now - rows[k][0] * DAY for k in keys], pa.int64()),
                     "v": pa.array([rows[k][1] for k in keys], pa.int64())})


def _read(path: str, reader: Any = hoodie.read_table) -> list[tuple]:
    t = reader(path)
    if t.num_rows == 0:
        return []
    return sorted(zip(*(t.column(c).to_pylist() for c in ("k", "part", "ev", "v", "_hoodie_commit_time"))))


def _files(path: str) -> list[str]:
    out = []
    for root, _dirs, names in os.walk(path):
        if ".hoodie/.locks" in root or root.endswith(".locks"):
            continue
        out += [os.path.relpath(os.path.join(root, n), path) for n in names if not n.endswith(".lock")]
    return sorted(out)


def _ttl_opts(**kw: str) -> dict[str, str]:
    return {"hoodie.record.ttl.retention": f"P{RETAIN_DAYS}D", "hoodie.record.ttl.field": "ev", **kw}


write_strategy = st.tuples(
    st.sampled_from(["insert", "upsert"]),
    # key -> (age in days, value); ages straddle the retention
    st.dictionaries(st.sampled_from(KEYS), st.tuples(st.integers(0, 2 * RETAIN_DAYS), st.integers(0, 99)),
                    min_size=1, max_size=5),
)


def _run_model(table_type: str, version: str, stats_field: bool, writes: list[tuple[str, dict]]) -> None:
    tmp = tempfile.mkdtemp()
    path = f"{tmp}/t"
    try:
        model: dict[str, tuple] = {}
        seen: set[int] = set()
        for step, (op, rows) in enumerate(writes, start=1):
            if op == "insert":
                # An insert of a key the table holds would duplicate it (Hudi's insert skips the index).
                rows = {k: r for k, r in rows.items() if k not in seen}
                if not rows:
                    continue
            inst = write_arrow(path, _batch(rows, step), _opts(table_type, op, version))
            for k, (age, v) in rows.items():
                seen.add(k)
                model[f"k{k}"] = (f"k{k}", part_of(k), NOW - age * DAY, v, inst)
        if not model:
            return
        assert _read(path) == sorted(model.values())
        before = hoodie.read_table(path)
        cutoff = NOW - RETAIN_DAYS * DAY
        expired_files = {n.split("_")[0] for n, e in zip(before.column("_hoodie_file_name").to_pylist(),
                                                         before.column("ev").to_pylist()) if e < cutoff}
        n_expired = sum(1 for r in model.values() if r[2] < cutoff)
        opts = _ttl_opts(**({"hoodie.payload.event.time.field": "ev"} if stats_field else {}))

        files = _files(path)
        dry = run_record_ttl(path, opts, dry_run=True, now_ms=NOW)
        assert _files(path) == files, "a dry run wrote something"
        assert dry.instant is None and dry.expired_records == n_expired
        assert {c.file_id for c in dry.file_groups} == expired_files

        res = run_record_ttl(path, opts, now_ms=NOW)
        assert res.expired_records == n_expired
        expected = sorted(r for r in model.values() if r[2] >= cutoff)
        assert _read(path) == expected
        assert _read(path, read_hudi_rs) == expected
        if not n_expired:
            assert res.instant is None and _files(path) == files
            return
        table = HoodieTable(path)
        inst = table.timeline.completed_writes().instants[-1]
        assert inst.timestamp == res.instant
        meta = table.timeline.commit_metadata(inst)
        # Exactly the file groups that held expired rows were written; no other file group was touched.
        assert {s.file_id for s in meta.all_write_stats()} == expired_files
        assert meta.extra_metadata[CUTOFF_KEY] == str(cutoff)
        new_files = set(_files(path)) - set(files)
        assert all(any(fid in f for fid in expired_files) for f in new_files if not f.startswith(".hoodie")), new_files
        # A second run finds nothing and writes nothing.
        files = _files(path)
        again = run_record_ttl(path, opts, now_ms=NOW)
        assert again.instant is None and again.expired_records == 0 and _files(path) == files
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), st.sampled_from(["6", "9"]), st.booleans(),
       st.lists(write_strategy, min_size=1, max_size=4))
def test_record_ttl_model(table_type: str, version: str, stats_field: bool, writes: list) -> None:
    _run_model(table_type, version, stats_field, writes)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_update_to_recent_event_time_keeps_record(table_type: str) -> None:
    """An old record updated to a recent event time in a log file is not expired (the merged row
    decides), and a recent record updated to an old event time is."""
    _run_model(table_type, "6", True, [("insert", {0: (9, 1), 1: (1, 1), 2: (1, 2), 3: (9, 3)}),
                                       ("upsert", {0: (0, 5), 1: (8, 6)})])


def _table(tmp_path: Path, table_type: str = "COPY_ON_WRITE", now: int = NOW) -> str:
    path = str(tmp_path / "t")
    write_arrow(path, _batch({0: (9, 0), 1: (1, 1), 2: (9, 2), 3: (1, 3)}, 1, now), _opts(table_type, "insert"))
    write_arrow(path, _batch({4: (1, 4), 5: (2, 5)}, 2, now), _opts(table_type, "insert"))
    return path


@pytest.mark.parametrize("opts, match", [
    ({"hoodie.record.ttl.field": "ev"}, "needs hoodie.record.ttl.retention"),
    ({"hoodie.record.ttl.retention": "PT1M", "hoodie.record.ttl.field": "ev"}, "must be at least PT1H"),
    ({"hoodie.record.ttl.retention": "P1M", "hoodie.record.ttl.field": "ev"}, "years or months"),
    ({"hoodie.record.ttl.retention": "-3", "hoodie.record.ttl.field": "ev"}, "at least PT1H"),
    ({"hoodie.record.ttl.retention": "P5D"}, "needs hoodie.record.ttl.field"),
    ({"hoodie.record.ttl.retention": "P5D", "hoodie.record.ttl.field": "nope"}, "not a column .*columns: k, part"),
    ({"hoodie.record.ttl.retention": "P5D", "hoodie.record.ttl.field": "ev",
      "hoodie.payload.event.time.unit": "DAYS"}, "hoodie.payload.event.time.unit"),
    ({"hoodie.record.ttl.retention": "P5D", "hoodie.record.ttl.field": "ev",
      "hoodie.payload.event.time.unit": "SECONDS"}, "set hoodie.payload.event.time.unit=MILLISECONDS"),
])
def test_bad_config_refused_before_writing(tmp_path: Path, opts: dict, match: str) -> None:
    path = _table(tmp_path)
    files = _files(path)
    with pytest.raises((RecordTTLConfigError, ValueError), match=match):
        run_record_ttl(path, opts, now_ms=NOW)
    assert _files(path) == files


def test_field_of_wrong_type_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    data = pa.table({"k": ["a"], "part": ["p0"], "ts": pa.array([1], pa.int64()), "flag": [True]})
    write_arrow(path, data, _opts("COPY_ON_WRITE", "insert", event_field=False))
    with pytest.raises(RecordTTLConfigError, match="'flag' has type bool"):
        run_record_ttl(path, _ttl_opts(**{"hoodie.record.ttl.field": "flag"}), now_ms=NOW)


def test_no_table_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordTTLConfigError, match="no Hudi table"):
        run_record_ttl(str(tmp_path / "none"), _ttl_opts())


@pytest.mark.parametrize("typ, values, unit, expect", [
    (pa.timestamp("us", tz="UTC"), [NOW * 1000, (NOW - DAY) * 1000], "MILLISECONDS", NOW - DAY),
    (pa.timestamp("ns"), [NOW * 1_000_000, None], "MILLISECONDS", NOW),
    (pa.date32(), [NOW // DAY - 3, NOW // DAY], "MILLISECONDS", NOW - 3 * DAY),
    (pa.int64(), [NOW // 1000, NOW // 1000 - 60], "SECONDS", NOW - 60_000),
    (pa.float64(), [NOW / 1000.5, NOW / 1000], "SECONDS", int(NOW / 1000.5 * 1000)),
])
def test_base_file_min_from_footer(tmp_path: Path, typ: pa.DataType, values: list, unit: str, expect: int) -> None:
    import pyarrow.parquet as pq
    from hoodie.format.storage import Storage

    pq.write_table(pa.table({"ev": pa.array(values, typ)}), str(tmp_path / "f.parquet"))
    lo, src, has = base_file_min(Storage(str(tmp_path)), "f.parquet", "ev", unit)
    assert (lo, src, has) == (expect, "parquet statistics", True)


def test_base_file_min_unknown_or_empty(tmp_path: Path) -> None:
    import pyarrow.parquet as pq
    from hoodie.format.storage import Storage

    pq.write_table(pa.table({"ev": ["2024-01-01T00:00:00+05:00"], "n": pa.array([None], pa.int64())}),
                   str(tmp_path / "f.parquet"))
    st_ = Storage(str(tmp_path))
    assert base_file_min(st_, "f.parquet", "ev", "MILLISECONDS")[0::2] == (None, True)  # strings: must read
    assert base_file_min(st_, "f.parquet", "n", "MILLISECONDS")[0::2] == (None, False)  # nulls never expire
    assert base_file_min(st_, "f.parquet", "gone", "MILLISECONDS")[0::2] == (None, False)


def test_cli_and_call(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from hoodie.interfaces.cli import main
    from tests.interfaces.test_procedure_rows import call, named

    now = int(time.time() * 1000)
    path = _table(tmp_path, "MERGE_ON_READ", now)
    files = _files(path)
    assert main(["ttl", "records", path, "--retention", "P5D", "--field", "ev", "--dry-run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dry_run"] and doc["instant"] is None and doc["expired_records"] == 2
    assert [g["expired_records"] for g in doc["file_groups"]] == [2]
    assert _files(path) == files
    rows = call("run_record_ttl", path, retention="P5D", field="ev", dry_run=True)
    assert [named("run_record_ttl", r)["status"] for r in rows] == ["would delete"]
    rows = call("run_record_ttl", path, retention="P5D", field="ev")
    row = named("run_record_ttl", rows[0])
    assert row["status"] == "deleted" and row["expired_records"] == 2 and row["instant"]
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["k1", "k3", "k4", "k5"]
    assert main(["ttl", "records", path, "--set", "hoodie.record.ttl.retention=P5D", "--field", "ev"]) == 0
    assert "nothing expired" in capsys.readouterr().out
    nothing = call("run_record_ttl", path, retention="P5D", field="ev")
    assert named("run_record_ttl", nothing[0])["status"] == "nothing expired"
    assert main(["ttl", "records", path, "--retention", "PT5M", "--field", "ev"]) == 2
    assert "must be at least PT1H" in capsys.readouterr().err


def test_inline_and_metrics(tmp_path: Path) -> None:
    """``hoodie.record.ttl.inline`` runs after the write's commit, every ``inline.max.commits``
    writes; the run publishes its metrics."""
    now = int(time.time() * 1000)
    path = str(tmp_path / "t")
    metrics = str(tmp_path / "m.prom")
    inline = {**_opts("MERGE_ON_READ", "upsert"), **_ttl_opts(), "hoodie.record.ttl.inline": "true",
              "hoodie.record.ttl.inline.max.commits": "2", "hoodie.metrics.prometheus.file": metrics}
    write_arrow(path, _batch({0: (9, 0), 1: (1, 1)}, 1, now), inline)
    # One write since the (absent) last run: below the trigger, nothing expired yet.
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["k0", "k1"]
    write_arrow(path, _batch({2: (8, 2)}, 2, now), inline)
    assert sorted(hoodie.read_table(path).column("k").to_pylist()) == ["k1"]
    table = HoodieTable(path)
    assert writes_since_last_run(table) == 0
    last = table.timeline.commit_metadata(table.timeline.completed_writes().instants[-1])
    assert last.operation_type == "DELETE" and last.extra_metadata["hoodie.record.ttl.expired.records"] == "2"
    text = Path(metrics).read_text()
    assert "hoodie_record_ttl_expired_records" in text and "} 2" in text
    assert sorted(read_hudi_rs(path).column("k").to_pylist()) == ["k1"]


def test_inline_misconfiguration_refused_before_the_write(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    bad = {**_opts("COPY_ON_WRITE", "insert"), "hoodie.record.ttl.inline": "true"}
    with pytest.raises(RecordTTLConfigError, match="needs hoodie.record.ttl.retention"):
        write_arrow(path, _batch({0: (1, 0)}, 1), bad)
    assert not os.path.exists(os.path.join(path, ".hoodie", "hoodie.properties"))


_CHILD = """
import sys
from hoodie.services.ttl.record_ttl import run_record_ttl
run_record_ttl(sys.argv[1], {"hoodie.record.ttl.retention": "P5D", "hoodie.record.ttl.field": "ev"},
               now_ms=int(sys.argv[2]))
"""


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("fault", ["record_ttl.after_file_group", "record_ttl.before_complete"])
def test_killed_run_deletes_nothing_and_the_next_run_finishes(tmp_path: Path, table_type: str, fault: str) -> None:
    """A run killed before its commit leaves a failed write: readers see every row, and the next
    run (or any writer) rolls it back and expires the rows."""
    import subprocess
    import sys

    path = _table(tmp_path, table_type)
    before = _read(path)
    env = {**os.environ, "HOODIE_FAULT_POINTS": fault,
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2] / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _CHILD, path, str(NOW)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert _read(path) == before and _read(path, read_hudi_rs) == before
    res = run_record_ttl(path, _ttl_opts(), now_ms=NOW)
    assert res.instant and res.expired_records == 2
    expected = [r for r in before if r[2] >= NOW - RETAIN_DAYS * DAY]
    assert _read(path) == expected and _read(path, read_hudi_rs) == expected


def test_file_groups_without_old_records_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates come from footers and write stats: a file group whose minimum event time is within
    the retention is neither read nor written."""
    from hoodie.format.slice import reader as R

    path = str(tmp_path / "t")
    o = _opts("MERGE_ON_READ", "insert")
    write_arrow(path, _batch({0: (1, 0), 2: (2, 2)}, 1), o)  # recent only: file group A
    write_arrow(path, _batch({4: (9, 4), 6: (1, 6)}, 2), o)  # one expired row: file group B
    write_arrow(path, _batch({0: (0, 7)}, 3), {**o, "hoodie.datasource.write.operation": "upsert"})  # log on A
    read: list[str] = []
    real = R.read_file_slice

    def spy(table: Any, sl: Any, *a: Any, **kw: Any) -> Any:
        read.append(sl.file_id)
        return real(table, sl, *a, **kw)

    monkeypatch.setattr(R, "read_file_slice", spy)
    res = run_record_ttl(path, _ttl_opts(**{"hoodie.payload.event.time.field": "ev"}), dry_run=True, now_ms=NOW)
    assert res.file_groups_examined == 2 and len(res.candidates) == 1 and res.expired_records == 1
    assert read == [res.candidates[0].file_id]
    assert res.candidates[0].source == "parquet statistics"
    # Without knowing which field the log files' stats describe, the slice with a log file is read too.
    read.clear()
    res = run_record_ttl(path, _ttl_opts(), dry_run=True, now_ms=NOW)
    assert len(res.candidates) == 2 and len(read) == 2 and res.expired_records == 1


# -- issue 31 item 11: digit values that are compact dates ----------------------------------------------

@pytest.mark.parametrize("typ", [pa.string(), pa.int64()])
@pytest.mark.parametrize("form, value", [("yyyyMMddHHmmss", "20200115103000"), ("yyyyMMdd", "20200115"),
                                          ("yyyyMMddHHmm", "202001151030")])
def test_compact_date_digits_are_refused_not_read_as_epoch(tmp_path: Path, typ: pa.DataType, form: str,
                                                           value: str) -> None:
    """A record TTL field holding compact dates as digits (string or number) was read as epoch
    milliseconds: ``yyyyMMddHHmmss`` is the year 2582 (nothing ever expired, no warning), ``yyyyMMdd``
    January 1970 (everything expired). Now the run is refused, naming the form and the fix, before
    anything is written, also in a dry run."""
    path = str(tmp_path / "t")
    o = {**_opts("COPY_ON_WRITE", "insert", event_field=False)}
    col = pa.array([value, None], pa.string()) if typ == pa.string() else pa.array([int(value), None], pa.int64())
    write_arrow(path, pa.table({"k": ["a", "b"], "part": ["p0", "p0"], "ts": pa.array([1, 1], pa.int64()), "ev": col}), o)
    before = _files(path)
    for dry in (True, False):
        with pytest.raises(RecordTTLConfigError, match=f"reads as {form}.*ISO-8601"):
            run_record_ttl(path, {"hoodie.record.ttl.retention": "P5D", "hoodie.record.ttl.field": "ev"}, dry_run=dry)
    assert _files(path) == before
    assert len(hoodie.read_table(path)) == 2


def test_sub_microsecond_timestamps_are_refused_before_the_instant(tmp_path: Path) -> None:
    """Issue 31 item 12: ``timestamp[ns]`` values with digits below the microsecond failed the write
    after its instant started (an unclear ReadError about "a data file"); now the write is refused
    before anything is written, naming the column and the fix. Whole microseconds in ns are fine."""
    path = str(tmp_path / "t")
    o = _opts("COPY_ON_WRITE", "insert", event_field=False)
    ok = pa.array([1_714_521_600_123_456_000], pa.timestamp("ns"))
    write_arrow(path, pa.table({"k": ["a"], "part": ["p0"], "ts": pa.array([1], pa.int64()), "at": ok}), o)
    before = _files(path)
    for col, name in ((pa.array([1_714_521_600_123_456_789], pa.timestamp("ns", tz="UTC")), "at"),
                      (pa.StructArray.from_arrays([pa.array([1_714_521_600_000_000_001], pa.timestamp("ns"))], ["t"]),
                       "nested.t")):
        bad = pa.table({"k": ["b"], "part": ["p0"], "ts": pa.array([1], pa.int64()), name.split(".")[0]: col})
        with pytest.raises(Exception, match=f"column '{name}' holds timestamp\\[ns\\].*below the microsecond.*floor_temporal"):
            write_arrow(path, bad, o)
        assert _files(path) == before
    assert hoodie.read_table(path).column("at").to_pylist()[0].microsecond == 123456
