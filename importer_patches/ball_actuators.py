"""Patch ``ball_actuators``: each gear actuator on a ball joint drives its own DOF.

MuJoCo semantics reproduced (XML reference, ``actuator/general gear``; computation
chapter, "actuation model"): for a joint transmission on a ``ball`` joint the
actuator's moment arm is ``gear[0:3]`` in the joint's local frame, and its length is
``gear[0:3] . axis-angle(qpos)``. The manosim hand authors three position
actuators per ball with ``gear="1 0 0"``, ``"0 1 0"``, ``"0 0 1"``: together they
cover all three DOFs, one each, each with its own kp and kv.

What Newton 1.8.0 does instead (``import_mjcf.py``, ``parse_actuators``): it ignores
``gear`` on ball joints, maps every such actuator onto the ball's first DOF index
(``actuator_trnid``) and writes its kp onto all three DOFs (the last actuator
wins), its kv only onto DOFs still without a drive. ``SolverMuJoCo`` then builds one
actuator per DOF from ``joint_target_ke/kd``, so per-axis gains are lost.

This patch maps an actuator with ``gear = e_i`` to DOF ``qd_start + i`` (recorded in
the import report and in ``mujoco:actuator_trnid``) and writes its gains onto that
DOF only. A gear that is not a unit axis cannot be expressed as Newton per-DOF
targets and raises :class:`~importer_patches.errors.UnsupportedActuatorError`.
"""

from __future__ import annotations

import numpy as np
from newton import JointTargetMode

from .actuators import ActuatorSpec, unit_axis
from .errors import UnsupportedActuatorError

NAME = "ball_actuators"


def ball_axis(act: ActuatorSpec, path) -> int:
    """DOF offset (0, 1, 2) of a ball-joint actuator with a unit-axis gear.

    Raises:
        UnsupportedActuatorError: gear is not e_x, e_y or e_z.
    """
    axis = unit_axis(act.gear, 3)
    if axis is None:
        raise UnsupportedActuatorError(
            path,
            f"actuator '{act.name}'",
            f"gear {act.gear.tolist()} on ball joint '{act.joint}' is not a unit axis (1 0 0, 0 1 0 or 0 0 1); "
            "Newton drives ball joints per DOF and cannot represent it",
        )
    return axis


def apply(builder, acts: list[ActuatorSpec], ball_dofs: dict[str, tuple[int, int]]) -> list[str]:
    """Rewrite ``joint_target_ke/kd/mode`` of ball DOFs from their actuators (per DOF).

    Args:
        builder: ``newton.ModelBuilder`` after import.
        acts: imported joint-target actuators on ball joints, ``dofs`` already set to
            the single DOF of each.
        ball_dofs: ball joint name -> (qd_start, newton joint index).

    Returns:
        One line per changed DOF.
    """
    targeted = sorted({d for a in acts for d in range(ball_dofs[a.joint][0], ball_dofs[a.joint][0] + 3)})
    before = {d: (builder.joint_target_ke[d], builder.joint_target_kd[d], builder.joint_target_mode[d]) for d in targeted}
    for d in targeted:
        builder.joint_target_ke[d] = 0.0
        builder.joint_target_kd[d] = 0.0
        builder.joint_target_mode[d] = int(JointTargetMode.NONE)
    for a in acts:
        (d,) = a.dofs
        mode = builder.joint_target_mode[d]
        if a.tag == "position":
            builder.joint_target_ke[d] = a.kp
            if mode == int(JointTargetMode.VELOCITY):
                builder.joint_target_mode[d] = int(JointTargetMode.POSITION_VELOCITY)
            elif mode == int(JointTargetMode.NONE):
                builder.joint_target_mode[d] = int(JointTargetMode.POSITION)
                builder.joint_target_kd[d] = a.kv
        elif a.tag == "velocity":
            if mode == int(JointTargetMode.POSITION):
                builder.joint_target_mode[d] = int(JointTargetMode.POSITION_VELOCITY)
            elif mode == int(JointTargetMode.NONE):
                builder.joint_target_mode[d] = int(JointTargetMode.VELOCITY)
            builder.joint_target_kd[d] = a.kv
        if a.newton_index is not None:
            trnid = builder.custom_attributes.get("mujoco:actuator_trnid")
            if trnid is not None:
                old = trnid.values[a.newton_index]
                trnid.values[a.newton_index] = type(old)(d, old[1])
    changes = [f"actuator '{a.name}' (gear {a.gear[:3].tolist()}) -> DOF {a.dofs[0]}" for a in acts]
    for d in targeted:
        after = (builder.joint_target_ke[d], builder.joint_target_kd[d], builder.joint_target_mode[d])
        if not np.allclose(before[d], after):
            changes.append(f"DOF {d}: ke/kd/mode {tuple(float(x) for x in before[d])} -> {tuple(float(x) for x in after)}")
    return changes
