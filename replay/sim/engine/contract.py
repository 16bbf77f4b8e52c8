"""The engine contract: what every engine of :mod:`replay.sim.engine` offers a protocol.

An engine is built from a scene and one :class:`~replay.sim.engine.variants.Variant` per world
(:func:`replay.sim.engine.factory.engine_for_scene`, the only place that knows the engine classes). It then steps one control frame for all its live worlds
(:meth:`Engine.step_frame`), reads one world's signals after the frame (:meth:`Engine.read_frame`:
body poses, hand-object contacts and forces, and the reason a world stopped: contact overflow, runaway,
non-finite state, solver error), and says what it supports in :class:`Capabilities`, so that a caller
asks instead of checking types. :class:`Engine` is the base class of every engine, after Newton's
``SolverBase``: the two abstract methods, defaults for the rest, options keyword-only.

Engines: :class:`replay.sim.engine.mujoco_c.mjc.MjcBatch` (MuJoCo C),
:class:`replay.sim.engine.mjwarp.warp_batch.WarpBatch` (mujoco-warp),
:class:`replay.sim.engine.newton_ref.newton_step.NewtonStepBatch` (the reference, ``SolverMuJoCo.step``),
:class:`replay.sim.engine.steel.steel.SteelBatch` (SolverSteel).

Quaternions Newton xyzw unless said; wrist target rows MuJoCo wxyz (:mod:`replay.sim.engine.wrist`).
"""

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
        body_pos: (17, 3) world positions, m, of ``mano_body_0..15`` then the object.
        body_quat: (17, 4) world orientations, Newton xyzw.
        contacts: hand-object contacts in the last step; contacts_force: those whose
            normal force exceeds the config's ``contact_force_min`` N.
        normal_force: sum of their normal forces, N; friction_force: sum of mu_i N_i, N
            (over g: the friction budget, kg).
        reason: why the world stopped (overflow, runaway, non-finite, solver error), or None.
    """

    body_pos: np.ndarray
    body_quat: np.ndarray
    contacts: int
    contacts_force: int
    reason: str | None
    normal_force: float = 0.0
    friction_force: float = 0.0


@dataclass(frozen=True)
class Capabilities:
    """What an engine supports (class attribute ``capabilities`` of every engine).

    Attributes:
        name: the engine's name in every rollout's ``engine`` field.
        worlds_per_scene: 0: any number of worlds on one scene; 1: one world per scene.
        parameter_variants: applies a variant's friction, effort limit and object mass.
        ablation_by_variant: contact and ablation worlds share one scene (the ablation is a
            per-world model edit that may raise :class:`replay.errors.AblationMaskError`, then the
            ablation worlds need a scene built with Newton's collision filter pairs); False: every
            world of a scene has the scene's ablation flag.
        geom_distance: :meth:`Engine.min_distance` measures (else NaN).
        frame_spans: also a :class:`replay.sim.engine.spans.SpanEngine`: steps many frames of a
            world per call (``begin_spans`` / ``run_span``), the per-frame loop's results.
    """

    name: str
    worlds_per_scene: int = 0
    parameter_variants: bool = True
    ablation_by_variant: bool = False
    geom_distance: bool = True
    frame_spans: bool = False


class Engine(abc.ABC):
    """N worlds of one scene, stepped one control frame at a time (module doc); the base of every engine.

    Subclasses step and read (:meth:`step_frame`, :meth:`read_frame`); the rest has defaults here.

    Args:
        scene: the :class:`replay.sim.scene.Scene` it is built from (``scene.config`` its settings).
        variants: one :class:`replay.sim.engine.variants.Variant` per world.
        threads: threads stepping the worlds (keyword-only; engines that step one thread ignore it).

    Attributes:
        capabilities: :class:`Capabilities` (a class attribute).
        scene, cfg: the scene and its config.
        layout: where the hand's and the object's geoms/bodies are (``hand_geoms``,
            ``object_geoms`` (G,) bool masks, ``hand_bodies``).
        worlds: one :class:`replay.sim.engine.world.WorldStatus` per variant, in order
            (``alive``, ``reason``, ``peak_contacts``, ``capacity``, ``readback``).
    """

    capabilities: ClassVar[Capabilities]
    layout: object
    worlds: list

    def __init__(self, scene, variants: list, *, threads: int = 1):
        self.scene = scene
        self.cfg = scene.config

    @abc.abstractmethod
    def step_frame(self, finger_quat: np.ndarray, tgt_prev: np.ndarray, tgt: np.ndarray) -> None:
        """Advance every live world one control frame: finger targets (N, 15, 4) xyzw, wrist
        target rows (N, 16) of the previous and this frame."""

    @abc.abstractmethod
    def read_frame(self, i: int, force_min: float, max_linear: float, max_angular: float) -> FrameSignals:
        """World ``i``'s signals after its last frame; a world with a reason stops."""

    def min_distance(self, i: int, geoms_a: np.ndarray, geoms_b: np.ndarray, distmax: float = 0.5) -> float:
        """Smallest signed distance, m, between the two geom masks in world ``i``; NaN here (no
        ``capabilities.geom_distance``)."""
        return float("nan")

    def fingertip_geoms(self, fingertip_bodies) -> np.ndarray:
        """(ngeom,) bool mask of the MuJoCo geoms on the hand bodies ``fingertip_bodies`` (indices
        into the 16 hand bodies) of ``scene.solver.mj_model``."""
        tips = np.asarray(self.layout.hand_bodies)[list(fingertip_bodies)]
        return np.isin(np.asarray(self.scene.solver.mj_model.geom_bodyid), tips)

    def result_fields(self) -> dict:
        """Fields every rollout of this engine adds to its metrics (none here)."""
        return {}

    def stop(self, i: int) -> None:
        """Stop stepping world ``i``."""
        self.worlds[i].alive = False

    def close(self) -> None:  # noqa: B027  (a default, as Newton's SolverBase.notify_model_changed)
        """Release threads or buffers (none here)."""

    @classmethod
    def one_world(cls, scene, variants: list):
        """The one variant of an engine that steps one world per scene with the scene's ablation and no
        parameter edits (``capabilities.worlds_per_scene == 1``).

        Raises:
            ValueError: more than one variant, one that edits a parameter, or an ablation flag that
                differs from the scene's.
        """
        name = cls.capabilities.name
        if len(variants) != 1:
            raise ValueError(f"the {name} engine steps one world per scene")
        v = variants[0]
        if v.edits_params:
            raise ValueError(f"the {name} engine does not apply parameter variants (friction, effort, mass)")
        if v.ablation != scene.ablation:
            raise ValueError(f"the {name} engine's ablation is built into the scene")
        return v


def geom_distance(m, d, geoms_a: np.ndarray, geoms_b: np.ndarray, distmax: float) -> float:
    """Smallest signed distance, m, between any geom of ``geoms_a`` and any of ``geoms_b`` ((ngeom,) bool)
    in MuJoCo data ``d`` as it stands (``mj_geomDistance``; negative: penetration); ``distmax`` if none is
    closer."""
    best = distmax
    for a in np.flatnonzero(geoms_a):
        for b in np.flatnonzero(geoms_b):
            best = min(best, mujoco.mj_geomDistance(m, d, int(a), int(b), distmax, None))
    return float(best)
