"""Hudi's procedures that hoodie does not have, each with what to use instead.

``CALL <name>(...)`` of any of them (also as ``system.<name>``) is refused before anything is read or
written, with the message below; ``CALL help(cmd => '<name>')`` shows the same message. Every name on
Hudi 1.x's procedures page (https://hudi.apache.org/docs/procedures) and in its procedure registry is
either a procedure of :data:`hoodie.interfaces.sql_call.PROCEDURES` or a key here
(``tests/engine/test_sql_procedures_info.py`` checks both lists).
"""

from __future__ import annotations

# Every procedure name of Hudi 1.x's procedures page and registry (HoodieProcedures), for the test that each
# one gets a result or a refusal naming what to use.
HUDI_PROCEDURES = (
    "help", "show_commits", "show_commits_metadata", "show_commit_extra_metadata", "show_archived_commits",
    "show_archived_commits_metadata", "show_commit_files", "show_commit_partitions", "show_commit_write_stats",
    "show_rollbacks", "show_rollback_detail", "commits_compare", "archive_commits", "export_instants",
    "rollback_to_instant", "create_savepoint", "show_savepoints", "delete_savepoint", "rollback_to_savepoint",
    "copy_to_temp_view", "copy_to_table", "create_metadata_table", "init_metadata_table", "delete_metadata_table",
    "show_metadata_table_partitions", "show_metadata_table_files", "show_metadata_table_stats",
    "show_metadata_table_column_stats", "show_column_stats_overlap", "validate_metadata_table_files",
    "show_table_properties", "show_fs_path_detail", "stats_file_sizes", "stats_wa", "show_logfile_records",
    "show_logfile_metadata", "show_invalid_parquet", "show_fsview_all", "show_fsview_latest", "run_clustering",
    "show_clustering", "run_compaction", "show_compaction", "run_clean", "show_cleans", "show_clean_plans",
    "delete_marker", "sync_validate", "hive_sync", "hdfs_parquet_import", "repair_add_partition_meta",
    "repair_corrupted_clean_files", "repair_deduplicate", "repair_migrate_partition_meta",
    "repair_overwrite_hoodie_props", "run_bootstrap", "show_bootstrap_mapping", "show_bootstrap_partitions",
    "upgrade_table", "downgrade_table", "show_file_status", "run_ttl", "drop_partition", "truncate_table",
    "run_rollback_inflight_tableservice", "show_timeline",
)

# name -> what to use instead (the refusal's second half).
UNSUPPORTED: dict[str, str] = {
    "commits_compare": "CALL show_commits(table => ...) on each table and compare the commit_time columns",
    "export_instants": "copy the instant files of <base path>/.hoodie (the timeline) with any file tool; "
                       "CALL show_timeline(...) lists them",
    "copy_to_table": "CREATE TABLE new_name USING hudi TBLPROPERTIES (primaryKey = ...) AS SELECT * FROM the_table "
                     "(hoodie.sql), or CALL copy_to_temp_view(...) for a view",
    "init_metadata_table": "CALL create_metadata_table(table => ...), which builds and initializes it",
    "show_metadata_table_stats": "CALL show_metadata_table_files(table => ...) and CALL stats_file_sizes(table => ...)",
    "show_metadata_table_column_stats": "hoodie's metadata table has no column_stats partition it reads for you; "
                                        "CALL show_metadata_table_files(table => ...) lists what it holds",
    "show_column_stats_overlap": "hoodie's metadata table has no column_stats partition it reads for you; "
                                 "CALL stats_file_sizes(table => ...) shows file sizes",
    "show_fs_path_detail": "CALL show_partitions(table => ...) (files and sizes per partition) and "
                           "CALL stats_file_sizes(table => ...)",
    "show_logfile_records": "read the table with hoodie.read_table(path) or SELECT (hoodie.sql); CALL "
                            "show_fsview_latest(table => ...) names each file slice's log files",
    "show_logfile_metadata": "CALL show_fsview_latest(table => ...) names each file slice's log files; `hoodie show` "
                             "(the CLI) shows the timeline and file slices",
    "show_invalid_parquet": "CALL validate_metadata_table_files(table => ...) compares the listing with storage; a "
                            "read of the table (hoodie.read_table) names any file it cannot read",
    "show_clustering": "hoodie builds no clustering plans; CALL show_timeline(table => ...) lists pending "
                       "replacecommit/clustering instants Hudi wrote",
    "show_cleans": "CALL show_clean_plans(table => ...) (every clean, its plan and files) and "
                   "CALL show_timeline(table => ..., filter => \"action = 'clean'\")",
    "delete_marker": "nothing: hoodie removes an instant's markers when it commits, and CALL rollback_to_instant("
                     "table => ..., instant_time => ...) removes a failed write with its markers",
    "sync_validate": "SELECT count(*) over each table with hoodie.sql and compare; hoodie syncs no Hive tables",
    "hive_sync": "hoodie.catalog.register_table(spark, 'db.name', path), or CREATE TABLE db.name USING hudi LOCATION "
                 "'/path/to/table' through hoodie.sql: hoodie registers tables in Spark's session catalog itself",
    "hdfs_parquet_import": "write the Parquet data with hoodie.spark.write(spark.read.parquet(src), path, options) "
                           "or hoodie.write_table(path, pyarrow.parquet.read_table(src), options)",
    "run_bootstrap": "write the existing data as a new table: hoodie.spark.write(df, path, {..., "
                     "'hoodie.datasource.write.operation': 'bulk_insert'}) or CREATE TABLE ... USING hudi AS SELECT; "
                     "hoodie does not write bootstrap (skeleton) tables",
    "show_bootstrap_mapping": "hoodie does not write or read bootstrap (skeleton) tables; write the data as a new "
                              "table instead (bulk_insert)",
    "show_bootstrap_partitions": "hoodie does not write or read bootstrap (skeleton) tables; write the data as a new "
                                 "table instead (bulk_insert)",
    "repair_add_partition_meta": "nothing: hoodie writes .hoodie_partition_metadata with every new partition",
    "repair_corrupted_clean_files": "CALL show_clean_plans(table => ...) names a damaged clean file; move it aside "
                                    "as the error message says (docs/clean.md)",
    "repair_deduplicate": "DELETE FROM the table (hoodie.sql) the duplicated keys and INSERT them once; hoodie's "
                          "upsert keeps one record per key",
    "repair_migrate_partition_meta": "nothing: hoodie reads both partition metafile formats",
    "repair_overwrite_hoodie_props": "ALTER TABLE t SET TBLPROPERTIES ('hoodie.key' = 'value') / UNSET "
                                     "TBLPROPERTIES (hoodie.sql), which rewrites hoodie.properties with its checksum",
    "upgrade_table": "hoodie writes table versions 6, 8 and 9 as they are (hoodie.write.table.version on a new "
                     "table); upgrade an existing table with Hudi's own upgrade_table",
    "downgrade_table": "hoodie writes table versions 6, 8 and 9 as they are; downgrade with Hudi's own "
                       "downgrade_table",
    "drop_partition": "ALTER TABLE t DROP PARTITION (col = value) (hoodie.sql): the same delete_partition commit",
    "truncate_table": "INSERT OVERWRITE TABLE t SELECT <the table's data columns> FROM t WHERE false (hoodie.sql): "
                      "one insert_overwrite_table commit that replaces every file group, as TRUNCATE does in Hudi",
    "run_rollback_inflight_tableservice": "CALL rollback_to_instant(table => ..., instant_time => ...) rolls back a "
                                          "pending write or removes a pending compaction plan",
}


def refusal(name: str) -> str:
    """The message for ``CALL name(...)`` of a Hudi procedure hoodie does not have."""
    return (f"CALL {name}: Hudi's {name} is not supported by hoodie, and nothing was read or written. "
            f"Instead: {UNSUPPORTED[name]}")


__all__ = ["HUDI_PROCEDURES", "UNSUPPORTED", "refusal"]
