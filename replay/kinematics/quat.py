"""Quaternion helpers shared by the kinematics: order conversion (xyzw <-> wxyz) and matrices.

Newton and scipy order quaternions **xyzw**; MuJoCo (and the datasets' files) **wxyz**.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def quat_xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    """Reorder quaternions (..., 4) from xyzw (Newton, scipy) to wxyz (MuJoCo)."""
    q = np.asarray(q)
    return np.concatenate([q[..., 3:4], q[..., :3]], axis=-1)


def quat_wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    """Reorder quaternions (..., 4) from wxyz (MuJoCo, GRAB) to xyzw (Newton, scipy)."""
    q = np.asarray(q)
    return np.concatenate([q[..., 1:4], q[..., 0:1]], axis=-1)


def as_matrix(quat_xyzw: np.ndarray) -> np.ndarray:
    """(..., 4) xyzw -> (..., 3, 3) rotation matrices (normalising the quaternions)."""
    q = np.asarray(quat_xyzw, dtype=np.float64)
    shape = q.shape[:-1]
    return Rotation.from_quat(q.reshape(-1, 4)).as_matrix().reshape(*shape, 3, 3)
