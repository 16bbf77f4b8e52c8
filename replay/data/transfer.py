"""Moving bytes for the fetch stage: atomic partial files, hashing copies, progress, network error messages."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

_CHUNK = 1 << 20
OFFLINE_ADVICE = (
    "If this machine is offline, stage from a local mirror instead: --mirror DIR (or set REPLAY_MIRROR=DIR)"
)


@dataclass
class FetchResult:
    """What one dataset's fetch did: ``source`` (``"mirror"``, ``"github"``, ``"hub"``, ``"skipped"``), counts and a
    ``note``; ``repaired``: re-staged after a failed hash."""

    dataset: str
    source: str
    staged: int = 0
    skipped: int = 0
    bytes: int = 0
    repaired: list[str] = field(default_factory=list)
    note: str = ""
    pinned: int = 0
    unpinned: int = 0


def fresh_part(target: Path) -> Path:
    """The temporary name ``target`` is written under before its atomic rename, its folder made and leftovers of
    interrupted writes (any process id) removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for p in target.parent.glob(f".{target.name}.part-*"):
        p.unlink(missing_ok=True)
    return target.with_name(f".{target.name}.part-{os.getpid()}")


def copy_hashing(
    src, dst: Path, on_bytes: Callable[[int], None] | None = None, *, chunk: int = _CHUNK
) -> tuple[int, str]:
    """Copy a binary stream to ``dst`` in reads of ``chunk`` bytes; (bytes, sha256)."""
    h = hashlib.sha256()
    n = 0
    with open(dst, "wb") as out:
        while True:
            block = src.read(chunk)
            if not block:
                break
            out.write(block)
            h.update(block)
            n += len(block)
            if on_bytes is not None:
                on_bytes(len(block))
        out.flush()
        os.fsync(out.fileno())
    return n, h.hexdigest()


def network_hint(what: str, exc: BaseException, advice: str = OFFLINE_ADVICE) -> str:
    """Message for a failed network call, naming the source and ``advice`` (what to do offline)."""
    return f"could not reach {what} ({type(exc).__name__}: {exc}). {advice}"
