"""TTL configuration units: keys and aliases, durations (no overflow), rules and their overlap
resolution, the predicate language and Java-style time patterns."""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal, localcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.services.ttl.config import (
    DAY_MS, MIN_RETENTION_MS, TTLConfig, TTLConfigError, format_duration, parse_duration_ms, parse_options_string,
    parse_retention_ms, parse_rules,
)
from hoodie.services.ttl.predicate import PredicateError, parse_predicate
from hoodie.services.ttl.timeformat import TimePattern, zone
from tests.helpers import examples


def test_days_to_millis_uses_integer_arithmetic() -> None:
    # Hudi's KeepByTimeStrategy multiplied ints: 25 days overflowed to -2134967296 (PR #19075).
    assert TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "25"}).retention_ms == 2_160_000_000
    assert TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "10000"}).retention_ms \
        == 864_000_000_000
    assert TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "0"}).retention_ms == 0
    assert parse_duration_ms("P10000D") == 10000 * DAY_MS


@pytest.mark.parametrize("text,ms", [
    ("P7D", 7 * DAY_MS), ("PT36H", 36 * 3_600_000), ("P1DT12H", 36 * 3_600_000), ("P2W", 14 * DAY_MS),
    ("PT90M", 90 * 60_000), ("PT1.5S", 1500), ("30", 30 * DAY_MS), ("1.5", 36 * 3_600_000), ("p1d", DAY_MS),
])
def test_durations(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["P1M", "P1Y", "P", "PT", "7 days", "", "P1DT"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(TTLConfigError):
        parse_duration_ms(text)


@given(st.integers(0, 10**13))
@settings(max_examples=examples(100))
def test_duration_format_roundtrip(ms: int) -> None:
    assert parse_duration_ms(format_duration(ms)) == ms


DAYS = "hoodie.partition.ttl.strategy.days.retain"
RETENTION = "hoodie.partition.ttl.strategy.retention"


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "NaN", "Infinity", "1e-7", "0.0000001", "1.5", "30.0",
                                   "1e300", "2147483648", "-2147483649", pytest.param("9" * 5000, id="5000-digits"),
                                   "thirty", "P30D"])
def test_days_retain_refuses_non_integers_naming_the_key_and_the_fix(value: str) -> None:
    # inf/nan used to raise a raw OverflowError/ValueError; 1e-7 was accepted as 9 ms and expired a
    # partition written 2 s earlier. Hudi reads days.retain as a Java int.
    with pytest.raises(TTLConfigError) as e:
        TTLConfig.from_options({DAYS: value})
    assert type(e.value) is TTLConfigError and DAYS in str(e.value)
    assert "=30" in str(e.value)


@pytest.mark.parametrize("value", ["PT1S", "PT59M", "0.0000001", "0.04", "P0D", "0", "-3", "PT0.0001S"])
def test_retention_below_one_hour_is_refused(value: str) -> None:
    with pytest.raises(TTLConfigError, match="at least PT1H"):
        TTLConfig.from_options({RETENTION: value})
    with pytest.raises(TTLConfigError, match="at least PT1H"):
        parse_rules(f"p=*:{value}")
    assert parse_retention_ms("PT1H") == MIN_RETENTION_MS


def test_procedure_days_arguments_are_whole_days() -> None:
    from hoodie.services.ttl import call_manage_partition_ttl, call_run_ttl

    for bad in (float("inf"), float("nan"), 1e-7, 2.5, True):
        with pytest.raises(TTLConfigError, match="not a whole number of days"):
            call_run_ttl("/nonexistent/t", retain_days=bad)  # type: ignore[arg-type]
        with pytest.raises(TTLConfigError, match="not a whole number of days"):
            call_manage_partition_ttl("/nonexistent/t", days_retain=bad)  # type: ignore[arg-type]


_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0, max_value=1e-3),  # tiny
    st.floats(min_value=1e6, max_value=1e308),  # huge
    st.integers(-(10**40), 10**40),
    st.integers(-5, 40),
)
_spellings = _numbers.flatmap(lambda x: st.sampled_from(
    [repr(x), str(x), f"{x:e}", f"{x:.9f}" if isinstance(x, float) else str(x), f" {x} ", f"P{x}D", f"PT{x}H"]))
retention_texts = st.one_of(_spellings, st.text(max_size=10),
                            st.from_regex(r"\A[+-]?[0-9]{0,12}(\.[0-9]{0,12})?\Z"))


@given(retention_texts, st.sampled_from([DAYS, RETENTION, "rule"]))
@settings(max_examples=examples(400), deadline=None)
def test_retention_values_are_validated_or_exact(text: str, key: str) -> None:
    """Every retention text is either refused with a TTLConfigError naming the key, or gives an
    exact, plausible number of milliseconds; no other exception ever escapes."""
    try:
        if key == "rule":
            ms = parse_rules(f"p=*:{text}")[0].retention_ms if text.strip() else None
        else:
            cfg = TTLConfig.from_options({key: text})
            ms = cfg.retention_ms
    except TTLConfigError as e:
        assert type(e) is TTLConfigError
        assert ("hoodie.partition.ttl" in str(e)), str(e)
        if key == DAYS:
            # A Java int is always accepted.
            stripped = text.strip()
            assert not (stripped.lstrip("+-").isascii() and stripped.lstrip("+-").isdigit()
                        and -(2**31) <= int(stripped) < 2**31)
        return
    if ms is None:
        return  # an empty value means "not set"
    assert isinstance(ms, int)
    if key == DAYS:
        assert ms == int(text.strip()) * DAY_MS and -(2**31) <= int(text.strip()) < 2**31
    else:
        assert ms >= MIN_RETENTION_MS
        if not text.strip().upper().startswith("P"):
            with localcontext(prec=200):
                assert ms == round(Decimal(text.strip()) * DAY_MS)


def test_aliases_and_conflicts() -> None:
    rfc = TTLConfig.from_options({"hoodie.partition.ttl.strategy": "keep_by_creation_time",
                                  "hoodie.partition.ttl.days.retain": "3",
                                  "hoodie.partition.ttl.partition.selected": "a, b/c/"})
    assert rfc.strategy_type == "KEEP_BY_CREATION_TIME" and rfc.retention_ms == 3 * DAY_MS
    assert rfc.selected == ("a", "b/c")
    with pytest.raises(TTLConfigError, match="both set"):
        TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "3",
                                "hoodie.partition.ttl.days.retain": "4"})
    with pytest.raises(TTLConfigError, match="disagree"):
        TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "3",
                                "hoodie.partition.ttl.strategy.retention": "P4D"})
    same = TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "2",
                                   "hoodie.partition.ttl.strategy.retention": "PT48H"})
    assert same.retention_ms == 2 * DAY_MS
    with pytest.raises(TTLConfigError, match="KEEP_BY_TIME, KEEP_BY_CREATION_TIME, KEEP_BY_EVENT_TIME"):
        TTLConfig.from_options({"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_SIZE"})
    with pytest.raises(TTLConfigError, match="START or END"):
        TTLConfig.from_options({"hoodie.partition.ttl.strategy.event.time.age.from": "MIDDLE"})


def test_retention_required() -> None:
    with pytest.raises(TTLConfigError, match="no retention is set"):
        TTLConfig.from_options({}).require_retention()
    with pytest.raises(TTLConfigError, match="keeps nothing"):
        TTLConfig.from_options({"hoodie.partition.ttl.strategy.days.retain": "-1"}).require_retention()
    TTLConfig.from_options({"hoodie.partition.ttl.rules": "a=*:P1D"}).require_retention()


def test_rules_formats_and_most_specific_wins() -> None:
    compact = parse_rules("product=1/*:30; product=2/*:P7D ;product=*/day=2024-01-0?:PT12H")
    as_json = parse_rules('[{"partition": "product=1/*", "retention": 30}, {"partition": "product=2/*", '
                          '"retention": "P7D"}, {"spec": "product=*/day=2024-01-0?", "days": "PT12H"}]')
    assert [(r.pattern, r.retention_ms) for r in compact] == [(r.pattern, r.retention_ms) for r in as_json]
    cfg = TTLConfig.from_options({"hoodie.partition.ttl.rules": "product=1/*:30;product=2/*:P7D;"
                                                                "product=*/day=2024-01-0?:PT12H",
                                  "hoodie.partition.ttl.strategy.days.retain": "100"})
    assert cfg.retention_for("product=1/day=2023-05-05")[0] == 30 * DAY_MS
    assert cfg.retention_for("product=2/day=2023-05-05")[0] == 7 * DAY_MS
    # Overlap: 'product=*/day=2024-01-0?' has more literal characters than 'product=1/*'.
    ms, rule = cfg.retention_for("product=1/day=2024-01-05")
    assert ms == 12 * 3_600_000 and "rule #3" in rule
    ms, rule = cfg.retention_for("product=3/day=2023-01-01")
    assert ms == 100 * DAY_MS and rule.startswith("default")
    # Equally specific rules: the first listed wins.
    tie = TTLConfig.from_options({"hoodie.partition.ttl.rules": "a=*/b:1;a/b=*:2"})
    assert tie.retention_for("a=x/b")[0] == DAY_MS
    assert TTLConfig.from_options({"hoodie.partition.ttl.rules": "a=*/b:1"}).retention_for("c") is None
    deep = TTLConfig.from_options({"hoodie.partition.ttl.rules": "region=eu/**:2"})
    assert deep.retention_for("region=eu/x/y/z")[0] == 2 * DAY_MS
    assert deep.retention_for("region=us/x") is None


@pytest.mark.parametrize("text,match", [
    ("a:0", "positive"), ("[1,2]", "must be an object"), ('[{"partition": "a"}]', "needs"), ("noseparator", "glob:duration"),
    ("[a:1", "valid JSON"),
])
def test_bad_rules(text: str, match: str) -> None:
    with pytest.raises(TTLConfigError, match=match):
        parse_rules(text)


def test_options_string() -> None:
    assert parse_options_string("a=1, b = x=y ,") == {"a": "1", "b": "x=y"}
    with pytest.raises(TTLConfigError):
        parse_options_string("novalue")


# -- predicate -------------------------------------------------------------------------------------

FIELDS = ["productid", "region", "day"]


def sel(expr: str, **values: object) -> bool:
    return parse_predicate(expr).bind(FIELDS)({k: (None if v is None else str(v)) for k, v in values.items()})


def test_predicate_semantics() -> None:
    assert sel("productid = 1", productid="1")
    assert sel("productid = 1", productid="01")  # numeric comparison
    assert not sel("productid = 1", productid="2")
    assert sel("ProductId == '1'", productid="1")  # columns are case-insensitive
    assert sel("region IN ('eu','us') AND day < '2024-01-01'", region="eu", day="2023-12-31")
    assert not sel("region IN ('eu','us') AND day < '2024-01-01'", region="eu", day="2024-01-01")
    assert not sel("region IN ('eu','us') AND day < '2024-01-01'", region="apac", day="2023-01-01")
    assert sel("region NOT IN ('eu') OR productid >= 10", region="eu", productid="12")
    assert sel("NOT (region = 'eu')", region="us")
    assert sel("region != 'eu' and day <= '2024-01-01'", region="us", day="2024-01-01")
    assert sel("region <> 'eu'", region="us")
    assert sel("day LIKE '2024-01-%'", day="2024-01-15")
    assert not sel("day LIKE '2024-01-%'", day="2024-02-15")
    assert sel("day NOT LIKE '2024-__-01'", day="2024-01-15")
    assert sel("productid BETWEEN 2 AND 4", productid="3")
    assert sel("productid > 2 and productid < 4 or region = 'x'", productid="3", region="y")
    assert sel("`region` = \"eu\"", region="eu")
    assert sel("day = 'it''s'", day="it's")


def test_predicate_nulls_are_three_valued() -> None:
    # The default partition is NULL: comparisons are unknown, so neither p nor NOT p selects it.
    assert not sel("region = 'eu'", region=None)
    assert not sel("NOT (region = 'eu')", region=None)
    assert sel("region IS NULL", region=None)
    assert sel("region IS NOT NULL", region="eu")
    assert sel("region = 'eu' OR productid = 1", region=None, productid="1")
    # A non-numeric value compared with a number is unknown, as in Spark.
    assert not sel("productid = 1", productid="abc")
    assert not sel("NOT productid = 1", productid="abc")


@pytest.mark.parametrize("expr,match", [
    ("", "empty"), ("productid =", "position"), ("productid = 1 AND", "position"), ("(productid = 1", "'\\)'"),
    ("productid IN 1", "'\\('"), ("day LIKE 5", "LIKE pattern"), ("productid ~ 1", "unexpected character"),
    ("productid", "comparison"), ("region = 'eu' 'x'", "AND, OR"),
])
def test_predicate_syntax_errors(expr: str, match: str) -> None:
    with pytest.raises(PredicateError, match=match):
        parse_predicate(expr)


def test_predicate_unknown_column_is_named() -> None:
    with pytest.raises(PredicateError, match="column 'city'.*partition columns: productid, region, day"):
        parse_predicate("city = 'sf'").bind(FIELDS)
    with pytest.raises(TTLConfigError, match="position"):
        TTLConfig.from_options({"hoodie.partition.ttl.strategy.partition.predicate": "a = "})


# -- time patterns ---------------------------------------------------------------------------------

UTC = _dt.timezone.utc


def ms(*args: int, tz: _dt.tzinfo = UTC) -> int:
    return int(_dt.datetime(*args, tzinfo=tz).timestamp() * 1000)


@pytest.mark.parametrize("pattern,text,start,end", [
    ("yyyy-MM-dd", "2024-02-28", (2024, 2, 28), (2024, 2, 29)),
    ("yyyy/MM/dd/HH", "2024/12/31/23", (2024, 12, 31, 23), (2025, 1, 1, 0)),
    ("yyyyMMdd", "20240101", (2024, 1, 1), (2024, 1, 2)),
    ("yyyy-MM", "2024-12", (2024, 12, 1), (2025, 1, 1)),
    ("yyyy", "2023", (2023, 1, 1), (2024, 1, 1)),
    ("yyyy-MM-dd'T'HH", "2024-01-01T05", (2024, 1, 1, 5), (2024, 1, 1, 6)),
    ("dd-MMM-yyyy", "05-Mar-2024", (2024, 3, 5), (2024, 3, 6)),
    ("yyyyMMddHHmm", "202401011230", (2024, 1, 1, 12, 30), (2024, 1, 1, 12, 31)),
])
def test_time_patterns(pattern: str, text: str, start: tuple, end: tuple) -> None:
    assert TimePattern(pattern).parse(text, UTC) == (ms(*start), ms(*end))


def test_time_pattern_segments_zones_and_errors() -> None:
    assert TimePattern("yyyy/MM/dd/HH").segment_count == 4
    assert TimePattern("yyyy-MM-dd").parse("2024-13-01", UTC) is None
    assert TimePattern("yyyy-MM-dd").parse("2024-01-1x", UTC) is None
    shanghai = zone("Asia/Shanghai")
    assert TimePattern("yyyy-MM-dd").parse("2024-01-01", shanghai)[0] == ms(2023, 12, 31, 16)
    assert TimePattern("yyyy-MM-dd").parse("2024-01-01", zone("+08:00"))[0] == ms(2023, 12, 31, 16)
    # A DST day in Paris lasts 23 hours.
    s, e = TimePattern("yyyy-MM-dd").parse("2024-03-31", zone("Europe/Paris"))
    assert e - s == 23 * 3_600_000
    with pytest.raises(TTLConfigError, match="not a time zone"):
        zone("Mars/Olympus")
    with pytest.raises(TTLConfigError, match="letter 'Q'"):
        TimePattern("yyyy-QQ")
    with pytest.raises(TTLConfigError, match="no year"):
        TimePattern("MM-dd")
