"""Hudi's metadata table, read side: the ``files`` partition as the table's partition and file listing.

``MetadataTable(table).partitions()`` and ``.files(partition)`` read and validate the metadata table
the way Hudi does; :func:`file_system_view` / :func:`metadata_listing` plug it into the file-system
view when the table's properties and the read option ``hoodie.metadata.enable`` say so. Rules and
sources: ``docs/metadata-table.md``.
"""

from hoodie.format.metadata.errors import MetadataTableError
from hoodie.format.metadata.listing import (
    MetadataFileListing, file_system_view, metadata_listing, metadata_read_enabled,
)
from hoodie.format.metadata.records import FileInfo, FilesRecord, combine, fold, merge_into
from hoodie.format.metadata.table import (
    ENABLE_KEY, FilesSlice, MetadataTable, MetadataTableNotFoundError, files_partition_available,
)

__all__ = [
    "MetadataTable", "MetadataTableError", "MetadataTableNotFoundError", "MetadataFileListing", "FilesSlice",
    "FileInfo", "FilesRecord", "combine", "merge_into", "fold",
    "file_system_view", "metadata_listing", "metadata_read_enabled", "files_partition_available", "ENABLE_KEY",
]
