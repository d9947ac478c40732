"""Compaction metrics: in the commit, as Prometheus text in a file, and pushed to a push gateway
(a tiny http.server on 127.0.0.1 started and stopped by the test)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from hoodie.format.table import HoodieTable
from hoodie.services.compaction import (
    prometheus_text, push_prometheus, run_compaction, schedule_compaction, write_prometheus,
)
from hoodie.services.compaction import keys as K
from tests.services.test_compaction_support import Setup, event_time_config, write


class _Gateway:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str]] = []
        gw = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                gw.requests.append((self.path, self.headers.get("Content-Type", ""), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture()
def gateway() -> Iterator[_Gateway]:
    gw = _Gateway()
    gw.thread.start()
    try:
        yield gw
    finally:
        gw.server.shutdown()
        gw.server.server_close()
        gw.thread.join(5)


def _table(path: str) -> None:
    write(path, "insert", [(1, 1, 0), (2, 1, 0), (3, 1, 0)])
    write(path, "upsert", [(1, 10, 1)])
    write(path, "upsert", [(2, 20, 2)])
    write(path, "upsert", [(3, 30, 3)])


def test_prometheus_text_format() -> None:
    text = prometheus_text({"durationMs": 12, "bytesRead": 3.5, "thresholdMs": None, "remainingLogFiles": 2,
                            "watermarkStatus": "unknown"}, {"table": 'a"b'})
    lines = text.splitlines()
    assert "# TYPE hoodie_compaction_duration_ms gauge" in lines
    assert 'hoodie_compaction_duration_ms{table="a\\"b"} 12' in lines
    assert 'hoodie_compaction_bytes_read{table="a\\"b"} 3.5' in lines
    assert not any("threshold" in l for l in lines)
    assert 'hoodie_table_watermark_known{table="a\\"b"} 0' in lines
    assert text.endswith("\n")


def test_metrics_in_commit_file_and_push_gateway(tmp_path: Path, gateway: _Gateway) -> None:
    path = str(tmp_path / "t")
    _table(path)
    prom = tmp_path / "metrics" / "compaction.prom"
    c = schedule_compaction(path, event_time_config(15))
    (res,) = run_compaction(path, c, {"hoodie.compaction.metrics.prometheus.file": str(prom),
                                      "hoodie.compaction.metrics.pushgateway.url": gateway.url})
    m = json.loads(HoodieTable(path).timeline.commit_metadata(
        HoodieTable(path).timeline.get(c)).extra_metadata[K.METRICS_KEY])
    assert m == res.metrics
    assert m["remainingSlices"] == 1 and m["remainingLogFiles"] == 2 and m["remainingLogBytes"] > 0
    assert m["minLogEventTimeMs"] == 20 and m["watermarkStatus"] == "known" and m["thresholdMs"] == 15
    assert m["durationMs"] >= 0 and m["bytesRead"] > 0 and m["bytesWritten"] > 0
    assert m["tableLogFiles"] == 2 and m["tableSlicesWithLogs"] == 1 and m["logFilesCompacted"] == 1
    text = prom.read_text()
    assert 'hoodie_table_log_min_event_time_ms{table="ct"} 20' in text
    assert 'hoodie_compaction_remaining_log_files{table="ct"} 2' in text
    ((p, ctype, body),) = gateway.requests
    assert p == "/metrics/job/hoodie" and ctype.startswith("text/plain") and body == text


def test_push_helper_and_unreachable_gateway(tmp_path: Path, gateway: _Gateway) -> None:
    assert push_prometheus(gateway.url + "/", {"operations": 3}, job="my job") == 200
    assert gateway.requests[0][0] == "/metrics/job/my%20job"
    with pytest.raises(OSError):
        push_prometheus("http://127.0.0.1:9", {"operations": 1}, timeout=2)
    # An unreachable gateway does not fail a compaction.
    path = str(tmp_path / "t")
    _table(path)
    c = schedule_compaction(path, event_time_config(100))
    (res,) = run_compaction(path, c, {"hoodie.compaction.metrics.pushgateway.url": "http://127.0.0.1:9"})
    assert res.instant == c
    write_prometheus(str(tmp_path / "m.prom"), res.metrics)
    assert "hoodie_compaction_operations 1" in (tmp_path / "m.prom").read_text()


def test_hudi_pushgateway_keys_are_accepted() -> None:
    from hoodie.services.compaction import CompactionConfig

    cfg = CompactionConfig.from_options({"hoodie.metrics.pushgateway.host": "gw", "hoodie.metrics.pushgateway.port": "9091"})
    assert cfg.pushgateway_url == "http://gw:9091"
    assert Setup().event_field
