"""Checks on collision geometry before it reaches a simulator.

A collision part is a convex solid: the simulator (MuJoCo, through Newton) takes the
convex hull of each part and gives it mass and inertia from the hull's volume. A part
with fewer than 4 distinct vertices, or whose vertices lie in a plane (zero volume),
has no hull: Qhull fails on it ("initial simplex is flat"), MuJoCo refuses to compile it
("mesh volume is too small"), and trimesh's hull code needs graph fixes on it. Such a
part is an input error, named with its file, before anything loads it into a scene.

Thresholds (object frame, metres):

* :data:`MIN_PART_VERTICES` = 4: a tetrahedron, the smallest solid.
* :data:`MIN_PART_THICKNESS_M` = 0.1 mm: the hull's extent along its thinnest principal
  axis. Measured on the mirror: the thinnest of the 135 collision parts of the 30 GRAB
  objects and the table (object_sim ``contact*.stl``) is 1.5 mm thick (watch
  ``contact1.stl``), the thinnest CoACD part of TACO 20231104_017 2.5 mm; a flat part is
  0 to float precision.
* :data:`MIN_PART_VOLUME_M3` = 1 mm^3 (1e-9 m^3): the smallest hull volume measured there
  is 48 mm^3 (a TACO CoACD part; GRAB's smallest 148 mm^3); at object_sim's 1250 kg/m^3 a
  1 mm^3 part weighs 1.25 mg.
* :data:`MIN_PART_EXTENT_M` = 1 mm: a part smaller than this every way is reported with the
  unit that would make it hand-sized (a mesh in metres read as millimetres), not as flat.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from replay.data.mesh_io import shared_mesh, unit_hint
from replay.errors import DataError

MIN_PART_VERTICES = 4
MIN_PART_THICKNESS_M = 1e-4
MIN_PART_VOLUME_M3 = 1e-9
#: A part smaller than this every way (largest extent, m) is reported with the unit that would fit.
MIN_PART_EXTENT_M = 1e-3


def part_figures(vertices: np.ndarray) -> dict:
    """Distinct vertex count, thickness (m) and convex-hull volume (m^3) of a part.

    Args:
        vertices: (V, 3) part vertices, m, object frame.

    Returns:
        ``{"vertices": int, "thickness_m": float, "hull_volume_m3": float, "extent_m": float}``
        (largest bounding-box side); thickness is
        the extent along the thinnest principal axis of the vertices (0 for a flat part),
        the volume 0 when there is no 3-D hull.
    """

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
    """Load a collision part and raise if it cannot be a convex solid.

    Args:
        path: the part's mesh file (STL/OBJ/PLY), object frame, m.
        field: field for the message (e.g. ``"geom[contact0].mesh"``).
        source: the file that declares the part (not used in the message: the part
            file itself is named, it is the one to fix).

    Returns:
        :func:`part_figures` of the part.

    Raises:
        DataError: unreadable mesh; fewer than :data:`MIN_PART_VERTICES` distinct
            vertices; thinner than :data:`MIN_PART_THICKNESS_M`; hull volume below
            :data:`MIN_PART_VOLUME_M3`.
    """
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
