"""Where derived files (convex decompositions, baked meshes) are cached.

Derived geometry is never written next to the source data (the mirror is
read-only and must stay byte-for-byte upstream). It goes to
``$REPLAY_CACHE`` if set, else ``data/cache`` under the current directory.
Entries are keyed by the SHA-256 of their inputs, so a changed source file or
setting gives a new entry instead of a stale one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CACHE_ENV = "REPLAY_CACHE"


def cache_root() -> Path:
    """The cache folder as configured (``$REPLAY_CACHE``, else ``data/cache``), not created."""
    return Path(os.environ.get(CACHE_ENV, Path("data") / "cache")).expanduser()


def cache_dir(sub: str | None = None) -> Path:
    """The cache folder (created if missing), optionally a sub-folder ``sub``."""
    root = cache_root()
    path = root / sub if sub else root
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256_text(*parts: str) -> str:
    """Hex SHA-256 of the given strings joined by NUL."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()
