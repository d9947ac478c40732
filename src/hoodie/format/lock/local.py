"""The lock file on local storage: created with create-only semantics (a hard link that fails with
EEXIST), a stale one taken over under a short-lived guard file."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import Any, Optional

from hoodie.format.storage import Storage
from hoodie.format.lock.base import GUARD_STALE_SECS, _Backend, _Owner, _alive

log = logging.getLogger("hoodie.lock")


class _LocalFile(_Backend):
    def __init__(self, path: str) -> None:
        self.path = path
        self.uri = path
        self.mutex = threading.Lock()

    def try_create(self, owner: _Owner) -> bool:
        st = Storage(os.path.dirname(self.path))
        try:
            st.create_new(os.path.basename(self.path), owner.to_bytes())
            return True
        except FileExistsError:
            return False

    def holder(self) -> tuple[Optional[bytes], Optional[float], Any]:
        try:
            with open(self.path, "rb") as f:
                data = f.read()
                age = time.time() - os.fstat(f.fileno()).st_mtime
        except FileNotFoundError:
            return None, None, None
        return data, age, data

    def release(self, owner: _Owner) -> str:
        data, _, _ = self.holder()
        held = _Owner.parse(data) if data is not None else None
        if data is None:
            return "gone"
        if held is None or held.nonce != owner.nonce:
            return "taken"
        os.unlink(self.path)
        return "released"

    def take_over(self, stale: Any, owner: _Owner) -> bool:
        # Under a guard only one process takes over at a time, so the content checked is the content
        # removed: nobody else deletes the stale lock between the check and the unlink.
        guard = _LocalFile(self.path + ".takeover")
        me = _Owner.me("lock take-over")
        if not guard.try_create(me):
            gdata, gage, _ = guard.holder()
            g = _Owner.parse(gdata) if gdata else None
            if gage is not None and (gage > GUARD_STALE_SECS or (g and g.on_this_host()
                                                                 and not _alive(g.pid, g.start))):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(guard.path)
            return False
        try:
            data, _, _ = self.holder()
            if data != stale:
                return False
            os.unlink(self.path)
            return self.try_create(owner)
        finally:
            os.unlink(guard.path)
