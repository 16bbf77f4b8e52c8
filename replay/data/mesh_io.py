"""Reading one mesh file (STL/OBJ/PLY) through trimesh, errors naming the file, one parse per file version."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import trimesh

from replay.data.limits import check_size
from replay.errors import DataError


def load_mesh(
    path: str | Path, field: str | None = None, source: str | Path | None = None, *, process: bool = True
) -> trimesh.Trimesh:
    """The caller's own copy of :func:`shared_mesh`'s; DataError when missing, unreadable or without triangles."""
    return shared_mesh(path, field, source, process=process).copy()


def shared_mesh(
    path: str | Path, field: str | None = None, source: str | Path | None = None, *, process: bool = True
) -> trimesh.Trimesh:
    """The process's one shared mesh of a file: never transform it. ``source`` named in errors instead of ``path``;
    ``process=False`` keeps the file's vertex order. Raises DataError: missing, over the size limit, a binary STL
    declaring more triangles than it holds, unreadable or without triangles."""
    path = Path(path)
    where = source if source is not None else path
    if not path.is_file():
        raise DataError(where, field, f"mesh file not found: {path}")
    check_size(path, "mesh", field)
    if path.suffix.lower() == ".stl":
        check_stl_count(path, field)
    st = path.stat()
    try:
        mesh = _cached_mesh(str(path.resolve()), st.st_size, st.st_mtime_ns, bool(process))
    except _Unreadable as exc:
        raise DataError(path, field, str(exc)) from None
    return mesh


#: binary STL (3D Systems): 80-byte header, uint32 triangle count, then 50 bytes per triangle
STL_HEADER_BYTES = 84
STL_TRIANGLE_BYTES = 50


def check_stl_count(path: str | Path, field: str | None = None) -> None:
    """Refuse a binary STL declaring more triangles than its length holds (DataError, cause ``file_size``)."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(STL_HEADER_BYTES)
    if len(head) < STL_HEADER_BYTES:
        return  # too short for a binary STL: the parser says what it is
    n = int.from_bytes(head[80:84], "little")
    need = STL_HEADER_BYTES + STL_TRIANGLE_BYTES * n
    if need == size or (head[:5].lower() == b"solid" and _ascii_start(path)):
        return
    if need > size:
        raise DataError(
            path,
            field,
            f"binary STL declares {n:,} triangles ({need:,} bytes) but the file holds "
            f"{size:,} bytes: truncated, or a header that lies",
            cause="file_size",
        )


def _ascii_start(path: Path) -> bool:
    """Whether the first 1 kB is printable text (an ASCII STL)."""
    with open(path, "rb") as f:
        chunk = f.read(1024)
    return all(b in b"\t\n\r" or 32 <= b < 127 for b in chunk)


MESH_CACHE_SIZE = 256


class _Unreadable(Exception):
    """A mesh file that cannot be used."""


@lru_cache(maxsize=MESH_CACHE_SIZE)
def _cached_mesh(path_str: str, size: int, mtime_ns: int, process: bool) -> trimesh.Trimesh:
    """The parsed, checked mesh of one file version (errors not cached)."""
    try:
        mesh = trimesh.load(path_str, force="mesh", process=process)
    except Exception as exc:  # trimesh raises many types for bad files
        raise _Unreadable(f"cannot read mesh: {type(exc).__name__}: {exc}") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise _Unreadable("mesh has no triangles")
    if not np.all(np.isfinite(mesh.vertices)):
        raise _Unreadable("mesh has non-finite vertices")
    return mesh


UNIT_READINGS = ((1e-3, "millimetres"), (1e-2, "centimetres"), (0.0254, "inches"), (1e3, "metres read as millimetres"))


def unit_hint(extent: float) -> str:
    """``"; millimetres? (x 0.001 gives 40 mm)"`` where a :data:`UNIT_READINGS` makes ``extent`` (m) 10-500 mm."""
    lo, hi = 0.01, 0.5  # a hand-held object's size, m
    for f, name in UNIT_READINGS:
        if lo <= extent * f <= hi:
            return f"; {name}? (x {f:g} gives {extent * f * 1000:.0f} mm)"
    return ""
