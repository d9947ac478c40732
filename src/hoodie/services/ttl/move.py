"""Tiering: partition TTL's ``move`` action and bringing a moved partition back (issue 19).

With ``hoodie.partition.ttl.action=move`` a TTL run does not just drop its expired partitions: under
the hot table's lock it

1. reads each expired partition's current snapshot rows (what a snapshot query returns),
2. writes them into the **cold table** at ``hoodie.partition.ttl.move.target`` (a Hudi table of its
   own, COPY_ON_WRITE, with the hot table's schema, keys and partitioning; created on the first
   move) as one ``insert_overwrite`` commit through the one commit path, so a partition that is
   already there is replaced, never duplicated (a re-run after a crash is idempotent),
3. reads those partitions back from the cold table and compares row count and a content digest per
   partition with what it read from the hot table,
4. and only then commits the ``delete_partition`` replacecommit in the hot table (the partition TTL
   path: statistics, stash, metrics), recording in its ``extraMetadata`` where each partition went
   (``hoodie.partition.ttl.moved``).

A run killed at any point loses nothing: before step 4 completes the hot table still holds every
row; after it the cold table has a verified copy. Re-running TTL finishes the move. Fault points:
``ttl.move.after_copy``, ``ttl.move.after_verify`` (and the TTL ones: ``ttl.after_inflight``).

:func:`bring_back` does the reverse for named partitions: an ``insert_overwrite`` of the partition in
the hot table from the cold rows, verified the same way, then (by default) a delete_partition of it
in the cold table. Fault points ``ttl.bring_back.after_write``, ``ttl.bring_back.after_verify``,
``ttl.bring_back.cold_drop_inflight``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

import pyarrow as pa
import pyarrow.compute as pc

from hoodie import configs as C
from hoodie.configs import unknown_keys_checked
from hoodie.errors import HoodieError
from hoodie.faults import fault_point
from hoodie.format.file_group.fsview import FileSystemView
from hoodie.format.slice.reader import iter_plan, plan_read
from hoodie.format.storage import Storage, StorageError
from hoodie.format.table import HoodieTable, table_exists
from hoodie.format.timeline import instant as I
from hoodie.services.delete_partition import DELETE_PARTITION, delete_partitions
from hoodie.services.ttl.keys import TTLConfigError
from hoodie.services.write import ArrowWriteExecutor, run_write
from hoodie import progress

log = logging.getLogger(__name__)

ACTION = C.TTL_ACTION
TARGET = C.TTL_MOVE_TARGET
TARGET_STORAGE_OPTIONS = C.TTL_MOVE_STORAGE_OPTIONS
MOVE, DELETE = "move", "delete"
# extraMetadata of the hot table's TTL replacecommit: where each moved partition went.
MOVED_KEY = "hoodie.partition.ttl.moved"
MOVE_TARGET_KEY = "hoodie.partition.ttl.move.target"
# extraMetadata is not settable through write_arrow; the cold commits are recognisable by their
# operation (insert_overwrite) and the hot replacecommit names their instants.
META_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name", "_hoodie_operation")
# The hot table's properties the cold table is created with (write key <- table property).
_COPIED_PROPS = (
    ("hoodie.datasource.write.recordkey.field", "hoodie.table.recordkey.fields"),
    ("hoodie.datasource.write.partitionpath.field", "hoodie.table.partition.fields"),
    ("hoodie.datasource.write.hive_style_partitioning", "hoodie.datasource.write.hive_style_partitioning"),
    ("hoodie.datasource.write.partitionpath.urlencode", "hoodie.datasource.write.partitionpath.urlencode"),
    ("hoodie.datasource.write.precombine.field", "hoodie.table.precombine.field"),
    ("hoodie.datasource.write.payload.class", "hoodie.compaction.payload.class"),
    ("hoodie.datasource.write.keygenerator.class", "hoodie.table.keygenerator.class"),
)


class TTLMoveError(TTLConfigError):
    """A move or bring-back was refused or its copy did not verify; the message says what was
    written (nothing, or a copy that the hot table does not depend on) and how to go on."""


# -- configuration ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MoveConfig:
    """The move action's settings, checked (target reachable and outside the hot table)."""

    target: str
    storage_options: dict[str, Any]

    def storage(self) -> Storage:
        """The cold table's storage."""
        return Storage(self.target, self.storage_options)


def action_of(options: Optional[Mapping[str, Any]]) -> str:
    """``hoodie.partition.ttl.action``: ``delete`` (default) or ``move``."""
    return C.read(options or {}, TTLConfigError).get(ACTION)


def _same_or_inside(a: str, b: str) -> bool:
    """Whether URI/path ``a`` is ``b`` or lies below it (``/``-separated components)."""
    a, b = a.rstrip("/"), b.rstrip("/")
    return a == b or a.startswith(b + "/")


def _comparable(st: Storage) -> str:
    """A storage location as one comparable string (local paths with symlinks resolved)."""
    if st.is_local:
        return os.path.realpath(st.root)
    return st.uri().replace("s3a://", "s3://", 1)


def move_config(options: Optional[Mapping[str, Any]], hot: HoodieTable) -> MoveConfig:
    """Read and check the move settings for the hot table ``hot``; raises :class:`TTLConfigError`
    (before anything is written) when the target is missing, unsupported or unreachable, is the hot
    table or lies inside it (or holds it), or is something other than a compatible Hudi table."""
    r = C.read(options or {}, TTLConfigError)
    target = r.get(TARGET)
    if not target:
        raise TTLConfigError(f"{ACTION}=move needs {TARGET}: the base path (or URI) of the cold table, e.g. "
                             f"{TARGET}=s3://archive/events_cold")
    raw_so = r.get(TARGET_STORAGE_OPTIONS)
    if raw_so:
        try:
            so = json.loads(raw_so)
        except ValueError as e:
            raise TTLConfigError(f"{TARGET_STORAGE_OPTIONS} is not a JSON object: {e}") from None
        if not isinstance(so, dict):
            raise TTLConfigError(f"{TARGET_STORAGE_OPTIONS} must be a JSON object, e.g. "
                                 '{"endpoint_override": "http://127.0.0.1:9000", "region": "eu-west-1"}')
    else:
        hot_so = dict(hot.storage.storage_options or {})
        scheme = target.split("://", 1)[0].lower() if "://" in target else ""
        same_kind = {"s3a": "s3"}.get(scheme, scheme) == {"s3a": "s3"}.get(
            hot.base_path.split("://", 1)[0].lower() if "://" in hot.base_path else "", None)
        so = hot_so if same_kind else {}
    try:
        st = Storage(target, so)
    except (StorageError, TypeError, ValueError) as e:
        raise TTLConfigError(f"{TARGET}={target!r} cannot be used: {e}") from None
    cold, hot_loc = _comparable(st), _comparable(hot.storage)
    if _same_or_inside(cold, hot_loc):
        raise TTLConfigError(f"{TARGET}={target!r} is {'the hot table itself' if cold.rstrip('/') == hot_loc.rstrip('/') else 'inside the hot table'} "
                             f"({hot.base_path}); the cold table must live outside it (its files would be taken "
                             "for the hot table's partitions)")
    if _same_or_inside(hot_loc, cold):
        raise TTLConfigError(f"{TARGET}={target!r} contains the hot table ({hot.base_path}); choose a location "
                             "outside it")
    try:
        exists = table_exists(st)
        # A move killed while its write created the cold table, before the properties file, leaves
        # a .hoodie folder (the lock, folders, a temp file) and nothing else; the re-run must be able
        # to create the table there and finish the move. Anything else is someone's data.
        occupied = not exists and st.exists("") and any(
            e.name != ".hoodie" and (not e.is_dir or _holds_files(st, e.path)) for e in st.list_dir(""))
    except (OSError, StorageError) as e:
        raise TTLConfigError(f"{TARGET}={target!r} cannot be reached: {e}") from None
    if occupied:
        raise TTLConfigError(f"{TARGET}={target!r} exists and is not a Hudi table; give an empty or new location "
                             "(or the base path of the cold table of an earlier move)")
    if exists:
        _check_cold_table(HoodieTable(st.base_uri, storage=st), hot)
    return MoveConfig(target=st.base_uri, storage_options=so)


def _holds_files(st: Storage, rel: str) -> bool:
    """Whether any file lies under ``rel`` (folders are looked into, depth first)."""
    for e in st.list_dir(rel):
        if not e.is_dir or _holds_files(st, e.path):
            return True
    return False


def _check_cold_table(cold: HoodieTable, hot: HoodieTable) -> None:
    """An existing cold table must key and partition rows as the hot table does."""
    diffs = []
    for what, a, b in (("record key fields", cold.record_key_fields, hot.record_key_fields),
                       ("partition fields", cold.partition_fields, hot.partition_fields),
                       ("hive-style partitioning", cold.hive_style, hot.hive_style),
                       ("URL-encoded partition paths", cold.url_encode, hot.url_encode)):
        if a != b:
            diffs.append(f"{what} {a!r} (hot table: {b!r})")
    if diffs:
        raise TTLConfigError(f"the cold table at {cold.base_path} does not match {hot.base_path}: "
                             + "; ".join(diffs) + ". Move into a new location")


# -- reading and digests --------------------------------------------------------------------------

def snapshot_rows(table: HoodieTable, partitions: Iterable[str], as_of: Optional[str] = None) -> dict[str, pa.Table]:
    """The snapshot rows of each partition (merged, deletes applied), meta columns included; with
    ``as_of``, as the table was at that instant (time travel)."""
    wanted = set(partitions)
    plan = plan_read(table, as_of=as_of)
    out: dict[str, list[pa.Table]] = {p: [] for p in wanted}
    slices = [sl for sl in plan.slices if sl.partition in wanted]
    with progress.task(f"reading {len(wanted)} partition(s) of {table.name}", len(slices)) as bar:
        for sl, t in zip(slices, iter_plan(plan, slices)):
            out[sl.partition].append(t)
            bar.advance()
    return {p: (pa.concat_tables(ts, promote_options="permissive") if ts else plan.schema.empty_table())
            for p, ts in out.items()}


def _body(t: pa.Table) -> pa.Table:
    return t.drop_columns([c for c in t.column_names if c in META_COLUMNS])


def _row_hashes(t: pa.Table) -> Iterable[int]:
    """Each row's SHA-256 as an integer: its (column name, value) pairs of the data columns in name
    order, null values left out (see :func:`digest`)."""
    body = _body(t)
    names = sorted(body.column_names)
    for batch in body.select(names).to_batches(max_chunksize=65536):
        cols = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        for row in zip(*cols):
            pairs = tuple((n, v) for n, v in zip(names, row) if v is not None)
            yield int.from_bytes(hashlib.sha256(repr(pairs).encode("utf-8", "surrogatepass")).digest(), "big")


def digest(t: pa.Table) -> str:
    """An order-independent digest of the rows' data columns (meta columns, which a copy rewrites,
    left out): the sum of each row's SHA-256 modulo 2**256, so equal multisets of rows give equal
    digests whatever their order or file layout. A row is hashed as its (column name, value) pairs
    in name order, null values left out: a column a table gained later, null in the rows written
    before (what a read of them returns), does not change their digest. Being a sum, the digest of
    two multisets together is the sum of theirs (a move of a table without record keys relies on it)."""
    total = 0
    for h in _row_hashes(t):
        total = (total + h) % (1 << 256)
    return f"{total:064x}"


@dataclass
class PartitionCopy:
    """One partition copied to (or from) the cold table: its rows and digest, and the instant that
    wrote the copy."""

    partition: str
    rows: int
    digest: str
    instant: Optional[str] = None
    # A move: the cold partition's whole content afterwards (the moved rows plus what earlier moves
    # put there), which the next move of the partition compares the cold table with.
    cold_rows: Optional[int] = None
    cold_digest: Optional[str] = None

    def to_json(self) -> dict:
        """How the TTL commit's extraMetadata and ``--json`` show it."""
        out: dict = {"rows": self.rows, "digest": self.digest, "instant": self.instant}
        if self.cold_rows is not None:
            out.update(cold_rows=self.cold_rows, cold_digest=self.cold_digest)
        return out


def _verify(table: HoodieTable, expected: Mapping[str, PartitionCopy], what: str) -> None:
    """Read the partitions back from ``table`` and compare rows and digest with ``expected``."""
    table = HoodieTable(table.base_path, storage=table.storage, read_only=True)
    got = snapshot_rows(table, expected)
    bad = []
    for p, want in sorted(expected.items()):
        rows = got[p]
        d = digest(rows)  # null values do not count: columns the table gained since compare equal
        if rows.num_rows != want.rows or d != want.digest:
            bad.append(f"{p}: {rows.num_rows} row(s) read back, {want.rows} expected"
                       + ("" if rows.num_rows != want.rows else " (content differs)"))
    if bad:
        raise TTLMoveError(f"{what} did not verify in {table.base_path}: " + "; ".join(bad))


# -- writing ------------------------------------------------------------------------------------------

def cold_write_options(hot: HoodieTable) -> dict[str, str]:
    """Write options creating the cold table like the hot one (keys, partitioning, key generator,
    ordering field, table version), as COPY_ON_WRITE: cold data is read, not updated, so there is no
    log to merge and no compaction to run. No inline service runs on it (run ``hoodie clean`` on the
    cold table to free the file groups replaced by re-moved partitions)."""
    p = hot.props
    o = {wk: p[tk] for wk, tk in _COPIED_PROPS if p.get(tk)}
    for k, v in p.items():
        if k.startswith("hoodie.keygen."):
            o[k] = v  # timestamp key generators' settings, where the table recorded them
    o.update({
        "hoodie.table.name": hot.name,
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.write.table.version": str(hot.table_version),
        "hoodie.datasource.write.operation": "insert_overwrite",
        "hoodie.clean.automatic": "false",
        "hoodie.metadata.enable": "false",
        # A partition moved before the hot table gained a column lacks it in the cold table; rows
        # merged from there carry it as null (what a read of them returns anyway).
        "hoodie.write.set.null.for.missing.columns": "true",
    })
    if not o.get("hoodie.datasource.write.recordkey.field"):
        o.pop("hoodie.datasource.write.recordkey.field", None)
    return o


def _write_overwrite(base: str, storage_options: dict[str, Any], rows: pa.Table, options: Mapping[str, str]) -> str:
    # A plain write (no inline service runs on the cold table: see cold_write_options).
    with unknown_keys_checked():
        return run_write(Storage(base, storage_options), options, ArrowWriteExecutor(rows, options),
                         storage_options=storage_options, what="write (insert_overwrite)")


def _live_file_ids(table: HoodieTable, partitions: Iterable[str]) -> dict[str, list[str]]:
    view = FileSystemView(table.storage, table.timeline)
    out = {}
    existing = set(view.partitions())
    for p in partitions:
        if p not in existing:
            continue
        fids = sorted({s.file_id for s in view.latest_file_slices(p)})
        if fids:
            out[p] = fids
    return out


def _conform(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """``t`` with the data columns of ``schema`` in its order: a column ``t`` lacks is null-filled
    (rows written before the table gained it), one of another type is cast (a widened column); meta
    columns are kept as they are. Raises :class:`TTLMoveError` when ``t`` has a data column
    ``schema`` does not know and that holds a value (dropping it would lose data)."""
    names = set(schema.names)
    lost = [c for c in t.column_names if c not in names and c not in META_COLUMNS and t.column(c).null_count < t.num_rows]
    if lost:
        raise TTLMoveError(f"the rows hold column(s) {lost} that the table they go to does not have; nothing was "
                           "written. Add the column(s) to that table (write a batch carrying them) and run again")
    cols, fields = [], []
    for f in schema:
        if f.name in t.column_names:
            c = t.column(f.name)
            if f.name not in META_COLUMNS and c.type != f.type:
                try:
                    c = c.cast(f.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise TTLMoveError(f"column {f.name!r} is {c.type} in the rows and {f.type} in the table they go "
                                       f"to; it cannot be converted ({e}); nothing was written") from None
            cols.append(c)
            fields.append(pa.field(f.name, c.type, True))
        elif f.name not in META_COLUMNS:
            cols.append(pa.nulls(t.num_rows, f.type))
            fields.append(pa.field(f.name, f.type, True))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def _last_move(hot: HoodieTable, partition: str) -> tuple[bool, Optional[dict]]:
    """What the hot timeline says about ``partition``'s cold copy: (superseded, record). ``record`` is
    the newest completed TTL move of the partition (its ``hoodie.partition.ttl.moved`` entry, with
    ``cold_rows``/``cold_digest``: the cold partition's content after that move), or None when the
    active timeline has none. ``superseded`` is True when a completed commit after that move (or on
    the whole active timeline when there is none) redefined the partition in the hot table: an
    ``insert_overwrite`` (a bring-back keeping the cold copy, or a user's), an
    ``insert_overwrite_table`` or a ``delete_partition`` that is not a TTL move. The hot table then
    holds the partition's whole content, so the cold copy is replaced, not added to."""
    tl = hot.timeline
    for inst in reversed(tl.completed().instants):
        if inst.action not in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT):
            continue
        try:
            meta = tl.commit_metadata(inst)
        except (FileNotFoundError, ValueError):
            continue
        op = (meta.operation_type or "").upper()
        doc = meta.extra_metadata.get(MOVED_KEY)
        moved = json.loads(doc) if doc else {}
        if partition in moved:
            rec = dict(moved[partition])
            rec.setdefault("cold_rows", rec.get("rows"))
            rec.setdefault("cold_digest", rec.get("digest"))  # before cold_digest existed a move replaced the partition
            return False, rec
        touched = partition in (meta.partition_to_write_stats or {}) or partition in (meta.partition_to_replace_file_ids or {})
        if op == "INSERT_OVERWRITE_TABLE" or (touched and op in ("INSERT_OVERWRITE", DELETE_PARTITION)):
            return True, None
    return False, None


_MOD = 1 << 256


def _recorded_cold_rows(cold: HoodieTable, p: str, rec: Mapping[str, Any]) -> Optional[pa.Table]:
    """Cold partition ``p`` as the hot table's record of its last move left it: read as of that
    move's cold instant (time travel), returned only when it matches the recorded row count and
    digest (None when it cannot be read back, e.g. the cleaner removed its files)."""
    instant = rec.get("instant")
    if not instant:
        return None
    try:
        rows = snapshot_rows(cold, [p], as_of=str(instant))[p]
    except (HoodieError, OSError, ValueError):
        return None
    if rows.num_rows == int(rec.get("cold_rows") or 0) and digest(rows) == rec.get("cold_digest"):
        return rows
    return None


def _cold_content(hot: HoodieTable, p: str, moving: pa.Table, cold_now: pa.Table,
                  cold: Optional[HoodieTable] = None) -> pa.Table:
    """The rows cold partition ``p`` must hold once ``moving`` (the hot partition's snapshot rows) is
    moved into it, where it holds ``cold_now``. A move **adds** to the cold partition: late rows
    written to the hot partition after an earlier move join that move's rows (issue 31, item 9).

    * the cold partition is empty, or the hot table redefined the partition after its last move
      (:func:`_last_move`): the moving rows;
    * a table with record keys: the cold rows whose key the moving rows do not have, plus the moving
      rows (the hot row is the newer version of a key: it was written after the cold copy). Moving
      the same rows again yields the same content, so a re-run after a crash between the cold write
      and the hot commit neither duplicates nor loses a row;
    * a table without record keys (generated keys differ between the tables): the hot table's
      record of the partition's last move (``cold_rows``/``cold_digest``) decides. Cold content equal
      to it gets the moving rows added; equal to it plus the moving rows, it is the re-run of an
      interrupted later move and stays; otherwise (an interrupted move, then more late rows before
      the re-run) the cold partition is read as of the recorded move's cold instant and, when that
      matches the record, gets the moving rows added. Without a record, cold content contained in
      the moving rows is an interrupted first move (perhaps followed by more late rows): the moving
      rows. Anything else cannot be told apart from lost or duplicated rows and is refused before
      writing.
    """
    if not cold_now.num_rows:
        return moving
    superseded, rec = _last_move(hot, p)
    if superseded:
        return moving
    if hot.record_key_fields:
        keys = moving.column("_hoodie_record_key").combine_chunks()
        keep = cold_now.filter(pc.invert(pc.is_in(cold_now.column("_hoodie_record_key"), value_set=keys)))
        return pa.concat_tables([_body(keep), _body(moving)], promote_options="permissive")
    d_cold, d_moving = int(digest(cold_now), 16), int(digest(moving), 16)
    if rec is not None:
        want_rows, want = int(rec.get("cold_rows") or 0), int(str(rec.get("cold_digest") or "0"), 16)
        if cold_now.num_rows == want_rows and d_cold == want:
            return pa.concat_tables([_body(cold_now), _body(moving)], promote_options="permissive")
        if cold_now.num_rows == want_rows + moving.num_rows and (d_cold - d_moving) % _MOD == want:
            return cold_now
        then = _recorded_cold_rows(cold, p, rec) if cold is not None else None
        if then is not None:
            return pa.concat_tables([_body(then), _body(moving)], promote_options="permissive")
    elif cold_now.num_rows <= moving.num_rows and not Counter(_row_hashes(cold_now)) - Counter(_row_hashes(moving)):
        # No recorded move, and every cold row is among the moving rows: the cold partition is an
        # interrupted copy of this partition (a first move killed before its hot commit, perhaps
        # followed by more late rows).
        return moving
    raise TTLMoveError(
        f"partition {p} of the cold table holds {cold_now.num_rows} row(s) that neither the hot table's record of "
        f"its last move (as recorded, and as the cold table was then: not readable any more) nor the "
        f"{moving.num_rows} row(s) moving now account for (a table without record keys cannot match rows by "
        "key). Nothing was written. Compare the partition in both tables, bring the cold copy back or drop it "
        "(a delete_partition in the cold table), then run TTL again")


def copy_to_cold(hot: HoodieTable, partitions: list[str], cfg: MoveConfig) -> dict[str, PartitionCopy]:
    """Steps 1-3 of the module docstring: add the partitions' snapshot rows to the cold table (one
    ``insert_overwrite`` of each partition with its new content, :func:`_cold_content`) and verify
    them there; returns what was moved, per partition. Writes nothing to the hot table. Raises
    :class:`TTLMoveError` when the copy does not verify (the hot table is left as it was)."""
    data = snapshot_rows(hot, partitions)
    copies = {p: PartitionCopy(p, t.num_rows, digest(t)) for p, t in data.items()}
    st = cfg.storage()
    cold_exists = table_exists(st)
    cold_table = HoodieTable(st.base_uri, storage=st) if cold_exists else None
    cold_now = snapshot_rows(cold_table, partitions) if cold_table is not None else {}
    # Every decision is made before the first write: a refusal leaves both tables as they were.
    content = {p: _cold_content(hot, p, data[p], cold_now[p], cold_table) if p in cold_now else data[p]
               for p in partitions}
    for p, c in copies.items():
        c.cold_rows, c.cold_digest = content[p].num_rows, digest(content[p])
    with_rows = [content[p] for p in sorted(partitions) if content[p].num_rows]
    instant: Optional[str] = None
    if with_rows:
        rows = pa.concat_tables(with_rows, promote_options="permissive")
        instant = _write_overwrite(cfg.target, cfg.storage_options, rows, cold_write_options(hot))
    empty = [p for p in partitions if not content[p].num_rows]
    if empty and cold_exists:
        # A partition whose rows were all deleted in the hot table after the hot table redefined it:
        # an older copy in the cold table (moved, brought back, emptied) must not outlive it there.
        cold = HoodieTable(st.base_uri, storage=st)
        stale = _live_file_ids(cold, empty)
        if stale:
            instant = delete_partitions(cold, stale).timestamp
    for c in copies.values():
        c.instant = instant
    fault_point("ttl.move.after_copy")
    if table_exists(st):
        expected = {p: PartitionCopy(p, c.cold_rows, c.cold_digest) for p, c in copies.items()}
        _verify(HoodieTable(st.base_uri, storage=st), expected, f"the copy of {len(copies)} partition(s)")
    elif any(c.rows for c in copies.values()):
        raise TTLMoveError(f"the cold table at {cfg.target} was not created; nothing was deleted")
    fault_point("ttl.move.after_verify")
    log.info("partition TTL copied %d partition(s), %d row(s), to %s (commit %s), verified", len(copies),
             sum(c.rows for c in copies.values()), cfg.target, instant)
    return copies


def moved_metadata(cfg: MoveConfig, copies: Mapping[str, PartitionCopy]) -> dict[str, str]:
    """The hot replacecommit's extraMetadata naming where each partition went."""
    doc = {p: {"target": cfg.target, **c.to_json()} for p, c in sorted(copies.items())}
    return {MOVE_TARGET_KEY: cfg.target, MOVED_KEY: json.dumps(doc, separators=(",", ":"))}


# -- bringing partitions back ---------------------------------------------------------------------------

@dataclass
class BringBackResult:
    """What :func:`bring_back` did: the hot table's commit, the rows per partition, whether the cold
    copies were dropped (and by which cold instant)."""

    instant: Optional[str]
    target: str
    partitions: dict[str, PartitionCopy] = field(default_factory=dict)
    already_back: list[str] = field(default_factory=list)
    cold_drop_instant: Optional[str] = None
    dry_run: bool = False

    def to_json(self) -> dict:
        """What ``hoodie ttl bring-back --json`` prints."""
        return {"instant": self.instant, "target": self.target, "dry_run": self.dry_run,
                "partitions": {p: c.to_json() for p, c in sorted(self.partitions.items())},
                "already_back": self.already_back, "cold_drop_instant": self.cold_drop_instant}


def moved_to(hot: HoodieTable, partition: str) -> Optional[str]:
    """The cold table the newest TTL move of ``partition`` went to (from the hot timeline), if any."""
    tl = hot.timeline
    for inst in reversed(tl.completed().by_actions(I.REPLACE_COMMIT).instants):
        try:
            extra = tl.commit_metadata(inst).extra_metadata
        except (FileNotFoundError, ValueError):
            continue
        doc = extra.get(MOVED_KEY)
        if doc and partition in json.loads(doc):
            return str(json.loads(doc)[partition].get("target") or extra.get(MOVE_TARGET_KEY))
    return None


def bring_back(hot_path: str | HoodieTable, partitions: Iterable[str], *, target: Optional[str] = None,
               options: Optional[Mapping[str, Any]] = None, drop_from_cold: bool = True, dry_run: bool = False,
               storage_options: Optional[dict[str, Any]] = None) -> BringBackResult:
    """Move partitions back from the cold table into the hot table.

    The cold table is ``target``, else ``hoodie.partition.ttl.move.target`` in ``options``, else the
    one the hot timeline's newest TTL move of the first partition names. Each partition's cold
    snapshot rows are written to the hot table as one ``insert_overwrite`` commit, read back and
    compared (rows and digest); then, with ``drop_from_cold``, the partitions are dropped from the
    cold table (a delete_partition there). A partition that holds rows in the hot table is refused
    (the overwrite would replace them), unless they are exactly the cold rows, or the hot table
    redefined the partition since its last move and still holds every cold row (by key, or by
    content without keys): then an earlier bring-back was interrupted after its write (and the
    partition perhaps written since), and only the cold drop is left to do. Partitions an
    earlier run brought back completely (the cold table dropped them, the hot table holds rows in
    them) make a re-run a no-op that lists them in ``already_back``.
    """
    hot = hot_path if isinstance(hot_path, HoodieTable) else HoodieTable(hot_path, storage_options)
    parts = sorted(set(partitions))
    if not parts:
        raise TTLMoveError("name at least one partition to bring back")
    opts = dict(options or {})
    if target:
        opts[str(TARGET)] = target
    if not C.read(opts, TTLConfigError).get(TARGET):
        found = moved_to(hot, parts[0])
        if not found:
            raise TTLMoveError(f"no TTL move of {parts[0]} is recorded in {hot.base_path}; give the cold table "
                               f"(--target or {TARGET})")
        opts[str(TARGET)] = found
    cfg = move_config(opts, hot)
    st = cfg.storage()
    if not table_exists(st):
        raise TTLMoveError(f"there is no cold table at {cfg.target}")
    cold = HoodieTable(st.base_uri, storage=st)
    hot_now = snapshot_rows(hot, parts)
    # The hot table may have gained columns since the move (issue 31, item 10): the cold rows get
    # them null-filled (what reading them in the hot table would show), a widened column is cast.
    # Digests and the verification compare these conformed rows.
    hot_schema = next(iter(hot_now.values())).schema
    cold_rows = {p: _conform(t, hot_schema) for p, t in snapshot_rows(cold, parts).items()}
    # Already brought back by an earlier run (perhaps killed before it could report): the cold table
    # dropped the partition and the hot table holds rows in it again. Re-running is then a no-op.
    done = [p for p in parts if not cold_rows[p].num_rows and hot_now[p].num_rows and _dropped(cold, p)]
    if done and len(done) == len(parts):
        log.info("%s already brought back from %s into %s", ", ".join(parts), cfg.target, hot.base_path)
        # Listed with their hot rows, so that the CLI and CALL outputs show them as already back.
        back = {p: PartitionCopy(p, hot_now[p].num_rows, digest(hot_now[p])) for p in done}
        return BringBackResult(None, cfg.target, back, already_back=done, dry_run=dry_run)
    missing = [p for p in parts if not cold_rows[p].num_rows]
    if missing:
        raise TTLMoveError(f"the cold table {cfg.target} holds no rows in {', '.join(missing)}; nothing was written")
    copies = {p: PartitionCopy(p, t.num_rows, digest(t)) for p, t in cold_rows.items()}
    already = [p for p in parts if hot_now[p].num_rows and (
        (digest(hot_now[p]) == copies[p].digest and hot_now[p].num_rows == copies[p].rows)
        or _back_then_written(hot, p, hot_now[p], cold_rows[p]))]
    clash = [p for p in parts if hot_now[p].num_rows and p not in already]
    if clash:
        raise TTLMoveError(
            "partition(s) " + ", ".join(f"{p} ({hot_now[p].num_rows} rows)" for p in clash) + f" hold rows in "
            f"{hot.base_path} now; bringing the cold copy back would overwrite them. Nothing was written")
    res = BringBackResult(None, cfg.target, copies, already_back=already, dry_run=dry_run)
    if dry_run:
        return res
    todo = [p for p in parts if p not in already]
    if todo:
        rows = pa.concat_tables([cold_rows[p] for p in todo], promote_options="permissive")
        o = {"hoodie.table.name": hot.name, "hoodie.datasource.write.operation": "insert_overwrite"}
        res.instant = _write_overwrite(hot.base_path, dict(hot.storage.storage_options or {}), rows, o)
        fault_point("ttl.bring_back.after_write")
        hot = hot.latest()  # the overwrite committed through its own transaction
        _verify(hot, {p: copies[p] for p in todo}, f"bringing back {', '.join(todo)}")
        fault_point("ttl.bring_back.after_verify")
    if drop_from_cold:
        cold = cold.latest()  # as the earlier steps (and any killed bring-back) left it
        live = _live_file_ids(cold, parts)
        if live:
            # Rolls back a drop an earlier, killed bring-back left pending (nothing else writes the
            # cold table, so nothing would ever roll it back).
            res.cold_drop_instant = delete_partitions(cold, live, rollback_failed_writes=True,
                                                      fault="ttl.bring_back.cold_drop_inflight").timestamp
    log.info("brought back %s from %s into %s (commit %s)", ", ".join(parts), cfg.target, hot.base_path,
             res.instant)
    return res


def _back_then_written(hot: HoodieTable, p: str, hot_rows: pa.Table, cold_rows: pa.Table) -> bool:
    """Whether an earlier bring-back of ``p`` wrote the cold rows into the hot table, was stopped
    before its cold drop, and the partition was written since: the hot table redefined the partition
    after its last move (the bring-back's insert_overwrite) and still holds every cold row (by
    record key: a key written since holds its newer version; without keys, by content). Only the
    cold drop is then left to do; bringing the cold copy back again would overwrite the new rows."""
    superseded, _ = _last_move(hot, p)
    if not superseded:
        return False
    if hot.record_key_fields:
        have = set(hot_rows.column("_hoodie_record_key").to_pylist())
        return all(k in have for k in cold_rows.column("_hoodie_record_key").to_pylist())
    return not Counter(_row_hashes(cold_rows)) - Counter(_row_hashes(hot_rows))


def _dropped(cold: HoodieTable, partition: str) -> bool:
    """Whether a completed delete_partition of the cold table removed ``partition`` (what a
    bring-back does after its verified write to the hot table)."""
    tl = cold.timeline
    for inst in reversed(tl.completed().by_actions(I.REPLACE_COMMIT).instants):
        try:
            meta = tl.commit_metadata(inst)
        except (FileNotFoundError, ValueError):
            continue
        if meta.operation_type == DELETE_PARTITION and partition in (meta.partition_to_replace_file_ids or {}):
            return True
    return False


__all__ = ["MoveConfig", "move_config", "action_of", "copy_to_cold", "moved_metadata", "bring_back",
           "BringBackResult", "PartitionCopy", "TTLMoveError", "snapshot_rows", "digest", "cold_write_options",
           "moved_to", "MOVED_KEY", "MOVE_TARGET_KEY", "MOVE", "DELETE"]
