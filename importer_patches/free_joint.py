"""Patch ``free_joint``: joint combinations on one body, reproduced as MuJoCo compiles them.

MuJoCo semantics reproduced (MuJoCo XML reference, ``body/joint`` and
``body/freejoint``; computation chapter, "joint types"):

* Several joints on one body are composed in document order. Three ``slide``
  joints with mutually orthogonal axes followed by a ``ball`` joint anchored at
  the body origin span exactly the configuration space of a ``free`` joint, with
  the same velocity coordinates: the slides' ``qvel`` is the body-origin linear
  velocity along fixed axes of the parent (world) frame, the ball's ``qvel`` the
  angular velocity in the body's local frame - which is how MuJoCo defines a free
  joint's six DOFs. Damping, armature and frictionloss are per-DOF attributes
  (``dof_damping``, ``dof_armature``, ``dof_frictionloss``) and carry over per DOF.
* A lone ``ball`` joint is a 3-DOF joint whose damping, armature and
  frictionloss apply to each of its three DOFs.
* A ``free`` joint (``<joint type="free">``) keeps its own damping and armature.

What Newton 1.8.0 does instead (``import_mjcf.py``, ``parse_body``): it treats a
``ball`` joint as terminal, drops the ``slide`` joints parsed before it and then
fails (``ValueError: JOINT_DOF attribute 'mujoco:solreflimit_mode' has invalid DOF
index 3``) or, with that check bypassed, silently builds a 3-DOF ball to the world;
its free-joint path (``add_joint_free``) sets damping and armature to 0.

This module rewrites such bodies in the in-memory XML to a ``<freejoint>`` and,
after import, restores the authored per-DOF damping/armature/frictionloss on the
free joint and checks them on every lone ball joint. Any other combination that
Newton cannot represent exactly (a ball or free joint together with other joints,
a hinge before a slide, joints of one body at different anchors, a merged free
joint below another body, limited/sprung wrist joints, non-orthogonal slides)
raises :class:`~importer_patches.errors.UnsupportedJointError` naming the body and
its joints.

Newton DOF order of the resulting free joint: 0-2 linear (world x, y, z; Newton's
``joint_qd`` holds the COM velocity in the parent frame there), 3-5 angular.
``joint_q``: position x, y, z then quaternion x, y, z, w (Newton order; MuJoCo's
``qpos`` stores w first).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import UnsupportedJointError
from .mjcf_tree import Defaults, iter_bodies, parse_floats

NAME = "free_joint"

_TOL = 1e-9


@dataclass
class JointSpec:
    """One authored MJCF joint after default-class resolution (units: m, rad, N·s/m, kg·m²)."""

    name: str
    type: str
    pos: np.ndarray
    axis: np.ndarray
    damping: float
    armature: float
    frictionloss: float
    stiffness: float
    limited: bool
    ref: float


@dataclass
class BodyPlan:
    """How one body's joints map onto a Newton joint.

    ``kind``: ``none`` | ``free`` (authored) | ``merged_free`` (slide x3 + ball) | ``ball`` |
    ``scalar`` (hinge/slide, possibly combined to a D6 by Newton).
    ``dof_of_joint`` maps each MJCF joint name to its DOF offsets inside the Newton joint.
    For ``merged_free``: ``lin_axes`` (3, 3) rows are the slide axes in the MJCF
    frame; per-DOF ``damping``/``armature``/``friction`` have 6 entries.
    """

    body: str
    kind: str
    joints: list[JointSpec]
    free_name: str | None = None
    dof_of_joint: dict[str, list[int]] = field(default_factory=dict)
    lin_axes: np.ndarray | None = None
    lin_axes_world: np.ndarray | None = None
    damping: list[float] = field(default_factory=list)
    armature: list[float] = field(default_factory=list)
    friction: list[float] = field(default_factory=list)


def _is_limited(attrib: dict[str, str], autolimits: bool) -> bool:
    limited = attrib.get("limited", "auto").lower()
    if limited == "true":
        return True
    if limited == "false":
        return False
    return autolimits and "range" in attrib


def read_joint(elem: ET.Element, defaults: Defaults, childclass: str | None, autolimits: bool, body: str, i: int) -> JointSpec:
    """Resolve one ``<joint>``/``<freejoint>`` element into a :class:`JointSpec`."""
    if elem.tag == "freejoint":
        a = dict(elem.attrib)
        jtype = "free"
    else:
        a = defaults.resolve(elem, "joint", childclass)
        jtype = a.get("type", "hinge")
    axis = parse_floats(a.get("axis"), [0.0, 0.0, 1.0])
    norm = np.linalg.norm(axis)
    return JointSpec(
        name=a.get("name") or f"{body}_joint_{i}",
        type=jtype,
        pos=parse_floats(a.get("pos"), [0.0, 0.0, 0.0]),
        axis=axis / norm if norm > 0 else axis,
        damping=float(a.get("damping", 0.0)),
        armature=float(a.get("armature", 0.0)),
        frictionloss=float(a.get("frictionloss", 0.0)),
        stiffness=float(a.get("stiffness", 0.0)),
        limited=_is_limited(a, autolimits) if jtype in ("hinge", "slide", "ball") else False,
        ref=float(a.get("ref", 0.0)),
    )


def _raise(path, body, joints, why):
    names = ", ".join(f"{j.name} ({j.type})" for j in joints)
    raise UnsupportedJointError(
        path,
        f"body '{body}'",
        f"joints [{names}] cannot be represented exactly by a Newton 1.8.0 joint: {why}",
    )


def plan_bodies(root: ET.Element, path: str | Path, enabled: bool = True) -> dict[str, BodyPlan]:
    """Classify every body's joints; raise on combinations Newton cannot represent.

    With ``enabled=False`` nothing is checked and only ``none``/``ball``/``scalar``/``free``
    plans for single joints are returned (used for the actuator->DOF map of the
    unpatched import).

    Raises:
        UnsupportedJointError: see the module docstring.
    """
    defaults = Defaults(root)
    compiler = {}
    for c in root.iter("compiler"):
        compiler.update(c.attrib)
    autolimits = compiler.get("autolimits", "true").lower() == "true"
    plans: dict[str, BodyPlan] = {}
    for n, (body, parent, childclass) in enumerate(iter_bodies(root)):
        bname = body.get("name") or f"body_{n}"
        elems = [e for e in body if e.tag in ("joint", "freejoint")]
        joints = [read_joint(e, defaults, childclass, autolimits, bname, i) for i, e in enumerate(elems)]
        plans[bname] = _plan_body(bname, joints, parent, path, enabled)
    return plans


def _plan_body(bname: str, joints: list[JointSpec], parent, path, enabled: bool) -> BodyPlan:
    """The :class:`BodyPlan` of one body (``parent``: its parent body element, None below
    ``<worldbody>``).

    Raises:
        UnsupportedJointError: with ``enabled``, joints Newton cannot represent exactly.
    """
    types = [j.type for j in joints]
    plan = BodyPlan(body=bname, kind="none", joints=joints)
    if not joints:
        pass
    elif types in (["free"], ["ball"]):
        j, ndof = joints[0], 6 if types == ["free"] else 3
        plan.kind = types[0]
        if plan.kind == "free":
            plan.free_name = j.name
        plan.dof_of_joint = {j.name: list(range(ndof))}
        plan.damping, plan.armature, plan.friction = [j.damping] * ndof, [j.armature] * ndof, [j.frictionloss] * ndof
    elif enabled and types == ["slide", "slide", "slide", "ball"]:
        _plan_merged_free(plan, parent, path)
    elif all(t in ("slide", "hinge") for t in types):
        _plan_scalar(plan, path, enabled)
    elif enabled:
        if "free" in types:
            why = "a free joint must be the only joint of its body"
        elif types.count("ball") > 1:
            why = "more than one ball joint on one body"
        elif "ball" in types:
            why = "a ball joint combined with other joints (only slide x3 followed by one ball maps to a free joint)"
        else:
            why = f"unsupported joint types {sorted(set(types))}"
        _raise(path, bname, joints, why)
    return plan


def _plan_merged_free(plan: BodyPlan, parent, path) -> None:
    """Slide x3 + ball on one body: checked and planned as one free joint (in place).

    Raises:
        UnsupportedJointError: not below ``<worldbody>``, non-orthogonal slides, a ball off
            the body origin, limits, springs or a slide ``ref``.
    """
    bname, joints = plan.body, plan.joints
    slides, ball = joints[:3], joints[3]
    if parent is not None:
        _raise(path, bname, joints, "slide x3 + ball is a free body only below <worldbody>; Newton free joints need the world as parent")
    lin = np.stack([s.axis for s in slides])
    if not np.allclose(lin @ lin.T, np.eye(3), atol=1e-6):
        _raise(path, bname, joints, "the three slide axes are not mutually orthogonal")
    if np.linalg.norm(ball.pos) > _TOL:
        _raise(path, bname, joints, f"the ball joint is anchored at {ball.pos.tolist()}, not at the body origin, so its rotation is not a free joint's")
    if any(j.limited for j in joints):
        _raise(path, bname, joints, "a free joint cannot carry joint limits")
    if any(j.stiffness != 0.0 for j in joints):
        _raise(path, bname, joints, "a free joint cannot carry joint stiffness (springs)")
    if any(s.ref != 0.0 for s in slides):
        _raise(path, bname, joints, "slide 'ref' shifts qpos0, which a free joint cannot represent")
    plan.kind = "merged_free"
    plan.free_name = f"{bname}_freejoint"
    plan.lin_axes = lin
    # Linear values stay in slide order here; fix_builder maps them onto
    # Newton's world-axis DOFs once the body's world orientation is known.
    plan.damping = [s.damping for s in slides] + [ball.damping] * 3
    plan.armature = [s.armature for s in slides] + [ball.armature] * 3
    plan.friction = [s.frictionloss for s in slides] + [ball.frictionloss] * 3
    for k, s in enumerate(slides):
        plan.dof_of_joint[s.name] = [k]
    plan.dof_of_joint[ball.name] = [3, 4, 5]


def _plan_scalar(plan: BodyPlan, path, enabled: bool) -> None:
    """Hinges and slides on one body (Newton combines several into a D6), planned in place:
    linear DOFs first, then angular.

    Raises:
        UnsupportedJointError: with ``enabled``, a hinge before a slide, joints at different
            anchors, or more than 6 DOFs.
    """
    bname, joints = plan.body, plan.joints
    types = [j.type for j in joints]
    plan.kind = "scalar"
    if enabled:
        first_hinge = types.index("hinge") if "hinge" in types else len(types)
        if "slide" in types[first_hinge:]:
            _raise(path, bname, joints, "Newton orders a combined joint's linear DOFs first; a hinge before a slide changes the kinematics")
        if len(joints) > 1 and any(np.linalg.norm(j.pos - joints[0].pos) > _TOL for j in joints[1:]):
            _raise(path, bname, joints, "Newton anchors a combined joint at the first joint's pos; these joints have different anchors")
        if len(joints) > 6:
            _raise(path, bname, joints, "more than 6 DOFs on one body")
    lin = [j for j in joints if j.type == "slide"]
    ang = [j for j in joints if j.type == "hinge"]
    for k, j in enumerate(lin + ang):
        plan.dof_of_joint[j.name] = [k]


def rewrite_xml(root: ET.Element, plans: dict[str, BodyPlan]) -> list[str]:
    """Replace each ``merged_free`` body's four joints by one ``<freejoint>`` in place.

    Returns:
        One line per body describing the change.
    """
    changes = []
    for n, (body, _parent, _cc) in enumerate(iter_bodies(root)):
        bname = body.get("name") or f"body_{n}"
        plan = plans.get(bname)
        if plan is None or plan.kind != "merged_free":
            continue
        elems = [e for e in body if e.tag == "joint"]
        index = list(body).index(elems[0])
        for e in elems:
            body.remove(e)
        body.insert(index, ET.Element("freejoint", {"name": plan.free_name}))
        changes.append(
            f"body '{bname}': joints {[j.name for j in plan.joints]} (slide x3 + ball) -> FREE joint "
            f"'{plan.free_name}' with per-DOF damping {plan.damping}, armature {plan.armature}, "
            f"frictionloss {plan.friction}"
        )
    return changes


def _world_rotation(builder, body: int) -> np.ndarray:
    from .mass_matrix import _pose

    return _pose(builder.body_q[body])[0]


def map_merged_slides(builder, plan: BodyPlan, joint: int, path) -> None:
    """Map a merged body's slides onto the free joint's world-axis DOFs (in place).

    A slide axis is authored in the body frame; at the reference pose its world
    direction is ``R_body @ axis``. Newton's free joint translates along world
    x, y, z. When the three slides carry equal damping/armature/frictionloss the
    mapping is exact for any orthonormal triad; otherwise each slide must lie on a
    world axis. Sets ``plan.lin_axes_world``, ``plan.dof_of_joint`` (slide -> free
    DOF offsets; all three when not aligned) and orders the linear per-DOF values
    by world axis.

    Raises:
        UnsupportedJointError: anisotropic slides not aligned with world axes.
    """
    R = _world_rotation(builder, builder.joint_child[joint])
    world = (R @ plan.lin_axes.T).T
    plan.lin_axes_world = world
    slides = plan.joints[:3]
    perm = np.argmax(np.abs(world), axis=1)
    aligned = np.allclose(np.abs(world), np.eye(3)[perm], atol=1e-6) and len(set(perm.tolist())) == 3
    lin = list(zip(plan.damping[:3], plan.armature[:3], plan.friction[:3]))
    isotropic = len(set(lin)) == 1
    if not aligned and not isotropic:
        _raise(
            path,
            plan.body,
            plan.joints,
            "slides with different damping/armature/frictionloss must lie on world axes "
            f"(after the body orientation and xform they point along {np.round(world, 6).tolist()})",
        )
    if aligned:
        d, a, f = [0.0] * 3, [0.0] * 3, [0.0] * 3
        for (dk, ak, fk), k in zip(lin, perm):
            d[k], a[k], f[k] = dk, ak, fk
        plan.damping[:3], plan.armature[:3], plan.friction[:3] = d, a, f
        for s, k in zip(slides, perm):
            plan.dof_of_joint[s.name] = [int(k)]
    else:
        for s in slides:
            plan.dof_of_joint[s.name] = [0, 1, 2]


def fix_builder(builder, plans: dict[str, BodyPlan], joint_of_body: dict[str, int]) -> list[str]:
    """Write authored per-DOF damping/armature/friction onto free and ball joints.

    Args:
        builder: the ``newton.ModelBuilder`` after import.
        plans: from :func:`plan_bodies` (merged bodies already passed through
            :func:`map_merged_slides`).
        joint_of_body: MJCF body name -> index of the Newton joint whose child it is.

    Returns:
        One line per DOF whose values had to be changed.
    """
    changes = []
    for bname, plan in plans.items():
        if plan.kind not in ("free", "merged_free", "ball") or bname not in joint_of_body:
            continue
        j = joint_of_body[bname]
        start = builder.joint_qd_start[j]
        for k in range(len(plan.damping)):
            dof = start + k
            old = (builder.joint_damping[dof], builder.joint_armature[dof], builder.joint_friction[dof])
            new = (plan.damping[k], plan.armature[k], plan.friction[k])
            if not np.allclose(old, new, rtol=1e-7, atol=0):
                builder.joint_damping[dof] = new[0]
                builder.joint_armature[dof] = new[1]
                builder.joint_friction[dof] = new[2]
                changes.append(
                    f"joint '{builder.joint_label[j]}' DOF {dof} ({plan.kind}): damping/armature/friction "
                    f"{tuple(float(x) for x in old)} -> {new}"
                )
    return changes
