"""Studies: many recordings (or many variants of one), in processes or Ray tasks; its modules:
docs/architecture.md."""
