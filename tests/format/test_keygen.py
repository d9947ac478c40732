"""Key generators against Java-written tables and Hudi's rules."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.format.keys import common as K_common
from hoodie.format.keys import generators as K_generators
from hoodie.format.keys import java_text as K_java_text
from hoodie.format.keys import joda as K_joda
from hoodie.format.keys import paths as K_paths
from hoodie.format.properties import parse_properties
from tests.conftest import fixture_table_path
from tests.helpers import examples

FIXTURE_TABLES = [
    "quickstart_trips_table_mor_avro_v6_trips_8i1u",
    "sample_table_cow_v6_complexkeygen_hivestyle",
    "sample_table_cow_v6_nonpartitioned",
    "sample_table_cow_v6_simplekeygen_nonhivestyle_overwritetable",
    "sample_table_mor_parquet_v6_nonpartitioned_rollback",
    "sample_table_mor_parquet_v6_simplekeygen_nonhivestyle",
]


def _props(root: Path, stem: str) -> dict[str, str]:
    return parse_properties((fixture_table_path(root, stem) / ".hoodie" / "hoodie.properties").read_text())


def _base_files(root: Path, stem: str) -> list[Path]:
    return sorted(p for p in fixture_table_path(root, stem).rglob("*.parquet"))


# ------------------------------------------------------------------ Java-written tables

@pytest.mark.parametrize("stem", FIXTURE_TABLES)
def test_meta_columns_of_fixture_base_files(fixtures_root: Path, stem: str) -> None:
    props = _props(fixtures_root, stem)
    gen = K_generators.key_generator_from_config(props)
    assert gen.java_class_name == props[K_common.TABLE_KEYGENERATOR_CLASS]
    files = _base_files(fixtures_root, stem)
    assert files
    for f in files:
        t = pq.read_table(f)
        data = t.drop_columns([c for c in t.column_names if c.startswith("_hoodie_")])
        keys, paths = gen.keys(data)
        assert keys.to_pylist() == t.column("_hoodie_record_key").to_pylist(), f.name
        assert paths.to_pylist() == t.column("_hoodie_partition_path").to_pylist(), f.name
        # The partition path is also the folder the file lives in.
        rel = f.parent.relative_to(fixture_table_path(fixtures_root, stem)).as_posix()
        assert set(paths.to_pylist()) == {"" if rel == "." else rel}


@pytest.mark.parametrize("stem", FIXTURE_TABLES + ["sample_table_cow_v6_empty"])
def test_meta_columns_of_fixture_snapshot(fixtures_root: Path, stem: str) -> None:
    """The gold snapshot (Spark's read, log records merged in) carries Hudi's keys too."""
    gold = sorted((fixtures_root / stem / "gold_data").glob("*.parquet"))
    t = pq.read_table(gold[0])
    gen = K_generators.key_generator_from_config(_props(fixtures_root, stem))
    keys, paths = gen.keys(t)
    assert keys.to_pylist() == t.column("_hoodie_record_key").to_pylist()
    assert paths.to_pylist() == t.column("_hoodie_partition_path").to_pylist()


def test_fixture_partition_values_round_trip(fixtures_root: Path) -> None:
    stem = "sample_table_cow_v6_complexkeygen_hivestyle"
    gen = K_generators.key_generator_from_config(_props(fixtures_root, stem))
    for f in _base_files(fixtures_root, stem):
        t = pq.read_table(f)
        path = t.column("_hoodie_partition_path")[0].as_py()
        vals = K_paths.partition_values(path, gen.partition_path_fields, gen.hive_style)
        assert vals == {"byteField": str(t.column("byteField")[0].as_py()),
                        "shortField": str(t.column("shortField")[0].as_py())}


# ------------------------------------------------------------------ Java value rendering

def test_java_rendering_of_types() -> None:
    js = K_java_text.java_strings
    assert js(pa.array([1, -2, None], pa.int8())).to_pylist() == ["1", "-2", None]
    assert js(pa.array([2**62], pa.int64())).to_pylist() == [str(2**62)]
    assert js(pa.array([True, False])).to_pylist() == ["true", "false"]
    assert js(pa.array([1.0, 0.5, 1e7, 1.5e-4, 123.456, -0.0, float("nan"), float("inf")])).to_pylist() == [
        "1.0", "0.5", "1.0E7", "1.5E-4", "123.456", "-0.0", "NaN", "Infinity"]
    assert js(pa.array([0.1, 1.0, 16777216.0], pa.float32())).to_pylist() == ["0.1", "1.0", "1.6777216E7"]
    dec = pa.array([decimal.Decimal("12345.67890"), decimal.Decimal("0.00001")], pa.decimal128(10, 5))
    assert js(dec).to_pylist() == ["12345.67890", "0.00001"]
    # BigDecimal.toString switches to scientific notation below 1E-6.
    assert js(pa.array([decimal.Decimal("1E-10")], pa.decimal128(20, 10))).to_pylist() == ["1E-10"]
    assert js(pa.array([dt.date(2023, 4, 1)])).to_pylist() == ["2023-04-01"]
    ts = pa.array([dt.datetime(2023, 4, 1, 17, 1, 0, 120000)], pa.timestamp("us", tz="UTC"))
    assert js(ts).to_pylist() == ["1680368460120000"]  # Avro timestamp-micros: the raw long
    assert js(ts, consistent_logical_timestamp=True).to_pylist() == ["2023-04-01 17:01:00.12"]
    assert js(pa.array([0], pa.timestamp("ms", tz="UTC")), consistent_logical_timestamp=True).to_pylist() == [
        "1970-01-01 00:00:00.0"]
    assert js(pa.array([-1], pa.timestamp("ms", tz="UTC")), consistent_logical_timestamp=True).to_pylist() == [
        "1969-12-31 23:59:59.999"]
    assert js(pa.array(["a", ""]).dictionary_encode()).to_pylist() == ["a", ""]
    with pytest.raises(ValueError, match="cannot be a Hudi key"):
        js(pa.array([b"x"]), what="record key field 'b'")


@settings(max_examples=examples(50), deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_java_double_to_string_property(v: float) -> None:
    s = K_java_text.java_double_to_string(v)
    assert float(s) == v and math.copysign(1, float(s)) == math.copysign(1, v)
    mag = abs(v)
    if v == 0 or 1e-3 <= mag < 1e7:
        assert re.fullmatch(r"-?\d+\.\d+", s), s
    else:
        assert re.fullmatch(r"-?\d\.\d+E-?\d+", s), s


# ------------------------------------------------------------------ record keys

def _table(**cols) -> pa.Table:
    return pa.table(cols)


def test_simple_record_key_and_errors() -> None:
    gen = K_generators.SimpleKeyGenerator("id", "p")
    assert gen.record_keys(_table(id=pa.array([1, 2]), p=pa.array(["a", "b"]))).to_pylist() == ["1", "2"]
    with pytest.raises(ValueError, match=r"record key field 'id' is null or empty in 2 of 3 rows"):
        gen.record_keys(_table(id=pa.array(["x", None, ""]), p=pa.array(["a", "b", "c"])))


def test_complex_record_key() -> None:
    gen = K_generators.ComplexKeyGenerator(["id", "name"], ["p"])
    t = _table(id=pa.array([1, None, 3]), name=pa.array(["Alice", "Bob", ""]), p=pa.array(["x"] * 3))
    assert gen.record_keys(t).to_pylist() == ["id:1,name:Alice", "id:__null__,name:Bob", "id:3,name:__empty__"]
    with pytest.raises(ValueError, match=r"record key fields \['id', 'name'\] are all null or empty in 1 of 2"):
        gen.record_keys(_table(id=pa.array([None, 1]), name=pa.array(["", "a"]), p=pa.array(["x", "y"])))


def test_complex_single_field_encoding() -> None:
    t = _table(id=pa.array([7]), p=pa.array(["x"]))
    assert K_generators.ComplexKeyGenerator("id", "p").record_keys(t).to_pylist() == ["id:7"]
    assert K_generators.ComplexKeyGenerator("id", "p", encode_single_key_field_name=False).record_keys(t).to_pylist() == ["7"]
    gen = K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p",
                                       K_common.KEYGENERATOR_TYPE: "COMPLEX", K_common.COMPLEX_KEYGEN_NEW_ENCODING: "true"})
    assert gen.record_keys(t).to_pylist() == ["7"]


def test_nonpartitioned_keys() -> None:
    t = _table(id=pa.array([1, 2]), name=pa.array(["a", None]))
    one = K_generators.NonpartitionedKeyGenerator("id")
    assert one.record_keys(t).to_pylist() == ["1", "2"]
    assert one.partition_paths(t).to_pylist() == ["", ""]
    assert K_generators.NonpartitionedKeyGenerator("id,name").record_keys(t).to_pylist() == ["id:1,name:a", "id:2,name:__null__"]
    assert K_generators.GlobalDeleteKeyGenerator("id").record_keys(t).to_pylist() == ["id:1", "id:2"]


def test_nested_dictionary_and_chunked_columns() -> None:
    s = pa.array([{"k": 1}, {"k": 2}], pa.struct([("k", pa.int64())]))
    chunked = pa.chunked_array([pa.array(["a"]).dictionary_encode(), pa.array(["b"]).dictionary_encode()])
    t = pa.table({"s": s, "p": chunked})
    keys, paths = K_generators.SimpleKeyGenerator("s.k", "p").keys(t)
    assert keys.to_pylist() == ["1", "2"] and paths.to_pylist() == ["a", "b"]


# ------------------------------------------------------------------ partition paths

def test_partition_path_default_and_hive_style() -> None:
    t = _table(id=pa.array([1, 2, 3]), a=pa.array(["x", None, ""]), b=pa.array([1, 2, None]))
    assert K_generators.SimpleKeyGenerator("id", "a").partition_paths(t).to_pylist() == [
        "x", "__HIVE_DEFAULT_PARTITION__", "__HIVE_DEFAULT_PARTITION__"]
    assert K_generators.SimpleKeyGenerator("id", "a", hive_style=True).partition_paths(t).to_pylist() == [
        "a=x", "a=__HIVE_DEFAULT_PARTITION__", "a=__HIVE_DEFAULT_PARTITION__"]
    assert K_generators.ComplexKeyGenerator("id", "a,b", hive_style=True).partition_paths(t).to_pylist() == [
        "a=x/b=1", "a=__HIVE_DEFAULT_PARTITION__/b=2", "a=__HIVE_DEFAULT_PARTITION__/b=__HIVE_DEFAULT_PARTITION__"]
    assert K_generators.ComplexKeyGenerator("id", "a,b").partition_paths(t).to_pylist() == [
        "x/1", "__HIVE_DEFAULT_PARTITION__/2", "__HIVE_DEFAULT_PARTITION__/__HIVE_DEFAULT_PARTITION__"]


def test_url_encoding() -> None:
    vals = ["2024/01/01", "a:b=c", "100%", "x y", "é#?", "a\tb", "[1]^{2}*'\"\\", None]
    t = _table(id=pa.array(range(len(vals))), p=pa.array(vals))
    assert K_generators.SimpleKeyGenerator("id", "p", hive_style=True, url_encode=True).partition_paths(t).to_pylist() == [
        "p=2024%2F01%2F01", "p=a%3Ab%3Dc", "p=100%25", "p=x y", "p=é%23%3F", "p=a%09b",
        "p=%5B1%5D%5E%7B2}%2A%27%22%5C", "p=__HIVE_DEFAULT_PARTITION__"]
    # Without encoding the values go into the path as they are.
    assert K_generators.SimpleKeyGenerator("id", "p").partition_paths(t).to_pylist()[0] == "2024/01/01"


@settings(max_examples=examples(50), deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_escape_unescape_round_trip(value: str) -> None:
    escaped = K_java_text.escape_path_name(value)
    assert "/" not in escaped and "=" not in escaped
    assert K_java_text.unescape_path_name(escaped) == value
    assert K_paths.partition_values(f"f={escaped}", ["f"], True, url_encoded=True) == {"f": value}


def test_unescape_java_quirks() -> None:
    assert K_java_text.unescape_path_name("a%2Fb%3a") == "a/b:"
    assert K_java_text.unescape_path_name("%zz%41x%4") == "%zzAx%4"  # not hex / too short: kept literally
    assert K_java_text.unescape_path_name("%+A") == "\n"  # Integer.parseInt("+A", 16) == 10
    assert K_java_text.escape_path_name("") == "__HIVE_DEFAULT_PARTITION__"


def test_partition_values() -> None:
    pv = K_paths.partition_values
    assert pv("byteField=10/shortField=300", ["byteField", "shortField"], True) == {
        "byteField": "10", "shortField": "300"}
    assert pv("10", ["byteField"], False) == {"byteField": "10"}
    assert pv("2024/01/02", ["ts"], False) == {"ts": "2024/01/02"}  # one field keeps its slashes
    assert pv("dt=2024/01/02", ["dt"], True) == {"dt": "2024/01/02"}
    assert pv("a=__HIVE_DEFAULT_PARTITION__/b=x%2Fy", ["a", "b"], True, url_encoded=True) == {"a": None, "b": "x/y"}
    assert pv("", [], False) == {}
    with pytest.raises(ValueError, match="2 partition field"):
        pv("a=1", ["a", "b"], True)
    with pytest.raises(ValueError, match="expected segment b=<value>"):
        pv("a=1/c=2", ["a", "b"], True)


# ------------------------------------------------------------------ configuration

def test_inference_and_types() -> None:
    def kind(**cfg):
        return type(K_generators.key_generator_from_config(cfg)).__name__

    assert kind(**{K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p"}) == "SimpleKeyGenerator"
    assert kind(**{K_common.RECORDKEY_FIELD: "id,name", K_common.PARTITIONPATH_FIELD: "p"}) == "ComplexKeyGenerator"
    assert kind(**{K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p,q"}) == "ComplexKeyGenerator"
    assert kind(**{K_common.RECORDKEY_FIELD: "id"}) == "NonpartitionedKeyGenerator"
    assert kind(**{K_common.RECORDKEY_FIELD: "id,name"}) == "NonpartitionedKeyGenerator"
    assert kind(**{K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p:SIMPLE"}) == "CustomKeyGenerator"
    avro_complex = "org.apache.hudi.keygen.ComplexAvroKeyGenerator"
    assert kind(**{K_common.TABLE_RECORDKEY_FIELDS: "id", K_common.TABLE_PARTITION_FIELDS: "p",
                   K_common.TABLE_KEYGENERATOR_CLASS: avro_complex}) == "ComplexKeyGenerator"
    assert kind(**{K_common.RECORDKEY_FIELD: "id", K_common.KEYGENERATOR_TYPE: "non_partition"}) == "NonpartitionedKeyGenerator"
    # The class wins over the type, as in HoodieSparkKeyGeneratorFactory.
    assert kind(**{K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p", K_common.KEYGENERATOR_TYPE: "COMPLEX",
                   K_common.KEYGENERATOR_CLASS: "org.apache.hudi.keygen.SimpleKeyGenerator"}) == "SimpleKeyGenerator"
    gen = K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p",
                                       K_common.KEYGENERATOR_CLASS: "org.apache.hudi.keygen.SimpleAvroKeyGenerator",
                                       K_common.HIVE_STYLE_PARTITIONING: "TRUE", K_common.URL_ENCODE_PARTITIONING: "false"})
    assert gen.java_class_name == "org.apache.hudi.keygen.SimpleAvroKeyGenerator"
    assert gen.hive_style is True and gen.url_encode is False
    # Java's Boolean.parseBoolean reads "yes" as false: other partition paths, silently. Refused instead.
    with pytest.raises(ValueError, match=r"partitionpath\.urlencode='yes' is not a boolean; use true or false"):
        K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p",
                                                K_common.URL_ENCODE_PARTITIONING: "yes"})
    assert K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id"}).java_class_name == \
        "org.apache.hudi.keygen.NonpartitionedKeyGenerator"


def test_config_errors() -> None:
    with pytest.raises(ValueError, match=re.escape(K_common.RECORDKEY_FIELD)):
        K_generators.key_generator_from_config({K_common.PARTITIONPATH_FIELD: "p"})
    with pytest.raises(ValueError, match="unknown key generator class 'org.example.MyKeyGen'"):
        K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.KEYGENERATOR_CLASS: "org.example.MyKeyGen"})
    with pytest.raises(ValueError, match="unknown key generator type 'FANCY'"):
        K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.KEYGENERATOR_TYPE: "FANCY"})
    with pytest.raises(ValueError, match="conflicting settings"):
        K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.TABLE_RECORDKEY_FIELDS: "uuid"})
    with pytest.raises(ValueError, match="exactly one partition path field"):
        K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.KEYGENERATOR_TYPE: "SIMPLE"})
    with pytest.raises(ValueError, match="exactly one record key field"):
        K_generators.SimpleKeyGenerator("a,b", "p")
    with pytest.raises(ValueError, match="field:TYPE"):
        K_generators.key_generator_from_config({K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "p",
                                     K_common.KEYGENERATOR_TYPE: "CUSTOM"})


def test_missing_column_names_available_columns() -> None:
    gen = K_generators.SimpleKeyGenerator("id", "city")
    t = _table(id=pa.array([1]), town=pa.array(["x"]))
    with pytest.raises(ValueError, match=r"partition path field 'city' is not a column.*id, town"):
        gen.partition_paths(t)
    with pytest.raises(ValueError, match=r"record key field 'uuid' is not a column.*id, town"):
        K_generators.SimpleKeyGenerator("uuid", "town").record_keys(t)


# ------------------------------------------------------------------ timestamp-based

def _ts_paths(values, arrow_type, **cfg) -> list[str]:
    config = {K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "createTime",
              K_common.KEYGENERATOR_CLASS: "org.apache.hudi.keygen.TimestampBasedKeyGenerator"}
    config.update(cfg)
    gen = K_generators.key_generator_from_config(config)
    return gen.partition_paths(pa.table({"id": pa.array(range(len(values))),
                                         "createTime": pa.array(values, arrow_type)})).to_pylist()


# Expected values from Hudi's own TestTimestampBasedKeyGenerator.
def test_timestamp_numeric_types() -> None:
    gmt8 = {K_common.TS_OUTPUT_DATEFORMAT: "yyyy-MM-dd hh", K_common.TS_TIMEZONE: "GMT+8:00"}
    assert _ts_paths([1578283932000, None], pa.int64(), **{K_common.TS_TYPE: "EPOCHMILLISECONDS"}, **gmt8) == [
        "2020-01-06 12", "1970-01-01 08"]
    assert _ts_paths([decimal.Decimal("1578283932000.0001")], pa.decimal128(20, 4),
                     **{K_common.TS_TYPE: "EPOCHMILLISECONDS"}, **gmt8) == ["2020-01-06 12"]
    assert _ts_paths([1578283932000], pa.int64(), **{K_common.TS_TYPE: "EPOCHMILLISECONDS",
                                                     K_common.TS_OUTPUT_DATEFORMAT: "yyyy-MM-dd hh",
                                                     K_common.TS_TIMEZONE: "GMT"}) == ["2020-01-06 04"]
    assert _ts_paths([1578283932123456], pa.int64(), **{K_common.TS_TYPE: "EPOCHMICROSECONDS"}, **gmt8) == ["2020-01-06 12"]
    assert _ts_paths([1578283932], pa.int32(), **{K_common.TS_TYPE: "UNIX_TIMESTAMP",
                                                  K_common.TS_OUTPUT_DATEFORMAT: "yyyy/MM/dd",
                                                  K_common.TS_OUTPUT_TIMEZONE: "UTC"}) == ["2020/01/06"]
    assert _ts_paths([1578283932.9], pa.float64(), **{K_common.TS_TYPE: "UNIX_TIMESTAMP",
                                                      K_common.TS_OUTPUT_DATEFORMAT: "HH:mm:ss.SSS"}) == ["04:12:12.000"]


def test_timestamp_scalar() -> None:
    cfg = {K_common.TS_TYPE: "SCALAR", K_common.TS_OUTPUT_DATEFORMAT: "yyyy-MM-dd hh", K_common.TS_TIMEZONE: "GMT",
           "hoodie.deltastreamer.keygen.timebased.timestamp.scalar.time.unit": "days"}
    assert _ts_paths([20000, None, 18736], pa.int64(), **cfg) == ["2024-10-04 12", "1970-01-02 12", "2021-04-19 12"]
    micros = {K_common.TS_TYPE: "SCALAR", K_common.TS_OUTPUT_DATEFORMAT: "yyyy/MM/dd", K_common.TS_TIMEZONE: "GMT",
              K_common.TS_SCALAR_TIME_UNIT: "MICROSECONDS", K_common.CONSISTENT_LOGICAL_TIMESTAMP: "true"}
    assert _ts_paths([1638513806000000, None], pa.timestamp("us", tz="UTC"), **micros) == ["2021/12/03", "1970/01/01"]


def test_timestamp_date_strings() -> None:
    iso = "yyyy-MM-dd'T'HH:mm:ssZ,yyyy-MM-dd'T'HH:mm:ss.SSSZ"
    cases = [
        ("2020-04-01T13:01:33.428Z", "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "GMT", "2020040113"),
        ("2020-04-01T13:01:33.428Z", "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "", "2020040113"),
        ("2020-04-01T13:01:33Z", iso, "UTC", "2020040113"),
        ("2020-04-01T13:01:33-05:00", iso, "UTC", "2020040118"),
        ("2020-04-01T13:01:33.123-05:00", iso, "UTC", "2020040118"),
        ("2020-04-01T13:01:33.123Z", iso, "EST", "2020040109"),  # Joda maps EST to America/New_York
        ("2020-04-01T13:01:33-05:00", iso, "", "2020040113"),  # formatted in the parsed offset
    ]
    for value, fmt, out_tz, expected in cases:
        assert _ts_paths([value], pa.string(), **{K_common.TS_TYPE: "DATE_STRING", K_common.TS_INPUT_DATEFORMAT: fmt,
                                                  K_common.TS_OUTPUT_DATEFORMAT: "yyyyMMddHH",
                                                  K_common.TS_OUTPUT_TIMEZONE: out_tz}) == [expected], value
    assert _ts_paths(["20200401"], pa.string(), **{
        K_common.TS_TYPE: "DATE_STRING", K_common.TS_INPUT_DATEFORMAT: iso + ",yyyyMMdd", K_common.TS_INPUT_TIMEZONE: "UTC",
        K_common.TS_OUTPUT_DATEFORMAT: "MM/dd/yyyy", K_common.TS_OUTPUT_TIMEZONE: "UTC"}) == ["04/01/2020"]
    hh = {K_common.TS_TYPE: "DATE_STRING", "hoodie.deltastreamer.keygen.timebased.input.dateformat": "yyyy-MM-dd hh:mm:ss"}
    assert _ts_paths(["2020-01-06 12:12:12"], pa.string(), **hh, **{
        K_common.TS_OUTPUT_DATEFORMAT: "yyyy-MM-dd hh", K_common.TS_TIMEZONE: "GMT+8:00"}) == ["2020-01-06 12"]
    # A null string becomes "1 ms after the epoch" printed with the first input format.
    assert _ts_paths([None], pa.string(), **hh, **{K_common.TS_OUTPUT_DATEFORMAT: "yyyy-MM-dd hh:mm:ss",
                                                   K_common.TS_TIMEZONE: "GMT"}) == ["1970-01-01 12:00:00"]
    with pytest.raises(ValueError, match="cannot parse partition value '2020-04-01 13:01:33.123-05:00'"):
        _ts_paths(["2020-04-01 13:01:33.123-05:00"], pa.string(), **{
            K_common.TS_TYPE: "DATE_STRING", K_common.TS_INPUT_DATEFORMAT: iso, K_common.TS_OUTPUT_DATEFORMAT: "yyyyMMddHH"})


def test_timestamp_zones_hive_style_and_encoding() -> None:
    base = {K_common.TS_TYPE: "EPOCHMILLISECONDS", K_common.TS_OUTPUT_DATEFORMAT: "yyyy/MM/dd",
            K_common.TS_OUTPUT_TIMEZONE: "Asia/Kolkata", K_common.HIVE_STYLE_PARTITIONING: "true"}
    ms = 1704047400000  # 2023-12-31T18:30:00Z = 2024-01-01T00:00 in Kolkata
    assert _ts_paths([ms], pa.int64(), **base) == ["createTime=2024/01/01"]
    assert _ts_paths([ms], pa.int64(), **base, **{K_common.URL_ENCODE_PARTITIONING: "true"}) == ["createTime=2024%2F01%2F01"]
    # No zone configured: Hudi uses the JVM default zone (jvm_timezone, UTC by default).
    assert _ts_paths([ms], pa.int64(), **{K_common.TS_TYPE: "EPOCHMILLISECONDS", K_common.TS_OUTPUT_DATEFORMAT: "yyyy-MM-dd"}) == [
        "2023-12-31"]
    # A date column is read as its epoch day in the configured unit (Hudi quirk): 19000 days as DAYS.
    assert _ts_paths([dt.date(2022, 1, 8)], pa.date32(), **{
        K_common.TS_TYPE: "SCALAR", K_common.TS_SCALAR_TIME_UNIT: "DAYS", K_common.TS_OUTPUT_DATEFORMAT: "yyyyMMdd"}) == ["20220108"]


def test_timestamp_errors() -> None:
    with pytest.raises(ValueError, match=re.escape(K_common.TS_TYPE)):
        _ts_paths([1], pa.int64(), **{K_common.TS_OUTPUT_DATEFORMAT: "yyyy"})
    with pytest.raises(ValueError, match=re.escape(K_common.TS_OUTPUT_DATEFORMAT)):
        _ts_paths([1], pa.int64(), **{K_common.TS_TYPE: "EPOCHMILLISECONDS"})
    with pytest.raises(ValueError, match=re.escape(K_common.TS_INPUT_DATEFORMAT)):
        _ts_paths(["x"], pa.string(), **{K_common.TS_TYPE: "DATE_STRING", K_common.TS_OUTPUT_DATEFORMAT: "yyyy"})
    with pytest.raises(ValueError, match="Missing input formatter"):
        _ts_paths(["2020"], pa.string(), **{K_common.TS_TYPE: "EPOCHMILLISECONDS", K_common.TS_OUTPUT_DATEFORMAT: "yyyy"})
    with pytest.raises(ValueError, match="no time unit"):
        _ts_paths([1], pa.int64(), **{K_common.TS_TYPE: "MIXED", K_common.TS_INPUT_DATEFORMAT: "yyyy",
                                      K_common.TS_OUTPUT_DATEFORMAT: "yyyy"})
    with pytest.raises(ValueError, match="unknown time zone 'Mars/Olympus'"):
        _ts_paths([1], pa.int64(), **{K_common.TS_TYPE: "EPOCHMILLISECONDS", K_common.TS_OUTPUT_DATEFORMAT: "yyyy",
                                      K_common.TS_OUTPUT_TIMEZONE: "Mars/Olympus"})
    with pytest.raises(ValueError, match="out of the supported range"):
        # Epoch microseconds read as seconds: an absurd year.
        _ts_paths([1578283932123456], pa.int64(), **{K_common.TS_TYPE: "UNIX_TIMESTAMP", K_common.TS_OUTPUT_DATEFORMAT: "yyyy"})
    with pytest.raises(ValueError, match="illegal pattern component 'q'"):
        _ts_paths([1], pa.int64(), **{K_common.TS_TYPE: "EPOCHMILLISECONDS", K_common.TS_OUTPUT_DATEFORMAT: "yyyyq"})


def test_format_millis_pattern_letters() -> None:
    ms = pa.array([int(dt.datetime(2024, 3, 5, 14, 7, 9, 45000, tzinfo=dt.timezone.utc).timestamp() * 1000)])
    f = lambda p, z="UTC": K_joda.format_millis(ms, p, z)[0].as_py()  # noqa: E731
    assert f("yyyy-MM-dd'T'HH:mm:ss.SSS") == "2024-03-05T14:07:09.045"
    assert f("yy/M/d H:m:s S SS") == "24/3/5 14:7:9 0 04"
    assert f("MMM MMMM EEE EEEE e D w x") == "Mar March Tue Tuesday 2 65 10 2024"
    assert f("hh a K k G C") == "02 PM 2 14 AD 20"
    assert f("'quoted '' text' yyyy''") == "quoted ' text 2024'"
    assert f("Z ZZ ZZZ", "Asia/Kolkata") == "+0530 +05:30 Asia/Kolkata"
    assert f("HH Z", "America/New_York") == "09 -0500"
    assert f("HH ZZ", "+08:00") == "22 +08:00"


def test_custom_key_generator() -> None:
    cfg = {K_common.RECORDKEY_FIELD: "id", K_common.PARTITIONPATH_FIELD: "region:simple,ts:TIMESTAMP",
           K_common.KEYGENERATOR_CLASS: "org.apache.hudi.keygen.CustomKeyGenerator", K_common.HIVE_STYLE_PARTITIONING: "true",
           K_common.TS_TYPE: "EPOCHMILLISECONDS", K_common.TS_OUTPUT_DATEFORMAT: "yyyyMMdd", K_common.TS_OUTPUT_TIMEZONE: "UTC"}
    gen = K_generators.key_generator_from_config(cfg)
    assert gen.partition_path_fields == ["region", "ts"]
    t = _table(id=pa.array([1, 2]), region=pa.array(["eu", None]), ts=pa.array([0, 86_400_000 * 366]))
    keys, paths = gen.keys(t)
    assert keys.to_pylist() == ["1", "2"]
    assert paths.to_pylist() == ["region=eu/ts=19700101", "region=__HIVE_DEFAULT_PARTITION__/ts=19710102"]
    gen2 = K_generators.key_generator_from_config(dict(cfg, **{K_common.RECORDKEY_FIELD: "id,region"}))
    assert gen2.record_keys(t).to_pylist() == ["id:1,region:eu", "id:2,region:__null__"]


def test_vectorized_on_many_rows() -> None:
    n = 20_000
    t = pa.table({"id": pa.array(range(n)), "ts": pa.array([i * 3_600_000 for i in range(n)], pa.int64()),
                  "d": pa.array([i / 8 for i in range(n)])})
    gen = K_generators.TimestampBasedKeyGenerator("id", "ts", K_generators.TimestampConfig("EPOCHMILLISECONDS", "yyyy/MM/dd/HH",
                                                                     output_timezone="UTC"))
    keys, paths = gen.keys(t)
    assert keys[n - 1].as_py() == str(n - 1)
    assert paths[n - 1].as_py() == dt.datetime.fromtimestamp((n - 1) * 3600, dt.timezone.utc).strftime("%Y/%m/%d/%H")
    d = K_java_text.java_strings(t.column("d"))
    assert pc.all(pc.equal(pc.cast(d, pa.float64()), t.column("d").combine_chunks())).as_py()


# ------------------------------------------------------------------ partition paths as folders

_SEGMENT_CHARS = st.sampled_from(["a", "b", ".", "/", "%", "=", " ", "é", "ß", "\\", "\x00", "\t", "_"])
_PART_VALUE = st.none() | st.sampled_from(["", ".", "..", ".hoodie", ".NET", "a/", "/a", "a//b", "x" * 256,
                                           ".hoodie_partition_metadata", "__HIVE_DEFAULT_PARTITION__"]) \
    | st.text(_SEGMENT_CHARS, max_size=6)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(_PART_VALUE, _PART_VALUE), min_size=1, max_size=4), st.booleans(), st.booleans(),
       st.booleans())
def test_partition_paths_are_folders_or_refused(rows: list[tuple], hive: bool, encode: bool, two_fields: bool) -> None:
    """Every partition path a key generator computes is either a valid folder of the table, which
    decodes back to the row's values, or the batch is refused naming a bad value and its field."""
    fields = ["a", "b"] if two_fields else ["a"]
    data = pa.table({"k": [str(i) for i in range(len(rows))], "a": [r[0] for r in rows], "b": [r[1] for r in rows]})
    kg = K_generators.ComplexKeyGenerator(["k"], fields, hive, encode) if two_fields else K_generators.SimpleKeyGenerator("k", "a", hive, encode)
    paths = kg.partition_paths(data)
    bad = [p for p in paths.to_pylist() if K_paths.partition_path_problem(p)]
    if bad:
        with pytest.raises(K_paths.PartitionPathError) as e:
            K_paths.check_partition_paths(kg, data, paths)
        msg = str(e.value)
        assert "Nothing was committed" in msg and re.search(r"partition field value (a|b)=", msg)
        return
    K_paths.check_partition_paths(kg, data, paths)
    for (a, b), path in zip(rows, paths.to_pylist()):
        for seg in path.split("/"):  # a folder below the base path, never hoodie's own
            assert seg not in ("", ".", "..", ".hoodie") and "\x00" not in seg and len(seg.encode()) <= 255
        try:
            got = K_paths.partition_values(path, fields, hive, url_encoded=encode)
        except ValueError:
            assert two_fields and not encode and "/" in f"{a}{b}"  # a '/' in one of several fields
            continue
        want = {"a": a or None, "b": b or None} if two_fields else {"a": a or None}
        if "__HIVE_DEFAULT_PARTITION__" in (a, b):  # the literal reads as the default partition
            want = {f: (None if v == "__HIVE_DEFAULT_PARTITION__" else v) for f, v in want.items()}
        assert got == want, path
