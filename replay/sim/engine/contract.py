"""The engine contract: what every engine offers a protocol (:class:`Engine`, after Newton's ``SolverBase``).
Quaternions xyzw unless said; wrist target rows MuJoCo wxyz."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import mujoco
import numpy as np


@dataclass
class FrameSignals:
    """What a control frame left in one world.

    Attributes:
        body_pos: (17, 3) world, m, of ``mano_body_0..15`` then the object. body_quat: (17, 4) xyzw.
        contacts: hand-object contacts in the last step; contacts_force: those over ``contact_force_min`` N.
        normal_force: sum of their normal forces, N; friction_force: sum of mu_i N_i, N.
        reason: why the world stopped, or None."""

    body_pos: np.ndarray
    body_quat: np.ndarray
    contacts: int
    contacts_force: int
    reason: str | None
    normal_force: float = 0.0
    friction_force: float = 0.0


@dataclass(frozen=True)
class Capabilities:
    """What an engine supports (its class attribute ``capabilities``).

    Attributes:
        name: the rollouts' ``engine`` field. worlds_per_scene: 0 any number; 1 one world per scene.
        parameter_variants: applies a variant's friction, effort limit and object mass.
        ablation_by_variant: contact and ablation worlds share a scene (may raise
            :class:`replay.errors.AblationMaskError`). geom_distance: :meth:`Engine.min_distance` measures (else NaN).
        frame_spans: also a :class:`replay.sim.engine.spans.SpanEngine`."""

    name: str
    worlds_per_scene: int = 0
    parameter_variants: bool = True
    ablation_by_variant: bool = False
    geom_distance: bool = True
    frame_spans: bool = False


class Engine(abc.ABC):
    """N worlds of one scene (one :class:`~replay.sim.engine.variants.Variant` each), stepped one control frame at a
    time; ``worlds``: one :class:`replay.sim.engine.world.WorldStatus` per variant."""

    capabilities: ClassVar[Capabilities]
    layout: object
    worlds: list

    def __init__(self, scene, variants: list, *, threads: int = 1):
        self.scene = scene
        self.cfg = scene.config

    @abc.abstractmethod
    def step_frame(self, finger_quat: np.ndarray, tgt_prev: np.ndarray, tgt: np.ndarray) -> None:
        """Advance live worlds one frame: finger targets (N, 15, 4) xyzw, wrist rows (N, 16) previous and now."""

    @abc.abstractmethod
    def read_frame(self, i: int, *, force_min: float, max_linear: float, max_angular: float) -> FrameSignals:
        """World ``i``'s signals after its last frame; a world with a reason stops."""

    def min_distance(self, i: int, geoms_a: np.ndarray, geoms_b: np.ndarray, *, distmax: float = 0.5) -> float:
        """Smallest signed distance, m, between the two geom masks in world ``i``; NaN here."""
        return float("nan")

    def fingertip_geoms(self, fingertip_bodies) -> np.ndarray:
        """(ngeom,) bool mask of the MuJoCo geoms on hand bodies ``fingertip_bodies`` (indices into the 16)."""
        tips = np.asarray(self.layout.hand_bodies)[list(fingertip_bodies)]
        return np.isin(np.asarray(self.scene.solver.mj_model.geom_bodyid), tips)

    def result_fields(self) -> dict:
        """Fields every rollout of this engine adds to its metrics."""
        return {}

    def stop(self, i: int) -> None:
        self.worlds[i].alive = False

    def close(self) -> None:  # noqa: B027  (a default, as Newton's SolverBase.notify_model_changed)
        """Release threads or buffers."""

    @classmethod
    def one_world(cls, scene, variants: list):
        """The one variant of a one-world engine; ValueError: more than one, a parameter edit, another ablation."""
        name = cls.capabilities.name
        if len(variants) != 1:
            raise ValueError(f"the {name} engine steps one world per scene")
        v = variants[0]
        if v.edits_params:
            raise ValueError(f"the {name} engine does not apply parameter variants (friction, effort, mass)")
        if v.ablation != scene.ablation:
            raise ValueError(f"the {name} engine's ablation is built into the scene")
        return v


def geom_distance(m, d, *, geoms_a: np.ndarray, geoms_b: np.ndarray, distmax: float) -> float:
    """Smallest signed distance, m (negative: penetration), between any geom of ``geoms_a`` and of ``geoms_b`` ((ngeom,)
    bool) in ``d`` (``mj_geomDistance``); ``distmax`` if none is closer."""
    best = distmax
    for a in np.flatnonzero(geoms_a):
        for b in np.flatnonzero(geoms_b):
            best = min(best, mujoco.mj_geomDistance(m, d, int(a), int(b), distmax, None))
    return float(best)
