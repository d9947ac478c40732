"""Lock keys: Hudi's ``hoodie.write.lock.*`` (the table lock every commit takes, ``hoodie.format.lock``)
and ``hoodie.write.concurrency.mode``."""

from __future__ import annotations

from hoodie.configs.registry import define
from hoodie.configs.rules import Enum, Int

# Hudi's lock provider classes hoodie implements.
FILESYSTEM = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
IN_PROCESS = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
# A lease is renewed at least this many times before it runs out (the heartbeat's bound).
MIN_RENEWALS_PER_LEASE = 3

_G = "Concurrency"
PROVIDER = define("hoodie.write.lock.provider", FILESYSTEM,
                  "Lock provider: Hudi's FileSystemBasedLockProvider (a lock file; a conditional put on S3) or "
                  "InProcessLockProvider (threads of one process only); also filesystem / in_process. Other Hudi "
                  "providers (ZooKeeper, DynamoDB, Hive metastore) are refused.", _G,
                  type=Enum((FILESYSTEM, IN_PROCESS), what="available in hoodie",
                            synonyms={"filesystem": FILESYSTEM, "inprocess": IN_PROCESS, "in_process": IN_PROCESS},
                            hint="(the first takes a lock file, or a conditional put on S3; the second serves one "
                                 "process only)"))
LOCK_PATH = define("hoodie.write.lock.filesystem.path", None,
                   "Folder of the lock file `lock` (default: the table's .hoodie folder).", _G)
EXPIRE_MINUTES = define("hoodie.write.lock.filesystem.expire", 0,
                        "A lock file older than this many minutes is stale and taken over (0: only a dead owner's "
                        "lock on the same host is).", _G, type=Int(minimum=0))
WAIT_MS = define("hoodie.write.lock.wait_time_ms", 60_000, "How long to wait for the table lock before failing, ms.",
                 _G, type=Int(minimum=0, bits=64))
RETRY_MS = define("hoodie.write.lock.wait_time_ms_between_retry", 100,
                  "Pause between attempts to take the lock, ms (randomized).", _G, type=Int(minimum=0, bits=64))
# Hudi's StorageBasedLockProvider uses 300/30 s. hoodie takes a crashed holder's lock over at once
# when it ran on this host, and otherwise waits for its lease: a minute keeps that wait short, and a
# renewal every 5 s leaves room for a dozen failed renewals before the lease runs out.
VALIDITY_SECS = define("hoodie.write.lock.storage.validity.timeout.secs", 60,
                       "Object stores: the lock's lease. A lease not renewed for this long has expired and is taken "
                       "over (a holder on this host whose process is gone at once).", _G, type=Int(minimum=0))
HEARTBEAT_SECS = define("hoodie.write.lock.storage.heartbeat.poll.secs", 5,
                        f"Object stores: how often the holder renews its lease; at most 1/{MIN_RENEWALS_PER_LEASE} of "
                        f"{VALIDITY_SECS}.", _G, type=Int(minimum=0))
CONCURRENCY_MODE = define("hoodie.write.concurrency.mode", "single_writer",
                          "Accepted for Hudi compatibility; hoodie takes the table lock in every mode "
                          "(docs/concurrency.md).", _G)
