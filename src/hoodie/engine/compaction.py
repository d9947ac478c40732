"""Running compaction operations on Spark: one task per compaction operation.

The compaction service plans, links and commits on the driver in pure Python; this executor only
distributes :class:`~hoodie.services.compaction.CompactionTask` objects, each merging one file
group's base file with its selected log files through the format core inside a Spark task.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Sequence

import pyarrow as pa

from hoodie.format.file_group import naming as N


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext, no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def spark_executor(spark: Any) -> Callable[[list], Sequence[Any]]:
    """An executor for ``run_compaction(executor=...)`` that runs each task in its own Spark task."""

    def run(tasks: list) -> list:
        if not tasks:
            return []
        # pyspark is imported where used: hoodie's core runs without it.
        from pyspark.sql.types import BinaryType, StructField, StructType

        # The tasks travel once per executor as a broadcast; the job is spark.range with one
        # partition per operation, so each Spark task runs one operation and the job has a single
        # Python stage (building the input from a Python RDD added a second one, which dominated
        # the run time of plans with many small operations). Spark Connect has no SparkContext, so
        # no broadcast: there the tasks travel inside the function (they are metadata: paths, plans).
        blob = pickle.dumps(tasks)
        payload = None if is_connect(spark) else spark.sparkContext.broadcast(blob)
        n = len(tasks)
        df = spark.range(0, n, 1, n)
        out_schema = StructType([StructField("stat", BinaryType(), False)])

        def execute(batches):
            from pyspark import TaskContext

            tc = TaskContext.get()
            mine = None
            for b in batches:
                out = []
                for i in b.column(0).to_pylist():
                    if mine is None:
                        mine = pickle.loads(payload.value if payload is not None else blob)
                    # The attempt id makes a retried task write new file names (Hudi's write token).
                    token = N.write_token(tc.partitionId(), tc.stageId(), tc.taskAttemptId()) if tc else None
                    out.append(pickle.dumps(mine[i].run(token)))
                yield pa.RecordBatch.from_arrays([pa.array(out, pa.binary())], names=["stat"])

        try:
            result = df.mapInArrow(execute, out_schema).collect()
        finally:
            if payload is not None:
                payload.unpersist()
        return [pickle.loads(r[0]) for r in result]

    return run
