"""The rollback action: rolling back one write instant the way Hudi does it (table version 6 and,
where 1.x differs, 8/9: there a log file holds one deltacommit, so rolling it back deletes it),
as the steps a transaction runs (:class:`WriteRollback`). Pure Python, no Spark.

A rollback of instant X writes ``<r>.rollback.requested`` (Avro plan: the files X created),
``<r>.rollback.inflight``, deletes those files (or, for a log file that also holds other instants'
blocks, appends a rollback command block in a new log file), writes ``<r>.rollback`` (Avro
metadata), then removes X's own timeline files. Every step is idempotent, so a crash during a
rollback is repaired by rolling back again.

Files created by X are found through its markers (``.hoodie/.temp/X``); without markers (a
Java writer with markers disabled, or a crash before the first marker) every partition is listed:
base files named with instant X, and log files whose blocks all carry instant X.

A partition TTL replacecommit whose expired files were stashed (``hoodie.partition.ttl.stash.enabled``)
writes no data file, but its rollback moves the stashed files back before removing the commit
(hoodie.services.ttl.stash.unstash, passed in as a :class:`StashReturn`), so the rows return; when the
stash is gone the rollback is refused. The entry point is :mod:`hoodie.services.rollback.operation`;
the rollback of failed writes every writer starts with is :mod:`hoodie.services.rollback.failed_writes`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from hoodie.faults import fault_point
from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans
from hoodie.format.timeline import active as T
from hoodie.format.slice import writer as W
from hoodie.format.file_group.fsview import list_partitions
from hoodie.format.log import logformat as L
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.table import HoodieTable
from hoodie.services.commit import Commit
from hoodie.services.rollback.instant import RollbackError, RollbackResult, log, start_rollback


def _files_of_instant(table: HoodieTable, instant: str) -> tuple[list[str], list[str]]:
    """(files to delete, log files that need a rollback command block instead)."""
    storage = table.storage
    if _is_delete_partition(table, instant):
        return [], []  # a delete_partition replacecommit writes no data files
    marked = [p for p, _ in W.marker_files(storage, instant)]
    candidates: list[str] = []
    if marked:
        candidates = [p for p in marked if storage.exists(p)]
    else:
        for part in list_partitions(storage):
            for st in storage.list_dir(part):
                if st.is_dir:
                    continue
                if N.is_base_file(st.name) and N.parse_base_file(st.name).instant == instant:
                    candidates.append(st.path)
                elif N.is_log_file(st.name) and (table.timeline_layout == 1
                                                 or N.parse_log_file(st.name).base_instant == instant):
                    # Layout 2 names a log file by the deltacommit that wrote it.
                    candidates.append(st.path)
    to_delete: list[str] = []
    to_block: list[str] = []
    for path in candidates:
        name = path.rsplit("/", 1)[-1]
        if N.is_base_file(name):
            if N.parse_base_file(name).instant == instant:
                to_delete.append(path)
            continue
        if not N.is_log_file(name):
            continue
        instants = set()
        try:
            for b in read_log_file(storage, path, warn=False):
                if b.block_type != BlockType.CORRUPT:
                    instants.add(b.instant_time)
        except FileNotFoundError:
            continue
        if not instants or instants == {instant}:
            # Hudi 0.14+ never appends, so a log file written by X holds only X's blocks (a file
            # with no readable block is the torn tail of X's own write).
            if instants or marked:
                to_delete.append(path)
        elif instant in instants:
            to_block.append(path)
    return sorted(set(to_delete)), sorted(set(to_block))


def check_pending_compactions(table: HoodieTable, target: Instant, files: Iterable[str],
                              ignore: Iterable[str] = ()) -> None:
    """Refuse to roll back ``target`` when a pending compaction plan reads one of its ``files``.

    Deleting such a file (or hiding its blocks behind a rollback block the plan does not list) would
    wedge the table: the compaction fails on the missing file or brings the data back, and its own
    rollback keeps the plan. Java Hudi refuses this rollback too. A plan only reads slices committed
    before its instant, so only plans later than ``target`` are read.

    ``ignore``: pending compactions that go first anyway (a restore removes every pending compaction
    after its savepoint before the writes they read).

    Raises:
        RollbackError: naming the compaction and how to get rid of it first; nothing has changed.
    """
    paths = set(files)
    if not paths:
        return
    tl = table.timeline
    base = table.storage.uri()
    skip = set(ignore)
    for c in tl.pending_compactions().after(target.timestamp).instants:
        if c.timestamp in skip:
            continue
        try:
            plan = tl.compaction_plan(c.timestamp)
        except T.DamagedTimelineFileError as e:
            raise RollbackError(f"cannot roll back {target.timestamp}: pending compaction {c.timestamp} may read its "
                                f"files, and {e}") from None
        # Its base files, log files and the targets of its planned links.
        hit = sorted(paths & plan.file_paths())
        if hit:
            raise RollbackError(
                f"cannot roll back {target.timestamp}: pending compaction {c.timestamp} includes its file(s) "
                f"{', '.join(hit[:3])}{' ...' if len(hit) > 3 else ''}. Run the compaction first "
                f"(`hoodie compaction run {base} --instant {c.timestamp}`; {target.timestamp} then is no longer the latest "
                f"write and stays), or remove the plan with `hoodie rollback {base} {c.timestamp}` and roll back "
                f"{target.timestamp} after it. Nothing was changed")


@dataclass
class StashReturn:
    """How a rollback of a completed TTL replacecommit whose files were stashed moves them back
    (:mod:`hoodie.services.ttl.stash` provides both steps): ``unstash(rollback_instant)`` before
    the TTL commit goes (returns the files moved back), ``finish(rollback_instant)`` after."""

    unstash: Callable[[str], list[str]]
    finish: Callable[[str], None]


class WriteRollback:
    """The steps of one rollback of ``target``, in order: :meth:`plan` (nothing written),
    :meth:`start` (requested/inflight rollback instant, or an interrupted one resumed),
    :meth:`execute` (files deleted, command blocks written), :meth:`complete` (the rollback
    instant), :meth:`finalize` (the rolled-back instant's own files removed). Every step is
    idempotent, so a crash anywhere is repaired by rolling back again."""

    def __init__(self, table: HoodieTable, target: Instant, stash: Optional[StashReturn] = None) -> None:
        self.table = table
        self.target = target
        self.stash = stash
        self.started = time.monotonic()
        self.to_delete: list[str] = []
        self.to_block: list[str] = []
        self.plan_bytes = b""
        self.inflight: Optional[Instant] = None
        self.part_meta: dict[str, dict] = {}
        self.deleted: list[str] = []
        self.blocks_written: list[str] = []
        self.unstashed: list[str] = []

    def plan(self, ignore_compactions: Iterable[str] = ()) -> None:
        """Find the files to delete or to hide behind a command block; refuse (nothing written)
        while a pending compaction plan reads one of them (except those in ``ignore_compactions``,
        which a restore removes first)."""
        storage = self.table.storage
        target = self.target
        self.started = time.monotonic()
        self.to_delete, self.to_block = _files_of_instant(self.table, target.timestamp)
        # Before anything is written (a resumed rollback has nothing left in a plan: it was checked).
        check_pending_compactions(self.table, target, self.to_delete + self.to_block, ignore_compactions)
        requests = []
        by_part: dict[str, list[str]] = {}
        for p in self.to_delete:
            by_part.setdefault(p.rpartition("/")[0], []).append(p)
        for part, files in sorted(by_part.items()):
            requests.append(plans.rollback_request(part, files_to_delete=[storage.uri(f) for f in files]))
        for p in self.to_block:
            part, _, name = p.rpartition("/")
            lp = N.parse_log_file(name)
            requests.append(plans.rollback_request(part, lp.file_id, lp.base_instant, [],
                                                   {storage.uri(p): storage.size(p)}))
        plan = plans.rollback_plan((target.timestamp, target.action), requests)
        self.plan_bytes = plans.write_avro_metadata("HoodieRollbackPlan", plan)

    def start(self) -> Instant:
        """The inflight rollback instant (see :func:`start_rollback`)."""
        self.inflight = start_rollback(self.table, self.target.timestamp, self.plan_bytes)
        return self.inflight

    def execute(self) -> None:
        """Delete the target's files, move stashed files back, write command blocks."""
        assert self.inflight is not None
        storage = self.table.storage
        rb = self.inflight.timestamp
        for p in self.to_delete:
            part = p.rpartition("/")[0]
            ok = storage.delete(p)
            pm = self.part_meta.setdefault(part, {"ok": [], "failed": [], "blocks": {}})
            (pm["ok"] if ok or not storage.exists(p) else pm["failed"]).append(storage.uri(p))
            self.deleted.append(p)
            fault_point("rollback.after_delete")
        if self.stash is not None:
            # Before the TTL commit goes: until then the moved files stay hidden (and safe, see unstash).
            self.unstashed = self.stash.unstash(rb)
        for p in self.to_block:
            part, _, name = p.rpartition("/")
            lp = N.parse_log_file(name)
            ver = W.next_log_version(storage, part, lp.file_id, lp.base_instant)
            new = N.log_file_name(lp.file_id, lp.base_instant, ver, N.UNKNOWN_WRITE_TOKEN)
            rel = f"{part}/{new}" if part else new
            L.write_log_file(storage, rel, [L.encode_command_block(rb, self.target.timestamp)])
            self.part_meta.setdefault(part, {"ok": [], "failed": [], "blocks": {}})["blocks"][storage.uri(rel)] = \
                storage.size(rel)
            self.blocks_written.append(rel)

    def metadata(self) -> dict:
        """The ``HoodieRollbackMetadata`` record of what :meth:`execute` did."""
        assert self.inflight is not None
        rb = self.inflight.timestamp
        return plans.rollback_metadata(
            rb, int((time.monotonic() - self.started) * 1000), [(self.target.timestamp, self.target.action)],
            {part: plans.rollback_partition_metadata(part, pm["ok"], pm["failed"], pm["blocks"] or None)
             for part, pm in self.part_meta.items()},
        )

    def content(self) -> bytes:
        """What the completed rollback instant holds (``HoodieRollbackMetadata``)."""
        return plans.write_avro_metadata("HoodieRollbackMetadata", self.metadata())

    def finalize(self) -> RollbackResult:
        """Remove the rolled-back instant's own files (completed last-to-first) and its markers."""
        assert self.inflight is not None
        storage = self.table.storage
        target = self.target
        rb = self.inflight.timestamp
        self.table.delete_instant(target.timestamp, target.action, (State.COMPLETED, State.INFLIGHT, State.REQUESTED))
        W.delete_markers(storage, target.timestamp)
        if self.stash is not None:
            self.stash.finish(rb)
        log.info("rolled back %s (%d files deleted, %d command blocks%s)", target, len(self.deleted),
                 len(self.blocks_written),
                 f", {len(self.unstashed)} stashed files moved back" if self.stash is not None else "")
        return RollbackResult(rb, target.timestamp, target.action, self.deleted, self.blocks_written,
                              unstashed_files=self.unstashed)

    def run(self, commit: Commit) -> RollbackResult:
        """Every step, in order (the rollback of a failed write inside a writing transaction, whose
        ``commit`` completes the rollback instant)."""
        self.plan()
        inflight = self.start()
        self.execute()
        # Go on with the snapshot the commit point returned (the rollback's completion in it).
        self.table = commit(inflight, self.content()).table or self.table
        fault_point("rollback.after_complete")
        return self.finalize()


def _is_delete_partition(table: HoodieTable, instant: str) -> bool:
    inst = table.timeline.get(instant)
    if inst is None or inst.action != I.REPLACE_COMMIT:
        return False
    try:
        data = table.timeline.read_file(inst.requested_file_name)
        return bool(data) and plans.read_avro_metadata(data).get("operationType") == "DELETE_PARTITION"
    except (FileNotFoundError, ValueError):
        return False
