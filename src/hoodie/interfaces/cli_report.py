"""``hoodie report <path> [--out report.html] [--json]``: the table health report (no JVM).

The figures come from :func:`hoodie.services.report.gather_report` (metadata only); the page from
:func:`hoodie.interfaces.report_html.render_html`. ``--json`` prints the same figures.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import urllib.parse
from typing import Any, Mapping, Optional

from hoodie.errors import HoodieError

EXAMPLES = """examples:
  hoodie report /data/events --out events.html
  hoodie report /data/events --json
  hoodie report /data/events --set hoodie.partition.ttl.strategy.days.retain=30 --out events.html
"""
DEFAULT_OUT = "hoodie-report.html"


class ReportOutputError(HoodieError, ValueError):
    """``--out`` names a place the report must not be written to; nothing was written."""


def _options(pairs: Optional[list[str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {p!r} is not KEY=VALUE (e.g. --set hoodie.partition.ttl.strategy.days.retain=30)")
        out[key.strip()] = value.strip()
    return out


def check_out_path(out: str, base_path: str) -> str:
    """The absolute output path, after refusing one inside the table or an existing file that is
    not an earlier hoodie report (both before anything is gathered or written)."""
    from hoodie.interfaces.report_html import GENERATOR

    target = os.path.abspath(out)
    local = urllib.parse.urlparse(base_path).path if base_path.startswith("file:") else (
        None if "://" in base_path else base_path)
    if local:
        base = os.path.abspath(local)
        if os.path.commonpath([target, base]) == base:
            raise ReportOutputError(
                f"--out {out} is inside the table at {base_path}: a stray file there is not part of the table and "
                "would confuse listings and cleaning. Nothing was written. Write the report outside the table, "
                f"e.g. --out {os.path.basename(base.rstrip(os.sep)) or 'table'}-report.html")
    if os.path.isdir(target):
        raise ReportOutputError(f"--out {out} is a directory; give a file name, e.g. --out {os.path.join(out, DEFAULT_OUT)}")
    if os.path.exists(target):
        with open(target, "rb") as f:
            head = f.read(4096)
        if f'content="{GENERATOR}"'.encode() not in head:
            raise ReportOutputError(
                f"--out {out} exists and is not a hoodie report; nothing was written. Choose another file name "
                "or remove that file yourself")
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise ReportOutputError(f"--out {out}: the folder {parent} does not exist; create it first")
    return target


def write_report_file(html_text: str, target: str) -> None:
    """Write the page atomically (a temporary file in the same folder, then a rename)."""
    fd, tmp = tempfile.mkstemp(prefix=".hoodie-report-", suffix=".html", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(html_text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the report from the people it is for
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _text_summary(report: Mapping[str, Any], out: Optional[str]) -> str:
    lines = [f"{report['table']['name']} ({report['table']['table_type']}) at {report['table']['base_path']}"]
    att = report["attention"]
    lines += [f"  [{a['level']}] {a['topic']}: {a['text']}" for a in att] or ["  nothing needs attention"]
    if out:
        lines.append(f"report written to {out}")
    return "\n".join(lines)


def _report(args: argparse.Namespace) -> int:
    from hoodie.interfaces.report_html import render_html
    from hoodie.services.report import gather_report

    opts = _options(args.set)
    target = None
    if args.out is not None or not args.json:
        target = check_out_path(args.out or DEFAULT_OUT, args.base_path)
    report = gather_report(args.base_path, opts)
    if target is not None:
        write_report_file(render_html(report), target)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(_text_summary(report, target))
    return 0


def register(subparsers: Any, show_subparsers: Any) -> None:
    """Add ``hoodie report`` to the CLI."""
    r = subparsers.add_parser(
        "report", help="a health report of the table as one self-contained HTML file (partitions and TTL, "
                       "freshness, compaction backlog, file sizes, timeline; metadata only, no JVM)",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("base_path")
    r.add_argument("--out", help=f"the HTML file to write (default {DEFAULT_OUT} in the current folder; with "
                                 "--json only when given)")
    r.add_argument("--json", action="store_true", help="print the report's figures as JSON")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a Hudi option in force for the services, e.g. hoodie.partition.ttl.strategy.days.retain=30 "
                        "or hoodie.compaction.strategy=EventTimeBased (repeatable; the table's properties fill in the rest)")
    r.set_defaults(func=_report)
