"""A hand pose as MuJoCo ``qpos``, for tests that pose the hand's MJCF in MuJoCo directly."""

from __future__ import annotations

import numpy as np

from replay.kinematics.model import NUM_BODIES, HandKinematics
from replay.kinematics.quat import quat_xyzw_to_wxyz


def mujoco_qpos(kin: HandKinematics, model, wrist_pos, wrist_quat, finger_quat) -> np.ndarray:
    """MuJoCo qpos (nq,), wxyz inside, of ``model`` (compiled from ``kin.source``) for one pose:
    ``wrist_pos`` (3,) m, ``wrist_quat`` (4,) xyzw, ``finger_quat`` (15, 4) xyzw."""
    qpos = np.array(model.qpos0, dtype=np.float64)
    qpos[kin.wrist_slide_qposadr] = wrist_pos
    qpos[kin.qposadr[0] : kin.qposadr[0] + 4] = quat_xyzw_to_wxyz(wrist_quat)
    for i in range(1, NUM_BODIES):
        a = kin.qposadr[i]
        qpos[a : a + 4] = quat_xyzw_to_wxyz(finger_quat[i - 1])
    return qpos
