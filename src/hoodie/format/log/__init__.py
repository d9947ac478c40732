"""Hudi log files: blocks, headers and footers, read and written byte-exactly."""
