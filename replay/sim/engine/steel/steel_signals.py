"""Per-frame readouts of a ``SolverSteel`` world from the ``CONTACT_F`` observable (docs/engine.md, "SolverSteel"):
forces N, world; a contact's friction is the mean of its shapes' ``mu`` times ``contact_friction_scale``."""

from __future__ import annotations

import numpy as np


def hand_object_signals(
    count: int,
    shape0: np.ndarray,
    shape1: np.ndarray,
    *,
    normal: np.ndarray,
    force: np.ndarray,
    hand_shapes: np.ndarray,
    object_shapes: np.ndarray,
    shape_mu: np.ndarray,
    force_min: float,
) -> tuple[int, int, float, float, float]:
    """``(n contacts, n carrying force, sum N, sum mu_i N_i, sum |friction|)``, N, of the last step's hand-object
    contacts; ``normal`` (>= count, 3) unit, world, shape 0 -> 1; ``force`` (>= count, 6) ``contact_f`` rows (N, N·m);
    masks and ``shape_mu`` (shape_count,)."""
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
    """Why SolverSteel lost rows or contacts (overflow flags, full contact buffer, reduction overflow), or None."""
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
