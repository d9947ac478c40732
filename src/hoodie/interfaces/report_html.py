"""The health report as one self-contained HTML file: inline SVG drawn here, no script, no network.

:func:`render_html` takes the figures of :func:`hoodie.services.report.gather_report` and returns
the page. Every chart is an ``<svg>`` element with a ``data-chart`` attribute naming it and one
``data-n`` attribute giving how many marks it drew (the browser test checks them); each mark has a
``<title>`` so hovering shows its numbers. Nothing is fetched: no fonts, images, styles or scripts
from elsewhere, so the file opens offline and can be mailed or archived as is.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from hoodie.services.report import KINDS, fmt_duration

# Marks a file as a hoodie report (the CLI replaces such a file, and refuses to overwrite others).
GENERATOR = "hoodie report"
W, H = 920, 300
TABLE_ROWS = 15  # partitions listed (soonest to expire first); the JSON has all  # chart size (px)
ML, MR, MT, MB = 80, 20, 16, 40  # margins: left (y labels), right, top, bottom (x labels)
COLORS = {
    "kept": "#3b7dd8", "expired": "#d8453b", "soon": "#e69a28", "skipped": "#888888", "none": "#5b8c5a",
    "write": "#3b7dd8", "compaction": "#7a4fbf", "clean": "#5b8c5a", "ttl": "#d8453b", "rollback": "#e69a28",
    "other": "#888888", "W": "#3b7dd8", "T": "#7a4fbf", "wall": "#bbbbbb", "wait": "#e69a28",
}
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:960px;color:#222}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
.sub{color:#666;font-size:12px}.warn{color:#a4281f}.info{color:#333}
ul.att{padding-left:20px;margin:6px 0}ul.att li{margin:2px 0}
table{border-collapse:collapse;font-size:12px;margin:6px 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right;white-space:nowrap}
th{background:#f4f4f4}td.l,th.l{text-align:left}.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
svg text{font:11px system-ui,sans-serif;fill:#444}.axis line,.axis path{stroke:#999}
.empty{color:#888;font-style:italic}
"""


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


def fmt_bytes(n: Optional[float]) -> str:
    """Bytes for people (binary units)."""
    if n is None:
        return "-"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{n} B"


def _iso(ms: Optional[int], with_time: bool = True) -> str:
    if ms is None:
        return "-"
    d = _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S") if with_time else d.strftime("%Y-%m-%d")


# -- scales and axes -------------------------------------------------------------------------------

class Scale:
    """A linear (or log10) map from a domain to pixels."""

    def __init__(self, lo: float, hi: float, p0: float, p1: float, log: bool = False) -> None:
        if log:
            lo, hi = math.log10(max(lo, 1)), math.log10(max(hi, 1))
        if hi <= lo:
            lo, hi = lo - 1, hi + 1
        self.lo, self.hi, self.p0, self.p1, self.log = lo, hi, p0, p1, log

    def __call__(self, v: float) -> float:
        if self.log:
            v = math.log10(max(v, 1))
        return self.p0 + (v - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)


_TIME_STEPS = [1_000, 5_000, 15_000, 60_000, 300_000, 900_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000,
               12 * 3_600_000, 86_400_000, 2 * 86_400_000, 7 * 86_400_000, 14 * 86_400_000, 30 * 86_400_000,
               91 * 86_400_000, 182 * 86_400_000, 365 * 86_400_000, 5 * 365 * 86_400_000]


def _time_ticks(lo: float, hi: float, n: int = 6) -> tuple[list[int], Callable[[int], str]]:
    span = max(hi - lo, 1)
    step = next((s for s in _TIME_STEPS if span / s <= n), _TIME_STEPS[-1])
    first = int(math.ceil(lo / step) * step)
    ticks = list(range(first, int(hi) + 1, step))
    if step >= 86_400_000:
        fmt = "%Y-%m-%d"
    elif span >= 86_400_000:
        fmt = "%m-%d %H:%M"
    else:
        fmt = "%H:%M:%S" if step < 60_000 else "%H:%M"
    return ticks, lambda ms: _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).strftime(fmt)


def _num_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out = []
    v = first
    while v <= hi + 1e-9:
        out.append(v)
        v += step
    return out


def _byte_ticks(lo: float, hi: float, n: int = 7) -> list[int]:
    """Powers of two between ``lo`` and ``hi``, at most about ``n`` of them (binary units read well)."""
    e0 = max(0, math.ceil(math.log2(max(lo, 1))))
    e1 = math.floor(math.log2(max(hi, 1)))
    step = max(1, math.ceil((e1 - e0 + 1) / n))
    return [1 << e for e in range(e0, e1 + 1) if (e - e0) % step == 0]


def _svg_open(name: str, n: int, title: str, h: int = H) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" '
            f'role="img" aria-label="{_e(title)}" data-chart="{_e(name)}" data-n="{n}">'
            f'<rect x="0" y="0" width="{W}" height="{h}" fill="#fff"/>')


def _x_axis(sx: Scale, ticks: Iterable[float], label: Callable[[Any], str], h: int = H) -> str:
    y = h - MB
    out = [f'<g class="axis"><line x1="{ML}" y1="{y}" x2="{W - MR}" y2="{y}"/>']
    for t in ticks:
        x = sx(t)
        out.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}"/>'
                   f'<text x="{x:.1f}" y="{y + 16}" text-anchor="middle">{_e(label(t))}</text>')
    out.append("</g>")
    return "".join(out)


def _y_axis(sy: Scale, ticks: Iterable[float], label: Callable[[Any], str], h: int = H, grid: bool = True) -> str:
    out = [f'<g class="axis"><line x1="{ML}" y1="{MT}" x2="{ML}" y2="{h - MB}"/>']
    for t in ticks:
        y = sy(t)
        out.append(f'<text x="{ML - 6}" y="{y + 4:.1f}" text-anchor="end">{_e(label(t))}</text>')
        if grid:
            out.append(f'<line x1="{ML}" y1="{y:.1f}" x2="{W - MR}" y2="{y:.1f}" stroke="#eee"/>')
    out.append("</g>")
    return "".join(out)


def _legend(items: Sequence[tuple[str, str]]) -> str:
    return '<div class="legend">' + "".join(
        f'<span><i style="background:{c}"></i>{_e(t)}</span>' for t, c in items) + "</div>"


def _empty(text: str) -> str:
    return f'<p class="empty">{_e(text)}</p>'


# -- sections --------------------------------------------------------------------------------------

def _status_color(row: Mapping[str, Any]) -> tuple[str, str]:
    t = row.get("ttl")
    if not t:
        return "none", COLORS["none"]
    if t["status"] == "expired":
        return "would expire", COLORS["expired"]
    if t["status"] == "skipped":
        return "expired, skipped", COLORS["skipped"]
    left = t.get("expires_in_ms")
    if left is not None and left <= 86_400_000:
        return "expires within 1 d", COLORS["soon"]
    return "kept", COLORS["kept"]


def _partitions(r: Mapping[str, Any]) -> str:
    parts = r["partitions"]["rows"]
    ttl = r["partitions"]["ttl"]
    now = r["generated"]["epoch_ms"]
    out = ["<h2>Partitions</h2>"]
    if not parts:
        out.append(_empty("The table has no partition with files."))
    # x: the time the age is measured from (TTL's reference, else the last modification); y: bytes.
    pts = []
    for row in parts:
        t = row.get("ttl") or {}
        x = t.get("reference_ms") or row.get("last_modified_ms") or row.get("created_ms")
        if x is None:
            continue
        pts.append((x, row["base_bytes"] + row["log_bytes"], row))
    if pts:
        xs = [p[0] for p in pts] + [now]
        cut = now - ttl["retention_ms"] if ttl.get("retention_ms") else None
        if cut is not None:
            xs.append(cut)
        sx = Scale(min(xs), max(xs), ML + 10, W - MR - 10)
        ys = [max(p[1], 1) for p in pts]
        sy = Scale(min(ys) / 2, max(ys) * 2, H - MB, MT, log=True)
        maxrows = max((p[2]["rows"] or 0) for p in pts) or 1
        body = []
        if cut is not None:
            x = sx(cut)
            body.append(f'<line x1="{x:.1f}" y1="{MT}" x2="{x:.1f}" y2="{H - MB}" stroke="{COLORS["expired"]}" '
                        f'stroke-dasharray="5,3"/><text x="{x + 4:.1f}" y="{MT + 12}" fill="{COLORS["expired"]}">'
                        f'retention {_e(fmt_duration(ttl["retention_ms"]))}</text>')
        body.append(f'<line x1="{sx(now):.1f}" y1="{MT}" x2="{sx(now):.1f}" y2="{H - MB}" stroke="#999"/>'
                    f'<text x="{sx(now) - 4:.1f}" y="{MT + 12}" text-anchor="end">now</text>')
        for x, b, row in pts:
            label, color = _status_color(row)
            rad = 3 + 7 * math.sqrt((row["rows"] or 0) / maxrows)
            t = row.get("ttl") or {}
            tip = (f'{row["partition"]}: {fmt_bytes(b)}, {row["rows"] if row["rows"] is not None else "?"} rows in base '
                   f'files, {row["base_files"]} base + {row["log_files"]} log files; created {_iso(row.get("created_ms"))}, '
                   f'last modified {_iso(row.get("last_modified_ms"))}; TTL: {label}'
                   + (f' (expires in {fmt_duration(t["expires_in_ms"])})' if t.get("expires_in_ms") is not None else ""))
            body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(max(b, 1)):.1f}" r="{rad:.1f}" fill="{color}" '
                        f'fill-opacity="0.7" stroke="{color}"><title>{_e(tip)}</title></circle>')
        ticks, tl = _time_ticks(sx.lo, sx.hi)
        ylo, yhi = 10 ** sy.lo, 10 ** sy.hi
        out.append(_svg_open("partitions", len(pts), "partitions: size against age")
                   + _y_axis(sy, _byte_ticks(ylo, yhi, 5), fmt_bytes) + _x_axis(sx, ticks, tl) + "".join(body)
                   + "</svg>")
        out.append(_legend([("kept", COLORS["kept"]), ("expires within 1 d", COLORS["soon"]),
                            ("would expire now", COLORS["expired"]), ("expired, skipped", COLORS["skipped"]),
                            ("no TTL verdict", COLORS["none"])])
                   + '<p class="sub">One circle per partition: x is the time its age counts from (TTL\'s reference time, '
                     'else its last modification), y its size (base + log bytes, log scale), the area its rows in base '
                     'files. The dashed line is the retention: partitions left of it are past it.</p>')
    if ttl.get("configured"):
        out.append(f'<p>TTL strategy <b>{_e(ttl["strategy"])}</b>, retention {_e(fmt_duration(ttl.get("retention_ms")))}; '
                   f'dry run as of instant {_e(ttl.get("dry_run_instant") or "-")}: '
                   f'<b>{len(ttl["would_expire"])}</b> partition(s) would '
                   f'{"move to " + _e(ttl.get("move_target")) if ttl.get("action") == "move" else "expire"} now.</p>')
    if ttl.get("error"):
        out.append(f'<p class="warn">TTL dry run failed: {_e(ttl["error"])}</p>')
    if ttl.get("note"):
        out.append(f'<p class="sub">TTL: {_e(ttl["note"])}</p>')
    rows = sorted(parts, key=lambda p: ((p.get("ttl") or {}).get("expires_in_ms") is None,
                                        (p.get("ttl") or {}).get("expires_in_ms") or 0, p["partition"]))
    if rows:
        out.append('<table><tr><th class="l">partition</th><th>rows (base)</th><th>log records</th><th>base files</th><th>log files</th>'
                   '<th>bytes</th><th class="l">created</th><th class="l">last modified</th><th class="l">TTL</th>'
                   '<th>expires in</th></tr>')
        for p in rows[:TABLE_ROWS]:
            t = p.get("ttl") or {}
            out.append(f'<tr><td class="l">{_e(p["partition"] or "(root)")}</td><td>{_e(p["rows"] if p["rows"] is not None else "?")}</td>'
                       f'<td>{_e(p["log_records"] if p["log_records"] is not None else "?")}</td>'
                       f'<td>{p["base_files"]}</td><td>{p["log_files"]}</td><td>{fmt_bytes(p["base_bytes"] + p["log_bytes"])}</td>'
                       f'<td class="l">{_iso(p.get("created_ms"))}</td><td class="l">{_iso(p.get("last_modified_ms"))}</td>'
                       f'<td class="l">{_e(_status_color(p)[0])}</td><td>{_e(fmt_duration(t.get("expires_in_ms")))}</td></tr>')
        out.append("</table>")
        if len(rows) > TABLE_ROWS:
            out.append(f'<p class="sub">{len(rows) - TABLE_ROWS} more partition(s) in the JSON (hoodie report --json).</p>')
    moved = r["partitions"]["tiering"]["moved"]
    out.append("<h3>Cold partitions (tiering)</h3>")
    if moved:
        out.append('<table><tr><th class="l">partition</th><th class="l">moved by TTL instant</th><th class="l">to</th>'
                   '<th>rows</th></tr>' + "".join(
                       f'<tr><td class="l">{_e(m["partition"])}</td><td class="l">{_e(m["ttl_instant"])}</td>'
                       f'<td class="l">{_e(m.get("target", "-"))}</td><td>{_e(m.get("rows", "-"))}</td></tr>'
                       for m in moved) + "</table>")
    else:
        out.append(_empty("No partition was moved to a cold table (hoodie.partition.ttl.action=move) on the active timeline."))
    for c in r["partitions"]["tiering"].get("cold_tables", []):
        if c["error"]:
            out.append(f'<p class="warn">Cold table {_e(c["target"])}: {_e(c["error"])}</p>')
            continue
        names = ", ".join(p["partition"] for p in c["partitions"][:12]) + (", ..." if len(c["partitions"]) > 12 else "")
        out.append(f'<p>Cold table {_e(c["target"])} holds {len(c["partitions"])} partition(s), '
                   f'{fmt_bytes(sum(p["bytes"] for p in c["partitions"]))}: {_e(names or "none")}.</p>')
    return "".join(out)


def _freshness(r: Mapping[str, Any]) -> str:
    f = r["freshness"]
    now = r["generated"]["epoch_ms"]
    out = ["<h2>Freshness of the read-optimized view</h2>"]
    if not f["enabled"]:
        return "".join(out) + _empty("A COPY_ON_WRITE table: every commit is in the base files, nothing waits.")
    cur = f["now"]
    wait = f["waiting"]
    hist = [h for h in f["history"] if h["epoch_ms"] is not None]
    wm = cur["watermark"]
    out.append(f'<p>Watermark W now: <b>{_e(wm["iso"] or wm["status"])}</b> ({_e(wm["status"])}); threshold T: '
               f'<b>{_e(cur["threshold"]["iso"] or "none published")}</b>'
               + (f' (by compaction {_e(cur["threshold_instant"])})' if cur.get("threshold_instant") else "")
               + f'. Event times still waiting in log files: {_e(wait["min"]["iso"] or "-")} to {_e(wait["max"]["iso"] or "-")}'
               f' ({cur["uncompacted"]["log_files"]} log file(s), {fmt_bytes(cur["uncompacted"]["log_bytes"])}).</p>')
    ys = [v for h in hist for v in (h["watermark_ms"], h["threshold_ms"]) if v is not None]
    ys += [v for v in (wm["epoch_ms"], wait["min"]["epoch_ms"], wait["max"]["epoch_ms"]) if v is not None]
    xs = [h["epoch_ms"] for h in hist] + [now]
    if not ys:
        out.append(_empty("No event time recorded yet: no compaction published W or T and no waiting log file "
                          "records event times (set hoodie.payload.event.time.field on the writers)."))
        return "".join(out)
    padx = max((max(xs) - min(xs)) * 0.05, 60_000)
    pady = max((max(ys) - min(ys)) * 0.05, 60_000)
    sx = Scale(min(xs) - padx, max(xs) + padx, ML + 10, W - MR - 10)
    sy = Scale(min(ys) - pady, max(ys) + pady, H - MB, MT)
    body = []
    # The diagonal: event time = wall-clock time; the vertical gap to it is the lag.
    a, b = max(sx.lo, sy.lo), min(sx.hi, sy.hi)
    if a < b:
        body.append(f'<line x1="{sx(a):.1f}" y1="{sy(a):.1f}" x2="{sx(b):.1f}" y2="{sy(b):.1f}" '
                    f'stroke="{COLORS["wall"]}" stroke-dasharray="4,3"/>')
    n = 0
    for key, color, name in (("watermark_ms", COLORS["W"], "W"), ("threshold_ms", COLORS["T"], "T")):
        pts = [(h["epoch_ms"], h[key], h) for h in hist if h[key] is not None]
        if len(pts) > 1:
            body.append(f'<polyline fill="none" stroke="{color}" points="'
                        + " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y, _ in pts) + '"/>')
        for x, y, h in pts:
            n += 1
            body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{color}"><title>'
                        f'{_e(name)} {_iso(y)} recorded by compaction {_e(h["instant"])} at {_iso(x)}: '
                        f'{_e(fmt_duration(x - y))} behind the wall clock</title></circle>')
    if wait["min"]["epoch_ms"] is not None and wait["max"]["epoch_ms"] is not None:
        n += 1
        y0, y1 = sy(wait["max"]["epoch_ms"]), sy(wait["min"]["epoch_ms"])
        body.append(f'<rect x="{sx(now) - 5:.1f}" y="{y0:.1f}" width="10" height="{max(y1 - y0, 2):.1f}" '
                    f'fill="{COLORS["wait"]}" fill-opacity="0.6"><title>event times waiting in log files: '
                    f'{_iso(wait["min"]["epoch_ms"])} to {_iso(wait["max"]["epoch_ms"])}</title></rect>')
    if wm["epoch_ms"] is not None:
        n += 1
        body.append(f'<circle cx="{sx(now):.1f}" cy="{sy(wm["epoch_ms"]):.1f}" r="5" fill="none" stroke="{COLORS["W"]}" '
                    f'stroke-width="2"><title>W now {_iso(wm["epoch_ms"])}: {_e(fmt_duration(now - wm["epoch_ms"]))} '
                    f'behind the wall clock</title></circle>')
    xt, xl = _time_ticks(sx.lo, sx.hi)
    yt, yl = _time_ticks(sy.lo, sy.hi, 5)
    out.append(_svg_open("freshness", n, "watermark and threshold against wall-clock time")
               + _y_axis(sy, yt, yl) + _x_axis(sx, xt, xl) + "".join(body) + "</svg>")
    out.append(_legend([("W per compaction", COLORS["W"]), ("T per compaction", COLORS["T"]),
                        ("event times waiting now", COLORS["wait"]), ("event time = wall clock", COLORS["wall"])])
               + '<p class="sub">x: when each compaction committed (wall clock, and now on the right); y: event time. '
                 'The vertical distance from a point to the dashed diagonal is how far the read-optimized view lags.</p>')
    if hist:
        out.append('<table><tr><th class="l">compaction</th><th class="l">W</th><th>W lag</th><th class="l">T</th>'
                   '<th>T lag</th></tr>' + "".join(
                       f'<tr><td class="l">{_e(h["instant"])}</td><td class="l">{_iso(h["watermark_ms"])} '
                       f'({_e(h["watermark_status"] or "-")})</td><td>{_e(fmt_duration(h["watermark_lag_ms"]))}</td>'
                       f'<td class="l">{_iso(h["threshold_ms"])}</td><td>{_e(fmt_duration(h["threshold_lag_ms"]))}</td></tr>'
                       for h in hist[-15:]) + "</table>")
    return "".join(out)


def _hbars(name: str, title: str, items: Sequence[tuple[str, float, str]], fmt: Callable[[float], str]) -> str:
    """Horizontal bars: (label, value, tooltip)."""
    bh, gap = 14, 4
    h = MT + MB + len(items) * (bh + gap)
    left = 220
    vmax = max((v for _, v, _ in items), default=1) or 1
    body = []
    for i, (label, v, tip) in enumerate(items):
        y = MT + i * (bh + gap)
        w = (W - MR - left - 90) * v / vmax
        body.append(f'<text x="{left - 6}" y="{y + bh - 3}" text-anchor="end">{_e(label[-34:])}</text>'
                    f'<rect x="{left}" y="{y}" width="{max(w, 1):.1f}" height="{bh}" fill="{COLORS["compaction"]}">'
                    f'<title>{_e(tip)}</title></rect><text x="{left + w + 4:.1f}" y="{y + bh - 3}">{_e(fmt(v))}</text>')
    return _svg_open(name, len(items), title, h) + "".join(body) + "</svg>"


def _compaction(r: Mapping[str, Any]) -> str:
    c = r["compaction"]
    out = ["<h2>Compaction backlog</h2>"]
    if r["table"]["table_type"] != "MERGE_ON_READ":
        return "".join(out) + _empty("A COPY_ON_WRITE table has no log files to compact.")
    bl = c["backlog"]
    cfg = c["config"]
    trig = c.get("trigger_now") or {}
    out.append(f'<p><b>{bl["log_files"]}</b> log file(s), <b>{fmt_bytes(bl["log_bytes"])}</b>, wait in '
               f'{len(bl["file_groups"])} file group(s) of {len(bl["partitions"])} partition(s). Strategy '
               f'<b>{_e(cfg["strategy"])}</b>, trigger <b>{_e(cfg["trigger"])}</b> (max delta commits '
               f'{cfg["max_delta_commits"]}, max delta seconds {cfg["max_delta_seconds"]}; the last plan used '
               f'{_e(cfg.get("last_plan_strategy") or "-")}); now: '
               f'{"would schedule" if trig.get("schedule") else "would not schedule"} ({_e(trig.get("reason", "-"))}).</p>')
    parts = sorted(bl["partitions"], key=lambda p: (-p["log_bytes"], p["partition"]))
    if parts:
        out.append(_hbars("backlog", "log bytes waiting per partition",
                          [(p["partition"] or "(root)", p["log_bytes"],
                            f'{p["partition"]}: {p["log_files"]} log file(s) in {p["file_groups"]} file group(s), '
                            f'{fmt_bytes(p["log_bytes"])}') for p in parts[:25]], fmt_bytes))
        if len(parts) > 25:
            out.append(f'<p class="sub">{len(parts) - 25} more partition(s) with logs in the JSON.</p>')
        groups = sorted(bl["file_groups"], key=lambda g: (-g["log_files"], -g["log_bytes"]))[:10]
        out.append('<table><tr><th class="l">partition</th><th class="l">file group</th><th class="l">slice</th>'
                   '<th>log files</th><th>bytes</th><th class="l">event times</th></tr>' + "".join(
                       f'<tr><td class="l">{_e(g["partition"])}</td><td class="l">{_e(g["file_id"])}</td>'
                       f'<td class="l">{_e(g["base_instant"])}</td><td>{g["log_files"]}</td><td>{fmt_bytes(g["log_bytes"])}</td>'
                       f'<td class="l">{_iso(g["min_event_ms"])} .. {_iso(g["max_event_ms"])}</td></tr>' for g in groups)
                   + "</table>")
    else:
        out.append(_empty("No log file waits: the read-optimized view equals the snapshot."))
    pend = c["pending"]
    out.append(f"<h3>Pending compaction plans ({len(pend)}; {c['completed']} completed on the active timeline)</h3>")
    if pend:
        out.append('<table><tr><th class="l">instant</th><th class="l">state</th><th>operations</th>'
                   '<th class="l">strategy</th><th class="l">partitions</th></tr>' + "".join(
                       f'<tr><td class="l">{_e(p["instant"])}</td><td class="l">{_e(p["state"])}</td>'
                       f'<td>{_e(p.get("operations", "-"))}</td><td class="l">{_e(p.get("strategy") or "-")}</td>'
                       f'<td class="l">{_e(p.get("damaged") or ", ".join((p.get("partitions") or [])[:4]))}</td></tr>'
                       for p in pend) + "</table>")
    else:
        out.append(_empty("None."))
    return "".join(out)


def _files(r: Mapping[str, Any]) -> str:
    f = r["files"]
    out = ["<h2>Base files</h2>",
           f'<p>{f["base_files"]} base file(s), {fmt_bytes(f["base_bytes"])}; median {fmt_bytes(f["median_bytes"])}; '
           f'<b>{f["small_files"]}</b> below the small-file limit ({fmt_bytes(f["small_file_limit"])}), '
           f'{f["over_max"]} above hoodie.parquet.max.file.size ({fmt_bytes(f["max_file_size"])}). '
           f'Metadata table: {"enabled" if f["metadata_table"]["enabled"] else "not enabled"}, '
           f'{f["metadata_table"]["files"]} file(s), {fmt_bytes(f["metadata_table"]["bytes"])}.</p>']
    bins = f["histogram"]
    if not bins:
        return "".join(out) + _empty("No base file.")
    lo = min(max(bins[0]["lo"], 1), f["small_file_limit"]) / 2
    hi = max(bins[-1]["hi"], f["max_file_size"]) * 2
    sx = Scale(lo, hi, ML + 10, W - MR - 10, log=True)
    cmax = max(b["count"] for b in bins) or 1
    sy = Scale(0, cmax * 1.1, H - MB, MT)
    body = []
    for b in bins:
        x0, x1 = sx(max(b["lo"], 1)), sx(b["hi"])
        y = sy(b["count"])
        body.append(f'<rect x="{x0 + 1:.1f}" y="{y:.1f}" width="{max(x1 - x0 - 2, 1):.1f}" height="{H - MB - y:.1f}" '
                    f'fill="{COLORS["kept"]}"><title>{b["count"]} file(s) of {fmt_bytes(b["lo"])} to '
                    f'{fmt_bytes(b["hi"])}</title></rect>')
    for v, name, color in ((f["small_file_limit"], "small-file limit", COLORS["soon"]),
                           (f["max_file_size"], "max file size", COLORS["expired"])):
        x = sx(v)
        body.append(f'<line x1="{x:.1f}" y1="{MT}" x2="{x:.1f}" y2="{H - MB}" stroke="{color}" stroke-dasharray="5,3"/>'
                    f'<text x="{x - 4:.1f}" y="{MT + 12 if name.startswith("max") else MT + 26}" text-anchor="end" '
                    f'fill="{color}">{_e(name)}</text>')
    yt = [t for t in _num_ticks(0, cmax * 1.1) if float(t).is_integer()]
    out.append(_svg_open("file-sizes", sum(1 for b in bins if b["count"]), "base-file size distribution")
               + _y_axis(sy, yt, lambda v: f"{int(v)}") + _x_axis(sx, _byte_ticks(lo, hi), fmt_bytes)
               + "".join(body) + "</svg>")
    out.append('<p class="sub">Number of base files (latest file slices) by size, log scale, in power-of-two bins.</p>')
    return "".join(out)


def _timeline(r: Mapping[str, Any]) -> str:
    t = r["timeline"]
    arch = t["archived"]
    insts = [i for i in t["instants"] if i["epoch_ms"] is not None]
    out = ["<h2>Timeline</h2>",
           f'<p>Active timeline: <b>{t["active"]}</b> instant(s) ({t["completed"]} completed, {t["pending"]} pending), '
           f'{fmt_bytes(t["active_timeline_bytes"])}; archived: '
           f'<b>{_e(arch["instants"] if arch["instants"] is not None else "?")}</b> instant(s) in {arch["files"]} file(s), '
           f'{fmt_bytes(arch["bytes"])}. By kind: '
           + ", ".join(f"{k} {t['by_kind'][k]}" for k in KINDS) + f". Growth: {t['growth']['last_24h']} instant(s) "
           f"in the last 24 h, {t['growth']['last_7d']} in the last 7 d"
           + (f"; the metadata table's timeline holds {t['metadata_table_instants']} instant(s)"
              if t.get("metadata_table_instants") is not None else "") + ".</p>"]
    if not insts:
        return "".join(out) + _empty("No instant on the active timeline.")
    lanes = list(KINDS)
    lh = 26
    h = MT + MB + lh * len(lanes)
    xs = [i["epoch_ms"] for i in insts]
    pad = max((max(xs) - min(xs)) * 0.02, 1000)
    sx = Scale(min(xs) - pad, max(xs) + pad, ML + 10, W - MR - 10)
    body = []
    for li, k in enumerate(lanes):
        y = MT + li * lh + lh / 2
        body.append(f'<text x="{ML - 6}" y="{y + 4:.1f}" text-anchor="end">{_e(k)}</text>'
                    f'<line x1="{ML}" y1="{y:.1f}" x2="{W - MR}" y2="{y:.1f}" stroke="#eee"/>')
    rolled = set(t["rolled_back_instants"])
    for i in insts:
        y = MT + lanes.index(i["kind"]) * lh + lh / 2
        c = COLORS[i["kind"]]
        done = i["state"] == "COMPLETED"
        fill = c if done else "#fff"
        tip = f'{i["instant"]} {i["action"]} {i["state"]}' + (f', completed {i["completion"]}' if i.get("completion") else "")
        body.append(f'<circle cx="{sx(i["epoch_ms"]):.1f}" cy="{y:.1f}" r="5" fill="{fill}" stroke="{c}" '
                    f'stroke-width="1.5"><title>{_e(tip)}</title></circle>')
    xt, xl = _time_ticks(sx.lo, sx.hi)
    out.append(_svg_open("timeline", len(insts), "instants over time by kind", h) + _x_axis(sx, xt, xl, h)
               + "".join(body) + "</svg>")
    out.append('<p class="sub">One dot per instant of the active timeline (hollow: requested or inflight). '
               'write: commit/deltacommit/replacecommit; compaction: plans and their commits; ttl: partition TTL '
               'runs (delete_partition replacecommits); rollback: rollbacks and restores.</p>')
    if t["rollbacks"]:
        out.append('<table><tr><th class="l">rollback</th><th class="l">rolled back</th></tr>' + "".join(
            f'<tr><td class="l">{_e(rb["instant"])}</td><td class="l">{_e(", ".join(rb["rolled_back"]) or "-")}</td></tr>'
            for rb in t["rollbacks"][-15:]) + "</table>")
    elif not rolled:
        out.append(_empty("No rollback on the active timeline: no failed write was rolled back."))
    return "".join(out)


def render_html(report: Mapping[str, Any]) -> str:
    """The report page for :func:`hoodie.services.report.gather_report`'s figures."""
    t = report["table"]
    att = report["attention"]
    head = (f'<h1>{_e(t["name"] or "table")}: health report</h1><div class="sub">{_e(t["base_path"])} &middot; '
            f'{_e(t["table_type"])} &middot; table version {_e(t["table_version"])} &middot; partitioned by '
            f'{_e(", ".join(t["partition_fields"]) or "nothing")} &middot; as of {_e(report["generated"]["iso"])} '
            f'(gathered in {report["generated"].get("seconds", 0)} s, metadata only)</div>')
    summary = ["<h2>Needs attention</h2>"]
    if att:
        summary.append('<ul class="att">' + "".join(
            f'<li class="{_e(a["level"])}"><b>{_e(a["topic"])}</b>: {_e(a["text"])}</li>' for a in att) + "</ul>")
    else:
        summary.append(_empty("Nothing: no backlog, no pending plan, no partition about to expire."))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta name="generator" content="{GENERATOR}">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{_e(t['name'])} health report</title><style>{CSS}</style></head><body>"
            + head + "".join(summary) + _partitions(report) + _freshness(report) + _compaction(report)
            + _files(report) + _timeline(report) + "</body></html>\n")


__all__ = ["render_html", "fmt_bytes", "GENERATOR"]
