"""Pure-Python HFile (version 3) reader and writer, for Hudi's metadata table.

Hudi stores metadata-table base files, and the data blocks of metadata-table log files, as HBase
HFiles. :class:`HFileReader` reads what HBase 2.x (Hudi 0.14 - 1.0) and Hudi 1.1's own writer
produce; :class:`HFileWriter` writes files the way HBase does for Hudi (GZ or NONE blocks,
CRC32C checksums, version 3.3 trailer). See ``docs/hfile.md``.
"""

from .blocks import CHECKSUM_CRC32, CHECKSUM_CRC32C, CHECKSUM_NULL, GZ, NONE, BlockHeader, Cell
from .errors import HFileError
from .reader import DataBlockInfo, HFileReader
from .writer import DEFAULT_BLOCK_SIZE, HFileWriter, write_hfile
from .trailer import HBASE_KV_COMPARATOR, HOODIE_KV_COMPARATOR, HFileTrailer

__all__ = [
    "HFileReader", "HFileWriter", "write_hfile", "DEFAULT_BLOCK_SIZE", "HFileError", "HFileTrailer", "DataBlockInfo", "BlockHeader", "Cell",
    "GZ", "NONE", "CHECKSUM_NULL", "CHECKSUM_CRC32", "CHECKSUM_CRC32C",
    "HBASE_KV_COMPARATOR", "HOODIE_KV_COMPARATOR",
]
