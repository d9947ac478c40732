"""Inline table services run right after a write commits, in Hudi's order:
compaction (``hoodie.compact.inline`` / ``hoodie.compact.schedule.inline``), partition TTL
(``hoodie.partition.ttl.inline``), then automatic clean (``hoodie.clean.automatic``, true by default
as in Hudi; the clean policy decides whether anything is old enough to delete)."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from hoodie.format.table import HoodieTable


def _flag(options: Mapping[str, Any], key: str, default: bool) -> bool:
    v = options.get(key)
    if v is None:
        return default
    s = str(v).strip().lower()
    if s not in ("true", "false"):
        raise ValueError(f"{key}={v!r}: use true or false")
    return s == "true"


def run_inline_services(table: HoodieTable, options: Mapping[str, Any], spark: Optional[Any] = None) -> dict:
    """Run the inline services the options enable; returns what each did (for logs and tests)."""
    done: dict[str, Any] = {}
    if table.is_mor and (_flag(options, "hoodie.compact.inline", False)
                         or _flag(options, "hoodie.compact.schedule.inline", False)):
        from hoodie.services.compaction import maybe_compact_inline

        executor = None
        if spark is not None:
            from hoodie.engine.compaction import spark_executor

            executor = spark_executor(spark)
        done["compaction"] = maybe_compact_inline(table.reload(), options, executor=executor)
    if _flag(options, "hoodie.partition.ttl.inline", False):
        from hoodie.services.ttl import maybe_run_inline_ttl

        done["ttl"] = maybe_run_inline_ttl(table.reload(), options)
    if _flag(options, "hoodie.ttl.async.enabled", False):
        from hoodie.services.ttl import maybe_run_async_ttl

        done["ttl_async"] = maybe_run_async_ttl(table.reload(), options)
    if _flag(options, "hoodie.clean.automatic", True):  # Hudi's default: clean after every commit
        from hoodie.services.clean import maybe_clean_after_commit

        done["clean"] = maybe_clean_after_commit(table.reload(), options)
    return done
