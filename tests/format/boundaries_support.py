"""Helpers the format's boundary tests share (tests/format/test_*_boundaries.py)."""

from __future__ import annotations





P = "2024010100000000"  # instants P + "1", P + "2", ...: 17 digits, in order
