"""A write parses its options once (issue 32): the write config and each inline service's settings
are parsed one time per ``hoodie.write_arrow``, before anything is written, and the post-commit hooks
run with those settings instead of parsing the options again after the commit."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services import inline
from hoodie.services.archive.config import ArchivalConfig
from hoodie.services.clean import CleanConfig
from hoodie.services.compaction.config import CompactionConfig
from hoodie.services.write.configs import WriteConfig

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
PARSED = (WriteConfig, CompactionConfig, CleanConfig, ArchivalConfig)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter]:
    """Counts each settings class's ``from_options`` calls."""
    counts: collections.Counter = collections.Counter()
    for cls in PARSED:
        original = cls.__dict__["from_options"].__func__

        def counted(c: Any, *a: Any, _original: Any = original, _name: str = cls.__name__, **k: Any) -> Any:
            counts[_name] += 1
            return _original(c, *a, **k)

        monkeypatch.setattr(cls, "from_options", classmethod(counted))
    yield counts


def test_a_write_parses_its_options_once_and_the_hooks_get_those_settings(
        tmp_path: Path, parses: collections.Counter, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [1]}), OPTS)
    given: dict[str, Any] = {}
    checked: dict[str, Any] = {}
    real_check = inline.InlineServices.check

    def check(self: inline.InlineServices, *a: Any) -> None:
        real_check(self, *a)
        checked.update(compaction=self.compaction_config, clean=self.clean_config, archive=self.archival_config)

    monkeypatch.setattr(inline.InlineServices, "check", check)
    real_clean, real_compact, real_archive = (inline.maybe_clean_after_commit, inline.maybe_compact_inline,
                                              inline.maybe_archive_after_commit)
    monkeypatch.setattr(inline, "maybe_clean_after_commit",
                        lambda t, cfg: given.setdefault("clean", cfg) and real_clean(t, cfg))
    monkeypatch.setattr(inline, "maybe_compact_inline",
                        lambda t, cfg, executor=None: given.setdefault("compaction", cfg)
                        and real_compact(t, cfg, executor=executor))
    monkeypatch.setattr(inline, "maybe_archive_after_commit",
                        lambda t, o, cfg=None: given.setdefault("archive", cfg) and real_archive(t, o, cfg))
    parses.clear()
    hoodie.write_arrow(path, pa.table({"k": ["a", "b"], "p": ["x", "y"], "v": [2, 3]}), OPTS)
    assert dict(parses) == {"WriteConfig": 1, "CompactionConfig": 1, "CleanConfig": 1, "ArchivalConfig": 1}
    # The hooks ran with the very objects the check parsed before the write started.
    assert set(given) == {"compaction", "clean", "archive"}
    for name, cfg in given.items():
        assert cfg is checked[name] and cfg is not None, name
    assert hoodie.read_table(path).num_rows == 2
    assert any(i.action == "commit" for i in HoodieTable(path).timeline.instants)  # compaction ran, inline


def test_a_setting_refused_by_the_check_leaves_nothing_written(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [1]}), OPTS)
    before = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    with pytest.raises(ValueError, match="hoodie.keep.min.commits"):
        hoodie.write_arrow(path, pa.table({"k": ["b"], "p": ["x"], "v": [2]}),
                           {**OPTS, "hoodie.keep.min.commits": "30", "hoodie.keep.max.commits": "30"})
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == before


def test_inline_partition_ttl_runs_with_the_settings_the_write_parsed(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Partition TTL's settings are parsed once per write too (the hook got the options and parsed
    them again after the commit)."""
    from hoodie.services.ttl.config import TTLConfig

    path = str(tmp_path / "t")
    o = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.compact.inline": "false",
         "hoodie.partition.ttl.inline": "true", "hoodie.partition.ttl.strategy.days.retain": "10"}
    hoodie.write_arrow(path, pa.table({"k": ["a"], "p": ["x"], "v": [1]}), o)
    counts: collections.Counter = collections.Counter()
    original = TTLConfig.__dict__["from_options"].__func__

    def counted(c: Any, *a: Any, **k: Any) -> Any:
        counts["TTLConfig"] += 1
        return original(c, *a, **k)

    monkeypatch.setattr(TTLConfig, "from_options", classmethod(counted))
    given: list[Any] = []
    real_ttl = inline.maybe_run_inline_ttl
    monkeypatch.setattr(inline, "maybe_run_inline_ttl", lambda t, cfg: given.append(cfg) or real_ttl(t, cfg))
    hoodie.write_arrow(path, pa.table({"k": ["b"], "p": ["y"], "v": [2]}), o)
    assert counts["TTLConfig"] == 1 and len(given) == 1 and isinstance(given[0], TTLConfig)
    assert hoodie.read_table(path).num_rows == 2  # nothing is 10 days old
