"""Typed compaction plans: ``HoodieCompactionPlan`` and ``HoodieCompactionOperation``, with hoodie's
``symlinkOperations`` extension, read and written through the Avro timeline codec of
:mod:`hoodie.format.timeline.plans`.

A plan is the single Avro record of ``<t>.compaction.requested`` (and of ``<t>.logcompaction.requested``).
Plan version 2 (what Hudi 0.14/0.15 and hoodie write) holds file *names* relative to the operation's
partition; version 1 held full paths. The convenience accessors take the last path segment of either,
as hoodie's executor always has. docs/compaction.md describes the plan format, including the partial
compaction fields (``symlinkOperations``, the sentinel delta file and the reserved log versions).

The types mirror the Avro record field by field so that a round trip loses nothing:

* nullable collections (``operations``, ``extraMetadata``, ``deltaFilePaths``, ``metrics``,
  ``strategyParams``) read as empty ones, and ``wire_nulls`` remembers which were null in the record,
  so that they are written null again; ``symlinkOperations`` stays ``Optional`` because null is what
  marks a full (stock Hudi) operation;
* fields of the writer's schema that hoodie's schema lacks (Hudi 1.x's ``missingSchedulePartitions``)
  are kept in ``unknown_fields``: :meth:`CompactionPlan.to_avro` returns them and
  :meth:`CompactionPlan.to_bytes` drops them, as a Java reader resolving the file against the
  0.14/0.15 schema does;
* fields the writer's schema lacks (stock Hudi has no ``symlinkOperations``) get their schema
  defaults, as Java's schema resolution fills them in.

So ``CompactionPlan.from_bytes(b).to_bytes(sync_marker=b[-16:]) == b`` for every plan hoodie writes,
and ``to_avro()`` re-encoded with a Java file's own writer schema reproduces that file's record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from hoodie.format.file_group import naming as N
from hoodie.format.timeline import plans as PL

KIND = "HoodieCompactionPlan"

# Operation metric (the plan's ``metrics`` map) holding the highest log version a partial compaction
# reserves under its instant: its links plus, with an event-time exact split, the split-off log.
RESERVED_LOG_VERSION_METRIC = "hoodie.compaction.reserved.log.version"

_OPERATION_FIELDS = ("baseInstantTime", "deltaFilePaths", "dataFilePath", "fileId", "partitionPath", "metrics",
                     "bootstrapFilePath", "symlinkOperations")
_PLAN_FIELDS = ("operations", "extraMetadata", "version", "strategy", "preserveHoodieMetadata")
_STRATEGY_FIELDS = ("compactorClassName", "strategyParams", "version")
_SYMLINK_FIELDS = ("symlink", "target")
# Avro defaults of the ``version`` fields (``["int", "null"]``, default 1): what a reader sees when
# the writer's schema has no such field.
_AVRO_DEFAULT_VERSION = 1


def _unknown(record: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in known}


def _nulls(record: Mapping[str, Any], names: Iterable[str]) -> frozenset[str]:
    # A field absent from the writer's schema is not null on the wire: its default (null for every
    # collection here) is, and writing it back writes that default, which is null too.
    return frozenset(n for n in names if record.get(n) is None)


def _name(path: Optional[str]) -> Optional[str]:
    """The file name of a plan entry: a name (plan version 2) or a full path (version 1)."""
    return path.rsplit("/", 1)[-1] if path else None


@dataclass(frozen=True)
class SymlinkOperation:
    """One ``HoodieSymlinkOperation`` (hoodie's extension): ``symlink`` is the new log file name under
    the compaction instant, ``target`` the remaining log file it re-materialises (names in the
    operation's partition)."""

    symlink: Optional[str] = None
    target: Optional[str] = None
    unknown_fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> "SymlinkOperation":
        """From the Avro record (a dict as :func:`~hoodie.format.timeline.plans.read_avro_metadata` gives it)."""
        return cls(record.get("symlink"), record.get("target"), _unknown(record, _SYMLINK_FIELDS))

    def to_avro(self, *, unknown_fields: bool = True) -> dict[str, Any]:
        """The Avro record (``unknown_fields=False`` leaves out fields hoodie's schema lacks)."""
        out: dict[str, Any] = {"symlink": self.symlink, "target": self.target}
        if unknown_fields:
            out.update(self.unknown_fields)
        return out


@dataclass(frozen=True)
class CompactionPlanStrategy:
    """``HoodieCompactionStrategy``: the execution strategy a plan names (Hudi sets it for log
    compaction; hoodie never does)."""

    compactor_class_name: Optional[str] = None
    strategy_params: dict[str, str] = field(default_factory=dict)
    version: Optional[int] = _AVRO_DEFAULT_VERSION
    wire_nulls: frozenset[str] = frozenset()
    unknown_fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> "CompactionPlanStrategy":
        """From the Avro record."""
        return cls(
            compactor_class_name=record.get("compactorClassName"),
            strategy_params=dict(record.get("strategyParams") or {}),
            version=record.get("version", _AVRO_DEFAULT_VERSION),
            wire_nulls=_nulls(record, ("strategyParams",)),
            unknown_fields=_unknown(record, _STRATEGY_FIELDS),
        )

    def to_avro(self, *, unknown_fields: bool = True) -> dict[str, Any]:
        """The Avro record (``unknown_fields=False`` leaves out fields hoodie's schema lacks)."""
        out: dict[str, Any] = {
            "compactorClassName": self.compactor_class_name,
            "strategyParams": None if "strategyParams" in self.wire_nulls else dict(self.strategy_params),
            "version": self.version,
        }
        if unknown_fields:
            out.update(self.unknown_fields)
        return out


@dataclass(frozen=True, kw_only=True)
class CompactionOperation:
    """One ``HoodieCompactionOperation``: a file slice a compaction rewrites.

    Fields follow the Avro record; the properties give what the services use (partition ``""`` for
    a null one, file names rather than version-1 paths).
    """

    base_instant_time: Optional[str]
    file_id: Optional[str]
    partition_path: Optional[str] = None
    data_file_path: Optional[str] = None
    delta_file_paths: tuple[str, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)
    bootstrap_file_path: Optional[str] = None
    # None: a full operation (stock Hudi can run it). A tuple: a partial one (docs/compaction.md).
    symlink_operations: Optional[tuple[SymlinkOperation, ...]] = None
    wire_nulls: frozenset[str] = frozenset()
    unknown_fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> "CompactionOperation":
        """From the Avro record (missing fields get their schema defaults)."""
        links = record.get("symlinkOperations")
        return cls(
            base_instant_time=record.get("baseInstantTime"),
            file_id=record.get("fileId"),
            partition_path=record.get("partitionPath"),
            data_file_path=record.get("dataFilePath"),
            delta_file_paths=tuple(record.get("deltaFilePaths") or ()),
            metrics={k: float(v) for k, v in (record.get("metrics") or {}).items()},
            bootstrap_file_path=record.get("bootstrapFilePath"),
            symlink_operations=None if links is None else tuple(SymlinkOperation.from_avro(s) for s in links),
            wire_nulls=_nulls(record, ("deltaFilePaths", "metrics")),
            unknown_fields=_unknown(record, _OPERATION_FIELDS),
        )

    def to_avro(self, *, unknown_fields: bool = True) -> dict[str, Any]:
        """The Avro record (``unknown_fields=False`` leaves out fields hoodie's schema lacks)."""
        out: dict[str, Any] = {
            "baseInstantTime": self.base_instant_time,
            "deltaFilePaths": None if "deltaFilePaths" in self.wire_nulls else list(self.delta_file_paths),
            "dataFilePath": self.data_file_path,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": None if "metrics" in self.wire_nulls else dict(self.metrics),
            "bootstrapFilePath": self.bootstrap_file_path,
            "symlinkOperations": None if self.symlink_operations is None
            else [s.to_avro(unknown_fields=unknown_fields) for s in self.symlink_operations],
        }
        if unknown_fields:
            out.update(self.unknown_fields)
        return out

    # -- what the services read ---------------------------------------------------------------
    @property
    def partition(self) -> str:
        """The partition path (``""`` for a non-partitioned table or a null field)."""
        return self.partition_path or ""

    @property
    def file_group(self) -> tuple[str, str]:
        """``(partition, fileId)``, the key services index file groups by."""
        return self.partition, self.file_id or ""

    @property
    def data_file_name(self) -> Optional[str]:
        """The base file's name, or None for a slice without one."""
        return _name(self.data_file_path)

    @property
    def delta_file_names(self) -> tuple[str, ...]:
        """The listed log file names in plan order (a partial operation's sentinel included)."""
        return tuple(n for n in (_name(p) for p in self.delta_file_paths) if n)

    @property
    def is_partial(self) -> bool:
        """Whether the operation leaves log files behind (has symlink operations)."""
        return bool(self.symlink_operations)

    @property
    def reserved_log_version(self) -> int:
        """The highest log version the operation reserves in the slice at its compaction instant.

        A partial compaction re-materialises its remaining log files under the compaction instant
        with versions 1..k (``symlinkOperations``), created only when the compaction runs; writers
        that append to the file group meanwhile must start above k, or their logs would sort before
        (and be overridden by) older data (docs/compaction.md). The metric also covers the version
        an exact split takes; the link names cover plans that lack the metric.
        """
        top = 0
        if self.metrics.get(RESERVED_LOG_VERSION_METRIC) is not None:
            top = int(self.metrics[RESERVED_LOG_VERSION_METRIC])
        for s in self.symlink_operations or ():
            if s.symlink and N.is_log_file(s.symlink):
                top = max(top, N.parse_log_file(s.symlink).version)
        return top

    def path_of(self, name: str) -> str:
        """A file name of this operation as a path relative to the base path."""
        return f"{self.partition}/{name}" if self.partition else name

    def file_paths(self) -> tuple[str, ...]:
        """Every file the operation reads, relative to the base path, in plan order without
        repeats: its base file, its listed log files (the sentinel of a partial operation, which
        never exists, included) and the targets of its planned links."""
        names = [self.data_file_name, *self.delta_file_names]
        names += [_name(s.target) for s in self.symlink_operations or ()]
        return tuple(dict.fromkeys(self.path_of(n) for n in names if n))


@dataclass(frozen=True, kw_only=True)
class CompactionPlan:
    """A ``HoodieCompactionPlan`` (see the module doc for the round-trip guarantees)."""

    operations: tuple[CompactionOperation, ...] = ()
    extra_metadata: dict[str, str] = field(default_factory=dict)
    version: Optional[int] = PL.COMPACTION_PLAN_VERSION
    strategy: Optional[CompactionPlanStrategy] = None
    preserve_hoodie_metadata: Optional[bool] = None
    wire_nulls: frozenset[str] = frozenset()
    unknown_fields: dict[str, Any] = field(default_factory=dict)

    # -- codec --------------------------------------------------------------------------------
    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> "CompactionPlan":
        """From the Avro record, as :func:`~hoodie.format.timeline.plans.read_avro_metadata` returns it."""
        strategy = record.get("strategy")
        return cls(
            operations=tuple(CompactionOperation.from_avro(op) for op in record.get("operations") or ()),
            extra_metadata=dict(record.get("extraMetadata") or {}),
            version=record.get("version", _AVRO_DEFAULT_VERSION),
            strategy=None if strategy is None else CompactionPlanStrategy.from_avro(strategy),
            preserve_hoodie_metadata=record.get("preserveHoodieMetadata"),
            wire_nulls=_nulls(record, ("operations", "extraMetadata")),
            unknown_fields=_unknown(record, _PLAN_FIELDS),
        )

    def to_avro(self, *, unknown_fields: bool = True) -> dict[str, Any]:
        """The Avro record as a dict (``unknown_fields=False``: only the fields of hoodie's schema)."""
        out: dict[str, Any] = {
            "operations": None if "operations" in self.wire_nulls
            else [op.to_avro(unknown_fields=unknown_fields) for op in self.operations],
            "extraMetadata": None if "extraMetadata" in self.wire_nulls else dict(self.extra_metadata),
            "version": self.version,
            "strategy": None if self.strategy is None else self.strategy.to_avro(unknown_fields=unknown_fields),
            "preserveHoodieMetadata": self.preserve_hoodie_metadata,
        }
        if unknown_fields:
            out.update(self.unknown_fields)
        return out

    @classmethod
    def from_bytes(cls, data: bytes) -> "CompactionPlan":
        """Parse a plan file (an Avro container file, read with the writer schema it holds).

        Raises:
            ValueError: the file is empty, not Avro, truncated or holds no record.
        """
        return cls.from_avro(PL.read_avro_metadata(data))

    def to_bytes(self, *, sync_marker: Optional[bytes] = None) -> bytes:
        """The plan file as Hudi writes it (hoodie's schema; unknown writer fields are dropped).

        ``sync_marker`` pins the container's 16-byte sync marker (random by default).
        """
        return PL.write_avro_metadata(KIND, self.to_avro(unknown_fields=False), sync_marker=sync_marker)

    # -- what the services read ---------------------------------------------------------------
    def file_groups(self) -> list[tuple[str, str]]:
        """``(partition, fileId)`` of every operation, in plan order without repeats."""
        return list(dict.fromkeys(op.file_group for op in self.operations))

    def partitions(self) -> list[str]:
        """The partitions the plan touches, sorted."""
        return sorted({op.partition for op in self.operations})

    def partial_operations(self) -> list[CompactionOperation]:
        """The operations that leave log files behind (see :attr:`CompactionOperation.is_partial`)."""
        return [op for op in self.operations if op.is_partial]

    def file_paths(self) -> set[str]:
        """Every file some operation reads, relative to the base path
        (:meth:`CompactionOperation.file_paths`)."""
        return {p for op in self.operations for p in op.file_paths()}


__all__ = [
    "KIND", "RESERVED_LOG_VERSION_METRIC", "SymlinkOperation", "CompactionPlanStrategy", "CompactionOperation",
    "CompactionPlan",
]
