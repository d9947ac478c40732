"""Partition paths: reading partition column values back from a path, and what a path may not be.
"""

from __future__ import annotations

from typing import Optional, Sequence
import pyarrow as pa
import pyarrow.compute as pc
from hoodie.errors import HoodieError
from hoodie.format.keys.common import (
    DEFAULT_PARTITION_PATH, HIVE_STYLE_PARTITIONING, PARTITION_PATH_SEPARATOR, URL_ENCODE_PARTITIONING,
    _as_array,
)
from hoodie.format.keys.generators import (
    ComplexKeyGenerator, CustomKeyGenerator, KeyGenerator, SimpleKeyGenerator, _column,
)
from hoodie.format.keys.java_text import escape_path_name, unescape_path_name


# ---------------------------------------------------------------------------------------------
# Reading: partition path -> partition column values
# ---------------------------------------------------------------------------------------------

def partition_values(partition_path: str, fields: Sequence[str], hive_style: bool,
                     url_encoded: bool = False) -> dict[str, Optional[str]]:
    """The partition column values encoded in a relative partition path.

    Strips ``field=`` prefixes (hive style) and decodes ``%XX`` escapes when the table was
    written with ``hoodie.datasource.write.partitionpath.urlencode=true``. The default
    partition ``__HIVE_DEFAULT_PARTITION__`` maps to None (the value was null or empty).
    A single field takes the whole path, so timestamp formats such as ``yyyy/MM/dd`` keep
    their slashes; several fields need one path segment each.
    """
    fields = list(fields)
    if not fields:
        return {}
    if len(fields) == 1:
        segments = [partition_path]
    else:
        segments = partition_path.split(PARTITION_PATH_SEPARATOR)
        if len(segments) != len(fields):
            raise ValueError(
                f"partition path {partition_path!r} has {len(segments)} segment(s) but the table has "
                f"{len(fields)} partition field(s) {fields}"
            )
    out: dict[str, Optional[str]] = {}
    for name, seg in zip(fields, segments):
        if hive_style:
            prefix = name + "="
            if not seg.startswith(prefix):
                raise ValueError(f"partition path {partition_path!r}: expected segment {prefix}<value> for "
                                 f"field {name!r}, got {seg!r} (is the table hive-style partitioned?)")
            seg = seg[len(prefix):]
        if seg == DEFAULT_PARTITION_PATH:
            out[name] = None
            continue
        out[name] = unescape_path_name(seg) if url_encoded else seg
    return out


# ---------------------------------------------------------------------------------------------
# Partition paths as folders: what a partition path may not be
# ---------------------------------------------------------------------------------------------

# Local file systems (ext4, xfs, APFS) allow at most 255 bytes per name; S3 allows longer keys.
MAX_FOLDER_NAME_BYTES = 255
_METAFOLDER = ".hoodie"  # hoodie.format.timeline.active.METAFOLDER
_PARTITION_METAFILE = ".hoodie_partition_metadata"  # hoodie.format.file_group.naming.PARTITION_METAFILE


class PartitionPathError(HoodieError, ValueError):
    """A partition path that cannot be a partition folder of the table. The message names the
    value, its partition field and the fix; it is raised before anything is written."""


def partition_path_problem(path: str) -> Optional[str]:
    """Why the relative partition path ``path`` cannot be a partition folder, or None if it can.

    A partition path is a folder below the table base path, one folder per ``/``-separated
    segment. Refused, because local storage and S3 would store them differently or the files
    would land outside the table or in hoodie's own folders: an empty segment (a leading or
    trailing ``/``, or ``//``), ``.`` and ``..``, ``.hoodie``, names starting with
    ``.hoodie_partition_metadata``, NUL, and names longer than 255 bytes. Other names, those
    starting with a dot included (``.NET``), are ordinary partitions.
    """
    if "\x00" in path:
        return "a NUL character, which local file systems refuse in a name (S3 keeps it)"
    for seg in path.split("/"):
        if not seg:
            return ("an empty folder name (a '/' at the start or the end, or '//'): S3 refuses it and local "
                    "storage merges it with its neighbour, so the value would not read back as written")
        if seg == "..":
            return "the folder name '..', which would put files outside the table base path"
        if seg == ".":
            return ("the folder name '.', which local storage reads as the folder above it and S3 as a folder "
                    "of its own, so one record would live in two partitions")
        if seg == _METAFOLDER:
            return ("the folder name '.hoodie', the table's metadata folder (Hudi's file listing skips folders of "
                    "that name at any depth, so Java Hudi would never read the rows)")
        if seg.startswith(_PARTITION_METAFILE):
            return f"a folder name starting with {_PARTITION_METAFILE!r}, the name of Hudi's partition marker file"
        size = len(seg.encode("utf-8"))
        if size > MAX_FOLDER_NAME_BYTES:
            return (f"a folder name of {size} bytes; local file systems allow at most {MAX_FOLDER_NAME_BYTES} "
                    f"bytes per name (S3 takes longer ones)")
    return None


def _short(value: object, limit: int = 80) -> str:
    """``repr`` of a value for a message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}...' ({len(str(value))} characters)"


def value_partition_fields(kg: KeyGenerator) -> list[str]:
    """The partition fields whose path segment is the field's value rendered as a string: every
    field of the Simple and Complex key generators, the SIMPLE fields of the Custom one. (The
    segment of a timestamp field is a formatted date, not the value.)"""
    if isinstance(kg, CustomKeyGenerator):
        return [f for f, kind in kg.partition_specs if kind == "SIMPLE"]
    if isinstance(kg, (SimpleKeyGenerator, ComplexKeyGenerator)):
        return list(kg.partition_path_fields)
    return []


def _value_segment(value: Optional[str], name: str, url_encode: bool, hive_style: bool) -> str:
    """The path segment of one rendered value, as ``KeyGenerator._simple_partition`` builds it."""
    seg = DEFAULT_PARTITION_PATH if not value else (escape_path_name(value) if url_encode else value)
    return f"{name}={seg}" if hive_style else seg


def check_partition_paths(kg: KeyGenerator, data: pa.Table, paths: pa.Array | pa.ChunkedArray) -> None:
    """Refuse a batch if any row's partition path (``paths``, as ``kg`` computed it from
    ``data``) cannot be a partition folder (:func:`partition_path_problem`).

    Raises:
        PartitionPathError: naming the first bad path, the partition field value(s) it comes
            from and the fix: ``hoodie.datasource.write.partitionpath.urlencode=true`` or hive-style
            partitioning when either would make the value a safe folder name, else changing it.
    """
    if not kg.partition_path_fields or len(paths) == 0:
        return
    for path in pc.unique(paths).to_pylist():
        problem = partition_path_problem(path)
        if problem is not None:
            raise PartitionPathError(_explain_bad_path(kg, data, _as_array(paths), path, problem))


def _explain_bad_path(kg: KeyGenerator, data: pa.Table, paths: pa.Array, path: str, problem: str) -> str:
    row = data.slice(pc.index(paths, path).as_py(), 1)
    simple = value_partition_fields(kg)
    rendered = {f: kg._strings(row, f, "partition path")[0].as_py() for f in simple}
    # The culprit is the field whose own segment is bad; a timestamp field's segment is a format.
    culprits = [f for f in simple
                if partition_path_problem(_value_segment(rendered[f], f, kg.url_encode, kg.hive_style))]
    if not culprits:
        culprits = [f for f in kg.partition_path_fields if f not in simple] or list(kg.partition_path_fields)
    values = ", ".join(f"{f}={_short(_column(row, f, 'partition path')[0].as_py())}" for f in culprits)
    msg = (f"partition path {_short(path)} has {problem}. It comes from partition field value {values}. "
           f"Nothing was committed. ")
    if all(f in simple for f in culprits):
        for option, enc, hive in ((URL_ENCODE_PARTITIONING, True, kg.hive_style),
                                  (HIVE_STYLE_PARTITIONING, kg.url_encode, True)):
            if (enc, hive) == (kg.url_encode, kg.hive_style):
                continue
            fixed = [_value_segment(rendered[f], f, enc, hive) for f in culprits]
            if not any(partition_path_problem(s) for s in fixed):
                how = ("it writes '/' as %2F and control characters as %XX" if enc != kg.url_encode
                       else "it writes field=value folders")
                return msg + (f"Change the value, or create the table with {option}=true ({how}; the folder "
                              f"becomes {_short('/'.join(fixed))}). The setting is fixed when the table is created.")
    return msg + "Change the value (map it to a valid folder name in the data before the write)."
