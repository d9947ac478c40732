"""Partial-compaction links: log files re-materialized under a compaction instant.

A partial compaction keeps the log files it did not compact visible by creating new names for them
under the compaction instant: a symlink where storage supports links, a copy where it does not.
This module is the one place that says how such links are recorded, so compaction (which creates
them), clean (which must not delete their targets) and readers (incremental and time-travel reads
must not return their records as new data) agree.

Recording (in the completed compaction ``commit``'s ``extraMetadata``, key :data:`LINKS_KEY`):
a JSON list of objects ``{"partition", "fileId", "link", "target", "mode"}`` where ``link`` and
``target`` are log file *names* in ``partition`` and ``mode`` is ``"symlink"`` or ``"copy"``.
The pending plan records the same pairs per operation in ``symlinkOperations``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

from hoodie.format.timeline.commit_metadata import CommitMetadata

LINKS_KEY = "hoodie.compaction.links"
# Marker in a partial compaction plan's extraMetadata: stock Hudi ignores it, our executor requires it.
PARTIAL_PLAN_KEY = "hoodie.compaction.partial"


@dataclass(frozen=True)
class LinkedLog:
    """A log file name (``link``) standing for another log file (``target``) of the same file group;
    both names are in ``partition``."""

    partition: str
    file_id: str
    link: str
    target: str

    @property
    def link_path(self) -> str:
        """Path of the link relative to the base path."""
        return f"{self.partition}/{self.link}" if self.partition else self.link

    @property
    def target_path(self) -> str:
        """Path of the target relative to the base path."""
        return f"{self.partition}/{self.target}" if self.partition else self.target


@dataclass(frozen=True)
class Link(LinkedLog):
    """One re-materialized log file, as a completed compaction records it."""

    mode: str  # "symlink" | "copy"

    def to_json(self) -> dict[str, str]:
        """JSON object form."""
        return {"partition": self.partition, "fileId": self.file_id, "link": self.link,
                "target": self.target, "mode": self.mode}


def encode_links(links: Iterable[Link]) -> str:
    """The ``extraMetadata`` value for a list of links."""
    return json.dumps([l.to_json() for l in links], separators=(",", ":"))


def links_from_metadata(meta: CommitMetadata) -> list[Link]:
    """Links recorded by a completed compaction commit (empty for any other commit)."""
    raw = meta.extra_metadata.get(LINKS_KEY)
    if not raw:
        return []
    try:
        items = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"commit metadata key {LINKS_KEY} is not valid JSON: {e}") from e
    return [Link(i.get("partition") or "", i["fileId"], i["link"], i["target"], i.get("mode", "copy"))
            for i in items]


def all_links(timeline) -> list[Link]:
    """Links of every completed compaction commit on the timeline."""
    out: list[Link] = []
    for inst in timeline.completed().by_actions("commit").instants:
        if timeline.is_compaction_commit(inst):
            out.extend(links_from_metadata(timeline.commit_metadata(inst)))
    return out
