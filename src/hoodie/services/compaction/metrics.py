"""Compaction metrics as Prometheus text: to a file (node_exporter textfile collector style) or
pushed to a Prometheus push gateway (``POST <url>/metrics/job/<job>``).

The metrics dict is the one each compaction commit records under ``hoodie.compaction.metrics``
(see ``runner``); absent or null values are left out of the exposition.
"""

from __future__ import annotations

import os
import urllib.request
from typing import Any, Mapping, Optional
from urllib.parse import quote

# (metrics key, Prometheus name, help)
METRIC_SPECS: tuple[tuple[str, str, str], ...] = (
    ("durationMs", "hoodie_compaction_duration_ms", "Duration of the last compaction in milliseconds"),
    ("bytesRead", "hoodie_compaction_bytes_read", "Bytes of base and log files the last compaction read"),
    ("bytesWritten", "hoodie_compaction_bytes_written", "Bytes of files the last compaction wrote (base, split, copies)"),
    ("operations", "hoodie_compaction_operations", "File slices compacted by the last compaction"),
    ("partialOperations", "hoodie_compaction_partial_operations", "Operations of the last compaction that left log files"),
    ("logFilesCompacted", "hoodie_compaction_log_files_compacted", "Log files merged into base files by the last compaction"),
    ("logBytesCompacted", "hoodie_compaction_log_bytes_compacted", "Bytes of log files merged by the last compaction"),
    ("recordsWritten", "hoodie_compaction_records_written", "Records written to base files by the last compaction"),
    ("splitRecords", "hoodie_compaction_split_records", "Records kept out of base files by an exact event-time split"),
    ("remainingSlices", "hoodie_compaction_remaining_slices", "Slices whose log files the last compaction partly left"),
    ("remainingLogFiles", "hoodie_compaction_remaining_log_files", "Log files the last compaction left (linked or copied)"),
    ("remainingLogBytes", "hoodie_compaction_remaining_log_bytes", "Bytes of log files the last compaction left"),
    ("tableSlicesWithLogs", "hoodie_table_slices_with_log_files", "File slices of the table with log files not yet compacted"),
    ("tableLogFiles", "hoodie_table_log_files", "Log files of the table not yet compacted"),
    ("tableLogBytes", "hoodie_table_log_bytes", "Bytes of log files of the table not yet compacted"),
    ("minLogEventTimeMs", "hoodie_table_log_min_event_time_ms", "Minimum event time over uncompacted log blocks (the watermark), epoch ms"),
    ("thresholdMs", "hoodie_compaction_event_time_threshold_ms", "Event-time threshold of the last event-time compaction, epoch ms"),
)


def _label_value(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def prometheus_text(metrics: Mapping[str, Any], labels: Optional[Mapping[str, str]] = None) -> str:
    """Prometheus text exposition (version 0.0.4) of the numeric metrics, one gauge each."""
    lab = ""
    if labels:
        lab = "{" + ",".join(f'{k}="{_label_value(str(v))}"' for k, v in sorted(labels.items())) + "}"
    lines: list[str] = []
    for key, name, help_text in METRIC_SPECS:
        v = metrics.get(key)
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} gauge")
        lines.append(f"{name}{lab} {int(v) if float(v).is_integer() else float(v)}")
    if "watermarkStatus" in metrics:
        known = 1 if metrics.get("watermarkStatus") in ("known", "complete") else 0
        lines.append("# HELP hoodie_table_watermark_known 1 when every uncompacted log block's event time is known")
        lines.append("# TYPE hoodie_table_watermark_known gauge")
        lines.append(f"hoodie_table_watermark_known{lab} {known}")
    return "\n".join(lines) + "\n"


def write_prometheus(path: str, metrics: Mapping[str, Any], labels: Optional[Mapping[str, str]] = None) -> None:
    """Write the metrics to ``path`` atomically (temp file + rename: scrapers never see half a file)."""
    text = prometheus_text(metrics, labels)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def push_prometheus(url: str, metrics: Mapping[str, Any], labels: Optional[Mapping[str, str]] = None, *,
                    job: str = "hoodie", timeout: float = 10.0) -> int:
    """POST the metrics to a push gateway at ``<url>/metrics/job/<job>``; returns the HTTP status.

    Raises:
        OSError: the gateway is unreachable or answers with an error status.
    """
    target = url.rstrip("/") + "/metrics/job/" + quote(job, safe="")
    req = urllib.request.Request(target, data=prometheus_text(metrics, labels).encode("utf-8"), method="POST",
                                 headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return int(resp.status)


__all__ = ["prometheus_text", "write_prometheus", "push_prometheus", "METRIC_SPECS"]
