"""Structured Streaming into and out of hoodie tables, in the run's Spark session.

A crash between the table's commit and Spark's commit log is reproduced exactly by deleting the
batch's entry from the checkpoint's ``commits/`` folder: Spark then replays that batch on restart, as
it does after such a crash (the kills themselves are in test_streaming_kills.py, in child drivers).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.format.table import HoodieTable
from hoodie.services import streaming as S
from tests.hudi_rs import read_hudi_rs

pytestmark = pytest.mark.spark

SCHEMA = "id long, p string, ts long, v string"
OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.operation": "insert"}


def _add_file(src: Path, n: int, ids: range, ts: int = 1) -> None:
    src.mkdir(parents=True, exist_ok=True)
    ids = list(ids)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "p": ["a" if i % 2 else "b" for i in ids],
                             "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"v{ts}_{i}" for i in ids]}),
                   src / f"f{n:04d}.parquet")


def _stream(spark, src: Path):
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(src))


def _run(spark, src: Path, table: str, ck: Path, opts: dict = OPTS) -> object:
    import hoodie.spark as hs

    q = hs.write_stream(_stream(spark, src), table, opts, checkpoint_location=str(ck))
    q.processAllAvailable()
    q.stop()
    return q


def _forget_commit_log(ck: Path, batch: int) -> None:
    """Spark's commit log loses ``batch``: as after a crash right after the table committed it."""
    for name in (str(batch), f".{batch}.crc"):
        p = ck / "commits" / name
        if p.exists():
            p.unlink()


def _ids(table: str) -> list[int]:
    return sorted(hoodie.read_table(table, columns=["id"]).column("id").to_pylist())


def _checkpoints(table: str) -> list[tuple[str, str]]:
    tl = HoodieTable(table).timeline
    out = []
    for i in tl.completed_writes().instants:
        extra = tl.commit_metadata(i).extra_metadata
        if S.SINK_CHECKPOINT_KEY in extra:
            out.append((extra[S.SINK_CHECKPOINT_KEY], extra.get(S.QUERY_ID_KEY)))
    return out


def test_replayed_batch_is_skipped(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Insert-only micro-batches; Spark replays the last one (its commit log lost): the table holds every
    row once. Without the sink's lookup the replay inserts its 10 rows twice. (And no micro-batch
    registers the data source again: the batch's session, a clone of the query's, has it.)"""
    import hoodie.engine.datasource as DS

    src, table, ck = tmp_path / "src", str(tmp_path / "t"), tmp_path / "ck"
    for n in range(3):
        _add_file(src, n, range(n * 10, n * 10 + 10))
    DS.ensure_registered(spark)
    registered = []
    monkeypatch.setattr(DS, "register", lambda s: registered.append(s))
    q = _run(spark, src, table, ck)
    assert registered == []
    assert _ids(table) == list(range(30))
    cps = _checkpoints(table)
    assert [c for c, _ in cps] == ['{"default_single_writer":"0"}', '{"default_single_writer":"1"}',
                                   '{"default_single_writer":"2"}']
    assert {qid for _, qid in cps} == {str(q.id)}
    _forget_commit_log(ck, 2)
    _add_file(src, 3, range(30, 40))
    _run(spark, src, table, ck)
    assert _ids(table) == list(range(40))
    assert [c for c, _ in _checkpoints(table)][-1] == '{"default_single_writer":"3"}'
    assert len(_checkpoints(table)) == 4  # the replay of batch 2 wrote nothing
    theirs = read_hudi_rs(table)
    assert sorted(theirs.column("id").to_pylist()) == list(range(40))


def test_two_queries_keep_separate_ids(spark, tmp_path: Path) -> None:
    """Two queries into one table, each under its own identifier: each one's replay is recognised by its
    own batches (query b's batch 0 is not skipped because query a committed batch 1)."""
    table = str(tmp_path / "t")
    src_a, src_b, ck_a, ck_b = tmp_path / "sa", tmp_path / "sb", tmp_path / "cka", tmp_path / "ckb"
    for n in range(2):
        _add_file(src_a, n, range(n * 10, n * 10 + 10))
    _add_file(src_b, 0, range(100, 110))
    opts_a = {**OPTS, S.CHECKPOINT_IDENTIFIER.key: "a"}
    opts_b = {**OPTS, S.CHECKPOINT_IDENTIFIER.key: "b"}
    _run(spark, src_a, table, ck_a, opts_a)
    _run(spark, src_b, table, ck_b, opts_b)
    assert _ids(table) == list(range(20)) + list(range(100, 110))
    _forget_commit_log(ck_a, 1)
    _forget_commit_log(ck_b, 0)
    _add_file(src_b, 1, range(110, 120))
    _run(spark, src_a, table, ck_a, opts_a)
    _run(spark, src_b, table, ck_b, opts_b)
    assert _ids(table) == list(range(20)) + list(range(100, 120))
    assert [c for c, _ in _checkpoints(table)] == ['{"a":"0"}', '{"a":"1"}', '{"b":"0"}', '{"b":"1"}']


def test_query_restarted_after_the_table_was_compacted_cleaned_and_archived(spark, tmp_path: Path) -> None:
    """A query stops; another writer's upserts compact (inline, every commit), clean and archive the table
    until the query's commits are in the archived timeline; the query restarts from its checkpoint with
    its last batch's commit log lost: Spark replays that batch, the sink finds it in the archived timeline
    and skips it, and writes the next one. Every row once (hoodie and hudi-rs)."""
    from hoodie.interfaces.python_io import write_arrow
    from hoodie.services.archive import run_archival

    src, table, ck = tmp_path / "src", str(tmp_path / "t"), tmp_path / "ck"
    opts = {**OPTS, "hoodie.datasource.compaction.async.enable": "false", "hoodie.keep.min.commits": "2",
            "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    for n in range(2):
        _add_file(src, n, range(n * 10, n * 10 + 10))
    _run(spark, src, table, ck, opts)
    stream_commits = [i for i in HoodieTable(table).timeline.completed_writes().instants]
    other = {**opts, "hoodie.datasource.write.operation": "upsert", "hoodie.compact.inline": "true",
             "hoodie.compact.inline.max.delta.commits": "1"}
    for ts in range(2, 6):
        write_arrow(table, pa.table({"id": pa.array(range(5), pa.int64()), "p": ["a" if i % 2 else "b" for i in range(5)],
                                     "ts": pa.array([ts] * 5, pa.int64()), "v": [f"w{ts}"] * 5}), other)
    run_archival(table, opts)
    t = HoodieTable(table)
    assert all(t.timeline.get(i.timestamp) is None for i in stream_commits)  # archived
    actions = {i.action for i in t.timeline.instants}
    assert "clean" in actions and any(t.timeline.is_compaction_commit(i) for i in t.timeline.completed().instants)
    _forget_commit_log(ck, 1)
    _add_file(src, 2, range(20, 30))
    _run(spark, src, table, ck, opts)
    assert _ids(table) == list(range(30))
    assert sorted(read_hudi_rs(table).column("id").to_pylist()) == list(range(30))
    assert [c for c, _ in _checkpoints(table)] == ['{"default_single_writer":"2"}']  # 0 and 1 are archived


def test_second_query_under_the_same_identifier_fails_before_writing(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    table = str(tmp_path / "t")
    src_a, src_b = tmp_path / "sa", tmp_path / "sb"
    for n in range(2):
        _add_file(src_a, n, range(n * 10, n * 10 + 10))
    _add_file(src_b, 0, range(100, 110))
    _run(spark, src_a, table, tmp_path / "cka")
    q = hs.write_stream(_stream(spark, src_b), table, OPTS, checkpoint_location=str(tmp_path / "ckb"))
    with pytest.raises(Exception, match="hoodie.datasource.write.streaming.checkpoint.identifier"):
        q.awaitTermination(120)
    assert _ids(table) == list(range(20))


@pytest.mark.parametrize("name", ["hoodie", "hudi"])
def test_write_stream_format_refused(spark, tmp_path: Path, name: str) -> None:
    src = tmp_path / "src"
    _add_file(src, 0, range(5))
    q = _stream(spark, src).writeStream.format(name).option("checkpointLocation", str(tmp_path / "ck")) \
        .start(str(tmp_path / "t"))
    with pytest.raises(Exception, match="write_stream") as e:
        q.awaitTermination(120)
    assert "nothing was written" in str(e.value)
    assert not (tmp_path / "t").exists()


def test_write_stream_refuses_bad_arguments(spark, tmp_path: Path) -> None:
    import hoodie.spark as hs

    src = tmp_path / "src"
    _add_file(src, 0, range(5))
    with pytest.raises(S.StreamingError, match="checkpoint_location"):
        hs.write_stream(_stream(spark, src), str(tmp_path / "t"), OPTS, checkpoint_location="")
    with pytest.raises(S.StreamingError, match="hoodie.spark.write"):
        hs.write_stream(spark.read.parquet(str(src)), str(tmp_path / "t"), OPTS, checkpoint_location="x")
    with pytest.raises(ValueError, match="retry.count"):
        hs.write_stream(_stream(spark, src), str(tmp_path / "t"),
                        {**OPTS, "hoodie.datasource.write.streaming.retry.count": "many"}, checkpoint_location="x")
    assert not (tmp_path / "t").exists()


def test_failed_service_is_reported_and_the_stream_goes_on(spark, tmp_path: Path, monkeypatch, caplog) -> None:
    """Inline compaction after each micro-batch; it fails after batch 0's commit: the batch stays committed,
    the failure is logged and listed, and batch 1 is written and compacted."""
    import hoodie.spark as hs
    from hoodie.services import inline

    real = inline.maybe_compact_inline
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("disk full (injected)")
        return real(*args, **kwargs)

    monkeypatch.setattr(inline, "maybe_compact_inline", flaky)
    src, table = tmp_path / "src", str(tmp_path / "t")
    _add_file(src, 0, range(10))
    _add_file(src, 1, range(5, 15), ts=2)
    opts = {**OPTS, "hoodie.datasource.write.operation": "upsert", "hoodie.compact.inline": "true",
            "hoodie.compact.inline.max.delta.commits": "1"}
    with caplog.at_level(logging.ERROR, logger="hoodie.engine.stream"):
        q = hs.write_stream(_stream(spark, src), table, opts, checkpoint_location=str(tmp_path / "ck"))
        q.processAllAvailable()
        q.stop()
    failures = hs.service_failures(q)
    assert [(f.batch_id, "disk full" in f.error) for f in failures] == [(0, True)]
    assert any("failed; the stream goes on" in r.getMessage() for r in caplog.records)
    t = HoodieTable(table)
    assert len(t.timeline.completed_writes().instants) >= 3  # two deltacommits and a compaction commit
    got = hoodie.read_table(table, columns=["id", "ts"])
    assert dict(zip(got.column("id").to_pylist(), got.column("ts").to_pylist())) == \
        {i: (2 if i >= 5 else 1) for i in range(15)}


def test_source_reads_each_commit_once_across_restarts(spark, tmp_path: Path) -> None:
    """readStream.format('hoodie'): each micro-batch the rows of the writes completed in its range; a query
    restarted from its checkpoint neither misses nor repeats a commit, also across a compaction; a
    replayed range returns the same rows."""
    from hoodie.interfaces.python_io import write_arrow

    table, ck = str(tmp_path / "t"), tmp_path / "ck"
    wopts = {**OPTS, "hoodie.datasource.write.operation": "upsert", "hoodie.compact.inline": "true",
             "hoodie.compact.inline.max.delta.commits": "3"}

    def commit(ids: range, ts: int = 1) -> None:
        write_arrow(table, pa.table({"id": pa.array(list(ids), pa.int64()), "p": ["a"] * len(ids),
                                     "ts": pa.array([ts] * len(ids), pa.int64()), "v": ["x"] * len(ids)}), wopts)

    got: dict[int, list[int]] = {}

    def collect(df, batch_id):
        got[batch_id] = sorted(r.id for r in df.select("id").collect())

    def run():
        q = spark.readStream.format("hoodie").load(table).writeStream.foreachBatch(collect) \
            .option("checkpointLocation", str(ck)).start()
        q.processAllAvailable()
        q.stop()

    commit(range(0, 5))
    commit(range(5, 10))
    run()
    first = dict(got)
    assert sorted(i for ids in first.values() for i in ids) == list(range(10))
    commit(range(0, 3), ts=2)  # updates: a log file; the third deltacommit, after which compaction runs
    commit(range(10, 15))
    assert any(i.action == "commit" for i in HoodieTable(table).timeline.completed().instants)
    run()
    later = sorted(i for b, ids in got.items() if b not in first for i in ids)
    assert later == sorted([0, 1, 2] + list(range(10, 15)))  # the updated records and the new ones, once
    # Spark replays the last range when its commit log lost it: the same rows again, under the same id.
    last = max(got)
    rows = got.pop(last)
    _forget_commit_log(ck, last)
    run()
    assert got[last] == rows


def test_source_start_offsets(spark, tmp_path: Path) -> None:
    from hoodie.interfaces.python_io import write_arrow

    table = str(tmp_path / "t")

    def commit(ids: range) -> str:
        return write_arrow(table, pa.table({"id": pa.array(list(ids), pa.int64()), "p": ["a"] * len(ids),
                                            "ts": pa.array([1] * len(ids), pa.int64()),
                                            "v": ["x"] * len(ids)}), OPTS)

    t0 = commit(range(0, 5))
    commit(range(5, 10))

    def ids(start: str, ck: str) -> list[int]:
        got: list[int] = []
        q = spark.readStream.format("hoodie").option(S.START_OFFSET.key, start).load(table).writeStream \
            .foreachBatch(lambda df, _: got.extend(r.id for r in df.select("id").collect())) \
            .option("checkpointLocation", str(tmp_path / ck)).start()
        q.processAllAvailable()
        q.stop()
        return sorted(got)

    assert ids("earliest", "c1") == list(range(10))
    assert ids(t0, "c2") == list(range(5, 10))
    assert ids("latest", "c3") == []
    with pytest.raises(Exception, match="startOffset"):
        ids("yesterday", "c4")


def test_empty_micro_batch_and_ttl_per_batch(spark, tmp_path: Path) -> None:
    """A micro-batch without rows (an empty source file) does not stop the stream, and inline partition TTL
    runs after the micro-batches' commits: partitions older than the retention are gone once a batch
    committed after they expired."""
    import hoodie.spark as hs

    src, table = tmp_path / "src", str(tmp_path / "t")
    src.mkdir()
    day = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "p": ["2020-01-01", "2020-01-01", "2099-01-01"],
                    "ts": pa.array([1, 1, 1], pa.int64()), "v": ["a", "b", "c"]})
    pq.write_table(day, src / "f0000.parquet")
    pq.write_table(day.slice(0, 0), src / "f0001.parquet")
    pq.write_table(day.slice(2, 1).set_column(0, "id", pa.array([4], pa.int64())), src / "f0002.parquet")
    opts = {**OPTS, "hoodie.partition.ttl.inline": "true", "hoodie.partition.ttl.strategy.days.retain": "30",
            "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
            "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd"}
    q = hs.write_stream(_stream(spark, src), table, opts, checkpoint_location=str(tmp_path / "ck"))
    q.processAllAvailable()
    q.stop()
    assert q.exception() is None
    assert hs.service_failures(q) == []
    assert _ids(table) == [3, 4]  # 1 and 2 lived in 2020-01-01, expired by TTL after a commit


def test_failed_write_is_retried_without_duplicates(spark, tmp_path: Path, monkeypatch) -> None:
    """hoodie.datasource.write.streaming.retry.count: a write failing before its commit is retried; one
    reported as failed after its data committed (a broken writer) is found in the table by the retry's
    lookup and not written again; input the writer refuses is not retried; ignore.failed.batch=true drops
    the batch with an error and the stream goes on."""
    import hoodie.engine.write as EW
    import hoodie.spark as hs
    from hoodie.errors import WriteError

    real = EW.write
    calls: list[str] = []

    def flaky(df, path, opts, **kw):
        calls.append(opts[S.SINK_CHECKPOINT_KEY])
        n = len(calls)
        if n == 1:
            raise RuntimeError("executor lost (injected, before the commit)")
        if n == 2:
            real(df, path, opts, **kw)
            raise RuntimeError("connection reset (injected, after the commit)")
        return real(df, path, opts, **kw)

    monkeypatch.setattr(EW, "write", flaky)
    src, table = tmp_path / "src", str(tmp_path / "t")
    _add_file(src, 0, range(10))
    _add_file(src, 1, range(10, 20))
    opts = {**OPTS, "hoodie.datasource.write.streaming.retry.interval.ms": "10"}
    q = hs.write_stream(_stream(spark, src), table, opts, checkpoint_location=str(tmp_path / "ck"))
    q.processAllAvailable()
    q.stop()
    # batch 0: failed, retried and committed but reported failed, found on the next retry; batch 1: once.
    assert calls == ['{"default_single_writer":"0"}'] * 2 + ['{"default_single_writer":"1"}']
    assert _ids(table) == list(range(20))

    def refused(df, path, opts, **kw):
        calls.append("refused")
        raise WriteError("record key field 'id' is null (injected)")

    monkeypatch.setattr(EW, "write", refused)
    calls.clear()
    _add_file(src, 2, range(20, 30))
    q = hs.write_stream(_stream(spark, src), table, opts, checkpoint_location=str(tmp_path / "ck"))
    with pytest.raises(Exception, match="injected"):
        q.awaitTermination(120)
    assert calls == ["refused"]  # not retried

    def broken(df, path, opts, **kw):
        raise RuntimeError("still broken (injected)")

    monkeypatch.setattr(EW, "write", broken)
    q = hs.write_stream(_stream(spark, src), table,
                        {**opts, "hoodie.datasource.write.streaming.ignore.failed.batch": "true",
                         "hoodie.datasource.write.streaming.retry.count": "2"},
                        checkpoint_location=str(tmp_path / "ck"))
    q.processAllAvailable()
    q.stop()
    assert q.exception() is None
    assert _ids(table) == list(range(20))  # batch 2 dropped, as the option says


def test_source_refuses_a_range_the_cleaner_passed(spark, tmp_path: Path) -> None:
    """A replayed range read as of an end the cleaner no longer keeps (commits.retained=1, several
    copy-on-write rewrites since): refused with the way out, instead of a short read."""
    from hoodie.interfaces.python_io import write_arrow

    table, ck = str(tmp_path / "t"), tmp_path / "ck"
    wopts = {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
             "hoodie.datasource.write.operation": "upsert", "hoodie.cleaner.commits.retained": "1"}

    def commit(ts: int) -> None:
        write_arrow(table, pa.table({"id": pa.array([1, 2], pa.int64()), "p": ["a", "a"],
                                     "ts": pa.array([ts, ts], pa.int64()), "v": ["x", "y"]}), wopts)

    def run():
        q = spark.readStream.format("hoodie").load(table).writeStream.foreachBatch(lambda df, _: df.count()) \
            .option("checkpointLocation", str(ck)).start()
        q.processAllAvailable()
        q.stop()

    commit(1)
    run()
    _forget_commit_log(ck, 0)
    for ts in (2, 3, 4):
        commit(ts)
    assert any(i.action == "clean" for i in HoodieTable(table).timeline.instants)
    with pytest.raises(Exception, match="hoodie.cleaner.commits.retained"):
        run()


def test_async_compaction_beside_the_stream_by_default(spark, tmp_path: Path) -> None:
    """Hudi's sink default (hoodie.datasource.compaction.async.enable=true) on a merge-on-read table: each
    micro-batch only schedules; a background thread runs the plans, the stream never waits for a compaction,
    and the thread stops with the query. Every row is in the table once, as hudi-rs reads it too."""
    import hoodie.spark as hs

    src, table = tmp_path / "src", str(tmp_path / "t")
    for n in range(6):
        _add_file(src, n, range(n * 3, n * 3 + 6), ts=n + 1)  # overlapping keys: updates in log files
    opts = {**OPTS, "hoodie.datasource.write.operation": "upsert", "hoodie.compact.inline.max.delta.commits": "2",
            "hoodie.compaction.async.interval.seconds": "30"}
    q = hs.write_stream(_stream(spark, src), table, opts, checkpoint_location=str(tmp_path / "ck"))
    q.processAllAvailable()
    q.stop()
    hs.stop_services(q)
    assert hs.service_failures(q) == []
    t = HoodieTable(table)
    compactions = [i for i in t.timeline.completed().by_actions("commit").instants if t.timeline.is_compaction_commit(i)]
    assert compactions, "no compaction ran beside the stream"
    # Every compaction ran in the background: no write's own instant window holds one (the writes only
    # scheduled), and the stream went on while the plans were pending.
    deltas = t.timeline.completed().by_actions("deltacommit").instants
    assert len(deltas) == 6
    expected = {i: max(n + 1 for n in range(6) if n * 3 <= i < n * 3 + 6) for i in range(21)}
    got = hoodie.read_table(table, columns=["id", "ts"])
    assert dict(zip(got.column("id").to_pylist(), got.column("ts").to_pylist())) == expected
    rs = read_hudi_rs(table)
    assert dict(zip(rs.column("id").to_pylist(), rs.column("ts").to_pylist())) == expected


def test_inline_compaction_keeps_the_stream_in_charge_and_async_off_runs_nothing_beside_it(spark, tmp_path: Path) -> None:
    """hoodie.compact.inline=true (or async off) means no background thread: Hudi's rule."""
    from hoodie.engine.stream import HoodieStreamSink

    assert HoodieStreamSink(str(tmp_path / "t"), {**OPTS, "hoodie.compact.inline": "true"}).async_compaction is False
    assert HoodieStreamSink(str(tmp_path / "t"), {**OPTS, "hoodie.datasource.compaction.async.enable": "false"}
                            ).async_compaction is False
    sink = HoodieStreamSink(str(tmp_path / "t"), OPTS)
    assert sink.async_compaction is True and sink._merge_on_read()
    cow = HoodieStreamSink(str(tmp_path / "c"), {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"})
    assert not cow._merge_on_read()


def test_a_failed_async_compaction_round_is_reported_once(tmp_path: Path) -> None:
    """A background compaction round that failed is listed by service_failures (service "async compaction"),
    once, with the micro-batch after which it was seen; the stream goes on."""
    import hoodie.spark as hs
    from hoodie.engine.stream import HoodieStreamSink
    from hoodie.services.compaction import CompactionAsyncService

    sink = HoodieStreamSink(str(tmp_path / "t"), OPTS)
    sink.compactor = CompactionAsyncService(str(tmp_path / "t"), {})
    sink._last_batch = 4
    sink.compactor._error(RuntimeError("disk full (injected)"))
    sink._report_compactor_errors("query-x")
    sink._report_compactor_errors("query-x")
    failures = hs.service_failures("query-x")
    assert [(f.batch_id, f.service, "disk full" in f.error) for f in failures] == [(4, "async compaction", True)]
