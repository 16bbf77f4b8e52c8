"""Penetration at the grasp, as HUG's table 7 (arXiv:2606.17054): each finger capsule's signed distance to the object's
convex collision parts, hand at the recorded grasp coords, object at its recorded pose; depth = minus the smallest, mm.
The palm (no capsule) is not measured: a lower bound where it is deepest. No simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replay.protocol.contact_agreement import recorded_bone_distances


def grasp_penetration(rec, coords: np.ndarray, mjcf: str | Path) -> dict:
    """``{"frame", "inside", "depth_mm" (> 0 inside), "deepest_body" (manosim index), "bodies_inside" (of 15)}`` at
    the grasp frame. ``coords`` (T, 67): wrist m, wrist xyzw, 15 finger xyzw. DataError: an unreadable collision part
    or MJCF."""
    d = recorded_bone_distances(rec, coords, mjcf)[1:]  # the 15 finger capsules, manosim bodies 1-15
    k = int(np.argmin(d))
    return {
        "frame": int(rec.grasp_frame),
        "inside": bool(d[k] < 0),
        "depth_mm": float(-d[k] * 1000.0),
        "deepest_body": k + 1,
        "bodies_inside": int(np.sum(d < 0)),
    }


def summarize(rows: list[dict]) -> dict:
    """Dataset figures of :func:`grasp_penetration` rows: ``n``, ``inside``, ``inside_frac``, ``mean_depth_mm`` (over
    those inside, as HUG), ``mean_depth_all_mm`` (negative: gap), ``median_depth_mm``, ``max_depth_mm``."""
    d = np.array([r["depth_mm"] for r in rows], float)
    ins = d > 0
    return {
        "n": int(d.size),
        "inside": int(ins.sum()),
        "inside_frac": float(ins.mean()) if d.size else None,
        "mean_depth_mm": float(d[ins].mean()) if ins.any() else None,
        "mean_depth_all_mm": float(d.mean()) if d.size else None,
        "median_depth_mm": float(np.median(d)) if d.size else None,
        "max_depth_mm": float(d.max()) if d.size else None,
    }
