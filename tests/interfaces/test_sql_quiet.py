"""hoodie.sql's parse prints nothing for statements sqlglot does not model (CALL, SET)."""

from __future__ import annotations

import logging

import pytest

from hoodie.interfaces.sql_common import _parse


@pytest.mark.parametrize("text", ["CALL run_ttl(table => 't', retain_days => 30)", "CALL system.show_commits('t')"])
def test_parse_of_a_call_logs_no_sqlglot_warning(text: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        _parse(text)
    assert not [r for r in caplog.records if r.name.startswith("sqlglot")], caplog.text
    assert logging.getLogger("sqlglot").level == logging.NOTSET  # restored
