"""Reading one triangle mesh file (STL/OBJ/PLY) through trimesh, with errors that name the file.

One mesh cache per process: a file is parsed once per run, however many checks, adapters and
scene builders read it. :func:`load_mesh` gives each caller its own copy (a caller may transform
it in place); :func:`shared_mesh` gives every caller the one cached instance, so what trimesh
derives from it and caches on it (convex hull, volume, watertightness) is computed once per file
and process, not once per check (issue 41 counted 78 loads and 102 hull computations for 3
recordings). The cache key is the file's resolved path, size and modification time, so a file
rewritten during a run is read again.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import trimesh

from replay.data.limits import check_size
from replay.errors import DataError


def load_mesh(
    path: str | Path, field: str | None = None, source: str | Path | None = None, process: bool = True
) -> trimesh.Trimesh:
    """Load one triangle mesh (STL/OBJ/PLY) as a single :class:`trimesh.Trimesh` of the caller's own
    (a copy of :func:`shared_mesh`'s: transform it freely).

    Raises:
        DataError: file missing, unreadable or without triangles.
    """
    return shared_mesh(path, field, source, process).copy()


def shared_mesh(
    path: str | Path, field: str | None = None, source: str | Path | None = None, process: bool = True
) -> trimesh.Trimesh:
    """The process's one :class:`trimesh.Trimesh` of a mesh file (STL/OBJ/PLY), for readers only:
    never transform it or assign to its arrays (every later reader would see the change; take
    :func:`load_mesh`'s copy, or ``mesh.copy()``, to transform). What trimesh caches on it (hull,
    volume) is shared by every reader.

    Args:
        path: mesh file.
        field: field name for error messages (e.g. ``"visual_mesh"``).
        source: file that referenced the mesh (named in errors instead of ``path``).
        process: let trimesh merge duplicate vertices (STL stores each triangle's
            corners separately; merging makes closed meshes watertight). False keeps
            the file's vertex order (needed to compare with per-vertex data).

    Raises:
        DataError: file missing, larger than the mesh size limit (:func:`replay.data.limits.check_size`,
            before it is read), a binary STL declaring more triangles than the file holds
            (:func:`check_stl_count`), unreadable or without triangles.
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


#: binary STL: 80-byte header, uint32 triangle count, 50 bytes per triangle (normal, 3 vertices,
#: attribute count; the format as 3D Systems defined it)
STL_HEADER_BYTES = 84
STL_TRIANGLE_BYTES = 50


def check_stl_count(path: str | Path, field: str | None = None) -> None:
    """Refuse a binary STL whose header declares more triangles than its length holds, before any
    parser believes the count (reads 84 bytes). An ASCII STL (``solid`` ... with no consistent
    binary count) is left to the parser.

    Raises:
        DataError: ``declares N triangles but the file holds M bytes`` (cause ``file_size``).
    """
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


#: meshes kept per process (an object's visual and collision parts, the tables, the hands)
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


#: Unit readings tried when an object's size is out of range: (factor to metres, name).
UNIT_READINGS = ((1e-3, "millimetres"), (1e-2, "centimetres"), (0.0254, "inches"), (1e3, "metres read as millimetres"))


def unit_hint(extent: float) -> str:
    """``"; millimetres? (x 0.001 gives 40 mm)"`` for a size ``extent`` (m) that one of
    :data:`UNIT_READINGS` brings to 10-500 mm (a hand-held object), else ``""``."""
    lo, hi = 0.01, 0.5  # a hand-held object's size, m
    for f, name in UNIT_READINGS:
        if lo <= extent * f <= hi:
            return f"; {name}? (x {f:g} gives {extent * f * 1000:.0f} mm)"
    return ""
