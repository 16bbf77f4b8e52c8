"""Joint-space mass matrix at the reference pose, in MuJoCo's DOF convention.

Equivalent of ``newton.eval_mass_matrix`` for the patches' needs, computed in
float64 on the builder's data before ``finalize`` and in MuJoCo's velocity
coordinates, which is what MuJoCo's compiler uses to resolve ``dampratio``:

* slide / prismatic DOF: translation along its axis;
* hinge / revolute DOF: rotation about its axis through the joint anchor;
* ball DOF ``i``: rotation about the joint frame's local axis ``i`` through the anchor;
* free DOFs 0-2: body-origin translation along world x, y, z; 3-5: rotation about
  the body's local axes through its origin (MuJoCo ``qvel`` of a free joint).

``M = sum_b m_b Jv_b^T Jv_b + Jw_b^T I_b Jw_b`` (the Jacobian form of the
joint-space inertia, Featherstone, *Rigid Body Dynamics Algorithms*, 2008, ch. 6,
which MuJoCo's ``mj_crb`` evaluates recursively),
``Jv_b`` the Jacobian of body ``b``'s centre of mass, ``I_b`` its world-frame
inertia about the COM; armature is added to the diagonal (MuJoCo ``dof_armature``
enters ``qM`` the same way). Units: kg (translational DOFs), kg·m² (rotational).
"""

from __future__ import annotations

import numpy as np
from newton import JointType


def _quat_matrix_xyzw(q) -> np.ndarray:
    x, y, z, w = (float(v) for v in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _pose(t) -> tuple[np.ndarray, np.ndarray]:
    """(R (3,3), p (3,)) of a warp transform (p xyz, q xyzw)."""
    v = [float(x) for x in t]
    return _quat_matrix_xyzw(v[3:7]), np.asarray(v[0:3])


def reference_mass_matrix(builder, joints: list[int]) -> tuple[np.ndarray, dict[int, int]]:
    """Mass matrix of the mechanism formed by ``joints`` at the builder's reference pose.

    Args:
        builder: ``newton.ModelBuilder`` (not finalized), bodies at their reference pose
            in ``builder.body_q``.
        joints: Newton joint indices of one or more trees (e.g. one ``add_mjcf`` import).

    Returns:
        ``(M, col)``: ``M`` (n, n) float64 including armature, ``n`` the DOF count of
        ``joints``; ``col`` maps a builder DOF index to its row/column in ``M``.

    Raises:
        ValueError: a joint type other than FREE, BALL, REVOLUTE, PRISMATIC, D6, FIXED.
    """
    col: dict[int, int] = {}
    axes: list[tuple[np.ndarray, np.ndarray | None]] = []  # (world axis, anchor; None for a linear DOF)
    owner_child: list[int] = []
    parent_of_body = {builder.joint_child[j]: builder.joint_parent[j] for j in joints}
    for j in joints:
        start = builder.joint_qd_start[j]
        for k, (a, anchor) in enumerate(_joint_dof_axes(builder, j)):
            col[start + k] = len(axes)
            axes.append((a, anchor))
            owner_child.append(builder.joint_child[j])
    n = len(axes)
    M = np.zeros((n, n))
    for b in sorted(parent_of_body):
        M += _body_term(builder, b, _ancestors(b, parent_of_body), axes, owner_child)
    for dof, c in col.items():
        M[c, c] += float(builder.joint_armature[dof])
    return M, col


def _joint_dof_axes(builder, j: int) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Per DOF of joint ``j``: (world axis (3,), world anchor (3,) m for an angular DOF, None
    for a linear one), in MuJoCo's velocity coordinates (module docstring).

    Raises:
        ValueError: a joint type other than FREE, BALL, REVOLUTE, PRISMATIC, D6, FIXED.
    """
    jtype = builder.joint_type[j]
    start = builder.joint_qd_start[j]
    n_lin, n_ang = builder.joint_dof_dim[j]
    Rb, pb = _pose(builder.body_q[builder.joint_child[j]])
    Rc, pc = _pose(builder.joint_X_c[j])
    Rj, pj = Rb @ Rc, Rb @ pc + pb  # joint frame on the child, world
    if jtype == JointType.FREE:
        return [(np.eye(3)[i], None) for i in range(3)] + [(Rb[:, i], pb) for i in range(3)]
    if jtype == JointType.BALL:
        return [(Rj[:, i], pj) for i in range(3)]
    if jtype in (JointType.REVOLUTE, JointType.PRISMATIC, JointType.D6):
        dofs: list[tuple[np.ndarray, np.ndarray | None]] = []
        for k in range(n_lin + n_ang):
            a = Rj @ np.asarray([float(v) for v in builder.joint_axis[start + k]])
            dofs.append((a, None if k < n_lin else pj))
        return dofs
    if jtype == JointType.FIXED:
        return []
    raise ValueError(f"reference_mass_matrix: unsupported joint type {jtype} of joint '{builder.joint_label[j]}'")


def _ancestors(b: int, parent_of_body: dict[int, int]) -> set[int]:
    """Body ``b`` and the bodies above it that the joints move (child -> parent map)."""
    out = set()
    while b in parent_of_body:
        out.add(b)
        b = parent_of_body[b]
    return out


def _body_term(builder, b: int, chain: set[int], axes: list, owner_child: list[int]) -> np.ndarray:
    """Body ``b``'s share ``m Jv^T Jv + Jw^T I Jw`` (n, n) of the mass matrix (kg, kg·m²);
    ``chain``: the bodies whose joints move it."""
    n = len(axes)
    Rb, pb = _pose(builder.body_q[b])
    com = Rb @ np.asarray([float(v) for v in builder.body_com[b]]) + pb
    inertia = Rb @ np.asarray(builder.body_inertia[b], dtype=float).reshape(3, 3) @ Rb.T
    mass = float(builder.body_mass[b])
    Jv = np.zeros((3, n))
    Jw = np.zeros((3, n))
    for c, (a, anchor) in enumerate(axes):
        if owner_child[c] not in chain:
            continue
        if anchor is None:
            Jv[:, c] = a
        else:
            Jw[:, c] = a
            Jv[:, c] = np.cross(a, com - anchor)
    return mass * Jv.T @ Jv + Jw.T @ inertia @ Jw


def reflected_inertia(M: np.ndarray, moment: np.ndarray) -> float:
    """``1 / (g^T M^-1 g)`` for a transmission with moment vector ``g`` (n,).

    This is the effective inertia MuJoCo's compiler uses to turn ``dampratio`` into
    damping (MuJoCo 3.17 ``engine_setconst.c``; verified against
    ``mujoco.MjModel.from_xml_path(...).actuator_biasprm`` to 1e-15 on the manosim
    hand). Note: it is *not* the plain diagonal ``M_ii`` - on the manosim wrist
    y/z translation the diagonal overestimates by 11 % (kv by 5.7 %).
    """
    x = np.linalg.solve(M, moment)
    return 1.0 / float(moment @ x)
