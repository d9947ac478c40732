"""The timeline: instants, the active timeline (layout version 1), commit metadata and the Avro plans (compaction, clean, rollback, replace, savepoint, restore)."""
