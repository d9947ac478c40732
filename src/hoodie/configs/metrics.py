"""Metrics keys: where writes and table services publish their Prometheus metrics (a text file, a push
gateway: Hudi's ``hoodie.metrics.pushgateway.*``)."""

from __future__ import annotations

from hoodie.configs.registry import define
from hoodie.configs.rules import Int

_GROUP = "metrics"
METRICS_FILE_KEY = define("hoodie.metrics.prometheus.file", None,
                          "Write Prometheus metrics of writes, TTL and clean to this text file.", _GROUP)
PUSHGATEWAY_URL_KEY = define("hoodie.metrics.pushgateway.url", None,
                             "Push Prometheus metrics to this push gateway URL.", _GROUP)
PUSHGATEWAY_HOST_KEY = define("hoodie.metrics.pushgateway.host", None,
                              "Prometheus push gateway host (Hudi's key), used when no push gateway URL is set.",
                              _GROUP)
PUSHGATEWAY_PORT_KEY = define("hoodie.metrics.pushgateway.port", 9091,
                              "Prometheus push gateway port (Hudi's key), with the host.", _GROUP,
                              type=Int(1, 65535))
