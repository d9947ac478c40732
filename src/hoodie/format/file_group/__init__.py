"""File groups: file naming, the file-system view (partitions, file groups, file slices) and partial-compaction links."""
