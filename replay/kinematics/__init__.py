"""Hand kinematics: manosim FK, landmark IK, the MANO mapping and the hand's Newton ``joint_q``. Quaternions xyzw,
world Z up, m."""
