"""Typed config keys (issue 13): one definition per key, one parsing rule per type, aliases resolved in
one place, and the configuration reference generated from the definitions."""

from __future__ import annotations

import ast
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie import configs as C
from hoodie.configs import registry
from hoodie.configs import ConfigValueError

SRC = Path(__file__).resolve().parents[1] / "src" / "hoodie"


def prop(type_: C.ConfigType[Any], default: Any = None, key: str = "hoodie.test.key",
         aliases: tuple[str, ...] = ()) -> C.ConfigProperty[Any]:
    """An unregistered property, so tests do not touch the registry."""
    return C.ConfigProperty(key, type_, default, "a test key", "test", aliases)


# -- one rule per type -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [("true", True), ("TRUE", True), ("True", True), (" false ", False),
                                         ("FaLsE", False), (True, True), (False, False)])
def test_boolean_rule_accepts_true_and_false_in_any_case(text: Any, value: bool) -> None:
    assert prop(C.BOOLEAN, False).get({"hoodie.test.key": text}) is value


@pytest.mark.parametrize("text", ["1", "0", "yes", "no", "on", "off", "t", "y", "tru", "true1", "'true'", "\u200btrue"])
def test_boolean_rule_refuses_everything_else_naming_key_value_and_choices(text: str) -> None:
    # Hudi's Boolean.parseBoolean would read each of these as false; compaction used to read 1/yes as true.
    with pytest.raises(ConfigValueError) as e:
        prop(C.BOOLEAN, False).get({"hoodie.test.key": text})
    assert f"hoodie.test.key={text.strip()!r} is not a boolean; use true or false" == str(e.value)


@pytest.mark.parametrize("text", ["", "   ", "\t\n", None])
def test_blank_value_means_unset_for_every_type(text: Any) -> None:
    for type_, default in ((C.BOOLEAN, True), (C.INT, 7), (C.Enum(("A", "B")), "B"), (C.DURATION, 1000),
                           (C.LIST, ("x",)), (C.STRING, "s"), (C.Float(), 1.5)):
        assert prop(type_, default).get({"hoodie.test.key": text}) == default


@pytest.mark.parametrize("text, value", [("42", 42), (" 42 ", 42), ("+5", 5), ("-3", -3), ("007", 7),
                                         ("2147483647", 2**31 - 1), ("-2147483648", -(2**31))])
def test_int_rule_reads_decimal_digits(text: str, value: int) -> None:
    assert prop(C.INT).get({"hoodie.test.key": text}) == value


@pytest.mark.parametrize("text, message", [
    ("1_000", "is not an integer"), ("1e3", "is not an integer"), ("1.0", "is not an integer"),
    ("0x10", "is not an integer"), ("\u0661\u0662", "is not an integer"), ("12MB", "is not an integer"),
    ("--1", "is not an integer"), ("1 2", "is not an integer"), ("inf", "is not an integer"),
    ("2147483648", "is out of range: Hudi reads it as a Java int"),
    ("-2147483649", "is out of range: Hudi reads it as a Java int"),
    pytest.param("9" * 5000, r"'9{60}'\.\.\. \(5000 characters\) is out of range", id="5000-digits"),
])
def test_int_rule_refuses_non_integers_and_values_beyond_java_int(text: str, message: str) -> None:
    # Python's int() accepts 1_000 and Arabic-Indic digits; Java's Integer.parseInt does not.
    with pytest.raises(ConfigValueError, match="hoodie.test.key=.*" + message):
        prop(C.INT).get({"hoodie.test.key": text})


def test_int_rule_bounds_and_long_range() -> None:
    assert prop(C.LONG).get({"hoodie.test.key": str(2**63 - 1)}) == 2**63 - 1
    with pytest.raises(ConfigValueError, match="out of range: Hudi reads it as a Java long"):
        prop(C.LONG).get({"hoodie.test.key": str(2**63)})
    with pytest.raises(ConfigValueError, match=r"^hoodie.test.key=-1 must not be negative$"):
        prop(C.Int(minimum=0)).get({"hoodie.test.key": "-1"})
    with pytest.raises(ConfigValueError, match=r"^hoodie.test.key=0 must be at least 1$"):
        prop(C.Int(minimum=1)).get({"hoodie.test.key": "0"})
    with pytest.raises(ConfigValueError, match=r"^hoodie.test.key=65536 must be between 1 and 65535$"):
        prop(C.Int(1, 65535)).get({"hoodie.test.key": "65536"})


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "NaN", "Infinity", "1e999", "1,5", "0x1p3", "", "five"])
def test_float_rule_refuses_non_finite_and_non_numbers(text: str) -> None:
    if not text:
        assert prop(C.Float(0.0), 2.0).get({"hoodie.test.key": text}) == 2.0
        return
    with pytest.raises(ConfigValueError, match="hoodie.test.key=.* is not a (finite )?number"):
        prop(C.Float(0.0)).get({"hoodie.test.key": text})


def test_float_rule_bounds() -> None:
    assert prop(C.Float(0.0)).get({"hoodie.test.key": " 2.5 "}) == 2.5
    assert prop(C.Float(0.0)).get({"hoodie.test.key": "1e-9"}) == 1e-9
    with pytest.raises(ConfigValueError, match="must be at least 0"):
        prop(C.Float(0.0)).get({"hoodie.test.key": "-0.5"})


def test_enum_rule_is_case_insensitive_and_returns_the_canonical_spelling() -> None:
    e = C.Enum(("NUM_COMMITS", "TIME_ELAPSED"), synonyms={"commits": "NUM_COMMITS"}, what="a trigger")
    assert prop(e).get({"hoodie.test.key": "time_elapsed"}) == "TIME_ELAPSED"
    assert prop(e).get({"hoodie.test.key": " Num_Commits "}) == "NUM_COMMITS"
    assert prop(e).get({"hoodie.test.key": "COMMITS"}) == "NUM_COMMITS"
    for bad in ("NUM_COMMIT", "NUM COMMITS", "NUM_COMMITS,TIME_ELAPSED", "1"):
        with pytest.raises(ConfigValueError) as err:
            prop(e).get({"hoodie.test.key": bad})
        assert str(err.value) == f"hoodie.test.key={bad!r} is not a trigger; use NUM_COMMITS or TIME_ELAPSED"
    codec = C.PARQUET_CODEC
    with pytest.raises(ConfigValueError, match=r"='LZO' is not a supported codec \(Arrow has no LZO codec\); use one"):
        codec.get({codec: "LZO"})


def test_duration_rule() -> None:
    d = C.Duration(minimum="PT0S", maximum="PT26H", hint="(zones)")
    assert prop(d).get({"hoodie.test.key": "pt1h"}) == 3_600_000
    assert prop(C.DURATION).get({"hoodie.test.key": "P1DT12H"}) == 36 * 3_600_000
    assert prop(C.DURATION).get({"hoodie.test.key": "1.5"}) == 36 * 3_600_000
    with pytest.raises(ConfigValueError, match="=PT27H must be between PT0S and PT26H \\(zones\\)"):
        prop(d).get({"hoodie.test.key": "PT27H"})
    for bad, message in (("P1M", "years or months"), ("7 days", "is not a duration"), ("1e-7", "is not a duration"),
                         ("9" * 40, "implausibly large")):
        with pytest.raises(ConfigValueError, match=message):
            prop(C.DURATION).get({"hoodie.test.key": bad})


def test_list_and_string_rules() -> None:
    assert prop(C.LIST).get({"hoodie.test.key": " a, b ,,c/ ,"}) == ("a", "b", "c/")
    assert prop(C.STRING).get({"hoodie.test.key": "  a b  "}) == "a b"


# -- aliases -----------------------------------------------------------------------------------------

def test_alias_is_read_and_a_conflict_names_both_keys() -> None:
    p = prop(C.INT, -1, key="hoodie.new.key", aliases=("hoodie.old.key",))
    assert p.get({"hoodie.old.key": "3"}) == 3
    assert p.get({"hoodie.new.key": "3", "hoodie.old.key": " 3"}) == 3
    assert p.get({"hoodie.new.key": "3", "hoodie.old.key": ""}) == 3  # a blank alias is unset
    with pytest.raises(ConfigValueError) as e:
        p.get({"hoodie.new.key": "3", "hoodie.old.key": "4"})
    assert str(e.value) == ("hoodie.new.key and hoodie.old.key are both set, to different values ('3', '4'); "
                            "keep only hoodie.new.key")
    with pytest.raises(ConfigValueError, match="^hoodie.old.key='x' is not an integer"):
        p.get({"hoodie.old.key": "x"})  # the message names the spelling the user wrote


def test_alias_values_are_compared_after_parsing() -> None:
    from hoodie.services.ttl.config import TTLConfig

    cfg = TTLConfig.from_options({"hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
                                  "hoodie.partition.ttl.strategy": "keep_by_event_time"})
    assert cfg.strategy_type == "KEEP_BY_EVENT_TIME"


def test_an_alias_belongs_to_one_key_and_a_key_has_one_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIAS_OWNER", dict(registry._ALIAS_OWNER))
    C.define("hoodie.test.a", 1, "doc", "test", aliases=("hoodie.test.old",), type=C.INT)
    assert C.define("hoodie.test.a", 1, "doc", "test", aliases=("hoodie.test.old",), type=C.INT).default == 1
    with pytest.raises(ValueError, match="defined twice"):
        C.define("hoodie.test.a", 2, "doc", "test", aliases=("hoodie.test.old",), type=C.INT)
    with pytest.raises(ValueError, match="alias of hoodie.test.b and also of hoodie.test.a"):
        C.define("hoodie.test.b", None, "doc", "test", aliases=("hoodie.test.old",))
    with pytest.raises(ValueError, match="defined twice"):
        C.define("hoodie.parquet.max.file.size", str(64 * 1024 * 1024), "Target base file size in bytes.", "write")
    # Every key has one definition: an untyped second definition of a typed key is refused too.
    with pytest.raises(ValueError, match="defined twice"):
        C.define("hoodie.clean.automatic", "true", "other doc", "clean")


# -- the registry ------------------------------------------------------------------------------------

def test_every_registered_key_parses_its_own_default() -> None:
    configs = C.all_configs()
    assert len(configs) > 90
    for c in configs:
        assert isinstance(c, C.ConfigProperty) and c.doc and c.group, c
        if c.default is not None:
            assert c.parse(c.default_text) == c.default, c.key
            assert c.get({}) == c.default and c.get({c.key: c.default_text}) == c.default, c.key
        assert C.lookup(c.key) is c
        for a in c.aliases:
            assert C.lookup(a) is c


def test_docs_are_generated_from_the_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    from hoodie.interfaces import docgen

    text = docgen.configuration_md()
    for c in C.all_configs():
        key = f"`{c.key}`" + (" (also " + ", ".join(f"`{a}`" for a in c.aliases) + ")" if c.aliases else "")
        default = "" if c.default_text is None else f"`{c.default_text}`"
        assert f"| {key} | {c.type.describe()} | {default} |" in text.replace("\\|", "|"), c.key
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIAS_OWNER", dict(registry._ALIAS_OWNER))
    C.define("hoodie.test.generated", "P2D", "Made by the test.", "test", aliases=("hoodie.test.older",),
             type=C.Duration(minimum="PT1H"))
    assert ("| `hoodie.test.generated` (also `hoodie.test.older`) | duration >= PT1H | `P2D` | Made by the test. |"
            in docgen.configuration_md())


def test_a_property_is_its_key() -> None:
    from hoodie.services.compaction.config import INLINE

    assert INLINE == "hoodie.compact.inline" and {"hoodie.compact.inline": "true"}[INLINE] == "true"
    assert f"{INLINE}=x" == "hoodie.compact.inline=x"
    restored = pickle.loads(pickle.dumps(INLINE))
    assert restored == INLINE and type(restored) is str


def test_reader_raises_the_services_own_error() -> None:
    from hoodie.services.compaction.config import CompactionConfig, CompactionConfigError
    from hoodie.services.ttl.config import TTLConfig, TTLConfigError

    with pytest.raises(CompactionConfigError) as e1:
        CompactionConfig.from_options({"hoodie.compact.inline": "yes"})
    with pytest.raises(TTLConfigError) as e2:
        TTLConfig.from_options({"hoodie.partition.ttl.inline": "yes"})
    for e in (e1, e2):
        assert isinstance(e.value, ConfigValueError) and isinstance(e.value, ValueError)
        assert "='yes' is not a boolean; use true or false" in str(e.value)


# -- the modules moved to the rules: the stricter cases ----------------------------------------------

@pytest.mark.parametrize("value", ["1", "yes", "0", "no", "on"])
def test_compaction_boolean_accepts_only_true_or_false(value: str) -> None:
    from hoodie.services.compaction.config import CompactionConfig, CompactionConfigError

    # Compaction read 1/yes as true and 0/no as false, unlike every other service.
    for key in ("hoodie.compact.inline", "hoodie.compact.schedule.inline", "hoodie.compaction.event.time.exact.split"):
        with pytest.raises(CompactionConfigError, match=f"{key}='{value}' is not a boolean; use true or false"):
            CompactionConfig.from_options({key: value})
    assert CompactionConfig.from_options({"hoodie.compact.inline": "TRUE"}).inline is True


@pytest.mark.parametrize("key, value, message", [
    ("hoodie.compact.inline.max.delta.commits", "99999999999", "is out of range: Hudi reads it as a Java int"),
    ("hoodie.compact.inline.max.delta.commits", "1_0", "is not an integer"),
    ("hoodie.compaction.async.interval.seconds", "inf", "='inf' is not a number"),
    ("hoodie.compaction.async.interval.seconds", "1e999", "='1e999' is not a finite number"),
    ("hoodie.parquet.max.file.size", "1e9", "is not an integer"),
    ("hoodie.metrics.pushgateway.port", "0", "must be between 1 and 65535"),
])
def test_compaction_numbers_follow_the_int_and_number_rules(key: str, value: str, message: str) -> None:
    from hoodie.services.compaction.config import CompactionConfig, CompactionConfigError

    with pytest.raises(CompactionConfigError, match=message):
        CompactionConfig.from_options({key: value, "hoodie.metrics.pushgateway.host": "gw"})


def test_metrics_port_is_checked_by_the_int_rule() -> None:
    from hoodie.metrics import push_target

    assert push_target({"hoodie.metrics.pushgateway.host": "gw"}) == "http://gw:9091"
    assert push_target({"hoodie.metrics.pushgateway.host": "gw", "hoodie.metrics.pushgateway.port": " 9092 "}) \
        == "http://gw:9092"
    # Used to build http://gw:abc and fail inside urllib after the commit ("nonnumeric port").
    with pytest.raises(ConfigValueError, match="hoodie.metrics.pushgateway.port='abc' is not an integer"):
        push_target({"hoodie.metrics.pushgateway.host": "gw", "hoodie.metrics.pushgateway.port": "abc"})


def test_lock_keys_follow_the_rules(tmp_path: Path) -> None:
    from hoodie.format.lock import IN_PROCESS, LockError, TableLock
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    assert TableLock(st, {"hoodie.write.lock.provider": "In_Process"}).provider == IN_PROCESS
    with pytest.raises(LockError, match="wait_time_ms='99999999999999999999' is out of range"):
        TableLock(st, {"hoodie.write.lock.wait_time_ms": "99999999999999999999"})
    with pytest.raises(LockError, match="wait_time_ms=-5 must not be negative"):
        TableLock(st, {"hoodie.write.lock.wait_time_ms": "-5"})


def test_ttl_int_keys_refuse_values_beyond_java_int() -> None:
    from hoodie.services.ttl.config import TTLConfig, TTLConfigError

    with pytest.raises(TTLConfigError, match="max.delete.partitions='3000000000' is out of range"):
        TTLConfig.from_options({"hoodie.partition.ttl.strategy.max.delete.partitions": "3000000000"})
    with pytest.raises(TTLConfigError, match="stash.retain.days=-1 must not be negative"):
        TTLConfig.from_options({"hoodie.partition.ttl.stash.retain.days": "-1"})


def test_one_definition_per_shared_key() -> None:
    from hoodie.format.slice import eventtime
    from hoodie.format.lock import PROVIDER
    from hoodie.services.compaction import config as CC
    from hoodie.services.compaction import keys as K
    from hoodie.services.ttl import config as TC
    from hoodie.services.ttl import keys as TK

    assert CC.PARQUET_MAX_FILE_SIZE is C.PARQUET_MAX_FILE_SIZE
    assert CC.CompactionConfig().parquet_max_file_size == C.PARQUET_MAX_FILE_SIZE.default == 120 * 1024 * 1024
    assert CC.EVENT_TIME_THRESHOLD == K.THRESHOLD_KEY and C.lookup(K.THRESHOLD_KEY) is CC.EVENT_TIME_THRESHOLD
    assert eventtime.UNIT_KEY is C.EVENT_TIME_UNIT and CC.EVENT_TIME_UNIT is C.EVENT_TIME_UNIT
    assert TC.TIMELINE_TIMEZONE is C.TIMELINE_TIMEZONE and TC.DAYS_RETAIN is TK.DAYS_RETAIN
    assert C.lookup("hoodie.metrics.pushgateway.port") is CC.HUDI_PUSHGATEWAY_PORT
    assert C.lookup(PROVIDER) is PROVIDER


def test_every_key_is_defined_in_the_config_package() -> None:
    """``define`` is called only in ``hoodie/configs/`` (issue 32): a key defined in a service module
    would be missing from the registry until that module happened to be imported."""
    outside = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "configs" and path.parent.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name == "define":
                    outside.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not outside, f"config keys defined outside hoodie/configs/: {outside}"


def test_the_registry_holds_every_key_without_importing_the_services() -> None:
    """A fresh interpreter that imports only hoodie.configs knows every key (no service module loaded):
    the unknown-key warning of a reader-only process must not call a data-skipping key unknown."""
    code = ("import sys; from hoodie import configs as C; keys = C.known_keys(); "
            "print(len(C.all_configs()), 'hoodie.enable.data.skipping' in keys, 'hoodie.write.lock.provider' in keys, "
            "'hoodie.partition.ttl.inline' in keys, "
            "sorted(m for m in sys.modules if m.startswith(('hoodie.services', 'hoodie.format'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout.split(" ", 4)
    assert int(out[0]) == len(C.all_configs()) and out[1:4] == ["True", "True", "True"]
    assert out[4].strip() == "[]"


@pytest.mark.parametrize("text, value", [
    ("1714521600000", 1714521600000), ("2024-05-01T00:00:00Z", 1714521600000), ("2024-05-01", 1714521600000),
    ("2024-05-01T02:00:00+02:00", 1714521600000), ("5", 5), (" 1714521600000 ", 1714521600000),
])
def test_epoch_millis_rule_reads_epoch_ms_or_iso(text: str, value: int) -> None:
    assert prop(C.EpochMillis()).get({"hoodie.test.key": text}) == value


@pytest.mark.parametrize("text, message", [
    ("1714521600", ("^hoodie.test.key=1714521600 read as epoch milliseconds is 1970-01-20T20:15:21.600Z; it looks "
                    "like SECONDS: give epoch milliseconds or ISO-8601")),
    ("1714521600000000", "it looks like MICROSECONDS"),
    ("9" * 30, "is beyond year 9999: give epoch milliseconds"),
    ("yesterday", "^hoodie.test.key='yesterday' is neither epoch milliseconds nor ISO-8601"),
    ("+1714521600000", "is neither epoch milliseconds nor ISO-8601"), ("\u0662", "is neither"),
])
def test_epoch_millis_rule_refuses_other_units_and_non_times(text: str, message: str) -> None:
    with pytest.raises(ConfigValueError, match=message):
        prop(C.EpochMillis()).get({"hoodie.test.key": text})


def test_ttl_predicate_and_config_do_not_import_each_other() -> None:
    def imports(path: Path) -> set[str]:
        tree = ast.parse(path.read_text())
        return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}

    ttl = SRC / "services" / "ttl"
    assert "hoodie.services.ttl.config" not in imports(ttl / "predicate.py")
    assert not {m for m in imports(ttl / "keys.py") if m.startswith("hoodie.services")}


# -- the rule set, generated -------------------------------------------------------------------------

RULES: list[C.ConfigType[Any]] = [
    C.BOOLEAN, C.INT, C.LONG, C.Int(0, 100), C.Int(minimum=1, bits=64), C.Float(), C.Float(0.0, 1.0),
    C.Enum(("avro", "parquet")), C.Enum(("A", "B", "C"), synonyms={"x": "A"}), C.DURATION,
    C.Duration(minimum="PT0S", maximum="PT26H"), C.LIST, C.STRING, C.EpochMillis(),
]
_texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["true", "FALSE", "1", "yes", "-0", "+7", "1e3", "nan", "inf", "P1D", "pt1h", "a,b", "avro",
                     "PARQUET", "x", "2147483648", "-9223372036854775809", "0.5", " 12 ", "1_0", "P1M"]),
    st.integers(-(2**70), 2**70).map(str),
    st.integers(-(2**45), 2**45).map(str),  # epoch seconds, milliseconds and microseconds of 1970-2200
    st.datetimes().map(lambda d: d.isoformat()),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)


@settings(max_examples=300, deadline=None)
@given(rule=st.sampled_from(RULES), text=_texts)
def test_every_rule_reads_a_value_back_or_refuses_naming_the_key(rule: C.ConfigType[Any], text: str) -> None:
    p = prop(rule)
    try:
        value = p.get({"hoodie.test.key": text})
    except ConfigValueError as e:
        assert str(e).startswith("hoodie.test.key=") and text.strip()
        return
    if not text.strip():
        assert value is None
        return
    # A value the rule accepts is written back as text the rule reads to the same value.
    assert p.parse(rule.format(value)) == value
    if isinstance(rule, C.Bool):
        assert text.strip().lower() in ("true", "false")
    if isinstance(rule, C.Int):
        assert rule.minimum <= value <= rule.maximum and str(value) == str(int(text.strip()))
