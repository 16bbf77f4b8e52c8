"""Which manosim MJCF a replay uses (no physics imports: the study's parent process needs it); docs/hand.md."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from replay.config import ReplayConfig
from replay.datasets import DATASETS
from replay.datasets import dataset as dataset_info
from replay.errors import DataError
from replay.sim import physics


@dataclass(frozen=True)
class HandShape:
    """An authored manosim shape: the folder ``assets/<name>/mano_{r,l}hand`` of the manosim dataset."""

    name: str

    def folder(self, manosim_dir: Path, side: str, recording=None) -> Path:
        """The folder holding ``capsule_hand.xml`` and ``mesh_hand.xml``."""
        return Path(manosim_dir) / "assets" / self.name / f"mano_{side[0]}hand"

    def template(self, manosim_dir: Path, side: str) -> Path:
        """The authored folder this shape needs to exist before any recording is read."""
        return self.folder(manosim_dir, side)


@dataclass(frozen=True)
class FittedShape(HandShape):
    """The recording's own hand: ``zerohand`` scaled to the subject's landmarks where its dataset fits one (cached per
    subject), else the dataset's authored shape."""

    def folder(self, manosim_dir: Path, side: str, recording=None) -> Path:
        """The fitted hand's folder. Raises DataError: no recording, or landmarks that give no hand."""
        if recording is None:
            raise DataError(
                None, "config.physics_overrides.hand_shape", "'fitted' is the recording's own hand: give the recording"
            )
        how = dataset_info(recording.dataset).fitted_hand
        if how != "landmarks":
            return HAND_SHAPES[how].folder(manosim_dir, side)
        from replay.kinematics.fitted_hand import recording_hand_dir  # numpy/mujoco: only when a hand is fitted

        return recording_hand_dir(recording, manosim_dir)

    def template(self, manosim_dir: Path, side: str) -> Path:
        from replay.kinematics.fitted_hand import template_dir

        return template_dir(manosim_dir, side)


#: every value of the physics choice ``hand_shape`` (replay.results.physics_table VALUES, None aside)
HAND_SHAPES = {s.name: s for s in (HandShape("myhand"), HandShape("zerohand"), FittedShape("fitted"))}


def resolve_hand_variant(config: ReplayConfig, dataset: str) -> ReplayConfig:
    """``config`` with ``hand_shape`` in ``physics_overrides``: the override, else the physics', else the dataset's."""
    if (config.physics_overrides or {}).get("hand_shape") is not None:
        return config
    shape = physics.choice_value(config, "hand_shape")
    if shape is None:
        shape = DATASETS[dataset].hand_variant if dataset in DATASETS else "myhand"
    return dataclasses.replace(config, physics_overrides={**(config.physics_overrides or {}), "hand_shape": shape})


def hand_shape(config: ReplayConfig) -> HandShape:
    """The :class:`HandShape` of choice ``hand_shape``. Raises DataError: unresolved (:func:`resolve_hand_variant`)."""
    shape = physics.choice_value(config, "hand_shape")
    if shape is None:
        raise DataError(
            None, "config.physics_overrides.hand_shape", "unresolved; call resolve_hand_variant(config, dataset)"
        )
    return HAND_SHAPES[shape]


def hand_mjcf_path(manosim_dir: str | Path, config: ReplayConfig, side: str = "right", *, recording=None) -> Path:
    """The manosim MJCF of ``config.hand``, ``hand_shape`` and ``side``; ``fitted`` needs ``recording``. Raises
    DataError: no such file, ``hand_shape`` unresolved, or ``fitted`` without a recording or a hand."""
    if side not in ("right", "left"):
        raise DataError(None, "hand_side", f"expected 'right' or 'left', got {side!r}")
    path = hand_shape(config).folder(Path(manosim_dir), side, recording) / _file(config)
    if not path.is_file():
        raise DataError(path, None, "manosim hand MJCF not found (fetch the manosim dataset)")
    return path


def check_hand_assets(manosim_dir: str | Path, config: ReplayConfig, side: str = "right") -> Path:
    """The authored MJCF of ``config``'s hand, checked before any recording is read. Raises DataError."""
    path = hand_shape(config).template(Path(manosim_dir), side) / _file(config)
    if not path.is_file():
        raise DataError(path, None, "manosim hand MJCF not found (fetch the manosim dataset)")
    return path


def _file(config: ReplayConfig) -> str:
    return "capsule_hand.xml" if config.hand == "capsule" else "mesh_hand.xml"
