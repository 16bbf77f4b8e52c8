"""The 16 perturbations around a refined correction: rows of the order-16 Sylvester Hadamard matrix (Hedayat, Sloane &
Stufken, *Orthogonal Arrays*, 1999, ch. 7), columns 1-11 scaled to +-``mm`` (wrist offset, world) and +-``deg``
(rotation, closures), projected into the bounds."""

from __future__ import annotations

import numpy as np
from scipy.linalg import hadamard

#: perturbations per neighbourhood (the order of the Hadamard matrix)
NEIGHBOURS = 16


def perturbations(mm: float, deg: float) -> np.ndarray:
    """(16, 11) offsets added to a correction: wrist mm (3), wrist deg (3), closures deg (5)."""
    signs = hadamard(NEIGHBOURS)[:, 1:12]
    scale = np.array([mm] * 3 + [deg] * 8, float)
    return signs * scale


def neighbourhood(x: np.ndarray, mm: float, deg: float, *, project) -> list[np.ndarray]:
    """The 16 perturbed corrections around ``x`` (11,) mm/deg, each ``project``-ed into the bounds."""
    return [project(np.asarray(x, float) + d) for d in perturbations(mm, deg)]


def holds(metrics: dict) -> bool:
    """The grasp held: ``lifted`` at the end of the hold (released, not stuck) and held through the shake."""
    return bool(metrics.get("outcome") == "lifted" and metrics.get("shake_held"))
