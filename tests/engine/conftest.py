"""One Spark session (local[2]) shared by every Spark test of the run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from hoodie.engine.session import get_session

    s = get_session("local[2]", app_name="hoodie-tests")
    yield s
    s.stop()
