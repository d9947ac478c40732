"""Session settings per master: the loopback driver address only where every JVM is on this machine
(no Spark started: the settings are computed, not applied)."""

from __future__ import annotations

import pytest

from hoodie.engine.session import is_local_master, session_settings


@pytest.mark.parametrize("master,local", [
    ("local", True), ("local[2]", True), ("local[*]", True), ("local[4,2]", True), ("LOCAL[2]", True),
    ("local-cluster[2,1,1024]", True), ("spark://10.0.0.5:7077", False), ("yarn", False),
    ("k8s://https://api:6443", False), ("localhost:7077", False), ("spark://localhost:7077", False),
])
def test_the_driver_binds_to_loopback_only_for_local_masters(master: str, local: bool) -> None:
    assert is_local_master(master) is local
    settings = session_settings(master)
    assert ("spark.driver.host" in settings) is local and ("spark.driver.bindAddress" in settings) is local
    assert settings["spark.sql.parquet.outputTimestampType"] == "TIMESTAMP_MICROS"


def test_the_callers_conf_wins() -> None:
    s = session_settings("local[2]", conf={"spark.driver.host": "10.1.2.3", "spark.sql.shuffle.partitions": 8})
    assert s["spark.driver.host"] == "10.1.2.3" and s["spark.sql.shuffle.partitions"] == "8"
