"""Penetration at the grasp, as HUG's table 7 (arXiv:2606.17054): each finger capsule's signed distance to the object's
convex collision parts, hand at the recorded grasp coords, object at its recorded pose; depth = minus the smallest, mm.
The palm (no capsule) is not measured: a lower bound where it is deepest. No simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from replay.kinematics.hand_layout import finger_quats
from replay.kinematics.model import HandKinematics
from replay.protocol.pad_compression import Capsules, ObjectSDF, capsule_distance, capsule_mjcf
from replay.sim.world_builder import load_collision_parts

#: manosim bodies that carry a capsule (the 15 finger bones; body 0, the palm, has none)
FINGER_BODIES = tuple(range(1, 16))


def grasp_penetration(rec, coords: np.ndarray, mjcf: str | Path, *, frame: int | None = None) -> dict:
    """``{"frame", "inside", "depth_mm" (> 0 inside), "deepest_body" (manosim index), "bodies_inside" (of 15)}`` at
    ``frame`` (default the grasp). ``coords`` (T, 67): wrist m, wrist xyzw, 15 finger xyzw. DataError: an unreadable
    collision part or MJCF."""
    g = int(rec.grasp_frame if frame is None else frame)
    cap = capsule_mjcf(mjcf)
    kin, caps = HandKinematics.from_mjcf(cap), Capsules.from_mjcf(cap)
    obj = rec.target_object
    sdf = ObjectSDF(load_collision_parts(obj.asset), obj.pos[g], obj.quat[g])
    c = np.asarray(coords[g], float)
    joint_R = Rotation.from_quat(finger_quats(c)).as_matrix()
    d = capsule_distance(
        kin,
        caps,
        sdf,
        wrist_pos=c[:3],
        wrist_R=Rotation.from_quat(c[3:7]).as_matrix(),
        joint_R=joint_R,
        bodies=FINGER_BODIES,
    )
    k = int(np.argmin(d))
    return {
        "frame": g,
        "inside": bool(d[k] < 0),
        "depth_mm": float(-d[k] * 1000.0),
        "deepest_body": int(FINGER_BODIES[k]),
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
