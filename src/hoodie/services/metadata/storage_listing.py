"""What storage holds: the data files of every partition, as the metadata table's bootstrap and its
validation list them (a progress bar at a terminal: :mod:`hoodie.progress`)."""

from __future__ import annotations

from typing import Optional

from hoodie import progress
from hoodie.format.file_group import naming as N
from hoodie.format.file_group.fsview import list_partitions
from hoodie.format.storage import Storage


def storage_listing(storage: Storage, upto: Optional[str] = None) -> dict[str, dict[str, int]]:
    """partition -> {data file name: size} on storage: base and log files whose instant (a log
    file's base instant) is at or before ``upto`` (Java's bootstrap filter; every file when None)."""
    out: dict[str, dict[str, int]] = {}
    parts = list_partitions(storage)
    with progress.task(f"listing {len(parts)} partition(s) of {storage.uri()}", len(parts)) as bar:
        for part in parts:
            out[part] = _partition_files(storage, part, upto)
            bar.advance()
    return out


def _partition_files(storage: Storage, part: str, upto: Optional[str]) -> dict[str, int]:
    files: dict[str, int] = {}
    for s in storage.list_dir(part):
        inst = None if s.is_dir else N.data_file_instant(s.name)
        if inst is None:
            continue
        if upto is None or inst[:17] <= upto[:17]:
            files[s.name] = s.size
    return files
