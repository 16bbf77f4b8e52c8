"""Each finger joint's lever to its fingertip pad on the manosim hand.

Lever (m): the distance, at the MJCF reference pose (the flat hand, every ball joint at the
identity), from a finger joint's anchor (``mano_joint_i``'s ``pos``, the MANO joint centre) to
the finger's pad point: the far end of the distal bone's collision capsule segment (the centre
of the capsule's tip hemisphere, where a pad contact pushes). Read with MuJoCo's compiler
(:func:`mujoco.mj_kinematics` on ``qpos0``) from ``capsule_hand.xml``; for ``mesh_hand.xml`` from
the ``capsule_hand.xml`` beside it. A pad force ``F`` (N) needs at most ``F * lever`` (N·m) at each
joint of the finger (:mod:`replay.sim.finger_strength`). Joint names: fingers MCP, PIP, DIP (MANO
bones 1-3 index, 4-6 middle, 7-9 pinky, 10-12 ring), thumb CMC, MCP, IP (13-15).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import mujoco
import numpy as np

from replay.errors import DataError
from replay.kinematics.mjcf_tree import compile_mjcf

#: MANO bone -> (finger, joint) name, bones 1..15 (index 0 = bone 1).
JOINT_NAMES = tuple(f"{f}_{j}" for f in ("index", "middle", "pinky", "ring") for j in ("mcp", "pip", "dip")) + (
    "thumb_cmc",
    "thumb_mcp",
    "thumb_ip",
)
#: per finger chain, its three bones (proximal to distal), 1-based; the last is the distal one.
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
    """(15,) joint-to-pad lever of ``mano_joint_1..15`` (order :data:`JOINT_NAMES`), m (module doc).

    Raises:
        DataError: the MJCF (or the capsule hand beside a mesh hand) is missing, does not compile,
            or lacks the manosim joints or one capsule per distal bone.
    """
    return np.array(_levers(str(_capsule_file(Path(mjcf)).resolve())))
