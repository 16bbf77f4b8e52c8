"""Module-level jobs for tests/test_batch_runner.py (spawned workers import them by name)."""

from __future__ import annotations

import os

from replay.errors import DataError


def square_or_fail(key: str) -> dict:
    """``{"key": key, "n2": n * n}`` for ``key = "rN"``; ``bad``: a DataError; ``die``: the
    process exits at once (a crash that only a separate process survives)."""
    if key == "bad":
        raise DataError("bad.npz", "pose", "not a pose")
    if key == "die":
        os._exit(3)
    n = int(key[1:])
    return {"key": key, "n2": n * n}
