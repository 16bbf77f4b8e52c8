"""The inverse of :func:`replay.kinematics.mano.mano_to_finger_quat`, for tests that write MANO poses
(fixtures) or check the mapping by its round trip."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.errors import DataError
from replay.kinematics.mano import hands_mean


def finger_quat_to_mano(finger_quat: np.ndarray, side: str = "right", flat_hand_mean: bool = True) -> np.ndarray:
    """(T, 15, 4) xyzw -> (T, 15, 3) MANO axis-angle, rad, each rotation vector's angle in [0, pi] (the
    round trip is exact for MANO poses whose joint angles are below pi).

    Raises:
        DataError: not (T, 15, 4).
    """
    q = np.asarray(finger_quat, dtype=np.float64)
    if q.ndim != 3 or q.shape[1:] != (15, 4):
        raise DataError(None, "finger_quat", f"expected shape (T, 15, 4), got {q.shape}")
    T = q.shape[0]
    p = Rotation.from_quat(q.reshape(-1, 4)).as_rotvec().reshape(T, 15, 3)
    if not flat_hand_mean:
        p = p - hands_mean(side)
    return p
