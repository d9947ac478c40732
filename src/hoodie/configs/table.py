"""Table keys: what ``hoodie.properties`` records about a table (Hudi's ``HoodieTableConfig`` names),
and the write options that set them when a table is created."""

from __future__ import annotations

from hoodie.configs.registry import TB, W, define
from hoodie.configs.rules import BOOLEAN, Enum

TABLE_NAME = define("hoodie.table.name", None, "Table name (required when creating a table).", W)
DATABASE_NAME = define("hoodie.database.name", None, "Database name recorded in hoodie.properties.", TB)
TIMELINE_TIMEZONE = define(
    "hoodie.table.timeline.timezone", "UTC",
    "Time zone of instant times: LOCAL or UTC. Tables hoodie creates default to UTC; a table whose "
    "hoodie.properties lacks the key is LOCAL (Hudi's default), where each instant is its writer's "
    "wall-clock time (see docs/ttl.md).", TB, type=Enum(("LOCAL", "UTC"), what="a timeline time zone"))

# Accepted so that false is a no-op and true is refused with its reason (an unknown key would only be
# warned about, with a guess at another key, and the table written without change data).
CDC_ENABLED = define(
    "hoodie.table.cdc.enabled", "false",
    "Change data capture on write (Java Hudi's CDC log files with before/after images). hoodie does not write "
    "CDC log files: true is refused before anything is written; incremental queries "
    "(hoodie.read_table(query_type='incremental')) give the records changed in a range of commits.",
    W, type=BOOLEAN)
