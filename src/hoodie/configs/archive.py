"""Archival keys: Hudi's ``HoodieArchivalConfig`` (``hoodie.archive.*``, ``hoodie.keep.*``,
``hoodie.commits.archival.batch``, ``hoodie.timeline.compaction.batch.size``), with Hudi's defaults;
``hoodie.services.archive.config.ArchivalConfig`` parses them."""

from __future__ import annotations

from hoodie.configs.registry import define
from hoodie.configs.rules import BOOLEAN, Int

_G = "archival"

AUTOMATIC = define(
    "hoodie.archive.automatic", True,
    "Archive the timeline after each commit (a post-commit step under the table lock), as Hudi does by default: "
    "completed instants older than the newest hoodie.keep.min.commits commits move to the archived timeline "
    "once more than hoodie.keep.max.commits are active, within Hudi's guards (pending instants, savepoints, the "
    "cleaner's earliest commit to retain, the metadata table).", _G, type=BOOLEAN)
ASYNC = define(
    "hoodie.archive.async", False,
    "With hoodie.archive.automatic: archive in a background thread after the commit returns instead of inline "
    "(one archival per table at a time; hoodie.services.archive.wait_for_async_archival joins it).", _G,
    type=BOOLEAN)
MIN_COMMITS = define(
    "hoodie.keep.min.commits", 20,
    "Archival keeps at least this many of the newest completed commits in the active timeline.", _G,
    type=Int(minimum=1))
MAX_COMMITS = define(
    "hoodie.keep.max.commits", 30,
    "Archival runs once more than this many completed commits are in the active timeline; it must be greater "
    "than hoodie.keep.min.commits.", _G, type=Int(minimum=2))
BATCH = define(
    "hoodie.commits.archival.batch", 10,
    "Table version 6: archived instant entries per Avro log block of the archive file.", _G, type=Int(minimum=1))
BEYOND_SAVEPOINT = define(
    "hoodie.archive.beyond.savepoint", False,
    "Archive commits after a savepoint (skipping the savepointed ones). hoodie accepts only false: its readers "
    "date the start of the active timeline by its first instant and need no holes in it.", _G, type=BOOLEAN)
MERGE_ENABLE = define(
    "hoodie.archive.merge.enable", False,
    "Table version 6: after writing its archive file, archival merges the newest small archive files of "
    ".hoodie/archived into one once hoodie.archive.merge.files.batch.size of them are in a row, so that the number "
    "of archive files readers list and read stays bounded (Hudi 0.11+; Hudi only merges on storage that cannot "
    "append, and hoodie never appends). A merge is crash safe: the next archival reverts or completes an "
    "interrupted one, and readers see every archived instant exactly once meanwhile. Not applicable to table "
    "versions 8/9: their LSM archived timeline compacts its own levels (hoodie.timeline.compaction.batch.size).",
    _G, type=BOOLEAN)
MERGE_FILES_BATCH_SIZE = define(
    "hoodie.archive.merge.files.batch.size", 10,
    "Table version 6, with hoodie.archive.merge.enable: the minimum number of small archive files to merge at a "
    "time. Candidates are the newest archive files up to (not including) the newest one larger than "
    "hoodie.archive.merge.small.file.limit.bytes; when there are at least this many, all of them are merged into "
    "one. Not applicable to table versions 8/9.", _G, type=Int(minimum=2))
MERGE_SMALL_FILE_LIMIT_BYTES = define(
    "hoodie.archive.merge.small.file.limit.bytes", 20 * 1024 * 1024,
    "Table version 6, with hoodie.archive.merge.enable: an archive file larger than this is not merged, and no "
    "older file is merged past it (the order of archive files is kept). Not applicable to table versions 8/9.",
    _G, type=Int(minimum=1, bits=64))
TIMELINE_COMPACTION_BATCH_SIZE = define(
    "hoodie.timeline.compaction.batch.size", 10,
    "Table versions 8/9: once a level of the LSM archived timeline holds this many files, the oldest of them are "
    "merged into one file of the next level.", _G, type=Int(minimum=2))

# Hudi keeps the files of this many manifest versions of the LSM timeline (plus one per level compacted in
# the same archival): readers that loaded an older snapshot find its files still there.
LSM_RETAINED_MANIFESTS = 3
