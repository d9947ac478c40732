"""One Spark session (local[2], Hive catalog) shared by every Spark test of the run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """Hive-enabled, with an embedded Derby metastore in this run's own temp directory."""
    from hoodie.engine.session import get_session

    s = get_session("local[2]", app_name="hoodie-tests", metastore=str(tmp_path_factory.mktemp("metastore")))
    yield s
    s.stop()
