"""Partition TTL (RFC-65) for Hudi v6 tables, in pure Python.

Expired partitions are removed with a ``delete_partition`` replacecommit that Hudi 0.14/0.15 and
hudi-rs understand; the cleaner deletes their files later. See docs/ttl.md.
"""

from hoodie.services.ttl.config import TTLConfig, TTLConfigError, TTLRule, parse_duration_ms
from hoodie.services.ttl.predicate import PredicateError, parse_predicate
from hoodie.services.ttl.async_service import TTLAsyncService, maybe_run_async_ttl, stop_async_services
from hoodie.services.ttl.service import (
    TTLResult, active_instants, call_manage_partition_ttl, call_run_ttl, delete_partitions, maybe_run_inline_ttl,
    run_ttl,
)
from hoodie.services.ttl.stash import RestoreResult, StashError, list_stashes, restore
from hoodie.services.ttl.stats import PartitionStats, partition_last_modified
from hoodie.services.ttl.strategies import (
    BuiltinTTLStrategy, KeepByCreationTimeStrategy, KeepByEventTimeStrategy, KeepByTimeStrategy,
    PartitionDecision, PartitionTTLStrategy, create_strategy,
)

__all__ = [
    "TTLConfig", "TTLConfigError", "TTLRule", "parse_duration_ms", "PredicateError", "parse_predicate",
    "TTLAsyncService", "TTLResult", "active_instants", "call_manage_partition_ttl", "call_run_ttl",
    "delete_partitions", "maybe_run_async_ttl", "maybe_run_inline_ttl", "run_ttl", "stop_async_services",
    "RestoreResult", "StashError", "list_stashes", "restore", "PartitionStats", "partition_last_modified",
    "BuiltinTTLStrategy", "KeepByCreationTimeStrategy", "KeepByEventTimeStrategy", "KeepByTimeStrategy",
    "PartitionDecision", "PartitionTTLStrategy", "create_strategy",
]
