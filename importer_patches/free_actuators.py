"""Patch ``free_actuators``: actuators aimed at a joint that is (or became) FREE.

MuJoCo semantics reproduced: in the authored file the wrist is driven by position
actuators on its ``slide``/``ball`` joints (translation kp along each slide axis,
rotation kp per ball gear axis, each with its kv). ``SolverMuJoCo`` cannot create
actuators on a free joint ("Drive targets ... are silently ignored. Apply the
desired wrench directly via Control.joint_f instead."), so a faithful import must
(a) say so at import time, (b) keep the authored gains so a controller can apply
the same PD law as a wrench, and (c) leave no position gains on the free DOFs.

What Newton 1.8.0 does instead: actuators naming a merged slide/ball are dropped
silently (unknown joint); actuators naming a free joint are applied to all six
DOFs with one kp (a rotation kp of 50 N·m/rad overwrites a translation kp of
300 N/m) and only the solver warns, later.

This patch removes such actuators from the in-memory MJCF, issues
:class:`~importer_patches.errors.FreeJointActuatorWarning` naming them, records
them (kp, kv after ``dampratio``, DOF) in ``ImportReport.free_joint_actuators`` and
``ImportReport.wrist_gains``, and sets ``joint_target_ke = kd = 0`` and mode NONE on
the free joint's six DOFs.
"""

from __future__ import annotations

import warnings

from newton import JointTargetMode

from .actuators import ActuatorSpec
from .errors import FreeJointActuatorWarning

NAME = "free_actuators"


def warn(path, acts: list[ActuatorSpec], free_joint_of: dict[str, str], stacklevel: int = 3) -> str:
    """Issue one FreeJointActuatorWarning for ``acts``; return its message.

    ``stacklevel`` is passed to :func:`warnings.warn`; pick it so the warning points at the
    caller of :func:`importer_patches.add_mjcf`.
    """
    names = ", ".join(f"{a.name} ({a.joint} -> free joint {free_joint_of[a.joint]})" for a in acts)
    message = (
        f"{path}: {len(acts)} actuator(s) target a joint that is FREE in Newton and were not imported "
        f"(SolverMuJoCo cannot actuate free joints): {names}. Their kp/kv are in "
        "ImportReport.wrist_gains / free_joint_actuators; apply them as a wrench via Control.joint_f."
    )
    warnings.warn(message, FreeJointActuatorWarning, stacklevel=stacklevel)
    return message


def clear_free_gains(builder, joint: int) -> list[str]:
    """Set ``joint_target_ke/kd = 0`` and mode NONE on the six DOFs of free joint ``joint``."""
    start = builder.joint_qd_start[joint]
    changes = []
    for d in range(start, start + 6):
        old = (builder.joint_target_ke[d], builder.joint_target_kd[d], builder.joint_target_mode[d])
        builder.joint_target_ke[d] = 0.0
        builder.joint_target_kd[d] = 0.0
        builder.joint_target_mode[d] = int(JointTargetMode.NONE)
        if any(float(x) != 0.0 for x in old):
            changes.append(f"free DOF {d}: ke/kd/mode {tuple(float(x) for x in old)} -> (0, 0, NONE)")
    changes.append(
        f"free joint '{builder.joint_label[joint]}' DOFs {start}-{start + 5}: joint_target_ke = kd = 0, mode NONE "
        "(no Newton drive; apply the wrist_gains PD law as a wrench through Control.joint_f)"
    )
    return changes
