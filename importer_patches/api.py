"""``add_mjcf``: import an unmodified MJCF into a Newton ModelBuilder as MuJoCo compiles it.

The steps are this module's (XML patched in memory, Newton's importer, joints Newton replaced,
the report's counts and per-DOF tables); the actuator-to-DOF map, ``dampratio`` and wrist gains
are :mod:`importer_patches.dof_map`.
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from newton import JointTargetMode, JointType

from . import ball_actuators, dampratio, free_actuators, free_joint
from .actuators import ActuatorSpec, read_actuators, remove_from_xml
from .dof_map import WRIST_FRAMES, JointIndex, map_actuators_to_dofs, record_wrist_gains, resolve_dampratio
from .dof_map import short_label as _short
from .errors import MJCFError
from .mjcf_tree import load_tree
from .report import ImportReport
from .version import check_newton_version

PATCHES = (free_joint.NAME, dampratio.NAME, free_actuators.NAME, ball_actuators.NAME)

__all__ = ["PATCHES", "WRIST_FRAMES", "add_mjcf"]

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
    root = load_tree(path)  # patched in memory, never written
    plans, acts, index = _plan_xml(root, path, enabled, report)
    free_acts = _drop_free_actuators(root, path, acts, index, enabled[free_actuators.NAME], report)
    # Newton's importer, then the builder-side corrections
    start, joints, joint_of_body = _import_with_newton(builder, root, path, version, xform, newton_kwargs, acts,
                                                       report)
    _drop_replaced_joints(builder, path, plans, joint_of_body, newton_kwargs, report)
    _correct_builder(builder, path, plans, acts, index, joint_of_body, joints, free_acts, enabled,
                     bool(newton_kwargs.get("ctrl_direct", False)), report)
    _record_counts(builder, start, joints, report)
    _record_dof_tables(builder, acts, plans, joint_of_body, report)
    return report


def _plan_xml(root: ET.Element, path: Path, enabled: dict[str, bool],
              report: ImportReport) -> tuple[dict, list[ActuatorSpec], JointIndex]:
    """Plan every body's joints (:func:`free_joint.plan_bodies`), read the actuators and, with
    ``free_joint`` on, rewrite merged wrists to a ``<freejoint>`` in ``root``.

    Returns:
        (plans by body name, actuators in document order, where each joint name ends up).

    Raises:
        UnsupportedJointError: a body's joints cannot be represented exactly.
    """
    plans = free_joint.plan_bodies(root, path, enabled=enabled[free_joint.NAME])
    acts = read_actuators(root)
    if enabled[free_joint.NAME]:
        report.changes[free_joint.NAME] += free_joint.rewrite_xml(root, plans)
    return plans, acts, JointIndex.from_plans(plans)


def _import_with_newton(builder, root: ET.Element, path: Path, version: str, xform, newton_kwargs: dict,
                        acts: list[ActuatorSpec], report: ImportReport) -> tuple[dict[str, int], list[int], dict]:
    """Newton's importer on the patched XML; number the imported actuators.

    Returns:
        (the builder's counts before the import, the imported joints' indices, MJCF body
        name -> index of the Newton joint whose child it is).

    Raises:
        MJCFError: Newton's importer failed, or imported another number of actuators.
    """
    start = _builder_counts(builder)
    _run_newton_importer(builder, root, path, version, xform, newton_kwargs, report)
    report.imported_actuator_count = _number_imported_actuators(builder, path, acts, start["act"])
    joints = list(range(start["joint"], builder.joint_count))
    joint_of_body = {_short(builder.body_label[builder.joint_child[j]]): j for j in joints}
    return start, joints, joint_of_body


def _correct_builder(builder, path: Path, plans: dict, acts: list[ActuatorSpec], index: JointIndex,
                     joint_of_body: dict, joints: list[int], free_acts: list[ActuatorSpec],
                     enabled: dict[str, bool], ctrl_direct: bool, report: ImportReport) -> None:
    """The patches' builder side: per-DOF damping/armature/friction on free and ball joints
    (``free_joint``), each actuator's DOFs (``ball_actuators``), kv from ``dampratio``, and no
    gains on free DOFs with the authored wrist gains in the report (``free_actuators``).

    Raises:
        UnsupportedJointError: anisotropic merged slides not on world axes.
        UnsupportedActuatorError: an actuator gear Newton cannot represent.
    """
    for plan in plans.values():
        if plan.kind == "merged_free":
            free_joint.map_merged_slides(builder, plan, joint_of_body[plan.body], path)
    if enabled[free_joint.NAME]:
        report.changes[free_joint.NAME] += free_joint.fix_builder(builder, plans, joint_of_body)
    moments = map_actuators_to_dofs(builder, path, acts, index, joint_of_body, enabled, ctrl_direct, report)
    resolve_dampratio(builder, acts, moments, joints, enabled[dampratio.NAME], report)
    record_wrist_gains(builder, path, plans, joint_of_body, free_acts, index, enabled[free_actuators.NAME], report)


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
    root: ET.Element, path: Path, acts: list[ActuatorSpec], index: JointIndex, enabled: bool, report: ImportReport
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
