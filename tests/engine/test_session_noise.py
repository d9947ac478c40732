"""A session hoodie starts prints no start-up noise (log4j's default-profile banner, native-hadoop,
the embedded metastore's warnings), keeps the user's own logging when they name one, and shows Spark's
progress bar only at a terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hoodie.engine.session import LOG4J_CONFIG, session_settings

NOISE = ("Using Spark's default log4j profile", "NativeCodeLoader", "Namespace default was created concurrently",
         "METASTORE_FILTER_HOOK", "HiveConf of name", "Setting default log level",
         "AlreadyExistsException")


def test_settings_name_hoodies_log_config_unless_the_user_has_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    java = session_settings("local[1]", str(tmp_path / "ms"))["spark.driver.extraJavaOptions"]
    assert f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG}" in java and "-Dderby.system.home=" in java
    own = session_settings("local[1]", conf={"spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=x.xml"})
    assert own["spark.driver.extraJavaOptions"] == "-Dlog4j2.configurationFile=x.xml"
    (tmp_path / "log4j2.properties").write_text("rootLogger.level = info\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert "log4j2" not in session_settings("local[1]").get("spark.driver.extraJavaOptions", "")
    assert os.path.exists(LOG4J_CONFIG)


def test_progress_bar_only_at_a_terminal(monkeypatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert session_settings("local[1]")["spark.ui.showConsoleProgress"] == "true"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert session_settings("local[1]")["spark.ui.showConsoleProgress"] == "false"


@pytest.mark.slow  # a new JVM with a metastore (78 s loaded); default run: the two settings tests above
def test_a_new_session_with_a_metastore_starts_quietly(tmp_path: Path) -> None:
    code = ("from hoodie.engine.session import get_session\n"
            f"s = get_session('local[1]', metastore={str(tmp_path / 'ms')!r})\n"
            "s.sql('CREATE TABLE IF NOT EXISTS quiet_t (id INT) USING parquet'); s.sql('SELECT 1').collect()\n"
            # What hoodie's CREATE TABLE runs: the metastore logs the existing database as an ERROR.
            "s.sql('CREATE DATABASE IF NOT EXISTS `default`')\n"
            "s.stop()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    noisy = [n for n in NOISE if n in out.stderr + out.stdout]
    assert not noisy, out.stderr[-3000:]
