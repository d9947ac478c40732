"""Helpers the log-format tests share (tests/format/test_logformat*.py)."""

from __future__ import annotations

from pathlib import Path


from hoodie.format.storage import Storage


TRIPS_SCHEMA = {
    "type": "record", "name": "trips_record", "namespace": "hoodie.trips",
    "fields": [
        {"name": "_hoodie_record_key", "type": ["null", "string"], "doc": "", "default": None},
        {"name": "ts", "type": ["null", "long"], "default": None},
        {"name": "rider", "type": ["null", "string"], "default": None},
    ],
}


def _tmp_storage(tmp_path: Path) -> Storage:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return Storage(str(tmp_path))


def _write(tmp_path: Path, name: str, data: bytes) -> Storage:
    storage = _tmp_storage(tmp_path)
    (tmp_path / name).write_bytes(data)
    return storage
