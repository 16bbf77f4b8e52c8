"""Hand kinematics: manosim FK (``model``), landmark IK (``ik``, ``ik_solver``), the MANO mapping (``mano``) and the
hand's Newton ``joint_q`` (``coords``). Quaternions xyzw, world Z up, metres; this package re-exports nothing."""
