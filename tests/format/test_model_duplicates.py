"""Model test of duplicate record keys across file groups: the class of inputs the main model test
(``test_model_hudi_rs.py``) leaves out by keeping inserts to new keys.

Hudi's ``insert`` skips the index, so inserting a key the table holds writes a second copy into a new
file group; from then on Hudi's index tags every file group holding the key: an upsert merges into
each copy on its own (with an ordering field, a copy with a greater ordering value keeps its row), a
delete removes every copy, and snapshot reads return each copy. Small-file handling is off
(``hoodie.parquet.small.file.limit=0``) so that an insert always opens a new file group on both table
types (with it, a copy-on-write insert may be routed into the very file group holding the key, where
Hudi's merge handle replaces the row instead of duplicating it: a layout question, not a semantic one).

The model keeps a list of copies; hoodie's snapshot (and after an inline compaction, its read-optimized
view) and hudi-rs must equal it as multisets, on table versions 6 and 9.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field

import pyarrow as pa
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie import write_arrow
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

KEYS = list(range(5))


@dataclass
class Copies:
    """Every stored copy of every key: [key, ts, val]; Hudi's semantics with duplicates."""

    ordering: bool
    rows: list[list[int]] = field(default_factory=list)

    def apply(self, kind: str, batch: list[tuple[int, int, int, bool]]) -> None:
        if kind == "insert":
            # insert de-duplicates nothing against the table: every row not soft-deleted is a new copy.
            self.rows += [[k, ts, v] for k, ts, v, gone in batch if not gone]
            return
        latest: dict[int, tuple[int, int, bool]] = {}
        for k, ts, v, gone in batch:  # an upsert batch is de-duplicated first (greater ts; ties: later)
            if kind == "delete" or not self.ordering or k not in latest or ts >= latest[k][0]:
                latest[k] = (ts, v, gone)
        if kind == "delete":
            self.rows = [c for c in self.rows if c[0] not in latest]
            return
        kept = []
        for c in self.rows:
            if c[0] in latest:
                ts, v, gone = latest[c[0]]
                if not self.ordering or ts >= c[1]:  # each copy merges on its own
                    if gone:
                        continue
                    c = [c[0], ts, v]
            kept.append(c)
        held = {c[0] for c in self.rows}
        kept += [[k, ts, v] for k, (ts, v, gone) in latest.items() if k not in held and not gone]
        self.rows = kept

    def snapshot(self) -> Counter:
        return Counter((k, k % 2, ts, v) for k, ts, v in self.rows)


def _read(t: pa.Table) -> Counter:
    if t.num_rows == 0:
        return Counter()
    return Counter(zip(*(t.column(c).to_pylist() for c in ("k", "part", "ts", "val"))))


def _options(table_type: str, ordering: bool, version: int, kind: str) -> dict[str, str]:
    o = {
        "hoodie.table.name": "dups",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.operation": kind,
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.write.table.version": str(version),
    }
    if ordering:
        o["hoodie.datasource.write.precombine.field"] = "ts"
        o["hoodie.datasource.write.payload.class"] = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    else:
        o["hoodie.datasource.write.payload.class"] = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    return o


row = st.tuples(st.sampled_from(KEYS), st.integers(0, 4), st.integers(0, 99), st.sampled_from([False, False, True]))
ops = st.lists(st.tuples(st.sampled_from(["insert", "insert", "upsert", "upsert", "delete", "compact"]),
                         st.lists(row, min_size=1, max_size=5)), min_size=2, max_size=7)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), st.booleans(), st.sampled_from([6, 9]), ops)
def test_duplicate_keys_across_file_groups_match_the_model(table_type: str, ordering: bool, version: int,
                                                           history: list) -> None:
    from hoodie.services.compaction import run_compaction

    d = tempfile.mkdtemp(prefix="hoodie_dups_")
    path = f"{d}/t"
    model = Copies(ordering)
    try:
        for kind, rows in history:
            if kind == "compact":
                if model.rows and table_type == "MERGE_ON_READ":
                    # One delta commit is enough to compact (the default waits for five), so the check below sees a
                    # compacted table whenever a log file exists.
                    run_compaction(path, None, {"hoodie.compact.inline.max.delta.commits": "1"}, schedule_if_none=True)
                    # Compaction merges each file group on its own: copies stay apart.
                    assert _read(hoodie.read_table(path)) == model.snapshot(), "snapshot after compaction"
                continue
            if kind == "insert" and table_type == "MERGE_ON_READ":
                # A key twice in one insert batch lands in one file group, where Java's merge-on-read readers
                # merge a log record into the first copy only: test_duplicates_in_file.py (hudi-rs as oracle).
                # Copy-on-write merges each copy as the model does, so it keeps them.
                seen: set[int] = set()
                rows = [r for r in rows if not (r[0] in seen or seen.add(r[0]))]
            if kind == "delete" and not model.rows:
                continue
            batch = pa.table({"k": pa.array([r[0] for r in rows], pa.int64()),
                              "part": pa.array([r[0] % 2 for r in rows], pa.int64()),
                              "ts": pa.array([r[1] for r in rows], pa.int64()),
                              "val": pa.array([r[2] for r in rows], pa.int64()),
                              "_hoodie_is_deleted": pa.array([r[3] for r in rows], pa.bool_())})
            write_arrow(path, batch, _options(table_type, ordering, version, kind))
            model.apply(kind, rows)
            expected = model.snapshot()
            if any(n > 1 for n in Counter(c[0] for c in model.rows).values()):
                event("a key held by several file groups")
            assert _read(hoodie.read_table(path)) == expected, f"hoodie's snapshot after {kind}"
            assert _read(read_hudi_rs(path)) == expected, f"hudi-rs's snapshot after {kind}"
    finally:
        shutil.rmtree(d, ignore_errors=True)
