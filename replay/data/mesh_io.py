"""Reading one triangle mesh file (STL/OBJ/PLY) through trimesh, with errors that name the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh

from replay.errors import DataError


def load_mesh(path: str | Path, field: str | None = None, source: str | Path | None = None,
              process: bool = True) -> trimesh.Trimesh:
    """Load one triangle mesh (STL/OBJ/PLY) as a single :class:`trimesh.Trimesh`.

    Args:
        path: mesh file.
        field: field name for error messages (e.g. ``"visual_mesh"``).
        source: file that referenced the mesh (named in errors instead of ``path``).
        process: let trimesh merge duplicate vertices (STL stores each triangle's
            corners separately; merging makes closed meshes watertight). False keeps
            the file's vertex order (needed to compare with per-vertex data).

    Raises:
        DataError: file missing, unreadable or without triangles.
    """
    path = Path(path)
    where = source if source is not None else path
    if not path.is_file():
        raise DataError(where, field, f"mesh file not found: {path}")
    try:
        mesh = trimesh.load(path, force="mesh", process=process)
    except Exception as exc:  # trimesh raises many types for bad files
        raise DataError(path, field, f"cannot read mesh: {type(exc).__name__}: {exc}") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise DataError(path, field, "mesh has no triangles")
    if not np.all(np.isfinite(mesh.vertices)):
        raise DataError(path, field, "mesh has non-finite vertices")
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
