"""Partial compactions in a row: a remaining log file that is itself a link of an earlier partial
compaction. Found by the concurrency test (tests/prove): the second compaction linked to the first
one's link, the cleaner then removed the original the chain ended in, and the rows of that log
file (a delete among them) were lost. Links now point at the original file, and the cleaner keeps
every file a live link reaches."""

from __future__ import annotations

import os
from pathlib import Path

from hoodie import write_arrow
from hoodie.services.clean import run_clean
from hoodie.services.compaction import run_compaction, schedule_compaction
from tests.hudi_rs import read_hudi_rs
from tests.prove.crash_child import batch
from tests.prove.crash_harness import EVENT_TIME_STRATEGY, Model, Setup, _rows, snapshot

SETUP = Setup("MERGE_ON_READ", ordering=True, block_format="avro", commits_retained=10)
PART = "2999-01-01"  # part_of(k) for k % 4 == 2


def _write(path: str, model: Model, kind: str, rows: list) -> None:
    write_arrow(path, batch(rows), {**SETUP.write_options(kind), "hoodie.clean.automatic": "false"})
    model.apply(kind, rows)


def _compact(path: str, threshold: int) -> str:
    opts = {"hoodie.compaction.strategy": EVENT_TIME_STRATEGY, "hoodie.compaction.event.time.threshold": str(threshold),
            "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER", "hoodie.payload.event.time.field": "ts",
            "hoodie.compaction.partial.link.mode": "symlink"}
    c = schedule_compaction(path, opts)
    assert c is not None
    (res,) = run_compaction(path, c, opts)
    assert res.links, "the compaction should be partial"
    return c


def _dangling(path: str) -> list[str]:
    return [str(p) for p in Path(path).rglob(".*.log.*") if p.is_symlink() and not p.exists()]


def test_second_partial_compaction_links_to_the_original_and_clean_keeps_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    model = Model(True)
    _write(path, model, "insert", [[2, PART, 1, 1], [6, PART, 1, 2], [10, PART, 1, 3]])
    _write(path, model, "upsert", [[2, PART, 3, 20]])    # event time 3: compacted by the first compaction
    _write(path, model, "upsert", [[6, PART, 10, 60]])   # 10: linked by the first, compacted by the second
    _write(path, model, "delete", [[10, PART, 45, 0]])   # 45: linked by both compactions
    _compact(path, threshold=5)
    _compact(path, threshold=20)
    links = [p for p in Path(path, PART).iterdir() if p.is_symlink()]
    assert links
    for link in links:
        assert not Path(link.parent, os.readlink(link)).is_symlink(), f"{link.name} points at another link"
    # The cleaner keeps one file version: both older slices go, except what live links reach.
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    assert _dangling(path) == []
    assert snapshot(path) == model.snapshot() == _rows(read_hudi_rs(path))


def _two_partial_compactions(path: str) -> Model:
    model = Model(True)
    _write(path, model, "insert", [[2, PART, 1, 1], [6, PART, 1, 2], [10, PART, 1, 3]])
    _write(path, model, "upsert", [[2, PART, 3, 20]])
    _write(path, model, "upsert", [[6, PART, 10, 60]])
    _write(path, model, "delete", [[10, PART, 45, 0]])
    _compact(path, threshold=5)
    _compact(path, threshold=20)
    return model


def test_clean_keeps_every_file_of_an_existing_link_chain(tmp_path: Path) -> None:
    """Tables compacted before the fix have chains (link -> link -> original): the cleaner keeps the
    whole chain while the first link is live."""
    path = str(tmp_path / "t")
    model = _two_partial_compactions(path)
    folder = Path(path, PART)
    chained = 0
    for link in [p for p in folder.iterdir() if p.is_symlink()]:
        # Re-point each second-generation link at the first-generation link that names the same file.
        for middle in [p for p in folder.iterdir() if p.is_symlink() and p != link]:
            if os.readlink(middle) == os.readlink(link) and middle.name < link.name:
                link.unlink()
                link.symlink_to(middle.name)
                chained += 1
    assert chained == 1
    assert snapshot(path) == model.snapshot()
    run_clean(path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"})
    assert _dangling(path) == []
    assert snapshot(path) == model.snapshot() == _rows(read_hudi_rs(path))


def test_a_dangling_log_link_fails_reads_naming_it(tmp_path: Path) -> None:
    """pyarrow's listing leaves dangling symlinks out; a log file must not drop out of a slice in
    silence, so the listing keeps them and the read fails naming the file."""
    import pytest

    path = str(tmp_path / "t")
    _two_partial_compactions(path)
    link = max((p for p in Path(path, PART).iterdir() if p.is_symlink()), key=lambda p: p.name)  # newest slice
    Path(link.parent, os.readlink(link)).unlink()  # the original, deleted by hand
    with pytest.raises(FileNotFoundError, match=link.name):
        snapshot(path)
