"""``hoodie report`` and ``Table.report()``: the HTML page in a real headless browser (Debian's
chromium through chromedriver), the CLI's JSON, its refusals, and that no JVM is started.

The browser tests skip, saying why, only when chromium or chromedriver is not installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

import hoodie
from hoodie.interfaces.cli import main
from hoodie.interfaces.report_html import render_html
from hoodie.services.report import gather_report
from tests import chromium as C
from tests.helpers import PYSPARK_BLOCKER
from tests.services.test_report_model import run_history

CHARTS = ("partitions", "freshness", "backlog", "file-sizes", "timeline")
TTL = ["--set", "hoodie.partition.ttl.strategy.days.retain=30"]
STEPS = [("upsert", [(0, 10), (1, 20), (2, 30), (3, 40), (4, 45)]), ("upsert", [(0, 5), (1, 50)]),
         ("compact", None), ("upsert", [(1, 70), (2, 80), (5, 85)]), ("fail", None), ("upsert", [(3, 90)]),
         ("clean", None), ("upsert", [(0, 95), (4, 99)])]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("report") / "t")
    run_history(path, STEPS)
    return path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(root, "src"), root, env.get("PYTHONPATH", "")])
    return env


def _cli_without_pyspark(*argv: str) -> subprocess.CompletedProcess:
    """``hoodie <argv>`` in a fresh interpreter where importing pyspark or py4j fails."""
    prog = PYSPARK_BLOCKER + ("import sys\nfrom hoodie.interfaces.cli import main\n"
                              f"rc = main({list(argv)!r})\n"
                              "assert 'pyspark' not in sys.modules and 'py4j' not in sys.modules\n"
                              "sys.exit(rc)\n")
    return subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=_env(), timeout=300)


def test_cli_writes_the_page_without_a_jvm(table: str, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    p = _cli_without_pyspark("report", table, "--out", str(out), *TTL)
    assert p.returncode == 0, p.stderr
    assert f"report written to {out}" in p.stdout
    page = out.read_text()
    for name in CHARTS:
        assert f'data-chart="{name}"' in page
    # Self-contained: no script, nothing fetched (the only URL is SVG's namespace name).
    assert "<script" not in page.lower()
    assert re.findall(r'\b(?:src|href)\s*=', page) == []
    assert set(re.findall(r'https?://[^"\s)]+', page)) <= {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in page
    assert os.stat(out).st_mode & 0o044 == 0o044  # readable by others, like any file the user writes


def test_cli_json_gives_the_same_figures(table: str, tmp_path: Path) -> None:
    p = _cli_without_pyspark("report", table, "--json", *TTL)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    want = json.loads(json.dumps(gather_report(table, {"hoodie.partition.ttl.strategy.days.retain": "30"},
                                               now_ms=got["generated"]["epoch_ms"]), default=str))
    for doc in (got, want):
        doc["generated"].pop("seconds")
    assert got == want
    assert not list(tmp_path.iterdir())  # --json alone writes no page
    assert got["timeline"]["rolled_back_instants"] and got["compaction"]["backlog"]["log_files"] > 0


def test_out_refusals_write_nothing(table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in Path(table).iterdir())
    assert main(["report", table, "--out", os.path.join(table, "r.html")]) == 2
    assert "inside the table" in capsys.readouterr().err
    assert sorted(p.name for p in Path(table).iterdir()) == before
    other = tmp_path / "notes.html"
    other.write_text("<html>mine</html>")
    assert main(["report", table, "--out", str(other)]) == 2
    assert "not a hoodie report" in capsys.readouterr().err
    assert other.read_text() == "<html>mine</html>"
    for uri in (f"file://{table}", f"file:{table}"):
        assert main(["report", uri, "--out", os.path.join(table, "r.html")]) == 2
        assert "inside the table" in capsys.readouterr().err
    assert sorted(p.name for p in Path(table).iterdir()) == before
    assert main(["report", table, "--out", str(tmp_path / "missing" / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err
    # An earlier report is replaced.
    mine = tmp_path / "r.html"
    assert main(["report", table, "--out", str(mine)]) == 0
    first = mine.read_text()
    assert main(["report", table, "--out", str(mine)]) == 0
    assert mine.read_text() != "" and first.startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".hoodie-report-")] == []


def test_table_report(table: str, tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    figures = hoodie.open(table).report(str(out), {"hoodie.partition.ttl.strategy.days.retain": "30"})
    assert figures["table"]["name"] == "report_t" and out.read_text().startswith("<!DOCTYPE html>")
    plain = hoodie.open(table).report()["partitions"]["rows"]
    assert [r["ttl"] for r in plain] == [None] * len(plain)  # no TTL options: no dry run
    assert all(r["ttl"]["status"] == "kept" for r in figures["partitions"]["rows"])
    assert [{**r, "ttl": None} for r in figures["partitions"]["rows"]] == plain


# -- the page in a real browser ------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(C.missing_reason() is not None, reason=str(C.missing_reason()))

COUNT_MARKS = """
return Array.from(document.querySelectorAll('svg[data-chart]')).map(s => {
  const r = s.getBoundingClientRect();
  return {name: s.dataset.chart, n: Number(s.dataset.n), w: r.width, h: r.height,
          marks: s.querySelectorAll(':scope > circle > title, :scope > rect > title').length};
});
"""


def _ink(png: bytes) -> tuple[float, int]:
    """(share of non-white pixels, number of distinct colours) of a screenshot."""
    img = C.decode_png(png)[:, :, :3].astype(np.int32)
    nonwhite = (img.sum(axis=2) < 3 * 245).mean()
    q = img.reshape(-1, 3) // 16  # 16 levels per channel: anti-aliasing shades count once
    colours = int(np.count_nonzero(np.bincount(q[:, 0] * 256 + q[:, 1] * 16 + q[:, 2], minlength=4096)))
    return float(nonwhite), colours


@pytest.fixture(scope="module")
def browser() -> Iterator[C.Browser]:
    """One headless Chromium for the module's browser tests (starting one takes seconds)."""
    with C.Browser() as b:
        yield b


@needs_chromium
def test_page_renders_in_headless_chromium(table: str, tmp_path: Path, browser: C.Browser) -> None:
    out = tmp_path / "r.html"
    assert main(["report", table, "--out", str(out), *TTL]) == 0
    b = browser
    b.console()  # drop what earlier pages logged
    b.open(out.as_uri())
    charts = b.run(COUNT_MARKS)
    assert [c["name"] for c in charts] == list(CHARTS)
    for c in charts:
        assert c["n"] > 0 and c["marks"] >= c["n"], c  # every counted mark is drawn, with its tooltip
        assert c["w"] > 500 and c["h"] > 100, c
    blank = b.elements("svg[data-chart]")
    assert len(blank) == len(CHARTS)
    for c, el in zip(charts, blank):
        name = c["name"]
        png = b.element_png(el)
        assert C.png_size(png)[1] >= 0.9 * c["h"], (name, C.png_size(png), c)  # the whole chart
        share, colours = _ink(png)
        # Not a blank box: axes, labels and coloured marks (white background, grey axes, >= 1 colour).
        assert share > 0.005 and colours >= 4, (name, share, colours)
    errors = [e for e in b.console() if e.get("level") == "SEVERE"]
    assert errors == []
    assert b.run("return document.title").endswith("health report")
    # chromium --screenshot works on the same page (what the docs' picture is made with).
    png = tmp_path / "page.png"
    C.screenshot_cli(out.as_uri(), str(png), height=1200)
    assert C.png_size(png.read_bytes()) == (1000, 1200) and png.stat().st_size > 20_000


@needs_chromium
def test_browser_check_catches_script_errors_and_blank_charts(tmp_path: Path, browser: C.Browser) -> None:
    """The checks above can fail: a page with a script error logs SEVERE, an empty SVG is blank."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><svg data-chart="x" data-n="0" width="600" height="200">'
                   '<rect width="600" height="200" fill="#fff"/></svg>'
                   '<script>throw new Error("boom")</script></body></html>')
    b = browser
    b.console()
    b.open(bad.as_uri())
    time.sleep(0.2)
    assert any("boom" in e.get("message", "") for e in b.console() if e.get("level") == "SEVERE")
    share, colours = _ink(b.element_png(b.elements("svg[data-chart]")[0]))
    assert share < 0.005 and colours < 4


def test_render_empty_table_sections(tmp_path: Path) -> None:
    """A table with no data still renders every section, saying there is nothing."""
    from hoodie.format.table import create_table

    path = str(tmp_path / "t")
    create_table(path, table_name="e", table_type="MERGE_ON_READ", record_key_fields=["k"], partition_fields=["part"])
    page = render_html(gather_report(path))
    assert "The table has no partition with files." in page and "No base file." in page
    assert "No instant on the active timeline." in page


def test_bad_set_value_fails_before_writing(table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["report", table, "--out", str(out), "--set", "hoodie.partition.ttl.strategy.days.retain=thirty"]) == 2
    err = capsys.readouterr().err
    assert "TTLConfigError" in err and "days.retain" in err
    assert not out.exists()


def test_names_are_escaped(table: str) -> None:
    """Table, partition and file names reach the page as text, never as markup."""
    r = gather_report(table)
    evil = '<script>alert("x")</script>&\''
    r["table"]["name"] = evil
    r["partitions"]["rows"][0]["partition"] = evil
    r["compaction"]["backlog"]["partitions"][0]["partition"] = evil
    r["attention"].append({"level": "warn", "topic": evil, "text": evil})
    page = render_html(r)
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#x27;" in page
