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


def check_inline_options(options: Mapping[str, Any], is_mor: bool,
                         table_props: Optional[Mapping[str, str]] = None) -> None:
    """Parse the settings of every inline service ``options`` enable; writers call this before they
    start a commit.

    The services run after the commit: a misconfiguration found only then raises although the data
    is committed, and a caller retrying the "failed" write writes it twice (an insert duplicates its
    rows). Raises the service's own configuration error.
    """
    if is_mor and (_flag(options, "hoodie.compact.inline", False)
                   or _flag(options, "hoodie.compact.schedule.inline", False)):
        from hoodie.services.compaction.config import as_config
        from hoodie.services.compaction.strategies import resolve_strategy

        resolve_strategy(as_config(options, table_props))
    if _flag(options, "hoodie.partition.ttl.inline", False) or _flag(options, "hoodie.ttl.async.enabled", False):
        from hoodie.services.ttl.config import TTLConfig

        ttl = TTLConfig.from_options(options)
        if not ttl.strategy_class:
            ttl.require_retention()
    if _flag(options, "hoodie.clean.automatic", True):
        from hoodie.services.clean import CleanConfig

        CleanConfig.from_options(options)


def run_inline_services(table: HoodieTable, options: Mapping[str, Any], spark: Optional[Any] = None) -> dict:
    """Run the inline services the options enable; returns what each did (for logs and tests)."""
    from hoodie.configs import unknown_keys_checked

    # The write has already warned about unknown keys in these options.
    with unknown_keys_checked():
        return _run_inline_services(table, options, spark)


def _run_inline_services(table: HoodieTable, options: Mapping[str, Any], spark: Optional[Any]) -> dict:
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
