"""CALL procedures for savepoints and restores (Hudi's create_savepoint, show_savepoints,
delete_savepoint, rollback_to_savepoint), and run_clustering, which hoodie does not build.

Imported by :mod:`hoodie.interfaces.procedures`, which registers every procedure; a refusal of the
savepoint service comes back as a row with result false and the reason, as Hudi returns false.
"""

from __future__ import annotations

from typing import Any

from hoodie.interfaces.sql_call import PROCEDURES, Param, TableRef, procedure, resolve_table

TABLE = Param("table", str)
PATH = Param("basePath", str, aliases=("path", "base_path"))


def _table(spark: Any, args: dict[str, Any], name: str) -> TableRef:
    return resolve_table(spark, args, PROCEDURES[name.lower()])


@procedure("create_savepoint",
           [TABLE, Param("commit_time", str, required=True, aliases=("instant_time",)), Param("user", str),
            Param("comments", str, aliases=("comment",)), PATH],
           "create_savepoint_result boolean, savepoint_time string, files int, message string",
           "Savepoint a completed commit (Hudi's create_savepoint): `<t>.savepoint.inflight`, then `<t>.savepoint` "
           "with the files of the table's latest file slices as of the commit. While the savepoint exists, clean "
           "keeps those files, partition TTL skips their partitions and the commit cannot be rolled back; "
           "CALL rollback_to_savepoint brings the table back to it. `create_savepoint_result` false when refused "
           "(not a completed commit, savepointed already, older than the last clean retains, or files of its state "
           "cleaned): nothing was written and `message` says why.",
           examples=(
               "CALL create_savepoint(table => 'analytics.events', commit_time => '20240501000000000', "
               "user => 'ops', comments => 'before the backfill')",
           ))
def _create_savepoint(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.savepoint import SavepointError, create_savepoint

    try:
        r = create_savepoint(_table(spark, a, "create_savepoint").base_path, a["commit_time"], a["user"],
                             a["comments"])
    except SavepointError as e:
        return [(False, a["commit_time"], 0, str(e))]
    return [(True, r.instant, r.files, r.message)]


@procedure("show_savepoints", [TABLE, PATH],
           "savepoint_time string, savepointed_by string, savepointed_at long, comments string, partitions int, "
           "files int, note string",
           "The completed savepoints, newest first (Hudi's show_savepoints, with the savepoint's metadata: who, "
           "when (epoch ms), comments, and how many partitions and files it holds). Without any savepoint, one "
           "row (`savepoint_time` null) whose `note` says so.",
           examples=("CALL show_savepoints(table => 'analytics.events')",))
def _show_savepoints(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.savepoint import show_savepoints

    sps = show_savepoints(_table(spark, a, "show_savepoints").base_path)
    if not sps:
        return [(None, None, None, None, None, None,
                 "no savepoint on the active timeline; create one with CALL create_savepoint(table => ..., "
                 "commit_time => ...)")]
    rows = []
    for sp in sps:
        if sp.damaged:
            note = f"its metadata cannot be read ({sp.damaged}): clean refuses to run while it exists"
        else:
            note = "clean and partition TTL keep its files; CALL rollback_to_savepoint restores the table to it"
        rows.append((sp.instant, sp.savepointed_by, sp.savepointed_at_ms, sp.comments, len(sp.partitions),
                     len(sp.files), note))
    return rows


@procedure("delete_savepoint", [TABLE, Param("instant_time", str, required=True), PATH],
           "delete_savepoint_result boolean, message string",
           "Delete a savepoint (Hudi's delete_savepoint); its files become cleanable again. "
           "`delete_savepoint_result` false when there is no such savepoint (or a restore to it is pending), with "
           "the reason in `message`.",
           examples=("CALL delete_savepoint(table => 'analytics.events', instant_time => '20240430000000000')",))
def _delete_savepoint(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.savepoint import SavepointError, delete_savepoint

    try:
        return [(True, delete_savepoint(_table(spark, a, "delete_savepoint").base_path, a["instant_time"]))]
    except SavepointError as e:
        return [(False, str(e))]


@procedure("rollback_to_savepoint", [TABLE, Param("instant_time", str, required=True), PATH],
           "rollback_savepoint_result boolean, restore_instant string, rolled_back_instants string, "
           "deleted_files int, message string",
           "Restore the table to a savepoint (Hudi's rollback_to_savepoint): every write after it (commits, "
           "deltacommits, replacecommits, compactions; pending or completed) is rolled back, newest first, as one "
           "`restore` instant; the metadata table follows. `rollback_savepoint_result` false when the restore is "
           "refused before anything is written (no such savepoint, a later savepoint, files a clean deleted, a log "
           "compaction after it, or on table versions 8/9 a metadata table that compacted a commit to take out), "
           "with the reason in `message`. Calling it again finishes an interrupted restore.",
           examples=("CALL rollback_to_savepoint(table => 'analytics.events', instant_time => '20240430000000000')",))
def _rollback_to_savepoint(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.services.savepoint import SavepointError, rollback_to_savepoint

    try:
        r = rollback_to_savepoint(_table(spark, a, "rollback_to_savepoint").base_path, a["instant_time"])
    except SavepointError as e:
        return [(False, None, None, 0, str(e))]
    return [(True, r.restore_instant or None, ",".join(t for t, _ in r.rolled_back), r.deleted_files, r.message)]


CLUSTERING_INSTEAD = (
    "hoodie does not build clustering: it neither plans nor executes it (it reads tables Java Hudi clustered, "
    "and leaves pending clustering plans to Hudi). Instead: to merge small files and sort a partition, rewrite "
    "it with hoodie.datasource.write.operation=insert_overwrite (files sized by hoodie.parquet.max.file.size); "
    "new inserts fill small base files (hoodie.parquet.small.file.limit); on MERGE_ON_READ tables CALL "
    "run_compaction merges log files; for clustering proper, run Hudi's own run_clustering (Spark with the Hudi "
    "bundle). Nothing was written")


@procedure("run_clustering",
           [TABLE, PATH, Param("predicate", str), Param("order", str), Param("show_involved_partition", bool),
            Param("op", str), Param("order_strategy", str), Param("options", str), Param("instants", str),
            Param("selected_partitions", str), Param("partition_regex_pattern", str), Param("limit", int)],
           "timestamp string, input_group_size int, state string, involved_partitions string, message string",
           "Hudi's run_clustering, which hoodie does not build: one row (`state` NOT_SUPPORTED) whose `message` "
           "says what to use instead; nothing is written. Hudi's arguments are accepted so that calls written for "
           "Hudi get that answer rather than an argument error.",
           examples=("CALL run_clustering(table => 'analytics.events')",))
def _run_clustering(spark: Any, a: dict[str, Any]) -> list[tuple]:
    from hoodie.format.table import HoodieTable
    from hoodie.format.timeline import instant as I

    table = HoodieTable(_table(spark, a, "run_clustering").base_path)
    tl = table.timeline
    pending = [i.timestamp for i in tl.pending().instants if i.action in (I.REPLACE_COMMIT, I.CLUSTERING)]
    msg = CLUSTERING_INSTEAD
    if pending:
        msg += (f". Pending replacecommit(s) {', '.join(pending[:3])} (clustering plans written by Hudi, or "
                "failed overwrites) stay as they are")
    return [(None, 0, "NOT_SUPPORTED", None, msg)]
