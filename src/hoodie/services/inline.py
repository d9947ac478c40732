"""Inline table services run right after a write commits, in Hudi's order:
compaction (``hoodie.compact.inline`` / ``hoodie.compact.schedule.inline``), partition TTL
(``hoodie.partition.ttl.inline``), then automatic clean (``hoodie.clean.automatic``, true by default
as in Hudi; the clean policy decides whether anything is old enough to delete)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

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


def run_inline_services(table: HoodieTable, options: Mapping[str, Any], spark: Optional[Any] = None,
                        committed_instant: Optional[str] = None) -> dict:
    """Run the inline services the options enable; returns what each did (for logs and tests).

    ``committed_instant``: the write that just committed. A service failing then raises
    :class:`~hoodie.format.batch_write.PostCommitError` naming that instant and the service (the
    service's own error chained), so the caller does not take the committed write for failed.
    """
    from hoodie.configs import unknown_keys_checked

    # The write has already warned about unknown keys in these options.
    with unknown_keys_checked():
        return _run_inline_services(table, options, spark, committed_instant)


def _run_inline_services(table: HoodieTable, options: Mapping[str, Any], spark: Optional[Any],
                         committed_instant: Optional[str]) -> dict:
    done: dict[str, Any] = {}
    for name, key, enabled, run in _services(table, options, spark):
        if not enabled:
            continue
        try:
            done[key] = run(table.reload())
        except Exception as e:
            if committed_instant is None:
                raise
            from hoodie.format.batch_write import PostCommitError

            raise PostCommitError(committed_instant, table.base_path, name, e) from e
    return done


def _services(table: HoodieTable, options: Mapping[str, Any],
              spark: Optional[Any]) -> list[tuple[str, str, bool, Callable[[HoodieTable], Any]]]:
    """(service name, result key, enabled, run) in Hudi's order: compaction, TTL, clean."""

    def compaction(t: HoodieTable) -> Any:
        from hoodie.services.compaction import maybe_compact_inline

        executor = None
        if spark is not None:
            from hoodie.engine.compaction import spark_executor

            executor = spark_executor(spark)
        return maybe_compact_inline(t, options, executor=executor)

    def ttl(t: HoodieTable) -> Any:
        from hoodie.services.ttl import maybe_run_inline_ttl

        return maybe_run_inline_ttl(t, options)

    def ttl_async(t: HoodieTable) -> Any:
        from hoodie.services.ttl import maybe_run_async_ttl

        return maybe_run_async_ttl(t, options)

    def clean(t: HoodieTable) -> Any:
        from hoodie.services.clean import maybe_clean_after_commit

        return maybe_clean_after_commit(t, options)

    return [
        ("compaction", "compaction", table.is_mor and (_flag(options, "hoodie.compact.inline", False)
                                                       or _flag(options, "hoodie.compact.schedule.inline", False)),
         compaction),
        ("partition TTL", "ttl", _flag(options, "hoodie.partition.ttl.inline", False), ttl),
        ("async partition TTL", "ttl_async", _flag(options, "hoodie.ttl.async.enabled", False), ttl_async),
        # Hudi's default: clean after every commit.
        ("clean", "clean", _flag(options, "hoodie.clean.automatic", True), clean),
    ]
