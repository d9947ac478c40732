"""Every documented SQL statement runs, and every procedure resolves every form of its table argument.

The documented context (docs/sql.md): a hoodie table at ``/data/events`` registered as
``analytics.events``, partitioned by ``productid``, with ``analytics`` the current database. Any
``'/data/...'`` path in an example stands for that table's path."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from hoodie.interfaces.catalog import CatalogError
from hoodie.interfaces.sql import PROCEDURES, bind, parse_call, resolve_table
from tests.helpers import examples

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
OPTS = {
    "hoodie.table.name": "events", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "productid",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false",
    "hoodie.metadata.enable": "true",  # the metadata-table procedures' examples need one
}
DB = "analytics"
_HOODIE_SQL = re.compile(r'hoodie\.sql\(spark,\s*"((?:[^"\\]|\\.)*)"\)')
_SQL_BLOCK = re.compile(r"^```sql\n(.*?)^```", re.S | re.M)
_DATA_PATH = re.compile(r"'/data/[^']*'")


def documented_statements() -> list[tuple[str, str]]:
    """(where, statement) for every ``hoodie.sql(spark, "...")`` in the docs, the README and the
    source, and every line of a ```sql block in the docs."""
    out: dict[str, str] = {}
    for f in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md", *sorted((REPO / "src").rglob("*.py"))]:
        text = f.read_text()
        where = str(f.relative_to(REPO))
        if f.name == "README.md":
            # The "Using it" blocks build their own tables and run whole, as written
            # (tests/interfaces/test_readme.py, tests/engine/test_readme_spark.py).
            start = text.index("## Using it")
            text = text[:start] + text[text.index("\n## ", start + 3):]
        for m in _HOODIE_SQL.finditer(text):
            out.setdefault(m.group(1).encode().decode("unicode_escape"), where)
        if f.suffix == ".md":
            for block in _SQL_BLOCK.findall(text):
                for line in block.splitlines():
                    if line.strip() and not line.strip().startswith("--"):
                        out.setdefault(line.strip(), where)
    # "CALL ..." and "CREATE TABLE ..." are elisions in prose, not examples.
    return [(w, s) for s, w in out.items() if "..." not in s]


STATEMENTS = documented_statements()


def _write_template(path: str, cold: str) -> None:
    """productid 1..3, written 2024-04-30 (savepointed); an upsert at 2024-05-01 leaves log files;
    productid 4 was moved to the cold table ``cold`` by a TTL move (the bring-back examples);
    ``event_ts`` is the record-TTL examples' event-time column."""
    from hoodie.services.savepoint import create_savepoint
    from hoodie.services.ttl import run_ttl

    day = pa.array([dt.datetime(2024, 4, 30, tzinfo=dt.timezone.utc)] * 12, pa.timestamp("us", tz="UTC"))
    rows = pa.table({"id": pa.array(range(12), pa.int64()), "productid": pa.array([1, 2, 3, 4] * 3, pa.int32()),
                     "ts": pa.array([1] * 12, pa.int64()), "event_ts": day})
    write_arrow(path, rows, {**OPTS, "hoodie.datasource.write.operation": "insert"}, instant="20240430000000000")
    write_arrow(path, rows.slice(0, 3).set_column(2, "ts", pa.array([2] * 3, pa.int64())),
                {**OPTS, "hoodie.datasource.write.operation": "upsert"}, instant="20240501000000000")
    run_ttl(path, {**OPTS, "hoodie.partition.ttl.strategy.days.retain": "1", "hoodie.partition.ttl.action": "move",
                   "hoodie.partition.ttl.move.target": cold, "hoodie.partition.ttl.predicate": "productid = 4"},
            instant_time="20240601000000000")
    create_savepoint(path, "20240430000000000", "docs", "the documented table's savepoint")
    # A write rolled back at 20240602000000001 (show_rollbacks, show_rollback_detail, show_timeline examples).
    write_arrow(path, rows.slice(0, 1), {**OPTS, "hoodie.datasource.write.operation": "upsert"},
                instant="20240602000000000")
    from unittest import mock

    from hoodie.format.table import HoodieTable
    from hoodie.services.rollback.operation import rollback

    with mock.patch.object(HoodieTable, "new_instant_time", return_value="20240602000000001"):
        rollback(path, "20240602000000000")


@pytest.fixture(scope="module")
def events(spark, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(template path, live path): the live table is registered as analytics.events."""
    from hoodie.catalog import register_table

    root = tmp_path_factory.mktemp("sql_examples")
    template, live = str(root / "template"), str(root / "events")
    _write_template(template, str(root / "cold"))
    shutil.copytree(template, live)
    shutil.copytree(root / "cold", root / "cold_template")
    register_table(spark, f"{DB}.events", live)
    yield template, live
    for v in ("events", "events_ro"):
        spark.catalog.dropTempView(v)
        spark.sql(f"DROP VIEW IF EXISTS {DB}.{v}")


def _persistent_views(spark) -> set[str]:
    return {r.viewName for r in spark.sql(f"SHOW VIEWS IN {DB}").collect() if not r.isTemporary}


def test_the_documented_statements_cover_every_procedure() -> None:
    called = {parse_call(s)[0].lower() for _, s in STATEMENTS if parse_call(s)}
    for proc in {id(p): p for p in PROCEDURES.values()}.values():
        assert proc.examples, f"{proc.name} has no example for docs/sql.md"
        assert proc.name.lower() in called, proc.name
    assert "CALL show_commits('/data/t', 5)" in [s for _, s in STATEMENTS]
    assert any(s.upper().startswith("CREATE TABLE") for _, s in STATEMENTS)


@pytest.mark.parametrize("where,stmt", STATEMENTS, ids=[s[:60] for _, s in STATEMENTS])
def test_every_documented_sql_statement_runs(spark, events: tuple[str, str], where: str, stmt: str) -> None:
    """The class-closing test of item 22: each statement as documented, on a fresh copy of the table."""
    template, live = events
    shutil.rmtree(live)
    shutil.copytree(template, live)
    cold = Path(live).parent / "cold"  # where the template's TTL move put productid 4
    shutil.rmtree(cold)
    shutil.copytree(cold.parent / "cold_template", cold)
    views = _persistent_views(spark)
    spark.sql(f"USE {DB}")
    try:
        hoodie.sql(spark, _DATA_PATH.sub(lambda _: "'" + live + "'", stmt)).collect()
    finally:
        spark.sql("USE default")
        for v in _persistent_views(spark) - views:  # a documented CREATE TABLE registered a new name
            spark.sql(f"DROP VIEW {DB}.`{v}`")
            spark.catalog.dropTempView(v)


READ_ONLY = ("show_commits", "show_compaction", "show_freshness", "show_savepoints", "show_partitions",
             "show_clean_plans", "stats_file_sizes")


@settings(max_examples=examples(15), deadline=None)
@given(proc=st.sampled_from(sorted({p.name for p in PROCEDURES.values()})),
       form=st.sampled_from(["name", "db.name", "`db`.`name`", "path", "path/"]), upper=st.booleans(),
       ro=st.booleans(), current=st.sampled_from([DB, "default"]), shadow=st.booleans(), with_base=st.booleans())
def test_every_procedure_resolves_every_table_form(spark, events: tuple[str, str], proc: str, form: str, upper: bool,
                                                   ro: bool, current: str, shadow: bool, with_base: bool) -> None:
    """Names (unqualified, qualified, quoted, any case, the _ro view) and paths, with or without a
    session view of the same name, from the table's database or another, alone or with a matching
    basePath: the table is found, or (an unqualified name outside its database) a CatalogError names the fix."""
    _, live = events
    procedure = PROCEDURES[proc.lower()]
    name = "events_ro" if ro else "events"
    table = {"name": name, "db.name": f"{DB}.{name}", "`db`.`name`": f"`{DB}`.`{name}`",
             "path": live, "path/": live + "/"}[form]
    if upper and not form.startswith("path"):
        table = table.upper()
    args = {"table": table, **({"basePath": live} if with_base else {})}
    required = {p.name: "20240501000000000" for p in procedure.params if p.required}
    found = form.startswith("path") or form != "name" or current == DB
    spark.sql(f"USE {current}")
    try:
        if shadow:
            spark.sql(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT 1 AS x")
        if not found:
            with pytest.raises(CatalogError, match="register_table"):
                resolve_table(spark, bind(procedure, [], {**args, **required}), procedure)
            return
        ref = resolve_table(spark, bind(procedure, [], {**args, **required}), procedure)
        assert ref.base_path.rstrip("/") == live
        assert (ref.name is None) == form.startswith("path")
        if proc in READ_ONLY:
            named = ", ".join(f"{k} => '{v}'" for k, v in args.items())
            got = hoodie.sql(spark, f"CALL {proc}({named})").collect()
            assert got == hoodie.sql(spark, f"CALL {proc}(basePath => '{live}')").collect()
    finally:
        spark.sql("USE default")
        if shadow:
            spark.catalog.dropTempView(name)
