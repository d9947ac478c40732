"""Running compaction operations on Spark: one task per compaction operation.

The compaction service plans, links and commits on the driver in pure Python; this executor only
distributes :class:`~hoodie.services.compaction.CompactionTask` objects, each merging one file
group's base file with its selected log files through the format core inside a Spark task.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Sequence

import pyarrow as pa


def spark_executor(spark: Any) -> Callable[[list], Sequence[Any]]:
    """An executor for ``run_compaction(executor=...)`` that runs each task in its own Spark task."""

    def run(tasks: list) -> list:
        if not tasks:
            return []
        from pyspark.sql.types import BinaryType, StructField, StructType

        rows = [(pickle.dumps(t),) for t in tasks]
        # One RDD partition per task, so every compaction operation gets its own Spark task.
        rdd = spark.sparkContext.parallelize(rows, len(rows))
        df = spark.createDataFrame(rdd, StructType([StructField("task", BinaryType(), False)]))
        out_schema = StructType([StructField("stat", BinaryType(), False)])

        def execute(batches):
            from pyspark import TaskContext

            from hoodie.format import naming as N

            tc = TaskContext.get()
            for b in batches:
                out = []
                for raw in b.column(0).to_pylist():
                    task = pickle.loads(raw)
                    # The attempt id makes a retried task write new file names (Hudi's write token).
                    token = N.write_token(tc.partitionId(), tc.stageId(), tc.taskAttemptId()) if tc else None
                    out.append(pickle.dumps(task.run(token)))
                yield pa.RecordBatch.from_arrays([pa.array(out, pa.binary())], names=["stat"])

        result = df.mapInArrow(execute, out_schema).collect()
        return [pickle.loads(r[0]) for r in result]

    return run
