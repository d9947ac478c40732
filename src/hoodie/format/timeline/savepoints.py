"""Savepoints on the timeline: which instants are savepointed and which files each one holds.

A savepoint of commit ``t`` is Hudi's ``savepoint`` action at the commit's own instant time:
``<t>.savepoint.inflight`` (empty), then ``<t>.savepoint`` (``<t>_<completion>.savepoint`` on
timeline layout 2) holding an Avro ``HoodieSavepointMetadata``: per partition, the names of the
files of the latest file slices as of ``t`` (``savepointDataFile``; base files, and since Hudi 0.14
log files too). The cleaner keeps every file slice that holds a savepointed file, partition TTL
leaves savepointed partitions alone, and a restore (``rollback_to_savepoint``) brings the table
back to the savepoint. This module only reads; :mod:`hoodie.services.savepoint` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.active import DamagedTimelineFileError, Timeline


@dataclass(frozen=True)
class Savepoint:
    """One completed savepoint. ``damaged`` (the reason) is set when its metadata cannot be read:
    which files it holds is then unknown, and callers must assume it holds anything."""

    instant: str
    completion: Optional[str] = None
    savepointed_by: str = ""
    savepointed_at_ms: Optional[int] = None
    comments: str = ""
    partition_files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    damaged: Optional[str] = None

    @property
    def files(self) -> set[str]:
        """Every savepointed file name (names carry the file id, so they are unique in the table)."""
        return {n for names in self.partition_files.values() for n in names}

    @property
    def partitions(self) -> list[str]:
        """The partitions in which the savepoint holds at least one file."""
        return sorted(p for p, names in self.partition_files.items() if names)


def read_savepoint(tl: Timeline, inst: I.Instant) -> Savepoint:
    """The savepoint of the completed ``savepoint`` instant ``inst`` (damaged metadata reported in
    ``damaged``, not raised)."""
    try:
        md = tl.read_avro(inst)
    except FileNotFoundError:
        return Savepoint(inst.timestamp, inst.completion, damaged=f"{inst.file_name} is gone")
    except DamagedTimelineFileError as e:
        return Savepoint(inst.timestamp, inst.completion, damaged=str(e))
    parts: dict[str, tuple[str, ...]] = {}
    for key, pm in (md.get("partitionMetadata") or {}).items():
        part = (pm or {}).get("partitionPath")
        parts[key if part is None else part] = tuple((pm or {}).get("savepointDataFile") or ())
    at = md.get("savepointedAt")
    return Savepoint(inst.timestamp, inst.completion, md.get("savepointedBy") or "",
                     int(at) if at is not None else None, md.get("comments") or "", parts)


def completed_savepoints(tl: Timeline) -> list[Savepoint]:
    """Every completed savepoint on the timeline, oldest first."""
    return [read_savepoint(tl, i) for i in tl.completed().by_actions(I.SAVEPOINT).instants]


def savepoint_at(tl: Timeline, instant: str) -> Optional[Savepoint]:
    """The completed savepoint at ``instant``, if there is one."""
    for inst in tl.completed().by_actions(I.SAVEPOINT).instants:
        if inst.timestamp == instant:
            return read_savepoint(tl, inst)
    return None


def is_savepointed(tl: Timeline, instant: str) -> bool:
    """Whether a completed savepoint exists at ``instant``."""
    return any(i.timestamp == instant for i in tl.completed().by_actions(I.SAVEPOINT).instants)


__all__ = ["Savepoint", "read_savepoint", "completed_savepoints", "savepoint_at", "is_savepointed"]
