"""Partial compaction: which log files a plan compacts, how the remaining ones get new names under
the compaction instant, and how those names are materialized (symlink or copy).

The rules (docs/compaction.md, table-services-upstream.md §2.3):

* **Prefix rule.** Only a prefix of a slice's log files, in log order, may be compacted. The
  compacted data lands in the new base file, which every reader merges *before* all log files; a
  remaining file that sorted before a compacted one would then override newer values.
* **Reserved versions.** The remaining files r1..rk get the names
  ``.<fileId>_<C>.log.<v>_<token>`` with v = 1..k in log order (v = 2..k+1 when an event-time
  exact split reserves version 1 for the records it keeps out of the base file). Writers that
  append to the file group while the compaction is pending start above the reserved versions.
* **Sentinel.** A partial operation lists, after the compacted files, a delta file that never
  exists (``.<fileId>_<C>.log.0_0-0-0``: log versions start at 1). A stock Hudi compactor opens
  every listed delta file, fails on the sentinel and never commits, instead of silently merging only
  the compacted files and dropping the remaining ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from hoodie.format.file_group import naming as N
from hoodie.format.timeline.compaction_plan import CompactionOperation
from hoodie.format.file_group.fsview import LogFile
from hoodie.format.file_group.links import LinkedLog
from hoodie.format.storage import Storage

from hoodie.services.compaction.config import CompactionError

SENTINEL_VERSION = 0
SENTINEL_TOKEN = "0-0-0"
# Suffix of a copy in progress; it does not match Hudi's log file pattern, so no reader lists it.
COPY_TMP_SUFFIX = ".hoodie-copy-tmp"


def sentinel_name(file_id: str, instant: str) -> str:
    """The never-existing delta file name that makes stock Hudi refuse a partial operation."""
    return N.log_file_name(file_id, instant, SENTINEL_VERSION, SENTINEL_TOKEN)


def is_sentinel(name: str, file_id: str, instant: str) -> bool:
    """Whether a delta file name of an operation is its sentinel."""
    return name == sentinel_name(file_id, instant)


def prefix_closure(sorted_logs: Sequence[LogFile], selected: Iterable[LogFile]) -> tuple[list[LogFile], list[LogFile]]:
    """The shortest prefix of ``sorted_logs`` containing every selected file, and the rest.

    A strategy may select any subset; compacting exactly that subset would break the prefix rule,
    so the selection is widened, never narrowed (compacting more is always safe).
    """
    chosen = {lf.name for lf in selected}
    last = -1
    for i, lf in enumerate(sorted_logs):
        if lf.name in chosen:
            last = i
    return list(sorted_logs[: last + 1]), list(sorted_logs[last + 1:])


def link_names(file_id: str, instant: str, remaining: Sequence[LogFile], first_version: int) -> list[tuple[str, str]]:
    """``(link, target)`` name pairs for the remaining files, versions from ``first_version`` in log
    order. The link keeps its target's write token (names stay unique per version anyway)."""
    out = []
    for i, lf in enumerate(remaining):
        token = lf.parsed.write_token or N.UNKNOWN_WRITE_TOKEN
        out.append((N.log_file_name(file_id, instant, first_version + i, token), lf.name))
    return out


def original_of(storage: Storage, partition: str, name: str) -> str:
    """The log file a (possibly chained) symlink ``name`` finally points at; ``name`` when it is no
    link.

    A link must never target another link: the cleaner removes the slice the middle link belongs
    to, and the chain would end in nothing (the log file's rows lost from the slice).
    """
    rel = f"{partition}/{name}" if partition else name
    if not storage.supports_symlinks or not storage.is_symlink(rel):
        return name
    full = storage.full(rel)
    real = os.path.realpath(full)
    if not os.path.exists(real):
        raise CompactionError(f"log file {rel} is a link to {real}, which is missing; restore it (or roll back "
                              "the compaction that created the link) before compacting again")
    if os.path.dirname(real) != os.path.realpath(os.path.dirname(full)):
        raise CompactionError(f"log file {rel} links outside its partition folder ({real}); hoodie only "
                              "creates links between log files of one file group")
    return os.path.basename(real)


@dataclass(frozen=True)
class LinkOp(LinkedLog):
    """One planned link of an operation (names in ``partition``)."""

    @property
    def version(self) -> int:
        """The link's log version."""
        return N.parse_log_file(self.link).version


def operation_links(op: CompactionOperation) -> list[LinkOp]:
    """The planned links of a plan operation, in log (version) order."""
    part, fid = op.file_group
    out = [LinkOp(part, fid, s.symlink, s.target) for s in op.symlink_operations or ()
           if s.symlink and s.target]
    return sorted(out, key=lambda l: l.version)


def resolve_link_mode(storage: Storage, mode: str) -> str:
    """``symlink`` or ``copy`` for a configured mode (``auto`` picks by storage capability)."""
    if mode == "auto":
        return "symlink" if storage.supports_symlinks else "copy"
    if mode == "symlink" and not storage.supports_symlinks:
        raise CompactionError(
            f"{storage.base_uri} cannot hold symlinks (object store); set "
            "hoodie.compaction.partial.link.mode=copy or auto")
    return mode


def materialize_link(storage: Storage, link: LinkOp, mode: str) -> None:
    """Create one link (or copy). Replaces a leftover of an earlier failed attempt.

    Copies are made under a temporary name and renamed on local storage, so a reader never lists
    a half-copied log file; object-store copies are server-side and appear atomically.
    """
    if not storage.is_file(link.target_path):
        raise CompactionError(
            f"log file {link.target_path} (target of planned link {link.link}) is missing; the "
            "table changed under the compaction plan (was it cleaned?). Nothing was committed; "
            "restore the file or roll the compaction back")
    if storage.exists(link.link_path) or storage.is_symlink(link.link_path):
        storage.delete(link.link_path)
    if mode == "symlink":
        # The plan's target may itself be a link of an earlier partial compaction: point at the file
        # it finally reaches, so the new link survives the cleaning of that earlier slice.
        part = link.partition
        original = original_of(storage, part, link.target)
        storage.symlink(f"{part}/{original}" if part else original, link.link_path)
        return
    if storage.is_local:
        tmp = link.link_path + COPY_TMP_SUFFIX
        storage.delete(tmp)
        storage.copy(link.target_path, tmp)
        storage.move(tmp, link.link_path)
        return
    storage.copy(link.target_path, link.link_path)


def materialize_links(storage: Storage, links: Sequence[LinkOp], mode: str) -> None:
    """Create the links of one file group, **highest version first**.

    While the compaction is pending, readers that merge the pending slice with the previous one
    (Java's merged file-slice view) see old base + old logs + whatever links exist. A suffix of the
    links replays a suffix of the remaining files after their originals, which changes no merge
    result; a prefix would replay older values after newer ones. Creating from the top keeps the
    existing links a suffix at every moment, even after a crash.
    """
    for link in sorted(links, key=lambda l: l.version, reverse=True):
        materialize_link(storage, link, mode)


def remove_links(storage: Storage, links: Sequence[LinkOp]) -> list[str]:
    """Delete links (never their targets), **lowest version first**, so the links that still exist
    are a suffix at every moment (see :func:`materialize_links`). Returns deleted paths."""
    out = []
    for link in sorted(links, key=lambda l: l.version):
        tmp = link.link_path + COPY_TMP_SUFFIX
        if storage.delete(tmp):
            out.append(tmp)
        if storage.delete(link.link_path):
            out.append(link.link_path)
    return out


def parse_version(name: str) -> Optional[int]:
    """The log version of a log file name, or None for other names."""
    if not N.is_log_file(name):
        return None
    return N.parse_log_file(name).version


__all__ = [
    "sentinel_name", "is_sentinel", "prefix_closure", "link_names", "LinkOp", "operation_links",
    "resolve_link_mode", "materialize_link", "materialize_links", "remove_links", "parse_version",
]
