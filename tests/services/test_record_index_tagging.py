"""hoodie.index.type=RECORD_INDEX: upserts and deletes tagged by the metadata table's record_index, with
Hudi's global semantics (``HoodieIndexUtils.tagGlobalLocationBackToRecords``), and GLOBAL_BLOOM / GLOBAL_SIMPLE,
the same semantics by a scan of the table's keys. A model test of random
upserts and deletes whose keys move between partitions, against hoodie's reader and hudi-rs, with the
record index validated against a key scan after every step; the refusals before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import hoodie
from hoodie.errors import WriteError
from hoodie.format.table import HoodieTable
from hoodie.services.metadata.lifecycle import validate_record_index
from tests.helpers import examples
from tests.hudi_rs import read_hudi_rs

COLS = ["_hoodie_record_key", "_hoodie_partition_path", "k", "p", "ts", "v"]
KEYS = [f"k{i}" for i in range(8)]
PARTS = ["x", "y", "z"]


# Each global index type's own update-partition-path key (Hudi's HoodieIndexConfig).
UPDATE_PP = {"RECORD_INDEX": "hoodie.record.index.update.partition.path",
             "GLOBAL_BLOOM": "hoodie.bloom.index.update.partition.path",
             "GLOBAL_SIMPLE": "hoodie.simple.index.update.partition.path"}
# What the metadata table keeps for a GLOBAL_* write (RECORD_INDEX always has the record index): the record
# index (kept by the commit, though not used to tag), the files partition only, or no metadata table.
MDT = {"record_index": {"hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "true"},
       "files": {"hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "false"},
       "none": {"hoodie.metadata.enable": "false"}}


def _opts(table_type: str, version: int, op: str, update_pp: bool, index: str = "RECORD_INDEX",
          mdt: str = "record_index", **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            **MDT[mdt], "hoodie.metadata.record.index.min.filegroup.count": "3",
            "hoodie.datasource.write.operation": op, "hoodie.index.type": index,
            UPDATE_PP[index]: str(update_pp).lower(),
            # small base files: several file groups per partition, small-file packing beside moves
            "hoodie.parquet.max.file.size": "4096", "hoodie.copyonwrite.record.size.estimate": "512",
            "hoodie.parquet.small.file.limit": "2048", **extra}


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


class GlobalIndexModel:
    """Hudi's RECORD_INDEX semantics: key -> (stored partition path, row)."""

    def __init__(self, update_pp: bool) -> None:
        self.update_pp = update_pp
        self.rows: dict[str, tuple[str, dict[str, Any]]] = {}

    def upsert(self, batch: list[dict[str, Any]], use_ordering: bool) -> None:
        for r in batch:
            old = self.rows.get(r["k"])
            if old is None:
                if not r["_hoodie_is_deleted"]:  # a soft delete of a key the table lacks writes nothing
                    self.rows[r["k"]] = (r["p"], r)
                continue
            if use_ordering and r["ts"] < old[1]["ts"]:
                continue  # the merge keeps the stored record, where it is
            if r["_hoodie_is_deleted"]:
                del self.rows[r["k"]]  # deleted where it is stored, whatever partition value it came with
                continue
            # Moved only with update.partition.path; else updated in place with the incoming data columns.
            self.rows[r["k"]] = (r["p"] if self.update_pp else old[0], r)

    def delete(self, keys: list[str]) -> None:
        for k in keys:
            self.rows.pop(k, None)

    def snapshot(self) -> list[tuple]:
        return sorted((k, p, r["k"], r["p"], r["ts"], r["v"]) for k, (p, r) in self.rows.items())


# (operation, [(key, incoming partition, ordering value, _hoodie_is_deleted)])
step = st.tuples(st.sampled_from(["upsert", "upsert", "delete"]),
                 st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(PARTS), st.integers(0, 3),
                                    st.sampled_from([False, False, False, True])),
                          min_size=1, max_size=6, unique_by=lambda t: t[0]))


@settings(max_examples=examples(4), deadline=None)
@given(table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), version=st.sampled_from([6, 9]),
       update_pp=st.booleans(), steps=st.lists(step, min_size=2, max_size=4),
       index=st.sampled_from(["RECORD_INDEX", "GLOBAL_BLOOM", "GLOBAL_SIMPLE"]),
       mdt=st.sampled_from(["record_index", "files", "none"]))
# Always run: keys moving (k0 newer, k1 older than stored), then a delete by a stale partition value.
@example(table_type="COPY_ON_WRITE", version=6, update_pp=True, index="RECORD_INDEX", mdt="record_index",
         steps=[("upsert", [("k0", "y", 2, False), ("k1", "z", 0, False), ("k6", "z", 1, False)]),
                ("delete", [("k0", "x", 0, False)])])
@example(table_type="MERGE_ON_READ", version=9, update_pp=True, index="RECORD_INDEX", mdt="record_index",
         steps=[("upsert", [("k0", "y", 2, False), ("k1", "z", 0, False), ("k2", "x", 3, False),
                            ("k3", "x", 2, True)]),
                ("delete", [("k2", "z", 0, False)])])
@example(table_type="MERGE_ON_READ", version=6, update_pp=False, index="RECORD_INDEX", mdt="record_index",
         steps=[("upsert", [("k0", "y", 2, False), ("k3", "y", 1, False)]),
                ("upsert", [("k0", "z", 3, False), ("k4", "x", 1, True)])])
# GLOBAL_SIMPLE without a metadata table, GLOBAL_BLOOM beside a record index it does not tag with: moves
# (newer, older, soft-deleted) and a delete by a stale partition value.
@example(table_type="MERGE_ON_READ", version=6, update_pp=True, index="GLOBAL_SIMPLE", mdt="none",
         steps=[("upsert", [("k0", "y", 2, False), ("k1", "z", 0, False), ("k2", "x", 3, True)]),
                ("delete", [("k0", "x", 0, False)])])
@example(table_type="COPY_ON_WRITE", version=9, update_pp=False, index="GLOBAL_BLOOM", mdt="record_index",
         steps=[("upsert", [("k0", "y", 2, False), ("k6", "z", 1, False)]),
                ("upsert", [("k6", "x", 2, False), ("k1", "z", 3, False)])])
def test_global_index_tagging_matches_the_global_index_model(tmp_path_factory: pytest.TempPathFactory,
                                                             table_type: str, version: int, update_pp: bool,
                                                             steps: list, index: str, mdt: str) -> None:
    """RECORD_INDEX, GLOBAL_BLOOM and GLOBAL_SIMPLE: every step's table equals the model in hoodie's reader and
    hudi-rs, and a record index the table keeps equals a key scan of the files (each key in exactly one file
    group)."""
    if index == "RECORD_INDEX":
        mdt = "record_index"
    path = str(tmp_path_factory.mktemp("ridx") / "t")
    model = GlobalIndexModel(update_pp)
    first = [{"k": k, "p": PARTS[i % 3], "ts": 1, "v": f"init-{k}", "_hoodie_is_deleted": False}
             for i, k in enumerate(KEYS[:5])]
    hoodie.write_arrow(path, pa.Table.from_pylist(first), _opts(table_type, version, "upsert", update_pp, index, mdt))
    model.upsert(first, False)
    use_ordering = HoodieTable(path).merge_mode.use_ordering
    for n, (op, batch) in enumerate(steps):
        if op == "delete":
            rows = [{"k": k, "p": p, "ts": ts, "v": "del", "_hoodie_is_deleted": False} for k, p, ts, _ in batch]
            model.delete([r["k"] for r in rows])
        else:
            rows = [{"k": k, "p": p, "ts": ts, "v": f"s{n}-{k}", "_hoodie_is_deleted": soft} for k, p, ts, soft in batch]
            model.upsert(rows, use_ordering)
        hoodie.write_arrow(path, pa.Table.from_pylist(rows), _opts(table_type, version, op, update_pp, index, mdt))
        what = f"step {n} {op} {batch}"
        if mdt == "record_index":
            assert validate_record_index(HoodieTable(path)) == [], what
        assert _rows(hoodie.read_table(path)) == model.snapshot(), what
        assert _rows(read_hudi_rs(path)) == model.snapshot(), what


def test_global_index_update_partition_path_defaults_follow_hudi(tmp_path: Path) -> None:
    """Unset, hoodie.bloom.index.update.partition.path and hoodie.simple.index.update.partition.path are true
    (a key arriving in another partition moves) and hoodie.record.index.update.partition.path is false (it is
    updated where it lives), as in Hudi's HoodieIndexConfig; each index type reads only its own key."""
    from hoodie.services.write.configs import WriteConfig

    def moved(index: str, **extra: str) -> str:
        path = str(tmp_path / f"{index}{len(extra)}")
        base = _opts("COPY_ON_WRITE", 9, "upsert", False, index, "record_index", **extra)
        base.pop(UPDATE_PP[index])
        hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [1], "v": ["a"]}), base)
        hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["y"], "ts": [2], "v": ["b"]}), base)
        (row,) = hoodie.read_table(path).select(["_hoodie_partition_path"]).to_pylist()
        return row["_hoodie_partition_path"]

    assert (moved("GLOBAL_BLOOM"), moved("GLOBAL_SIMPLE"), moved("RECORD_INDEX")) == ("y", "y", "x")
    # Another index type's key does not apply.
    assert moved("GLOBAL_SIMPLE", **{"hoodie.bloom.index.update.partition.path": "false"}) == "y"
    cfg = WriteConfig.from_options(_opts("COPY_ON_WRITE", 9, "upsert", False, "GLOBAL_BLOOM"))
    assert cfg.tags_globally and not cfg.update_partition_path


def test_global_simple_refuses_a_key_stored_in_two_partitions(tmp_path: Path) -> None:
    """A table written by the non-global index holds a key twice (in x and y); a GLOBAL_SIMPLE upsert of it is
    refused naming both places, before anything is written."""
    path = str(tmp_path / "t")
    bloom = _opts("COPY_ON_WRITE", 6, "upsert", False, "GLOBAL_SIMPLE", "none", **{"hoodie.index.type": "BLOOM"})
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [1], "v": ["a"]}), bloom)
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["y"], "ts": [1], "v": ["a"]}), bloom)
    before = _timeline_files(path)
    with pytest.raises(WriteError, match="record key 'a' is in partition 'x' .* and in partition 'y'.*GLOBAL_SIMPLE"):
        hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["z"], "ts": [2], "v": ["b"]}),
                           _opts("COPY_ON_WRITE", 6, "upsert", True, "GLOBAL_SIMPLE", "none"))
    assert _timeline_files(path) == before


def _timeline_files(path: str) -> list[str]:
    return sorted(p.name for p in (Path(path) / ".hoodie").iterdir() if p.is_file())


@pytest.mark.parametrize("extra, says", [
    ({"hoodie.metadata.record.index.enable": "false"}, "hoodie.metadata.record.index.enable=false"),
    ({"hoodie.metadata.enable": "false"}, "hoodie.metadata.enable=false"),
])
def test_record_index_type_refused_without_the_index(tmp_path: Path, extra: dict, says: str) -> None:
    """RECORD_INDEX with the record index switched off is refused before anything is written, naming the fix."""
    path = str(tmp_path / "t")
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [1], "v": ["a"]}),
                       _opts("COPY_ON_WRITE", 6, "upsert", False))
    before = _timeline_files(path)
    with pytest.raises(WriteError, match="hoodie.metadata.record.index.enable=true") as e:
        hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["y"], "ts": [2], "v": ["b"]}),
                           _opts("COPY_ON_WRITE", 6, "upsert", False, **extra))
    assert says in str(e.value) and "Nothing was written" in str(e.value)
    assert _timeline_files(path) == before


def test_record_index_type_refused_on_a_table_without_one(tmp_path: Path) -> None:
    """A table whose metadata table has no record_index, written without asking for one: refused, unchanged."""
    path = str(tmp_path / "t")
    base = _opts("COPY_ON_WRITE", 6, "upsert", False)
    base.pop("hoodie.metadata.record.index.enable")
    base.pop("hoodie.index.type")
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [1], "v": ["a"]}), base)
    before = _timeline_files(path)
    with pytest.raises(WriteError, match="without the record_index partition.*record.index.enable=true"):
        hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["y"], "ts": [2], "v": ["b"]}),
                           {**base, "hoodie.index.type": "RECORD_INDEX"})
    assert _timeline_files(path) == before


def test_record_index_built_by_the_write_that_first_asks_for_it(tmp_path: Path) -> None:
    """A table without record_index, upserted with RECORD_INDEX and hoodie.metadata.record.index.enable=true:
    tagged globally by a key scan (the index Hudi builds first would say the same), the index created at the
    commit and valid; the moved key is in one place."""
    path = str(tmp_path / "t")
    base = _opts("MERGE_ON_READ", 9, "upsert", True)
    base.pop("hoodie.metadata.record.index.enable")
    base.pop("hoodie.index.type")
    hoodie.write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "y"], "ts": [1, 1], "v": ["a", "b"]}), base)
    assert "record_index" not in HoodieTable(path).props.get("hoodie.table.metadata.partitions", "")
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["z"], "ts": [2], "v": ["a2"]}),
                       _opts("MERGE_ON_READ", 9, "upsert", True))
    table = HoodieTable(path)
    assert "record_index" in table.props["hoodie.table.metadata.partitions"]
    assert validate_record_index(table) == []
    want = [("a", "z", "a", "z", 2, "a2"), ("b", "y", "b", "y", 1, "b")]
    assert _rows(hoodie.read_table(path)) == want
    assert _rows(read_hudi_rs(path)) == want


def test_a_bloom_write_still_refuses_a_key_the_record_index_places_elsewhere(tmp_path: Path) -> None:
    """The non-global index on a table with a record index keeps refusing a second copy of a key."""
    path = str(tmp_path / "t")
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [1], "v": ["a"]}),
                       _opts("COPY_ON_WRITE", 6, "upsert", False))
    with pytest.raises(WriteError, match="already in partition 'x'"):
        hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["y"], "ts": [2], "v": ["b"]}),
                           _opts("COPY_ON_WRITE", 6, "upsert", False, **{"hoodie.index.type": "BLOOM"}))


@pytest.mark.parametrize("update_pp, want", [
    # stored: a in x, b in y, c in z. a arrives in y, b in w, n (new) twice, in v and u; c in z.
    # a joins x and y, b joins w and y: one group {w, x, y}, named w (b's own: left out); n's rows: {u, v}.
    (True, {"a": "w", "n": "u"}),
    # a and b go where they are stored (x, y), whatever partition they arrive with.
    (False, {"a": "x", "b": "y", "n": "u"}),
])
def test_record_index_groups_join_the_partitions_a_record_touches(tmp_path: Path, update_pp: bool,
                                                                  want: dict) -> None:
    """The Spark write's task groups: every partition a key's rows touch in one group (named by its least
    path); a key whose group is its incoming partition is left out."""
    from hoodie.services.write.configs import WriteConfig
    from hoodie.services.write.plan import record_index_groups

    path = str(tmp_path / "t")
    hoodie.write_arrow(path, pa.table({"k": ["a", "b", "c"], "p": ["x", "y", "z"], "ts": [1, 1, 1], "v": ["", "", ""]}),
                       _opts("COPY_ON_WRITE", 9, "upsert", update_pp))
    table = HoodieTable(path)
    cfg = WriteConfig.from_options(_opts("COPY_ON_WRITE", 9, "upsert", update_pp), table)
    got = record_index_groups(table, cfg, ["a", "b", "n", "n", "c"], ["y", "w", "v", "u", "z"])
    assert got == want


def test_a_record_index_out_of_sync_is_refused_while_planning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index placing a key in a file group the table lacks: refused naming validate, the write's instant
    files removed, the table unchanged."""
    from hoodie.format.metadata.record_index import RecordLocation
    from hoodie.services.write import plan

    path = str(tmp_path / "t")
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [1], "v": ["a"]}),
                       _opts("MERGE_ON_READ", 6, "upsert", False))
    before = _timeline_files(path)
    monkeypatch.setattr(plan, "lookup_record_index",
                        lambda mdt, keys: {"a": RecordLocation("x", "00000000-0000-0000-0000-000000000000-0", 0)})
    with pytest.raises(WriteError, match="out of sync.*hoodie metadata validate"):
        hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "ts": [2], "v": ["b"]}),
                           _opts("MERGE_ON_READ", 6, "upsert", False))
    assert _timeline_files(path) == before
    monkeypatch.undo()
    assert _rows(hoodie.read_table(path)) == [("a", "x", "a", "x", 1, "a")]


def _java_fixtures_with_a_clean_record_index() -> list[Path]:
    from tests.services.test_indexes import _zips

    # The Java fixtures whose record index maps each key to one place and whose keys are simple (a key the
    # index holds twice, or a timestamp key generator, is not what this test is about).
    return [z for z in _zips("record_index") if "txns_simple_meta" in z.stem or "trips_8i3u1d" in z.stem]


@pytest.mark.filterwarnings("ignore:.*dropped the metadata-table partitions")
@pytest.mark.parametrize("z", _java_fixtures_with_a_clean_record_index(), ids=lambda z: z.stem)
def test_record_index_tagging_on_a_java_written_record_index(z: Path, tmp_path: Path) -> None:
    """A Java-written table (v8 MOR, v9 COW and MOR) tagged through its own record_index: a key upserted with
    another partition value moves (hoodie.record.index.update.partition.path=true), the row count stays,
    hudi-rs reads what hoodie reads and the index stays valid."""
    from tests.format.test_metadata_fixtures import _table

    path = str(_table(z, tmp_path / "t"))
    table = HoodieTable(path)
    assert validate_record_index(table) == []
    pf, rk = table.partition_fields[0], table.record_key_fields[0]
    before = hoodie.read_table(path)
    one = before.slice(0, 1)
    data = one.drop_columns([c for c in one.column_names if c.startswith("_hoodie")])
    old = data.column(pf)[0].as_py()
    new = sorted(set(before.column(pf).to_pylist()) - {old})[0]
    data = data.set_column(data.schema.get_field_index(pf), pf, pa.array([new], data.schema.field(pf).type))
    hoodie.write_arrow(path, data, {"hoodie.datasource.write.operation": "upsert", "hoodie.index.type": "RECORD_INDEX",
                                    "hoodie.record.index.update.partition.path": "true"})
    key = one.column(rk)[0].as_py()
    after = hoodie.read_table(path)
    assert after.num_rows == before.num_rows
    assert [r[pf] for r in after.to_pylist() if r[rk] == key] == [new]
    cols = ["_hoodie_record_key", "_hoodie_partition_path", rk, pf]
    ours = sorted(tuple(r[c] for c in cols) for r in after.select(cols).to_pylist())
    assert sorted(tuple(r[c] for c in cols) for r in read_hudi_rs(path).select(cols).to_pylist()) == ours
    assert validate_record_index(HoodieTable(path)) == []
