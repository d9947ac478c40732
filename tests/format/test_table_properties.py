"""Java-set table properties: hoodie either answers exactly or refuses before anything is written.

The class behind five bugs fixed on 2026-11-27 (ORC base files, virtual keys, partition columns left out
of the files, change data capture, base-format partition metafiles): a table property hoodie did not
look at changed what the files hold or what Java expects of a write, and hoodie answered wrong rows or
wrote a table Java could no longer read right. Each example draws a combination of such properties,
lays the table's files out as Java would under them, then upserts and reads: every write either commits
and every read equals the model, or the operation fails with a HoodieError and no file changed.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from hoodie.configs import table as TC
from hoodie.errors import HoodieError
from hoodie.format.properties import format_table_properties, parse_properties
from hoodie.format.table import HoodieTable, TableError
from tests.helpers import examples

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "upsert"}
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]

properties_st = st.fixed_dictionaries({}, optional={
    "hoodie.table.base.file.format": st.sampled_from(["PARQUET", "ORC", "HFILE", "parquet"]),
    "hoodie.populate.meta.fields": st.sampled_from(["true", "false"]),
    "hoodie.datasource.write.drop.partition.columns": st.sampled_from(["false", "true"]),
    "hoodie.table.cdc.enabled": st.sampled_from(["false", "true"]),
    "hoodie.partition.metafile.use.base.format": st.sampled_from(["false", "true"]),
})


def _java_layout(path: str, props: dict[str, str]) -> None:
    """The properties, and the files as Java writes them under those properties."""
    f = Path(path) / ".hoodie" / "hoodie.properties"
    table_props = parse_properties(f.read_text())
    table_props.update(props)
    f.write_text(format_table_properties(table_props))
    for base in Path(path).rglob("*.parquet"):
        if base.name.startswith("."):
            continue
        t = pq.read_table(base)
        if props.get("hoodie.populate.meta.fields") == "false":
            for c in META:
                t = t.set_column(t.schema.get_field_index(c), c, pa.nulls(t.num_rows, pa.string()))
        if props.get("hoodie.datasource.write.drop.partition.columns") == "true":
            t = t.drop_columns(["p"])
        pq.write_table(t, base)
    if props.get("hoodie.partition.metafile.use.base.format") == "true":
        for meta in Path(path).rglob(".hoodie_partition_metadata"):
            kv = parse_properties(meta.read_text())
            meta.unlink()
            pq.write_table(pa.table({}).replace_schema_metadata(kv), str(meta) + ".parquet")


def _files(path: str) -> list[tuple[str, int]]:
    root = Path(path)
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*") if p.is_file())


def _read(path: str) -> dict[str, tuple[str, int]] | None:
    """The snapshot as {key: (partition, v)}, or None when hoodie refuses the read."""
    try:
        t = hoodie.read_table(path)
    except HoodieError:
        return None
    return dict(zip(t.column("k").to_pylist(), zip(t.column("p").to_pylist(), t.column("v").to_pylist())))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), properties_st)
def test_java_table_properties_are_honoured_or_refused(table_type: str, props: dict[str, str]) -> None:
    d = tempfile.mkdtemp(prefix="hoodie_props_")
    try:
        path = f"{d}/t"
        opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
        write_arrow(path, pa.table({"k": ["a", "b", "c"], "p": ["x", "x", "y"], "v": [1, 2, 3]}), opts)
        model = {"a": ("x", 1), "b": ("x", 2), "c": ("y", 3)}
        _java_layout(path, props)
        got = _read(path)
        assert got is None or got == model, f"read {got} != {model}"
        before = _files(path)
        try:
            write_arrow(path, pa.table({"k": ["a", "d"], "p": ["x", "z"], "v": [10, 4]}), opts)
        except HoodieError as e:
            assert "Nothing was" in str(e), f"a refusal must say nothing was written: {e}"
            assert _files(path) == before, "a refused write changed files"
        else:
            model.update({"a": ("x", 10), "d": ("z", 4)})
        got = _read(path)
        assert got is None or got == model, f"read {got} != {model}"
    finally:
        shutil.rmtree(d, ignore_errors=True)


# -- property value strings (issue 32): hoodie.properties read by the config rules -----------------------

BOOLEAN_PROPERTIES = {  # key -> the value when absent or blank (Hudi's default)
    "hoodie.populate.meta.fields": True,
    "hoodie.datasource.write.drop.partition.columns": False,
    "hoodie.table.cdc.enabled": False,
    "hoodie.datasource.write.hive_style_partitioning": False,
    "hoodie.datasource.write.partitionpath.urlencode": False,
    "hoodie.partition.metafile.use.base.format": False,
}
value_strings = st.one_of(
    st.sampled_from(["true", "TRUE", "True", "false", "FALSE", "fAlSe", "yes", "no", "1", "0", "on", "off", "t", "",
                     " ", "\t", " true ", "false ", "truee", "true,false", "null"]),
    st.text(max_size=8),
)
_TABLES: dict[str, str] = {}


def _table_once() -> str:
    """One small table for the whole module (examples only rewrite its hoodie.properties)."""
    if "t" not in _TABLES:
        path = f"{tempfile.mkdtemp(prefix='hoodie_propvals_')}/t"
        write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "y"], "v": [1, 2]}), OPTS)
        _TABLES["t"] = path
    return _TABLES["t"]


def _with_property(path: str, key: str, value: str) -> tuple[dict[str, str], str]:
    """The table's properties with ``key=value`` written, and the value as hoodie.properties holds it."""
    f = Path(path) / ".hoodie" / "hoodie.properties"
    original = f.read_text()
    props = parse_properties(original)
    props[key] = value
    f.write_text(format_table_properties(props))
    return parse_properties(original), parse_properties(f.read_text())[key]


@settings(max_examples=examples(200), deadline=None)
@given(key=st.sampled_from(sorted(BOOLEAN_PROPERTIES)), value=value_strings)
def test_boolean_table_properties_are_true_or_false_in_any_case_or_refused(key: str, value: str) -> None:
    """Java reads a boolean of hoodie.properties with Boolean.parseBoolean: ``yes``, ``1``, ``TRUE `` are
    false there. hoodie reads true/false in any case (blank: the default) and refuses the rest when it
    opens the table, naming the key, the value and the file, before anything is read or written; before,
    every value but ``true`` silently meant false."""
    path = _table_once()
    original, stored = _with_property(path, key, value)
    try:
        text = stored.strip()
        if text.lower() in ("true", "false") or not text:
            t = HoodieTable(path)
            got = {"hoodie.populate.meta.fields": t.populate_meta_fields,
                   "hoodie.datasource.write.drop.partition.columns": t.drop_partition_columns,
                   "hoodie.table.cdc.enabled": t.cdc_enabled, "hoodie.datasource.write.hive_style_partitioning":
                   t.hive_style, "hoodie.datasource.write.partitionpath.urlencode": t.url_encode,
                   "hoodie.partition.metafile.use.base.format": t.prop(TC.PARTITION_METAFILE_BASE_FORMAT)}[key]
            assert got is (text.lower() == "true" if text else BOOLEAN_PROPERTIES[key])
            return
        with pytest.raises(TableError) as e:
            HoodieTable(path)
        msg = str(e.value)
        assert f"{key}=" in msg and "is not a boolean; use true or false" in msg and "hoodie.properties" in msg
        before = _files(path)
        with pytest.raises(HoodieError, match=f"{key}="):
            write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [5]}), OPTS)
        with pytest.raises(HoodieError, match=f"{key}="):
            hoodie.read_table(path)
        assert _files(path) == before, "a refused write changed files"
    finally:
        (Path(path) / ".hoodie" / "hoodie.properties").write_text(format_table_properties(original))


@pytest.mark.parametrize("key, value, expect", [
    ("hoodie.table.type", "merge_on_read", ("table_type", "MERGE_ON_READ")),
    ("hoodie.table.type", "MOR", "is not a table type; use COPY_ON_WRITE or MERGE_ON_READ"),  # was copy-on-write
    ("hoodie.table.timeline.timezone", "utc", ("timeline_timezone", "UTC")),
    ("hoodie.table.timeline.timezone", "", ("timeline_timezone", "LOCAL")),
    ("hoodie.table.timeline.timezone", "Asia/Shanghai", "is not a timeline time zone; use LOCAL or UTC"),
    ("hoodie.table.base.file.format", "orc", ("base_file_format", "ORC")),
    ("hoodie.table.base.file.format", "avro", "is not a base file format; use one of PARQUET, ORC, HFILE, LANCE"),
    ("hoodie.table.version", "six", "hoodie.table.version='six' is not an integer"),
    ("hoodie.timeline.layout.version", "", ("timeline_layout", 1)),
    ("hoodie.timeline.layout.version", "one", "hoodie.timeline.layout.version='one' is not an integer"),
    ("hoodie.record.merge.mode", "LATEST", "is not a record merge mode"),
    ("hoodie.table.recordkey.fields", " k , ", ("record_key_fields", ["k"])),
])
def test_table_properties_are_read_by_their_rules(key: str, value: str, expect: object) -> None:
    path = _table_once()
    original, _ = _with_property(path, key, value)
    try:
        if isinstance(expect, tuple):
            assert getattr(HoodieTable(path), expect[0]) == expect[1]
        else:
            with pytest.raises(TableError, match=re.escape(expect)):
                HoodieTable(path)
    finally:
        (Path(path) / ".hoodie" / "hoodie.properties").write_text(format_table_properties(original))
