"""Deterministic tests at the reader's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): read filters and partition pruning, read arguments and the incremental range, the log-scan
rules, base-file conformance, Hudi 1.x partial-update blocks."""

from __future__ import annotations

from typing import Optional

import pyarrow as pa
import pytest

from tests.format.boundaries_support import P


def test_filters_are_checked_and_every_operator_spelling_works() -> None:
    """Malformed filters, unknown operators and unknown columns are refused with messages naming
    them; '==' and '<>' mean '=' and '!='; a pyarrow scalar is compared as it is (not cast)."""
    import re

    from hoodie.format.slice.filters import OPS, ReadError, filter_expression, normalize_filters

    for bad in [("a", "="), "abc"]:
        with pytest.raises(ReadError, match=re.escape(f"filter {bad!r} must be a (column, op, value) triple, "
                                                      "e.g. ('city', '=', 'sf')")):
            normalize_filters([bad])
    with pytest.raises(ReadError, match=re.escape(f"filter ('a', '~', 1) uses unknown operator '~'; use one of "
                                                  f"{sorted(OPS)}")):
        normalize_filters([("a", "~", 1)])
    t = pa.table({"a": pa.array([1, 2, 3], pa.int64()), "b": ["x", "y", "z"]})
    with pytest.raises(ReadError, match=re.escape("filter column 'zz' is not in the table (columns: a, b)")):
        filter_expression([("zz", "=", 1)], t.schema)

    def rows(*filters) -> list[int]:
        return t.filter(filter_expression(normalize_filters(filters), t.schema)).column("a").to_pylist()

    assert rows(("a", "==", 2)) == rows(("a", "=", 2)) == [2]
    assert rows(("a", "<>", 2)) == rows(("a", "!=", 2)) == [1, 3]
    assert rows(("a", "<", pa.scalar(2.5))) == [1, 2]  # 2.5 cast to int64 would fail
    assert rows(("a", "NOT IN", [1]), ("b", "in", ["y"])) == [2]


def test_pruning_goes_on_past_undecidable_partitions_columns_and_filters(tmp_path) -> None:
    """An undecidable folder (not a value of the column's type, or not a folder the key generator
    writes) is kept and does not stop the pruning of the partitions and columns after it; neither
    does a filter whose value does not cast to its column (the row filter refuses that one)."""
    from hoodie import write_arrow
    from hoodie.format.slice.pruning import candidates, prune_partitions
    from hoodie.format.table import HoodieTable

    path = str(tmp_path / "t")
    write_arrow(path, pa.table({"k": ["k1", "k2"], "a": [1, 2], "b": [1, 2]}),
                {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
                 "hoodie.datasource.write.partitionpath.field": "a,b",
                 "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
                 "hoodie.datasource.write.operation": "insert"})
    table = HoodieTable(path)
    schema = pa.schema([("k", pa.string()), ("a", pa.int64()), ("b", pa.int64())])

    def prune(parts: list[str], *filters) -> list[str]:
        return prune_partitions(table, schema, parts, list(filters))

    assert prune(["x/1", "odd", "1/1", "2/2", "1/y"], ("a", "=", 1)) == ["x/1", "odd", "1/1", "1/y"]
    assert prune(["x/1", "x/2"], ("a", "=", 1), ("b", "=", 1)) == ["x/1"]
    assert prune(["1/1", "2/2"], ("a", "=", "not a number"), ("b", "=", 1)) == ["1/1"]
    assert prune(["1/1", "2/2"], ("k", "=", "k1")) == ["1/1", "2/2"]  # not a partition column
    assert candidates("x", pa.int64(), False) is None
    # A table without record key fields (auto-generated keys) still prunes by its partition fields.
    auto = str(tmp_path / "auto")
    write_arrow(auto, pa.table({"day": ["d1", "d2"], "v": [1, 2]}),
                {"hoodie.table.name": "auto", "hoodie.datasource.write.partitionpath.field": "day"})
    auto_schema = pa.schema([("day", pa.string()), ("v", pa.int64())])
    assert prune_partitions(HoodieTable(auto), auto_schema, ["d1", "d2"], [("day", "=", "d2")]) == ["d2"]
    assert candidates("false", pa.bool_(), False) == [False]
    assert candidates("true", pa.bool_(), False) == [True]
    assert candidates("TRUE", pa.bool_(), False) is None


def test_read_arguments_are_checked_and_say_what_to_use(tmp_path) -> None:
    """Each refusal names the argument and the way to write it; nothing is read."""
    import hoodie
    from hoodie.format.slice.filters import ReadError
    from tests.format.test_fsview import _data, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    with pytest.raises(ReadError, match=r"^query_type 'x' is not one of snapshot, read_optimized, incremental$"):
        hoodie.read_table(path, query_type="x")
    with pytest.raises(ReadError, match=r"^as_of does not apply to incremental queries; use begin and end$"):
        hoodie.read_table(path, query_type="incremental", as_of=c1, begin="0")
    with pytest.raises(ReadError, match=r"^incremental queries need begin \(exclusive\), e\.g\. begin='00000000000000'$"):
        hoodie.read_table(path, query_type="incremental")
    for kw in ({"begin": "0"}, {"end": c1}):
        with pytest.raises(ReadError, match=r"^begin/end apply only to query_type='incremental'$"):
            hoodie.read_table(path, **kw)
    for name, kw in (("as_of", {"as_of": "2024010203040"}), ("begin", {"query_type": "incremental", "begin": "x"}),
                     ("end", {"query_type": "incremental", "begin": "0", "end": "soon"})):
        with pytest.raises(ReadError, match=rf"^{name}='[^']*' is not an instant time; use yyyyMMddHHmmss\[SSS\], "
                                            r"e\.g\. 20240101000000$"):
            hoodie.read_table(path, **kw)
    with pytest.raises(ReadError, match=r"^column\(s\) \['nope'\] are not in the table \(columns: _hoodie_commit_time, "
                                        r"_hoodie_commit_seqno, .*, v\)$"):
        hoodie.read_table(path, columns=["id", "nope"])


def test_instant_arguments_are_normalised_to_at_most_17_digits() -> None:
    from hoodie.format.slice.reader import _normalize_instant

    assert _normalize_instant("0", "as_of") == "0" and _normalize_instant(" 000 ", "as_of") == "000"
    assert _normalize_instant("2024-01-02 03:04:05", "as_of") == "20240102030405"
    assert _normalize_instant("2024-01-02T03:04:05.678", "as_of") == "20240102030405678"
    assert _normalize_instant(20240102030405678, "as_of") == "20240102030405678"
    assert _normalize_instant("2024010203040567899", "as_of") == "20240102030405678"


def test_incremental_range_excludes_begin_and_includes_end(tmp_path) -> None:
    import hoodie
    from tests.format.test_fsview import _data, _vals, _write

    path = str(tmp_path / "t")
    c1 = _write(path, _data([1, 2], 1, "a"), "insert")
    c2 = _write(path, _data([2], 2, "b"), "upsert")
    c3 = _write(path, _data([3], 3, "c"), "upsert")

    def inc(begin: str, end: Optional[str] = None) -> dict[int, str]:
        return _vals(hoodie.read_table(path, query_type="incremental", begin=begin, end=end))

    assert inc("0") == {1: "a1", 2: "b2", 3: "c3"}
    assert inc(c1) == {2: "b2", 3: "c3"} and inc(c2) == {3: "c3"} and inc(c3) == {}
    assert inc("0", c1) == {1: "a1", 2: "a2"} and inc(c1, c2) == {2: "b2"} and inc(c2, c2) == {}
    empty = hoodie.read_table(path, query_type="incremental", begin=c3, columns=["id", "v"])
    assert empty.num_rows == 0 and empty.column_names == ["id", "v"]


def _scan_fixture(tmp_path):
    """Log files of one slice under a timeline P1 (completed) .. P3 (inflight), P5 (completed):
    each data block holds one row tagged with its instant."""
    from hoodie.format.log import logformat as L
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline.active import Timeline

    avro = {"type": "record", "name": "r", "fields": [{"name": "_hoodie_record_key", "type": "string"},
                                                       {"name": "v", "type": "string"}]}

    def data(instant: str) -> bytes:
        return L.encode_avro_data_block(pa.table({"_hoodie_record_key": ["k"], "v": [instant]}), instant=instant,
                                        avro_schema=avro)

    st = Storage(str(tmp_path))
    tl = Timeline([I.Instant(P + "1", I.DELTA_COMMIT), I.Instant(P + "3", I.DELTA_COMMIT, I.State.INFLIGHT),
                   I.Instant(P + "5", I.DELTA_COMMIT), I.Instant(P + "6", I.CLEAN)])
    return st, tl, data


def test_log_scan_keeps_committed_and_archived_blocks_and_skips_the_rest(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.reader import scan_log_blocks
    from hoodie.format.timeline.active import Timeline

    st, tl, data = _scan_fixture(tmp_path)
    L.write_log_file(st, "a.log.1", [data(P + "0"), data(P + "1"), data(P + "3"), data(P + "4"),
                                     L.encode_block(L.BlockType.CDC_DATA, {0: P + "5"}, b""), data(P + "6")])
    res = scan_log_blocks(st, ["a.log.1"], tl)
    # P0 is older than the timeline (archived, so completed); P3 inflight, P4 unknown, P6 a clean.
    assert [b.instant_time for b in res.blocks] == [P + "0", P + "1"]
    assert (res.total_blocks, res.skipped_uncommitted, res.corrupt_blocks, res.rollback_blocks) == (6, 3, 0, 0)
    empty = scan_log_blocks(st, ["a.log.1"], Timeline([]))  # no timeline: nothing is committed
    assert empty.blocks == [] and empty.skipped_uncommitted == 5
    # A filter keeps the listed timeline's start: P0 stays archived (a reader's completion-time cut drops
    # later completions, not the archive).
    cut = scan_log_blocks(st, ["a.log.1"], tl.filter(lambda i: False))
    assert [b.instant_time for b in cut.blocks] == [P + "0"] and cut.skipped_uncommitted == 4


def test_log_scan_stops_after_as_of_and_skips_files_by_path_or_name(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.reader import scan_log_blocks

    st, tl, data = _scan_fixture(tmp_path)
    L.write_log_file(st, "p/a.log.1", [data(P + "1"), data(P + "5")])
    L.write_log_file(st, "p/a.log.2", [data(P + "1")])
    L.write_log_file(st, "p/a.log.3", [data(P + "5")])
    files = ["p/a.log.1", "p/a.log.2", "p/a.log.3"]
    at = scan_log_blocks(st, files, tl, as_of=P + "1")
    assert [b.instant_time for b in at.blocks] == [P + "1"] and at.total_blocks == 2  # stops at the P5 block
    assert len(scan_log_blocks(st, files, tl, as_of=P + "5").blocks) == 4
    assert [b.instant_time for b in scan_log_blocks(st, files, tl, skip_files=["p/a.log.1", "a.log.3"]).blocks] == [
        P + "1"]


@pytest.mark.filterwarnings("ignore:a.log.1. corrupt log block")  # the torn block below, on purpose
def test_log_scan_rollback_block_removes_the_blocks_of_its_target_before_it(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.filters import ReadError
    from hoodie.format.slice.reader import scan_log_blocks

    st, tl, data = _scan_fixture(tmp_path)
    good = data(P + "1")
    torn = good[:-20]  # a corrupt block: its length points past what is there
    L.write_log_file(st, "a.log.1", [data(P + "5"), good])
    with open(st.full("a.log.1"), "ab") as f:
        f.write(torn)
    L.write_log_file(st, "a.log.2", [L.encode_command_block(P + "5", P + "1"), data(P + "0")])
    res = scan_log_blocks(st, ["a.log.1", "a.log.2"], tl)
    assert [b.instant_time for b in res.blocks] == [P + "5", P + "0"]
    assert (res.corrupt_blocks, res.rollback_blocks) == (1, 1)
    kept = scan_log_blocks(st, ["a.log.1"], tl)  # without the rollback block a corrupt block is only skipped
    assert [b.instant_time for b in kept.blocks] == [P + "5", P + "1"] and kept.corrupt_blocks == 1
    L.write_log_file(st, "h.log.1", [L.encode_block(L.BlockType.HFILE_DATA, {0: P + "1"}, b"")])
    with pytest.raises(ReadError, match=r"^h\.log\.1: HFile data blocks belong to the metadata table, not data tables$"):
        scan_log_blocks(st, ["h.log.1"], tl)


def test_base_file_reads_conform_to_the_schema_or_name_the_problem(tmp_path) -> None:
    """Columns are reordered and cast, missing ones are nulls, a column that cannot be cast and a
    file that is not Parquet are refused naming them; a missing file keeps its own error."""
    import pyarrow.parquet as pq

    from hoodie.format.slice.filters import ReadError
    from hoodie.format.slice.reader import read_base_file
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    pq.write_table(pa.table({"b": pa.array([1, 2], pa.int32()), "a": ["x", "y"], "s": ["1", "zz"]}),
                   str(tmp_path / "f.parquet"))
    schema = pa.schema([("a", pa.string()), ("b", pa.int64()), ("c", pa.float64())])
    got = read_base_file(st, "f.parquet", schema)
    assert got.schema == schema and got.to_pydict() == {"a": ["x", "y"], "b": [1, 2], "c": [None, None]}
    import pyarrow.compute as pc

    assert read_base_file(st, "f.parquet", schema, filters=pc.field("b") > 1).to_pydict()["a"] == ["y"]
    with pytest.raises(ReadError, match=r"^column 's' has type string in a data file but int64 in the table schema "
                                        r"and cannot be converted: "):
        read_base_file(st, "f.parquet", pa.schema([("s", pa.int64())]))
    (tmp_path / "g.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ReadError, match=rf"^base file {st.uri('g.parquet')} is not readable Parquet \(.*\); it is "
                                        "damaged or was replaced by another file. Restore it from a copy, or roll "
                                        "back / restore the table to before the commit that wrote it$"):
        read_base_file(st, "g.parquet", schema)
    with pytest.raises(FileNotFoundError):
        read_base_file(st, "missing.parquet", schema)


def test_float_columns_widen_the_java_way_only_when_asked(tmp_path) -> None:
    import pyarrow.parquet as pq

    from hoodie.format.slice.reader import java_float_to_double, read_base_file
    from hoodie.format.storage import Storage

    floats = pa.array([0.1, None, 0.1, 2.5], pa.float32())
    assert java_float_to_double(floats).to_pylist() == [0.1, None, 0.1, 2.5]
    assert java_float_to_double(pa.chunked_array([floats[:2], floats[2:]])).to_pylist() == [0.1, None, 0.1, 2.5]
    st = Storage(str(tmp_path))
    pq.write_table(pa.table({"f": floats}), str(tmp_path / "f.parquet"))
    schema = pa.schema([("f", pa.float64())])
    assert read_base_file(st, "f.parquet", schema, java_floats=True).column("f").to_pylist()[0] == 0.1
    binary = read_base_file(st, "f.parquet", schema).column("f").to_pylist()[0]
    assert binary != 0.1 and abs(binary - 0.1) < 1e-7  # the float's own value, 0.10000000149011612


def test_slice_record_keys_reads_keys_only_until_a_delete_needs_the_merge(tmp_path) -> None:
    """The writer's index lookup: base keys plus data-block keys (duplicates kept) while nothing
    deletes; once a delete block (or a soft-delete column) is valid, the merged slice's keys."""
    from hoodie.format.file_group.fsview import FileSystemView
    from hoodie.format.slice.reader import slice_record_keys
    from hoodie.format.table import HoodieTable
    from tests.format.test_fsview import _data, _write

    path = str(tmp_path / "t")
    _write(path, _data([1, 2, 3], 1, "a"), "insert")

    def keys() -> list[str]:
        t = HoodieTable(path)
        (sl,) = FileSystemView(t.storage, t.timeline).latest_file_slices("a")
        return sorted(slice_record_keys(t, sl).to_pylist())

    assert keys() == ["1", "2", "3"]
    _write(path, _data([2], 2, "b"), "upsert")
    assert keys() == ["1", "2", "2", "3"]
    _write(path, _data([3], 3, "x"), "delete")
    assert keys() == ["1", "2"]
    soft = str(tmp_path / "s")
    with_flag = _data([1, 2], 1, "a").append_column("_hoodie_is_deleted", pa.array([False, False]))
    _write(soft, with_flag, "insert")
    _write(soft, _data([2], 2, "b").append_column("_hoodie_is_deleted", pa.array([True])), "upsert")
    t = HoodieTable(soft)
    (sl,) = FileSystemView(t.storage, t.timeline).latest_file_slices("a")
    assert slice_record_keys(t, sl).to_pylist() == ["1"]


_PARTIAL_SCHEMA = pa.schema([("_hoodie_commit_time", pa.string()), ("_hoodie_record_key", pa.string()),
                             ("a", pa.float64()), ("b", pa.string())])


def _data_block(instant: str, rows: dict, partial: bool) -> bytes:
    """An Avro data block holding ``rows`` (column -> values; ``a`` written as an Avro float), with
    the IS_PARTIAL header when ``partial``."""
    import json
    import struct

    from hoodie.format.avro.encode import encode_records_array
    from hoodie.format.log import encode as LE
    from hoodie.format.log import logformat as L

    types = {"_hoodie_commit_time": "string", "_hoodie_record_key": "string", "a": "float", "b": "string"}
    avro = {"type": "record", "name": "r", "fields": [{"name": c, "type": types[c]} for c in rows]}
    table = pa.table({c: pa.array(v, pa.float32() if c == "a" else pa.string()) for c, v in rows.items()})
    datums = encode_records_array(table, avro)
    content = struct.pack(">ii", L.DATA_BLOCK_CONTENT_VERSION, len(datums)) + LE._concat_datums(datums, length_prefix=True)
    header = {L.HeaderKey.INSTANT_TIME: instant, L.HeaderKey.SCHEMA: json.dumps(avro)}
    if partial:
        header[7] = "true"  # HoodieLogBlock.HeaderMetadataType.IS_PARTIAL
    return L.encode_block(L.BlockType.AVRO_DATA, header, content)


def test_partial_update_blocks_lay_their_columns_over_the_current_record(tmp_path) -> None:
    """Blocks apply in log order (full ones too, before and after partial ones); a partial row keeps
    the key's other columns, a new key gets nulls there; floats widen the Java way in both kinds."""
    from types import SimpleNamespace

    from hoodie.format.log import logformat as L
    from hoodie.format.slice.filters import ReadError
    from hoodie.format.slice.reader import is_partial, merge_partial_blocks
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    t1, t2, t3, t4 = (P + str(i) for i in range(1, 5))
    L.write_log_file(st, "a.log.1", [
        _data_block(t1, {"_hoodie_commit_time": [t1], "_hoodie_record_key": ["k1"], "a": [0.1], "b": ["y"]}, False),
        _data_block(t2, {"_hoodie_commit_time": [t2, t2], "_hoodie_record_key": ["k1", "k3"], "b": ["z", "w"]}, True),
        _data_block(t3, {"_hoodie_commit_time": [t3], "_hoodie_record_key": ["k2"], "a": [0.3]}, True),
        _data_block(t4, {"_hoodie_commit_time": [t4], "_hoodie_record_key": ["k4"], "a": [0.7], "b": ["u"]}, False),
    ])
    blocks = list(L.read_log_file(st, "a.log.1"))
    assert [is_partial(b) for b in blocks] == [False, True, True, False]
    table = SimpleNamespace(merge_mode=SimpleNamespace(use_ordering=False, ordering_field=None), base_path="t")
    base = pa.table({"_hoodie_commit_time": [P + "0"] * 2, "_hoodie_record_key": ["k1", "k2"], "a": [1.0, 2.0],
                     "b": ["x", "x"]}, schema=_PARTIAL_SCHEMA)

    def rows(t: pa.Table) -> dict:
        return {r["_hoodie_record_key"]: (r["_hoodie_commit_time"], r["a"], r["b"]) for r in t.to_pylist()}

    assert rows(merge_partial_blocks(table, base, blocks, _PARTIAL_SCHEMA)) == {
        "k1": (t2, 0.1, "z"), "k2": (t3, 0.3, "x"), "k3": (t2, None, "w"), "k4": (t4, 0.7, "u")}
    # A log-only slice whose first block is partial: nothing to lay it over.
    assert rows(merge_partial_blocks(table, None, blocks[1:3], _PARTIAL_SCHEMA)) == {
        "k1": (t2, None, "z"), "k3": (t2, None, "w"), "k2": (t3, 0.3, None)}
    ordered = SimpleNamespace(merge_mode=SimpleNamespace(use_ordering=True, ordering_field="ts"), base_path="t")
    with pytest.raises(ReadError, match=r"^t: partial-update log blocks \(IS_PARTIAL\) on a table merged by event "
                                        r"time \(ts\); hoodie merges partial updates with commit-time ordering only\. "
                                        "Read this table with Hudi 1.x, or compact it with Hudi first$"):
        merge_partial_blocks(ordered, base, blocks, _PARTIAL_SCHEMA)


def test_reading_a_table_without_commits_or_schema_gives_the_meta_columns(tmp_path) -> None:
    import hoodie
    from hoodie.format.table import META_COLUMNS

    (tmp_path / ".hoodie").mkdir()
    (tmp_path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=t\nhoodie.table.version=6\n"
                                                          "hoodie.table.type=COPY_ON_WRITE\n")
    got = hoodie.read_table(str(tmp_path))
    assert got.num_rows == 0 and got.schema == pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS])
    assert hoodie.read_table(str(tmp_path), columns=["_hoodie_record_key"]).column_names == ["_hoodie_record_key"]


def test_block_data_widens_avro_floats_only_when_asked(tmp_path) -> None:
    from hoodie.format.log import logformat as L
    from hoodie.format.slice.reader import block_data
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    t1 = P + "1"
    L.write_log_file(st, "a.log.1", [_data_block(t1, {"_hoodie_commit_time": [t1], "_hoodie_record_key": ["k"],
                                                       "a": [0.1], "b": ["y"]}, False)])
    (block,) = L.read_log_file(st, "a.log.1")
    binary = block_data(block, _PARTIAL_SCHEMA).column("a").to_pylist()[0]
    assert binary != 0.1 and abs(binary - 0.1) < 1e-7  # the float's own value by default
    assert block_data(block, _PARTIAL_SCHEMA, False).column("a").to_pylist() == [binary]
    assert block_data(block, _PARTIAL_SCHEMA, True).column("a").to_pylist() == [0.1]
    assert block_data(block, _PARTIAL_SCHEMA, True).schema == _PARTIAL_SCHEMA


def test_a_file_with_exactly_the_wanted_columns_comes_back_with_the_wanted_schema() -> None:
    """The fast path of _conform (the file's columns and types are the schema's): the result carries the
    wanted schema and its metadata, not the file's (a base file's footer holds the bloom filter)."""
    from hoodie.format.slice.slice_reader import _conform

    want = pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.string())], metadata={b"w": b"1"})
    got = pa.table({"a": [1], "b": ["x"]}).replace_schema_metadata({b"org.apache.hudi.bloomfilter": b"big"})
    out = _conform(got, want)
    assert out.schema.equals(want, check_metadata=True) and out.to_pylist() == [{"a": 1, "b": "x"}]
    # A column in another order or type still goes through the full projection.
    swapped = pa.table({"b": ["x"], "a": pa.array([1], pa.int32())})
    assert _conform(swapped, want).schema.equals(want, check_metadata=True)
