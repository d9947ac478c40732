"""The quickstart pipeline: a realistic event stream into a MERGE_ON_READ table on local Spark.

It generates click/order events over the last ``days`` days (partitioned by event day, UTC), with
late-arriving events, status updates and deletes, writes them batch by batch with
``hoodie.spark.write``, runs event-time compaction after some batches (printing the freshness
threshold T and watermark W as they move), a partition TTL dry run and run, a clean, and prints a
before/after summary. The table stays at the base path for exploring.

The base path is claimed before anything is written (:func:`claim_base_path`, shared with
``hoodie demo``): a new or empty folder is used, the table an earlier quickstart or demo made there
is replaced, and anything else is refused unless the caller says ``overwrite``. Spark is started
before anything is deleted, so a missing Java leaves the folder as it was.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import pyarrow as pa

from hoodie.errors import HoodieError
from hoodie.format.storage import Storage
from hoodie.format.table import table_exists

EVENT_TIME_STRATEGY = "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy"
# The quickstart table (batch and streaming): events keyed by id, day partitions, the newest update wins.
TABLE_OPTIONS = {
    "hoodie.table.name": "quickstart_events",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "event_id",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.precombine.field": "updated_at",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.payload.event.time.field": "event_ts",
    "hoodie.table.timeline.timezone": "UTC",
}


@dataclass
class QuickstartResult:
    """What the pipeline did, for the summary and for tests."""

    base_path: str
    commits: list[str] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    ttl_dry_run: list[str] = field(default_factory=list)
    ttl_expired: list[str] = field(default_factory=list)
    clean_deleted_files: int = 0
    rows_before_ttl: int = 0
    rows_after: int = 0
    partitions_before_ttl: int = 0
    partitions_after: int = 0
    seconds: float = 0.0
    expected_rows: int = 0


# Written into every folder ``hoodie demo`` / ``hoodie quickstart`` claims: only a folder holding it
# (and nothing but the table) is theirs to replace without --overwrite.
MARKER = ".hoodie/.aux/created_by_hoodie.json"
MARKER_COMMANDS = ("hoodie demo", "hoodie quickstart")
PARTITION_PREFIX = "day="  # both commands write hive-style partitions of the column `day`


class BasePathError(HoodieError):
    """The base path holds something hoodie demo/quickstart did not create (refused, nothing changed)."""


@dataclass
class BasePathClaim:
    """What a demo or quickstart run may do with its base path, decided before anything changes."""

    storage: Storage
    command: str
    replace: bool  # delete what is there before writing (the command's own table, or --overwrite)

    def prepare(self) -> None:
        """Delete what the claim allows and mark the folder as this command's (call once the run
        cannot fail for want of Java, Spark or valid arguments)."""
        if self.replace:
            self.storage.delete_dir("")
        if not self.storage.exists(MARKER):
            self.storage.write_bytes(MARKER, json.dumps({"created_by": self.command}).encode())


def _own_output(st: Storage, names: list[str]) -> Optional[str]:
    """None when the folder is what a demo/quickstart run leaves there, else what is not."""
    try:
        created_by = json.loads(st.read_bytes(MARKER)).get("created_by")
    except (FileNotFoundError, OSError, ValueError, AttributeError):
        created_by = None
    if created_by not in MARKER_COMMANDS:
        if table_exists(st):
            return "holds a Hudi table that hoodie demo/quickstart did not create"
        return "was not created by hoodie demo/quickstart"
    foreign = [n for n in names if n != ".hoodie" and not n.startswith(PARTITION_PREFIX)]
    if foreign:
        return f"holds files that hoodie demo/quickstart did not write ({', '.join(foreign[:5])})"
    return None


def claim_base_path(base_path: str, command: str, overwrite: Optional[bool] = None) -> BasePathClaim:
    """Decide what ``command`` (``"hoodie demo"`` or ``"hoodie quickstart"``) may do with ``base_path``.

    A missing or empty folder is used. A folder holding only the table an earlier demo or
    quickstart made (it carries :data:`MARKER`) is replaced, or kept and appended to when
    ``overwrite`` is False. Anything else raises :class:`BasePathError` unless ``overwrite`` is True,
    which deletes everything in the folder. Nothing is changed here: :meth:`BasePathClaim.prepare`
    does the deleting, once the run's preconditions hold.
    """
    st = Storage(base_path)
    if st.is_file(""):
        raise BasePathError(f"--base-path {st.uri()} is a file; give a folder (new or empty)")
    names = [e.name for e in st.list_dir("")]
    if not names:
        return BasePathClaim(st, command, replace=False)
    if overwrite:
        return BasePathClaim(st, command, replace=True)
    why = _own_output(st, names)
    if why is not None:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise BasePathError(
            f"--base-path {st.uri()} is not empty and {why}; it holds: {shown}. {command} deletes only a "
            "folder it made itself: choose a new or empty folder, or pass --overwrite to delete everything in it")
    return BasePathClaim(st, command, replace=overwrite is None)


def generate_batches(rows: int, days: int, batches: int, seed: int = 42,
                     today: Optional[dt.date] = None) -> list[tuple[str, list[dict[str, Any]]]]:
    """The event stream as (operation, records) batches, in arrival order.

    Batch i mostly carries events of day i; 5% arrive late (events of earlier days), 10% of each
    later batch updates earlier events (status changes, a newer ``updated_at``), and 2% deletes.
    """
    rnd = random.Random(seed)
    today = today or dt.datetime.now(dt.timezone.utc).date()
    first_day = today - dt.timedelta(days=days - 1)
    per_batch = max(1, rows // batches)
    out: list[tuple[str, list[dict[str, Any]]]] = []
    live: list[dict[str, Any]] = []
    next_id = 0
    statuses = ["clicked", "carted", "ordered", "shipped", "returned"]
    for b in range(batches):
        day_idx = min(days - 1, b * days // batches)
        recs = []
        for _ in range(per_batch):
            late = rnd.random() < 0.05 and day_idx > 0
            d = first_day + dt.timedelta(days=rnd.randrange(0, day_idx) if late else day_idx)
            ts = dt.datetime.combine(d, dt.time(), dt.timezone.utc) + dt.timedelta(seconds=rnd.randrange(86400))
            rec = {"event_id": f"ev-{next_id:08d}", "user_id": f"u{rnd.randrange(max(1, rows // 20)):05d}",
                   "event_ts": ts, "day": ts.strftime("%Y-%m-%d"), "status": statuses[0],
                   "amount": round(rnd.uniform(1, 500), 2), "updated_at": b * 1000}
            next_id += 1
            recs.append(rec)
        if live:
            for old in rnd.sample(live, min(len(live), per_batch // 10)):
                upd = dict(old)
                upd["status"] = statuses[min(len(statuses) - 1, statuses.index(old["status"]) + 1)]
                upd["updated_at"] = b * 1000 + 1
                recs.append(upd)
                old.update(upd)
        out.append(("upsert", recs))
        live.extend(r for r in recs if r["updated_at"] == b * 1000)
        if b >= 2 and live:
            gone = rnd.sample(live, min(len(live), max(1, per_batch // 50)))
            ids = {g["event_id"] for g in gone}
            live = [r for r in live if r["event_id"] not in ids]
            out.append(("delete", gone))
    return out


SCHEMA = pa.schema([
    ("event_id", pa.string()), ("user_id", pa.string()), ("event_ts", pa.timestamp("us", tz="UTC")),
    ("day", pa.string()), ("status", pa.string()), ("amount", pa.float64()), ("updated_at", pa.int64()),
])


def expected_live_rows(batches: list[tuple[str, list[dict[str, Any]]]]) -> int:
    """The number of rows the table must hold after all batches (a model of the stream)."""
    live: dict[str, int] = {}
    for op, recs in batches:
        for r in recs:
            if op == "delete":
                live.pop(r["event_id"], None)
            else:
                live[r["event_id"]] = r["updated_at"]
    return len(live)


def start_run(claim: BasePathClaim, spark: Any, base_path: str, rows: int, days: int, batches: int
              ) -> tuple[Any, QuickstartResult, list[tuple[str, list[dict[str, Any]]]]]:
    """Start Spark (``spark``: a session, or a function that starts one) before the claimed folder is
    touched, so that a run that cannot start deletes nothing; then prepare the folder and generate the
    events. Returns (session, result to fill, event batches)."""
    session = spark() if callable(spark) else spark
    claim.prepare()
    res = QuickstartResult(base_path)
    stream = generate_batches(rows, days, batches)
    res.expected_rows = expected_live_rows(stream)
    return session, res, stream


def run_quickstart(base_path: str, rows: int = 20000, days: int = 10, batches: int = 10,
                   retain_days: int = 7, spark: Any = None, log: Callable[[str], None] = print,
                   overwrite: Optional[bool] = None, progress: bool = False) -> QuickstartResult:
    """Run the pipeline (see the module doc) and return what it did.

    ``overwrite`` as for :func:`claim_base_path`: None replaces only an earlier demo/quickstart table,
    True replaces whatever the folder holds. With ``progress`` a rich progress bar tracks the batches
    (the CLI enables it on a terminal).
    """
    claim = claim_base_path(base_path, "hoodie quickstart", overwrite)
    from hoodie.engine.session import require_pyspark

    require_pyspark()  # without pyspark: an error that says how to install it, before any change
    from hoodie.engine.compaction import spark_executor
    from hoodie.engine.write import write
    from hoodie.format.slice.reader import read_table
    from hoodie.interfaces.catalog import session
    from hoodie.services.clean import run_clean
    from hoodie.services.compaction import freshness, run_compaction
    from hoodie.services.ttl import run_ttl

    t0 = time.monotonic()
    spark, res, stream = start_run(claim, spark or session, base_path, rows, days, batches)
    opts = {**TABLE_OPTIONS, "hoodie.clean.automatic": "false"}  # the pipeline cleans explicitly at the end
    compaction_opts = {
        "hoodie.compaction.strategy": EVENT_TIME_STRATEGY,
        "hoodie.compact.inline.trigger.strategy": "EVENT_TIME_TRIGGER",
    }
    executor = spark_executor(spark)
    log(f"writing {len(stream)} batches ({rows} events over {days} days) into {base_path}")
    log("  table: MERGE_ON_READ, record key event_id, partitions day (hive style), ordering field updated_at "
        "(the larger wins), event time event_ts; keys: " + ", ".join(f"{k}={v}" for k, v in opts.items()
                                                                      if k != "hoodie.clean.automatic"))
    max_event = None
    bar = None
    if progress:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                       TimeElapsedColumn(), transient=True)
        bar.start()
        task = bar.add_task("writing batches", total=len(stream))
    for i, (op, recs) in enumerate(stream):
        if bar is not None:
            bar.update(task, completed=i)
        df = spark.createDataFrame(pa.Table.from_pylist(recs, schema=SCHEMA).to_pandas(), schema="event_id string, "
                                   "user_id string, event_ts timestamp, day string, status string, "
                                   "amount double, updated_at long")
        inst = write(df, base_path, {**opts, "hoodie.datasource.write.operation": op})
        res.commits.append(inst)
        batch_max = max(r["event_ts"] for r in recs)
        max_event = batch_max if max_event is None else max(max_event, batch_max)
        log(f"  {op:<6} {len(recs):>6} records -> instant {inst}")
        if op == "upsert" and i % 3 == 2:
            # Events arrive up to a day late: everything older than (newest event - 1 day) is final.
            threshold = (max_event - dt.timedelta(days=1)).isoformat()
            done = run_compaction(base_path, None, {**compaction_opts, "hoodie.compaction.event.time.threshold":
                                                    threshold}, executor=executor, schedule_if_none=True)
            fr = freshness(base_path)
            info = {"instants": [r.instant for r in done], "threshold": (fr.get("threshold") or {}).get("iso"),
                    "watermark": _watermark_text(fr)}
            if not res.compactions:
                log("  event-time compaction: strategy EventTimeBasedCompactionStrategy (compacts the log files whose "
                    "events are all at or before the threshold T), trigger EVENT_TIME_TRIGGER, T = newest event - 1 day; "
                    "keys: " + ", ".join(f"{k}={v}" for k, v in compaction_opts.items())
                    + ", hoodie.compaction.event.time.threshold=<T>")
                log("    T (threshold): every event at or before T that had arrived is in the read-optimized view; "
                    "W (watermark): the oldest event time still only in log files (none: every log block is "
                    "compacted, the read-optimized view equals the snapshot)")
            res.compactions.append(info)
            log(f"  event-time compaction {info['instants'] or '(nothing to compact)'}: "
                f"threshold T={info['threshold']}  watermark W={info['watermark']}")
    if bar is not None:
        bar.stop()
    snap = read_table(base_path, columns=["day"])
    res.rows_before_ttl = snap.num_rows
    res.partitions_before_ttl = len(set(snap.column("day").to_pylist()))
    ttl_opts = {
        "hoodie.partition.ttl.management.strategy.type": "KEEP_BY_EVENT_TIME",
        "hoodie.partition.ttl.strategy.days.retain": str(retain_days),
        "hoodie.partition.ttl.strategy.event.time.format": "yyyy-MM-dd",
    }
    log("partition TTL: strategy KEEP_BY_EVENT_TIME (a day partition expires when its newest event is older "
        f"than {retain_days} days); keys: " + ", ".join(f"{k}={v}" for k, v in ttl_opts.items()))
    dry = run_ttl(base_path, ttl_opts, dry_run=True)
    res.ttl_dry_run = sorted(dry.expired_partitions)
    log(f"TTL dry run (keep {retain_days} days of events): would expire {res.ttl_dry_run}")
    done_ttl = run_ttl(base_path, ttl_opts)
    res.ttl_expired = sorted(done_ttl.expired_partitions)
    log(f"TTL run: expired {res.ttl_expired} in instant {done_ttl.instant}")
    # KEEP_LATEST_FILE_VERSIONS makes replaced file groups (the expired partitions) eligible at once.
    clean_opts = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"}
    log("clean: policy KEEP_LATEST_FILE_VERSIONS (keep the 2 newest versions of each file group; replaced groups go); "
        "keys: " + ", ".join(f"{k}={v}" for k, v in clean_opts.items()))
    cleaned = run_clean(base_path, clean_opts)
    res.clean_deleted_files = sum(len(v) for v in cleaned.deleted.values())
    log(f"clean: deleted {res.clean_deleted_files} files, partitions removed {cleaned.deleted_partitions}")
    after = read_table(base_path, columns=["day"])
    res.rows_after = after.num_rows
    res.partitions_after = len(set(after.column("day").to_pylist()))
    res.seconds = round(time.monotonic() - t0, 1)
    fr = freshness(base_path)
    log("")
    log("summary            before TTL     after")
    log(f"  rows             {res.rows_before_ttl:>10} {res.rows_after:>9}")
    log(f"  partitions       {res.partitions_before_ttl:>10} {res.partitions_after:>9}")
    log(f"  read-optimized freshness: T={(fr.get('threshold') or {}).get('iso')} W={_watermark_text(fr)}")
    log(f"  {len(res.commits)} writes, {sum(len(c['instants']) for c in res.compactions)} compactions, "
        f"{len(res.ttl_expired)} partitions expired, {res.clean_deleted_files} files cleaned in {res.seconds} s")
    log(f"explore it: python -c \"import hoodie; print(hoodie.read_table('{base_path}').num_rows)\"")
    log("or with the CLI (the README's examples):")
    for line in cli_examples(base_path):
        log(f"  {line}")
    return res


def cli_examples(base_path: str) -> list[str]:
    """CLI commands that do something on a quickstart table (the README lists the same)."""
    return [
        f"hoodie show timeline {base_path}",
        f"hoodie compaction run {base_path} --set hoodie.compaction.strategy={EVENT_TIME_STRATEGY} "
        "--set hoodie.compact.inline.trigger.strategy=EVENT_TIME_TRIGGER",
        f"hoodie show freshness {base_path}",
        f"hoodie ttl run {base_path} --dry-run --set hoodie.partition.ttl.management.strategy.type=KEEP_BY_EVENT_TIME "
        "--set hoodie.partition.ttl.strategy.event.time.format=yyyy-MM-dd --set hoodie.partition.ttl.strategy.days.retain=5",
        f"hoodie clean {base_path}",
    ]


def _watermark_text(fr: dict) -> str:
    wm = fr.get("watermark") or {}
    if wm.get("iso"):
        return str(wm["iso"])
    # No watermark: every committed log block is compacted (complete) or event times are unknown.
    status = wm.get("status", "unknown")
    if status == "complete":
        return "none (complete: no uncompacted log block, read-optimized = snapshot)"
    return f"unknown ({status}: an uncompacted log block's event times are not known)"


def result_json(res: QuickstartResult) -> str:
    """The result as JSON (for --json)."""
    return json.dumps(res.__dict__, indent=2, default=str)
