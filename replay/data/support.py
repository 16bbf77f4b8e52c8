"""What a recording's object rests on: the extent of its table top (GRAB), or a plane."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.data.mesh_io import shared_mesh


def support_extent(rec) -> tuple[float, float, float, float] | None:
    """``(xmin, ymin, xmax, ymax)`` m of the recording's table top (GRAB), or None: a plane (one at table height would
    block a hand passing below the table top)."""
    table = (rec.meta or {}).get("table")
    if not table or getattr(table.get("asset"), "visual_mesh", None) is None:
        return None
    m = shared_mesh(table["asset"].visual_mesh, "visual_mesh", table["asset"].source)
    v = Rotation.from_quat(np.asarray(table["quat"], float)).apply(np.asarray(m.vertices)) + np.asarray(
        table["pos"], float
    )
    lo, hi = v[:, :2].min(0), v[:, :2].max(0)
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])
