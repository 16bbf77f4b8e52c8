"""Exports of one rollout for tools outside this project: plain MuJoCo, USD and Rerun (docs/results.md, exports)."""
