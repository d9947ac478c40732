"""Benchmark: reads of the Java-written Hudi 1.x fixtures (table versions 8 and 9), hoodie vs hudi-rs.

Unzips every fixture of ``tests/fixtures/hudi-v8-v9`` (``HOODIE_V8V9_FIXTURES`` overrides the folder)
into a temporary directory and, for each table, times in the same process:

* **snapshot**: ``hoodie.read_table(path)`` (pure Python, one Arrow table) vs hudi-rs
  (``HudiTableBuilder.from_base_uri(path).build().read(HudiReadOptions())``, batches to one Arrow
  table, as tests/hudi_rs.py calls it);
* **read_optimized** (MERGE_ON_READ tables only): ``hoodie.read_table(path,
  query_type="read_optimized")`` vs hudi-rs with ``hoodie.read.use.read_optimized.mode=true``.

Each side is warmed up once per table and query, then timed ``--repeat`` times, the two readers
alternating (hoodie, hudi-rs, hoodie, ...) so that background load hits both alike; the best run is
reported (and the median, to show the noise). Both timings include opening the table (properties,
timeline, listing or metadata table) and building the Arrow result. The ratio is hoodie / hudi-rs
(below 1: hoodie is faster). Row counts of the two readers must agree, except on tables with
``hoodie.record.merge.mode=COMMIT_TIME_ORDERING``, where hudi-rs is known to differ: there the
comparison is skipped and the notes say so. The largest fixture (by bytes on disk of the table
folder, and by rows) is printed on its own.

    python bench/fixtures_v8v9.py [--repeat 7] [--fixtures DIR] [--only SUBSTRING] [--json PATH]
                                  [--keep] [--workdir DIR]

The script imports hoodie from this checkout's ``src/`` (not whatever ``pip install -e`` points at).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))  # measure this tree's hoodie, not another editable install

import pyarrow as pa  # noqa: E402

import hoodie  # noqa: E402

from _common import machine_info, utc_now  # noqa: E402

COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"


# --------------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------------

def default_fixture_dir() -> Path:
    """``HOODIE_V8V9_FIXTURES``, else the repository's own ``tests/fixtures/hudi-v8-v9``."""
    env = os.environ.get("HOODIE_V8V9_FIXTURES")
    return Path(env) if env else REPO / "tests" / "fixtures" / "hudi-v8-v9"


def unzip_table(zip_path: Path, dest: Path) -> Path:
    """Unzip one fixture (skipping __MACOSX) into ``dest`` and return the table root, the folder
    whose ``.hoodie/hoodie.properties`` is not a metadata table's (tests/format/
    test_metadata_fixtures.py's ``_table``)."""
    with zipfile.ZipFile(zip_path) as zf:
        for member in zf.namelist():
            if not member.startswith("__MACOSX"):
                zf.extract(member, dest)
    props = [p for p in dest.rglob(".hoodie/hoodie.properties") if "/.hoodie/metadata/" not in str(p)]
    if len(props) != 1:
        raise RuntimeError(f"{zip_path.name}: expected one table, found {props}")
    return props[0].parent.parent


def table_properties(root: Path) -> dict[str, str]:
    """``.hoodie/hoodie.properties`` as a dict (Java properties: ``key=value``, ``#`` comments)."""
    out = {}
    for line in (root / ".hoodie" / "hoodie.properties").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def folder_bytes(root: Path) -> tuple[int, int]:
    """(bytes, files) under ``root``: the sum of the files' sizes (apparent size, ``du -b``), the
    ``.hoodie`` folder and its metadata table included."""
    total = files = 0
    for d, _, names in os.walk(root):
        for n in names:
            total += os.path.getsize(os.path.join(d, n))
            files += 1
    return total, files


# --------------------------------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------------------------------

def hoodie_read(path: str, query_type: str) -> pa.Table:
    """hoodie's pure-Python read: one Arrow table."""
    return hoodie.read_table(path, query_type=query_type)


def hudi_rs_read(path: str, query_type: str) -> pa.Table:
    """hudi-rs's read, as tests/hudi_rs.py calls it: build the table, read the batches, one Arrow table."""
    from hudi import HudiReadOptions, HudiTableBuilder

    if query_type == "read_optimized":
        opts = HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"})
    else:
        opts = HudiReadOptions()
    batches = HudiTableBuilder.from_base_uri(os.path.abspath(path)).build().read(opts)
    return pa.Table.from_batches(batches) if batches else pa.table({})


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------

@dataclass
class Row:
    """One fixture and query: both readers' times (seconds) and row counts."""

    fixture: str
    query: str
    table_type: str
    version: str
    merge_mode: str
    bytes: int
    files: int
    hoodie_rows: Optional[int] = None
    hudi_rs_rows: Optional[int] = None
    hoodie_best_s: Optional[float] = None
    hudi_rs_best_s: Optional[float] = None
    hoodie_median_s: Optional[float] = None
    hudi_rs_median_s: Optional[float] = None
    rows_check: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> Optional[float]:
        """hoodie / hudi-rs, best of N each (below 1: hoodie is faster)."""
        if self.hoodie_best_s is None or not self.hudi_rs_best_s:
            return None
        return self.hoodie_best_s / self.hudi_rs_best_s

    @property
    def rows(self) -> Optional[int]:
        return self.hoodie_rows if self.hoodie_rows is not None else self.hudi_rs_rows


def _warm(fn: Callable[[], pa.Table], row: Row, who: str) -> Optional[int]:
    """The untimed warm-up run: returns the row count (None on an error, which is recorded), and
    records the distinct warnings the reader emitted (they are silenced in the timed runs)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            n = fn().num_rows
        except Exception as e:  # a failing reader is reported, not fatal to the whole benchmark
            row.errors.append(f"{who}: {type(e).__name__}: {str(e)[:200]}")
            return None
    for w in caught:
        text = f"{who}: {w.category.__name__}"
        if text not in row.warnings:
            row.warnings.append(text)
    return n


def measure(row: Row, path: str, repeat: int) -> Row:
    """Warm up both readers, then time them alternately ``repeat`` times; fill ``row``."""
    ours = lambda: hoodie_read(path, row.query)  # noqa: E731
    theirs = lambda: hudi_rs_read(path, row.query)  # noqa: E731
    row.hoodie_rows = _warm(ours, row, "hoodie")
    row.hudi_rs_rows = _warm(theirs, row, "hudi-rs")
    runs: dict[str, list[float]] = {"hoodie": [], "hudi-rs": []}
    sides = [(name, fn) for name, fn, n in (("hoodie", ours, row.hoodie_rows), ("hudi-rs", theirs, row.hudi_rs_rows))
             if n is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(max(1, repeat)):
            for name, fn in sides:
                t0 = time.perf_counter()
                fn()
                runs[name].append(time.perf_counter() - t0)
    if runs["hoodie"]:
        row.hoodie_best_s, row.hoodie_median_s = min(runs["hoodie"]), statistics.median(runs["hoodie"])
    if runs["hudi-rs"]:
        row.hudi_rs_best_s, row.hudi_rs_median_s = min(runs["hudi-rs"]), statistics.median(runs["hudi-rs"])
    if row.merge_mode == COMMIT_TIME_ORDERING:
        row.rows_check = "skipped"
    elif row.hoodie_rows is None or row.hudi_rs_rows is None:
        row.rows_check = "error"
    else:
        row.rows_check = "equal" if row.hoodie_rows == row.hudi_rs_rows else "DIFFERENT"
    return row


# --------------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------------

def _ms(s: Optional[float]) -> str:
    return "error" if s is None else f"{s * 1000:.1f}"


def _ratio(r: Optional[float]) -> str:
    return "n/a" if r is None else f"**{r:.2f}**"


def _kib(b: int) -> str:
    return f"{b / 1024:,.1f}"


def render_table(rows: list[Row]) -> list[str]:
    """The Markdown results table (one line per fixture and query)."""
    lines = [
        "| fixture | ver | type | query | rows | KiB on disk (files) | hoodie ms | hudi-rs ms | ratio | "
        "median ms (hoodie / hudi-rs) | rows equal |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        check = {"equal": "yes", "skipped": "skipped (commit-time)", "DIFFERENT": "**NO**", "error": "error"}[r.rows_check]
        typ = "MOR" if r.table_type == "MERGE_ON_READ" else "COW" if r.table_type == "COPY_ON_WRITE" else r.table_type
        lines.append(f"| {r.fixture} | {r.version} | {typ} | {r.query} | {r.rows if r.rows is not None else '?'} | "
                     f"{_kib(r.bytes)} ({r.files}) | {_ms(r.hoodie_best_s)} | {_ms(r.hudi_rs_best_s)} | "
                     f"{_ratio(r.ratio)} | {_ms(r.hoodie_median_s)} / {_ms(r.hudi_rs_median_s)} | {check} |")
    return lines


def summary(rows: list[Row]) -> dict[str, Any]:
    """Totals and geometric mean of the ratios per query type."""
    out: dict[str, Any] = {}
    for q in ("snapshot", "read_optimized"):
        rs = [r for r in rows if r.query == q and r.ratio is not None]
        if not rs:
            continue
        geo = 1.0
        for r in rs:
            geo *= r.ratio  # type: ignore[operator]
        out[q] = {
            "tables": len(rs),
            "hoodie_total_ms": round(sum(r.hoodie_best_s for r in rs) * 1000, 1),  # type: ignore[misc]
            "hudi_rs_total_ms": round(sum(r.hudi_rs_best_s for r in rs) * 1000, 1),  # type: ignore[misc]
            "ratio_geomean": round(geo ** (1 / len(rs)), 2),
            "ratio_min": round(min(r.ratio for r in rs), 2),  # type: ignore[type-var]
            "ratio_max": round(max(r.ratio for r in rs), 2),  # type: ignore[type-var]
        }
    return out


def largest(rows: list[Row]) -> dict[str, str]:
    """The largest fixture by bytes on disk and by snapshot rows (ties on rows: more bytes first);
    values are the fixture names, with the fixtures tied on rows named."""
    snap = [r for r in rows if r.query == "snapshot"]
    by_bytes = max(snap, key=lambda r: (r.bytes, r.rows or 0))
    by_rows = max(snap, key=lambda r: (r.rows or 0, r.bytes))
    tied = [r.fixture for r in snap if r.rows == by_rows.rows and r is not by_rows]
    return {"by bytes on disk": by_bytes.fixture, "by rows": by_rows.fixture,
            "tied on rows": ", ".join(tied)}


def notes(rows: list[Row]) -> list[str]:
    """Skipped comparisons, differences, errors and warnings (grouped), one line each."""
    out = []
    skipped = [r for r in rows if r.rows_check == "skipped"]
    if skipped:
        names = sorted({r.fixture for r in skipped})
        differ = [f"{r.fixture} {r.query} {r.hoodie_rows}/{r.hudi_rs_rows}" for r in skipped
                  if r.hoodie_rows != r.hudi_rs_rows]
        out.append(f"Row counts not compared on the {len(names)} COMMIT_TIME_ORDERING table(s) "
                   f"({', '.join(names)}): hudi-rs is known to differ from Java Hudi on commit-time ordering. "
                   + (f"Counts observed anyway (hoodie/hudi-rs) differ on: {'; '.join(differ)}." if differ else
                      f"Observed anyway, the counts were equal on all {len(skipped)} of those reads."))
    for r in rows:
        if r.rows_check == "DIFFERENT":
            out.append(f"{r.fixture} {r.query}: row counts differ, hoodie {r.hoodie_rows} vs hudi-rs {r.hudi_rs_rows}.")
        for e in r.errors:
            out.append(f"{r.fixture} {r.query}: {e}")
    by_warning: dict[str, list[str]] = {}
    for r in rows:
        for w in r.warnings:
            by_warning.setdefault(w, [])
            if r.fixture not in by_warning[w]:
                by_warning[w].append(r.fixture)
    for w, fixtures in by_warning.items():
        out.append(f"{w} during the warm-up read of {', '.join(fixtures)} (warnings are silenced while timing).")
    return out


# --------------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------------

def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per reader, after one warm-up (best is kept)")
    ap.add_argument("--fixtures", type=Path, default=None, help="folder of the fixture zips")
    ap.add_argument("--only", help="only fixtures whose zip name contains this")
    ap.add_argument("--json", help="also write the raw numbers here")
    ap.add_argument("--keep", action="store_true", help="keep the unzipped tables")
    ap.add_argument("--workdir", help="parent of the temporary directory (default: the system temp dir)")
    args = ap.parse_args(argv)
    fixture_dir = args.fixtures or default_fixture_dir()
    zips = sorted(z for z in fixture_dir.glob("*.zip") if not args.only or args.only in z.stem)
    if not zips:
        ap.error(f"no fixture zips in {fixture_dir}" + (f" matching {args.only!r}" if args.only else ""))

    started = time.perf_counter()
    date = utc_now()
    load_before = os.getloadavg()
    machine = machine_info(java=False)
    work = Path(tempfile.mkdtemp(prefix="hoodie_bench_v8v9_", dir=args.workdir))
    rows: list[Row] = []
    try:
        for z in zips:
            root = unzip_table(z, work / z.stem)
            props = table_properties(root)
            size, files = folder_bytes(root)
            table_type = props.get("hoodie.table.type", "COPY_ON_WRITE")
            queries = ["snapshot", "read_optimized"] if table_type == "MERGE_ON_READ" else ["snapshot"]
            for q in queries:
                row = measure(Row(fixture=z.stem, query=q, table_type=table_type,
                                  version=props.get("hoodie.table.version", "?"),
                                  merge_mode=props.get("hoodie.record.merge.mode", "unset"),
                                  bytes=size, files=files), str(root), args.repeat)
                rows.append(row)
                print(f"[{time.perf_counter() - started:6.1f}s] {z.stem} {q}: rows {row.rows}, "
                      f"hoodie {_ms(row.hoodie_best_s)} ms, hudi-rs {_ms(row.hudi_rs_best_s)} ms, "
                      f"ratio {row.ratio and round(row.ratio, 2)}, rows {row.rows_check}", flush=True)
        total_s = time.perf_counter() - started
        load_after = os.getloadavg()
        load = (f"load average (1/5/15 min) {'/'.join(f'{x:.2f}' for x in load_before)} before, "
                f"{'/'.join(f'{x:.2f}' for x in load_after)} after, on {os.cpu_count()} cpus")

        big = largest(rows)
        summ = summary(rows)
        lines = [
            "",
            f"# Hudi 1.x fixtures: hoodie vs hudi-rs reads ({date}, {total_s:.1f} s)",
            "",
            f"{len(zips)} fixtures from {fixture_dir}; best of {args.repeat} runs per reader after one warm-up, "
            "the readers alternating; ratio = hoodie / hudi-rs (below 1: hoodie is faster).",
            f"hoodie imported from {os.path.dirname(hoodie.__file__)}; {load}.",
            "",
            *[f"* {k}: {v}" for k, v in machine.items()],
            "",
            *render_table(rows),
            "",
            "Totals (sum of the best times over the tables of each query type):",
            "",
            *[f"* {q}: {s['tables']} tables, hoodie {s['hoodie_total_ms']} ms, hudi-rs {s['hudi_rs_total_ms']} ms; "
              f"ratio geometric mean {s['ratio_geomean']} (min {s['ratio_min']}, max {s['ratio_max']})"
              for q, s in summ.items()],
            "",
            "Largest fixture:",
            "",
        ]
        for how, name in big.items():
            if how == "tied on rows":
                if name:
                    lines.append(f"* tied with it on rows (ties broken by bytes): {name}")
                continue
            for r in rows:
                if r.fixture == name:
                    lines.append(f"* {how}: {name} ({r.query}): {r.rows} rows, {_kib(r.bytes)} KiB in {r.files} files: "
                                 f"hoodie {_ms(r.hoodie_best_s)} ms vs hudi-rs {_ms(r.hudi_rs_best_s)} ms, ratio "
                                 f"{_ratio(r.ratio)}")
        ns = notes(rows)
        if ns:
            lines += ["", "Notes:", "", *[f"* {n}" for n in ns]]
        print("\n".join(lines))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump({"date": date, "machine": machine, "args": {**vars(args), "fixtures": str(fixture_dir)},
                           "total_seconds": total_s, "load": load, "largest": big, "summary": summ, "notes": ns,
                           "rows": [{**asdict(r), "ratio": r.ratio} for r in rows]}, fh, indent=2, default=str)
            print(f"wrote {args.json}")
        bad = [r for r in rows if r.rows_check in ("DIFFERENT", "error")]
        return 1 if bad else 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
