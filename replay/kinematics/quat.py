"""Quaternion helpers: order (Newton and scipy xyzw, MuJoCo and the datasets' files wxyz), matrices, slerp."""

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


def quat_slerp(q0: np.ndarray, q1: np.ndarray, a: float) -> np.ndarray:
    """Slerp between xyzw quaternions (..., 4) with weight ``a`` in [0, 1] (shortest arc)."""
    q0 = np.asarray(q0, float)
    q1 = np.asarray(q1, float)
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-8
    w0 = np.where(small, 1.0 - a, np.sin((1 - a) * theta) / np.where(small, 1, s))
    w1 = np.where(small, a, np.sin(a * theta) / np.where(small, 1, s))
    q = w0 * q0 + w1 * q1
    return q / np.linalg.norm(q, axis=-1, keepdims=True)
