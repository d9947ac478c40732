"""The root of hoodie's errors.

Every error hoodie raises on purpose derives from :class:`HoodieError`, so ``except
hoodie.HoodieError`` catches all of them. The classes keep their older bases too (``ValueError`` for
bad input, ``LookupError`` for a name not found, ``RuntimeError`` for a missing runtime) so code that
catches those still works. This module imports nothing from hoodie: every layer may import it.
"""

from __future__ import annotations


class HoodieError(Exception):
    """Base class of every error hoodie raises on purpose."""


class WriteError(HoodieError):
    """A write was refused; the message names the problem and the fix. Nothing was committed,
    except for the subclass :class:`PostCommitError`."""


# What to turn off to skip each step that runs after a write's commit.
_POST_COMMIT_SWITCH = {
    "clean": "hoodie.clean.automatic=false",
    "compaction": "hoodie.compact.inline=false and hoodie.compact.schedule.inline=false",
    "partition TTL": "hoodie.partition.ttl.inline=false",
    "async partition TTL": "hoodie.ttl.async.enabled=false",
    "publishing the write's metrics": "hoodie.metrics.prometheus.file / hoodie.metrics.pushgateway.url",
}


class PostCommitError(WriteError):
    """The write COMMITTED (instant ``instant`` on ``base_path``); a step after the commit failed:
    an inline table service (``service``: clean, compaction, partition TTL...), publishing metrics
    or releasing the table lock. The cause is chained (``__cause__``).

    Do not retry the write: its data is in the table, and a retried insert duplicates its rows.
    A subclass of :class:`WriteError`, so existing ``except WriteError`` blocks still catch it.
    """

    def __init__(self, instant: str, base_path: str, service: str, cause: BaseException) -> None:
        self.instant = instant
        self.base_path = base_path
        self.service = service
        what = service if service.startswith(("publishing", "releasing")) else f"the inline {service}"
        switch = _POST_COMMIT_SWITCH.get(service)
        fix = f"Fix the {service} problem and run it on its own" + (f", or turn it off ({switch})" if switch else "")
        super().__init__(
            f"the write committed as instant {instant} on {base_path}, then {what} failed: "
            f"{type(cause).__name__}: {cause}. The data is in the table: do not retry the write (a retried "
            f"insert would duplicate its rows). {fix}."
        )


__all__ = ["HoodieError", "WriteError", "PostCommitError"]
