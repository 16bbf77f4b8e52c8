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
import tempfile
from pathlib import Path

CACHE_ENV = "REPLAY_CACHE"


def cache_dir(sub: str | None = None) -> Path:
    """The cache folder (created if missing), optionally a sub-folder ``sub``."""
    root = Path(os.environ.get(CACHE_ENV, Path("data") / "cache")).expanduser()
    path = root / sub if sub else root
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_text(*parts: str) -> str:
    """Hex SHA-256 of the given strings joined by NUL."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file and rename (no partial files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Text version of :func:`atomic_write_bytes` (UTF-8)."""
    return atomic_write_bytes(path, text.encode("utf-8"))
