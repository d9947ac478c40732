"""The one exception the HFile reader and writer raise for bad files."""

from __future__ import annotations
from hoodie.errors import HoodieError


class HFileError(HoodieError, ValueError):
    """An HFile is truncated, corrupt or uses something this package does not support.

    ``path`` names the file (``None`` for anonymous bytes) and ``offset`` the block the problem
    was found in, when there is one; both are part of the message.
    """

    def __init__(self, message: str, *, path: str | None = None, offset: int | None = None) -> None:
        self.reason = message
        self.path = path
        self.offset = offset
        where = []
        if path is not None:
            where.append(f"HFile {path}")
        if offset is not None:
            where.append(f"block at offset {offset}")
        super().__init__(": ".join([*where, message]) if where else message)

    def located(self, path: str | None, offset: int | None = None) -> "HFileError":
        """This error with the file (and block offset, unless already known) filled in."""
        return HFileError(
            self.reason,
            path=self.path if self.path is not None else path,
            offset=self.offset if self.offset is not None else offset,
        )
