"""The fingers' per-joint effort limits, N·m, under ``finger_effort_limit``: a number at every joint, or ``"human"``
(each finger's pad force times each joint's lever to the pad). Fingers in MANO order, joints 1-3, ..., 13-15."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replay.errors import DataError
from replay.kinematics.joint_levers import finger_levers
from replay.sim import physics

#: fingers in MANO bone order, three joints each
FINGERS = ("index", "middle", "pinky", "ring", "thumb")


def profile(cfg) -> str | float:
    """``"human"`` or the uniform limit, N·m, that ``cfg`` runs its finger joints at."""
    value = physics.choice_value(cfg, "finger_effort_limit")
    if isinstance(value, dict):
        value = value["lift"]
    if value == "human":
        return "human"
    if value is None or not float(value) > 0:
        raise DataError(None, "physics.finger_effort_limit", f"the lift's limit must be 'human' or > 0, got {value!r}")
    return float(value)


def tip_forces(cfg) -> np.ndarray | None:
    """(5,) each finger's maximal pad force, N (:data:`FINGERS` order), under human strength; else None. Raises
    DataError: a share missing or not > 0, a grip force not > 0."""
    if profile(cfg) != "human":
        return None
    grip = float(physics.choice_value(cfg, "grip_force_n"))
    share = physics.choice_value(cfg, "finger_force_share")
    if not grip > 0:
        raise DataError(None, "physics.grip_force_n", f"must be > 0, got {grip!r}")
    missing = [f for f in FINGERS if not float((share or {}).get(f, 0.0)) > 0]
    if missing:
        raise DataError(None, "physics.finger_force_share", f"needs a share > 0 for {missing}")
    return np.array([grip * float(share[f]) for f in FINGERS])


def joint_limits(cfg, mjcf: str | Path) -> np.ndarray:
    """(15,) effort limit of ``mano_joint_1..15``, N·m, on each torque component. Raises DataError."""
    forces = tip_forces(cfg)
    if forces is None:
        return np.full(15, profile(cfg))
    return np.repeat(forces, 3) * finger_levers(mjcf)
