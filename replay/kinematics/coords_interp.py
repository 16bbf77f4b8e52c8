"""Hand coordinates between recorded frames: the free joint's position linearly, every quaternion
(the free joint's and each ball joint's) slerped on the shortest arc
(:func:`replay.kinematics.quat.quat_slerp`), for the :data:`~replay.kinematics.hand_layout.MANOSIM_HAND`
layout (Newton ``joint_q`` order: position m, then xyzw quaternions).
"""

from __future__ import annotations

import numpy as np

from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.kinematics.quat import quat_slerp


def interp_coords(coords: np.ndarray, times: np.ndarray, t: float) -> np.ndarray:
    """Hand coords (67,) at recorded time ``t``: position linear, quaternions slerped.

    Args:
        coords: (T, 67) Newton joint_q order (pos xyz, quat xyzw, 15 quats xyzw).
        times: (T,) s, increasing.
    """
    i = int(np.clip(np.searchsorted(times, t) - 1, 0, len(times) - 2))
    a = float(np.clip((t - times[i]) / (times[i + 1] - times[i]), 0.0, 1.0))
    c0, c1 = coords[i], coords[i + 1]
    out = np.empty(MANOSIM_HAND.coords)
    out[:3] = (1 - a) * c0[:3] + a * c1[:3]
    nq = MANOSIM_HAND.bodies  # the free joint's quaternion and one per ball joint
    out[3:] = quat_slerp(c0[3:].reshape(nq, 4), c1[3:].reshape(nq, 4), a).reshape(-1)
    return out
