"""Per-frame readouts of a :class:`newton.solvers.SolverSteel` world: hand-object contacts and their
forces from Newton's contacts and the solver's ``contact_f`` observable; dropped rows and contacts.

What SolverSteel exposes (Newton 1.8.0, its class docstring): the ``CONTACT_F`` observable, per
live rigid contact the force on shape 0's body, N, world frame, from the step's solved normal and
friction impulses over ``dt`` (torque part zero; contacts whose rows were dropped report zero).
The contact normal (``Contacts.rigid_contact_normal``) points from shape 0 to shape 1 (measured:
support-object contacts with shape 0 the support have normal +Z and a force on the support along
-Z), so the normal force is ``N = -f . n`` and the friction force the rest of ``f``. SolverSteel's
friction coefficient of a contact is the mean of the two shapes' ``mu`` (docstring), times
``contact_friction_scale``; the friction budget sums ``mu_i N_i`` as the MuJoCo engines do.
"""

from __future__ import annotations

import numpy as np


def hand_object_signals(
    count: int,
    shape0: np.ndarray,
    shape1: np.ndarray,
    normal: np.ndarray,
    force: np.ndarray,
    hand_shapes: np.ndarray,
    object_shapes: np.ndarray,
    shape_mu: np.ndarray,
    force_min: float,
) -> tuple[int, int, float, float, float]:
    """Hand-object contacts of the last step and the forces they carried.

    Args:
        count: live contacts (``Contacts.rigid_contact_count``).
        shape0, shape1: (>= count,) shape indices; normal: (>= count, 3) unit normals, world,
            shape 0 -> shape 1; force: (>= count, 6) ``contact_f`` rows (force N, torque N·m) on shape 0's body.
        hand_shapes, object_shapes: (shape_count,) bool masks.
        shape_mu: (shape_count,) friction coefficients the solver uses per shape.
        force_min: a contact carries force above this normal force, N.

    Returns:
        ``(n contacts, n carrying force, sum of normal forces N, sum of mu_i N_i N, sum of |friction| N)``.
    """
    if count <= 0:
        return 0, 0, 0.0, 0.0, 0.0
    s0 = np.asarray(shape0[:count], np.int64)
    s1 = np.asarray(shape1[:count], np.int64)
    pick = (hand_shapes[s0] & object_shapes[s1]) | (hand_shapes[s1] & object_shapes[s0])
    n = int(pick.sum())
    if not n:
        return 0, 0, 0.0, 0.0, 0.0
    f = np.asarray(force[:count, :3], float)[pick]
    nrm = np.asarray(normal[:count], float)[pick]
    fn = -np.einsum("ij,ij->i", f, nrm)
    ft = f + fn[:, None] * nrm
    mu = 0.5 * (shape_mu[s0[pick]] + shape_mu[s1[pick]])
    pos = np.clip(fn, 0.0, None)
    return (
        n,
        int(np.sum(fn > force_min)),
        float(pos.sum()),
        float(np.sum(mu * pos)),
        float(np.linalg.norm(ft, axis=1).sum()),
    )


def row_problem(solver, contacts, watermarks: dict | None = None) -> str | None:
    """Why the world must stop because SolverSteel lost rows or contacts, or None.

    Reads SolverSteel's persistent ``constraint_overflow`` flags (rows beyond
    ``articulation_constraint_max`` / ``free_body_constraint_max``, contacts beyond the contact
    buffer or dropped by contact reduction, per its docstring), the contact buffer's fill
    (``rigid_contact_count`` against ``rigid_contact_max``) and Newton's global contact-reduction
    overflow counter (``Contacts.contact_counters[2]``). Any of them is a hard failure: the rollout
    is ``unstable`` with this reason (the seed-001 finding: a full row budget drops contacts
    silently otherwise). ``watermarks``: ``solver.constraint_row_watermarks()`` if already read
    (they name the rows requested in the reason).
    """
    flags = solver.constraint_overflow.numpy()
    wm = watermarks if watermarks is not None else solver.constraint_row_watermarks()
    if np.any(flags):
        rows = {k: v for k, v in wm.items() if k.endswith(("raw_high_water", "dropped_contact_rows_high_water"))}
        return (
            f"steel dropped constraint rows or contacts (constraint_overflow set; budgets articulation "
            f"{solver.articulation_constraint_max}, free body {solver.free_body_constraint_max}; "
            f"watermarks {rows})"
        )
    counters = contacts.contact_counters.numpy()
    if int(counters[0]) >= int(contacts.rigid_contact_max):
        return f"steel contact buffer full: {int(counters[0])} contacts of {int(contacts.rigid_contact_max)}"
    if int(counters[2]):
        return "steel contact reduction overflow: the collision pipeline dropped contact candidates"
    return None


__all__ = ["hand_object_signals", "row_problem"]
