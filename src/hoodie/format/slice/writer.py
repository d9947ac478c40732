"""Write primitives: base files, log files, meta columns, write stats and commits.

These are the building blocks the Spark engine runs on executors (one file group per task) and on
the driver (commit). Everything here writes new files only: base files and log files get fresh
names, timeline files are created with create-only semantics.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.format.timeline import instant as I
from hoodie.format.file_group import naming as N
from hoodie.format.phases import phase
from hoodie.format.slice.bloom import BloomFilter, BloomSpec, reusable_footer
from hoodie.format.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, WriteStat
from hoodie.format.slice.eventtime import DEFAULT_UNIT, min_max_millis
from hoodie.format.timeline.instant import Instant, State
from hoodie.format.storage import Storage
from hoodie.format.table import META_COLUMNS, HoodieTable, write_partition_metadata
from hoodie.format.timeline import active as T
from hoodie.format.log import logformat as L

META_AVRO_FIELDS = [{"name": c, "type": ["null", "string"], "default": None} for c in META_COLUMNS]
DEFAULT_PARQUET_CODEC = "snappy"
# Hudi's hoodie.parquet.compression.codec values, by the name pyarrow knows them by.
PARQUET_CODECS = {"snappy": "snappy", "gzip": "gzip", "zstd": "zstd", "lz4": "lz4", "brotli": "brotli",
                  "uncompressed": "none", "none": "none"}


def parquet_codec(value: Optional[str]) -> str:
    """pyarrow's name for a ``hoodie.parquet.compression.codec`` value (default snappy).

    Checked when options are parsed: pyarrow would only fail once the first base file is written,
    with an instant already started. Raises ValueError naming the key.
    """
    v = (value or DEFAULT_PARQUET_CODEC).strip().lower()
    if v not in PARQUET_CODECS:
        why = " (Arrow has no LZO codec)" if v == "lzo" else ""
        raise ValueError(f"hoodie.parquet.compression.codec={value!r} is not supported{why}; use one of "
                         f"{', '.join(sorted(PARQUET_CODECS))}")
    return PARQUET_CODECS[v]


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def avro_schema_with_meta(avro_schema: dict) -> dict:
    """The writer schema of log blocks: the 5 meta fields first, then the table's fields."""
    fields = [f for f in avro_schema.get("fields", []) if f.get("name") not in META_COLUMNS]
    out = dict(avro_schema)
    out["fields"] = META_AVRO_FIELDS + fields
    return out


def add_meta_columns(data: pa.Table, *, instant: str, record_keys: pa.Array,
                     partition_paths: Union[pa.Array, str], file_name: str,
                     task_partition_id: int = 0, seqno_start: int = 0) -> pa.Table:
    """Prepend the 5 meta columns as Hudi fills them.

    ``_hoodie_commit_seqno`` is ``<instant>_<taskPartitionId>_<index>`` counting from
    ``seqno_start``; ``_hoodie_file_name`` is the base file name in base files and the file id in
    log records (what Hudi 0.14/0.15 writes).
    """
    n = data.num_rows
    if len(record_keys) != n:
        raise ValueError(f"{len(record_keys)} record keys for {n} rows")
    idx = pa.array(np.arange(seqno_start, seqno_start + n, dtype=np.int64)).cast(pa.string())
    seqno = pc.binary_join_element_wise(f"{instant}_{task_partition_id}", idx, "_")
    parts = (
        pa.repeat(pa.scalar(partition_paths, pa.string()), n)
        if isinstance(partition_paths, str) else partition_paths.cast(pa.string())
    )
    meta = {
        "_hoodie_commit_time": pa.repeat(pa.scalar(instant, pa.string()), n),
        "_hoodie_commit_seqno": seqno,
        "_hoodie_record_key": record_keys.cast(pa.string()),
        "_hoodie_partition_path": parts,
        "_hoodie_file_name": pa.repeat(pa.scalar(file_name, pa.string()), n),
    }
    body = data.drop_columns([c for c in META_COLUMNS if c in data.column_names])
    cols = list(meta.values()) + [body.column(i) for i in range(body.num_columns)]
    names = list(meta.keys()) + body.column_names
    return pa.Table.from_arrays(cols, names=names)


def _key_min_max(keys: pa.ChunkedArray) -> tuple[Optional[str], Optional[str]]:
    if len(keys) == 0:
        return None, None
    mm = pc.min_max(keys)
    return mm["min"].as_py(), mm["max"].as_py()


def _event_range(records: pa.Table, event_time_field: Optional[str],
                 unit: str = DEFAULT_UNIT) -> Optional[tuple[int, int]]:
    if not event_time_field:
        return None
    if event_time_field not in records.column_names:
        raise ValueError(
            f"event time field {event_time_field!r} (hoodie.payload.event.time.field) is not a "
            f"column of the data (columns: {', '.join(records.column_names)})"
        )
    return min_max_millis(records.column(event_time_field), event_time_field, unit)


MARKER_DIR = ".hoodie/.temp"


def create_marker(storage: Storage, instant: str, partition: str, file_name: str, io_type: str) -> None:
    """Create ``.hoodie/.temp/<instant>/<partition>/<file>.marker.<IOTYPE>`` before writing a data
    file, so a rollback of a failed write finds exactly the files it created (Hudi's direct markers)."""
    rel = f"{MARKER_DIR}/{instant}/{_rel(partition, file_name)}.marker.{io_type}"
    try:
        storage.create_new(rel, b"")
    except FileExistsError:
        pass  # a retried task attempt re-creates the same marker


def marker_files(storage: Storage, instant: str) -> list[tuple[str, str]]:
    """(data file path relative to the base path, io type) for every marker of an instant."""
    root = f"{MARKER_DIR}/{instant}"
    out = []
    for st in storage.walk_files(root):
        rel = st.path[len(root) + 1:]
        path, _, io_type = rel.rpartition(".marker.")
        if path:
            out.append((path, io_type))
    return sorted(out)


def delete_markers(storage: Storage, instant: str) -> None:
    """Remove an instant's marker folder (after commit or rollback)."""
    storage.delete_dir(f"{MARKER_DIR}/{instant}")


def write_parquet(storage: Storage, rel_path: str, records: pa.Table, *,
                  codec: str = DEFAULT_PARQUET_CODEC, extra_metadata: Optional[dict[str, str]] = None,
                  row_group_bytes: int = 128 * 1024 * 1024) -> int:
    """Write a Parquet file the way Hudi readers expect (int64 timestamps, standard lists).

    ``extra_metadata`` goes into the Parquet footer's key/value metadata only, where Java Hudi
    keeps its record-key range and bloom filter; putting it into the Arrow schema would store it a
    second time inside pyarrow's ``ARROW:schema`` entry (a bloom filter is ~0.4 MB per row).
    """
    est_row = max(1, records.nbytes // max(1, records.num_rows)) if records.num_rows else 1
    # The sequence number and the record key differ on every row: a dictionary for them is built only to
    # be dropped once it outgrows its page (7% of the encoding time, 2% of the file, measured on the
    # benchmark's rows). Every other column starts with one, as parquet-mr's writer does.
    unique = {"_hoodie_commit_seqno", "_hoodie_record_key"}
    dictionary: bool | list[str] = [n for n in records.schema.names if n not in unique] \
        if unique & set(records.schema.names) else True
    with storage.open_output(rel_path) as sink:
        with pq.ParquetWriter(
            sink, records.schema, compression=codec, use_compliant_nested_type=True,
            coerce_timestamps="us", allow_truncated_timestamps=False, write_statistics=True,
            use_dictionary=dictionary,
        ) as writer:
            writer.write_table(records, row_group_size=max(1024, row_group_bytes // est_row))
            if extra_metadata:
                writer.add_key_value_metadata(dict(extra_metadata))
    # Durable before any commit can name it, as log files and timeline files are (Storage.create_new).
    storage.sync(rel_path)
    return storage.size(rel_path)


def write_base_file(storage: Storage, *, partition: str, file_id: str, instant: str, token: str,
                    records: pa.Table, prev_commit: str = NULL_COMMIT, num_inserts: int = 0,
                    num_updates: int = 0, num_deletes: int = 0,
                    event_time_field: Optional[str] = None,
                    codec: str = DEFAULT_PARQUET_CODEC, bloom: Optional[BloomSpec] = None,
                    event_time_unit: str = DEFAULT_UNIT,
                    same_keys_footer: Optional[Mapping[bytes, bytes]] = None) -> WriteStat:
    """Write ``<fileId>_<token>_<instant>.parquet`` holding ``records`` (meta columns included).

    The footer carries the record-key range and a bloom filter of the keys (``bloom``, Hudi's
    defaults when None), as Java Hudi writes them: its BLOOM index fails on base files without one.
    ``same_keys_footer``: the footer of the base file this one rewrites when ``records`` hold exactly
    its record keys (a copy-on-write merge of updates only); its bloom filter is copied when it is the
    one ``bloom`` would build (:func:`~hoodie.format.slice.bloom.reusable_footer`) instead of hashing
    every key again. Returns its write stat (``prevCommit`` is the previous base instant, or ``"null"``).
    """
    started = time.monotonic()
    missing = [c for c in META_COLUMNS if c not in records.column_names]
    if missing:
        raise ValueError(f"records lack meta columns {missing}; call add_meta_columns first")
    name = N.base_file_name(file_id, token, instant)
    rel = _rel(partition, name)
    with phase("markers"):
        write_partition_metadata(storage, partition, instant)
        create_marker(storage, instant, partition, name, "CREATE" if prev_commit == NULL_COMMIT else "MERGE")
    with phase("bloom"):
        kmin, kmax = _key_min_max(records.column("_hoodie_record_key"))
        spec = bloom or BloomSpec()
        extra = reusable_footer(same_keys_footer, spec, records.num_rows)
        if extra is None:
            extra = BloomFilter.build(records.column("_hoodie_record_key"), spec).footer()
    if kmin is not None:
        extra.update({"hoodie_min_record_key": kmin, "hoodie_max_record_key": kmax})
    with phase("parquet"):  # encoding and writing are one pass in pyarrow's writer
        size = write_parquet(storage, rel, records, codec=codec, extra_metadata=extra)
    ev = _event_range(records, event_time_field, event_time_unit)
    elapsed = int((time.monotonic() - started) * 1000)
    return WriteStat(
        file_id=file_id, path=rel, partition_path=partition, prev_commit=prev_commit,
        num_writes=records.num_rows, num_deletes=num_deletes, num_update_writes=num_updates,
        num_inserts=num_inserts, total_write_bytes=size, file_size_in_bytes=size,
        min_event_time=ev[0] if ev else None, max_event_time=ev[1] if ev else None,
        runtime_stats={"totalScanTime": 0, "totalUpsertTime": elapsed if prev_commit != NULL_COMMIT else 0,
                       "totalCreateTime": elapsed if prev_commit == NULL_COMMIT else 0},
    )


def next_log_version(storage: Storage, partition: str, file_id: str, base_instant: str,
                     listing: Optional[Iterable[str]] = None, reserved_up_to: int = 0) -> int:
    """The next log version for a slice: above every existing log file of the slice and above any
    versions reserved by a pending compaction plan (partial-compaction links)."""
    names = listing if listing is not None else (s.name for s in storage.list_dir(partition))
    top = reserved_up_to
    for name in names:
        if not N.is_log_file(name):
            continue
        lp = N.parse_log_file(name)
        if lp.file_id == file_id and lp.base_instant == base_instant:
            top = max(top, lp.version)
    return top + 1


@dataclass
class LogWrite:
    """What one log file write contains: upserted rows and/or deletes."""

    data: Optional[pa.Table] = None  # with meta columns
    deletes: Optional[pa.Table] = None  # record_key, partition_path[, ordering_value][, event_time]


def write_log_file(storage: Storage, *, partition: str, file_id: str, base_instant: str,
                   instant: str, token: str, write: LogWrite, avro_schema: dict,
                   base_file_name: str = "", slice_log_files: Sequence[str] = (),
                   version: Optional[int] = None, block_format: str = "avro",
                   event_time_field: Optional[str] = None, num_inserts: int = 0,
                   reserved_up_to: int = 0, event_time_unit: str = DEFAULT_UNIT) -> WriteStat:
    """Write a new log file for a slice with one data block and/or one delete block.

    ``avro_schema`` is the table schema without meta fields; the block header carries it with the
    meta fields, plus min/max event time when ``event_time_field`` is set (numbers read in
    ``event_time_unit``; see docs/log-block-event-time.md). The file is created, never appended to.
    """
    started = time.monotonic()
    with phase("markers"):
        if version is None:
            version = next_log_version(storage, partition, file_id, base_instant, reserved_up_to=reserved_up_to)
        name = N.log_file_name(file_id, base_instant, version, token)
        rel = _rel(partition, name)
        create_marker(storage, instant, partition, name, "APPEND")
    writer_schema = avro_schema_with_meta(avro_schema)
    blocks: list[bytes] = []
    n_data = 0
    n_del = 0
    ev_all: list[tuple[int, int]] = []
    ev_unknown = False  # a block without a known range makes the file's range unknown
    if write.data is not None and write.data.num_rows:
        ev = _event_range(write.data, event_time_field, event_time_unit)
        if ev:
            ev_all.append(ev)
        elif event_time_field:
            ev_unknown = True
        if block_format == "parquet":
            with phase("encode"):
                blocks.append(L.encode_parquet_data_block(write.data, instant=instant, avro_schema=writer_schema,
                                                          event_time_range=ev))
        elif block_format == "avro":
            with phase("encode"):
                blocks.append(L.encode_avro_data_block(write.data, instant=instant, avro_schema=writer_schema,
                                                       event_time_range=ev))
        else:
            raise ValueError(f"log block format {block_format!r} is not 'avro' or 'parquet' "
                             "(hoodie.logfile.data.block.format)")
        n_data = write.data.num_rows
    if write.deletes is not None and write.deletes.num_rows:
        ev = None
        if "event_time" in write.deletes.column_names:
            ev = min_max_millis(write.deletes.column("event_time"), event_time_field or "event_time", event_time_unit)
            if ev is not None and write.deletes.column("event_time").null_count:
                ev = None  # some deletes have unknown event time: the block's range is unknown
        if ev:
            ev_all.append(ev)
        elif event_time_field:
            ev_unknown = True
        keys = write.deletes.select([c for c in ("record_key", "partition_path", "ordering_value")
                                     if c in write.deletes.column_names])
        with phase("encode"):
            blocks.append(L.encode_delete_block(keys, instant=instant, avro_schema=writer_schema,
                                                event_time_range=ev))
        n_del = write.deletes.num_rows
    if not blocks:
        raise ValueError("a log write needs data rows or deletes")
    with phase("io"):
        size = L.write_log_file(storage, rel, blocks)
    elapsed = int((time.monotonic() - started) * 1000)
    ev_min = min(e[0] for e in ev_all) if ev_all and not ev_unknown else None
    ev_max = max(e[1] for e in ev_all) if ev_all and not ev_unknown else None
    logs = sorted(set(slice_log_files) | {name})
    return WriteStat(
        file_id=file_id, path=rel, partition_path=partition, prev_commit=base_instant,
        num_writes=n_data + n_del, num_deletes=n_del, num_update_writes=n_data - num_inserts,
        num_inserts=num_inserts, total_write_bytes=size, file_size_in_bytes=size,
        total_log_blocks=len(blocks), min_event_time=ev_min, max_event_time=ev_max,
        runtime_stats={"totalScanTime": 0, "totalUpsertTime": elapsed, "totalCreateTime": 0},
        is_delta=True, log_version=version, log_offset=0, base_file=base_file_name, log_files=logs,
    )


# -- commits -------------------------------------------------------------------------------------

def inflight_metadata(operation_type: str, inserts_per_partition: dict[str, int],
                      updates_per_file: dict[tuple[str, str], tuple[str, int]]) -> CommitMetadata:
    """The inflight JSON Hudi writes from its workload profile (reference §3.3)."""
    meta = CommitMetadata(operation_type=operation_type)
    for p, n in inserts_per_partition.items():
        meta.add_write_stat(p, WriteStat(file_id="", path=None, partition_path=None, num_inserts=n))
    for (p, fid), (prev, n) in updates_per_file.items():
        meta.add_write_stat(p, WriteStat(file_id=fid, path=None, partition_path=None, prev_commit=prev,
                                         num_update_writes=n))
    return meta


def start_commit(table: HoodieTable, action: str, instant: Optional[str] = None,
                 operation_type: str = "UNKNOWN", inflight: Optional[CommitMetadata] = None,
                 requested_content: bytes = b"") -> Instant:
    """Create ``<t>.<action>.requested`` then the inflight file; returns the inflight instant."""
    ts = instant or table.new_instant_time()
    req = T.create_requested(table.storage, ts, action, requested_content)
    meta = inflight or CommitMetadata(operation_type=operation_type)
    inf = T.transition_to_inflight(table.storage, req, meta)
    table.wrote(req, inf)
    return inf


def complete_commit(table: HoodieTable, inflight: Instant, metadata: CommitMetadata) -> Instant:
    """Write the completed instant file, remove the markers and add the completed instant to the table's
    snapshot: the format's primitive for tables without a metadata table (test fixtures); hoodie's
    actions commit through :func:`hoodie.services.commit.commit`."""
    done = T.transition_to_complete(table.storage, inflight, metadata)
    delete_markers(table.storage, inflight.timestamp)
    table.wrote(done)
    return done


def commit_metadata_for(stats: Iterable[WriteStat], *, avro_schema: dict, operation_type: str,
                        compacted: bool = False, extra: Optional[dict[str, str]] = None,
                        replaced: Optional[dict[str, list[str]]] = None) -> CommitMetadata:
    """Commit metadata from write stats, with the table schema in ``extraMetadata.schema``."""
    meta = CommitMetadata(compacted=compacted, operation_type=operation_type,
                          partition_to_replace_file_ids=replaced)
    for s in stats:
        meta.add_write_stat(s.partition_path or "", s)
    meta.extra_metadata["schema"] = json.dumps(avro_schema, separators=(",", ":"))
    for k, v in (extra or {}).items():
        meta.extra_metadata[k] = v
    return meta


def write_action_for(table: HoodieTable) -> str:
    """``commit`` for COW tables, ``deltacommit`` for MOR tables."""
    return I.DELTA_COMMIT if table.is_mor else I.COMMIT


__all__ = [
    "add_meta_columns", "write_base_file", "write_log_file", "LogWrite", "next_log_version",
    "start_commit", "complete_commit", "commit_metadata_for", "inflight_metadata", "write_parquet",
    "avro_schema_with_meta", "write_action_for", "State", "create_marker", "marker_files", "delete_markers",
]
