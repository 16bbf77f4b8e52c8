"""Hand kinematics: FK, landmark IK, the MANO mapping, Newton ``joint_q``. Quaternions xyzw, world Z up, m."""
