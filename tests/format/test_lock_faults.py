"""The table lock on S3 when the store fails (issue 12, items 17 and 18), on moto in-process: lease
renewals retry HTTP 503s, throttling and timeouts; a holder whose lock was taken never commits; a
waiter's error names the lease setting; and a model test of random faults, steals and crashes."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from typing import Any, Callable, Iterator, Optional

import boto3
import botocore.exceptions
import pyarrow as pa
import pytest
from moto import mock_aws

from hoodie.format import lock as L
from hoodie import write_arrow
from hoodie.format.lock import LockError, TableLock, lock_status, table_lock
from hoodie.format.storage import Storage
from hoodie.format.table import HoodieTable
from tests.helpers import examples

BUCKET = "hoodie-lock-faults"
S3_OPTIONS = {"region": "us-east-1", "access_key": "testing", "secret_key": "testing"}


def _error(op: str, kind: str) -> Exception:
    if kind == "503":
        return botocore.exceptions.ClientError(
            {"Error": {"Code": "ServiceUnavailable", "Message": "injected"},
             "ResponseMetadata": {"HTTPStatusCode": 503}}, op)
    if kind == "slowdown":
        return botocore.exceptions.ClientError(
            {"Error": {"Code": "SlowDown", "Message": "injected"}, "ResponseMetadata": {"HTTPStatusCode": 503}}, op)
    if kind == "conflict":
        return botocore.exceptions.ClientError(
            {"Error": {"Code": "ConditionalRequestConflict", "Message": "injected"},
             "ResponseMetadata": {"HTTPStatusCode": 409}}, op)
    if kind == "denied":
        return botocore.exceptions.ClientError(
            {"Error": {"Code": "AccessDenied", "Message": "injected"}, "ResponseMetadata": {"HTTPStatusCode": 403}}, op)
    if kind == "connect-timeout":
        return botocore.exceptions.ConnectTimeoutError(endpoint_url="https://s3.injected")
    if kind == "read-timeout":
        return botocore.exceptions.ReadTimeoutError(endpoint_url="https://s3.injected")
    raise AssertionError(kind)


class FaultyClient:
    """A boto3 S3 client whose calls fail as ``plan(op, kwargs)`` says: None (no fault), a failure
    before the request reaches the store ("503", "slowdown", "conflict", "connect-timeout"), or
    "read-timeout", which lets the request land and loses its answer."""

    def __init__(self, client: Any, plan: Callable[[str, dict], Optional[str]]) -> None:
        self.client = client
        self.plan = plan

    def __getattr__(self, op: str) -> Any:
        real = getattr(self.client, op)

        def call(**kw: Any) -> Any:
            kind = self.plan(op, kw)
            if kind is None:
                return real(**kw)
            if kind == "read-timeout":
                real(**kw)
            raise _error(op, kind)

        return call


@pytest.fixture()
def s3(moto_module: Any) -> Iterator[dict]:
    """Storage options for the module's moto bucket, emptied after each test."""
    yield dict(S3_OPTIONS)
    for o in moto_module.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        moto_module.delete_object(Bucket=BUCKET, Key=o["Key"])


def _raw() -> Any:
    return boto3.client("s3", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")


def _faults_on(monkeypatch: pytest.MonkeyPatch, plan: Callable[[str, dict], Optional[str]]) -> None:
    """Every lock client made from now on injects ``plan``'s faults."""
    real = boto3.client
    monkeypatch.setattr(boto3, "client", lambda *a, **kw: FaultyClient(real(*a, **kw), plan))


def _renewals_fail(n: int, kind: str = "503") -> Callable[[str, dict], Optional[str]]:
    left = [n]

    def plan(op: str, kw: dict) -> Optional[str]:
        if op == "put_object" and "IfMatch" in kw and left[0] > 0:
            left[0] -= 1
            return kind
        return None

    return plan


def test_s3_lease_renewal_retries_failed_requests(s3: dict, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """One HTTP 503 on a renewal killed the heartbeat for good: the lease expired under a live holder
    and a second writer got in. Renewals now retry with backoff inside the lease."""
    _faults_on(monkeypatch, _renewals_fail(3))
    st = Storage(f"s3://{BUCKET}/t", s3)
    opts = {L.VALIDITY_SECS: "3", L.HEARTBEAT_SECS: "1"}
    with caplog.at_level(logging.WARNING, logger="hoodie.lock"), table_lock(st, opts, "renewing writer"):
        time.sleep(3.6)  # past the first lease: only renewals (3 of them failed) keep it
        status = lock_status(st, opts)
        assert status is not None and status["stale"] is None, status
        L.check_still_held(st)  # the holder may commit
    assert "after 3 failed attempt(s)" in caplog.text
    assert lock_status(st, opts) is None


@pytest.mark.parametrize("kind", ["slowdown", "connect-timeout", "read-timeout", "conflict"])
def test_s3_lease_renewal_retries_every_transient_failure(s3: dict, monkeypatch: pytest.MonkeyPatch,
                                                          kind: str) -> None:
    """Throttling, timeouts before and after the request landed, and conflicting writes: the
    holder keeps its lock (a renewal that landed unseen is recognised by its nonce)."""
    _faults_on(monkeypatch, _renewals_fail(2, kind))
    st = Storage(f"s3://{BUCKET}/t", s3)
    with table_lock(st, {L.VALIDITY_SECS: "30", L.HEARTBEAT_SECS: "10"}, "writer"):
        for _ in range(2):
            L.check_still_held(st)  # each check renews the lease, through the injected failures
        assert json.loads(_raw().get_object(Bucket=BUCKET, Key="t/.hoodie/lock")["Body"].read())["what"] == "writer"
    assert lock_status(st) is None


def test_s3_heartbeat_that_cannot_renew_stops_commits(s3: dict, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """A renewal refused for good (access denied: say, the credentials' rights were revoked) ends the
    heartbeat with an error in the log, and the holder's commits are refused: its lease will run out."""
    _faults_on(monkeypatch, lambda op, kw: "denied" if op == "put_object" and "IfMatch" in kw else None)
    st = Storage(f"s3://{BUCKET}/t", s3)
    lock = TableLock(st, {L.VALIDITY_SECS: "3", L.HEARTBEAT_SECS: "1"}, "writer")
    with caplog.at_level(logging.ERROR, logger="hoodie.lock"):
        lock.acquire()
        time.sleep(1.5)
        with pytest.raises(LockError, match=r"lost while writer held it: its heartbeat failed \(ClientError: .*AccessDenied"):
            L.check_still_held(st)
        with pytest.raises(LockError, match="heartbeat failed"):
            lock.release()  # nothing committed: the holder learns it here too
    assert "its heartbeat failed" in caplog.text


def _steal(key: str, host: str = "other-host") -> None:
    """Another process (on another host) takes the lock over, as after an expired lease."""
    body = L._Owner(host, 4242, None, "thief-nonce", "thief", int(time.time() * 1000),
                    int(time.time() * 1000) + 60_000, 60_000).to_bytes()
    _raw().put_object(Bucket=BUCKET, Key=key, Body=body)


def _write(path: str, rows: list[int], opts: dict) -> str:
    data = pa.table({"id": rows, "p": ["a"] * len(rows), "ts": [1] * len(rows)})
    return write_arrow(path, data, {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                                    "hoodie.datasource.write.partitionpath.field": "p",
                                    "hoodie.datasource.write.precombine.field": "ts",
                                    "hoodie.datasource.write.operation": "upsert", **opts})


def test_commit_under_a_stolen_s3_lease_is_refused(s3: dict, tmp_path: Any) -> None:
    """A holder whose lease was taken over committed anyway; now the completing write checks the
    lease first and refuses, naming the lost lock, and the instant stays pending."""
    path = str(tmp_path / "t")
    opts = {L.LOCK_PATH: f"s3://{BUCKET}/locks", L.VALIDITY_SECS: "30", L.HEARTBEAT_SECS: "10"}
    first = _write(path, [1], opts)
    holder = TableLock(Storage(path), opts, "slow writer")
    holder.acquire()
    _steal("locks/lock")
    with pytest.raises(LockError, match=r"table lock s3://.*/locks/lock was lost while slow writer held it: it "
                                        r"was taken over by thief .*Nothing was committed"):
        _write(path, [2], opts)
    with pytest.raises(LockError, match="was lost"):
        holder.release()
    tl = HoodieTable(path).timeline
    assert [i.timestamp for i in tl.completed()] == [first]
    assert len(tl.pending()) == 1  # the refused write, rolled back by the next one


def test_commit_under_a_lost_local_lock_is_refused(tmp_path: Any) -> None:
    """The same locally: the lock file was taken over (hoodie.write.lock.filesystem.expire, or
    `hoodie lock release --force`) while the holder wrote."""
    path = str(tmp_path / "t")
    first = _write(path, [1], {})
    lock_file = tmp_path / "t" / ".hoodie" / "lock"
    with pytest.raises(LockError, match="was lost while slow writer held it"):  # learnt again at release
        with table_lock(Storage(path), None, "slow writer"):
            lock_file.unlink()
            lock_file.write_bytes(L._Owner("other-host", 4242, None, "x", "thief", int(time.time() * 1000)).to_bytes())
            with pytest.raises(LockError, match="was lost while slow writer held it: it was taken over by thief"):
                _write(path, [2], {})
    assert [i.timestamp for i in HoodieTable(path).timeline.completed()] == [first]
    assert "thief" in lock_file.read_text()  # the thief's lock stays


def test_s3_lock_timeout_names_the_lease_setting(s3: dict, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A waiter's error named hoodie.write.lock.filesystem.expire, which does not apply to an S3
    lease; now it names the lease key with its value, when it expires, and `hoodie lock release`."""
    _steal("t/.hoodie/lock")
    st = Storage(f"s3://{BUCKET}/t", s3)
    with pytest.raises(LockError) as e:
        with table_lock(st, {L.WAIT_MS: "200"}):
            pass
    text = str(e.value)
    assert "held by thief (pid 4242 on other-host" in text
    assert "hoodie.write.lock.storage.validity.timeout.secs=60 in that process) expires in" in text
    assert f"hoodie lock release s3://{BUCKET}/t" in text and "filesystem.expire" not in text
    from hoodie.interfaces.cli import main

    assert main(["lock", "show", f"s3://{BUCKET}/t"]) == 0
    shown = capsys.readouterr().out
    assert "held by thief (pid 4242 on other-host)" in shown and "lease: expires in" in shown
    # Locally (no lease) the error names `hoodie lock release` and the age-based expiry.
    (tmp_path / "t" / ".hoodie").mkdir(parents=True)
    (tmp_path / "t" / ".hoodie" / "lock").write_bytes(L._Owner("other-host", 4242, None, "x", "thief", 0).to_bytes())
    with pytest.raises(LockError, match=r"run `hoodie lock release .*/t` \(--force if it ran on another host\), or "
                                        r"set hoodie.write.lock.filesystem.expire"):
        with table_lock(Storage(str(tmp_path / "t")), {L.WAIT_MS: "200"}):
            pass


def test_s3_lease_shorter_than_three_renewals_is_refused(s3: dict) -> None:
    with pytest.raises(LockError, match="the lease must last at least 3 renewal intervals"):
        TableLock(Storage(f"s3://{BUCKET}/t", s3), {L.VALIDITY_SECS: "10", L.HEARTBEAT_SECS: "5"})


# -- the model: random faults, steals and crashes against several holders -------------------------

class FakeTime:
    """The lock module's clock: sleeps and injected request latencies advance it at once."""

    def __init__(self) -> None:
        self.now = time.time()
        self.mono = 1000.0

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.mono

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.mono += seconds


FAULT_KINDS = ["503", "slowdown", "conflict", "connect-timeout", "read-timeout"]
VALIDITY_S, HEARTBEAT_S = 6, 2


def _model_steps(max_steps: int) -> Any:
    """Steps (kind, process, faults of its requests, seconds): waiting up to, renewing for up to, or
    letting pass that many seconds. Commits and acquisitions are drawn more often than the rest."""
    from hypothesis import strategies as st

    kinds = ["acquire"] * 3 + ["commit"] * 3 + ["renew"] * 2 + ["release", "crash", "advance", "advance", "steal"]
    return st.lists(st.tuples(st.sampled_from(kinds), st.integers(0, 2),
                              st.lists(st.sampled_from(FAULT_KINDS), max_size=4),
                              st.sampled_from([0.0, 0.5, 2.0, 3.0, 5.0, 7.0])), min_size=max_steps // 2,
                    max_size=max_steps)


class LockModel:
    """Three processes on three hosts contend for one S3 lock object through clients that fail as
    each step scripts; an outside actor may remove or overwrite the object (``hoodie lock release
    --force``, a holder with a skewed clock). After every step the store is compared with what
    each holder believes."""

    def __init__(self, clock: FakeTime, real: Any, key: str, steals: bool) -> None:
        self.clock = clock
        self.real = real
        self.key = key
        self.steals = steals
        self.stolen = False
        self.faults: list[list[str]] = [[], [], []]
        self.holdings: list[Optional[L._Holding]] = [None, None, None]
        self.commits = 0
        opts = {L.VALIDITY_SECS: str(VALIDITY_S), L.HEARTBEAT_SECS: str(HEARTBEAT_S), L.RETRY_MS: "500"}
        self.lock = TableLock(Storage(f"s3://{BUCKET}/{key.rsplit('/.hoodie/', 1)[0]}", S3_OPTIONS), opts)
        self.backends = []
        for i in range(3):
            b = self.lock._backend()
            assert isinstance(b, L._S3Object)
            b.client = FaultyClient(real, self._plan(i))
            self.backends.append(b)

    def _plan(self, i: int) -> Callable[[str, dict], Optional[str]]:
        def plan(op: str, kw: dict) -> Optional[str]:
            kind = self.faults[i].pop(0) if self.faults[i] else None
            self.clock.sleep({None: 0.01, "connect-timeout": 1.0, "read-timeout": 1.0}.get(kind, 0.05))
            return kind
        return plan

    def truth(self) -> Optional[L._Owner]:
        try:
            data = self.real.get_object(Bucket=BUCKET, Key=self.key)["Body"].read()
        except botocore.exceptions.ClientError:
            return None
        return L._Owner.parse(data)

    def step(self, step: tuple) -> None:
        kind, i, faults, seconds = step
        self.faults[i] = list(faults)
        getattr(self, f"do_{kind}")(i, seconds)
        self.faults[i] = []
        self.check()

    def do_acquire(self, i: int, wait_s: float) -> None:
        if self.holdings[i] is not None:
            return
        now_ms = int(self.clock.now * 1000)
        owner = L._Owner(f"sim-host-{i}", 100 + i, None, f"nonce-{i}-{now_ms}-{self.commits}", f"process {i}",
                         now_ms, now_ms + VALIDITY_S * 1000, VALIDITY_S * 1000)
        self.lock.wait_ms = int(wait_s * 1000)
        try:
            self.lock._take(self.backends[i], owner)
        except LockError:
            return
        self.holdings[i] = L._Holding(self.backends[i], owner, self.lock.table_uri, VALIDITY_S * 1000, HEARTBEAT_S)

    def do_renew(self, i: int, budget_s: float) -> None:
        budget_s = max(budget_s, 0.5)
        if self.holdings[i] is not None:
            self.holdings[i].renew(give_up_at=self.clock.mono + budget_s)

    def do_commit(self, i: int, _seconds: float) -> None:
        h = self.holdings[i]
        if h is None:
            return
        try:
            h.verify()
        except LockError:
            return
        # The completing write follows the check: the lock must be this holder's, with a fresh lease.
        truth = self.truth()
        assert truth is not None and truth.nonce == h.owner.nonce, f"process {i} committed without the lock"
        assert truth.expires_ms >= self.clock.now * 1000 + (VALIDITY_S - 2) * 1000
        self.commits += 1

    def do_release(self, i: int, _seconds: float) -> None:
        h = self.holdings[i]
        if h is None:
            return
        self.holdings[i] = None
        ours_before = (self.truth() or L._Owner("", 0, None, "", "", 0)).nonce == h.owner.nonce
        if h.release():
            truth = self.truth()
            assert truth is None or truth.nonce != h.owner.nonce or not ours_before

    def do_crash(self, i: int, _seconds: float) -> None:
        self.holdings[i] = None  # on another host: only its lease expiry frees the lock

    def do_advance(self, _i: int, seconds: float) -> None:
        self.clock.sleep(seconds)

    def do_steal(self, i: int, _seconds: float) -> None:
        if not self.steals:
            return
        self.stolen = True
        if i == 0:  # removed by hand, else overwritten by a holder whose clock runs ahead
            with contextlib.suppress(botocore.exceptions.ClientError):
                self.real.delete_object(Bucket=BUCKET, Key=self.key)
        else:
            now_ms = int(self.clock.now * 1000)
            self.real.put_object(Bucket=BUCKET, Key=self.key, Body=L._Owner(
                "skewed-host", 9, None, f"thief-{now_ms}", "thief", now_ms, now_ms + 1000, 1000).to_bytes())

    def check(self) -> None:
        truth = self.truth()
        nonce = truth.nonce if truth else None
        believed = []
        for i, h in enumerate(self.holdings):
            if h is None:
                continue
            if h.lost is not None:
                assert nonce != h.owner.nonce, f"process {i} thinks it lost a lock that is still its own"
            elif h.confirmed_ms > self.clock.now * 1000:
                believed.append(i)
                if not self.stolen:
                    # Nobody takes a lease over before it expires: the store agrees with the holder.
                    assert nonce == h.owner.nonce, f"process {i}'s unexpired lease is not in the store"
        if not self.stolen:
            assert len(believed) <= 1, f"processes {believed} all hold the lock"


class MemoryS3:
    """An S3 bucket in memory with the conditional requests the lock relies on (If-None-Match: *,
    If-Match on the ETag, the MD5 of the body), so that the model runs thousands of requests in a
    second; ``test_memory_s3_answers_as_moto`` checks it against moto."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, str, Any]] = {}

    @staticmethod
    def _fail(op: str, code: str, status: int) -> Exception:
        return botocore.exceptions.ClientError(
            {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, op)

    def _check(self, op: str, key: str, if_match: Optional[str]) -> None:
        if if_match is None:
            return
        if key not in self.objects:
            raise self._fail(op, "NoSuchKey", 404)
        if self.objects[key][1] != if_match:
            raise self._fail(op, "PreconditionFailed", 412)

    def put_object(self, Bucket: str, Key: str, Body: bytes, IfNoneMatch: Optional[str] = None,
                   IfMatch: Optional[str] = None) -> dict:
        if IfNoneMatch == "*" and Key in self.objects:
            raise self._fail("PutObject", "PreconditionFailed", 412)
        self._check("PutObject", Key, IfMatch)
        import datetime as dt
        import hashlib

        etag = f'"{hashlib.md5(Body).hexdigest()}"'
        self.objects[Key] = (Body, etag, dt.datetime.now(dt.timezone.utc))
        return {"ETag": etag}

    def get_object(self, Bucket: str, Key: str) -> dict:
        import io

        if Key not in self.objects:
            raise self._fail("GetObject", "NoSuchKey", 404)
        body, etag, modified = self.objects[Key]
        return {"Body": io.BytesIO(body), "ETag": etag, "LastModified": modified}

    def delete_object(self, Bucket: str, Key: str, IfMatch: Optional[str] = None) -> dict:
        self._check("DeleteObject", Key, IfMatch)
        self.objects.pop(Key, None)
        return {}


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        r = call()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return r["Body"].read() if "Body" in r else r.get("ETag")


@pytest.mark.hypothesis
def test_memory_s3_answers_as_moto(moto_module: Any) -> None:
    """The in-memory store of the model answers every sequence of conditional puts, gets and
    deletes exactly as moto does (result, error code, ETag)."""
    import uuid

    from hypothesis import given, settings
    from hypothesis import strategies as st

    ops = st.lists(st.tuples(st.sampled_from(["create", "put-if-match", "put", "get", "delete-if-match", "delete"]),
                             st.sampled_from(["current", "old", "bogus"]), st.sampled_from([b"a", b"b", b"c"])),
                   min_size=3, max_size=8)

    @settings(max_examples=examples(25), deadline=None)
    @given(ops=ops)
    def run(ops: list[tuple[str, str, bytes]]) -> None:
        key = f"diff-{uuid.uuid4().hex[:8]}"
        memory = MemoryS3()
        etags: list[str] = ['"-"']
        for op, which, body in ops:
            etag = {"current": etags[-1], "old": etags[0], "bogus": '"0123"'}[which]
            results = []
            for store in (moto_module, memory):
                call = {"create": lambda: store.put_object(Bucket=BUCKET, Key=key, Body=body, IfNoneMatch="*"),
                        "put-if-match": lambda: store.put_object(Bucket=BUCKET, Key=key, Body=body, IfMatch=etag),
                        "put": lambda: store.put_object(Bucket=BUCKET, Key=key, Body=body),
                        "get": lambda: store.get_object(Bucket=BUCKET, Key=key),
                        "delete-if-match": lambda: store.delete_object(Bucket=BUCKET, Key=key, IfMatch=etag),
                        "delete": lambda: store.delete_object(Bucket=BUCKET, Key=key)}[op]
                results.append(_outcome(call))
            assert results[0] == results[1], (op, which, results)
            if op.startswith("put") or op == "create":
                if isinstance(results[0], str) and results[0].startswith('"'):
                    etags.append(results[0])

    run()


@pytest.fixture(scope="module")
def moto_module() -> Iterator[Any]:
    with mock_aws():
        real = _raw()
        real.create_bucket(Bucket=BUCKET)
        yield real


def _run_model(store: Any, monkeypatch: pytest.MonkeyPatch, n_examples: int, max_steps: int) -> None:
    import uuid

    from hypothesis import given, settings
    from hypothesis import strategies as st

    clock = FakeTime()
    # The lock and each backend module read the clock (the backends: the age of a lock object).
    for module in (L, L.base, L.local, L.conditional, L.s3, L.azure, L.gcs):
        if hasattr(module, "time"):
            monkeypatch.setattr(module, "time", clock)
    monkeypatch.setattr(L, "_sleep", lambda stop, seconds: clock.sleep(seconds))
    monkeypatch.setattr(boto3, "client", lambda *a, **kw: store)
    logging.getLogger("hoodie.lock").setLevel(logging.CRITICAL)
    totals = {"commits": 0, "examples": 0}

    @settings(max_examples=n_examples, deadline=None)
    @given(steps=_model_steps(max_steps), steals=st.booleans())
    def run(steps: list[tuple], steals: bool) -> None:
        model = LockModel(clock, store, f"m-{uuid.uuid4().hex[:8]}/.hoodie/lock", steals)
        for step in steps:
            model.step(step)
        totals["commits"] += model.commits
        totals["examples"] += 1

    try:
        run()
    finally:
        logging.getLogger("hoodie.lock").setLevel(logging.NOTSET)
    assert totals["commits"] > totals["examples"] // 4, totals  # the model exercised commits, not only refusals


@pytest.mark.hypothesis
def test_s3_lock_model_under_faults_steals_and_crashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random sequences of acquire/renew/commit/release/crash by three holders, HTTP 503s, throttling,
    conflicts and timeouts (before or after the request lands) on any request, and outside steals:
    a holder commits only while the store holds its lock with a fresh lease, never believes it lost
    a lock that is still its own, and without steals at most one holder believes it holds the lock.
    (The store is :class:`MemoryS3`, checked against moto; the long run below uses moto itself.)"""
    _run_model(MemoryS3(), monkeypatch, n_examples=examples(100), max_steps=20)


@pytest.mark.slow
def test_s3_lock_model_long(moto_module: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model on moto itself, with longer sequences (a few minutes)."""
    _run_model(moto_module, monkeypatch, n_examples=300, max_steps=40)
