"""What one replay scene is built from. World Z up, m; quaternions xyzw."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.data.types import ObjectAsset
from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND


def support_box(height: float, extent, thickness: float) -> tuple[tuple, tuple]:
    """``(centre (3,), half sizes (3,))``, m, world, of the table-top box over ``extent`` ``(xmin, ymin, xmax, ymax)``
    m whose top is at ``height`` m, ``thickness`` m deep."""
    x0, y0, x1, y1 = map(float, extent)
    hz = 0.5 * float(thickness)
    return (0.5 * (x0 + x1), 0.5 * (y0 + y1), float(height) - hz), (0.5 * (x1 - x0), 0.5 * (y1 - y0), hz)


def _vector(spec_source, name: str, value, shape: tuple) -> np.ndarray:
    """``value`` as a float array of ``shape``, or DataError naming the source and the field."""
    a = np.asarray(value, dtype=float)
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise DataError(spec_source, name, f"expected finite values of shape {shape}, got shape {a.shape}")
    return a.copy()


@dataclass(frozen=True, eq=False)
class SceneSpec:
    """The inputs of one replay scene; raises DataError: a pose array of the wrong shape or not finite.

    Attributes:
        object_pos: (3,) m, world. object_quat: (4,) xyzw, world. support_height: z of the support's top, m.
        hand_coords0: (67,) initial hand coords, Newton joint_q order.
        grasp_coords: (67,) at the grasp frame (the contact probe); None: a bare model.
        commanded_finger_quats: (T, 15, 4) finger targets, xyzw (the flutter bound); None: a bare model.
        ablation: filter every hand-object shape pair. support_extent: ``(xmin, ymin, xmax, ymax)`` m of a table top;
            None: a plane."""

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
        """:func:`replay.sim.world_builder.add_replay_world`'s keyword arguments (less ``builder``)."""
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
