"""The rollback instant: what a rollback may target (:data:`ROLLBACK_ACTIONS`), what it returns
(:class:`RollbackResult`), what it refuses with (:class:`RollbackError`), and its requested and inflight
instant files, new or resumed from an interrupted run (:func:`start_rollback`). Every rollback writes
its instant through here: the rollback of a write (:mod:`hoodie.services.rollback.action`) and of a
pending compaction (:mod:`hoodie.services.compaction.rollback`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional

from hoodie.errors import HoodieError
from hoodie.faults import fault_point
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import active as T
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.table import HoodieTable

log = logging.getLogger("hoodie.services.rollback")  # the service users know

ROLLBACK_ACTIONS = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT)


class RollbackError(HoodieError):
    """A rollback is not allowed; the message says why and what to do."""


@dataclass
class RollbackResult:
    """What a rollback did."""

    rollback_instant: str
    rolled_back: str
    action: str
    deleted_files: list[str] = field(default_factory=list)
    command_blocks: list[str] = field(default_factory=list)
    unstashed_files: list[str] = field(default_factory=list)  # a stashed TTL commit's files, moved back
    moved_files: list[tuple[str, str]] = field(default_factory=list)  # a removed compaction plan's logs


def pending_rollback_of(table: HoodieTable, instant: str) -> Optional[Instant]:
    """A rollback of ``instant`` that an interrupted run left requested or inflight, if any.

    Hudi re-executes such a rollback instead of starting another one; starting a new one would leave
    the interrupted rollback pending on the timeline forever.
    """
    tl = table.timeline
    for inst in tl.pending().by_actions(I.ROLLBACK).instants:
        try:
            plan = tl.read_avro(Instant(inst.timestamp, I.ROLLBACK, State.REQUESTED))
        except FileNotFoundError:
            continue
        except T.DamagedTimelineFileError as e:
            # Which instant it rolls back is unknown: it cannot be resumed, and must not stop this one.
            log.warning("%s", e)
            continue
        if (plan.get("instantToRollback") or {}).get("commitTime") == instant:
            return inst
    return None


def start_rollback(table: HoodieTable, instant: str, plan: bytes) -> Instant:
    """The inflight rollback instant for ``instant``: an interrupted one resumed (its own plan kept;
    the files it still has to delete are found again, which is idempotent), or a new one with ``plan``."""
    storage = table.storage
    resumed = pending_rollback_of(table, instant)
    if resumed is None:
        req = T.create_requested(storage, table.new_instant_time(), I.ROLLBACK, plan)
        inflight = T.transition_to_inflight(storage, req, b"")
        table.wrote(req, inflight)
    else:
        log.info("resuming rollback %s of %s, left %s by an interrupted run", resumed.timestamp, instant,
                 resumed.state.name.lower())
        inflight = resumed if resumed.is_inflight else T.transition_to_inflight(storage, resumed, b"")
        table.wrote(inflight)
    fault_point("rollback.after_inflight")
    return inflight
