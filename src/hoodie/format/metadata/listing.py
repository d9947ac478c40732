"""Listing a data table through its metadata table: the opt-in for the file-system view.

A read lists through the metadata table (MDT) when both hold (as Java's Spark file index decides,
``HoodieFileIndex``: ``hoodie.metadata.enable`` && ``isFilesPartitionAvailable``):

* the data table's ``hoodie.table.metadata.partitions`` names ``files``, and
* the read option ``hoodie.metadata.enable`` is true. Its default follows the readers of each table
  version: **false for table version 6** (Hudi 0.14/0.15 ``HoodieMetadataConfig.
  DEFAULT_METADATA_ENABLE_FOR_READERS = false``: Spark reads list storage unless asked), true for
  versions 8 and 9 (Hudi 1.x readers and hudi-rs list through the MDT).

When the MDT folder itself is missing, Java logs a warning and lists storage
(``HoodieBackedTableMetadata.initIfNeeded`` catches ``TableNotFoundException``); so does this hook,
with a warning. Every other problem raises :class:`~hoodie.format.metadata.MetadataTableError`.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Optional

from hoodie.configs import BOOLEAN
from hoodie.format.metadata.table import (
    ENABLE_KEY, MetadataTable, MetadataTableNotFoundError, files_partition_available,
)
from hoodie.format.storage import FileStatus
from hoodie.format.file_group.fsview import FileSystemView


class MetadataFileListing:
    """Partitions and files from the MDT, in the shape :class:`~hoodie.format.file_group.fsview.FileSystemView`
    gets them from storage (``FileStatus`` with name, path relative to the base path, and size)."""

    def __init__(self, mdt: MetadataTable) -> None:
        self.mdt = mdt

    def partitions(self) -> list[str]:
        """Partition paths (``""`` for a non-partitioned table)."""
        return self.mdt.partitions()

    def list_files(self, partition: str) -> list[FileStatus]:
        """The files of one partition."""
        return [FileStatus(name=n, path=f"{partition}/{n}" if partition else n, size=size, is_dir=False)
                for n, size in self.mdt.files(partition).items()]


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip()
    # Blank is unset (the version's default applies); otherwise hoodie's one boolean rule.
    return False if text == "" else BOOLEAN.read(ENABLE_KEY, text)


def metadata_read_enabled(props: Mapping[str, str], options: Optional[Mapping[str, Any]] = None) -> bool:
    """Whether a read should list through the MDT (see the module doc for the rule and defaults)."""
    if not files_partition_available(dict(props)):
        return False
    opts = options or {}
    if ENABLE_KEY in opts and opts[ENABLE_KEY] is not None:
        return _truthy(opts[ENABLE_KEY])
    return int(props.get("hoodie.table.version") or "6") >= 8


def metadata_listing(table: Any, options: Optional[Mapping[str, Any]] = None) -> Optional[MetadataFileListing]:
    """The MDT listing of ``table`` (a :class:`~hoodie.format.table.HoodieTable`) when reads should use
    it, else None (list storage). A missing MDT folder warns and returns None, as Java does."""
    if not metadata_read_enabled(table.props, options):
        return None
    mdt = MetadataTable(table)
    try:
        mdt.props
    except MetadataTableNotFoundError as e:
        warnings.warn(f"{e}; listing storage instead", stacklevel=2)
        return None
    return MetadataFileListing(mdt)


def file_system_view(table: Any, options: Optional[Mapping[str, Any]] = None, timeline: Any = None) -> Any:
    """A :class:`~hoodie.format.file_group.fsview.FileSystemView` of ``table`` that lists through the MDT when
    :func:`metadata_read_enabled` (else through storage)."""
    return FileSystemView(table.storage, timeline if timeline is not None else table.timeline,
                          file_listing=metadata_listing(table, options))


__all__ = ["MetadataFileListing", "metadata_read_enabled", "metadata_listing", "file_system_view"]
