"""Figures of an object asset that depend on its files alone, measured once per content (per process and under
``$REPLAY_CACHE/asset_figures``), keyed by kind, computing code, library versions, parameters and file bytes."""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from replay.data.cache import cache_dir, sha256_text
from replay.fileio import atomic_write_bytes, sha256_file

LIBRARIES = ("numpy", "scipy", "trimesh", "mujoco")
MEMO_SIZE = 512
SUB = "asset_figures"
_MEMO: OrderedDict = OrderedDict()


@lru_cache(maxsize=4096)
def _file_sha(path_str: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path_str)


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file, hashed once per process and file version. Raises OSError."""
    p = Path(path)
    st = p.stat()
    return _file_sha(str(p.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=64)
def code_version(*modules: str) -> str:
    """Hex SHA-256 of the source files of ``modules`` (dotted names)."""
    parts = []
    for name in modules:
        mod = sys.modules.get(name) or __import__(name, fromlist=["_"])
        parts.append(Path(mod.__file__).read_bytes().hex())
    parts += [f"{lib}=={__import__(lib).__version__}" for lib in LIBRARIES]
    return sha256_text(*parts)


def memo(kind: str, files: list, params: dict, *, compute: Callable[[], Any], code: tuple[str, ...]) -> Any:
    """``compute()``'s JSON value for these inputs, measured once per content, a fresh copy each call (tuples as
    lists); nothing kept when it raises. ``kind``: cache sub-folder; ``params``: scalar JSON inputs; ``code``: modules
    computing it."""
    try:
        key = sha256_text(
            kind, code_version(*code), json.dumps(params, sort_keys=True, default=str), *[file_sha256(p) for p in files]
        )
    except OSError:  # a missing or unreadable input: the check itself says which, with its field
        return compute()
    hit = _MEMO.get(key)
    if hit is not None:
        _MEMO.move_to_end(key)
        return json.loads(hit)
    path = None
    try:
        path = cache_dir(f"{SUB}/{kind}") / f"{key}.json"
        text = path.read_text()
        json.loads(text)
    except (OSError, ValueError):  # absent, unwritable cache folder or a torn file: measure
        text = None
    if text is None:
        text = json.dumps(compute(), separators=(",", ":"))
        if path is not None:
            try:
                atomic_write_bytes(path, text.encode())
            except OSError:  # a read-only cache: the figure is still kept in this process
                pass
    _MEMO[key] = text
    if len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return json.loads(text)


def clear() -> None:
    """Forget the per-process entries (the files stay)."""
    _MEMO.clear()
