"""Prometheus metrics for writes, TTL and clean (compaction has its own set, same mechanics).

Metrics go to a text file (the node_exporter textfile-collector format) named by
``hoodie.metrics.prometheus.file`` or the CLI's ``--metrics-file`` (``HOODIE_METRICS_FILE``), and/or
to a push gateway (``hoodie.metrics.pushgateway.url``, or Hudi's ``hoodie.metrics.pushgateway.host``
and ``.port``). Several jobs can share one file: each publish replaces only its own job's lines.
"""

from __future__ import annotations

import os
import tempfile
import urllib.request
from typing import Any, Mapping, Optional
from urllib.parse import quote

from hoodie.configs.metrics import METRICS_FILE_KEY, PUSHGATEWAY_HOST_KEY, PUSHGATEWAY_PORT_KEY, PUSHGATEWAY_URL_KEY

ENV_FILE = "HOODIE_METRICS_FILE"

Metrics = Mapping[str, tuple[Optional[float], str]]  # name -> (value, help)


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def prometheus_text(job: str, metrics: Metrics, labels: Mapping[str, str]) -> str:
    """Exposition text: ``hoodie_<job>_<name>{labels} value`` with HELP/TYPE lines."""
    lab = ",".join(f'{k}="{_esc(str(v))}"' for k, v in sorted(labels.items()))
    out = []
    for name, (value, help_) in metrics.items():
        if value is None:
            continue
        full = f"hoodie_{job}_{name}"
        out.append(f"# HELP {full} {help_}")
        out.append(f"# TYPE {full} gauge")
        out.append(f"{full}{{{lab}}} {float(value):g}")
    return "\n".join(out) + ("\n" if out else "")


def _file_target(options: Mapping[str, Any]) -> Optional[str]:
    return METRICS_FILE_KEY.get(options) or os.environ.get(ENV_FILE) or None


def push_target(options: Mapping[str, Any], url_key: str = PUSHGATEWAY_URL_KEY) -> Optional[str]:
    """The push gateway URL: ``url_key``, else Hudi's host and port keys; None when none is set.
    A malformed port raises :class:`hoodie.configs.ConfigValueError` naming the key."""
    url = options.get(url_key)
    if url is not None and str(url).strip():
        return str(url).strip()
    host = PUSHGATEWAY_HOST_KEY.get(options)
    if host:
        return f"http://{host}:{PUSHGATEWAY_PORT_KEY.get(options)}"
    return None


def write_file(path: str, job: str, text: str) -> None:
    """Replace ``job``'s lines in a metrics file (others' lines stay), atomically."""
    prefix = f"hoodie_{job}_"
    kept: list[str] = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                body = line[len("# HELP "):] if line.startswith("# HELP ") else (
                    line[len("# TYPE "):] if line.startswith("# TYPE ") else line)
                if not body.startswith(prefix):
                    kept.append(line.rstrip("\n"))
    content = "\n".join(kept + ([text.rstrip("\n")] if text else [])) + "\n"
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".metrics-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(tmp, path)


def push(url: str, job: str, text: str, labels: Mapping[str, str], timeout: float = 10.0) -> None:
    """POST the text to ``<url>/metrics/job/hoodie_<job>/table/<table>`` on a push gateway."""
    path = f"/metrics/job/hoodie_{quote(job, safe='')}"
    if labels.get("table"):
        path += f"/table/{quote(str(labels['table']), safe='')}"
    req = urllib.request.Request(url.rstrip("/") + path, data=text.encode("utf-8"), method="POST",
                                 headers={"Content-Type": "text/plain; version=0.0.4"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        if resp.status >= 300:
            raise OSError(f"push gateway {url} answered {resp.status}")


def publish(job: str, metrics: Metrics, labels: Mapping[str, str], options: Mapping[str, Any]) -> Optional[str]:
    """Publish where the options say; returns the exposition text (None when nothing is configured)."""
    file_ = _file_target(options)
    url = push_target(options)
    if not file_ and not url:
        return None
    text = prometheus_text(job, metrics, labels)
    if file_:
        write_file(str(file_), job, text)
    if url:
        push(url, job, text, labels)
    return text


def publish_write(table_name: str, base_path: str, instant: str, operation: str, stats: Any,
                  duration_ms: int, options: Mapping[str, Any]) -> Optional[str]:
    """Metrics of one committed write (from its write stats)."""
    stats = list(stats)
    m: dict[str, tuple[Optional[float], str]] = {
        "records_written": (sum(s.num_writes for s in stats), "Records written by the last commit"),
        "inserts": (sum(s.num_inserts for s in stats), "Inserts of the last commit"),
        "updates": (sum(s.num_update_writes for s in stats), "Updates of the last commit"),
        "deletes": (sum(s.num_deletes for s in stats), "Deletes of the last commit"),
        "files_written": (len(stats), "Files written by the last commit"),
        "bytes_written": (sum(s.total_write_bytes for s in stats), "Bytes written by the last commit"),
        "duration_ms": (duration_ms, "Duration of the last write in milliseconds"),
        "last_commit_time": (float(instant), "Instant time of the last commit (yyyyMMddHHmmssSSS)"),
    }
    return publish("write", m, {"table": table_name, "base_path": base_path, "operation": operation}, options)
