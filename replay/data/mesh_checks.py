"""Collision parts must be convex solids: a part with under 4 distinct vertices or flat has no hull (Qhull: "initial
simplex is flat"; MuJoCo: "mesh volume is too small") and is refused naming its file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from replay.data.mesh_io import shared_mesh, unit_hint
from replay.errors import DataError

#: a tetrahedron; 0.1 mm thick; 1 mm^3 (1.25 mg at object_sim's 1250 kg/m^3): all far below a real part
MIN_PART_VERTICES = 4
MIN_PART_THICKNESS_M = 1e-4
MIN_PART_VOLUME_M3 = 1e-9
#: m: a part smaller every way is reported with the unit that would make it hand-sized
MIN_PART_EXTENT_M = 1e-3


def part_figures(vertices: np.ndarray) -> dict:
    """``{"vertices", "thickness_m", "hull_volume_m3", "extent_m"}`` of (V, 3) vertices (m): distinct count, extent
    along the thinnest principal axis, hull volume (0 without a 3-D hull), largest box side."""

    v = np.unique(np.round(np.asarray(vertices, float), 12), axis=0)
    out = {
        "vertices": int(len(v)),
        "thickness_m": 0.0,
        "hull_volume_m3": 0.0,
        "extent_m": float(np.ptp(v, axis=0).max()) if len(v) else 0.0,
    }
    if len(v) < 2:
        return out
    c = v - v.mean(axis=0)
    _, _, vt = np.linalg.svd(c, full_matrices=False)
    proj = c @ vt[-1] if vt.shape[0] == 3 else np.zeros(len(v))
    out["thickness_m"] = float(proj.max() - proj.min())
    if len(v) >= 4 and out["thickness_m"] > 0:
        try:
            out["hull_volume_m3"] = float(ConvexHull(v).volume)
        except QhullError:
            out["hull_volume_m3"] = 0.0
    return out


def check_collision_part(path: str | Path, field: str | None = None, source: str | Path | None = None) -> dict:
    """:func:`part_figures` of a collision part (STL/OBJ/PLY, m), naming the part file and ``field``. Raises DataError:
    unreadable, or under :data:`MIN_PART_VERTICES`, :data:`MIN_PART_THICKNESS_M` or :data:`MIN_PART_VOLUME_M3`."""
    path = Path(path)
    mesh = shared_mesh(path, field)
    f = part_figures(mesh.vertices)
    fix = "regenerate the convex part (or remove it from the model)"
    if f["vertices"] < MIN_PART_VERTICES:
        raise DataError(
            path,
            field,
            f"degenerate collision part: {f['vertices']} distinct vertices "
            f"(a solid needs >= {MIN_PART_VERTICES}); {fix}",
            cause="collision_parts",
        )
    if f["extent_m"] < MIN_PART_EXTENT_M:  # small every way: a unit error more likely than a flat part
        hint = unit_hint(f["extent_m"]).strip("; ").replace("? (", "? ")
        raise DataError(
            path,
            field,
            f"degenerate collision part: {f['extent_m'] * 1000:.2g} mm across{f' ({hint}' if hint else ''}; {fix}",
            cause="units" if hint else "collision_parts",
        )
    if f["thickness_m"] < MIN_PART_THICKNESS_M:
        raise DataError(
            path,
            field,
            f"degenerate collision part: flat (zero volume; {f['thickness_m'] * 1000:.3g} mm "
            f"thick, need >= {MIN_PART_THICKNESS_M * 1000:g} mm); {fix}",
            cause="collision_parts",
        )
    if f["hull_volume_m3"] < MIN_PART_VOLUME_M3:
        raise DataError(
            path,
            field,
            f"degenerate collision part: hull volume {f['hull_volume_m3'] * 1e9:.3g} mm^3 "
            f"(need >= {MIN_PART_VOLUME_M3 * 1e9:g} mm^3); {fix}",
            cause="collision_parts",
        )
    return f
