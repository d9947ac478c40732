"""The error the metadata-table reader raises."""

from __future__ import annotations

from hoodie.errors import HoodieError

#: What every metadata-table error tells the user to do when they need a listing now.
LIST_THROUGH_STORAGE = ("to list the table through storage instead, read with hoodie.metadata.enable=false "
                        "(the default for table-version-6 reads)")


class MetadataTableError(HoodieError, ValueError):
    """The metadata table cannot give a trustworthy listing; the message names the file or instant,
    the problem and the fix (usually: read with ``hoodie.metadata.enable=false``, which lists storage)."""
