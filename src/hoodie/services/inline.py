"""Inline table services run right after a write commits, in Hudi's order:
compaction (``hoodie.compact.inline`` / ``hoodie.compact.schedule.inline``), partition TTL
(``hoodie.partition.ttl.inline``; ``hoodie.ttl.async.enabled`` notifies the async TTL service, which
also runs record TTL when ``hoodie.record.ttl.retention`` is set), record TTL
(``hoodie.record.ttl.inline``), then automatic clean
(``hoodie.clean.automatic``, true by default as in Hudi; the clean policy decides whether anything is
old enough to delete), then timeline archival (``hoodie.archive.automatic``, true by default as in Hudi).

Each is a post-commit hook of the write's transaction (:meth:`InlineServices.hooks`), run with the
settings the write parsed once before it started (:meth:`InlineServices.check`): a service that fails
raises :class:`~hoodie.errors.PostCommitError` naming the committed write.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Optional

from hoodie import configs as C
from hoodie.configs import ConfigProperty, unknown_keys_checked
from hoodie.configs.compaction import FAIL_ON_INLINE_SERVICE_EXCEPTION
from hoodie.errors import WriteError
from hoodie.format.table import HoodieTable
from hoodie.services.archive import config as AC
from hoodie.services.archive.action import maybe_archive_after_commit
from hoodie.services.archive.config import ArchivalConfig
from hoodie.services.clean import CleanConfig, maybe_clean_after_commit
from hoodie.services.compaction import config as CC
from hoodie.services.compaction.config import CompactionConfig, as_config
from hoodie.services.compaction.runner import Executor as CompactionExecutor
from hoodie.services.compaction.runner import maybe_compact_inline
from hoodie.services.compaction.strategies import resolve_strategy
from hoodie.services.transaction import Hook, Transaction
from hoodie.services.ttl import keys as TK
from hoodie.services.ttl.config import TTLConfig
from hoodie.services.ttl.record_ttl import RecordTTLConfig, maybe_run_inline_record_ttl
from hoodie.services.ttl.async_service import maybe_run_async_ttl
from hoodie.services.ttl.service import check_async_options, maybe_run_inline_ttl

log = logging.getLogger(__name__)


def _flag(options: Mapping[str, Any], prop: ConfigProperty[bool]) -> bool:
    """A service switch, by the typed boolean rule (raises ConfigValueError, a ValueError)."""
    return bool(prop.get(options))


class InlineServices:
    """The inline services one write's options enable, with their settings parsed once per write.

    The entry points build it from the write's options, pass :meth:`check` to the write as an option
    check (it runs in the write's prepare step, before anything is written, when the table type is
    known) and :meth:`hooks` as its post-commit hooks, which run each service with the settings
    :meth:`check` parsed: compaction's :class:`~hoodie.services.compaction.config.CompactionConfig`,
    clean's :class:`~hoodie.services.clean.CleanConfig`, archival's
    :class:`~hoodie.services.archive.config.ArchivalConfig`, partition TTL's
    :class:`~hoodie.services.ttl.config.TTLConfig` (record TTL still reads its own from the options,
    against the table's properties as they are when it runs). ``compaction_executor`` runs inline compaction's operations (the Spark engine
    passes its own; default: in this process)."""

    def __init__(self, options: Mapping[str, Any], compaction_executor: Optional[CompactionExecutor] = None) -> None:
        self.options = options
        self.compaction_executor = compaction_executor
        # The switches, read once (each by the boolean rule).
        self.compact = _flag(options, CC.INLINE) or _flag(options, CC.SCHEDULE_INLINE)
        self.partition_ttl = _flag(options, TK.INLINE)
        self.async_ttl = _flag(options, TK.ASYNC_ENABLED)
        self.record_ttl = _flag(options, C.RECORD_TTL_INLINE)
        self.clean = _flag(options, C.CLEAN_AUTOMATIC)
        self.archive = _flag(options, AC.AUTOMATIC)
        # Parsed by check() (None until then, or when the service is off).
        self.compaction_config: Optional[CompactionConfig] = None
        self.clean_config: Optional[CleanConfig] = None
        self.archival_config: Optional[ArchivalConfig] = None
        self.ttl_config: Optional[TTLConfig] = None

    def check(self, is_mor: bool, table_props: Optional[Mapping[str, str]] = None) -> None:
        """Parse the settings of every service the options enable; writers call this before they start a
        commit.

        The services run after the commit: a misconfiguration found only then raises although the data
        is committed, and a caller retrying the "failed" write writes it twice (an insert duplicates its
        rows). Raises the service's own configuration error.
        """
        options = self.options
        if is_mor and self.compact:
            self.compaction_config = as_config(options, table_props)
            resolve_strategy(self.compaction_config)
        elif self.compact:
            self._compaction_on_copy_on_write()
        if self.partition_ttl:
            ttl = TTLConfig.from_options(options)
            if not ttl.strategy_class:
                ttl.require_retention()
            self.ttl_config = ttl
        if self.async_ttl:
            # Partition TTL and/or record TTL, whichever the options configure.
            check_async_options(options, table_props)
        if self.record_ttl:
            RecordTTLConfig.from_options(options, table_props)
        if self.clean:
            self.clean_config = CleanConfig.from_options(options)
        if self.archive:
            self.archival_config = ArchivalConfig.from_options(options)  # issue 33: refuses windows that break readers

    def _compaction_on_copy_on_write(self) -> None:
        """Inline compaction asked of a copy-on-write write. Hudi commits the write, then its inline
        compaction (or scheduling) throws ``HoodieNotSupportedException("Compaction is not supported on a
        CopyOnWrite table")`` from the copy-on-write table, and the write fails although it committed,
        unless ``hoodie.fail.writes.on.inline.table.service.exception=false`` (then a warning). hoodie
        refuses before anything is written instead (a "failed" write that committed gets retried and
        duplicates its rows), and with the flag false ignores the setting with the same warning."""
        keys = [p.key for p in (CC.INLINE, CC.SCHEDULE_INLINE) if _flag(self.options, p)]
        setting = " and ".join(f"{k}=true" for k in keys)
        if _flag(self.options, FAIL_ON_INLINE_SERVICE_EXCEPTION):
            raise WriteError(
                f"Compaction is not supported on a CopyOnWrite table: {setting} applies to MERGE_ON_READ tables "
                "only (copy-on-write writes have no log files to compact). Remove it from this write's options, "
                f"or set {FAIL_ON_INLINE_SERVICE_EXCEPTION.key}=false to have it ignored with a warning. "
                "Nothing was written")
        log.warning("Compaction is not supported on a CopyOnWrite table: %s ignored (%s=false)", setting,
                    FAIL_ON_INLINE_SERVICE_EXCEPTION.key)

    def hooks(self) -> list[Hook]:
        """The enabled services as post-commit hooks of the write's transaction, in Hudi's order."""
        return [Hook(name, _hook(run)) for name, _key, enabled, run in self._services() if enabled]

    def _services(self) -> list[tuple[str, str, bool, Callable[[HoodieTable], Any]]]:
        """(service name, result key, enabled, run) in Hudi's order: compaction, TTL, clean, archival."""
        options = self.options

        def compaction(t: HoodieTable) -> Any:
            if not t.is_mor:
                return None  # compaction applies to merge-on-read tables only
            return maybe_compact_inline(t, self.compaction_config or options, executor=self.compaction_executor)

        return [
            ("compaction", "compaction", self.compact, compaction),
            ("partition TTL", "ttl", self.partition_ttl,
             lambda t: maybe_run_inline_ttl(t, self.ttl_config or options)),
            ("async partition TTL", "ttl_async", self.async_ttl, lambda t: maybe_run_async_ttl(t, options)),
            # After partition TTL (no need to read records of partitions it just expired), before clean.
            ("record TTL", "record_ttl", self.record_ttl, lambda t: maybe_run_inline_record_ttl(t, options)),
            # Hudi's default: clean after every commit.
            ("clean", "clean", self.clean, lambda t: maybe_clean_after_commit(t, self.clean_config or options)),
            # --- ARCHIVAL POST-COMMIT STEP (issue 33) -------------------------------------------------
            # Hudi's order: after clean (autoArchiveOnCommit). It takes the table lock itself (the commit's
            # is released by now) and runs inline, or in a background thread with hoodie.archive.async=true.
            ("archive", "archive", self.archive,
             lambda t: maybe_archive_after_commit(t, options, self.archival_config)),
            # --- end of the archival post-commit step ------------------------------------------------
        ]


def check_inline_options(options: Mapping[str, Any], is_mor: bool,
                         table_props: Optional[Mapping[str, str]] = None) -> None:
    """Check the settings of every inline service ``options`` enable (:meth:`InlineServices.check`)."""
    InlineServices(options).check(is_mor, table_props)


def post_commit_hooks(options: Mapping[str, Any],
                      compaction_executor: Optional[CompactionExecutor] = None) -> list[Hook]:
    """The inline services ``options`` enable, as post-commit hooks that parse their settings when they
    run (a write passes :meth:`InlineServices.hooks` instead, which reuse the settings its check parsed)."""
    return InlineServices(options, compaction_executor).hooks()


def _hook(run: Callable[[HoodieTable], Any]) -> Callable[[Transaction], Any]:
    def hook(txn: Transaction) -> Any:
        assert txn.table is not None
        # The write has already warned about unknown keys in these options.
        with unknown_keys_checked():
            # The committed snapshot. The lock is released, so other writers and the hooks before this one
            # may have committed since: each service's trigger and transaction open the table as it is now.
            return run(txn.table)
    return hook
