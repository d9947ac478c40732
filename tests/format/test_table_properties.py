"""Java-set table properties: hoodie either answers exactly or refuses before anything is written.

The class behind five bugs fixed on 2026-11-27 (ORC base files, virtual keys, partition columns left out
of the files, change data capture, base-format partition metafiles): a table property hoodie did not
look at changed what the files hold or what Java expects of a write, and hoodie answered wrong rows or
wrote a table Java could no longer read right. Each example draws a combination of such properties,
lays the table's files out as Java would under them, then upserts and reads: every write either commits
and every read equals the model, or the operation fails with a HoodieError and no file changed.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.errors import HoodieError
from hoodie.format.properties import format_table_properties, parse_properties
from hoodie import write_arrow
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
