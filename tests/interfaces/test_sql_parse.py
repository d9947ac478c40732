"""CALL statement parsing and argument binding (pure Python, no Spark)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.interfaces import procedures  # noqa: F401  (registers procedures)
from hoodie.interfaces.sql import PROCEDURES, SqlError, bind, is_path, parse_call, parse_create_table, parse_options
from tests.helpers import examples


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


def test_table_argument_path_or_name() -> None:
    assert is_path("/data/t") and is_path("s3://bucket/t") and is_path("rel/t")
    assert not is_path("db.events") and not is_path("events") and not is_path("`odd/name`")


_CLAUSES = {
    "a column list": "(id bigint, ts bigint)", "OPTIONS": "OPTIONS (path '/p')",
    "TBLPROPERTIES": "TBLPROPERTIES (primaryKey = 'id')", "PARTITIONED BY": "PARTITIONED BY (day)",
    "COMMENT": "COMMENT 'events'", "AS SELECT": "AS SELECT 1 AS id",
}


@settings(max_examples=examples(200), deadline=None)
@given(replace=st.booleans(), ine=st.booleans(), name=st.sampled_from(["t", "db.t", "`db`.`t`", "`a b`"]),
       using=st.sampled_from(["hoodie", "HUDI", "Hoodie", "parquet", "delta"]),
       location=st.one_of(st.none(), st.sampled_from(["/data/t", "s3://b/t", "/x/options tblproperties (",
                                                      "/it''s", "/using hoodie"])),
       clause=st.one_of(st.none(), st.sampled_from(sorted(_CLAUSES))), clause_first=st.booleans(),
       lower=st.booleans(), semicolon=st.booleans())
def test_create_table_statements_using_hoodie(replace: bool, ine: bool, name: str, using: str, location, clause,
                                              clause_first: bool, lower: bool, semicolon: bool) -> None:
    """The statement class of item 23: any CREATE TABLE ... USING hoodie|hudi is taken by hoodie.sql
    (never passed to Spark, which would drop its LOCATION), with its LOCATION read exactly and any
    clause hoodie cannot honour named; other providers pass through untouched."""
    kw = f"create {'or replace ' if replace else ''}table {'if not exists ' if ine else ''}"
    head = (kw if lower else kw.upper()) + name
    col = _CLAUSES["a column list"] if clause == "a column list" else ""
    extra = _CLAUSES[clause] if clause and clause not in ("a column list", "AS SELECT") else ""
    loc = f"LOCATION '{location}'" if location is not None else ""
    body = [f"USING {using}", extra, loc] if not clause_first else [extra, f"USING {using}", loc]
    if clause == "AS SELECT":
        body.append(_CLAUSES["AS SELECT"])
    text = " ".join(x for x in [head + col, *body] if x) + (";" if semicolon else "")
    got = parse_create_table(text)
    if using.lower() not in ("hoodie", "hudi"):
        assert got is None
        return
    assert got is not None, text
    assert (got.name, got.if_not_exists, got.replace, got.using.lower()) == (name, ine, replace, using.lower())
    assert got.location == (location.replace("''", "'") if location is not None else None)
    assert got.refused == clause, text


# -- Hudi's documented forms that Spark 4.3 read otherwise (no Spark here) ---------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(key=st.from_regex(r"[a-z][a-z0-9_]{0,8}(\.[a-z0-9_]{1,8}){0,4}", fullmatch=True),
       value=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
       double=st.booleans(), spaces=st.sampled_from(["", " ", "  "]), semi=st.booleans())
def test_set_with_a_quoted_value_sets_it_without_the_quotes(key: str, value: str, double: bool, spaces: str,
                                                            semi: bool) -> None:
    """SET k = 'v' (Hudi's docs quote every value): the value as the literal means it, whatever it holds."""
    from hoodie.interfaces.sql import parse_set

    q = '"' if double else "'"
    lit = q + value.replace("\\", "\\\\").replace(q, q + q) + q
    assert parse_set(f"SET {key}{spaces}={spaces}{lit}{' ;' if semi else ''}") == (key, value)
    assert parse_set(f"SET {key} = bulk_insert") is None  # unquoted: Spark's, as written


@settings(max_examples=examples(200), deadline=None)
@given(day=st.dates(min_value=dt.date(1970, 1, 2), max_value=dt.date(2999, 12, 31)))
def test_as_of_a_date_is_that_days_midnight(day: dt.date) -> None:
    """as_of 'yyyy-MM-dd' (TIMESTAMP AS OF, as.of.instant) is the day's 00:00:00 instant, as Hudi's
    formatQueryInstant reads it; as begin/end a date stays refused (Hudi formats only time travel)."""
    from hoodie.format.slice.filters import ReadError
    from hoodie.format.slice.reader import _normalize_instant

    text = day.isoformat()
    assert _normalize_instant(text, "as_of") == day.strftime("%Y%m%d") + "000000000"
    assert _normalize_instant(text + " 00:00:00", "as_of") == day.strftime("%Y%m%d") + "000000"
    with pytest.raises(ReadError, match="is not an instant time"):
        _normalize_instant(text, "begin")
