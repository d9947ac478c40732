"""The timeline reading the metadata reader needs, on hoodie's one timeline class.

Table version 6 keeps its timeline in ``.hoodie/`` (layout 1, ``hudi-v6-format.md`` §3.2); versions
8 and 9 in ``.hoodie/timeline/`` (layout 2, ``hudi-v8-v9-format.md`` §3.1), where a completed
instant's file is ``<requested>_<completion>.<action>``. The metadata table of a v8/v9 table uses
layout 2 too. Both are read by :class:`~hoodie.format.timeline.active.Timeline`; this module adds what
the metadata reader asks of them: the layout a table's properties name (refused with the reader's
message when unknown), and the instants a rollback or restore undid, with errors naming the file.
"""

from __future__ import annotations

from typing import Mapping, Optional

from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError
from hoodie.format.storage import Storage
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.active import Timeline
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.timeline.plans import read_avro_metadata


def layout_of(storage: Storage, props: Mapping[str, str]) -> int:
    """The timeline layout ``props`` (the ``hoodie.properties`` of the table at ``storage``) name.

    Raises:
        MetadataTableError: a layout other than 1 or 2.
    """
    layout = int(props.get("hoodie.timeline.layout.version") or "1")
    if layout not in (1, 2):
        raise MetadataTableError(
            f"{storage.uri()} uses timeline layout {layout}; the metadata reader knows layouts 1 and 2. "
            f"{LIST_THROUGH_STORAGE}")
    return layout


def load_timeline(storage: Storage, props: Mapping[str, str]) -> Timeline:
    """The active timeline of the table at ``storage`` whose ``hoodie.properties`` are ``props``."""
    return Timeline.load(storage, layout_of(storage, props))


def read_avro(tl: Timeline, inst: Instant, state: Optional[State] = None) -> dict:
    """The Avro record of an instant's file (its own state's, or ``state``'s).

    Raises:
        MetadataTableError: the file is missing, empty or not Avro (names the file).
    """
    name = inst.file_name if state is None or state == inst.state else I.instant_file_name(
        inst.timestamp, inst.action, state)
    try:
        return read_avro_metadata(tl.read_file(name))
    except (FileNotFoundError, ValueError) as e:
        raise MetadataTableError(f"{tl.folder}/{name}: {e}") from None


def rolled_back_instants(tl: Timeline, inst: Instant) -> list[str]:
    """The instants a completed rollback or restore undid (``HoodieTableMetadataUtil.getRollbackedCommits``):
    a rollback's ``commitsRollback`` (or, when its completed file is empty, the plan's instant to roll
    back), a restore's ``commitsRollback`` of every rollback it made."""
    if inst.action == I.ROLLBACK:
        try:
            meta = read_avro(tl, inst)
            return [str(c) for c in meta.get("commitsRollback") or []]
        except MetadataTableError:
            plan = read_avro(tl, inst, State.REQUESTED)
            target = (plan.get("instantToRollback") or {}).get("commitTime")
            return [str(target)] if target else []
    if inst.action == I.RESTORE:
        meta = read_avro(tl, inst)
        out: list[str] = []
        for rms in (meta.get("hoodieRestoreMetadata") or {}).values():
            for rm in rms or []:
                out.extend(str(c) for c in rm.get("commitsRollback") or [])
        return out
    return []


__all__ = ["layout_of", "load_timeline", "read_avro", "rolled_back_instants"]
