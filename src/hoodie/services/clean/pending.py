"""What the pending instants of a table touch: the cleaner and the TTL service leave those
partitions and file groups alone."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Optional

from hoodie.format.slice.writer import marker_files
from hoodie.format.table import HoodieTable
from hoodie.format.timeline import instant as I
from hoodie.format.timeline import plans
from hoodie.format.timeline.active import Timeline
from hoodie.format.timeline.instant import Instant
from hoodie.services.delete_partition import is_delete_partition

log = logging.getLogger(__name__)

# The partitions a TTL delete_partition replacecommit removes, recorded in its inflight file so
# that pending-operation checks know what a pending TTL instant touches (readers ignore the key).
TTL_PARTITIONS_KEY = "hoodie.partition.ttl.partitions"


@dataclass
class PendingOperations:
    """What the pending instants of a table touch.

    ``write_partitions`` maps a partition to the pending writes (commit, deltacommit, non-clustering
    replacecommit) that touch it, found from their inflight metadata and markers. ``unknown_writes``
    are pending writes whose partitions cannot be known yet (requested only, no markers; a pending
    delete_partition, labelled ``delete_partition <instant>``, never names them, as in Hudi).
    ``service_partitions`` maps a partition to pending compaction / log compaction / clustering
    instants; ``file_groups`` maps (partition, fileId) to the pending table service holding it and
    ``compaction_base`` to the smallest base instant a pending (log) compaction operation reads.
    """

    write_partitions: dict[str, list[str]] = field(default_factory=dict)
    unknown_writes: list[str] = field(default_factory=list)
    service_partitions: dict[str, list[str]] = field(default_factory=dict)
    file_groups: dict[tuple[str, str], str] = field(default_factory=dict)
    compaction_base: dict[tuple[str, str], str] = field(default_factory=dict)

    def reasons(self, partition: str) -> list[str]:
        """Why a table service must leave ``partition`` alone now (empty: it may proceed)."""
        out = [f"pending write {w} touches it" for w in self.write_partitions.get(partition, [])]
        out += [f"pending {s}" for s in self.service_partitions.get(partition, [])]
        out += [f"pending {w} does not name its partitions; let it finish or roll it back (hoodie rollback)"
                if w.startswith("delete_partition ") else
                f"pending write {w} has not recorded its partitions yet (no markers); "
                "let it finish or roll it back (hoodie rollback)" for w in self.unknown_writes]
        return out


def _requested_avro(tl: Timeline, inst: Instant) -> Optional[dict]:
    try:
        data = tl.read_file(inst.requested_file_name)
    except FileNotFoundError:
        return None
    if not data:
        return None
    try:
        return plans.read_avro_metadata(data)
    except ValueError:
        return None


def pending_operations(table: HoodieTable) -> PendingOperations:
    """Collect what pending instants touch (see :class:`PendingOperations`)."""
    tl = table.timeline
    out = PendingOperations()
    for inst in tl.pending().instants:
        ts = inst.timestamp
        if inst.action in (I.COMPACTION, I.LOG_COMPACTION):
            # Not skipped when damaged: the slices the plan reads must survive until it is removed
            # (hoodie rollback moves logs back into them), so a service must stop here.
            try:
                plan = (tl.compaction_plan(ts) if inst.action == I.COMPACTION else tl.log_compaction_plan(ts))
            except FileNotFoundError:
                plan = None
            label = f"{inst.action} {ts}"
            for op in plan.operations if plan is not None else ():
                p, fid = op.file_group
                out.service_partitions.setdefault(p, [])
                if label not in out.service_partitions[p]:
                    out.service_partitions[p].append(label)
                out.file_groups[(p, fid)] = label
                base = op.base_instant_time or ts
                cur = out.compaction_base.get((p, fid))
                out.compaction_base[(p, fid)] = base if cur is None else min(cur, base)
            continue
        if inst.action not in (I.COMMIT, I.DELTA_COMMIT, I.REPLACE_COMMIT):
            continue
        label = f"{inst.action} {ts}"
        if inst.action == I.REPLACE_COMMIT:
            req = _requested_avro(tl, inst)
            if is_delete_partition(req):
                label = f"delete_partition {ts}"
            cplan = (req or {}).get("clusteringPlan")
            if cplan:
                label = f"clustering {ts}"
                for group in cplan.get("inputGroups") or []:
                    for sl in group.get("slices") or []:
                        p = sl.get("partitionPath") or ""
                        out.service_partitions.setdefault(p, [])
                        if label not in out.service_partitions[p]:
                            out.service_partitions[p].append(label)
                        out.file_groups[(p, sl.get("fileId") or "")] = label
                continue
        parts: set[str] = set()
        if inst.is_inflight:
            try:
                meta = tl.commit_metadata(inst)
            except (FileNotFoundError, ValueError):
                meta = None
            if meta is not None:
                parts.update(p for p, stats in meta.partition_to_write_stats.items() if stats)
                parts.update((meta.partition_to_replace_file_ids or {}).keys())
                raw = meta.extra_metadata.get(TTL_PARTITIONS_KEY)
                if raw:
                    try:
                        parts.update(json.loads(raw))
                    except json.JSONDecodeError:
                        # An unreadable hint adds nothing; with no other source the write counts as
                        # touching unknown partitions, which is the safe side.
                        log.warning("pending %s has an unreadable %s", inst, TTL_PARTITIONS_KEY)
        for path, _ in marker_files(table.storage, ts):
            parts.add(path.rpartition("/")[0])
        if not parts:
            out.unknown_writes.append(label)
        for p in parts:
            out.write_partitions.setdefault(p, []).append(label)
    return out
