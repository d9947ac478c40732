"""Read keys (Hudi's ``hoodie.datasource.query.*`` and ``hoodie.datasource.read.*``, data skipping)."""

from __future__ import annotations

from hoodie.configs.registry import R, define
from hoodie.configs.rules import BOOLEAN, Enum, Int

QUERY_TYPE = define("hoodie.datasource.query.type", "snapshot", "snapshot, read_optimized or incremental.", R,
                    type=Enum(("snapshot", "read_optimized", "incremental"), what="a query type"))
READ_BEGIN_INSTANT = define("hoodie.datasource.read.begin.instanttime", None,
                            "Incremental start instant (exclusive).", R)
READ_END_INSTANT = define("hoodie.datasource.read.end.instanttime", None, "Incremental end instant (inclusive).", R)
HOLLOW_COMMIT_POLICY = define(
    "hoodie.read.timeline.holes.resolution.policy", "FAIL",
    "Incremental reads of version-6 tables when a write older than a completed one is still pending (a hollow "
    "commit: what it commits later has a commit time inside ranges already read): FAIL refuses the read, "
    "BLOCK reads only up to the last write completed before it. USE_TRANSITION_TIME is refused (hoodie "
    "does not order version-6 instants by completion; versions 8/9 always do).", R,
    aliases=("hoodie.datasource.read.handle.hollow.commit",),
    type=Enum(("FAIL", "BLOCK", "USE_TRANSITION_TIME"), what="a hollow-commit policy"))
SPARK_READ_NATIVE = define("hoodie.spark.read.native", True,
                           "hoodie.spark.read: base files that need no merging go through Spark's own Parquet scan "
                           "(false: every slice through hoodie's reader).", R, type=BOOLEAN)
INCREMENTAL_FORMAT = define(
    "hoodie.datasource.query.incremental.format", "latest_state",
    "Incremental query output: latest_state (the latest version of each changed record). Hudi's cdc format "
    "(change records with before/after images) is refused: hoodie does not read CDC log files.", R,
    type=Enum(("latest_state", "cdc"), what="an incremental format"))
SPLIT_TARGET_BYTES = define("hoodie.datasource.read.split.target.bytes", 128 * 1024 * 1024,
                            "Bytes of file slices grouped into one Spark task.", R, type=Int(minimum=1, bits=64))

ENABLE_DATA_SKIPPING = define(
    "hoodie.enable.data.skipping", None,
    "Reads: skip file slices the metadata table's column statistics prove hold no row passing the filters "
    "(docs/metadata-table.md). Default false for every table version (opt in): hoodie's reading of Java-written "
    "statistics is verified on the fixtures' types only, and a misread statistic would drop rows silently.",
    "reads", type=BOOLEAN)
