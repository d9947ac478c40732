"""The metadata table's write side: every commit records its files in the ``files`` partition.

* :mod:`~hoodie.services.metadata.action_records`: the records of each data-table action;
* :mod:`~hoodie.services.metadata.writer`: deltacommits, the metadata table's compaction, clean and
  rollback, bootstrap and drop;
* :mod:`~hoodie.services.metadata.lifecycle`: when a transaction keeps, creates, rebuilds or drops
  it, and ``hoodie metadata show|validate|create|drop``.
"""

from hoodie.services.metadata.lifecycle import (
    create_index,
    MetadataStatus, ValidationResult, create_metadata_table, drop_table_metadata, metadata_status,
    prepare_metadata_table, validate_metadata_table,
)
from hoodie.services.metadata.writer import MetadataWriter, drop_metadata_table

__all__ = ["create_index", "MetadataWriter", "drop_metadata_table", "prepare_metadata_table", "metadata_status", "MetadataStatus",
           "validate_metadata_table", "ValidationResult", "create_metadata_table", "drop_table_metadata"]
