"""hudi-rs (PyPI ``hudi`` 0.5.0), the independent reader our tables must agree with."""

from __future__ import annotations

import os
from typing import Optional

import pyarrow as pa


def read_hudi_rs(base_path: str, *, query_type: str = "snapshot", as_of: Optional[str] = None,
                 begin: Optional[str] = None, end: Optional[str] = None) -> pa.Table:
    """Read a table with hudi-rs; returns an Arrow table (possibly empty)."""
    from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

    t = HudiTableBuilder.from_base_uri(os.path.abspath(base_path)).build()
    if query_type == "read_optimized":
        opts = HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"})
        if as_of:
            opts = opts.with_as_of_timestamp(as_of)
    elif query_type == "incremental":
        opts = HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(begin or "0")
        if end:
            opts = opts.with_end_timestamp(end)
    else:
        opts = HudiReadOptions()
        if as_of:
            opts = opts.with_as_of_timestamp(as_of)
    batches = t.read(opts)
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)
