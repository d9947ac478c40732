"""The reference docs are generated from the code; this fails when they drift."""

from __future__ import annotations

from hoodie.configs import all_configs
from hoodie.interfaces import docgen


def test_generated_docs_are_current() -> None:
    for name, fn in docgen.GENERATED.items():
        assert (docgen.DOCS / name).read_text() == fn(), f"docs/{name} is stale: run python -m hoodie.interfaces.docgen"


def test_config_table_lists_every_key() -> None:
    text = (docgen.DOCS / "configuration.md").read_text()
    keys = [c.key for c in all_configs()]
    assert len(keys) > 60
    for k in keys:
        assert f"`{k}`" in text, k
    for k in ("hoodie.partition.ttl.strategy.days.retain", "hoodie.compaction.strategy", "hoodie.cleaner.policy",
              "hoodie.datasource.write.recordkey.field", "hoodie.metrics.prometheus.file"):
        assert k in keys
