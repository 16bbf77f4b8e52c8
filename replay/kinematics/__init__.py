"""Hand kinematics: manosim FK (``model``), landmark IK (``ik``), the MANO mapping (``mano``) and the
hand's Newton ``joint_q`` (``coords``). Quaternions xyzw, world Z up, metres; this package re-exports nothing."""
