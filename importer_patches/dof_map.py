"""Actuators onto Newton DOFs, the ``dampratio`` patch's kv and the wrist gains of the report.

The builder-side half of :func:`importer_patches.add_mjcf` that concerns actuators: which
Newton DOF(s) each MJCF actuator drives (MuJoCo ``gear`` semantics, XML reference
``actuator/general``), the damping a ``dampratio`` resolves to (:mod:`importer_patches.dampratio`),
and the authored wrist PD gains the controller applies itself (:mod:`importer_patches.free_actuators`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import ball_actuators, dampratio, free_actuators
from .actuators import ActuatorSpec, unit_axis
from .errors import UnsupportedActuatorError
from .free_joint import BodyPlan
from .mass_matrix import reference_mass_matrix
from .report import ImportReport

#: how to read ``ImportReport.wrist_gains`` (``frames``): the authored wrist PD law and its frames
WRIST_FRAMES = (
    "The authored MuJoCo PD law, for a controller to apply as a wrench via Control.joint_f. Translation: "
    "f_i = kp_i (u_i - p_i) - kd_i v_i along lin_axes_world[i], p/v the wrist body-origin position/velocity "
    "(world frame, m, m/s), u the target. Rotation (MuJoCo ball-joint actuators, gear e_i): "
    "tau_i = kp_i (u_i - r_i) - kd_i w_i about the wrist body's LOCAL axis i, r the axis-angle vector (rad) "
    "of the wrist's rotation from its reference (import) orientation, w the local angular velocity (rad/s). "
    "Newton's free-joint joint_f is [force at COM, torque], both in the world frame: rotate tau by the wrist "
    "orientation and add the moment of f about the COM if f acts at the body origin."
)

#: ``BodyPlan.kind`` values that become one Newton free joint
FREE_KINDS = ("free", "merged_free")


def short_label(label: str) -> str:
    """A Newton label without its path prefix (``"hand/mano_body_0"`` -> ``"mano_body_0"``)."""
    return label.rsplit("/", 1)[-1]


@dataclass
class JointIndex:
    """Where the MJCF's joint names end up (built from the ``free_joint`` plans).

    ``plan_of_joint``: MJCF joint name -> the plan of its body. ``free_joint_of``: MJCF joint
    name -> name of the free joint it became (bodies of kind ``free``/``merged_free`` only).
    ``merged_names``: joint names merged into a free joint (slide x3 + ball).
    """

    plan_of_joint: dict[str, BodyPlan]
    free_joint_of: dict[str, str]
    merged_names: set[str]

    @classmethod
    def from_plans(cls, plans: dict[str, BodyPlan]) -> JointIndex:
        return cls(
            plan_of_joint={j.name: plan for plan in plans.values() for j in plan.joints},
            free_joint_of={
                j.name: plan.free_name for plan in plans.values() if plan.kind in FREE_KINDS for j in plan.joints
            },
            merged_names={j.name for p in plans.values() if p.kind == "merged_free" for j in p.joints},
        )


def map_actuators_to_dofs(
    builder, path: Path, acts: list[ActuatorSpec], index: JointIndex, joint_of_body: dict,
    enabled: dict[str, bool], ctrl_direct: bool, report: ImportReport,
) -> dict[str, dict[int, float]]:
    """Set each actuator's ``dofs`` (MuJoCo semantics with ``ball_actuators`` on, Newton's otherwise).

    Applies the ``ball_actuators`` patch to position/velocity actuators on lone ball joints
    (unless ``ctrl_direct``).

    Returns:
        Actuator name -> {absolute Newton DOF: moment arm (gear, projected on the world axis for
        merged slides)}, for actuators whose joint was imported.
    """
    moments: dict[str, dict[int, float]] = {}
    ball_acts, ball_dofs = [], {}
    for a in acts:
        plan = index.plan_of_joint.get(a.joint) if a.joint else None
        if plan is None or plan.body not in joint_of_body:
            continue
        j = joint_of_body[plan.body]
        qd = builder.joint_qd_start[j]
        if plan.kind == "ball":
            moments[a.name] = {qd + i: float(a.gear[i]) for i in range(3)}
            if enabled[ball_actuators.NAME] and a.imported:
                a.dofs = [qd + ball_actuators.ball_axis(a, path)]
                if a.tag in ("position", "velocity") and not ctrl_direct:
                    ball_acts.append(a)
                    ball_dofs[a.joint] = (qd, j)
            else:
                a.dofs = [qd, qd + 1, qd + 2]  # Newton: trnid = first DOF, gains on all three
        else:
            moments[a.name] = _set_dofs(a, plan, qd)
    if ball_acts:
        report.changes[ball_actuators.NAME] += ball_actuators.apply(builder, ball_acts, ball_dofs)
    return moments


def _set_dofs(a: ActuatorSpec, plan: BodyPlan, qd: int) -> dict[int, float]:
    """Set ``a.dofs`` for an actuator on a merged-free, free or scalar joint starting at DOF ``qd``; return its moment.

    A unit-axis gear addresses one DOF, any other gear all of them (MuJoCo ``gear``, XML reference).
    """
    offs = plan.dof_of_joint.get(a.joint, [])
    if plan.kind == "merged_free":
        if a.joint == plan.joints[3].name:  # the ball part: gear in local axes
            axis = unit_axis(a.gear, 3)
            a.dofs = [qd + 3 + axis] if axis is not None else [qd + 3, qd + 4, qd + 5]
            return {qd + 3 + i: float(a.gear[i]) for i in range(3)}
        k = [s.name for s in plan.joints[:3]].index(a.joint)
        world_axis = plan.lin_axes_world[k]
        a.dofs = [qd + o for o in offs]
        return {qd + i: float(a.gear[0] * world_axis[i]) for i in range(3)}
    if plan.kind == "free":
        axis = unit_axis(a.gear, 6)
        a.dofs = [qd + axis] if axis is not None else list(range(qd, qd + 6))
        return {qd + i: float(a.gear[i]) for i in range(6)}
    a.dofs = [qd + o for o in offs]
    return {qd + o: float(a.gear[0]) for o in offs}


def resolve_dampratio(builder, acts: list[ActuatorSpec], moments: dict, joints: list[int], enabled: bool, report) -> None:
    """Patch ``dampratio``: set ``kv_resolved`` (N·s/m or N·m·s/rad) from the reference mass matrix.

    Every actuator gets ``kv_resolved = kv``; with the patch on, position actuators with
    ``dampratio > 0`` and no ``kv`` get the value of :func:`dampratio.resolve_kv`, written to the
    builder when Newton imported them.
    """
    need_kv = [a for a in acts if a.tag == "position" and a.dampratio > 0 and a.kv == 0 and a.name in moments]
    for a in acts:
        a.kv_resolved = a.kv
    if not (enabled and need_kv):
        return
    M, col = reference_mass_matrix(builder, joints)
    for a in need_kv:
        kv = dampratio.resolve_kv(a, M, col, moments[a.name])
        a.kv_resolved = kv
        if a.imported:
            report.changes[dampratio.NAME].append(dampratio.write(builder, a, kv))
        else:
            report.changes[dampratio.NAME].append(
                f"actuator '{a.name}' (not imported): dampratio {a.dampratio} kp {a.kp} -> kv {kv:.6g} kept in report"
            )


def record_wrist_gains(
    builder, path: Path, plans: dict, joint_of_body: dict, free_acts: list[ActuatorSpec],
    index: JointIndex, enabled: bool, report: ImportReport,
) -> None:
    """Patch ``free_actuators`` on the builder: no gains on free DOFs; the first free joint's gains in the report.

    Fills ``report.wrist_gains`` (kp N/m then N·m/rad, kd N·s/m then N·m·s/rad, see
    :data:`WRIST_FRAMES`) and ``report.free_joint_actuators``.

    Raises:
        UnsupportedActuatorError: a merged wrist's rotation actuator gear is not a unit axis.
    """
    free_plans = [p for p in plans.values() if p.kind in FREE_KINDS and p.body in joint_of_body]
    if enabled:
        for p in free_plans:
            report.changes[free_actuators.NAME] += free_actuators.clear_free_gains(builder, joint_of_body[p.body])
    if free_plans:
        p = free_plans[0]
        j = joint_of_body[p.body]
        kp, kd = [0.0] * 6, [0.0] * 6
        for a in free_acts if enabled else []:
            if index.free_joint_of[a.joint] != p.free_name or a.tag != "position":
                continue
            for s in _wrist_slots(a, p, path):
                kp[s], kd[s] = a.kp, float(a.kv_resolved or 0.0)
        lin = p.lin_axes_world if p.lin_axes_world is not None else np.eye(3)
        report.wrist_gains = {
            "joint": short_label(builder.joint_label[j]),
            "joint_index": j,
            "dof_start": builder.joint_qd_start[j],
            "coord_start": builder.joint_q_start[j],
            "kp": kp,
            "kd": kd,
            "lin_axes_world": np.asarray(lin, dtype=float).tolist(),
            "frames": WRIST_FRAMES,
        }
    report.free_joint_actuators = [a.as_dict() for a in free_acts] if enabled else []


def _wrist_slots(a: ActuatorSpec, p: BodyPlan, path: Path) -> list[int]:
    """The wrist DOF slots (0-2 translation, 3-5 rotation) a free-joint actuator drives.

    Raises:
        UnsupportedActuatorError: a merged wrist's ball actuator gear is not a unit axis.
    """
    if p.kind == "merged_free":
        names = [s.name for s in p.joints[:3]]
        if a.joint in names:
            return [names.index(a.joint)]
        axis = unit_axis(a.gear, 3)
        if axis is None:
            raise UnsupportedActuatorError(path, f"actuator '{a.name}'", f"gear {a.gear.tolist()} is not a unit axis")
        return [3 + axis]
    axis = unit_axis(a.gear, 6)
    return [axis] if axis is not None else []
