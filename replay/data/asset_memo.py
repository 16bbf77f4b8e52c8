"""Figures of an object asset that depend on its files alone, computed once per content.

Some input checks judge the object asset, not the recording: its simulated mass and how its
collision parts fill space (:func:`replay.checks.object_mass.measure_object_mass`), each part's
convexity (:func:`replay.checks.convexity.part_convexity`), the parts' summed hull volume
(:func:`replay.data.objects.collision_volume`). GRAB's 1,335 sequences use 51 objects,
so a study of thousands of recordings would measure each object tens of times (issue 41: these
figures were 27 % of a worker's CPU time on 8 GRAB lifts). :func:`memo` keeps each figure set

* per process, and
* on disk under ``$REPLAY_CACHE/asset_figures`` (:func:`replay.data.cache.cache_dir`; one JSON file
  per entry, written atomically), so another study, worker or run reads it instead of measuring again.

The key is the SHA-256 of: the figure's kind, the source of the modules that compute it and the
versions of the libraries below them (:data:`LIBRARIES`: a changed check or library never reads an
old figure), its scalar parameters (e.g. the asset's density and stated mass), and the bytes of
every input file (not their paths: a copied or moved dataset shares its entries). Only measurements
are kept, never a judgement: the check applies its thresholds to the figures afresh on every call.
A measurement that raises (an unreadable file, a part MuJoCo cannot compile) raises again on every
call and is never kept. Values must be JSON (floats round-trip exactly); each call returns a fresh
copy.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from replay.data.cache import cache_dir, sha256_text
from replay.fileio import atomic_write_bytes

#: libraries whose version is part of every key (meshes, hulls, MuJoCo's mesh inertia)
LIBRARIES = ("numpy", "scipy", "trimesh", "mujoco")
#: entries kept per process (each a few hundred bytes of JSON)
MEMO_SIZE = 512
SUB = "asset_figures"
_MEMO: OrderedDict = OrderedDict()


@lru_cache(maxsize=4096)
def _file_sha(path_str: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path_str, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, hashed once per process and file version (resolved path, size,
    modification time). Raises OSError: missing or unreadable."""
    p = Path(path)
    st = p.stat()
    return _file_sha(str(p.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=64)
def code_version(*modules: str) -> str:
    """Hex SHA-256 of the source files of ``modules`` (dotted names, imported): what computes a figure."""
    parts = []
    for name in modules:
        mod = sys.modules.get(name) or __import__(name, fromlist=["_"])
        parts.append(Path(mod.__file__).read_bytes().hex())
    parts += [f"{lib}=={__import__(lib).__version__}" for lib in LIBRARIES]
    return sha256_text(*parts)


def memo(kind: str, files: list, params: dict, compute: Callable[[], Any], code: tuple[str, ...]) -> Any:
    """``compute()``'s JSON value for these inputs, measured once per content (module doc).

    Args:
        kind: the figure's name (a sub-folder of the cache), e.g. ``"object_mass"``.
        files: the input files whose bytes the figure depends on.
        params: the scalar inputs (JSON), e.g. ``{"density": 1250.0, "mass": None}``.
        compute: measures the figure (may raise: nothing is kept then).
        code: dotted names of the modules whose source computes it.

    Returns:
        A fresh copy of the figure (JSON types: tuples come back as lists).

    Raises:
        whatever ``compute`` raises (a missing input file: ``compute`` names it).
    """
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
    """Forget the per-process entries (tests; the files stay)."""
    _MEMO.clear()
