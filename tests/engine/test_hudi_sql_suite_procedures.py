"""Hudi's Spark SQL suite, replayed through ``hoodie.sql``: the procedure tests
(hudi-spark-datasource/hudi-spark/src/test/scala/org/apache/spark/sql/hudi/procedure/), statements and the
answers Hudi's tests expect taken as facts, the code ours (the pattern of test_hudi_sql_suite.py).

Replayed: TestSavepointsProcedure (4 cases). hoodie's procedures answer Hudi's output columns first and may add
columns after them (``create_savepoint`` adds ``savepoint_time``, ``files`` and ``message``): the replay compares
Hudi's columns. Hudi passes unknown named arguments through unread; its own test writes ``comment =>`` for
``comments =>``, which hoodie takes as an alias.

Not audited case by case yet (procedures hoodie offers, tested by test_sql_procedures*.py on their own terms):
TestCommitsProcedure, TestCleanProcedure, TestCompactionProcedure, TestArchiveCommitsProcedure,
TestShowCleanPlansProcedure, TestFsViewProcedure, TestStatsProcedure, TestTTLProcedure, TestMetadataProcedure,
TestShowFileStatusProcedure, TestShowTimelineProcedure, TestCopyToTempViewProcedure. Procedure test classes of
procedures hoodie does not offer (bootstrap, clustering, repair, hive sync, upgrade/downgrade, audit locks,
delta-streamer checkpoints...) are not replayed: docs/sql.md lists those procedures and what to use instead.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hoodie.interfaces.sql import sql

pytestmark = pytest.mark.spark
_n = itertools.count()


def table(spark, tmp: Path, rows: int) -> tuple[str, str]:
    """Hudi's fixture of these tests: a keyed table with ``rows`` single-row INSERTs."""
    name = f"hp_{next(_n)}"
    path = str(tmp / name)
    sql(spark, f"create table {name} (id int, name string, price double, ts long) using hudi location '{path}' "
               "tblproperties (primaryKey = 'id', preCombineField = 'ts')")
    for i, (price, ts) in enumerate([(10, 1000), (20, 1500), (30, 2000)][:rows], start=1):
        sql(spark, f"insert into {name} select {i}, 'a{i}', {price}, {ts}")
    return name, path


def first(spark, text: str) -> list:
    """Hudi's checkAnswer over its own output column (the first)."""
    return [r[0] for r in sql(spark, text).collect()]


@pytest.mark.slow
def test_savepoint_procedures(spark, tmp_path: Path) -> None:
    """TestSavepointsProcedure "Test Call create_savepoint Procedure", "... show_savepoints ...", "...
    delete_savepoint ...", "... rollback_to_savepoint ...": by table name and by base path, positional and
    named arguments."""
    name, path = table(spark, tmp_path, 2)
    commits = [r[0] for r in sql(spark, f"call show_commits(table => '{name}')").limit(2).collect()]
    assert len(commits) == 2
    assert first(spark, f"call create_savepoint('{name}', '{commits[0]}', 'admin', '1')") == [True]
    assert first(spark, f"call create_savepoint(path => '{path}', commit_time => '{commits[1]}', user => 'admin', "
                        "comment => '2')") == [True]

    name, path = table(spark, tmp_path, 3)
    commits = [r[0] for r in sql(spark, f"call show_commits(table => '{name}')").collect()]
    assert len(commits) == 3
    assert first(spark, f"call create_savepoint('{name}', '{commits[1]}')") == [True]
    assert len(sql(spark, f"call show_savepoints(table => '{name}')").collect()) == 1
    assert len(sql(spark, f"call show_savepoints(path => '{path}')").collect()) == 1

    name, path = table(spark, tmp_path, 3)
    commits = [r[0] for r in sql(spark, f"call show_commits(table => '{name}')").collect()]
    for c in commits:
        assert first(spark, f"call create_savepoint('{name}', '{c}')") == [True]
    assert first(spark, f"call delete_savepoint('{name}', '{commits[1]}')") == [True]
    assert first(spark, f"call delete_savepoint(path => '{path}', instant_time => '{commits[0]}')") == [True]
    assert first(spark, f"call show_savepoints(table => '{name}')") == [commits[2]]

    name, path = table(spark, tmp_path, 3)
    commits = sorted(r[0] for r in sql(spark, f"call show_commits(table => '{name}')").collect())
    assert first(spark, f"call create_savepoint('{name}', '{commits[0]}')") == [True]
    assert first(spark, f"call create_savepoint('{name}', '{commits[1]}')") == [True]
    assert first(spark, f"call rollback_to_savepoint('{name}', '{commits[1]}')") == [True]
    assert first(spark, f"call delete_savepoint(path => '{path}', instant_time => '{commits[1]}')") == [True]
    assert first(spark, f"call rollback_to_savepoint(path => '{path}', instant_time => '{commits[0]}')") == [True]
    assert sorted(tuple(r) for r in sql(spark, f"select id, name, price, ts from {name}").collect()) == [
        (1, "a1", 10.0, 1000)]
