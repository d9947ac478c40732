"""Inline table services run right after a write commits, in Hudi's order:
compaction (``hoodie.compact.inline`` / ``hoodie.compact.schedule.inline``), partition TTL
(``hoodie.partition.ttl.inline``; ``hoodie.ttl.async.enabled`` notifies the async TTL service, which
also runs record TTL when ``hoodie.record.ttl.retention`` is set), record TTL
(``hoodie.record.ttl.inline``), then automatic clean
(``hoodie.clean.automatic``, true by default as in Hudi; the clean policy decides whether anything is
old enough to delete), then timeline archival (``hoodie.archive.automatic``, true by default as in Hudi).

Each is a post-commit hook of the write's transaction (:func:`post_commit_hooks`): a service that
fails raises :class:`~hoodie.errors.PostCommitError` naming the committed write.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from hoodie import configs as C
from hoodie.configs import ConfigProperty, unknown_keys_checked
from hoodie.format.table import HoodieTable
from hoodie.services.archive import config as AC
from hoodie.services.archive.action import maybe_archive_after_commit
from hoodie.services.archive.config import ArchivalConfig
from hoodie.services.clean import CleanConfig, maybe_clean_after_commit
from hoodie.services.compaction import config as CC
from hoodie.services.compaction.config import as_config
from hoodie.services.compaction.runner import Executor as CompactionExecutor
from hoodie.services.compaction.runner import maybe_compact_inline
from hoodie.services.compaction.strategies import resolve_strategy
from hoodie.services.transaction import Hook, Transaction
from hoodie.services.ttl import keys as TK
from hoodie.services.ttl.config import TTLConfig
from hoodie.services.ttl.records import RecordTTLConfig, maybe_run_inline_record_ttl
from hoodie.services.ttl.service import check_async_options, maybe_run_async_ttl, maybe_run_inline_ttl


def _flag(options: Mapping[str, Any], prop: ConfigProperty[bool]) -> bool:
    """A service switch, by the typed boolean rule (raises ConfigValueError, a ValueError)."""
    return bool(prop.get(options))


def check_inline_options(options: Mapping[str, Any], is_mor: bool,
                         table_props: Optional[Mapping[str, str]] = None) -> None:
    """Parse the settings of every inline service ``options`` enable; writers call this before they
    start a commit.

    The services run after the commit: a misconfiguration found only then raises although the data
    is committed, and a caller retrying the "failed" write writes it twice (an insert duplicates its
    rows). Raises the service's own configuration error.
    """
    if is_mor and (_flag(options, CC.INLINE)
                   or _flag(options, CC.SCHEDULE_INLINE)):
        resolve_strategy(as_config(options, table_props))
    if _flag(options, TK.INLINE):
        ttl = TTLConfig.from_options(options)
        if not ttl.strategy_class:
            ttl.require_retention()
    if _flag(options, TK.ASYNC_ENABLED):
        # Partition TTL and/or record TTL, whichever the options configure.
        check_async_options(options, table_props)
    if _flag(options, C.RECORD_TTL_INLINE):
        RecordTTLConfig.from_options(options, table_props)
    if _flag(options, C.CLEAN_AUTOMATIC):
        CleanConfig.from_options(options)
    if _flag(options, AC.AUTOMATIC):
        ArchivalConfig.from_options(options)  # issue 33: refuses windows that would break readers


def post_commit_hooks(options: Mapping[str, Any],
                      compaction_executor: Optional[CompactionExecutor] = None) -> list[Hook]:
    """The inline services ``options`` enable, as post-commit hooks of a write's transaction, in
    Hudi's order. ``compaction_executor`` runs inline compaction's operations (the Spark engine
    passes its own; default: in this process)."""
    hooks = []
    for name, _key, enabled, run in _services(options, compaction_executor):
        if enabled:
            hooks.append(Hook(name, _hook(options, run)))
    return hooks


def _hook(options: Mapping[str, Any], run: Callable[[HoodieTable], Any]) -> Callable[[Transaction], Any]:
    def hook(txn: Transaction) -> Any:
        assert txn.table is not None
        # The write has already warned about unknown keys in these options.
        with unknown_keys_checked():
            return run(txn.table.reload())
    return hook


def _services(options: Mapping[str, Any], compaction_executor: Optional[CompactionExecutor]
              ) -> list[tuple[str, str, bool, Callable[[HoodieTable], Any]]]:
    """(service name, result key, enabled, run) in Hudi's order: compaction, TTL, clean."""

    def compaction(t: HoodieTable) -> Any:
        if not t.is_mor:
            return None  # compaction applies to merge-on-read tables only
        return maybe_compact_inline(t, options, executor=compaction_executor)

    return [
        ("compaction", "compaction", _flag(options, CC.INLINE)
         or _flag(options, CC.SCHEDULE_INLINE), compaction),
        ("partition TTL", "ttl", _flag(options, TK.INLINE),
         lambda t: maybe_run_inline_ttl(t, options)),
        ("async partition TTL", "ttl_async", _flag(options, TK.ASYNC_ENABLED),
         lambda t: maybe_run_async_ttl(t, options)),
        # After partition TTL (no need to read records of partitions it just expired), before clean.
        ("record TTL", "record_ttl", _flag(options, C.RECORD_TTL_INLINE),
         lambda t: maybe_run_inline_record_ttl(t, options)),
        # Hudi's default: clean after every commit.
        ("clean", "clean", _flag(options, C.CLEAN_AUTOMATIC),
         lambda t: maybe_clean_after_commit(t, options)),
        # --- ARCHIVAL POST-COMMIT STEP (issue 33) -----------------------------------------------------
        # Hudi's order: after clean (autoArchiveOnCommit). It takes the table lock itself (the commit's
        # is released by now) and runs inline, or in a background thread with hoodie.archive.async=true.
        # Re-attach after the commit-path redesign: one hook, after clean, for every committed write.
        ("archive", "archive", _flag(options, AC.AUTOMATIC),
         lambda t: maybe_archive_after_commit(t, options)),
        # --- end of the archival post-commit step ----------------------------------------------------
    ]
