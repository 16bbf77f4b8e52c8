"""Hand kinematics: manosim FK, landmark IK, MANO -> manosim joint mapping.

Public API (quaternions xyzw everywhere, world Z up, metres):

* :class:`HandKinematics` - ``HandKinematics.from_mjcf(path)``; ``fk_landmarks(wrist_pos (T,3),
  wrist_quat (T,4), finger_quat (T,15,4)) -> (T,21,3)`` (the tree read by
  :mod:`~replay.kinematics.mjcf_tree`; quaternion helpers: :mod:`~replay.kinematics.quat`).
* :func:`fit_landmarks` / :class:`IKOptions` / :class:`IKResult` - landmark IK (cached; the
  solver: :mod:`~replay.kinematics.ik_solver`).
* :func:`mano_to_finger_quat`, :func:`finger_quat_to_mano`, :func:`wrist_from_transform`,
  :func:`wrist_from_global_orient`, :func:`fit_wrist_offset` - MANO mapping.
* :mod:`~replay.kinematics.hand_layout` - the hand's counts and offsets, derived from the
  import, and joint-coordinate interpolation.
* :func:`complete_hand` (Recording -> Recording with wrist/finger fields) and
  :func:`hand_coords` (Recording -> (T, 67) Newton joint_q).
"""

from replay.kinematics.coords import (
    HAND_COORDS,
    complete_hand,
    default_mjcf,
    hand_coords,
    load_kinematics,
)
from replay.kinematics.ik import (
    IKOptions,
    IKResult,
    LandmarkIK,
    fit_landmarks,
    interpolate_pose,
)
from replay.kinematics.mano import (
    MANO_TIP_VERTICES,
    finger_quat_to_mano,
    fit_wrist_offset,
    hands_mean,
    mano_to_finger_quat,
    wrist_from_global_orient,
    wrist_from_transform,
)
from replay.kinematics.model import (
    LANDMARK_SOURCE,
    TIP_LANDMARKS,
    HandKinematics,
    quat_wxyz_to_xyzw,
    quat_xyzw_to_wxyz,
)

__all__ = [
    "HAND_COORDS", "complete_hand", "default_mjcf", "hand_coords", "load_kinematics",
    "IKOptions", "IKResult", "LandmarkIK", "fit_landmarks", "interpolate_pose",
    "MANO_TIP_VERTICES", "finger_quat_to_mano", "fit_wrist_offset", "hands_mean", "mano_to_finger_quat",
    "wrist_from_global_orient", "wrist_from_transform",
    "LANDMARK_SOURCE", "TIP_LANDMARKS", "HandKinematics", "quat_wxyz_to_xyzw", "quat_xyzw_to_wxyz",
]
