"""Output, the top stage: what a person reads and watches of a study (the report, videos, exports, doc tables)."""
