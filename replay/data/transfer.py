"""Moving bytes for the fetch stage: atomic partial files, hashing copies, progress, network error messages."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from replay import console

_CHUNK = 1 << 20


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


def progress_bar(progress: bool | None, **kw) -> tqdm:
    """A tqdm bar on stderr; ``progress`` None: on a terminal only."""
    return console.bar(progress, **kw)


def part_path(target: Path) -> Path:
    """Temporary name a file is written under before its atomic rename."""
    return target.with_name(f".{target.name}.part-{os.getpid()}")


def clear_parts(target: Path) -> None:
    """Remove leftovers of interrupted writes of ``target`` (any process id)."""
    if target.parent.is_dir():
        for p in target.parent.glob(f".{target.name}.part-*"):
            p.unlink(missing_ok=True)


def copy_hashing(src, dst: Path, on_bytes: Callable[[int], None] | None = None) -> tuple[int, str]:
    """Copy a binary stream to ``dst``; (bytes, sha256)."""

    h = hashlib.sha256()
    n = 0
    with open(dst, "wb") as out:
        while True:
            block = src.read(_CHUNK)
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


def network_hint(what: str, exc: BaseException, mirror_has_it: bool = True) -> str:
    """Message for a failed network call, naming the source and what to do offline."""
    head = f"could not reach {what} ({type(exc).__name__}: {exc})."
    if not mirror_has_it:
        return (
            f"{head} HUG-Bench is only on the Hugging Face Hub (the offline mirror does not hold it): "
            f"run this on a machine with network access and copy data/hug-bench over"
        )
    return (
        f"{head} If this machine is offline, stage from a local mirror instead: --mirror DIR (or set REPLAY_MIRROR=DIR)"
    )
