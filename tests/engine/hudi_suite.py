"""What the replays of Hudi's Spark SQL suite (tests/engine/test_hudi_sql_suite*.py) share: Hudi's
``checkAnswer`` and ``getLastCommitMetadata(...).getOperationType``."""

from __future__ import annotations

from hoodie.format.table import HoodieTable
from hoodie.interfaces.sql import sql


def answer(spark, text: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    """Hudi's checkAnswer: the rows, in any order."""
    return sorted(tuple(r) for r in sql(spark, text).collect())


def last_operation(path: str) -> str:
    """getLastCommitMetadata(...).getOperationType of the table at ``path``."""
    t = HoodieTable(path)
    last = t.timeline.completed().by_actions("commit", "deltacommit", "replacecommit").last()
    return t.timeline.commit_metadata(last).operation_type
