"""Just enough of a timeline, in either layout, to validate metadata-table entries.

Table version 6 keeps its timeline in ``.hoodie/`` (layout 1, ``hudi-v6-format.md`` §3.2); versions
8 and 9 in ``.hoodie/timeline/`` (layout 2, ``hudi-v8-v9-format.md`` §3.1), where a completed
instant's file is ``<requested>_<completion>.<action>``. The metadata table of a v8/v9 table uses
layout 2 too. hoodie's :class:`~hoodie.format.timeline.active.Timeline` reads layout 1 only (data tables of
version 8/9 are refused elsewhere), so this module reads both, for the metadata reader alone:
instants, states, completion times (layout 2) and the Avro metadata of rollbacks and restores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from hoodie.format.timeline import instant as I
from hoodie.format.timeline.instant import State
from hoodie.format.metadata.errors import LIST_THROUGH_STORAGE, MetadataTableError
from hoodie.format.storage import Storage
from hoodie.format.timeline.plans import read_avro_metadata

METAFOLDER = ".hoodie"
LAYOUT2_FOLDER = ".hoodie/timeline"


@dataclass(frozen=True)
class TimelineInstant:
    """One instant in its highest state; ``completion`` is its completion time (layout 2 only)."""

    timestamp: str
    action: str  # a completed compaction is "commit", a completed log compaction "deltacommit"
    state: State
    file_name: str
    completion: Optional[str] = None

    @property
    def is_completed(self) -> bool:
        """Whether the instant completed."""
        return self.state == State.COMPLETED


def _parse_layout2(name: str) -> Optional[tuple[str, str, State, Optional[str]]]:
    inst = I.parse_instant_file_name_v2(name)
    return None if inst is None else (inst.timestamp, inst.action, inst.state, inst.completion)


def _comparable(action: str) -> str:
    if action in (I.COMPACTION,):
        return I.COMMIT
    if action == "clustering":
        return I.REPLACE_COMMIT
    return I.comparable_action(action)


class ActiveTimeline:
    """The active timeline of one table (data or metadata), either layout."""

    def __init__(self, storage: Storage, layout: int) -> None:
        self.storage = storage
        self.layout = layout
        folder = LAYOUT2_FOLDER if layout == 2 else METAFOLDER
        self.folder = folder
        names = [s.name for s in storage.list_dir(folder) if not s.is_dir]
        best: dict[tuple[str, str], TimelineInstant] = {}
        for n in names:
            if layout == 2:
                p = _parse_layout2(n)
            else:
                inst = I.parse_instant_file_name(n)
                p = (inst.timestamp, inst.action, inst.state, None) if inst is not None else None
            if p is None:
                continue
            ts, action, state, completion = p
            key = (ts, _comparable(action))
            cur = best.get(key)
            if cur is None or state >= cur.state:
                best[key] = TimelineInstant(ts, action, state, n, completion)
        self.instants: list[TimelineInstant] = sorted(
            best.values(), key=lambda i: (i.timestamp, _comparable(i.action), int(i.state)))

    @staticmethod
    def layout_of(storage: Storage, props: dict[str, str]) -> int:
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

    @classmethod
    def load(cls, storage: Storage, props: dict[str, str]) -> "ActiveTimeline":
        """The timeline of the table at ``storage`` whose ``hoodie.properties`` are ``props``."""
        return cls(storage, cls.layout_of(storage, props))

    # -- queries -------------------------------------------------------------------------------
    def completed(self) -> list[TimelineInstant]:
        """Completed instants, in timestamp order."""
        return [i for i in self.instants if i.is_completed]

    def pending(self) -> list[TimelineInstant]:
        """Requested or inflight instants."""
        return [i for i in self.instants if not i.is_completed]

    def of_actions(self, actions: Iterable[str], instants: Optional[list[TimelineInstant]] = None
                   ) -> list[TimelineInstant]:
        """Instants (of ``instants``, default all) whose action is one of ``actions``."""
        wanted = set(actions)
        return [i for i in (self.instants if instants is None else instants) if i.action in wanted]

    def read_avro(self, inst: TimelineInstant, state: Optional[State] = None) -> dict:
        """The Avro record of an instant's file (its own state's, or ``state``'s).

        Raises:
            MetadataTableError: the file is missing, empty or not Avro (names the file).
        """
        if state is None or state == inst.state:
            name = inst.file_name
        else:
            name = I.instant_file_name(inst.timestamp, inst.action, state)
        rel = f"{self.folder}/{name}"
        try:
            return read_avro_metadata(self.storage.read_bytes(rel))
        except (FileNotFoundError, ValueError) as e:
            raise MetadataTableError(f"{self.storage.uri(rel)}: {e}") from None


def rolled_back_instants(tl: ActiveTimeline, inst: TimelineInstant) -> list[str]:
    """The instants a completed rollback or restore undid (``HoodieTableMetadataUtil.getRollbackedCommits``):
    a rollback's ``commitsRollback`` (or, when its completed file is empty, the plan's instant to roll
    back), a restore's ``commitsRollback`` of every rollback it made."""
    if inst.action == I.ROLLBACK:
        try:
            meta = tl.read_avro(inst)
            return [str(c) for c in meta.get("commitsRollback") or []]
        except MetadataTableError:
            plan = tl.read_avro(inst, State.REQUESTED)
            target = (plan.get("instantToRollback") or {}).get("commitTime")
            return [str(target)] if target else []
    if inst.action == I.RESTORE:
        meta = tl.read_avro(inst)
        out: list[str] = []
        for rms in (meta.get("hoodieRestoreMetadata") or {}).values():
            for rm in rms or []:
                out.extend(str(c) for c in rm.get("commitsRollback") or [])
        return out
    return []


__all__ = ["ActiveTimeline", "TimelineInstant", "rolled_back_instants"]
