"""Deterministic tests at the timeline's boundaries that mutation testing found unguarded (issue 21,
MUTATION.md): filters, states and transitions, damaged Avro files and their fix, the two layouts and
their completion times, the metadata-table guard on completions."""

from __future__ import annotations


import pytest

from tests.format.boundaries_support import P


def _timeline_of(tmp_path, names: list[str]):
    from hoodie.format.timeline import active as T
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    for name in names:
        st.write_bytes(f".hoodie/{name}", b"")
    st.write_bytes(".hoodie/hoodie.properties", b"")
    return T.Timeline.load(st)


def test_timeline_filters_at_their_boundaries(tmp_path) -> None:
    """Ranges are exact: before_or_on includes its instant, after excludes it, between is (begin, end]."""
    from hoodie.format.timeline import instant as I

    tl = _timeline_of(tmp_path, [
        P + "1.deltacommit.requested", P + "1.deltacommit.inflight", P + "1.deltacommit",
        P + "2.deltacommit.requested",
        P + "3.logcompaction.requested",
        P + "4.replacecommit.requested", P + "4.replacecommit.inflight",
        P + "5.compaction.requested", P + "5.compaction.inflight",
        P + "6.clean.requested", P + "6.clean.inflight", P + "6.clean",
        P + "7.compaction.requested", P + "7.compaction.inflight", P + "7.commit",
        P + "8.compaction.requested", P + "8.commit",
    ])
    assert tl.is_compaction_commit(tl.get(P + "8"))  # the plan file decides, not the inflight one
    tl = tl.before_or_on(P + "7")
    assert tl.timestamps == [P + "1", P + "2", P + "3", P + "4", P + "5", P + "6", P + "7"]
    assert len(tl) == 7 and bool(tl) and not bool(tl.filter(lambda i: False))
    assert [i.state for i in tl] == [I.State.COMPLETED, I.State.REQUESTED, I.State.REQUESTED, I.State.INFLIGHT,
                                     I.State.INFLIGHT, I.State.COMPLETED, I.State.COMPLETED]
    assert tl.first().timestamp == P + "1" and tl.last().timestamp == P + "7"
    assert tl.filter(lambda i: False).first() is None and tl.filter(lambda i: False).last() is None
    assert tl.before_or_on(P + "4").timestamps == [P + "1", P + "2", P + "3", P + "4"]
    assert tl.after(P + "4").timestamps == [P + "5", P + "6", P + "7"]
    assert tl.between(P + "2", P + "5").timestamps == [P + "3", P + "4", P + "5"]
    assert tl.between(P + "1", P + "1").timestamps == []
    assert tl.completed().timestamps == [P + "1", P + "6", P + "7"]
    assert tl.pending().timestamps == [P + "2", P + "3", P + "4", P + "5"]
    assert tl.completed_writes().timestamps == [P + "1", P + "7"]
    assert tl.commits().timestamps == [P + "1", P + "2", P + "3", P + "4", P + "5", P + "7"]
    assert tl.pending_compactions().timestamps == [P + "5"]
    assert tl.pending_log_compactions().timestamps == [P + "3"]
    assert tl.pending_replaces().timestamps == [P + "4"]
    assert tl.by_actions(I.CLEAN, I.REPLACE_COMMIT).timestamps == [P + "4", P + "6"]
    assert tl.is_compaction_commit(tl.get(P + "7")) and not tl.is_compaction_commit(tl.get(P + "1"))
    assert not tl.is_compaction_commit(tl.get(P + "5"))
    assert tl.contains(P + "3") and not tl.contains(P + "8")
    assert tl.get(P + "8") is None and tl.get(P + "5").state == I.State.INFLIGHT
    assert tl.has_file(P + "2.deltacommit.requested") and not tl.has_file(P + "2.deltacommit")
    assert repr(tl.filter(lambda i: i.timestamp == P + "1")) == f"Timeline(['[{P}1__deltacommit__COMPLETED]'])"


def test_timeline_get_prefers_the_highest_state(tmp_path) -> None:
    """get() on a timeline that was not collapsed returns the most advanced state of the instant."""
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    insts = [I.Instant(P + "1", I.DELTA_COMMIT, st) for st in (I.State.INFLIGHT, I.State.COMPLETED, I.State.REQUESTED)]
    assert T.Timeline(insts).get(P + "1").state == I.State.COMPLETED
    assert T.Timeline(insts[::-1]).get(P + "1").state == I.State.COMPLETED


def test_timeline_reads_need_storage_and_name_the_file(tmp_path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.storage import Storage

    with pytest.raises(T.TimelineError, match="^this timeline was not loaded from storage$"):
        T.Timeline([I.Instant(P + "1", I.COMMIT)]).read_file(P + "1.commit")
    st = Storage(str(tmp_path))
    st.write_bytes(".hoodie/20240101000000001.commit", b"{not json")
    tl = T.Timeline.load(st)
    with pytest.raises(ValueError, match=r"\.hoodie/20240101000000001\.commit"):
        tl.commit_metadata(tl.get(P + "1"))
    assert tl.read_file(P + "1.commit") == b"{not json"
    # Filtered timelines keep their storage and file listing.
    assert tl.completed().read_file(P + "1.commit") == b"{not json"
    assert tl.completed().has_file(P + "1.commit") and not tl.pending().has_file(P + "2.commit")


def test_timeline_transitions_refuse_the_wrong_state(tmp_path) -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.storage import Storage

    st = Storage(str(tmp_path))
    with pytest.raises(T.TimelineError, match=r"\[20240101000000001__deltacommit__INFLIGHT\] is not requested"):
        T.transition_to_inflight(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.INFLIGHT))
    with pytest.raises(T.TimelineError, match="has no requested file; cannot move it to inflight"):
        T.transition_to_inflight(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.REQUESTED))
    with pytest.raises(T.TimelineError, match=r"\[20240101000000001__deltacommit__REQUESTED\] is not inflight"):
        T.transition_to_complete(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.REQUESTED), b"{}")
    with pytest.raises(T.TimelineError, match="has no inflight file; cannot complete it"):
        T.transition_to_complete(st, I.Instant(P + "1", I.DELTA_COMMIT, I.State.INFLIGHT), b"{}")
    bare = T.transition_to_inflight(st, T.create_requested(st, P + "3", I.DELTA_COMMIT))
    assert st.read_bytes(f".hoodie/{P}3.deltacommit.requested") == b"" == st.read_bytes(f".hoodie/{bare.file_name}")
    req = T.create_requested(st, P + "2", I.COMPACTION, b"plan")
    inf = T.transition_to_inflight(st, req, b"inflight")
    done = T.transition_to_complete(st, inf, b"{}")
    assert (done.action, done.state) == (I.COMMIT, I.State.COMPLETED)
    assert st.read_bytes(".hoodie/20240101000000002.compaction.requested") == b"plan"
    assert st.read_bytes(".hoodie/20240101000000002.compaction.inflight") == b"inflight"
    with pytest.raises(T.TimelineError, match=rf"\.hoodie/{P}2\.compaction\.requested already exists: another "
                                              "writer used this instant; retry with a new instant time"):
        T.create_requested(st, P + "2", I.COMPACTION)
    T.delete_instant_files(st, P + "2", I.COMPACTION, [I.State.INFLIGHT, I.State.REQUESTED])
    assert [i.timestamp for i in T.Timeline.load(st)] == [P + "2", P + "3"]
    assert not st.exists(f".hoodie/{P}2.compaction.requested") and st.exists(f".hoodie/{P}2.commit")


def test_damaged_timeline_file_fix_per_action_and_state() -> None:
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline.active import DamagedTimelineFileError, damaged_file_fix

    base = "file:///t"
    ts = P + "1"

    def fix(action: str, state: "I.State") -> str:
        return damaged_file_fix(base, I.Instant(ts, action, state))

    backup = "restore it from a backup: it records a completed action and cannot be rebuilt"
    assert fix(I.COMPACTION, I.State.COMPLETED) == fix(I.CLEAN, I.State.COMPLETED) == backup
    assert fix(I.COMPACTION, I.State.REQUESTED) == (
        f"remove the pending compaction with `hoodie rollback {base} {ts}` (its outputs are deleted, logs written on "
        "top of it move back to their previous file slices), then schedule a new one")
    assert fix(I.REPLACE_COMMIT, I.State.INFLIGHT) == f"roll the pending replacecommit back with `hoodie rollback {base} {ts}`"
    assert fix(I.CLEAN, I.State.REQUESTED) == (
        "a pending clean holds no data: the next clean (`hoodie clean`) drops it and plans again "
        f"(or delete .hoodie/{ts}.clean.requested and .hoodie/{ts}.clean.inflight)")
    assert fix(I.ROLLBACK, I.State.INFLIGHT) == (
        f"if .hoodie/{ts}.rollback.inflight does not exist the rollback never started and the file can be deleted; "
        "otherwise restore it from a backup")
    assert fix(I.SAVEPOINT, I.State.INFLIGHT) == (
        "restore it from a backup, or remove the pending instant with the tool that created it")
    inst = I.Instant(ts, I.CLEAN, I.State.REQUESTED)
    e = DamagedTimelineFileError(f"{base}/.hoodie/x", inst, "empty", "do this")
    assert str(e) == f"{base}/.hoodie/x is damaged (empty); do this" and isinstance(e, ValueError)
    assert (e.path, e.instant, e.problem, e.fix) == (f"{base}/.hoodie/x", inst, "empty", "do this")


def test_timeline_layout_from_properties_and_what_each_layout_writes(tmp_path) -> None:
    """Layout 2 (table versions 8/9, or said explicitly) lives in .hoodie/timeline, names completed
    instants by their completion time and refuses JSON commit metadata; layout 1 takes it as is."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline.commit_metadata import CommitMetadata

    st = Storage(str(tmp_path))
    assert T.layout_of(st) == T.TimelineLayout(1, "LOCAL")  # no hoodie.properties yet

    def layout(props: str) -> "T.TimelineLayout":
        st.write_bytes(".hoodie/hoodie.properties", props.encode())
        return T.layout_of(st)

    assert layout("hoodie.table.version=6\n") == T.TimelineLayout(1, "LOCAL")
    st.write_bytes(".hoodie/hoodie.properties", "#caf\u00e9\nhoodie.table.version=9\n".encode("latin-1"))
    assert T.layout_of(st).version == 2  # a byte that is not UTF-8 (in a comment) does not stop the read
    assert layout("hoodie.table.version=8\nhoodie.table.timeline.timezone=utc\n") == T.TimelineLayout(2, "UTC")
    assert layout("hoodie.table.version=9\n") == T.TimelineLayout(2, "LOCAL")
    assert layout("hoodie.table.version=9\nhoodie.timeline.layout.version=1\n").version == 1
    assert layout("hoodie.table.version=6\nhoodie.timeline.layout.version=2\n").version == 2
    v1, v2 = T.TimelineLayout(1), T.TimelineLayout(2)
    assert (v1.folder, v1.path("x"), v2.folder, v2.path("x")) == (".hoodie", ".hoodie/x", ".hoodie/timeline",
                                                                  ".hoodie/timeline/x")
    json_md = b'{"partitionToWriteStats": {}}'
    done = I.Instant(P + "1", I.DELTA_COMMIT, I.State.COMPLETED)
    inflight = I.Instant(P + "1", I.COMPACTION, I.State.INFLIGHT)
    assert v1.content(done, json_md) == json_md
    with pytest.raises(T.TimelineError, match=rf"^\[{P}1__deltacommit__COMPLETED\] of a table-version 8/9 table must "
                                              "be written as Avro commit metadata, not JSON; pass the CommitMetadata "
                                              "object so the timeline serialises it$"):
        v2.content(done, json_md)
    with pytest.raises(T.TimelineError):
        v2.content(inflight, json_md)  # a compaction completes as a commit: a write action too
    requested = I.Instant(P + "1", I.DELTA_COMMIT, I.State.REQUESTED)
    clean = I.Instant(P + "1", I.CLEAN, I.State.COMPLETED)
    assert v2.content(requested, json_md) == json_md and v2.content(clean, json_md) == json_md
    assert v2.content(done, b"") == b""
    md = CommitMetadata(operation_type="INSERT")
    assert v1.content(done, md) == md.to_json_bytes()
    # Avro container files differ by their random sync marker: compare the record schema written.
    replace = I.Instant(P + "1", I.REPLACE_COMMIT, I.State.COMPLETED)
    for inst, name in ((done, b'"HoodieCommitMetadata"'), (replace, b'"HoodieReplaceCommitMetadata"'),
                       (replace.with_state(I.State.INFLIGHT), b'"HoodieCommitMetadata"')):
        data = v2.content(inst, md)
        assert data.startswith(b"Obj\x01") and name in data
    assert b"HoodieReplaceCommitMetadata" not in v2.content(done, md)


def test_layout2_completion_times_pass_every_name_on_the_timeline(tmp_path) -> None:
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    st = Storage(str(tmp_path))
    st.write_bytes(".hoodie/hoodie.properties", b"hoodie.table.version=9\nhoodie.table.timeline.timezone=UTC\n")
    lay = T.layout_of(st)
    # A folder sorting first, with a time in its name: not an instant, and the listing goes on past it.
    (tmp_path / ".hoodie" / "timeline" / "1_29990101000000000").mkdir(parents=True)
    st.write_bytes(".hoodie/timeline/20990101000000001_20990101000000009.deltacommit", b"")
    assert "20990101000000009" < T.completion_time(st, lay, "20990101000000002") < "2999"
    st.write_bytes(".hoodie/timeline/20990101000000020.clean.requested", b"")  # the newest name: pending
    assert "20990101000000020" < T.completion_time(st, lay, "20990101000000002") < "2999"
    assert T.completion_time(st, lay, "20990201000000000") > "20990201000000000"
    inflight = T.transition_to_inflight(st, T.create_requested(st, "20990101000000003", I.COMMIT))
    done = T.transition_to_complete(st, inflight, b"")
    assert done.completion > "20990101000000020" and st.exists(f".hoodie/timeline/{done.file_name}")
    st.write_bytes(".hoodie/timeline/20990101000000004_20990101000000030.commit", b"")  # another commit
    T.delete_instant_files(st, "20990101000000003", I.COMMIT, [I.State.COMPLETED, I.State.INFLIGHT])
    T.delete_instant_files(st, "20990101000000001", I.COMMIT, [I.State.COMPLETED])  # another action: kept
    names = sorted(s.name for s in st.list_dir(".hoodie/timeline") if not s.is_dir)
    assert names == ["20990101000000001_20990101000000009.deltacommit", "20990101000000003.commit.requested",
                     "20990101000000004_20990101000000030.commit", "20990101000000020.clean.requested"]
    assert T.instant_file_path(st, inflight) == ".hoodie/timeline/20990101000000003.inflight"
    # A requested state is deleted by name, never by the completed-file listing.
    T.delete_instant_files(st, "20990101000000004", I.COMMIT, [I.State.REQUESTED])
    assert st.exists(".hoodie/timeline/20990101000000004_20990101000000030.commit")
    # A completed compaction is a commit on the timeline.
    c = T.transition_to_inflight(st, T.create_requested(st, "20990101000000005", I.COMPACTION))
    c_done = T.transition_to_complete(st, c, b"")
    assert c_done.action == I.COMMIT
    T.delete_instant_files(st, "20990101000000005", I.COMPACTION, [I.State.COMPLETED])
    assert not st.exists(f".hoodie/timeline/{c_done.file_name}")
    assert st.exists(".hoodie/timeline/20990101000000005.compaction.requested")


def test_a_completion_that_skipped_the_metadata_table_is_refused(tmp_path) -> None:
    """The format layer keeps no callback into the services: it refuses a completion that did not record
    the instant in the table's metadata table first (hoodie.services.commit.commit does, and says so),
    before the completed file is written; a table without a metadata table completes either way."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    st = Storage(str(tmp_path))

    def inflight(n: int) -> "I.Instant":
        return T.transition_to_inflight(st, T.create_requested(st, P + str(n), I.DELTA_COMMIT))

    assert T.transition_to_complete(st, inflight(1), b"{}").is_completed  # no metadata table: nothing to refuse
    st.write_bytes(T.METADATA_PROPS, b"hoodie.table.version=6\n")
    pending = T.prepare_completion(st, inflight(2), b"{}")
    with pytest.raises(T.TimelineError, match=rf"^\[{P}2__deltacommit__INFLIGHT\] of {st.uri()} is completing outside "
                                              "hoodie's commit path, which keeps the table's metadata table in step "
                                              "with its timeline; commit through hoodie.services.transaction.Transaction$"):
        T.write_completion(pending, metadata_table_updated=False)
    with pytest.raises(T.TimelineError, match="outside hoodie's commit path"):
        T.transition_to_complete(st, inflight(3), b"{}")
    assert not st.exists(f".hoodie/{P}2.deltacommit") and not st.exists(f".hoodie/{P}3.deltacommit")
    assert T.write_completion(pending, metadata_table_updated=True).is_completed
    assert st.exists(f".hoodie/{P}2.deltacommit")


def test_timeline_reads_plans_and_names_a_damaged_one(tmp_path) -> None:
    """read_avro names the instant and the problem; the log compaction plan is read from its own
    requested file; with_instants orders what it is given and keeps the file listing."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T
    from hoodie.format.timeline import plans

    st = Storage(str(tmp_path))
    op = plans.compaction_operation(P + "0", None, [".f1_" + P + "0.log.1_1-0-1"], "f1", "a", {})
    T.create_requested(st, P + "1", I.LOG_COMPACTION,
                       plans.write_avro_metadata("HoodieCompactionPlan", plans.compaction_plan([op])))
    T.create_requested(st, P + "2", I.CLEAN, b"not avro")
    tl = T.Timeline.load(st)
    (got,) = tl.log_compaction_plan(P + "1").operations
    assert got.file_group == ("a", "f1") and got.delta_file_names == (".f1_" + P + "0.log.1_1-0-1",)
    bad = tl.get(P + "2")
    with pytest.raises(T.DamagedTimelineFileError) as e:
        tl.read_avro(bad)
    assert e.value.instant == bad and e.value.problem and e.value.problem != "None"
    assert e.value.path == st.uri(f".hoodie/{bad.file_name}") and e.value.problem in str(e.value)
    mixed = tl.with_instants([tl.get(P + "2"), tl.get(P + "1")])
    assert mixed.timestamps == [P + "1", P + "2"] and mixed.has_file(bad.file_name)


def test_an_instant_can_start_inflight_without_a_requested_file(tmp_path) -> None:
    """Hudi's savepoint action: ``<t>.savepoint.inflight`` then ``<t>.savepoint``, create-only."""
    from hoodie.format.storage import Storage
    from hoodie.format.timeline import instant as I
    from hoodie.format.timeline import active as T

    st = Storage(str(tmp_path))
    inf = T.create_inflight(st, P + "1", I.SAVEPOINT, b"content")
    assert (inf.timestamp, inf.action, inf.state) == (P + "1", I.SAVEPOINT, I.State.INFLIGHT)
    assert st.read_bytes(f".hoodie/{P}1.savepoint.inflight") == b"content"
    assert not st.exists(f".hoodie/{P}1.savepoint.requested")
    with pytest.raises(T.TimelineError, match="already exists"):
        T.create_inflight(st, P + "1", I.SAVEPOINT)
    assert T.create_inflight(st, P + "2", I.SAVEPOINT).state == I.State.INFLIGHT
    assert st.read_bytes(f".hoodie/{P}2.savepoint.inflight") == b""
    st.write_bytes(".hoodie/hoodie.properties", b"hoodie.table.version=9\n")
    T.create_inflight(st, P + "3", I.SAVEPOINT)
    assert st.exists(f".hoodie/timeline/{P}3.savepoint.inflight")
    with pytest.raises(T.TimelineError, match="must be written as Avro commit metadata"):
        T.create_inflight(st, P + "4", I.COMMIT, b'{"partitionToWriteStats": {}}')  # the layout's rules hold
    T.create_requested(st, P + "5", I.COMMIT, b'{"partitionToWriteStats": {}}')  # a requested file may be JSON
    assert st.read_bytes(f".hoodie/timeline/{P}5.commit.requested") == b'{"partitionToWriteStats": {}}'


def test_layout1_timeline_ignores_names_only_layout2_has(tmp_path) -> None:
    """A version-6 timeline (``.hoodie/``) is parsed with Hudi 0.x's names: a completed instant named
    the 1.x way (``<instant>_<completion>.commit``) or a 1.x action (``clustering``) is not an instant of it."""
    tl = _timeline_of(tmp_path, [P + "1.commit", P + "2_" + P + "3.commit", P + "4.clustering.requested"])
    assert tl.timestamps == [P + "1"]
