"""MANO pose parameters -> manosim joint rotations and wrist pose.

Frame relation (measured, see tests/test_kinematics_mano.py). manosim builds its
MJCF from the MANO model: every body frame of ``mano_body_i`` has the identity
orientation (no ``quat`` in the MJCF) and its ball joint sits at MANO joint i of
the hand's shape. So the body frames are MANO's template-aligned joint frames,
translated to the joints. The wrist axes the manosim README gives (right hand:
wrist -> middle finger -X, palm normal -Y, wrist -> thumb +Z) are those of MANO's
right template, and the left hand mirrors x. Consequently a MANO joint's local
axis-angle ``theta_i`` (in the parent's template-aligned frame) *is* the rotation
of ``mano_joint_i`` relative to the MJCF reference pose, once the reference pose
is the same: manosim's reference is MANO's template (flat hand), so a pose given
relative to MANO's mean hand must first have the mean added:
``R_i = exp(theta_i + hands_mean_i)``. No fixed rotation is needed on the wrist
either: MANO's root rotation ``global_orient`` is the world orientation of the
template frame, i.e. of ``mano_body_0``.

Measured evidence (``tests/test_kinematics_mano.py``, fingertips of manosim
``myhand`` driven by the mapped pose vs MANO's fingertip vertices 744/320/443/554/
671 of the posed TACO mesh, J0 fitted per sequence): with the flat-hand reading
the median error is 10.1 mm on both mirrored TACO sequences (20231104_010 / _017;
p90 16.6 / 15.6 mm), with the mean-pose reading 34.1 / 34.5 mm. So TACO's 45
values are relative to the flat hand. The same check shows TACO records a **left**
hand: the right-hand model misses by 95-105 mm under either reading. The remaining
~10 mm is the shape difference between TACO's subject (its betas) and ``myhand``
(8.5 mm with manosim's zero-shape ``zerohand``).

MANO's mean hand pose ``hands_mean`` ships only in the licensed MANO model files.
:data:`MANO_HANDS_MEAN_RIGHT` holds the 45 values rounded to 4 decimals as they
are printed in public code that uses MANO without its model files (e.g. the
InterHand2.6M / HaMeR-style preprocessing scripts, where ``th_hands_mean_right``
is hard-coded); the left hand's mean is the right one mirrored ``(x, -y, -z)``
per joint, as MANO's left model is the mirrored right one.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.errors import DataError
from replay.kinematics.model import TIP_LANDMARKS

#: MANO right-hand mean finger pose (15 x 3 axis-angle, rad, MANO joint order),
#: rounded to 1e-4 as hard-coded in public code (see the module docstring).
MANO_HANDS_MEAN_RIGHT = np.array(
    [
        0.1117,
        -0.0429,
        0.4164,
        0.1088,
        0.0660,
        0.7562,
        -0.0964,
        0.0909,
        0.1885,
        -0.1181,
        -0.0509,
        0.5296,
        -0.1437,
        -0.0552,
        0.7049,
        -0.0192,
        0.0923,
        0.3379,
        -0.4570,
        0.1963,
        0.6255,
        -0.2147,
        0.0660,
        0.5069,
        -0.3697,
        0.0603,
        0.0795,
        -0.1419,
        0.0859,
        0.6355,
        -0.3033,
        0.0579,
        0.6314,
        -0.1761,
        0.1321,
        0.3734,
        0.8510,
        -0.2769,
        0.0915,
        -0.4998,
        -0.0266,
        -0.0529,
        0.5356,
        -0.0460,
        0.2774,
    ]
).reshape(15, 3)

#: MANO fingertip vertex ids (thumb, index, middle, ring, pinky), the set used by
#: smplx's ``vertex_ids['mano']`` and by GRAB's 21-landmark joints.
MANO_TIP_VERTICES = (744, 320, 443, 554, 671)


def hands_mean(side: str) -> np.ndarray:
    """(15, 3) MANO mean finger pose for ``side`` ("right"/"left"), rad."""
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
    """MANO finger axis-angle -> manosim ball-joint rotations.

    Args:
        finger_pose: (T, 15, 3) (or (T, 45)) per-joint axis-angle, rad, MANO joint order
            (index 1-3, middle 4-6, pinky 7-9, ring 10-12, thumb 13-15), each in its
            parent's template-aligned frame.
        side: ``"right"`` or ``"left"`` (selects the mean pose).
        flat_hand_mean: True if the values are relative to the flat hand (MANO's
            ``flat_hand_mean=True``), False if relative to MANO's mean hand pose.

    Returns:
        (T, 15, 4) rotations of ``mano_joint_1..15`` relative to the MJCF reference, **xyzw**.

    Raises:
        DataError: wrong shape, non-finite values, unknown side.
    """
    p = _pose_array(finger_pose)
    if not flat_hand_mean:
        p = p + hands_mean(side)
    T = p.shape[0]
    return Rotation.from_rotvec(p.reshape(-1, 3)).as_quat().reshape(T, 15, 4)


def wrist_from_transform(T_world_wrist: np.ndarray, source=None) -> tuple[np.ndarray, np.ndarray]:
    """World pose of ``mano_body_0`` from a (T, 4, 4) world-from-wrist transform (HUG-Bench).

    HUG-Bench's wrist frame is MANO's template-aligned wrist frame at the wrist
    joint, which is manosim's ``mano_body_0`` frame (manosim was built for
    HUG-Bench; see the module docstring), so no fixed offset is applied.

    Returns:
        ``(wrist_pos (T,3) m, wrist_quat (T,4) xyzw)``.

    Raises:
        DataError: wrong shape, non-finite entries, or a rotation block that is not
            a rotation (|det - 1| > 1e-3 or not orthonormal to 1e-3).
    """
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
    """World pose of ``mano_body_0`` from MANO's root parameters.

    MANO places a template vertex v at ``R(global_orient) (v - J0) + J0 + trans``,
    so its wrist joint (the root of the template frame) is at ``J0 + trans`` with
    orientation ``R(global_orient)``.

    Args:
        global_orient: (T, 3) axis-angle, rad. trans: (T, 3) m.
        j0: (3,) MANO's rest wrist joint for the sequence's shape, m (depends on the
            licensed model; see :func:`fit_wrist_offset`).

    Returns:
        ``(wrist_pos (T,3) m, wrist_quat (T,4) xyzw)``.
    """
    go = np.asarray(global_orient, dtype=np.float64)
    tr = np.asarray(trans, dtype=np.float64)
    if go.ndim != 2 or go.shape[1] != 3 or tr.shape != go.shape:
        raise DataError(None, "global_orient/trans", f"expected two (T, 3) arrays, got {go.shape} and {tr.shape}")
    return tr + np.asarray(j0, dtype=np.float64), Rotation.from_rotvec(go).as_quat()


def fit_wrist_offset(
    kin,
    wrist_quat: np.ndarray,
    trans: np.ndarray,
    finger_quat: np.ndarray,
    tips: np.ndarray,
    valid: np.ndarray | None = None,
) -> np.ndarray:
    """Closed-form J0: the constant offset c with wrist_pos = trans + c that best fits the fingertips.

    FK is linear in the root position (landmarks = wrist_pos + FK(0)), so the
    least-squares c over all frames and fingertips is the mean of
    ``tips - trans - FK_tips(wrist at 0)``. One 3-vector per sequence (MANO's J0
    depends only on the shape, which is constant per TACO sequence).

    Args:
        kin: :class:`~replay.kinematics.model.HandKinematics`.
        wrist_quat: (T, 4) xyzw. trans: (T, 3) m. finger_quat: (T, 15, 4) xyzw.
        tips: (T, 5, 3) recorded fingertip positions (thumb, index, middle, ring, pinky), m.
        valid: (T,) frames to use (default all).

    Returns:
        (3,) offset c, m.
    """

    T = trans.shape[0]
    valid = np.ones(T, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    L0 = kin.fk_landmarks(np.zeros((T, 3)), wrist_quat, finger_quat)[:, list(TIP_LANDMARKS)]
    d = tips - trans[:, None, :] - L0
    return d[valid].reshape(-1, 3).mean(axis=0)
