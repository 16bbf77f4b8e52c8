"""What one replay scene is built from, in one value: :class:`SceneSpec`.

Every scene builder (:func:`replay.sim.scene.build_scene` for the MuJoCo engines,
:func:`replay.sim.engine.steel.steel_scene.build_steel_scene` for SolverSteel) and the engine factory
(:func:`replay.sim.engine.factory.build_engine_scene`) take a spec and a
:class:`~replay.config.ReplayConfig` instead of the ten positional parameters they used to
repeat; :func:`replay.sim.world_builder.build_world_model` turns a spec into a finalized
Newton model, the one function both builders share.

Frames and units: world Z up, m; quaternions Newton xyzw.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.data.types import ObjectAsset
from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND


def _vector(spec_source, name: str, value, shape: tuple) -> np.ndarray:
    """``value`` as a float array of ``shape``, or DataError naming the source and the field."""
    a = np.asarray(value, dtype=float)
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise DataError(spec_source, name, f"expected finite values of shape {shape}, got shape {a.shape}")
    return a.copy()


@dataclass(frozen=True, eq=False)
class SceneSpec:
    """The inputs of one replay scene (no config: that is the builder's second argument).

    Attributes:
        mjcf: manosim hand MJCF path (imported unmodified).
        asset: the target object's geometry (:class:`replay.data.types.ObjectAsset`).
        object_pos: (3,) initial object position, world, m.
        object_quat: (4,) initial object orientation, world, xyzw.
        support_height: z of the support's top, m.
        hand_coords0: (67,) initial hand coords, Newton joint_q order (free joint pos xyz +
            quat xyzw, then 15 ball quats xyzw).
        grasp_coords: (67,) hand coords at the grasp frame (the builders' contact probe), or
            None for a bare model (:func:`replay.sim.world_builder.build_world_model` only).
        commanded_finger_quats: (T, 15, 4) every finger target the rollout will command, xyzw
            (the flutter bound), or None for a bare model.
        ablation: filter every hand-object shape pair out with Newton's collision filter pairs.
        support_extent: ``(xmin, ymin, xmax, ymax)`` of a table top, m, or None (ground plane).

    Raises:
        DataError: a pose array of the wrong shape or not finite (names the object's source and the field).
    """

    mjcf: str | Path
    asset: ObjectAsset
    object_pos: np.ndarray
    object_quat: np.ndarray
    support_height: float
    hand_coords0: np.ndarray
    grasp_coords: np.ndarray | None = None
    commanded_finger_quats: np.ndarray | None = None
    ablation: bool = False
    support_extent: tuple | None = None

    def __post_init__(self):
        src = getattr(self.asset, "source", None) or str(self.mjcf)
        set_ = object.__setattr__
        set_(self, "object_pos", _vector(src, "object_pos", self.object_pos, (3,)))
        set_(self, "object_quat", _vector(src, "object_quat", self.object_quat, (4,)))
        set_(self, "hand_coords0", _vector(src, "hand_coords0", self.hand_coords0, (MANOSIM_HAND.coords,)))
        set_(self, "support_height", float(self.support_height))
        set_(self, "ablation", bool(self.ablation))
        if self.grasp_coords is not None:
            set_(self, "grasp_coords", _vector(src, "grasp_coords", self.grasp_coords, (MANOSIM_HAND.coords,)))

    def world_inputs(self, config) -> dict:
        """The keyword arguments of :func:`replay.sim.world_builder.add_replay_world` (less ``builder``)
        for this spec and ``config``: what a scene keeps as ``build_inputs`` to build more worlds of itself."""
        return dict(
            mjcf=self.mjcf,
            asset=self.asset,
            object_pos=self.object_pos.copy(),
            object_quat=self.object_quat.copy(),
            support_height=self.support_height,
            hand_coords0=self.hand_coords0.copy(),
            config=config,
            ablation=self.ablation,
            support_extent=self.support_extent,
        )
