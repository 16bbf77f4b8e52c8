"""Patch ``dampratio``: resolve ``<position dampratio>`` into ``joint_target_kd`` at import.

MuJoCo semantics reproduced (XML reference, ``actuator/position dampratio``;
compiler, ``engine_setconst.c``): a position actuator authored with ``dampratio``
``zeta`` (and no ``kv``) gets velocity gain

    kv = 2 * zeta * sqrt(kp * m_ref),    m_ref = 1 / (g^T M(qpos0)^-1 g),

with ``M(qpos0)`` the joint-space mass matrix at the reference pose *including
armature* and ``g`` the actuator's moment (gear) vector; MuJoCo stores
``actuator_biasprm[2] = -kv``. Checked against MuJoCo 3.17's compile of the manosim
hand: equal to 1e-15 (``m_ref`` is not the diagonal ``M_ii``; using the diagonal
would be 5.7 % off on the wrist's y/z translation, 0.33 % on fingers).

What Newton 1.8.0 does instead: the importer stores the unresolved ratio in
``mujoco:actuator_biasprm[2]`` and leaves ``joint_target_kd = 0``; ``SolverMuJoCo``
resolves it only when constructed, so every other consumer of the Model (another
solver, a controller, a report) sees an undamped drive.

This patch computes ``M`` with :func:`importer_patches.mass_matrix.reference_mass_matrix`
(float64, MuJoCo DOF convention) and writes ``kv`` to ``joint_target_kd`` of the
actuator's DOF(s) and ``-kv`` to ``mujoco:actuator_biasprm[2]``; the solver then
finds nothing left to resolve.
"""

from __future__ import annotations

import math

import numpy as np

from .actuators import ActuatorSpec
from .mass_matrix import reflected_inertia

NAME = "dampratio"


def resolve_kv(act: ActuatorSpec, M: np.ndarray, col: dict[int, int], moment: dict[int, float]) -> float:
    """MuJoCo's compiled kv for one actuator.

    Args:
        act: the actuator (``kp``, ``dampratio``).
        M: reference mass matrix (n, n), from ``reference_mass_matrix``.
        col: builder DOF -> column of ``M``.
        moment: builder DOF -> moment arm (gear component) of the actuator.
    """
    g = np.zeros(M.shape[0])
    for dof, value in moment.items():
        g[col[dof]] += value
    return 2.0 * act.dampratio * math.sqrt(act.kp * reflected_inertia(M, g))


def write(builder, act: ActuatorSpec, kv: float) -> str:
    """Store ``kv`` on the actuator's DOFs (``joint_target_kd``) and in its biasprm."""
    for d in act.dofs:
        builder.joint_target_kd[d] = kv
    if act.newton_index is not None:
        bias = builder.custom_attributes.get("mujoco:actuator_biasprm")
        if bias is not None:
            old = bias.values[act.newton_index]
            vals = [float(v) for v in old]
            vals[2] = -kv
            bias.values[act.newton_index] = type(old)(*vals)
    return f"actuator '{act.name}': dampratio {act.dampratio} kp {act.kp} -> kv {kv:.6g} on DOF(s) {act.dofs}"
