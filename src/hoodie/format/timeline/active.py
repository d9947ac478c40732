"""The active timeline (layout version 1): listing, filtering, reading and state transitions.

Reference: ``hudi-v6-format.md`` §3.2. Ordering, state and completeness all come from file names;
state transitions create the new-state file with create-only semantics and never rename, so two
writers can never silently overwrite one instant file.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence

from hoodie.configs import table as TC
from hoodie.configs.table import TIMELINE_TIMEZONE
from hoodie.errors import HoodieError
from hoodie.format.timeline import instant as I
from hoodie.format.timeline.commit_metadata import AVRO_MAGIC, CommitMetadata
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.lock import check_still_held
from hoodie.format.storage import Storage
from hoodie.format import properties as P
from hoodie.format.timeline.plans import read_avro_metadata
from hoodie.format.timeline.compaction_plan import CompactionPlan

if TYPE_CHECKING:  # imported where used, as the Avro codec is, so that loading the timeline stays light
    from hoodie.format.timeline.compaction_plan import CompactionPlan

METAFOLDER = ".hoodie"
TIMELINE_FOLDER_V2 = ".hoodie/timeline"


class TimelineError(HoodieError):
    """A timeline operation is not allowed (wrong state, instant exists, ...)."""


class DamagedTimelineFileError(HoodieError, ValueError):
    """An Avro timeline file (a plan or a service's metadata) is empty, truncated or not Avro.

    A ``ValueError`` (callers that skip unreadable pending metadata catch that); the message names
    the file, the problem and what to do. ``path`` is the file's full URI.
    """

    def __init__(self, path: str, instant: I.Instant, problem: str, fix: str) -> None:
        super().__init__(f"{path} is damaged ({problem}); {fix}")
        self.path = path
        self.instant = instant
        self.problem = problem
        self.fix = fix


def damaged_file_fix(base_uri: str, inst: I.Instant) -> str:
    """What to do about a damaged Avro timeline file of ``inst``."""
    ts, action = inst.timestamp, inst.action
    if inst.is_completed:
        return "restore it from a backup: it records a completed action and cannot be rebuilt"
    if action == I.COMPACTION:
        return (f"remove the pending compaction with `hoodie rollback {base_uri} {ts}` (its outputs are deleted, "
                "logs written on top of it move back to their previous file slices), then schedule a new one")
    if action == I.REPLACE_COMMIT:
        return f"roll the pending replacecommit back with `hoodie rollback {base_uri} {ts}`"
    if action == I.CLEAN:
        return ("a pending clean holds no data: the next clean (`hoodie clean`) drops it and plans again "
                f"(or delete .hoodie/{ts}.clean.requested and .hoodie/{ts}.clean.inflight)")
    if action == I.ROLLBACK:
        return (f"if .hoodie/{ts}.rollback.inflight does not exist the rollback never started and the file can be "
                "deleted; otherwise restore it from a backup")
    return "restore it from a backup, or remove the pending instant with the tool that created it"


# The actions of Hudi's commits timeline (getCommitsTimeline), in every state.
_COMMITS_TIMELINE_ACTIONS = frozenset((I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION, I.LOG_COMPACTION,
                                       I.CLUSTERING))


def _collapse(instants: Iterable[Instant]) -> list[Instant]:
    """Keep the highest state per (timestamp, comparable action), as Hudi's layout v1 does."""
    best: dict[tuple[str, str], Instant] = {}
    for inst in instants:
        key = (inst.timestamp, I.comparable_action(inst.action))
        cur = best.get(key)
        if cur is None or inst.state >= cur.state:
            best[key] = inst
    return sorted(best.values(), key=Instant.sort_key)


class Timeline(I.InstantSequence):
    """An immutable, ordered view over instants. Filters return new timelines."""

    def __init__(self, instants: Sequence[Instant], storage: Optional[Storage] = None,
                 all_files: Optional[frozenset[str]] = None, folder: str = METAFOLDER,
                 start: Optional[str] = None) -> None:
        self.instants: list[Instant] = list(instants)
        self._storage = storage
        self._all_files = all_files or frozenset()
        self.folder = folder  # where the instant files are: .hoodie (layout 1) or .hoodie/timeline (2)
        # The first instant time of the commits timeline as listed, kept by every filter: a write older than
        # it was archived (hence completed), while one a filter dropped was not (a reader's timeline as of a
        # completion time drops the writes completed later, which may be older than its first instant).
        # Only commits-timeline instants count, as in Java's isBeforeTimelineStarts: archival moves commits
        # out while a pending clean or rollback, a restore or a savepoint older than them stays active, and
        # such an instant must not make the archived writes look uncommitted (issue 33).
        self.start: Optional[str] = start if start is not None else min(
            (i.timestamp for i in self.instants if i.action in _COMMITS_TIMELINE_ACTIONS),
            default=min((i.timestamp for i in self.instants), default=None))

    # -- loading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, storage: Storage, layout: int = 1) -> "Timeline":
        """List the timeline folder once and build the active timeline: ``.hoodie/`` for timeline
        layout 1 (table version 6), ``.hoodie/timeline/`` for layout 2 (versions 8 and 9, whose
        completed instants carry their completion time)."""
        folder = TIMELINE_FOLDER_V2 if layout == 2 else METAFOLDER
        parse = I.parse_instant_file_name_v2 if layout == 2 else I.parse_instant_file_name
        names = [s.name for s in storage.list_dir(folder) if not s.is_dir]
        parsed = [p for p in (parse(n) for n in names) if p is not None]
        return cls(_collapse(parsed), storage, frozenset(names), folder)

    # -- basic access -------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"Timeline({[str(i) for i in self.instants]})"

    @property
    def layout(self) -> int:
        """The timeline layout: 1 (``.hoodie/``, table version 6) or 2 (``.hoodie/timeline/``, 8 and 9)."""
        return 2 if self.folder == TIMELINE_FOLDER_V2 else 1

    def _new(self, instants: Iterable[Instant]) -> "Timeline":
        return Timeline(list(instants), self._storage, self._all_files, self.folder, self.start)

    def with_instants(self, instants: Iterable[Instant]) -> "Timeline":
        """A timeline of ``instants`` over the same files (a view built as of a chosen state)."""
        return self._new(sorted(instants, key=Instant.sort_key))

    def written(self, *instants: Instant) -> "Timeline":
        """This timeline as a listing would show it after this process wrote the files of ``instants``:
        the snapshot a transaction keeps under the table lock instead of listing the folder again (no one
        else changes the timeline while the lock is held)."""
        names = self._all_files | {i.file_name for i in instants}
        return Timeline(_collapse([*self.instants, *instants]), self._storage, frozenset(names), self.folder)

    def removed(self, timestamp: str, action: str, states: Iterable[State]) -> "Timeline":
        """This timeline as a listing would show it after this process deleted the files of instant
        ``timestamp`` (``action``) in ``states`` (:func:`delete_instant_files`): the snapshot a holder of
        the table lock keeps instead of listing the folder again."""
        parse = I.parse_instant_file_name_v2 if self.layout == 2 else I.parse_instant_file_name
        gone: set[str] = set()
        for st in states:  # the very files delete_instant_files deletes
            if st == State.COMPLETED and self.layout == 2:
                done = Instant(timestamp, action, State.COMPLETED).with_state(State.COMPLETED)
                gone |= {n for n in self._all_files if (p := parse(n)) is not None and p.is_completed
                         and p.timestamp == timestamp and p.action == done.action}
            else:
                gone.add(I.instant_file_name(timestamp, action, st))
        names = self._all_files - gone
        parsed = [p for p in (parse(n) for n in names) if p is not None]
        return Timeline(_collapse(parsed), self._storage, frozenset(names), self.folder)

    def filter(self, pred: Callable[[Instant], bool]) -> "Timeline":
        """Instants matching a predicate."""
        return self._new(i for i in self.instants if pred(i))

    def _view(self, name: str, pred: Callable[[Instant], bool]) -> "Timeline":
        """A named filter, built once per timeline (the timeline is immutable): a read asks for the completed
        writes once per file slice, and each filter walks the whole timeline."""
        views = self.__dict__.setdefault("_views", {})
        found = views.get(name)
        if found is None:
            found = views[name] = self.filter(pred)
        return found

    @property
    def timestamps(self) -> list[str]:
        """Instant times in order."""
        return [i.timestamp for i in self.instants]

    def last(self) -> Optional[Instant]:
        """The newest instant, if any."""
        return self.instants[-1] if self.instants else None

    def first(self) -> Optional[Instant]:
        """The oldest instant, if any."""
        return self.instants[0] if self.instants else None

    def get(self, timestamp: str) -> Optional[Instant]:
        """The (collapsed) instant at ``timestamp``; for a completed compaction, its commit."""
        found = [i for i in self.instants if i.timestamp == timestamp]
        if not found:
            return None
        return max(found, key=lambda i: int(i.state))

    def contains(self, timestamp: str) -> bool:
        """Whether an instant at ``timestamp`` is on this timeline."""
        return any(i.timestamp == timestamp for i in self.instants)

    @property
    def file_names(self) -> frozenset[str]:
        """The names of the files the timeline was listed from (every state of every instant)."""
        return self._all_files

    def has_file(self, name: str) -> bool:
        """Whether a given timeline file was present when the timeline was listed."""
        return name in self._all_files

    # -- state filters ------------------------------------------------------------------------
    def completed(self) -> "Timeline":
        """Completed instants only."""
        return self._view("completed", lambda i: i.is_completed)

    def pending(self) -> "Timeline":
        """Requested or inflight instants."""
        return self.filter(lambda i: not i.is_completed)

    def by_actions(self, *actions: str) -> "Timeline":
        """Instants whose action is one of ``actions``."""
        return self.filter(lambda i: i.action in actions)

    def commits(self) -> "Timeline":
        """Instants of the commits timeline: commit, deltacommit, replacecommit (+ pending compaction)."""
        actions = (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT, I.COMPACTION, I.LOG_COMPACTION)
        return self._view("commits", lambda i: i.action in actions)

    def completed_writes(self) -> "Timeline":
        """Completed commit, deltacommit and replacecommit instants."""
        return self._view("completed_writes", lambda i: i.is_completed and i.action in I.WRITE_ACTIONS)

    def pending_compactions(self) -> "Timeline":
        """Requested or inflight compaction instants."""
        return self.filter(lambda i: i.action == I.COMPACTION and not i.is_completed)

    def pending_log_compactions(self) -> "Timeline":
        """Requested or inflight log-compaction instants."""
        return self.filter(lambda i: i.action == I.LOG_COMPACTION and not i.is_completed)

    def pending_replaces(self) -> "Timeline":
        """Requested or inflight replacecommits (clustering, insert_overwrite, delete_partition)."""
        return self.filter(lambda i: i.action == I.REPLACE_COMMIT and not i.is_completed)

    def before_or_on(self, timestamp: str) -> "Timeline":
        """Instants at or before ``timestamp``."""
        return self.filter(lambda i: i.timestamp <= timestamp)

    def after(self, timestamp: str) -> "Timeline":
        """Instants strictly after ``timestamp``."""
        return self.filter(lambda i: i.timestamp > timestamp)

    def between(self, begin_exclusive: str, end_inclusive: str) -> "Timeline":
        """Instants in (begin, end]."""
        return self.filter(lambda i: begin_exclusive < i.timestamp <= end_inclusive)

    def is_compaction_commit(self, inst: Instant) -> bool:
        """Whether a completed ``commit`` was produced by a compaction (a plan file exists)."""
        return inst.action == I.COMMIT and self.has_file(
            I.instant_file_name(inst.timestamp, I.COMPACTION, State.REQUESTED)
        )

    # -- reading metadata --------------------------------------------------------------------
    def _storage_or_fail(self) -> Storage:
        if self._storage is None:
            raise TimelineError("this timeline was not loaded from storage")
        return self._storage

    def read_file(self, name: str) -> bytes:
        """Raw bytes of a timeline file."""
        return self._storage_or_fail().read_bytes(f"{self.folder}/{name}")

    def commit_metadata(self, inst: Instant) -> CommitMetadata:
        """Parsed JSON metadata of a completed (or inflight) commit-like instant."""
        return _read_commit_metadata(self._storage_or_fail(), inst.file_name, self.folder)

    def read_avro(self, inst: Instant) -> dict:
        """The Avro record of ``inst``'s own file (its state's file: a plan for a requested instant).

        Raises:
            FileNotFoundError: the file is gone.
            DamagedTimelineFileError: the file is empty, truncated or not Avro (names the file and the fix).
        """
        storage = self._storage_or_fail()
        data = self.read_file(inst.file_name)
        try:
            return read_avro_metadata(data)
        except ValueError as e:
            raise DamagedTimelineFileError(storage.uri(f"{self.folder}/{inst.file_name}"), inst, str(e),
                                           damaged_file_fix(storage.uri(), inst)) from None

    def avro_metadata(self, inst: Instant) -> dict:
        """Parsed Avro metadata of an instant file (plans, clean/rollback metadata); see :meth:`read_avro`."""
        return self.read_avro(inst)

    def compaction_plan(self, timestamp: str) -> "CompactionPlan":
        """The compaction plan, always read from ``<t>.compaction.requested``; see :meth:`read_avro`."""
        return CompactionPlan.from_avro(self.read_avro(Instant(timestamp, I.COMPACTION, State.REQUESTED)))

    def log_compaction_plan(self, timestamp: str) -> "CompactionPlan":
        """The log compaction plan (also a ``HoodieCompactionPlan``) of ``<t>.logcompaction.requested``;
        see :meth:`read_avro`."""
        return CompactionPlan.from_avro(self.read_avro(Instant(timestamp, I.LOG_COMPACTION, State.REQUESTED)))


@functools.lru_cache(maxsize=4096)
def _cached_commit_metadata(uri: str, name: str, size: int, data: bytes) -> CommitMetadata:
    return CommitMetadata.from_json_bytes(data)


def _read_commit_metadata(storage: Storage, name: str, folder: str = METAFOLDER) -> CommitMetadata:
    # Completed instant files are immutable, so parsing can be memoized by content.
    data = storage.read_bytes(f"{folder}/{name}")
    try:
        return _cached_commit_metadata(storage.uri(), name, len(data), data)
    except ValueError as e:
        # Still a ValueError (callers skip unreadable pending metadata by catching it), now naming the file.
        raise ValueError(f"{storage.uri(f'{folder}/{name}')}: {e}") from e


# -- transitions ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class TimelineLayout:
    """Where and how a table's timeline files are written: layout 1 (table version 6: ``.hoodie/``,
    JSON commit metadata, ``<t>.<action>`` when completed) or layout 2 (versions 8/9:
    ``.hoodie/timeline/``, Avro commit metadata, ``<t>_<completion>.<action>``)."""

    version: int = 1
    timezone: str = "LOCAL"

    @property
    def folder(self) -> str:
        """The folder of the instant files, relative to the table root."""
        return TIMELINE_FOLDER_V2 if self.version == 2 else METAFOLDER

    def path(self, name: str) -> str:
        """The relative path of timeline file ``name``."""
        return f"{self.folder}/{name}"

    def content(self, inst: Instant, content: "bytes | CommitMetadata") -> bytes:
        """The bytes of ``inst``'s file: commit metadata serialised as this layout writes it
        (layout 2: Avro; a completed replacecommit as ``HoodieReplaceCommitMetadata``, its inflight
        file as ``HoodieCommitMetadata``, as Hudi 1.x does)."""
        if isinstance(content, CommitMetadata):
            if self.version == 2:
                replace = inst.action == I.REPLACE_COMMIT and inst.is_completed
                return content.to_avro_bytes(replace=replace)
            return content.to_json_bytes()
        if (self.version == 2 and content and not content.startswith(AVRO_MAGIC)
                and I.comparable_action(inst.action) in I.WRITE_ACTIONS and not inst.is_requested):
            # Hudi 1.x readers (and hudi-rs) fail on JSON commit metadata in layout 2.
            raise TimelineError(f"{inst} of a table-version 8/9 table must be written as Avro commit metadata, "
                                "not JSON; pass the CommitMetadata object so the timeline serialises it")
        return content


def layout_of(storage: Storage) -> TimelineLayout:
    """The timeline layout of the table at ``storage`` (from its ``hoodie.properties``; layout 1 when
    there is none yet)."""
    try:
        props = P.parse_properties(storage.read_bytes(f"{METAFOLDER}/hoodie.properties").decode("utf-8", "replace"))
    except FileNotFoundError:
        return TimelineLayout()
    # Read by the keys' rules (hoodie.configs.table): a value Java would misread raises, naming the key.
    version = TC.VERSION.get(props) or 6
    layout = TC.TIMELINE_LAYOUT_VERSION.get(props) or (2 if version in (8, 9) else 1)
    zone = "LOCAL" if TIMELINE_TIMEZONE.raw(props) is None else TIMELINE_TIMEZONE.get(props)  # absent: Hudi's LOCAL
    return TimelineLayout(2 if layout == 2 else 1, zone)


def _create(storage: Storage, layout: TimelineLayout, name: str, content: bytes) -> None:
    try:
        storage.create_new(layout.path(name), content)
    except FileExistsError:
        raise TimelineError(
            f"timeline file {layout.path(name)} already exists: another writer used this instant; "
            "retry with a new instant time"
        ) from None


def create_requested(storage: Storage, timestamp: str, action: str,
                     content: "bytes | CommitMetadata" = b"") -> Instant:
    """Create ``<t>.<action>.requested`` (create-only)."""
    layout = layout_of(storage)
    inst = Instant(timestamp, action, State.REQUESTED)
    _create(storage, layout, inst.file_name, layout.content(inst, content))
    return inst


def create_inflight(storage: Storage, timestamp: str, action: str, content: bytes = b"") -> Instant:
    """Create ``<t>.<action>.inflight`` with no requested file before it (create-only): Hudi's
    savepoint action starts this way (``<t>.savepoint.inflight``, then ``<t>.savepoint``)."""
    layout = layout_of(storage)
    inst = Instant(timestamp, action, State.INFLIGHT)
    _create(storage, layout, inst.file_name, layout.content(inst, content))
    return inst


def transition_to_inflight(storage: Storage, requested: Instant, content: "bytes | CommitMetadata" = b"") -> Instant:
    """Create the inflight file for a requested instant (the requested file stays)."""
    if not requested.is_requested:
        raise TimelineError(f"{requested} is not requested")
    layout = layout_of(storage)
    if not storage.exists(layout.path(requested.file_name)):
        raise TimelineError(f"{requested} has no requested file; cannot move it to inflight")
    inst = Instant(requested.timestamp, requested.action, State.INFLIGHT)
    _create(storage, layout, inst.file_name, layout.content(inst, content))
    return inst


def completion_time(storage: Storage, layout: TimelineLayout, timestamp: str) -> str:
    """A completion time for an instant of ``timestamp`` completing now: later than the instant and
    than every instant and completion time on the timeline (unique on the table, as Java's
    generator under the table lock makes it)."""
    newest = timestamp
    for s in storage.list_dir(layout.folder):
        if s.is_dir:
            continue
        head = s.name.split(".", 1)[0]
        for part in head.split("_"):
            if part.isdigit() and part > newest:
                newest = part
    return I.InstantGenerator(layout.timezone).now(floor=newest)


@dataclass(frozen=True)
class PendingCompletion:
    """An inflight instant checked and ready to complete: ``data`` is what its completed file will hold
    (commit metadata serialised as the table's timeline layout writes it)."""

    storage: Storage
    layout: TimelineLayout
    inflight: Instant
    data: bytes


def prepare_completion(storage: Storage, inflight: Instant, content: "bytes | CommitMetadata") -> PendingCompletion:
    """Check that ``inflight`` may complete with ``content`` (it is inflight, its file exists, this
    process still holds the table lock) and serialise the completed file's content. Writes nothing."""
    if not inflight.is_inflight:
        raise TimelineError(f"{inflight} is not inflight")
    layout = layout_of(storage)
    if not storage.exists(layout.path(inflight.file_name)):
        raise TimelineError(f"{inflight} has no inflight file; cannot complete it")
    data = layout.content(inflight.with_state(State.COMPLETED), content)
    # A holder whose table lock was taken over (or removed by hand) must not commit: another process
    # may have written the table meanwhile. Raises LockError naming the lost lock.
    check_still_held(storage)
    return PendingCompletion(storage, layout, inflight, data)


def write_completion(pending: PendingCompletion, *, metadata_table_updated: bool) -> Instant:
    """Write the completed file of a checked instant (a compaction completes as ``commit``); on layout 2
    its name carries a fresh completion time.

    ``metadata_table_updated`` says the instant was recorded in the table's metadata table first, as
    hoodie's commit point (:func:`hoodie.services.commit.commit`) does: on a table with a metadata
    table a completion without it is refused, since the metadata table would miss the instant."""
    storage, layout, inflight = pending.storage, pending.layout, pending.inflight
    if not metadata_table_updated and storage.exists(METADATA_PROPS):
        raise TimelineError(
            f"{inflight} of {storage.uri()} is completing outside hoodie's commit path, which keeps the table's "
            f"metadata table in step with its timeline; commit through hoodie.services.transaction.Transaction")
    inst = inflight.with_state(State.COMPLETED)
    if layout.version == 2:
        inst = Instant(inst.timestamp, inst.action, State.COMPLETED, completion_time(storage, layout, inst.timestamp))
    _create(storage, layout, inst.file_name, pending.data)
    return inst


def transition_to_complete(storage: Storage, inflight: Instant, content: "bytes | CommitMetadata") -> Instant:
    """Complete an inflight instant of a table without a metadata table (the format's primitive: test
    fixtures, tables hoodie only reads); hoodie's actions complete through
    :func:`hoodie.services.commit.commit`, which records the instant in the metadata table first."""
    return write_completion(prepare_completion(storage, inflight, content), metadata_table_updated=False)


# The metadata table's properties, relative to the data table: a table with a metadata table refuses
# completions that did not record the instant there first (see :func:`write_completion`).
METADATA_PROPS = ".hoodie/metadata/.hoodie/hoodie.properties"


def delete_instant_files(storage: Storage, timestamp: str, action: str, states: Iterable[State]) -> None:
    """Delete timeline files of one instant (used by rollback of pending instants); on layout 2 the
    completed file is found by listing (its name carries the completion time)."""
    layout = layout_of(storage)
    for st in states:
        if st == State.COMPLETED and layout.version == 2:
            done = Instant(timestamp, action, State.COMPLETED).with_state(State.COMPLETED)
            for s in storage.list_dir(layout.folder):
                p = I.parse_instant_file_name_v2(s.name)
                if (p is not None and p.is_completed and p.timestamp == timestamp
                        and p.action == done.action):
                    storage.delete(layout.path(s.name))
            continue
        storage.delete(layout.path(I.instant_file_name(timestamp, action, st)))


def instant_file_path(storage: Storage, inst: Instant) -> str:
    """The relative path of ``inst``'s own file in its table's layout."""
    return layout_of(storage).path(inst.file_name)
