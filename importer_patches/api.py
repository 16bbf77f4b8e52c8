"""``add_mjcf``: import an unmodified MJCF into a Newton ModelBuilder as MuJoCo compiles it."""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import ball_actuators, dampratio, free_actuators, free_joint
from .actuators import read_actuators, remove_from_xml, unit_axis
from .errors import MJCFError, UnsupportedActuatorError
from .mass_matrix import reference_mass_matrix
from .mjcf_tree import load_tree
from .report import ImportReport
from .version import check_newton_version

PATCHES = (free_joint.NAME, dampratio.NAME, free_actuators.NAME, ball_actuators.NAME)

WRIST_FRAMES = (
    "The authored MuJoCo PD law, for a controller to apply as a wrench via Control.joint_f. Translation: "
    "f_i = kp_i (u_i - p_i) - kd_i v_i along lin_axes_world[i], p/v the wrist body-origin position/velocity "
    "(world frame, m, m/s), u the target. Rotation (MuJoCo ball-joint actuators, gear e_i): "
    "tau_i = kp_i (u_i - r_i) - kd_i w_i about the wrist body's LOCAL axis i, r the axis-angle vector (rad) "
    "of the wrist's rotation from its reference (import) orientation, w the local angular velocity (rad/s). "
    "Newton's free-joint joint_f is [force at COM, torque], both in the world frame: rotate tau by the wrist "
    "orientation and add the moment of f about the COM if f acts at the body origin."
)


def _short(label: str) -> str:
    return label.rsplit("/", 1)[-1]


def add_mjcf(
    builder,
    path: str | os.PathLike,
    *,
    xform=None,
    patches: Mapping[str, bool] | None = None,
    allow_untested_newton: bool = False,
    **newton_kwargs,
) -> ImportReport:
    """Import the MJCF file ``path`` into ``builder`` the way MuJoCo compiles it.

    The file is never modified: it is parsed into memory, patched there, and handed
    to Newton's ``ModelBuilder.add_mjcf`` as an XML string with asset paths resolved
    relative to the original file; the builder is then corrected. Works on a builder
    that already holds other bodies (indices in the report are absolute).

    Args:
        builder: ``newton.ModelBuilder``.
        path: MJCF file.
        xform: ``wp.transform`` placing the MJCF world frame in the builder's world
            (passed to Newton; position m, quaternion xyzw).
        patches: patch name -> enabled; missing names default to enabled. Names:
            ``free_joint``, ``dampratio``, ``free_actuators``, ``ball_actuators``
            (modules of the same name document each). Switching one off reproduces
            Newton 1.8.0's behaviour for regression tests.
        allow_untested_newton: run on a Newton other than 1.8.0 (warns).
        **newton_kwargs: passed through to ``ModelBuilder.add_mjcf`` (e.g. ``floating``,
            ``enable_self_collisions``, ``parse_visuals``, ``ctrl_direct``).

    Returns:
        :class:`~importer_patches.report.ImportReport`.

    Raises:
        NewtonVersionError: Newton is not 1.8.0 and ``allow_untested_newton`` is False.
        MJCFError: missing file, malformed XML, missing mesh/asset (names it), or
            Newton's importer failing on the (patched) file.
        UnsupportedJointError: a body's joints cannot be represented exactly.
        UnsupportedActuatorError: an actuator gear Newton cannot represent.
        ValueError: unknown patch name.
    """
    version = check_newton_version(allow_untested_newton)
    enabled = {name: True for name in PATCHES}
    for name, on in (patches or {}).items():
        if name not in enabled:
            raise ValueError(f"unknown patch {name!r}; known: {', '.join(PATCHES)}")
        enabled[name] = bool(on)
    path = Path(path)
    report = ImportReport(path=str(path), newton_version=version, patches=dict(enabled))
    report.changes = {name: [] for name in PATCHES}

    root = load_tree(path)
    plans = free_joint.plan_bodies(root, path, enabled=enabled[free_joint.NAME])
    acts = read_actuators(root)
    if enabled[free_joint.NAME]:
        report.changes[free_joint.NAME] += free_joint.rewrite_xml(root, plans)

    # Which MJCF joint names end up where.
    plan_of_joint = {j.name: plan for plan in plans.values() for j in plan.joints}
    free_kinds = ("free", "merged_free")
    free_joint_of = {
        j.name: plan.free_name for plan in plans.values() if plan.kind in free_kinds for j in plan.joints
    }
    merged_names = {j.name for p in plans.values() if p.kind == "merged_free" for j in p.joints}
    free_acts = [a for a in acts if a.joint in free_joint_of]
    for a in acts:
        if a.joint is not None and a.joint not in plan_of_joint:
            a.imported = False  # Newton skips actuators on unknown joints
    if free_acts:
        if enabled[free_actuators.NAME]:
            remove_from_xml(root, free_acts)
            for a in free_acts:
                a.imported = False
            report.warnings.append(free_actuators.warn(path, free_acts, free_joint_of))
            report.changes[free_actuators.NAME].append(
                f"not imported (target a free joint): {[a.name for a in free_acts]}"
            )
        else:
            for a in free_acts:
                if a.joint in merged_names:
                    a.imported = False  # Newton: unknown joint name, dropped silently

    start = {
        "body": builder.body_count,
        "joint": builder.joint_count,
        "dof": builder.joint_dof_count,
        "coord": builder.joint_coord_count,
        "shape": builder.shape_count,
        "act": builder._custom_frequency_counts.get("mujoco:actuator", 0),
    }
    xml = ET.tostring(root, encoding="unicode")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            builder.add_mjcf(xml, xform=xform, **newton_kwargs)
        except (ValueError, KeyError, IndexError, AttributeError) as exc:
            raise MJCFError(path, "newton", f"Newton {version}'s MJCF importer failed: {type(exc).__name__}: {exc}") from exc
    for w in caught:
        report.warnings.append(f"{w.category.__name__}: {w.message}")
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    n_act = builder._custom_frequency_counts.get("mujoco:actuator", 0) - start["act"]
    expected = [a for a in acts if a.imported]
    if n_act != len(expected):
        raise MJCFError(
            path,
            "actuator",
            f"Newton imported {n_act} actuators but {len(expected)} were expected "
            f"({[a.name for a in expected]}); cannot map actuators to DOFs reliably",
        )
    for k, a in enumerate(expected):
        a.newton_index = start["act"] + k

    bodies = range(start["body"], builder.body_count)
    joints = list(range(start["joint"], builder.joint_count))
    joint_of_body = {_short(builder.body_label[builder.joint_child[j]]): j for j in joints}

    # Newton kwargs (floating, base_joint, parent_body, ignore_names, ...) may replace or drop a
    # body's joint; per-DOF fixes then no longer apply to it: say so instead of writing blindly.
    from newton import JointType

    want = {"free": JointType.FREE, "merged_free": JointType.FREE, "ball": JointType.BALL}
    for plan in list(plans.values()):
        j = joint_of_body.get(plan.body)
        if plan.kind in want and (j is None or builder.joint_type[j] != want[plan.kind]):
            got = "no joint (body not imported)" if j is None else JointType(builder.joint_type[j]).name
            message = (
                f"{path}: body '{plan.body}' was authored as {plan.kind.replace('merged_free', 'slide x3 + ball')} "
                f"but Newton built {got} (add_mjcf kwargs {sorted(newton_kwargs)}); its per-DOF values and "
                "actuators are left as Newton made them"
            )
            report.warnings.append(message)
            warnings.warn(message, UserWarning, stacklevel=2)
            joint_of_body.pop(plan.body, None)
            plans.pop(plan.body)

    # Patch 1 (builder side): per-DOF damping/armature/friction on free and ball joints.
    for plan in plans.values():
        if plan.kind == "merged_free":
            free_joint.map_merged_slides(builder, plan, joint_of_body[plan.body], path)
    if enabled[free_joint.NAME]:
        report.changes[free_joint.NAME] += free_joint.fix_builder(builder, plans, joint_of_body)

    # Actuator -> DOF map (MuJoCo semantics with ball_actuators on, Newton's otherwise).
    moments: dict[str, dict[int, float]] = {}
    ball_acts, ball_dofs = [], {}
    ctrl_direct = bool(newton_kwargs.get("ctrl_direct", False))
    for a in acts:
        plan = plan_of_joint.get(a.joint) if a.joint else None
        if plan is None or plan.body not in joint_of_body:
            continue
        j = joint_of_body[plan.body]
        qd = builder.joint_qd_start[j]
        offs = plan.dof_of_joint.get(a.joint, [])
        moment: dict[int, float] = {}
        if plan.kind == "merged_free":
            if a.joint == plan.joints[3].name:  # the ball part: gear in local axes
                axis = unit_axis(a.gear, 3)
                a.dofs = [qd + 3 + axis] if axis is not None else [qd + 3, qd + 4, qd + 5]
                moment = {qd + 3 + i: float(a.gear[i]) for i in range(3)}
            else:
                k = [s.name for s in plan.joints[:3]].index(a.joint)
                world_axis = plan.lin_axes_world[k]
                a.dofs = [qd + o for o in offs]
                moment = {qd + i: float(a.gear[0] * world_axis[i]) for i in range(3)}
        elif plan.kind == "free":
            axis = unit_axis(a.gear, 6)
            a.dofs = [qd + axis] if axis is not None else list(range(qd, qd + 6))
            moment = {qd + i: float(a.gear[i]) for i in range(6)}
        elif plan.kind == "ball":
            moment = {qd + i: float(a.gear[i]) for i in range(3)}
            if enabled[ball_actuators.NAME] and a.imported:
                a.dofs = [qd + ball_actuators.ball_axis(a, path)]
                if a.tag in ("position", "velocity") and not ctrl_direct:
                    ball_acts.append(a)
                    ball_dofs[a.joint] = (qd, j)
            else:
                a.dofs = [qd, qd + 1, qd + 2]  # Newton: trnid = first DOF, gains on all three
        else:
            a.dofs = [qd + o for o in offs]
            moment = {qd + o: float(a.gear[0]) for o in offs}
        moments[a.name] = moment
    if ball_acts:
        report.changes[ball_actuators.NAME] += ball_actuators.apply(builder, ball_acts, ball_dofs)

    # Patch 2: dampratio -> kd from the reference mass matrix.
    need_kv = [a for a in acts if a.tag == "position" and a.dampratio > 0 and a.kv == 0 and a.name in moments]
    for a in acts:
        a.kv_resolved = a.kv
    if enabled[dampratio.NAME] and need_kv:
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

    # Patch 3: no gains on free DOFs; wrist gains in the report.
    free_plans = [p for p in plans.values() if p.kind in free_kinds and p.body in joint_of_body]
    if enabled[free_actuators.NAME]:
        for p in free_plans:
            report.changes[free_actuators.NAME] += free_actuators.clear_free_gains(builder, joint_of_body[p.body])
    if free_plans:
        p = free_plans[0]
        j = joint_of_body[p.body]
        qd = builder.joint_qd_start[j]
        kp, kd = [0.0] * 6, [0.0] * 6
        for a in free_acts if enabled[free_actuators.NAME] else []:
            if free_joint_of[a.joint] != p.free_name or a.tag != "position":
                continue
            if p.kind == "merged_free":
                names = [s.name for s in p.joints[:3]]
                if a.joint in names:
                    slots = [names.index(a.joint)]
                else:
                    axis = unit_axis(a.gear, 3)
                    if axis is None:
                        raise UnsupportedActuatorError(path, f"actuator '{a.name}'", f"gear {a.gear.tolist()} is not a unit axis")
                    slots = [3 + axis]
            else:
                axis = unit_axis(a.gear, 6)
                slots = [axis] if axis is not None else []
            for s in slots:
                kp[s], kd[s] = a.kp, float(a.kv_resolved or 0.0)
        lin = p.lin_axes_world if p.lin_axes_world is not None else np.eye(3)
        report.wrist_gains = {
            "joint": _short(builder.joint_label[j]),
            "joint_index": j,
            "dof_start": qd,
            "coord_start": builder.joint_q_start[j],
            "kp": kp,
            "kd": kd,
            "lin_axes_world": np.asarray(lin, dtype=float).tolist(),
            "frames": WRIST_FRAMES,
        }
    report.free_joint_actuators = [a.as_dict() for a in free_acts] if enabled[free_actuators.NAME] else []

    # Counts and per-DOF tables.
    from newton import JointTargetMode

    report.body_start, report.body_count = start["body"], builder.body_count - start["body"]
    report.joint_start, report.joint_count = start["joint"], len(joints)
    report.dof_start, report.dof_count = start["dof"], builder.joint_dof_count - start["dof"]
    report.coord_start, report.coord_count = start["coord"], builder.joint_coord_count - start["coord"]
    report.shape_start, report.shape_count = start["shape"], builder.shape_count - start["shape"]
    report.body_names = [_short(builder.body_label[b]) for b in bodies]
    report.joint_names = [_short(builder.joint_label[j]) for j in joints]
    report.joint_types = [JointType(builder.joint_type[j]).name for j in joints]
    report.joint_type_counts = dict(Counter(report.joint_types))
    report.joint_dof_starts = {n: builder.joint_qd_start[j] for n, j in zip(report.joint_names, joints)}
    report.joint_coord_starts = {n: builder.joint_q_start[j] for n, j in zip(report.joint_names, joints)}
    report.finger_joint_names = [
        n for n, t, j in zip(report.joint_names, report.joint_types, joints)
        if t != "FREE" and sum(builder.joint_dof_dim[j]) > 0
    ]
    report.finger_dof_starts = {n: report.joint_dof_starts[n] for n in report.finger_joint_names}
    dofs = range(report.dof_start, report.dof_start + report.dof_count)
    report.dof_damping = [float(builder.joint_damping[d]) for d in dofs]
    report.dof_armature = [float(builder.joint_armature[d]) for d in dofs]
    report.dof_friction = [float(builder.joint_friction[d]) for d in dofs]
    report.dof_target_ke = [float(builder.joint_target_ke[d]) for d in dofs]
    report.dof_target_kd = [float(builder.joint_target_kd[d]) for d in dofs]
    report.dof_target_mode = [JointTargetMode(builder.joint_target_mode[d]).name for d in dofs]
    report.actuators = [a.as_dict() for a in acts]
    report.actuator_dof_map = {a.name: list(a.dofs) for a in acts}
    for plan in plans.values():
        if plan.body in joint_of_body:
            qd = builder.joint_qd_start[joint_of_body[plan.body]]
            for name, offs in plan.dof_of_joint.items():
                report.mjcf_joint_dofs[name] = [qd + o for o in offs]
    report.imported_actuator_count = n_act
    return report
