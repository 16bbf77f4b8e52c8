"""Field-by-field differences between two compiled :class:`mujoco.MjModel` of the same scene.

Made to hold the model the project's engine steps (Newton's converted model:
``scene.solver.mj_model``) against MuJoCo's own compile of the files as authored
(:mod:`benchmarks.authored_reference`), so names are matched with care:

* bodies by their last name component: Newton writes ``mano_hand_worldbody_mano_body_0_mano_body_1``
  for the MJCF's ``mano_body_1``; anything else (``object``, ``table``, ``world``) by its whole name;
* geoms by body + order within the body, visual geoms (``*_visual*``) last (Newton renames them,
  ``object_part<i>``, ``object_visual<i>``); where the two
  bodies hold different numbers of geoms, the geoms named ``*_visual`` are set aside first (object_sim's
  visual meshes; the project collides only the ``object_col`` parts), and what still has no partner is
  reported unmatched; ``geom_pairs`` adds explicit pairs across bodies (e.g. the project's table-top box
  ``support`` in the world body and the table's ``table_contact0``);
* dofs by joint (``mano_joint_<k>``: last component; the wrist's ``wrist_tx/ty/tz`` + ``wrist_rot`` and a
  free joint on ``mano_body_0`` both as the root's 6 dofs in order; an object's free joint by its body);
* collision: for every two matched geoms, whether MuJoCo's filter lets them collide
  (:func:`can_collide`), compared pair by pair (the raw ``contype``/``conaffinity`` bits are reported
  too, but Newton writes its collision groups into them, so only the pairs say what collides);
* actuators by (target joint, gear axis); an actuator on one side only is reported unmatched (the
  project drives the wrist by a wrench, the MJCF by six position actuators);
* shape and frames (:mod:`benchmarks.model_geometry`): every matched geom's shape in its body frame
  (``geom_shape``: a mesh's convex hull, a primitive's ends or corners), every body's centre of mass,
  inertia tensor and pose in its parent, every joint's type, limits and soft-constraint values, body by
  body in order (a body whose joints differ in number: one ``jnt_type`` difference).

Fields that are bookkeeping (addresses, ids, BVH), drawing (rgba, group, material) or derived by the
compile from those compared (``geom_aabb``, ``geom_rbound``, ``dof_invweight0``) are not compared.

Tolerances (:data:`RTOL`, :data:`MASS_RTOL`, :data:`LENGTH_ATOL`): 1e-6 relative for masses (Newton holds
them in float32: 7 digits) and every other real parameter, 1e-9 m for lengths (margins, gaps). Integer
fields compare exactly. Each difference is a :class:`Difference` ``(field, where, ours, reference)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from model_geometry import body_frame_checks, geom_shape, joint_checks, same_shape

#: relative tolerance of masses (kg) and inertias (kg m^2): Newton's float32 holds 7 digits
MASS_RTOL = 1e-6
#: absolute tolerance of geometric lengths (margin, gap), m
LENGTH_ATOL = 1e-9
#: relative tolerance of the other real parameters (solref s, solimp, friction, gains, damping)
RTOL = 1e-6

OPTION_FIELDS = (
    "integrator",
    "cone",
    "impratio",
    "noslip_iterations",
    "noslip_tolerance",
    "tolerance",
    "ls_tolerance",
    "iterations",
    "ls_iterations",
    "timestep",
    "gravity",
    "wind",
    "magnetic",
    "density",
    "viscosity",
    "o_margin",
    "o_solref",
    "o_solimp",
    "o_friction",
    "ccd_iterations",
    "ccd_tolerance",
    "disableflags",
    "enableflags",
    "solver",
    "jacobian",
)
#: per geom: (field, kind) with kind "int", "len" (m) or "real"
GEOM_FIELDS = (
    ("geom_condim", "int"),
    ("geom_friction", "real"),
    ("geom_solref", "real"),
    ("geom_solimp", "real"),
    ("geom_solmix", "real"),
    ("geom_priority", "int"),
    ("geom_margin", "len"),
    ("geom_gap", "len"),
    ("geom_contype", "int"),
    ("geom_conaffinity", "int"),
)
DOF_FIELDS = ("dof_damping", "dof_armature", "dof_frictionloss")
ACTUATOR_FIELDS = (
    ("actuator_gainprm", 3),
    ("actuator_biasprm", 3),
    ("actuator_forcelimited", 0),
    ("actuator_forcerange", 2),
    ("actuator_ctrllimited", 0),
    ("actuator_ctrlrange", 2),
    ("actuator_gear", 6),
)


@dataclass(frozen=True)
class Difference:
    """One field that differs: ``field`` (MjModel name), ``where`` (the element, or ``"option"`` /
    ``"unmatched"``), the two values as printed text."""

    field: str
    where: str
    ours: str
    reference: str

    def line(self) -> str:
        return f"| {self.field} | {self.where} | {self.ours} | {self.reference} |"


def canonical_body(name: str) -> str:
    """A body's name with Newton's path prefix removed (``..._mano_body_3`` -> ``mano_body_3``)."""
    i = name.rfind("mano_body_")
    return name[i:] if i >= 0 else name


def _fmt(v) -> str:
    a = np.atleast_1d(np.asarray(v))
    if a.dtype.kind in "iub":
        return " ".join(str(int(x)) for x in a)
    return " ".join(f"{float(x):.6g}" for x in a)


def _same(a, b, kind: str) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        return False
    if kind == "int":
        return bool(np.array_equal(a, b))
    if kind == "len":
        return bool(np.allclose(a, b, rtol=0.0, atol=LENGTH_ATOL))
    rtol = MASS_RTOL if kind == "mass" else RTOL
    return bool(np.allclose(a, b, rtol=rtol, atol=1e-12))


def _options(ours: mujoco.MjModel, ref: mujoco.MjModel) -> list[Difference]:
    out = []
    for f in OPTION_FIELDS:
        a, b = getattr(ours.opt, f), getattr(ref.opt, f)
        kind = (
            "int"
            if np.asarray(a).dtype.kind in "iub" or f in ("integrator", "cone", "solver", "jacobian")
            else ("len" if f == "o_margin" else "real")
        )
        if not _same(
            np.asarray(a, float) if kind != "int" else int(a), np.asarray(b, float) if kind != "int" else int(b), kind
        ):
            out.append(Difference(f"opt.{f}", "option", _fmt(a), _fmt(b)))
    return out


def _bodies(m: mujoco.MjModel) -> dict[str, int]:
    return {canonical_body(m.body(i).name): i for i in range(m.nbody)}


def _body_geoms(m: mujoco.MjModel, b: int) -> list[int]:
    return [g for g in range(m.ngeom) if m.geom_bodyid[g] == b]


def _visual_last(m: mujoco.MjModel, geoms: list[int]) -> list[int]:
    """``geoms`` in order, those named ``*_visual*`` last (object_sim writes its visual geom first, the
    project adds it after the collision parts)."""
    return sorted(geoms, key=lambda g: "_visual" in m.geom(g).name)


def match_geoms(ours: mujoco.MjModel, ref: mujoco.MjModel, geom_pairs=()) -> tuple[list, list[str]]:
    """``([(our geom, reference geom, label)], [unmatched descriptions])`` (module doc).

    ``geom_pairs``: extra ``(our geom name, reference geom name)`` pairs matched across bodies; the
    geoms they name are taken out of the per-body matching."""
    pairs, unmatched = [], []
    taken_o, taken_r = set(), set()
    for go, gr in geom_pairs:
        io, ir = ours.geom(go).id, ref.geom(gr).id
        pairs.append((io, ir, f"{go} ~ {gr}"))
        taken_o.add(io)
        taken_r.add(ir)
    bo, br = _bodies(ours), _bodies(ref)
    for name in sorted(set(bo) | set(br)):
        go = _visual_last(ours, [g for g in _body_geoms(ours, bo[name]) if g not in taken_o] if name in bo else [])
        gr = _visual_last(ref, [g for g in _body_geoms(ref, br[name]) if g not in taken_r] if name in br else [])
        if name not in bo or name not in br:
            side = "reference" if name in br else "ours"
            unmatched.append(f"body {name} only in {side} ({len(gr) if name in br else len(go)} geoms)")
            continue
        if len(go) != len(gr):
            for m, gs, side in ((ours, go, "ours"), (ref, gr, "reference")):
                vis = [g for g in gs if m.geom(g).name.endswith("_visual")]
                unmatched += [f"geom {m.geom(g).name} ({name}) set aside: visual, {side} only" for g in vis]
                gs[:] = [g for g in gs if g not in vis]
        for k in range(max(len(go), len(gr))):
            if k < len(go) and k < len(gr):
                pairs.append((go[k], gr[k], f"{name}[{k}] {ref.geom(gr[k]).name or ours.geom(go[k]).name}"))
            else:
                m, g, side = (ours, go[k], "ours") if k < len(go) else (ref, gr[k], "reference")
                unmatched.append(f"geom {name}[{k}] {m.geom(g).name} only in {side}")
    return pairs, unmatched


def _geoms(ours, ref, pairs) -> list[Difference]:
    out = []
    for go, gr, label in pairs:
        for f, kind in GEOM_FIELDS:
            a, b = getattr(ours, f)[go], getattr(ref, f)[gr]
            if not _same(a, b, kind):
                out.append(Difference(f, label, _fmt(a), _fmt(b)))
        sa, sb = geom_shape(ours, go), geom_shape(ref, gr)
        if not same_shape(sa, sb):  # what collides, in the body frame (benchmarks/model_geometry.py)
            out.append(
                Difference("geom_shape", label, f"{sa[0]} {_fmt(sa[1].ravel())}", f"{sb[0]} {_fmt(sb[1].ravel())}")
            )
    return out


def _body_fields(ours, ref) -> list[Difference]:
    out = []
    bo, br = _bodies(ours), _bodies(ref)
    for name in sorted(set(bo) & set(br)):
        i, j = bo[name], br[name]
        checks = (
            ("body_mass", ours.body_mass[i], ref.body_mass[j], "mass"),
            ("body_inertia", np.sort(ours.body_inertia[i]), np.sort(ref.body_inertia[j]), "mass"),
            ("body_gravcomp", ours.body_gravcomp[i], ref.body_gravcomp[j], "real"),
        )
        out += [Difference(f, name, _fmt(a), _fmt(b)) for f, a, b, kind in checks if not _same(a, b, kind)]
        out += [Difference(f, name, a, b) for f, a, b in body_frame_checks(ours, ref, i, j)]
    return out


def _joints(ours, ref) -> list[Difference]:
    """Each matched body's joints, in order (benchmarks/model_geometry.py.joint_checks); a body whose joints differ
    in number is one ``jnt_type`` difference listing both sides' types."""
    out = []
    bo, br = _bodies(ours), _bodies(ref)
    for name in sorted(set(bo) & set(br)):
        jo = [k for k in range(ours.njnt) if ours.jnt_bodyid[k] == bo[name]]
        jr = [k for k in range(ref.njnt) if ref.jnt_bodyid[k] == br[name]]
        if len(jo) != len(jr):
            types = [
                " ".join(mujoco.mjtJoint(int(m.jnt_type[k])).name[6:].lower() for k in js)
                for m, js in ((ours, jo), (ref, jr))
            ]
            out.append(Difference("jnt_type", name, types[0] or "none", types[1] or "none"))
            continue
        for k, (a, b) in enumerate(zip(jo, jr)):
            out += [Difference(f, f"{name}.jnt{k}", x, y) for f, x, y in joint_checks(ours, ref, a, b)]
    return out


def _dof_keys(m: mujoco.MjModel) -> dict[str, int]:
    """``"<body>.dof<k>"`` -> dof index: each body's dofs in order (the root's slides + ball and a free
    joint both give ``mano_body_0.dof0..5``)."""
    keys, count = {}, {}
    for d in range(m.nv):
        body = canonical_body(m.body(m.dof_bodyid[d]).name)
        k = count.get(body, 0)
        count[body] = k + 1
        keys[f"{body}.dof{k}"] = d
    return keys


def _dofs(ours, ref) -> tuple[list[Difference], list[str]]:
    ko, kr = _dof_keys(ours), _dof_keys(ref)
    out = []
    for key in sorted(set(ko) & set(kr)):
        for f in DOF_FIELDS:
            a, b = getattr(ours, f)[ko[key]], getattr(ref, f)[kr[key]]
            if not _same(a, b, "real"):
                out.append(Difference(f, key, _fmt(a), _fmt(b)))
    only = [f"dof {k} only in {'ours' if k in ko else 'reference'}" for k in sorted(set(ko) ^ set(kr))]
    return out, only


def _actuator_keys(m: mujoco.MjModel) -> dict[str, int]:
    keys = {}
    for a in range(m.nu):
        if m.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT:
            keys[f"actuator {m.actuator(a).name or a} (trntype {m.actuator_trntype[a]})"] = a
            continue
        j = int(m.actuator_trnid[a, 0])
        jname = m.joint(j).name
        i = jname.rfind("mano_joint_")
        jname = jname[i:] if i >= 0 else jname.rsplit("/", 1)[-1]
        axis = int(np.argmax(np.abs(m.actuator_gear[a, :3])))
        keys[f"{jname}.{'xyz'[axis]}"] = a
    return keys


def _actuators(ours, ref) -> tuple[list[Difference], list[str]]:
    ko, kr = _actuator_keys(ours), _actuator_keys(ref)
    out = []
    for key in sorted(set(ko) & set(kr)):
        for f, n in ACTUATOR_FIELDS:
            a, b = getattr(ours, f)[ko[key]], getattr(ref, f)[kr[key]]
            if n:
                a, b = a[:n], b[:n]
            if not _same(a, b, "int" if n == 0 else "real"):
                out.append(Difference(f, key, _fmt(a), _fmt(b)))
    only = [f"actuator {k} only in {'ours' if k in ko else 'reference'}" for k in sorted(set(ko) ^ set(kr))]
    return out, only


def can_collide(m: mujoco.MjModel, g1: int, g2: int) -> bool:
    """Whether MuJoCo's broad-phase filter lets geoms ``g1`` and ``g2`` collide: different weld
    groups, not parent and child (``filterparent``, the world aside), no ``<exclude>``, and
    ``contype``/``conaffinity`` bits that meet (MuJoCo documentation, Computation: Collision detection)."""
    w1, w2 = int(m.body_weldid[m.geom_bodyid[g1]]), int(m.body_weldid[m.geom_bodyid[g2]])
    if w1 == w2:
        return False
    if not m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT:
        p1, p2 = int(m.body_weldid[m.body_parentid[w1]]), int(m.body_weldid[m.body_parentid[w2]])
        if (p1 == w2 and w2 != 0) or (p2 == w1 and w1 != 0):
            return False
    b1, b2 = sorted((int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])))
    if m.nexclude and np.any(np.asarray(m.exclude_signature) == (b1 << 16) + b2):
        return False
    return bool((m.geom_contype[g1] & m.geom_conaffinity[g2]) or (m.geom_contype[g2] & m.geom_conaffinity[g1]))


def _label_body(label: str) -> str:
    return label.split("[", 1)[0].split(" ~ ", 1)[0]


def collision_differences(ours: mujoco.MjModel, ref: mujoco.MjModel, pairs) -> list[Difference]:
    """Matched geom pairs that one model lets collide and the other not (:func:`can_collide`), one
    :class:`Difference` per pair of bodies (``field`` = ``collides``, values yes/no)."""
    out, seen = [], set()
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            (oi, ri, li), (oj, rj, lj) = pairs[i], pairs[j]
            a, b = can_collide(ours, oi, oj), can_collide(ref, ri, rj)
            key = tuple(sorted((_label_body(li), _label_body(lj))))
            if a != b and key not in seen:
                seen.add(key)
                out.append(Difference("collides", f"{key[0]} x {key[1]}", "yes" if a else "no", "yes" if b else "no"))
    return out


def diff_models(ours: mujoco.MjModel, ref: mujoco.MjModel, geom_pairs=()) -> tuple[list[Difference], list[str]]:
    """Every field of the module doc's list that differs between ``ours`` and ``ref``, and the
    elements that have no partner.

    Args:
        ours, ref: compiled models of the same scene (e.g. the project's ``scene.solver.mj_model`` and
            :func:`benchmarks.authored_reference.authored_spec`'s compile).
        geom_pairs: extra ``(our geom name, reference geom name)`` matches (module doc).

    Returns:
        ``(differences, unmatched)``: :class:`Difference` list (options, geoms, bodies, dofs,
        actuators, in that order; counts of pairs/exclusions last) and one line per unmatched element.
    """
    pairs, unmatched = match_geoms(ours, ref, geom_pairs)
    diffs = _options(ours, ref) + _geoms(ours, ref, pairs) + _body_fields(ours, ref) + _joints(ours, ref)
    d_dofs, u_dofs = _dofs(ours, ref)
    d_act, u_act = _actuators(ours, ref)
    diffs += d_dofs + d_act + collision_differences(ours, ref, pairs)
    for f in ("npair", "nexclude"):
        if getattr(ours, f) != getattr(ref, f):
            diffs.append(Difference(f, "model", str(getattr(ours, f)), str(getattr(ref, f))))
    return diffs, unmatched + u_dofs + u_act
