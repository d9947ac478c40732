"""Table services (compaction, TTL, clean, rollback): planning in pure Python, data work via the engine."""
