"""Each finger joint's lever to its fingertip pad, m: a pad force ``F`` (N) needs at most ``F * lever`` (N·m) at each
joint of the finger (static, force perpendicular to the joint-to-pad line)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import mujoco
import numpy as np

from replay.errors import DataError
from replay.kinematics.model import compile_mjcf

#: per finger chain, its three bones (proximal to distal), 1-based
CHAINS = ((1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12), (13, 14, 15))


def _capsule_file(mjcf: Path) -> Path:
    """The capsule hand MJCF that holds the distal capsules for ``mjcf``."""
    return mjcf if mjcf.name != "mesh_hand.xml" else mjcf.with_name("capsule_hand.xml")


@lru_cache(maxsize=8)
def _levers(path: str) -> tuple:
    m = compile_mjcf(Path(path))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    out = np.zeros(15)
    for chain in CHAINS:
        dist = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{chain[-1]}")
        caps = [
            g for g in range(m.ngeom) if m.geom_bodyid[g] == dist and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE
        ]
        if dist < 0 or len(caps) != 1:
            raise DataError(Path(path), f"body mano_body_{chain[-1]}", "expected one distal collision capsule")
        g = caps[0]
        axis, half = d.geom_xmat[g].reshape(3, 3)[:, 2], float(m.geom_size[g, 1])
        ends = (d.geom_xpos[g] + half * axis, d.geom_xpos[g] - half * axis)
        jd = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"mano_joint_{chain[-1]}")
        pad = max(ends, key=lambda e: float(np.linalg.norm(e - d.xanchor[jd])))
        for b in chain:
            j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"mano_joint_{b}")
            if j < 0:
                raise DataError(Path(path), "joint", f"'mano_joint_{b}' not found; is this a manosim hand MJCF?")
            out[b - 1] = float(np.linalg.norm(pad - d.xanchor[j]))
    return tuple(out)


def finger_levers(mjcf: str | Path) -> np.ndarray:
    """(15,) m: each ``mano_joint_i``'s anchor to its pad (the distal capsule segment's far end) at the reference pose,
    from ``capsule_hand.xml``; DataError if not a manosim hand."""
    return np.array(_levers(str(_capsule_file(Path(mjcf)).resolve())))
