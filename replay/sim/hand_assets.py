"""Which manosim MJCF a replay uses (no physics imports: the study's parent process needs
it before any worker starts, and importing Newton costs about 2 s)."""

from __future__ import annotations

from pathlib import Path

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.sim import physics


def hand_mjcf_path(manosim_dir: str | Path, config: ReplayConfig, side: str = "right") -> Path:
    """Path of the manosim MJCF for ``config.hand`` (capsule or mesh), the physics choice ``hand_shape``
    (:func:`replay.sim.physics.choice_value`) and hand side.

    Raises:
        DataError: the file does not exist, or ``hand_shape`` is unresolved (None: the dataset's default,
            see :func:`replay.config.resolve_hand_variant`).
    """
    shape = physics.choice_value(config, "hand_shape")
    if shape is None:
        raise DataError(
            None, "config.physics_overrides.hand_shape", "unresolved; call resolve_hand_variant(config, dataset)"
        )
    if side not in ("right", "left"):
        raise DataError(None, "hand_side", f"expected 'right' or 'left', got {side!r}")
    s = "r" if side == "right" else "l"
    name = "capsule_hand.xml" if config.hand == "capsule" else "mesh_hand.xml"
    path = Path(manosim_dir) / "assets" / shape / f"mano_{s}hand" / name
    if not path.is_file():
        raise DataError(path, None, "manosim hand MJCF not found (fetch the manosim dataset)")
    return path
