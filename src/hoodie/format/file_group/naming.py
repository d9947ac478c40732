"""Hudi file naming: file ids, write tokens, base files, log files and their ordering.

Reference: ``hudi-v6-format.md`` §3.5 (``FSUtils``, ``HoodieLogFile.LogFileComparator``).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Optional

UNKNOWN_WRITE_TOKEN = "1-0-1"  # used by rollback-written log files
DEFAULT_WRITE_TOKEN = "0-0-0"
BASE_FILE_EXTENSIONS = (".parquet", ".orc", ".hfile")
PARTITION_METAFILE = ".hoodie_partition_metadata"
# Hudi writes the partition metafile in the table's base format instead of as a properties file when
# hoodie.partition.metafile.use.base.format=true: any of these names makes a folder a partition.
PARTITION_METAFILES = (PARTITION_METAFILE, PARTITION_METAFILE + ".parquet", PARTITION_METAFILE + ".orc")

LOG_FILE_PATTERN = re.compile(
    r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(\.cdc)?)?$"
)
_BASE_FILE_PATTERN = re.compile(r"^([^_]+(?:-\d+)?)_(\d+-\d+-\d+)_(\d+)(\.[A-Za-z]+)$")


def new_file_id(n: int = 0, prefix: str | None = None) -> str:
    """A new file id ``<uuid>-<n>`` as ``FSUtils.createNewFileId`` makes it."""
    return f"{prefix or uuid.uuid4()}-{n}"


def write_token(task_partition_id: int, stage_id: int, task_attempt_id: int) -> str:
    """Write token ``<taskPartitionId>-<stageId>-<taskAttemptId>``."""
    return f"{task_partition_id}-{stage_id}-{task_attempt_id}"


def base_file_name(file_id: str, token: str, instant: str, ext: str = ".parquet") -> str:
    """``<fileId>_<writeToken>_<instant>.parquet``."""
    return f"{file_id}_{token}_{instant}{ext}"


def log_file_name(file_id: str, base_instant: str, version: int, token: str, cdc: bool = False) -> str:
    """``.<fileId>_<baseInstant>.log.<version>_<writeToken>[.cdc]``."""
    return f".{file_id}_{base_instant}.log.{version}_{token}" + (".cdc" if cdc else "")


@dataclass(frozen=True)
class BaseFileName:
    """A parsed base file name."""

    name: str
    file_id: str
    write_token: str
    instant: str
    ext: str


@dataclass(frozen=True)
class LogFileName:
    """A parsed log file name."""

    name: str
    file_id: str
    base_instant: str
    version: int
    write_token: Optional[str]
    suffix: str  # "" or ".cdc"
    kind: str = "log"  # "log" or "archive"

    def sort_key(self) -> tuple:
        """Hudi's ``LogFileComparator``: base instant, version, write token (nulls first), suffix."""
        return (
            self.base_instant,
            self.version,
            (0, "") if self.write_token is None else (1, self.write_token),
            self.suffix,
        )


def is_base_file(name: str) -> bool:
    """Whether a file name looks like a base file (not hidden, known extension)."""
    return not name.startswith(".") and name.endswith(BASE_FILE_EXTENSIONS) and name.count("_") >= 2


def is_log_file(name: str) -> bool:
    """Whether a file name is a Hudi log file name."""
    return name.startswith(".") and ".log." in name and LOG_FILE_PATTERN.match(name) is not None


def parse_base_file(name: str) -> BaseFileName:
    """Parse ``<fileId>_<token>_<instant>.<ext>``; the instant is the 3rd ``_`` token."""
    stem, dot, ext = name.rpartition(".")
    parts = stem.split("_")
    if not dot or len(parts) < 3:
        raise ValueError(f"not a Hudi base file name: {name!r}")
    return BaseFileName(name=name, file_id=parts[0], write_token=parts[1], instant=parts[2], ext="." + ext)


def data_file_instant(name: str) -> str | None:
    """The instant a data file belongs to: a base file's instant, a log file's base instant (the slice it
    joins); None for any other name."""
    if is_base_file(name):
        return parse_base_file(name).instant
    if is_log_file(name):
        return parse_log_file(name).base_instant
    return None


def parse_log_file(name: str) -> LogFileName:
    """Parse ``.<fileId>_<baseInstant>.log.<version>_<token>[.cdc]``."""
    m = LOG_FILE_PATTERN.match(name)
    if not m:
        raise ValueError(f"not a Hudi log file name: {name!r}")
    return LogFileName(
        name=name,
        file_id=m.group(1),
        base_instant=m.group(2),
        version=int(m.group(4)),
        write_token=m.group(6),
        suffix=m.group(10) or "",
        kind=m.group(3),
    )
