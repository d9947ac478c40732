"""One file slice: reading (merging base and log records, pruning partitions) and writing (base files, log blocks, meta columns, bloom filters, event times)."""
