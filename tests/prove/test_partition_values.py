"""Partition values that are awkward as folder names (issue 12, items 4, 5 and 9): dot-leading
segments are ordinary partitions that every reader and service sees; values that would leave the
table, land in hoodie's own folders or mean different things on local and S3 storage are refused,
with the same message on both, before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.timeline import instant as I
from hoodie import write_arrow
from hoodie.format.file_group.fsview import list_partitions
from hoodie.format.storage import Storage
from hoodie.services.clean import run_clean
from hoodie.services.ttl import run_ttl
from tests.hudi_rs import read_hudi_rs
from tests.s3 import moto_s3  # noqa: F401  (fixture)


def opts(op: str = "upsert", table_type: str = "COPY_ON_WRITE", **extra: str) -> dict[str, str]:
    o = {
        "hoodie.table.name": "pv_t",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": op,
    }
    o.update(extra)
    return o


def batch(rows: list[tuple[str, object, int]]) -> pa.Table:
    return pa.table({"k": pa.array([r[0] for r in rows], pa.string()),
                     "p": pa.array([r[1] for r in rows], pa.string()),
                     "ts": pa.array([r[2] for r in rows], pa.int64())})


def by_key(t: pa.Table) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for r in t.select(["k", "p", "ts"]).to_pylist():
        assert r["k"] not in out, f"key {r['k']} read twice"
        out[r["k"]] = (r["p"], r["ts"])
    return out


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_dot_leading_partitions_are_read_and_serviced(tmp_path: Path, table_type: str) -> None:
    """``.NET`` and ``2024/.late`` are partitions like any other: read (ours and hudi-rs), updated in
    place, expired by TTL, cleaned and dropped by delete_partition."""
    path = str(tmp_path / "t")
    old = I.epoch_ms_to_instant(0, "LOCAL")  # 1970: expired for any retention
    write_arrow(path, batch([("a", ".NET", 1)]), opts("insert", table_type), instant=old)
    write_arrow(path, batch([("b", "2024/.late", 1), ("c", "x", 1), ("d", ".hidden.too", 1)]),
                opts("insert", table_type))
    assert list_partitions(Storage(path)) == [".NET", ".hidden.too", "2024/.late", "x"]
    want = {"a": (".NET", 1), "b": ("2024/.late", 1), "c": ("x", 1), "d": (".hidden.too", 1)}
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    # An upsert finds the row in the dot partition: an update, not a second row.
    write_arrow(path, batch([("a", ".NET", 2), ("b", "2024/.late", 2)]), opts("upsert", table_type))
    want.update(a=(".NET", 2), b=("2024/.late", 2))
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    assert by_key(hoodie.read_table(path, filters=[("p", "=", ".NET")])) == {"a": (".NET", 2)}
    # delete_partition drops a dot partition by name.
    write_arrow(path, batch([]), opts("delete_partition", table_type,
                                      **{"hoodie.datasource.write.partitions.to.delete": ".hidden.too"}))
    del want["d"]
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    # TTL sees the dot partition written in 1970 (its last write was the upsert, so judge by creation).
    res = run_ttl(path, {"hoodie.partition.ttl.strategy.days.retain": "10",
                         "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_CREATION_TIME"})
    assert res.expired_partitions == [".NET"]
    del want["a"]
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    # The cleaner removes the replaced partitions' files and folders, dot or not.
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert not os.path.exists(f"{path}/.NET") and not os.path.exists(f"{path}/.hidden.too")
    assert list_partitions(Storage(path)) == ["2024/.late", "x"]
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))


def _tree(root: Path) -> list[str]:
    """Every file and folder below ``root`` (relative), to show that a refused write wrote nothing."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


ESCAPING = ["..", "../x", "x/../../y", ".hoodie", ".", "a//b", "a/", "/a", "a\x00b", "x" * 300,
            "a/.hoodie", "b/.hoodie_partition_metadata"]


@pytest.mark.parametrize("hive", [False, True])
@pytest.mark.parametrize("value", ESCAPING)
def test_partition_values_that_leave_the_table_are_refused(tmp_path: Path, value: str, hive: bool) -> None:
    """Each value whose folder would be outside the table, in ``.hoodie``, or different on local and
    S3 storage is refused before anything is written; hive style makes a lone ``..`` or ``.hoodie``
    an ordinary ``p=..`` folder, and the error says so when it would."""
    from hoodie.format.keys.paths import PartitionPathError, partition_path_problem

    o = opts("insert", **{"hoodie.datasource.write.hive_style_partitioning": str(hive).lower()})
    segment = f"p={value}" if hive else value
    path = tmp_path / "t"
    if partition_path_problem(segment) is None:  # hive style made it one safe folder
        write_arrow(str(path), batch([("k1", value, 1)]), o)
        assert by_key(hoodie.read_table(str(path))) == {"k1": (value, 1)} == by_key(read_hudi_rs(str(path)))
        return
    # A new table: nothing at all is created, outside or inside the base path.
    with pytest.raises(PartitionPathError) as e:
        write_arrow(str(path), batch([("k0", "ok", 1), ("k1", value, 1)]), o)
    msg = str(e.value)
    assert f"p={value[:70]!r}"[:60] in msg and "Nothing was committed" in msg
    assert ("urlencode=true" in msg) == ("\x00" in value or ("/" in value and partition_path_problem(
        f"p={value.replace('/', '%2F')}" if hive else value.replace("/", "%2F")) is None))
    assert _tree(tmp_path) == []
    # An existing table: the timeline, the folders and the rows stay as they were.
    write_arrow(str(path), batch([("k0", "ok", 1)]), o)
    before = _tree(tmp_path)
    with pytest.raises(PartitionPathError):
        write_arrow(str(path), batch([("k1", value, 2)]), {**o, "hoodie.datasource.write.operation": "upsert"})
    assert _tree(tmp_path) == before
    assert by_key(hoodie.read_table(str(path))) == {"k0": ("ok", 1)} == by_key(read_hudi_rs(str(path)))


def test_url_encoding_makes_separator_values_one_folder(tmp_path: Path) -> None:
    """With ``...partitionpath.urlencode=true`` (the fix the errors name) the values with '/' become
    one folder each and read back as written, by us and by hudi-rs, pruned or not."""
    path = str(tmp_path / "t")
    values = ["../x", "x/../../y", "a//b", "a/", "/a", "a\x00b", "2024/01/31", "a", "a/b"]
    o = opts("insert", **{"hoodie.datasource.write.partitionpath.urlencode": "true"})
    write_arrow(path, batch([(f"k{i}", v, 1) for i, v in enumerate(values)]), o)
    assert sorted(os.listdir(path)) == sorted([".hoodie", "..%2Fx", "x%2F..%2F..%2Fy", "a%2F%2Fb", "a%2F", "%2Fa",
                                               "a%00b", "2024%2F01%2F31", "a", "a%2Fb"])
    want = {f"k{i}": (v, 1) for i, v in enumerate(values)}
    assert by_key(hoodie.read_table(path)) == want == by_key(read_hudi_rs(path))
    for i, v in enumerate(values):
        assert by_key(hoodie.read_table(path, filters=[("p", "=", v)])) == {f"k{i}": (v, 1)}


@pytest.mark.parametrize("first,second", [("a", "a/b"), ("a/b", "a"), ("2024/01", "2024/01/31")])
def test_partition_inside_another_partition_is_refused(tmp_path: Path, first: str, second: str) -> None:
    """Java Hudi does not look inside a partition folder and hudi-rs reads only the innermost one:
    a partition inside another is refused, in one batch and against the table."""
    from hoodie.format.keys.paths import PartitionPathError

    path = tmp_path / "t"
    with pytest.raises(PartitionPathError, match="inside partition .*both in this write"):
        write_arrow(str(path), batch([("k1", first, 1), ("k2", second, 1)]), opts("insert"))
    assert _tree(tmp_path) == []
    write_arrow(str(path), batch([("k1", first, 1)]), opts("insert"))
    before = _tree(tmp_path)
    with pytest.raises(PartitionPathError, match="inside partition .*already in the table.*urlencode=true"):
        write_arrow(str(path), batch([("k2", second, 1)]), opts("insert"))
    assert _tree(tmp_path) == before
    assert by_key(hoodie.read_table(str(path))) == {"k1": (first, 1)} == by_key(read_hudi_rs(str(path)))
    # Siblings at the same depth are fine.
    write_arrow(str(path), batch([("k3", first + "_", 1)]), opts("insert"))
    assert by_key(read_hudi_rs(str(path))) == {"k1": (first, 1), "k3": (first + "_", 1)}


def test_partition_naming_option_contradicting_the_table_is_refused(tmp_path: Path) -> None:
    """One table, one folder naming: as in Java Hudi, a write option that contradicts the table's
    hive-style or url-encoding setting is refused (mixed namings made pruned reads drop rows)."""
    from hoodie.errors import WriteError

    path = str(tmp_path / "t")
    write_arrow(path, batch([("k1", "a/b", 1)]), opts("insert"))
    for key in ("hoodie.datasource.write.partitionpath.urlencode", "hoodie.datasource.write.hive_style_partitioning"):
        before = _tree(tmp_path)
        with pytest.raises(WriteError, match=f"{key}='true' but the table has {key}='false'"):
            write_arrow(path, batch([("k2", "a/b", 1)]), opts("insert", **{key: "true"}))
        assert _tree(tmp_path) == before
        write_arrow(path, batch([("k3", "c", 1)]), opts("upsert", **{key: "false"}))  # agreeing is fine
    assert by_key(hoodie.read_table(path)) == {"k1": ("a/b", 1), "k3": ("c", 1)}


def test_partition_values_behave_the_same_on_s3_and_locally(moto_s3: dict, tmp_path: Path) -> None:
    """On S3, '.' turned an upsert into a second row, and 'a//b', 'a/' failed halfway with
    ``ArrowInvalid: Empty path component`` while local storage accepted them. Now every value gets
    one behaviour on both: the same refusal before anything is written, or the same rows back."""
    from hoodie.format.keys.paths import PartitionPathError

    refused = [".", "a//b", "a/", "/a", "..", "a\x00b", "x" * 256]
    accepted = [".NET", "a\\b", "ü/ß", "x" * 255, "a b", "%2F"]
    for i, (base, so) in enumerate(((f"s3://hoodie-test/pv{tmp_path.name}", moto_s3),
                                    (str(tmp_path / "local"), None))):
        messages = []
        for v in refused:
            with pytest.raises(PartitionPathError) as e:
                write_arrow(base, batch([("k", v, 1)]), opts("insert"), storage_options=so)
            messages.append(str(e.value))
            assert not Storage(base, so).exists(""), f"{v!r} left files behind"
        if i == 0:
            s3_messages = messages
        else:
            assert messages == s3_messages
        rows = [(f"k{j}", v, 1) for j, v in enumerate(accepted)]
        write_arrow(base, batch(rows), opts("insert"), storage_options=so)
        write_arrow(base, batch([(k, v, 2) for k, v, _ in rows]), opts("upsert"), storage_options=so)
        got = by_key(hoodie.read_table(base, storage_options=so))
        assert got == {k: (v, 2) for k, v, _ in rows}
        for v in refused[:3]:  # refused on an existing table too, which stays as it was
            with pytest.raises(PartitionPathError):
                write_arrow(base, batch([("k0", v, 3)]), opts("upsert"), storage_options=so)
        assert by_key(hoodie.read_table(base, storage_options=so)) == got
    assert by_key(read_hudi_rs(str(tmp_path / "local"))) == got
