"""Hand coordinates between recorded frames: position linear, quaternions slerped."""

from __future__ import annotations

import numpy as np

from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.kinematics.quat import quat_slerp


def interp_coords(coords: np.ndarray, times: np.ndarray, t: float) -> np.ndarray:
    """(67,) at time ``t`` (s) from ``coords`` (T, 67) Newton joint_q (m, xyzw) at ``times`` (T,) s, increasing."""
    i = int(np.clip(np.searchsorted(times, t) - 1, 0, len(times) - 2))
    a = float(np.clip((t - times[i]) / (times[i + 1] - times[i]), 0.0, 1.0))
    c0, c1 = coords[i], coords[i + 1]
    out = np.empty(MANOSIM_HAND.coords)
    out[:3] = (1 - a) * c0[:3] + a * c1[:3]
    nq = MANOSIM_HAND.bodies  # the free joint's quaternion and one per ball joint
    out[3:] = quat_slerp(c0[3:].reshape(nq, 4), c1[3:].reshape(nq, 4), a).reshape(-1)
    return out
