"""Where derived files are cached: ``$REPLAY_CACHE``, else ``data/cache`` (never beside the read-only source data)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CACHE_ENV = "REPLAY_CACHE"


def cache_root() -> Path:
    """The cache folder as configured, not created."""
    return Path(os.environ.get(CACHE_ENV, Path("data") / "cache")).expanduser()


def cache_dir(sub: str | None = None) -> Path:
    """The cache folder (created), or its sub-folder ``sub``."""
    root = cache_root()
    path = root / sub if sub else root
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256_text(*parts: str) -> str:
    """Hex SHA-256 of the strings joined by NUL."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()
