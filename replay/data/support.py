"""What a recording's object rests on: the extent of its table top (GRAB), or a plane."""

from __future__ import annotations

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from replay.errors import DataError


def support_extent(rec) -> tuple[float, float, float, float] | None:
    """xy extent ``(xmin, ymin, xmax, ymax)`` of the recording's table top, m, or None.

    GRAB recordings carry the table (``meta["table"]``: asset, pos, xyzw quat); its
    visual mesh placed in the world gives the extent. An infinite plane at table
    height would block the recorded hand where it really passed beside and below
    the table (GRAB: the hand starts at the subject's hip, below the table top).
    Without a table (HUG-Bench: objects on the ground) the support is a plane.
    """
    table = (rec.meta or {}).get("table")
    if not table or getattr(table.get("asset"), "visual_mesh", None) is None:
        return None
    path = table["asset"].visual_mesh
    try:
        m = trimesh.load(path, force="mesh")
    except Exception as e:
        raise DataError(path, None, f"cannot read the table mesh: {e}") from e
    v = Rotation.from_quat(np.asarray(table["quat"], float)).apply(np.asarray(m.vertices)) + np.asarray(
        table["pos"], float
    )
    lo, hi = v[:, :2].min(0), v[:, :2].max(0)
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])
