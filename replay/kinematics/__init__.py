"""Hand kinematics: manosim FK, landmark IK, MANO -> manosim joint mapping.

One module per idea; import names from the module that defines them (this package
re-exports nothing; what users import is :mod:`replay.api`). Quaternions xyzw everywhere,
world Z up, metres:

* :mod:`~replay.kinematics.model` - :class:`~replay.kinematics.model.HandKinematics`
  (``HandKinematics.from_mjcf(path)``; ``fk_landmarks(wrist_pos (T,3), wrist_quat (T,4),
  finger_quat (T,15,4)) -> (T,21,3)``; the tree read by :mod:`~replay.kinematics.mjcf_tree`;
  quaternion helpers: :mod:`~replay.kinematics.quat`).
* :mod:`~replay.kinematics.ik` - ``fit_landmarks`` / ``IKOptions`` / ``IKResult``: landmark
  IK (cached; the solver: :mod:`~replay.kinematics.ik_solver`).
* :mod:`~replay.kinematics.mano` - ``mano_to_finger_quat``,
  ``wrist_from_transform``, ``wrist_from_global_orient``, ``fit_wrist_offset``: MANO mapping.
* :mod:`~replay.kinematics.hand_layout` - the hand's counts and offsets, derived from the
  import; :mod:`~replay.kinematics.coords_interp` - joint coordinates between recorded frames.
* :mod:`~replay.kinematics.coords` - ``complete_hand`` (Recording -> Recording with
  wrist/finger fields) and ``hand_coords`` (Recording -> (T, 67) Newton joint_q).
"""
