"""CALL statement parsing and argument binding (pure Python, no Spark)."""

from __future__ import annotations

import pytest

from hoodie.interfaces import procedures  # noqa: F401  (registers procedures)
from hoodie.interfaces.sql import PROCEDURES, SqlError, bind, parse_call, parse_options


def test_named_and_positional_arguments() -> None:
    assert parse_call("SELECT 1") is None
    name, pos, named = parse_call("call run_ttl(table => 'db.t', retain_days => 30, options => 'a=b,c=d');")
    assert name == "run_ttl" and pos == [] and named == {"table": "db.t", "retain_days": 30, "options": "a=b,c=d"}
    name, pos, named = parse_call("CALL show_commits('/p/t', 5)")
    assert pos == ["/p/t", 5] and named == {}
    _, pos, named = parse_call("CALL x('it''s', true, null, 1.5, limit => -2)")
    assert pos == ["it's", True, None, 1.5] and named == {"limit": -2}


@pytest.mark.parametrize("text,msg", [
    ("CALL x(a => 1, 2)", "positional arguments must come before"),
    ("CALL x(a => b)", "needs a literal value|unquoted"),
    ("CALL x(a => 1 b => 2)", "expected ','"),
    ("CALL x(a => 1,)", "trailing"),
    ("CALL x(a => 1, a => 2)", "given twice"),
    ("CALL x(unquoted)", "unquoted value"),
    ("CALL broken", "malformed CALL"),
])
def test_malformed_calls_are_named(text: str, msg: str) -> None:
    with pytest.raises(SqlError, match=msg):
        parse_call(text)


def test_binding_checks_types_and_names() -> None:
    proc = PROCEDURES["run_ttl"]
    args = bind(proc, ["db.t"], {"retain_days": "7"})
    assert args["table"] == "db.t" and args["retain_days"] == 7 and args["ttl_policy"] is None
    with pytest.raises(SqlError, match="'retain_days' of run_ttl must be int"):
        bind(proc, [], {"retain_days": "seven"})
    with pytest.raises(SqlError, match="has no argument 'retain'"):
        bind(proc, [], {"retain": 1})
    with pytest.raises(SqlError, match="needs argument 'instant_time'"):
        bind(PROCEDURES["rollback_to_instant"], [], {"basePath": "/x"})
    seed = PROCEDURES["managepartitionttl"]
    args = bind(seed, [], {"basePath": "/t", "daysRetain": "10", "predicate": "productid = 1"})
    assert args["strategy"] == "KEEP_BY_TIME" and args["daysRetain"] == 10


def test_options_string() -> None:
    assert parse_options("a=1, b = x=y") == {"a": "1", "b": "x=y"}
    with pytest.raises(SqlError, match="not key=value"):
        parse_options("a")
