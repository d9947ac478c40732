"""The crash trials' reads and checks (tests/prove/crash_harness.py re-exports them): snapshot and
read-optimized rows of the test columns, hudi-rs agreement, the state after a crash being the state
before or after the operation, the metadata table matching storage, data files of uncommitted instants
and pending instants left behind."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

import hoodie
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import list_partitions
from hoodie.format.log.logformat import BlockType, read_log_file
from hoodie.format.table import HoodieTable
from hoodie.services.metadata import validate_metadata_table
from tests.hudi_rs import read_hudi_rs


# -- reading and checking ------------------------------------------------------------------------

COLS = ["k", "part", "ts", "v"]
Rows = list[tuple]


class TrialFailure(AssertionError):
    """A trial found a state that is not a committed one (or a recovery that did not recover)."""


def _rows(t: pa.Table) -> Rows:
    if t.num_rows == 0 or not set(COLS) <= set(t.column_names):
        return []
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


def snapshot(path: str) -> Rows:
    """Our snapshot read of the test columns, sorted."""
    return _rows(hoodie.read_table(path, columns=COLS))


def read_optimized(path: str) -> Rows:
    """Our read-optimized read of the test columns, sorted."""
    return _rows(hoodie.read_table(path, query_type="read_optimized", columns=COLS))


def compaction_pending(path: str) -> bool:
    return bool(HoodieTable(path).timeline.pending_compactions().instants)


def check_hudi_rs(path: str, what: str) -> bool:
    """hudi-rs reads what we read (snapshot and read-optimized); skipped while a compaction is
    pending (hudi-rs 0.5.0 has no pending-compaction support). Returns whether it compared."""
    if compaction_pending(path):
        return False
    ours, theirs = snapshot(path), _rows(read_hudi_rs(path))
    if ours != theirs:
        raise TrialFailure(f"{what}: hudi-rs snapshot differs from ours\n ours:    {ours}\n hudi-rs: {theirs}")
    ours_ro, theirs_ro = read_optimized(path), _rows(read_hudi_rs(path, query_type="read_optimized"))
    if ours_ro != theirs_ro:
        raise TrialFailure(f"{what}: hudi-rs read-optimized differs from ours\n ours:    {ours_ro}\n"
                           f" hudi-rs: {theirs_ro}")
    return True


def check_state(path: str, allowed: dict[str, Rows], what: str) -> str:
    """The snapshot must equal one of the ``allowed`` states; returns the name of the one it equals."""
    got = snapshot(path)
    detail = "\n".join(f" {name}: {rows}" for name, rows in allowed.items())
    if HoodieTable(path).has_metadata_table:
        # Readers that list through the metadata table (Java's) see the same committed state.
        through = _rows(hoodie.read_table(path, columns=COLS, options={"hoodie.metadata.enable": "true"}))
        if through != got:
            raise TrialFailure(f"{what}: listing through the metadata table reads other rows\n got: {through}\n"
                               f" listing storage: {got}")
    for name, rows in allowed.items():
        if got == rows:
            return name
    raise TrialFailure(f"{what}: the snapshot is not a committed state\n got: {got}\n{detail}")


def check_metadata_table(path: str, what: str) -> None:
    """A settled table's metadata table (when it has one) lists exactly the files on storage."""
    table = HoodieTable(path)
    if not table.has_metadata_table:
        raise TrialFailure(f"{what}: the metadata table is gone")
    res = validate_metadata_table(table)
    if not res.equal:
        raise TrialFailure(f"{what}: the metadata table differs from storage: {res.to_dict()}")


def data_files(path: str) -> list[str]:
    """Every file under the table folder except ``.hoodie`` (relative paths, sorted)."""
    root = Path(path)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if (p.is_file() or p.is_symlink()) and p.relative_to(root).parts[0] != ".hoodie")


def orphan_files(path: str) -> list[str]:
    """Data files that belong to no completed instant: base files named with an uncommitted instant,
    log files holding a data or delete block of one (what a rollback must have removed)."""
    table = HoodieTable(path)
    done = {i.timestamp for i in table.timeline.completed().instants}
    start = table.timeline.start  # older writes were archived, hence completed
    out = []
    for part in list_partitions(table.storage):
        for st in table.storage.list_dir(part):
            if st.is_dir:
                continue
            if N.is_base_file(st.name):
                ts = N.parse_base_file(st.name).instant
                if ts not in done and not (start is not None and ts < start):
                    out.append(st.path)
            elif N.is_log_file(st.name):
                for b in read_log_file(table.storage, st.path, warn=False):
                    data = b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE)
                    if data and b.instant_time not in done and not (start is not None and b.instant_time
                                                                     and b.instant_time < start):
                        out.append(st.path)
                        break
    return out


def pending_instants(path: str) -> list[str]:
    return [str(i) for i in HoodieTable(path).timeline.pending().instants]
