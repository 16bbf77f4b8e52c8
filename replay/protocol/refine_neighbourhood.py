"""Does a refined correction hold in its neighbourhood? The 16 perturbations around a
correction and the rate of them that hold (:mod:`replay.protocol.refine`).

Perturbations: a two-level orthogonal design, the rows of the order-16 Sylvester Hadamard
matrix (entries +-1; Hedayat, Sloane & Stufken, *Orthogonal Arrays*, 1999, ch. 7), columns 1-11
assigned to the 11 numbers of a correction: each perturbation moves every wrist offset axis by
+-``mm`` (mm, world), every wrist rotation-vector axis by +-``deg`` and every finger's closure by
+-``deg`` (deg) at once, each sign balanced over the 16 (8 up, 8 down) and every pair of
numbers orthogonal. The perturbed correction is projected into the search's bounds
(:func:`replay.protocol.refine.project`: a closure of 0 perturbed by -1 deg stays 0). The
design is fixed (no random draw): the same correction has the same neighbourhood.

A perturbation holds when its run through the whole lift protocol ends ``lifted`` (risen at
the end of the hold, released: not ``stuck``) and held through the shake (``shake_held``).
"""

from __future__ import annotations

import numpy as np

#: perturbations per neighbourhood (the order of the Hadamard matrix)
NEIGHBOURS = 16


def hadamard(n: int) -> np.ndarray:
    """(n, n) Sylvester Hadamard matrix of +-1 (``n`` a power of 2)."""
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    if h.shape[0] != n:
        raise ValueError(f"a Sylvester Hadamard matrix has a power-of-2 order, not {n}")
    return h


def perturbations(mm: float, deg: float) -> np.ndarray:
    """(16, 11) offsets added to a correction (module doc): wrist mm (3), wrist deg (3), closures deg (5)."""
    signs = hadamard(NEIGHBOURS)[:, 1:12]
    scale = np.array([mm] * 3 + [deg] * 8, float)
    return signs * scale


def neighbourhood(x: np.ndarray, mm: float, deg: float, project) -> list[np.ndarray]:
    """The 16 perturbed corrections around ``x`` (11,) mm/deg, each ``project``-ed into the bounds."""
    return [project(np.asarray(x, float) + d) for d in perturbations(mm, deg)]


def holds(metrics: dict) -> bool:
    """A run's metrics (:func:`replay.protocol.measures.measure_world`) say the grasp held: lifted
    at the end of the hold, held through the shake and let go at the release."""
    return bool(metrics.get("outcome") == "lifted" and metrics.get("shake_held"))
