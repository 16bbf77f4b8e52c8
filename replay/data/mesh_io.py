"""Reading one triangle mesh file (STL/OBJ/PLY) through trimesh, with errors that name the file; one parse per
file and process (keyed by resolved path, size and mtime), so what trimesh caches on it is computed once."""

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
    """One triangle mesh as a :class:`trimesh.Trimesh` of the caller's own (a copy of :func:`shared_mesh`'s);
    raises DataError when missing, unreadable or without triangles."""
    return shared_mesh(path, field, source, process=process).copy()


def shared_mesh(
    path: str | Path, field: str | None = None, source: str | Path | None = None, *, process: bool = True
) -> trimesh.Trimesh:
    """The process's one :class:`trimesh.Trimesh` of a mesh file, for readers only: never transform it (take
    :func:`load_mesh`'s copy). ``source`` is named in errors instead of ``path``; ``process`` lets trimesh merge
    duplicate vertices (False keeps the file's vertex order, to compare with per-vertex data).

    Raises:
        DataError: file missing, over the mesh size limit (before it is read), a binary STL declaring more
            triangles than it holds, unreadable or without triangles.
    """
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
    """Refuse a binary STL whose header declares more triangles than its length holds (reads 84 bytes; ASCII STL is
    left to the parser): DataError ``declares N triangles but the file holds M bytes`` (cause ``file_size``)."""
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
    """Whether the file's first 1 kB is printable text (an ASCII STL begins ``solid <name>``, facets)."""
    with open(path, "rb") as f:
        chunk = f.read(1024)
    return all(b in b"\t\n\r" or 32 <= b < 127 for b in chunk)


MESH_CACHE_SIZE = 256


class _Unreadable(Exception):
    """A mesh file that cannot be used (the message; :func:`load_mesh` names file and field)."""


@lru_cache(maxsize=MESH_CACHE_SIZE)
def _cached_mesh(path_str: str, size: int, mtime_ns: int, process: bool) -> trimesh.Trimesh:
    """The parsed, checked mesh of one file version (:func:`load_mesh`); errors are not cached."""
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
    """``"; millimetres? (x 0.001 gives 40 mm)"`` for a size ``extent`` (m) that one of
    :data:`UNIT_READINGS` brings to 10-500 mm (a hand-held object), else ``""``."""
    lo, hi = 0.01, 0.5  # a hand-held object's size, m
    for f, name in UNIT_READINGS:
        if lo <= extent * f <= hi:
            return f"; {name}? (x {f:g} gives {extent * f * 1000:.0f} mm)"
    return ""
