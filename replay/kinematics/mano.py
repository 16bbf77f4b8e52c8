"""MANO pose parameters -> manosim joint rotations and wrist pose (``docs/hand.md``, the MANO mapping)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.data.types import TIP_LANDMARKS
from replay.errors import DataError

#: MANO's right-hand mean finger pose ``hands_mean`` (15 x 3 axis-angle, rad, MANO joint order), to 1e-4 as
#: hard-coded in public code without the licensed model files (InterHand2.6M / HaMeR ``th_hands_mean_right``)
MANO_HANDS_MEAN_RIGHT = np.array(
    [
        [0.1117, -0.0429, 0.4164],
        [0.1088, 0.0660, 0.7562],
        [-0.0964, 0.0909, 0.1885],
        [-0.1181, -0.0509, 0.5296],
        [-0.1437, -0.0552, 0.7049],
        [-0.0192, 0.0923, 0.3379],
        [-0.4570, 0.1963, 0.6255],
        [-0.2147, 0.0660, 0.5069],
        [-0.3697, 0.0603, 0.0795],
        [-0.1419, 0.0859, 0.6355],
        [-0.3033, 0.0579, 0.6314],
        [-0.1761, 0.1321, 0.3734],
        [0.8510, -0.2769, 0.0915],
        [-0.4998, -0.0266, -0.0529],
        [0.5356, -0.0460, 0.2774],
    ]
)

#: MANO fingertip vertex ids (thumb, index, middle, ring, pinky): smplx's ``vertex_ids['mano']``, GRAB's landmarks
MANO_TIP_VERTICES = (744, 320, 443, 554, 671)


def hands_mean(side: str) -> np.ndarray:
    """(15, 3) MANO mean finger pose, rad; the left hand's is the right one mirrored ``(x, -y, -z)``."""
    if side == "right":
        return MANO_HANDS_MEAN_RIGHT.copy()
    if side == "left":
        return MANO_HANDS_MEAN_RIGHT * np.array([1.0, -1.0, -1.0])
    raise DataError(None, "hand_side", f"expected 'right' or 'left', got {side!r}")


def _pose_array(finger_pose) -> np.ndarray:
    p = np.asarray(finger_pose, dtype=np.float64)
    if p.ndim == 2 and p.shape[1] == 45:
        p = p.reshape(-1, 15, 3)
    if p.ndim != 3 or p.shape[1:] != (15, 3):
        raise DataError(None, "finger_pose", f"expected shape (T, 15, 3) or (T, 45), got {p.shape}")
    if not np.all(np.isfinite(p)):
        raise DataError(None, "finger_pose", "non-finite values")
    return p


def mano_to_finger_quat(finger_pose: np.ndarray, side: str = "right", flat_hand_mean: bool = True) -> np.ndarray:
    """MANO finger axis-angle (T, 15, 3) or (T, 45), rad, MANO joint order, each in its parent's template frame ->
    (T, 15, 4) xyzw of ``mano_joint_1..15`` from the MJCF reference; ``flat_hand_mean`` False adds MANO's mean pose.
    Raises DataError: wrong shape, non-finite values, unknown side."""
    p = _pose_array(finger_pose)
    if not flat_hand_mean:
        p = p + hands_mean(side)
    T = p.shape[0]
    return Rotation.from_rotvec(p.reshape(-1, 3)).as_quat().reshape(T, 15, 4)


def wrist_from_transform(T_world_wrist: np.ndarray, source=None) -> tuple[np.ndarray, np.ndarray]:
    """``(wrist_pos (T, 3) m, wrist_quat (T, 4) xyzw)`` of ``mano_body_0`` from HUG-Bench's (T, 4, 4) world-from-wrist
    (no offset). Raises DataError: wrong shape, non-finite, or a rotation off orthonormal or det 1 by over 1e-3."""
    M = np.asarray(T_world_wrist, dtype=np.float64)
    if M.ndim != 3 or M.shape[1:] != (4, 4):
        raise DataError(source, "T_world_wrist", f"expected shape (T, 4, 4), got {M.shape}")
    if not np.all(np.isfinite(M)):
        raise DataError(source, "T_world_wrist", "non-finite values")
    R = M[:, :3, :3]
    err = np.abs(R @ R.transpose(0, 2, 1) - np.eye(3)).max(axis=(1, 2))
    if np.any(err > 1e-3) or np.any(np.abs(np.linalg.det(R) - 1) > 1e-3):
        bad = int(np.flatnonzero((err > 1e-3) | (np.abs(np.linalg.det(R) - 1) > 1e-3))[0])
        raise DataError(source, "T_world_wrist", f"rotation block is not a rotation at frame {bad}")
    return M[:, :3, 3].copy(), Rotation.from_matrix(R).as_quat()


def wrist_from_global_orient(
    global_orient: np.ndarray, trans: np.ndarray, j0: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(wrist_pos (T, 3) m, wrist_quat (T, 4) xyzw)`` of ``mano_body_0``: ``J0 + trans`` and
    ``R(global_orient)`` (MANO places a template vertex v at ``R (v - J0) + J0 + trans``). ``global_orient``
    (T, 3) rad, ``trans`` (T, 3) m, ``j0`` (3,) m: the shape's rest wrist joint (:func:`fit_wrist_offset`)."""
    go = np.asarray(global_orient, dtype=np.float64)
    tr = np.asarray(trans, dtype=np.float64)
    if go.ndim != 2 or go.shape[1] != 3 or tr.shape != go.shape:
        raise DataError(None, "global_orient/trans", f"expected two (T, 3) arrays, got {go.shape} and {tr.shape}")
    return tr + np.asarray(j0, dtype=np.float64), Rotation.from_rotvec(go).as_quat()


def fit_wrist_offset(
    kin,
    wrist_quat: np.ndarray,
    trans: np.ndarray,
    *,
    finger_quat: np.ndarray,
    tips: np.ndarray,
    valid: np.ndarray | None = None,
) -> np.ndarray:
    """(3,) m: J0, the ``c`` of ``wrist_pos = trans + c`` best fitting ``tips`` (T, 5, 3) m (thumb..pinky)."""
    T = trans.shape[0]
    valid = np.ones(T, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    L0 = kin.fk_landmarks(np.zeros((T, 3)), wrist_quat, finger_quat)[:, list(TIP_LANDMARKS)]
    d = tips - trans[:, None, :] - L0
    return d[valid].reshape(-1, 3).mean(axis=0)
