"""What two compiled models' matched elements are in their bodies' frames: a geom's shape, a body's mass
distribution and place in its parent, a joint's limits and soft constraints (`benchmarks/model_diff.py`).

MuJoCo and Newton write the same geometry differently: MuJoCo keeps a mesh's every vertex and frames the
geom at the mesh's inertial frame, Newton passes the convex hull framed at its own centre; a capsule's
frame may be turned end for end, a box's by any of its symmetries; principal axes of inertia come in any
order and sign. So each is compared by what collides and what moves, never by its raw arrays:

* a mesh geom by its convex hull in the body frame (volume, axis-aligned bounds): MuJoCo collides a
  mesh as its hull (MuJoCo documentation, Collision detection);
* a sphere by its centre and radius, a capsule or cylinder by its two end points (unordered) and radius,
  a box or ellipsoid by the 8 corners of its (bounding) box, all in the body frame;
* a body by its centre of mass and full inertia tensor in the body frame, and (not a free body) its
  pose in its parent;
* a joint by type, limits (range only where limited), stiffness, margin, solref / solimp, actuator
  force limit (range only where limited).

Lengths m (`model_diff.LENGTH_ATOL` is too tight for float32 geometry: :data:`GEOM_ATOL`),
masses kg, inertias kg m^2, quaternions wxyz (MuJoCo).
"""

from __future__ import annotations

import mujoco
import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

#: absolute tolerance of geometry in the body frame, m: Newton holds shapes in float32 (7 digits of ~0.3 m)
GEOM_ATOL = 1e-6
#: relative tolerance of a hull's volume and of an inertia tensor (to its largest entry)
SHAPE_RTOL = 1e-5


def _rot(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, float)
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def geom_shape(m: mujoco.MjModel, g: int) -> tuple[str, np.ndarray]:
    """``(kind, points)``: what geom ``g`` is in its body frame (module doc); ``points`` (k, 3) m, or for a
    mesh ``[[volume m^3, 0, 0], bounds min, bounds max]``; a plane or other type: its size and pose."""
    t, size, R, p = int(m.geom_type[g]), np.asarray(m.geom_size[g], float), _rot(m.geom_quat[g]), m.geom_pos[g]
    T = mujoco.mjtGeom
    if t == T.mjGEOM_MESH:
        d = int(m.geom_dataid[g])
        v = m.mesh_vert[m.mesh_vertadr[d] : m.mesh_vertadr[d] + m.mesh_vertnum[d]] @ R.T + p
        return "mesh", np.array([[ConvexHull(v).volume, 0.0, 0.0], v.min(0), v.max(0)])
    if t == T.mjGEOM_SPHERE:
        return "sphere", np.array([p, [size[0], 0.0, 0.0]])
    if t in (T.mjGEOM_CAPSULE, T.mjGEOM_CYLINDER):
        ends = sorted([tuple(p + R[:, 2] * size[1]), tuple(p - R[:, 2] * size[1])])
        return "capsule" if t == T.mjGEOM_CAPSULE else "cylinder", np.array(ends + [(size[0], 0.0, 0.0)])
    if t in (T.mjGEOM_BOX, T.mjGEOM_ELLIPSOID):
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
        corners = (signs * size) @ R.T + p
        return "box" if t == T.mjGEOM_BOX else "ellipsoid", np.array(sorted(map(tuple, np.round(corners, 9))))
    return f"type {t}", np.concatenate([size, p, np.asarray(m.geom_quat[g], float)])[None]


def same_shape(a: tuple, b: tuple) -> bool:
    """Whether two :func:`geom_shape` results are one shape (:data:`GEOM_ATOL`, :data:`SHAPE_RTOL` on volume)."""
    if a[0] != b[0] or a[1].shape != b[1].shape:
        return False
    if a[0] == "mesh":
        return bool(
            np.isclose(a[1][0, 0], b[1][0, 0], rtol=SHAPE_RTOL, atol=0.0)
            and np.allclose(a[1][1:], b[1][1:], rtol=0.0, atol=GEOM_ATOL)
        )
    return bool(np.allclose(a[1], b[1], rtol=0.0, atol=GEOM_ATOL))


def inertia_tensor(m: mujoco.MjModel, b: int) -> np.ndarray:
    """(3, 3) kg m^2: body ``b``'s inertia about its centre of mass in the body frame."""
    R = _rot(m.body_iquat[b])
    return R @ np.diag(m.body_inertia[b]) @ R.T


def same_rotation(qa, qb, atol: float = 1e-6) -> bool:
    """Whether two wxyz quaternions are one rotation (q and -q alike)."""
    return bool(np.allclose(_rot(qa), _rot(qb), rtol=0.0, atol=atol))


def body_frame_checks(ours: mujoco.MjModel, ref: mujoco.MjModel, i: int, j: int) -> list[tuple[str, str, str]]:
    """``[(field, ours, reference)]`` where body ``i`` of ``ours`` and ``j`` of ``ref`` differ in centre of
    mass, inertia tensor or (a body that is not free) pose in its parent (module doc)."""
    out = []
    if not np.allclose(ours.body_ipos[i], ref.body_ipos[j], rtol=0.0, atol=GEOM_ATOL):
        out.append(("body_ipos", str(ours.body_ipos[i]), str(ref.body_ipos[j])))
    ti, tj = inertia_tensor(ours, i), inertia_tensor(ref, j)
    if not np.allclose(ti, tj, rtol=0.0, atol=SHAPE_RTOL * max(np.abs(tj).max(), 1e-12)):
        out.append(("body_inertia_tensor", str(ti.round(12).tolist()), str(tj.round(12).tolist())))
    free = [int(ours.jnt_type[k]) == mujoco.mjtJoint.mjJNT_FREE for k in range(ours.njnt) if ours.jnt_bodyid[k] == i]
    if i and j and not any(free) and int(ours.body_parentid[i]) and int(ref.body_parentid[j]):
        if not np.allclose(ours.body_pos[i], ref.body_pos[j], rtol=0.0, atol=GEOM_ATOL):
            out.append(("body_pos", str(ours.body_pos[i]), str(ref.body_pos[j])))
        if not same_rotation(ours.body_quat[i], ref.body_quat[j]):
            out.append(("body_quat", str(ours.body_quat[i]), str(ref.body_quat[j])))
    return out


def joint_checks(ours: mujoco.MjModel, ref: mujoco.MjModel, i: int, j: int) -> list[tuple[str, str, str]]:
    """``[(field, ours, reference)]`` where joint ``i`` of ``ours`` and ``j`` of ``ref`` differ (module doc)."""
    out = []

    def check(f, a, b, rtol=1e-6, atol=1e-9):
        a, b = np.asarray(a, float), np.asarray(b, float)
        if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
            out.append((f, str(a.round(9).tolist()), str(b.round(9).tolist())))

    check("jnt_type", ours.jnt_type[i], ref.jnt_type[j], 0, 0)
    check("jnt_limited", ours.jnt_limited[i], ref.jnt_limited[j], 0, 0)
    if ref.jnt_limited[j]:
        check("jnt_range", ours.jnt_range[i], ref.jnt_range[j])
    check("jnt_actfrclimited", ours.jnt_actfrclimited[i], ref.jnt_actfrclimited[j], 0, 0)
    if ref.jnt_actfrclimited[j]:
        check("jnt_actfrcrange", ours.jnt_actfrcrange[i], ref.jnt_actfrcrange[j])
    for f in ("jnt_stiffness", "jnt_margin", "jnt_solref", "jnt_solimp"):
        check(f, getattr(ours, f)[i], getattr(ref, f)[j])
    return out
