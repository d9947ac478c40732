"""``hoodie metadata show|validate|create|drop|create-index``: the table's metadata table, no JVM
(docs/metadata-table.md)."""

from __future__ import annotations

import argparse
import json

from hoodie.interfaces.cli_ttl import parse_sets


def _table(args: argparse.Namespace, read_only: bool = False):
    from hoodie.format.table import HoodieTable

    # show and validate read (also Hudi 1.x tables); create and drop write (table version 6 only).
    return HoodieTable(args.base_path, read_only=read_only)


def _show(args: argparse.Namespace) -> int:
    from hoodie.services.metadata import metadata_status

    st = metadata_status(_table(args, read_only=True))
    if args.json:
        print(json.dumps(st.to_dict(), indent=2))
        return 0
    print(f"{args.base_path}: metadata table {st.state}")
    if st.partitions:
        print(f"  partitions:      {', '.join(st.partitions)}")
    if st.state == "ready":
        lag = "in step" if st.latest_instant and st.data_latest_instant and \
            st.latest_instant[:17] >= st.data_latest_instant[:17] else "behind"
        print(f"  latest instant:  {st.latest_instant} (data table: {st.data_latest_instant}; {lag})")
        print(f"  deltacommits since its last compaction: {st.deltacommits_since_compaction}")
        print(f"  lists {st.data_files} file(s) in {st.data_partitions} partition(s)")
    elif st.state == "none":
        print("  readers list storage; create one with: hoodie metadata create " + args.base_path)
    else:
        print("  the next commit drops and rebuilds it; or now: hoodie metadata create " + args.base_path)
    return 0


def _validate(args: argparse.Namespace) -> int:
    from hoodie.services.metadata import validate_metadata_table

    res = validate_metadata_table(_table(args, read_only=True))
    if args.json:
        print(json.dumps(res.to_dict(), indent=2))
        return 0 if res.equal else 1
    if res.equal:
        print(f"{args.base_path}: the metadata table lists exactly the files on storage")
        return 0
    if res.error:
        print(f"{args.base_path}: the metadata table cannot be read: {res.error}")
        return 1
    print(f"{args.base_path}: the metadata table differs from storage")
    for label, items in (("partitions on storage only", res.missing_partitions),
                         ("partitions in the metadata table only", res.extra_partitions),
                         ("files on storage only", res.missing_files),
                         ("files in the metadata table only", res.extra_files),
                         ("sizes differ", res.size_mismatches),
                         ("column statistics differ from the files' own", res.column_stats_mismatches),
                         ("partition statistics differ from the files' own", res.partition_stats_mismatches),
                         ("the record index differs from a key scan", res.record_index_mismatches)):
        if items:
            print(f"  {label} ({len(items)}):")
            for x in items[:20]:
                print(f"    {x}")
            if len(items) > 20:
                print(f"    ... and {len(items) - 20} more")
    print(f"  fix: hoodie metadata create {args.base_path} (rebuilds it from a listing)")
    return 1


def _create(args: argparse.Namespace) -> int:
    from hoodie.services.metadata import create_metadata_table, metadata_status

    table = _table(args)
    init = create_metadata_table(table, parse_sets(args.set))
    st = metadata_status(table.latest())
    print(f"created the metadata table of {args.base_path} at {init}: {st.data_files} file(s) in "
          f"{st.data_partitions} partition(s); every commit now updates it")
    return 0


def _drop(args: argparse.Namespace) -> int:
    from hoodie.services.metadata import drop_table_metadata

    dropped = drop_table_metadata(_table(args), parse_sets(args.set))
    print(f"dropped the metadata table of {args.base_path}; readers list storage" if dropped else
          f"{args.base_path} has no metadata table; nothing to drop")
    return 0


def _create_index(args: argparse.Namespace) -> int:
    from hoodie.services.metadata import create_index

    init = create_index(_table(args), args.index, parse_sets(args.set))
    print(f"built {args.index} in the metadata table of {args.base_path} at {init}; every commit now updates it")
    return 0


def register(sub: argparse._SubParsersAction, show_sub: argparse._SubParsersAction) -> None:
    """Add ``hoodie metadata show|validate|create|drop``."""
    p = sub.add_parser("metadata", help="the table's metadata table: state, validation against storage, "
                                        "create, drop (no JVM)")
    msub = p.add_subparsers(dest="metadata_cmd", required=True)
    for name, func, text in (
            ("show", _show, "state, partitions, latest instant and lag behind the data timeline"),
            ("validate", _validate, "compare its listing with storage: equal, or the differences (exit 1)"),
            ("create", _create, "build it from a listing of the table's files (replacing an existing one)"),
            ("drop", _drop, "delete it and clear hoodie.table.metadata.partitions (readers list storage)")):
        c = msub.add_parser(name, help=text, epilog=f"example: hoodie metadata {name} /data/t")
        c.add_argument("base_path")
        if name in ("show", "validate"):
            c.add_argument("--json", action="store_true")
        else:
            c.add_argument("--set", action="append", metavar="KEY=VALUE", help="a lock option (hoodie.write.lock.*)")
        c.set_defaults(func=func)
    c = msub.add_parser("create-index", help="build an index partition (column_stats, partition_stats, record_index) "
                        "from the table's committed files, replacing one the table has",
                        epilog="example: hoodie metadata create-index /data/t --index record_index")
    c.add_argument("base_path")
    c.add_argument("--index", required=True, choices=["column_stats", "partition_stats", "record_index"])
    c.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a lock or index option (hoodie.write.lock.*, hoodie.metadata.record.index.min.filegroup.count...)")
    c.set_defaults(func=_create_index)
