"""Fixtures the services' tests share."""

from __future__ import annotations

import pytest


@pytest.fixture()
def new_york_machine():
    """The machine's local zone is America/New_York for the test (a UTC timeline must not care)."""
    import os
    import time

    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()
