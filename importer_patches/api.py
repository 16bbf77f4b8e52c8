"""``add_mjcf``: import an unmodified MJCF into a Newton ModelBuilder as MuJoCo compiles it."""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from newton import JointTargetMode, JointType

from . import ball_actuators, dampratio, free_actuators, free_joint
from .actuators import ActuatorSpec, read_actuators, remove_from_xml, unit_axis
from .errors import MJCFError, UnsupportedActuatorError
from .free_joint import BodyPlan
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

_FREE_KINDS = ("free", "merged_free")


def _short(label: str) -> str:
    return label.rsplit("/", 1)[-1]


@dataclass
class _JointIndex:
    """Where the MJCF's joint names end up (built from the ``free_joint`` plans).

    ``plan_of_joint``: MJCF joint name -> the plan of its body. ``free_joint_of``: MJCF joint
    name -> name of the free joint it became (bodies of kind ``free``/``merged_free`` only).
    ``merged_names``: joint names merged into a free joint (slide x3 + ball).
    """

    plan_of_joint: dict[str, BodyPlan]
    free_joint_of: dict[str, str]
    merged_names: set[str]

    @classmethod
    def from_plans(cls, plans: dict[str, BodyPlan]) -> _JointIndex:
        return cls(
            plan_of_joint={j.name: plan for plan in plans.values() for j in plan.joints},
            free_joint_of={
                j.name: plan.free_name for plan in plans.values() if plan.kind in _FREE_KINDS for j in plan.joints
            },
            merged_names={j.name for p in plans.values() if p.kind == "merged_free" for j in p.joints},
        )


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
    enabled = _enabled_patches(patches)
    path = Path(path)
    report = ImportReport(path=str(path), newton_version=version, patches=dict(enabled))
    report.changes = {name: [] for name in PATCHES}

    # Patch the in-memory XML.
    root = load_tree(path)
    plans = free_joint.plan_bodies(root, path, enabled=enabled[free_joint.NAME])
    acts = read_actuators(root)
    if enabled[free_joint.NAME]:
        report.changes[free_joint.NAME] += free_joint.rewrite_xml(root, plans)
    index = _JointIndex.from_plans(plans)
    free_acts = _drop_free_actuators(root, path, acts, index, enabled[free_actuators.NAME], report)

    # Newton's importer, then the builder-side corrections.
    start = _builder_counts(builder)
    _run_newton_importer(builder, root, path, version, xform, newton_kwargs, report)
    n_act = _number_imported_actuators(builder, path, acts, start["act"])
    joints = list(range(start["joint"], builder.joint_count))
    joint_of_body = {_short(builder.body_label[builder.joint_child[j]]): j for j in joints}
    _drop_replaced_joints(builder, path, plans, joint_of_body, newton_kwargs, report)

    # Patch 1 (builder side): per-DOF damping/armature/friction on free and ball joints.
    for plan in plans.values():
        if plan.kind == "merged_free":
            free_joint.map_merged_slides(builder, plan, joint_of_body[plan.body], path)
    if enabled[free_joint.NAME]:
        report.changes[free_joint.NAME] += free_joint.fix_builder(builder, plans, joint_of_body)

    ctrl_direct = bool(newton_kwargs.get("ctrl_direct", False))
    moments = _map_actuators_to_dofs(builder, path, acts, index, joint_of_body, enabled, ctrl_direct, report)
    _resolve_dampratio(builder, acts, moments, joints, enabled[dampratio.NAME], report)
    _record_wrist_gains(builder, path, plans, joint_of_body, free_acts, index, enabled[free_actuators.NAME], report)

    _record_counts(builder, start, joints, report)
    _record_dof_tables(builder, acts, plans, joint_of_body, report)
    report.imported_actuator_count = n_act
    return report


def _enabled_patches(patches: Mapping[str, bool] | None) -> dict[str, bool]:
    """Patch name -> enabled, every name in :data:`PATCHES` present (default on).

    Raises:
        ValueError: a name in ``patches`` is not in :data:`PATCHES`.
    """
    enabled = {name: True for name in PATCHES}
    for name, on in (patches or {}).items():
        if name not in enabled:
            raise ValueError(f"unknown patch {name!r}; known: {', '.join(PATCHES)}")
        enabled[name] = bool(on)
    return enabled


def _drop_free_actuators(
    root: ET.Element, path: Path, acts: list[ActuatorSpec], index: _JointIndex, enabled: bool, report: ImportReport
) -> list[ActuatorSpec]:
    """Mark which actuators Newton will import; with ``free_actuators`` on, remove those aimed at a free joint.

    Sets ``ActuatorSpec.imported = False`` on actuators whose joint Newton will not know (unknown
    joint, or a joint merged into a free joint), removes free-joint actuators from ``root`` and
    warns (:class:`~importer_patches.errors.FreeJointActuatorWarning`) when the patch is on.

    Returns:
        The actuators whose joint is part of a free joint (authored or merged).
    """
    free_acts = [a for a in acts if a.joint in index.free_joint_of]
    for a in acts:
        if a.joint is not None and a.joint not in index.plan_of_joint:
            a.imported = False  # Newton skips actuators on unknown joints
    if not free_acts:
        return free_acts
    if enabled:
        remove_from_xml(root, free_acts)
        for a in free_acts:
            a.imported = False
        # stacklevel 4: free_actuators.warn -> here -> add_mjcf -> the caller of add_mjcf.
        report.warnings.append(free_actuators.warn(path, free_acts, index.free_joint_of, stacklevel=4))
        report.changes[free_actuators.NAME].append(f"not imported (target a free joint): {[a.name for a in free_acts]}")
    else:
        for a in free_acts:
            if a.joint in index.merged_names:
                a.imported = False  # Newton: unknown joint name, dropped silently
    return free_acts


def _builder_counts(builder) -> dict[str, int]:
    """The builder's body/joint/dof/coord/shape/actuator counts before the import (absolute index bases)."""
    return {
        "body": builder.body_count,
        "joint": builder.joint_count,
        "dof": builder.joint_dof_count,
        "coord": builder.joint_coord_count,
        "shape": builder.shape_count,
        "act": builder._custom_frequency_counts.get("mujoco:actuator", 0),
    }


def _run_newton_importer(builder, root: ET.Element, path: Path, version: str, xform, newton_kwargs: dict, report) -> None:
    """Hand the patched XML to Newton's ``ModelBuilder.add_mjcf``; record and re-issue its warnings.

    Raises:
        MJCFError: Newton's importer raised ValueError/KeyError/IndexError/AttributeError.
    """
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


def _number_imported_actuators(builder, path: Path, acts: list[ActuatorSpec], act_start: int) -> int:
    """Set ``newton_index`` on each imported actuator (Newton keeps document order); return Newton's count.

    Raises:
        MJCFError: Newton imported a different number of actuators than expected.
    """
    n_act = builder._custom_frequency_counts.get("mujoco:actuator", 0) - act_start
    expected = [a for a in acts if a.imported]
    if n_act != len(expected):
        raise MJCFError(
            path,
            "actuator",
            f"Newton imported {n_act} actuators but {len(expected)} were expected "
            f"({[a.name for a in expected]}); cannot map actuators to DOFs reliably",
        )
    for k, a in enumerate(expected):
        a.newton_index = act_start + k
    return n_act


def _drop_replaced_joints(builder, path: Path, plans: dict, joint_of_body: dict, newton_kwargs: dict, report) -> None:
    """Forget (and warn about) bodies whose free/ball joint Newton replaced or dropped.

    Newton kwargs (floating, base_joint, parent_body, ignore_names, ...) may replace or drop a
    body's joint; per-DOF fixes then no longer apply to it: say so instead of writing blindly.
    Removes such bodies from ``plans`` and ``joint_of_body`` in place.
    """
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
            warnings.warn(message, UserWarning, stacklevel=3)  # the caller of add_mjcf
            joint_of_body.pop(plan.body, None)
            plans.pop(plan.body)


def _map_actuators_to_dofs(
    builder, path: Path, acts: list[ActuatorSpec], index: _JointIndex, joint_of_body: dict,
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


def _resolve_dampratio(builder, acts: list[ActuatorSpec], moments: dict, joints: list[int], enabled: bool, report) -> None:
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


def _record_wrist_gains(
    builder, path: Path, plans: dict, joint_of_body: dict, free_acts: list[ActuatorSpec],
    index: _JointIndex, enabled: bool, report: ImportReport,
) -> None:
    """Patch ``free_actuators`` on the builder: no gains on free DOFs; the first free joint's gains in the report.

    Fills ``report.wrist_gains`` (kp N/m then N·m/rad, kd N·s/m then N·m·s/rad, see
    :data:`WRIST_FRAMES`) and ``report.free_joint_actuators``.

    Raises:
        UnsupportedActuatorError: a merged wrist's rotation actuator gear is not a unit axis.
    """
    free_plans = [p for p in plans.values() if p.kind in _FREE_KINDS and p.body in joint_of_body]
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
            "joint": _short(builder.joint_label[j]),
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


def _record_counts(builder, start: dict[str, int], joints: list[int], report: ImportReport) -> None:
    """Fill the report's index ranges, names and joint types (absolute builder indices)."""
    report.body_start, report.body_count = start["body"], builder.body_count - start["body"]
    report.joint_start, report.joint_count = start["joint"], len(joints)
    report.dof_start, report.dof_count = start["dof"], builder.joint_dof_count - start["dof"]
    report.coord_start, report.coord_count = start["coord"], builder.joint_coord_count - start["coord"]
    report.shape_start, report.shape_count = start["shape"], builder.shape_count - start["shape"]
    bodies = range(start["body"], builder.body_count)
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


def _record_dof_tables(builder, acts: list[ActuatorSpec], plans: dict, joint_of_body: dict, report) -> None:
    """Fill the report's per-DOF tables (damping, armature, friction, drive gains/mode) and actuator maps."""
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
